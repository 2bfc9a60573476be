/*
 * unicode_grapheme.c — extended grapheme clusters (UAX #29), which
 * SentencePiece's precompiled normalizer (as Hugging Face runs it) maps
 * whole. The rules GB3-GB13 and GB999 are applied walking forward from a
 * known boundary, carrying the two pieces of left context they need: the
 * Extended_Pictographic Extend* ZWJ state of GB11 and the parity of the
 * regional indicator run of GB12/GB13. GB9c is not applied (see unicode.h).
 */
#include "models/unicode.h"

uni_gcb uni_grapheme_break(uint32_t cp) {
    if (cp > 0x10FFFF) return UNI_GCB_Other;
    size_t lo = 0, hi = uni_gcb_runs_len;   /* last run starting at or before cp */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uni_gcb_runs[mid] >> 5) <= cp) lo = mid;
        else hi = mid;
    }
    return (uni_gcb)(uni_gcb_runs[lo] & 31u);
}

static bool is_control(uni_gcb g) { return g == UNI_GCB_CR || g == UNI_GCB_LF || g == UNI_GCB_Control; }

/* No break between a and b (given the context so far)? */
static bool joins(uni_gcb a, uni_gcb b, int pict, int ri_run) {
    if (a == UNI_GCB_CR && b == UNI_GCB_LF) return true;                               /* GB3 */
    if (is_control(a) || is_control(b)) return false;                                /* GB4, GB5 */
    if (a == UNI_GCB_L && (b == UNI_GCB_L || b == UNI_GCB_V || b == UNI_GCB_LV || b == UNI_GCB_LVT)) return true; /* GB6 */
    if ((a == UNI_GCB_LV || a == UNI_GCB_V) && (b == UNI_GCB_V || b == UNI_GCB_T)) return true;                 /* GB7 */
    if ((a == UNI_GCB_LVT || a == UNI_GCB_T) && b == UNI_GCB_T) return true;                                    /* GB8 */
    if (b == UNI_GCB_Extend || b == UNI_GCB_ZWJ || b == UNI_GCB_SpacingMark) return true;                       /* GB9, GB9a */
    if (a == UNI_GCB_Prepend) return true;                                                                      /* GB9b */
    if (pict == 2 && a == UNI_GCB_ZWJ && b == UNI_GCB_ExtPict) return true;                                     /* GB11 */
    if (a == UNI_GCB_Regional_Indicator && b == UNI_GCB_Regional_Indicator) return ri_run % 2 == 1;             /* GB12, GB13 */
    return false;                                                                                                /* GB999 */
}

size_t uni_grapheme_end(const uint32_t *cps, size_t n, size_t i) {
    uni_gcb a = uni_grapheme_break(cps[i]);
    int pict = a == UNI_GCB_ExtPict ? 1 : 0;   /* 1: ExtPict Extend*, 2: then ZWJ */
    int ri_run = a == UNI_GCB_Regional_Indicator ? 1 : 0;
    for (i++; i < n; i++) {
        uni_gcb b = uni_grapheme_break(cps[i]);
        if (!joins(a, b, pict, ri_run)) break;
        if (b == UNI_GCB_ExtPict) pict = 1;
        else if (pict == 1 && b == UNI_GCB_Extend) pict = 1;
        else if (pict == 1 && b == UNI_GCB_ZWJ) pict = 2;
        else pict = 0;
        ri_run = b == UNI_GCB_Regional_Indicator ? ri_run + 1 : 0;
        a = b;
    }
    return i;
}
