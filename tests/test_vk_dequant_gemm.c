/*
 * test_vk_dequant_gemm.c — the prefill tiers of DEQUANT_MATMUL on Vulkan
 * (M > 8: src/vulkan/lower/dequant_gemm.c, shaders/dequant_mm*.comp) for
 * every weight type, against a float64 reference over the decoded weights
 * and against the CPU backend (exact decoding, exact_quant = 1).
 *
 * Shapes: M in {9, 17, 64, 100} (below, at and past one 64-row tile), N no
 * multiple of the 64-wide tile (and one multiple of 4 for vector stores), K
 * whole blocks but several 32-element parts (K-quants: two blocks), float
 * weights with K past the last whole part and K % 4 != 0 (guarded loads).
 *
 * Each case also checks the tier in the report. Where the device the tests
 * use has the cooperative-matrix tier (NV cooperative matrix, f16 arithmetic,
 * subgroups of 32, RLX_VK_NO_COOPMAT unset) block and f16 weights must take
 * "dequant-mm-coopmat-<type>", or from 64 rows on "dequant-f16-coopmat" (w
 * decoded to f16 first, then matmul_coopmat): run with
 * RLX_TEST_VK_DEVICE=H200 there. Those tiers round x and the weights to f16,
 * so their bound is 3e-3 instead of 2e-5.
 */
#include "vk_parity.h"
#include "quant/quant.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL_F32  2e-5
#define TOL_COOP 3e-3

static const rlx_dtype all_types[] = {RLX_F32, RLX_F16, RLX_BF16, RLX_Q4_0, RLX_Q4_1, RLX_Q5_0, RLX_Q5_1,
                                      RLX_Q8_0, RLX_Q2_K, RLX_Q3_K, RLX_Q4_K, RLX_Q5_K, RLX_Q6_K, RLX_Q8_K};

/* Random [N, K] weights stored as dt; *decoded gets what the stored bytes mean. */
static void *weights(rlx_dtype dt, int64_t N, int64_t K, double **decoded, size_t *bytes) {
    int64_t dims[2] = {N, K};
    *bytes = rlx_tensor_bytes(dt, 2, dims);
    size_t n = (size_t)(N * K);
    float *f = malloc(sizeof(float) * n), *back = malloc(sizeof(float) * n);
    test_fill_uniform_f32(f, N * K, -1, 1);
    void *q = malloc(*bytes);
    uint32_t qt = quant_type_of_dtype(dt);
    quant_quantize_row(qt, f, q, N * K);
    quant_dequantize_row(qt, q, back, N * K);
    *decoded = malloc(sizeof(double) * n);
    for (size_t i = 0; i < n; i++) (*decoded)[i] = back[i];
    free(f);
    free(back);
    return q;
}

typedef struct gemm_case {
    rlx_dtype     dt;
    int64_t       N, K;
    const int64_t *Ms;
    int           nM;
    rlx_precision precision;
    int           coop_count;   /* out: nodes that took the coopmat tier */
    const char   *tier_has;     /* if set, every node's tier must contain it */
    const char   *tier_lacks;   /* if set, no node's tier may contain it */
} gemm_case;

/* One graph with a dequant_matmul per M (all on the same w), compiled for the
 * CPU and for Vulkan; every output is checked against float64 and the CPU. */
static void tier_of(const char *report, int nth, char *out, size_t cap) {
    vkp_tier_of(report, "dequant_matmul", nth, out, cap);
}

static bool run_gemm_case(gemm_case *gc) {
    enum { MAXM = 8 };
    rlx_dtype dt = gc->dt;
    int64_t N = gc->N, K = gc->K;
    const char *tn = rlx_dtype_name(dt);
    double *wd;
    size_t wbytes;
    void *w = weights(dt, N, K, &wd, &wbytes);
    rlx_graph *g = rlx_graph_new();
    int64_t wdims[2] = {N, K};
    rlx_node wn = rlx_param(g, "w", dt, 2, wdims);
    rlx_tensor in[MAXM];
    float *x[MAXM] = {0};
    char names[MAXM][2][16];   /* "x" + any int: no truncation warning at -O1 */
    for (int i = 0; i < gc->nM; i++) {
        int64_t M = gc->Ms[i], xd[2] = {M, K};
        snprintf(names[i][0], sizeof names[i][0], "x%d", i);
        snprintf(names[i][1], sizeof names[i][1], "y%d", i);
        x[i] = malloc(sizeof(float) * (size_t)(M * K));
        test_fill_uniform_f32(x[i], M * K, -1, 1);
        in[i] = (rlx_tensor){.name = names[i][0], .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x[i],
                             .bytes = sizeof(float) * (size_t)(M * K)};
        rlx_output(g, names[i][1], rlx_dequant_matmul(g, rlx_input(g, names[i][0], RLX_F32, 2, xd), wn));
    }
    rlx_compile_options oc, ov;
    rlx_compile_options_init(&oc);
    oc.backend = RLX_BACKEND_CPU;
    vkp_options(&ov);
    ov.precision = gc->precision;
    oc.exact_quant = ov.exact_quant = 1;   /* ov: for host steps of the Vulkan run */
    rlx_exec *ec = NULL, *ev = NULL;
    bool ok = rlx_compile(g, &oc, &ec) == RLX_OK && rlx_compile(g, &ov, &ev) == RLX_OK &&
              rlx_exec_set_param(ec, "w", dt, w, wbytes) == RLX_OK && rlx_exec_set_param(ev, "w", dt, w, wbytes) == RLX_OK &&
              rlx_exec_run(ec, in, gc->nM) == RLX_OK && rlx_exec_run(ev, in, gc->nM) == RLX_OK;
    if (!ok) printf("    %s N %lld K %lld: %s\n", tn, (long long)N, (long long)K, rlx_last_error());
    rlx_exec_stats st = {0};
    ok = ok && rlx_exec_get_stats(ev, &st) == RLX_OK;
    char *rep = ok ? rlx_exec_report(ev) : NULL;
    if (ok && (st.host_steps || !rep)) {
        printf("    %s: %d host steps where none were expected:\n%s", tn, st.host_steps, rep ? rep : "");
        ok = false;
    }
    int coop_dev = vkp_device_has_coopmat();
    bool coop_want = coop_dev == 1 && (rlx_dtype_is_quantized(dt) || dt == RLX_F16 || gc->precision == RLX_PRECISION_FAST);
    for (int i = 0; i < gc->nM && ok; i++) {
        int64_t M = gc->Ms[i];
        char tier[64], what[96];
        tier_of(rep, i, tier, sizeof tier);
        bool coop = strncmp(tier, "dequant-mm-coopmat-", 19) == 0 || strncmp(tier, "dequant-f16-coopmat", 19) == 0;
        bool f32_tier = strncmp(tier, "dequant-mm-", 11) == 0 || (dt == RLX_F32 && !strcmp(tier, "dequant-tiled-f32"));
        gc->coop_count += coop;
        if ((!coop && !f32_tier) || (coop_dev >= 0 && coop != coop_want) || (gc->tier_has && !strstr(tier, gc->tier_has)) ||
            (gc->tier_lacks && strstr(tier, gc->tier_lacks))) {
            printf("    %s M %lld: tier '%s', expected the %s tier%s%s\n", tn, (long long)M, tier, coop_want ? "coopmat" : "f32",
                   gc->tier_has ? " with " : "", gc->tier_has ? gc->tier_has : "");
            ok = false;
            break;
        }
        size_t n = (size_t)(M * N);
        float *yv = malloc(sizeof(float) * n), *yc = malloc(sizeof(float) * n);
        double *want = calloc(n, sizeof(double)), *cpu = malloc(sizeof(double) * n);
        ok = rlx_exec_read_output(ev, names[i][1], yv, sizeof(float) * n) == RLX_OK &&
             rlx_exec_read_output(ec, names[i][1], yc, sizeof(float) * n) == RLX_OK;
        for (int64_t m = 0; ok && m < M; m++)
            for (int64_t c = 0; c < N; c++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += (double)x[i][m * K + k] * wd[c * K + k];
                want[m * N + c] = s;
            }
        for (size_t j = 0; j < n; j++) cpu[j] = yc[j];
        snprintf(what, sizeof what, "%s M=%lld N=%lld K=%lld %s", tn, (long long)M, (long long)N, (long long)K, tier);
        double tol = coop ? TOL_COOP : TOL_F32;
        ok = ok && test_close_f32_f64(what, yc, want, (int64_t)n, TOL_F32) &&   /* the CPU side itself */
             test_close_f32_f64(what, yv, want, (int64_t)n, tol) && test_close_f32_f64(what, yv, cpu, (int64_t)n, tol);
        free(yv);
        free(yc);
        free(want);
        free(cpu);
    }
    free(rep);
    rlx_exec_free(ec);
    rlx_exec_free(ev);
    rlx_graph_free(g);
    for (int i = 0; i < gc->nM; i++) free(x[i]);
    free(w);
    free(wd);
    return ok;
}

static const int64_t prefill_Ms[] = {9, 17, 64, 100};

/* K per type: three parts (legacy blocks), two super-blocks (K-quants), or
 * past the last whole part (float weights, K % 4 == 0: vector loads). */
static int64_t k_for(rlx_dtype dt) {
    if (!rlx_dtype_is_quantized(dt)) return 100;
    return rlx_tensor_bytes(dt, 1, (int64_t[]){32}) ? 96 : 512;
}

TEST(vk_dequant_gemm_every_type) {
    VKP_REQUIRE();
    int coop = 0;
    for (size_t t = 0; t < sizeof all_types / sizeof all_types[0]; t++) {
        /* 70, 101, 132: partial 64-wide tiles; 132 % 4 == 0 stores vec4 */
        gemm_case gc = {all_types[t], 70 + 31 * (int64_t)(t % 3), k_for(all_types[t]), prefill_Ms, 4, RLX_PRECISION_F32, 0, NULL, NULL};
        CHECK(run_gemm_case(&gc));
        coop += gc.coop_count;
    }
    printf("    %d of %d nodes on the cooperative-matrix tier\n", coop, 4 * (int)(sizeof all_types / sizeof all_types[0]));
}

/* Float weights on guarded paths: K % 4 != 0 (scalar loads), K % 8 == 0 with
 * a partial last part (f16 copied straight to the coopmat tile), N < 64. */
TEST(vk_dequant_gemm_float_edges) {
    VKP_REQUIRE();
    static const int64_t Ms[] = {9, 33};
    static const rlx_dtype ts[] = {RLX_F16, RLX_BF16, RLX_F32};
    for (size_t t = 0; t < 3; t++) {
        gemm_case a = {ts[t], 37, 23, Ms, 2, RLX_PRECISION_F32, 0, NULL, NULL};
        gemm_case b = {ts[t], 40, 72, Ms, 2, RLX_PRECISION_F32, 0, NULL, NULL};
        CHECK(run_gemm_case(&a));
        CHECK(run_gemm_case(&b));
    }
}

/* Under the fast precision policy f32 and bf16 weights may take the coopmat
 * tier too (where the device has it); elsewhere they stay on f32 tiers. */
TEST(vk_dequant_gemm_fast_precision) {
    VKP_REQUIRE();
    static const int64_t Ms[] = {17, 100};
    static const rlx_dtype ts[] = {RLX_F32, RLX_BF16, RLX_Q6_K};
    for (size_t t = 0; t < 3; t++) {
        gemm_case gc = {ts[t], 133, ts[t] == RLX_Q6_K ? 256 : 96, Ms, 2, RLX_PRECISION_FAST, 0, NULL, NULL};
        CHECK(run_gemm_case(&gc));
    }
}

/* Devices with less shared memory (RLX_VK_DQ_MM_SHARED caps what the
 * lowering assumes): the f32 tier single-buffers its tiles below 32 KiB, the
 * coopmat tier steps one part at a time below 36 KiB. */
TEST(vk_dequant_gemm_small_shared_memory) {
    VKP_REQUIRE();
    static const int64_t Ms[] = {9, 100};
    static const rlx_dtype ts[] = {RLX_Q4_0, RLX_Q5_K, RLX_BF16};
    setenv("RLX_VK_DQ_MM_SHARED", vkp_device_has_coopmat() == 1 ? "32768" : "16384", 1);
    bool ok = true;
    for (size_t t = 0; t < 3 && ok; t++) {
        gemm_case gc = {ts[t], 101, k_for(ts[t]), Ms, 2, RLX_PRECISION_F32, 0, NULL, NULL};
        ok = run_gemm_case(&gc);
    }
    unsetenv("RLX_VK_DQ_MM_SHARED");
    CHECK(ok);
}

/* Split-K (RLX_VK_DQ_SPLITK forces it; on hardware it is automatic for small
 * grids): each split walks its own range of K parts into a partial slice and
 * epilogue.comp sums them. 2 and 3 splits leave a shorter last split (Q4_K
 * K = 1024: 32 parts), 16 is clamped to one K step per split (Q8_0 K = 96:
 * three parts), and float rows end inside their last part (F16 K = 100). */
TEST(vk_dequant_gemm_split_k) {
    VKP_REQUIRE();
    static const char *const splits[] = {"2", "3", "16"};
    static const int64_t Ms[] = {9, 100};
    static const struct { rlx_dtype dt; int64_t N, K; } cases[] = {
        {RLX_Q4_K, 70, 1024}, {RLX_Q8_0, 101, 96}, {RLX_F16, 37, 100}, {RLX_Q6_K, 64, 768},
    };
    bool ok = true;
    setenv("RLX_VK_DQ_F16_M", "1000000", 1);   /* M = 100 would take the decoded tier, which splits by its own plan */
    for (size_t s = 0; s < 3 && ok; s++) {
        setenv("RLX_VK_DQ_SPLITK", splits[s], 1);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0] && ok; i++) {
            gemm_case gc = {cases[i].dt, cases[i].N, cases[i].K, Ms, 2, RLX_PRECISION_F32, 0, "splitk", NULL};
            ok = run_gemm_case(&gc);
            if (!ok) printf("    RLX_VK_DQ_SPLITK=%s\n", splits[s]);
        }
    }
    /* 1: never split, whatever the device */
    setenv("RLX_VK_DQ_SPLITK", "1", 1);
    gemm_case one = {RLX_Q4_K, 70, 1024, Ms, 2, RLX_PRECISION_F32, 0, NULL, "splitk"};
    ok = ok && run_gemm_case(&one);
    unsetenv("RLX_VK_DQ_SPLITK");
    unsetenv("RLX_VK_DQ_F16_M");
    CHECK(ok);
}

/* The decoded-f16 tier in its three forms (plain, + r, SwiGLU) on one x:
 * M rows of x against w (and u) of type dt, every output against float64 over
 * the decoded weights and against the CPU. want_tier: the prefix each node's
 * tier must have on a coopmat device (NULL: must not be the decoded tier). */
static bool run_decoded_forms(rlx_dtype dt, int64_t M, int64_t N, int64_t K, rlx_precision prec, const char *want_tier,
                              const char *want_split) {
    const char *tn = rlx_dtype_name(dt);
    double *wd, *ud;
    size_t wbytes;
    void *w = weights(dt, N, K, &wd, &wbytes), *u = weights(dt, N, K, &ud, &wbytes);
    size_t nx = (size_t)(M * K), ny = (size_t)(M * N);
    float *x = malloc(sizeof(float) * nx), *r = malloc(sizeof(float) * ny);
    test_fill_uniform_f32(x, (int64_t)nx, -1, 1);
    test_fill_uniform_f32(r, (int64_t)ny, -1, 1);
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wdims[2] = {N, K}, yd[2] = {M, N};
    rlx_node xn = rlx_input(g, "x", RLX_F32, 2, xd), rn = rlx_input(g, "r", RLX_F32, 2, yd);
    rlx_node wn = rlx_param(g, "w", dt, 2, wdims), un = rlx_param(g, "u", dt, 2, wdims);
    rlx_output(g, "y0", rlx_dequant_matmul(g, xn, wn));
    rlx_output(g, "y1", rlx_add(g, rlx_dequant_matmul(g, xn, wn), rn));
    rlx_output(g, "y2", rlx_mul(g, rlx_silu(g, rlx_dequant_matmul(g, xn, wn)), rlx_dequant_matmul(g, xn, un)));
    rlx_tensor in[2] = {{.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x, .bytes = sizeof(float) * nx},
                        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {M, N}, .data = r, .bytes = sizeof(float) * ny}};
    rlx_compile_options oc, ov;
    rlx_compile_options_init(&oc);
    oc.backend = RLX_BACKEND_CPU;
    vkp_options(&ov);
    ov.precision = prec;
    oc.exact_quant = ov.exact_quant = 1;
    rlx_exec *ec = NULL, *ev = NULL;
    bool ok = rlx_compile(g, &oc, &ec) == RLX_OK && rlx_compile(g, &ov, &ev) == RLX_OK;
    for (int i = 0; ok && i < 2; i++) {
        rlx_exec *e = i ? ev : ec;
        ok = rlx_exec_set_param(e, "w", dt, w, wbytes) == RLX_OK && rlx_exec_set_param(e, "u", dt, u, wbytes) == RLX_OK &&
             rlx_exec_run(e, in, 2) == RLX_OK;
    }
    if (!ok) printf("    %s M %lld: %s\n", tn, (long long)M, rlx_last_error());
    char *rep = ok ? rlx_exec_report(ev) : NULL;
    int coop_dev = vkp_device_has_coopmat();
    for (int i = 0; ok && i < 3; i++) {   /* the report lists the three nodes in graph order */
        char tier[64];
        vkp_tier_of(rep, "dequant_", i, tier, sizeof tier);
        bool decoded = strncmp(tier, "dequant-f16-coopmat", 19) == 0;
        bool good = tier[0] && (want_tier ? (coop_dev != 1 || (decoded && (!want_split || strstr(tier, want_split)))) : !decoded);
        if (!good) {
            printf("    %s M %lld node %d: tier '%s', expected %s%s\n", tn, (long long)M, i, tier,
                   want_tier ? want_tier : "not the decoded tier", want_split ? " split" : "");
            ok = false;
        }
    }
    double *y0 = malloc(sizeof(double) * ny), *y1 = malloc(sizeof(double) * ny), *y2 = malloc(sizeof(double) * ny);
    for (int64_t m = 0; m < M; m++)
        for (int64_t c = 0; c < N; c++) {
            double a = 0, b = 0;
            for (int64_t k = 0; k < K; k++) a += (double)x[m * K + k] * wd[c * K + k], b += (double)x[m * K + k] * ud[c * K + k];
            y0[m * N + c] = a;
            y1[m * N + c] = a + r[m * N + c];
            y2[m * N + c] = a / (1 + exp(-a)) * b;
        }
    const double *want[3] = {y0, y1, y2};
    float *yv = malloc(sizeof(float) * ny), *yc = malloc(sizeof(float) * ny);
    double *cpu = malloc(sizeof(double) * ny);
    for (int i = 0; ok && i < 3; i++) {
        char name[4] = {'y', (char)('0' + i), 0}, what[96];
        ok = rlx_exec_read_output(ev, name, yv, sizeof(float) * ny) == RLX_OK &&
             rlx_exec_read_output(ec, name, yc, sizeof(float) * ny) == RLX_OK;
        for (size_t j = 0; j < ny; j++) cpu[j] = yc[j];
        snprintf(what, sizeof what, "%s M=%lld N=%lld K=%lld %s", tn, (long long)M, (long long)N, (long long)K, name);
        ok = ok && test_close_f32_f64(what, yc, want[i], (int64_t)ny, TOL_F32) &&
             test_close_f32_f64(what, yv, want[i], (int64_t)ny, TOL_COOP) && test_close_f32_f64(what, yv, cpu, (int64_t)ny, TOL_COOP);
    }
    free(yv), free(yc), free(cpu), free(y0), free(y1), free(y2), free(rep), free(x), free(r), free(w), free(u), free(wd), free(ud);
    rlx_exec_free(ec);
    rlx_exec_free(ev);
    rlx_graph_free(g);
    return ok;
}

/* From 64 rows of x (RLX_VK_DQ_F16_M moves it) block, f16 and, under the fast
 * policy, f32 weights are decoded to f16 once and multiplied by
 * matmul_coopmat, plain, + r and SwiGLU, split over K where forced
 * (RLX_VK_MM_SPLITK); below the threshold, and on devices without the
 * cooperative-matrix tier (lavapipe), the other tiers answer the same graph. */
TEST(vk_dequant_gemm_decoded_f16) {
    VKP_REQUIRE();
    static const struct { rlx_dtype dt; rlx_precision prec; } ts[] = {
        {RLX_Q4_K, RLX_PRECISION_F32}, {RLX_Q8_0, RLX_PRECISION_F32}, {RLX_Q6_K, RLX_PRECISION_F32},
        {RLX_Q5_0, RLX_PRECISION_F32}, {RLX_F16, RLX_PRECISION_F32}, {RLX_F32, RLX_PRECISION_FAST}};
    for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++)
        CHECK_MSG(run_decoded_forms(ts[t].dt, 80, 150, 512, ts[t].prec, "dequant-f16-coopmat", NULL), "%s",
                  rlx_dtype_name(ts[t].dt));
    CHECK(run_decoded_forms(RLX_Q4_K, 40, 70, 256, RLX_PRECISION_F32, NULL, NULL));   /* below 64 rows */
    CHECK(run_decoded_forms(RLX_F32, 80, 70, 256, RLX_PRECISION_F32, NULL, NULL));    /* f32 policy, f32 weights */
    setenv("RLX_VK_DQ_F16_M", "16", 1);
    CHECK(run_decoded_forms(RLX_Q4_K, 40, 70, 256, RLX_PRECISION_F32, "dequant-f16-coopmat", NULL));
    setenv("RLX_VK_MM_SPLITK", "3", 1);   /* K 1024 = 16 steps of 64: splits of 6, 6, 4 */
    CHECK(run_decoded_forms(RLX_Q8_0, 33, 100, 1024, RLX_PRECISION_F32, "dequant-f16-coopmat", "splitk"));
    unsetenv("RLX_VK_MM_SPLITK");
    unsetenv("RLX_VK_DQ_F16_M");
}

/* K = 0: the product is zeros (w is never read), plain and with the fused
 * residual add and SwiGLU, at a prefill and a decode row count; the CPU gives
 * the same (zeros, r, and silu(0) * 0). */
TEST(vk_dequant_gemm_empty_k) {
    VKP_REQUIRE();
    for (int mi = 0; mi < 2; mi++) {
        int64_t M = mi ? 16 : 1, N = 24;
        for (int form = 0; form < 3; form++) {
            rlx_graph *g = rlx_graph_new();
            int64_t xd[2] = {M, 0}, wd[2] = {N, 0}, rd[2] = {M, N};
            rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), r = rlx_input(g, "r", RLX_F32, 2, rd);
            rlx_node w = rlx_param(g, "w", RLX_F16, 2, wd);
            rlx_node y = rlx_dequant_matmul(g, x, w);
            if (form == 1) y = rlx_add(g, y, r);   /* fused into dequant_matmul_add */
            if (form == 2) y = rlx_mul(g, rlx_silu(g, y), rlx_dequant_matmul(g, x, rlx_param(g, "u", RLX_F16, 2, wd)));
            rlx_output(g, "y", y);
            float rv[16 * 24];
            test_fill_uniform_f32(rv, (int)(M * N), -1, 1);
            rlx_tensor in[2] = {{.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, 0}, .data = rv, .bytes = 0},
                                {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {M, N}, .data = rv,
                                 .bytes = sizeof(float) * (size_t)(M * N)}};
            CHECK_MSG(vkp_compare(g, in, 2, 1e-6, true), "M = %lld, form %d", (long long)M, form);
            /* and the CPU side is the exact answer, not just equal to Vulkan's */
            rlx_exec *e;
            float yv[16 * 24];
            CHECK_OK(rlx_compile(g, NULL, &e));
            CHECK_OK(rlx_exec_set_param(e, "w", RLX_F16, NULL, 0));
            if (form == 2) CHECK_OK(rlx_exec_set_param(e, "u", RLX_F16, NULL, 0));
            CHECK_OK(rlx_exec_run(e, in, 2));
            CHECK_OK(rlx_exec_read_output(e, "y", yv, sizeof(float) * (size_t)(M * N)));
            for (int64_t i = 0; i < M * N; i++)
                CHECK_MSG(yv[i] == (form == 1 ? rv[i] : 0.0f), "M = %lld, form %d: y[%lld] = %g", (long long)M, form,
                          (long long)i, (double)yv[i]);
            rlx_exec_free(e);
            rlx_graph_free(g);
        }
    }
}
