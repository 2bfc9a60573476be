/*
 * qgemm_avx2.c — AVX2 gemm kernels of qdot.h (the same tiles as
 * qgemm_avx512.c, 32 weights per ymm): up to 4 quantized x rows against one
 * weight row at a time, each weight block unpacked once for all of them.
 * Also the one-row dots of the types without a hand-written one in
 * qdot_avx2.c (rlx_qgemm_avx2_dots). Built with -mavx2 -mfma -mf16c and only
 * called after qdot.c's run-time check.
 *
 * Per 32 weights and x row: vpmaddubsw (unsigned q x signed qs -> int16
 * pairs, no saturation: q <= 63, |qs| <= 127), vpmaddwd with the 16-group
 * scales (K-quants) or with ones (legacy), an add / one FMA per block with
 * dw * dx. Q8_0 has signed weights: |w| x (qs * sign(w)) (pairs <= 2*128*127).
 * Offsets and mins come in through the activations' sums, as in the AVX-512
 * file: one FMA per 8 legacy blocks or per super-block and row.
 */
#include "cpu/kernels/qdot_internal.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#define INLINE static inline __attribute__((always_inline))
#define MR 4   /* x rows per tile */

INLINE float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* ------------------------------------------------------- legacy blocks */

/* Q8_0 needs none here: its signed weights go through the sign trick. */
INLINE float leg_off(int T) { return T == QD_Q4_0 ? 8.0f : T == QD_Q5_0 ? 16.0f : 0.0f; }

/* The 32 q of a 4/5-bit block as unsigned bytes. */
INLINE __m256i leg_unpack(int T, const uint8_t *blk) {
    const int qs = T == QD_Q4_0 ? 2 : T == QD_Q4_1 ? 4 : T == QD_Q5_0 ? 6 : 8;
    __m128i raw = _mm_loadu_si128((const __m128i *)(blk + qs));
    __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(15));
    if (T == QD_Q5_0 || T == QD_Q5_1) {   /* bit j of qh -> bit 4 of byte j */
        const __m256i sel = _mm256_setr_epi64x(0, 0x0101010101010101LL, 0x0202020202020202LL, 0x0303030303030303LL);
        const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
        __m256i h = _mm256_shuffle_epi8(_mm256_set1_epi32((int)qd_ld_u32(blk + (T == QD_Q5_0 ? 2 : 4))), sel);
        h = _mm256_cmpeq_epi8(_mm256_and_si256(h, bit), bit);
        q = _mm256_or_si256(q, _mm256_and_si256(h, _mm256_set1_epi8(16)));
    }
    return q;
}

INLINE void leg_tile(int T, int mr, int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs,
                     float *out, int64_t ldo) {
    const int64_t nb = K / 32;
    const int bytes = qd_block_bytes(T);
    const bool has_m = T == QD_Q4_1 || T == QD_Q5_1, has_side = has_m || leg_off(T) != 0;
    const int8_t *x[MR];
    const float *de[MR], *s[MR];
#pragma GCC unroll 4
    for (int m = 0; m < mr; m++) {
        x[m] = (const int8_t *)(xq + (size_t)m * xs);
        de[m] = qa_de(x[m], K);
        s[m] = qa_s(x[m], K);
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t n = 0; n < nw; n++, w += ws) {
        __m256 acc[MR];
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) acc[m] = _mm256_setzero_ps();
        for (int64_t g = 0; g < nb; g += 8) {
            const int r = nb - g < 8 ? (int)(nb - g) : 8;
            const uint8_t *blk = w + g * bytes;
            uint16_t hd[8] = {0}, hm[8] = {0};
            for (int i = 0; i < r; i++) {
                hd[i] = qd_ld_u16(blk + i * bytes);
                if (has_m) hm[i] = qd_ld_u16(blk + i * bytes + 2);
            }
            __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)hd));
            if (has_side) {
                __m256 side = _mm256_mul_ps(dw, _mm256_set1_ps(-leg_off(T)));
                if (has_m) side = _mm256_add_ps(side, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)hm)));
                const __m256i rm = _mm256_cmpgt_epi32(_mm256_set1_epi32(r), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
#pragma GCC unroll 4
                for (int m = 0; m < mr; m++) acc[m] = _mm256_fmadd_ps(side, _mm256_maskload_ps(s[m] + g, rm), acc[m]);
            }
            for (int p = 0; p < r; p++) {
                const uint8_t *b = blk + p * bytes;
                const __m256 dwb = _mm256_permutevar8x32_ps(dw, _mm256_set1_epi32(p));
                const int64_t e = 32 * (g + p);
                if (T == QD_Q8_0) {
                    __m256i q = _mm256_loadu_si256((const __m256i *)(b + 2)), aq = _mm256_sign_epi8(q, q);
#pragma GCC unroll 4
                    for (int m = 0; m < mr; m++) {
                        __m256i xv = _mm256_sign_epi8(_mm256_loadu_si256((const __m256i *)(x[m] + e)), q);
                        __m256i i = _mm256_madd_epi16(_mm256_maddubs_epi16(aq, xv), ones);
                        acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i), _mm256_mul_ps(dwb, _mm256_loadu_ps(de[m] + e / 4)), acc[m]);
                    }
                } else {
                    __m256i q = leg_unpack(T, b);
#pragma GCC unroll 4
                    for (int m = 0; m < mr; m++) {
                        __m256i xv = _mm256_loadu_si256((const __m256i *)(x[m] + e));
                        __m256i i = _mm256_madd_epi16(_mm256_maddubs_epi16(q, xv), ones);
                        acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i), _mm256_mul_ps(dwb, _mm256_loadu_ps(de[m] + e / 4)), acc[m]);
                    }
                }
            }
        }
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) out[m * ldo + n] = hsum_ps(acc[m]);
    }
}

/* --------------------------------------------------------- K-quants */


/* Per super-block: *D, the 16 group scales as int16 in *sc, and the
 * per-group weights of gs (offsets or mins) in side[0] (groups 0..7), side[1]. */
INLINE void k_prep(int T, const uint8_t *w, float *D, __m256i *sc, __m256 side[2]) {
    __m128i sv, mv;   /* 16 scales, 16 side factors as bytes */
    float f;
    bool signed_sc = false;
    if (T == QD_Q4_K || T == QD_Q5_K) {
        __m128i v = qd_k4_scales_v(w + 4);
        sv = _mm_unpacklo_epi8(v, v);
        mv = _mm_unpackhi_epi8(v, v);
        *D = _cvtsh_ss(qd_ld_u16(w));
        f = -_cvtsh_ss(qd_ld_u16(w + 2));
    } else if (T == QD_Q2_K) {
        __m128i v = _mm_loadu_si128((const __m128i *)w), m4 = _mm_set1_epi8(15);
        sv = _mm_and_si128(v, m4);
        mv = _mm_and_si128(_mm_srli_epi16(v, 4), m4);
        *D = _cvtsh_ss(qd_ld_u16(w + 80));
        f = -_cvtsh_ss(qd_ld_u16(w + 82));
    } else {
        signed_sc = true;
        sv = mv = T == QD_Q3_K ? qd_k3_scales_v(w) : _mm_loadu_si128((const __m128i *)(w + 192));
        *D = _cvtsh_ss(qd_ld_u16(w + (T == QD_Q3_K ? 108 : 208)));
        f = -(T == QD_Q3_K ? 4.0f : 32.0f) * *D;
    }
    *sc = signed_sc ? _mm256_cvtepi8_epi16(sv) : _mm256_cvtepu8_epi16(sv);
    __m256i m0 = signed_sc ? _mm256_cvtepi8_epi32(mv) : _mm256_cvtepu8_epi32(mv);
    __m256i m1 = signed_sc ? _mm256_cvtepi8_epi32(_mm_srli_si128(mv, 8)) : _mm256_cvtepu8_epi32(_mm_srli_si128(mv, 8));
    side[0] = _mm256_mul_ps(_mm256_cvtepi32_ps(m0), _mm256_set1_ps(f));
    side[1] = _mm256_mul_ps(_mm256_cvtepi32_ps(m1), _mm256_set1_ps(f));
}

/* Unsigned q of elements 32c .. 32c+31 of a super-block. */
INLINE __m256i k_unpack(int T, const uint8_t *w, int c) {
    const __m256i m4 = _mm256_set1_epi8(15), m3 = _mm256_set1_epi8(3), m1 = _mm256_set1_epi8(1);
    const int h = c / 4, j = c % 4;
    if (T == QD_Q4_K || T == QD_Q5_K) {   /* sub-block c: nibble c&1 of qs[32(c/2) + l] */
        __m256i q = _mm256_loadu_si256((const __m256i *)(w + (T == QD_Q4_K ? 16 : 48) + 32 * (c / 2)));
        q = _mm256_and_si256(_mm256_srli_epi16(q, 4 * (c & 1)), m4);
        if (T == QD_Q5_K) {
            __m256i hb = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)(w + 16)), c), m1);
            q = _mm256_or_si256(q, _mm256_slli_epi16(hb, 4));
        }
        return q;
    }
    if (T == QD_Q6_K) {   /* i = 128h + 32j + l: nibble j>>1 of ql[64h + 32(j&1) + l], bits 2j of qh[32h + l] */
        __m256i ql = _mm256_loadu_si256((const __m256i *)(w + 64 * h + 32 * (j & 1)));
        __m256i qh = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h));
        __m256i lo = _mm256_and_si256(_mm256_srli_epi16(ql, 4 * (j >> 1)), m4);
        return _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * j), m3), 4));
    }
    /* Q2_K / Q3_K: bits 2j of qs[32h + l] (+ 4 * bit 4h + j of hmask[l]) */
    __m256i q = _mm256_loadu_si256((const __m256i *)(w + (T == QD_Q2_K ? 16 : 32) + 32 * h));
    q = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3);
    if (T == QD_Q3_K) {
        __m256i hb = _mm256_and_si256(_mm256_srli_epi16(_mm256_loadu_si256((const __m256i *)w), 4 * h + j), m1);
        q = _mm256_or_si256(q, _mm256_slli_epi16(hb, 2));
    }
    return q;
}

INLINE void k_tile(int T, int mr, int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs,
                   float *out, int64_t ldo) {
    const int64_t nb = K / 256;
    const int8_t *x[MR];
    const float *xd[MR], *gs[MR];
#pragma GCC unroll 4
    for (int m = 0; m < mr; m++) {
        x[m] = (const int8_t *)(xq + (size_t)m * xs);
        xd[m] = qa_d(x[m], K);
        gs[m] = qa_gs(x[m], K);
    }
    /* int16 scale pair c (groups 2c, 2c+1, one dword of sc) to lanes 0-7 / 8-15 */
    const __m256i spread = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
                                            2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3);
    for (int64_t n = 0; n < nw; n++, w += ws) {
        __m256 acc[MR];
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) acc[m] = _mm256_setzero_ps();
        const uint8_t *blk = w;
        for (int64_t b = 0; b < nb; b++, blk += qd_block_bytes(T)) {
            float D;
            __m256i sc;
            __m256 side[2];
            k_prep(T, blk, &D, &sc, side);
            __m256i sumi[MR];
#pragma GCC unroll 4
            for (int m = 0; m < mr; m++) sumi[m] = _mm256_setzero_si256();
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) {
                __m256i q = k_unpack(T, blk, c);
                __m256i scv = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(sc, _mm256_set1_epi32(c)), spread);
#pragma GCC unroll 4
                for (int m = 0; m < mr; m++) {
                    __m256i p = _mm256_maddubs_epi16(q, _mm256_loadu_si256((const __m256i *)(x[m] + 256 * b + 32 * c)));
                    sumi[m] = _mm256_add_epi32(sumi[m], _mm256_madd_epi16(p, scv));
                }
            }
            const __m256 dv = _mm256_set1_ps(D);
#pragma GCC unroll 4
            for (int m = 0; m < mr; m++) {
                acc[m] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sumi[m]), _mm256_mul_ps(dv, _mm256_set1_ps(xd[m][b])), acc[m]);
                acc[m] = _mm256_fmadd_ps(side[0], _mm256_loadu_ps(gs[m] + 16 * b), acc[m]);
                acc[m] = _mm256_fmadd_ps(side[1], _mm256_loadu_ps(gs[m] + 16 * b + 8), acc[m]);
            }
        }
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) out[m * ldo + n] = hsum_ps(acc[m]);
    }
}

/* ------------------------------------------------------------ entries */

#define QGEMM_TABLE rlx_qgemm_avx2
#define QGEMM_DOTS rlx_qgemm_avx2_dots
#include "cpu/kernels/qgemm_entries.h"

#endif
