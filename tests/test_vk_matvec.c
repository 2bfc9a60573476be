/*
 * test_vk_matvec.c — the decode matvecs (dequant_matvec_run.comp for
 * Q8_0/Q4_K/Q6_K, dequant_matvec.comp for the other types) on long rows and
 * several x-row counts, each checked to run on the kernel it claims, and the fused DEQUANT_MATMUL forms that passes/fuse.c
 * makes of a decoder's residual adds and SwiGLU: dequant_matmul_add and
 * dequant_swiglu, against float64 references over the decoded weights, on
 * the CPU and on Vulkan, decode-shaped (the matvec epilogue) and
 * prefill-shaped (GEMM, then epilogue.comp). Also decode attention over a KV
 * cache filled part way (short caches, and long ones whose splits hold
 * several tiles), against float64.
 */
#include "vk_parity.h"
#include "ops_common.h"
#include "quant/quant.h"
#include <stdlib.h>
#include <math.h>
#include <string.h>


/* The kernel a decode matvec of dt must run on (the tests here set
 * exact_quant = 1): the 8-weight-run kernel for Q8_0/Q4_K/Q6_K unless
 * RLX_VK_DQ_RUN=0, else the part-per-lane one. */
static const char *expected_tier(rlx_dtype dt) {
    const char *env = getenv("RLX_VK_DQ_RUN");
    bool run = (dt == RLX_Q8_0 || dt == RLX_Q4_K || dt == RLX_Q6_K) && !(env && strcmp(env, "0") == 0);
    return run ? "dequant-run-" : "dequant-matvec-";
}

/* Whether the exec's report names tier a or, if b is not NULL, tier b
 * (printing the report if not). */
static bool report_has_any(rlx_exec *e, const char *a, const char *b) {
    char *rep = rlx_exec_report(e);
    bool ok = rep && (strstr(rep, a) || (b && strstr(rep, b)));
    if (!ok) printf("    expected tier %s%s%s in:\n%s", a, b ? " or " : "", b ? b : "", rep ? rep : "(no report)");
    free(rep);
    return ok;
}

static bool report_has(rlx_exec *e, const char *tier) { return report_has_any(e, tier, NULL); }

/* y = x · wᵀ on Vulkan against float64; every output element checked. */
static bool matvec_case(rlx_dtype dt, int64_t M, int64_t N, int64_t K) {
    double *wd;
    size_t wbytes;
    void *w = ops_quantized_weights(dt, N, K, &wd, &wbytes);
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *y = malloc(sizeof(float) * (size_t)(M * N));
    test_fill_uniform_f32(x, M * K, -1, 1);
    double *want = calloc((size_t)(M * N), sizeof(double));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++) want[m * N + n] += (double)x[m * K + k] * wd[n * K + k];
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wdims[2] = {N, K};
    rlx_output(g, "y", rlx_dequant_matmul(g, rlx_input(g, "x", RLX_F32, 2, xd), rlx_param(g, "w", dt, 2, wdims)));
    rlx_compile_options o;
    vkp_options(&o);
    o.exact_quant = 1;   /* the exact kernels; the 8-bit-x one: test_vk_matvec_i8.c */
    rlx_exec *e = NULL;
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x, .bytes = sizeof(float) * (size_t)(M * K)};
    bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param(e, "w", dt, w, wbytes) == RLX_OK &&
              rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)(M * N)) == RLX_OK;
    if (!ok) printf("    %s M %lld N %lld K %lld: %s\n", rlx_dtype_name(dt), (long long)M, (long long)N, (long long)K,
                    rlx_last_error());
    rlx_exec_stats st;
    ok = ok && rlx_exec_get_stats(e, &st) == RLX_OK && st.host_steps == 0 && report_has(e, expected_tier(dt));
    if (ok) {
        char what[96];
        snprintf(what, sizeof what, "%s M=%lld N=%lld K=%lld", rlx_dtype_name(dt), (long long)M, (long long)N, (long long)K);
        ok = test_close_f32_f64(what, y, want, M * N, 2e-5);
    }
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(w);
    free(wd);
    free(x);
    free(y);
    free(want);
    return ok;
}

static const rlx_dtype block_types[] = {RLX_Q4_0, RLX_Q4_1, RLX_Q5_0, RLX_Q5_1, RLX_Q8_0, RLX_Q2_K,
                                        RLX_Q3_K, RLX_Q4_K, RLX_Q5_K, RLX_Q6_K, RLX_Q8_K};

static bool is_k(rlx_dtype dt) { return dt >= RLX_Q2_K; }

/* Long rows (more 32-weight parts than a subgroup has lanes, the last lap partial). */
TEST(vk_matvec_long_rows_every_type) {
    VKP_REQUIRE();
    for (size_t t = 0; t < sizeof block_types / sizeof block_types[0]; t++) {
        rlx_dtype dt = block_types[t];
        int64_t K = is_k(dt) ? 256 * 9 : 32 * 67;
        CHECK(matvec_case(dt, 1, 37, K));
        if (dt == RLX_Q4_K || dt == RLX_Q8_0 || dt == RLX_Q6_K)
            CHECK(matvec_case(dt, 3, 11, is_k(dt) ? 256 * 17 : 32 * 129));
    }
}

/* x-row counts 1, 3 and 8, odd N, rows of 54 and 34 bytes (2-byte aligned blocks). */
TEST(vk_matvec_rows_and_alignment) {
    VKP_REQUIRE();
    static const int64_t Ms[] = {1, 3, 8};
    for (size_t i = 0; i < 3; i++) {
        int64_t M = Ms[i];
        CHECK(matvec_case(RLX_Q4_0, M, 29, 96));
        CHECK(matvec_case(RLX_Q6_K, M, 13, 256));
    }
    CHECK(matvec_case(RLX_Q8_0, 2, 5, 32));
    CHECK(matvec_case(RLX_Q5_1, 1, 1, 32));
}

/* ------------------------------------------------------------ fused forms */

/* y = x·wᵀ + r (swiglu = false) or silu(x·wgᵀ) * (x·wuᵀ) built from the
 * unfused ops, so that fusion must find it; run on the CPU (fused and with
 * RLX_NO_FUSE=1) and on Vulkan, each against float64. */
static bool fused_case(rlx_dtype dt, bool swiglu, int64_t M, int64_t N, int64_t K) {
    double *wd, *ud;
    size_t wbytes, ubytes;
    void *w = ops_quantized_weights(dt, N, K, &wd, &wbytes), *u = ops_quantized_weights(dt, N, K, &ud, &ubytes);
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *r = malloc(sizeof(float) * (size_t)(M * N));
    float *y = malloc(sizeof(float) * (size_t)(M * N));
    test_fill_uniform_f32(x, M * K, -1, 1);
    test_fill_uniform_f32(r, M * N, -2, 2);
    double *want = calloc((size_t)(M * N), sizeof(double));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++) {
            double a = 0, b = 0;
            for (int64_t k = 0; k < K; k++) {
                a += (double)x[m * K + k] * wd[n * K + k];
                b += (double)x[m * K + k] * ud[n * K + k];
            }
            want[m * N + n] = swiglu ? a / (1 + exp(-a)) * b : a + r[m * N + n];
        }
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wdims[2] = {N, K}, rd[2] = {M, N};
    rlx_node xn = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node gate = rlx_dequant_matmul(g, xn, rlx_param(g, "w", dt, 2, wdims));
    rlx_node yn = swiglu ? rlx_mul(g, rlx_silu(g, gate), rlx_dequant_matmul(g, xn, rlx_param(g, "u", dt, 2, wdims)))
                         : rlx_add(g, rlx_input(g, "r", RLX_F32, 2, rd), gate);
    rlx_output(g, "y", yn);
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x, .bytes = sizeof(float) * (size_t)(M * K)},
        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {M, N}, .data = r, .bytes = sizeof(float) * (size_t)(M * N)},
    };
    bool ok = true;
    /* CPU fused, CPU unfused, Vulkan, Vulkan with K split in 3 (prefill sizes) */
    for (int variant = 0; variant < 4 && ok; variant++) {
        if (variant >= 2 && !vkp_available()) break;
        if (variant == 3 && M <= 8) break;
        char *splitk = variant == 3 ? test_env_swap("RLX_VK_DQ_SPLITK", "3") : NULL;
        rlx_compile_options o;
        if (variant >= 2) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
        o.fuse = variant != 1;
        /* exact products: the CPU's 8-bit-activation path is checked in
         * test_qdot.c, Vulkan's in test_vk_matvec_i8.c */
        o.exact_quant = 1;
        rlx_exec *e = NULL;
        ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param(e, "w", dt, w, wbytes) == RLX_OK &&
             (!swiglu || rlx_exec_set_param(e, "u", dt, u, ubytes) == RLX_OK) && rlx_exec_run(e, in, swiglu ? 1 : 2) == RLX_OK &&
             rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)(M * N)) == RLX_OK;
        if (variant == 3) test_env_restore("RLX_VK_DQ_SPLITK", splitk);
        if (!ok) printf("    variant %d: %s\n", variant, rlx_last_error());
        char *rep = ok ? rlx_exec_report(e) : NULL;
        const char *op = swiglu ? "dequant_swiglu" : "dequant_matmul_add";
        if (ok && (variant == 1) == (rep && strstr(rep, op) != NULL)) {   /* fused exactly when fusion is on */
            printf("    variant %d: %s %s\n%s", variant, op, variant == 1 ? "present without fusion" : "missing", rep ? rep : "");
            ok = false;
        }
        rlx_exec_stats st;
        if (ok && variant >= 2 && (rlx_exec_get_stats(e, &st) != RLX_OK || st.host_steps != 0)) {
            printf("    vulkan ran host steps:\n%s", rep ? rep : "");
            ok = false;
        }
        if (ok && variant >= 2) {   /* decode: the matvec epilogue; prefill: GEMM + epilogue.comp */
            char tier[64], split[64];
            snprintf(split, sizeof split, "splitk+%s", swiglu ? "swiglu" : "add");
            if (M <= 8) snprintf(tier, sizeof tier, "%s%s", expected_tier(dt), swiglu ? "swiglu-" : "add-");
            else snprintf(tier, sizeof tier, "dequant-gemm+%s", swiglu ? "swiglu" : "add");
            /* variant 3 splits; variant 2 may, where the device is hardware (auto) */
            ok = variant == 3 ? report_has(e, split) : M <= 8 ? report_has(e, tier) : report_has_any(e, tier, split);
        }
        free(rep);
        char what[96];
        snprintf(what, sizeof what, "%s %s M=%lld N=%lld K=%lld variant %d", swiglu ? "swiglu" : "add", rlx_dtype_name(dt),
                 (long long)M, (long long)N, (long long)K, variant);
        /* Vulkan at prefill sizes may round x to f16 on tensor cores (docs/ops.md): ~3e-4 */
        ok = ok && test_close_f32_f64(what, y, want, M * N, variant >= 2 && M > 8 ? 1e-3 : 2e-5);
        rlx_exec_free(e);
    }
    rlx_graph_free(g);
    free(w);
    free(u);
    free(wd);
    free(ud);
    free(x);
    free(r);
    free(y);
    free(want);
    return ok;
}

TEST(dequant_fused_add_and_swiglu) {
    static const rlx_dtype ts[] = {RLX_Q4_K, RLX_Q8_0, RLX_F16};
    static const int64_t Ms[] = {1, 3, 20};   /* matvec epilogue; prefill GEMM + epilogue.comp */
    for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++)
        for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++) {
            int64_t K = is_k(ts[t]) ? 512 : 96;
            CHECK(fused_case(ts[t], false, Ms[i], 37, K));
            CHECK(fused_case(ts[t], true, Ms[i], 29, K));
        }
}

/* An add whose other operand broadcasts, and a SwiGLU over two different x,
 * are not the fused patterns: they stay unfused and still compute right. */
TEST(dequant_fusion_leaves_other_patterns) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {2, 64}, wdims[2] = {8, 64}, bd[1] = {8};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), x2 = rlx_input(g, "x2", RLX_F32, 2, xd);
    rlx_node w = rlx_param(g, "w", RLX_F32, 2, wdims), u = rlx_param(g, "u", RLX_F32, 2, wdims);
    rlx_output(g, "a", rlx_add(g, rlx_dequant_matmul(g, x, w), rlx_param(g, "b", RLX_F32, 1, bd)));
    rlx_output(g, "s", rlx_mul(g, rlx_silu(g, rlx_dequant_matmul(g, x, w)), rlx_dequant_matmul(g, x2, u)));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    rlx_exec *e = NULL;
    CHECK(rlx_compile(g, &o, &e) == RLX_OK);
    char *rep = e ? rlx_exec_report(e) : NULL;
    CHECK(rep && !strstr(rep, "dequant_matmul_add") && !strstr(rep, "dequant_swiglu"));
    free(rep);
    rlx_exec_free(e);
    rlx_graph_free(g);
}

/* The run kernel's knobs (threads per group, rows per group) and the
 * part-per-lane kernel it replaces for Q8_0 / Q4_K / Q6_K (RLX_VK_DQ_RUN=0). */
TEST(vk_matvec_run_knobs_and_fallback) {
    VKP_REQUIRE();
    static const char *knobs[][3] = {{"1", "8", "1"}, {"1", "32", "4"}, {"1", "256", "2"}, {"0", "", ""}};
    bool ok = true;
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0] && ok; i++) {
        setenv("RLX_VK_DQ_RUN", knobs[i][0], 1);
        setenv("RLX_VK_DQ_T", knobs[i][1], 1);
        setenv("RLX_VK_DQ_NR", knobs[i][2], 1);
        ok = matvec_case(RLX_Q4_K, 2, 41, 256 * 5) && matvec_case(RLX_Q8_0, 1, 23, 32 * 70) &&
             matvec_case(RLX_Q6_K, 3, 9, 256 * 3) && fused_case(RLX_Q6_K, false, 1, 19, 512) &&
             fused_case(RLX_Q4_K, true, 2, 13, 512);
    }
    unsetenv("RLX_VK_DQ_RUN");
    unsetenv("RLX_VK_DQ_T");
    unsetenv("RLX_VK_DQ_NR");
    CHECK(ok);
}

/* Q8_0 runs of 16 weights (the default on rows of K % 256 == 0, which are
 * 16-byte aligned): one and two x rows, run counts of several powers of
 * two (lanes per group from them) and a lane count given by RLX_VK_DQ_T,
 * with + res and SwiGLU; three x rows take the 8-weight runs, as does
 * RLX_VK_DQ_RUN16=0. */
TEST(vk_matvec_run_q8_0_wide) {
    VKP_REQUIRE();
    bool ok = true;
    for (int mode = 0; mode < 3 && ok; mode++) {
        if (mode == 1) setenv("RLX_VK_DQ_T", "64", 1);
        if (mode == 2) setenv("RLX_VK_DQ_RUN16", "0", 1);
        ok = matvec_case(RLX_Q8_0, 1, 37, 256 * 9) && matvec_case(RLX_Q8_0, 2, 11, 256 * 3) &&
             matvec_case(RLX_Q8_0, 1, 7, 256 * 32) && matvec_case(RLX_Q8_0, 3, 5, 256 * 2) &&
             fused_case(RLX_Q8_0, false, 1, 19, 512) && fused_case(RLX_Q8_0, true, 2, 13, 768);
        unsetenv("RLX_VK_DQ_T");
    }
    unsetenv("RLX_VK_DQ_RUN16");
    CHECK(ok);
}

/* ------------------------------------------------ decode attention, norms */

/* Decode attention over a large cache at several fills: the keys in use are
 * split over workgroups at run time (attention.comp), including fills below
 * one tile per split and the full capacity. CPU vs Vulkan, causal. */
TEST(vk_attention_kv_split_by_fill) {
    VKP_REQUIRE();
    enum { H = 8, HKV = 2, D = 64, CAP = 300 };
    static const int32_t fills[] = {1, 37, 100, 300};
    for (size_t i = 0; i < sizeof fills / sizeof fills[0]; i++) {
        rlx_graph *g = rlx_graph_new();
        int64_t qd[4] = {1, H, 1, D}, cd[4] = {1, HKV, CAP, D}, one[1] = {1};
        rlx_node q = rlx_input(g, "q", RLX_F32, 4, qd), len = rlx_input(g, "kv_len", RLX_I32, 1, one);
        rlx_node k = rlx_param(g, "k", RLX_F32, 4, cd), v = rlx_param(g, "v", RLX_F32, 4, cd);
        rlx_output(g, "o", rlx_attention_kv(g, q, k, v, RLX_MASK_CAUSAL, RLX_NO_NODE, 0.125f, len));
        float qv[H * D];
        test_fill_uniform_f32(qv, H * D, -1, 1);
        int32_t fill = fills[i];
        rlx_tensor in[2] = {
            {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, H, 1, D}, .data = qv, .bytes = sizeof qv},
            {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &fill, .bytes = 4},
        };
        CHECK(vkp_compare(g, in, 2, 1e-5, true));
        rlx_compile_options o;   /* the launch must take the split-keys path */
        vkp_options(&o);
        rlx_exec *e = NULL;
        CHECK(rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, in, 2) == RLX_OK && report_has(e, "flash-f32-splitkv"));
        rlx_exec_free(e);
        rlx_graph_free(g);
    }
}

/* Decode attention (one query row per head, a cache of CAP rows filled to
 * each of fills) on the device against a float64 reference over the filled
 * rows only; the rows past the fill hold NaN and Inf, which must never reach
 * the result (stale rows of an earlier sequence can). */
static bool check_kv_fills(int H, int HKV, int D, int CAP, const int32_t *fills, int n_fills) {
    rlx_graph *g = rlx_graph_new();
    int64_t qd[4] = {1, H, 1, D}, cd[4] = {1, HKV, CAP, D}, one[1] = {1};
    rlx_node q = rlx_input(g, "q", RLX_F32, 4, qd), len = rlx_input(g, "kv_len", RLX_I32, 1, one);
    rlx_node k = rlx_param(g, "k", RLX_F32, 4, cd), v = rlx_param(g, "v", RLX_F32, 4, cd);
    rlx_output(g, "o", rlx_attention_kv(g, q, k, v, RLX_MASK_CAUSAL, RLX_NO_NODE, 0.125f, len));
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    bool ok = rlx_compile(g, &o, &e) == RLX_OK;
    size_t nq = (size_t)H * D, nc = (size_t)HKV * CAP * D;
    float *qv = malloc(nq * sizeof *qv), *kv = malloc(nc * sizeof *kv), *vv = malloc(nc * sizeof *vv);
    float *out = malloc(nq * sizeof *out);
    double *s = malloc((size_t)CAP * sizeof *s);
    ok = ok && qv && kv && vv && out && s;
    if (ok) test_fill_uniform_f32(qv, (int64_t)nq, -1, 1);
    for (int i = 0; i < n_fills && ok; i++) {
        int32_t fill = fills[i];
        test_fill_uniform_f32(kv, (int64_t)nc, -1, 1);
        test_fill_uniform_f32(vv, (int64_t)nc, -1, 1);
        for (int h = 0; h < HKV; h++)
            for (int r = fill; r < CAP; r++)
                for (int d = 0; d < D; d++) {
                    kv[((size_t)h * CAP + r) * D + d] = (r + d) % 2 ? NAN : INFINITY;
                    vv[((size_t)h * CAP + r) * D + d] = (r + d) % 2 ? INFINITY : NAN;
                }
        rlx_tensor in[2] = {
            {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, H, 1, D}, .data = qv, .bytes = nq * sizeof *qv},
            {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &fill, .bytes = 4},
        };
        ok = rlx_exec_set_param(e, "k", RLX_F32, kv, nc * sizeof *kv) == RLX_OK &&
             rlx_exec_set_param(e, "v", RLX_F32, vv, nc * sizeof *vv) == RLX_OK && rlx_exec_run(e, in, 2) == RLX_OK &&
             rlx_exec_read_output(e, "o", out, nq * sizeof *out) == RLX_OK && report_has(e, "flash-f32-splitkv");
        if (!ok) printf("    H %d HKV %d CAP %d fill %d: %s\n", H, HKV, CAP, fill, rlx_last_error());
        for (int h = 0; h < H && ok; h++) {   /* query head h reads kv head h / (H / HKV) */
            const float *kh = kv + (size_t)(h / (H / HKV)) * CAP * D, *vh = vv + (size_t)(h / (H / HKV)) * CAP * D;
            double mx = -INFINITY, sum = 0;
            for (int j = 0; j < fill; j++) {
                s[j] = 0;
                for (int d = 0; d < D; d++) s[j] += (double)qv[h * D + d] * kh[(size_t)j * D + d];
                s[j] *= 0.125;
                mx = s[j] > mx ? s[j] : mx;
            }
            for (int j = 0; j < fill; j++) sum += exp(s[j] - mx);
            for (int d = 0; d < D && ok; d++) {
                double ref = 0;
                for (int j = 0; j < fill; j++) ref += exp(s[j] - mx) / sum * vh[(size_t)j * D + d];
                ok = isfinite(out[h * D + d]) && fabs(out[h * D + d] - ref) <= 1e-4 * (1 + fabs(ref));
                if (!ok) printf("    H %d CAP %d fill %d head %d dim %d: %g, want %g\n", H, CAP, fill, h, d,
                                out[h * D + d], ref);
            }
        }
    }
    free(qv);
    free(kv);
    free(vv);
    free(out);
    free(s);
    rlx_exec_free(e);
    rlx_graph_free(g);
    return ok;
}

/* One tile per split (a short cache): the keys in use split at run time. */
TEST(vk_attention_kv_rows_past_fill_ignored) {
    VKP_REQUIRE();
    static const int32_t fills[] = {1, 30, 33, 130};
    CHECK(check_kv_fills(4, 2, 64, 200, fills, 4));
}

/* Several tiles per split (32 kv heads, 8 splits of a 1024-row cache): the
 * next K/V tile is loaded while one is computed (attention.comp's PIPE),
 * with fills that end inside a tile, on a split boundary and at the end. */
TEST(vk_attention_kv_long_cache_tiles_in_flight) {
    VKP_REQUIRE();
    static const int32_t fills[] = {1, 31, 129, 500, 1024};
    CHECK(check_kv_fills(32, 32, 64, 1024, fills, 5));
}

/* rms_norm / layer_norm at decode shapes (few rows) with d on both sides of
 * multiples of 256, fused residual included. */
TEST(vk_norm_few_rows_cached) {
    VKP_REQUIRE();
    static const int64_t ds[] = {1, 200, 256, 1000, 4096, 5000};
    for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++)
        for (int layer = 0; layer < 2; layer++) {
            int64_t d = ds[i], xd[2] = {3, d}, gd[1] = {d};
            rlx_graph *g = rlx_graph_new();
            rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), r = rlx_input(g, "r", RLX_F32, 2, xd);
            rlx_node gm = rlx_param(g, "g", RLX_F32, 1, gd);
            rlx_node s = rlx_add(g, x, r);
            rlx_output(g, "y", layer ? rlx_layer_norm(g, s, gm, rlx_param(g, "b", RLX_F32, 1, gd), 1e-5f)
                                     : rlx_rms_norm(g, s, gm, RLX_NO_NODE, 1e-5f));
            rlx_output(g, "z", layer ? rlx_layer_norm(g, x, gm, RLX_NO_NODE, 1e-5f) : rlx_rms_norm(g, x, gm, RLX_NO_NODE, 1e-5f));
            float *xv = malloc(sizeof(float) * (size_t)(3 * d)), *rv = malloc(sizeof(float) * (size_t)(3 * d));
            test_fill_uniform_f32(xv, 3 * d, -2, 3);
            test_fill_uniform_f32(rv, 3 * d, -1, 1);
            rlx_tensor in[2] = {
                {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {3, d}, .data = xv, .bytes = sizeof(float) * (size_t)(3 * d)},
                {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {3, d}, .data = rv, .bytes = sizeof(float) * (size_t)(3 * d)},
            };
            CHECK(vkp_compare(g, in, 2, 1e-5, true));
            rlx_graph_free(g);
            free(xv);
            free(rv);
        }
}
