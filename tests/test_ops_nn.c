/*
 * test_ops_nn.c — neural-network ops against the float64 reference:
 * layer_norm / rms_norm (with and without beta, and the residual-add pattern
 * the optimizer fuses), attention (MHA/GQA, no mask, causal with Skv > Sq,
 * additive masks of several broadcast shapes incl. -inf, custom scale), rope
 * (neox and gpt-j, offset input, theta, partial rotary dims) and softmax
 * cross-entropy loss + gradient; under every test configuration.
 */
#include "ops_common.h"
#include "core/core.h"
#include <math.h>
#include <string.h>

TEST(ops_layer_norm_rms_norm) {
    static const int64_t Ds[] = {1, 3, 8, 17, 64, 257};
    for (int c = 0; c < 12; c++) {
        int rms = c % 2, with_beta = (c / 2) % 2;
        int64_t D = Ds[test_rand_int(0, 5)];
        int rank = (int)test_rand_int(1, 3);
        ref_shape sx = ops_rand_shape(rank, 600);
        sx.d[rank - 1] = D;
        if (rms && D == 1) sx.d[rank - 1] = D = 5;
        ref_shape sg = ref_shape_make(1, &D);
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -2, 2), *gm = ops_rand_f32(D, 0.5, 1.5), *bt = ops_rand_f32(D, -1, 1);
        if (c == 2) for (int64_t i = 0; i < n; i++) x[i] += 100.0f;   /* large mean: naive E[x^2]-E[x]^2 fails */
        float eps = c < 6 ? 1e-5f : 1e-2f;
        double *want = ops_f64(n);
        ref_norm(rms, ops_f32_to_f64(x, n), sx, ops_f32_to_f64(gm, D), with_beta ? ops_f32_to_f64(bt, D) : NULL,
                 (double)eps, want);
        rlx_graph *g = ops_graph();
        rlx_node xi = ops_input(g, "x", RLX_F32, sx), gi = ops_input(g, "g", RLX_F32, sg);
        rlx_node bi = with_beta ? ops_input(g, "b", RLX_F32, sg) : RLX_NO_NODE;
        CHECK_OK(rlx_output(g, "y", rms ? rlx_rms_norm(g, xi, gi, bi, eps) : rlx_layer_norm(g, xi, gi, bi, eps)));
        rlx_tensor in[3] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("g", RLX_F32, sg, gm),
                            ops_tensor("b", RLX_F32, sg, bt)};
        float *got = ops_f32(n);
        rlx_tensor out = ops_tensor("y", RLX_F32, sx, got);
        /* c == 2: x ~ 100 +- 2 in f32 carries ~1e-5 relative input rounding already */
        double tol = c == 2 ? 1e-4 : 1e-5;
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, with_beta ? 3 : 2, &out, 1));
            CHECK_CLOSE(rms ? "rms_norm" : "layer_norm", got, want, n, tol);
        }
    }
    ops_free_all();
}

/* norm(x + r): the residual pattern the optimizer fuses; the sum is also an output. */
TEST(ops_residual_add_norm) {
    for (int rms = 0; rms < 2; rms++) {
        int64_t dx[3] = {2, 5, 24}, D = 24;
        ref_shape sx = ref_shape_make(3, dx), sg = ref_shape_make(1, &D);
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -1, 1), *r = ops_rand_f32(n, -1, 1), *gm = ops_rand_f32(D, 0.5, 1.5),
              *bt = ops_rand_f32(D, -1, 1);
        double *sum = ops_f64(n), *want = ops_f64(n);
        ref_binary(REF_ADD, ops_f32_to_f64(x, n), sx, ops_f32_to_f64(r, n), sx, sum);
        ref_norm(rms, sum, sx, ops_f32_to_f64(gm, D), ops_f32_to_f64(bt, D), 1e-6, want);
        rlx_graph *g = ops_graph();
        rlx_node s = rlx_add(g, ops_input(g, "x", RLX_F32, sx), ops_input(g, "r", RLX_F32, sx));
        rlx_node gi = ops_input(g, "g", RLX_F32, sg), bi = ops_input(g, "b", RLX_F32, sg);
        CHECK_OK(rlx_output(g, "y", rms ? rlx_rms_norm(g, s, gi, bi, 1e-6f) : rlx_layer_norm(g, s, gi, bi, 1e-6f)));
        CHECK_OK(rlx_output(g, "sum", s));
        rlx_tensor in[4] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("r", RLX_F32, sx, r),
                            ops_tensor("g", RLX_F32, sg, gm), ops_tensor("b", RLX_F32, sg, bt)};
        float *got = ops_f32(n), *gs = ops_f32(n);
        rlx_tensor out[2] = {ops_tensor("y", RLX_F32, sx, got), ops_tensor("sum", RLX_F32, sx, gs)};
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 4, out, 2));
            CHECK_CLOSE("add+norm", got, want, n, 1e-5);
            CHECK_CLOSE("residual sum", gs, sum, n, 1e-7);
        }
    }
    ops_free_all();
}

typedef struct att_case {
    int64_t B, H, Hkv, Sq, Skv, D;
    rlx_mask kind;
    int mrank;            /* additive mask shape: [B|1, H|1, Sq|1, Skv] chosen by mbits */
    int mbits;            /* bit i set = dim i of the 4-d mask is full (else 1) */
    float scale;
} att_case;

static bool run_attention(att_case t) {
    int64_t dq[4] = {t.B, t.H, t.Sq, t.D}, dk[4] = {t.B, t.Hkv, t.Skv, t.D};
    ref_shape sq = ref_shape_make(4, dq), sk = ref_shape_make(4, dk), sm;
    int64_t full[4] = {t.B, t.H, t.Sq, t.Skv}, md[4];
    for (int i = 0; i < 4; i++) md[i] = (t.mbits >> i) & 1 ? full[i] : 1;
    md[3] = t.Skv;
    sm = ref_shape_make(t.mrank, md + (4 - t.mrank));
    int64_t nq = ref_numel(&sq), nk = ref_numel(&sk), nm = ref_numel(&sm);
    float *q = ops_rand_f32(nq, -1, 1), *k = ops_rand_f32(nk, -1, 1), *v = ops_rand_f32(nk, -1, 1);
    float *m = ops_rand_f32(nm, -2, 2);
    /* some -inf entries, never a whole row (column 0 stays finite) */
    for (int64_t i = 0; i < nm; i++) if (i % t.Skv != 0 && test_rand_int(0, 4) == 0) m[i] = -INFINITY;
    double *want = ops_f64(nq);
    ref_attention(ops_f32_to_f64(q, nq), ops_f32_to_f64(k, nk), ops_f32_to_f64(v, nk), t.B, t.H, t.Hkv, t.Sq, t.Skv,
                  t.D, t.kind, t.kind == RLX_MASK_ADDITIVE ? ops_f32_to_f64(m, nm) : NULL, sm, t.scale, want);
    rlx_graph *g = ops_graph();
    rlx_node mn = t.kind == RLX_MASK_ADDITIVE ? ops_input(g, "m", RLX_F32, sm) : RLX_NO_NODE;
    rlx_node y = rlx_attention(g, ops_input(g, "q", RLX_F32, sq), ops_input(g, "k", RLX_F32, sk),
                               ops_input(g, "v", RLX_F32, sk), t.kind, mn, t.scale);
    rlx_status st = rlx_output(g, "y", y);
    if (st != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "attention build: %s: %s", rlx_status_name(st), rlx_last_error());
        return false;
    }
    rlx_tensor in[4] = {ops_tensor("q", RLX_F32, sq, q), ops_tensor("k", RLX_F32, sk, k),
                        ops_tensor("v", RLX_F32, sk, v), ops_tensor("m", RLX_F32, sm, m)};
    float *got = ops_f32(nq);
    rlx_tensor out = ops_tensor("y", RLX_F32, sq, got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        if (!ops_run(g, cfg, in, t.kind == RLX_MASK_ADDITIVE ? 4 : 3, &out, 1)) return false;
        if (!test_close_f32_f64("attention", got, want, nq, 1e-5)) {
            harness_fail(__FILE__, __LINE__, "attention B%lld H%lld Hkv%lld Sq%lld Skv%lld D%lld mask %d mrank %d "
                         "mbits %d scale %g (config %s)", (long long)t.B, (long long)t.H, (long long)t.Hkv,
                         (long long)t.Sq, (long long)t.Skv, (long long)t.D, (int)t.kind, t.mrank, t.mbits,
                         (double)t.scale, ops_config_name(cfg));
            return false;
        }
    }
    return true;
}

TEST(ops_attention) {
    static const att_case cases[] = {
        /* B  H Hkv Sq Skv  D  mask                mrank mbits scale */
        {1, 1, 1, 1, 1, 1, RLX_MASK_NONE, 0, 0, 0},
        {2, 4, 4, 5, 5, 8, RLX_MASK_NONE, 0, 0, 0},
        {1, 4, 2, 7, 7, 16, RLX_MASK_CAUSAL, 0, 0, 0},
        {2, 6, 2, 3, 11, 8, RLX_MASK_CAUSAL, 0, 0, 0},      /* queries at the end of the keys */
        {1, 8, 1, 1, 17, 32, RLX_MASK_CAUSAL, 0, 0, 0},     /* decode step, MQA */
        {1, 2, 2, 9, 9, 64, RLX_MASK_CAUSAL, 0, 0, 0.05f},  /* custom scale */
        {2, 4, 2, 4, 6, 8, RLX_MASK_ADDITIVE, 4, 15, 0},    /* full mask */
        {2, 4, 2, 4, 6, 8, RLX_MASK_ADDITIVE, 4, 1 | 8, 0}, /* [B,1,1,Skv] padding mask */
        {2, 4, 4, 5, 5, 8, RLX_MASK_ADDITIVE, 2, 4 | 8, 0}, /* [Sq,Skv] */
        {1, 3, 3, 4, 7, 5, RLX_MASK_ADDITIVE, 1, 8, 0.3f},  /* [Skv] */
        {3, 2, 1, 33, 33, 3, RLX_MASK_CAUSAL, 0, 0, 0},
        {1, 2, 2, 17, 40, 17, RLX_MASK_NONE, 0, 0, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CHECK(run_attention(cases[c]));
        ops_free_all();
    }
}

/* f16 / bf16 storage: q, k, v and the mask stored in the dtype, the result
 * in it too; the float64 reference runs on the stored (rounded) values, so the
 * bound is the output's rounding. */
static bool run_attention_16(att_case t, rlx_dtype dt) {
    int64_t dq[4] = {t.B, t.H, t.Sq, t.D}, dk[4] = {t.B, t.Hkv, t.Skv, t.D};
    ref_shape sq = ref_shape_make(4, dq), sk = ref_shape_make(4, dk), sm;
    int64_t full[4] = {t.B, t.H, t.Sq, t.Skv}, md[4];
    for (int i = 0; i < 4; i++) md[i] = (t.mbits >> i) & 1 ? full[i] : 1;
    md[3] = t.Skv;
    sm = ref_shape_make(t.mrank, md + (4 - t.mrank));
    int64_t nq = ref_numel(&sq), nk = ref_numel(&sk), nm = ref_numel(&sm), n[4] = {nq, nk, nk, nm};
    float *f[4] = {ops_rand_f32(nq, -1, 1), ops_rand_f32(nk, -1, 1), ops_rand_f32(nk, -1, 1), ops_rand_f32(nm, -2, 2)};
    for (int64_t i = 0; i < nm; i++) if (i % t.Skv != 0 && test_rand_int(0, 4) == 0) f[3][i] = -INFINITY;
    uint16_t *h[4];
    for (int a = 0; a < 4; a++) {
        h[a] = ops_alloc(sizeof(uint16_t) * (size_t)n[a]);
        for (int64_t i = 0; i < n[a]; i++) {
            h[a][i] = dt == RLX_F16 ? rlx_f32_to_f16(f[a][i]) : rlx_f32_to_bf16(f[a][i]);
            f[a][i] = dt == RLX_F16 ? rlx_f16_to_f32(h[a][i]) : rlx_bf16_to_f32(h[a][i]);
        }
    }
    double *want = ops_f64(nq);
    ref_attention(ops_f32_to_f64(f[0], nq), ops_f32_to_f64(f[1], nk), ops_f32_to_f64(f[2], nk), t.B, t.H, t.Hkv, t.Sq,
                  t.Skv, t.D, t.kind, t.kind == RLX_MASK_ADDITIVE ? ops_f32_to_f64(f[3], nm) : NULL, sm, t.scale, want);
    rlx_graph *g = ops_graph();
    rlx_node mn = t.kind == RLX_MASK_ADDITIVE ? ops_input(g, "m", dt, sm) : RLX_NO_NODE;
    rlx_node y = rlx_attention(g, ops_input(g, "q", dt, sq), ops_input(g, "k", dt, sk), ops_input(g, "v", dt, sk), t.kind,
                               mn, t.scale);
    if (rlx_output(g, "y", y) != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "attention build: %s", rlx_last_error());
        return false;
    }
    rlx_tensor in[4] = {ops_tensor("q", dt, sq, h[0]), ops_tensor("k", dt, sk, h[1]), ops_tensor("v", dt, sk, h[2]),
                        ops_tensor("m", dt, sm, h[3])};
    uint16_t *got = ops_alloc(sizeof(uint16_t) * (size_t)nq);
    float *gf = ops_f32(nq);
    rlx_tensor out = ops_tensor("y", dt, sq, got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        memset(got, 0xff, sizeof(uint16_t) * (size_t)nq);   /* NaN in both dtypes */
        if (!ops_run(g, cfg, in, t.kind == RLX_MASK_ADDITIVE ? 4 : 3, &out, 1)) return false;
        for (int64_t i = 0; i < nq; i++) gf[i] = dt == RLX_F16 ? rlx_f16_to_f32(got[i]) : rlx_bf16_to_f32(got[i]);
        if (!test_close_f32_f64("attention", gf, want, nq, dt == RLX_F16 ? 2e-3 : 1e-2)) {
            harness_fail(__FILE__, __LINE__, "%s attention B%lld H%lld Sq%lld Skv%lld D%lld mask %d (config %s)",
                         rlx_dtype_name(dt), (long long)t.B, (long long)t.H, (long long)t.Sq, (long long)t.Skv,
                         (long long)t.D, (int)t.kind, ops_config_name(cfg));
            return false;
        }
    }
    return true;
}

TEST(ops_attention_f16_bf16) {
    static const att_case cases[] = {
        {2, 4, 4, 5, 5, 8, RLX_MASK_NONE, 0, 0, 0},
        {1, 4, 2, 7, 7, 16, RLX_MASK_CAUSAL, 0, 0, 0},
        {1, 8, 1, 1, 17, 32, RLX_MASK_CAUSAL, 0, 0, 0},
        {2, 4, 2, 4, 6, 8, RLX_MASK_ADDITIVE, 4, 1 | 8, 0},
        {1, 3, 3, 4, 7, 5, RLX_MASK_ADDITIVE, 1, 8, 0.3f},
        {1, 2, 2, 17, 40, 17, RLX_MASK_NONE, 0, 0, 0},
    };
    static const rlx_dtype dts[] = {RLX_F16, RLX_BF16};
    for (int d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            CHECK(run_attention_16(cases[c], dts[d]));
            ops_free_all();
        }
}

TEST(ops_rope) {
    static const struct { int64_t B, H, S, D; rlx_rope_style style; float theta; int rot; int offset; } cases[] = {
        {1, 1, 1, 2, RLX_ROPE_NEOX, 10000.0f, 0, -1},
        {2, 3, 5, 8, RLX_ROPE_NEOX, 10000.0f, 0, -1},
        {2, 3, 5, 8, RLX_ROPE_GPTJ, 10000.0f, 0, -1},
        {1, 4, 7, 16, RLX_ROPE_NEOX, 500000.0f, 0, 13},
        {1, 4, 7, 16, RLX_ROPE_GPTJ, 100.0f, 0, 29},
        {2, 2, 6, 12, RLX_ROPE_NEOX, 10000.0f, 4, 3},      /* partial rotary dims */
        {2, 2, 6, 12, RLX_ROPE_GPTJ, 10000.0f, 6, 0},
        {1, 2, 33, 64, RLX_ROPE_NEOX, 10000.0f, 32, 100},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t d[4] = {cases[c].B, cases[c].H, cases[c].S, cases[c].D};
        ref_shape sx = ref_shape_make(4, d), so = ref_shape_make(1, (int64_t[]){1});
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -1, 1);
        int has_off = cases[c].offset >= 0;
        int32_t off = has_off ? cases[c].offset : 0;
        double *want = ops_f64(n);
        ref_rope(ops_f32_to_f64(x, n), d[0], d[1], d[2], d[3], off, cases[c].style, (double)cases[c].theta,
                 cases[c].rot, want);
        rlx_graph *g = ops_graph();
        rlx_node on = has_off ? ops_input(g, "off", RLX_I32, so) : RLX_NO_NODE;
        CHECK_OK(rlx_output(g, "y", rlx_rope(g, ops_input(g, "x", RLX_F32, sx), on, cases[c].style, cases[c].theta,
                                             cases[c].rot)));
        rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("off", RLX_I32, so, &off)};
        float *got = ops_f32(n);
        rlx_tensor out = ops_tensor("y", RLX_F32, sx, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, has_off ? 2 : 1, &out, 1));
            /* angles reach ~130 rad: f32 angle rounding alone is ~1e-5 relative */
            CHECK_MSG(test_close_f32_f64("rope", got, want, n, 2e-5), "rope case %zu style %d (config %s)", c,
                      (int)cases[c].style, ops_config_name(cfg));
        }
        ops_free_all();
    }
}

/* The offset is an input: one compiled exec serves every position. */
TEST(ops_rope_offset_changes_per_run) {
    int64_t d[4] = {1, 2, 3, 8}, one = 1;
    ref_shape sx = ref_shape_make(4, d), so = ref_shape_make(1, &one);
    int64_t n = ref_numel(&sx);
    float *x = ops_rand_f32(n, -1, 1), *got = ops_f32(n);
    double *want = ops_f64(n);
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_rope(g, ops_input(g, "x", RLX_F32, sx), ops_input(g, "off", RLX_I32, so),
                                         RLX_ROPE_NEOX, 10000.0f, 0)));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    for (int32_t off = 0; off < 40; off += 13) {
        rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("off", RLX_I32, so, &off)};
        rlx_status st = rlx_exec_run(e, in, 2);
        if (st == RLX_OK) st = rlx_exec_read_output(e, "y", got, (size_t)n * 4);
        if (st != RLX_OK) { rlx_exec_free(e); CHECK_OK(st); }
        ref_rope(ops_f32_to_f64(x, n), 1, 2, 3, 8, off, RLX_ROPE_NEOX, 10000.0, 0, want);
        if (!test_close_f32_f64("rope offset", got, want, n, 1e-5)) { rlx_exec_free(e); CHECK_MSG(0, "offset %d", off); }
    }
    rlx_exec_free(e);
    ops_free_all();
}

TEST(ops_softmax_cross_entropy) {
    for (int c = 0; c < 6; c++) {
        int64_t N = c == 0 ? 1 : test_rand_int(1, 40), C = c == 1 ? 1 : test_rand_int(1, 300);
        int64_t dl[2] = {N, C};
        ref_shape sl = ref_shape_make(2, dl), sn = ref_shape_make(1, &N), s0 = ref_shape_make(0, NULL);
        float *logits = ops_rand_f32(N * C, -5, 5);
        if (c == 2) for (int64_t i = 0; i < N * C; i++) logits[i] += 90.0f;  /* needs max-subtraction */
        int32_t *labels = ops_alloc((size_t)N * 4);
        for (int64_t i = 0; i < N; i++) labels[i] = (int32_t)test_rand_int(0, C - 1);
        double *dlg = ops_f32_to_f64(logits, N * C), *wgrad = ops_f64(N * C);
        double wloss = ref_ce_loss(dlg, N, C, labels);
        ref_ce_grad(dlg, N, C, labels, wgrad);
        rlx_graph *g = ops_graph();
        rlx_node li = ops_input(g, "logits", RLX_F32, sl), la = ops_input(g, "labels", RLX_I32, sn);
        CHECK_OK(rlx_output(g, "loss", rlx_softmax_cross_entropy(g, li, la)));
        CHECK_OK(rlx_output(g, "grad", rlx_softmax_cross_entropy_grad(g, li, la)));
        rlx_tensor in[2] = {ops_tensor("logits", RLX_F32, sl, logits), ops_tensor("labels", RLX_I32, sn, labels)};
        float loss = NAN, *grad = ops_f32(N * C);
        rlx_tensor out[2] = {ops_tensor("loss", RLX_F32, s0, &loss), ops_tensor("grad", RLX_F32, sl, grad)};
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 2, out, 2));
            /* C == 1: the loss is exactly 0; compare absolutely through a tiny reference */
            if (C == 1) CHECK_MSG(fabs(loss) < 1e-6, "loss with C=1: %g", (double)loss);
            else CHECK_CLOSE("ce loss", &loss, &wloss, 1, 1e-5);
            if (C > 1) CHECK_CLOSE("ce grad", grad, wgrad, N * C, 1e-5);
            else for (int64_t i = 0; i < N; i++) CHECK_MSG(fabs(grad[i]) < 1e-7, "grad C=1 [%lld] %g", (long long)i, (double)grad[i]);
        }
    }
    ops_free_all();
}
