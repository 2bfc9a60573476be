/*
 * topk.c — Vulkan lowering of TOPK_VALUES / TOPK_INDICES (last axis, k =
 * ir_attr_topk_k) through shaders/topk.comp: one workgroup per row, k selection
 * passes over the row (keys cached in shared memory when the row fits).
 *
 * Cost is O(k * n) per row, so k * n above TOPK_MAX_WORK is left to a host
 * step (the CPU heap is O(n log k) and would win there). The order is the
 * op's exact order for every dtype; 64-bit integers compare exactly (the CPU
 * compares them as doubles, which can tie beyond 2^53).
 */
#include "vulkan/vk_lower.h"

#include <string.h>

#define TOPK_MAX_WORK ((int64_t)1 << 26)

typedef struct topk_push {
    uint64_t x, out;
    uint32_t n, k, rows, pad0;
} topk_push;

_Static_assert(sizeof(topk_push) == 32, "topk_push must match topk.comp's push block");

rlx_status vk_lower_topk(vk_lower_ctx *c) {
    const vk_tensor *x = &c->in[0];
    const bool want_idx = c->node->op == IR_OP_TOPK_INDICES;
    const int64_t k = ir_attr_topk_k(c->node);
    if (x->rank < 1) return rlx_fail(RLX_STATUS_SHAPE, "topk: input needs rank >= 1");
    const int64_t n = x->dims[x->rank - 1];
    if (x->dtype == RLX_BOOL || rlx_dtype_size(x->dtype) == 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "topk: dtype %s", rlx_dtype_name(x->dtype));
    if (k < 0 || k > n) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "topk: k = %lld outside [0, %lld]",
                                        (long long)k, (long long)n);
    c->tier = "topk-select";
    if (k == 0 || x->numel == 0) return RLX_OK;
    if (k * n > TOPK_MAX_WORK)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "topk: k = %lld over rows of %lld is too much work for the "
                        "selection kernel (limit k * n <= 2^26)", (long long)k, (long long)n);
    if ((uint64_t)x->numel >= ((uint64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "topk: input of 2^32 elements or more");
    const int64_t rows = x->numel / n;

    topk_push pc;
    memset(&pc, 0, sizeof pc);
    pc.x = x->addr;
    pc.out = c->out.addr;
    pc.n = (uint32_t)n;
    pc.k = (uint32_t)k;
    pc.rows = (uint32_t)rows;
    /* keys in shared memory: 8 bytes each, next to 3 KiB of reduction space */
    uint64_t cache = ((uint64_t)n + 255) / 256 * 256;
    uint64_t smax = c->caps->max_shared_memory ? c->caps->max_shared_memory : 16384;
    if (cache * 8 + 3072 + 256 > smax) cache = 1;
    vk_dispatch *d = vk_emit(c, "topk", &pc, sizeof pc);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = vk_dtype_code(x->dtype);
    d->spec[1] = want_idx;
    d->spec[2] = (uint32_t)cache;
    d->n_spec = 3;
    vk_grid_1d(c->caps, (uint64_t)rows, 1, d->groups);
    return RLX_OK;
}
