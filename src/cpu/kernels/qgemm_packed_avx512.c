/*
 * qgemm_packed_avx512.c — the prefill gemm of qdot.h on AVX-512 VNNI, for
 * many x rows (qdot_gemm uses it from qdot_kernel.packed_min_rows on): 16 weight
 * rows are repacked once per call into a panel whose zmm lanes are the 16
 * rows, then every x row streams past the panel.
 *
 * Panel layout (scratch, qdot_gemm_scratch_bytes): per group g of G weights
 * (G = 32: legacy blocks, Q4_K/Q5_K sub-blocks; G = 16: Q2_K Q3_K Q6_K), a
 * record of
 *   S[16] f32       lane n: the scale of row n's group (d, or d * sc_g)
 *   side[16] f32    lane n: what multiplies the x group's scaled sum
 *                   (-off * S, a min -dmin * m_g, or Q4_1/Q5_1's m)
 *   q[G/4][16][4]   u8: step t, lane n = row n's unsigned q of elements 4t..4t+3
 * so one vpdpbusd of a q step with the 4 x bytes broadcast to all lanes adds
 * 64 products into 16 per-row int32 sums, and the group's float work is one
 * cvt + FMA per 16 rows (against one per 32 weights of one row in the row
 * tiles of qgemm_avx512.c). Outputs come out as 16 contiguous floats.
 *
 * Per x row and group: acc_i = sum_t dpbusd(q_t, x quad t)  (exact integers,
 * <= 255 * 127 * 4 per lane and step), then
 *   legacy:   acc += cvt(acc_i) * (S * dx_b) + side * s_b
 *   K-quants: t += cvt(acc_i) * S; acc += side * gs_g; per super-block
 *             acc += t * dx_b
 * with s / gs the x groups' d * sum(qs) (qdot.h). Up to 8 x rows at a time,
 * one int32 chain each (8 dpbusd chains in flight; 4 rows with 2 chains
 * each measured ~15% slower). Repacking a panel (unpack, a 16 x 16 dword
 * transpose per 64 weights, the scales transposed the same way) costs
 * about 14 rows of this work; qdot_gemm keeps the row tiles for fewer rows.
 */
#include "cpu/kernels/qgemm_avx512.h"

#if defined(RLX_QGEMM_AVX512)

#define PMR 8   /* x rows per micro-tile (one int32 chain each) */

INLINE int grp(int T) { return T == QD_Q2_K || T == QD_Q3_K || T == QD_Q6_K ? 16 : 32; }
INLINE size_t rec_bytes(int T) { return 128 + 16 * (size_t)grp(T); }

/* 16 x 16 dwords: v[r] holds row r; afterwards v[c] holds column c. */
INLINE void transpose16(__m512i v[16]) {
    __m512i t[16], s[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
    }
    /* per 128-bit lane L, s[4q + c] = rows 4q..4q+3 at column 4L + c */
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
        s[4 * q + 0] = _mm512_unpacklo_epi64(t[4 * q], t[4 * q + 2]);
        s[4 * q + 1] = _mm512_unpackhi_epi64(t[4 * q], t[4 * q + 2]);
        s[4 * q + 2] = _mm512_unpacklo_epi64(t[4 * q + 1], t[4 * q + 3]);
        s[4 * q + 3] = _mm512_unpackhi_epi64(t[4 * q + 1], t[4 * q + 3]);
    }
    /* 4 x 4 transpose of 128-bit lanes, per column c within the lanes */
#pragma GCC unroll 4
    for (int c = 0; c < 4; c++) {
        __m512i u0 = _mm512_shuffle_i32x4(s[c], s[4 + c], 0x44), u1 = _mm512_shuffle_i32x4(s[c], s[4 + c], 0xee);
        __m512i u2 = _mm512_shuffle_i32x4(s[8 + c], s[12 + c], 0x44), u3 = _mm512_shuffle_i32x4(s[8 + c], s[12 + c], 0xee);
        v[c] = _mm512_shuffle_i32x4(u0, u2, 0x88);
        v[4 + c] = _mm512_shuffle_i32x4(u0, u2, 0xdd);
        v[8 + c] = _mm512_shuffle_i32x4(u1, u3, 0x88);
        v[12 + c] = _mm512_shuffle_i32x4(u1, u3, 0xdd);
    }
}

/* Repacks weight rows [0, nrow) (nrow <= 16, ws bytes apart) into panel p;
 * lanes from nrow on get zero weights and scales. */
INLINE void pack(int T, int64_t K, const uint8_t *w, size_t ws, int nrow, uint8_t *p) {
    const int G = grp(T);
    const size_t rb = rec_bytes(T);
    const int64_t ng = K / G;
    if (nrow < 16) memset(p, 0, (size_t)ng * rb);
    /* scales: per 16 groups, one vector per row (lanes = groups), transposed
     * to one per group (lanes = rows) */
    __m512i sv[16], dv[16];
    if (T < QD_FIRST_K) {
        const int bytes = qd_block_bytes(T);
        const __m512i offs = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                                _mm512_set1_epi32(bytes));
        for (int64_t g0 = 0; g0 < ng; g0 += 16) {
            const int r = ng - g0 < 16 ? (int)(ng - g0) : 16;
            const __mmask16 rm = (__mmask16)((1u << r) - 1);
#pragma GCC unroll 16
            for (int n = 0; n < 16; n++) {
                if (n >= nrow) { sv[n] = dv[n] = _mm512_setzero_si512(); continue; }
                /* d (low 16 bits) and m (high) of blocks g0 .. g0+r-1 */
                __m512i dm = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), rm, offs, w + (size_t)n * ws + g0 * bytes, 1);
                __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dm));
                __m512 side = T == QD_Q4_1 || T == QD_Q5_1 ? _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(dm, 16)))
                                                           : _mm512_mul_ps(d, _mm512_set1_ps(-leg_off(T)));
                sv[n] = _mm512_castps_si512(d);
                dv[n] = _mm512_castps_si512(side);
            }
            transpose16(sv);
            transpose16(dv);
            for (int j = 0; j < r; j++) {
                _mm512_storeu_si512(p + (size_t)(g0 + j) * rb, sv[j]);
                _mm512_storeu_si512(p + (size_t)(g0 + j) * rb + 64, dv[j]);
            }
        }
    } else {
        for (int64_t b = 0; b < K / 256; b++) {
#pragma GCC unroll 16
            for (int n = 0; n < 16; n++) {
                if (n >= nrow) { sv[n] = dv[n] = _mm512_setzero_si512(); continue; }
                float D;
                __m512i sc;
                __m512 sd;
                k_prep(T, w + (size_t)n * ws + b * qd_block_bytes(T), &D, &sc, &sd);
                sv[n] = _mm512_castps_si512(
                    _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(_mm512_castsi512_si256(sc))), _mm512_set1_ps(D)));
                dv[n] = _mm512_castps_si512(sd);
            }
            transpose16(sv);
            transpose16(dv);
            /* lanes are 16-groups; G = 32 takes every other one (the pairs are equal) */
            for (int j = 0; j < 256 / G; j++) {
                uint8_t *rec = p + (size_t)(b * (256 / G) + j) * rb;
                _mm512_storeu_si512(rec, sv[j * G / 16]);
                _mm512_storeu_si512(rec + 64, dv[j * G / 16]);
            }
        }
    }
    /* q: 64 elements of the 16 rows at a time, transposed to steps x lanes */
    const int64_t nchunk = (K + 63) / 64;
    for (int64_t c = 0; c < nchunk; c++) {
        __m512i v[16];
        const bool two = 64 * c + 32 < K;   /* legacy: K may end on an odd block */
#pragma GCC unroll 16
        for (int n = 0; n < 16; n++) {
            if (n >= nrow) { v[n] = _mm512_setzero_si512(); continue; }
            const uint8_t *row = w + (size_t)n * ws;
            if (T < QD_FIRST_K) v[n] = leg_unpack(T, row + 2 * c * qd_block_bytes(T), row + (2 * c + 1) * qd_block_bytes(T), two);
            else v[n] = k_unpack(T, row + (c / 4) * qd_block_bytes(T), (int)(c % 4));
        }
        transpose16(v);
        const int steps = two || T >= QD_FIRST_K ? 16 : 8;
        for (int t = 0; t < steps; t++) {
            int64_t e = 64 * c + 4 * t;
            _mm512_storeu_si512(p + (size_t)(e / G) * rb + 128 + 64 * (size_t)((e % G) / 4), v[t]);
        }
    }
}

/* mr x rows against the panel: out[m * ldo + n] for the lanes n in `lanes`. */
INLINE void micro(int T, int mr, int64_t K, const uint8_t *p, const uint8_t *xq, size_t xs, float *out, int64_t ldo,
                  __mmask16 lanes) {
    const int G = grp(T), steps = G / 4;
    const size_t rb = rec_bytes(T);
    const int8_t *x[PMR];
    const float *dx[PMR], *xs_sum[PMR];
#pragma GCC unroll 8
    for (int m = 0; m < mr; m++) {
        x[m] = (const int8_t *)(xq + (size_t)m * xs);
        dx[m] = qa_d(x[m], K);
        xs_sum[m] = T < QD_FIRST_K ? qa_s(x[m], K) : G == 16 ? qa_gs(x[m], K) : qa_gs32(x[m], K);
    }
    __m512 acc[PMR], tf[PMR];
#pragma GCC unroll 8
    for (int m = 0; m < mr; m++) acc[m] = tf[m] = _mm512_setzero_ps();
    const int64_t ng = K / G, per_dx = T < QD_FIRST_K ? 1 : 256 / G;
    for (int64_t g = 0; g < ng; g++, p += rb) {
        const __m512 S = _mm512_loadu_ps(p), side = _mm512_loadu_ps(p + 64);
        __m512i a0[PMR];
#pragma GCC unroll 8
        for (int m = 0; m < mr; m++) a0[m] = _mm512_setzero_si512();
#pragma GCC unroll 8
        for (int t = 0; t < steps; t++) {
            const __m512i q0 = _mm512_loadu_si512(p + 128 + 64 * t);
#pragma GCC unroll 8
            for (int m = 0; m < mr; m++)
                a0[m] = _mm512_dpbusd_epi32(a0[m], q0, _mm512_set1_epi32((int)qd_ld_u32((const uint8_t *)x[m] + g * G + 4 * t)));
        }
#pragma GCC unroll 8
        for (int m = 0; m < mr; m++) {
            __m512 f = _mm512_cvtepi32_ps(a0[m]);
            if (T < QD_FIRST_K) acc[m] = _mm512_fmadd_ps(f, _mm512_mul_ps(S, _mm512_set1_ps(dx[m][g])), acc[m]);
            else tf[m] = _mm512_fmadd_ps(f, S, tf[m]);
            acc[m] = _mm512_fmadd_ps(side, _mm512_set1_ps(xs_sum[m][g]), acc[m]);
        }
        if (T >= QD_FIRST_K && (g + 1) % per_dx == 0) {
#pragma GCC unroll 8
            for (int m = 0; m < mr; m++) {
                acc[m] = _mm512_fmadd_ps(tf[m], _mm512_set1_ps(dx[m][g / per_dx]), acc[m]);
                tf[m] = _mm512_setzero_ps();
            }
        }
    }
#pragma GCC unroll 8
    for (int m = 0; m < mr; m++) _mm512_mask_storeu_ps(out + m * ldo, lanes, acc[m]);
}

INLINE void gemm_packed(int T, int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs,
                        int64_t nx, float *out, int64_t ldo, void *scratch) {
    uint8_t *p = scratch;
    for (int64_t n0 = 0; n0 < nw; n0 += 16) {
        const int nr = nw - n0 < 16 ? (int)(nw - n0) : 16;
        pack(T, K, w + (size_t)n0 * ws, ws, nr, p);
        const __mmask16 lanes = (__mmask16)((1u << nr) - 1);
        int64_t m = 0;
        for (; m + PMR <= nx; m += PMR) micro(T, PMR, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes);
        switch (nx - m) {
        case 7: micro(T, 7, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes); break;
        case 6: micro(T, 6, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes); break;
        case 5: micro(T, 5, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes); break;
        case 4: micro(T, 4, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes); break;
        case 3: micro(T, 3, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes); break;
        case 2: micro(T, 2, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes); break;
        case 1: micro(T, 1, K, p, xq + (size_t)m * xs, xs, out + m * ldo + n0, ldo, lanes); break;
        default: break;
        }
    }
}

#define ENTRY(T, name)                                                                                             \
    static void gemmp_##name(int64_t K, const uint8_t *w, size_t ws, int64_t nw, const uint8_t *xq, size_t xs,      \
                             int64_t nx, float *out, int64_t ldo, void *scratch) {                                \
        gemm_packed(T, K, w, ws, nw, xq, xs, nx, out, ldo, scratch);                                               \
    }
ENTRY(QD_Q8_0, q8_0)
ENTRY(QD_Q4_0, q4_0)
ENTRY(QD_Q4_1, q4_1)
ENTRY(QD_Q5_0, q5_0)
ENTRY(QD_Q5_1, q5_1)
ENTRY(QD_Q2_K, q2_K)
ENTRY(QD_Q3_K, q3_K)
ENTRY(QD_Q4_K, q4_K)
ENTRY(QD_Q5_K, q5_K)
ENTRY(QD_Q6_K, q6_K)

const qdot_gemm_packed_fn rlx_qgemm_packed_avx512[QD_NTYPES] = {
    gemmp_q8_0, gemmp_q4_0, gemmp_q4_1, gemmp_q5_0, gemmp_q5_1, gemmp_q2_K, gemmp_q3_K, gemmp_q4_K, gemmp_q5_K, gemmp_q6_K,
};

#endif
