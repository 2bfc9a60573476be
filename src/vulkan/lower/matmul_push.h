/*
 * matmul_push.h — the push block of the matmul shaders (MatmulPush in
 * shaders/matmul_common.glsl, std430), shared by the matmul lowerings
 * (matmul.c, coop_gemm.c).
 */
#ifndef RLX_VK_MATMUL_PUSH_H
#define RLX_VK_MATMUL_PUSH_H
#include "vulkan/vk_lower.h"

typedef struct mm_push {
    uint64_t a, b, bias, c;
    uint32_t M, N, K, nbatch;
    uint32_t bd1, bd2, tiles, pad0;   /* pad0: matvec's columns per workgroup; coopmat's K per split */
    uint64_t sa[3], sb[3];
} mm_push;
_Static_assert(sizeof(mm_push) == 112, "mm_push must match MatmulPush in matmul_common.glsl");
_Static_assert(sizeof(mm_push) <= VK_MAX_PUSH, "mm_push exceeds the push-constant budget");

#define MM_INDEX_LIMIT ((int64_t)1 << 31)   /* per-matrix element indices are 32-bit */

#endif
