/*
 * qdot_avx2.c — AVX2 activation quantizers and hand-written dots of qdot.h
 * for Q8_0, Q4_0, Q4_K, Q5_K and Q6_K (contract in qdot_internal.h), and the
 * ISA's table; the other types' dots and all gemm tiles are in qgemm_avx2.c.
 * Built with -mavx2 -mfma -mf16c and only called after qdot.c's run-time check.
 *
 * Per 32 weights: unpack to bytes (nibbles / high bits), one
 * _mm256_maddubs_epi16 (unsigned weight x signed activation -> pairs in
 * int16), one _mm256_madd_epi16 (-> int32, with the sub-block scale for the
 * K-quants), and per block (legacy) or super-block (K) one float FMA with the
 * combined scale. Signed weights (Q8_0, Q4_0 - 8) use the sign trick:
 * |w| * (x * sign(w)); x is never -128, so nothing saturates.
 */
#include "cpu/kernels/qdot_internal.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

static inline float f16(const uint8_t *p) { return _cvtsh_ss(qd_ld_u16(p)); }

static inline float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

static inline int32_t hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

static inline float hmax_ps(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* ------------------------------------------------ activation quantization */

/* Rounds 32 floats times id to int8 (|x * id| <= 127 by construction) and
 * stores them; sums16 (optional) gets the sums of elements 0..15 and 16..31. */
static inline void round_store32(const float *x, __m256 id, int8_t *dst, int16_t *sums16) {
    __m256i i0 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), id));
    __m256i i1 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), id));
    __m256i i2 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), id));
    __m256i i3 = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), id));
    if (sums16) {
        sums16[0] = (int16_t)hsum_epi32(_mm256_add_epi32(i0, i1));
        sums16[1] = (int16_t)hsum_epi32(_mm256_add_epi32(i2, i3));
    }
    i0 = _mm256_packs_epi32(i0, i1);    /* per 128-bit lane: i0 lo, i1 lo | i0 hi, i1 hi */
    i2 = _mm256_packs_epi32(i2, i3);
    i0 = _mm256_packs_epi16(i0, i2);    /* 32-bit groups in order 0 2 4 6 1 3 5 7 */
    i0 = _mm256_permutevar8x32_epi32(i0, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256((__m256i *)dst, i0);
}

/* absmax of n floats (a multiple of 8); *bad |= lanes that are Inf or NaN. */
static inline float absmax(const float *x, int n, __m256 *bad) {
    const __m256 sign = _mm256_set1_ps(-0.0f), zero = _mm256_setzero_ps();
    __m256 mx = zero, nz = *bad;
    for (int i = 0; i < n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        mx = _mm256_max_ps(mx, _mm256_andnot_ps(sign, v));
        nz = _mm256_add_ps(nz, _mm256_mul_ps(v, zero));   /* NaN for Inf or NaN */
    }
    *bad = nz;
    return hmax_ps(mx);
}

static inline bool all_finite(__m256 bad) {
    return _mm256_movemask_ps(_mm256_cmp_ps(bad, bad, _CMP_UNORD_Q)) == 0;
}

static bool quant_q8_32(const float *x, int64_t K, void *xq) {
    int8_t *qs = xq;
    __m256 bad = _mm256_setzero_ps();
    for (int64_t b = 0; b < K / 32; b++) {
        float amax = absmax(x + 32 * b, 32, &bad);
        int16_t sums[2];
        round_store32(x + 32 * b, _mm256_set1_ps(amax > 0 ? 127.0f / amax : 0.0f), qs + 32 * b, sums);
        qa_set_block_q8_32(xq, K, b, amax / 127.0f, (int32_t)sums[0] + sums[1]);
    }
    return all_finite(bad);
}

static bool quant_q8_256(const float *x, int64_t K, void *xq) {
    int8_t *qs = xq;
    float *dd = qa_d(xq, K);
    int16_t *bs = qa_bsums(xq, K);
    __m256 bad = _mm256_setzero_ps();
    for (int64_t b = 0; b < K / 256; b++) {
        float amax = absmax(x + 256 * b, 256, &bad);
        dd[b] = amax / 127.0f;
        __m256 id = _mm256_set1_ps(amax > 0 ? 127.0f / amax : 0.0f);
        for (int j = 0; j < 8; j++) round_store32(x + 256 * b + 32 * j, id, qs + 256 * b + 32 * j, bs + 16 * b + 2 * j);
    }
    qa_fill_q8_256(xq, K);
    return all_finite(bad);
}

/* ------------------------------------------------------- legacy dots */

/* Signed 32 x 32 bytes to 8 int32 partial sums. */
static inline __m256i dot_s8(__m256i w, __m256i x) {
    __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(w, w), _mm256_sign_epi8(x, w));
    return _mm256_madd_epi16(p, _mm256_set1_epi16(1));
}

/* The 32 nibbles of a Q4_0 block as unsigned bytes 0..15, in element order. */
static inline __m256i q4_0_nibbles(const uint8_t *p) {
    __m128i raw = _mm_loadu_si128((const __m128i *)p);
    __m256i q = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);   /* elements 0..15 | 16..31 */
    return _mm256_and_si256(q, _mm256_set1_epi8(15));
}

/* Unsigned 32 x signed 32 bytes to 8 int32 partial sums (pairs <= 2*15*127). */
static inline __m256i dot_u4(__m256i q, __m256i x) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, x), _mm256_set1_epi16(1));
}

static float dot_q8_0(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    int64_t nb = K / 32, b = 0;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (; b + 2 <= nb; b += 2, w += 68) {
        __m256i p0 = dot_s8(_mm256_loadu_si256((const __m256i *)(w + 2)), _mm256_loadu_si256((const __m256i *)(xs + 32 * b)));
        __m256i p1 = dot_s8(_mm256_loadu_si256((const __m256i *)(w + 36)), _mm256_loadu_si256((const __m256i *)(xs + 32 * b + 32)));
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(f16(w) * xd[b]), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(f16(w + 34) * xd[b + 1]), acc1);
    }
    if (b < nb) {
        __m256i p0 = dot_s8(_mm256_loadu_si256((const __m256i *)(w + 2)), _mm256_loadu_si256((const __m256i *)(xs + 32 * b)));
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(f16(w) * xd[b]), acc0);
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1));
}

/* The nibbles q are used unsigned and the -8 offset is -8 * d_w * s[b] with
 * s[b] = dx_b * sum(qs) from the activation (qdot.h), a scalar FMA per
 * block instead of the subtraction and the two vpsignb of the sign trick. */
static float dot_q4_0(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K), *xsum = qa_s(xq, K);
    int64_t nb = K / 32, b = 0;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float offs = 0;   /* sum of d_w * s[b] */
    for (; b + 2 <= nb; b += 2, w += 36) {
        float d0 = f16(w), d1 = f16(w + 18);
        __m256i p0 = dot_u4(q4_0_nibbles(w + 2), _mm256_loadu_si256((const __m256i *)(xs + 32 * b)));
        __m256i p1 = dot_u4(q4_0_nibbles(w + 20), _mm256_loadu_si256((const __m256i *)(xs + 32 * b + 32)));
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(d0 * xd[b]), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p1), _mm256_set1_ps(d1 * xd[b + 1]), acc1);
        offs += d0 * xsum[b] + d1 * xsum[b + 1];
    }
    if (b < nb) {
        float d0 = f16(w);
        __m256i p0 = dot_u4(q4_0_nibbles(w + 2), _mm256_loadu_si256((const __m256i *)(xs + 32 * b)));
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p0), _mm256_set1_ps(d0 * xd[b]), acc0);
        offs += d0 * xsum[b];
    }
    return hsum_ps(_mm256_add_ps(acc0, acc1)) - 8.0f * offs;
}

/* --------------------------------------------------------- K-quant dots */

/* Per block of Q4_K / Q5_K: unpacks the scales and mins in registers
 * (qd_k4_scales_v), adds -dmin * the mins term into *accm and returns d * xd;
 * sm receives the 8 scales (bytes 0..7) for the broadcasts of the sub-block
 * loop, stored as one 16-byte vector so that the 2-byte broadcast loads
 * forward from it (a scalar unpack that stores 4-byte words and reads them
 * back as 8 bytes stalls store forwarding once per block). */
static inline float k4_block(const uint8_t *w, float xd, const int16_t *bs, uint8_t sm[16], __m256 *accm) {
    __m128i v = qd_k4_scales_v(w + 4);
    _mm_storeu_si128((__m128i *)sm, v);
    __m128 dd = qd_k4_dd(w, xd);
    *accm = _mm256_fnmadd_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(dd)), _mm256_cvtepi32_ps(qd_k4_mins_v(v, bs)), *accm);
    return _mm_cvtss_f32(dd);
}

static float dot_q4_K(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256 acc = _mm256_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    for (int64_t b = 0; b < K / 256; b++, w += 144, xs += 256, bs += 16) {
        uint8_t sm[16];
        float d = k4_block(w, xd[b], bs, sm, &accm);
        __m256i sumi = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(w + 16 + 32 * j));
            __m256i lo = _mm256_and_si256(q, m4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(xs + 64 * j)));
            __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(xs + 64 * j + 32)));
            plo = _mm256_madd_epi16(plo, _mm256_set1_epi16(sm[2 * j]));
            phi = _mm256_madd_epi16(phi, _mm256_set1_epi16(sm[2 * j + 1]));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(plo, phi));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum_ps(_mm256_add_ps(acc, accm));
}

static float dot_q5_K(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    const __m256i m4 = _mm256_set1_epi8(15), b0 = _mm256_set1_epi8(1), b1 = _mm256_set1_epi8(2);
    __m256 acc = _mm256_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    for (int64_t b = 0; b < K / 256; b++, w += 176, xs += 256, bs += 16) {
        uint8_t sm[16];
        float d = k4_block(w, xd[b], bs, sm, &accm);
        __m256i hb = _mm256_loadu_si256((const __m256i *)(w + 16));   /* bit s of byte l: sub-block s */
        __m256i sumi = _mm256_setzero_si256();
        for (int j = 0; j < 4; j++) {
            __m256i q = _mm256_loadu_si256((const __m256i *)(w + 48 + 32 * j));
            /* hb is shifted right by 2 per pair; 16-bit shifts are fine since only bits 0-1 of each byte are used */
            __m256i lo = _mm256_or_si256(_mm256_and_si256(q, m4), _mm256_slli_epi16(_mm256_and_si256(hb, b0), 4));
            __m256i hi = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4),
                                         _mm256_slli_epi16(_mm256_and_si256(hb, b1), 3));
            hb = _mm256_srli_epi16(hb, 2);
            __m256i plo = _mm256_maddubs_epi16(lo, _mm256_loadu_si256((const __m256i *)(xs + 64 * j)));
            __m256i phi = _mm256_maddubs_epi16(hi, _mm256_loadu_si256((const __m256i *)(xs + 64 * j + 32)));
            plo = _mm256_madd_epi16(plo, _mm256_set1_epi16(sm[2 * j]));
            phi = _mm256_madd_epi16(phi, _mm256_set1_epi16(sm[2 * j + 1]));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(plo, phi));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum_ps(_mm256_add_ps(acc, accm));
}

static inline __m256i sc_pair(const int8_t *sc) {
    return _mm256_set_m128i(_mm_set1_epi16(sc[1]), _mm_set1_epi16(sc[0]));
}

static float dot_q6_K(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    const __m256i m4 = _mm256_set1_epi8(15), m2 = _mm256_set1_epi8(3), m2s = _mm256_set1_epi8(0x30);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < K / 256; b++, w += 210, xs += 256, bs += 16) {
        const int8_t *sc = (const int8_t *)(w + 192);
        /* sum_g sc_g * 32 * bsum_g: the -32 offset of every q */
        __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)sc));
        __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(),
            _mm256_slli_epi32(_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *)bs)), 5));
        for (int h = 0; h < 2; h++) {
            const int8_t *x = xs + 128 * h;
            __m256i ql0 = _mm256_loadu_si256((const __m256i *)(w + 64 * h));
            __m256i ql1 = _mm256_loadu_si256((const __m256i *)(w + 64 * h + 32));
            __m256i qh = _mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h));
            __m256i q0 = _mm256_or_si256(_mm256_and_si256(ql0, m4), _mm256_slli_epi16(_mm256_and_si256(qh, m2), 4));
            __m256i q1 = _mm256_or_si256(_mm256_and_si256(ql1, m4),
                                         _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2), m2), 4));
            __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql0, 4), m4), _mm256_and_si256(qh, m2s));
            __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(ql1, 4), m4),
                                         _mm256_and_si256(_mm256_srli_epi16(qh, 2), m2s));
            __m256i p0 = _mm256_maddubs_epi16(q0, _mm256_loadu_si256((const __m256i *)x));
            __m256i p1 = _mm256_maddubs_epi16(q1, _mm256_loadu_si256((const __m256i *)(x + 32)));
            __m256i p2 = _mm256_maddubs_epi16(q2, _mm256_loadu_si256((const __m256i *)(x + 64)));
            __m256i p3 = _mm256_maddubs_epi16(q3, _mm256_loadu_si256((const __m256i *)(x + 96)));
            p0 = _mm256_madd_epi16(p0, sc_pair(sc + 8 * h));
            p1 = _mm256_madd_epi16(p1, sc_pair(sc + 8 * h + 2));
            p2 = _mm256_madd_epi16(p2, sc_pair(sc + 8 * h + 4));
            p3 = _mm256_madd_epi16(p3, sc_pair(sc + 8 * h + 6));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(_mm256_add_epi32(p0, p1), _mm256_add_epi32(p2, p3)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(f16(w + 208) * xd[b]), _mm256_cvtepi32_ps(sumi), acc);
    }
    return hsum_ps(acc);
}

const qdot_isa_table rlx_qdot_avx2 = {
    .name = "avx2",
    .quant_q8_32 = quant_q8_32,
    .quant_q8_256 = quant_q8_256,
    .dot = {[QD_Q8_0] = dot_q8_0, [QD_Q4_0] = dot_q4_0, [QD_Q4_K] = dot_q4_K, [QD_Q5_K] = dot_q5_K, [QD_Q6_K] = dot_q6_K},
    .gemm = rlx_qgemm_avx2,
    .gdot = rlx_qgemm_avx2_dots,
};

#endif
