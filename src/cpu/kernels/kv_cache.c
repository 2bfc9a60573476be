/*
 * kv_cache.c — KV_WRITE: rows [B,H,S,D] written into a cache param
 * [B,H,capacity,D] at positions [pos, pos+S). The planner makes the output
 * the cache itself, so normally this touches only S rows per head. When the
 * output is a separate buffer (a GPU backend's host step), the cache is
 * copied first so the result is still "the cache with the rows written".
 * cpu_kv_begin is that shared prologue, also used by ROPE_KV_WRITE (rope.c).
 */
#include "cpu/cpu_kernel.h"
#include <string.h>

rlx_status cpu_kv_begin(const cpu_kernel_ctx *k, int64_t S, int64_t *pos) {
    const cpu_tensor *cache = &k->in[0];
    int64_t p = ((const int32_t *)k->in[2].data)[0], C = cache->dims[2];
    rlx_status st = ir_kv_range_check(k->node, p, S, C);
    if (st != RLX_OK) return st;
    if (k->out.data != cache->data) memcpy(k->out.data, cache->data, (size_t)cache->numel * rlx_dtype_size(cache->dtype));
    *pos = p;
    return RLX_OK;
}

rlx_status cpu_kv_write(const cpu_kernel_ctx *k) {
    const cpu_tensor *cache = &k->in[0], *rows = &k->in[1];
    int64_t B = cache->dims[0], H = cache->dims[1], C = cache->dims[2], D = cache->dims[3], S = rows->dims[2], p;
    rlx_status st = cpu_kv_begin(k, S, &p);
    if (st != RLX_OK) return st;
    size_t es = rlx_dtype_size(cache->dtype);
    uint8_t *out = k->out.data;
    const uint8_t *src = rows->data;
    size_t row_bytes = (size_t)(S * D) * es;
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++)
            memcpy(out + ((size_t)((b * H + h) * C + p) * (size_t)D) * es, src + (size_t)(b * H + h) * row_bytes, row_bytes);
    return RLX_OK;
}
