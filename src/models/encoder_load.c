/*
 * encoder_load.c — rlx_encoder: a Hugging Face encoder folder (config.json,
 * safetensors weights, tokenizer.json or vocab.txt) turned into a compiled forward graph
 * (models/encoder.c) and its tokenizer, and the embed / classify / run_ids
 * calls of rlx.h.
 *
 * Weights are found by the family's table with or without the task model's
 * prefix ("bert.embeddings..." in BertForSequenceClassification); the
 * classification head's tensors are unprefixed. Every tensor's shape is
 * checked against the config before anything compiles, and a missing one
 * is named. 2-D weights are params in their file dtype: on the CPU the exec
 * reads them in place from the mapping where they are 16-byte aligned (the
 * mapping stays open until rlx_encoder_free), elsewhere it copies them. 1-D
 * tensors (biases, LayerNorm) are converted to f32.
 *
 * Batches: a batch's sequence length is rounded up with padding (mask 0) to
 * a bucket (seq_bucket) so that texts of nearby lengths share one
 * specialization of the graph instead of compiling per length. Buckets are
 * multiples of 8 up to 64, of 16 up to 256, then of 32: under 1/8 of the
 * work is padding past 64 tokens, and short texts, the common case, do not
 * pay double (a 17-token batch runs at 24, not 32).
 */
#include "models/encoder.h"
#include "models/tokenizer_json.h"
#include "models/tokenizer_wordpiece.h"
#include "core/file_map.h"
#include "io/safetensors.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int seq_bucket(int seq) {
    int step = seq <= 64 ? 8 : seq <= 256 ? 16 : 32;
    return (seq + step - 1) / step * step;
}

struct rlx_encoder {
    enc_config           cfg;
    enc_parts            parts;
    rlx_encoder_options  opt;
    sft_model           *weights;
    char                 prefix[16];     /* backbone tensors' prefix in the file ("" or "bert.") */
    enc_tokenizer       *tok;            /* NULL: no tokenizer rlx reads */
    char                 tok_why[256];   /* why not, when a tokenizer.json is unsupported */
    rlx_exec            *exec;
    int                  max_len;
    char                 backend[16], device[128];
};

void rlx_encoder_options_init(rlx_encoder_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    rlx_compile_options_init(&o->compile);
    o->pooling = RLX_POOL_MEAN;
}

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* dir/name parsed as JSON into *doc; *doc NULL (OK) when the file is absent and optional. */
static rlx_status read_json(const char *dir, const char *name, bool required, json_doc **doc) {
    char path[4096];
    *doc = NULL;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!is_file(path)) {
        if (!required) return RLX_OK;
        return rlx_fail(RLX_STATUS_IO, "encoder: '%s' has no %s", dir, name);
    }
    rlx_file_map m;
    rlx_status st = rlx_file_map_open(&m, path, "encoder");
    if (st != RLX_OK) return st;
    json_options jo;
    json_options_init(&jo);
    jo.name = name;
    st = json_parse((const char *)m.data, (size_t)m.size, &jo, doc);
    rlx_file_map_close(&m);
    return st;
}

/* ---------------------------------------------------------------- tensors */

static bool head_role(enc_role r) { return r >= ER_HEAD_DENSE_W; }

/* The tensor of role r (layer l); NULL when absent. */
static const sft_tensor *find_role(const rlx_encoder *e, enc_role r, int l, char *name, size_t cap) {
    const char *pat = enc_role_name(e->cfg.arch, r);
    if (!pat) return NULL;
    char base[160];
    snprintf(base, sizeof base, pat, l);
    snprintf(name, cap, "%s%s", head_role(r) ? "" : e->prefix, base);
    return sft_model_find(e->weights, name, NULL);
}

/* Checks the role's tensor: present (when required), float, the shape wanted. */
static rlx_status check_role(rlx_encoder *e, enc_role r, int l, int rank, int64_t d0, int64_t d1, bool required,
                             const sft_tensor **out) {
    char name[192];
    const sft_tensor *t = find_role(e, r, l, name, sizeof name);
    *out = t;
    if (!t) return required ? rlx_fail(RLX_STATUS_FORMAT, "encoder: tensor '%s' is missing", name) : RLX_OK;
    rlx_dtype dt;
    if (sft_dtype_to_rlx(t->dtype, &dt) != RLX_OK || (dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "encoder: tensor '%s' is %s, not F32, F16 or BF16", name,
                        sft_dtype_name(t->dtype));
    bool ok = t->n_dims == rank && t->dims[0] == d0 && (rank == 1 || t->dims[1] == d1);
    if (!ok) {
        char got[96] = "";
        for (int i = 0, n = 0; i < t->n_dims && n < (int)sizeof got - 24; i++)
            n += snprintf(got + n, sizeof got - (size_t)n, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
        if (rank == 1)
            return rlx_fail(RLX_STATUS_FORMAT, "encoder: tensor '%s' is [%s], the config says [%lld]", name, got,
                            (long long)d0);
        return rlx_fail(RLX_STATUS_FORMAT, "encoder: tensor '%s' is [%s], the config says [%lld, %lld]", name, got,
                        (long long)d0, (long long)d1);
    }
    if (rank == 2) {
        if (l == 0) e->parts.wdtype[r] = dt;
        else if (e->parts.wdtype[r] != dt)
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "encoder: tensor '%s' is %s, layer 0's is %s", name,
                            rlx_dtype_name(dt), rlx_dtype_name(e->parts.wdtype[r]));
    }
    return RLX_OK;
}

static rlx_status check_tensors(rlx_encoder *e) {
    const enc_config *c = &e->cfg;
    const int64_t H = c->hidden;
    const sft_tensor *t;
    rlx_status st;
    /* the backbone prefix: as saved by the base model, or by a task model */
    char name[192];
    const char *pre = enc_arch_prefix(c->arch);
    e->prefix[0] = 0;
    if (!find_role(e, ER_WORD_EMB, 0, name, sizeof name)) {
        snprintf(e->prefix, sizeof e->prefix, "%s", pre);
        if (!find_role(e, ER_WORD_EMB, 0, name, sizeof name))
            return rlx_fail(RLX_STATUS_FORMAT, "encoder: no tensor '%s' (nor with the prefix '%s'): not a %s checkpoint",
                            enc_role_name(c->arch, ER_WORD_EMB), pre, c->model_type);
    }
    if ((st = check_role(e, ER_WORD_EMB, 0, 2, c->vocab, H, true, &t)) != RLX_OK ||
        (st = check_role(e, ER_POS_EMB, 0, 2, c->max_pos, H, true, &t)) != RLX_OK ||
        (c->type_vocab > 0 && (st = check_role(e, ER_TYPE_EMB, 0, 2, c->type_vocab, H, true, &t)) != RLX_OK) ||
        (st = check_role(e, ER_EMB_LN_W, 0, 1, H, 0, true, &t)) != RLX_OK ||
        (st = check_role(e, ER_EMB_LN_B, 0, 1, H, 0, true, &t)) != RLX_OK)
        return st;
    for (int l = 0; l < c->layers; l++)
        for (int r = ER_FIRST_LAYER; r <= ER_LAST_LAYER; r++) {
            bool w = (r - ER_FIRST_LAYER) % 2 == 0 && r != ER_ATT_LN_W && r != ER_OUT_LN_W;
            int64_t d0 = r == ER_FF1_W || r == ER_FF1_B ? c->ff : H, d1 = r == ER_FF2_W ? c->ff : H;
            if ((st = check_role(e, (enc_role)r, l, w ? 2 : 1, d0, d1, true, &t)) != RLX_OK) return st;
        }
    const sft_tensor *pw, *hd, *hw;
    if ((st = check_role(e, ER_POOL_W, 0, 2, H, H, false, &pw)) != RLX_OK) return st;
    if (pw && (st = check_role(e, ER_POOL_B, 0, 1, H, 0, true, &t)) != RLX_OK) return st;
    e->parts.has_pooler = pw != NULL;
    if ((st = check_role(e, ER_HEAD_DENSE_W, 0, 2, H, H, false, &hd)) != RLX_OK) return st;
    if (hd && (st = check_role(e, ER_HEAD_DENSE_B, 0, 1, H, 0, true, &t)) != RLX_OK) return st;
    e->parts.has_head_dense = hd != NULL;
    /* the head: its rows are the labels */
    hw = find_role(e, ER_HEAD_W, 0, name, sizeof name);
    if (hw) {
        int64_t L = hw->n_dims == 2 ? hw->dims[0] : -1;
        if (L < 1 || L > 100000) return rlx_fail(RLX_STATUS_FORMAT, "encoder: tensor '%s' is not [labels, %lld]", name, (long long)H);
        if ((st = check_role(e, ER_HEAD_W, 0, 2, L, H, true, &t)) != RLX_OK ||
            (st = check_role(e, ER_HEAD_B, 0, 1, L, 0, true, &t)) != RLX_OK)
            return st;
        if (c->arch == ENC_ARCH_BERT && !e->parts.has_pooler)
            return rlx_fail(RLX_STATUS_FORMAT, "encoder: '%s' classifies the pooler's output, and there is no pooler", name);
        if (c->arch != ENC_ARCH_BERT && !e->parts.has_head_dense)
            return rlx_fail(RLX_STATUS_FORMAT, "encoder: the %s head has '%s' but no '%s'", c->model_type, name,
                            enc_role_name(c->arch, ER_HEAD_DENSE_W));
        if (L != e->cfg.num_labels) {   /* names from id2label only where they count the same labels */
            enc_config_clear(&e->cfg);
            e->cfg.labels = calloc((size_t)L, sizeof *e->cfg.labels);
            if (!e->cfg.labels) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "encoder: labels");
            e->cfg.num_labels = (int)L;
            for (int i = 0; i < (int)L; i++) {
                char lb[32];
                snprintf(lb, sizeof lb, "LABEL_%d", i);
                if (!(e->cfg.labels[i] = strdup(lb))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "encoder: labels");
            }
        }
        e->parts.has_head = true;
    } else {
        enc_config_clear(&e->cfg);   /* labels mean nothing without a head */
    }
    return RLX_OK;
}

/* The tensor behind an exec param (its name is the role name without the prefix). */
static const sft_tensor *tensor_of_param(const rlx_encoder *e, const char *pname) {
    char name[256];
    snprintf(name, sizeof name, "%s%s", e->prefix, pname);
    const sft_tensor *t = sft_model_find(e->weights, name, NULL);
    return t ? t : sft_model_find(e->weights, pname, NULL);
}

static float to_f32(const sft_tensor *t, int64_t i) {
    const uint8_t *p = (const uint8_t *)t->data;
    uint16_t h;
    float f;
    switch (t->dtype) {
    case SFT_F16: memcpy(&h, p + 2 * i, 2); return rlx_f16_to_f32(h);
    case SFT_BF16: memcpy(&h, p + 2 * i, 2); return rlx_bf16_to_f32(h);
    default: memcpy(&f, p + 4 * i, 4); return f;
    }
}

static rlx_status set_params(rlx_encoder *e) {
    bool borrow = strcmp(e->backend, "cpu") == 0;
    for (int i = 0; i < rlx_exec_param_count(e->exec); i++) {
        rlx_tensor info;
        rlx_status st = rlx_exec_param_info(e->exec, i, &info);
        if (st != RLX_OK) return st;
        const sft_tensor *t = tensor_of_param(e, info.name);
        if (!t) return rlx_fail(RLX_STATUS_INTERNAL, "encoder: param '%s' has no tensor", info.name);
        if (info.rank == 2) {
            st = borrow && (uintptr_t)t->data % 16 == 0
                     ? rlx_exec_use_param_memory(e->exec, info.name, info.dtype, t->data, (size_t)t->size)
                     : rlx_exec_set_param(e->exec, info.name, info.dtype, t->data, (size_t)t->size);
        } else {
            float *f = malloc(sizeof(float) * (size_t)(t->n_elements > 0 ? t->n_elements : 1));
            if (!f) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "encoder: converting '%s'", info.name);
            for (int64_t j = 0; j < t->n_elements; j++) f[j] = to_f32(t, j);
            st = rlx_exec_set_param_f32(e->exec, info.name, f, (size_t)t->n_elements);
            free(f);
        }
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}

/* ------------------------------------------------------------- tokenizer */

/* tokenizer.json when the folder has one (it says everything: model,
 * normalization, template); else vocab.txt with do_lower_case /
 * strip_accents from tokenizer_config.json. */
static rlx_status load_tokenizer(rlx_encoder *e, const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (is_file(path)) {
        rlx_status st = rlx_tokenizer_json_load(path, &e->tok);
        if (st != RLX_STATUS_UNSUPPORTED) return st;
        /* The weights still run from ids: keep the reason for the text calls. */
        snprintf(e->tok_why, sizeof e->tok_why, "%s", rlx_last_error());
    }
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if (!is_file(path) || e->cfg.arch == ENC_ARCH_ROBERTA) {   /* RoBERTa's vocab is BPE */
        if (e->tok_why[0]) rlx_log_msg(RLX_LOG_WARN, "encoder: %s; texts need rlx_encoder_run_ids", e->tok_why);
        return RLX_OK;
    }
    e->tok_why[0] = 0;   /* vocab.txt stands in for the tokenizer.json rlx cannot run */
    wp_options wo;
    wp_options_init(&wo);
    json_doc *tc = NULL;
    rlx_status st = read_json(dir, "tokenizer_config.json", false, &tc);
    if (st != RLX_OK) return st;
    if (tc) {
        const json_value *r = json_root(tc);
        bool b;
        if (json_get_bool(r, "do_lower_case", &b) == RLX_OK) wo.lowercase = b;
        const json_value *sa = json_get(r, "strip_accents");
        if (sa && sa->type == JSON_BOOL) wo.strip_accents = sa->u.b ? 1 : 0;
        if (json_get_bool(r, "tokenize_chinese_chars", &b) == RLX_OK) wo.tokenize_cjk = b;
        json_free(tc);
    }
    return rlx_wordpiece_load(path, &wo, &e->tok);
}

/* ------------------------------------------------------------------ load */

rlx_status rlx_encoder_load(const char *dir, const rlx_encoder_options *o, rlx_encoder **out) {
    if (out) *out = NULL;
    if (!dir || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_load: dir and out must not be NULL");
    rlx_encoder *e = calloc(1, sizeof *e);
    if (!e) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_encoder_load");
    if (o) e->opt = *o;
    else rlx_encoder_options_init(&e->opt);
    rlx_status st = RLX_OK;
    if ((unsigned)e->opt.pooling > RLX_POOL_MAX || e->opt.max_length < 0)
        st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_load: pooling %d or max_length %d out of range",
                      (int)e->opt.pooling, e->opt.max_length);
    json_doc *cfg = NULL;
    if (st == RLX_OK) st = read_json(dir, "config.json", true, &cfg);
    if (st == RLX_OK) st = enc_config_parse(json_root(cfg), "config.json", &e->cfg);
    json_free(cfg);
    if (st == RLX_OK) st = sft_model_open(dir, &e->weights);
    if (st == RLX_OK) st = check_tensors(e);
    if (st == RLX_OK) st = load_tokenizer(e, dir);
    if (st == RLX_OK) {
        int limit = (int)(e->cfg.max_pos - e->cfg.pos_offset);
        e->max_len = e->opt.max_length > 0 && e->opt.max_length < limit ? e->opt.max_length : limit;
        rlx_graph *g = enc_build_graph(&e->cfg, &e->parts, (enc_pooling)e->opt.pooling, e->opt.normalize != 0);
        st = !g ? rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "encoder: graph") : rlx_graph_status(g);
        if (st == RLX_OK) st = rlx_compile(g, &e->opt.compile, &e->exec);
        rlx_graph_free(g);
    }
    if (st == RLX_OK) {
        rlx_exec_stats es;
        memset(&es, 0, sizeof es);
        if (rlx_exec_get_stats(e->exec, &es) == RLX_OK) {
            snprintf(e->backend, sizeof e->backend, "%s", es.backend ? es.backend : "");
            snprintf(e->device, sizeof e->device, "%s", es.device ? es.device : "");
        }
        st = set_params(e);
    }
    if (st != RLX_OK) {
        rlx_encoder_free(e);
        return st;
    }
    *out = e;
    return RLX_OK;
}

void rlx_encoder_free(rlx_encoder *e) {
    if (!e) return;
    rlx_exec_free(e->exec);
    rlx_enc_tokenizer_free(e->tok);
    sft_model_close(e->weights);
    enc_config_clear(&e->cfg);
    free(e);
}

rlx_status rlx_encoder_get_info(const rlx_encoder *e, rlx_encoder_info *info) {
    if (!e || !info) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_get_info: NULL argument");
    *info = (rlx_encoder_info){e->cfg.model_type, (int)e->cfg.hidden, (int)e->cfg.layers, (int)e->cfg.heads,
                               (int)e->cfg.vocab, e->max_len, e->parts.has_head ? e->cfg.num_labels : 0,
                               e->tok != NULL, e->backend, e->device};
    return RLX_OK;
}

const char *rlx_encoder_label(const rlx_encoder *e, int i) {
    if (!e) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_label: encoder is NULL");
        return NULL;
    }
    int n = e->parts.has_head ? e->cfg.num_labels : 0;
    if (i < 0 || i >= n) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_label: label %d is outside [0, %d)", i, n);
        return NULL;
    }
    return e->cfg.labels[i];
}

/* ------------------------------------------------------------------- run */

static rlx_status read_rows(rlx_encoder *e, const char *name, int batch, int seq, int seq_pad, int64_t width, float *dst) {
    rlx_tensor t;
    rlx_status st = rlx_exec_output(e->exec, name, &t);
    if (st != RLX_OK) return st;
    const float *src = t.data;
    if (seq_pad == seq || seq == 0) {   /* [B, width] rows, or [B, S, H] without padding */
        memcpy(dst, src, sizeof(float) * (size_t)batch * (size_t)(seq ? seq : 1) * (size_t)width);
        return RLX_OK;
    }
    for (int b = 0; b < batch; b++)   /* drop the bucket's padding positions */
        memcpy(dst + (size_t)b * seq * width, src + (size_t)b * seq_pad * width, sizeof(float) * (size_t)seq * (size_t)width);
    return RLX_OK;
}

rlx_status rlx_encoder_run_ids(rlx_encoder *e, int batch, int seq, const int32_t *ids, const int32_t *type_ids,
                               const int32_t *mask, float *hidden, float *embedding, float *pooler, float *logits) {
    if (!e || !ids || batch < 1 || seq < 1)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_run_ids: need an encoder, ids and batch, seq >= 1");
    if (seq > e->max_len)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_run_ids: seq %d exceeds the model's %d positions", seq,
                        e->max_len);
    if (pooler && !e->parts.has_pooler) return rlx_fail(RLX_STATUS_UNSUPPORTED, "rlx_encoder_run_ids: the checkpoint has no pooler");
    if (logits && !e->parts.has_head)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "rlx_encoder_run_ids: the checkpoint has no classification head");
    const enc_config *c = &e->cfg;
    int sp = seq_bucket(seq);
    if (sp > e->max_len) sp = e->max_len > seq ? e->max_len : seq;
    size_t n = (size_t)batch * (size_t)sp;
    int32_t *iv = malloc(n * sizeof *iv * 3);
    float *mv = malloc(n * sizeof *mv);
    if (!iv || !mv) {
        free(iv), free(mv);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_encoder_run_ids: %d x %d inputs", batch, sp);
    }
    int32_t *tv = iv + n, *pv = iv + 2 * n;
    int32_t pad = c->pad_id >= 0 && c->pad_id < c->vocab ? (int32_t)c->pad_id : 0;
    rlx_status st = RLX_OK;
    for (int b = 0; b < batch && st == RLX_OK; b++) {
        int32_t run = 0;   /* RoBERTa: positions count the non-pad tokens (as transformers does) */
        for (int s = 0; s < sp; s++) {
            size_t k = (size_t)b * sp + s, ks = (size_t)b * seq + s;
            bool real = s < seq;
            int32_t id = real ? ids[ks] : pad;
            if (id < 0 || id >= c->vocab) {
                st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_run_ids: row %d position %d: id %d outside the "
                              "vocabulary of %lld", b, s, id, (long long)c->vocab);
                break;
            }
            int32_t ty = real && type_ids ? type_ids[ks] : 0;
            if (c->type_vocab > 0 && (ty < 0 || ty >= c->type_vocab)) {
                st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_run_ids: row %d position %d: token type %d outside "
                              "[0, %lld)", b, s, ty, (long long)c->type_vocab);
                break;
            }
            iv[k] = id;
            tv[k] = ty;
            mv[k] = real ? (mask ? (mask[ks] != 0) : 1.0f) : 0.0f;
            if (c->arch == ENC_ARCH_ROBERTA) pv[k] = id != pad ? (int32_t)c->pad_id + ++run : (int32_t)c->pad_id;
            else pv[k] = s;
        }
    }
    if (st == RLX_OK) {
        rlx_tensor in[4] = {
            {.name = "input_ids", .dtype = RLX_I32, .rank = 2, .dims = {batch, sp}, .data = iv, .bytes = n * 4},
            {.name = "position_ids", .dtype = RLX_I32, .rank = 2, .dims = {batch, sp}, .data = pv, .bytes = n * 4},
            {.name = "attention_mask", .dtype = RLX_F32, .rank = 2, .dims = {batch, sp}, .data = mv, .bytes = n * 4},
            {.name = "token_type_ids", .dtype = RLX_I32, .rank = 2, .dims = {batch, sp}, .data = tv, .bytes = n * 4},
        };
        st = rlx_exec_run(e->exec, in, c->type_vocab > 0 ? 4 : 3);
    }
    free(iv);
    free(mv);
    if (st == RLX_OK && hidden) st = read_rows(e, "last_hidden_state", batch, seq, sp, c->hidden, hidden);
    if (st == RLX_OK && embedding) st = read_rows(e, "embedding", batch, 0, 0, c->hidden, embedding);
    if (st == RLX_OK && pooler) st = read_rows(e, "pooler_output", batch, 0, 0, c->hidden, pooler);
    if (st == RLX_OK && logits) st = read_rows(e, "logits", batch, 0, 0, c->num_labels, logits);
    return st;
}

rlx_status rlx_encoder_tokenize(rlx_encoder *e, const char *text, const char *pair, int32_t *ids, int32_t *type_ids,
                                int cap, int *n) {
    if (!e || !text || !n || cap < 0 || (!ids && cap > 0))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_tokenize: need an encoder, text, n, and ids for cap %d", cap);
    if (!e->tok) return rlx_fail(RLX_STATUS_UNSUPPORTED, "rlx_encoder_tokenize: the model folder has no tokenizer rlx reads");
    enc_options eo;
    enc_options_init(&eo);
    eo.max_length = (size_t)e->max_len;
    enc_encoding enc;
    rlx_status st = rlx_enc_encode(e->tok, text, strlen(text), pair, pair ? strlen(pair) : 0, &eo, &enc);
    if (st != RLX_OK) return st;
    *n = (int)enc.len;
    if ((int)enc.len > cap)
        st = cap == 0 && !ids ? RLX_OK
                              : rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_tokenize: %zu ids do not fit in %d", enc.len, cap);
    else {
        memcpy(ids, enc.ids, sizeof(int32_t) * enc.len);
        if (type_ids) memcpy(type_ids, enc.type_ids, sizeof(int32_t) * enc.len);
    }
    rlx_enc_encoding_free(&enc);
    return st;
}

/* Tokenizes n texts as one padded batch and runs it; embedding or logits gets the rows. */
static rlx_status run_texts(rlx_encoder *e, const char *const *texts, int n, float *embedding, float *logits,
                            size_t cap, const char *who) {
    if (!e || (!texts && n > 0) || n < 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: need an encoder and n >= 0 texts", who);
    if (!e->tok && e->tok_why[0]) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s; use rlx_encoder_run_ids", who, e->tok_why);
    if (!e->tok)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the model folder has no tokenizer rlx reads (tokenizer.json, "
                        "or vocab.txt for WordPiece models); use rlx_encoder_run_ids", who);
    size_t width = (size_t)(logits ? e->cfg.num_labels : e->cfg.hidden);
    if ((size_t)n * width > cap)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: %d rows of %zu floats do not fit in %zu", who, n, width, cap);
    if (n == 0) return RLX_OK;
    for (int i = 0; i < n; i++)
        if (!texts[i]) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: text %d is NULL", who, i);
    enc_options eo;
    enc_options_init(&eo);
    eo.max_length = (size_t)e->max_len;
    enc_batch b;
    rlx_status st = rlx_enc_encode_batch(e->tok, (size_t)n, texts, NULL, NULL, NULL, &eo, &b);
    if (st != RLX_OK) return st;
    st = rlx_encoder_run_ids(e, n, (int)b.seq_len, b.ids, b.type_ids, b.attention_mask, NULL, embedding, NULL, logits);
    rlx_enc_batch_free(&b);
    return st;
}

rlx_status rlx_encoder_embed(rlx_encoder *e, const char *const *texts, int n, float *out, size_t cap) {
    if (!out && n > 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_embed: out is NULL");
    return run_texts(e, texts, n, out, NULL, cap, "rlx_encoder_embed");
}

rlx_status rlx_encoder_classify(rlx_encoder *e, const char *const *texts, int n, float *logits, size_t cap) {
    if (e && !e->parts.has_head)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "rlx_encoder_classify: the checkpoint has no classification head");
    if (!logits && n > 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_encoder_classify: logits is NULL");
    return run_texts(e, texts, n, NULL, logits, cap, "rlx_encoder_classify");
}
