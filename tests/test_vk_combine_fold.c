/*
 * test_vk_combine_fold.c — attention_dequant_matmul: split-key decode
 * attention and the o projection reading its result as one fused node
 * (passes/fold_decode.c), which Vulkan lowers as attention leaving its
 * partials in scratch and the i8 matvec merging them as it reads x
 * (attention_dequant.c, XCOMB in dequant_matvec_i8.comp). A decode step over
 * a KV cache long enough to split its keys, attention -> views ->
 * dequant_matmul (+ residual), run step by step as the cache fills (so some
 * splits are empty): Vulkan against the CPU, and against Vulkan with fuse = 0
 * (attention then merges its own partials, LASTC, and the matvec reads x);
 * the report names the fused node; an attention output with another reader,
 * or an o projection the i8 matvec does not take, stays unfused. On the CPU
 * the fused graph equals the unfused one bit for bit.
 */
#include "harness.h"
#include "ops_common.h"
#include "vk_parity.h"
#include "ir/ir.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

enum { CH = 8, CHKV = 2, CD = 64, CK = CH * CD, CN = 256, CSTEPS = 70 };

/* cap: cache rows. 200 rows (7 tiles of 32 keys): split 7 ways, folded.
 * 640 rows (20 tiles): split at most 8 ways, the most the matvec combines
 * (7 splits of 96 keys), folded; a Q4_0 o projection (no i8 matvec)
 * declines, and attention lowers again with its combine pass.
 * stride: step t writes cache row t * stride (skipped rows stay zero, as
 * params start on both backends), so 70 steps reach ~620 keys and each
 * split holds several tiles. 1200 rows with stride 17 reach 1174 keys. */
typedef struct fcase { rlx_dtype dt; bool add; bool extra_use; int64_t cap; int stride; } fcase;

static rlx_graph *build(const fcase *c, const void *w) {
    rlx_graph *g = rlx_graph_new();
    int64_t qd[4] = {1, CH, 1, CD}, kd[4] = {1, CHKV, 1, CD}, cd[4] = {1, CHKV, c->cap, CD}, one[1] = {1};
    int64_t wd[2] = {CN, CK}, xd[2] = {1, CK}, rd[2] = {1, CN};
    rlx_node q = rlx_input(g, "q", RLX_F32, 4, qd), k = rlx_input(g, "k", RLX_F32, 4, kd);
    rlx_node v = rlx_input(g, "v", RLX_F32, 4, kd), pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node len = rlx_input(g, "kv_len", RLX_I32, 1, one), r = rlx_input(g, "r", RLX_F32, 2, rd);
    rlx_node kc = rlx_kv_write(g, rlx_param(g, "k_cache", RLX_F32, 4, cd), k, pos);
    rlx_node vc = rlx_kv_write(g, rlx_param(g, "v_cache", RLX_F32, 4, cd), v, pos);
    rlx_node a = rlx_attention_kv(g, q, kc, vc, RLX_MASK_CAUSAL, RLX_NO_NODE, 0.125f, len);
    static const int perm[4] = {0, 2, 1, 3};
    rlx_node x = rlx_reshape(g, rlx_transpose(g, a, perm), 2, xd);
    rlx_node y = rlx_dequant_matmul(g, x, rlx_constant(g, c->dt, 2, wd, w));
    rlx_output(g, "y", c->add ? rlx_add(g, y, r) : y);
    if (c->extra_use) rlx_output(g, "a", a);
    return g;
}

/* One decode step at cache row pos of random q, k, v, r through the three
 * programs; their outputs y into y[i]. */
static bool run_step(rlx_exec *const ex[3], int32_t pos, float y[3][CN]) {
    float q[CH * CD], k[CHKV * CD], v[CHKV * CD], r[CN];
    test_fill_uniform_f32(q, CH * CD, -1, 1);
    test_fill_uniform_f32(k, CHKV * CD, -1, 1);
    test_fill_uniform_f32(v, CHKV * CD, -1, 1);
    test_fill_uniform_f32(r, CN, -1, 1);
    int32_t len = pos + 1;
    rlx_tensor in[6] = {
        {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, CH, 1, CD}, .data = q, .bytes = sizeof q},
        {.name = "k", .dtype = RLX_F32, .rank = 4, .dims = {1, CHKV, 1, CD}, .data = k, .bytes = sizeof k},
        {.name = "v", .dtype = RLX_F32, .rank = 4, .dims = {1, CHKV, 1, CD}, .data = v, .bytes = sizeof v},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {1, CN}, .data = r, .bytes = sizeof r},
    };
    for (int i = 0; i < 3; i++)
        if (rlx_exec_run(ex[i], in, 6) != RLX_OK || rlx_exec_read_output(ex[i], "y", y[i], sizeof y[i]) != RLX_OK) return false;
    return true;
}

static bool run_case(const fcase *c) {
    double *wd;
    size_t wbytes;
    void *w = ops_quantized_weights(c->dt, CN, CK, &wd, &wbytes);
    rlx_graph *g = build(c, w);
    rlx_exec *cpu = vkp_compile(g, false), *vk = vkp_compile(g, true);
    /* unfused; plain Q8_0 on the i8 kernel too, as in the fused node */
    setenv("RLX_VK_DQ_I8", "q8_0,q4_K,q5_K,q6_K", 1);
    rlx_compile_options o;
    vkp_options(&o);
    o.fuse = 0;
    rlx_exec *vk2 = NULL;
    if (rlx_compile(g, &o, &vk2) != RLX_OK) printf("    compile (fuse = 0): %s\n", rlx_last_error());
    unsetenv("RLX_VK_DQ_I8");
    bool ok = cpu && vk && vk2;
    float y[3][CN];
    for (int t = 0; t < CSTEPS && ok; t++) {
        rlx_exec *ex[3] = {cpu, vk, vk2};
        if (!(ok = run_step(ex, t * c->stride, y))) {
            printf("    step %d: %s\n", t, rlx_last_error());
            break;
        }
        double ref[CN], ref2[CN];
        for (int i = 0; i < CN; i++) {
            ref[i] = y[0][i];
            ref2[i] = y[2][i];
        }
        char what[64];
        /* the CPU rounds x to 8 bits as the i8 kernel does (a plain Q8_0 product
         * on the CPU may take its exact path: ~4e-3 apart) */
        snprintf(what, sizeof what, "step %d vulkan vs cpu", t);
        ok = test_close_f32_f64(what, y[1], ref, CN, c->dt == RLX_Q8_0 || c->dt == RLX_Q4_0 ? 1e-2 : 2e-3);
        snprintf(what, sizeof what, "step %d fold vs none", t);
        /* the same partials up to float rounding */
        ok = ok && test_close_f32_f64(what, y[1], ref2, CN, 1e-5);
    }
    if (ok) {   /* the report names the fused node (or, with another reader, its absence) */
        char *rep = rlx_exec_report(vk), *rep2 = rlx_exec_report(vk2);
        /* Q4_0 has no i8 matvec: the fold declines, attention merges its own partials */
        int want = c->extra_use || c->dt == RLX_Q4_0 ? 0 : 1;
        int fused = test_count(rep, "gpu    attention_dequant_matmul"), off = test_count(rep2, "attention_dequant_matmul");
        if (fused != want || test_count(rep, "+ split-key attention") != want || off) {
            printf("    fused %d times, want %d (fuse = 0: %d)\n%s", fused, want, off, rep ? rep : "");
            ok = false;
        }
        if (ok && !want && !strstr(rep, "splitkv-lastcombine")) {
            printf("    unfused attention did not split its keys and merge them: nothing tested\n%s", rep);
            ok = false;
        }
        /* unfused, attention splits and merges its own partials (LASTC) */
        if (ok && !strstr(rep2, "splitkv-lastcombine")) {
            printf("    attention did not split its keys (fuse = 0)\n%s", rep2);
            ok = false;
        }
        free(rep);
        free(rep2);
    }
    if (!ok)
        printf("    %s add %d extra use %d cache %lld stride %d\n", rlx_dtype_name(c->dt), c->add, c->extra_use,
               (long long)c->cap, c->stride);
    rlx_exec_free(cpu);
    rlx_exec_free(vk);
    rlx_exec_free(vk2);
    rlx_graph_free(g);
    free(w);
    free(wd);
    return ok;
}

TEST(vk_combine_fold_decode) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;   /* the fold takes the i8 matvec */
    const fcase cases[] = {
        {RLX_Q4_K, true, false, 200, 1},  {RLX_Q6_K, false, false, 200, 1}, {RLX_Q8_0, true, false, 200, 1},
        {RLX_Q4_K, true, true, 200, 1},   {RLX_Q4_K, true, false, 640, 1},  {RLX_Q4_K, true, false, 640, 9},
        {RLX_Q4_0, true, false, 640, 9},  {RLX_Q4_K, true, false, 1200, 17},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) CHECK(run_case(&cases[i]));
}

/* On the CPU (the reference): the fold applied to the graph itself
 * (pass_fold_combine_inplace accepting every candidate) gives one
 * attention_dequant_matmul, which rlx_graph_dump shows, and the same
 * outputs as the unfused graph bit for bit, with and without the residual. */
static bool cpu_case(const fcase *c) {
    double *wd;
    size_t wbytes;
    void *w = ops_quantized_weights(c->dt, CN, CK, &wd, &wbytes);
    rlx_graph *plain = build(c, w), *fused = build(c, w);
    int n = 0;
    bool ok = pass_fold_combine_inplace(&fused->g, NULL, NULL, &n) == RLX_OK;
    char *dump = rlx_graph_dump(fused);
    int want = c->extra_use ? 0 : 1;
    if (!ok || n != want || test_count(dump, "attention_dequant_matmul") != want) {
        printf("    fold: %d (%s)\n%s", n, rlx_last_error(), dump ? dump : "");
        ok = false;
    }
    free(dump);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.fuse = 0;   /* a dequant_matmul_add would take the add otherwise; fold it here instead */
    rlx_exec *ex[3] = {NULL, NULL, NULL};   /* unfused, fused, and unfused again (run_step runs three) */
    if (ok && (rlx_compile(plain, &o, &ex[0]) != RLX_OK || rlx_compile(fused, &o, &ex[1]) != RLX_OK ||
               rlx_compile(plain, &o, &ex[2]) != RLX_OK)) {
        printf("    compile: %s\n", rlx_last_error());
        ok = false;
    }
    float y[3][CN];
    for (int t = 0; ok && t < 12; t++) {
        if (!(ok = run_step(ex, t * c->stride, y))) {
            printf("    step %d: %s\n", t, rlx_last_error());
            break;
        }
        if (memcmp(y[0], y[1], sizeof y[0]) != 0) {   /* one step's inputs go to every program */
            printf("    step %d: fused differs from unfused (%s add %d)\n", t, rlx_dtype_name(c->dt), c->add);
            ok = false;
        }
    }
    for (int i = 0; i < 3; i++) rlx_exec_free(ex[i]);
    rlx_graph_free(plain);
    rlx_graph_free(fused);
    free(w);
    free(wd);
    return ok;
}

/* The default rule (vk_program.c, prefers_last_combine): a Q8_0 o
 * projection of K >= 4096 (32 heads of 128) leaves the combine to the
 * attention instead of folding it; one run of a cache of 200 rows at 150
 * keys agrees with the CPU. */
TEST(vk_attention_last_combine_default_rule) {
    VKP_REQUIRE();
    enum { WH = 32, WKV = 8, WD = 128, WK = WH * WD, WN = 64, WCAP = 200 };
    double *wd;
    size_t wbytes;
    void *w = ops_quantized_weights(RLX_Q8_0, WN, WK, &wd, &wbytes);
    rlx_graph *g = rlx_graph_new();
    int64_t qd[4] = {1, WH, 1, WD}, kd[4] = {1, WKV, 1, WD}, cd[4] = {1, WKV, WCAP, WD}, one[1] = {1};
    int64_t wdims[2] = {WN, WK}, xd[2] = {1, WK};
    rlx_node q = rlx_input(g, "q", RLX_F32, 4, qd), k = rlx_input(g, "k", RLX_F32, 4, kd);
    rlx_node v = rlx_input(g, "v", RLX_F32, 4, kd), pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node len = rlx_input(g, "kv_len", RLX_I32, 1, one);
    rlx_node kc = rlx_kv_write(g, rlx_param(g, "k_cache", RLX_F32, 4, cd), k, pos);
    rlx_node vc = rlx_kv_write(g, rlx_param(g, "v_cache", RLX_F32, 4, cd), v, pos);
    rlx_node a = rlx_attention_kv(g, q, kc, vc, RLX_MASK_CAUSAL, RLX_NO_NODE, 0.088f, len);
    static const int perm[4] = {0, 2, 1, 3};
    rlx_node x = rlx_reshape(g, rlx_transpose(g, a, perm), 2, xd);
    rlx_output(g, "y", rlx_dequant_matmul(g, x, rlx_constant(g, RLX_Q8_0, 2, wdims, w)));
    rlx_exec *cpu = vkp_compile(g, false), *vk = vkp_compile(g, true);
    CHECK(cpu && vk);
    float *qv = malloc(sizeof(float) * WK), kv[WKV * WD], vv[WKV * WD], y[2][WN];
    test_fill_uniform_f32(qv, WK, -1, 1);
    test_fill_uniform_f32(kv, WKV * WD, -1, 1);
    test_fill_uniform_f32(vv, WKV * WD, -1, 1);
    int32_t p = 149, l = 150;
    rlx_tensor in[5] = {
        {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, WH, 1, WD}, .data = qv, .bytes = sizeof(float) * WK},
        {.name = "k", .dtype = RLX_F32, .rank = 4, .dims = {1, WKV, 1, WD}, .data = kv, .bytes = sizeof kv},
        {.name = "v", .dtype = RLX_F32, .rank = 4, .dims = {1, WKV, 1, WD}, .data = vv, .bytes = sizeof vv},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &p, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &l, .bytes = 4},
    };
    rlx_exec *ex[2] = {cpu, vk};
    for (int i = 0; i < 2 && cpu && vk; i++)
        CHECK(rlx_exec_run(ex[i], in, 5) == RLX_OK && rlx_exec_read_output(ex[i], "y", y[i], sizeof y[i]) == RLX_OK);
    double ref[WN];
    for (int i = 0; i < WN; i++) ref[i] = y[0][i];
    /* the CPU rounds x to 8 bits here, the GPU's run kernel does not: ~4e-3 apart */
    CHECK(test_close_f32_f64("last combine by default vs cpu", y[1], ref, WN, 1e-2));
    char *rep = vk ? rlx_exec_report(vk) : NULL;
    CHECK_MSG(rep && strstr(rep, "splitkv-lastcombine") && !strstr(rep, "attention_dequant_matmul"), "default:\n%s",
              rep ? rep : "");
    free(rep);
    free(qv);
    rlx_exec_free(cpu);
    rlx_exec_free(vk);
    rlx_graph_free(g);
    free(w);
    free(wd);
}

TEST(attention_dequant_cpu_fused_equals_unfused) {
    const fcase cases[] = {
        {RLX_Q4_K, true, false, 200, 1}, {RLX_Q8_0, false, false, 200, 3}, {RLX_Q4_K, true, true, 200, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) CHECK(cpu_case(&cases[i]));
}
