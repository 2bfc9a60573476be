/*
 * test_vk_reduce.c — CPU <-> Vulkan parity of the row-wise ops: reductions
 * over every kind of axes mask (inner, outer, interleaved, all, keepdim),
 * argmax/argmin (ties, NaN), softmax/log_softmax on any axis, layer/rms norm
 * with and without beta and their fused residual forms, and cumsum on any
 * axis, for f32 and the integer dtypes, on shapes that take each shader mode
 * (workgroup per row, invocation per row) and span many workgroups; and the
 * split (two-pass) reductions of few outputs over long ranges, element by
 * element against the CPU, run twice for the same bits.
 * require_gpu is set throughout: a host step for any of these is a failure.
 */
#include "ops_common.h"
#include "vk_parity.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Sums are compensated and pairwise on the GPU and in double on the CPU:
 * a few ulp apart, well inside 1e-5. */
#define TOL 1e-5

static void *rand_data(rlx_dtype dt, int64_t n, double lo, double hi)
{
    void *x = ops_alloc((size_t)(n ? n : 1) * rlx_dtype_size(dt));
    bool f = dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16 || dt == RLX_F64;
    for (int64_t i = 0; i < n; i++)
        ref_store(x, dt, i, f ? test_rand_uniform(lo, hi) : (double)test_rand_int((int64_t)lo, (int64_t)hi));
    return x;
}

static ref_shape shp(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    int64_t d[4] = {d0, d1, d2, d3};
    return ref_shape_make(rank, d);
}

typedef rlx_node (*red_fn)(rlx_graph *, rlx_node, uint32_t, int);
static const struct { const char *name; red_fn fn; } reds[] = {
    {"sum", rlx_reduce_sum}, {"mean", rlx_reduce_mean}, {"max", rlx_reduce_max},
    {"min", rlx_reduce_min}, {"prod", rlx_reduce_prod},
};

/* Every reduction of x over mask in one graph (mean for floats only). */
static bool reduce_case(rlx_dtype dt, ref_shape s, uint32_t mask, int keepdim, void *x)
{
    rlx_graph *g = ops_graph();
    rlx_node nx = ops_input(g, "x", dt, s);
    bool f = dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16;
    for (int k = 0; k < 5; k++) {
        if (!f && reds[k].fn == rlx_reduce_mean) continue;
        rlx_output(g, reds[k].name, reds[k].fn(g, nx, mask, keepdim));
    }
    rlx_tensor in = ops_tensor("x", dt, s, x);
    if (rlx_graph_status(g) != RLX_OK) {
        printf("    graph: %s\n", rlx_last_error());
        return false;
    }
    return vkp_compare(g, &in, 1, TOL, true);
}

TEST(vk_reduce_f32) {
    VKP_REQUIRE();
    static const struct { int rank; int64_t d[4]; uint32_t mask; } cases[] = {
        {2, {3, 100003}, 2},          /* long inner rows: workgroup per output */
        {2, {100003, 3}, 1},          /* leading axis, 3 outputs: workgroup per output, strided */
        {2, {64, 5000}, 1},           /* leading axis, many outputs: invocation per output */
        {2, {20000, 5}, 2},           /* short rows: invocation per output */
        {4, {5, 7, 9, 11}, 5},        /* interleaved kept/reduced groups */
        {4, {5, 7, 9, 11}, 10},
        {4, {5, 1, 9, 11}, 0},        /* all axes */
        {3, {1, 1, 1}, 2},            /* tiny */
        {1, {7}, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_shape s = ref_shape_make(cases[k].rank, cases[k].d);
        void *x = rand_data(RLX_F32, ref_numel(&s), 0.8, 1.25);   /* products stay in range */
        for (int keep = 0; keep < 2; keep++)
            CHECK_MSG(reduce_case(RLX_F32, s, cases[k].mask, keep, x), "case %zu keepdim %d", k, keep);
    }
    /* random shapes and masks, values of both signs (sums with cancellation)
     * and magnitudes near 1 (products stay clear of f32 subnormals, which
     * GPUs flush) */
    for (int k = 0; k < 6; k++) {
        int rank = (int)test_rand_int(1, 4);
        ref_shape s = ops_rand_shape(rank, 3000);
        uint32_t mask = (uint32_t)test_rand_int(0, (1 << rank) - 1);
        float *x = rand_data(RLX_F32, ref_numel(&s), 0.9, 1.1);
        for (int64_t i = 0; i < ref_numel(&s); i++) if (test_rand_int(0, 1)) x[i] = -x[i];
        CHECK_MSG(reduce_case(RLX_F32, s, mask, k & 1, x), "random %d", k);
    }
    /* NaN and infinities: max/min propagate NaN, sums give NaN/inf */
    {
        ref_shape s = shp(2, 6, 300, 0, 0);
        float *x = rand_data(RLX_F32, 1800, -1, 1);
        x[5] = NAN;                 /* row 0 */
        x[300 + 299] = INFINITY;    /* row 1 */
        x[600 + 7] = -INFINITY;     /* row 2 */
        x[900 + 250] = NAN;         /* row 3, column 250 */
        for (int keep = 0; keep < 2; keep++) {
            CHECK(reduce_case(RLX_F32, s, 2, keep, x));
            CHECK(reduce_case(RLX_F32, s, 1, keep, x));
        }
    }
    ops_free_all();
}

TEST(vk_reduce_ints) {
    VKP_REQUIRE();
    const rlx_dtype dts[] = {RLX_I32, RLX_I64, RLX_U8, RLX_I8};
    for (int t = 0; t < 4; t++) {
        rlx_dtype dt = dts[t];
        double lo = dt == RLX_U8 ? 0 : -100, hi = 100;
        const ref_shape shapes[3] = {shp(2, 3, 70001, 0, 0), shp(3, 33, 5, 129, 0), shp(2, 50, 5000, 0, 0)};
        const uint32_t masks[3] = {2, 5, 1};
        for (int k = 0; k < 3; k++) {
            void *x = rand_data(dt, ref_numel(&shapes[k]), lo, hi);
            CHECK_MSG(reduce_case(dt, shapes[k], masks[k], k & 1, x), "%s case %d", rlx_dtype_name(dt), k);
        }
    }
    ops_free_all();
}

TEST(vk_argmax_argmin) {
    VKP_REQUIRE();
    static const struct { int rank; int64_t d[4]; int axis; } cases[] = {
        {2, {3, 100003}, 1}, {2, {100003, 3}, 0}, {3, {40, 300, 7}, 1}, {2, {5000, 20}, 1},
        {4, {3, 5, 7, 9}, -1}, {4, {3, 5, 7, 9}, 0}, {1, {1}, 0}, {2, {1, 6}, 0},
    };
    const rlx_dtype dts[] = {RLX_F32, RLX_I32, RLX_F32, RLX_I64, RLX_F32, RLX_U8, RLX_F32, RLX_I8};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_shape s = ref_shape_make(cases[k].rank, cases[k].d);
        rlx_dtype dt = dts[k];
        int64_t n = ref_numel(&s);
        /* few distinct values: many ties, so "first index" matters */
        void *x = rand_data(dt, n, 0, 20);
        if (dt == RLX_F32 && k == 2)
            for (int64_t i = 0; i < n; i += 997) ((float *)x)[i] = NAN;
        rlx_graph *g = ops_graph();
        rlx_node nx = ops_input(g, "x", dt, s);
        rlx_output(g, "argmax", rlx_argmax(g, nx, cases[k].axis, 0));
        rlx_output(g, "argmin", rlx_argmin(g, nx, cases[k].axis, 1));
        rlx_tensor in = ops_tensor("x", dt, s, x);
        CHECK_MSG(vkp_compare(g, &in, 1, 0, true), "case %zu (%s)", k, rlx_dtype_name(dt));
    }
    ops_free_all();
}

TEST(vk_softmax) {
    VKP_REQUIRE();
    static const struct { int rank; int64_t d[4]; int axis; } cases[] = {
        {2, {7, 1000}, 1},       /* workgroup per row */
        {2, {1, 100003}, 1},     /* one long row */
        {3, {3, 500, 40}, 1},    /* inner stride, few rows: workgroup per row */
        {3, {200, 30, 50}, 1},   /* inner stride, many rows: invocation per row */
        {2, {100000, 3}, 1},     /* short rows */
        {4, {2, 3, 4, 5}, 0}, {1, {1}, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_shape s = ref_shape_make(cases[k].rank, cases[k].d);
        float *x = rand_data(RLX_F32, ref_numel(&s), -20, 20);
        rlx_graph *g = ops_graph();
        rlx_node nx = ops_input(g, "x", RLX_F32, s);
        rlx_output(g, "softmax", rlx_softmax(g, nx, cases[k].axis));
        rlx_output(g, "log_softmax", rlx_log_softmax(g, nx, cases[k].axis));
        rlx_tensor in = ops_tensor("x", RLX_F32, s, x);
        CHECK_MSG(vkp_compare(g, &in, 1, TOL, true), "case %zu", k);
    }
    /* rows with NaN, +inf, all -inf, and large values */
    {
        ref_shape s = shp(2, 5, 300, 0, 0);
        float *x = rand_data(RLX_F32, 1500, -5, 5);
        x[17] = NAN;
        x[300 + 3] = INFINITY;
        for (int j = 0; j < 300; j++) x[600 + j] = -INFINITY;
        for (int j = 0; j < 300; j++) x[900 + j] += 1e4f;
        x[1200 + 9] = -INFINITY;
        for (int axis = 0; axis < 2; axis++) {
            rlx_graph *g = ops_graph();
            rlx_node nx = ops_input(g, "x", RLX_F32, s);
            rlx_output(g, "softmax", rlx_softmax(g, nx, axis));
            rlx_output(g, "log_softmax", rlx_log_softmax(g, nx, axis));
            rlx_tensor in = ops_tensor("x", RLX_F32, s, x);
            CHECK_MSG(vkp_compare(g, &in, 1, TOL, true), "specials axis %d", axis);
        }
    }
    ops_free_all();
}

/* layer/rms norm, beta or not, fused with a residual add or not (the
 * optimizer turns norm(x + r) into add_*_norm on both backends). */
TEST(vk_norm) {
    VKP_REQUIRE();
    static const struct { int rank; int64_t d[4]; double offset; } cases[] = {
        {2, {64, 768}, 0}, {3, {3, 5, 7}, 0}, {2, {2, 10000}, 0}, {2, {1000, 1}, 0}, {2, {33, 300}, 100},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_shape s = ref_shape_make(cases[k].rank, cases[k].d);
        int64_t d = cases[k].d[cases[k].rank - 1], n = ref_numel(&s);
        ref_shape sd = shp(1, d, 0, 0, 0);
        for (int v = 0; v < 8; v++) {
            bool layer = v & 1, beta = v & 2, fused = v & 4;
            rlx_graph *g = ops_graph();
            rlx_tensor in[3];
            int n_in = 0;
            float *x = rand_data(RLX_F32, n, cases[k].offset - 1, cases[k].offset + 2);
            rlx_node nx = ops_input(g, "x", RLX_F32, s);
            in[n_in++] = ops_tensor("x", RLX_F32, s, x);
            if (fused) {
                rlx_node nr = ops_input(g, "r", RLX_F32, s);
                in[n_in++] = ops_tensor("r", RLX_F32, s, rand_data(RLX_F32, n, -1, 1));
                nx = rlx_add(g, nx, nr);
            }
            rlx_node gm = ops_input(g, "gamma", RLX_F32, sd);
            in[n_in++] = ops_tensor("gamma", RLX_F32, sd, rand_data(RLX_F32, d, 0.5, 1.5));
            int64_t dd = d;
            rlx_node bt = beta ? rlx_param(g, "beta", RLX_F32, 1, &dd) : RLX_NO_NODE;
            float eps = v & 1 ? 1e-5f : 1e-6f;
            rlx_output(g, "y", layer ? rlx_layer_norm(g, nx, gm, bt, eps) : rlx_rms_norm(g, nx, gm, bt, eps));
            CHECK_MSG(vkp_compare(g, in, n_in, TOL, true), "case %zu variant %d (%s%s%s)", k, v,
                      layer ? "layer" : "rms", beta ? " beta" : "", fused ? " fused" : "");
        }
    }
    ops_free_all();
}

TEST(vk_cumsum) {
    VKP_REQUIRE();
    static const struct { int rank; int64_t d[4]; int axis; } cases[] = {
        {2, {3, 100003}, 1},    /* long lines: chunked workgroup scan */
        {2, {1000, 50}, 0},     /* inner stride, few lines: workgroup scan */
        {2, {40, 2000}, 0},     /* many lines: invocation per line */
        {3, {7, 13, 5}, 1}, {3, {7, 13, 5}, 2}, {1, {1}, 0}, {1, {300}, 0},
    };
    const rlx_dtype dts[] = {RLX_F32, RLX_I32, RLX_I64, RLX_U8, RLX_I8};
    for (int t = 0; t < 5; t++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            if (t > 0 && k == 1) continue;   /* keep the integer runs short */
            rlx_dtype dt = dts[t];
            ref_shape s = ref_shape_make(cases[k].rank, cases[k].d);
            void *x = rand_data(dt, ref_numel(&s), dt == RLX_U8 ? 0 : -100, 100);
            rlx_graph *g = ops_graph();
            rlx_node nx = ops_input(g, "x", dt, s);
            rlx_output(g, "y", rlx_cumsum(g, nx, cases[k].axis));
            rlx_tensor in = ops_tensor("x", dt, s, x);
            CHECK_MSG(vkp_compare(g, &in, 1, TOL, true), "%s case %zu", rlx_dtype_name(dt), k);
        }
    ops_free_all();
}

/* ---- split reductions (reduce.c, "reduce-split") ----
 *
 * Few outputs over long reduced ranges split the range over workgroups into
 * f32 partials that a second pass folds in a fixed order. Each case runs
 * sum, mean, max and min in one graph and checks that the report names the
 * split tier (or, with the split turned off, does not), that a second run
 * gives the same bits, and, element by element against the CPU (which
 * accumulates in double), that sums and means are within SPLIT_ROUNDOFF x
 * 2^-24 (f32 roundoff) of the sum of |x| (which bounds the rounding of any
 * summation order) and max/min are equal. Software devices do not split by
 * themselves (vk_tuning.red_split_wgs), so these tests set the target a GPU
 * of unreported size gets (8 x 128 workgroups) through RLX_VK_RED_SPLIT_WGS. */
#define SPLIT_ROUNDOFF 8.0

static const char *const split_outs[4] = {"sum", "mean", "max", "min"};

static rlx_graph *split_graph(rlx_dtype dt, ref_shape s, uint32_t mask, int keepdim)
{
    rlx_graph *g = ops_graph();
    rlx_node nx = ops_input(g, "x", dt, s);
    rlx_output(g, "sum", rlx_reduce_sum(g, nx, mask, keepdim));
    rlx_output(g, "mean", rlx_reduce_mean(g, nx, mask, keepdim));
    rlx_output(g, "max", rlx_reduce_max(g, nx, mask, keepdim));
    rlx_output(g, "min", rlx_reduce_min(g, nx, mask, keepdim));
    return g;
}

/* The sum of |x| over mask (f32 x: |x| is exact), for the error bound. */
static double *abs_sums(const void *x, rlx_dtype dt, ref_shape s, uint32_t mask, int64_t n_out)
{
    int64_t n = ref_numel(&s);
    float *ax = ops_alloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) ax[i] = fabsf((float)ref_load(x, dt, i));
    rlx_graph *g = ops_graph();
    rlx_output(g, "m", rlx_reduce_sum(g, ops_input(g, "x", RLX_F32, s), mask, 0));
    rlx_tensor in = ops_tensor("x", RLX_F32, s, ax);
    rlx_exec *e = vkp_compile(g, false);
    float *m = ops_alloc((size_t)n_out * sizeof(float));
    double *md = ops_f64(n_out);
    bool ok = e && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_read_output(e, "m", m, (size_t)n_out * 4) == RLX_OK;
    rlx_exec_free(e);
    for (int64_t o = 0; ok && o < n_out; o++) md[o] = m[o];
    return ok ? md : NULL;
}

/* Vulkan output k against the CPU's (both dt); *worst: the largest sum or
 * mean error in units of 2^-24 of its sum of |x|. */
static bool split_check_output(int k, rlx_dtype dt, const void *got, const void *cpu, const double *mag,
                               int64_t n_out, int64_t count, double *worst)
{
    /* f16/bf16 outputs: both sides round once more, to the dtype */
    double out_eps = dt == RLX_F16 ? 0x1p-10 : dt == RLX_BF16 ? 0x1p-7 : 0;
    for (int64_t o = 0; o < n_out; o++) {
        double v = ref_load(got, dt, o), r = ref_load(cpu, dt, o);
        if (isnan(r) || isnan(v) || isinf(r) || isinf(v) || k >= 2) {
            /* non-finite results, and max/min (an element of x): equal */
            if (isnan(r) != isnan(v) || (!isnan(r) && v != r)) {
                printf("    %s[%lld]: vulkan %.9g, cpu %.9g\n", split_outs[k], (long long)o, v, r);
                return false;
            }
            continue;
        }
        double err = fabs(v - r), m = k == 1 ? mag[o] / (double)count : mag[o];
        double units = m > 0 ? err / (0x1p-24 * m) : (err > 0 ? INFINITY : 0);
        if (out_eps == 0 && units > *worst) *worst = units;
        if (err > SPLIT_ROUNDOFF * 0x1p-24 * m + out_eps * fabs(r)) {
            printf("    %s[%lld]: vulkan %.9g, cpu %.9g (%.2f x 2^-24 of sum |x|)\n", split_outs[k], (long long)o, v,
                   r, units);
            return false;
        }
    }
    return true;
}

/* x of dt reduced over mask (keepdim or not); want_split: whether the report
 * must name the split tier (true) or must not (false). */
static bool split_case(rlx_dtype dt, ref_shape s, uint32_t mask, int keepdim, const void *x, bool want_split)
{
    rlx_graph *g = split_graph(dt, s, mask, keepdim);
    if (rlx_graph_status(g) != RLX_OK) {
        printf("    graph: %s\n", rlx_last_error());
        return false;
    }
    ref_shape so = ref_reduce_shape(s, mask, 0);
    int64_t n = ref_numel(&s), n_out = ref_numel(&so);
    size_t bytes = (size_t)n_out * rlx_dtype_size(dt);
    rlx_tensor in = ops_tensor("x", dt, s, (void *)x);
    rlx_exec *ev = vkp_compile(g, true), *ec = vkp_compile(g, false);
    bool ok = ev && ec;
    if (ok) {
        char *rep = rlx_exec_report(ev);
        ok = rep && (strstr(rep, "reduce-split") != NULL) == want_split;
        if (!ok) printf("    expected %s split tier in:\n%s", want_split ? "the" : "no", rep ? rep : "(no report)");
        free(rep);
    }
    /* the CPU, then two Vulkan runs, the second into poisoned buffers */
    unsigned char *res[3][4];
    for (int run = 0; run < 3 && ok; run++) {
        ok = rlx_exec_run(run ? ev : ec, &in, 1) == RLX_OK;
        for (int k = 0; k < 4 && ok; k++) {
            res[run][k] = ops_alloc(bytes);
            memset(res[run][k], 0xff, bytes);
            ok = rlx_exec_read_output(run ? ev : ec, split_outs[k], res[run][k], bytes) == RLX_OK;
        }
        if (!ok) printf("    run: %s\n", rlx_last_error());
    }
    const double *mag = ok ? abs_sums(x, dt, s, mask, n_out) : NULL;
    ok = ok && mag;
    double worst = 0;
    for (int k = 0; k < 4 && ok; k++) {
        if (memcmp(res[1][k], res[2][k], bytes) != 0) {
            printf("    %s: two runs differ\n", split_outs[k]);
            ok = false;
        }
        ok = ok && split_check_output(k, dt, res[1][k], res[0][k], mag, n_out, n / n_out, &worst);
    }
    if (getenv("RLX_TEST_VERBOSE")) printf("    worst sum/mean error %.2f x 2^-24 of sum |x|\n", worst);
    rlx_exec_free(ev);
    rlx_exec_free(ec);
    return ok;
}

#define SPLIT_TARGET "1024"

TEST(vk_reduce_split) {
    VKP_REQUIRE();
    char *saved = test_env_swap("RLX_VK_RED_SPLIT_WGS", SPLIT_TARGET);
    static const struct { int rank; int64_t d[4]; uint32_t mask; int keep; double lo; } cases[] = {
        {2, {8192, 768}, 1, 0, -1},      /* bias gradient: leading axis, 12 tiles of 64 columns */
        {2, {1000, 37}, 1, 1, 0},        /* columns not a multiple of the tile */
        {2, {4097, 5}, 1, 1, -1},        /* 8-column tiles, rows not a multiple of the chunk */
        {3, {16, 512, 96}, 3, 0, 0},     /* axes {0, 1}: one reduced group */
        {3, {5, 4000, 33}, 2, 1, 0},     /* kept, reduced, kept: tiles span kept groups */
        {3, {64, 7, 300}, 5, 0, -1},     /* reduced, kept, reduced: two reduced groups */
        {2, {3, 200003}, 2, 0, -1},      /* long inner rows: lanes along the reduced group */
        {2, {1500, 1001}, 0, 0, -1},     /* everything, 1.5M elements */
        {1, {2000003}, 1, 1, 0},         /* one 2M sum (a gradient norm's) */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_shape s = ref_shape_make(cases[k].rank, cases[k].d);
        void *x = rand_data(RLX_F32, ref_numel(&s), cases[k].lo, 1);
        CHECK_MSG(split_case(RLX_F32, s, cases[k].mask, cases[k].keep, x, true), "case %zu", k);
    }
    /* f16 and bf16 storage, f32 partials */
    {
        ref_shape s = shp(2, 4097, 77, 0, 0);
        void *x = rand_data(RLX_F16, ref_numel(&s), 0, 1);
        CHECK(split_case(RLX_F16, s, 1, 0, x, true));
        ref_shape s2 = shp(1, (1 << 20) + 3, 0, 0, 0);
        void *x2 = rand_data(RLX_BF16, ref_numel(&s2), -1, 1);
        CHECK(split_case(RLX_BF16, s2, 0, 0, x2, true));
    }
    /* NaN and infinities in one column each: sums and max/min propagate them */
    {
        ref_shape s = shp(2, 4097, 5, 0, 0);
        float *x = rand_data(RLX_F32, ref_numel(&s), -1, 1);
        x[100 * 5 + 1] = NAN;
        x[3000 * 5 + 3] = INFINITY;
        x[17 * 5 + 4] = -INFINITY;
        CHECK(split_case(RLX_F32, s, 1, 0, x, true));
    }
    test_env_restore("RLX_VK_RED_SPLIT_WGS", saved);
    ops_free_all();
}

/* The split target from RLX_VK_RED_SPLIT_WGS: a few splits (chunks that are
 * not multiples of a workgroup's lanes), as many as the lanes allow (a
 * second pass of a workgroup per output), and 0: the unsplit tiers. */
TEST(vk_reduce_split_target) {
    VKP_REQUIRE();
    static const char *const targets[3] = {"12", "1000000", "0"};
    ref_shape s1 = shp(2, 2003, 300, 0, 0), s2 = shp(1, 200003, 0, 0, 0);
    void *x1 = rand_data(RLX_F32, ref_numel(&s1), -1, 1), *x2 = rand_data(RLX_F32, ref_numel(&s2), -1, 1);
    for (int t = 0; t < 3; t++) {
        char *saved = test_env_swap("RLX_VK_RED_SPLIT_WGS", targets[t]);
        CHECK_MSG(split_case(RLX_F32, s1, 1, 0, x1, t < 2), "target %s, leading axis", targets[t]);
        CHECK_MSG(split_case(RLX_F32, s2, 1, 0, x2, t < 2), "target %s, full", targets[t]);
        test_env_restore("RLX_VK_RED_SPLIT_WGS", saved);
    }
    ops_free_all();
}
