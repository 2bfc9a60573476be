/*
 * qdot_avx512.c — AVX-512 (F/BW/VL + VNNI) hand-written dots of qdot.h for
 * Q8_0, Q4_0, Q4_K, Q5_K and Q6_K (contract in qdot_internal.h), and the ISA's
 * table. Built with -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c
 * -mavx2 and only called after qdot.c's run-time check. The other types' dots
 * are the one-row gemm tiles of qgemm_avx512.c (.gdot); the gemm kernels are
 * in qgemm_avx512.c (row tiles) and qgemm_packed_avx512.c (prefill panels);
 * the activation quantizers come from the AVX2 table (.base).
 *
 * The integer math is the AVX2 file's, only wider and with fewer steps:
 *   - Q4_K / Q6_K: 64 contiguous weights per zmm (the nibble planes of one
 *     32-byte group broadcast to both halves and shifted by a per-half count,
 *     vpsrlvw), one vpmaddubsw (unsigned weight x signed x -> int16 pairs)
 *     and one vpdpwssd that multiplies by the sub-block scale and adds into
 *     the int32 accumulator (madd + add of the AVX2 kernel in one). Q4_K and
 *     Q5_K (one loop) unpack scales and mins in registers, two blocks per
 *     step; Q5_K adds the 5th bit by a vptestmb of qh and a masked + 16.
 *   - Q4_0: two 32-blocks per zmm, vpdpbusd of the unsigned nibbles with x,
 *     one FMA per two blocks; the -8 offset is -8 * d_w * s[b] from the
 *     activation's block sums (qdot.h), a 4-lane FMA per four blocks.
 *   - Q8_0: the same with w + 128 (xor 0x80) and 128 for the signed bytes.
 * Every integer sum is exact (same bounds as AVX2: pairs <= 2*63*127 in
 * int16). The Q8_0 / Q4_0 offsets and the K-quant mins are float terms, so
 * results differ from the AVX2 and portable kernels in float rounding only
 * (the order of additions and, for Q8_0 / Q4_0, the offset taken in float:
 * tests/test_qdot.c checks 1e-5 also with one-signed activations, where
 * those terms are largest).
 *
 * No scalar integer loops here: gcc 12 auto-vectorizes
 * `(int8_t)w[j] * x[j]` in this file (built with -mavx512vnni) into a
 * vpdpbusd that reads w as *unsigned*, a wrong result (seen on the Q8_0 tail;
 * tests/test_qdot.c qdot_isas_agree_with_portable catches it). Tails use
 * intrinsics.
 */
#include "cpu/kernels/qdot_internal.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512VNNI__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

static inline float f16(const uint8_t *p) { return _cvtsh_ss(qd_ld_u16(p)); }

static inline int32_t hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* ------------------------------------------------------- legacy dots */

/* 32 bytes of two Q4_0 blocks' nibbles (16 + 16 bytes, 18 bytes apart) as
 * 64 unsigned bytes in element order: [q0 lo | q0 hi | q1 lo | q1 hi]. */
static inline __m512i q4_0_pair(const uint8_t *p0, const uint8_t *p1, __m512i shifts, __m512i m4) {
    __m256i a = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p0));
    __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)p1));
    __m512i q = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
    return _mm512_and_si512(_mm512_srlv_epi16(q, shifts), m4);
}

/* Lanes 0-7 = a, lanes 8-15 = b. */
static inline __m512 two_scales(float a, float b) {
    /* insertf64x4, not insertf32x8 (that one is AVX512DQ) */
    return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(_mm256_set1_ps(a))),
                                               _mm256_castps_pd(_mm256_set1_ps(b)), 1));
}

/* The f16 scales of 4 blocks `stride` bytes apart, as 4 floats. */
static inline __m128 f16x4(const uint8_t *w, int stride) {
    __m128i h = _mm_cvtsi32_si128(qd_ld_u16(w));
    h = _mm_insert_epi16(h, qd_ld_u16(w + stride), 1);
    h = _mm_insert_epi16(h, qd_ld_u16(w + 2 * stride), 2);
    h = _mm_insert_epi16(h, qd_ld_u16(w + 3 * stride), 3);
    return _mm_cvtph_ps(h);
}

/* vpermps indices spreading lanes 0/1 resp. 2/3 of 4 block scales over the
 * 8 int32 lanes each of their block's products in a zmm. */
static inline __m512i lanes_01(void) { return _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1); }
static inline __m512i lanes_23(void) { return _mm512_setr_epi32(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3); }

/* int32 sums of (q - 8) * x per 4 bytes: lanes 0-7 first block, 8-15 second. */
static inline __m512i q4_0_dot2(__m512i q, __m512i x, __m512i eight) {
    __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, x);
    return _mm512_sub_epi32(s, _mm512_dpbusd_epi32(_mm512_setzero_si512(), eight, x));
}

/* Four blocks per step as dot_q8_0 below: the -8 offset is -8 * dw_b * s[b]
 * (s[b] = dx_b * sum(qs) from the activation), one 4-lane FMA per 4 blocks
 * instead of a second vpdpbusd and a subtraction per two blocks. */
static float dot_q4_0(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K), *xsum = qa_s(xq, K);
    const __m512i m4 = _mm512_set1_epi8(15), eight = _mm512_set1_epi8(8);
    const __m512i shifts = _mm512_setr_epi64(0, 0, 0x0004000400040004LL, 0x0004000400040004LL, 0, 0,
                                             0x0004000400040004LL, 0x0004000400040004LL);
    const __m512i lo2 = lanes_01(), hi2 = lanes_23();
    int64_t nb = K / 32, b = 0;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    __m128 accs = _mm_setzero_ps();   /* sum of dw_b * s[b] */
    for (; b + 4 <= nb; b += 4, w += 72) {
        __m128 dw = f16x4(w, 18);
        accs = _mm_fmadd_ps(dw, _mm_loadu_ps(xsum + b), accs);
        __m512 sc = _mm512_castps128_ps512(_mm_mul_ps(dw, _mm_loadu_ps(xd + b)));
        __m512i p0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q4_0_pair(w + 2, w + 20, shifts, m4),
                                         _mm512_loadu_si512(xs + 32 * b));
        __m512i p1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q4_0_pair(w + 38, w + 56, shifts, m4),
                                         _mm512_loadu_si512(xs + 32 * b + 64));
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), _mm512_permutexvar_ps(lo2, sc), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), _mm512_permutexvar_ps(hi2, sc), acc1);
    }
    __m128 s4 = _mm_mul_ps(accs, _mm_set1_ps(8.0f));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
    for (; b + 2 <= nb; b += 2, w += 36) {
        __m512i p0 = q4_0_dot2(q4_0_pair(w + 2, w + 20, shifts, m4), _mm512_loadu_si512(xs + 32 * b), eight);
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), two_scales(f16(w) * xd[b], f16(w + 18) * xd[b + 1]), acc0);
    }
    float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) - _mm_cvtss_f32(s4);
    if (b < nb) {   /* one last block, in a ymm */
        __m128i raw = _mm_loadu_si128((const __m128i *)(w + 2));
        __m256i q = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(raw, 4), raw), _mm256_set1_epi8(15));
        __m256i x = _mm256_loadu_si256((const __m256i *)(xs + 32 * b));
        __m256i p = _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), q, x),
                                     _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_set1_epi8(8), x));
        sum += f16(w) * xd[b] * (float)hsum_epi32(p);
    }
    return sum;
}

/* int32 sums of w * x per 4 bytes for signed w: (w + 128) * x - 128 * x,
 * both through vpdpbusd (unsigned x signed), exact. */
static inline __m512i q8_0_dot2(__m512i q, __m512i x, __m512i bias) {
    __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(q, bias), x);
    return _mm512_sub_epi32(s, _mm512_dpbusd_epi32(_mm512_setzero_si512(), bias, x));
}

/* The 64 weight bytes of two Q8_0 blocks (32 + 32, 34 bytes apart). */
static inline __m512i q8_0_pair(const uint8_t *w) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *)(w + 2))),
                              _mm256_loadu_si256((const __m256i *)(w + 36)), 1);
}

/* Four blocks per step: the 128 * x half of the sign trick is not computed
 * per block, it is -128 * dw_b * s[b] with s[b] = dx_b * sum(qs) from the
 * activation (qdot.h), one 4-lane FMA per 4 blocks; the 4 weight scales
 * are converted in one vcvtph2ps and spread to the 8 lanes of their block
 * with vpermps (instead of 4 scalar conversions and 4 broadcasts). */
static float dot_q8_0(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K), *xsum = qa_s(xq, K);
    const __m512i bias = _mm512_set1_epi8((char)0x80);
    const __m512i lo2 = lanes_01(), hi2 = lanes_23();
    int64_t nb = K / 32, b = 0;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    __m128 accs = _mm_setzero_ps();   /* sum of dw_b * s[b] */
    for (; b + 4 <= nb; b += 4, w += 136) {
        __m128 dw = f16x4(w, 34);
        accs = _mm_fmadd_ps(dw, _mm_loadu_ps(xsum + b), accs);
        __m512 sc = _mm512_castps128_ps512(_mm_mul_ps(dw, _mm_loadu_ps(xd + b)));
        __m512i p0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(q8_0_pair(w), bias),
                                         _mm512_loadu_si512(xs + 32 * b));
        __m512i p1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_xor_si512(q8_0_pair(w + 68), bias),
                                         _mm512_loadu_si512(xs + 32 * b + 64));
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), _mm512_permutexvar_ps(lo2, sc), acc0);
        acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p1), _mm512_permutexvar_ps(hi2, sc), acc1);
    }
    __m128 s4 = _mm_mul_ps(accs, _mm_set1_ps(128.0f));
    s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
    for (; b + 2 <= nb; b += 2, w += 68) {
        __m512i p0 = q8_0_dot2(q8_0_pair(w), _mm512_loadu_si512(xs + 32 * b), bias);
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(p0), two_scales(f16(w) * xd[b], f16(w + 34) * xd[b + 1]), acc0);
    }
    float sum = _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1)) - _mm_cvtss_f32(s4);
    if (b < nb) {   /* one last block, in a ymm */
        const __m256i bias8 = _mm256_set1_epi8((char)0x80);
        __m256i x = _mm256_loadu_si256((const __m256i *)(xs + 32 * b));
        __m256i q = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(w + 2)), bias8);
        __m256i p = _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), q, x),
                                     _mm256_dpbusd_epi32(_mm256_setzero_si256(), bias8, x));
        sum += f16(w) * xd[b] * (float)hsum_epi32(p);
    }
    return sum;
}

/* --------------------------------------------------------- K-quant dots */

/* sum over the block's 8 sub-blocks s of scale_s * (q . x) as 16 int32
 * lanes, scale_s in int16 lanes 0..7 of sc16; q the 4-bit nibbles at qs
 * (Q4_K: block + 16, Q5_K: block + 48) and, for Q5_K, bit s of byte l of
 * the 32 bytes at qh the 5th bit of element l of sub-block s (NULL: Q4_K). */
static inline __attribute__((always_inline)) __m512i k45_sumi(const uint8_t *qs, const uint8_t *qh, const int8_t *xs,
                                                              __m512i sc16) {
    const __m512i m4 = _mm512_set1_epi8(15), sixteen = _mm512_set1_epi8(16);
    /* 16-bit shift counts: 0 for the low half (low nibbles), 4 for the high half */
    const __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(4), 1);
    /* vpermw indices: int16 lanes 0-15 take scale 2j, lanes 16-31 scale 2j+1 */
    const __m512i half = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(1), 1);
    /* Q5_K: qh in both halves; byte bit 1 << 2j selects sub-block 2j (low
     * half), 2 << 2j sub-block 2j+1 (high half). One vptestmb and a masked
     * byte add of 16 per 64 weights (q <= 15 there, so + 16 is | 16) instead
     * of the shift, and, shift, or of the gemm tile. */
    const __m512i hsel = _mm512_inserti64x4(_mm512_set1_epi8(1), _mm256_set1_epi8(2), 1);
    const __m512i hb = qh ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)qh)) : _mm512_setzero_si512();
    __m512i sumi0 = _mm512_setzero_si512(), sumi1 = _mm512_setzero_si512();
    for (int j = 0; j < 4; j += 2) {
        /* group j: elements 64j..64j+31 in the low nibbles, 64j+32..64j+63 in the high ones */
        __m512i q0 = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(qs + 32 * j)));
        __m512i q1 = _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(qs + 32 * j + 32)));
        q0 = _mm512_and_si512(_mm512_srlv_epi16(q0, shifts), m4);
        q1 = _mm512_and_si512(_mm512_srlv_epi16(q1, shifts), m4);
        if (qh) {
            q0 = _mm512_mask_add_epi8(q0, _mm512_test_epi8_mask(hb, _mm512_slli_epi16(hsel, 2 * j)), q0, sixteen);
            q1 = _mm512_mask_add_epi8(q1, _mm512_test_epi8_mask(hb, _mm512_slli_epi16(hsel, 2 * j + 2)), q1, sixteen);
        }
        __m512i p0 = _mm512_maddubs_epi16(q0, _mm512_loadu_si512(xs + 64 * j));
        __m512i p1 = _mm512_maddubs_epi16(q1, _mm512_loadu_si512(xs + 64 * j + 64));
        __m512i i0 = _mm512_add_epi16(half, _mm512_set1_epi16((short)(2 * j)));
        sumi0 = _mm512_dpwssd_epi32(sumi0, p0, _mm512_permutexvar_epi16(i0, sc16));
        sumi1 = _mm512_dpwssd_epi32(sumi1, p1, _mm512_permutexvar_epi16(_mm512_add_epi16(i0, _mm512_set1_epi16(2)), sc16));
    }
    return _mm512_add_epi32(sumi0, sumi1);
}

/* qd_k4_scales_v for two Q4_K / Q5_K blocks `bytes` apart: lane 0 block 0,
 * lane 1 block 1 (each: bytes 0..7 scales, 8..15 mins). */
static inline __m256i k4_scales_v2(const uint8_t *w, int bytes) {
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(w + 4))),
                                        _mm_loadu_si128((const __m128i *)(w + bytes + 4)), 1);
    __m256i a = _mm256_shuffle_epi32(v, 0x98);   /* u0 u2 u1 u2 per lane */
    __m256i b = _mm256_shuffle_epi32(v, 0x50);   /* u0 u0 u1 u1 */
    __m256i lo = _mm256_and_si256(_mm256_srlv_epi32(a, _mm256_setr_epi32(0, 0, 0, 4, 0, 0, 0, 4)),
                                  _mm256_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f,
                                                    0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    __m256i hi = _mm256_and_si256(_mm256_srli_epi32(b, 6), _mm256_setr_epi32(0, 0x03030303, 0, 0x03030303,
                                                                              0, 0x03030303, 0, 0x03030303));
    return _mm256_or_si256(lo, _mm256_slli_epi32(hi, 4));
}

/* Q4_K (bytes 144) and Q5_K (176: the nibbles start at 48, qh at 16).
 * Everything per block in vector registers (no scalar unpack, no store to
 * load round trip: 4-byte stores read back as 8-byte loads would stall
 * store forwarding), and two blocks per step share the scale
 * unpack, the f16 conversion of d / dmin and the mins term (one zmm each). */
static inline __attribute__((always_inline)) float k45_dot(int bytes, int64_t K, const uint8_t *w, const void *xq) {
    const int q5 = bytes == 176, qs = q5 ? 48 : 16;
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    const __m512i dmin_idx = _mm512_setr_epi32(1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3);
    /* acc: the d terms, accm: the dmin * mins terms (subtracted at the end) */
    __m512 acc = _mm512_setzero_ps(), accm = _mm512_setzero_ps();
    int64_t nb = K / 256, b = 0;
    for (; b + 2 <= nb; b += 2, w += 2 * bytes, xs += 512, bs += 32) {
        __m256i sm = k4_scales_v2(w, bytes);
        /* f16 d, dmin of both blocks -> [d0, dmin0, d1, dmin1] * [xd0, xd0, xd1, xd1] */
        __m128i h = _mm_insert_epi32(_mm_cvtsi32_si128((int)qd_ld_u32(w)), (int)qd_ld_u32(w + bytes), 1);
        __m128 x2 = _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(xd + b)));   /* xd[b], xd[b + 1] */
        __m128 dd = _mm_mul_ps(_mm_cvtph_ps(h), _mm_unpacklo_ps(x2, x2));
        __m512 dd5 = _mm512_castps128_ps512(dd);
        /* mins: m_s * (bsums[2s] + bsums[2s+1]), 8 int32 per block */
        __m512i mt = _mm512_madd_epi16(_mm512_cvtepu8_epi16(_mm256_unpackhi_epi8(sm, sm)), _mm512_loadu_si512(bs));
        accm = _mm512_fmadd_ps(_mm512_permutexvar_ps(dmin_idx, dd5), _mm512_cvtepi32_ps(mt), accm);
        __m512i s0 = k45_sumi(w + qs, q5 ? w + 16 : NULL, xs,
                              _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm256_castsi256_si128(sm))));
        __m512i s1 = k45_sumi(w + bytes + qs, q5 ? w + bytes + 16 : NULL, xs + 256,
                              _mm512_castsi256_si512(_mm256_cvtepu8_epi16(_mm256_extracti128_si256(sm, 1))));
        acc = _mm512_fmadd_ps(_mm512_broadcastss_ps(dd), _mm512_cvtepi32_ps(s0), acc);
        acc = _mm512_fmadd_ps(_mm512_broadcastss_ps(_mm_movehl_ps(dd, dd)), _mm512_cvtepi32_ps(s1), acc);
    }
    if (b < nb) {   /* an odd last block */
        __m128i sm = qd_k4_scales_v(w + 4);   /* bytes 0..7 scales, 8..15 mins */
        __m128 dd = qd_k4_dd(w, xd[b]);       /* d * xd, dmin * xd */
        __m256 m = _mm256_mul_ps(_mm256_broadcastss_ps(_mm_movehdup_ps(dd)), _mm256_cvtepi32_ps(qd_k4_mins_v(sm, bs)));
        accm = _mm512_add_ps(accm, _mm512_zextps256_ps512(m));
        __m512i s0 = k45_sumi(w + qs, q5 ? w + 16 : NULL, xs, _mm512_castsi128_si512(_mm_cvtepu8_epi16(sm)));
        acc = _mm512_fmadd_ps(_mm512_broadcastss_ps(dd), _mm512_cvtepi32_ps(s0), acc);
    }
    return _mm512_reduce_add_ps(_mm512_sub_ps(acc, accm));
}

static float dot_q4_K(int64_t K, const uint8_t *w, const void *xq) { return k45_dot(144, K, w, xq); }
static float dot_q5_K(int64_t K, const uint8_t *w, const void *xq) { return k45_dot(176, K, w, xq); }

static float dot_q6_K(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    const __m512i m4 = _mm512_set1_epi8(15), m2s = _mm512_set1_epi8(0x30);
    /* 16-bit shift counts of the broadcast qh: 0 for elements 0..31 of a half, 2 for 32..63 */
    const __m512i shifts = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_set1_epi16(2), 1);
    /* int16 lane i of a product of 64 elements belongs to 16-group i / 8 */
    const __m512i gidx = _mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
                                          1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i four = _mm512_set1_epi16(4);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < K / 256; b++, w += 210, xs += 256, bs += 16) {
        /* sc16 int16 lanes 0..15 = the 16 scales (upper half unused) */
        __m512i sc16 = _mm512_castsi256_si512(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 192))));
        /* sum_g sc_g * 32 * bsum_g: the -32 offset of every q */
        __m256i off = _mm256_slli_epi32(_mm256_madd_epi16(_mm512_castsi512_si256(sc16),
                                                           _mm256_loadu_si256((const __m256i *)bs)), 5);
        __m512i sumi = _mm512_inserti64x4(_mm512_setzero_si512(), _mm256_sub_epi32(_mm256_setzero_si256(), off), 0);
        for (int h = 0; h < 2; h++) {
            const int8_t *x = xs + 128 * h;
            __m512i ql = _mm512_loadu_si512(w + 64 * h);   /* ql0 | ql1 */
            __m512i qh = _mm512_srlv_epi16(_mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w + 128 + 32 * h))),
                                           shifts);   /* qh | qh >> 2 */
            /* elements 128h + 0..63 and 128h + 64..127, each contiguous */
            __m512i qa = _mm512_or_si512(_mm512_and_si512(ql, m4), _mm512_and_si512(_mm512_slli_epi16(qh, 4), m2s));
            __m512i qb = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(ql, 4), m4), _mm512_and_si512(qh, m2s));
            __m512i pa = _mm512_maddubs_epi16(qa, _mm512_loadu_si512(x));
            __m512i pb = _mm512_maddubs_epi16(qb, _mm512_loadu_si512(x + 64));
            __m512i ia = _mm512_add_epi16(gidx, _mm512_set1_epi16((short)(8 * h)));
            sumi = _mm512_dpwssd_epi32(sumi, pa, _mm512_permutexvar_epi16(ia, sc16));
            sumi = _mm512_dpwssd_epi32(sumi, pb, _mm512_permutexvar_epi16(_mm512_add_epi16(ia, four), sc16));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(f16(w + 208) * xd[b]), _mm512_cvtepi32_ps(sumi), acc);
    }
    return _mm512_reduce_add_ps(acc);
}

const qdot_isa_table rlx_qdot_avx512 = {
    .name = "avx512",
    .base = &rlx_qdot_avx2,
    .dot = {[QD_Q8_0] = dot_q8_0, [QD_Q4_0] = dot_q4_0, [QD_Q4_K] = dot_q4_K, [QD_Q5_K] = dot_q5_K,
            [QD_Q6_K] = dot_q6_K},
    .gemm = rlx_qgemm_avx512,
    .gdot = rlx_qgemm_avx512_dots,
    .gemm_packed = rlx_qgemm_packed_avx512,
};

#endif
