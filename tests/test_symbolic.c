/*
 * test_symbolic.c — graphs with symbolic dims (rlx_symbol): compiled once, run
 * at several bindings with results checked against the float64 reference;
 * the specialization cache (rlx_exec_get_stats) grows once per new binding;
 * inputs that violate a symbol at bind time (two inputs sharing "seq" with
 * different sizes) fail with RLX_STATUS_SHAPE and leave the exec usable;
 * rlx_exec_prepare compiles a binding ahead of its first run.
 */
#include "ops_common.h"
#include <math.h>
#include <string.h>

static int specializations(const rlx_exec *e) {
    rlx_exec_stats st;
    memset(&st, 0, sizeof st);
    if (rlx_exec_get_stats(e, &st) != RLX_OK) return -1;
    return st.specializations;
}

/* y = softmax(x @ W^T + b) over the last axis, x [seq, 16], W param [8, 16]. */
TEST(symbolic_linear_softmax) {
    rlx_graph *g = ops_graph();
    int64_t seq = rlx_symbol(g, "seq");
    CHECK(seq <= -2);
    int64_t dx[2] = {seq, 16}, dw[2] = {8, 16}, db[1] = {8};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, dx);
    rlx_node y = rlx_softmax(g, rlx_matmul_bias_act(g, x, rlx_param(g, "w", RLX_F32, 2, dw), 1,
                                                    rlx_param(g, "b", RLX_F32, 1, db), RLX_ACT_NONE), 1);
    CHECK_OK(rlx_output(g, "y", y));
    rlx_dtype dt;
    int rank;
    int64_t dims[RLX_MAX_RANK];
    CHECK_OK(rlx_node_shape(g, y, &dt, &rank, dims));
    CHECK(dt == RLX_F32 && rank == 2 && dims[0] == seq && dims[1] == 8);

    float *w = ops_rand_f32(8 * 16, -1, 1), *b = ops_rand_f32(8, -1, 1);
    ref_shape sw = ref_shape_make(2, dw);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        rlx_compile_options o;
        ops_config_options(cfg, &o);
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, &o, &e));
        rlx_tensor info;
        rlx_status st = rlx_exec_input_info(e, 0, &info);
        int info_ok = st == RLX_OK && info.rank == 2 && info.dims[0] == seq && info.dims[1] == 16;
        if (st == RLX_OK) st = rlx_exec_set_param_f32(e, "w", w, 8 * 16);
        if (st == RLX_OK) st = rlx_exec_set_param_f32(e, "b", b, 8);
        const int64_t lens[6] = {3, 17, 1, 3, 33, 17};
        int distinct = 0, spec_ok = 1, close_ok = 1;
        for (int r = 0; r < 6 && st == RLX_OK; r++) {
            int64_t S = lens[r];
            int64_t sd[2] = {S, 16}, so[2] = {S, 8};
            ref_shape sx = ref_shape_make(2, sd), sy = ref_shape_make(2, so);
            float *xv = ops_rand_f32(S * 16, -1, 1), *got = ops_f32(S * 8);
            double *lin = ops_f64(S * 8), *want = ops_f64(S * 8);
            ref_matmul(ops_f32_to_f64(xv, S * 16), sx, ops_f32_to_f64(w, 128), sw, 1, ops_f32_to_f64(b, 8),
                       RLX_ACT_NONE, lin, NULL);
            ref_softmax(lin, sy, 1, 0, want);
            rlx_tensor in = ops_tensor("x", RLX_F32, sx, xv), t;
            st = rlx_exec_run(e, &in, 1);
            if (st != RLX_OK) break;
            st = rlx_exec_output(e, "y", &t);
            if (st != RLX_OK) break;
            if (t.rank != 2 || t.dims[0] != S || t.dims[1] != 8 || t.bytes != (size_t)(S * 8 * 4)) { close_ok = 0; break; }
            memcpy(got, t.data, t.bytes);
            if (!test_close_f32_f64("symbolic linear+softmax", got, want, S * 8, 1e-5)) close_ok = 0;
            int new_binding = 1;
            for (int p = 0; p < r; p++) if (lens[p] == S) new_binding = 0;
            distinct += new_binding;
            if (specializations(e) != distinct) spec_ok = 0;
        }
        int final_specs = specializations(e);
        rlx_exec_free(e);
        CHECK_OK(st);
        CHECK(info_ok);
        CHECK_MSG(close_ok, "wrong result (config %s)", ops_config_name(cfg));
        CHECK_MSG(spec_ok, "specializations %d after %d distinct bindings (config %s)", final_specs, distinct,
                  ops_config_name(cfg));
    }
    ops_free_all();
}

/* Two inputs share "seq": binding requires them to agree. */
TEST(symbolic_shared_symbol_mismatch) {
    rlx_graph *g = ops_graph();
    int64_t seq = rlx_symbol(g, "seq");
    int64_t da[2] = {seq, 4}, db[2] = {seq, 4};
    CHECK_OK(rlx_output(g, "y", rlx_add(g, rlx_input(g, "a", RLX_F32, 2, da), rlx_input(g, "b", RLX_F32, 2, db))));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    float a[5 * 4], b[5 * 4], y[5 * 4];
    for (int i = 0; i < 20; i++) { a[i] = (float)i; b[i] = (float)(2 * i); }
    int64_t s3[2] = {3, 4}, s5[2] = {5, 4};
    rlx_tensor in[2] = {ops_tensor("a", RLX_F32, ref_shape_make(2, s3), a), ops_tensor("b", RLX_F32, ref_shape_make(2, s5), b)};
    rlx_status st = rlx_exec_run(e, in, 2);
    char msg[256];
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    /* a consistent binding still works afterwards */
    in[0] = ops_tensor("a", RLX_F32, ref_shape_make(2, s5), a);
    rlx_status st2 = rlx_exec_run(e, in, 2);
    if (st2 == RLX_OK) st2 = rlx_exec_read_output(e, "y", y, sizeof y);
    int spec = specializations(e);
    rlx_exec_free(e);
    CHECK_MSG(st == RLX_STATUS_SHAPE && msg[0], "mismatched seq: %s, msg '%s'", rlx_status_name(st), msg);
    CHECK_MSG(strstr(msg, "seq") != NULL, "message does not name the symbol: '%s'", msg);
    CHECK_OK(st2);
    for (int i = 0; i < 20; i++) CHECK(y[i] == 3.0f * (float)i);
    CHECK_MSG(spec == 1, "specializations %d, want 1 (a failed bind must not be cached)", spec);
    ops_free_all();
}

/* rlx_exec_prepare compiles a binding without running: the cache grows by
 * one, a later run of that shape adds nothing, the last run's outputs stay
 * readable, and a bad input is refused with the same checks as a run. */
TEST(symbolic_prepare) {
    rlx_graph *g = ops_graph();
    int64_t seq = rlx_symbol(g, "seq");
    int64_t dx[2] = {seq, 4};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, dx);
    CHECK_OK(rlx_output(g, "y", rlx_add(g, x, x)));
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        rlx_compile_options o;
        ops_config_options(cfg, &o);
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, &o, &e));
        float a[3 * 4], b[5 * 4];
        for (int i = 0; i < 20; i++) { b[i] = (float)i; if (i < 12) a[i] = (float)(i - 6); }
        int64_t s3[2] = {3, 4}, s5[2] = {5, 4}, s5r1[1] = {20};
        rlx_tensor in3 = ops_tensor("x", RLX_F32, ref_shape_make(2, s3), a);
        rlx_status st = rlx_exec_run(e, &in3, 1);
        int after_run = specializations(e);
        rlx_tensor p5 = ops_tensor("x", RLX_F32, ref_shape_make(2, s5), NULL);   /* no data needed */
        rlx_status stp = st == RLX_OK ? rlx_exec_prepare(e, &p5, 1) : st;
        int after_prepare = specializations(e);
        rlx_tensor t;   /* the run of 3 rows is still what outputs show */
        rlx_status sto = rlx_exec_output(e, "y", &t);
        int out_ok = sto == RLX_OK && t.dims[0] == 3 && ((const float *)t.data)[0] == -12.0f;
        rlx_tensor in5 = ops_tensor("x", RLX_F32, ref_shape_make(2, s5), b);
        rlx_status st5 = rlx_exec_run(e, &in5, 1);
        int after_run5 = specializations(e);
        float y[20];
        if (st5 == RLX_OK) st5 = rlx_exec_read_output(e, "y", y, sizeof y);
        rlx_tensor bad = ops_tensor("x", RLX_F32, ref_shape_make(1, s5r1), NULL);
        rlx_status stb = rlx_exec_prepare(e, &bad, 1);
        char msg[256];
        snprintf(msg, sizeof msg, "%s", rlx_last_error());
        rlx_status stn = rlx_exec_prepare(e, NULL, 1);
        rlx_exec_free(e);
        CHECK_OK(st);
        CHECK_OK(stp);
        CHECK_MSG(after_run == 1 && after_prepare == 2 && after_run5 == 2, "specializations %d / %d / %d (config %s)",
                  after_run, after_prepare, after_run5, ops_config_name(cfg));
        CHECK_MSG(out_ok, "the last run's output after a prepare (config %s)", ops_config_name(cfg));
        CHECK_OK(st5);
        for (int i = 0; i < 20; i++) CHECK(y[i] == 2.0f * (float)i);
        CHECK_MSG(stb == RLX_STATUS_SHAPE && strstr(msg, "rlx_exec_prepare") && strstr(msg, "rank"),
                  "bad rank: %s '%s'", rlx_status_name(stb), msg);
        CHECK(stn == RLX_STATUS_INVALID_ARGUMENT);
    }
    CHECK(rlx_exec_prepare(NULL, NULL, 0) == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "rlx_exec_prepare"));
    ops_free_all();
}

/* Symbols in several positions: attention over [1, H, seq, D] with causal
 * mask, a reshape that infers a symbolic dim, and a reduction over seq. */
TEST(symbolic_attention_reshape_reduce) {
    rlx_graph *g = ops_graph();
    int64_t seq = rlx_symbol(g, "seq");
    int64_t H = 2, D = 8;
    int64_t dq[4] = {1, H, seq, D};
    rlx_node q = rlx_input(g, "q", RLX_F32, 4, dq), k = rlx_input(g, "k", RLX_F32, 4, dq),
             v = rlx_input(g, "v", RLX_F32, 4, dq);
    rlx_node att = rlx_attention(g, q, k, v, RLX_MASK_CAUSAL, RLX_NO_NODE, 0);
    int64_t flat[2] = {RLX_DIM_INFER, D};
    rlx_node r = rlx_reshape(g, att, 2, flat);               /* [H*seq, D] */
    CHECK_OK(rlx_output(g, "att", att));
    CHECK_OK(rlx_output(g, "flat_sum", rlx_reduce_sum(g, r, 1, 0)));   /* sum over H*seq -> [D] */
    CHECK_OK(rlx_graph_status(g));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    const int64_t lens[3] = {5, 1, 12};
    rlx_status st = RLX_OK;
    int ok = 1;
    for (int i = 0; i < 3 && st == RLX_OK && ok; i++) {
        int64_t S = lens[i], n = H * S * D;
        int64_t ds[4] = {1, H, S, D};
        ref_shape sq = ref_shape_make(4, ds);
        float *qv = ops_rand_f32(n, -1, 1), *kv = ops_rand_f32(n, -1, 1), *vv = ops_rand_f32(n, -1, 1);
        double *want = ops_f64(n), sum_want[8] = {0};
        ref_attention(ops_f32_to_f64(qv, n), ops_f32_to_f64(kv, n), ops_f32_to_f64(vv, n), 1, H, H, S, S, D,
                      RLX_MASK_CAUSAL, NULL, sq, 0, want);
        for (int64_t j = 0; j < n; j++) sum_want[j % D] += want[j];
        rlx_tensor in[3] = {ops_tensor("q", RLX_F32, sq, qv), ops_tensor("k", RLX_F32, sq, kv),
                            ops_tensor("v", RLX_F32, sq, vv)};
        float *got = ops_f32(n), sum_got[8];
        rlx_tensor out[2] = {ops_tensor("att", RLX_F32, sq, got),
                             ops_tensor("flat_sum", RLX_F32, ref_shape_make(1, &D), sum_got)};
        rlx_compile_options o;
        ops_config_options(0, &o);
        (void)o;
        st = rlx_exec_run(e, in, 3);
        if (st != RLX_OK) break;
        st = rlx_exec_read_output(e, "att", got, (size_t)n * 4);
        if (st == RLX_OK) st = rlx_exec_read_output(e, "flat_sum", sum_got, sizeof sum_got);
        if (st != RLX_OK) break;
        ok = test_close_f32_f64("symbolic attention", got, want, n, 1e-5) &&
             test_close_f32_f64("symbolic reshape+sum", sum_got, sum_want, D, 1e-5);
        (void)out;
    }
    int spec = specializations(e);
    rlx_exec_free(e);
    CHECK_OK(st);
    CHECK(ok);
    CHECK_MSG(spec == 3, "specializations %d, want 3", spec);
    ops_free_all();
}

/* KV-cache shape: k/v have "past+seq"-like length given by a second symbol; q uses seq. */
TEST(symbolic_two_symbols_decode) {
    rlx_graph *g = ops_graph();
    int64_t seq = rlx_symbol(g, "seq"), kv = rlx_symbol(g, "kv");
    CHECK(seq != kv);
    int64_t dq[4] = {1, 4, seq, 8}, dk[4] = {1, 2, kv, 8};
    rlx_node y = rlx_attention(g, rlx_input(g, "q", RLX_F32, 4, dq), rlx_input(g, "k", RLX_F32, 4, dk),
                               rlx_input(g, "v", RLX_F32, 4, dk), RLX_MASK_CAUSAL, RLX_NO_NODE, 0);
    CHECK_OK(rlx_output(g, "y", y));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    const int64_t sq_list[4] = {6, 1, 1, 3}, skv_list[4] = {6, 7, 8, 11};
    rlx_status st = RLX_OK;
    int ok = 1;
    for (int i = 0; i < 4 && st == RLX_OK && ok; i++) {
        int64_t S = sq_list[i], K = skv_list[i], nq = 4 * S * 8, nk = 2 * K * 8;
        int64_t a[4] = {1, 4, S, 8}, b[4] = {1, 2, K, 8};
        ref_shape sq = ref_shape_make(4, a), sk = ref_shape_make(4, b);
        float *qv = ops_rand_f32(nq, -1, 1), *kv2 = ops_rand_f32(nk, -1, 1), *vv = ops_rand_f32(nk, -1, 1);
        double *want = ops_f64(nq);
        ref_attention(ops_f32_to_f64(qv, nq), ops_f32_to_f64(kv2, nk), ops_f32_to_f64(vv, nk), 1, 4, 2, S, K, 8,
                      RLX_MASK_CAUSAL, NULL, sq, 0, want);
        rlx_tensor in[3] = {ops_tensor("q", RLX_F32, sq, qv), ops_tensor("k", RLX_F32, sk, kv2),
                            ops_tensor("v", RLX_F32, sk, vv)};
        float *got = ops_f32(nq);
        st = rlx_exec_run(e, in, 3);
        if (st == RLX_OK) st = rlx_exec_read_output(e, "y", got, (size_t)nq * 4);
        if (st == RLX_OK) ok = test_close_f32_f64("decode attention", got, want, nq, 1e-5);
    }
    int spec = specializations(e);
    rlx_exec_free(e);
    CHECK_OK(st);
    CHECK(ok);
    CHECK_MSG(spec == 4, "specializations %d, want 4", spec);
    ops_free_all();
}

/* The input's rank and static dims are still checked when symbols are present. */
TEST(symbolic_static_dim_checked) {
    rlx_graph *g = ops_graph();
    int64_t seq = rlx_symbol(g, "seq");
    int64_t dx[2] = {seq, 4};
    CHECK_OK(rlx_output(g, "y", rlx_exp(g, rlx_input(g, "x", RLX_F32, 2, dx))));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    float x[30] = {0};
    int64_t bad[2] = {6, 5}, bad_rank[3] = {2, 3, 4};
    rlx_tensor t1 = ops_tensor("x", RLX_F32, ref_shape_make(2, bad), x);
    rlx_tensor t2 = ops_tensor("x", RLX_F32, ref_shape_make(3, bad_rank), x);
    rlx_status s1 = rlx_exec_run(e, &t1, 1);
    rlx_status s2 = rlx_exec_run(e, &t2, 1);
    int64_t zero[2] = {0, 4};   /* an empty binding is valid: seq = 0 */
    rlx_tensor t3 = ops_tensor("x", RLX_F32, ref_shape_make(2, zero), x);
    t3.data = x;
    rlx_status s3 = rlx_exec_run(e, &t3, 1);
    rlx_tensor out;
    rlx_status s4 = s3 == RLX_OK ? rlx_exec_output(e, "y", &out) : s3;
    rlx_exec_free(e);
    CHECK_MSG(s1 == RLX_STATUS_SHAPE, "static dim mismatch: %s", rlx_status_name(s1));
    CHECK_MSG(s2 == RLX_STATUS_SHAPE, "rank mismatch: %s", rlx_status_name(s2));
    CHECK_OK(s3);
    CHECK_OK(s4);
    CHECK(out.rank == 2 && out.dims[0] == 0 && out.dims[1] == 4 && out.bytes == 0);
    ops_free_all();
}

/* A -1 in rlx_reshape divides the known sizes into a symbolic dim's
 * coefficient: x [3, batch, 16] concatenated with itself along 1 is
 * [3, 2*batch, 16]; as [-1, 32] it is [3*batch, 32] (2*16/32 of 2*batch),
 * the shape an ONNX export of nn.MultiheadAttention reshapes to. */
TEST(symbolic_reshape_infers_through_a_coefficient) {
    rlx_graph *g = ops_graph();
    int64_t batch = rlx_symbol(g, "batch");
    int64_t dx[3] = {3, batch, 16}, to[2] = {-1, 32}, bad[2] = {-1, 7};
    rlx_node x = rlx_input(g, "x", RLX_F32, 3, dx);
    rlx_node xs[2] = {x, x};
    rlx_node cat = rlx_concat(g, xs, 2, 1);
    CHECK(rlx_reshape(g, cat, 2, bad) == RLX_NO_NODE);   /* 96*batch / 7 is no whole dim */
    rlx_graph *g2 = ops_graph();
    batch = rlx_symbol(g2, "batch");
    dx[1] = batch;
    x = rlx_input(g2, "x", RLX_F32, 3, dx);
    xs[0] = xs[1] = x;
    CHECK_OK(rlx_output(g2, "y", rlx_reshape(g2, rlx_concat(g2, xs, 2, 1), 2, to)));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g2, &o, &e));
    const int64_t B = 5;
    int64_t sd[3] = {3, B, 16};
    float *xv = ops_rand_f32(3 * B * 16, -1, 1), *got = ops_f32(3 * B * 32);
    rlx_tensor in = ops_tensor("x", RLX_F32, ref_shape_make(3, sd), xv), info;
    CHECK_OK(rlx_exec_run(e, &in, 1));
    CHECK_OK(rlx_exec_output(e, "y", &info));
    CHECK(info.rank == 2 && info.dims[0] == 3 * B && info.dims[1] == 32);
    CHECK_OK(rlx_exec_read_output(e, "y", got, (size_t)(3 * B * 32) * sizeof(float)));
    int same = 1;   /* row r of y is row r of the [3, 2B, 16] concat's flat pairs */
    for (int64_t i = 0; i < 3; i++)
        for (int64_t j = 0; j < 2 * B; j++)
            for (int64_t k = 0; k < 16; k++)
                same &= got[(i * 2 * B + j) * 16 + k] == xv[(i * B + j % B) * 16 + k];
    CHECK(same);
    rlx_exec_free(e);
    ops_free_all();
}
