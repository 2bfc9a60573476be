/*
 * test_vk_matvec_i8.c — the Vulkan decode matvec with x rounded to 8-bit
 * blocks and packed integer dot products (dequant_matvec_i8.comp, tiers
 * "dequant-i8-<type>") for Q8_0, Q4_K and Q6_K:
 *   - against a float64 reference that rounds x the same way (the CPU fast
 *     path's blocks: 32 for Q8_0, 256 for the K-quants), tightly, so that a
 *     wrong quant, scale or min shows; every epilogue (store, + residual,
 *     SwiGLU), M = 1..8, K off multiples of 256 for Q8_0, N off the tiles,
 *     tuning knobs including a capped grid (several tiles per workgroup);
 *   - against the exact result, within the documented bound;
 *   - the tier chosen: i8 where the device has integer dot products, the
 *     exact run kernel under exact_quant = 1 or RLX_VK_NO_INT_DOT=1, and
 *     when x does not fit in shared memory;
 *   - x holding Inf or NaN: that row's outputs are all non-finite (as the
 *     exact ones are), the other rows unaffected.
 */
#include "vk_parity.h"
#include "ops_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Norm-relative error against the exact result, uniform x (docs/ops.md:
 * about 4e-3 for one product; SwiGLU compounds two and silu's slope). */
#define I8_EXACT_BOUND        8e-3
#define I8_EXACT_BOUND_SWIGLU 2e-2

static bool is_kq(rlx_dtype dt) { return dt != RLX_Q8_0; }

/* x rounded as the CPU fast path and the shader do: per block of xb,
 * d = amax / 127, q = round-half-even(x * (127 / amax)) in f32. xr gets d * q;
 * amb[i] = 1 where x * id is so near a rounding tie that the GPU's 127 / amax
 * (not necessarily correctly rounded) may round it the other way. */
static void round_x(const float *x, int64_t n, int64_t xb, double *xr, double *dblk, bool *amb) {
    for (int64_t b = 0; b < n / xb; b++) {
        float amax = 0;
        for (int64_t i = 0; i < xb; i++) amax = fmaxf(amax, fabsf(x[b * xb + i]));
        float id = amax > 0 ? 127.0f / amax : 0.0f, d = amax / 127.0f;
        for (int64_t i = 0; i < xb; i++) {
            float v = x[b * xb + i] * id;
            double f = v - floor(v);
            xr[b * xb + i] = (double)d * nearbyintf(v);
            dblk[b * xb + i] = d;
            amb[b * xb + i] = fabs(f - 0.5) < 1e-4;
        }
    }
}

/* One product's reference for row m, weight row n: the value over rounded
 * x, its error budget (f32 arithmetic relative to the sum of |terms|, plus
 * a full quant step for each near-tie), and the exact product. */
typedef struct ref_t { double v, tol, exact; } ref_t;

static ref_t ref_dot(const double *wd, const float *x, const double *xr, const double *dblk, const bool *amb,
                     int64_t K, int64_t m, int64_t n) {
    ref_t r = {0, 0, 0};
    double mag = 0, slack = 0;
    for (int64_t k = 0; k < K; k++) {
        double w = wd[n * K + k];
        r.v += w * xr[m * K + k];
        r.exact += w * x[m * K + k];
        mag += fabs(w * xr[m * K + k]);
        if (amb[m * K + k]) slack += fabs(w) * dblk[m * K + k];
    }
    r.tol = 1e-5 * mag + slack + 1e-30;
    return r;
}

typedef struct i8_run { float *y; char *report; bool ok; } i8_run;

/* compile option exact_quant of run_vk (vk_matvec_i8_fallbacks sets it) */
static int exact_quant;

/* Builds y = x·wᵀ (epi 0), r + x·wᵀ (epi 1) or silu(x·wᵀ) * (x·uᵀ) (epi 2)
 * from the unfused ops (fusion makes the fused nodes) and runs it on Vulkan. */
static i8_run run_vk(rlx_dtype dt, int epi, int64_t M, int64_t N, int64_t K, const float *x, const float *r,
                     const void *w, const void *u, size_t wbytes) {
    i8_run out = {calloc((size_t)(M * N), sizeof(float)), NULL, false};
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wdims[2] = {N, K}, rd[2] = {M, N};
    rlx_node xn = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node gate = rlx_dequant_matmul(g, xn, rlx_param(g, "w", dt, 2, wdims));
    rlx_node y = epi == 0 ? gate
               : epi == 1 ? rlx_add(g, rlx_input(g, "r", RLX_F32, 2, rd), gate)
                          : rlx_mul(g, rlx_silu(g, gate), rlx_dequant_matmul(g, xn, rlx_param(g, "u", dt, 2, wdims)));
    rlx_output(g, "y", y);
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = (void *)x, .bytes = sizeof(float) * (size_t)(M * K)},
        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {M, N}, .data = (void *)r, .bytes = sizeof(float) * (size_t)(M * N)},
    };
    rlx_compile_options o;
    vkp_options(&o);
    o.exact_quant = exact_quant;
    rlx_exec *e = NULL;
    rlx_exec_stats st;
    bool all_types = !getenv("RLX_VK_DQ_I8");   /* Q8_0 takes the i8 kernel only when asked */
    if (all_types) setenv("RLX_VK_DQ_I8", "q8_0,q4_K,q5_K,q6_K", 1);
    rlx_status cst = rlx_compile(g, &o, &e);
    if (all_types) unsetenv("RLX_VK_DQ_I8");
    out.ok = cst == RLX_OK && rlx_exec_set_param(e, "w", dt, w, wbytes) == RLX_OK &&
             (epi != 2 || rlx_exec_set_param(e, "u", dt, u, wbytes) == RLX_OK) && rlx_exec_run(e, in, epi == 1 ? 2 : 1) == RLX_OK &&
             rlx_exec_read_output(e, "y", out.y, sizeof(float) * (size_t)(M * N)) == RLX_OK &&
             rlx_exec_get_stats(e, &st) == RLX_OK;
    if (!out.ok) printf("    %s epi %d M %lld N %lld K %lld: %s\n", rlx_dtype_name(dt), epi, (long long)M, (long long)N,
                        (long long)K, rlx_last_error());
    else if (st.host_steps) {
        printf("    host steps\n");
        out.ok = false;
    }
    if (out.ok) out.report = rlx_exec_report(e);
    rlx_exec_free(e);
    rlx_graph_free(g);
    return out;
}

static bool report_has(const i8_run *r, const char *tier) {
    bool ok = r->report && strstr(r->report, tier);
    if (!ok) printf("    expected tier %s in:\n%s", tier, r->report ? r->report : "(no report)");
    return ok;
}

/* The tier prefix a decode matvec of these must take, by exact_quant and the
 * environment (which may set it too). */
static const char *want_tier(void) {
    const char *ex = getenv("RLX_EXACT_QUANT"), *no = getenv("RLX_VK_NO_INT_DOT");
    bool i8 = vkp_devices_int_dot() == 1 && !exact_quant && !(ex && strcmp(ex, "0") && *ex) && !(no && strcmp(no, "0") && *no);
    return vkp_devices_int_dot() < 0 ? "dequant-" : i8 ? "dequant-i8-" : "dequant-run-";
}

/* x [M, K] uniform in [-1, 1] (row `bad_row` gets `bad` at two places when
 * bad_row >= 0), weights from ops_quantized_weights; checks every output
 * against the rounded-x reference (tight) and the exact one (bound). */
static bool i8_case(rlx_dtype dt, int epi, int64_t M, int64_t N, int64_t K, int bad_row, float bad) {
    double *wd, *ud = NULL;
    size_t wbytes, ubytes;
    void *w = ops_quantized_weights(dt, N, K, &wd, &wbytes);
    void *u = epi == 2 ? ops_quantized_weights(dt, N, K, &ud, &ubytes) : NULL;
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *r = malloc(sizeof(float) * (size_t)(M * N));
    test_fill_uniform_f32(x, M * K, -1, 1);
    test_fill_uniform_f32(r, M * N, -2, 2);
    if (bad_row >= 0) {
        x[bad_row * K + K / 3] = bad;
        x[bad_row * K + K - 1] = bad;
    }
    int64_t xb = is_kq(dt) ? 256 : 32;
    double *xr = malloc(sizeof(double) * (size_t)(M * K)), *dblk = malloc(sizeof(double) * (size_t)(M * K));
    bool *amb = malloc((size_t)(M * K));
    round_x(x, M * K, xb, xr, dblk, amb);

    i8_run run = run_vk(dt, epi, M, N, K, x, r, w, u, wbytes);
    bool ok = run.ok && report_has(&run, want_tier());
    bool i8 = run.report && strstr(run.report, "dequant-i8-");
    double *want = malloc(sizeof(double) * (size_t)(M * N)), *exact = malloc(sizeof(double) * (size_t)(M * N));
    for (int64_t m = 0; m < M && ok; m++)
        for (int64_t n = 0; n < N && ok; n++) {
            int64_t i = m * N + n;
            float got = run.y[i];
            if (m == bad_row) {   /* the exact result is non-finite: so must this be */
                if (isfinite(got)) {
                    printf("    %s epi %d: row %lld with %g in x gave finite y[%lld] = %g\n", rlx_dtype_name(dt), epi,
                           (long long)m, bad, (long long)n, got);
                    ok = false;
                }
                want[i] = exact[i] = 0;
                run.y[i] = 0;
                continue;
            }
            ref_t a = ref_dot(wd, x, xr, dblk, amb, K, m, n), b = {0, 0, 0};
            double tol = a.tol, v = a.v;
            if (epi == 1) {
                v += r[i];
                a.exact += r[i];
                tol += 1e-6 * fabs(r[i]);
            } else if (epi == 2) {
                b = ref_dot(ud, x, xr, dblk, amb, K, m, n);
                double sa = a.v / (1 + exp(-a.v)), se = a.exact / (1 + exp(-a.exact));
                v = sa * b.v;
                tol = 1.2 * a.tol * fabs(b.v) + fabs(sa) * b.tol + 1e-6 * fabs(v);
                a.exact = se * b.exact;
            }
            want[i] = v;
            exact[i] = a.exact;
            if (i8 && !(fabs(got - v) <= tol)) {
                printf("    %s epi %d M %lld N %lld K %lld: y[%lld, %lld] = %.9g, rounded-x reference %.9g (tol %.3g)\n",
                       rlx_dtype_name(dt), epi, (long long)M, (long long)N, (long long)K, (long long)m, (long long)n, got, v, tol);
                ok = false;
            }
        }
    if (ok) {
        char what[96];
        snprintf(what, sizeof what, "%s epi %d M=%lld N=%lld K=%lld vs exact", rlx_dtype_name(dt), epi, (long long)M,
                 (long long)N, (long long)K);
        ok = test_close_f32_f64(what, run.y, exact, M * N, !i8 ? 2e-5 : epi == 2 ? I8_EXACT_BOUND_SWIGLU : I8_EXACT_BOUND);
        if (getenv("RLX_TEST_I8_VERBOSE"))
            printf("    %s: rel error %.3g\n", what, test_rel_error_f32_f64(run.y, exact, M * N));
    }
    free(run.y);
    free(run.report);
    free(w);
    free(u);
    free(wd);
    free(ud);
    free(x);
    free(r);
    free(xr);
    free(dblk);
    free(amb);
    free(want);
    free(exact);
    return ok;
}

static const rlx_dtype types[] = {RLX_Q8_0, RLX_Q4_K, RLX_Q5_K, RLX_Q6_K};
enum { N_TYPES = sizeof types / sizeof types[0] };

/* Every type and epilogue, M = 1, 2 and 8, odd N, K = 9 blocks of 256 (Q8_0:
 * 67 blocks of 32, not a multiple of 256, and odd rows: 2-byte alignment). */
TEST(vk_matvec_i8_types_and_epilogues) {
    VKP_REQUIRE();
    static const int64_t Ms[] = {1, 2, 8};
    for (size_t t = 0; t < N_TYPES; t++)
        for (int epi = 0; epi < 3; epi++)
            for (size_t i = 0; i < 3; i++) {
                int64_t K = is_kq(types[t]) ? 256 * 9 : 32 * 67, N = epi == 2 ? 13 : 37;
                CHECK(i8_case(types[t], epi, Ms[i], N, K, -1, 0));
            }
}

/* Short and long rows, even block counts (4-byte-aligned rows: the funnel
 * loads), a single row, more rows than one tile. */
TEST(vk_matvec_i8_shapes) {
    VKP_REQUIRE();
    CHECK(i8_case(RLX_Q8_0, 0, 1, 1, 32, -1, 0));
    CHECK(i8_case(RLX_Q8_0, 0, 3, 300, 32 * 128, -1, 0));
    CHECK(i8_case(RLX_Q8_0, 1, 2, 77, 32 * 6, -1, 0));
    CHECK(i8_case(RLX_Q4_K, 0, 1, 1, 256, -1, 0));
    CHECK(i8_case(RLX_Q4_K, 0, 2, 515, 256 * 16, -1, 0));
    CHECK(i8_case(RLX_Q6_K, 0, 1, 2, 256, -1, 0));
    CHECK(i8_case(RLX_Q6_K, 0, 3, 261, 256 * 14, -1, 0));
    CHECK(i8_case(RLX_Q6_K, 2, 1, 64, 512, -1, 0));
    CHECK(i8_case(RLX_Q5_K, 0, 1, 37, 256, -1, 0));
    CHECK(i8_case(RLX_Q5_K, 1, 3, 261, 256 * 14, -1, 0));
}

/* Tuning knobs: threads per group (one subgroup .. 256), rows per group,
 * units per step, a capped grid, where each workgroup walks several tiles
 * with x rounded once, and the x-rounding offset per workgroup (XROT; Q8_0
 * is off by default, so these rows are its only rotated runs). */
TEST(vk_matvec_i8_knobs) {
    VKP_REQUIRE();
    static const char *knobs[][5] = {{"8", "1", "1", "", "32"}, {"32", "4", "2", "3", "0"}, {"256", "2", "4", "1", "64"},
                                     {"", "", "3", "5", ""}};
    bool ok = true;
    for (size_t i = 0; i < sizeof knobs / sizeof knobs[0] && ok; i++) {
        setenv("RLX_VK_DQ_T", knobs[i][0], 1);
        setenv("RLX_VK_DQ_NR", knobs[i][1], 1);
        setenv("RLX_VK_DQ_U", knobs[i][2], 1);
        setenv("RLX_VK_DQ_I8_GRID", knobs[i][3], 1);
        setenv("RLX_VK_DQ_XROT", knobs[i][4], 1);
        for (size_t t = 0; t < N_TYPES && ok; t++) {
            int64_t K = is_kq(types[t]) ? 256 * 5 : 32 * 70;
            ok = i8_case(types[t], 0, 2, 41, K, -1, 0) && i8_case(types[t], 2, 1, 23, K, -1, 0) &&
                 i8_case(types[t], 1, 3, 9, K, -1, 0);
        }
    }
    unsetenv("RLX_VK_DQ_T");
    unsetenv("RLX_VK_DQ_NR");
    unsetenv("RLX_VK_DQ_U");
    unsetenv("RLX_VK_DQ_I8_GRID");
    unsetenv("RLX_VK_DQ_XROT");
    CHECK(ok);
}

/* SwiGLU groups of one or two gate and as many up rows (RLX_VK_DQ_SWIGLU_NR;
 * by default two for the K-quants at K <= 2048): odd N (the last group's
 * second row clamped and not stored), one and three x rows. */
TEST(vk_matvec_i8_swiglu_rows_per_group) {
    VKP_REQUIRE();
    bool ok = true;
    for (int nr = 1; nr <= 2 && ok; nr++) {
        setenv("RLX_VK_DQ_SWIGLU_NR", nr == 1 ? "1" : "2", 1);
        for (size_t t = 0; t < N_TYPES && ok; t++) {
            int64_t K = is_kq(types[t]) ? 256 * 3 : 32 * 40;
            ok = i8_case(types[t], 2, 1, 45, K, -1, 0) && i8_case(types[t], 2, 3, 17, K, -1, 0);
        }
    }
    unsetenv("RLX_VK_DQ_SWIGLU_NR");
    CHECK(ok);
}

/* Units taken in pairs (RLX_VK_DQ_PAIR=1: one header decode, Q6_K's shared
 * scales, or a whole Q8_0 block a lane): one and three x rows, + res and
 * SwiGLU, rows of 1 to 14 K-quant blocks (fewer pairs than lanes; Q6_K rows
 * of 210 bytes only 2-byte aligned), two pairs a step (RLX_VK_DQ_U=2). Q8_0
 * products here fold no norm, so the test's i8 run takes them as it does
 * with RLX_VK_DQ_I8 (i8_case). */
TEST(vk_matvec_i8_unit_pairs) {
    VKP_REQUIRE();
    setenv("RLX_VK_DQ_PAIR", "1", 1);
    static const rlx_dtype kq[4] = {RLX_Q4_K, RLX_Q5_K, RLX_Q6_K, RLX_Q8_0};
    bool ok = true;
    for (int u = 1; u <= 2 && ok; u++) {
        setenv("RLX_VK_DQ_U", u == 1 ? "1" : "2", 1);
        for (int t = 0; t < 4 && ok; t++)
            ok = i8_case(kq[t], 0, 1, 37, 256, -1, 0) && i8_case(kq[t], 0, 3, 130, 256 * 14, -1, 0) &&
                 i8_case(kq[t], 1, 2, 41, 256 * 5, -1, 0) && i8_case(kq[t], 2, 1, 23, 256 * 3, -1, 0);
    }
    unsetenv("RLX_VK_DQ_U");
    unsetenv("RLX_VK_DQ_PAIR");
    CHECK(ok);
}

/* exact_quant = 1 and RLX_VK_NO_INT_DOT=1 take the exact run kernel
 * (i8_case then holds the result to the exact tolerance); so does an x too
 * large for shared memory. */
TEST(vk_matvec_i8_fallbacks) {
    VKP_REQUIRE();
    exact_quant = 1;
    bool ok = i8_case(RLX_Q4_K, 0, 1, 19, 512, -1, 0) && i8_case(RLX_Q8_0, 2, 2, 11, 96, -1, 0);
    exact_quant = 0;
    CHECK(ok);
    setenv("RLX_VK_NO_INT_DOT", "1", 1);   /* read when the device opens: no exec may hold it now */
    ok = i8_case(RLX_Q6_K, 1, 2, 19, 512, -1, 0);
    rlx_device_info d;   /* device 1: the first Vulkan device */
    if (ok && rlx_device_get_info(1, &d) == RLX_OK && d.integer_dot && d.integer_dot_used) {
        printf("    RLX_VK_NO_INT_DOT=1: rlx_device_get_info still says %s uses integer dot products\n", d.name);
        ok = false;
    }
    unsetenv("RLX_VK_NO_INT_DOT");
    CHECK(ok);
    /* 2^20 Q8_0 weights per row: x needs > 1 MiB of shared memory, more than any device has */
    double *wd;
    size_t wbytes;
    int64_t K = (int64_t)1 << 20;
    void *w = ops_quantized_weights(RLX_Q8_0, 1, K, &wd, &wbytes);
    float *x = malloc(sizeof(float) * (size_t)K);
    test_fill_uniform_f32(x, K, -1, 1);
    i8_run run = run_vk(RLX_Q8_0, 0, 1, 1, K, x, NULL, w, NULL, wbytes);
    ok = run.ok && report_has(&run, "dequant-run-q8_0");
    free(run.y);
    free(run.report);
    free(w);
    free(wd);
    free(x);
    CHECK(ok);
}

/* Inf, -Inf or NaN in one x row: all of that row's outputs non-finite, the
 * other rows as usual (i8_case checks both), for every type and epilogue. */
TEST(vk_matvec_i8_nonfinite_x) {
    VKP_REQUIRE();
    const float bad[3] = {INFINITY, -INFINITY, NAN};
    for (size_t t = 0; t < N_TYPES; t++)
        for (int epi = 0; epi < 3; epi++) {
            int64_t K = is_kq(types[t]) ? 512 : 96;
            CHECK(i8_case(types[t], epi, 3, 17, K, (int)(t + epi) % 3, bad[(t + epi) % 3]));
            CHECK(i8_case(types[t], epi, 1, 5, K, 0, bad[epi]));
        }
}

/* The CPU fast path (default, 8-bit x) and the i8 kernel round x alike, so
 * they agree far closer (1e-4, a rounding tie's worth) than either does with
 * the exact result (~4e-3). */
TEST(vk_matvec_i8_equals_cpu_fast_path) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    for (size_t t = 0; t < N_TYPES; t++)
        for (int64_t M = 1; M <= 3; M += 2) {
            rlx_dtype dt = types[t];
            int64_t N = 45, K = is_kq(dt) ? 256 * 7 : 32 * 45;
            double *wd;
            size_t wbytes;
            void *w = ops_quantized_weights(dt, N, K, &wd, &wbytes);
            float *x = malloc(sizeof(float) * (size_t)(M * K)), *yc = malloc(sizeof(float) * (size_t)(M * N));
            test_fill_uniform_f32(x, M * K, -1, 1);
            rlx_graph *g = ops_dequant_graph(dt, M, N, K);
            rlx_compile_options o;
            rlx_compile_options_init(&o);
            o.backend = RLX_BACKEND_CPU;
            rlx_exec *e = NULL;
            rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x,
                             .bytes = sizeof(float) * (size_t)(M * K)};
            /* the CPU's 8-bit path, whatever an earlier test left in the environment */
            bool ok = ops_run_dequant(g, &o, &e, dt, w, wbytes, &in, yc, sizeof(float) * (size_t)(M * N), false);
            rlx_exec_free(e);
            rlx_graph_free(g);
            i8_run run = run_vk(dt, 0, M, N, K, x, NULL, w, NULL, wbytes);
            double *cpu = malloc(sizeof(double) * (size_t)(M * N)), *exact = calloc((size_t)(M * N), sizeof(double));
            for (int64_t i = 0; i < M * N; i++) cpu[i] = yc[i];
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++)
                    for (int64_t k = 0; k < K; k++) exact[m * N + n] += (double)x[m * K + k] * wd[n * K + k];
            char what[80];
            snprintf(what, sizeof what, "%s M=%lld vulkan i8 vs cpu", rlx_dtype_name(dt), (long long)M);
            ok = ok && run.ok && report_has(&run, "dequant-i8-") && test_close_f32_f64(what, run.y, cpu, M * N, 1e-4);
            /* and the CPU really took its 8-bit path (else this compares nothing) */
            double ce = test_rel_error_f32_f64(yc, exact, M * N);
            if (getenv("RLX_TEST_I8_VERBOSE"))
                printf("    %s: %.3g (cpu vs exact %.3g)\n", what, test_rel_error_f32_f64(run.y, cpu, M * N), ce);
            if (ok && ce < 1e-4) printf("    note: the CPU took its exact path (%.3g from exact); nothing compared\n", ce);
            free(run.y);
            free(run.report);
            free(cpu);
            free(exact);
            free(w);
            free(wd);
            free(x);
            free(yc);
            CHECK(ok);
        }
}
