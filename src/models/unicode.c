/*
 * unicode.c — lookups over the generated tables (bisection over sorted runs),
 * the Hangul syllable decomposition (arithmetic, so it needs no table), and
 * UTF-8 decoding that never lets an invalid sequence through.
 */
#include "models/unicode.h"

/* Index of the last run whose first code point is <= cp (runs[0] starts at 0). */
static size_t run_index(const uint32_t *runs, size_t n, unsigned shift, uint32_t cp) {
    size_t lo = 0, hi = n;   /* invariant: runs[lo] <= cp < runs[hi] */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((runs[mid] >> shift) <= cp) lo = mid;
        else hi = mid;
    }
    return lo;
}

uni_gc uni_category(uint32_t cp) {
    if (cp > 0x10FFFF) return UNI_Cn;
    return (uni_gc)(uni_gc_runs[run_index(uni_gc_runs, uni_gc_runs_len, 5, cp)] & 31u);
}

uint8_t uni_ccc(uint32_t cp) {
    if (cp < 0x300 || cp > 0x10FFFF) return 0;
    return (uint8_t)(uni_ccc_runs[run_index(uni_ccc_runs, uni_ccc_runs_len, 8, cp)] & 255u);
}

bool uni_is_white_space(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= '\t' && cp <= '\r');
    if (cp == 0x85) return true;
    return uni_gc_is_separator(uni_category(cp));
}

bool uni_is_bert_punct(uint32_t cp) {
    if (cp < 0x80)
        return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) ||
               (cp >= 123 && cp <= 126);
    return uni_gc_is_punct(uni_category(cp));
}

bool uni_is_cjk_ideograph(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
           (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

uint32_t uni_lower_simple(uint32_t cp) {
    if (cp < 0x80) return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
    size_t lo = 0, hi = uni_lower_runs_len;   /* first run with last >= cp */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (uni_lower_runs[mid].last < cp) lo = mid + 1;
        else hi = mid;
    }
    if (lo == uni_lower_runs_len) return cp;
    const uni_lower_run *r = &uni_lower_runs[lo];
    if (cp < r->first || (cp - r->first) % r->stride) return cp;
    return (uint32_t)((int64_t)cp + r->delta);
}

size_t uni_lower_full(uint32_t cp, uint32_t *out) {
    if (cp == 0x130) {   /* LATIN CAPITAL LETTER I WITH DOT ABOVE: SpecialCasing's one unconditional expansion */
        out[0] = 'i';
        out[1] = 0x307;
        return 2;
    }
    out[0] = uni_lower_simple(cp);
    return 1;
}

bool uni_nfd_step(uint32_t cp, uint32_t *d0, uint32_t *d1) {
    size_t lo = 0, hi = uni_nfd_pairs_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t key = (uint32_t)(uni_nfd_pairs[mid] >> 42);
        if (key == cp) {
            *d0 = (uint32_t)(uni_nfd_pairs[mid] >> 21) & 0x1FFFFFu;
            *d1 = (uint32_t)uni_nfd_pairs[mid] & 0x1FFFFFu;
            return true;
        }
        if (key < cp) lo = mid + 1;
        else hi = mid;
    }
    return false;
}


static size_t nfd_expand(uint32_t cp, uint32_t *out, size_t n) {
    if (cp >= HANGUL_S && cp < HANGUL_S + HANGUL_COUNT) {
        uint32_t s = cp - HANGUL_S, t = s % HANGUL_T_COUNT;
        out[n++] = HANGUL_L + s / (HANGUL_V_COUNT * HANGUL_T_COUNT);
        out[n++] = HANGUL_V + (s % (HANGUL_V_COUNT * HANGUL_T_COUNT)) / HANGUL_T_COUNT;
        if (t) out[n++] = HANGUL_T + t;
        return n;
    }
    uint32_t d0, d1;
    if (cp < 0xC0 || !uni_nfd_step(cp, &d0, &d1)) {
        out[n++] = cp;
        return n;
    }
    /* The generator checks that no expansion exceeds UNI_NFD_MAX. */
    n = nfd_expand(d0, out, n);
    return d1 ? nfd_expand(d1, out, n) : n;
}

size_t uni_nfd_char(uint32_t cp, uint32_t *out) {
    size_t n = nfd_expand(cp, out, 0);
    uni_canonical_order(out, n);
    return n;
}

void uni_canonical_order(uint32_t *cps, size_t n) {
    for (size_t i = 1; i < n; i++) {   /* insertion sort within runs of non-starters: stable, runs are short */
        uint32_t c = cps[i];
        uint8_t k = uni_ccc(c);
        if (k == 0) continue;
        size_t j = i;
        while (j > 0) {
            uint8_t kp = uni_ccc(cps[j - 1]);
            if (kp == 0 || kp <= k) break;
            cps[j] = cps[j - 1];
            j--;
        }
        cps[j] = c;
    }
}

size_t uni_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp) {
    uint8_t b = s[0];
    if (b < 0x80) { *cp = b; return 1; }
    size_t len;
    uint32_t v, min;
    if ((b & 0xE0) == 0xC0)      { len = 2; v = b & 0x1Fu; min = 0x80; }
    else if ((b & 0xF0) == 0xE0) { len = 3; v = b & 0x0Fu; min = 0x800; }
    else if ((b & 0xF8) == 0xF0) { len = 4; v = b & 0x07u; min = 0x10000; }
    else { *cp = UNI_REPLACEMENT; return 1; }
    if (len > n) { *cp = UNI_REPLACEMENT; return 1; }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) { *cp = UNI_REPLACEMENT; return 1; }
        v = v << 6 | (s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) { *cp = UNI_REPLACEMENT; return 1; }
    *cp = v;
    return len;
}

size_t uni_utf8_encode(uint32_t cp, char *out) {
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
