/*
 * qgemm_avx512.h — the AVX-512 block unpacking shared by qgemm_avx512.c (row
 * tiles) and qgemm_packed_avx512.c (16-row packed panels): for each weight
 * type, its unsigned q bytes in element order and its per-block scales.
 * Include only from files built with the AVX-512 flags (Makefile); defines
 * RLX_QGEMM_AVX512 when those are on.
 *
 * Every type is x = D * (q - off) + M with unsigned q (qdot.c): Q8_0 as
 * q + 128 (off 128), Q4_0 / Q5_0 off 8 / 16, Q4_1 / Q5_1 with a min,
 * K-quants per 16-group g with D = d * sc_g and either a min (-dmin * m_g)
 * or an offset (Q3_K 4, Q6_K 32).
 */
#ifndef RLX_CPU_QGEMM_AVX512_H
#define RLX_CPU_QGEMM_AVX512_H

#include "cpu/kernels/qdot_internal.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512VNNI__) && defined(__FMA__) && defined(__F16C__)
#define RLX_QGEMM_AVX512 1
#include <immintrin.h>

#define INLINE static inline __attribute__((always_inline))

/* Lanes 0-15 (16-bit) = a, lanes 16-31 = b. */
INLINE __m512i halves16(int a, int b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set1_epi16((short)a)), _mm256_set1_epi16((short)b), 1);
}

/* ------------------------------------------------------- legacy blocks */

INLINE float leg_off(int T) { return T == QD_Q8_0 ? 128.0f : T == QD_Q4_0 ? 8.0f : T == QD_Q5_0 ? 16.0f : 0.0f; }

/* 64 unsigned q of block b0 (low half) and b1 (high half, zero when !two). */
INLINE __m512i leg_unpack(int T, const uint8_t *b0, const uint8_t *b1, bool two) {
    if (T == QD_Q8_0) {
        __m256i lo = _mm256_loadu_si256((const __m256i *)(b0 + 2));
        __m256i hi = two ? _mm256_loadu_si256((const __m256i *)(b1 + 2)) : _mm256_setzero_si256();
        __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
        return _mm512_maskz_xor_epi64(two ? 0xff : 0x0f, v, _mm512_set1_epi8((char)0x80));
    }
    const int qs = T == QD_Q4_0 ? 2 : T == QD_Q4_1 ? 4 : T == QD_Q5_0 ? 6 : 8;
    __m256i a = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b0 + qs)));
    __m256i b = two ? _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(b1 + qs))) : _mm256_setzero_si256();
    /* per 128-bit lane: low nibbles (elements 0..15), high nibbles (16..31) */
    const __m512i shifts = _mm512_setr_epi64(0, 0, 0x0004000400040004LL, 0x0004000400040004LL, 0, 0,
                                             0x0004000400040004LL, 0x0004000400040004LL);
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
    q = _mm512_and_si512(_mm512_srlv_epi16(q, shifts), _mm512_set1_epi8(15));
    if (T == QD_Q5_0 || T == QD_Q5_1) {   /* bit j of qh is bit 4 of element j */
        const int qh = T == QD_Q5_0 ? 2 : 4;
        uint64_t bits = qd_ld_u32(b0 + qh) | (two ? (uint64_t)qd_ld_u32(b1 + qh) << 32 : 0);
        q = _mm512_mask_add_epi8(q, (__mmask64)bits, q, _mm512_set1_epi8(16));
    }
    return q;
}

/* --------------------------------------------------------- K-quants */


/* Per super-block: *D, the 16 group scales as int16 lanes 0..15 of *sc and
 * the per-group weights of gs (offset or min terms) in *side. */
INLINE void k_prep(int T, const uint8_t *w, float *D, __m512i *sc, __m512 *side) {
    if (T == QD_Q4_K || T == QD_Q5_K) {
        __m128i v = qd_k4_scales_v(w + 4);
        *sc = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(v, v)));
        *side = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_unpackhi_epi8(v, v))),
                              _mm512_set1_ps(-_cvtsh_ss(qd_ld_u16(w + 2))));
        *D = _cvtsh_ss(qd_ld_u16(w));
    } else if (T == QD_Q2_K) {
        __m128i v = _mm_loadu_si128((const __m128i *)w), m4 = _mm_set1_epi8(15);
        *sc = _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(v, m4)));
        *side = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(v, 4), m4))),
                              _mm512_set1_ps(-_cvtsh_ss(qd_ld_u16(w + 82))));
        *D = _cvtsh_ss(qd_ld_u16(w + 80));
    } else {   /* Q3_K, Q6_K: signed scales, offset 4 / 32 */
        __m128i v;
        if (T == QD_Q3_K) {
            v = qd_k3_scales_v(w);
            *D = _cvtsh_ss(qd_ld_u16(w + 108));
        } else {
            v = _mm_loadu_si128((const __m128i *)(w + 192));
            *D = _cvtsh_ss(qd_ld_u16(w + 208));
        }
        *sc = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(v));
        *side = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(v)), _mm512_set1_ps(-(T == QD_Q3_K ? 4.0f : 32.0f) * *D));
    }
}

/* Unsigned q of elements 64c .. 64c+63 of a super-block, in order. */
INLINE __m512i k_unpack(int T, const uint8_t *w, int c) {
    const __m512i m4 = _mm512_set1_epi8(15), m3 = _mm512_set1_epi8(3), m1 = _mm512_set1_epi8(1);
    const int h = c / 2, t = c % 2;
    if (T == QD_Q4_K || T == QD_Q5_K) {   /* sub-blocks 2c (low nibbles), 2c+1 (high) */
        __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w + (T == QD_Q4_K ? 16 : 48) + 32 * c)));
        q = _mm512_and_si512(_mm512_srlv_epi16(q, halves16(0, 4)), m4);
        if (T == QD_Q5_K) {
            __m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w + 16)));
            hb = _mm512_and_si512(_mm512_srlv_epi16(hb, halves16(2 * c, 2 * c + 1)), m1);
            q = _mm512_or_si512(q, _mm512_slli_epi16(hb, 4));
        }
        return q;
    }
    if (T == QD_Q6_K) {   /* elements 128h + 64t + (0..63): ql nibble t of 64 bytes, qh bits 2(2t) and 2(2t+1) */
        __m512i ql = _mm512_loadu_si512(w + 64 * h);
        __m512i qh = _mm512_srlv_epi16(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h))),
                                       halves16(4 * t, 4 * t + 2));
        __m512i lo = _mm512_and_si512(t ? _mm512_srli_epi16(ql, 4) : ql, m4);
        return _mm512_or_si512(lo, _mm512_slli_epi16(_mm512_and_si512(qh, m3), 4));
    }
    /* Q2_K / Q3_K: elements 128h + 32j + l with j = 2t (low half), 2t+1: bits 2j of qs[32h + l] */
    const int qs = T == QD_Q2_K ? 16 : 32;
    __m512i q = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w + qs + 32 * h)));
    q = _mm512_and_si512(_mm512_srlv_epi16(q, halves16(4 * t, 4 * t + 2)), m3);
    if (T == QD_Q3_K) {   /* high bit: bit 4h + j of hmask[l], worth 4 */
        __m512i hb = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)w));
        hb = _mm512_and_si512(_mm512_srlv_epi16(hb, halves16(4 * h + 2 * t, 4 * h + 2 * t + 1)), m1);
        q = _mm512_or_si512(q, _mm512_slli_epi16(hb, 2));
    }
    return q;
}

#endif
#endif
