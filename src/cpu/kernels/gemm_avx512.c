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
#include "cpu/kernels/gemm_transpose8.h"

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
