/*
 * dqmm_push.h — the push block of the prefill dequant shaders (DqmmPush in
 * shaders/dequant_mm_common.glsl, std430): dequant_mm, dequant_mm_coopmat
 * (dequant_gemm.c) and decode_f16 (coop_gemm.c).
 */
#ifndef RLX_VK_DQMM_PUSH_H
#define RLX_VK_DQMM_PUSH_H
#include "vulkan/vk_lower.h"

typedef struct dqmm_push {
    uint64_t x, w, out;
    uint32_t M, N, K, row_bytes, parts, tiles_m, kparts, pad1;
} dqmm_push;
_Static_assert(sizeof(dqmm_push) == 56, "dqmm_push must match dequant_mm_common.glsl");
_Static_assert(sizeof(dqmm_push) <= VK_MAX_PUSH, "dqmm_push exceeds the push-constant budget");

#endif
