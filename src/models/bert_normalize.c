/*
 * bert_normalize.c — BERT's basic tokenizer: raw text to the pre-tokens that
 * WordPiece then splits into vocabulary pieces.
 *
 * Per code point, in one pass:
 *  1. clean_text: NUL, U+FFFD and every other character of category C* (Cc,
 *     Cf, Cs, Co, Cn) except \t \n \r are dropped; \t \n \r and the Z*
 *     separators become a space.
 *  2. White_Space ends the current word (and is dropped).
 *  3. tokenize_cjk: a CJK ideograph (uni_is_cjk_ideograph) is a word of its
 *     own, as if surrounded by spaces.
 * Then per word:
 *  4. lowercase: each code point's full lowercase (U+0130 -> i + U+0307;
 *     no final-sigma rule, matching Hugging Face tokenizers' per-character
 *     mapping).
 *  5. strip_accents: canonical decomposition (NFD) of the word, then every
 *     nonspacing mark (Mn) is dropped: "Élan" -> "Elan", Hangul syllables to
 *     their jamo.
 *  6. Every punctuation character (uni_is_bert_punct) becomes a pre-token of
 *     its own; the runs between them are the others.
 * This is the order of the reference implementations (Google's
 * tokenization.py, Hugging Face's BertNormalizer + BertPreTokenizer), which
 * agree with each other on it; lowercasing before or after stripping gives
 * the same result.
 */
#include "models/tokenizer_wordpiece.h"
#include "models/unicode.h"

#include <stdlib.h>
#include <string.h>

typedef struct cp_buf {
    uint32_t *v;
    size_t    n, cap;
} cp_buf;

static bool cp_reserve(cp_buf *b, size_t extra) {
    if (b->n + extra <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->n + extra) cap *= 2;
    uint32_t *v = realloc(b->v, cap * sizeof *v);
    if (!v) return false;
    b->v = v;
    b->cap = cap;
    return true;
}

typedef struct pre_state {
    const bert_norm *o;
    bert_word_fn     fn;
    void            *user;
    cp_buf           word, tmp;
    char            *bytes;
    size_t           bytes_cap;
} pre_state;

static rlx_status oom(void) { return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "wordpiece: out of memory in the basic tokenizer"); }

/* Calls fn with cps[0..n) as UTF-8. */
static rlx_status emit(pre_state *s, const uint32_t *cps, size_t n) {
    if (n == 0) return RLX_OK;
    if (4 * n > s->bytes_cap) {
        size_t cap = s->bytes_cap ? s->bytes_cap : 256;
        while (cap < 4 * n) cap *= 2;
        char *b = realloc(s->bytes, cap);
        if (!b) return oom();
        s->bytes = b;
        s->bytes_cap = cap;
    }
    size_t len = 0;
    for (size_t i = 0; i < n; i++) len += uni_utf8_encode(cps[i], s->bytes + len);
    return s->fn(s->user, s->bytes, len, n);
}

/* Steps 4-6 on the word collected so far, which is then emptied. */
static rlx_status flush_word(pre_state *s) {
    cp_buf *w = &s->word, *t = &s->tmp;
    if (w->n == 0) return RLX_OK;
    if (s->o->lowercase) {
        t->n = 0;
        if (!cp_reserve(t, w->n * UNI_LOWER_MAX)) return oom();
        for (size_t i = 0; i < w->n; i++) t->n += uni_lower_full(w->v[i], t->v + t->n);
        cp_buf x = *w; *w = *t; *t = x;
    }
    if (s->o->strip_accents) {
        t->n = 0;
        if (!cp_reserve(t, w->n * UNI_NFD_MAX)) return oom();
        for (size_t i = 0; i < w->n; i++) t->n += uni_nfd_char(w->v[i], t->v + t->n);
        uni_canonical_order(t->v, t->n);
        size_t k = 0;
        for (size_t i = 0; i < t->n; i++)
            if (uni_category(t->v[i]) != UNI_Mn) t->v[k++] = t->v[i];
        t->n = k;
        cp_buf x = *w; *w = *t; *t = x;
    }
    rlx_status st = RLX_OK;
    size_t start = 0;
    for (size_t i = 0; i < w->n && !st; i++) {
        if (!uni_is_bert_punct(w->v[i])) continue;
        st = emit(s, w->v + start, i - start);
        if (!st) st = emit(s, w->v + i, 1);
        start = i + 1;
    }
    if (!st) st = emit(s, w->v + start, w->n - start);
    w->n = 0;
    return st;
}

static bool is_control(uint32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return false;
    return uni_gc_is_other(uni_category(cp));
}

rlx_status bert_pretokenize(const bert_norm *o, const char *text, size_t len, bert_word_fn fn, void *user) {
    if (!o || !fn || (!text && len)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "bert_pretokenize: NULL argument");
    pre_state s = {.o = o, .fn = fn, .user = user};
    rlx_status st = RLX_OK;
    const uint8_t *p = (const uint8_t *)text;
    for (size_t i = 0; i < len && !st;) {
        uint32_t cp;
        i += uni_utf8_decode(p + i, len - i, &cp);
        if (o->clean_text) {
            if (cp == 0 || cp == UNI_REPLACEMENT || is_control(cp)) continue;
            if (cp == '\t' || cp == '\n' || cp == '\r' || uni_gc_is_separator(uni_category(cp))) cp = ' ';
        }
        if (uni_is_white_space(cp)) {
            st = flush_word(&s);
        } else if (o->tokenize_cjk && uni_is_cjk_ideograph(cp)) {
            st = flush_word(&s);
            if (!st && !cp_reserve(&s.word, 1)) st = oom();
            if (!st) {
                s.word.v[s.word.n++] = cp;
                st = flush_word(&s);
            }
        } else if (!cp_reserve(&s.word, 1)) {
            st = oom();
        } else {
            s.word.v[s.word.n++] = cp;
        }
    }
    if (!st) st = flush_word(&s);
    free(s.word.v);
    free(s.tmp.v);
    free(s.bytes);
    return st;
}
