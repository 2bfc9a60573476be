/*
 * test_vk_x_image.c — decode matvecs handing x to the next one as a rounded
 * image (src/vulkan/shaders/x_image.glsl, vk_program.c plan_images): a
 * residual product feeding a folded-norm SwiGLU, whose output feeds a Q6_K
 * down product, whose output feeds two folded-norm projections of which only
 * the one with the producer's layout (Q5_K) reads the image. One compiled
 * program runs several times (the producers' block counters must come back
 * to zero), against the CPU and against Vulkan without images (RLX_VK_XIMAGE=2
 * makes every image: the default rule skips products this small); Inf in the
 * residual must still make the consumers' rows NaN; and the report must
 * name exactly the consumers that read an image. Then a Q4_K llama model's
 * decode steps, where the residual stream, SwiGLU's output and the final
 * norm's input go through images (and the attention-combining o projection
 * makes one): Vulkan against the CPU's fast path and against Vulkan without
 * images. And a plain product with 16 blocks of output into a norm-folded
 * Q6_K projection, with the producer's grid capped and not, and at M = 2
 * (no image). Last, Q4_K and Q8_0 unit pairs forced through whole llama
 * decodes (knob_decode: a knob set around a model's load, where programs
 * specialize).
 */
#include "harness.h"
#include "core/core.h"   /* rlx_list_has */
#include "ops_common.h"
#include "tiny_model.h"
#include "vk_parity.h"
#include "io/gguf.h"
#include "quant/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { XK0 = 256, XD = 512, XF = 768, XO = 256, N_W = 6, N_OUT = 3 };

typedef struct xweights { void *w[N_W]; double *wd[N_W]; float g1[XD], g2[XD]; } xweights;

static const rlx_dtype w_type[N_W] = {RLX_Q4_K, RLX_Q4_K, RLX_Q4_K, RLX_Q6_K, RLX_Q5_K, RLX_Q6_K};
static const int64_t w_rows[N_W] = {XD, XF, XF, XD, XO, XO}, w_cols[N_W] = {XK0, XD, XD, XF, XD, XD};
static const char *const out_name[N_OUT] = {"h2", "o_k45", "o_q6k"};

static rlx_graph *build(xweights *b) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {1, XK0}, rd[2] = {1, XD}, gd[1] = {XD};
    rlx_node w[N_W];
    for (int i = 0; i < N_W; i++) {
        int64_t wd[2] = {w_rows[i], w_cols[i]};
        w[i] = rlx_constant(g, w_type[i], 2, wd, b->w[i]);
    }
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), r = rlx_input(g, "r", RLX_F32, 2, rd);
    rlx_node h = rlx_add(g, rlx_dequant_matmul(g, x, w[0]), r);   /* producer (residual) */
    rlx_node n1 = rlx_rms_norm(g, h, rlx_constant(g, RLX_F32, 1, gd, b->g1), RLX_NO_NODE, 1e-5f);
    rlx_node s = rlx_mul(g, rlx_silu(g, rlx_dequant_matmul(g, n1, w[1])), rlx_dequant_matmul(g, n1, w[2]));
    rlx_node h2 = rlx_add(g, rlx_dequant_matmul(g, s, w[3]), h);   /* Q6_K consumer of s, producer */
    rlx_node n2 = rlx_rms_norm(g, h2, rlx_constant(g, RLX_F32, 1, gd, b->g2), RLX_NO_NODE, 1e-5f);
    rlx_output(g, out_name[0], h2);
    rlx_output(g, out_name[1], rlx_dequant_matmul(g, n2, w[4]));
    rlx_output(g, out_name[2], rlx_dequant_matmul(g, n2, w[5]));
    return g;
}

/* Runs e on (x, r) and copies output k into out[k] (n floats each). */
static bool run_copy(rlx_exec *e, float *x, float *r, float *out[N_OUT]) {
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, XK0}, .data = x, .bytes = sizeof(float) * XK0},
        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {1, XD}, .data = r, .bytes = sizeof(float) * XD},
    };
    if (rlx_exec_run(e, in, 2) != RLX_OK) {
        printf("    run: %s\n", rlx_last_error());
        return false;
    }
    for (int k = 0; k < N_OUT; k++) {
        rlx_tensor t;
        if (rlx_exec_output(e, out_name[k], &t) != RLX_OK) return false;
        memcpy(out[k], t.data, t.bytes);
    }
    return true;
}

static int64_t out_len(int k) { return k == 0 ? XD : XO; }

/* Relative L2 distance of b from a, with NaN required in the same places. */
static double rel_diff(const float *a, const float *b, int64_t n) {
    double num = 0, den = 0;
    for (int64_t j = 0; j < n; j++) {
        if (isnan(a[j]) != isnan(b[j])) return INFINITY;
        if (isnan(a[j])) continue;
        num += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
        den += (double)a[j] * a[j];
    }
    return sqrt(num) / (den > 0 ? sqrt(den) : 1);
}

TEST(vk_x_image_chain) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    xweights b;
    size_t bytes;
    for (int i = 0; i < N_W; i++) b.w[i] = ops_quantized_weights(w_type[i], w_rows[i], w_cols[i], &b.wd[i], &bytes);
    test_fill_uniform_f32(b.g1, XD, 0.5f, 1.5f);
    test_fill_uniform_f32(b.g2, XD, 0.5f, 1.5f);
    rlx_graph *g = build(&b);

    /* 2: every pair (the default rule, image_pays, skips products this small) */
    char *old = test_env_swap("RLX_VK_XIMAGE", "2");
    rlx_exec *ev = vkp_compile(g, true), *ec = vkp_compile(g, false);
    setenv("RLX_VK_XIMAGE", "0", 1);
    rlx_exec *en = vkp_compile(g, true);
    unsetenv("RLX_VK_XIMAGE");
    rlx_exec *ed = vkp_compile(g, true);
    /* fuse = 0: the unfused graph, no images even where every pair is asked for */
    setenv("RLX_VK_XIMAGE", "2", 1);
    rlx_compile_options fo;
    vkp_options(&fo);
    fo.fuse = 0;
    rlx_exec *eu = NULL;
    CHECK_OK(rlx_compile(g, &fo, &eu));
    test_env_restore("RLX_VK_XIMAGE", old);
    CHECK(ev && ec && en && ed && eu);
    char *rd = ed ? rlx_exec_report(ed) : NULL;
    CHECK(rd && test_count(rd, "x image made") == 0);
    free(rd);
    rlx_exec_free(ed);

    float x[XK0], r[XD], *o[3][N_OUT];
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < N_OUT; k++) o[s][k] = malloc(sizeof(float) * XD);
    for (int run = 0; run < 4 && ev && ec && en; run++) {
        test_fill_uniform_f32(x, XK0, -2, 2);
        test_fill_uniform_f32(r, XD, -1, 1);
        if (run == 3) r[300] = INFINITY;   /* h's block 1 and every row after it: NaN */
        CHECK(run_copy(ec, x, r, o[0]) && run_copy(ev, x, r, o[1]) && run_copy(en, x, r, o[2]));
        if (run == 0) {
            char *ru = eu ? rlx_exec_report(eu) : NULL;
            CHECK(run_copy(eu, x, r, o[2]) && ru && test_count(ru, "x image made") == 0 &&
                  test_count(ru, "x from an image") == 0);
            free(ru);
            CHECK(run_copy(en, x, r, o[2]));
        }
        for (int k = 0; k < N_OUT; k++) {
            /* the i8 matvecs round x as the CPU fast path does */
            double vs_cpu = rel_diff(o[0][k], o[1][k], out_len(k)), vs_plain = rel_diff(o[2][k], o[1][k], out_len(k));
            if (!(vs_cpu <= 2e-4) || !(vs_plain <= 1e-5)) {
                printf("    run %d output %s: vs cpu %.3g, vs no image %.3g\n", run, out_name[k], vs_cpu, vs_plain);
                CHECK(false);
            }
        }
        if (run == 3) CHECK(isnan(o[1][1][0]) && isnan(o[1][2][XO - 1]));
    }
    /* SwiGLU reads h's image, down reads SwiGLU's, the Q5_K projection
     * reads down's; the Q6_K projection (another layout) rounds its own x */
    char *rv = ev ? rlx_exec_report(ev) : NULL, *rn = en ? rlx_exec_report(en) : NULL;
    CHECK(test_count(rv, "x from an image") == 3 && test_count(rv, "x image made") == 3 && rn &&
          test_count(rn, "x from an image") == 0 && test_count(rn, "x image made") == 0);
    free(rv);
    free(rn);
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < N_OUT; k++) free(o[s][k]);
    rlx_exec_free(ev);
    rlx_exec_free(ec);
    rlx_exec_free(en);
    rlx_exec_free(eu);
    rlx_graph_free(g);
    for (int i = 0; i < N_W; i++) {
        free(b.w[i]);
        free(b.wd[i]);
    }
}

static rlx_model *load_on(const char *path, int backend, const char *ximage) {
    char *old = test_env_swap("RLX_VK_XIMAGE", ximage);
    rlx_model *m = tiny_model_load(path, backend);
    test_env_restore("RLX_VK_XIMAGE", old);
    return m;
}

/* One decode step of m (its program is specialized, and RLX_VK_XIMAGE
 * read, at a shape's first run: hence the setting around the call). */
static const float *step(rlx_model *m, int32_t id, const char *ximage) {
    char *old = test_env_swap("RLX_VK_XIMAGE", ximage);
    const float *lg = NULL;
    if (rlx_model_eval(m, &id, 1, &lg) != RLX_OK) printf("    eval: %s\n", rlx_last_error());
    test_env_restore("RLX_VK_XIMAGE", old);
    return lg;
}

/* How many steps of m's last specialization the report marks with `what`. */
static int model_notes(rlx_model *m, const char *what) {
    char *rep = rlx_model_report(m);
    int n = test_count(rep, what);
    free(rep);
    return n;
}

/* m's vocabulary size into info, and the decode tests' prompt as tokens
 * (at most 64; BOS first): their count (0 if m is NULL or fails). */
static int prompt_tokens(rlx_model *m, rlx_model_info *info, int32_t ids[64]) {
    int n = 0;
    memset(info, 0, sizeof *info);
    if (!m || rlx_model_get_info(m, info) != RLX_OK ||
        rlx_model_tokenize(m, "the cat sat on the mat", 1, ids, 64, &n) != RLX_OK)
        return 0;
    return n;
}

/* The decode tests' llama model: weight_type rows (K-quants: multiples of
 * 256), written to path; spec (for its layer count) into *spec. */
static bool write_llama(uint32_t weight_type, const char *tag, tiny_model_spec *spec, char *path, size_t cap) {
    tiny_model_spec_init(spec);
    spec->weight_type = weight_type;
    spec->n_embd = 256;
    spec->n_ff = 512;
    tiny_model_tmp_path(path, cap, tag);
    if (tiny_model_write(spec, path) == 0) return true;
    printf("    write %s: %s\n", path, rlx_last_error());
    return false;
}

TEST(vk_x_image_llama_decode) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    tiny_model_spec spec;
    char path[128];
    CHECK(write_llama(QTYPE_Q4_K, "xim", &spec, path, sizeof path));
    rlx_model *mc = load_on(path, RLX_BACKEND_CPU, NULL), *mv = load_on(path, RLX_BACKEND_VULKAN, "2"),
              *mn = load_on(path, RLX_BACKEND_VULKAN, "0");
    unlink(path);
    CHECK(mc && mv && mn);
    rlx_model_info info;
    int32_t ids[64];
    int n = prompt_tokens(mc, &info, ids);
    float *lc = malloc(sizeof(float) * (size_t)info.n_vocab), *lv = malloc(sizeof(float) * (size_t)info.n_vocab);
    for (int i = 0; i < n && !harness_failed(); i++) {
        const float *c = step(mc, ids[i], NULL), *v = step(mv, ids[i], "2");
        CHECK(c && v);
        memcpy(lc, c, sizeof(float) * (size_t)info.n_vocab);
        memcpy(lv, v, sizeof(float) * (size_t)info.n_vocab);
        const float *p = step(mn, ids[i], "0");
        CHECK(p);
        /* Vulkan rounds x to 8 bits as the CPU's fast path does; with and
         * without images only the norms' sums of squares are added in
         * another order */
        double vs_cpu = rel_diff(lc, lv, info.n_vocab), vs_plain = rel_diff(p, lv, info.n_vocab);
        CHECK_MSG(vs_cpu < 1e-3 && vs_plain < 1e-4, "step %d: vs cpu %.3g, vs no image %.3g", i, vs_cpu, vs_plain);
    }
    /* images are made by each layer's o (+ attention combine), SwiGLU and down
     * projections; read by each layer's SwiGLU and down, by q, k and v (all
     * Q4_K here, through their rope / KV epilogues) past the first layer
     * (whose x is the embedding), and by the output head */
    int made = model_notes(mv, "x image made"), read = model_notes(mv, "x from an image");
    CHECK_MSG(made == 3 * spec.n_layer && read == 2 * spec.n_layer + 3 * (spec.n_layer - 1) + 1,
              "%d images made, %d read", made, read);
    CHECK(model_notes(mn, "x image made") == 0 && model_notes(mn, "x from an image") == 0);
    free(lc);
    free(lv);
    rlx_model_free(mc);
    rlx_model_free(mv);
    rlx_model_free(mn);
}

/* The decode fusions as a Llama model's Vulkan decode step runs them
 * (docs/gpu.md, "Decode fusions"): per layer three dequant_rope_kv (q, k, v
 * with their rope and cache writes) and one attention_dequant_matmul
 * (attention with the o projection), none with fuse = 0; the logits of the
 * two agree at every step (the unfused graph rounds x in separate
 * norm-then-product kernels: float-order differences only) and with the CPU. */
TEST(vk_llama_decode_fusions) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    tiny_model_spec spec;
    char path[128];
    CHECK(write_llama(QTYPE_Q4_K, "fusions", &spec, path, sizeof path));
    rlx_model_options o;
    rlx_model_options_init(&o);
    o.n_ctx = 64;
    vkp_options(&o.compile);
    o.compile.fuse = 0;
    rlx_model *mf = tiny_model_load(path, RLX_BACKEND_VULKAN), *mu = NULL, *mc = tiny_model_load(path, RLX_BACKEND_CPU);
    if (rlx_model_load(path, &o, &mu) != RLX_OK) printf("    load (fuse = 0): %s\n", rlx_last_error());
    unlink(path);
    CHECK(mf && mu && mc);
    rlx_model_info info;
    int32_t ids[64];
    int n = prompt_tokens(mc, &info, ids);
    float *lf = malloc(sizeof(float) * (size_t)info.n_vocab), *lu = malloc(sizeof(float) * (size_t)info.n_vocab);
    for (int i = 0; i < n && mf && mu && mc && !harness_failed(); i++) {
        const float *f = step(mf, ids[i], NULL);
        CHECK(f);
        memcpy(lf, f, sizeof(float) * (size_t)info.n_vocab);
        const float *u = step(mu, ids[i], NULL);
        CHECK(u);
        memcpy(lu, u, sizeof(float) * (size_t)info.n_vocab);
        const float *c = step(mc, ids[i], NULL);
        CHECK(c);
        double vs_unfused = rel_diff(lf, lu, info.n_vocab), vs_cpu = rel_diff(lf, c, info.n_vocab);
        CHECK_MSG(vs_unfused < 1e-3 && vs_cpu < 1e-3, "step %d: vs unfused %.3g, vs cpu %.3g", i, vs_unfused, vs_cpu);
    }
    int rkv = model_notes(mf, "gpu    dequant_rope_kv"), att = model_notes(mf, "gpu    attention_dequant_matmul");
    CHECK_MSG(rkv == 3 * spec.n_layer && att == spec.n_layer, "%d dequant_rope_kv, %d attention_dequant_matmul", rkv, att);
    CHECK(model_notes(mu, "dequant_rope_kv") == 0 && model_notes(mu, "attention_dequant_matmul") == 0);
    free(lf);
    free(lu);
    rlx_model_free(mf);
    rlx_model_free(mu);
    rlx_model_free(mc);
}

static const float *step_knob(rlx_model *m, int32_t id, const char *knob, const char *value) {
    char *old = test_env_swap(knob, value);
    const float *lg = step(m, id, "2");
    test_env_restore(knob, old);
    return lg;
}

/* tol 0: every bit equal; tol > 0: the relative L2 difference of the
 * logits below it at every step; tol < 0: the logits differ at some step
 * (the knob took effect). */
static void knob_decode(uint32_t weight_type, const char *knob, const char *value, double tol) {
    tiny_model_spec spec;
    char path[128];
    CHECK(write_llama(weight_type, "knob", &spec, path, sizeof path));
    /* the knob around the load too: a model specializes its programs there */
    rlx_model *ma = load_on(path, RLX_BACKEND_VULKAN, "2");
    char *old = test_env_swap(knob, value);
    rlx_model *mb = load_on(path, RLX_BACKEND_VULKAN, "2");
    test_env_restore(knob, old);
    unlink(path);
    CHECK(ma && mb);
    rlx_model_info info;
    int32_t ids[64];
    int n = prompt_tokens(ma, &info, ids);
    CHECK(n > 2);
    float *la = malloc(sizeof(float) * (size_t)info.n_vocab);
    bool differed = false;
    for (int i = 0; i < n && !harness_failed(); i++) {
        const float *a = step_knob(ma, ids[i], knob, NULL);
        CHECK(a);
        memcpy(la, a, sizeof(float) * (size_t)info.n_vocab);
        const float *b = step_knob(mb, ids[i], knob, value);
        CHECK(b);
        differed = differed || memcmp(la, b, sizeof(float) * (size_t)info.n_vocab) != 0;
        if (tol == 0)
            CHECK_MSG(!differed, "step %d: logits differ with %s=%s", i, knob, value);
        else if (tol > 0)
            CHECK_MSG(rel_diff(la, b, info.n_vocab) < tol, "type %u step %d: %.3g with %s=%s", weight_type, i,
                      rel_diff(la, b, info.n_vocab), knob, value);
    }
    if (tol < 0) CHECK_MSG(differed, "%s=%s changed no logit", knob, value);
    free(la);
    rlx_model_free(ma);
    rlx_model_free(mb);
}

/* Unit pairs (on by default for Q4_K rows of two pairs a lane, which these
 * small models do not have on a device of narrow subgroups) forced on for
 * every type, through the decode's rope / KV epilogues, images, folded norms
 * and attention partials: the same logits up to the order of the float sums.
 * The Q8_0 model's bound is looser: from step 7 on, x of a later layer lands
 * on the other side of a rounding boundary and this random model amplifies
 * one quant to ~1% of the logits (vk_x_image_q8_0_llama_decode says more);
 * a wrong pair path gives differences of order 1. */
TEST(vk_unit_pairs_llama_decode) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    knob_decode(QTYPE_Q4_K, "RLX_VK_DQ_PAIR", "1", 1e-5);
    knob_decode(QTYPE_Q8_0, "RLX_VK_DQ_PAIR", "1", 5e-2);
}

/* A plain product with 16 blocks of output (N = 4096) feeding a norm-folded
 * Q6_K projection: with the producer's grid capped (a workgroup then takes
 * several tiles, each counted) and not; and at M = 2, where no image may be
 * made. Against the CPU, and the report's marks. */
enum { WK = 256, WN = 4096, WO = 256 };

/* x[M, K] -> y = x w1 (Q4_K [N, K]) -> rms_norm(y) w2 (Q6_K [O, N]) */
static rlx_graph *build_pair(int64_t M, int64_t K, int64_t N, int64_t O, void *w1, void *w2, const float *gamma) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, d1[2] = {N, K}, d2[2] = {O, N}, gd[1] = {N};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node y = rlx_dequant_matmul(g, x, rlx_constant(g, RLX_Q4_K, 2, d1, w1));
    rlx_node n = rlx_rms_norm(g, y, rlx_constant(g, RLX_F32, 1, gd, gamma), RLX_NO_NODE, 1e-5f);
    rlx_output(g, "y", y);
    rlx_output(g, "out", rlx_dequant_matmul(g, n, rlx_constant(g, RLX_Q6_K, 2, d2, w2)));
    return g;
}

TEST(vk_x_image_wide_plain_producer) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    size_t bytes;
    double *d1, *d2;
    void *w1 = ops_quantized_weights(RLX_Q4_K, WN, WK, &d1, &bytes), *w2 = ops_quantized_weights(RLX_Q6_K, WO, WN, &d2, &bytes);
    float *gamma = malloc(sizeof(float) * WN), x[2 * WK];
    test_fill_uniform_f32(gamma, WN, 0.5f, 1.5f);
    /* the default rule: a 4096-wide output pays for its image */
    char *old_xim = test_env_swap("RLX_VK_XIMAGE", NULL), *old_grid = test_env_swap("RLX_VK_DQ_I8_GRID", NULL);
    for (int64_t M = 1; M <= 2 && !harness_failed(); M++)
        for (int capped = 0; capped < 2 && !harness_failed(); capped++) {
            if (capped) setenv("RLX_VK_DQ_I8_GRID", "3", 1);
            else unsetenv("RLX_VK_DQ_I8_GRID");
            rlx_graph *g = build_pair(M, WK, WN, WO, w1, w2, gamma);
            test_fill_uniform_f32(x, M * WK, -2, 2);
            rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, WK}, .data = x,
                             .bytes = sizeof(float) * (size_t)(M * WK)};
            CHECK_MSG(vkp_compare(g, &in, 1, 2e-4, true), "M %lld, grid capped %d", (long long)M, capped);
            rlx_exec *e = vkp_compile(g, true);
            char *rep = e && rlx_exec_run(e, &in, 1) == RLX_OK ? rlx_exec_report(e) : NULL;
            int want = M == 1 ? 1 : 0;
            CHECK_MSG(rep && test_count(rep, "x image made") == want && test_count(rep, "x from an image") == want,
                      "M %lld, grid capped %d: report\n%s", (long long)M, capped, rep ? rep : rlx_last_error());
            free(rep);
            rlx_exec_free(e);
            rlx_graph_free(g);
        }
    test_env_restore("RLX_VK_XIMAGE", old_xim);
    test_env_restore("RLX_VK_DQ_I8_GRID", old_grid);
    free(gamma);
    free(w1);
    free(w2);
    free(d1);
    free(d2);
}

/* The default rule (RLX_VK_XIMAGE unset, vk_program.c image_pays): a
 * producer narrower than 4096 makes an image only for a vocabulary-sized
 * consumer (>= 32768 rows). Against the CPU, and the report's marks. */
TEST(vk_x_image_default_rule) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    static const struct { int64_t N, O; int images; } cases[] = {{256, 32768, 1}, {256, 16384, 0}, {2048, 256, 0}};
    char *old_xim = test_env_swap("RLX_VK_XIMAGE", NULL);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0] && !harness_failed(); c++) {
        const int64_t K = 256, N = cases[c].N, O = cases[c].O;
        size_t bytes;
        double *d1, *d2;
        void *w1 = ops_quantized_weights(RLX_Q4_K, N, K, &d1, &bytes), *w2 = ops_quantized_weights(RLX_Q6_K, O, N, &d2, &bytes);
        float *gamma = malloc(sizeof(float) * (size_t)N), x[256];
        test_fill_uniform_f32(gamma, N, 0.5f, 1.5f);
        test_fill_uniform_f32(x, K, -2, 2);
        rlx_graph *g = build_pair(1, K, N, O, w1, w2, gamma);
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, K}, .data = x, .bytes = sizeof x};
        CHECK_MSG(vkp_compare(g, &in, 1, 2e-4, true), "N %lld, O %lld", (long long)N, (long long)O);
        rlx_exec *e = vkp_compile(g, true);
        char *rep = e && rlx_exec_run(e, &in, 1) == RLX_OK ? rlx_exec_report(e) : NULL;
        CHECK_MSG(rep && test_count(rep, "x image made") == cases[c].images &&
                      test_count(rep, "x from an image") == cases[c].images,
                  "N %lld, O %lld: report\n%s", (long long)N, (long long)O, rep ? rep : rlx_last_error());
        free(rep);
        rlx_exec_free(e);
        rlx_graph_free(g);
        free(gamma);
        free(w1);
        free(w2);
        free(d1);
        free(d2);
    }
    test_env_restore("RLX_VK_XIMAGE", old_xim);
}

/* The knobs' lists (RLX_VK_DQ_PAIR / _I8 / _RUN type names) match whole entries, not substrings. */
TEST(knob_lists_match_whole_entries) {
    CHECK(rlx_list_has("q8_0,q4_K", "q4_K") && rlx_list_has("q8_0,q4_K", "q8_0") && rlx_list_has("q6_K", "q6_K"));
    CHECK(!rlx_list_has("q4_K_M", "q4_K") && !rlx_list_has("xq8_0", "q8_0") && !rlx_list_has("", "q8_0"));
    CHECK(!rlx_list_has("a,b,", "c"));
}
