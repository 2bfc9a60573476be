/*
 * unicode.h — code point properties and normalization for the tokenizers:
 * general category, the character classes of the BERT basic tokenizer,
 * lowercase mapping, canonical decomposition (NFD) here and in unicode.c;
 * the other normalization forms (unicode_norm.c) and extended grapheme
 * clusters (unicode_grapheme.c). The data comes from
 * the generated unicode_tables.c (scripts/gen_unicode_tables.py), whose
 * Unicode version is RLX_UNICODE_VERSION (RLX_UNICODE_GCB_VERSION for the
 * grapheme break property); code points assigned after it are category Cn
 * (unassigned).
 *
 * Text enters as UTF-8 and is decoded with uni_utf8_decode, which turns any
 * invalid or truncated sequence (and surrogates, overlongs, > U+10FFFF) into
 * U+FFFD, one per bad byte, so every later step sees valid code points.
 */
#ifndef RLX_MODELS_UNICODE_H
#define RLX_MODELS_UNICODE_H

#include "models/unicode_tables.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UNI_REPLACEMENT 0xFFFDu
/* Longest NFD of one code point (U+1F82 and friends expand to 4; Hangul to 3). */
#define UNI_NFD_MAX 4
/* Longest NFKD of one code point (U+FDFA expands to 18). */
#define UNI_NFKD_MAX 18
/* Longest full lowercase of one code point (U+0130 -> i + U+0307). */
#define UNI_LOWER_MAX 2

uni_gc   uni_category(uint32_t cp);
uint8_t  uni_ccc(uint32_t cp);        /* canonical combining class, 0 = starter */

static inline bool uni_gc_is_punct(uni_gc g)   { return g >= UNI_Pc && g <= UNI_Po; }
static inline bool uni_gc_is_other(uni_gc g)   { return g == UNI_Cn || g >= UNI_Cc; }
static inline bool uni_gc_is_separator(uni_gc g) { return g >= UNI_Zs && g <= UNI_Zp; }

/* The White_Space property: \t \n \v \f \r, U+0085 and the Z* categories. */
bool uni_is_white_space(uint32_t cp);
/* BERT's punctuation: category P*, or ASCII 33-47, 58-64, 91-96, 123-126
 * (every ASCII character that is neither a letter, a digit nor a space, so
 * "$", "+", "^", "`" count although Unicode calls them symbols). */
bool uni_is_bert_punct(uint32_t cp);
/* BERT's "Chinese character": the CJK Unified Ideographs blocks (URO,
 * extensions A-E) and the two CJK Compatibility Ideographs blocks. Hangul,
 * kana and CJK punctuation are not in it. */
bool uni_is_cjk_ideograph(uint32_t cp);

/* Simple (one code point) lowercase; cp itself when it has none. */
uint32_t uni_lower_simple(uint32_t cp);
/* Full unconditional lowercase of one code point into out (UNI_LOWER_MAX);
 * returns the count: the simple mapping, except U+0130 -> "i\u0307".
 * (Context-dependent rules such as the final sigma are not applied.) */
size_t   uni_lower_full(uint32_t cp, uint32_t *out);
/* Full canonical decomposition of one code point into out (UNI_NFD_MAX),
 * Hangul syllables included; returns the count (1 when cp is unchanged). The
 * marks come out in canonical order. */
size_t   uni_nfd_char(uint32_t cp, uint32_t *out);
/* One step of canonical decomposition (Hangul excluded): true with d0 (and
 * d1, 0 for a singleton). */
bool     uni_nfd_step(uint32_t cp, uint32_t *d0, uint32_t *d1);
/* Full decomposition of one code point into out (UNI_NFKD_MAX): canonical,
 * or with compat also compatibility mappings, applied until nothing changes.
 * Returns the count; the marks are not yet in canonical order. */
size_t   uni_decompose_char(uint32_t cp, bool compat, uint32_t *out);
/* Canonical composition in place of a decomposed, canonically ordered
 * string (Hangul by arithmetic); returns the new length. Decomposition,
 * ordering and this make NFC / NFKC. */
size_t   uni_compose(uint32_t *cps, size_t n);
/* Grapheme_Cluster_Break of cp, Extended_Pictographic as UNI_GCB_ExtPict. */
uni_gcb  uni_grapheme_break(uint32_t cp);
/* End of the extended grapheme cluster (UAX #29) that starts at cps[i]:
 * the index after its last code point (i < n). GB9c (Indic conjuncts,
 * Unicode 15.1) is not applied: the property data is Unicode 15.0. */
size_t   uni_grapheme_end(const uint32_t *cps, size_t n, size_t i);
/* Canonical ordering in place: each run of non-starters is stably sorted by
 * combining class. Applied after decomposing a whole string, it makes NFD. */
void     uni_canonical_order(uint32_t *cps, size_t n);

/* Decodes one code point from s[0..n) (n >= 1) into *cp; returns the bytes
 * used (1..4). An invalid sequence gives U+FFFD and consumes one byte. */
size_t uni_utf8_decode(const uint8_t *s, size_t n, uint32_t *cp);
/* Encodes cp (<= U+10FFFF, no surrogate) into out[0..4); returns the bytes. */
size_t uni_utf8_encode(uint32_t cp, char *out);

/* Hangul syllable composition constants (Unicode chapter 3.12), shared by
 * canonical decomposition (unicode.c) and composition (unicode_norm.c). */
enum { HANGUL_S = 0xAC00, HANGUL_L = 0x1100, HANGUL_V = 0x1161, HANGUL_T = 0x11A7,
       HANGUL_L_COUNT = 19, HANGUL_V_COUNT = 21, HANGUL_T_COUNT = 28, HANGUL_COUNT = 11172 };

#endif
