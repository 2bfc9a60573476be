/*
 * qgemm_avx512.c — AVX-512 (F/BW/VL + VNNI) gemm kernels of qdot.h for every
 * type with a kernel: out[m, n] for up to 4 quantized x rows against one
 * weight row at a time. Each weight block is unpacked to unsigned bytes once
 * and multiplied with the 4 x rows held in registers, so unpacking costs a
 * quarter of what 4 separate dots would spend. Also the one-row dots of the
 * types without a hand-written one in qdot_avx512.c (rlx_qgemm_avx512_dots).
 * Built with -mavx512f -mavx512bw -mavx512vl -mavx512vnni -mfma -mf16c -mavx2
 * and only called after qdot.c's run-time check.
 *
 * Every type is x = D * (q - off) + M with unsigned q (qdot.c); the kernels
 * compute the integer part sum q * qs exactly and fold the rest in with the
 * sums of qs that come with the activations (qdot.h: s, gs):
 *   - legacy 32-blocks, two per zmm: vpdpbusd (unsigned q x signed qs) into
 *     int32 lanes 0-7 / 8-15, then one FMA per row with the block scales
 *     dw * dx per lane (dx from the activations' per-lane copy `de`).
 *     Q8_0 is made unsigned as q + 128 (xor 0x80). The offsets and mins are
 *     one FMA per 16 blocks and row: (-off * dw + m) . s.
 *   - K-quants, 64 weights per zmm: vpmaddubsw (q x qs -> int16 pairs, no
 *     saturation: q <= 63, |qs| <= 127) then vpdpwssd with the 16-group scales
 *     spread by vpermw; one FMA per 256 weights and row with d * dx, and one
 *     with the per-group offsets / mins (-dmin * m_g or -off * d * sc_g) . gs.
 *
 * No scalar int8 product loops here (gcc 12 turns them into vpdpbusd with the
 * wrong signedness when built with -mavx512vnni; see qdot_avx512.c).
 */
#include "cpu/kernels/qgemm_avx512.h"

#if defined(RLX_QGEMM_AVX512)

#define MR 4   /* x rows per tile */

/* One tile: mr x rows (xq, x_stride apart) against nw weight rows. */
INLINE void leg_tile(int T, int mr, int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs,
                     float *out, int64_t ldo) {
    const int64_t nb = K / 32;
    const int bytes = qd_block_bytes(T);
    const bool has_m = T == QD_Q4_1 || T == QD_Q5_1;
    const int8_t *x[MR];
    const float *de[MR], *s[MR];
#pragma GCC unroll 4
    for (int m = 0; m < mr; m++) {
        x[m] = (const int8_t *)(xq + (size_t)m * xs);
        de[m] = qa_de(x[m], K);
        s[m] = qa_s(x[m], K);
    }
    const __m512i step = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
    const __m512i offs = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(bytes));
    for (int64_t n = 0; n < nw; n++, w += ws) {
        __m512 acc[MR];
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) acc[m] = _mm512_setzero_ps();
        for (int64_t g = 0; g < nb; g += 16) {
            const int r = nb - g < 16 ? (int)(nb - g) : 16;
            const uint8_t *blk = w + g * bytes;
            const __mmask16 rm = (__mmask16)((1u << r) - 1);
            /* d (low 16 bits) and m (high) of the r blocks */
            __m512i dm = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), rm, offs, blk, 1);
            __m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dm));
            __m512 side = _mm512_mul_ps(dw, _mm512_set1_ps(-leg_off(T)));
            if (has_m) side = _mm512_add_ps(side, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dm, 16))));
#pragma GCC unroll 4
            for (int m = 0; m < mr; m++) acc[m] = _mm512_fmadd_ps(side, _mm512_maskz_loadu_ps(rm, s[m] + g), acc[m]);
            for (int p = 0; p < r; p += 2) {
                const bool two = p + 1 < r;
                __m512i q = leg_unpack(T, blk + p * bytes, blk + (p + 1) * bytes, two);
                __m512 dwp = _mm512_permutexvar_ps(_mm512_add_epi32(_mm512_set1_epi32(p), step), dw);
                const __mmask16 km = two ? 0xffff : 0x00ff;
                const int64_t e = 32 * (g + p);
#pragma GCC unroll 4
                for (int m = 0; m < mr; m++) {
                    __m512i i = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q, _mm512_loadu_si512(x[m] + e));
                    __m512 sc = _mm512_mul_ps(dwp, _mm512_maskz_loadu_ps(km, de[m] + e / 4));
                    acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), sc, acc[m]);
                }
            }
        }
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) out[m * ldo + n] = _mm512_reduce_add_ps(acc[m]);
    }
}

/* --------------------------------------------------------- K-quants */

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
    /* int16 lane i of a 64-element product belongs to group i / 8 of the chunk */
    const __m512i gidx = _mm512_set_epi16(3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2,
                                          1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
    for (int64_t n = 0; n < nw; n++, w += ws) {
        __m512 acc[MR];
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) acc[m] = _mm512_setzero_ps();
        const uint8_t *blk = w;
        for (int64_t b = 0; b < nb; b++, blk += qd_block_bytes(T)) {
            float D;
            __m512i sc;
            __m512 side;
            k_prep(T, blk, &D, &sc, &side);
            __m512i sumi[MR];
#pragma GCC unroll 4
            for (int m = 0; m < mr; m++) sumi[m] = _mm512_setzero_si512();
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                __m512i q = k_unpack(T, blk, c);
                __m512i scv = _mm512_permutexvar_epi16(_mm512_add_epi16(gidx, _mm512_set1_epi16((short)(4 * c))), sc);
#pragma GCC unroll 4
                for (int m = 0; m < mr; m++)
                    sumi[m] = _mm512_dpwssd_epi32(sumi[m], _mm512_maddubs_epi16(q, _mm512_loadu_si512(x[m] + 256 * b + 64 * c)), scv);
            }
            const __m512 dv = _mm512_set1_ps(D);
#pragma GCC unroll 4
            for (int m = 0; m < mr; m++) {
                acc[m] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi[m]), _mm512_mul_ps(dv, _mm512_set1_ps(xd[m][b])), acc[m]);
                acc[m] = _mm512_fmadd_ps(side, _mm512_loadu_ps(gs[m] + 16 * b), acc[m]);
            }
        }
#pragma GCC unroll 4
        for (int m = 0; m < mr; m++) out[m * ldo + n] = _mm512_reduce_add_ps(acc[m]);
    }
}

/* ------------------------------------------------------------ entries */

#define QGEMM_TABLE rlx_qgemm_avx512
#define QGEMM_DOTS rlx_qgemm_avx512_dots
#include "cpu/kernels/qgemm_entries.h"

#endif
