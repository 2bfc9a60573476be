/*
 * gemm_internal.h — what the GEMM driver (gemm.c) shares with its per-ISA
 * micro-kernels (gemm_avx512.c, gemm_avx2.c, the portable one in gemm.c).
 *
 * A micro-kernel computes one MR x NR tile of C from packed panels:
 *   a: kc x MR, a[k*MR + i] = A[i, k]      (packed by the driver)
 *   b: kc x NR, b[k*NR + j] = B[k, j]      (packed by the driver)
 *   C[i, j] = (load_c ? C[i, j] : 0) + sum_k a[k*MR+i] * b[k*NR+j]
 * for the full tile; the driver handles partial tiles through a scratch tile.
 * Panels are 64-byte aligned and NR is a multiple of the vector width.
 */
#ifndef RLX_GEMM_INTERNAL_H
#define RLX_GEMM_INTERNAL_H

#include <stdint.h>

typedef void (*gemm_ukernel_fn)(int64_t kc, const float *a, const float *b,
                                float *c, int64_t ldc, int load_c);

/* Optional ISA packers for full panels (m == MR, n == NR); NULL means the
 * driver's portable packer. Layouts as above:
 *   pack_a:  dst[k*MR + i] = A[i*lda + k]
 *   pack_b:  dst[k*NR + j] = B[k*ldb + j]
 *   pack_bt: dst[k*NR + j] = Bt[j*ldb + k]     (B stored [N, K])
 *   pack_at: dst[k*MR + i] = At[k*lda + i]     (A stored [K, M])         */
typedef void (*gemm_pack_fn)(float *dst, const float *src, int64_t ld, int64_t kc);

typedef struct gemm_ukernel {
    const char     *name;
    int             mr, nr;
    gemm_ukernel_fn fn;
    gemm_pack_fn    pack_a, pack_b, pack_bt, pack_at;
} gemm_ukernel;

/* Defined only in the ISA files that are built for x86-64. */
#if defined(__x86_64__)
#define RLX_GEMM_HAVE_X86 1
extern const gemm_ukernel rlx_gemm_ukernel_avx512;
extern const gemm_ukernel rlx_gemm_ukernel_avx2;
#endif

#endif
