/*
 * enc_tokenizer.c — the model-independent half of encoder tokenization:
 * special tokens cut out of the raw text, the template around one or two
 * sequences, longest-first truncation, padding, batches and decode.
 */
#include "models/enc_tokenizer.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ template */

void enc_template_bert(enc_template *t, int32_t cls, int32_t sep) {
    *t = (enc_template){
        .single = {{cls, 0}, {ENC_SEQ_A, 0}, {sep, 0}}, .n_single = 3,
        .pair = {{cls, 0}, {ENC_SEQ_A, 0}, {sep, 0}, {ENC_SEQ_B, 1}, {sep, 1}}, .n_pair = 5,
    };
}

void enc_template_roberta(enc_template *t, int32_t bos, int32_t eos) {
    *t = (enc_template){
        .single = {{bos, 0}, {ENC_SEQ_A, 0}, {eos, 0}}, .n_single = 3,
        .pair = {{bos, 0}, {ENC_SEQ_A, 0}, {eos, 0}, {eos, 0}, {ENC_SEQ_B, 0}, {eos, 0}}, .n_pair = 6,
    };
}

static rlx_status check_pieces(const enc_tokenizer *t, const enc_piece *p, int n, bool pair) {
    const char *what = pair ? "pair" : "single";
    if (n < 0 || n > ENC_TEMPLATE_MAX)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "enc_tokenizer: %s template has %d pieces (max %d)", what, n, ENC_TEMPLATE_MAX);
    int a = 0, b = 0;
    for (int i = 0; i < n; i++) {
        if (p[i].id == ENC_SEQ_A) a++;
        else if (p[i].id == ENC_SEQ_B) b++;
        else if (p[i].id < 0 || p[i].id >= t->n_vocab)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "enc_tokenizer: %s template piece %d: id %d is outside the vocabulary [0, %d)",
                            what, i, p[i].id, t->n_vocab);
    }
    if (a != 1 || b != (pair ? 1 : 0))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "enc_tokenizer: %s template has sequence A %d times and B %d times (want 1 and %d)",
                        what, a, b, pair ? 1 : 0);
    return RLX_OK;
}

rlx_status rlx_enc_tokenizer_set_template(enc_tokenizer *t, const enc_template *tmpl) {
    if (!t || !tmpl) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_tokenizer_set_template: NULL argument");
    rlx_status st = check_pieces(t, tmpl->single, tmpl->n_single, false);
    if (!st) st = check_pieces(t, tmpl->pair, tmpl->n_pair, true);
    if (!st) t->tmpl = *tmpl;
    return st;
}

/* Template tokens around the sequences: what max_length must leave room for. */
static size_t n_added(const enc_tokenizer *t, bool pair) {
    return pair ? (size_t)t->tmpl.n_pair - 2 : (size_t)t->tmpl.n_single - 1;
}

/* --------------------------------------------------------------- build */

rlx_status rlx_enc_tokenizer_new(const enc_tokenizer_ops *ops, void *model, int32_t n_vocab, enc_tokenizer **out) {
    if (out) *out = NULL;
    if (!ops || !out || n_vocab <= 0) {
        if (ops && ops->free) ops->free(model);
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_tokenizer_new: NULL ops/out or vocabulary size %d", n_vocab);
    }
    enc_tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        if (ops->free) ops->free(model);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_enc_tokenizer_new: out of memory");
    }
    t->ops = ops;
    t->model = model;
    t->n_vocab = n_vocab;
    t->tmpl.single[0] = (enc_piece){ENC_SEQ_A, 0};
    t->tmpl.n_single = 1;
    t->tmpl.pair[0] = (enc_piece){ENC_SEQ_A, 0};
    t->tmpl.pair[1] = (enc_piece){ENC_SEQ_B, 1};
    t->tmpl.n_pair = 2;
    t->pad_id = TOK_NONE;
    *out = t;
    return RLX_OK;
}

void rlx_enc_tokenizer_free(enc_tokenizer *t) {
    if (!t) return;
    if (t->ops && t->ops->free) t->ops->free(t->model);
    for (int32_t i = 0; i < t->n_specials; i++) free(t->specials[i].text);
    free(t->specials);
    free(t);
}

rlx_status rlx_enc_tokenizer_add_special(enc_tokenizer *t, const char *text, size_t len, int32_t id) {
    if (!t || !text || len == 0 || len > UINT32_MAX)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_tokenizer_add_special: NULL tokenizer or empty text");
    if (id < 0 || id >= t->n_vocab)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_tokenizer_add_special: id %d is outside the vocabulary [0, %d)", id, t->n_vocab);
    int32_t at = t->n_specials;   /* insertion point: after every longer-or-equal entry */
    for (int32_t i = 0; i < t->n_specials; i++) {
        const enc_special *s = &t->specials[i];
        if (s->len == len && memcmp(s->text, text, len) == 0) return RLX_OK;
        if (s->len < len && at == t->n_specials) at = i;
    }
    enc_special *v = realloc(t->specials, ((size_t)t->n_specials + 1) * sizeof *v);
    if (!v) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_enc_tokenizer_add_special: out of memory");
    t->specials = v;
    char *copy = malloc(len + 1);
    if (!copy) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_enc_tokenizer_add_special: out of memory");
    memcpy(copy, text, len);
    copy[len] = 0;
    memmove(v + at + 1, v + at, (size_t)(t->n_specials - at) * sizeof *v);
    v[at] = (enc_special){copy, (uint32_t)len, id};
    t->n_specials++;
    return RLX_OK;
}

/* ------------------------------------------------------------- queries */

int32_t rlx_enc_n_vocab(const enc_tokenizer *t) { return t ? t->n_vocab : 0; }

int32_t rlx_enc_find(const enc_tokenizer *t, const char *text, size_t len) {
    if (!t || (!text && len)) return TOK_NONE;
    return t->ops->find(t->model, text ? text : "", len);
}

const char *rlx_enc_token_text(const enc_tokenizer *t, int32_t id, size_t *len) {
    if (!t || id < 0 || id >= t->n_vocab) return NULL;
    return t->ops->token_text(t->model, id, len);
}

bool rlx_enc_is_special(const enc_tokenizer *t, int32_t id) {
    if (!t) return false;
    for (int32_t i = 0; i < t->n_specials; i++) if (t->specials[i].id == id) return true;
    return false;
}

/* -------------------------------------------------------------- encode */

void enc_options_init(enc_options *o) {
    if (!o) return;
    *o = (enc_options){.add_special = true, .parse_special = true};
}

/* The longest special token at text[i], or NULL. */
static const enc_special *special_at(const enc_tokenizer *t, const char *text, size_t len, size_t i) {
    for (int32_t k = 0; k < t->n_specials; k++) {
        const enc_special *s = &t->specials[k];
        if (s->len <= len - i && memcmp(text + i, s->text, s->len) == 0) return s;
    }
    return NULL;
}

/* Plain-text runs go to the model, special tokens become their ids. */
static rlx_status tokenize_into(const enc_tokenizer *t, const char *text, size_t len, bool parse_special, tok_ids *out) {
    size_t run = 0;
    if (parse_special && t->n_specials > 0) {
        for (size_t i = 0; i < len;) {
            const enc_special *s = special_at(t, text, len, i);
            if (!s) { i++; continue; }
            rlx_status st = i > run ? t->ops->tokenize(t->model, text + run, i - run, out) : RLX_OK;
            if (st) return st;
            if (!tok_ids_push(out, s->id)) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", t->ops->name);
            i += s->len;
            run = i;
        }
    }
    return len > run ? t->ops->tokenize(t->model, text + run, len - run, out) : RLX_OK;
}

rlx_status rlx_enc_tokenize(const enc_tokenizer *t, const char *text, size_t len, bool parse_special, int32_t **ids, size_t *n) {
    if (ids) *ids = NULL;
    if (n) *n = 0;
    if (!t || !ids || !n || (!text && len))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_tokenize: NULL argument");
    tok_ids v = {0};
    rlx_status st = tokenize_into(t, text, len, parse_special, &v);
    if (st) { free(v.v); return st; }
    *ids = v.v;
    *n = v.n;
    return RLX_OK;
}

void rlx_enc_truncate_pair(size_t a, size_t b, size_t budget, size_t *a_keep, size_t *b_keep) {
    *a_keep = a;
    *b_keep = b;
    if (a + b <= budget) return;
    bool swap = a > b;
    size_t n1 = swap ? b : a, n2;   /* n1: the shorter */
    n2 = n1 > budget ? n1 : (n1 > budget - n1 ? n1 : budget - n1);
    if (n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
    }
    size_t ka = swap ? n2 : n1, kb = swap ? n1 : n2;
    *a_keep = ka < a ? ka : a;
    *b_keep = kb < b ? kb : b;
}

/* The ids of a row before padding: template, sequences, types. */
typedef struct enc_row {
    tok_ids ids, types;
    size_t  n_truncated;
} enc_row;

static void row_free(enc_row *r) {
    free(r->ids.v);
    free(r->types.v);
}

static rlx_status encode_row(const enc_tokenizer *t, const char *a, size_t a_len, const char *b, size_t b_len,
                             const enc_options *o, enc_row *r) {
    bool pair = b != NULL;
    tok_ids sa = {0}, sb = {0};
    rlx_status st = tokenize_into(t, a, a_len, o->parse_special, &sa);
    if (!st && pair) st = tokenize_into(t, b, b_len, o->parse_special, &sb);
    size_t keep_a = sa.n, keep_b = sb.n;
    if (!st && o->max_length) {
        size_t added = o->add_special ? n_added(t, pair) : 0;
        if (o->max_length < added)
            st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: max_length %zu is shorter than the %zu template tokens of a %s",
                          t->ops->name, o->max_length, added, pair ? "pair" : "single text");
        else if (pair)
            rlx_enc_truncate_pair(sa.n, sb.n, o->max_length - added, &keep_a, &keep_b);
        else if (keep_a > o->max_length - added)
            keep_a = o->max_length - added;
    }
    r->n_truncated = (sa.n - keep_a) + (sb.n - keep_b);
    const enc_piece *p = o->add_special ? (pair ? t->tmpl.pair : t->tmpl.single) : NULL;
    int np = o->add_special ? (pair ? t->tmpl.n_pair : t->tmpl.n_single) : (pair ? 2 : 1);
    static const enc_piece bare[2] = {{ENC_SEQ_A, 0}, {ENC_SEQ_B, 1}};
    if (!p) p = bare;
    for (int k = 0; k < np && !st; k++) {
        const tok_ids *seq = p[k].id == ENC_SEQ_A ? &sa : p[k].id == ENC_SEQ_B ? &sb : NULL;
        size_t cnt = seq ? (seq == &sa ? keep_a : keep_b) : 1;
        for (size_t i = 0; i < cnt; i++) {
            if (!tok_ids_push(&r->ids, seq ? seq->v[i] : p[k].id) || !tok_ids_push(&r->types, p[k].type_id)) {
                st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", t->ops->name);
                break;
            }
        }
    }
    free(sa.v);
    free(sb.v);
    return st;
}

/* Shared by both encodes: NULL options become the defaults (in *def). */
static rlx_status encode_setup(const enc_tokenizer *t, const enc_options **o, enc_options *def, const char *fn) {
    if (!*o) {
        enc_options_init(def);
        *o = def;
    }
    if (!t) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: tokenizer is NULL", fn);
    if ((*o)->pad_to_max_length && (*o)->max_length == 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: pad_to_max_length without a max_length", fn);
    return RLX_OK;
}

static rlx_status need_pad(const enc_tokenizer *t, const char *fn) {
    if (t->pad_id == TOK_NONE)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: padding needs a pad token and the vocabulary has none", fn);
    return RLX_OK;
}

/* Writes row r into ids/types/mask of width w (>= its length), padded. */
static void write_row(const enc_tokenizer *t, const enc_row *r, size_t w, int32_t *ids, int32_t *types, int32_t *mask) {
    size_t n = r->ids.n;
    if (n) {
        memcpy(ids, r->ids.v, n * sizeof *ids);
        memcpy(types, r->types.v, n * sizeof *types);
    }
    for (size_t i = 0; i < w; i++) {
        if (i >= n) {
            ids[i] = t->pad_id;
            types[i] = t->pad_type_id;
        }
        mask[i] = i < n;
    }
}

void rlx_enc_encoding_free(enc_encoding *e) {
    if (!e) return;
    free(e->ids);
    memset(e, 0, sizeof *e);
}

rlx_status rlx_enc_encode(const enc_tokenizer *t, const char *a, size_t a_len, const char *b, size_t b_len,
                          const enc_options *o, enc_encoding *out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_encode: out is NULL");
    memset(out, 0, sizeof *out);
    enc_options def;
    rlx_status st = encode_setup(t, &o, &def, "rlx_enc_encode");
    if (st) return st;
    if ((!a && a_len) || (!b && b_len))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_encode: NULL text with length %zu", a ? b_len : a_len);
    enc_row r = {0};
    if ((st = encode_row(t, a ? a : "", a_len, b, b_len, o, &r))) { row_free(&r); return st; }
    size_t w = o->pad_to_max_length && o->max_length > r.ids.n ? o->max_length : r.ids.n;
    if (w > r.ids.n && (st = need_pad(t, "rlx_enc_encode"))) { row_free(&r); return st; }
    int32_t *buf = malloc((3 * w + 1) * sizeof *buf);
    if (!buf) { row_free(&r); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_enc_encode: out of memory for %zu tokens", w); }
    out->ids = buf;
    out->type_ids = buf + w;
    out->attention_mask = buf + 2 * w;
    out->len = w;
    out->n_tokens = r.ids.n;
    out->n_truncated = r.n_truncated;
    write_row(t, &r, w, out->ids, out->type_ids, out->attention_mask);
    row_free(&r);
    return RLX_OK;
}

void rlx_enc_batch_free(enc_batch *b) {
    if (!b) return;
    free(b->ids);
    free(b->lengths);
    memset(b, 0, sizeof *b);
}

rlx_status rlx_enc_encode_batch(const enc_tokenizer *t, size_t n, const char *const *a, const size_t *a_lens,
                                const char *const *b, const size_t *b_lens, const enc_options *o, enc_batch *out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_encode_batch: out is NULL");
    memset(out, 0, sizeof *out);
    enc_options def;
    rlx_status st = encode_setup(t, &o, &def, "rlx_enc_encode_batch");
    if (st) return st;
    if (n > 0 && !a) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_encode_batch: %zu texts but a is NULL", n);
    for (size_t i = 0; i < n; i++)
        if (!a[i]) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_encode_batch: text %zu is NULL", i);
    enc_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_enc_encode_batch: out of memory for %zu rows", n);
    size_t w = o->pad_to_max_length ? o->max_length : 0;
    for (size_t i = 0; i < n && !st; i++) {
        const char *bi = b ? b[i] : NULL;
        size_t al = a_lens ? a_lens[i] : strlen(a[i]), bl = bi ? (b_lens ? b_lens[i] : strlen(bi)) : 0;
        st = encode_row(t, a[i], al, bi, bl, o, &rows[i]);
        if (st) rlx_fail(st, "rlx_enc_encode_batch: row %zu: %s", i, rlx_last_error());
        else if (rows[i].ids.n > w) w = rows[i].ids.n;
    }
    bool padded = false;
    for (size_t i = 0; i < n && !st; i++) padded |= rows[i].ids.n < w;
    if (!st && padded) st = need_pad(t, "rlx_enc_encode_batch");
    uint64_t cells64 = 0;
    if (!st && (!rlx_mul_overflow_u64(n, w, &cells64) || cells64 > SIZE_MAX / (3 * sizeof(int32_t)) - 1))
        st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_encode_batch: %zu rows of %zu tokens is too large", n, w);
    size_t cells = (size_t)cells64;
    if (!st) {
        int32_t *buf = malloc((3 * cells + 1) * sizeof *buf);
        size_t *lens = malloc((n ? n : 1) * sizeof *lens);
        if (!buf || !lens) {
            free(buf);
            free(lens);
            st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_enc_encode_batch: out of memory for %zu x %zu tokens", n, w);
        } else {
            *out = (enc_batch){n, w, buf, buf + cells, buf + 2 * cells, lens};
            for (size_t i = 0; i < n; i++) {
                write_row(t, &rows[i], w, out->ids + i * w, out->type_ids + i * w, out->attention_mask + i * w);
                lens[i] = rows[i].ids.n;
            }
        }
    }
    for (size_t i = 0; i < n; i++) row_free(&rows[i]);
    free(rows);
    return st;
}

/* -------------------------------------------------------------- decode */

rlx_status rlx_enc_decode(const enc_tokenizer *t, const int32_t *ids, size_t n, bool skip_special, char **out, size_t *len) {
    if (out) *out = NULL;
    if (len) *len = 0;
    if (!t || !out || (!ids && n)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_decode: NULL argument");
    int32_t *keep = malloc((n ? n : 1) * sizeof *keep);
    if (!keep) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_enc_decode: out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->n_vocab) {
            free(keep);
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_enc_decode: id %d at position %zu is outside the vocabulary [0, %d)",
                            ids[i], i, t->n_vocab);
        }
        if (!(skip_special && rlx_enc_is_special(t, ids[i]))) keep[m++] = ids[i];
    }
    rlx_status st = t->ops->decode(t->model, keep, m, out, len);
    free(keep);
    return st;
}
