/*
 * encoder.h — BERT-family encoders from Hugging Face folders: the
 * architecture tables (which tensors each family has and what they are
 * called), config.json -> enc_config, and the graph of one forward pass.
 *
 * Families: BERT (bert-base/large, MiniLM, e5, bge checkpoints), RoBERTa and
 * XLM-R (positions offset by pad_token_id + 1, one token type), DistilBERT
 * (no token types, its own tensor names). All are post-LN: embeddings +
 * LayerNorm, then per layer self-attention with a padding mask, residual +
 * LayerNorm, a two-layer FFN (GELU by default), residual + LayerNorm.
 *
 * The graph has symbolic batch and sequence dims (B, S), so one compiled
 * exec serves every batch shape (each new shape is specialized once and
 * cached). Inputs: input_ids, position_ids, token_type_ids (when the model
 * has token types) as i32 [B, S], attention_mask f32 [B, S] (1 keep, 0 pad).
 * Outputs: last_hidden_state [B, S, H], embedding [B, H] (the chosen pooling,
 * optionally L2-normalized), pooler_output [B, H] (BERT's tanh pooler, when
 * the checkpoint has one) and logits [B, labels] (a sequence-classification
 * head, when it has one).
 *
 * Weights are params named as in the checkpoint (the tensor name without
 * the task model's "bert." / "roberta." / "distilbert." prefix); 2-D weights
 * keep their file dtype (f32, f16, bf16) and multiply through
 * rlx_dequant_matmul when 16-bit; 1-D ones (biases, LayerNorm) are f32
 * params converted on load.
 */
#ifndef RLX_MODELS_ENCODER_H
#define RLX_MODELS_ENCODER_H

#include "core/core.h"
#include "core/json.h"

typedef enum enc_arch { ENC_ARCH_BERT, ENC_ARCH_ROBERTA, ENC_ARCH_DISTILBERT, ENC_ARCH_COUNT } enc_arch;

/* Tensor roles. Per-layer roles have a %d for the layer in their names. */
typedef enum enc_role {
    ER_WORD_EMB, ER_POS_EMB, ER_TYPE_EMB, ER_EMB_LN_W, ER_EMB_LN_B,
    ER_Q_W, ER_Q_B, ER_K_W, ER_K_B, ER_V_W, ER_V_B, ER_O_W, ER_O_B, ER_ATT_LN_W, ER_ATT_LN_B,
    ER_FF1_W, ER_FF1_B, ER_FF2_W, ER_FF2_B, ER_OUT_LN_W, ER_OUT_LN_B,
    ER_POOL_W, ER_POOL_B,            /* BERT's pooler (tanh(W h_cls + b)) */
    ER_HEAD_DENSE_W, ER_HEAD_DENSE_B, /* the head's hidden layer (RoBERTa: tanh, DistilBERT: relu) */
    ER_HEAD_W, ER_HEAD_B,            /* the classifier's output layer */
    ER_COUNT
} enc_role;
#define ER_FIRST_LAYER ER_Q_W
#define ER_LAST_LAYER  ER_OUT_LN_B

typedef enum enc_pooling { ENC_POOL_CLS, ENC_POOL_MEAN, ENC_POOL_MAX } enc_pooling;

typedef struct enc_config {
    enc_arch    arch;
    char        model_type[32];
    int64_t     vocab, hidden, layers, heads, ff, max_pos, type_vocab;
    int64_t     pos_offset;        /* RoBERTa / XLM-R: pad_token_id + 1; else 0 */
    int64_t     pad_id;            /* pad_token_id, -1 when absent */
    double      ln_eps;
    int         act;               /* rlx_activation of the FFN */
    int         num_labels;        /* from id2label (or num_labels); 0: none in the config */
    char      **labels;            /* num_labels names (malloc'ed), "LABEL_i" when unnamed */
} enc_config;

/* The name pattern of a role in a family ("encoder.layer.%d.attention.self.query.weight"),
 * or NULL when the family has no such tensor. */
const char *enc_role_name(enc_arch arch, enc_role r);
/* The prefix of a task model's backbone tensors ("bert.", "roberta.", "distilbert."). */
const char *enc_arch_prefix(enc_arch arch);

/* config.json (parsed) -> c. RLX_STATUS_UNSUPPORTED naming an unknown
 * model_type, hidden_act or position_embedding_type; RLX_STATUS_FORMAT
 * naming a missing or out-of-range key. c->labels is freed by
 * enc_config_clear. */
rlx_status enc_config_parse(const json_value *root, const char *what, enc_config *c);
void       enc_config_clear(enc_config *c);

/* Which optional parts the checkpoint has, and the dtypes of its 2-D weights. */
typedef struct enc_parts {
    bool has_pooler, has_head_dense, has_head;
    rlx_dtype wdtype[ER_COUNT];    /* per role: the file dtype of a 2-D weight (layer 0 for layer roles) */
} enc_parts;

/* The forward graph (see the header comment); pooling and normalize pick the
 * embedding output. */
rlx_graph *enc_build_graph(const enc_config *c, const enc_parts *parts, enc_pooling pooling, bool normalize);

#endif
