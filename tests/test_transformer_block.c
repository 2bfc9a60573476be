/*
 * test_transformer_block.c — whole transformer blocks built through the API,
 * against an op-by-op float64 reference made of the ref64 functions:
 *  - a Llama-style pre-norm decoder block: rms_norm, q/k/v projections, RoPE
 *    (neox) with a position offset, causal GQA attention, output projection,
 *    residual, rms_norm, SwiGLU MLP, residual;
 *  - a BERT-style post-norm encoder block: attention with an additive mask,
 *    residual + layer_norm, GELU MLP with biases, residual + layer_norm
 *    (exercising both fusions).
 * Both run optimized (fused, multithreaded) and op by op.
 */
#include "harness.h"
#include "ref64.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { S = 7, DM = 48, H = 4, HKV = 2, HD = 12, FF = 40, OFFSET = 5 };

typedef struct weights {
    float  *f[16];
    double *d[16];
    int64_t n[16];
    int     count;
} weights;

static int add_weight(weights *w, int64_t n, double lo, double hi) {
    int i = w->count++;
    w->n[i] = n;
    w->f[i] = malloc((size_t)n * sizeof(float));
    w->d[i] = malloc((size_t)n * sizeof(double));
    test_fill_uniform_f32(w->f[i], n, lo, hi);
    for (int64_t j = 0; j < n; j++) w->d[i][j] = w->f[i][j];
    return i;
}

static void free_weights(weights *w) {
    for (int i = 0; i < w->count; i++) { free(w->f[i]); free(w->d[i]); }
}

static rlx_node split_heads(rlx_graph *g, rlx_node x, int heads) {
    int64_t d4[4] = {1, S, heads, HD};
    int perm[4] = {0, 2, 1, 3};
    return rlx_transpose(g, rlx_reshape(g, x, 4, d4), perm);
}

static rlx_node merge_heads(rlx_graph *g, rlx_node x, int heads) {
    int perm[4] = {0, 2, 1, 3};
    int64_t d2[2] = {S, heads * HD};
    return rlx_reshape(g, rlx_transpose(g, x, perm), 2, d2);
}

static bool run_and_compare(rlx_graph *g, weights *w, const char *const *names, const float *x, int32_t offset,
                            const double *want, int64_t n_out) {
    for (int cfg = 0; cfg < 2; cfg++) {
        rlx_compile_options o;
        rlx_compile_options_init(&o);
        o.backend = RLX_BACKEND_CPU;
        o.optimize = cfg == 0;
        o.threads = cfg == 0 ? 2 : 1;
        rlx_exec *e;
        if (rlx_compile(g, &o, &e) != RLX_OK) { printf("    compile: %s\n", rlx_last_error()); return false; }
        for (int i = 0; i < w->count; i++)
            if (rlx_exec_set_param_f32(e, names[i], w->f[i], (size_t)w->n[i]) != RLX_OK) {
                printf("    set_param %s: %s\n", names[i], rlx_last_error());
                rlx_exec_free(e);
                return false;
            }
        rlx_tensor in[2] = {
            {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {S, DM}, .data = (void *)x, .bytes = S * DM * 4},
            {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &offset, .bytes = 4},
        };
        int n_in = rlx_exec_input_count(e);
        float *got = malloc((size_t)n_out * 4);
        bool ok = rlx_exec_run(e, in, n_in) == RLX_OK && rlx_exec_read_output(e, "y", got, (size_t)n_out * 4) == RLX_OK;
        if (!ok) printf("    run: %s\n", rlx_last_error());
        rlx_exec_stats s;
        rlx_exec_get_stats(e, &s);
        if (ok) ok = test_close_f32_f64(cfg ? "op-by-op" : "optimized", got, want, n_out, 2e-5);
        if (ok && cfg == 0 && s.fused_nodes == 0) { printf("    expected fused nodes\n"); ok = false; }
        free(got);
        rlx_exec_free(e);
        if (!ok) return false;
    }
    return true;
}

TEST(transformer_llama_block_vs_reference) {
    weights w = {0};
    const char *names[] = {"attn_norm", "wq", "wk", "wv", "wo", "ffn_norm", "w1", "w3", "w2"};
    int an = add_weight(&w, DM, 0.5, 1.5), wq = add_weight(&w, H * HD * DM, -0.2, 0.2),
        wk = add_weight(&w, HKV * HD * DM, -0.2, 0.2), wv = add_weight(&w, HKV * HD * DM, -0.2, 0.2),
        wo = add_weight(&w, DM * H * HD, -0.2, 0.2), fn = add_weight(&w, DM, 0.5, 1.5),
        w1 = add_weight(&w, FF * DM, -0.2, 0.2), w3 = add_weight(&w, FF * DM, -0.2, 0.2),
        w2 = add_weight(&w, DM * FF, -0.2, 0.2);
    float x[S * DM];
    test_fill_uniform_f32(x, S * DM, -1, 1);

    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {S, DM}, one[1] = {1};
    rlx_node X = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node pos = rlx_input(g, "pos", RLX_I32, 1, one);
#define P1(i, a) rlx_param(g, names[i], RLX_F32, 1, (int64_t[]){a})
#define P2(i, a, b) rlx_param(g, names[i], RLX_F32, 2, (int64_t[]){a, b})
    rlx_node h = rlx_rms_norm(g, X, P1(an, DM), RLX_NO_NODE, 1e-5f);
    rlx_node q = split_heads(g, rlx_matmul(g, h, P2(wq, H * HD, DM), 1), H);
    rlx_node k = split_heads(g, rlx_matmul(g, h, P2(wk, HKV * HD, DM), 1), HKV);
    rlx_node v = split_heads(g, rlx_matmul(g, h, P2(wv, HKV * HD, DM), 1), HKV);
    q = rlx_rope(g, q, pos, RLX_ROPE_NEOX, 10000.0f, 0);
    k = rlx_rope(g, k, pos, RLX_ROPE_NEOX, 10000.0f, 0);
    rlx_node a = merge_heads(g, rlx_attention(g, q, k, v, RLX_MASK_CAUSAL, RLX_NO_NODE, 0), H);
    rlx_node r = rlx_add(g, X, rlx_matmul(g, a, P2(wo, DM, H * HD), 1));
    rlx_node f = rlx_rms_norm(g, r, P1(fn, DM), RLX_NO_NODE, 1e-5f);
    rlx_node gate = rlx_silu(g, rlx_matmul(g, f, P2(w1, FF, DM), 1));
    rlx_node up = rlx_matmul(g, f, P2(w3, FF, DM), 1);
    rlx_node y = rlx_add(g, r, rlx_matmul(g, rlx_mul(g, gate, up), P2(w2, DM, FF), 1));
    CHECK_OK(rlx_output(g, "y", y));
    CHECK_OK(rlx_graph_status(g));

    /* float64 reference, op by op */
    double X64[S * DM], hn[S * DM], q64[S * H * HD], k64[S * HKV * HD], v64[S * HKV * HD];
    double qh[S * H * HD], kh[S * HKV * HD], vh[S * HKV * HD], qr[S * H * HD], kr[S * HKV * HD];
    double att[S * H * HD], am[S * H * HD], o[S * DM], r64[S * DM], f64n[S * DM];
    double g1[S * FF], u1[S * FF], m1[S * FF], y2[S * DM], want[S * DM];
    for (int i = 0; i < S * DM; i++) X64[i] = x[i];
    ref_shape sx = ref_shape_make(2, xd);
    ref_norm(1, X64, sx, w.d[an], NULL, 1e-5, hn);
    ref_dense(hn, S, DM, w.d[wq], H * HD, NULL, q64);
    ref_dense(hn, S, DM, w.d[wk], HKV * HD, NULL, k64);
    ref_dense(hn, S, DM, w.d[wv], HKV * HD, NULL, v64);
    ref_split_heads(q64, S, H, HD, qh);
    ref_split_heads(k64, S, HKV, HD, kh);
    ref_split_heads(v64, S, HKV, HD, vh);
    ref_rope(qh, 1, H, S, HD, OFFSET, RLX_ROPE_NEOX, 10000.0, HD, qr);
    ref_rope(kh, 1, HKV, S, HD, OFFSET, RLX_ROPE_NEOX, 10000.0, HD, kr);
    ref_attention(qr, kr, vh, 1, H, HKV, S, S, HD, RLX_MASK_CAUSAL, NULL, ref_shape_make(0, NULL), 0, att);
    ref_merge_heads(att, S, H, HD, am);
    ref_dense(am, S, H * HD, w.d[wo], DM, NULL, o);
    for (int i = 0; i < S * DM; i++) r64[i] = X64[i] + o[i];
    ref_norm(1, r64, sx, w.d[fn], NULL, 1e-5, f64n);
    ref_dense(f64n, S, DM, w.d[w1], FF, NULL, g1);
    ref_dense(f64n, S, DM, w.d[w3], FF, NULL, u1);
    ref_swiglu(g1, u1, S * FF, m1);
    ref_dense(m1, S, FF, w.d[w2], DM, NULL, y2);
    for (int i = 0; i < S * DM; i++) want[i] = r64[i] + y2[i];

    bool ok = run_and_compare(g, &w, names, x, OFFSET, want, S * DM);
    rlx_graph_free(g);
    free_weights(&w);
    CHECK(ok);
}

TEST(transformer_bert_block_vs_reference) {
    weights w = {0};
    const char *names[] = {"wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln1_g", "ln1_b", "w1", "b1", "w2", "b2",
                           "ln2_g", "ln2_b"};
    int idx[16];
    int64_t sizes[16] = {H * HD * DM, H * HD, H * HD * DM, H * HD, H * HD * DM, H * HD, DM * H * HD, DM,
                         DM, DM, FF * DM, FF, DM * FF, DM, DM, DM};
    for (int i = 0; i < 16; i++) {
        bool gain = i == 8 || i == 14;
        idx[i] = add_weight(&w, sizes[i], gain ? 0.5 : -0.2, gain ? 1.5 : 0.2);
    }
    float x[S * DM], mask[S];
    test_fill_uniform_f32(x, S * DM, -1, 1);
    for (int j = 0; j < S; j++) mask[j] = j >= S - 2 ? -1e9f : 0.0f;   /* padding on the last two keys */

    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {S, DM};
    rlx_node X = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node M = rlx_constant(g, RLX_F32, 4, (int64_t[]){1, 1, 1, S}, mask);
    rlx_node p[16];
    for (int i = 0; i < 16; i++) {
        if (i == 0 || i == 2 || i == 4) p[i] = P2(i, H * HD, DM);
        else if (i == 6) p[i] = P2(i, DM, H * HD);
        else if (i == 10) p[i] = P2(i, FF, DM);
        else if (i == 12) p[i] = P2(i, DM, FF);
        else p[i] = P1(i, sizes[i]);
    }
    rlx_node q = split_heads(g, rlx_add(g, rlx_matmul(g, X, p[0], 1), p[1]), H);
    rlx_node k = split_heads(g, rlx_add(g, rlx_matmul(g, X, p[2], 1), p[3]), H);
    rlx_node v = split_heads(g, rlx_add(g, rlx_matmul(g, X, p[4], 1), p[5]), H);
    rlx_node a = merge_heads(g, rlx_attention(g, q, k, v, RLX_MASK_ADDITIVE, M, 0), H);
    a = rlx_add(g, rlx_matmul(g, a, p[6], 1), p[7]);
    rlx_node h1 = rlx_layer_norm(g, rlx_add(g, X, a), p[8], p[9], 1e-12f);
    rlx_node f = rlx_gelu(g, rlx_add(g, rlx_matmul(g, h1, p[10], 1), p[11]));
    f = rlx_add(g, rlx_matmul(g, f, p[12], 1), p[13]);
    rlx_node y = rlx_layer_norm(g, rlx_add(g, h1, f), p[14], p[15], 1e-12f);
    CHECK_OK(rlx_output(g, "y", y));
    CHECK_OK(rlx_graph_status(g));
#undef P1
#undef P2

    double X64[S * DM], q64[S * DM], k64[S * DM], v64[S * DM], qh[S * DM], kh[S * DM], vh[S * DM];
    double att[S * DM], am[S * DM], o[S * DM], s1[S * DM], h64[S * DM], f1[S * FF], f2[S * DM], s2[S * DM];
    double want[S * DM], mask64[S];
    for (int i = 0; i < S * DM; i++) X64[i] = x[i];
    for (int j = 0; j < S; j++) mask64[j] = mask[j];
    ref_shape sx = ref_shape_make(2, xd);
    ref_dense(X64, S, DM, w.d[idx[0]], DM, w.d[idx[1]], q64);
    ref_dense(X64, S, DM, w.d[idx[2]], DM, w.d[idx[3]], k64);
    ref_dense(X64, S, DM, w.d[idx[4]], DM, w.d[idx[5]], v64);
    ref_split_heads(q64, S, H, HD, qh);
    ref_split_heads(k64, S, H, HD, kh);
    ref_split_heads(v64, S, H, HD, vh);
    ref_attention(qh, kh, vh, 1, H, H, S, S, HD, RLX_MASK_ADDITIVE, mask64,
                  ref_shape_make(4, (int64_t[]){1, 1, 1, S}), 0, att);
    ref_merge_heads(att, S, H, HD, am);
    ref_dense(am, S, DM, w.d[idx[6]], DM, w.d[idx[7]], o);
    for (int i = 0; i < S * DM; i++) s1[i] = X64[i] + o[i];
    ref_norm(0, s1, sx, w.d[idx[8]], w.d[idx[9]], 1e-12, h64);
    ref_dense(h64, S, DM, w.d[idx[10]], FF, w.d[idx[11]], f1);
    for (int i = 0; i < S * FF; i++) f1[i] = ref_unop_apply(REF_GELU, f1[i]);
    ref_dense(f1, S, FF, w.d[idx[12]], DM, w.d[idx[13]], f2);
    for (int i = 0; i < S * DM; i++) s2[i] = h64[i] + f2[i];
    ref_norm(0, s2, sx, w.d[idx[14]], w.d[idx[15]], 1e-12, want);

    bool ok = run_and_compare(g, &w, names, x, 0, want, S * DM);
    rlx_graph_free(g);
    free_weights(&w);
    CHECK(ok);
}
