/*
 * test_ops_edge.c — the documented edge semantics (docs/ops.md): NaN and inf
 * handling (argmax, topk, softmax, relu, cast), fully masked attention rows,
 * integer wrap-around and cast saturation, out-of-range labels, empty tensors;
 * and larger shapes that make the kernels split work across threads.
 */
#include "ops_common.h"
#include <math.h>
#include <string.h>

/* One-input graph helper: builds y = fn(x), runs under every config, copies y. */
typedef rlx_node (*build_fn)(rlx_graph *, rlx_node);

static bool run1(build_fn fn, rlx_dtype in_dt, ref_shape sx, const void *x, rlx_dtype out_dt, ref_shape so, void *y) {
    rlx_graph *g = ops_graph();
    if (rlx_output(g, "y", fn(g, ops_input(g, "x", in_dt, sx))) != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "build: %s", rlx_last_error());
        return false;
    }
    rlx_tensor in = ops_tensor("x", in_dt, sx, (void *)x), out = ops_tensor("y", out_dt, so, y);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++)
        if (!ops_run(g, cfg, &in, 1, &out, 1)) return false;
    return true;
}

static rlx_node b_argmax(rlx_graph *g, rlx_node x) { return rlx_argmax(g, x, -1, 0); }
static rlx_node b_argmin(rlx_graph *g, rlx_node x) { return rlx_argmin(g, x, -1, 0); }
static rlx_node b_softmax(rlx_graph *g, rlx_node x) { return rlx_softmax(g, x, 1); }
static rlx_node b_relu(rlx_graph *g, rlx_node x) { return rlx_relu(g, x); }
static rlx_node b_cast_i32(rlx_graph *g, rlx_node x) { return rlx_cast(g, x, RLX_I32); }
static rlx_node b_cast_i8(rlx_graph *g, rlx_node x) { return rlx_cast(g, x, RLX_I8); }
static rlx_node b_cast_bool(rlx_graph *g, rlx_node x) { return rlx_cast(g, x, RLX_BOOL); }
static rlx_node b_topk_idx(rlx_graph *g, rlx_node x) {
    rlx_node i = RLX_NO_NODE;
    rlx_topk(g, x, 3, NULL, &i);
    return i;
}

TEST(edge_argmax_nan_first) {
    int64_t d[2] = {3, 4}, r = 3;
    float x[12] = {1, NAN, 5, NAN,   2, 2, 2, 2,   -INFINITY, INFINITY, INFINITY, 0};
    int32_t amax[3], amin[3];
    CHECK(run1(b_argmax, RLX_F32, ref_shape_make(2, d), x, RLX_I32, ref_shape_make(1, &r), amax));
    CHECK(run1(b_argmin, RLX_F32, ref_shape_make(2, d), x, RLX_I32, ref_shape_make(1, &r), amin));
    CHECK_MSG(amax[0] == 1 && amin[0] == 1, "NaN row: argmax %d argmin %d, want 1 1 (first NaN)", amax[0], amin[0]);
    CHECK_MSG(amax[1] == 0 && amin[1] == 0, "tie row: %d %d", amax[1], amin[1]);
    CHECK_MSG(amax[2] == 1 && amin[2] == 0, "inf row: %d %d", amax[2], amin[2]);
    ops_free_all();
}

TEST(edge_topk_nan_and_ties) {
    int64_t d[2] = {2, 5}, dk[2] = {2, 3};
    float x[10] = {1, NAN, 3, INFINITY, 3,   0.0f, -0.0f, 7, 0.0f, -1};
    int32_t idx[6];
    CHECK(run1(b_topk_idx, RLX_F32, ref_shape_make(2, d), x, RLX_I32, ref_shape_make(2, dk), idx));
    CHECK_MSG(idx[0] == 1 && idx[1] == 3 && idx[2] == 2, "row 0: %d %d %d, want 1 3 2", idx[0], idx[1], idx[2]);
    CHECK_MSG(idx[3] == 2 && idx[4] == 0 && idx[5] == 1, "row 1 (+0/-0 tie): %d %d %d, want 2 0 1", idx[3], idx[4], idx[5]);
    ops_free_all();
}

TEST(edge_softmax_inf_nan_rows) {
    int64_t d[2] = {4, 3};
    float x[12] = {0, -INFINITY, 1,   -INFINITY, -INFINITY, -INFINITY,   0, NAN, 1,   2, 2, 2}, y[12];
    CHECK(run1(b_softmax, RLX_F32, ref_shape_make(2, d), x, RLX_F32, ref_shape_make(2, d), y));
    double e = exp(1.0);
    CHECK_MSG(fabs(y[0] - 1 / (1 + e)) < 1e-6 && y[1] == 0 && fabs(y[2] - e / (1 + e)) < 1e-6, "row with -inf: %g %g %g",
              (double)y[0], (double)y[1], (double)y[2]);
    CHECK_MSG(isnan(y[3]) && isnan(y[4]) && isnan(y[5]), "all -inf row: %g %g %g (want NaN)", (double)y[3], (double)y[4],
              (double)y[5]);
    CHECK_MSG(isnan(y[6]) && isnan(y[7]) && isnan(y[8]), "NaN row: %g %g %g (want NaN)", (double)y[6], (double)y[7], (double)y[8]);
    CHECK(fabs(y[9] - 1.0 / 3) < 1e-7 && fabs(y[11] - 1.0 / 3) < 1e-7);
    ops_free_all();
}

TEST(edge_relu_nan_and_cast_saturation) {
    int64_t d[1] = {8};
    ref_shape s = ref_shape_make(1, d);
    float x[8] = {NAN, -1, 1, 3e9f, -3e9f, 200.7f, -200.7f, -0.9f}, y[8];
    int32_t i32[8];
    int8_t i8[8];
    uint8_t b[8];
    CHECK(run1(b_relu, RLX_F32, s, x, RLX_F32, s, y));
    CHECK_MSG(isnan(y[0]) && y[1] == 0 && y[2] == 1, "relu: %g %g %g", (double)y[0], (double)y[1], (double)y[2]);
    CHECK(run1(b_cast_i32, RLX_F32, s, x, RLX_I32, s, i32));
    CHECK_MSG(i32[0] == 0 && i32[3] == INT32_MAX && i32[4] == INT32_MIN && i32[5] == 200 && i32[6] == -200 && i32[7] == 0,
              "f32->i32: NaN %d, 3e9 %d, -3e9 %d, 200.7 %d, -200.7 %d, -0.9 %d", i32[0], i32[3], i32[4], i32[5], i32[6], i32[7]);
    CHECK(run1(b_cast_i8, RLX_F32, s, x, RLX_I8, s, i8));
    CHECK_MSG(i8[5] == 127 && i8[6] == -128 && i8[1] == -1, "f32->i8 saturation: %d %d", i8[5], i8[6]);
    CHECK(run1(b_cast_bool, RLX_F32, s, x, RLX_BOOL, s, b));
    CHECK_MSG(b[0] == 1 && b[1] == 1 && b[7] == 1, "f32->bool: NaN %d, -1 %d, -0.9 %d", b[0], b[1], b[7]);
    ops_free_all();
}

TEST(edge_int_wraparound) {
    int64_t d[1] = {4};
    ref_shape s = ref_shape_make(1, d);
    int32_t a[4] = {INT32_MAX, INT32_MIN, 100000, INT32_MIN}, b[4] = {1, -1, 100000, 1}, add[4], mul[4], ab[4];
    rlx_graph *g = ops_graph();
    rlx_node an = ops_input(g, "a", RLX_I32, s), bn = ops_input(g, "b", RLX_I32, s);
    CHECK_OK(rlx_output(g, "add", rlx_add(g, an, bn)));
    CHECK_OK(rlx_output(g, "mul", rlx_mul(g, an, bn)));
    CHECK_OK(rlx_output(g, "abs", rlx_abs(g, an)));
    rlx_tensor in[2] = {ops_tensor("a", RLX_I32, s, a), ops_tensor("b", RLX_I32, s, b)};
    rlx_tensor out[3] = {ops_tensor("add", RLX_I32, s, add), ops_tensor("mul", RLX_I32, s, mul), ops_tensor("abs", RLX_I32, s, ab)};
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, in, 2, out, 3));
        CHECK_MSG(add[0] == INT32_MIN && add[1] == INT32_MAX, "add wrap: %d %d", add[0], add[1]);
        CHECK_MSG(mul[2] == (int32_t)1410065408 && mul[1] == INT32_MIN, "mul wrap: %d %d", mul[2], mul[1]);
        CHECK_MSG(ab[3] == INT32_MIN, "abs(INT_MIN) = %d", ab[3]);
    }
    ops_free_all();
}

/* A row whose scores are all -inf (additive mask) gives zeros; causal with Sq > Skv is a build error. */
TEST(edge_attention_fully_masked_rows) {
    int64_t dq[4] = {1, 1, 4, 2}, dk[4] = {1, 1, 2, 2};
    ref_shape sq = ref_shape_make(4, dq), sk = ref_shape_make(4, dk);
    float q[8], k[4], v[4], y[8];
    test_fill_uniform_f32(q, 8, -1, 1);
    test_fill_uniform_f32(k, 4, -1, 1);
    test_fill_uniform_f32(v, 4, 1, 2);
    double want[8];
    double q64[8], k64[4], v64[4];
    for (int i = 0; i < 8; i++) q64[i] = q[i];
    for (int i = 0; i < 4; i++) { k64[i] = k[i]; v64[i] = v[i]; }
    /* causal with Sq > Skv would leave rows with no visible key: rejected at build time */
    rlx_graph *g = ops_graph();
    rlx_node bad = rlx_attention(g, ops_input(g, "q", RLX_F32, sq), ops_input(g, "k", RLX_F32, sk),
                                 ops_input(g, "v", RLX_F32, sk), RLX_MASK_CAUSAL, RLX_NO_NODE, 0);
    CHECK(bad == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_SHAPE);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    rlx_tensor in[3] = {ops_tensor("q", RLX_F32, sq, q), ops_tensor("k", RLX_F32, sk, k), ops_tensor("v", RLX_F32, sk, v)};
    rlx_tensor out = ops_tensor("y", RLX_F32, sq, y);
    /* additive: the second query row all -inf */
    int64_t dm[2] = {4, 2};
    float m[8] = {0, 0, -INFINITY, -INFINITY, 0, -1, 0, 0};
    rlx_graph *g2 = ops_graph();
    CHECK_OK(rlx_output(g2, "y", rlx_attention(g2, ops_input(g2, "q", RLX_F32, sq), ops_input(g2, "k", RLX_F32, sk),
                                               ops_input(g2, "v", RLX_F32, sk), RLX_MASK_ADDITIVE,
                                               ops_input(g2, "m", RLX_F32, ref_shape_make(2, dm)), 0)));
    rlx_tensor in2[4] = {in[0], in[1], in[2], ops_tensor("m", RLX_F32, ref_shape_make(2, dm), m)};
    double m64[8];
    for (int i = 0; i < 8; i++) m64[i] = m[i];
    ref_attention(q64, k64, v64, 1, 1, 1, 4, 2, 2, RLX_MASK_ADDITIVE, m64, ref_shape_make(2, dm), 0, want);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g2, cfg, in2, 4, &out, 1));
        CHECK_MSG(y[2] == 0 && y[3] == 0, "all -inf row: %g %g", (double)y[2], (double)y[3]);
        CHECK_CLOSE("additive rows", y, want, 8, 1e-6);
    }
    CHECK_MSG(strstr(msg, "causal") || strstr(msg, "Sq"), "message does not say why (causal needs Sq <= Skv): '%s'", msg);
    ops_free_all();
}

TEST(edge_cross_entropy_label_out_of_range) {
    int64_t dl[2] = {2, 3}, n = 2;
    float logits[6] = {0};
    int32_t labels[2] = {1, 3};
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "loss", rlx_softmax_cross_entropy(g, ops_input(g, "l", RLX_F32, ref_shape_make(2, dl)),
                                                             ops_input(g, "y", RLX_I32, ref_shape_make(1, &n)))));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    rlx_tensor in[2] = {ops_tensor("l", RLX_F32, ref_shape_make(2, dl), logits), ops_tensor("y", RLX_I32, ref_shape_make(1, &n), labels)};
    rlx_status st = rlx_exec_run(e, in, 2);
    rlx_exec_free(e);
    CHECK_STATUS(st, RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

/* Zero-size dims flow through elementwise, matmul (K = 0 gives bias/zeros) and reductions. */
TEST(edge_empty_tensors) {
    int64_t d0[2] = {0, 3}, dk0a[2] = {2, 0}, dk0b[2] = {0, 3}, d23[2] = {2, 3}, d3[1] = {3};
    float dummy[1] = {0}, mm[6], sum[3];
    rlx_graph *g = ops_graph();
    rlx_node x = ops_input(g, "x", RLX_F32, ref_shape_make(2, d0));
    CHECK_OK(rlx_output(g, "e", rlx_exp(g, x)));
    CHECK_OK(rlx_output(g, "s", rlx_reduce_sum(g, x, 1, 0)));        /* sum over empty axis: 0 */
    CHECK_OK(rlx_output(g, "mm", rlx_matmul(g, ops_input(g, "a", RLX_F32, ref_shape_make(2, dk0a)),
                                            ops_input(g, "b", RLX_F32, ref_shape_make(2, dk0b)), 0)));
    rlx_tensor in[3] = {ops_tensor("x", RLX_F32, ref_shape_make(2, d0), dummy),
                        ops_tensor("a", RLX_F32, ref_shape_make(2, dk0a), dummy),
                        ops_tensor("b", RLX_F32, ref_shape_make(2, dk0b), dummy)};
    rlx_tensor out[3] = {ops_tensor("e", RLX_F32, ref_shape_make(2, d0), dummy),
                         ops_tensor("s", RLX_F32, ref_shape_make(1, d3), sum),
                         ops_tensor("mm", RLX_F32, ref_shape_make(2, d23), mm)};
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, in, 3, out, 3));
        for (int i = 0; i < 3; i++) CHECK_MSG(sum[i] == 0, "empty sum [%d] = %g", i, (double)sum[i]);
        for (int i = 0; i < 6; i++) CHECK_MSG(mm[i] == 0, "K=0 matmul [%d] = %g", i, (double)mm[i]);
    }
    ops_free_all();
}

/* Shapes big enough that kernels split work across threads (threads=2 config). */
TEST(edge_large_threaded) {
    int64_t d[2] = {96, 1031};
    ref_shape s = ref_shape_make(2, d), sr = ref_shape_make(1, d);
    int64_t n = ref_numel(&s);
    float *x = ops_rand_f32(n, -3, 3), *gm = ops_rand_f32(d[1], 0.5, 1.5);
    double *dx = ops_f32_to_f64(x, n), *wsm = ops_f64(n), *wln = ops_f64(n), *wsum = ops_f64(d[0]), *wcol = ops_f64(d[1]),
           *wgelu = ops_f64(n);
    int32_t *warg = ops_alloc((size_t)d[0] * 4), *garg = ops_alloc((size_t)d[0] * 4);
    ref_softmax(dx, s, 1, 0, wsm);
    ref_norm(0, dx, s, ops_f32_to_f64(gm, d[1]), NULL, 1e-5, wln);
    ref_reduce(REF_RSUM, dx, s, 2, wsum);
    ref_reduce(REF_RMAX, dx, s, 1, wcol);
    ref_unary(REF_GELU, dx, n, wgelu);
    ref_argreduce(1, dx, s, 1, warg);
    rlx_graph *g = ops_graph();
    rlx_node xn = ops_input(g, "x", RLX_F32, s), gn = ops_input(g, "g", RLX_F32, ref_shape_make(1, &d[1]));
    CHECK_OK(rlx_output(g, "sm", rlx_softmax(g, xn, 1)));
    CHECK_OK(rlx_output(g, "ln", rlx_layer_norm(g, xn, gn, RLX_NO_NODE, 1e-5f)));
    CHECK_OK(rlx_output(g, "sum", rlx_reduce_sum(g, xn, 2, 0)));
    CHECK_OK(rlx_output(g, "col", rlx_reduce_max(g, xn, 1, 0)));
    CHECK_OK(rlx_output(g, "gelu", rlx_gelu(g, xn)));
    CHECK_OK(rlx_output(g, "arg", rlx_argmax(g, xn, 1, 0)));
    float *gsm = ops_f32(n), *gln = ops_f32(n), *gsum = ops_f32(d[0]), *gcol = ops_f32(d[1]), *ggelu = ops_f32(n);
    rlx_tensor in[2] = {ops_tensor("x", RLX_F32, s, x), ops_tensor("g", RLX_F32, ref_shape_make(1, &d[1]), gm)};
    rlx_tensor out[6] = {ops_tensor("sm", RLX_F32, s, gsm), ops_tensor("ln", RLX_F32, s, gln),
                         ops_tensor("sum", RLX_F32, sr, gsum), ops_tensor("col", RLX_F32, ref_shape_make(1, &d[1]), gcol),
                         ops_tensor("gelu", RLX_F32, s, ggelu), ops_tensor("arg", RLX_I32, sr, garg)};
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, in, 2, out, 6));
        CHECK_CLOSE("softmax", gsm, wsm, n, 1e-5);
        CHECK_CLOSE("layer_norm", gln, wln, n, 1e-5);
        CHECK_CLOSE("row sum", gsum, wsum, d[0], 1e-5);
        CHECK_CLOSE("col max", gcol, wcol, d[1], 0);
        CHECK_CLOSE("gelu", ggelu, wgelu, n, 1e-5);
        CHECK(memcmp(garg, warg, (size_t)d[0] * 4) == 0);
    }
    /* attention with many queries and keys */
    int64_t da[4] = {2, 4, 150, 64}, dkv[4] = {2, 2, 150, 64};
    ref_shape sq = ref_shape_make(4, da), sk = ref_shape_make(4, dkv);
    int64_t nq = ref_numel(&sq), nk = ref_numel(&sk);
    float *q = ops_rand_f32(nq, -1, 1), *k = ops_rand_f32(nk, -1, 1), *v = ops_rand_f32(nk, -1, 1), *y = ops_f32(nq);
    double *want = ops_f64(nq);
    ref_attention(ops_f32_to_f64(q, nq), ops_f32_to_f64(k, nk), ops_f32_to_f64(v, nk), 2, 4, 2, 150, 150, 64,
                  RLX_MASK_CAUSAL, NULL, sq, 0, want);
    rlx_graph *g2 = ops_graph();
    CHECK_OK(rlx_output(g2, "y", rlx_attention(g2, ops_input(g2, "q", RLX_F32, sq), ops_input(g2, "k", RLX_F32, sk),
                                               ops_input(g2, "v", RLX_F32, sk), RLX_MASK_CAUSAL, RLX_NO_NODE, 0)));
    rlx_tensor ain[3] = {ops_tensor("q", RLX_F32, sq, q), ops_tensor("k", RLX_F32, sk, k), ops_tensor("v", RLX_F32, sk, v)};
    rlx_tensor aout = ops_tensor("y", RLX_F32, sq, y);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g2, cfg, ain, 3, &aout, 1));
        CHECK_CLOSE("attention 150x150", y, want, nq, 1e-5);
    }
    ops_free_all();
}

/* fma rounds once: (1+2^-12)^2 - (1+2^-11) = 2^-24 exactly, but 0 if a*b is rounded first. */
TEST(edge_fma_single_rounding) {
    int64_t d[1] = {1};
    ref_shape s = ref_shape_make(1, d);
    float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f), y = NAN;
    rlx_graph *g = ops_graph();
    rlx_node an = ops_input(g, "a", RLX_F32, s);
    CHECK_OK(rlx_output(g, "y", rlx_fma(g, an, an, ops_input(g, "c", RLX_F32, s))));
    rlx_tensor in[2] = {ops_tensor("a", RLX_F32, s, &a), ops_tensor("c", RLX_F32, s, &c)};
    rlx_tensor out = ops_tensor("y", RLX_F32, s, &y);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, in, 2, &out, 1));
        CHECK_MSG(y == 0x1p-24f, "fma gave %a, want 0x1p-24 (config %s)", (double)y, ops_config_name(cfg));
    }
    ops_free_all();
}

/* max/min over an empty axis have no identity: a run-time error, not garbage. */
TEST(edge_reduce_max_empty_axis) {
    int64_t d[2] = {3, 0}, r = 3;
    float dummy[1] = {0}, y[3];
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_reduce_max(g, ops_input(g, "x", RLX_F32, ref_shape_make(2, d)), 2, 0)));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    rlx_tensor in = ops_tensor("x", RLX_F32, ref_shape_make(2, d), dummy);
    rlx_status st = rlx_exec_run(e, &in, 1);
    rlx_exec_free(e);
    (void)y;
    (void)r;
    CHECK_STATUS(st, RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}
