/*
 * gemm_avx2.c — the AVX2/FMA SGEMM micro-kernel (contract in gemm_internal.h).
 * Built with -mavx2 -mfma and only called after the driver's run-time check.
 *
 * Tile 6 x 16: 12 ymm accumulators + 2 ymm of B + 1 broadcast of A fill the 16
 * ymm registers; 12 independent FMA chains cover the FMA latency x throughput
 * product (4-5 cycles x 2 pipes) of current x86 cores.
 *
 * The panel packers move 8 k at a time through registers (8x8 transposes for
 * the strided layouts): the driver's portable element loops and memcpy calls
 * per k cost about a tenth of a training step's GEMM time.
 */
#include "cpu/kernels/gemm_internal.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#include "cpu/kernels/gemm_transpose8.h"

#define MR 6
#define NV 2
#define NR (NV * 8)

#if defined(__clang__)
#define UNROLL_FULL _Pragma("clang loop unroll(full)")
#else
#define UNROLL_FULL _Pragma("GCC unroll 16")
#endif

static void ukernel_6x16(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                         int load_c) {
    __m256 acc[MR][NV];
    UNROLL_FULL for (int i = 0; i < MR; i++) {
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        UNROLL_FULL for (int v = 0; v < NV; v++) acc[i][v] = _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_load_ps(b + 0);
        __m256 b1 = _mm256_load_ps(b + 8);
        UNROLL_FULL for (int i = 0; i < MR; i++) {
            __m256 ai = _mm256_broadcast_ss(a + i);
            acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
        }
        a += MR;
        b += NR;
    }
    if (load_c) {
        UNROLL_FULL for (int i = 0; i < MR; i++)
            UNROLL_FULL for (int v = 0; v < NV; v++) {
                float *p = c + i * ldc + v * 8;
                _mm256_storeu_ps(p, _mm256_add_ps(_mm256_loadu_ps(p), acc[i][v]));
            }
    } else {
        UNROLL_FULL for (int i = 0; i < MR; i++)
            UNROLL_FULL for (int v = 0; v < NV; v++) _mm256_storeu_ps(c + i * ldc + v * 8, acc[i][v]);
    }
}


/* Stores the first 6 lanes of v at d (no write past d[5]). */
static inline void store6(float *d, __m256 v) {
    _mm_storeu_ps(d, _mm256_castps256_ps128(v));
    _mm_storel_pi((__m64 *)(void *)(d + 4), _mm256_extractf128_ps(v, 1));
}

/* dst[k*6 + i] = A[i*lda + k]: 6 rows of A, 8 k per transpose. */
static void pack_a_6(float *dst, const float *A, int64_t lda, int64_t kc) {
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        __m256 r[8];
        for (int i = 0; i < MR; i++) r[i] = _mm256_loadu_ps(A + i * lda + k);
        r[6] = r[7] = _mm256_setzero_ps();
        transpose8(r);
        for (int kk = 0; kk < 8; kk++) store6(dst + (k + kk) * MR, r[kk]);
    }
    for (; k < kc; k++)
        for (int i = 0; i < MR; i++) dst[k * MR + i] = A[i * lda + k];
}

/* dst[k*6 + i] = At[k*lda + i]: A stored [K, M], 6 contiguous floats per k. */
static void pack_at_6(float *dst, const float *At, int64_t lda, int64_t kc) {
    for (int64_t k = 0; k < kc; k++) {
        const float *s = At + k * lda;
        float *d = dst + k * MR;
        _mm_storeu_ps(d, _mm_loadu_ps(s));
        _mm_storel_pi((__m64 *)(void *)(d + 4), _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)(s + 4)));
    }
}

/* dst[k*16 + j] = B[k*ldb + j]. */
static void pack_b_16(float *dst, const float *B, int64_t ldb, int64_t kc) {
    for (int64_t k = 0; k < kc; k++) {
        const float *s = B + k * ldb;
        _mm256_store_ps(dst + k * NR, _mm256_loadu_ps(s));
        _mm256_store_ps(dst + k * NR + 8, _mm256_loadu_ps(s + 8));
    }
}

/* dst[k*16 + j] = Bt[j*ldb + k]: B stored [N, K], two 8x8 transposes per 8 k. */
static void pack_bt_16(float *dst, const float *Bt, int64_t ldb, int64_t kc) {
    int64_t k = 0;
    for (; k + 8 <= kc; k += 8) {
        for (int jb = 0; jb < NR; jb += 8) {
            __m256 r[8];
            for (int j = 0; j < 8; j++) r[j] = _mm256_loadu_ps(Bt + (jb + j) * ldb + k);
            transpose8(r);
            for (int kk = 0; kk < 8; kk++) _mm256_store_ps(dst + (k + kk) * NR + jb, r[kk]);
        }
    }
    for (; k < kc; k++)
        for (int j = 0; j < NR; j++) dst[k * NR + j] = Bt[j * ldb + k];
}

const gemm_ukernel rlx_gemm_ukernel_avx2 = {
    "avx2", MR, NR, ukernel_6x16, pack_a_6, pack_b_16, pack_bt_16, pack_at_6,
};

#endif
