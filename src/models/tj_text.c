/*
 * tj_text.c — tokenizer.json's normalizers and pre-tokenizers, written from
 * the Hugging Face tokenizers documentation of each component.
 *
 * Normalizers run on code points (the text is decoded once; invalid UTF-8
 * reads as U+FFFD, one per bad byte) so that NFD's canonical ordering can
 * see the whole string. Pre-tokenizers run on a list of UTF-8 pieces: each
 * step splits every piece of the previous step. Splits follow tokenizers'
 * SplitDelimiterBehavior on the sequence of segments a pattern makes (each
 * match a segment of its own, the text between them the others):
 * removed drops the matches, isolated keeps every segment, contiguous joins
 * adjacent matches, merged_with_previous appends a match to the non-match
 * before it, merged_with_next prepends it to the non-match after it.
 */
#include "models/tj_internal.h"
#include "models/unicode.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ text kit */

bool tj_put(tj_buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->s, cap);
        if (!p) return false;
        b->s = p;
        b->cap = cap;
    }
    if (n) memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
    return true;
}

bool tj_put_cp(tj_buf *b, uint32_t cp) {
    char u[4];
    return tj_put(b, u, uni_utf8_encode(cp, u));
}

bool tj_pieces_add(tj_pieces *p, const char *s, size_t n) {
    if (n == 0) return true;
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 16;
        size_t *o = realloc(p->off, cap * sizeof *o);
        if (!o) return false;
        p->off = o;
        size_t *l = realloc(p->len, cap * sizeof *l);
        if (!l) return false;
        p->len = l;
        p->cap = cap;
    }
    size_t at = p->buf.n;
    if (!tj_put(&p->buf, s, n)) return false;
    p->off[p->n] = at;
    p->len[p->n] = n;
    p->n++;
    return true;
}

void tj_pieces_free(tj_pieces *p) {
    free(p->buf.s);
    free(p->off);
    free(p->len);
    memset(p, 0, sizeof *p);
}

static rlx_status oom(void) { return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "tokenizer.json: out of memory"); }

/* ---------------------------------------------------------- normalizers */

typedef tj_cps cpv;

bool tj_cps_push(tj_cps *c, uint32_t cp) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        uint32_t *v = realloc(c->v, cap * sizeof *v);
        if (!v) return false;
        c->v = v;
        c->cap = cap;
    }
    c->v[c->n++] = cp;
    return true;
}

static void cpv_decode(const char *s, size_t n, cpv *out, bool *ok) {
    out->n = 0;
    for (size_t i = 0; i < n && *ok;) {
        uint32_t cp;
        i += uni_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        *ok = tj_cps_push(out, cp);
    }
}

static bool is_control(uint32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return false;
    return uni_gc_is_other(uni_category(cp));
}

/* One normalizer from a to b (emptied first). */
static bool norm_step(const tj_norm *z, const cpv *a, cpv *b) {
    bool ok = true;
    b->n = 0;
    switch (z->kind) {
    case TJN_BERT:
    case TJN_LOWERCASE:
    case TJN_STRIP_ACCENTS:
    case TJN_NFD: {
        bool bert = z->kind == TJN_BERT;
        bool nfd = z->kind == TJN_NFD || z->kind == TJN_STRIP_ACCENTS || (bert && z->strip_accents);
        for (size_t i = 0; i < a->n && ok; i++) {
            uint32_t cp = a->v[i];
            if (bert && z->clean_text) {
                if (cp == 0 || cp == UNI_REPLACEMENT || is_control(cp)) continue;
                if (uni_is_white_space(cp)) cp = ' ';
            }
            bool cjk = bert && z->cjk && uni_is_cjk_ideograph(cp);
            if (cjk) ok = tj_cps_push(b, ' ');
            uint32_t d[UNI_NFD_MAX];
            size_t nd = 1;
            d[0] = cp;
            if (nfd) nd = uni_nfd_char(cp, d);
            for (size_t k = 0; k < nd && ok; k++) ok = tj_cps_push(b, d[k]);
            if (cjk && ok) ok = tj_cps_push(b, ' ');
        }
        if (!ok) return false;
        if (nfd) uni_canonical_order(b->v, b->n);
        bool strip = z->kind == TJN_STRIP_ACCENTS || (bert && z->strip_accents);
        if (strip) {
            size_t k = 0;
            for (size_t i = 0; i < b->n; i++)
                if (uni_category(b->v[i]) != UNI_Mn) b->v[k++] = b->v[i];
            b->n = k;
        }
        if (z->kind == TJN_LOWERCASE || (bert && z->lowercase)) {
            cpv t = *b;   /* lowercase may grow the text: rebuild it */
            cpv c = {0};
            for (size_t i = 0; i < t.n && ok; i++) {
                uint32_t lo[UNI_LOWER_MAX];
                size_t nl = uni_lower_full(t.v[i], lo);
                for (size_t k = 0; k < nl && ok; k++) ok = tj_cps_push(&c, lo[k]);
            }
            free(t.v);
            *b = c;
        }
        return ok;
    }
    case TJN_STRIP: {
        size_t s = 0, e = a->n;
        if (z->left) while (s < e && uni_is_white_space(a->v[s])) s++;
        if (z->right) while (e > s && uni_is_white_space(a->v[e - 1])) e--;
        for (size_t i = s; i < e && ok; i++) ok = tj_cps_push(b, a->v[i]);
        return ok;
    }
    case TJN_NFC:
    case TJN_NFKC:
    case TJN_NFKD: {
        bool compat = z->kind != TJN_NFC;
        for (size_t i = 0; i < a->n && ok; i++) {
            uint32_t d[UNI_NFKD_MAX];
            size_t nd = uni_decompose_char(a->v[i], compat, d);
            for (size_t k = 0; k < nd && ok; k++) ok = tj_cps_push(b, d[k]);
        }
        if (!ok) return false;
        uni_canonical_order(b->v, b->n);
        if (z->kind != TJN_NFKD) b->n = uni_compose(b->v, b->n);
        return true;
    }
    case TJN_PRECOMPILED:
        return tj_charsmap_apply(z->charsmap, a->v, a->n, b);
    case TJN_REPLACE:
    case TJN_PREPEND: {
        cpv pat = {0}, con = {0};
        if (z->regex) {
            cpv_decode(z->content, z->content_len, &con, &ok);
            ok = ok && tj_regex_replace(z->regex, a->v, a->n, con.v, con.n, b);
            free(con.v);
            return ok;
        }
        if (z->kind == TJN_REPLACE) cpv_decode(z->pattern, z->pattern_len, &pat, &ok);
        cpv_decode(z->content, z->content_len, &con, &ok);
        if (z->kind == TJN_PREPEND && a->n > 0)
            for (size_t k = 0; k < con.n && ok; k++) ok = tj_cps_push(b, con.v[k]);
        for (size_t i = 0; i < a->n && ok;) {
            if (pat.n && i + pat.n <= a->n && memcmp(a->v + i, pat.v, pat.n * sizeof *pat.v) == 0) {
                for (size_t k = 0; k < con.n && ok; k++) ok = tj_cps_push(b, con.v[k]);
                i += pat.n;
            } else {
                ok = tj_cps_push(b, a->v[i++]);
            }
        }
        free(pat.v);
        free(con.v);
        return ok;
    }
    }
    return false;
}

rlx_status tj_normalize(const tj_norm *norms, int n, const char *text, size_t len, tj_buf *out) {
    out->n = 0;
    if (!tj_put(out, "", 0)) return oom();
    if (n == 0) return tj_put(out, text, len) ? RLX_OK : oom();
    cpv a = {0}, b = {0};
    bool ok = true;
    cpv_decode(text, len, &a, &ok);
    for (int i = 0; i < n && ok; i++) {
        ok = norm_step(&norms[i], &a, &b);
        cpv t = a; a = b; b = t;
    }
    for (size_t i = 0; i < a.n && ok; i++) ok = tj_put_cp(out, a.v[i]);
    free(a.v);
    free(b.v);
    return ok ? RLX_OK : oom();
}

/* ------------------------------------------------------- split engine */

typedef struct seg {
    size_t s, e;
    bool   match;
} seg;

typedef struct segs {
    seg   *v;
    size_t n, cap;
} segs;

static bool seg_push(segs *g, size_t s, size_t e, bool match) {
    if (s == e) return true;
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 32;
        seg *v = realloc(g->v, cap * sizeof *v);
        if (!v) return false;
        g->v = v;
        g->cap = cap;
    }
    g->v[g->n++] = (seg){s, e, match};
    return true;
}

/* The segments (in g, ordered) of text s[0..n) become pieces per how. */
static bool apply_how(const char *s, segs *g, tj_split_how how, bool invert, tj_pieces *out) {
    if (invert) for (size_t i = 0; i < g->n; i++) g->v[i].match = !g->v[i].match;
    seg *v = g->v;
    size_t m = 0;
    switch (how) {
    case TJ_REMOVED:
        for (size_t i = 0; i < g->n; i++) if (!v[i].match) v[m++] = v[i];
        break;
    case TJ_ISOLATED:
        m = g->n;
        break;
    case TJ_CONTIGUOUS:
        for (size_t i = 0; i < g->n; i++) {
            if (m && v[i].match && v[m - 1].match && v[m - 1].e == v[i].s) v[m - 1].e = v[i].e;
            else v[m++] = v[i];
        }
        break;
    case TJ_MERGED_PREV: {
        bool prev_match = false;
        for (size_t i = 0; i < g->n; i++) {
            bool mt = v[i].match;
            if (mt && !prev_match && m) v[m - 1].e = v[i].e;
            else v[m++] = v[i];
            prev_match = mt;
        }
        break;
    }
    case TJ_MERGED_NEXT: {   /* the mirror image: walk from the end */
        bool next_match = false;
        size_t k = g->n;
        for (size_t i = g->n; i-- > 0;) {
            bool mt = v[i].match;
            if (mt && !next_match && k < g->n) v[k].s = v[i].s;
            else v[--k] = v[i];
            next_match = mt;
        }
        memmove(v, v + k, (g->n - k) * sizeof *v);
        m = g->n - k;
        break;
    }
    }
    for (size_t i = 0; i < m; i++)
        if (!tj_pieces_add(out, s + v[i].s, v[i].e - v[i].s)) return false;
    return true;
}

/* Every character for which pred holds is a match of its own. */
typedef bool (*cp_pred)(uint32_t cp, const tj_pre *p);

static bool split_chars(const char *s, size_t n, cp_pred pred, const tj_pre *p, tj_split_how how, bool invert,
                        segs *g, tj_pieces *out) {
    g->n = 0;
    size_t run = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = uni_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        if (pred(cp, p)) {
            if (!seg_push(g, run, i, false) || !seg_push(g, i, i + k, true)) return false;
            run = i + k;
        }
        i += k;
    }
    if (!seg_push(g, run, n, false)) return false;
    return apply_how(s, g, how, invert, out);
}

static bool is_ws(uint32_t cp, const tj_pre *p) { (void)p; return uni_is_white_space(cp); }
static bool is_punct(uint32_t cp, const tj_pre *p) { (void)p; return uni_is_bert_punct(cp); }
static bool is_delim(uint32_t cp, const tj_pre *p) { return cp == p->delim; }
static bool is_repl(uint32_t cp, const tj_pre *p) { return cp == p->replacement; }
static bool is_numeric(uint32_t cp, const tj_pre *p) {
    (void)p;
    uni_gc g = uni_category(cp);
    return g == UNI_Nd || g == UNI_Nl || g == UNI_No;
}

/* \w of the regex crate: alphabetic, marks, decimal digits, connector
 * punctuation and the joiners. */
static bool is_word(uint32_t cp) {
    uni_gc g = uni_category(cp);
    return (g >= UNI_Lu && g <= UNI_Lo) || (g >= UNI_Mn && g <= UNI_Me) || g == UNI_Nd || g == UNI_Nl ||
           g == UNI_Pc || cp == 0x200C || cp == 0x200D;
}

/* Whitespace: the matches of \w+|[^\w\s]+ (whitespace between them goes). */
static bool split_whitespace_re(const char *s, size_t n, tj_pieces *out) {
    int cls = -1;   /* 0 word, 1 other, -1 space */
    size_t start = 0;
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = uni_utf8_decode((const uint8_t *)s + i, n - i, &cp);
        int c = uni_is_white_space(cp) ? -1 : is_word(cp) ? 0 : 1;
        if (c != cls) {
            if (cls >= 0 && !tj_pieces_add(out, s + start, i - start)) return false;
            start = i;
            cls = c;
        }
        i += k;
    }
    return cls < 0 || tj_pieces_add(out, s + start, n - start);
}

typedef struct re_ctx {
    segs *g;
} re_ctx;

static rlx_status re_match(void *user, size_t start, size_t end) {
    re_ctx *c = user;
    return seg_push(c->g, start, end, true) ? RLX_OK : oom();
}

static bool split_string(const char *s, size_t n, const tj_pre *p, segs *g, tj_pieces *out) {
    g->n = 0;
    size_t run = 0, pl = p->pattern_len;
    for (size_t i = 0; pl && i + pl <= n;) {
        if (memcmp(s + i, p->pattern, pl) == 0) {
            if (!seg_push(g, run, i, false) || !seg_push(g, i, i + pl, true)) return false;
            i += pl;
            run = i;
        } else {
            i++;
        }
    }
    if (!seg_push(g, run, n, false)) return false;
    return apply_how(s, g, p->how, p->invert, out);
}

/* The GPT-2 byte-to-character map over each byte of s. */
static bool byte_map(const char *s, size_t n, tj_buf *b) {
    b->n = 0;
    if (!tj_put(b, "", 0)) return false;
    for (size_t i = 0; i < n; i++)
        if (!tj_put_cp(b, tok_byte_to_cp((uint8_t)s[i]))) return false;
    return true;
}

/* One pre-tokenizer on piece s[0..n) (index idx in its list) into out. */
static rlx_status pre_step(const tj_pre *p, const char *s, size_t n, size_t idx, segs *g, tj_buf *tmp, tj_pieces *out) {
    bool ok = true;
    switch (p->kind) {
    case TJP_BERT: {
        tj_pieces w = {0};
        ok = split_chars(s, n, is_ws, p, TJ_REMOVED, false, g, &w);
        for (size_t i = 0; i < w.n && ok; i++)
            ok = split_chars(w.buf.s + w.off[i], w.len[i], is_punct, p, TJ_ISOLATED, false, g, out);
        tj_pieces_free(&w);
        break;
    }
    case TJP_WHITESPACE: ok = split_whitespace_re(s, n, out); break;
    case TJP_WHITESPACE_SPLIT: ok = split_chars(s, n, is_ws, p, TJ_REMOVED, false, g, out); break;
    case TJP_PUNCT: ok = split_chars(s, n, is_punct, p, p->how, false, g, out); break;
    case TJP_CHAR_SPLIT: ok = split_chars(s, n, is_delim, p, TJ_REMOVED, false, g, out); break;
    case TJP_DIGITS:
        ok = split_chars(s, n, is_numeric, p, p->individual ? TJ_ISOLATED : TJ_CONTIGUOUS, false, g, out);
        break;
    case TJP_SPLIT_STRING: ok = split_string(s, n, p, g, out); break;
    case TJP_SPLIT_REGEX: {
        g->n = 0;
        re_ctx c = {g};
        rlx_status st = tok_pretokenize((tok_pre)p->regex, s, n, re_match, &c);
        if (st) return st;
        ok = apply_how(s, g, p->how, p->invert, out);
        break;
    }
    case TJP_BYTE_LEVEL: {
        tj_buf pre = {0};
        if (p->add_prefix_space && (n == 0 || s[0] != ' ')) ok = tj_put(&pre, " ", 1);
        ok = ok && tj_put(&pre, s, n);
        if (ok && p->use_regex) {
            g->n = 0;
            re_ctx c = {g};
            rlx_status st = tok_pretokenize(TOK_PRE_GPT2, pre.s, pre.n, re_match, &c);
            if (st) { free(pre.s); return st; }
            for (size_t i = 0; i < g->n && ok; i++)
                ok = byte_map(pre.s + g->v[i].s, g->v[i].e - g->v[i].s, tmp) && tj_pieces_add(out, tmp->s, tmp->n);
        } else if (ok) {
            ok = byte_map(pre.s, pre.n, tmp) && tj_pieces_add(out, tmp->s, tmp->n);
        }
        free(pre.s);
        break;
    }
    case TJP_METASPACE: {
        tmp->n = 0;
        ok = tj_put(tmp, "", 0);
        char r[4];
        size_t rn = uni_utf8_encode(p->replacement, r);
        /* Hugging Face tests the text after spaces became the replacement */
        bool starts = (n >= rn && memcmp(s, r, rn) == 0) || (n > 0 && s[0] == ' ');
        if (ok && n > 0 && !starts && (p->prepend == 1 || (p->prepend == 2 && idx == 0))) ok = tj_put(tmp, r, rn);
        for (size_t i = 0; i < n && ok; i++) ok = s[i] == ' ' ? tj_put(tmp, r, rn) : tj_put(tmp, s + i, 1);
        if (!ok) break;
        if (p->split) {
            tj_buf copy = {0};
            ok = tj_put(&copy, tmp->s, tmp->n) && split_chars(copy.s, copy.n, is_repl, p, TJ_MERGED_NEXT, false, g, out);
            free(copy.s);
        } else {
            ok = tj_pieces_add(out, tmp->s, tmp->n);
        }
        break;
    }
    }
    return ok ? RLX_OK : oom();
}

rlx_status tj_pretokenize(const tj_pre *pres, int n, const char *text, size_t len, tj_pieces *out) {
    out->n = 0;
    out->buf.n = 0;
    if (!tj_pieces_add(out, text, len)) return oom();
    segs g = {0};
    tj_buf tmp = {0};
    rlx_status st = RLX_OK;
    for (int k = 0; k < n && !st; k++) {
        tj_pieces next = {0};
        for (size_t i = 0; i < out->n && !st; i++)
            st = pre_step(&pres[k], out->buf.s + out->off[i], out->len[i], i, &g, &tmp, &next);
        tj_pieces_free(out);
        *out = next;
    }
    free(g.v);
    free(tmp.s);
    return st;
}
