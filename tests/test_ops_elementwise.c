/*
 * test_ops_elementwise.c — elementwise ops against the float64 reference:
 * binary (with numpy broadcasting across rank differences and size-1 dims),
 * unary, comparisons, where, fma, clamp, cast, scalars/constants and a fused
 * elementwise chain; each under every test configuration (ops_common.h).
 */
#include "ops_common.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef rlx_node (*bin_fn)(rlx_graph *, rlx_node, rlx_node);
typedef rlx_node (*un_fn)(rlx_graph *, rlx_node);

static const struct { const char *name; bin_fn fn; ref_binop op; double lo, hi; double tol; } binops[] = {
    {"add", rlx_add, REF_ADD, -2, 2, 1e-5},
    {"sub", rlx_sub, REF_SUB, -2, 2, 1e-5},
    {"mul", rlx_mul, REF_MUL, -2, 2, 1e-5},
    {"div", rlx_div, REF_DIV, 0.5, 2, 1e-5},   /* divisor sign is randomized below */
    {"max", rlx_max, REF_MAX, -2, 2, 1e-5},
    {"min", rlx_min, REF_MIN, -2, 2, 1e-5},
    {"pow", rlx_pow, REF_POW, 0.5, 2, 1e-4},   /* exp/log chains: a few ulp in f32 libm */
};

TEST(ops_binary_f32_broadcast) {
    for (size_t op = 0; op < sizeof binops / sizeof binops[0]; op++) {
        for (int c = 0; c < 5; c++) {
            ref_shape sa, sb, so;
            ops_rand_bcast_pair(&sa, &sb);
            if (c == 0) { sa = ops_rand_shape(3, 500); sb = sa; }          /* same shape */
            CHECK(ref_broadcast(&sa, &sb, &so));
            int64_t na = ref_numel(&sa), nb = ref_numel(&sb), no = ref_numel(&so);
            float *a = ops_rand_f32(na, binops[op].op == REF_POW ? 0.5 : -2, 2);
            float *b = ops_rand_f32(nb, binops[op].op == REF_POW ? -2 : binops[op].lo, binops[op].hi);
            if (binops[op].op == REF_DIV)
                for (int64_t i = 0; i < nb; i++) if (test_rand_int(0, 1)) b[i] = -b[i];
            double *want = ops_f64(no);
            ref_binary(binops[op].op, ops_f32_to_f64(a, na), sa, ops_f32_to_f64(b, nb), sb, want);

            rlx_graph *g = ops_graph();
            rlx_node y = binops[op].fn(g, ops_input(g, "a", RLX_F32, sa), ops_input(g, "b", RLX_F32, sb));
            CHECK_OK(rlx_output(g, "y", y));
            rlx_tensor in[2] = {ops_tensor("a", RLX_F32, sa, a), ops_tensor("b", RLX_F32, sb, b)};
            float *got = ops_f32(no);
            rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                CHECK(ops_run(g, cfg, in, 2, &out, 1));
                CHECK_CLOSE(binops[op].name, got, want, no, binops[op].tol);
            }
        }
        ops_free_all();
    }
}

TEST(ops_binary_i32) {
    for (size_t op = 0; op < sizeof binops / sizeof binops[0]; op++) {
        ref_binop rop = binops[op].op;
        if (rop == REF_POW) continue;
        for (int c = 0; c < 3; c++) {
            ref_shape sa, sb, so;
            ops_rand_bcast_pair(&sa, &sb);
            CHECK(ref_broadcast(&sa, &sb, &so));
            int64_t na = ref_numel(&sa), nb = ref_numel(&sb), no = ref_numel(&so);
            int32_t *a = ops_alloc((size_t)na * 4), *b = ops_alloc((size_t)nb * 4);
            double *da = ops_f64(na), *db = ops_f64(nb), *want = ops_f64(no);
            for (int64_t i = 0; i < na; i++) da[i] = a[i] = (int32_t)test_rand_int(-1000, 1000);
            for (int64_t i = 0; i < nb; i++) {
                b[i] = (int32_t)test_rand_int(-37, 37);
                if (rop == REF_DIV && b[i] == 0) b[i] = 7;
                db[i] = b[i];
            }
            ref_binary(rop == REF_DIV ? REF_IDIV : rop, da, sa, db, sb, want);

            rlx_graph *g = ops_graph();
            rlx_node y = binops[op].fn(g, ops_input(g, "a", RLX_I32, sa), ops_input(g, "b", RLX_I32, sb));
            CHECK_OK(rlx_output(g, "y", y));
            rlx_tensor in[2] = {ops_tensor("a", RLX_I32, sa, a), ops_tensor("b", RLX_I32, sb, b)};
            int32_t *got = ops_alloc((size_t)no * 4);
            rlx_tensor out = ops_tensor("y", RLX_I32, so, got);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                CHECK(ops_run(g, cfg, in, 2, &out, 1));
                for (int64_t i = 0; i < no; i++)
                    CHECK_MSG(got[i] == (int32_t)want[i], "i32 %s [%lld]: got %d want %d (config %s)",
                              binops[op].name, (long long)i, got[i], (int32_t)want[i], ops_config_name(cfg));
            }
        }
        ops_free_all();
    }
}

/* Integer division by zero and INT_MIN / -1 trap on x86 if done naively; the
 * library must not crash (the value is documented in docs/ops.md). */
TEST(ops_div_i32_by_zero_does_not_crash) {
    int64_t d[1] = {4};
    ref_shape s = ref_shape_make(1, d);
    int32_t a[4] = {7, -7, 0, INT32_MIN}, b[4] = {0, 0, 0, -1}, got[4];
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_div(g, ops_input(g, "a", RLX_I32, s), ops_input(g, "b", RLX_I32, s))));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    rlx_tensor in[2] = {ops_tensor("a", RLX_I32, s, a), ops_tensor("b", RLX_I32, s, b)};
    rlx_status st = rlx_exec_run(e, in, 2);
    if (st == RLX_OK) {
        rlx_status st2 = rlx_exec_read_output(e, "y", got, sizeof got);
        rlx_exec_free(e);
        CHECK_OK(st2);
        /* docs/ops.md: x / 0 = 0 for integers (TODO(confirm)). */
        CHECK_MSG(got[0] == 0 && got[1] == 0 && got[2] == 0, "i32 x/0: got %d %d %d, want 0 0 0",
                  got[0], got[1], got[2]);
    } else {
        rlx_exec_free(e);
        CHECK_MSG(rlx_last_error()[0] != 0, "failed run without a message");
    }
    ops_free_all();
}

TEST(ops_max_min_nan_propagates) {
    int64_t d[1] = {4};
    ref_shape s = ref_shape_make(1, d);
    float a[4] = {NAN, 1.0f, NAN, -2.0f}, b[4] = {1.0f, NAN, NAN, 3.0f}, mx[4], mn[4];
    rlx_graph *g = ops_graph();
    rlx_node x = ops_input(g, "a", RLX_F32, s), y = ops_input(g, "b", RLX_F32, s);
    CHECK_OK(rlx_output(g, "mx", rlx_max(g, x, y)));
    CHECK_OK(rlx_output(g, "mn", rlx_min(g, x, y)));
    rlx_tensor in[2] = {ops_tensor("a", RLX_F32, s, a), ops_tensor("b", RLX_F32, s, b)};
    rlx_tensor out[2] = {ops_tensor("mx", RLX_F32, s, mx), ops_tensor("mn", RLX_F32, s, mn)};
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, in, 2, out, 2));
        for (int i = 0; i < 3; i++) CHECK_MSG(isnan(mx[i]) && isnan(mn[i]), "NaN lost at %d: max %g min %g", i, mx[i], mn[i]);
        CHECK(mx[3] == 3.0f && mn[3] == -2.0f);
    }
    ops_free_all();
}

static const struct { const char *name; un_fn fn; ref_unop op; double lo, hi, tol; } unops[] = {
    {"relu",      rlx_relu,      REF_RELU,      -3, 3, 1e-5},
    {"sigmoid",   rlx_sigmoid,   REF_SIGMOID,   -8, 8, 1e-5},
    {"tanh",      rlx_tanh,      REF_TANH,      -4, 4, 1e-5},
    {"exp",       rlx_exp,       REF_EXP,       -5, 5, 1e-5},
    {"log",       rlx_log,       REF_LOG,       0.01, 10, 1e-5},
    {"sqrt",      rlx_sqrt,      REF_SQRT,      0, 10, 1e-5},
    {"rsqrt",     rlx_rsqrt,     REF_RSQRT,     0.01, 10, 1e-5},
    {"neg",       rlx_neg,       REF_NEG,       -3, 3, 1e-5},
    {"abs",       rlx_abs,       REF_ABS,       -3, 3, 1e-5},
    {"gelu",      rlx_gelu,      REF_GELU,      -5, 5, 1e-5},
    {"gelu_tanh", rlx_gelu_tanh, REF_GELU_TANH, -5, 5, 1e-5},
    {"silu",      rlx_silu,      REF_SILU,      -8, 8, 1e-5},
    {"round",     rlx_round,     REF_ROUND,     -6, 6, 0},
    {"sin",       rlx_sin,       REF_SIN,       -6, 6, 1e-5},
    {"cos",       rlx_cos,       REF_COS,       -6, 6, 1e-5},
    {"tan",       rlx_tan,       REF_TAN,       -1.3, 1.3, 1e-4},  /* grows steeply near pi/2 */
    {"atan",      rlx_atan,      REF_ATAN,      -10, 10, 1e-5},
    {"erf",       rlx_erf,       REF_ERF,       -4, 4, 1e-5},
};

TEST(ops_unary_f32) {
    for (size_t op = 0; op < sizeof unops / sizeof unops[0]; op++) {
        for (int c = 0; c < 3; c++) {
            ref_shape s = ops_rand_shape((int)test_rand_int(0, 4), 3000);
            int64_t n = ref_numel(&s);
            float *x = ops_rand_f32(n, unops[op].lo, unops[op].hi);
            if (unops[op].op == REF_ROUND)   /* exact halves: ties go to even */
                for (int64_t i = 0; i < n; i++)
                    if (i % 2 == 0) x[i] = (float)test_rand_int(-6, 6) + 0.5f;
            if (unops[op].op == REF_RELU && n > 1) x[1] = 0.0f;
            double *want = ops_f64(n);
            ref_unary(unops[op].op, ops_f32_to_f64(x, n), n, want);

            rlx_graph *g = ops_graph();
            CHECK_OK(rlx_output(g, "y", unops[op].fn(g, ops_input(g, "x", RLX_F32, s))));
            rlx_tensor in = ops_tensor("x", RLX_F32, s, x);
            float *got = ops_f32(n);
            rlx_tensor out = ops_tensor("y", RLX_F32, s, got);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                CHECK(ops_run(g, cfg, &in, 1, &out, 1));
                CHECK_CLOSE(unops[op].name, got, want, n, unops[op].tol);
            }
        }
        ops_free_all();
    }
}

TEST(ops_unary_i32_neg_abs) {
    ref_shape s = ops_rand_shape(2, 1000);
    int64_t n = ref_numel(&s);
    int32_t *x = ops_alloc((size_t)n * 4), *neg = ops_alloc((size_t)n * 4), *ab = ops_alloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) x[i] = (int32_t)test_rand_int(-100000, 100000);
    rlx_graph *g = ops_graph();
    rlx_node xi = ops_input(g, "x", RLX_I32, s);
    CHECK_OK(rlx_output(g, "neg", rlx_neg(g, xi)));
    CHECK_OK(rlx_output(g, "abs", rlx_abs(g, xi)));
    rlx_tensor in = ops_tensor("x", RLX_I32, s, x);
    rlx_tensor out[2] = {ops_tensor("neg", RLX_I32, s, neg), ops_tensor("abs", RLX_I32, s, ab)};
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, &in, 1, out, 2));
        for (int64_t i = 0; i < n; i++)
            CHECK_MSG(neg[i] == -x[i] && ab[i] == abs(x[i]), "[%lld] x=%d neg=%d abs=%d", (long long)i, x[i], neg[i], ab[i]);
    }
    ops_free_all();
}

static const struct { const char *name; bin_fn fn; ref_cmpop op; } cmpops[] = {
    {"eq", rlx_eq, REF_EQ}, {"ne", rlx_ne, REF_NE}, {"lt", rlx_lt, REF_LT},
    {"le", rlx_le, REF_LE}, {"gt", rlx_gt, REF_GT}, {"ge", rlx_ge, REF_GE},
};

TEST(ops_compare) {
    for (size_t op = 0; op < sizeof cmpops / sizeof cmpops[0]; op++) {
        for (int c = 0; c < 4; c++) {
            rlx_dtype dt = c % 2 ? RLX_I32 : RLX_F32;
            ref_shape sa, sb, so;
            ops_rand_bcast_pair(&sa, &sb);
            CHECK(ref_broadcast(&sa, &sb, &so));
            int64_t na = ref_numel(&sa), nb = ref_numel(&sb), no = ref_numel(&so);
            double *da = ops_f64(na), *db = ops_f64(nb);
            void *a = ops_alloc((size_t)na * 4), *b = ops_alloc((size_t)nb * 4);
            /* few distinct values so that equality actually happens */
            for (int64_t i = 0; i < na; i++) { da[i] = (double)test_rand_int(-2, 2) * 0.5; ref_store(a, dt, i, da[i]); da[i] = ref_load(a, dt, i); }
            for (int64_t i = 0; i < nb; i++) { db[i] = (double)test_rand_int(-2, 2) * 0.5; ref_store(b, dt, i, db[i]); db[i] = ref_load(b, dt, i); }
            uint8_t *want = ops_alloc((size_t)no), *got = ops_alloc((size_t)no);
            ref_compare(cmpops[op].op, da, sa, db, sb, want);

            rlx_graph *g = ops_graph();
            CHECK_OK(rlx_output(g, "y", cmpops[op].fn(g, ops_input(g, "a", dt, sa), ops_input(g, "b", dt, sb))));
            rlx_tensor in[2] = {ops_tensor("a", dt, sa, a), ops_tensor("b", dt, sb, b)};
            rlx_tensor out = ops_tensor("y", RLX_BOOL, so, got);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                CHECK(ops_run(g, cfg, in, 2, &out, 1));
                for (int64_t i = 0; i < no; i++)
                    CHECK_MSG(got[i] == want[i], "%s %s [%lld]: got %d want %d (config %s)", cmpops[op].name,
                              rlx_dtype_name(dt), (long long)i, got[i], want[i], ops_config_name(cfg));
            }
        }
        ops_free_all();
    }
}

TEST(ops_where_three_way_broadcast) {
    for (int c = 0; c < 6; c++) {
        ref_shape sc, sa, sb, t, so;
        ops_rand_bcast_pair(&sc, &sa);
        CHECK(ref_broadcast(&sc, &sa, &t));
        /* b: a random suffix of t with some dims set to 1 */
        sb = t;
        sb.rank = (int)test_rand_int(0, t.rank);
        for (int i = 0; i < sb.rank; i++) sb.d[i] = test_rand_int(0, 2) ? t.d[t.rank - sb.rank + i] : 1;
        CHECK(ref_broadcast(&t, &sb, &so));
        rlx_dtype dt = c == 5 ? RLX_I32 : RLX_F32;
        int64_t nc = ref_numel(&sc), na = ref_numel(&sa), nb = ref_numel(&sb), no = ref_numel(&so);
        uint8_t *cond = ops_alloc((size_t)nc);
        for (int64_t i = 0; i < nc; i++) cond[i] = (uint8_t)test_rand_int(0, 1);
        double *da = ops_f64(na), *db = ops_f64(nb), *want = ops_f64(no);
        void *a = ops_alloc((size_t)na * 4), *b = ops_alloc((size_t)nb * 4), *got = ops_alloc((size_t)no * 4);
        for (int64_t i = 0; i < na; i++) { ref_store(a, dt, i, test_rand_uniform(-100, 100)); da[i] = ref_load(a, dt, i); }
        for (int64_t i = 0; i < nb; i++) { ref_store(b, dt, i, test_rand_uniform(-100, 100)); db[i] = ref_load(b, dt, i); }
        ref_where(cond, sc, da, sa, db, sb, want);

        rlx_graph *g = ops_graph();
        rlx_node y = rlx_where(g, ops_input(g, "c", RLX_BOOL, sc), ops_input(g, "a", dt, sa), ops_input(g, "b", dt, sb));
        CHECK_OK(rlx_output(g, "y", y));
        rlx_tensor in[3] = {ops_tensor("c", RLX_BOOL, sc, cond), ops_tensor("a", dt, sa, a), ops_tensor("b", dt, sb, b)};
        rlx_tensor out = ops_tensor("y", dt, so, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 3, &out, 1));
            for (int64_t i = 0; i < no; i++)   /* where selects: exact */
                CHECK_MSG(ref_load(got, dt, i) == want[i], "where %s [%lld]: got %g want %g (config %s)",
                          rlx_dtype_name(dt), (long long)i, ref_load(got, dt, i), want[i], ops_config_name(cfg));
        }
    }
    ops_free_all();
}

TEST(ops_fma_broadcast) {
    for (int c = 0; c < 5; c++) {
        ref_shape sa, sb, sc, t, so;
        ops_rand_bcast_pair(&sa, &sb);
        CHECK(ref_broadcast(&sa, &sb, &t));
        sc = t;
        sc.rank = (int)test_rand_int(0, t.rank);
        for (int i = 0; i < sc.rank; i++) sc.d[i] = test_rand_int(0, 2) ? t.d[t.rank - sc.rank + i] : 1;
        CHECK(ref_broadcast(&t, &sc, &so));
        int64_t na = ref_numel(&sa), nb = ref_numel(&sb), nc = ref_numel(&sc), no = ref_numel(&so);
        float *a = ops_rand_f32(na, -2, 2), *b = ops_rand_f32(nb, -2, 2), *cc = ops_rand_f32(nc, -2, 2);
        double *want = ops_f64(no);
        ref_fma(ops_f32_to_f64(a, na), sa, ops_f32_to_f64(b, nb), sb, ops_f32_to_f64(cc, nc), sc, want);
        rlx_graph *g = ops_graph();
        rlx_node y = rlx_fma(g, ops_input(g, "a", RLX_F32, sa), ops_input(g, "b", RLX_F32, sb),
                             ops_input(g, "c", RLX_F32, sc));
        CHECK_OK(rlx_output(g, "y", y));
        rlx_tensor in[3] = {ops_tensor("a", RLX_F32, sa, a), ops_tensor("b", RLX_F32, sb, b),
                            ops_tensor("c", RLX_F32, sc, cc)};
        float *got = ops_f32(no);
        rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 3, &out, 1));
            CHECK_CLOSE("fma", got, want, no, 1e-5);
        }
    }
    ops_free_all();
}

TEST(ops_clamp) {
    const double bounds[3][2] = {{-1, 1}, {0, 6}, {-0.25, 0.5}};
    for (int c = 0; c < 3; c++) {
        ref_shape s = ops_rand_shape((int)test_rand_int(0, 3), 2000);
        int64_t n = ref_numel(&s);
        float *x = ops_rand_f32(n, -8, 8);
        double *want = ops_f64(n);
        ref_clamp(ops_f32_to_f64(x, n), n, bounds[c][0], bounds[c][1], want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_clamp(g, ops_input(g, "x", RLX_F32, s), bounds[c][0], bounds[c][1])));
        rlx_tensor in = ops_tensor("x", RLX_F32, s, x);
        float *got = ops_f32(n);
        rlx_tensor out = ops_tensor("y", RLX_F32, s, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, &in, 1, &out, 1));
            CHECK_CLOSE("clamp", got, want, n, 1e-7);
        }
    }
    ops_free_all();
}

/* Casts compare the exact bits the reference conversion produces. */
TEST(ops_cast) {
    static const struct { rlx_dtype from, to; double lo, hi; int integral; } cases[] = {
        {RLX_F32, RLX_I32, -1000, 1000, 0},  {RLX_F32, RLX_BOOL, -1, 1, 0},
        {RLX_F32, RLX_F16, -70000, 70000, 0}, {RLX_F32, RLX_BF16, -1e6, 1e6, 0},
        {RLX_F32, RLX_F64, -10, 10, 0},      {RLX_F32, RLX_I64, -1e6, 1e6, 0},
        {RLX_F32, RLX_U8, 0, 255, 0},        {RLX_F32, RLX_I8, -128, 127, 0},
        {RLX_I32, RLX_F32, -1e6, 1e6, 1},    {RLX_BOOL, RLX_F32, 0, 1, 1},
        {RLX_F16, RLX_F32, -1000, 1000, 0},  {RLX_BF16, RLX_F32, -1000, 1000, 0},
        {RLX_F64, RLX_F32, -10, 10, 0},      {RLX_I32, RLX_I64, -1e6, 1e6, 1},
        {RLX_I64, RLX_I32, -1e6, 1e6, 1},    {RLX_F32, RLX_F32, -10, 10, 0},
        {RLX_F16, RLX_F16, -1, 1, 0},        {RLX_I32, RLX_BOOL, -2, 2, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ref_shape s = ops_rand_shape((int)test_rand_int(1, 3), 1000);
        int64_t n = ref_numel(&s);
        size_t fs = rlx_dtype_size(cases[c].from), ts = rlx_dtype_size(cases[c].to);
        void *x = ops_alloc((size_t)n * fs), *want = ops_alloc((size_t)n * ts), *got = ops_alloc((size_t)n * ts);
        for (int64_t i = 0; i < n; i++) {
            double v = test_rand_uniform(cases[c].lo, cases[c].hi);
            if (cases[c].integral || cases[c].from == RLX_BOOL) v = (double)(int64_t)v;
            if (cases[c].from == RLX_BOOL) v = test_rand_int(0, 1);
            if (i == 0) v = 0;
            ref_store(x, cases[c].from, i, v);
            ref_store(want, cases[c].to, i, ref_load(x, cases[c].from, i));
        }
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_cast(g, ops_input(g, "x", cases[c].from, s), cases[c].to)));
        rlx_tensor in = ops_tensor("x", cases[c].from, s, x);
        rlx_tensor out = ops_tensor("y", cases[c].to, s, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, &in, 1, &out, 1));
            for (int64_t i = 0; i < n; i++) {
                if (memcmp((char *)got + i * ts, (char *)want + i * ts, ts) != 0)
                    CHECK_MSG(0, "cast %s->%s [%lld]: x=%.9g got %.9g want %.9g (config %s)",
                              rlx_dtype_name(cases[c].from), rlx_dtype_name(cases[c].to), (long long)i,
                              ref_load(x, cases[c].from, i), ref_load(got, cases[c].to, i),
                              ref_load(want, cases[c].to, i), ops_config_name(cfg));
            }
        }
        ops_free_all();
    }
}

/* rlx_scalar is rank 0 and broadcasts; rank-0 inputs and outputs work. */
TEST(ops_scalar_and_rank0) {
    ref_shape s = ops_rand_shape(3, 1000), s0 = ref_shape_make(0, NULL);
    int64_t n = ref_numel(&s);
    float *x = ops_rand_f32(n, -2, 2), z = 1.5f;
    double *want = ops_f64(n);
    for (int64_t i = 0; i < n; i++) want[i] = ((double)x[i] * 0.25 - 3.0) + (double)z;
    rlx_graph *g = ops_graph();
    rlx_node k = rlx_scalar(g, RLX_F32, 0.25);
    rlx_dtype dt;
    int rank;
    int64_t dims[RLX_MAX_RANK];
    CHECK_OK(rlx_node_shape(g, k, &dt, &rank, dims));
    CHECK(dt == RLX_F32 && rank == 0);
    rlx_node y = rlx_sub(g, rlx_mul(g, ops_input(g, "x", RLX_F32, s), k), rlx_scalar(g, RLX_F32, 3.0));
    rlx_node zz = ops_input(g, "z", RLX_F32, s0);
    CHECK_OK(rlx_output(g, "y", rlx_add(g, y, zz)));
    CHECK_OK(rlx_output(g, "z2", rlx_mul(g, zz, zz)));
    rlx_tensor in[2] = {ops_tensor("x", RLX_F32, s, x), ops_tensor("z", RLX_F32, s0, &z)};
    float *got = ops_f32(n), z2 = NAN;
    double want_z2 = 2.25;
    rlx_tensor out[2] = {ops_tensor("y", RLX_F32, s, got), ops_tensor("z2", RLX_F32, s0, &z2)};
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, in, 2, out, 2));
        CHECK_CLOSE("scalar", got, want, n, 1e-6);
        CHECK_CLOSE("rank0", &z2, &want_z2, 1, 1e-7);
    }
    ops_free_all();
}

TEST(ops_constant_and_param) {
    int64_t d[2] = {3, 5};
    ref_shape s = ref_shape_make(2, d);
    float c[15], keep[15], p[15], x[15], got[15];
    double want0[15], want1[15];
    for (int i = 0; i < 15; i++) {
        keep[i] = c[i] = (float)test_rand_uniform(0.5, 1);
        p[i] = (float)test_rand_uniform(-1, 1);
        x[i] = (float)test_rand_uniform(-1, 1);
        want0[i] = keep[i];                          /* params are zero until set */
        want1[i] = (double)x[i] * p[i] + keep[i];
    }
    rlx_graph *g = ops_graph();
    rlx_node cn = rlx_constant(g, RLX_F32, 2, d, c);
    memset(c, 0, sizeof c);   /* the graph must have copied the data */
    rlx_node pn = rlx_param(g, "w", RLX_F32, 2, d);
    CHECK_OK(rlx_output(g, "y", rlx_add(g, rlx_mul(g, ops_input(g, "x", RLX_F32, s), pn), cn)));
    rlx_tensor in = ops_tensor("x", RLX_F32, s, x);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        rlx_compile_options o;
        ops_config_options(cfg, &o);
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, &o, &e));
        int counts_ok = rlx_exec_param_count(e) == 1 && rlx_exec_input_count(e) == 1 && rlx_exec_output_count(e) == 1;
        rlx_status st = rlx_exec_run(e, &in, 1);
        if (st == RLX_OK) st = rlx_exec_read_output(e, "y", got, sizeof got);
        int zero_ok = st == RLX_OK && test_close_f32_f64("unset param", got, want0, 15, 1e-7);
        if (st == RLX_OK) st = rlx_exec_set_param_f32(e, "w", p, 15);
        if (st == RLX_OK) st = rlx_exec_run(e, &in, 1);
        if (st == RLX_OK) st = rlx_exec_read_output(e, "y", got, sizeof got);
        rlx_exec_free(e);
        CHECK_OK(st);
        CHECK(counts_ok);
        CHECK_MSG(zero_ok, "param not zero before set, or constant not copied (config %s)", ops_config_name(cfg));
        CHECK_CLOSE("param", got, want1, 15, 1e-6);
    }
    ops_free_all();
}

/* A chain the optimizer may fuse into one elementwise region. */
TEST(ops_elementwise_chain) {
    ref_shape sx = ops_rand_shape(3, 2000), sb;
    sb = ref_shape_make(1, &sx.d[2]);
    int64_t n = ref_numel(&sx), nb = ref_numel(&sb);
    float *x = ops_rand_f32(n, -3, 3), *b = ops_rand_f32(nb, -1, 1);
    double *dx = ops_f32_to_f64(x, n), *db = ops_f32_to_f64(b, nb), *want = ops_f64(n);
    for (int64_t i = 0; i < n; i++) {
        double t = dx[i] * 0.5 + db[i % nb];
        t = t / (1 + exp(-t));                     /* silu */
        want[i] = tanh(t) - exp(dx[i] * 0.1) + fabs(dx[i]);
    }
    rlx_graph *g = ops_graph();
    rlx_node xi = ops_input(g, "x", RLX_F32, sx), bi = ops_input(g, "b", RLX_F32, sb);
    rlx_node t = rlx_silu(g, rlx_add(g, rlx_mul(g, xi, rlx_scalar(g, RLX_F32, 0.5)), bi));
    rlx_node y = rlx_add(g, rlx_sub(g, rlx_tanh(g, t), rlx_exp(g, rlx_mul(g, xi, rlx_scalar(g, RLX_F32, 0.1)))),
                         rlx_abs(g, xi));
    CHECK_OK(rlx_output(g, "y", y));
    rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("b", RLX_F32, sb, b)};
    float *got = ops_f32(n);
    rlx_tensor out = ops_tensor("y", RLX_F32, sx, got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, in, 2, &out, 1));
        CHECK_CLOSE("chain", got, want, n, 1e-5);
    }
    ops_free_all();
}
