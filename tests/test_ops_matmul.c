/*
 * test_ops_matmul.c — matmul (2-D, batched with broadcast batch dims of
 * different ranks, transpose_b, transpose_a (rlx_matmul_ex), odd and
 * SIMD-tail sizes, long K) and
 * matmul_bias_act (every activation, with and without bias, weights as
 * params) against the float64 reference under every test configuration.
 */
#include "ops_common.h"
#include <stdlib.h>
#include <string.h>

/* flags: bit 0 transpose_b, bit 1 transpose_a (RLX_MATMUL_TRANSPOSE_*);
 * with transpose_a the graph is built with rlx_matmul_ex. */
static bool run_matmul_case(ref_shape sa, ref_shape sb, int flags, int with_bias, rlx_activation act,
                            int fused_api, double tol) {
    ref_shape so;
    int transpose_b = (flags & RLX_MATMUL_TRANSPOSE_B) != 0, ta = (flags & RLX_MATMUL_TRANSPOSE_A) != 0;
    int64_t N = transpose_b ? sb.d[sb.rank - 2] : sb.d[sb.rank - 1];
    int64_t na = ref_numel(&sa), nb = ref_numel(&sb);
    float *a = ops_rand_f32(na, -1, 1), *b = ops_rand_f32(nb, -1, 1), *bias = ops_rand_f32(N, -1, 1);
    int64_t max_out = 1;
    for (int i = 0; i < sa.rank - 2; i++) max_out *= sa.d[i] > 1 ? sa.d[i] : 1;
    for (int i = 0; i < sb.rank - 2; i++) max_out *= sb.d[i] > 1 ? sb.d[i] : 1;
    max_out *= sa.d[sa.rank - (ta ? 1 : 2)] * N;
    double *want = ops_f64(max_out);
    if (!ref_matmul_ex(ops_f32_to_f64(a, na), sa, ops_f32_to_f64(b, nb), sb, (unsigned)flags,
                    with_bias ? ops_f32_to_f64(bias, N) : NULL, act, want, &so)) {
        harness_fail(__FILE__, __LINE__, "test bug: shapes do not matmul");
        return false;
    }
    int64_t no = ref_numel(&so);
    int64_t dn = N;
    ref_shape sbias = ref_shape_make(1, &dn);

    rlx_graph *g = ops_graph();
    rlx_node an = ops_input(g, "a", RLX_F32, sa), bn = ops_input(g, "b", RLX_F32, sb);
    rlx_node biasn = with_bias ? ops_input(g, "bias", RLX_F32, sbias) : RLX_NO_NODE;
    rlx_node y;
    if (fused_api) {
        y = ta ? rlx_matmul_ex(g, an, bn, (unsigned)flags, biasn, act) : rlx_matmul_bias_act(g, an, bn, transpose_b, biasn, act);
    } else {
        y = ta ? rlx_matmul_ex(g, an, bn, (unsigned)flags, RLX_NO_NODE, RLX_ACT_NONE) : rlx_matmul(g, an, bn, transpose_b);
        if (with_bias) y = rlx_add(g, y, biasn);
        switch (act) {
        case RLX_ACT_NONE: break;
        case RLX_ACT_RELU: y = rlx_relu(g, y); break;
        case RLX_ACT_GELU: y = rlx_gelu(g, y); break;
        case RLX_ACT_GELU_TANH: y = rlx_gelu_tanh(g, y); break;
        case RLX_ACT_SILU: y = rlx_silu(g, y); break;
        case RLX_ACT_SIGMOID: y = rlx_sigmoid(g, y); break;
        case RLX_ACT_TANH: y = rlx_tanh(g, y); break;
        }
    }
    rlx_status st = rlx_output(g, "y", y);
    if (st != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "building matmul graph: %s: %s", rlx_status_name(st), rlx_last_error());
        return false;
    }
    rlx_tensor in[3] = {ops_tensor("a", RLX_F32, sa, a), ops_tensor("b", RLX_F32, sb, b),
                        ops_tensor("bias", RLX_F32, sbias, bias)};
    float *got = ops_f32(no);
    rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        if (!ops_run(g, cfg, in, with_bias ? 3 : 2, &out, 1)) return false;
        if (!test_close_f32_f64("matmul", got, want, no, tol)) {
            harness_fail(__FILE__, __LINE__, "matmul a rank %d [..%lld,%lld] b rank %d transpose_a %d transpose_b %d "
                         "bias %d act %d fused_api %d (config %s)", sa.rank, (long long)sa.d[sa.rank - 2],
                         (long long)sa.d[sa.rank - 1], sb.rank, ta, transpose_b, with_bias, (int)act, fused_api,
                         ops_config_name(cfg));
            return false;
        }
    }
    return true;
}

static ref_shape mk(int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    int64_t d[4] = {d0, d1, d2, d3};
    return ref_shape_make(rank, d);
}

TEST(ops_matmul_2d) {
    static const int64_t sizes[] = {1, 3, 7, 16, 17, 33, 64, 65};
    for (int c = 0; c < 10; c++) {
        int64_t M = sizes[test_rand_int(0, 7)], K = sizes[test_rand_int(0, 7)], N = sizes[test_rand_int(0, 7)];
        int tb = c % 2;
        ref_shape sa = mk(2, M, K, 0, 0), sb = tb ? mk(2, N, K, 0, 0) : mk(2, K, N, 0, 0);
        CHECK(run_matmul_case(sa, sb, tb, 0, RLX_ACT_NONE, 0, 1e-5));
        ops_free_all();
    }
}

TEST(ops_matmul_tails) {
    /* shapes around typical register-block sizes */
    static const int64_t mkn[][3] = {{1, 1, 1}, {1, 64, 129}, {5, 9, 31}, {6, 16, 32}, {13, 48, 24},
                                     {31, 7, 47}, {97, 33, 65}, {128, 64, 96}};
    for (size_t c = 0; c < sizeof mkn / sizeof mkn[0]; c++) {
        for (int tb = 0; tb < 2; tb++) {
            ref_shape sa = mk(2, mkn[c][0], mkn[c][1], 0, 0);
            ref_shape sb = tb ? mk(2, mkn[c][2], mkn[c][1], 0, 0) : mk(2, mkn[c][1], mkn[c][2], 0, 0);
            CHECK(run_matmul_case(sa, sb, tb, 0, RLX_ACT_NONE, 0, 1e-5));
        }
        ops_free_all();
    }
}

TEST(ops_matmul_batched_broadcast) {
    /* a batch dims / b batch dims (possibly of different rank and with 1s) */
    struct { int ra; int64_t a[2]; int rb; int64_t b[2]; } bs[] = {
        {1, {3, 0}, 1, {3, 0}}, {2, {2, 3}, 1, {3, 0}}, {1, {4, 0}, 0, {0, 0}}, {0, {0, 0}, 1, {5, 0}},
        {2, {2, 1}, 2, {1, 3}}, {2, {1, 3}, 1, {1, 0}}, {1, {1, 0}, 2, {2, 2}},
    };
    for (size_t c = 0; c < sizeof bs / sizeof bs[0]; c++) {
        int64_t M = test_rand_int(1, 9), K = test_rand_int(1, 20), N = test_rand_int(1, 19);
        int tb = (int)(c % 2);
        ref_shape sa, sb;
        memset(&sa, 0, sizeof sa);
        memset(&sb, 0, sizeof sb);
        sa.rank = bs[c].ra + 2;
        for (int i = 0; i < bs[c].ra; i++) sa.d[i] = bs[c].a[i];
        sa.d[bs[c].ra] = M;
        sa.d[bs[c].ra + 1] = K;
        sb.rank = bs[c].rb + 2;
        for (int i = 0; i < bs[c].rb; i++) sb.d[i] = bs[c].b[i];
        sb.d[bs[c].rb] = tb ? N : K;
        sb.d[bs[c].rb + 1] = tb ? K : N;
        CHECK(run_matmul_case(sa, sb, tb, 0, RLX_ACT_NONE, 0, 1e-5));
    }
    ops_free_all();
}

TEST(ops_matmul_long_k) {
    /* K = 4096: f32 accumulation error grows ~ sqrt(K) ulp; 1e-4 still catches any real bug */
    CHECK(run_matmul_case(mk(2, 3, 4096, 0, 0), mk(2, 4096, 5, 0, 0), 0, 0, RLX_ACT_NONE, 0, 1e-4));
    CHECK(run_matmul_case(mk(2, 2, 4099, 0, 0), mk(2, 7, 4099, 0, 0), 1, 0, RLX_ACT_NONE, 0, 1e-4));
    ops_free_all();
}

TEST(ops_matmul_bias_act) {
    static const rlx_activation acts[] = {RLX_ACT_NONE, RLX_ACT_RELU, RLX_ACT_GELU, RLX_ACT_GELU_TANH,
                                          RLX_ACT_SILU, RLX_ACT_SIGMOID, RLX_ACT_TANH};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        for (int bias = 0; bias < 2; bias++) {
            int64_t M = test_rand_int(1, 20), K = test_rand_int(1, 40), N = test_rand_int(1, 40);
            int tb = (int)test_rand_int(0, 1);
            ref_shape sa = (i % 2) ? mk(3, 2, M, K, 0) : mk(2, M, K, 0, 0);
            ref_shape sb = tb ? mk(2, N, K, 0, 0) : mk(2, K, N, 0, 0);
            CHECK(run_matmul_case(sa, sb, tb, bias, acts[i], 1, 1e-5));
            /* the unfused spelling, which the optimizer may fuse */
            CHECK(run_matmul_case(sa, sb, tb, bias, acts[i], 0, 1e-5));
        }
        ops_free_all();
    }
}

/* A linear layer with its weight as a param [N, K] (transpose_b). */
TEST(ops_matmul_param_weight) {
    int64_t S = 7, K = 33, N = 17;
    int64_t dx[2] = {S, K}, dw[2] = {N, K}, db[1] = {N}, dy[2] = {S, N};
    float *x = ops_rand_f32(S * K, -1, 1), *w = ops_rand_f32(N * K, -1, 1), *b = ops_rand_f32(N, -1, 1);
    double *want = ops_f64(S * N);
    ref_shape sx = ref_shape_make(2, dx), sw = ref_shape_make(2, dw);
    CHECK(ref_matmul(ops_f32_to_f64(x, S * K), sx, ops_f32_to_f64(w, N * K), sw, 1, ops_f32_to_f64(b, N),
                     RLX_ACT_GELU, want, NULL));
    rlx_graph *g = ops_graph();
    rlx_node y = rlx_matmul_bias_act(g, rlx_input(g, "x", RLX_F32, 2, dx), rlx_param(g, "w", RLX_F32, 2, dw), 1,
                                     rlx_param(g, "b", RLX_F32, 1, db), RLX_ACT_GELU);
    CHECK_OK(rlx_output(g, "y", y));
    rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
    float *got = ops_f32(S * N);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        rlx_compile_options o;
        ops_config_options(cfg, &o);
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, &o, &e));
        rlx_status st = rlx_exec_set_param_f32(e, "w", w, (size_t)(N * K));
        if (st == RLX_OK) st = rlx_exec_set_param(e, "b", RLX_F32, b, (size_t)N * sizeof(float));
        if (st == RLX_OK) st = rlx_exec_run(e, &in, 1);
        rlx_tensor t;
        memset(&t, 0, sizeof t);
        if (st == RLX_OK) st = rlx_exec_output(e, "y", &t);
        if (st == RLX_OK && (t.rank != 2 || t.dims[0] != dy[0] || t.dims[1] != dy[1] || t.dtype != RLX_F32))
            st = RLX_STATUS_INTERNAL;
        if (st == RLX_OK) memcpy(got, t.data, (size_t)(S * N) * sizeof(float));
        rlx_exec_free(e);
        CHECK_OK(st);
        CHECK_CLOSE("linear", got, want, S * N, 1e-5);
    }
    ops_free_all();
}

/* transpose_a (rlx_matmul_ex): a stored [..., K, M], with and without
 * transpose_b, 2-D tails, batches with broadcast, bias + activation fused
 * by the API and by the optimizer, M = 1, long K. */
TEST(ops_matmul_transpose_a) {
    static const int64_t sizes[] = {1, 3, 4, 7, 16, 17, 33, 64, 65, 130};
    for (int c = 0; c < 16; c++) {
        int64_t M = sizes[test_rand_int(0, 9)], K = sizes[test_rand_int(0, 9)], N = sizes[test_rand_int(0, 9)];
        int tb = c % 2;
        ref_shape sa = mk(2, K, M, 0, 0), sb = tb ? mk(2, N, K, 0, 0) : mk(2, K, N, 0, 0);
        CHECK(run_matmul_case(sa, sb, RLX_MATMUL_TRANSPOSE_A | (tb ? RLX_MATMUL_TRANSPOSE_B : 0), 0, RLX_ACT_NONE, 0, 1e-5));
        ops_free_all();
    }
    /* batches: a [2, 3, K, M] x b [3, K, N], a [4, K, M] x b [K, N] (no folding into M), a [K, M] x b [5, N, K] */
    int64_t M = test_rand_int(1, 19), K = test_rand_int(1, 23), N = test_rand_int(1, 21);
    int64_t d4[4] = {2, 3, K, M};
    CHECK(run_matmul_case(ref_shape_make(4, d4), mk(3, 3, K, N, 0), RLX_MATMUL_TRANSPOSE_A, 0, RLX_ACT_NONE, 0, 1e-5));
    CHECK(run_matmul_case(mk(3, 4, K, M, 0), mk(2, K, N, 0, 0), RLX_MATMUL_TRANSPOSE_A, 0, RLX_ACT_NONE, 0, 1e-5));
    CHECK(run_matmul_case(mk(2, K, M, 0, 0), mk(3, 5, N, K, 0), RLX_MATMUL_TRANSPOSE_A | RLX_MATMUL_TRANSPOSE_B, 0,
                          RLX_ACT_NONE, 0, 1e-5));
    /* bias + activation: rlx_matmul_ex's own, and matmul + add + act for the fusion pass */
    static const rlx_activation acts[] = {RLX_ACT_NONE, RLX_ACT_RELU, RLX_ACT_GELU, RLX_ACT_SILU, RLX_ACT_TANH};
    for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
        int64_t m = test_rand_int(1, 20), k = test_rand_int(1, 40), n = test_rand_int(1, 40);
        int tb = (int)test_rand_int(0, 1), flags = RLX_MATMUL_TRANSPOSE_A | (tb ? RLX_MATMUL_TRANSPOSE_B : 0);
        ref_shape sa = (i % 2) ? mk(3, 2, k, m, 0) : mk(2, k, m, 0, 0);
        ref_shape sb = tb ? mk(2, n, k, 0, 0) : mk(2, k, n, 0, 0);
        CHECK(run_matmul_case(sa, sb, flags, 1, acts[i], 1, 1e-5));
        CHECK(run_matmul_case(sa, sb, flags, 1, acts[i], 0, 1e-5));
        CHECK(run_matmul_case(sa, sb, flags, 0, acts[i], 1, 1e-5));
        ops_free_all();
    }
    /* a weight gradient's shape: X [T, Din] as a, dY [T, Dout]: dW = X^T dY [Din, Dout] */
    CHECK(run_matmul_case(mk(2, 96, 40, 0, 0), mk(2, 96, 24, 0, 0), RLX_MATMUL_TRANSPOSE_A, 0, RLX_ACT_NONE, 0, 1e-5));
    CHECK(run_matmul_case(mk(2, 4099, 3, 0, 0), mk(2, 5, 4099, 0, 0), RLX_MATMUL_TRANSPOSE_A | RLX_MATMUL_TRANSPOSE_B, 0,
                          RLX_ACT_NONE, 0, 1e-4));
    ops_free_all();
}

/* rlx_matmul_ex's shape rule and flags: the inner dims are a's rows under
 * transpose_a, unknown flag bits are refused, and no flags / no bias / no
 * act is a plain matmul node. */
TEST(ops_matmul_ex_api) {
    rlx_graph *g = ops_graph();
    int64_t da[2] = {5, 3}, db[2] = {5, 4}, dbt[2] = {4, 5};
    rlx_node a = rlx_input(g, "a", RLX_F32, 2, da), b = rlx_input(g, "b", RLX_F32, 2, db),
             bt = rlx_input(g, "bt", RLX_F32, 2, dbt);
    CHECK(rlx_matmul_ex(g, a, b, RLX_MATMUL_TRANSPOSE_A, RLX_NO_NODE, RLX_ACT_NONE) != RLX_NO_NODE);
    CHECK(rlx_matmul_ex(g, a, bt, RLX_MATMUL_TRANSPOSE_A | RLX_MATMUL_TRANSPOSE_B, RLX_NO_NODE, RLX_ACT_RELU) != RLX_NO_NODE);
    char *d = rlx_graph_dump(g);
    CHECK_MSG(d && strstr(d, "matmul(%0, %1)") && strstr(d, "f32[3,4]") && strstr(d, "transpose_a=1") &&
                  strstr(d, "matmul_bias_act(%0, %2)"),
              "dump:\n%s", d ? d : "(null)");
    free(d);
    CHECK_OK(rlx_graph_status(g));
    /* a [5, 3] as [K, M] = 5 x 3 against b [K, N] with K = 4: inner dims differ */
    CHECK(rlx_matmul_ex(g, a, bt, RLX_MATMUL_TRANSPOSE_A, RLX_NO_NODE, RLX_ACT_NONE) == RLX_NO_NODE);
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE && strstr(rlx_last_error(), "(a transposed)"));
    rlx_graph *g2 = ops_graph();
    rlx_node a2 = rlx_input(g2, "a", RLX_F32, 2, da), b2 = rlx_input(g2, "b", RLX_F32, 2, db);
    CHECK(rlx_matmul_ex(g2, a2, b2, 4u, RLX_NO_NODE, RLX_ACT_NONE) == RLX_NO_NODE);
    CHECK(rlx_graph_status(g2) == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "unknown flags 0x4"));
    ops_free_all();
}
