/*
 * vk_memory.c — buffers with device addresses, and uploads through a
 * host-visible staging buffer in bounded chunks (so a multi-GiB weight never
 * needs a staging buffer of its own size).
 */
#include "vulkan/vk_ctx.h"
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
    VkResult r = c->f.vkCreateBuffer(c->dev, &bci, NULL, &out->buf);
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

rlx_status vk_upload(vk_ctx *c, const vk_buf *dst, VkDeviceSize offset, const void *data, size_t bytes) {
    if (bytes == 0) return RLX_OK;
    vk_buf staging;
    VkDeviceSize chunk = bytes < VK_UPLOAD_CHUNK ? bytes : VK_UPLOAD_CHUNK;
    rlx_status st = vk_buf_create(c, chunk, true, "upload staging", &staging);
    if (st != RLX_OK) return st;
    pthread_mutex_lock(&c->lock);
    for (size_t done = 0; done < bytes && st == RLX_OK; done += chunk) {
        VkDeviceSize n = bytes - done < chunk ? bytes - done : chunk;
        memcpy(staging.map, (const char *)data + done, n);
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                       .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
        VkBufferCopy region = {.srcOffset = 0, .dstOffset = offset + done, .size = n};
        st = vk_check(c->f.vkBeginCommandBuffer(c->upload_cb, &bi), "vkBeginCommandBuffer");
        if (st != RLX_OK) break;
        c->f.vkCmdCopyBuffer(c->upload_cb, staging.buf, dst->buf, 1, &region);
        st = vk_check(c->f.vkEndCommandBuffer(c->upload_cb), "vkEndCommandBuffer");
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &c->upload_cb};
        if (st == RLX_OK) st = vk_check(c->f.vkQueueSubmit(c->queue, 1, &si, c->upload_fence), "vkQueueSubmit (upload)");
        if (st == RLX_OK) st = vk_check(c->f.vkWaitForFences(c->dev, 1, &c->upload_fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
        c->f.vkResetFences(c->dev, 1, &c->upload_fence);
    }
    pthread_mutex_unlock(&c->lock);
    vk_buf_destroy(c, &staging);
    return st;
}
