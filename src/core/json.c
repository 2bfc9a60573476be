/*
 * json.c — the strict JSON parser behind json.h.
 *
 * Two passes over the text with one recursive descent. The first validates
 * everything (grammar, UTF-8, escapes, number syntax and range, depth) and
 * counts what the DOM needs: array items, object members, unescaped string
 * bytes, and each container's child count in document order. Then one block
 * is allocated for the whole DOM and the second pass fills it in place, each
 * container taking its counted slots, so nothing is copied or reallocated.
 * Duplicate keys are found in the second pass, once keys are stored.
 *
 * Bounds: recursion is limited by max_depth; every loop consumes input; the
 * DOM is at most a fixed multiple of the input size.
 */
#include "core/json.h"
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct json_doc {
    json_value root;       /* the rest of the DOM follows in the same block */
};

typedef struct jp {
    const uint8_t *s;
    size_t len, pos;
    const char *name;
    uint64_t base;
    int max_depth, depth;
    bool build;            /* second pass: fill the DOM */
    /* first pass: counts */
    size_t n_items, n_members, n_str, max_obj;
    size_t *counts;        /* children of each container, in document order */
    size_t n_counts, cap_counts;
    /* second pass: the DOM block, filled front to back */
    size_t ci;             /* next entry of counts */
    json_value *items;
    json_member *members;
    char *strs;
    const json_member **scratch;   /* duplicate-key check, max_obj entries */
} jp;

/* ------------------------------------------------------------- messages */

void json_printable(char *dst, size_t cap, const char *s, size_t len) {
    if (cap == 0) return;
    bool cut = len > cap - 1;
    size_t keep = cut ? (cap > 4 ? cap - 4 : 0) : len;
    while (cut && keep > 0 && ((unsigned char)s[keep] & 0xc0) == 0x80) keep--;   /* whole characters */
    size_t n = 0;
    for (; n < keep; n++) {
        unsigned char c = (unsigned char)s[n];
        dst[n] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    for (int i = 0; cut && i < 3 && n + 1 < cap; i++) dst[n++] = '.';
    dst[n] = 0;
}

/* What is at byte at, for "got ...". */
static void describe(const jp *p, size_t at, char *buf, size_t cap) {
    if (at >= p->len) snprintf(buf, cap, "the end of the text");
    else if (p->s[at] >= 0x21 && p->s[at] < 0x7f) snprintf(buf, cap, "'%c'", p->s[at]);
    else if (p->s[at] == ' ' || p->s[at] == '\t' || p->s[at] == '\n' || p->s[at] == '\r') snprintf(buf, cap, "whitespace");
    else snprintf(buf, cap, "byte 0x%02x", p->s[at]);
}

static rlx_status jerr_at(const jp *p, size_t at, const char *fmt, ...) RLX_PRINTF(3, 4);
static rlx_status jerr_at(const jp *p, size_t at, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rlx_fail(RLX_STATUS_FORMAT, "%s: byte %llu: %s", p->name, (unsigned long long)(p->base + at), msg);
}

/* "expected X, got Y" at the current position. */
static rlx_status expected(const jp *p, const char *what) {
    char got[32];
    describe(p, p->pos, got, sizeof got);
    return jerr_at(p, p->pos, "expected %s, got %s", what, got);
}

/* ----------------------------------------------------------------- UTF-8 */

/* Length of the valid UTF-8 sequence at s (n bytes available), 0 if none. */
static size_t utf8_seq(const uint8_t *s, size_t n) {
    uint8_t c = s[0];
    if (c < 0x80) return 1;
    size_t k;
    uint8_t lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) k = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        k = 3;
        if (c == 0xe0) lo = 0xa0;          /* no overlong forms */
        if (c == 0xed) hi = 0x9f;          /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        k = 4;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;          /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (n < k || s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < k; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return k;
}

bool json_utf8_valid(const char *s, size_t len, size_t *bad_at) {
    const uint8_t *u = (const uint8_t *)s;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_seq(u + i, len - i);
        if (!k) {
            if (bad_at) *bad_at = i;
            return false;
        }
        i += k;
    }
    return true;
}

static size_t utf8_put(char *dst, uint32_t cp) {
    if (cp < 0x80) { dst[0] = (char)cp; return 1; }
    if (cp < 0x800) { dst[0] = (char)(0xc0 | cp >> 6); dst[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
    if (cp < 0x10000) {
        dst[0] = (char)(0xe0 | cp >> 12);
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        dst[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    dst[0] = (char)(0xf0 | cp >> 18);
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    dst[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* --------------------------------------------------------------- lexing */

static void skip_ws(jp *p) {
    while (p->pos < p->len) {
        uint8_t c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Four hex digits at pos (after "\u"). */
static rlx_status hex4(jp *p, uint32_t *out) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = p->pos < p->len ? hexval(p->s[p->pos]) : -1;
        if (h < 0) return expected(p, "4 hex digits after \\u");
        v = v << 4 | (uint32_t)h;
        p->pos++;
    }
    *out = v;
    return RLX_OK;
}

/* One escape after the backslash at pos-1: the code point in *cp. */
static rlx_status escape(jp *p, uint32_t *cp) {
    size_t at = p->pos - 1;
    if (p->pos >= p->len) return expected(p, "an escape character after '\\'");
    uint8_t c = p->s[p->pos++];
    switch (c) {
    case '"': *cp = '"'; return RLX_OK;
    case '\\': *cp = '\\'; return RLX_OK;
    case '/': *cp = '/'; return RLX_OK;
    case 'b': *cp = '\b'; return RLX_OK;
    case 'f': *cp = '\f'; return RLX_OK;
    case 'n': *cp = '\n'; return RLX_OK;
    case 'r': *cp = '\r'; return RLX_OK;
    case 't': *cp = '\t'; return RLX_OK;
    case 'u': break;
    default:
        p->pos--;
        return expected(p, "one of \" \\ / b f n r t u after '\\'");
    }
    uint32_t u;
    rlx_status st = hex4(p, &u);
    if (st) return st;
    if (u >= 0xdc00 && u <= 0xdfff) return jerr_at(p, at, "lone low surrogate \\u%04X (no high surrogate before it)", u);
    if (u >= 0xd800 && u <= 0xdbff) {
        uint32_t lo = 0;
        if (p->pos + 1 < p->len && p->s[p->pos] == '\\' && p->s[p->pos + 1] == 'u') {
            p->pos += 2;
            if ((st = hex4(p, &lo))) return st;
        }
        if (lo < 0xdc00 || lo > 0xdfff)
            return jerr_at(p, at, "high surrogate \\u%04X is not followed by a low surrogate escape \\uDC00..\\uDFFF", u);
        u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
    }
    *cp = u;
    return RLX_OK;
}

/* A string at pos (the opening quote). Counts its unescaped bytes in the
 * first pass; stores it NUL-terminated in the second. */
static rlx_status string(jp *p, const char **out, size_t *out_len) {
    size_t open = p->pos++;
    char *dst = p->build ? p->strs : NULL;
    size_t n = 0;
    for (;;) {
        if (p->pos >= p->len) return jerr_at(p, open, "unterminated string (no closing quote before the end of the text)");
        uint8_t c = p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c == '\\') {
            p->pos++;
            uint32_t cp = 0;
            rlx_status st = escape(p, &cp);
            if (st) return st;
            char tmp[4];
            size_t k = utf8_put(tmp, cp);
            if (dst) memcpy(dst + n, tmp, k);
            n += k;
            continue;
        }
        if (c < 0x20) return jerr_at(p, p->pos, "control character 0x%02x inside a string (it must be escaped)", c);
        size_t k = utf8_seq(p->s + p->pos, p->len - p->pos);
        if (!k) return jerr_at(p, p->pos, "invalid UTF-8 (byte 0x%02x) inside a string", c);
        if (dst) memcpy(dst + n, p->s + p->pos, k);
        n += k;
        p->pos += k;
    }
    if (dst) {
        dst[n] = 0;
        p->strs += n + 1;
        *out = dst;
    } else {
        p->n_str += n + 1;
        *out = NULL;
    }
    *out_len = n;
    return RLX_OK;
}

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;
static void make_c_locale(void) { c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* strtod in the C locale whatever the process's locale is, so that '.' is
 * the decimal point for an application that called setlocale. */
static double strtod_c(const char *s) {
    pthread_once(&c_locale_once, make_c_locale);
    return c_locale ? strtod_l(s, NULL, c_locale) : strtod(s, NULL);
}

static rlx_status number(jp *p, json_value *v) {
    size_t start = p->pos;
    bool neg = false, integer = true;
    if (p->s[p->pos] == '-') { neg = true; p->pos++; }
    if (p->pos >= p->len || !is_digit(p->s[p->pos])) return expected(p, "a digit");
    if (p->s[p->pos] == '0') {
        p->pos++;
        if (p->pos < p->len && is_digit(p->s[p->pos])) return jerr_at(p, p->pos - 1, "a number may not start with a leading zero");
    } else {
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        integer = false;
        p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) return expected(p, "a digit after the decimal point");
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        integer = false;
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (p->pos >= p->len || !is_digit(p->s[p->pos])) return expected(p, "a digit in the exponent");
        while (p->pos < p->len && is_digit(p->s[p->pos])) p->pos++;
    }
    size_t n = p->pos - start;
    if (n > JSON_MAX_NUMBER_CHARS)
        return jerr_at(p, start, "number of %zu characters is longer than the %d accepted", n, JSON_MAX_NUMBER_CHARS);
    char buf[JSON_MAX_NUMBER_CHARS + 1];
    memcpy(buf, p->s + start, n);
    buf[n] = 0;
    double d = strtod_c(buf);
    if (isinf(d)) return jerr_at(p, start, "number %s is out of the range of a double", buf);
    bool is_int = false;
    int64_t iv = 0;
    if (integer) {
        /* exact, from the digits: a double cannot hold every int64 */
        uint64_t mag = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
        is_int = true;
        for (size_t i = neg ? 1 : 0; i < n && is_int; i++) {
            uint64_t dig = (uint64_t)(buf[i] - '0');
            if (mag > (lim - dig) / 10) is_int = false;
            else mag = mag * 10 + dig;
        }
        if (is_int) iv = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag) : (int64_t)mag;
    } else if (fabs(d) < 9007199254740992.0 && d == trunc(d)) {
        is_int = true;
        iv = (int64_t)d;
    }
    if (v) {
        v->type = JSON_NUMBER;
        v->u.num.d = d;
        v->u.num.i = iv;
        v->u.num.is_int = is_int;
    }
    return RLX_OK;
}

static rlx_status literal(jp *p, const char *word, size_t n) {
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return expected(p, "a value");
    p->pos += n;
    return RLX_OK;
}

/* ----------------------------------------------------------- structure */

static rlx_status value(jp *p, json_value *v);

/* First pass: a new entry of counts for the container just opened. */
static rlx_status count_slot(jp *p, size_t *slot) {
    if (p->n_counts == p->cap_counts) {
        size_t nc = p->cap_counts ? p->cap_counts * 2 : 64;
        size_t *nb = realloc(p->counts, nc * sizeof *nb);
        if (!nb) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", p->name);
        p->counts = nb;
        p->cap_counts = nc;
    }
    *slot = p->n_counts++;
    return RLX_OK;
}

static int cmp_member_ptr(const void *a, const void *b) {
    const json_member *x = *(const json_member *const *)a, *y = *(const json_member *const *)b;
    size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
    int c = memcmp(x->key, y->key, n);
    if (c) return c;
    if (x->key_len != y->key_len) return x->key_len < y->key_len ? -1 : 1;
    return x->key_offset < y->key_offset ? -1 : x->key_offset > y->key_offset;
}

static bool same_key(const json_member *a, const json_member *b) {
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static rlx_status duplicate(const jp *p, const json_member *first, const json_member *second) {
    char k[80];
    json_printable(k, sizeof k, second->key, second->key_len);
    return jerr_at(p, (size_t)(second->key_offset - p->base), "duplicate key \"%s\" (first at byte %llu)", k,
                   (unsigned long long)first->key_offset);
}

/* Second pass: no two members of an object share a key. Small objects are
 * compared pairwise; larger ones sorted (by key, then position). */
static rlx_status check_duplicates(jp *p, const json_member *m, size_t n) {
    if (n <= 16) {
        for (size_t i = 1; i < n; i++)
            for (size_t j = 0; j < i; j++)
                if (same_key(&m[i], &m[j])) return duplicate(p, &m[j], &m[i]);
        return RLX_OK;
    }
    for (size_t i = 0; i < n; i++) p->scratch[i] = &m[i];
    qsort(p->scratch, n, sizeof *p->scratch, cmp_member_ptr);
    for (size_t i = 1; i < n; i++)
        if (same_key(p->scratch[i - 1], p->scratch[i])) return duplicate(p, p->scratch[i - 1], p->scratch[i]);
    return RLX_OK;
}

/* Steps into the container at pos: the depth bound, then its child count
 * (second pass, into *n) or a new counts entry (first pass, into *slot). */
static rlx_status open_container(jp *p, size_t *n, size_t *slot) {
    if (++p->depth > p->max_depth) return jerr_at(p, p->pos, "nesting deeper than %d levels", p->max_depth);
    p->pos++;
    skip_ws(p);
    if (p->build) {
        *n = p->counts[p->ci++];
        return RLX_OK;
    }
    return count_slot(p, slot);
}

/* Steps out of a container that had k children (first pass: records k). */
static void close_container(jp *p, size_t slot, size_t k) {
    if (!p->build) p->counts[slot] = k;
    p->depth--;
}

static rlx_status array(jp *p, json_value *v) {
    rlx_status st;
    size_t slot = 0, n = 0;
    json_value *items = NULL;
    if ((st = open_container(p, &n, &slot))) return st;
    if (p->build) {
        items = p->items;
        p->items += n;
        v->type = JSON_ARRAY;
        v->u.arr.items = items;
        v->u.arr.n = n;
    }
    size_t k = 0;
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
    } else {
        for (;;) {
            if ((st = value(p, items ? &items[k] : NULL))) return st;
            k++;
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') { p->pos++; continue; }
            if (p->pos < p->len && p->s[p->pos] == ']') { p->pos++; break; }
            return expected(p, "',' or ']' after an array element");
        }
    }
    if (!p->build) p->n_items += k;
    close_container(p, slot, k);
    return RLX_OK;
}

static rlx_status object(jp *p, json_value *v) {
    rlx_status st;
    size_t slot = 0, n = 0;
    json_member *m = NULL;
    if ((st = open_container(p, &n, &slot))) return st;
    if (p->build) {
        m = p->members;
        p->members += n;
        v->type = JSON_OBJECT;
        v->u.obj.members = m;
        v->u.obj.n = n;
    }
    size_t k = 0;
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
    } else {
        for (;;) {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return expected(p, k ? "a string key after ','" : "a string key or '}'");
            const char *key;
            size_t key_len, key_at = p->pos;
            if ((st = string(p, &key, &key_len))) return st;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') return expected(p, "':' after an object key");
            p->pos++;
            if (m) {
                m[k].key = key;
                m[k].key_len = key_len;
                m[k].key_offset = p->base + key_at;
            }
            if ((st = value(p, m ? &m[k].value : NULL))) return st;
            k++;
            skip_ws(p);
            if (p->pos < p->len && p->s[p->pos] == ',') { p->pos++; skip_ws(p); continue; }
            if (p->pos < p->len && p->s[p->pos] == '}') { p->pos++; break; }
            return expected(p, "',' or '}' after an object member");
        }
    }
    if (p->build) {
        if ((st = check_duplicates(p, m, n))) return st;
    } else {
        p->n_members += k;
        if (k > p->max_obj) p->max_obj = k;
    }
    close_container(p, slot, k);
    return RLX_OK;
}

/* A value at pos (after whitespace); v is NULL in the first pass. */
static rlx_status value(jp *p, json_value *v) {
    skip_ws(p);
    if (v) v->offset = p->base + p->pos;
    if (p->pos >= p->len) return expected(p, "a value");
    rlx_status st;
    switch (p->s[p->pos]) {
    case '{': return object(p, v);
    case '[': return array(p, v);
    case '"': {
        const char *s;
        size_t n;
        if ((st = string(p, &s, &n))) return st;
        if (v) {
            v->type = JSON_STRING;
            v->u.str.s = s;
            v->u.str.len = n;
        }
        return RLX_OK;
    }
    case 't': case 'f': {
        bool t = p->s[p->pos] == 't';
        if ((st = t ? literal(p, "true", 4) : literal(p, "false", 5))) return st;
        if (v) {
            v->type = JSON_BOOL;
            v->u.b = t;
        }
        return RLX_OK;
    }
    case 'n':
        if ((st = literal(p, "null", 4))) return st;
        if (v) v->type = JSON_NULL;
        return RLX_OK;
    default:
        if (p->s[p->pos] == '-' || is_digit(p->s[p->pos])) return number(p, v);
        return expected(p, "a value");
    }
}

static rlx_status document(jp *p, json_value *root) {
    p->pos = 0;
    p->depth = 0;
    rlx_status st = value(p, root);
    if (st) return st;
    skip_ws(p);
    if (p->pos < p->len) return expected(p, "the end of the text after the top-level value");
    return RLX_OK;
}

void json_options_init(json_options *o) {
    o->max_depth = JSON_DEFAULT_MAX_DEPTH;
    o->name = "json";
    o->base_offset = 0;
}

/* Bytes of the DOM block: the doc, items, members, strings. */
static bool dom_size(const jp *p, size_t *out) {
    uint64_t a, b, total = sizeof(json_doc);
    if (!rlx_mul_overflow_u64(p->n_items, sizeof(json_value), &a)) return false;
    if (!rlx_mul_overflow_u64(p->n_members, sizeof(json_member), &b)) return false;
    total += a;
    if (total < a || total + b < total) return false;
    total += b;
    if (total + p->n_str < total || total + p->n_str > SIZE_MAX) return false;
    *out = (size_t)(total + p->n_str);
    return true;
}

rlx_status json_parse(const char *text, size_t len, const json_options *opt, json_doc **out) {
    if (!out || (!text && len)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "json_parse: NULL argument");
    *out = NULL;
    json_options dflt;
    if (!opt) {
        json_options_init(&dflt);
        opt = &dflt;
    }
    jp p = {.s = (const uint8_t *)(text ? text : ""), .len = len, .name = opt->name ? opt->name : "json",
            .base = opt->base_offset, .max_depth = opt->max_depth > 0 ? opt->max_depth : JSON_DEFAULT_MAX_DEPTH};
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        return jerr_at(&p, 0, "a UTF-8 byte-order mark is not accepted before the value");
    rlx_status st = document(&p, NULL);
    size_t bytes = 0;
    if (!st && !dom_size(&p, &bytes)) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: too large to hold", p.name);
    json_doc *d = NULL;
    if (!st) {
        d = malloc(bytes);
        if (p.max_obj > 16) p.scratch = malloc(p.max_obj * sizeof *p.scratch);
        if (!d || (p.max_obj > 16 && !p.scratch))
            st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory for %zu bytes of DOM", p.name, bytes);
    }
    if (!st) {
        p.build = true;
        p.items = (json_value *)(d + 1);
        p.members = (json_member *)(p.items + p.n_items);
        p.strs = (char *)(p.members + p.n_members);
        st = document(&p, &d->root);
    }
    free(p.counts);
    free((void *)p.scratch);
    if (st) {
        free(d);
        return st;
    }
    *out = d;
    return RLX_OK;
}

void json_free(json_doc *d) { free(d); }

const json_value *json_root(const json_doc *d) { return d ? &d->root : NULL; }

/* --------------------------------------------------------------- lookups */

const char *json_type_name(json_type t) {
    static const char *names[] = {"null", "bool", "number", "string", "array", "object"};
    return (unsigned)t < RLX_ARRAY_LEN(names) ? names[t] : "?";
}

const json_value *json_get(const json_value *obj, const char *key) {
    if (!obj || obj->type != JSON_OBJECT || !key) return NULL;
    size_t n = strlen(key);
    for (size_t i = 0; i < obj->u.obj.n; i++) {
        const json_member *m = &obj->u.obj.members[i];
        if (m->key_len == n && memcmp(m->key, key, n) == 0) return &m->value;
    }
    return NULL;
}

const json_value *json_at(const json_value *arr, size_t i) {
    if (!arr || arr->type != JSON_ARRAY || i >= arr->u.arr.n) return NULL;
    return &arr->u.arr.items[i];
}

const json_member *json_member_at(const json_value *obj, size_t i) {
    if (!obj || obj->type != JSON_OBJECT || i >= obj->u.obj.n) return NULL;
    return &obj->u.obj.members[i];
}

size_t json_len(const json_value *v) {
    if (!v) return 0;
    if (v->type == JSON_ARRAY) return v->u.arr.n;
    if (v->type == JSON_OBJECT) return v->u.obj.n;
    if (v->type == JSON_STRING) return v->u.str.len;
    return 0;
}

static rlx_status wrong_type(const json_value *v, const char *what, const char *want) {
    if (!v) return rlx_fail(RLX_STATUS_FORMAT, "%s: missing, expected %s", what, want);
    return rlx_fail(RLX_STATUS_FORMAT, "%s (byte %llu): expected %s, got %s", what, (unsigned long long)v->offset, want,
                    json_type_name(v->type));
}

rlx_status json_as_type(const json_value *v, const char *what, json_type want) {
    if (!v || v->type != want) return wrong_type(v, what, json_type_name(want));
    return RLX_OK;
}

rlx_status json_as_i64(const json_value *v, const char *what, int64_t *out) {
    if (!v || v->type != JSON_NUMBER) return wrong_type(v, what, "an integer");
    if (!v->u.num.is_int)
        return rlx_fail(RLX_STATUS_FORMAT, "%s (byte %llu): expected an integer, got %.17g%s", what,
                        (unsigned long long)v->offset, v->u.num.d,
                        v->u.num.d == trunc(v->u.num.d) ? " (outside the int64 range)" : "");
    *out = v->u.num.i;
    return RLX_OK;
}

rlx_status json_as_f64(const json_value *v, const char *what, double *out) {
    if (!v || v->type != JSON_NUMBER) return wrong_type(v, what, "a number");
    *out = v->u.num.d;
    return RLX_OK;
}

rlx_status json_as_bool(const json_value *v, const char *what, bool *out) {
    if (!v || v->type != JSON_BOOL) return wrong_type(v, what, "true or false");
    *out = v->u.b;
    return RLX_OK;
}

rlx_status json_as_str(const json_value *v, const char *what, const char **out, size_t *len) {
    if (!v || v->type != JSON_STRING) return wrong_type(v, what, "a string");
    *out = v->u.str.s;
    if (len) *len = v->u.str.len;
    return RLX_OK;
}

/* obj[key], or NOT_FOUND; what gets "key 'K'" for the typed reads' messages. */
static rlx_status member(const json_value *obj, const char *key, const json_value **v, char *what, size_t cap) {
    char k[80];
    json_printable(k, sizeof k, key ? key : "", key ? strlen(key) : 0);
    snprintf(what, cap, "json key '%s'", k);
    if (!obj || obj->type != JSON_OBJECT)
        return rlx_fail(RLX_STATUS_NOT_FOUND, "json: no key '%s': the value is %s, not an object", k,
                        obj ? json_type_name(obj->type) : "missing");
    if (!(*v = json_get(obj, key)))
        return rlx_fail(RLX_STATUS_NOT_FOUND, "json: no key '%s' in the object at byte %llu", k,
                        (unsigned long long)obj->offset);
    return RLX_OK;
}

rlx_status json_get_i64(const json_value *obj, const char *key, int64_t *out) {
    const json_value *v;
    char what[100];
    rlx_status st = member(obj, key, &v, what, sizeof what);
    return st ? st : json_as_i64(v, what, out);
}

rlx_status json_get_f64(const json_value *obj, const char *key, double *out) {
    const json_value *v;
    char what[100];
    rlx_status st = member(obj, key, &v, what, sizeof what);
    return st ? st : json_as_f64(v, what, out);
}

rlx_status json_get_bool(const json_value *obj, const char *key, bool *out) {
    const json_value *v;
    char what[100];
    rlx_status st = member(obj, key, &v, what, sizeof what);
    return st ? st : json_as_bool(v, what, out);
}

rlx_status json_get_str(const json_value *obj, const char *key, const char **out, size_t *len) {
    const json_value *v;
    char what[100];
    rlx_status st = member(obj, key, &v, what, sizeof what);
    return st ? st : json_as_str(v, what, out, len);
}

rlx_status json_get_typed(const json_value *obj, const char *key, json_type want, const json_value **out) {
    const json_value *v;
    char what[100];
    rlx_status st = member(obj, key, &v, what, sizeof what);
    if (!st) st = json_as_type(v, what, want);
    if (!st) *out = v;
    return st;
}

/* ---------------------------------------------------------------- output */

static const char *short_escape(unsigned char c) {
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\b': return "\\b";
    case '\f': return "\\f";
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: return NULL;
    }
}

size_t json_quoted_len(const char *s, size_t len) {
    size_t n = 2;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        n += short_escape(c) ? 2 : c < 0x20 ? 6 : 1;
    }
    return n;
}

char *json_quote(char *dst, const char *s, size_t len) {
    *dst++ = '"';
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *e = short_escape(c);
        if (e) {
            memcpy(dst, e, 2);
            dst += 2;
        } else if (c < 0x20) {
            static const char hex[] = "0123456789abcdef";
            memcpy(dst, "\\u00", 4);
            dst[4] = hex[c >> 4];
            dst[5] = hex[c & 15];
            dst += 6;
        } else {
            *dst++ = (char)c;
        }
    }
    *dst++ = '"';
    return dst;
}
