/*
 * test_vk_overlap.c — overlapped stages (vk_program.c; shaders/stage_sync.glsl):
 * dependent stages recorded without a pipeline barrier, the consumer's
 * workgroups waiting on a stage counter. Forced on with RLX_VK_OVERLAP=1
 * (lavapipe runs dispatches one after another, so the waits find their
 * counts complete; the H200 runs the same tests with real overlap).
 *
 *   - a chain of i8 matvecs with a residual, an elementwise op that cannot
 *     take part (a real barrier before and after it) and another matvec:
 *     the same results as with barriers, over several runs (the counters
 *     start from zero each run), and the expected number of stages
 *     overlapped;
 *   - a tiny Q4_K Llama: decode logits with overlapped stages equal those
 *     with barriers, step by step.
 */
#include "harness.h"
#include "ops_common.h"
#include "tiny_model.h"
#include "vk_parity.h"
#include "io/quant.h"

#include <stdlib.h>
#include <string.h>

enum { OK_ = 512, ON1 = 256, RUNS = 4 };

static rlx_exec *compile_overlap(const rlx_graph *g, const char *overlap) {
    rlx_compile_options o;
    vkp_options(&o);
    setenv("RLX_VK_OVERLAP", overlap, 1);
    rlx_exec *e = NULL;
    if (rlx_compile(g, &o, &e) != RLX_OK) printf("    compile (RLX_VK_OVERLAP=%s): %s\n", overlap, rlx_last_error());
    unsetenv("RLX_VK_OVERLAP");
    return e;
}

TEST(vk_overlap_matvec_chain) {
    VKP_REQUIRE();
    if (vkp_devices_int_dot() != 1) {
        printf("    (skipped: the i8 matvec, the kernel that overlaps, needs integer dot products)\n");
        return;
    }
    double *d1, *d2, *d3;
    size_t b1, b2, b3;
    void *w1 = ops_quantized_weights(RLX_Q4_K, ON1, OK_, &d1, &b1);
    void *w2 = ops_quantized_weights(RLX_Q6_K, OK_, ON1, &d2, &b2);
    void *w3 = ops_quantized_weights(RLX_Q4_K, ON1, OK_, &d3, &b3);
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {1, OK_}, w1d[2] = {ON1, OK_}, w2d[2] = {OK_, ON1};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node y1 = rlx_dequant_matmul(g, x, rlx_constant(g, RLX_Q4_K, 2, w1d, w1));
    rlx_node y2 = rlx_add(g, rlx_dequant_matmul(g, y1, rlx_constant(g, RLX_Q6_K, 2, w2d, w2)), x);   /* + residual */
    rlx_node z = rlx_mul(g, y2, y2);                                                                  /* cannot wait */
    rlx_node y3 = rlx_dequant_matmul(g, z, rlx_constant(g, RLX_Q4_K, 2, w1d, w3));
    rlx_output(g, "y2", y2);
    rlx_output(g, "y3", y3);
    rlx_exec *bar = compile_overlap(g, "0"), *ovl = compile_overlap(g, "1");
    CHECK(bar && ovl);
    for (int run = 0; run < RUNS && bar && ovl && !harness_failed(); run++) {
        float xv[OK_], a2[OK_], a3[ON1], o2[OK_], o3[ON1];
        test_fill_uniform_f32(xv, OK_, -1, 1);
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, OK_}, .data = xv, .bytes = sizeof xv};
        CHECK_OK(rlx_exec_run(bar, &in, 1));
        CHECK_OK(rlx_exec_run(ovl, &in, 1));
        CHECK_OK(rlx_exec_read_output(bar, "y2", a2, sizeof a2));
        CHECK_OK(rlx_exec_read_output(bar, "y3", a3, sizeof a3));
        CHECK_OK(rlx_exec_read_output(ovl, "y2", o2, sizeof o2));
        CHECK_OK(rlx_exec_read_output(ovl, "y3", o3, sizeof o3));
        double r2[OK_], r3[ON1];
        for (int i = 0; i < OK_; i++) r2[i] = a2[i];
        for (int i = 0; i < ON1; i++) r3[i] = a3[i];
        CHECK(test_close_f32_f64("y2 overlapped vs barriers", o2, r2, OK_, 1e-6));
        CHECK(test_close_f32_f64("y3 overlapped vs barriers", o3, r3, ON1, 1e-6));
    }
    rlx_exec_stats sb, so;
    if (bar && ovl) {
        CHECK_OK(rlx_exec_get_stats(bar, &sb));
        CHECK_OK(rlx_exec_get_stats(ovl, &so));
        /* y1 -> y2 overlaps; the multiply cannot wait, so barriers surround it */
        CHECK_MSG(sb.overlapped_stages == 0 && so.overlapped_stages == 1,
                  "overlapped stages: %d with RLX_VK_OVERLAP=0 (want 0), %d with 1 (want 1)", sb.overlapped_stages,
                  so.overlapped_stages);
        CHECK_MSG(sb.steps == so.steps, "%d dispatches with barriers, %d overlapped", sb.steps, so.steps);
        if (harness_failed()) {
            char *rep = rlx_exec_report(ovl);
            printf("%s", rep ? rep : "");
            free(rep);
        }
    }
    rlx_exec_free(bar);
    rlx_exec_free(ovl);
    rlx_graph_free(g);
    free(w1);
    free(w2);
    free(w3);
    free(d1);
    free(d2);
    free(d3);
}

/* Logits of `steps` decode steps after a short prompt, with the overlap setting given. */
static bool decode_logits(const char *path, const char *overlap, int steps, float *out, int vocab) {
    setenv("RLX_VK_OVERLAP", overlap, 1);   /* read when a program is built: at the first eval of each shape */
    rlx_model *m = tiny_model_load(path, RLX_BACKEND_VULKAN);
    if (!m) {
        unsetenv("RLX_VK_OVERLAP");
        return false;
    }
    int32_t prompt[3] = {1, 7, 9};
    const float *lg = NULL;
    bool ok = rlx_model_eval(m, prompt, 3, &lg) == RLX_OK;
    int32_t tok = 11;
    for (int t = 0; t < steps && ok; t++) {
        ok = rlx_model_eval(m, &tok, 1, &lg) == RLX_OK;
        if (ok) memcpy(out + (size_t)t * vocab, lg, sizeof(float) * (size_t)vocab);
        tok = (tok * 7 + 3) % vocab;
    }
    if (!ok) printf("    decode (RLX_VK_OVERLAP=%s): %s\n", overlap, rlx_last_error());
    rlx_model_free(m);
    unsetenv("RLX_VK_OVERLAP");
    return ok;
}

TEST(vk_overlap_llama_decode) {
    VKP_REQUIRE();
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    spec.weight_type = QTYPE_Q4_K;
    spec.n_embd = 256;   /* K-quant rows are multiples of 256 */
    spec.n_ff = 512;
    char path[128];
    tiny_model_tmp_path(path, sizeof path, "overlap");
    CHECK_MSG(tiny_model_write(&spec, path) == 0, "write %s", rlx_last_error());
    rlx_model *m = tiny_model_load(path, RLX_BACKEND_CPU);
    CHECK(m != NULL);
    if (!m) return;
    rlx_model_info info;
    rlx_model_get_info(m, &info);
    rlx_model_free(m);
    enum { STEPS = 12 };
    int vocab = info.n_vocab;
    float *a = malloc(sizeof(float) * STEPS * (size_t)vocab), *b = malloc(sizeof(float) * STEPS * (size_t)vocab);
    double *ref = malloc(sizeof(double) * STEPS * (size_t)vocab);
    CHECK(a && b && ref);
    if (a && b && ref && decode_logits(path, "0", STEPS, a, vocab) && decode_logits(path, "1", STEPS, b, vocab)) {
        for (int i = 0; i < STEPS * vocab; i++) ref[i] = a[i];
        CHECK(test_close_f32_f64("decode logits, overlapped vs barriers", b, ref, (int64_t)STEPS * vocab, 1e-6));
    } else {
        CHECK_MSG(false, "decode failed");
    }
    free(a);
    free(b);
    free(ref);
    remove(path);
}
