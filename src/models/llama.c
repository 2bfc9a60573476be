/*
 * llama.c — builds the Llama-family decoder graph through the public API
 * (the model layer is a user of rlx like any other program), and turns RoPE
 * context-extension hyperparameters (linear, YaRN) into what that graph
 * applies.
 */
#include "models/llama.h"
#include "core/core.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static rlx_status rope_scaling_check(const llama_hparams *hp) {
    const llama_rope_scaling *rs = &hp->rope_scaling;
    if (rs->type == LLAMA_ROPE_SCALING_NONE) return RLX_OK;
    if (rs->type != LLAMA_ROPE_SCALING_LINEAR && rs->type != LLAMA_ROPE_SCALING_YARN)
        return rlx_fail(RLX_STATUS_FORMAT, "llama: unknown rope scaling type %d", rs->type);
    if (!(isfinite(rs->factor) && rs->factor > 0) || !(isfinite(rs->attn_factor) && rs->attn_factor > 0) ||
        !isfinite(rs->ext_factor))
        return rlx_fail(RLX_STATUS_FORMAT, "llama: rope scaling factor %g and attention factor %g must be > 0, ext factor %g finite",
                        rs->factor, rs->attn_factor, rs->ext_factor);
    if (rs->ext_factor != 0 &&
        (rs->orig_ctx <= 0 || !(isfinite(rs->beta_fast) && rs->beta_fast > 0) ||
         !(isfinite(rs->beta_slow) && rs->beta_slow > 0) || !isfinite(rs->log_mul)))
        return rlx_fail(RLX_STATUS_FORMAT,
                        "llama: yarn needs an original context > 0 (got %d), beta fast/slow > 0 (got %g/%g), a finite log multiplier (got %g)",
                        rs->orig_ctx, rs->beta_fast, rs->beta_slow, rs->log_mul);
    return RLX_OK;
}

rlx_status llama_hparams_check(const llama_hparams *hp) {
    if (hp->n_vocab <= 0 || hp->n_embd <= 0 || hp->n_layer <= 0 || hp->n_head <= 0 || hp->n_head_kv <= 0 ||
        hp->n_ff <= 0 || hp->head_dim <= 0 || hp->head_dim % 2)
        return rlx_fail(RLX_STATUS_FORMAT, "llama: invalid sizes (vocab %d, embd %d, layers %d, heads %d/%d, ff %d, head dim %d)",
                        hp->n_vocab, hp->n_embd, hp->n_layer, hp->n_head, hp->n_head_kv, hp->n_ff, hp->head_dim);
    if (hp->rope_dims < 0 || hp->rope_dims % 2 || hp->rope_dims > hp->head_dim)
        return rlx_fail(RLX_STATUS_FORMAT, "llama: %d rotary dims must be even and at most the head dim %d", hp->rope_dims,
                        hp->head_dim);
    if (hp->n_head % hp->n_head_kv)
        return rlx_fail(RLX_STATUS_FORMAT, "llama: %d heads are not a multiple of %d KV heads", hp->n_head, hp->n_head_kv);
    if (!(hp->rms_eps > 0) || !(hp->rope_theta > 0))
        return rlx_fail(RLX_STATUS_FORMAT, "llama: rms eps %g and rope theta %g must be > 0", hp->rms_eps, hp->rope_theta);
    return rope_scaling_check(hp);
}

/* ------------------------------------------------------------ rope scaling
 *
 * Definitions (YaRN, arXiv 2309.00071, with the GGUF semantics of llama.cpp,
 * whose ext_factor weighs the ramp). F = factor, R = rotary dims, L = the
 * original context, w_i = theta^(-2i/R) the trained frequency of pair i:
 *   interpolated frequency  w_i / F (linear scaling: positions / F);
 *   the dim at which a frequency turns b times over L:
 *       c(b) = R ln(L / (2 pi b)) / (2 ln theta);
 *   ramp over [lo, hi] = [max(0, floor c(beta_fast)), min(R - 1, ceil c(beta_slow))]:
 *       mix_i = ext_factor * (1 - clamp((i - lo) / max(0.001, hi - lo), 0, 1)),
 *   so fast pairs (i < lo) keep w_i, slow ones (i > hi) get w_i / F;
 *   frequency_i = (w_i / F)(1 - mix_i) + w_i mix_i = w_i / d_i,
 *       d_i = F / ((1 - mix_i) + mix_i F);
 *   magnitude on cos and sin, when ext_factor != 0:
 *       m = g(F, 1) / g(F, log_mul) (the division only when log_mul != 0),
 *       g(F, k) = F <= 1 ? 1 : 1 + 0.1 k ln F; always times attn_factor.
 * Linear scaling is ext_factor = 0: d_i = F for every pair, m = attn_factor.
 *
 * Why divisors: the rope op already divides each pair's frequency by a
 * per-pair factor (llama3's rope_freqs.weight) on the CPU (double angles) and
 * in the Vulkan shader, and the YaRN blend is a per-pair constant, so it is
 * such a factor; no new op, kernel or shader is needed. The divisors are a
 * graph constant; with rope_freqs.weight as well they multiply (one [R/2]
 * elementwise per run, shared by every layer), which is llama.cpp's order:
 * freq factors divide the extrapolated frequency, then YaRN blends.
 *
 * Why the magnitude goes into the attention scale: m on cos and sin scales
 * both roped q and k by m, so q.k by m^2; V is not roped, and only attention
 * reads the roped q and k (the K cache holds them for attention alone). So
 * scale = m^2 / sqrt(head_dim) is exact in real arithmetic, costs nothing,
 * and keeps rope a pure rotation; CPU and Vulkan read the same attribute, so
 * they agree by construction.
 */
static double yarn_magnitude(double factor, double k) { return factor <= 1.0 ? 1.0 : 1.0 + 0.1 * k * log(factor); }

rlx_status llama_rope_scaling_plan(const llama_hparams *hp, int rotary_dims, float *divisors, bool *active,
                                   double *mscale, float *attn_scale) {
    *active = false;
    *mscale = 1.0;
    *attn_scale = 0.0f;
    rlx_status st = rope_scaling_check(hp);
    if (st != RLX_OK) return st;
    if (rotary_dims <= 0 || rotary_dims % 2 || hp->head_dim <= 0 || !(hp->rope_theta > 0))
        return rlx_fail(RLX_STATUS_FORMAT, "llama: rope scaling needs even rotary dims > 0 (got %d), head dim and theta > 0",
                        rotary_dims);
    const llama_rope_scaling *rs = &hp->rope_scaling;
    const int half = rotary_dims / 2;
    for (int i = 0; i < half; i++) divisors[i] = 1.0f;
    if (rs->type == LLAMA_ROPE_SCALING_NONE) return RLX_OK;
    const double F = rs->factor, ext = rs->ext_factor, R = rotary_dims;
    double lo = 0, hi = 0;
    if (ext != 0) {
        const double two_ln_theta = 2.0 * log((double)hp->rope_theta), two_pi = 2.0 * 3.14159265358979323846;
        lo = floor(R * log(rs->orig_ctx / (two_pi * rs->beta_fast)) / two_ln_theta);
        hi = ceil(R * log(rs->orig_ctx / (two_pi * rs->beta_slow)) / two_ln_theta);
        lo = fmax(lo, 0.0);
        hi = fmin(hi, R - 1);
    }
    for (int i = 0; i < half; i++) {
        double mix = 0;
        if (ext != 0) mix = ext * (1.0 - fmin(1.0, fmax(0.0, (i - lo) / fmax(0.001, hi - lo))));
        divisors[i] = (float)(F / ((1.0 - mix) + mix * F));
        if (divisors[i] != 1.0f) *active = true;
    }
    double m = rs->attn_factor;
    if (ext != 0) m *= yarn_magnitude(F, 1.0) / (rs->log_mul != 0 ? yarn_magnitude(F, rs->log_mul) : 1.0);
    if (!(isfinite(m) && m > 0))
        return rlx_fail(RLX_STATUS_FORMAT, "llama: rope scaling magnitude %g (factor %g, log multiplier %g) is not > 0", m, F,
                        rs->log_mul);
    *mscale = m;
    if (m != 1.0) *attn_scale = (float)(m * m / sqrt((double)hp->head_dim));
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

rlx_status llama_build_graph(const llama_hparams *hp, int n_ctx, llama_logits rows, llama_weight_dtype_fn dtype_of,
                             void *user, rlx_graph **out) {
    weight_types wts = {dtype_of, user}, *wt = &wts;
    *out = NULL;
    if (rows != LLAMA_LOGITS_ALL && rows != LLAMA_LOGITS_LAST)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "llama: logits rows %d is neither LLAMA_LOGITS_ALL nor LLAMA_LOGITS_LAST",
                        (int)rows);
    rlx_status st = llama_hparams_check(hp);
    if (st != RLX_OK) return st;
    const int hd = hp->head_dim, E = hp->n_embd, rot = hp->rope_dims ? hp->rope_dims : hd;
    float *rope_div = malloc(sizeof(float) * (size_t)(rot / 2));
    if (!rope_div) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "llama: no memory for %d rope factors", rot / 2);
    bool rope_scaled;
    double mscale;
    float attn_scale;
    st = llama_rope_scaling_plan(hp, rot, rope_div, &rope_scaled, &mscale, &attn_scale);
    rlx_graph *g = st == RLX_OK ? rlx_graph_new() : NULL;
    if (!g) {
        free(rope_div);
        return st != RLX_OK ? st : RLX_STATUS_OUT_OF_MEMORY;
    }
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
    rlx_node freqs = hp->rope_freq_factors ? param1(g, "rope_freqs.weight", 0, rot / 2) : RLX_NO_NODE;
    if (rope_scaled) {   /* linear / YaRN: per-pair divisors on top of any llama3 factors (see above) */
        int64_t half = rot / 2;
        rlx_node div = rlx_constant(g, RLX_F32, 1, &half, rope_div);
        freqs = freqs == RLX_NO_NODE ? div : rlx_mul(g, freqs, div);
    }
    free(rope_div);
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
        q = rlx_rope_scaled(g, q, pos, (rlx_rope_style)hp->rope_style, hp->rope_theta, rot, freqs);
        k = rlx_rope_scaled(g, k, pos, (rlx_rope_style)hp->rope_style, hp->rope_theta, rot, freqs);
        char name[64];
        snprintf(name, sizeof name, "cache.k.%d", l);
        rlx_node kc = rlx_kv_write(g, rlx_param(g, name, RLX_F32, 4, cache_dims), k, pos);
        snprintf(name, sizeof name, "cache.v.%d", l);
        rlx_node vc = rlx_kv_write(g, rlx_param(g, name, RLX_F32, 4, cache_dims), v, pos);
        rlx_node a = rlx_attention_kv(g, q, kc, vc, RLX_MASK_CAUSAL, RLX_NO_NODE, attn_scale, kv_len);
        int perm[4] = {0, 2, 1, 3};
        int64_t flat[2] = {seq, (int64_t)hp->n_head * hd};
        a = rlx_reshape(g, rlx_transpose(g, a, perm), 2, flat);
        rlx_node bo = hp->out_bias ? param1(g, "blk.%d.attn_output.bias", l, E) : RLX_NO_NODE;
        x = rlx_add(g, x, linear(g, a, param2(g, wt, "blk.%d.attn_output.weight", l, E, (int64_t)hp->n_head * hd), bo));
        rlx_node f = rlx_rms_norm(g, x, param1(g, "blk.%d.ffn_norm.weight", l, E), RLX_NO_NODE, hp->rms_eps);
        rlx_node gate = rlx_silu(g, linear(g, f, param2(g, wt, "blk.%d.ffn_gate.weight", l, hp->n_ff, E), RLX_NO_NODE));
        rlx_node up = linear(g, f, param2(g, wt, "blk.%d.ffn_up.weight", l, hp->n_ff, E), RLX_NO_NODE);
        x = rlx_add(g, x, linear(g, rlx_mul(g, gate, up), param2(g, wt, "blk.%d.ffn_down.weight", l, E, hp->n_ff), RLX_NO_NODE));
    }
    /* the last row is a view (no copy), also in decode where it is the only one */
    if (rows == LLAMA_LOGITS_LAST) x = rlx_slice_last(g, x, 0, 1);
    x = rlx_rms_norm(g, x, param1(g, "output_norm.weight", 0, E), RLX_NO_NODE, hp->rms_eps);
    rlx_node w_out = hp->tied_embeddings ? embd : param2(g, wt, "output.weight", 0, hp->n_vocab, E);
    rlx_output(g, "logits", linear(g, x, w_out, RLX_NO_NODE));
    st = rlx_graph_status(g);
    if (st != RLX_OK) { rlx_graph_free(g); return st; }
    *out = g;
    return RLX_OK;
}
