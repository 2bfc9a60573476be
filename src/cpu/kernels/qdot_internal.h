/*
 * qdot_internal.h — what the qdot dispatcher (qdot.c) shares with its per-ISA
 * kernel files (qdot_avx2.c / qdot_avx512.c: quantizers and dots,
 * qgemm_avx2.c / qgemm_avx512.c: the multi-row gemm kernels, and the portable
 * reference in qdot.c): the table of one ISA's kernels, accessors for the
 * activation layouts documented in qdot.h and the block-layout helpers.
 */
#ifndef RLX_CPU_QDOT_INTERNAL_H
#define RLX_CPU_QDOT_INTERNAL_H

#include "cpu/kernels/qdot.h"
#include <string.h>

/* Weight types with kernels, as table indices. */
enum {
    QD_Q8_0, QD_Q4_0, QD_Q4_1, QD_Q5_0, QD_Q5_1,   /* 32-blocks, QDOT_ACT_Q8_32 */
    QD_Q2_K, QD_Q3_K, QD_Q4_K, QD_Q5_K, QD_Q6_K,   /* 256-blocks, QDOT_ACT_Q8_256 */
    QD_NTYPES
};
#define QD_FIRST_K QD_Q2_K

/* Bytes per block of a QD_ type (32 weights for the legacy types, 256 for the K-quants). */
static inline int qd_block_bytes(int T) {
    static const unsigned char bytes[QD_NTYPES] = {34, 18, 20, 22, 24, 84, 110, 144, 176, 210};
    return bytes[T];
}

typedef struct qdot_isa_table {
    const char   *name;
    qdot_quant_fn quant_q8_32, quant_q8_256;
    qdot_dot_fn   dot[QD_NTYPES];
    /* From the qgemm file of the ISA: QD_NTYPES entries each (NULL = none),
     * or NULL. gdot are dots made of the gemm kernel with one row each, for
     * the types without a hand-written dot above. */
    const qdot_gemm_fn *gemm;
    const qdot_dot_fn  *gdot;
    const qdot_gemm_packed_fn *gemm_packed;   /* qgemm_packed_*.c, or NULL */
    /* Where the entries this table leaves NULL come from (qdot_find resolves
     * them): the AVX-512 table has only some kernels and reuses the AVX2 rest. */
    const struct qdot_isa_table *base;
} qdot_isa_table;

/* ---------------------------------------------------- activation fields */

static inline float *qa_d(const void *xq, int64_t K) { return (float *)((char *)(uintptr_t)xq + K); }
/* QDOT_ACT_Q8_32 only. */
static inline float *qa_s(const void *xq, int64_t K) { return qa_d(xq, K) + K / 32; }
static inline float *qa_de(const void *xq, int64_t K) { return qa_d(xq, K) + K / 16; }
/* QDOT_ACT_Q8_256 only (K a multiple of 256). */
static inline int16_t *qa_bsums(const void *xq, int64_t K) {
    return (int16_t *)((char *)(uintptr_t)xq + K + 4 * (K / 256));
}
static inline float *qa_gs(const void *xq, int64_t K) { return (float *)(qa_bsums(xq, K) + K / 16); }
static inline float *qa_gs32(const void *xq, int64_t K) { return qa_gs(xq, K) + K / 16; }

/* The fields every quantizer derives from qs and d (shared so that the SIMD
 * quantizers write exactly what the portable one does). Plain float and int
 * code, no int8 products (see qdot_avx512.c on gcc 12 and those). */
static inline void qa_set_block_q8_32(void *xq, int64_t K, int64_t b, float d, int32_t qsum) {
    float *de = qa_de(xq, K) + 8 * b;
    qa_d(xq, K)[b] = d;
    qa_s(xq, K)[b] = d * (float)qsum;
    for (int l = 0; l < 8; l++) de[l] = d;
}
static inline void qa_fill_q8_256(void *xq, int64_t K) {
    const float *d = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    float *gs = qa_gs(xq, K), *gs32 = qa_gs32(xq, K);
    for (int64_t g = 0; g < K / 16; g++) gs[g] = d[g / 16] * (float)bs[g];
    for (int64_t s = 0; s < K / 32; s++) gs32[s] = d[s / 8] * (float)(bs[2 * s] + bs[2 * s + 1]);
}

/* ------------------------------------------------------- block helpers */

static inline uint16_t qd_ld_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t qd_ld_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* The 12 packed bytes of Q4_K/Q5_K 6-bit scales and mins (quant_k.c) to
 * out[0..7] = scales, out[8..15] = mins (llama.cpp's mask trick). */
static inline void qd_k4_scales(const uint8_t *s12, uint8_t out[16]) {
    const uint32_t km1 = 0x3f3f3f3fu, km2 = 0x0f0f0f0fu, km3 = 0x03030303u;
    uint32_t u[4];
    memcpy(u, s12, 12);
    u[3] = ((u[2] >> 4) & km2) | (((u[1] >> 6) & km3) << 4);
    uint32_t t = u[1] & km1;
    u[1] = (u[2] & km2) | (((u[0] >> 6) & km3) << 4);
    u[2] = t;
    u[0] &= km1;
    memcpy(out, u, 16);
}

/* The 12 packed bytes of Q3_K scales to 16 signed scales (quant_k.c:
 * low nibbles in bytes 0..7 then their high nibbles, top 2 bits of scale i at
 * bit 2*(i/4) of byte 8 + i%4; stored +32). Word arithmetic, as above. */
static inline void qd_k3_scales(const uint8_t *s12, int8_t out[16]) {
    uint32_t a[3], u[4];
    memcpy(a, s12, 12);
    const uint32_t m4 = 0x0f0f0f0fu, m2 = 0x03030303u;
    u[0] = (a[0] & m4) | ((a[2] & m2) << 4);
    u[1] = (a[1] & m4) | (((a[2] >> 2) & m2) << 4);
    u[2] = ((a[0] >> 4) & m4) | (((a[2] >> 4) & m2) << 4);
    u[3] = ((a[1] >> 4) & m4) | (((a[2] >> 6) & m2) << 4);
    uint8_t b[16];
    memcpy(b, u, 16);
    for (int i = 0; i < 16; i++) out[i] = (int8_t)(b[i] - 32);
}

#if defined(__AVX2__)
#include <immintrin.h>
/* qd_k4_scales in registers: reads 16 bytes at s12 (the 12 scale bytes and 4
 * more of the block); bytes 0..7 scales, 8..15 mins. */
static inline __m128i qd_k4_scales_v(const uint8_t *s12) {
    __m128i v = _mm_loadu_si128((const __m128i *)s12);
    __m128i a = _mm_shuffle_epi32(v, 0x98);   /* u0 u2 u1 u2 */
    __m128i b = _mm_shuffle_epi32(v, 0x50);   /* u0 u0 u1 u1 */
    __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)),
                               _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    __m128i hi = _mm_and_si128(_mm_srli_epi32(b, 6), _mm_setr_epi32(0, 0x03030303, 0, 0x03030303));
    return _mm_or_si128(lo, _mm_slli_epi32(hi, 4));
}
/* The mins term of Q4_K/Q5_K from sm = qd_k4_scales_v (mins in bytes
 * 8..15) and the block's 16 bsums: m_s * (bsums[2s] + bsums[2s+1]) as 8
 * int32, one vpmaddwd of each min (duplicated per 16-group) with the bsums. */
static inline __m256i qd_k4_mins_v(__m128i sm, const int16_t *bs) {
    __m256i m2 = _mm256_cvtepu8_epi16(_mm_unpackhi_epi8(sm, sm));   /* m0 m0 m1 m1 .. m7 m7 */
    return _mm256_madd_epi16(m2, _mm256_loadu_si256((const __m256i *)bs));
}
#if defined(__F16C__)
/* d and dmin of a Q4_K/Q5_K block (two f16 at w) times the activation
 * scale xd, in lanes 0 and 1: one vcvtph2ps for both. */
static inline __m128 qd_k4_dd(const uint8_t *w, float xd) {
    return _mm_mul_ps(_mm_cvtph_ps(_mm_cvtsi32_si128((int)qd_ld_u32(w))), _mm_set1_ps(xd));
}
#endif
/* qd_k3_scales in registers (16 signed bytes) of the Q3_K block at blk; reads
 * bytes 94..109 (the block is 110 bytes: nothing past it). */
static inline __m128i qd_k3_scales_v(const uint8_t *blk) {
    __m128i v = _mm_srli_si128(_mm_loadu_si128((const __m128i *)(blk + 94)), 2);
    __m128i lo = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(v, 0x44), _mm_setr_epi32(0, 0, 4, 4)), _mm_set1_epi8(15));
    __m128i hi = _mm_and_si128(_mm_srlv_epi32(_mm_shuffle_epi32(v, 0xaa), _mm_setr_epi32(0, 2, 4, 6)), _mm_set1_epi8(3));
    return _mm_sub_epi8(_mm_or_si128(lo, _mm_slli_epi32(hi, 4)), _mm_set1_epi8(32));
}
#endif

#if defined(__x86_64__)
#define RLX_QDOT_HAVE_X86 1
#define RLX_QDOT_HAVE_AVX512 1
extern const qdot_isa_table rlx_qdot_avx2;
extern const qdot_isa_table rlx_qdot_avx512;
extern const qdot_gemm_fn rlx_qgemm_avx2[QD_NTYPES], rlx_qgemm_avx512[QD_NTYPES];
extern const qdot_dot_fn rlx_qgemm_avx2_dots[QD_NTYPES], rlx_qgemm_avx512_dots[QD_NTYPES];
extern const qdot_gemm_packed_fn rlx_qgemm_packed_avx512[QD_NTYPES];
#endif

#endif
