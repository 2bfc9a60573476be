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
#include <stddef.h>
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

/* Pre-packed operands, for a caller that multiplies one operand (a
 * convolution's weights) with many others: the panels rlx_sgemm would pack
 * inside every call, packed once. rlx_sgemm_packed_floats(rows, K, side) is
 * the size of M rows of A (side 0) or N columns of B (side 1) packed;
 * rlx_sgemm_pack_a / _pack_b pack them (A as rlx_sgemm_ex takes it, B as
 * rlx_sgemm takes it); rlx_sgemm_packed is rlx_sgemm_ex where a non-NULL
 * packed_a / packed_b replaces A / B. The layout is the current micro-kernel's
 * (rlx_sgemm_force_kernel between packing and use is not allowed). */
size_t rlx_sgemm_packed_floats(int64_t rows, int64_t K, int side);
/* The layout, for a caller that writes packed panels itself: panels w wide
 * (rlx_sgemm_tile's mr for A, nr for B), K in blocks of rlx_sgemm_kc_step(K);
 * element (k, i) of `rows` rows (pad: rows rounded up to w) lives at
 * pc * pad + (i / w) * w * kc + (k - pc) * w + i % w, where [pc, pc + kc) is
 * k's block. Rows past `rows` up to pad should be zero. */
int64_t rlx_sgemm_kc_step(int64_t K);
void rlx_sgemm_pack_a(float *dst, int64_t M, int64_t K, const float *A, int64_t lda, int transpose_a);
void rlx_sgemm_pack_b(float *dst, int64_t N, int64_t K, const float *B, int64_t ldb, int transpose_b);
int rlx_sgemm_packed(rlx_threadpool *pool, int64_t M, int64_t N, int64_t K,
                     const float *A, int64_t lda, int transpose_a, const float *packed_a,
                     const float *B, int64_t ldb, int transpose_b, const float *packed_b,
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
