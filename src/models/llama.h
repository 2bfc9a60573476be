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
 * Output:  "logits" f32 [seq, n_vocab].
 * Params:  GGUF tensor names ("token_embd.weight", "blk.N.attn_q.weight", ...)
 *          with GGUF's row-major layout ([out, in] for projections), plus
 *          "cache.k.N" / "cache.v.N" [1, n_head_kv, n_ctx, head_dim].
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

typedef struct llama_hparams {
    llama_arch arch;
    int   n_vocab, n_ctx_train, n_embd, n_layer, n_head, n_head_kv, n_ff, head_dim;
    float rms_eps, rope_theta;
    int   rope_style;          /* rlx_rope_style: GGUF llama is GPT-J pairs, qwen NEOX */
    bool  tied_embeddings;     /* no output.weight: reuse token_embd */
    bool  qkv_bias;            /* qwen2 */
    bool  qk_norm;             /* qwen3 */
    bool  rope_freq_factors;   /* llama3 scaling: param "rope_freqs.weight" f32 [head_dim / 2] */
} llama_hparams;

/* Checks the hyperparameters (positive sizes, head counts that divide). */
rlx_status llama_hparams_check(const llama_hparams *hp);

/* Storage dtype of a 2-D weight param (f32, f16, bf16 or a block type); the
 * graph then multiplies through rlx_dequant_matmul so the weight stays in
 * that type on the device. NULL means every weight is f32. */
typedef rlx_dtype (*llama_weight_dtype_fn)(void *user, const char *name);

/* Builds the decoder graph for a KV cache of n_ctx positions. */
rlx_status llama_build_graph(const llama_hparams *hp, int n_ctx, llama_weight_dtype_fn dtype_of, void *user,
                             rlx_graph **out);

#endif
