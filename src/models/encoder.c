/*
 * encoder.c — the BERT-family tables, config.json parsing and the forward
 * graph of models/encoder.h. Loading the weights, the tokenizer and the
 * public rlx_encoder API are in encoder_load.c.
 */
#include "models/encoder.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- tables */

#define BERT_LAYER(s) "encoder.layer.%d." s
#define DB_LAYER(s)   "transformer.layer.%d." s

/* BERT and RoBERTa share every name but the head's. */
#define BERT_BACKBONE                                                                                             \
    "embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",                                 \
        "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias",    \
        BERT_LAYER("attention.self.query.weight"), BERT_LAYER("attention.self.query.bias"),                       \
        BERT_LAYER("attention.self.key.weight"), BERT_LAYER("attention.self.key.bias"),                           \
        BERT_LAYER("attention.self.value.weight"), BERT_LAYER("attention.self.value.bias"),                       \
        BERT_LAYER("attention.output.dense.weight"), BERT_LAYER("attention.output.dense.bias"),                   \
        BERT_LAYER("attention.output.LayerNorm.weight"), BERT_LAYER("attention.output.LayerNorm.bias"),           \
        BERT_LAYER("intermediate.dense.weight"), BERT_LAYER("intermediate.dense.bias"),                           \
        BERT_LAYER("output.dense.weight"), BERT_LAYER("output.dense.bias"),                                       \
        BERT_LAYER("output.LayerNorm.weight"), BERT_LAYER("output.LayerNorm.bias"),                               \
        "pooler.dense.weight", "pooler.dense.bias"

static const char *const NAMES[ENC_ARCH_COUNT][ER_COUNT] = {
    [ENC_ARCH_BERT] = {BERT_BACKBONE, NULL, NULL, "classifier.weight", "classifier.bias"},
    [ENC_ARCH_ROBERTA] = {BERT_BACKBONE, "classifier.dense.weight", "classifier.dense.bias",
                          "classifier.out_proj.weight", "classifier.out_proj.bias"},
    [ENC_ARCH_DISTILBERT] = {
        "embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
        NULL, "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias",
        DB_LAYER("attention.q_lin.weight"), DB_LAYER("attention.q_lin.bias"),
        DB_LAYER("attention.k_lin.weight"), DB_LAYER("attention.k_lin.bias"),
        DB_LAYER("attention.v_lin.weight"), DB_LAYER("attention.v_lin.bias"),
        DB_LAYER("attention.out_lin.weight"), DB_LAYER("attention.out_lin.bias"),
        DB_LAYER("sa_layer_norm.weight"), DB_LAYER("sa_layer_norm.bias"),
        DB_LAYER("ffn.lin1.weight"), DB_LAYER("ffn.lin1.bias"),
        DB_LAYER("ffn.lin2.weight"), DB_LAYER("ffn.lin2.bias"),
        DB_LAYER("output_layer_norm.weight"), DB_LAYER("output_layer_norm.bias"),
        NULL, NULL,
        "pre_classifier.weight", "pre_classifier.bias",
        "classifier.weight", "classifier.bias",
    },
};

static const char *const PREFIX[ENC_ARCH_COUNT] = {"bert.", "roberta.", "distilbert."};

const char *enc_role_name(enc_arch arch, enc_role r) {
    return (unsigned)arch < ENC_ARCH_COUNT && (unsigned)r < ER_COUNT ? NAMES[arch][r] : NULL;
}
const char *enc_arch_prefix(enc_arch arch) { return (unsigned)arch < ENC_ARCH_COUNT ? PREFIX[arch] : ""; }

/* model_type -> family */
static const struct { const char *type; enc_arch arch; } ARCHES[] = {
    {"bert", ENC_ARCH_BERT},       {"roberta", ENC_ARCH_ROBERTA}, {"xlm-roberta", ENC_ARCH_ROBERTA},
    {"camembert", ENC_ARCH_ROBERTA}, {"distilbert", ENC_ARCH_DISTILBERT},
};

/* hidden_act / activation -> rlx_activation */
static const struct { const char *name; int act; } ACTS[] = {
    {"gelu", RLX_ACT_GELU},           {"gelu_new", RLX_ACT_GELU_TANH}, {"gelu_pytorch_tanh", RLX_ACT_GELU_TANH},
    {"gelu_fast", RLX_ACT_GELU_TANH}, {"relu", RLX_ACT_RELU},          {"silu", RLX_ACT_SILU},
    {"swish", RLX_ACT_SILU},          {"tanh", RLX_ACT_TANH},
};

/* ---------------------------------------------------------------- config */

/* obj[key] as an integer in [lo, hi], or dflt when absent (dflt < lo: required). */
static rlx_status get_int(const json_value *obj, const char *what, const char *key, int64_t lo, int64_t hi,
                          int64_t dflt, int64_t *out) {
    const json_value *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) {
        if (dflt < lo) return rlx_fail(RLX_STATUS_FORMAT, "%s: key '%s' is missing", what, key);
        *out = dflt;
        return RLX_OK;
    }
    char buf[96];
    snprintf(buf, sizeof buf, "%s key '%s'", what, key);
    rlx_status st = json_as_i64(v, buf, out);
    if (st != RLX_OK) return st;
    if (*out < lo || *out > hi)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: '%s' is %lld, outside [%lld, %lld]", what, key, (long long)*out,
                        (long long)lo, (long long)hi);
    return RLX_OK;
}

static rlx_status get_str(const json_value *obj, const char *what, const char *key, const char *dflt, const char **out) {
    const json_value *v = json_get(obj, key);
    if (!v || v->type == JSON_NULL) {
        *out = dflt;
        return RLX_OK;
    }
    char buf[96];
    snprintf(buf, sizeof buf, "%s key '%s'", what, key);
    return json_as_str(v, buf, out, NULL);
}

/* id2label {"0": "NEG", ...}: names by id, "LABEL_i" for ids it leaves out. */
static rlx_status parse_labels(const json_value *root, const char *what, enc_config *c) {
    const json_value *m = json_get(root, "id2label");
    int64_t n = 0;
    if (m && m->type == JSON_OBJECT) n = (int64_t)json_len(m);
    else if (get_int(root, what, "num_labels", 0, 100000, 0, &n) != RLX_OK) return RLX_STATUS_FORMAT;
    if (n <= 0) return RLX_OK;
    if (n > 100000) return rlx_fail(RLX_STATUS_FORMAT, "%s: %lld labels", what, (long long)n);
    c->labels = calloc((size_t)n, sizeof *c->labels);
    if (!c->labels) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: labels", what);
    c->num_labels = (int)n;
    for (int64_t i = 0; m && m->type == JSON_OBJECT && i < n; i++) {
        const json_member *mb = json_member_at(m, (size_t)i);
        char *end;
        long id = strtol(mb->key, &end, 10);
        if (*end || end == mb->key || id < 0 || id >= n || mb->value.type != JSON_STRING)
            return rlx_fail(RLX_STATUS_FORMAT, "%s: id2label entry '%s' is not an id below %lld with a string name", what,
                            mb->key, (long long)n);
        if (c->labels[id]) return rlx_fail(RLX_STATUS_FORMAT, "%s: id2label names id %ld twice", what, id);
        if (!(c->labels[id] = strdup(mb->value.u.str.s)))
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: labels", what);
    }
    for (int i = 0; i < c->num_labels; i++) {
        if (c->labels[i]) continue;
        char buf[32];
        snprintf(buf, sizeof buf, "LABEL_%d", i);
        if (!(c->labels[i] = strdup(buf))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: labels", what);
    }
    return RLX_OK;
}

rlx_status enc_config_parse(const json_value *root, const char *what, enc_config *c) {
    memset(c, 0, sizeof *c);
    c->pad_id = -1;
    if (!root || root->type != JSON_OBJECT) return rlx_fail(RLX_STATUS_FORMAT, "%s: not a JSON object", what);
    const char *type;
    rlx_status st = json_get_str(root, "model_type", &type, NULL);
    if (st != RLX_OK) return rlx_fail(RLX_STATUS_FORMAT, "%s: no 'model_type' string", what);
    size_t a = 0, na = sizeof ARCHES / sizeof ARCHES[0];
    while (a < na && strcmp(ARCHES[a].type, type) != 0) a++;
    if (a == na)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: model_type '%s' is not an encoder rlx builds (bert, roberta, "
                        "xlm-roberta, camembert, distilbert)", what, type);
    c->arch = ARCHES[a].arch;
    snprintf(c->model_type, sizeof c->model_type, "%s", type);
    const bool db = c->arch == ENC_ARCH_DISTILBERT;
    const int64_t BIG = (int64_t)1 << 24;
    const char *act = NULL;
    if ((st = get_int(root, what, "vocab_size", 1, (int64_t)1 << 30, -1, &c->vocab)) != RLX_OK ||
        (st = get_int(root, what, db ? "dim" : "hidden_size", 1, BIG, db ? 768 : -1, &c->hidden)) != RLX_OK ||
        (st = get_int(root, what, db ? "n_layers" : "num_hidden_layers", 1, 1000, db ? 6 : -1, &c->layers)) != RLX_OK ||
        (st = get_int(root, what, db ? "n_heads" : "num_attention_heads", 1, 4096, db ? 12 : -1, &c->heads)) != RLX_OK ||
        (st = get_int(root, what, db ? "hidden_dim" : "intermediate_size", 1, BIG, db ? 3072 : -1, &c->ff)) != RLX_OK ||
        (st = get_int(root, what, "max_position_embeddings", 1, BIG, 512, &c->max_pos)) != RLX_OK ||
        (st = get_int(root, what, "type_vocab_size", 0, 1 << 16, db ? 0 : 2, &c->type_vocab)) != RLX_OK ||
        (st = get_int(root, what, "pad_token_id", 0, (int64_t)1 << 30, c->arch == ENC_ARCH_ROBERTA ? 1 : 0, &c->pad_id)) != RLX_OK ||
        (st = get_str(root, what, db ? "activation" : "hidden_act", "gelu", &act)) != RLX_OK)
        return st;
    if (db) c->type_vocab = 0;
    size_t k = 0, nk = sizeof ACTS / sizeof ACTS[0];
    while (k < nk && strcmp(ACTS[k].name, act) != 0) k++;
    if (k == nk) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: activation '%s' is not supported", what, act);
    c->act = ACTS[k].act;
    const char *pet;
    if ((st = get_str(root, what, "position_embedding_type", "absolute", &pet)) != RLX_OK) return st;
    if (strcmp(pet, "absolute") != 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: position_embedding_type '%s' (only 'absolute')", what, pet);
    c->ln_eps = 1e-12;
    const json_value *eps = json_get(root, "layer_norm_eps");
    if (!db && eps && eps->type != JSON_NULL) {
        if ((st = json_as_f64(eps, "config.json key 'layer_norm_eps'", &c->ln_eps)) != RLX_OK) return st;
        if (!(c->ln_eps > 0 && c->ln_eps < 1))
            return rlx_fail(RLX_STATUS_FORMAT, "%s: layer_norm_eps %g is outside (0, 1)", what, c->ln_eps);
    }
    if (c->hidden % c->heads != 0)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: hidden size %lld is not a multiple of %lld heads", what,
                        (long long)c->hidden, (long long)c->heads);
    c->pos_offset = c->arch == ENC_ARCH_ROBERTA ? c->pad_id + 1 : 0;
    if (c->pos_offset >= c->max_pos)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: pad_token_id %lld leaves no positions below max_position_embeddings %lld",
                        what, (long long)c->pad_id, (long long)c->max_pos);
    return parse_labels(root, what, c);
}

void enc_config_clear(enc_config *c) {
    if (!c) return;
    for (int i = 0; i < c->num_labels && c->labels; i++) free(c->labels[i]);
    free(c->labels);
    c->labels = NULL;
    c->num_labels = 0;
}

/* ----------------------------------------------------------------- graph */

typedef struct gb {
    rlx_graph        *g;
    const enc_config *c;
    const enc_parts  *p;
    int64_t           B, S;   /* symbols */
} gb;

static rlx_node param_named(gb *b, enc_role r, int layer, rlx_dtype dt, int rank, const int64_t *dims) {
    char name[160];
    snprintf(name, sizeof name, enc_role_name(b->c->arch, r), layer);
    return rlx_param(b->g, name, dt, rank, dims);
}

static rlx_node activate(rlx_graph *g, rlx_node x, int act) {
    switch (act) {
    case RLX_ACT_RELU: return rlx_relu(g, x);
    case RLX_ACT_GELU: return rlx_gelu(g, x);
    case RLX_ACT_GELU_TANH: return rlx_gelu_tanh(g, x);
    case RLX_ACT_SILU: return rlx_silu(g, x);
    case RLX_ACT_SIGMOID: return rlx_sigmoid(g, x);
    case RLX_ACT_TANH: return rlx_tanh(g, x);
    default: return x;
    }
}

/* act(x W^T + b), W [out, in] of role rw in its file dtype, b f32. */
static rlx_node linear(gb *b, rlx_node x, enc_role rw, int layer, int64_t out, int64_t in, int act) {
    int64_t wd[2] = {out, in};
    rlx_dtype wdt = b->p->wdtype[rw];
    rlx_node w = param_named(b, rw, layer, wdt, 2, wd), bias = param_named(b, (enc_role)(rw + 1), layer, RLX_F32, 1, &out);
    if (wdt == RLX_F32) return rlx_matmul_bias_act(b->g, x, w, 1, bias, (rlx_activation)act);
    return activate(b->g, rlx_add(b->g, rlx_dequant_matmul(b->g, x, w), bias), act);
}

static rlx_node layer_norm(gb *b, rlx_node x, enc_role rw, int layer) {
    int64_t h = b->c->hidden;
    return rlx_layer_norm(b->g, x, param_named(b, rw, layer, RLX_F32, 1, &h), param_named(b, (enc_role)(rw + 1), layer, RLX_F32, 1, &h),
                          (float)b->c->ln_eps);
}

static rlx_node embed(gb *b, enc_role r, int64_t rows, const char *ids_name) {
    int64_t td[2] = {rows, b->c->hidden}, id[2] = {b->B, b->S};
    rlx_dtype dt = b->p->wdtype[r];
    rlx_node e = rlx_gather_rows(b->g, param_named(b, r, 0, dt, 2, td), rlx_input(b->g, ids_name, RLX_I32, 2, id));
    return dt == RLX_F32 ? e : rlx_cast(b->g, e, RLX_F32);
}

static rlx_node heads(gb *b, rlx_node x) {   /* [B, S, H] -> [B, nh, S, hd] */
    int64_t d[4] = {b->B, b->S, b->c->heads, b->c->hidden / b->c->heads};
    static const int perm[4] = {0, 2, 1, 3};
    return rlx_transpose(b->g, rlx_reshape(b->g, x, 4, d), perm);
}

static rlx_node merge_heads(gb *b, rlx_node a) {   /* [B, nh, S, hd] -> [B, S, H] */
    static const int perm[4] = {0, 2, 1, 3};
    int64_t d[3] = {b->B, b->S, b->c->hidden};
    return rlx_reshape(b->g, rlx_transpose(b->g, a, perm), 3, d);
}

rlx_graph *enc_build_graph(const enc_config *c, const enc_parts *parts, enc_pooling pooling, bool normalize) {
    rlx_graph *g = rlx_graph_new();
    if (!g) return NULL;
    gb b = {g, c, parts, rlx_symbol(g, "batch"), rlx_symbol(g, "seq")};
    const int64_t H = c->hidden;
    rlx_node one = rlx_scalar(g, RLX_F32, 1.0), big = rlx_scalar(g, RLX_F32, 1e30);

    rlx_node x = rlx_add(g, embed(&b, ER_WORD_EMB, c->vocab, "input_ids"), embed(&b, ER_POS_EMB, c->max_pos, "position_ids"));
    if (c->type_vocab > 0) x = rlx_add(g, x, embed(&b, ER_TYPE_EMB, c->type_vocab, "token_type_ids"));
    x = layer_norm(&b, x, ER_EMB_LN_W, 0);

    int64_t md[2] = {b.B, b.S}, m4d[4] = {b.B, 1, 1, b.S}, m3d[3] = {b.B, b.S, 1};
    rlx_node mask = rlx_input(g, "attention_mask", RLX_F32, 2, md);
    rlx_node madd = rlx_mul(g, rlx_sub(g, mask, one), big);   /* 0 keep, -1e30 pad */
    rlx_node m4 = rlx_reshape(g, madd, 4, m4d);
    for (int l = 0; l < c->layers; l++) {
        rlx_node q = linear(&b, x, ER_Q_W, l, H, H, RLX_ACT_NONE), k = linear(&b, x, ER_K_W, l, H, H, RLX_ACT_NONE),
                 v = linear(&b, x, ER_V_W, l, H, H, RLX_ACT_NONE);
        rlx_node a = merge_heads(&b, rlx_attention(g, heads(&b, q), heads(&b, k), heads(&b, v), RLX_MASK_ADDITIVE, m4, 0));
        x = layer_norm(&b, rlx_add(g, x, linear(&b, a, ER_O_W, l, H, H, RLX_ACT_NONE)), ER_ATT_LN_W, l);
        rlx_node f = linear(&b, linear(&b, x, ER_FF1_W, l, c->ff, H, c->act), ER_FF2_W, l, H, c->ff, RLX_ACT_NONE);
        x = layer_norm(&b, rlx_add(g, x, f), ER_OUT_LN_W, l);
    }
    rlx_output(g, "last_hidden_state", x);

    int64_t bh[2] = {b.B, H};
    rlx_node cls = rlx_reshape(g, rlx_narrow(g, x, 1, 0, 1), 2, bh);
    rlx_node m3 = rlx_reshape(g, mask, 3, m3d), e;
    if (pooling == ENC_POOL_CLS) {
        e = cls;
    } else if (pooling == ENC_POOL_MEAN) {
        rlx_node n = rlx_max(g, rlx_reduce_sum(g, m3, 1u << 1, 0), rlx_scalar(g, RLX_F32, 1e-9));
        e = rlx_div(g, rlx_reduce_sum(g, rlx_mul(g, x, m3), 1u << 1, 0), n);
    } else {
        e = rlx_reduce_max(g, rlx_add(g, x, rlx_mul(g, rlx_sub(g, m3, one), big)), 1u << 1, 0);
    }
    if (normalize) {
        rlx_node n = rlx_sqrt(g, rlx_reduce_sum(g, rlx_mul(g, e, e), 1u << 1, 1));
        e = rlx_div(g, e, rlx_max(g, n, rlx_scalar(g, RLX_F32, 1e-12)));
    }
    rlx_output(g, "embedding", e);

    rlx_node pooled = RLX_NO_NODE;
    if (parts->has_pooler) {
        pooled = linear(&b, cls, ER_POOL_W, 0, H, H, RLX_ACT_TANH);
        rlx_output(g, "pooler_output", pooled);
    }
    if (parts->has_head && c->num_labels > 0) {
        int64_t L = c->num_labels;
        rlx_node h = c->arch == ENC_ARCH_BERT ? pooled : cls;
        if (parts->has_head_dense)
            h = linear(&b, h, ER_HEAD_DENSE_W, 0, H, H, c->arch == ENC_ARCH_ROBERTA ? RLX_ACT_TANH : RLX_ACT_RELU);
        if (h != RLX_NO_NODE) rlx_output(g, "logits", linear(&b, h, ER_HEAD_W, 0, L, H, RLX_ACT_NONE));
    }
    return g;
}
