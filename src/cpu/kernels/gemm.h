/*
 * gemm.h — single-precision GEMM with a fused epilogue.
 *
 * C[M,N] = A[M,K] * B + (accumulate ? C : 0), then optionally
 * C = act(C + bias[n] + row_bias[m]).  Row-major. B is [K,N] with leading dim ldb, or with
 * transpose_b it is [N,K] with leading dim ldb (a linear layer's weights).
 * rlx_sgemm_ex also takes A transposed: stored [K,M] with leading dim lda
 * (>= M), as a weight gradient's X^T reads X.
 * The micro-kernel (AVX-512, AVX2/FMA or portable C) is chosen once at run time
 * from the CPU's features. Work is split over the pool's threads.
 */
#ifndef RLX_GEMM_H
#define RLX_GEMM_H

#include "core/threadpool.h"
#include <stdint.h>

typedef struct gemm_epilogue {
    const float *bias;   /* [N] or NULL */
    int          act;    /* rlx_activation */
    int          accumulate; /* 1: C += A*B, 0: C = A*B */
    const float *row_bias;   /* [M] or NULL: C[m, n] += row_bias[m] (after bias, before act), as a
                              * convolution's per-output-channel bias in NCHW */
} gemm_epilogue;

/* Returns 0 on success, -1 when scratch memory could not be allocated. */
int rlx_sgemm(rlx_threadpool *pool, int64_t M, int64_t N, int64_t K,
              const float *A, int64_t lda,
              const float *B, int64_t ldb, int transpose_b,
              float *C, int64_t ldc, const gemm_epilogue *epi);

/* rlx_sgemm with A [M,K] (lda >= K) or, with transpose_a, A stored [K,M]
 * (lda >= M). */
int rlx_sgemm_ex(rlx_threadpool *pool, int64_t M, int64_t N, int64_t K,
                 const float *A, int64_t lda, int transpose_a,
                 const float *B, int64_t ldb, int transpose_b,
                 float *C, int64_t ldc, const gemm_epilogue *epi);

/* The micro-kernel's tile: C is computed in mr x nr blocks (a caller may pick
 * the orientation of its product that wastes less of the partial tiles). */
void rlx_sgemm_tile(int *mr, int *nr);

/* Which micro-kernel rlx_sgemm uses: "avx512", "avx2", "portable". */
const char *rlx_sgemm_kernel_name(void);

/* Forces a micro-kernel (for tests and benches): "avx512", "avx2",
 * "portable" or NULL to restore automatic choice. Returns 0 if available. */
int rlx_sgemm_force_kernel(const char *name);

#endif
