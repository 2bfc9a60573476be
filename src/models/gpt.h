/*
 * gpt.h — a GPT-style decoder for training from scratch (`rlx train`): byte
 * tokens (vocab 256), learned or rotary positions, pre-LN blocks (LayerNorm,
 * causal self-attention, LayerNorm, GELU MLP with the tanh form, as GPT-2),
 * a final LayerNorm and the head tied to the token embedding.
 *
 * Inputs:  "tokens" i32 [B, S], "positions" i32 [S] (0..S-1: learned
 *          positions read rows of wpe), and for training "targets" i32
 *          [B, S] and "lr" f32 [1].
 * Outputs: training: "loss" (mean cross-entropy, f32 []), "grad_norm";
 *          GPT_GRADS also "grad.<param>" per param (no optimizer);
 *          sampling: "logits" f32 [S, V], every position (batch 1); since
 *          attention is causal, a window padded on the right gives the same
 *          logits at its real positions, so a sampler can round lengths up
 *          to a few specializations.
 * Params:  "wte" [V, D], "wpe" [max_seq, D] (learned positions), per block i
 *          "h.i.ln1.weight/.bias", "h.i.attn.qkv.weight" [3D, D] + ".bias",
 *          "h.i.attn.proj.weight" [D, D] + ".bias", "h.i.ln2.*",
 *          "h.i.mlp.fc.weight" [F, D] + ".bias", "h.i.mlp.proj.weight"
 *          [D, F] + ".bias"; "ln_f.weight/.bias". Projections are [out, in]
 *          as torch's nn.Linear stores them. AdamW state params follow
 *          (rlx_optimizer_step's names).
 */
#ifndef RLX_MODELS_GPT_H
#define RLX_MODELS_GPT_H

#include "rlx.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct gpt_config {
    int  vocab;      /* 256: bytes */
    int  layers, d_model, heads, d_ff;   /* d_ff 0: 4 d_model */
    int  max_seq;    /* positions (learned) / the longest window */
    bool rope;       /* rotary positions (theta 10000, NEOX pairs) instead of wpe */
} gpt_config;

typedef enum gpt_graph_kind {
    GPT_TRAIN = 0,    /* loss, its gradient and one AdamW step (in place) */
    GPT_GRADS = 1,    /* loss and every param's gradient as outputs, no update */
    GPT_SAMPLE = 2,   /* logits of every position, batch 1, symbolic seq */
} gpt_graph_kind;

/* Range checks, with a message naming the field. */
rlx_status gpt_config_check(const gpt_config *c);
/* Builds the graph (batch B and seq S static for training; for GPT_SAMPLE
 * the seq is the symbol "seq" and B 1). opt: AdamW's options (GPT_TRAIN). */
rlx_status gpt_build(const gpt_config *c, gpt_graph_kind kind, int B, int S, const rlx_optimizer_options *opt,
                     rlx_graph **out);
/* Param count and names (the model's own, not optimizer state): name i into buf. */
int  gpt_param_count(const gpt_config *c);
void gpt_param_name(const gpt_config *c, int i, char *buf, size_t n);
/* Sets every model param of e to GPT-2's initialization from seed: N(0, 0.02)
 * weights, the residual projections scaled by 1 / sqrt(2 layers), zero
 * biases, LayerNorm weights 1. */
rlx_status gpt_init_params(const gpt_config *c, rlx_exec *e, uint64_t seed);

/* An output folder's config.json: {"model_type": "rlx-gpt", the config's
 * fields, and `extra` (JSON members, e.g. the training settings, or NULL)}.
 * Written to a temporary file renamed into place. */
rlx_status gpt_save_config(const char *dir, const gpt_config *c, const char *extra);
/* Reads dir/config.json; FORMAT naming the key when it is not an rlx-gpt
 * config, and gpt_config_check's errors. */
rlx_status gpt_load_config(const char *dir, gpt_config *c);

#endif
