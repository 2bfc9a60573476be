/*
 * gemm_avx512.c — the AVX-512 SGEMM micro-kernel (see gemm_internal.h for the
 * contract). Built with -mavx512f -mavx512vl -mavx512dq -mfma -mavx2 and only
 * called after the driver's run-time check for avx512f.
 *
 * Tile 8 x 48: 24 zmm accumulators, 3 zmm of B per k and A broadcast straight
 * from memory ({1to16} operands), which fits the 32 zmm registers with no
 * spills. Per k it issues 24 FMAs against 11 loads, so two FMA pipes stay fed
 * from two load ports. 8 rows divide BERT's 128-token M evenly, 48 columns
 * divide 768 and 3072.
 */
#include "cpu/kernels/gemm_internal.h"

#if defined(__x86_64__) && defined(__AVX512F__) && defined(__FMA__)
#include <immintrin.h>

#define MR 8
#define NV 3
#define NR (NV * 16)

#if defined(__clang__)
#define UNROLL_FULL _Pragma("clang loop unroll(full)")
#else
#define UNROLL_FULL _Pragma("GCC unroll 16")
#endif

static void ukernel_8x48(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                         int load_c) {
    __m512 acc[MR][NV];
    UNROLL_FULL for (int i = 0; i < MR; i++) {
        /* A 48-float row spans 3 or 4 cache lines; fetch them all while the
         * K loop runs, so the final C update does not wait on memory. */
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + 16), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + 32), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + 47), _MM_HINT_T0);
        UNROLL_FULL for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();
    }
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_load_ps(b + 0);
        __m512 b1 = _mm512_load_ps(b + 16);
        __m512 b2 = _mm512_load_ps(b + 32);
        UNROLL_FULL for (int i = 0; i < MR; i++) {
            __m512 ai = _mm512_set1_ps(a[i]);
            acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
            acc[i][2] = _mm512_fmadd_ps(ai, b2, acc[i][2]);
        }
        a += MR;
        b += NR;
    }
    if (load_c) {
        UNROLL_FULL for (int i = 0; i < MR; i++)
            UNROLL_FULL for (int v = 0; v < NV; v++) {
                float *p = c + i * ldc + v * 16;
                _mm512_storeu_ps(p, _mm512_add_ps(_mm512_loadu_ps(p), acc[i][v]));
            }
    } else {
        UNROLL_FULL for (int i = 0; i < MR; i++)
            UNROLL_FULL for (int v = 0; v < NV; v++) _mm512_storeu_ps(c + i * ldc + v * 16, acc[i][v]);
    }
}

/* 8x8 transpose of rows r[0..7] (8 floats each) into columns, in registers. */
static inline void transpose8(__m256 r[8]) {
    __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* dst[k*ds + j] = src[j*ld + k] for j < 8, k < kc: 8 rows into 8-wide columns. */
static inline void pack_8rows(float *dst, int64_t ds, const float *src, int64_t ld, int64_t kc) {
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 r[8];
        for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_ps(src + j * ld + k);
        transpose8(r);
        for (int kk = 0; kk < 8; kk++) _mm256_storeu_ps(dst + (k + kk) * ds, r[kk]);
    }
    for (; k < kc; k++)
        for (int j = 0; j < 8; j++) dst[k * ds + j] = src[j * ld + k];
}

static void pack_a_8(float *dst, const float *A, int64_t lda, int64_t kc) {
    pack_8rows(dst, MR, A, lda, kc);
}

static void pack_bt_48(float *dst, const float *Bt, int64_t ldb, int64_t kc) {
    for (int jb = 0; jb < NR; jb += 8) pack_8rows(dst + jb, NR, Bt + jb * ldb, ldb, kc);
}

static void pack_b_48(float *dst, const float *B, int64_t ldb, int64_t kc) {
    for (int64_t k = 0; k < kc; k++) {
        const float *s = B + k * ldb;
        float *d = dst + k * NR;
        _mm512_store_ps(d, _mm512_loadu_ps(s));
        _mm512_store_ps(d + 16, _mm512_loadu_ps(s + 16));
        _mm512_store_ps(d + 32, _mm512_loadu_ps(s + 32));
    }
}

const gemm_ukernel rlx_gemm_ukernel_avx512 = {
    "avx512", MR, NR, ukernel_8x48, pack_a_8, pack_b_48, pack_bt_48, NULL,
};

#endif
