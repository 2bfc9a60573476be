/*
 * test_vk_elementwise.c — CPU <-> Vulkan parity of the elementwise ops:
 * binary arithmetic and comparisons with broadcasting (rank differences,
 * size-1 dims, scalars, 100k-element tensors spanning many workgroups), unary
 * math, clamp, cast between every GPU dtype (saturation, NaN, wrap), where
 * and fma. Special values (NaN, +-inf, +-0, ties for round) are included.
 * require_gpu is set throughout: a host step for any of these is a failure.
 */
#include "ops_common.h"
#include "vk_parity.h"
#include <math.h>
#include <string.h>

/* Tolerances (norm-relative, f32). Arithmetic is exact up to one rounding;
 * the math functions (ew_common.glsl) are within ~2 ulp of libm. */
#define TOL_ARITH 1e-6
#define TOL_MATH  2e-6

static const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, 1.5f, -2.5f, 2.5f, -0.5f,
                                 1.0f, -1.0f, 3e9f, -3e9f, 1e20f, -1e-20f, 300.7f, -129.5f, 65504.0f, 70000.0f};
#define N_SPECIALS ((int)(sizeof specials / sizeof specials[0]))

/* Random data of dtype dt in [lo, hi] (ints: integers in range, bool 0/1). */
static void *rand_data(rlx_dtype dt, int64_t n, double lo, double hi)
{
    void *x = ops_alloc((size_t)(n ? n : 1) * rlx_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) {
        double v = test_rand_uniform(lo, hi);
        if (dt == RLX_BOOL) v = test_rand_int(0, 1);
        else if (dt != RLX_F32 && dt != RLX_F64 && dt != RLX_F16 && dt != RLX_BF16) v = (double)test_rand_int((int64_t)lo, (int64_t)hi);
        ref_store(x, dt, i, v);
    }
    return x;
}

/* Sprinkles the special values over the first elements of a float tensor. */
static void add_specials(void *x, rlx_dtype dt, int64_t n)
{
    for (int64_t i = 0; i < n && i < N_SPECIALS; i++) ref_store(x, dt, i * 7 % n, specials[i]);
}

static ref_shape shp(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    int64_t d[4] = {d0, d1, d2, d3};
    return ref_shape_make(rank, d);
}

/* Shape pairs that exercise broadcasting; the first is large (many workgroups). */
static void shape_pair(int c, ref_shape *a, ref_shape *b)
{
    switch (c) {
    case 0: *a = shp(1, 100003, 0, 0, 0); *b = *a; break;            /* same shape, odd size */
    case 1: *a = shp(3, 37, 1, 129, 0); *b = shp(2, 5, 1, 0, 0); break;  /* both broadcast, rank differs */
    case 2: *a = shp(0, 0, 0, 0, 0); *b = shp(2, 7, 3, 0, 0); break;   /* scalar */
    case 3: *a = shp(4, 2, 3, 1, 4); *b = shp(4, 1, 3, 5, 1); break;
    case 4: *a = shp(1, 1, 0, 0, 0); *b = shp(1, 1, 0, 0, 0); break;   /* tiny */
    default: ops_rand_bcast_pair(a, b); break;
    }
}

typedef rlx_node (*bin_fn)(rlx_graph *, rlx_node, rlx_node);

static const struct { const char *name; bin_fn fn; } arith[] = {
    {"add", rlx_add}, {"sub", rlx_sub}, {"mul", rlx_mul}, {"div", rlx_div}, {"max", rlx_max}, {"min", rlx_min},
};
static const struct { const char *name; bin_fn fn; } cmps[] = {
    {"eq", rlx_eq}, {"ne", rlx_ne}, {"lt", rlx_lt}, {"le", rlx_le}, {"gt", rlx_gt}, {"ge", rlx_ge},
};
#define N_ARITH ((int)(sizeof arith / sizeof arith[0]))
#define N_CMPS  ((int)(sizeof cmps / sizeof cmps[0]))

/* All arithmetic ops and comparisons of one operand pair in one graph. */
/* mode 1: with special values; mode 2: integral floats, so that comparisons
 * see equal operands; mode 3: like 2 without zeros (f16 0/0 is a NaN whose
 * sign differs between x86 and GPUs, and f16 is compared bit-exactly) */
static bool binary_case(rlx_dtype dt, ref_shape sa, ref_shape sb, double lo, double hi, int mode)
{
    rlx_graph *g = ops_graph();
    ops_inputs in = {0};
    int64_t na_ = ref_numel(&sa), nb_ = ref_numel(&sb);
    void *a = rand_data(dt, na_, lo, hi), *b = rand_data(dt, nb_, lo, hi);
    if (mode == 1) {
        add_specials(a, dt, na_);
        add_specials(b, dt, nb_);
    } else if (mode >= 2) {
        for (int64_t i = 0; i < na_; i++) ref_store(a, dt, i, round(ref_load(a, dt, i)));
        for (int64_t i = 0; i < nb_; i++) {
            double v = round(ref_load(b, dt, i));
            ref_store(b, dt, i, mode == 3 && v == 0 ? 1 : v);
        }
    }
    rlx_node na = ops_add_input(g, &in, dt, sa, a), nb = ops_add_input(g, &in, dt, sb, b);
    char name[32];
    for (int k = 0; k < N_ARITH; k++) {
        snprintf(name, sizeof name, "%s", arith[k].name);
        rlx_output(g, name, arith[k].fn(g, na, nb));
    }
    for (int k = 0; k < N_CMPS; k++) rlx_output(g, cmps[k].name, cmps[k].fn(g, na, nb));
    if (rlx_graph_status(g) != RLX_OK) {
        printf("    graph: %s\n", rlx_last_error());
        return false;
    }
    return vkp_compare(g, in.t, in.n, TOL_ARITH, true);
}

TEST(vk_ew_binary_f32) {
    VKP_REQUIRE();
    for (int c = 0; c < 7; c++) {
        ref_shape sa, sb;
        shape_pair(c, &sa, &sb);
        CHECK_MSG(binary_case(RLX_F32, sa, sb, -3, 3, c == 0 ? 1 : 0), "f32 binary case %d", c);
        CHECK_MSG(binary_case(RLX_F32, sa, sb, -3, 3, 2), "f32 binary case %d, integral values", c);
    }
    ops_free_all();
}

TEST(vk_ew_binary_ints) {
    VKP_REQUIRE();
    const rlx_dtype dts[] = {RLX_I32, RLX_I64, RLX_U8, RLX_I8};
    for (int t = 0; t < 4; t++) {
        rlx_dtype dt = dts[t];
        double lo = dt == RLX_U8 ? 0 : -130, hi = dt == RLX_U8 ? 255 : 130;
        if (dt == RLX_I8) { lo = -128; hi = 127; }
        for (int c = 0; c < 4; c++) {
            ref_shape sa, sb;
            shape_pair(c, &sa, &sb);
            CHECK_MSG(binary_case(dt, sa, sb, lo, hi, 0), "%s binary case %d", rlx_dtype_name(dt), c);
        }
    }
    /* wrap-around and INT_MIN / -1, x / 0 */
    {
        rlx_graph *g = ops_graph();
        ops_inputs in = {0};
        int32_t a[6] = {INT32_MIN, INT32_MAX, 7, -7, 5, INT32_MIN}, b[6] = {-1, 1, 0, 2, -3, 0};
        rlx_node na = ops_add_input(g, &in, RLX_I32, shp(1, 6, 0, 0, 0), a);
        rlx_node nb = ops_add_input(g, &in, RLX_I32, shp(1, 6, 0, 0, 0), b);
        for (int k = 0; k < N_ARITH; k++) rlx_output(g, arith[k].name, arith[k].fn(g, na, nb));
        CHECK(vkp_compare(g, in.t, in.n, 0, true));
    }
    {
        rlx_graph *g = ops_graph();
        ops_inputs in = {0};
        int64_t a[5] = {INT64_MIN, INT64_MAX, 1ll << 40, -(1ll << 41) + 3, 9}, b[5] = {-1, 2, 3, -(1ll << 33), 0};
        rlx_node na = ops_add_input(g, &in, RLX_I64, shp(1, 5, 0, 0, 0), a);
        rlx_node nb = ops_add_input(g, &in, RLX_I64, shp(1, 5, 0, 0, 0), b);
        for (int k = 0; k < N_ARITH; k++) rlx_output(g, arith[k].name, arith[k].fn(g, na, nb));
        for (int k = 0; k < N_CMPS; k++) rlx_output(g, cmps[k].name, cmps[k].fn(g, na, nb));
        CHECK(vkp_compare(g, in.t, in.n, 0, true));
    }
    ops_free_all();
}

/* f16/bf16 arithmetic in f32 rounds once to the same bits as the CPU's
 * double computation (f32 has more than 2p+2 bits for +,-,*,/). */
TEST(vk_ew_binary_half) {
    VKP_REQUIRE();
    const rlx_dtype dts[] = {RLX_F16, RLX_BF16};
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < 4; c++) {
            ref_shape sa, sb;
            shape_pair(c, &sa, &sb);
            CHECK_MSG(binary_case(dts[t], sa, sb, -4, 4, 3 * (c & 1)), "%s binary case %d", rlx_dtype_name(dts[t]), c);
        }
    ops_free_all();
}

TEST(vk_ew_pow) {
    VKP_REQUIRE();
    ref_shape sa = shp(2, 300, 301, 0, 0), sb = shp(1, 301, 0, 0, 0);
    rlx_graph *g = ops_graph();
    ops_inputs in = {0};
    rlx_node na = ops_add_input(g, &in, RLX_F32, sa, rand_data(RLX_F32, ref_numel(&sa), 0.25, 4));
    rlx_node nb = ops_add_input(g, &in, RLX_F32, sb, rand_data(RLX_F32, ref_numel(&sb), -4, 4));
    rlx_output(g, "pow", rlx_pow(g, na, nb));
    CHECK(vkp_compare(g, in.t, in.n, TOL_MATH, true));
    /* special cases of C pow: negative bases, zeros, infinities, NaN */
    float xs[] = {-2, -2, 2, 0, -0.0f, -8, -8, INFINITY, -INFINITY, -INFINITY, 0.5f, NAN, 1, -1, 0, -3};
    float ys[] = {3, 0.5f, -1, -1, -3, 1.0f / 3, 2, -1, 3, 2, INFINITY, 0, NAN, INFINITY, 0, -2};
    g = ops_graph();
    in.n = 0;
    na = ops_add_input(g, &in, RLX_F32, shp(1, 16, 0, 0, 0), xs);
    nb = ops_add_input(g, &in, RLX_F32, shp(1, 16, 0, 0, 0), ys);
    rlx_output(g, "pow", rlx_pow(g, na, nb));
    CHECK(vkp_compare(g, in.t, in.n, TOL_MATH, true));
    ops_free_all();
}

typedef rlx_node (*un_fn)(rlx_graph *, rlx_node);
static const struct { const char *name; un_fn fn; double lo, hi; } unops[] = {
    {"relu", rlx_relu, -5, 5},     {"sigmoid", rlx_sigmoid, -20, 20}, {"tanh", rlx_tanh, -6, 6},
    {"exp", rlx_exp, -80, 80},     {"log", rlx_log, 1e-3, 1e3},       {"sqrt", rlx_sqrt, 0, 100},
    {"rsqrt", rlx_rsqrt, 1e-2, 100}, {"neg", rlx_neg, -5, 5},         {"abs", rlx_abs, -5, 5},
    {"gelu", rlx_gelu, -8, 8},     {"gelu_tanh", rlx_gelu_tanh, -8, 8}, {"silu", rlx_silu, -20, 20},
    {"round", rlx_round, -10, 10}, {"sin", rlx_sin, -50, 50},         {"cos", rlx_cos, -50, 50},
    {"tan", rlx_tan, -1.5, 1.5},   {"atan", rlx_atan, -50, 50}, {"erf", rlx_erf, -5, 5},
};
#define N_UNOPS ((int)(sizeof unops / sizeof unops[0]))

TEST(vk_ew_unary_f32) {
    VKP_REQUIRE();
    const ref_shape shapes[3] = {shp(2, 317, 331, 0, 0), shp(1, 3, 0, 0, 0), shp(0, 0, 0, 0, 0)};
    for (int s = 0; s < 3; s++) {
        /* one graph per op so each op sees its own input range; the same
         * graph also carries clamp */
        rlx_graph *g = ops_graph();
        ops_inputs in = {0};
        char name[32];
        for (int k = 0; k < N_UNOPS; k++) {
            if (in.n == 4) {
                CHECK_MSG(vkp_compare(g, in.t, in.n, TOL_MATH, true), "unary shape %d before %s", s, unops[k].name);
                g = ops_graph();
                in.n = 0;
            }
            int64_t n = ref_numel(&shapes[s]);
            void *x = rand_data(RLX_F32, n, unops[k].lo, unops[k].hi);
            if (k == 12) for (int64_t i = 0; i < n; i++) ((float *)x)[i] = (float)(floor(((float *)x)[i] * 2) / 2);
            rlx_node nx = ops_add_input(g, &in, RLX_F32, shapes[s], x);
            snprintf(name, sizeof name, "%s", unops[k].name);
            rlx_output(g, name, unops[k].fn(g, nx));
        }
        CHECK_MSG(vkp_compare(g, in.t, in.n, TOL_MATH, true), "unary shape %d", s);
    }
    /* special values through every op, and clamp */
    rlx_graph *g = ops_graph();
    ops_inputs in = {0};
    rlx_node nx = ops_add_input(g, &in, RLX_F32, shp(1, N_SPECIALS, 0, 0, 0), (void *)specials);
    /* sin/cos/tan of |x| > 8192 use the device's built-ops_inputs (documented in
     * ew_common.glsl), so the trig ops get the specials below 8192 only */
    rlx_node nt = ops_add_input(g, &in, RLX_F32, shp(1, 12, 0, 0, 0), (void *)specials);
    for (int k = 0; k < N_UNOPS; k++) {
        bool trig = unops[k].fn == rlx_sin || unops[k].fn == rlx_cos || unops[k].fn == rlx_tan;
        rlx_output(g, unops[k].name, unops[k].fn(g, trig ? nt : nx));
    }
    rlx_output(g, "clamp", rlx_clamp(g, nx, -1.25, 2.0));
    rlx_output(g, "clamp_pt", rlx_clamp(g, nx, 0.5, 0.5));
    CHECK(vkp_compare(g, in.t, in.n, TOL_MATH, true));
    ops_free_all();
}

TEST(vk_ew_unary_ints) {
    VKP_REQUIRE();
    const rlx_dtype dts[] = {RLX_I32, RLX_I64, RLX_U8, RLX_I8, RLX_F16, RLX_BF16};
    for (int t = 0; t < 6; t++) {
        rlx_dtype dt = dts[t];
        ref_shape s = shp(2, 101, 997, 0, 0);
        rlx_graph *g = ops_graph();
        ops_inputs in = {0};
        void *x = rand_data(dt, ref_numel(&s), dt == RLX_U8 ? 0 : -128, dt == RLX_U8 ? 255 : 127);
        if (dt == RLX_I32) ((int32_t *)x)[5] = INT32_MIN;
        if (dt == RLX_I64) ((int64_t *)x)[5] = INT64_MIN;
        rlx_node nx = ops_add_input(g, &in, dt, s, x);
        rlx_output(g, "relu", rlx_relu(g, nx));
        rlx_output(g, "neg", rlx_neg(g, nx));
        rlx_output(g, "abs", rlx_abs(g, nx));
        rlx_output(g, "clamp", rlx_clamp(g, nx, -20.5, 100.25));
        rlx_output(g, "clamp_wide", rlx_clamp(g, nx, -1e30, 3e9));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, true), "%s", rlx_dtype_name(dt));
    }
    ops_free_all();
}

TEST(vk_ew_cast) {
    VKP_REQUIRE();
    const rlx_dtype dts[] = {RLX_F32, RLX_F16, RLX_BF16, RLX_I32, RLX_I64, RLX_U8, RLX_BOOL, RLX_I8};
    for (int f = 0; f < 8; f++) {
        rlx_dtype from = dts[f];
        ref_shape s = shp(1, 5003, 0, 0, 0);
        int64_t n = ref_numel(&s);
        void *x;
        if (from == RLX_F32 || from == RLX_F16 || from == RLX_BF16) {
            x = rand_data(from, n, -300, 300);
            add_specials(x, from, n);
        } else if (from == RLX_I64) {
            x = ops_alloc((size_t)n * 8);
            for (int64_t i = 0; i < n; i++) ((int64_t *)x)[i] = (int64_t)(test_rand_u64() >> test_rand_int(0, 63)) * (i % 2 ? -1 : 1);
        } else if (from == RLX_I32) {
            x = ops_alloc((size_t)n * 4);
            for (int64_t i = 0; i < n; i++) ((int32_t *)x)[i] = (int32_t)(uint32_t)(test_rand_u64() >> test_rand_int(32, 63));
        } else {
            x = rand_data(from, n, from == RLX_I8 ? -128 : 0, from == RLX_I8 ? 127 : 255);
        }
        rlx_graph *g = ops_graph();
        ops_inputs in = {0};
        rlx_node nx = ops_add_input(g, &in, from, s, x);
        for (int t = 0; t < 8; t++) {
            char name[32];
            snprintf(name, sizeof name, "to_%s", rlx_dtype_name(dts[t]));
            rlx_output(g, name, rlx_cast(g, nx, dts[t]));
        }
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, true), "cast from %s", rlx_dtype_name(from));
    }
    ops_free_all();
}

TEST(vk_ew_where_fma) {
    VKP_REQUIRE();
    const rlx_dtype dts[] = {RLX_F32, RLX_F16, RLX_I64, RLX_U8, RLX_F64, RLX_I32};
    for (int c = 0; c < 6; c++) {
        ref_shape sc, sa, sb;
        switch (c) {
        case 0: sc = sa = sb = shp(1, 100001, 0, 0, 0); break;
        case 1: sc = shp(3, 9, 1, 33, 0); sa = shp(2, 7, 1, 0, 0); sb = shp(1, 33, 0, 0, 0); break;
        case 2: sc = shp(0, 0, 0, 0, 0); sa = shp(2, 5, 6, 0, 0); sb = shp(1, 6, 0, 0, 0); break;
        case 3: sc = shp(4, 2, 1, 3, 1); sa = shp(4, 1, 4, 1, 5); sb = shp(2, 3, 1, 0, 0); break;
        default: sc = shp(2, 64, 1, 0, 0); sa = shp(1, 1, 0, 0, 0); sb = shp(3, 3, 64, 129, 0); break;
        }
        rlx_dtype dt = dts[c];
        rlx_graph *g = ops_graph();
        ops_inputs in = {0};
        rlx_dtype cdt = c % 2 ? RLX_U8 : RLX_BOOL;
        void *cd = rand_data(cdt, ref_numel(&sc), 0, cdt == RLX_U8 ? 3 : 1);
        rlx_node ncond = ops_add_input(g, &in, cdt, sc, cd);
        rlx_node na = ops_add_input(g, &in, dt, sa, rand_data(dt, ref_numel(&sa), 0, 100));
        rlx_node nb = ops_add_input(g, &in, dt, sb, rand_data(dt, ref_numel(&sb), 0, 100));
        rlx_output(g, "where", rlx_where(g, ncond, na, nb));
        if (dt == RLX_F32) {
            rlx_node nc = ops_add_input(g, &in, dt, sc, rand_data(dt, ref_numel(&sc), -1e3, 1e3));
            rlx_output(g, "fma", rlx_fma(g, na, nb, nc));
        }
        CHECK_MSG(vkp_compare(g, in.t, in.n, TOL_ARITH, true), "where/fma case %d (%s)", c, rlx_dtype_name(dt));
    }
    ops_free_all();
}
