/*
 * kv_cache.c — Vulkan lowering of KV_WRITE (kv_write.comp): the cache is the
 * node's own output (the planner aliases it to the param), pos is read on the
 * device, so decode steps replay the same command buffer.
 */
#include "vulkan/vk_lower.h"

typedef struct kv_push {
    uint64_t cache, rows, pos;
    uint32_t H, S, C, row_words, total;
} kv_push;

rlx_status vk_lower_kv_write(vk_lower_ctx *c) {
    const vk_tensor *rows = &c->in[1];
    size_t es = rlx_dtype_size(rows->dtype);
    uint64_t row_bytes = (uint64_t)rows->dims[3] * es;
    uint64_t total_words = (uint64_t)rows->numel * es / 4;
    if (row_bytes % 4 || total_words >= (1ull << 31) || c->out.numel >= (1ll << 33))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "kv_write: rows of %llu bytes are not a whole number of words",
                        (unsigned long long)row_bytes);
    kv_push p = {.cache = c->out.addr, .rows = rows->addr, .pos = c->in[2].addr, .H = (uint32_t)rows->dims[1],
                 .S = (uint32_t)rows->dims[2], .C = (uint32_t)c->out.dims[2], .row_words = (uint32_t)(row_bytes / 4),
                 .total = (uint32_t)total_words};
    vk_dispatch *d = vk_emit(c, "kv_write", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    vk_grid_1d(c->caps, total_words, 256, d->groups);
    c->tier = "kv-write";
    return RLX_OK;
}
