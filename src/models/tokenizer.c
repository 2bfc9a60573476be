/*
 * tokenizer.c — the model-independent half of the tokenizer: building the
 * vocabulary (copied strings, token types, a string -> id hash map, decoded
 * pieces), special-token splitting and BOS/EOS around encode, decode, and the
 * streaming detokenizer that holds back incomplete UTF-8.
 *
 * Every token's decoded bytes are computed once at build time, so decode and
 * token_to_piece are table lookups and the model files only deal with
 * encoding.
 */
#include "models/tokenizer.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- helpers */

bool tok_ids_push(tok_ids *ids, int32_t id) {
    if (ids->n == ids->cap) {
        size_t cap = ids->cap ? ids->cap * 2 : 64;
        int32_t *v = realloc(ids->v, cap * sizeof *v);
        if (!v) return false;
        ids->v = v;
        ids->cap = cap;
    }
    ids->v[ids->n++] = id;
    return true;
}

size_t tok_utf8_len(uint8_t lead) {
    if (lead < 0x80) return 1;
    if ((lead & 0xE0) == 0xC0) return 2;
    if ((lead & 0xF0) == 0xE0) return 3;
    if ((lead & 0xF8) == 0xF0) return 4;
    return 1;   /* stray continuation or invalid byte: a unit of its own */
}

size_t tok_utf8_unit(const uint8_t *p, size_t n) {
    size_t k = tok_utf8_len(p[0]);
    if (k > n) return 1;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xC0) != 0x80) return 1;
    return k;
}

/* FNV-1a (rlx_hash_bytes) folded to 32 bits for the power-of-two table. */
static uint32_t hash_bytes(const char *s, size_t n) {
    uint64_t h = rlx_hash_bytes(s, n);
    return (uint32_t)(h ^ (h >> 32));
}

int32_t tok_lookup(const tokenizer *t, const char *s, size_t n) {
    uint32_t i = hash_bytes(s, n) & t->map_mask;
    for (;;) {
        uint32_t e = t->map[i];
        if (e == 0) return TOK_NONE;
        int32_t id = (int32_t)(e - 1);
        if (t->text_len[id] == n && memcmp(t->text + t->text_off[id], s, n) == 0) return id;
        i = (i + 1) & t->map_mask;
    }
}

bool tok_is_text_token(const tokenizer *t, int32_t id) {
    if (id < 0 || id >= t->n_tokens) return false;
    uint8_t ty = t->types[id];
    return ty == TOK_TYPE_NORMAL || ty == TOK_TYPE_UNDEFINED || ty == TOK_TYPE_USER_DEFINED;
}

/* ---------------------------------------------------------------- heap */

static bool bigram_before(const tok_bigram *a, const tok_bigram *b) {
    if (a->key != b->key) return a->key < b->key;
    return a->left < b->left;
}

bool tok_heap_push(tok_heap *h, tok_bigram b) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        tok_bigram *v = realloc(h->v, cap * sizeof *v);
        if (!v) return false;
        h->v = v;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!bigram_before(&b, &h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = b;
    return true;
}

bool tok_heap_pop(tok_heap *h, tok_bigram *out) {
    if (h->n == 0) return false;
    *out = h->v[0];
    tok_bigram last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && bigram_before(&h->v[c + 1], &h->v[c])) c++;
        if (!bigram_before(&h->v[c], &last)) break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n > 0) h->v[i] = last;
    return true;
}

/* --------------------------------------------------------------- build */

void tok_vocab_desc_init(tok_vocab_desc *d) {
    if (!d) return;
    memset(d, 0, sizeof *d);
    d->bos_id = d->eos_id = d->eot_id = d->unk_id = d->pad_id = TOK_NONE;
    d->add_bos = d->add_eos = d->add_space_prefix = TOK_DEFAULT;
}

void rlx_tokenizer_free(tokenizer *t) {
    if (!t) return;
    free(t->text);
    free(t->text_off);
    free(t->text_len);
    free(t->scores);
    free(t->types);
    free(t->piece);
    free(t->piece_off);
    free(t->piece_len);
    free(t->map);
    free(t->merges);
    free(t->special);
    free(t);
}

static size_t desc_len(const char *s, const uint32_t *lens, int32_t i) {
    return lens ? lens[i] : strlen(s);
}

/* "<0x0A>" -> true with *byte = 0x0A (either hex case). */
static bool parse_byte_token(const char *s, size_t n, uint8_t *byte) {
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return false;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
              : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (d < 0) return false;
        v = v * 16 + d;
    }
    *byte = (uint8_t)v;
    return true;
}

static rlx_status copy_tokens(tokenizer *t, const tok_vocab_desc *d) {
    int32_t n = d->n_tokens;
    size_t total = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!d->tokens[i]) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "tokenizer: token %d is NULL", i);
        size_t len = desc_len(d->tokens[i], d->token_lens, i);
        if (len > UINT32_MAX / 8) return rlx_fail(RLX_STATUS_FORMAT, "tokenizer: token %d is %zu bytes long", i, len);
        total += len + 1;
        if (total > UINT32_MAX) return rlx_fail(RLX_STATUS_FORMAT, "tokenizer: vocabulary text exceeds 4 GiB");
    }
    t->text     = malloc(total ? total : 1);
    size_t nz = (uint32_t)n;   /* n > 0, checked by check_desc */
    t->text_off = malloc(nz * sizeof *t->text_off);
    t->text_len = malloc(nz * sizeof *t->text_len);
    t->scores   = calloc(nz, sizeof *t->scores);
    t->types    = malloc(nz);
    if (!t->text || !t->text_off || !t->text_len || !t->scores || !t->types)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer: out of memory for %d tokens", n);
    size_t off = 0;
    for (int32_t i = 0; i < n; i++) {
        size_t len = desc_len(d->tokens[i], d->token_lens, i);
        memcpy(t->text + off, d->tokens[i], len);
        t->text[off + len] = 0;
        t->text_off[i] = (uint32_t)off;
        t->text_len[i] = (uint32_t)len;
        off += len + 1;
        if (d->scores) t->scores[i] = d->scores[i];
        if (d->token_types) {
            int32_t ty = d->token_types[i];
            if (ty < TOK_TYPE_UNDEFINED || ty > TOK_TYPE_BYTE)
                return rlx_fail(RLX_STATUS_FORMAT, "tokenizer: token %d has type %d (valid: 0..6)", i, ty);
            t->types[i] = (uint8_t)ty;
        } else {
            uint8_t b;
            t->types[i] = TOK_TYPE_NORMAL;
            if (t->model == TOK_MODEL_SPM && parse_byte_token(d->tokens[i], len, &b)) t->types[i] = TOK_TYPE_BYTE;
        }
    }
    if (!d->token_types) {
        int32_t ctl[4] = {t->bos, t->eos, t->eot, t->pad};
        for (int k = 0; k < 4; k++) if (ctl[k] >= 0) t->types[ctl[k]] = TOK_TYPE_CONTROL;
        if (t->unk >= 0) t->types[t->unk] = TOK_TYPE_UNKNOWN;
    }
    return RLX_OK;
}

static rlx_status build_map(tokenizer *t) {
    uint32_t cap = 16;
    while (cap < (uint32_t)t->n_tokens * 2u) cap *= 2;   /* load <= 0.5 */
    t->map = calloc(cap, sizeof *t->map);
    if (!t->map) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer: out of memory for the token map");
    t->map_mask = cap - 1;
    for (int32_t id = 0; id < t->n_tokens; id++) {
        const char *s = t->text + t->text_off[id];
        uint32_t n = t->text_len[id];
        uint32_t i = hash_bytes(s, n) & t->map_mask;
        bool dup = false;
        while (t->map[i]) {
            int32_t o = (int32_t)(t->map[i] - 1);
            if (t->text_len[o] == n && memcmp(t->text + t->text_off[o], s, n) == 0) { dup = true; break; }
            i = (i + 1) & t->map_mask;
        }
        if (!dup) t->map[i] = (uint32_t)id + 1;   /* duplicates: the first id wins */
    }
    return RLX_OK;
}

static rlx_status build_pieces(tokenizer *t) {
    size_t total = 0, maxlen = 0;
    for (int32_t i = 0; i < t->n_tokens; i++) {
        total += (size_t)t->text_len[i] + 8;   /* a piece is never longer than its text + 5 */
        if (t->text_len[i] > maxlen) maxlen = t->text_len[i];
    }
    char *tmp = malloc(maxlen + 8);
    t->piece     = malloc(total);
    size_t nz = (uint32_t)t->n_tokens;
    t->piece_off = malloc(nz * sizeof *t->piece_off);
    t->piece_len = malloc(nz * sizeof *t->piece_len);
    if (!tmp || !t->piece || !t->piece_off || !t->piece_len) {
        free(tmp);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer: out of memory for decoded pieces");
    }
    size_t off = 0;
    for (int32_t i = 0; i < t->n_tokens; i++) {
        size_t n;
        switch (t->types[i]) {
        case TOK_TYPE_CONTROL: case TOK_TYPE_USER_DEFINED:
            /* Stored verbatim: converters write added tokens' text raw. */
            n = t->text_len[i];
            memcpy(tmp, t->text + t->text_off[i], n);
            break;
        case TOK_TYPE_UNUSED:
            n = 0;
            break;
        default:
            n = t->model == TOK_MODEL_SPM ? tok_spm_piece(t, i, tmp) : tok_bpe_piece(t, i, tmp);
            break;
        }
        memcpy(t->piece + off, tmp, n);
        t->piece_off[i] = (uint32_t)off;
        t->piece_len[i] = (uint32_t)n;
        if (n > t->max_piece_len) t->max_piece_len = (uint32_t)n;
        off += n;
    }
    free(tmp);
    return RLX_OK;
}

/* Literal-match set: CONTROL, UNKNOWN and USER_DEFINED tokens, longest first so
 * "<|eot_id|>" wins over a shorter token that is its prefix. */
typedef struct len_id { uint32_t len; int32_t id; } len_id;

static int cmp_len_desc(const void *a, const void *b) {
    const len_id *x = a, *y = b;
    if (x->len != y->len) return x->len > y->len ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static rlx_status build_special(tokenizer *t) {
    size_t nz = (uint32_t)t->n_tokens;
    len_id *tmp = malloc(nz * sizeof *tmp);
    t->special = malloc(nz * sizeof *t->special);
    if (!tmp || !t->special) { free(tmp); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer: out of memory"); }
    for (int32_t i = 0; i < t->n_tokens; i++) {
        uint8_t ty = t->types[i];
        if (t->text_len[i] == 0) continue;
        if (ty != TOK_TYPE_CONTROL && ty != TOK_TYPE_USER_DEFINED && ty != TOK_TYPE_UNKNOWN) continue;
        tmp[t->n_special++] = (len_id){t->text_len[i], i};
        uint8_t c = (uint8_t)t->text[t->text_off[i]];
        t->special_first[c >> 3] |= (uint8_t)(1u << (c & 7));
    }
    qsort(tmp, (size_t)t->n_special, sizeof *tmp, cmp_len_desc);
    for (int32_t k = 0; k < t->n_special; k++) t->special[k] = tmp[k].id;
    free(tmp);
    return RLX_OK;
}

static tok_pre pre_from_name(const char *pre) {
    static const char *const llama3[] = {"llama-bpe", "llama3", "llama-v3", "falcon3"};
    static const char *const qwen2[]  = {"qwen2", "deepseek-r1-qwen"};
    if (!pre || !strcmp(pre, "default") || !strcmp(pre, "gpt2")) return TOK_PRE_GPT2;
    for (size_t i = 0; i < RLX_ARRAY_LEN(llama3); i++) if (!strcmp(pre, llama3[i])) return TOK_PRE_LLAMA3;
    for (size_t i = 0; i < RLX_ARRAY_LEN(qwen2); i++) if (!strcmp(pre, qwen2[i])) return TOK_PRE_QWEN2;
    /* Close enough to be useful: most other pre-tokenizers are GPT-2 variants. */
    rlx_log_msg(RLX_LOG_WARN, "tokenizer: unknown pre-tokenizer '%s', using the GPT-2 pattern", pre);
    return TOK_PRE_GPT2;
}

/* End-of-turn tokens by text: chat models end a turn with one of these while
 * eos names another (Llama 3 <|eot_id|> / <|eom_id|>, Qwen <|im_end|>), and
 * GGUF converters rarely write eot_token_id. llama.cpp's list. */
static void find_eog(tokenizer *t) {
    static const char *const names[] = {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>",
                                        "<end_of_turn>", "<|endoftext|>", "<EOT>"};
    for (size_t i = 0; i < RLX_ARRAY_LEN(names) && t->n_eog < (int32_t)RLX_ARRAY_LEN(t->eog); i++) {
        int32_t id = tok_lookup(t, names[i], strlen(names[i]));
        if (id >= 0) t->eog[t->n_eog++] = id;
    }
}

static rlx_status check_desc(const tok_vocab_desc *d) {
    if (!d->model) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "tokenizer: desc.model is NULL (want \"llama\" or \"gpt2\")");
    if (d->n_tokens <= 0 || !d->tokens)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "tokenizer: empty vocabulary (n_tokens %d)", d->n_tokens);
    if (d->n_tokens > INT32_MAX / 4)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "tokenizer: %d tokens is too many", d->n_tokens);
    if (d->n_merges < 0 || (d->n_merges > 0 && !d->merges))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "tokenizer: n_merges %d with merges %p", d->n_merges, (const void *)d->merges);
    const int32_t ids[5] = {d->bos_id, d->eos_id, d->eot_id, d->unk_id, d->pad_id};
    static const char *const names[5] = {"bos", "eos", "eot", "unknown", "padding"};
    for (int k = 0; k < 5; k++)
        if (ids[k] < TOK_NONE || ids[k] >= d->n_tokens)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "tokenizer: %s token id %d is outside the vocabulary [0, %d)",
                            names[k], ids[k], d->n_tokens);
    return RLX_OK;
}

rlx_status rlx_tokenizer_new(const tok_vocab_desc *desc, tokenizer **out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_new: out is NULL");
    *out = NULL;
    if (!desc) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_new: desc is NULL");
    rlx_status st = check_desc(desc);
    if (st) return st;
    tokenizer *t = calloc(1, sizeof *t);
    if (!t) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_tokenizer_new: out of memory");
    if (!strcmp(desc->model, "llama")) t->model = TOK_MODEL_SPM;
    else if (!strcmp(desc->model, "gpt2")) t->model = TOK_MODEL_BPE;
    else {
        free(t);
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "tokenizer: model '%s' is not supported (want \"llama\" or \"gpt2\")", desc->model);
    }
    t->pre = t->model == TOK_MODEL_BPE ? pre_from_name(desc->pre) : TOK_PRE_GPT2;
    t->n_tokens = desc->n_tokens;
    t->bos = desc->bos_id; t->eos = desc->eos_id; t->eot = desc->eot_id;
    t->unk = desc->unk_id; t->pad = desc->pad_id;
    bool spm = t->model == TOK_MODEL_SPM;
    t->add_bos = desc->add_bos == TOK_DEFAULT ? (spm || t->pre == TOK_PRE_LLAMA3) : desc->add_bos != 0;
    t->add_eos = desc->add_eos == TOK_DEFAULT ? false : desc->add_eos != 0;
    /* SPM only: BPE encode never prefixes a space, so decode must not strip one
     * even when a file sets the key. */
    t->add_space_prefix = spm && desc->add_space_prefix != 0;
    t->ignore_merges = t->pre == TOK_PRE_LLAMA3;
    for (int i = 0; i < 256; i++) t->byte_tok[i] = TOK_NONE;

    if ((st = copy_tokens(t, desc)) || (st = build_map(t)) ||
        (st = spm ? tok_spm_init(t) : tok_bpe_init(t, desc)) ||
        (st = build_pieces(t)) || (st = build_special(t))) {
        rlx_tokenizer_free(t);
        return st;
    }
    find_eog(t);
    *out = t;
    return RLX_OK;
}

/* ------------------------------------------------------------- queries */

tok_model rlx_tokenizer_model(const tokenizer *t) { return t ? t->model : TOK_MODEL_SPM; }
tok_pre   rlx_tokenizer_pre(const tokenizer *t)   { return t ? t->pre : TOK_PRE_GPT2; }
int32_t   rlx_tokenizer_n_vocab(const tokenizer *t) { return t ? t->n_tokens : 0; }
int32_t   rlx_tokenizer_bos(const tokenizer *t) { return t ? t->bos : TOK_NONE; }
int32_t   rlx_tokenizer_eos(const tokenizer *t) { return t ? t->eos : TOK_NONE; }
int32_t   rlx_tokenizer_eot(const tokenizer *t) { return t ? t->eot : TOK_NONE; }
bool      rlx_tokenizer_add_bos(const tokenizer *t) { return t && t->add_bos; }

bool rlx_tokenizer_is_eog(const tokenizer *t, int32_t id) {
    if (!t || id < 0) return false;
    if (id == t->eos || id == t->eot) return true;
    for (int32_t k = 0; k < t->n_eog; k++) if (id == t->eog[k]) return true;
    return false;
}

const char *rlx_tokenizer_token_text(const tokenizer *t, int32_t id, size_t *len) {
    if (!t || id < 0 || id >= t->n_tokens) return NULL;
    if (len) *len = t->text_len[id];
    return t->text + t->text_off[id];
}

int32_t rlx_tokenizer_find(const tokenizer *t, const char *text, size_t len) {
    if (!t || (!text && len)) return TOK_NONE;
    return tok_lookup(t, text ? text : "", len);
}

/* -------------------------------------------------------------- encode */

/* Longest special token starting at text[i], or TOK_NONE. */
static int32_t match_special(const tokenizer *t, const char *text, size_t len, size_t i, bool parse_special) {
    uint8_t c = (uint8_t)text[i];
    if (!(t->special_first[c >> 3] & (1u << (c & 7)))) return TOK_NONE;
    for (int32_t k = 0; k < t->n_special; k++) {
        int32_t id = t->special[k];
        uint32_t n = t->text_len[id];
        if (n > len - i) continue;
        if (!parse_special && t->types[id] != TOK_TYPE_USER_DEFINED) continue;
        if (memcmp(text + i, t->text + t->text_off[id], n) == 0) return id;
    }
    return TOK_NONE;
}

static rlx_status encode_text(const tokenizer *t, const char *text, size_t len, tok_ids *out) {
    if (len == 0) return RLX_OK;
    /* A text run always starts the input or follows a special token, which is
     * where llama.cpp's SPM prefixes a space; decode strips it at the same
     * places. */
    if (t->model == TOK_MODEL_SPM) return tok_spm_encode(t, text, len, t->add_space_prefix, out);
    return tok_bpe_encode(t, text, len, out);
}

static rlx_status encode_all(const tokenizer *t, const char *text, size_t len, bool add_special,
                             bool parse_special, tok_ids *ids) {
    const rlx_status oom = RLX_STATUS_OUT_OF_MEMORY;
    if (add_special && t->add_bos && t->bos >= 0 && !tok_ids_push(ids, t->bos))
        return rlx_fail(oom, "tokenizer encode: out of memory");
    size_t start = 0;
    for (size_t i = 0; i < len; i++) {
        int32_t sp = t->n_special ? match_special(t, text, len, i, parse_special) : TOK_NONE;
        if (sp == TOK_NONE) continue;
        rlx_status st = encode_text(t, text + start, i - start, ids);
        if (st) return st;
        if (!tok_ids_push(ids, sp)) return rlx_fail(oom, "tokenizer encode: out of memory");
        i += t->text_len[sp] - 1;
        start = i + 1;
    }
    rlx_status st = encode_text(t, text + start, len - start, ids);
    if (st) return st;
    if (add_special && t->add_eos && t->eos >= 0 && !tok_ids_push(ids, t->eos))
        return rlx_fail(oom, "tokenizer encode: out of memory");
    return RLX_OK;
}

rlx_status rlx_tokenizer_encode(const tokenizer *t, const char *text, size_t len,
                                bool add_special, bool parse_special,
                                int32_t *ids, size_t cap, size_t *n_out) {
    if (n_out) *n_out = 0;
    if (!t || !n_out || (!text && len))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_encode: %s is NULL",
                        !t ? "tokenizer" : !n_out ? "n_out" : "text");
    if (!ids && cap)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_encode: ids is NULL with cap %zu", cap);
    tok_ids v = {0};
    rlx_status st = encode_all(t, text ? text : "", len, add_special, parse_special, &v);
    if (st) { free(v.v); return st; }
    *n_out = v.n;
    if (ids && v.n) memcpy(ids, v.v, RLX_MIN(cap, v.n) * sizeof *ids);   /* v.v is NULL when empty */
    free(v.v);
    if (!ids) return RLX_OK;   /* size query */
    if (cap < *n_out)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_encode: the text needs %zu tokens, ids holds %zu",
                        *n_out, cap);
    return RLX_OK;
}

rlx_status rlx_tokenizer_encode_alloc(const tokenizer *t, const char *text, size_t len,
                                      bool add_special, bool parse_special, int32_t **ids, size_t *n) {
    if (ids) *ids = NULL;
    if (n) *n = 0;
    if (!t || !ids || !n || (!text && len))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_encode_alloc: %s is NULL",
                        !t ? "tokenizer" : !ids ? "ids" : !n ? "n" : "text");
    tok_ids v = {0};
    rlx_status st = encode_all(t, text ? text : "", len, add_special, parse_special, &v);
    if (st) { free(v.v); return st; }
    *ids = v.v;
    *n = v.n;
    return RLX_OK;
}

/* -------------------------------------------------------------- decode */

/* Decode state shared by decode() and the stream: whether the next text piece
 * sits where encode added a prefix space. */
typedef struct piece_state { bool strip_next; } piece_state;

/* The bytes token id contributes to decoded text, given the state. Special
 * tokens (those encode matches literally) reset the prefix stripping. */
static void piece_for(const tokenizer *t, int32_t id, unsigned flags, piece_state *ps,
                      const char **p, size_t *n) {
    uint8_t ty = t->types[id];
    *p = t->piece + t->piece_off[id];
    *n = t->piece_len[id];
    if (ty == TOK_TYPE_CONTROL || ty == TOK_TYPE_USER_DEFINED || ty == TOK_TYPE_UNKNOWN) {
        if (ty == TOK_TYPE_CONTROL && !(flags & TOK_DECODE_RENDER_SPECIAL)) *n = 0;
        ps->strip_next = t->add_space_prefix && !(flags & TOK_DECODE_KEEP_PREFIX);
        return;
    }
    if (*n == 0) return;
    if (ps->strip_next && **p == ' ') { (*p)++; (*n)--; }
    ps->strip_next = false;
}

static rlx_status check_ids(const tokenizer *t, const int32_t *ids, size_t n, const char *fn) {
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->n_tokens)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: ids[%zu] = %d is outside the vocabulary [0, %d)",
                            fn, i, ids[i], t->n_tokens);
    return RLX_OK;
}

static size_t decode_into(const tokenizer *t, const int32_t *ids, size_t n, unsigned flags, char *buf, size_t cap) {
    piece_state ps = { t->add_space_prefix && !(flags & TOK_DECODE_KEEP_PREFIX) };
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        const char *p;
        size_t k;
        piece_for(t, ids[i], flags, &ps, &p, &k);
        if (buf && len + k < cap) memcpy(buf + len, p, k);
        len += k;
    }
    if (buf && len < cap) buf[len] = 0;
    return len;
}

rlx_status rlx_tokenizer_decode(const tokenizer *t, const int32_t *ids, size_t n, unsigned flags,
                                char *buf, size_t cap, size_t *len_out) {
    if (len_out) *len_out = 0;
    if (!t || !len_out || (!ids && n))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_decode: %s is NULL",
                        !t ? "tokenizer" : !len_out ? "len_out" : "ids");
    if (!buf && cap) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_decode: buf is NULL with cap %zu", cap);
    rlx_status st = check_ids(t, ids, n, "rlx_tokenizer_decode");
    if (st) return st;
    size_t len = decode_into(t, ids, n, flags, NULL, 0);
    *len_out = len;
    if (!buf) return RLX_OK;   /* size query */
    if (cap <= len) {
        if (cap) buf[0] = 0;
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_decode: the text needs %zu bytes + NUL, buf holds %zu",
                        len, cap);
    }
    decode_into(t, ids, n, flags, buf, cap);
    return RLX_OK;
}

rlx_status rlx_tokenizer_decode_alloc(const tokenizer *t, const int32_t *ids, size_t n, unsigned flags,
                                      char **out, size_t *len_out) {
    if (out) *out = NULL;
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_decode_alloc: out is NULL");
    size_t len = 0;
    rlx_status st = rlx_tokenizer_decode(t, ids, n, flags, NULL, 0, &len);
    if (st) return st;
    char *s = malloc(len + 1);
    if (!s) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_tokenizer_decode_alloc: out of memory for %zu bytes", len + 1);
    decode_into(t, ids, n, flags, s, len + 1);
    *out = s;
    if (len_out) *len_out = len;
    return RLX_OK;
}

rlx_status rlx_tokenizer_token_to_piece(const tokenizer *t, int32_t id, bool render_special,
                                        const char **piece, size_t *len) {
    if (!t || !piece || !len)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_token_to_piece: %s is NULL",
                        !t ? "tokenizer" : !piece ? "piece" : "len");
    if (id < 0 || id >= t->n_tokens)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tokenizer_token_to_piece: id %d is outside the vocabulary [0, %d)",
                        id, t->n_tokens);
    *piece = t->piece + t->piece_off[id];
    *len = t->piece_len[id];
    if (t->types[id] == TOK_TYPE_CONTROL && !render_special) *len = 0;
    return RLX_OK;
}

/* ----------------------------------------------------------- streaming */

struct tok_stream {
    const tokenizer *t;
    unsigned    flags;
    piece_state ps;
    uint8_t     held[4];    /* an incomplete UTF-8 sequence waiting for more bytes */
    size_t      n_held;
    char       *out;        /* what the last call returns */
    size_t      out_cap;
};

rlx_status rlx_tok_stream_new(const tokenizer *t, unsigned flags, tok_stream **out) {
    if (out) *out = NULL;
    if (!t || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tok_stream_new: %s is NULL", !t ? "tokenizer" : "out");
    tok_stream *s = calloc(1, sizeof *s);
    if (!s) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_tok_stream_new: out of memory");
    s->t = t;
    s->flags = flags;
    s->ps.strip_next = t->add_space_prefix && !(flags & TOK_DECODE_KEEP_PREFIX);
    /* Worst case output per push: held bytes + piece, each byte possibly U+FFFD. */
    s->out_cap = 3 * ((size_t)t->max_piece_len + 4) + 1;
    s->out = malloc(s->out_cap);
    if (!s->out) { free(s); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_tok_stream_new: out of memory"); }
    *out = s;
    return RLX_OK;
}

void rlx_tok_stream_free(tok_stream *s) {
    if (!s) return;
    free(s->out);
    free(s);
}

typedef enum { U8_COMPLETE, U8_INCOMPLETE, U8_INVALID } u8_check;

/* Classifies the sequence at p[0..n): a valid character of *len bytes, the
 * valid start of one that needs more bytes, or an invalid lead/continuation
 * (then the first byte alone is replaced). Rejects overlongs and surrogates
 * by narrowing the second byte's range, as RFC 3629's table does. */
static u8_check utf8_check(const uint8_t *p, size_t n, size_t *len) {
    uint8_t c = p[0];
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c < 0x80) { *len = 1; return U8_COMPLETE; }
    if (c >= 0xC2 && c <= 0xDF) need = 2;
    else if (c >= 0xE0 && c <= 0xEF) { need = 3; if (c == 0xE0) lo = 0xA0; if (c == 0xED) hi = 0x9F; }
    else if (c >= 0xF0 && c <= 0xF4) { need = 4; if (c == 0xF0) lo = 0x90; if (c == 0xF4) hi = 0x8F; }
    else return U8_INVALID;
    for (size_t i = 1; i < need; i++) {
        if (i >= n) return U8_INCOMPLETE;
        uint8_t b = p[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return U8_INVALID;
    }
    *len = need;
    return U8_COMPLETE;
}

/* Appends the complete characters of held + bytes to s->out; keeps an
 * incomplete tail in held unless final. */
static size_t stream_emit(tok_stream *s, const char *bytes, size_t n, bool final) {
    size_t o = 0;
    size_t total = s->n_held + n;
    /* A small window over held ++ bytes without copying the piece. */
    #define AT(i) ((i) < s->n_held ? s->held[(i)] : (uint8_t)bytes[(i) - s->n_held])
    size_t i = 0;
    while (i < total) {
        uint8_t w[4];
        size_t k = RLX_MIN((size_t)4, total - i);
        for (size_t j = 0; j < k; j++) w[j] = AT(i + j);
        size_t len = 1;
        u8_check c = utf8_check(w, k, &len);
        if (c == U8_COMPLETE) {
            memcpy(s->out + o, w, len);
            o += len;
            i += len;
        } else if (c == U8_INCOMPLETE && !final) {
            uint8_t keep[4];
            size_t m = total - i;
            for (size_t j = 0; j < m; j++) keep[j] = AT(i + j);
            memcpy(s->held, keep, m);
            s->n_held = m;
            s->out[o] = 0;
            return o;
        } else {   /* invalid, or incomplete at the end of the stream */
            memcpy(s->out + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i += 1;
            if (c == U8_INCOMPLETE) {   /* drop the rest of the unfinished sequence too */
                while (i < total && (AT(i) & 0xC0) == 0x80) i++;
            }
        }
    }
    #undef AT
    s->n_held = 0;
    s->out[o] = 0;
    return o;
}

rlx_status rlx_tok_stream_push(tok_stream *s, int32_t id, const char **text, size_t *len) {
    if (text) *text = "";
    if (len) *len = 0;
    if (!s || !text || !len)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tok_stream_push: %s is NULL", !s ? "stream" : !text ? "text" : "len");
    if (id < 0 || id >= s->t->n_tokens)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tok_stream_push: id %d is outside the vocabulary [0, %d)",
                        id, s->t->n_tokens);
    const char *p;
    size_t n;
    piece_for(s->t, id, s->flags, &s->ps, &p, &n);
    *len = stream_emit(s, p, n, false);
    *text = s->out;
    return RLX_OK;
}

rlx_status rlx_tok_stream_flush(tok_stream *s, const char **text, size_t *len) {
    if (text) *text = "";
    if (len) *len = 0;
    if (!s || !text || !len)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_tok_stream_flush: %s is NULL", !s ? "stream" : !text ? "text" : "len");
    *len = stream_emit(s, "", 0, true);
    *text = s->out;
    return RLX_OK;
}
