/*
 * tokenizer_wordpiece.c — WordPiece over a vocab.txt vocabulary: parsing and
 * checking the file, the string -> id table, greedy longest-match-first
 * splitting of each pre-token from bert_normalize.c, decode, and the
 * enc_tokenizer wiring (template, specials, pad).
 *
 * A word is split left to right: at each position the longest vocabulary
 * entry that matches (spelled with the "##" prefix after the first piece) is
 * taken. When some position matches nothing, or the word has more than
 * max_chars_per_word code points, the whole word becomes one unk token.
 */
#include "models/tokenizer_wordpiece.h"
#include "models/unicode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wp_model {
    int32_t   n;
    char     *text;             /* every token, NUL-terminated, in id order */
    uint32_t *off, *len;
    uint32_t *map;              /* open addressing: string -> id + 1, 0 = empty */
    uint32_t  map_mask;
    uint32_t  max_len;          /* bytes of the longest token */
    int32_t   unk;
    int32_t   max_chars;
    char     *prefix;
    size_t    prefix_len;
    bert_norm norm;
} wp_model;

static void wp_free(void *p) {
    wp_model *m = p;
    if (!m) return;
    free(m->text);
    free(m->off);
    free(m->len);
    free(m->map);
    free(m->prefix);
    free(m);
}

static uint32_t hash32(const char *s, size_t n) {
    uint64_t h = rlx_hash_bytes(s, n);
    return (uint32_t)(h ^ (h >> 32));
}

static int32_t wp_find(const void *p, const char *s, size_t n) {
    const wp_model *m = p;
    for (uint32_t i = hash32(s, n) & m->map_mask;; i = (i + 1) & m->map_mask) {
        uint32_t e = m->map[i];
        if (e == 0) return TOK_NONE;
        int32_t id = (int32_t)(e - 1);
        if (m->len[id] == n && memcmp(m->text + m->off[id], s, n) == 0) return id;
    }
}

static const char *wp_token_text(const void *p, int32_t id, size_t *len) {
    const wp_model *m = p;
    if (len) *len = m->len[id];
    return m->text + m->off[id];
}

/* ------------------------------------------------------------- parsing */

/* Printable excerpt of a token for messages (at most 40 bytes). */
#define EXCERPT(s, n) (int)((n) < 40 ? (n) : 40), (s)

static bool utf8_valid(const uint8_t *s, size_t n, size_t *bad) {
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = uni_utf8_decode(s + i, n - i, &cp);
        /* U+FFFD from one consumed byte is an invalid sequence unless the
         * bytes really are EF BF BD (which decode as 3). */
        if (cp == UNI_REPLACEMENT && k == 1) { *bad = i; return false; }
        i += k;
    }
    return true;
}

/* Splits data into lines, checks them and copies them into m. */
static rlx_status parse_lines(wp_model *m, const char *name, const char *data, size_t len) {
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) { data += 3; len -= 3; }
    size_t lines = 0;
    for (size_t i = 0; i < len; i++) lines += data[i] == '\n';
    if (len > 0 && data[len - 1] != '\n') lines++;
    if (lines == 0) return rlx_fail(RLX_STATUS_FORMAT, "wordpiece vocab %s: empty (no tokens)", name);
    if (lines > (size_t)INT32_MAX / 4 || len >= UINT32_MAX)
        return rlx_fail(RLX_STATUS_FORMAT, "wordpiece vocab %s: too large (%zu lines, %zu bytes)", name, lines, len);
    m->text = malloc(len + 1);
    m->off = malloc(lines * sizeof *m->off);
    m->len = malloc(lines * sizeof *m->len);
    if (!m->text || !m->off || !m->len) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece vocab %s: out of memory", name);
    size_t pos = 0, out = 0;
    for (size_t k = 0; k < lines; k++) {
        const char *nl = memchr(data + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - data) : len, n = end - pos;
        if (n > 0 && data[pos + n - 1] == '\r') n--;
        const char *s = data + pos;
        size_t bad;
        if (n == 0) return rlx_fail(RLX_STATUS_FORMAT, "wordpiece vocab %s: line %zu is empty (every line is a token)", name, k + 1);
        if (memchr(s, 0, n)) return rlx_fail(RLX_STATUS_FORMAT, "wordpiece vocab %s: line %zu has a NUL byte", name, k + 1);
        if (!utf8_valid((const uint8_t *)s, n, &bad))
            return rlx_fail(RLX_STATUS_FORMAT, "wordpiece vocab %s: line %zu is not valid UTF-8 (byte %zu)", name, k + 1, bad + 1);
        memcpy(m->text + out, s, n);
        m->text[out + n] = 0;
        m->off[k] = (uint32_t)out;
        m->len[k] = (uint32_t)n;
        if (n > m->max_len) m->max_len = (uint32_t)n;
        out += n + 1;
        pos = end + 1;
    }
    m->n = (int32_t)lines;
    return RLX_OK;
}

static rlx_status build_map(wp_model *m, const char *name) {
    uint32_t cap = 16;
    while (cap < (uint32_t)m->n * 2u) cap *= 2;   /* load <= 0.5 */
    m->map = calloc(cap, sizeof *m->map);
    if (!m->map) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece vocab %s: out of memory for the token map", name);
    m->map_mask = cap - 1;
    for (int32_t id = 0; id < m->n; id++) {
        const char *s = m->text + m->off[id];
        uint32_t n = m->len[id], i = hash32(s, n) & m->map_mask;
        for (; m->map[i]; i = (i + 1) & m->map_mask) {
            int32_t o = (int32_t)(m->map[i] - 1);
            if (m->len[o] == n && memcmp(m->text + m->off[o], s, n) == 0)
                return rlx_fail(RLX_STATUS_FORMAT, "wordpiece vocab %s: line %d repeats the token '%.*s' of line %d",
                                name, id + 1, EXCERPT(s, n), o + 1);
        }
        m->map[i] = (uint32_t)id + 1;
    }
    return RLX_OK;
}

/* ------------------------------------------------------------ encoding */

typedef struct wp_ctx {
    const wp_model *m;
    tok_ids        *out;
    char           *buf;        /* prefix + the rest of the word */
    size_t          buf_cap;
} wp_ctx;

static rlx_status wp_push(wp_ctx *c, int32_t id) {
    if (!tok_ids_push(c->out, id)) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece: out of memory");
    return RLX_OK;
}

static rlx_status wp_word(void *user, const char *w, size_t n, size_t n_chars) {
    wp_ctx *c = user;
    const wp_model *m = c->m;
    if (n_chars > (size_t)m->max_chars) return wp_push(c, m->unk);
    size_t plen = m->prefix_len, mark = c->out->n;
    if (plen + n > c->buf_cap) {
        size_t cap = c->buf_cap ? c->buf_cap : 256;
        while (cap < plen + n) cap *= 2;
        char *b = realloc(c->buf, cap);
        if (!b) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece: out of memory");
        c->buf = b;
        c->buf_cap = cap;
    }
    memcpy(c->buf, m->prefix, plen);
    for (size_t start = 0; start < n;) {
        /* Candidates: the rest of the word from start, or prefix + it. */
        const char *s = start ? c->buf : w;
        size_t extra = start ? plen : 0;
        if (start) memcpy(c->buf + plen, w + start, n - start);
        int32_t id = TOK_NONE;
        size_t end = n;
        while (end > start) {
            if (end - start + extra <= m->max_len && (id = wp_find(m, s, end - start + extra)) != TOK_NONE) break;
            do end--; while (end > start && ((uint8_t)w[end] & 0xC0) == 0x80);   /* previous character boundary */
        }
        if (id == TOK_NONE) {
            c->out->n = mark;
            return wp_push(c, m->unk);
        }
        rlx_status st = wp_push(c, id);
        if (st) return st;
        start = end;
    }
    return RLX_OK;
}

static rlx_status wp_tokenize(const void *p, const char *text, size_t len, tok_ids *out) {
    const wp_model *m = p;
    wp_ctx c = {.m = m, .out = out};
    rlx_status st = bert_pretokenize(&m->norm, text, len, wp_word, &c);
    free(c.buf);
    return st;
}

/* Tokens joined by spaces; a token with the prefix (after the first) joins
 * the previous one without it, undoing the split of a word. */
static rlx_status wp_decode(const void *p, const int32_t *ids, size_t n, char **out, size_t *len) {
    const wp_model *m = p;
    size_t total = 1;
    for (size_t i = 0; i < n; i++) total += m->len[ids[i]] + 1;
    char *s = malloc(total);
    if (!s) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece: out of memory decoding %zu ids", n);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = m->text + m->off[ids[i]];
        size_t tl = m->len[ids[i]];
        if (i > 0) {
            if (m->prefix_len && tl >= m->prefix_len && memcmp(t, m->prefix, m->prefix_len) == 0) {
                t += m->prefix_len;
                tl -= m->prefix_len;
            } else {
                s[k++] = ' ';
            }
        }
        memcpy(s + k, t, tl);
        k += tl;
    }
    s[k] = 0;
    *out = s;
    if (len) *len = k;
    return RLX_OK;
}

static const enc_tokenizer_ops wp_ops = {
    .name = "wordpiece",
    .tokenize = wp_tokenize,
    .find = wp_find,
    .token_text = wp_token_text,
    .decode = wp_decode,
    .free = wp_free,
};

/* --------------------------------------------------------------- build */

void wp_options_init(wp_options *o) {
    if (!o) return;
    *o = (wp_options){
        .lowercase = true, .strip_accents = -1, .tokenize_cjk = true, .clean_text = true,
        .max_chars_per_word = 100, .prefix = "##",
        .unk_token = "[UNK]", .cls_token = "[CLS]", .sep_token = "[SEP]",
        .pad_token = "[PAD]", .mask_token = "[MASK]",
    };
}

static rlx_status check_options(const wp_options *o) {
    if (o->max_chars_per_word <= 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "wordpiece: max_chars_per_word is %d (want > 0)", o->max_chars_per_word);
    if (o->strip_accents < -1 || o->strip_accents > 1)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "wordpiece: strip_accents is %d (want -1, 0 or 1)", o->strip_accents);
    if (!o->prefix || strlen(o->prefix) > 64)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "wordpiece: the continuing-subword prefix is NULL or over 64 bytes");
    if (!o->unk_token || !o->cls_token || !o->sep_token || !*o->unk_token || !*o->cls_token || !*o->sep_token)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "wordpiece: unk_token, cls_token and sep_token must be named");
    return RLX_OK;
}

/* Id of a named special token; required ones must be in the vocabulary. */
static rlx_status special_id(const wp_model *m, const char *name, const char *tok, const char *role, bool required, int32_t *id) {
    *id = tok && *tok ? wp_find(m, tok, strlen(tok)) : TOK_NONE;
    if (*id == TOK_NONE && required)
        return rlx_fail(RLX_STATUS_FORMAT, "wordpiece vocab %s: no line is the %s token '%s' (wp_options.%s_token names it)",
                        name, role, tok, role);
    return RLX_OK;
}

static rlx_status build(const char *name, const char *data, size_t len, const wp_options *o, enc_tokenizer **out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "wordpiece: out is NULL");
    *out = NULL;
    wp_options def;
    if (!o) { wp_options_init(&def); o = &def; }
    rlx_status st = check_options(o);
    if (st) return st;
    wp_model *m = calloc(1, sizeof *m);
    if (!m) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece: out of memory");
    m->max_chars = o->max_chars_per_word;
    m->prefix = rlx_strdup(o->prefix);
    m->prefix_len = strlen(o->prefix);
    m->norm = (bert_norm){.clean_text = o->clean_text, .tokenize_cjk = o->tokenize_cjk, .lowercase = o->lowercase,
                          .strip_accents = o->strip_accents < 0 ? o->lowercase : o->strip_accents != 0};
    int32_t cls, sep, pad, mask;
    if (!m->prefix) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece: out of memory");
    if (!st) st = parse_lines(m, name, data, len);
    if (!st) st = build_map(m, name);
    if (!st) st = special_id(m, name, o->unk_token, "unk", true, &m->unk);
    if (!st) st = special_id(m, name, o->cls_token, "cls", true, &cls);
    if (!st) st = special_id(m, name, o->sep_token, "sep", true, &sep);
    if (!st) st = special_id(m, name, o->pad_token, "pad", false, &pad);
    if (!st) st = special_id(m, name, o->mask_token, "mask", false, &mask);
    if (st) { wp_free(m); return st; }

    enc_tokenizer *t;
    if ((st = rlx_enc_tokenizer_new(&wp_ops, m, m->n, &t))) return st;
    enc_template tmpl;
    enc_template_bert(&tmpl, cls, sep);
    t->pad_id = pad;
    const int32_t specials[5] = {m->unk, cls, sep, pad, mask};
    st = rlx_enc_tokenizer_set_template(t, &tmpl);
    for (int k = 0; k < 5 && !st; k++) {
        if (specials[k] == TOK_NONE) continue;
        size_t n;
        const char *s = wp_token_text(m, specials[k], &n);
        st = rlx_enc_tokenizer_add_special(t, s, n, specials[k]);
    }
    if (st) { rlx_enc_tokenizer_free(t); return st; }
    *out = t;
    return RLX_OK;
}

rlx_status rlx_wordpiece_from_memory(const char *data, size_t len, const wp_options *o, enc_tokenizer **out) {
    if (!data && len) {
        if (out) *out = NULL;
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_wordpiece_from_memory: data is NULL with length %zu", len);
    }
    return build("(memory)", data ? data : "", len, o, out);
}

rlx_status rlx_wordpiece_load(const char *path, const wp_options *o, enc_tokenizer **out) {
    if (out) *out = NULL;
    if (!path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_wordpiece_load: path is NULL");
    FILE *f = fopen(path, "rb");
    if (!f) return rlx_fail(RLX_STATUS_IO, "wordpiece vocab '%s': cannot open: %s", path, strerror(errno));
    char *data = NULL;
    size_t len = 0, cap = 0;
    rlx_status st = RLX_OK;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            char *d = realloc(data, cap);
            if (!d) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece vocab '%s': out of memory reading it", path); break; }
            data = d;
        }
        size_t got = fread(data + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) st = rlx_fail(RLX_STATUS_IO, "wordpiece vocab '%s': read error: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (!st) {
        char name[300];
        snprintf(name, sizeof name, "'%s'", path);
        st = build(name, data ? data : "", len, o, out);
    }
    free(data);
    return st;
}
