/*
 * llama.h — the Llama-family decoder as an rlx graph: llama 1/2/3, mistral,
 * qwen2 (q/k/v biases), qwen3 (per-head q/k RMSNorm). One graph serves
 * prefill and decode: the token count is a symbol ("seq"), the KV cache is a
 * pair of params per layer written in place (rlx_kv_write), and attention
 * runs at the cache's active extent (rlx_attention_kv), so a decode step is
 * one cached specialization replayed, never a recompile.
 *
 * Inputs:  "tokens" i32 [seq], "pos" i32 [1] (position of tokens[0]),
 *          "kv_len" i32 [1] (= pos + seq).
 * Output:  "logits" f32 [seq, n_vocab] (LLAMA_LOGITS_ALL), or [1, n_vocab] for
 *          the last token (LLAMA_LOGITS_LAST, what model loading builds).
 * Params:  GGUF tensor names ("token_embd.weight", "blk.N.attn_q.weight", ...)
 *          with GGUF's row-major layout ([out, in] for projections), plus
 *          "cache.k.N" / "cache.v.N" [1, n_head_kv, n_ctx, head_dim].
 * RoPE context extension (linear, YaRN) becomes per-frequency divisors on
 * the existing rope op plus an attention scale; see llama_rope_scaling_plan.
 */
#ifndef RLX_MODELS_LLAMA_H
#define RLX_MODELS_LLAMA_H

#include "rlx.h"
#include <stdbool.h>

typedef enum llama_arch {
    LLAMA_ARCH_LLAMA = 0,   /* llama 1/2/3, mistral */
    LLAMA_ARCH_QWEN2 = 1,
    LLAMA_ARCH_QWEN3 = 2,
} llama_arch;

/* RoPE context extension, with llama.cpp's meaning of each field. */
typedef enum llama_rope_scaling_type {
    LLAMA_ROPE_SCALING_NONE   = 0,   /* every other llama_rope_scaling field is ignored */
    LLAMA_ROPE_SCALING_LINEAR = 1,   /* positions / factor */
    LLAMA_ROPE_SCALING_YARN   = 2,   /* per-frequency blend + magnitude (arXiv 2309.00071) */
} llama_rope_scaling_type;

typedef struct llama_rope_scaling {
    int   type;        /* llama_rope_scaling_type; zero-initialised hparams mean no scaling */
    float factor;      /* F > 0: context extension factor (rope.scaling.factor) */
    int   orig_ctx;    /* context length trained before extension; > 0 when ext_factor != 0 */
    float ext_factor;  /* weight of YaRN's extrapolation ramp: 1 for yarn, 0 for linear */
    float beta_fast;   /* ramp ends, in full rotations over orig_ctx: 32 and 1 */
    float beta_slow;
    float log_mul;     /* rope.scaling.yarn_log_multiplier (HF mscale_all_dim); 0 = absent */
    float attn_factor; /* extra multiplier on the cos/sin magnitude (> 0); 1 = none */
} llama_rope_scaling;

typedef struct llama_hparams {
    llama_arch arch;
    int   n_vocab, n_ctx_train, n_embd, n_layer, n_head, n_head_kv, n_ff, head_dim;
    int   rope_dims;           /* rotated dims of each head (rope.dimension_count): even, <= head_dim;
                                  0 means head_dim. The rest of the head passes unrotated. */
    float rms_eps, rope_theta;
    int   rope_style;          /* rlx_rope_style: GGUF llama is GPT-J pairs, qwen NEOX */
    bool  tied_embeddings;     /* no output.weight: reuse token_embd */
    bool  qkv_bias;            /* qwen2; optional for llama */
    bool  out_bias;            /* attn_output.bias: optional for llama */
    bool  qk_norm;             /* qwen3 */
    bool  rope_freq_factors;   /* llama3 scaling: param "rope_freqs.weight" f32 [rotary dims / 2] */
    llama_rope_scaling rope_scaling;   /* applied on top of rope_freq_factors, as llama.cpp does */
} llama_hparams;

/* Checks the hyperparameters (positive sizes, head counts that divide, sane
 * RoPE scaling numbers). */
rlx_status llama_hparams_check(const llama_hparams *hp);

/* RoPE scaling as the graph applies it, for rotary_dims rotated dims:
 *   divisors[i] (i < rotary_dims / 2) divides the frequency of pair i, on top
 *     of rope_freqs.weight: pos * theta^(-2i/R) / (freq_factor[i] * divisors[i]);
 *   *mscale is the magnitude YaRN puts on cos and sin (1 when none);
 *   *attn_scale is what the graph passes to attention: mscale^2 / sqrt(head_dim),
 *     or 0 (attention's default 1/sqrt(D)) when mscale is 1.
 * *active is false when every divisor is 1 (no factor node is needed).
 * Fails (FORMAT) on the numbers llama_hparams_check rejects. */
rlx_status llama_rope_scaling_plan(const llama_hparams *hp, int rotary_dims, float *divisors, bool *active,
                                   double *mscale, float *attn_scale);

/* Storage dtype of a 2-D weight param (f32, f16, bf16 or a block type); the
 * graph then multiplies through rlx_dequant_matmul so the weight stays in
 * that type on the device. NULL means every weight is f32. */
typedef rlx_dtype (*llama_weight_dtype_fn)(void *user, const char *name);

/* Which rows of a run's tokens get logits: every row ([seq, n_vocab]; tests
 * compare a prompt's rows with step-by-step decode), or the last one only
 * ([1, n_vocab]: all that generation samples from, so a prompt's output
 * projection is one row, not one per token, and its result one row to read). */
typedef enum llama_logits { LLAMA_LOGITS_ALL, LLAMA_LOGITS_LAST } llama_logits;

/* Builds the decoder graph for a KV cache of n_ctx positions. */
rlx_status llama_build_graph(const llama_hparams *hp, int n_ctx, llama_logits rows, llama_weight_dtype_fn dtype_of,
                             void *user, rlx_graph **out);

#endif
