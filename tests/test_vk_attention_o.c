/*
 * test_vk_attention_o.c — decode attention fused with the o projection
 * (RLX_VK_ATT_O=1; shaders/attention_o.comp, lower/attention_o.c). A decode
 * step over a KV cache, attention -> views -> Q8_0 dequant_matmul + residual,
 * run step by step as the cache fills: the fused dispatch against a float64
 * reference of the whole step (host copies of the caches, the decoded
 * weights), at group sizes 4 and 1, head dims 64 and 32, row counts that do
 * and do not divide into the chunks, with and without a causal mask; the
 * report names the fused tier and the o projection "in the epilogue of" the
 * attention; an attention output with another reader is not fused. Then a
 * tiny Q8_0 llama decodes the same tokens fused and not.
 */
#include "harness.h"
#include "ops_common.h"
#include "tiny_model.h"
#include "vk_parity.h"
#include "io/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct ocase { int64_t H, Hkv, D, N, cap; int stride, steps, mask; bool extra_use; } ocase;

static rlx_graph *build(const ocase *c, const void *w) {
    rlx_graph *g = rlx_graph_new();
    int64_t qd[4] = {1, c->H, 1, c->D}, kd[4] = {1, c->Hkv, 1, c->D}, cd[4] = {1, c->Hkv, c->cap, c->D}, one[1] = {1};
    int64_t wd[2] = {c->N, c->H * c->D}, xd[2] = {1, c->H * c->D}, rd[2] = {1, c->N};
    rlx_node q = rlx_input(g, "q", RLX_F32, 4, qd), k = rlx_input(g, "k", RLX_F32, 4, kd);
    rlx_node v = rlx_input(g, "v", RLX_F32, 4, kd), pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node len = rlx_input(g, "kv_len", RLX_I32, 1, one), r = rlx_input(g, "r", RLX_F32, 2, rd);
    rlx_node kc = rlx_kv_write(g, rlx_param(g, "k_cache", RLX_F32, 4, cd), k, pos);
    rlx_node vc = rlx_kv_write(g, rlx_param(g, "v_cache", RLX_F32, 4, cd), v, pos);
    rlx_node a = rlx_attention_kv(g, q, kc, vc, c->mask, RLX_NO_NODE, (float)(1.0 / sqrt((double)c->D)), len);
    static const int perm[4] = {0, 2, 1, 3};
    rlx_node x = rlx_reshape(g, rlx_transpose(g, a, perm), 2, xd);
    rlx_node y = rlx_dequant_matmul(g, x, rlx_constant(g, RLX_Q8_0, 2, wd, w));
    rlx_output(g, "y", rlx_add(g, y, r));
    if (c->extra_use) rlx_output(g, "a", a);
    return g;
}

/* The step in float64: attention of q over the first len rows of the caches
 * (kc, vc: [Hkv][cap][D]), then y = r + W a (W decoded: wd [N][H D]). */
static void reference(const ocase *c, const float *q, const float *kc, const float *vc, int len, const double *wd,
                      const float *r, double *y) {
    const int64_t K = c->H * c->D, gh = c->H / c->Hkv;
    double *a = calloc((size_t)K, sizeof(double)), *s = malloc(sizeof(double) * (size_t)(len > 0 ? len : 1));
    const double scale = (double)(float)(1.0 / sqrt((double)c->D));
    for (int64_t h = 0; h < c->H && len > 0; h++) {
        const int64_t kvh = h / gh;
        double mx = -INFINITY, sum = 0;
        for (int j = 0; j < len; j++) {
            double d = 0;
            for (int64_t e = 0; e < c->D; e++) d += (double)q[h * c->D + e] * kc[(kvh * c->cap + j) * c->D + e];
            s[j] = d * scale;
            if (s[j] > mx) mx = s[j];
        }
        for (int j = 0; j < len; j++) sum += (s[j] = exp(s[j] - mx));
        for (int j = 0; j < len; j++)
            for (int64_t e = 0; e < c->D; e++) a[h * c->D + e] += s[j] / sum * vc[(kvh * c->cap + j) * c->D + e];
    }
    for (int64_t n = 0; n < c->N; n++) {
        double acc = r[n];
        for (int64_t k = 0; k < K; k++) acc += wd[n * K + k] * a[k];
        y[n] = acc;
    }
    free(a);
    free(s);
}

/* Runs ex at cache row pos with random q, k, v, r (kept in the host copies
 * of the caches too); y gets the output. */
static bool step(rlx_exec *ex, const ocase *c, int32_t pos, float *q, float *k, float *v, float *r, float *y) {
    int32_t len = pos + 1;
    const int64_t K = c->H * c->D, KV = c->Hkv * c->D;
    rlx_tensor in[6] = {
        {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, c->H, 1, c->D}, .data = q, .bytes = sizeof(float) * (size_t)K},
        {.name = "k", .dtype = RLX_F32, .rank = 4, .dims = {1, c->Hkv, 1, c->D}, .data = k, .bytes = sizeof(float) * (size_t)KV},
        {.name = "v", .dtype = RLX_F32, .rank = 4, .dims = {1, c->Hkv, 1, c->D}, .data = v, .bytes = sizeof(float) * (size_t)KV},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {1, c->N}, .data = r, .bytes = sizeof(float) * (size_t)c->N},
    };
    if (rlx_exec_run(ex, in, 6) != RLX_OK) return false;
    return rlx_exec_read_output(ex, "y", y, sizeof(float) * (size_t)c->N) == RLX_OK;
}

static bool run_case(const ocase *c) {
    double *wd;
    size_t wbytes;
    const int64_t K = c->H * c->D, KV = c->Hkv * c->D;
    void *w = ops_quantized_weights(RLX_Q8_0, c->N, K, &wd, &wbytes);
    rlx_graph *g = build(c, w);
    setenv("RLX_VK_ATT_O", "1", 1);
    rlx_exec *vk = vkp_compile(g, true);
    unsetenv("RLX_VK_ATT_O");
    float *q = malloc(sizeof(float) * (size_t)K), *k = malloc(sizeof(float) * (size_t)KV);
    float *v = malloc(sizeof(float) * (size_t)KV), *r = malloc(sizeof(float) * (size_t)c->N);
    float *y = malloc(sizeof(float) * (size_t)c->N);
    float *kc = calloc((size_t)(c->Hkv * c->cap * c->D), sizeof(float)), *vc = calloc((size_t)(c->Hkv * c->cap * c->D), sizeof(float));
    double *ref = malloc(sizeof(double) * (size_t)c->N);
    bool ok = vk != NULL;
    if (!ok) printf("    compile: %s\n", rlx_last_error());
    for (int t = 0; t < c->steps && ok; t++) {
        int32_t pos = t * c->stride;
        test_fill_uniform_f32(q, K, -1, 1);
        test_fill_uniform_f32(k, KV, -1, 1);
        test_fill_uniform_f32(v, KV, -1, 1);
        test_fill_uniform_f32(r, c->N, -1, 1);
        for (int64_t h = 0; h < c->Hkv; h++) {
            memcpy(kc + (h * c->cap + pos) * c->D, k + h * c->D, sizeof(float) * (size_t)c->D);
            memcpy(vc + (h * c->cap + pos) * c->D, v + h * c->D, sizeof(float) * (size_t)c->D);
        }
        if (!(ok = step(vk, c, pos, q, k, v, r, y))) {
            printf("    step %d: %s\n", t, rlx_last_error());
            break;
        }
        reference(c, q, kc, vc, pos + 1, wd, r, ref);
        char what[64];
        snprintf(what, sizeof what, "step %d (pos %d) fused vs float64", t, pos);
        ok = test_close_f32_f64(what, y, ref, c->N, 2e-5);
    }
    if (ok) {   /* fused exactly where nothing else reads the attention's output */
        char *rep = rlx_exec_report(vk);
        int want = c->extra_use ? 0 : 1;
        if (test_count(rep, "attention-o-q8_0") != want || test_count(rep, "in the epilogue of") != want) {
            printf("    fused %d times (want %d):\n%s", test_count(rep, "attention-o-q8_0"), want, rep ? rep : "");
            ok = false;
        }
        free(rep);
    }
    if (!ok)
        printf("    H %lld Hkv %lld D %lld N %lld cache %lld stride %d mask %d extra use %d\n", (long long)c->H,
               (long long)c->Hkv, (long long)c->D, (long long)c->N, (long long)c->cap, c->stride, c->mask, c->extra_use);
    rlx_exec_free(vk);
    rlx_graph_free(g);
    free(w);
    free(wd);
    free(q);
    free(k);
    free(v);
    free(r);
    free(y);
    free(kc);
    free(vc);
    free(ref);
    return ok;
}

TEST(vk_attention_o_decode) {
    VKP_REQUIRE();
    if (vkp_devices_int_dot() != 1) {
        printf("    (skipped: the fused kernel is gated on integer dot products, the decode kernels' device class)\n");
        return;
    }
    const ocase cases[] = {
        {8, 2, 64, 256, 200, 1, 40, RLX_MASK_CAUSAL, false},   /* group of 4, KS 256 */
        {8, 2, 64, 260, 640, 9, 40, RLX_MASK_NONE, false},     /* rows not a multiple of the chunks; long cache */
        {4, 4, 32, 96, 64, 1, 20, RLX_MASK_CAUSAL, false},     /* group of 1, KS 32: one block a row's slice */
        {8, 2, 64, 256, 200, 1, 6, RLX_MASK_CAUSAL, true},     /* another reader of the attention: not fused */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !harness_failed(); i++) CHECK(run_case(&cases[i]));
}

/* One decode step of m with RLX_VK_ATT_O at value (programs specialize,
 * and read the knob, at a shape's first run). */
static const float *eval_with(rlx_model *m, int32_t id, const char *value) {
    char *old = test_env_swap("RLX_VK_ATT_O", value);
    const float *lg = NULL;
    if (rlx_model_eval(m, &id, 1, &lg) != RLX_OK) printf("    eval: %s\n", rlx_last_error());
    test_env_restore("RLX_VK_ATT_O", old);
    return lg;
}

/* A tiny Q8_0 llama (group of 2, head dim 64) decoding a prompt's tokens
 * with the fusion and without: the same logits up to float sums and the
 * unfused o projection's 8-bit x where it takes the i8 kernel (the fused
 * product is exact); the fused model's report names the kernel. */
TEST(vk_attention_o_llama_decode) {
    VKP_REQUIRE();
    if (vkp_devices_int_dot() != 1) return;
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    spec.weight_type = QTYPE_Q8_0;
    spec.n_embd = 256;
    spec.n_ff = 512;
    char path[128];
    tiny_model_tmp_path(path, sizeof path, "att_o");
    CHECK(tiny_model_write(&spec, path) == 0);
    rlx_model *plain = tiny_model_load(path, RLX_BACKEND_VULKAN);
    char *old = test_env_swap("RLX_VK_ATT_O", "1");
    rlx_model *fused = tiny_model_load(path, RLX_BACKEND_VULKAN);
    test_env_restore("RLX_VK_ATT_O", old);
    unlink(path);
    CHECK(plain && fused);
    rlx_model_info info;
    int32_t ids[64];
    int n = 0;
    CHECK(rlx_model_get_info(plain, &info) == RLX_OK);
    CHECK(rlx_model_tokenize(plain, "the cat sat on the mat", 1, ids, 64, &n) == RLX_OK && n > 2);
    float *la = malloc(sizeof(float) * (size_t)info.n_vocab);
    for (int t = 0; t < n && !harness_failed(); t++) {
        const float *a = eval_with(plain, ids[t], "0");
        CHECK(a);
        memcpy(la, a, sizeof(float) * (size_t)info.n_vocab);
        const float *b = eval_with(fused, ids[t], "1");
        CHECK(b);
        double num = 0, den = 0;
        for (int i = 0; i < info.n_vocab; i++) {
            num += ((double)la[i] - b[i]) * ((double)la[i] - b[i]);
            den += (double)la[i] * la[i];
        }
        double rel = sqrt(num / (den > 0 ? den : 1));
        CHECK_MSG(rel < 2e-2, "step %d: logits %.3g apart", t, rel);
    }
    char *rep = rlx_model_report(fused);
    CHECK_MSG(rep && test_count(rep, "attention-o-q8_0") >= 1, "no fused attention in the report:\n%s", rep ? rep : "");
    free(rep);
    free(la);
    rlx_model_free(plain);
    rlx_model_free(fused);
}
