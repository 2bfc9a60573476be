/*
 * test_ops_dtypes.c — dtype coverage beyond f32: compute ops on f64, f16 and
 * bf16 (against the float64 reference of the quantized inputs, tolerances of
 * the output format), integer ops on i64/i8/u8, and the movement ops moving
 * every dtype bit-exactly (checked through an index map computed by the
 * float64 reference).
 */
#include "ops_common.h"
#include <math.h>
#include <string.h>

static double dtype_tol(rlx_dtype dt) {
    switch (dt) {
    case RLX_F16:  return 1e-3;   /* 11-bit significand: half-ulp 4.9e-4 */
    case RLX_BF16: return 8e-3;   /* 8-bit significand: half-ulp 3.9e-3 */
    default:       return 1e-5;
    }
}

static float *load_as_f32(const void *data, rlx_dtype dt, int64_t n) {
    float *f = ops_alloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) f[i] = (float)ref_load(data, dt, i);
    return f;
}

/* Random data of dtype dt in [lo, hi]; *as64 receives the exact stored values. */
static void *rand_typed(rlx_dtype dt, int64_t n, double lo, double hi, double **as64) {
    void *x = ops_alloc((size_t)n * rlx_dtype_size(dt));
    double *d = ops_f64(n);
    for (int64_t i = 0; i < n; i++) {
        ref_store(x, dt, i, test_rand_uniform(lo, hi));
        d[i] = ref_load(x, dt, i);
    }
    *as64 = d;
    return x;
}

typedef enum { K_EXP, K_TANH, K_GELU, K_ADD, K_MUL, K_DIV, K_MAX, K_RSUM, K_RMEAN, K_RMAX, K_SOFTMAX, K_MATMUL,
               K_LAYERNORM, K_CUMSUM, K_COUNT } kind;
static const char *kind_names[K_COUNT] = {"exp", "tanh", "gelu", "add", "mul", "div", "max", "reduce_sum",
                                          "reduce_mean", "reduce_max", "softmax", "matmul", "layer_norm", "cumsum"};

TEST(ops_float_dtypes) {
    const rlx_dtype dts[3] = {RLX_F64, RLX_F16, RLX_BF16};
    for (int t = 0; t < 3; t++) {
        rlx_dtype dt = dts[t];
        for (int k = 0; k < K_COUNT; k++) {
            int64_t d2[2] = {test_rand_int(1, 9), test_rand_int(1, 40)}, dg[1];
            dg[0] = d2[1];
            ref_shape sx = ref_shape_make(2, d2), sg = ref_shape_make(1, dg);
            int64_t n = ref_numel(&sx);
            double *xa, *xb, *xg;
            void *a = rand_typed(dt, n, k == K_DIV ? 0.5 : -2, 2, &xa);
            void *b = rand_typed(dt, n, 0.5, 2, &xb);
            void *gm = rand_typed(dt, dg[0], 0.5, 1.5, &xg);
            double *want = ops_f64(n + d2[0] * d2[0]);
            ref_shape so = sx;
            rlx_graph *g = ops_graph();
            rlx_node an = ops_input(g, "a", dt, sx);
            int uses_b = k == K_ADD || k == K_MUL || k == K_DIV || k == K_MAX || k == K_MATMUL;
            rlx_node bn = uses_b ? ops_input(g, "b", dt, sx) : RLX_NO_NODE;
            rlx_node gn = k == K_LAYERNORM ? ops_input(g, "g", dt, sg) : RLX_NO_NODE;
            rlx_node y = RLX_NO_NODE;
            int n_in = 1;
            switch ((kind)k) {
            case K_EXP: y = rlx_exp(g, an); ref_unary(REF_EXP, xa, n, want); break;
            case K_TANH: y = rlx_tanh(g, an); ref_unary(REF_TANH, xa, n, want); break;
            case K_GELU: y = rlx_gelu(g, an); ref_unary(REF_GELU, xa, n, want); break;
            case K_ADD: y = rlx_add(g, an, bn); ref_binary(REF_ADD, xa, sx, xb, sx, want); n_in = 2; break;
            case K_MUL: y = rlx_mul(g, an, bn); ref_binary(REF_MUL, xa, sx, xb, sx, want); n_in = 2; break;
            case K_DIV: y = rlx_div(g, an, bn); ref_binary(REF_DIV, xa, sx, xb, sx, want); n_in = 2; break;
            case K_MAX: y = rlx_max(g, an, bn); ref_binary(REF_MAX, xa, sx, xb, sx, want); n_in = 2; break;
            case K_RSUM: y = rlx_reduce_sum(g, an, 2, 0); ref_reduce(REF_RSUM, xa, sx, 2, want); so = ref_reduce_shape(sx, 2, 0); break;
            case K_RMEAN: y = rlx_reduce_mean(g, an, 1, 1); ref_reduce(REF_RMEAN, xa, sx, 1, want); so = ref_reduce_shape(sx, 1, 1); break;
            case K_RMAX: y = rlx_reduce_max(g, an, 0, 0); ref_reduce(REF_RMAX, xa, sx, 0, want); so = ref_reduce_shape(sx, 0, 0); break;
            case K_SOFTMAX: y = rlx_softmax(g, an, 1); ref_softmax(xa, sx, 1, 0, want); break;
            case K_MATMUL:
                y = rlx_matmul(g, an, bn, 1);
                ref_matmul(xa, sx, xb, sx, 1, NULL, RLX_ACT_NONE, want, &so);
                n_in = 2;
                break;
            case K_LAYERNORM:
                y = rlx_layer_norm(g, an, gn, RLX_NO_NODE, 1e-5f);
                ref_norm(0, xa, sx, xg, NULL, 1e-5, want);
                n_in = 3;
                break;
            case K_CUMSUM: y = rlx_cumsum(g, an, 1); ref_cumsum(xa, sx, 1, want); break;
            default: break;
            }
            CHECK_OK(rlx_output(g, "y", y));
            rlx_tensor in[3] = {ops_tensor("a", dt, sx, a), ops_tensor("b", dt, sx, b), ops_tensor("g", dt, sg, gm)};
            if (n_in == 3) in[1] = in[2];
            int64_t no = ref_numel(&so);
            void *got = ops_alloc((size_t)no * rlx_dtype_size(dt));
            rlx_tensor out = ops_tensor("y", dt, so, got);
            double tol = dtype_tol(dt);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                CHECK(ops_run(g, cfg, in, n_in == 3 ? 2 : n_in, &out, 1));
                if (k == K_LAYERNORM && d2[1] == 1) {   /* D = 1: output is exactly 0 */
                    for (int64_t i = 0; i < no; i++) CHECK(ref_load(got, dt, i) == 0);
                    continue;
                }
                CHECK_MSG(test_close_f32_f64(kind_names[k], load_as_f32(got, dt, no), want, no, tol),
                          "%s on %s (config %s)", kind_names[k], rlx_dtype_name(dt), ops_config_name(cfg));
            }
            ops_free_all();
        }
    }
}

/* f64 ops keep double precision (an f64 graph computed through f32 would lose it). */
TEST(ops_f64_precision) {
    int64_t d[2] = {4, 300};
    ref_shape s = ref_shape_make(2, d);
    int64_t n = ref_numel(&s);
    double *x, *want = ops_f64(4), *got = ops_f64(4);
    void *xv = rand_typed(RLX_F64, n, -1, 1, &x);
    ref_reduce(REF_RSUM, x, s, 2, want);
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_reduce_sum(g, ops_input(g, "x", RLX_F64, s), 2, 0)));
    rlx_tensor in = ops_tensor("x", RLX_F64, s, xv), out = ops_tensor("y", RLX_F64, ref_reduce_shape(s, 2, 0), got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, &in, 1, &out, 1));
        for (int i = 0; i < 4; i++)
            CHECK_MSG(fabs(got[i] - want[i]) <= 1e-12 * (1 + fabs(want[i])), "f64 sum row %d: got %.17g want %.17g", i,
                      got[i], want[i]);
    }
    ops_free_all();
}

TEST(ops_int_dtypes) {
    const rlx_dtype dts[3] = {RLX_I64, RLX_I8, RLX_U8};
    for (int t = 0; t < 3; t++) {
        rlx_dtype dt = dts[t];
        int64_t d2[2] = {test_rand_int(1, 6), test_rand_int(1, 9)};
        ref_shape sx = ref_shape_make(2, d2);
        int64_t n = ref_numel(&sx), rows = d2[0], last = d2[1];
        double lo = dt == RLX_U8 ? 0 : -5, hi = 5;
        double *xa, *xb;
        void *a = rand_typed(dt, n, lo, hi, &xa), *b = rand_typed(dt, n, lo, hi, &xb);
        for (int64_t i = 0; i < n; i++) if (xb[i] == 0) { ref_store(b, dt, i, 3); xb[i] = 3; }
        double *wadd = ops_f64(n), *wmul = ops_f64(n), *wdiv = ops_f64(n), *wmax = ops_f64(n), *wsum = ops_f64(rows),
               *wcum = ops_f64(n);
        int32_t *warg = ops_alloc((size_t)rows * 4), *garg = ops_alloc((size_t)rows * 4);
        ref_binary(REF_ADD, xa, sx, xb, sx, wadd);
        ref_binary(REF_MUL, xa, sx, xb, sx, wmul);
        ref_binary(REF_IDIV, xa, sx, xb, sx, wdiv);
        ref_binary(REF_MAX, xa, sx, xb, sx, wmax);
        ref_reduce(REF_RSUM, xa, sx, 2, wsum);
        ref_cumsum(xa, sx, 1, wcum);
        ref_argreduce(1, xa, sx, 1, warg);
        rlx_graph *g = ops_graph();
        rlx_node an = ops_input(g, "a", dt, sx), bn = ops_input(g, "b", dt, sx);
        CHECK_OK(rlx_output(g, "add", rlx_add(g, an, bn)));
        CHECK_OK(rlx_output(g, "mul", rlx_mul(g, an, bn)));
        CHECK_OK(rlx_output(g, "div", rlx_div(g, an, bn)));
        CHECK_OK(rlx_output(g, "max", rlx_max(g, an, bn)));
        CHECK_OK(rlx_output(g, "sum", rlx_reduce_sum(g, an, 2, 0)));
        CHECK_OK(rlx_output(g, "cum", rlx_cumsum(g, an, 1)));
        CHECK_OK(rlx_output(g, "arg", rlx_argmax(g, an, -1, 0)));
        size_t es = rlx_dtype_size(dt);
        ref_shape sr = ref_shape_make(1, &rows);
        void *gadd = ops_alloc((size_t)n * es), *gmul = ops_alloc((size_t)n * es), *gdiv = ops_alloc((size_t)n * es),
             *gmax = ops_alloc((size_t)n * es), *gsum = ops_alloc((size_t)rows * es), *gcum = ops_alloc((size_t)n * es);
        rlx_tensor in[2] = {ops_tensor("a", dt, sx, a), ops_tensor("b", dt, sx, b)};
        rlx_tensor out[7] = {ops_tensor("add", dt, sx, gadd), ops_tensor("mul", dt, sx, gmul),
                             ops_tensor("div", dt, sx, gdiv), ops_tensor("max", dt, sx, gmax),
                             ops_tensor("sum", dt, sr, gsum), ops_tensor("cum", dt, sx, gcum),
                             ops_tensor("arg", RLX_I32, sr, garg)};
        (void)last;
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 2, out, 7));
            for (int64_t i = 0; i < n; i++) {
                CHECK_MSG(ref_load(gadd, dt, i) == wadd[i] && ref_load(gmul, dt, i) == wmul[i] &&
                          ref_load(gdiv, dt, i) == wdiv[i] && ref_load(gmax, dt, i) == wmax[i] &&
                          ref_load(gcum, dt, i) == wcum[i],
                          "%s [%lld] a=%g b=%g: add %g/%g mul %g/%g div %g/%g max %g/%g cumsum %g/%g", rlx_dtype_name(dt),
                          (long long)i, xa[i], xb[i], ref_load(gadd, dt, i), wadd[i], ref_load(gmul, dt, i), wmul[i],
                          ref_load(gdiv, dt, i), wdiv[i], ref_load(gmax, dt, i), wmax[i], ref_load(gcum, dt, i), wcum[i]);
            }
            for (int64_t r = 0; r < rows; r++)
                CHECK_MSG(ref_load(gsum, dt, r) == wsum[r] && garg[r] == warg[r], "%s row %lld: sum %g/%g argmax %d/%d",
                          rlx_dtype_name(dt), (long long)r, ref_load(gsum, dt, r), wsum[r], garg[r], warg[r]);
        }
        ops_free_all();
    }
}

/* Movement ops are dtype-agnostic copies: every dtype moves bit-exactly. The
 * expected layout comes from running the reference on element indices. */
TEST(ops_movement_all_dtypes) {
    for (int dti = 0; dti < RLX_DTYPE_COUNT; dti++) {
        rlx_dtype dt = (rlx_dtype)dti;
        if (rlx_dtype_is_quantized(dt)) continue;   /* block types are not elementwise data */
        size_t es = rlx_dtype_size(dt);
        int64_t d3[3] = {3, 4, 5};
        ref_shape sx = ref_shape_make(3, d3);
        int64_t n = ref_numel(&sx);
        unsigned char *x = ops_alloc((size_t)n * es);
        for (int64_t i = 0; i < n; i++) {     /* valid values of every dtype, distinct where possible */
            double v = dt == RLX_BOOL ? (double)(i % 2) : dt == RLX_U8 ? (double)(i % 200) : (double)(i % 100) - 50.25;
            ref_store(x, dt, i, v);
        }
        double *idx = ops_f64(n);
        for (int64_t i = 0; i < n; i++) idx[i] = (double)i;

        int perm[3] = {2, 0, 1};
        double *m_t = ops_f64(n), *m_s = ops_f64(n), *m_c = ops_f64(2 * n), *m_e = ops_f64(2 * n), *m_g = ops_f64(n);
        ref_shape st = ref_transpose(idx, sx, perm, m_t);
        ref_shape ss = ref_slice(idx, sx, 2, 1, 5, 2, m_s);
        const double *cat_in[2] = {idx, idx};
        ref_shape cat_s[2] = {sx, sx};
        ref_shape sc = ref_concat(cat_in, cat_s, 2, 1, m_c);
        int64_t de[4] = {2, 3, 4, 5};
        ref_shape se = ref_shape_make(4, de);
        ref_expand(idx, sx, se, m_e);
        int64_t ids64[2] = {2, 0};
        int64_t d2 = 2;
        ref_gather_rows(idx, sx, ids64, 2, m_g);
        ref_shape sgr = ref_shape_make(3, (int64_t[]){2, 4, 5});
        int32_t ids[2] = {2, 0};

        rlx_graph *g = ops_graph();
        rlx_node xn = ops_input(g, "x", dt, sx);
        rlx_node cat[2] = {xn, xn};
        CHECK_OK(rlx_output(g, "t", rlx_transpose(g, xn, perm)));
        CHECK_OK(rlx_output(g, "s", rlx_slice(g, xn, 2, 1, 5, 2)));
        CHECK_OK(rlx_output(g, "c", rlx_concat(g, cat, 2, 1)));
        CHECK_OK(rlx_output(g, "e", rlx_expand(g, xn, 4, de)));
        CHECK_OK(rlx_output(g, "g", rlx_gather_rows(g, xn, ops_input(g, "ids", RLX_I32, ref_shape_make(1, &d2)))));
        rlx_tensor in[2] = {ops_tensor("x", dt, sx, x), ops_tensor("ids", RLX_I32, ref_shape_make(1, &d2), ids)};
        const double *maps[5] = {m_t, m_s, m_c, m_e, m_g};
        ref_shape shapes[5] = {st, ss, sc, se, sgr};
        const char *names[5] = {"t", "s", "c", "e", "g"};
        rlx_tensor out[5];
        for (int o = 0; o < 5; o++) out[o] = ops_tensor(names[o], dt, shapes[o], ops_alloc((size_t)ref_numel(&shapes[o]) * es));
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 2, out, 5));
            for (int o = 0; o < 5; o++) {
                int64_t no = ref_numel(&shapes[o]);
                for (int64_t i = 0; i < no; i++) {
                    int64_t src = (int64_t)maps[o][i];
                    CHECK_MSG(memcmp((char *)out[o].data + i * es, x + src * es, es) == 0,
                              "%s of %s: element %lld should be source %lld (config %s)", names[o], rlx_dtype_name(dt),
                              (long long)i, (long long)src, ops_config_name(cfg));
                }
            }
        }
        ops_free_all();
    }
}
