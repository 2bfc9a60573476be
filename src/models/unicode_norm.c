/*
 * unicode_norm.c — the normalization forms beyond NFD: compatibility
 * decomposition (NFKD) and canonical composition (NFC, NFKC), over the
 * generated one-step tables (unicode_tables.c). A form is built in three
 * passes over a whole string, as Unicode's definition has it: decompose
 * every code point fully, put each run of marks in canonical order, then
 * compose. Hangul syllables are decomposed and composed by arithmetic
 * (Unicode chapter 3.12), so they need no table.
 */
#include "models/unicode.h"


/* uni_nfkd_pool[start .. start + count) for cp's compatibility mapping. */
static bool compat_step(uint32_t cp, uint32_t *start, uint32_t *count) {
    size_t lo = 0, hi = uni_nfkd_map_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t key = (uint32_t)(uni_nfkd_map[mid] >> 32);
        if (key == cp) {
            *start = (uint32_t)(uni_nfkd_map[mid] >> 8) & 0xFFFFFFu;
            *count = (uint32_t)uni_nfkd_map[mid] & 0xFFu;
            return true;
        }
        if (key < cp) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

/* Appends cp's full decomposition to out[n..]; the generator checks that no
 * code point expands past UNI_NFKD_MAX, and n never passes it. */
static size_t expand(uint32_t cp, bool compat, uint32_t *out, size_t n) {
    if (n >= UNI_NFKD_MAX) return n;   /* unreachable with the generated tables */
    if (cp >= HANGUL_S && cp < HANGUL_S + HANGUL_COUNT) {
        uint32_t s = cp - HANGUL_S, t = s % HANGUL_T_COUNT;
        out[n++] = HANGUL_L + s / (HANGUL_V_COUNT * HANGUL_T_COUNT);
        out[n++] = HANGUL_V + (s % (HANGUL_V_COUNT * HANGUL_T_COUNT)) / HANGUL_T_COUNT;
        if (t) out[n++] = HANGUL_T + t;
        return n;
    }
    uint32_t a, b;
    if (cp >= 0xA0 && uni_nfd_step(cp, &a, &b)) {
        n = expand(a, compat, out, n);
        return b ? expand(b, compat, out, n) : n;
    }
    if (compat && cp >= 0xA0 && compat_step(cp, &a, &b)) {
        for (uint32_t k = 0; k < b; k++) n = expand(uni_nfkd_pool[a + k], compat, out, n);
        return n;
    }
    out[n++] = cp;
    return n;
}

size_t uni_decompose_char(uint32_t cp, bool compat, uint32_t *out) {
    return expand(cp, compat, out, 0);
}

/* The primary composite of (a, b), or 0. */
static uint32_t compose_pair(uint32_t a, uint32_t b) {
    if (a >= HANGUL_L && a < HANGUL_L + HANGUL_L_COUNT && b >= HANGUL_V && b < HANGUL_V + HANGUL_V_COUNT)
        return HANGUL_S + ((a - HANGUL_L) * HANGUL_V_COUNT + (b - HANGUL_V)) * HANGUL_T_COUNT;
    if (a >= HANGUL_S && a < HANGUL_S + HANGUL_COUNT && (a - HANGUL_S) % HANGUL_T_COUNT == 0 && b > HANGUL_T &&
        b < HANGUL_T + HANGUL_T_COUNT)
        return a + (b - HANGUL_T);
    uint64_t key = (uint64_t)a << 21 | b;
    size_t lo = 0, hi = uni_comp_pairs_len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint64_t k = uni_comp_pairs[mid] >> 21;
        if (k == key) return (uint32_t)uni_comp_pairs[mid] & 0x1FFFFFu;
        if (k < key) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

size_t uni_compose(uint32_t *cps, size_t n) {
    if (n == 0) return 0;
    size_t out = 1, starter = uni_ccc(cps[0]) == 0 ? 0 : SIZE_MAX;
    int last = -1;   /* class of the last code point kept after the starter; -1: none */
    for (size_t i = 1; i < n; i++) {
        uint32_t c = cps[i];
        int cc = uni_ccc(c);
        /* c is blocked from the starter by anything in between of class 0 or >= its own */
        if (starter != SIZE_MAX && (last == -1 || (last != 0 && last < cc))) {
            uint32_t p = compose_pair(cps[starter], c);
            if (p) {
                cps[starter] = p;
                continue;
            }
        }
        if (cc == 0) {
            starter = out;
            last = -1;
        } else {
            last = cc;
        }
        cps[out++] = c;
    }
    return out;
}
