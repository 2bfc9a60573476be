/*
 * vk_ctx.h — one opened Vulkan device: logical device, compute queue, the
 * probed capabilities, a shared pipeline layout and pipeline cache, and the
 * buffers rlx allocates on it.
 *
 * Contexts are shared by every executable on the same physical device and
 * reference-counted (creating a logical device costs milliseconds, and GPU
 * memory is one pool anyway). The queue and the pipeline cache are guarded by
 * the context's mutex; command pools belong to one program each.
 */
#ifndef RLX_VK_CTX_H
#define RLX_VK_CTX_H

#include "vulkan/vk_loader.h"
#include "vulkan/vk_lower.h"
#include <pthread.h>

typedef struct vk_pipeline_entry {
    const char *shader;
    uint32_t    spec[VK_MAX_SPEC];
    int         n_spec;
    VkPipeline  pipeline;
} vk_pipeline_entry;

typedef struct vk_ctx {
    int                 refcount;
    int                 index;
    VkPhysicalDevice    phys;
    VkDevice            dev;
    VkQueue             queue;
    uint32_t            queue_family;
    vk_device_fns       f;
    vk_caps             caps;
    VkPhysicalDeviceMemoryProperties mem;
    VkPhysicalDeviceProperties props;
    char                name[256];
    float               timestamp_period_ns;
    pthread_mutex_t     lock;
    VkPipelineLayout    layout;        /* one 128-byte push-constant range, no descriptors */
    vk_pipeline_entry  *pipes;
    int                 n_pipes, cap_pipes;
    VkCommandPool       upload_pool;   /* under lock, as everything upload_ */
    /* two staging buffers in turn: one is filled while the other's copy runs
     * (created on first use, grown up to VK_UPLOAD_CHUNK, kept for the ctx) */
    VkCommandBuffer     upload_cb[2];
    VkFence             upload_fence[2];
    struct vk_buf      *upload_staging;   /* [2] */
    /* RLX_VK_PIPELINE_STATS=1 where the driver has them (else NULL) */
    PFN_vkGetPipelineExecutablePropertiesKHR get_exec_props;
    PFN_vkGetPipelineExecutableStatisticsKHR get_exec_stats;
} vk_ctx;

/* Opens (or shares) the device chosen by index / name substring / best.
 * allow_software: whether a CPU-type device (lavapipe) may be picked when no
 * index or name asks for it. */
rlx_status vk_ctx_acquire(int index, const char *name, bool allow_software, vk_ctx **out);
void       vk_ctx_release(vk_ctx *ctx);
/* Whether a hardware (non-CPU) Vulkan device exists; never fails loudly. */
bool       vk_hardware_present(void);

/* A buffer with a device address; host-visible ones stay mapped. */
typedef struct vk_buf {
    VkBuffer       buf;
    VkDeviceMemory mem;
    VkDeviceSize   size;
    uint64_t       addr;
    void          *map;
} vk_buf;

rlx_status vk_buf_create(vk_ctx *ctx, VkDeviceSize size, bool host_visible, const char *what, vk_buf *out);
void       vk_buf_destroy(vk_ctx *ctx, vk_buf *b);
/* Copies host bytes into a device buffer through the ctx's staging buffers,
 * in chunks, the copy of one chunk overlapping the memcpy of the next. */
rlx_status vk_upload(vk_ctx *ctx, const vk_buf *dst, VkDeviceSize offset, const void *data, size_t bytes);
/* The same for a tensor of `dtype` with rows of row_elems elements, in the
 * device's layout of that dtype (vk_weight_layout.h: Q8_0 / Q6_K rows planar). */
rlx_status vk_upload_as(vk_ctx *ctx, const vk_buf *dst, VkDeviceSize offset, const void *data, size_t bytes,
                        rlx_dtype dtype, int64_t row_elems);
/* Copies bytes of a device buffer at offset to host memory (waits). */
rlx_status vk_download(vk_ctx *ctx, VkBuffer src, VkDeviceSize offset, void *dst, size_t bytes);
/* Zeros a whole buffer on the device (no host transfer). */
rlx_status vk_fill_zero(vk_ctx *ctx, const vk_buf *dst);
/* Fills a whole buffer with a 32-bit word (0xffffffff: f32 NaN). */
rlx_status vk_fill_words(vk_ctx *ctx, const vk_buf *dst, uint32_t word);
/* Frees the staging buffers (at ctx release). */
void       vk_upload_release(vk_ctx *ctx);

/* The pipeline for shader + spec constants (created and cached on first use). */
rlx_status vk_pipeline_get(vk_ctx *ctx, const char *shader, const uint32_t *spec, int n_spec, VkPipeline *out);

/* Embedded SPIR-V (generated at build time from src/vulkan/shaders/ *.comp). */
typedef struct vk_shader_blob {
    const char     *name;
    const uint32_t *code;
    size_t          bytes;
} vk_shader_blob;
extern const vk_shader_blob rlx_vk_shaders[];
extern const int            rlx_vk_shader_count;

rlx_status vk_check(VkResult r, const char *what);

#endif
