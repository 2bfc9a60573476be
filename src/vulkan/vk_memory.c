/*
 * vk_memory.c — buffers with device addresses, and uploads through two
 * host-visible staging buffers in bounded chunks (so a multi-GiB weight never
 * needs a staging buffer of its own size), filling one while the other's copy
 * runs; zero fills on the device.
 */
#include "vulkan/vk_ctx.h"
#include "vulkan/vk_weight_layout.h"
#include <stdlib.h>
#include <string.h>

#define VK_UPLOAD_CHUNK ((VkDeviceSize)32 << 20)

static int find_memory_type(const vk_ctx *c, uint32_t type_bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) {
    int fallback = -1;
    for (uint32_t i = 0; i < c->mem.memoryTypeCount; i++) {
        if (!(type_bits & (1u << i))) continue;
        VkMemoryPropertyFlags f = c->mem.memoryTypes[i].propertyFlags;
        if ((f & want) != want) continue;
        if ((f & prefer) == prefer) return (int)i;
        if (fallback < 0) fallback = (int)i;
    }
    return fallback;
}

rlx_status vk_buf_create(vk_ctx *c, VkDeviceSize size, bool host_visible, const char *what, vk_buf *out) {
    memset(out, 0, sizeof *out);
    if (size == 0) size = 16;
    /* 16 bytes of slack past the last whole 16-byte word: kernels that load
     * aligned words around a 2-byte-aligned span (dequant_matvec_run.comp)
     * may read a few bytes past the end of a tensor, never past the buffer */
    VkDeviceSize alloc = (size + 15) / 16 * 16 + 16;
    VkBufferCreateInfo bci = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = alloc,
                              .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT |
                                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                              .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = rlx_fault("vk_buf") ? VK_ERROR_OUT_OF_DEVICE_MEMORY : c->f.vkCreateBuffer(c->dev, &bci, NULL, &out->buf);
    if (r != VK_SUCCESS) {
        out->buf = VK_NULL_HANDLE;
        return r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY
                   ? rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: cannot create a %llu-byte buffer for %s: %s",
                              (unsigned long long)size, what, vk_result_name(r))
                   : vk_check(r, "vkCreateBuffer");
    }
    VkMemoryRequirements req;
    c->f.vkGetBufferMemoryRequirements(c->dev, out->buf, &req);
    VkMemoryPropertyFlags want = host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                              : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
    VkMemoryPropertyFlags prefer = host_visible ? want | VK_MEMORY_PROPERTY_HOST_CACHED_BIT : want;
    int type = find_memory_type(c, req.memoryTypeBits, want, prefer);
    if (type < 0 && !host_visible) type = find_memory_type(c, req.memoryTypeBits, 0, 0);
    if (type < 0) {
        vk_buf_destroy(c, out);
        return rlx_fail(RLX_STATUS_DEVICE, "vulkan: no memory type for %s", what);
    }
    /* Refuse what the heap cannot hold, rather than letting a driver try. */
    VkDeviceSize heap = c->mem.memoryHeaps[c->mem.memoryTypes[type].heapIndex].size;
    if (req.size > heap) {
        vk_buf_destroy(c, out);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: %s needs %.2f GiB, the device heap has %.2f GiB", what,
                        req.size / 1073741824.0, heap / 1073741824.0);
    }
    VkMemoryAllocateFlagsInfo flags = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                       .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
    VkMemoryAllocateInfo mai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &flags,
                                .allocationSize = req.size, .memoryTypeIndex = (uint32_t)type};
    r = c->f.vkAllocateMemory(c->dev, &mai, NULL, &out->mem);
    if (r != VK_SUCCESS) {
        out->mem = VK_NULL_HANDLE;
        vk_buf_destroy(c, out);
        return rlx_fail(r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY ? RLX_STATUS_OUT_OF_MEMORY
                                                                                                  : RLX_STATUS_DEVICE,
                        "vulkan: cannot allocate %.2f MiB for %s: %s", req.size / 1048576.0, what, vk_result_name(r));
    }
    rlx_status st = vk_check(c->f.vkBindBufferMemory(c->dev, out->buf, out->mem, 0), "vkBindBufferMemory");
    if (st == RLX_OK && host_visible)
        st = vk_check(c->f.vkMapMemory(c->dev, out->mem, 0, VK_WHOLE_SIZE, 0, &out->map), "vkMapMemory");
    if (st != RLX_OK) { vk_buf_destroy(c, out); return st; }
    VkBufferDeviceAddressInfo bai = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = out->buf};
    out->addr = c->f.vkGetBufferDeviceAddress(c->dev, &bai);
    out->size = size;
    return RLX_OK;
}

void vk_buf_destroy(vk_ctx *c, vk_buf *b) {
    if (b->map) c->f.vkUnmapMemory(c->dev, b->mem);
    if (b->buf) c->f.vkDestroyBuffer(c->dev, b->buf, NULL);
    if (b->mem) c->f.vkFreeMemory(c->dev, b->mem, NULL);
    memset(b, 0, sizeof *b);
}

/* The two staging buffers, at least `need` bytes each (at most the chunk).
 * They grow by doubling (up to the chunk), so a model's uploads of growing
 * sizes make a few of them, not one per upload. */
static rlx_status staging_reserve(vk_ctx *c, VkDeviceSize need) {
    if (!c->upload_staging && !(c->upload_staging = calloc(2, sizeof *c->upload_staging)))
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
    for (int i = 0; i < 2; i++) {
        if (c->upload_staging[i].buf && c->upload_staging[i].size >= need) continue;
        VkDeviceSize size = c->upload_staging[i].buf ? 2 * c->upload_staging[i].size : need;
        if (size < need) size = need;
        if (size > VK_UPLOAD_CHUNK && need <= VK_UPLOAD_CHUNK) size = VK_UPLOAD_CHUNK;
        vk_buf_destroy(c, &c->upload_staging[i]);
        rlx_status st = vk_buf_create(c, size, true, "upload staging", &c->upload_staging[i]);
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}

void vk_upload_release(vk_ctx *c) {
    if (!c->upload_staging) return;
    for (int i = 0; i < 2; i++) vk_buf_destroy(c, &c->upload_staging[i]);
    free(c->upload_staging);
    c->upload_staging = NULL;
}

/* Records into command buffer `slot` a copy of n bytes from the slot's
 * staging to dst at dst_off (or, with fill: all of dst filled with the word
 * *fill) and submits it with the slot's fence, not waiting for it. */
static rlx_status submit_slot(vk_ctx *c, int slot, const vk_buf *dst, VkDeviceSize dst_off, VkDeviceSize n,
                              const uint32_t *fill) {
    VkCommandBuffer cb = c->upload_cb[slot];
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    rlx_status st = vk_check(c->f.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    if (st != RLX_OK) return st;
    if (fill) {
        c->f.vkCmdFillBuffer(cb, dst->buf, 0, VK_WHOLE_SIZE, *fill);
    } else {
        VkBufferCopy region = {.srcOffset = 0, .dstOffset = dst_off, .size = n};
        c->f.vkCmdCopyBuffer(cb, c->upload_staging[slot].buf, dst->buf, 1, &region);
    }
    st = vk_check(c->f.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    if (st == RLX_OK)
        st = vk_check(rlx_fault("vk_upload_submit") ? VK_ERROR_DEVICE_LOST
                                                   : c->f.vkQueueSubmit(c->queue, 1, &si, c->upload_fence[slot]),
                      "vkQueueSubmit (upload)");
    return st;
}

static rlx_status wait_slot(vk_ctx *c, int slot) {
    rlx_status st = vk_check(c->f.vkWaitForFences(c->dev, 1, &c->upload_fence[slot], VK_TRUE, UINT64_MAX),
                             "vkWaitForFences (upload)");
    c->f.vkResetFences(c->dev, 1, &c->upload_fence[slot]);
    return st;
}

/* The staging buffers are kept and used in turn: a model's ~290 params would
 * otherwise each allocate pinned memory, and the host's memcpy and the copy
 * engine would take turns instead of overlapping. A planar dtype's rows are
 * converted on the way into the staging (vk_weight_layout.c), so chunks are
 * whole rows. */
rlx_status vk_upload_as(vk_ctx *c, const vk_buf *dst, VkDeviceSize offset, const void *data, size_t bytes, rlx_dtype dtype,
                        int64_t row_elems) {
    if (bytes == 0) return RLX_OK;
    bool planar = vk_layout_is_planar(dtype);
    size_t row = planar ? vk_layout_row_bytes(dtype, row_elems) : 1;
    if (row == 0 || bytes % row != 0)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: upload of %zu bytes of %s is not whole rows of %lld", bytes,
                        rlx_dtype_name(dtype), (long long)row_elems);
    VkDeviceSize chunk = bytes < VK_UPLOAD_CHUNK ? bytes : VK_UPLOAD_CHUNK;
    if (chunk < row) chunk = row;   /* one row always fits (staging grows to it) */
    chunk -= chunk % row;
    pthread_mutex_lock(&c->lock);
    rlx_status st = staging_reserve(c, chunk);
    bool busy[2] = {false, false};
    int slot = 0;
    for (size_t done = 0; done < bytes && st == RLX_OK; done += chunk, slot ^= 1) {
        VkDeviceSize n = bytes - done < chunk ? bytes - done : chunk;
        if (busy[slot]) {
            busy[slot] = false;
            if ((st = wait_slot(c, slot)) != RLX_OK) break;
        }
        if (planar) vk_layout_to_planar(dtype, row_elems, (const char *)data + done, c->upload_staging[slot].map, n);
        else memcpy(c->upload_staging[slot].map, (const char *)data + done, n);
        st = submit_slot(c, slot, dst, offset + done, n, NULL);
        busy[slot] = st == RLX_OK;
    }
    for (int i = 0; i < 2; i++) {   /* both drained, even after an error: the staging is reused */
        rlx_status sw = busy[i] ? wait_slot(c, i) : RLX_OK;
        if (st == RLX_OK) st = sw;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

rlx_status vk_upload(vk_ctx *c, const vk_buf *dst, VkDeviceSize offset, const void *data, size_t bytes) {
    return vk_upload_as(c, dst, offset, data, bytes, RLX_F32, 1);
}

rlx_status vk_fill_zero(vk_ctx *c, const vk_buf *dst) { return vk_fill_words(c, dst, 0); }

rlx_status vk_fill_words(vk_ctx *c, const vk_buf *dst, uint32_t word) {
    pthread_mutex_lock(&c->lock);
    rlx_status st = submit_slot(c, 0, dst, 0, 0, &word);
    if (st == RLX_OK) st = wait_slot(c, 0);
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* Device -> host through staging slot 0, a chunk at a time, each waited for:
 * a debugging read (the numerics check), not a per-run path. */
rlx_status vk_download(vk_ctx *c, VkBuffer src, VkDeviceSize offset, void *dst, size_t bytes) {
    if (bytes == 0) return RLX_OK;
    VkDeviceSize chunk = bytes < VK_UPLOAD_CHUNK ? bytes : VK_UPLOAD_CHUNK;
    pthread_mutex_lock(&c->lock);
    rlx_status st = staging_reserve(c, chunk);
    for (size_t done = 0; done < bytes && st == RLX_OK; done += chunk) {
        VkDeviceSize n = bytes - done < chunk ? bytes - done : chunk;
        VkCommandBuffer cb = c->upload_cb[0];
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        if ((st = vk_check(c->f.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer")) != RLX_OK) break;
        VkBufferCopy region = {.srcOffset = offset + done, .dstOffset = 0, .size = n};
        c->f.vkCmdCopyBuffer(cb, src, c->upload_staging[0].buf, 1, &region);
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        c->f.vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0,
                                  NULL);
        if ((st = vk_check(c->f.vkEndCommandBuffer(cb), "vkEndCommandBuffer")) != RLX_OK) break;
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
        if ((st = vk_check(c->f.vkQueueSubmit(c->queue, 1, &si, c->upload_fence[0]), "vkQueueSubmit (download)")) != RLX_OK)
            break;
        if ((st = wait_slot(c, 0)) != RLX_OK) break;
        memcpy((char *)dst + done, c->upload_staging[0].map, n);
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}
