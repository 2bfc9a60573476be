/*
 * tj_precompiled.c — SentencePiece's precompiled_charsmap, the "Precompiled"
 * normalizer of XLM-R / T5 style tokenizer.json files.
 *
 * The map is base64 text in the JSON. Decoded it is a u32 (little-endian)
 * byte size of a darts-clone double-array trie, the trie's u32 units, then
 * the replacement strings, each NUL-terminated UTF-8; a trie key (UTF-8 of
 * the text to replace) leads to a leaf whose value is the byte offset of its
 * replacement. Normalizing follows Hugging Face: each extended grapheme
 * cluster shorter than 6 bytes is looked up whole; otherwise, or when the
 * cluster has no entry, each of its code points is looked up alone. A lookup
 * takes the first (shortest) key that is a prefix of the bytes, whether or
 * not it covers them all.
 *
 * The file may be hostile, so everything a lookup can reach is checked at
 * load: a walk of the trie from the root over every byte label visits each
 * reachable node once (a bitmap stops cycles and shared nodes), checking
 * that its units and its 256 child slots lie inside the array and that each
 * leaf's offset starts a UTF-8 character in the strings and has a NUL after
 * it; the strings must be valid UTF-8. Lookups still bounds-check, so a
 * missed case can only lose a replacement, never read out of bounds.
 */
#include "models/tj_internal.h"
#include "core/json.h"
#include "models/unicode.h"

#include <stdlib.h>
#include <string.h>

struct tj_charsmap {
    uint32_t *units;
    size_t    n_units;
    char     *blob;                /* the replacement strings */
    size_t    blob_n;
};

/* Unit fields of a darts-clone double array. */
static inline bool     has_leaf(uint32_t u) { return (u >> 8) & 1u; }
static inline uint32_t value_of(uint32_t u) { return u & 0x7FFFFFFFu; }
static inline uint32_t label_of(uint32_t u) { return u & (0x80000000u | 0xFFu); }
static inline size_t   offset_of(uint32_t u) { return (size_t)(u >> 10) << ((u & (1u << 9)) >> 6); }

enum { MAX_TRIE_BYTES = 64u << 20 };   /* real maps are a few hundred KiB */

static int b64_digit(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

/* Standard base64 with padding; *bad gets the first offending character. */
static bool b64_decode(const char *s, size_t n, uint8_t *out, size_t *out_n, size_t *bad) {
    size_t k = 0;
    if (n % 4) { *bad = n; return false; }
    for (size_t i = 0; i < n; i += 4) {
        int d[4], pad = 0;
        for (int j = 0; j < 4; j++) {
            unsigned char c = (unsigned char)s[i + j];
            if (c == '=' && i + 4 == n && j >= 2) { d[j] = 0; pad++; continue; }
            if (pad || (d[j] = b64_digit(c)) < 0) { *bad = i + (size_t)j; return false; }
        }
        uint32_t v = (uint32_t)d[0] << 18 | (uint32_t)d[1] << 12 | (uint32_t)d[2] << 6 | (uint32_t)d[3];
        out[k++] = (uint8_t)(v >> 16);
        if (pad < 2) out[k++] = (uint8_t)(v >> 8);
        if (pad < 1) out[k++] = (uint8_t)v;
    }
    *out_n = k;
    return true;
}

/* The checks of the header comment, from the root. */
static rlx_status check_trie(const tj_charsmap *m, const char *where) {
    size_t n = m->n_units;
    uint8_t *seen = calloc((n + 7) / 8, 1);
    size_t *stack = malloc(n * sizeof *stack), top = 0;
    rlx_status st = RLX_OK;
    if (!seen || !stack) { st = tj_oom(); goto done; }
    size_t root = offset_of(m->units[0]);
    if (root >= n) { st = rlx_fail(RLX_STATUS_FORMAT, "%s: the trie root points to unit %zu, past the %zu-unit array", where, root, n); goto done; }
    stack[top++] = root;
    seen[root / 8] |= (uint8_t)(1u << (root % 8));
    while (top && !st) {
        size_t base = stack[--top];
        if ((base | 0xFF) >= n) {
            st = rlx_fail(RLX_STATUS_FORMAT, "%s: trie node at unit %zu has child slots past the %zu-unit array", where, base, n);
            break;
        }
        for (uint32_t c = 1; c < 256 && !st; c++) {
            size_t at = base ^ c;
            uint32_t u = m->units[at];
            if (label_of(u) != c) continue;
            size_t child = at ^ offset_of(u);
            if (child >= n) {
                st = rlx_fail(RLX_STATUS_FORMAT, "%s: trie unit %zu points to unit %zu, past the %zu-unit array", where, at, child, n);
                break;
            }
            if (has_leaf(u)) {
                uint32_t v = value_of(m->units[child]);
                if (v >= m->blob_n || ((unsigned char)m->blob[v] & 0xC0) == 0x80)
                    st = rlx_fail(RLX_STATUS_FORMAT, "%s: trie leaf at unit %zu: offset %u is not the start of a string "
                                  "in the %zu bytes of replacements", where, child, v, m->blob_n);
                else if (!memchr(m->blob + v, 0, m->blob_n - v))
                    st = rlx_fail(RLX_STATUS_FORMAT, "%s: trie leaf at unit %zu: the replacement at offset %u has no NUL", where, child, v);
            }
            if (!st && !(seen[child / 8] & (1u << (child % 8)))) {   /* each unit is pushed once: n slots suffice */
                seen[child / 8] |= (uint8_t)(1u << (child % 8));
                stack[top++] = child;
            }
        }
    }
done:
    free(seen);
    free(stack);
    return st;
}

rlx_status tj_charsmap_read(const char *where, const char *b64, size_t n, tj_charsmap **out) {
    *out = NULL;
    uint8_t *raw = malloc(n / 4 * 3 + 4);
    tj_charsmap *m = calloc(1, sizeof *m);
    rlx_status st = RLX_OK;
    size_t len = 0, bad = 0;
    if (!raw || !m) { st = tj_oom(); goto fail; }
    if (!b64_decode(b64, n, raw, &len, &bad)) {
        st = rlx_fail(RLX_STATUS_FORMAT, "%s: not base64 (%s at character %zu of %zu)", where,
                      bad == n ? "length not a multiple of 4" : "bad character", bad, n);
        goto fail;
    }
    if (len < 4) { st = rlx_fail(RLX_STATUS_FORMAT, "%s: %zu bytes, too short for the trie size", where, len); goto fail; }
    size_t trie = (size_t)raw[0] | (size_t)raw[1] << 8 | (size_t)raw[2] << 16 | (size_t)raw[3] << 24;
    if (trie % 4 || trie == 0 || trie > len - 4 || trie > MAX_TRIE_BYTES) {
        st = rlx_fail(RLX_STATUS_FORMAT, "%s: trie size %zu is %s (%zu bytes follow it)", where, trie,
                      trie % 4 ? "not a multiple of 4" : trie == 0 ? "zero" : trie > len - 4 ? "more than the data" : "too large",
                      len - 4);
        goto fail;
    }
    m->n_units = trie / 4;
    m->blob_n = len - 4 - trie;
    m->units = malloc(m->n_units * sizeof *m->units);
    m->blob = malloc(m->blob_n + 1);
    if (!m->units || !m->blob) { st = tj_oom(); goto fail; }
    for (size_t i = 0; i < m->n_units; i++) {
        const uint8_t *p = raw + 4 + 4 * i;
        m->units[i] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    }
    memcpy(m->blob, raw + 4 + trie, m->blob_n);
    m->blob[m->blob_n] = 0;
    if (!json_utf8_valid(m->blob, m->blob_n, &bad)) {
        st = rlx_fail(RLX_STATUS_FORMAT, "%s: replacement strings are not UTF-8 (byte %zu of %zu)", where, bad, m->blob_n);
        goto fail;
    }
    if ((st = check_trie(m, where))) goto fail;
    free(raw);
    *out = m;
    return RLX_OK;
fail:
    free(raw);
    tj_charsmap_free(m);
    return st;
}

void tj_charsmap_free(tj_charsmap *m) {
    if (!m) return;
    free(m->units);
    free(m->blob);
    free(m);
}

/* Offset of the replacement of the shortest key that prefixes key[0..n), or -1. */
static long lookup(const tj_charsmap *m, const uint8_t *key, size_t n) {
    size_t pos = offset_of(m->units[0]);
    for (size_t i = 0; i < n && key[i]; i++) {
        pos ^= key[i];
        if (pos >= m->n_units) return -1;
        uint32_t u = m->units[pos];
        if (label_of(u) != key[i]) return -1;
        pos ^= offset_of(u);
        if (pos >= m->n_units) return -1;
        if (has_leaf(u)) {
            uint32_t v = value_of(m->units[pos]);
            return v < m->blob_n ? (long)v : -1;
        }
    }
    return -1;
}

static bool put_replacement(const tj_charsmap *m, long at, tj_cps *out) {
    const uint8_t *s = (const uint8_t *)m->blob + at;
    size_t n = strlen((const char *)s);   /* the blob is NUL-terminated past its end too */
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        i += uni_utf8_decode(s + i, n - i, &cp);
        if (!tj_cps_push(out, cp)) return false;
    }
    return true;
}

bool tj_charsmap_apply(const tj_charsmap *m, const uint32_t *a, size_t n, tj_cps *out) {
    for (size_t i = 0; i < n;) {
        size_t e = uni_grapheme_end(a, n, i);
        uint8_t key[8];
        size_t kn = 0;
        for (size_t k = i; k < e && kn < 6; k++) {
            char u[4];
            size_t un = uni_utf8_encode(a[k], u);
            if (kn + un > 6) { kn = 6; break; }
            memcpy(key + kn, u, un);
            kn += un;
        }
        long at = kn < 6 ? lookup(m, key, kn) : -1;
        if (at >= 0) {
            if (!put_replacement(m, at, out)) return false;
        } else {
            for (size_t k = i; k < e; k++) {
                size_t un = uni_utf8_encode(a[k], (char *)key);
                long c = lookup(m, key, un);
                if (c >= 0 ? !put_replacement(m, c, out) : !tj_cps_push(out, a[k])) return false;
            }
        }
        i = e;
    }
    return true;
}
