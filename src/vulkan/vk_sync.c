/*
 * vk_sync.c — the counters of overlapped stages (vk_program.c, "Overlapped
 * stages"; shaders/stage_sync.glsl): one device-local buffer per context,
 * handed out to programs in chunks, first fit.
 *
 * Why one buffer per context and not per program: its address is a
 * specialization constant of the _sync shader variants, so a per-program
 * buffer would compile a new set of pipelines for every program (a dynamic
 * shape's recompile included). The buffer is created on first use and lives
 * as long as the context.
 */
#include "vulkan/vk_ctx.h"
#include <string.h>

rlx_status vk_sync_alloc(vk_ctx *c, uint32_t words, uint32_t *first) {
    *first = 0;
    uint32_t need = (words + VK_SYNC_CHUNK - 1) / VK_SYNC_CHUNK;
    if (need == 0 || need > VK_SYNC_CHUNKS)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: %u stage counters exceed the %u a device has", words,
                        VK_SYNC_CHUNK * VK_SYNC_CHUNKS);
    pthread_mutex_lock(&c->lock);
    rlx_status st = RLX_OK;
    if (!c->sync.buf) {
        st = vk_buf_create(c, (VkDeviceSize)VK_SYNC_CHUNK * VK_SYNC_CHUNKS * 4, false, "stage counters", &c->sync);
        memset(c->sync_used, 0, sizeof c->sync_used);
    }
    uint32_t run = 0, at = 0;
    bool found = false;
    for (uint32_t k = 0; st == RLX_OK && k < VK_SYNC_CHUNKS && !found; k++) {
        run = c->sync_used[k] ? 0 : run + 1;
        if (run == need) {
            at = k + 1 - need;
            found = true;
        }
    }
    if (found) {
        memset(c->sync_used + at, 1, need);
        *first = at * VK_SYNC_CHUNK;
    } else if (st == RLX_OK) {
        st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: no %u free stage counters (programs hold them all)", words);
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

void vk_sync_free(vk_ctx *c, uint32_t first, uint32_t words) {
    uint32_t k0 = first / VK_SYNC_CHUNK, need = (words + VK_SYNC_CHUNK - 1) / VK_SYNC_CHUNK;
    if (k0 + need > VK_SYNC_CHUNKS) return;
    pthread_mutex_lock(&c->lock);
    memset(c->sync_used + k0, 0, need);
    pthread_mutex_unlock(&c->lock);
}
