/*
 * gemm_avx2.c — the AVX2/FMA SGEMM micro-kernel (contract in gemm_internal.h).
 * Built with -mavx2 -mfma and only called after the driver's run-time check.
 *
 * Tile 6 x 16: 12 ymm accumulators + 2 ymm of B + 1 broadcast of A fill the 16
 * ymm registers; 12 independent FMA chains cover the FMA latency x throughput
 * product (4-5 cycles x 2 pipes) of current x86 cores.
 */
#include "cpu/kernels/gemm_internal.h"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

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

const gemm_ukernel rlx_gemm_ukernel_avx2 = { "avx2", MR, NR, ukernel_6x16, NULL, NULL, NULL };

#endif
