/*
 * llama.c — builds the Llama-family decoder graph through the public API
 * (the model layer is a user of rlx like any other program).
 */
#include "models/llama.h"
#include "core/core.h"
#include <stdio.h>

rlx_status llama_hparams_check(const llama_hparams *hp) {
    if (hp->n_vocab <= 0 || hp->n_embd <= 0 || hp->n_layer <= 0 || hp->n_head <= 0 || hp->n_head_kv <= 0 ||
        hp->n_ff <= 0 || hp->head_dim <= 0 || hp->head_dim % 2)
        return rlx_fail(RLX_STATUS_FORMAT, "llama: invalid sizes (vocab %d, embd %d, layers %d, heads %d/%d, ff %d, head dim %d)",
                        hp->n_vocab, hp->n_embd, hp->n_layer, hp->n_head, hp->n_head_kv, hp->n_ff, hp->head_dim);
    if (hp->n_head % hp->n_head_kv)
        return rlx_fail(RLX_STATUS_FORMAT, "llama: %d heads are not a multiple of %d KV heads", hp->n_head, hp->n_head_kv);
    if (!(hp->rms_eps > 0) || !(hp->rope_theta > 0))
        return rlx_fail(RLX_STATUS_FORMAT, "llama: rms eps %g and rope theta %g must be > 0", hp->rms_eps, hp->rope_theta);
    return RLX_OK;
}

static rlx_node param1(rlx_graph *g, const char *fmt, int layer, int64_t d0) {
    char name[96];
    snprintf(name, sizeof name, fmt, layer);
    return rlx_param(g, name, RLX_F32, 1, &d0);
}

/* Weight storage choice, threaded through the builder. */
typedef struct weight_types {
    llama_weight_dtype_fn fn;
    void *user;
} weight_types;

static rlx_node param2(rlx_graph *g, const weight_types *wt, const char *fmt, int layer, int64_t d0, int64_t d1) {
    char name[96];
    int64_t d[2] = {d0, d1};
    snprintf(name, sizeof name, fmt, layer);
    rlx_dtype dt = wt && wt->fn ? wt->fn(wt->user, name) : RLX_F32;
    return rlx_param(g, name, dt, 2, d);
}

/* x [seq, in] times W [out, in]^T (+ bias [out]): f32 weights go through the
 * GEMM (and its bias/activation fusion), others stay in their storage type. */
static rlx_node linear(rlx_graph *g, rlx_node x, rlx_node w, rlx_node bias) {
    rlx_dtype wdt;
    rlx_node_shape(g, w, &wdt, NULL, NULL);
    rlx_node y = wdt == RLX_F32 ? rlx_matmul(g, x, w, 1) : rlx_dequant_matmul(g, x, w);
    return bias == RLX_NO_NODE ? y : rlx_add(g, y, bias);
}

/* [seq, heads*hd] -> [1, heads, seq, hd] */
static rlx_node split_heads(rlx_graph *g, rlx_node x, int64_t seq, int heads, int hd) {
    int64_t d[4] = {1, seq, heads, hd};
    int perm[4] = {0, 2, 1, 3};
    return rlx_transpose(g, rlx_reshape(g, x, 4, d), perm);
}

rlx_status llama_build_graph(const llama_hparams *hp, int n_ctx, llama_weight_dtype_fn dtype_of, void *user,
                             rlx_graph **out) {
    weight_types wts = {dtype_of, user}, *wt = &wts;
    *out = NULL;
    rlx_status st = llama_hparams_check(hp);
    if (st != RLX_OK) return st;
    rlx_graph *g = rlx_graph_new();
    if (!g) return RLX_STATUS_OUT_OF_MEMORY;
    const int hd = hp->head_dim, E = hp->n_embd;
    int64_t seq = rlx_symbol(g, "seq");
    int64_t tok_dims[1] = {seq}, one[1] = {1};
    rlx_node tokens = rlx_input(g, "tokens", RLX_I32, 1, tok_dims);
    rlx_node pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node kv_len = rlx_input(g, "kv_len", RLX_I32, 1, one);
    rlx_node embd = param2(g, wt, "token_embd.weight", 0, hp->n_vocab, E);
    rlx_node x = rlx_gather_rows(g, embd, tokens);   /* block types decode to f32 */
    rlx_dtype xdt;
    rlx_node_shape(g, x, &xdt, NULL, NULL);
    if (xdt != RLX_F32) x = rlx_cast(g, x, RLX_F32);
    int64_t cache_dims[4] = {1, hp->n_head_kv, n_ctx, hd};
    rlx_node freqs = hp->rope_freq_factors ? param1(g, "rope_freqs.weight", 0, hd / 2) : RLX_NO_NODE;
    for (int l = 0; l < hp->n_layer; l++) {
        rlx_node h = rlx_rms_norm(g, x, param1(g, "blk.%d.attn_norm.weight", l, E), RLX_NO_NODE, hp->rms_eps);
        rlx_node bq = RLX_NO_NODE, bk = RLX_NO_NODE, bv = RLX_NO_NODE;
        if (hp->qkv_bias) {
            bq = param1(g, "blk.%d.attn_q.bias", l, (int64_t)hp->n_head * hd);
            bk = param1(g, "blk.%d.attn_k.bias", l, (int64_t)hp->n_head_kv * hd);
            bv = param1(g, "blk.%d.attn_v.bias", l, (int64_t)hp->n_head_kv * hd);
        }
        rlx_node q = linear(g, h, param2(g, wt, "blk.%d.attn_q.weight", l, (int64_t)hp->n_head * hd, E), bq);
        rlx_node k = linear(g, h, param2(g, wt, "blk.%d.attn_k.weight", l, (int64_t)hp->n_head_kv * hd, E), bk);
        rlx_node v = linear(g, h, param2(g, wt, "blk.%d.attn_v.weight", l, (int64_t)hp->n_head_kv * hd, E), bv);
        q = split_heads(g, q, seq, hp->n_head, hd);
        k = split_heads(g, k, seq, hp->n_head_kv, hd);
        v = split_heads(g, v, seq, hp->n_head_kv, hd);
        if (hp->qk_norm) {   /* qwen3: RMSNorm over each head's vector */
            q = rlx_rms_norm(g, q, param1(g, "blk.%d.attn_q_norm.weight", l, hd), RLX_NO_NODE, hp->rms_eps);
            k = rlx_rms_norm(g, k, param1(g, "blk.%d.attn_k_norm.weight", l, hd), RLX_NO_NODE, hp->rms_eps);
        }
        q = rlx_rope_scaled(g, q, pos, (rlx_rope_style)hp->rope_style, hp->rope_theta, hd, freqs);
        k = rlx_rope_scaled(g, k, pos, (rlx_rope_style)hp->rope_style, hp->rope_theta, hd, freqs);
        char name[64];
        snprintf(name, sizeof name, "cache.k.%d", l);
        rlx_node kc = rlx_kv_write(g, rlx_param(g, name, RLX_F32, 4, cache_dims), k, pos);
        snprintf(name, sizeof name, "cache.v.%d", l);
        rlx_node vc = rlx_kv_write(g, rlx_param(g, name, RLX_F32, 4, cache_dims), v, pos);
        rlx_node a = rlx_attention_kv(g, q, kc, vc, RLX_MASK_CAUSAL, RLX_NO_NODE, 0, kv_len);
        int perm[4] = {0, 2, 1, 3};
        int64_t flat[2] = {seq, (int64_t)hp->n_head * hd};
        a = rlx_reshape(g, rlx_transpose(g, a, perm), 2, flat);
        x = rlx_add(g, x, linear(g, a, param2(g, wt, "blk.%d.attn_output.weight", l, E, (int64_t)hp->n_head * hd), RLX_NO_NODE));
        rlx_node f = rlx_rms_norm(g, x, param1(g, "blk.%d.ffn_norm.weight", l, E), RLX_NO_NODE, hp->rms_eps);
        rlx_node gate = rlx_silu(g, linear(g, f, param2(g, wt, "blk.%d.ffn_gate.weight", l, hp->n_ff, E), RLX_NO_NODE));
        rlx_node up = linear(g, f, param2(g, wt, "blk.%d.ffn_up.weight", l, hp->n_ff, E), RLX_NO_NODE);
        x = rlx_add(g, x, linear(g, rlx_mul(g, gate, up), param2(g, wt, "blk.%d.ffn_down.weight", l, E, hp->n_ff), RLX_NO_NODE));
    }
    x = rlx_rms_norm(g, x, param1(g, "output_norm.weight", 0, E), RLX_NO_NODE, hp->rms_eps);
    rlx_node w_out = hp->tied_embeddings ? embd : param2(g, wt, "output.weight", 0, hp->n_vocab, E);
    rlx_output(g, "logits", linear(g, x, w_out, RLX_NO_NODE));
    st = rlx_graph_status(g);
    if (st != RLX_OK) { rlx_graph_free(g); return st; }
    *out = g;
    return RLX_OK;
}
