/*
 * tiny_model.c — see tiny_model.h.
 */
#include "tiny_model.h"
#include "core/core.h"
#include "vk_parity.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SP "\xe2\x96\x81"   /* U+2581, SentencePiece's space marker */
#define N_PIECES 40
static const char *pieces[N_PIECES] = {
    SP "the", SP "a", SP "cat", SP "sat", SP "on", SP "mat", SP "dog",
    SP "and", SP "is", SP "big", SP, "e", "t", "a", "o", "n", "s", "h", "r", "d",
    "l", "c", "u", "m", "w", "f", "g", "y", "p", "b", SP "hello", SP "world", "ing", "ed", "er", "th",
    SP "t", SP "s", "at", "in"};

void tiny_model_spec_init(tiny_model_spec *s) {
    s->arch = "llama";
    s->weight_type = QTYPE_F32;
    s->n_layer = 2;
    s->n_embd = 64;
    s->n_head = 4;
    s->n_head_kv = 2;
    s->n_ff = 96;
    s->n_ctx = 128;
    s->seed = 1;
    s->rope_freqs = 0;
    s->short_scores = 0;
    s->rope_scaling_type = NULL;
    s->rope_scaling_factor = s->rope_scale_linear = s->rope_attn_factor = 0;
    s->yarn_log_mul = s->yarn_beta_fast = s->yarn_beta_slow = s->yarn_ext_factor = 0;
    s->rope_orig_ctx = 0;
    s->head_dim = s->rope_dims = s->attn_bias = 0;
}

static float next_uniform(uint64_t *h) {
    *h = *h * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(*h >> 11) / 9007199254740992.0 * 2 - 1);
}

typedef struct blobs { void *p[64]; int n; } blobs;

/* A weight [rows, cols] (cols contiguous) in the given type. */
static int add_weight(gguf_writer *w, blobs *b, const char *name, uint32_t type, int64_t rows, int64_t cols, float scale,
                      float offset, uint64_t *h) {
    int64_t n = rows * cols;
    float *f = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) f[i] = offset + scale * next_uniform(h);
    uint64_t bytes;
    if (!qtype_row_bytes(type, (uint64_t)n, &bytes)) type = QTYPE_F32, bytes = (uint64_t)n * 4;
    void *data = f;
    if (type != QTYPE_F32) {
        data = malloc(bytes);
        if (quant_quantize_row(type, f, data, n) != RLX_OK) { free(data); return -1; }
        free(f);
    }
    b->p[b->n++] = data;
    int64_t dims[2] = {cols, rows};
    return gguf_add_tensor(w, name, type, rows == 1 ? 1 : 2, dims, data, bytes) == RLX_OK ? 0 : -1;
}

int tiny_model_write(const tiny_model_spec *s, const char *path) {
    gguf_writer *w = gguf_writer_new();
    if (!w) return -1;
    char key[128];
    const char *a = s->arch;
    int hd = s->head_dim ? s->head_dim : s->n_embd / s->n_head;
    gguf_set_str(w, "general.architecture", a);
    gguf_set_str(w, "general.name", "rlx-tiny");
#define KEY(k) (snprintf(key, sizeof key, "%s.%s", a, k), key)
    gguf_set_u32(w, KEY("context_length"), (uint32_t)s->n_ctx);
    gguf_set_u32(w, KEY("embedding_length"), (uint32_t)s->n_embd);
    gguf_set_u32(w, KEY("block_count"), (uint32_t)s->n_layer);
    gguf_set_u32(w, KEY("feed_forward_length"), (uint32_t)s->n_ff);
    gguf_set_u32(w, KEY("attention.head_count"), (uint32_t)s->n_head);
    gguf_set_u32(w, KEY("attention.head_count_kv"), (uint32_t)s->n_head_kv);
    if (s->head_dim) {
        gguf_set_u32(w, KEY("attention.key_length"), (uint32_t)hd);
        gguf_set_u32(w, KEY("attention.value_length"), (uint32_t)hd);
    }
    if (s->rope_dims) gguf_set_u32(w, KEY("rope.dimension_count"), (uint32_t)s->rope_dims);
    gguf_set_f32(w, KEY("rope.freq_base"), 10000.0f);
    gguf_set_f32(w, KEY("attention.layer_norm_rms_epsilon"), 1e-5f);
    if (s->rope_scaling_type) gguf_set_str(w, KEY("rope.scaling.type"), s->rope_scaling_type);
    if (s->rope_scaling_factor != 0) gguf_set_f32(w, KEY("rope.scaling.factor"), s->rope_scaling_factor);
    if (s->rope_scale_linear != 0) gguf_set_f32(w, KEY("rope.scale_linear"), s->rope_scale_linear);
    if (s->rope_orig_ctx) gguf_set_u32(w, KEY("rope.scaling.original_context_length"), s->rope_orig_ctx);
    if (s->rope_attn_factor != 0) gguf_set_f32(w, KEY("rope.scaling.attn_factor"), s->rope_attn_factor);
    if (s->yarn_log_mul != 0) gguf_set_f32(w, KEY("rope.scaling.yarn_log_multiplier"), s->yarn_log_mul);
    if (s->yarn_beta_fast != 0) gguf_set_f32(w, KEY("rope.scaling.yarn_beta_fast"), s->yarn_beta_fast);
    if (s->yarn_beta_slow != 0) gguf_set_f32(w, KEY("rope.scaling.yarn_beta_slow"), s->yarn_beta_slow);
    if (s->yarn_ext_factor != 0) gguf_set_f32(w, KEY("rope.scaling.yarn_ext_factor"), s->yarn_ext_factor);
#undef KEY
    /* SentencePiece vocabulary: <unk> <s> </s>, 256 byte tokens, pieces */
    int n_vocab = 3 + 256 + N_PIECES;
    const char **tok = calloc((size_t)n_vocab, sizeof *tok);
    char (*bytes)[8] = calloc(256, 8);
    float *scores = calloc((size_t)n_vocab, sizeof *scores);
    int32_t *types = calloc((size_t)n_vocab, sizeof *types);
    tok[0] = "<unk>"; types[0] = 2;
    tok[1] = "<s>";   types[1] = 3;
    tok[2] = "</s>";  types[2] = 3;
    for (int i = 0; i < 256; i++) {
        snprintf(bytes[i], 8, "<0x%02X>", i);
        tok[3 + i] = bytes[i];
        types[3 + i] = 6;
    }
    for (int i = 0; i < N_PIECES; i++) {
        tok[259 + i] = pieces[i];
        types[259 + i] = 1;
        scores[259 + i] = -(float)i;
    }
    gguf_set_str(w, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(w, "tokenizer.ggml.tokens", tok, (uint64_t)n_vocab);
    gguf_set_arr(w, "tokenizer.ggml.scores", GGUF_VT_F32, scores, (uint64_t)(n_vocab - (s->short_scores ? 1 : 0)));
    gguf_set_arr(w, "tokenizer.ggml.token_type", GGUF_VT_I32, types, (uint64_t)n_vocab);
    gguf_set_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_u32(w, "tokenizer.ggml.unknown_token_id", 0);

    blobs b = {.n = 0};
    uint64_t h = s->seed * 0x9e3779b97f4a7c15ull + 1;
    int rc = 0;
    uint32_t wt = s->weight_type;
    rc |= add_weight(w, &b, "token_embd.weight", wt, n_vocab, s->n_embd, 0.5f, 0, &h);
    rc |= add_weight(w, &b, "output_norm.weight", QTYPE_F32, 1, s->n_embd, 0.1f, 1.0f, &h);
    if (s->rope_freqs)   /* [rotary dims / 2] */
        rc |= add_weight(w, &b, "rope_freqs.weight", QTYPE_F32, 1, (s->rope_dims ? s->rope_dims : hd) / 2, 3.5f, 4.5f, &h);   /* factors in [1, 8] */
    if (strcmp(a, "qwen3") != 0) rc |= add_weight(w, &b, "output.weight", wt, n_vocab, s->n_embd, 0.3f, 0, &h);
    for (int l = 0; l < s->n_layer && !rc; l++) {
        char n[96];
#define W(nm, rows, cols, type, sc, off) (snprintf(n, sizeof n, "blk.%d." nm, l), add_weight(w, &b, n, type, rows, cols, sc, off, &h))
        rc |= W("attn_norm.weight", 1, s->n_embd, QTYPE_F32, 0.1f, 1.0f);
        rc |= W("attn_q.weight", s->n_head * hd, s->n_embd, wt, 0.3f, 0);
        rc |= W("attn_k.weight", s->n_head_kv * hd, s->n_embd, wt, 0.3f, 0);
        rc |= W("attn_v.weight", s->n_head_kv * hd, s->n_embd, wt, 0.3f, 0);
        rc |= W("attn_output.weight", s->n_embd, s->n_head * hd, wt, 0.3f, 0);
        rc |= W("ffn_norm.weight", 1, s->n_embd, QTYPE_F32, 0.1f, 1.0f);
        rc |= W("ffn_gate.weight", s->n_ff, s->n_embd, wt, 0.3f, 0);
        rc |= W("ffn_up.weight", s->n_ff, s->n_embd, wt, 0.3f, 0);
        rc |= W("ffn_down.weight", s->n_embd, s->n_ff, wt, 0.3f, 0);
        if (s->attn_bias) rc |= W("attn_output.bias", 1, s->n_embd, QTYPE_F32, 0.1f, 0);
        if (strcmp(a, "qwen2") == 0 || s->attn_bias) {
            rc |= W("attn_q.bias", 1, s->n_head * hd, QTYPE_F32, 0.1f, 0);
            rc |= W("attn_k.bias", 1, s->n_head_kv * hd, QTYPE_F32, 0.1f, 0);
            rc |= W("attn_v.bias", 1, s->n_head_kv * hd, QTYPE_F32, 0.1f, 0);
        }
        if (strcmp(a, "qwen3") == 0) {
            rc |= W("attn_q_norm.weight", 1, hd, QTYPE_F32, 0.1f, 1.0f);
            rc |= W("attn_k_norm.weight", 1, hd, QTYPE_F32, 0.1f, 1.0f);
        }
#undef W
    }
    if (!rc && gguf_write_file(w, path) != RLX_OK) rc = -1;
    for (int i = 0; i < b.n; i++) free(b.p[i]);
    gguf_writer_free(w);
    free(tok);
    free(bytes);
    free(scores);
    free(types);
    return rc;
}

void tiny_model_tmp_path(char *buf, size_t n, const char *tag) {
    snprintf(buf, n, "/tmp/rlx_test_%s_%d.gguf", tag, (int)getpid());
}

struct rlx_model *tiny_model_load(const char *path, int backend) { return tiny_model_load_quant(path, backend, 0); }

struct rlx_model *tiny_model_load_quant(const char *path, int backend, int exact_quant) {
    rlx_model_options o;
    rlx_model_options_init(&o);
    o.n_ctx = 64;
    if (backend == RLX_BACKEND_VULKAN) vkp_options(&o.compile);
    else o.compile.backend = (rlx_backend)backend;
    o.compile.exact_quant = exact_quant;
    rlx_model *m = NULL;
    if (rlx_model_load(path, &o, &m) != RLX_OK) printf("    load %s: %s\n", path, rlx_last_error());
    return m;
}

rlx_status tiny_gguf_rewrite(const char *src, const char *dst, const tiny_gguf_edit *edit) {
    static const tiny_gguf_edit none = {0};
    if (!edit) edit = &none;
    gguf_file *f;
    rlx_status st = gguf_open(src, &f);
    if (st != RLX_OK) return st;
    gguf_writer *w = gguf_writer_new();
    if (!w) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tiny_gguf_rewrite: no memory for a writer");
    for (int64_t i = 0; i < gguf_kv_count(f) && st == RLX_OK; i++) {
        bool keep = true;
        if (edit->kv) st = edit->kv(edit->user, w, f, i, &keep);
        if (st == RLX_OK && keep) st = gguf_set_from(w, f, i);
    }
    if (st == RLX_OK && edit->more_kv) st = edit->more_kv(edit->user, w);
    for (int64_t i = 0; i < gguf_tensor_count(f) && st == RLX_OK; i++) {
        gguf_tensor t = *gguf_tensor_at(f, i);
        bool keep = true;
        if (edit->tensor) st = edit->tensor(edit->user, &t, &keep);
        if (st == RLX_OK && keep) st = gguf_add_tensor(w, t.name, t.type, t.n_dims, t.dims, t.data, t.size);
    }
    if (st == RLX_OK) st = gguf_write_file(w, dst);   /* while f is open: the tensors borrow its mapping */
    gguf_writer_free(w);
    gguf_close(f);
    return st;
}

void tiny_model_hash_fill(const char *name, float *w, size_t n, double amp) {
    bool norm = strstr(name, "norm") != NULL;
    uint64_t h = rlx_hash_str(name);
    for (size_t j = 0; j < n; j++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(h >> 11) / 9007199254740992.0;
        w[j] = (float)(norm ? 0.8 + 0.4 * u : -amp + 2 * amp * u);
    }
}
