/*
 * vk_lower_fallback.c — weak default lowerings: a family whose lowering file
 * is not built yet runs as host steps instead of failing to link. A real
 * lowering (a strong definition) replaces its default.
 */
#include "vulkan/vk_lower.h"

#define FALLBACK(fn)                                                                              \
    __attribute__((weak)) rlx_status fn(vk_lower_ctx *c) {                                        \
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: no GPU lowering in this build",              \
                        ir_op_info_get(c->node->op)->name);                                       \
    }

FALLBACK(vk_lower_binary)
FALLBACK(vk_lower_unary)
FALLBACK(vk_lower_ternary)
FALLBACK(vk_lower_reduce)
FALLBACK(vk_lower_softmax)
FALLBACK(vk_lower_norm)
FALLBACK(vk_lower_cumsum)
FALLBACK(vk_lower_matmul)
FALLBACK(vk_lower_attention)
FALLBACK(vk_lower_rope)
FALLBACK(vk_lower_movement)
FALLBACK(vk_lower_gather)
FALLBACK(vk_lower_topk)
FALLBACK(vk_lower_loss)
FALLBACK(vk_lower_dequant_matmul)
