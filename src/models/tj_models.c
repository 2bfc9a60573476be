/*
 * tj_models.c — the three tokenizer.json models on one pre-token, and the
 * string <-> id table they share.
 *
 *  WordPiece: greedy longest match first, continuing pieces spelled with the
 *    prefix; a word longer than max_input_chars_per_word or with a position
 *    nothing matches is one unk token.
 *  BPE: the word starts as one symbol per character (the prefix on all but
 *    the first, the suffix on the last); a character missing from the
 *    vocabulary becomes its "<0xNN>" byte tokens with byte_fallback, else unk
 *    (consecutive unks fused into one with fuse_unk), else it is an error.
 *    Then the adjacent pair of lowest merge rank is merged (leftmost on a
 *    tie) until no pair has a rank. ignore_merges takes a word found whole.
 *  Unigram: Viterbi over the pieces that match at each position (the
 *    highest total log-probability, the shorter piece kept on a tie); a
 *    character no piece covers is unk with score min_score - 10, as
 *    SentencePiece does; consecutive unks are fused; with byte_fallback an
 *    unk becomes the "<0xNN>" tokens of its bytes.
 */
#include "models/tj_internal.h"
#include "models/unicode.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rlx_status oom(void) { return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer.json: out of memory"); }

/* ---------------------------------------------------------- vocabulary */

static uint32_t hash32(const char *s, size_t n) {
    uint64_t h = rlx_hash_bytes(s, n);
    return (uint32_t)(h ^ (h >> 32));
}

rlx_status tj_vocab_init(tj_model *m, int32_t n) {
    m->n = n;
    m->off = malloc((size_t)n * sizeof *m->off);
    m->len = malloc((size_t)n * sizeof *m->len);
    uint32_t cap = 16;
    while (cap < (uint32_t)n * 2u) cap *= 2;
    m->map = calloc(cap, sizeof *m->map);
    m->map_mask = cap - 1;
    if (!m->off || !m->len || !m->map) return oom();
    for (int32_t i = 0; i < n; i++) m->len[i] = UINT32_MAX;
    m->unk = TOK_NONE;
    for (int b = 0; b < 256; b++) m->byte_tok[b] = TOK_NONE;
    return RLX_OK;
}

int32_t tj_find(const tj_model *m, const char *s, size_t n) {
    if (n > m->max_len) return TOK_NONE;
    for (uint32_t i = hash32(s, n) & m->map_mask;; i = (i + 1) & m->map_mask) {
        uint32_t e = m->map[i];
        if (e == 0) return TOK_NONE;
        int32_t id = (int32_t)(e - 1);
        if (m->len[id] == n && memcmp(m->text + m->off[id], s, n) == 0) return id;
    }
}

rlx_status tj_vocab_set(tj_model *m, int32_t id, const char *s, size_t n, const char *what) {
    if (id < 0 || id >= m->n) return rlx_fail(RLX_STATUS_FORMAT, "%s: id %d is outside [0, %d)", what, id, m->n);
    if (m->len[id] != UINT32_MAX)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: id %d is given to two strings", what, id);
    if (n >= UINT32_MAX / 2) return rlx_fail(RLX_STATUS_FORMAT, "%s: a %zu-byte token is too long", what, n);
    int32_t old = tj_find(m, s, n);
    if (old != TOK_NONE)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: token '%.*s' has two ids, %d and %d", what, (int)(n < 40 ? n : 40), s, old, id);
    if (m->text_n + n + 1 > m->text_cap) {
        size_t cap = m->text_cap ? m->text_cap : 4096;
        while (cap < m->text_n + n + 1) cap *= 2;
        if (cap > UINT32_MAX) return rlx_fail(RLX_STATUS_FORMAT, "%s: the vocabulary's strings pass 4 GiB", what);
        char *t = realloc(m->text, cap);
        if (!t) return oom();
        m->text = t;
        m->text_cap = cap;
    }
    memcpy(m->text + m->text_n, s, n);
    m->text[m->text_n + n] = 0;
    m->off[id] = (uint32_t)m->text_n;
    m->len[id] = (uint32_t)n;
    m->text_n += n + 1;
    if (n > m->max_len) m->max_len = (uint32_t)n;
    uint32_t i = hash32(s, n) & m->map_mask;
    while (m->map[i]) i = (i + 1) & m->map_mask;
    m->map[i] = (uint32_t)id + 1;
    return RLX_OK;
}

void tj_find_byte_tokens(tj_model *m) {
    for (int b = 0; b < 256; b++) {
        char s[8];
        snprintf(s, sizeof s, "<0x%02X>", b);
        m->byte_tok[b] = tj_find(m, s, 6);
    }
}

static uint32_t merge_hash(uint64_t key) { return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32); }

rlx_status tj_merges_init(tj_model *m, size_t n) {
    uint32_t cap = 16;
    while (cap < n * 2) {
        if (cap >= (1u << 30)) return rlx_fail(RLX_STATUS_FORMAT, "tokenizer.json: %zu merges is too many", n);
        cap *= 2;
    }
    m->merges = malloc(cap * sizeof *m->merges);
    if (!m->merges) return oom();
    for (uint32_t i = 0; i < cap; i++) m->merges[i].key = UINT64_MAX;
    m->merge_mask = cap - 1;
    return RLX_OK;
}

void tj_merge_add(tj_model *m, int32_t l, int32_t r, int32_t merged, int32_t rank) {
    uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
    uint32_t i = merge_hash(key) & m->merge_mask;
    while (m->merges[i].key != UINT64_MAX && m->merges[i].key != key) i = (i + 1) & m->merge_mask;
    if (m->merges[i].key == key) return;
    m->merges[i] = (tj_merge){key, rank, merged};
}

static const tj_merge *find_merge(const tj_model *m, int32_t l, int32_t r) {
    if (!m->merges || l < 0 || r < 0) return NULL;
    uint64_t key = (uint64_t)(uint32_t)l << 32 | (uint32_t)r;
    for (uint32_t i = merge_hash(key) & m->merge_mask;; i = (i + 1) & m->merge_mask) {
        if (m->merges[i].key == key) return &m->merges[i];
        if (m->merges[i].key == UINT64_MAX) return NULL;
    }
}

/* A string of the model's own vocabulary (not an added token beyond it). */
static int32_t mfind(const tj_model *m, const char *s, size_t n) {
    int32_t id = tj_find(m, s, n);
    return id < m->n_model ? id : TOK_NONE;
}

static rlx_status push(tok_ids *out, int32_t id) { return tok_ids_push(out, id) ? RLX_OK : oom(); }

static rlx_status no_unk(const tj_model *m, const char *w, size_t n) {
    (void)m;
    return rlx_fail(RLX_STATUS_FORMAT, "tokenizer.json: '%.*s' has no token and the model has no unk_token",
                    (int)(n < 40 ? n : 40), w);
}

/* The byte tokens of s[0..n), or false when one is missing. */
static bool bytes_ok(const tj_model *m, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) if (m->byte_tok[(uint8_t)s[i]] == TOK_NONE) return false;
    return true;
}

/* ---------------------------------------------------------- WordPiece */

static rlx_status wordpiece(const tj_model *m, const char *w, size_t n, tj_buf *b, tok_ids *out) {
    size_t chars = 0;
    for (size_t i = 0; i < n; i++) chars += ((uint8_t)w[i] & 0xC0) != 0x80;
    if (m->unk == TOK_NONE && chars > (size_t)m->max_chars) return no_unk(m, w, n);
    if (chars > (size_t)m->max_chars) return push(out, m->unk);
    size_t mark = out->n;
    for (size_t start = 0; start < n;) {
        b->n = 0;
        if ((start && !tj_put(b, m->prefix, m->prefix_len)) || !tj_put(b, w + start, n - start)) return oom();
        size_t extra = start ? m->prefix_len : 0, end = n;
        int32_t id = TOK_NONE;
        while (end > start) {
            if ((id = mfind(m, b->s, end - start + extra)) != TOK_NONE) break;
            do end--; while (end > start && ((uint8_t)w[end] & 0xC0) == 0x80);
        }
        if (id == TOK_NONE) {
            out->n = mark;
            if (m->unk == TOK_NONE) return no_unk(m, w, n);
            return push(out, m->unk);
        }
        rlx_status st = push(out, id);
        if (st) return st;
        start = end;
    }
    return RLX_OK;
}

/* ---------------------------------------------------------------- BPE */

typedef struct sym {
    int32_t id;
    size_t  s, e;      /* bytes of the word */
} sym;

static rlx_status bpe(const tj_model *m, const char *w, size_t n, tj_buf *b, tok_ids *out) {
    if (m->ignore_merges) {
        b->n = 0;
        if (!tj_put(b, w, n) || !tj_put(b, m->suffix, m->suffix_len)) return oom();
        int32_t id = mfind(m, b->s, b->n);
        if (id != TOK_NONE) return push(out, id);
    }
    sym *v = malloc((n ? n : 1) * 4 * sizeof *v);   /* byte fallback: up to 4 per character */
    if (!v) return oom();
    size_t k = 0;
    rlx_status st = RLX_OK;
    for (size_t i = 0; i < n && !st;) {
        size_t c = tok_utf8_unit((const uint8_t *)w + i, n - i);
        bool last = i + c == n;
        b->n = 0;
        bool ok = (!i || tj_put(b, m->prefix, m->prefix_len)) && tj_put(b, w + i, c) &&
                  (!last || tj_put(b, m->suffix, m->suffix_len));
        if (!ok) { st = oom(); break; }
        int32_t id = mfind(m, b->s, b->n);
        if (id != TOK_NONE) {
            v[k++] = (sym){id, i, i + c};
        } else if (m->byte_fallback && bytes_ok(m, w + i, c)) {
            for (size_t j = 0; j < c; j++) v[k++] = (sym){m->byte_tok[(uint8_t)w[i + j]], i + j, i + j + 1};
        } else if (m->unk != TOK_NONE) {
            if (m->fuse_unk && k && v[k - 1].id == m->unk) v[k - 1].e = i + c;
            else v[k++] = (sym){m->unk, i, i + c};
        } else {
            st = no_unk(m, w + i, c);
        }
        i += c;
    }
    while (!st && k > 1) {
        size_t best = SIZE_MAX;
        const tj_merge *bm = NULL;
        for (size_t i = 0; i + 1 < k; i++) {
            const tj_merge *mg = find_merge(m, v[i].id, v[i + 1].id);
            if (mg && (!bm || mg->rank < bm->rank)) { bm = mg; best = i; }
        }
        if (!bm) break;
        v[best].id = bm->merged;
        v[best].e = v[best + 1].e;
        memmove(v + best + 1, v + best + 2, (k - best - 2) * sizeof *v);
        k--;
    }
    for (size_t i = 0; i < k && !st; i++) st = push(out, v[i].id);
    free(v);
    return st;
}

/* ------------------------------------------------------------ Unigram */

typedef struct vnode {
    double  score;     /* best total ending here; -DBL_MAX unreached */
    size_t  from;      /* where its last piece starts */
    int32_t id;        /* its last piece (unk for an uncovered character) */
} vnode;

static rlx_status unigram(const tj_model *m, const char *w, size_t n, tok_ids *out) {
    vnode *nd = malloc((n + 1) * sizeof *nd);
    if (!nd) return oom();
    for (size_t i = 0; i <= n; i++) nd[i] = (vnode){-DBL_MAX, 0, TOK_NONE};
    nd[0].score = 0;
    for (size_t i = 0; i < n;) {
        size_t c = tok_utf8_unit((const uint8_t *)w + i, n - i);
        if (nd[i].score > -DBL_MAX) {
            bool single = false;
            for (size_t e = i + 1; e <= n && e - i <= m->max_len; e++) {
                if (e < n && ((uint8_t)w[e] & 0xC0) == 0x80) continue;   /* inside a character */
                int32_t id = mfind(m, w + i, e - i);
                if (id == TOK_NONE || id == m->unk) continue;
                if (e == i + c) single = true;
                double s = nd[i].score + m->scores[id];
                if (s > nd[e].score) nd[e] = (vnode){s, i, id};
            }
            if (!single) {
                double s = nd[i].score + m->unk_score;
                if (s > nd[i + c].score) nd[i + c] = (vnode){s, i, m->unk};
            }
        }
        i += c;
    }
    /* Walk back, then emit in order (fusing unks). */
    size_t cnt = 0;
    for (size_t e = n; e > 0; e = nd[e].from) cnt++;
    size_t *ends = malloc((cnt ? cnt : 1) * sizeof *ends);
    rlx_status st = ends ? RLX_OK : oom();
    size_t j = cnt;
    if (!st) for (size_t e = n; e > 0; e = nd[e].from) ends[--j] = e;
    bool prev_unk = false;
    for (size_t q = 0; q < cnt && !st; q++) {
        size_t e = ends[q], s = nd[e].from;
        int32_t id = nd[e].id;
        bool unk = id == m->unk || id == TOK_NONE;
        if (unk && m->byte_fallback && bytes_ok(m, w + s, e - s)) {
            for (size_t k = s; k < e && !st; k++) st = push(out, m->byte_tok[(uint8_t)w[k]]);
            prev_unk = false;
            continue;
        }
        if (unk && m->unk == TOK_NONE) { st = no_unk(m, w + s, e - s); break; }
        if (unk && prev_unk && m->fuse_unk) continue;
        st = push(out, id);
        prev_unk = unk;
    }
    free(ends);
    free(nd);
    return st;
}

rlx_status tj_model_word(const tj_model *m, const char *w, size_t n, tj_buf *scratch, tok_ids *out) {
    if (n == 0) return RLX_OK;
    switch (m->kind) {
    case TJM_WORDPIECE: return wordpiece(m, w, n, scratch, out);
    case TJM_BPE: return bpe(m, w, n, scratch, out);
    case TJM_UNIGRAM: return unigram(m, w, n, out);
    }
    return rlx_fail(RLX_STATUS_INTERNAL, "tokenizer.json: model kind %d", (int)m->kind);
}

void tj_model_free(tj_model *m) {
    if (!m) return;
    free(m->text);
    free(m->off);
    free(m->len);
    free(m->map);
    free(m->scores);
    free(m->prefix);
    free(m->suffix);
    free(m->merges);
    for (int i = 0; i < m->n_norms; i++) {
        free(m->norms[i].pattern);
        free(m->norms[i].content);
        tj_regex_free(m->norms[i].regex);
        tj_charsmap_free(m->norms[i].charsmap);
    }
    free(m->norms);
    for (int i = 0; i < m->n_pres; i++) free(m->pres[i].pattern);
    free(m->pres);
    free(m);
}
