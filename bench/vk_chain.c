/*
 * vk_chain.c — experiment: a decode layer's chain of dependent Q4_K matvecs
 * as one persistent dispatch with grid barriers (bench/shaders/decode_chain.comp)
 * against one dispatch per stage with pipeline barriers, same shader, same
 * weights. Prints one table: mode, grid, device µs per chain (median of the
 * runs), µs per layer and the weight bytes over that time.
 *
 *   build/vk_chain [--device NAME] [--model 8b|1b|tiny] [--layers L] [--grids 132,264]
 *                  [--wg 512] [--u 4] [--hn 0|1] [--waitall 0|1] [--xl 0|1] [--xbatch 1-4]
 *                  [--abl BITS] [--runs N] [--check] [--shaders DIR]
 *
 * A "layer" is the 8B (or 1B) decode projections as plain matvecs, each x the
 * previous output's first K values: q+k+v [6144 x 4096], o + res [4096 x 4096],
 * gate+up [28672 x 4096], down + res [4096 x 14336] (1B: 3072 / 2048 / 16384 x
 * 2048 / 2048 x 8192). --check compares every stage's output with a float64
 * product of the dequantized weights and the stage's x as the GPU read it,
 * and the persistent result with the per-stage one bit for bit.
 *
 * VK_CHAIN_DEBUG=1 prints each wrong row of a failed check and the grid
 * counter after every persistent run.
 *
 * Raw Vulkan through the library's loader (vk_loader.h), not the runtime: the
 * point is to measure an execution model the runtime does not have yet. The
 * shader is read from bench_shaders/decode_chain.spv next to the program
 * (build/vk_chain: build/bench_shaders), or from --shaders DIR.
 */
#include "rlx.h"
#include "io/quant.h"
#include "vulkan/vk_loader.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_VK(call)                                                                   \
    do {                                                                                 \
        VkResult r_ = (call);                                                            \
        if (r_ != VK_SUCCESS) {                                                          \
            fprintf(stderr, "vk_chain: %s failed: %s\n", #call, vk_result_name(r_));     \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

typedef struct stage_desc { int64_t N, K; int epi; } stage_desc;
typedef struct gpu_stage { uint64_t x, w, out, res; uint32_t N, K, row_bytes, epi; } gpu_stage;   /* std430, 48 B */
typedef struct push_t { uint64_t stages, sync; uint32_t first, count, spin_limit, pad; } push_t;

static const stage_desc L8B[4] = {{6144, 4096, 0}, {4096, 4096, 1}, {28672, 4096, 0}, {4096, 14336, 1}};
static const stage_desc L1B[4] = {{3072, 2048, 0}, {2048, 2048, 1}, {16384, 2048, 0}, {2048, 8192, 1}};
/* For tests on lavapipe, which ends an invocation's loops after 65535 iterations
 * in all (docs/gpu.md, pitfalls): a few rows per subgroup. */
static const stage_desc LTINY[4] = {{1536, 1024, 0}, {1024, 1024, 1}, {3072, 1024, 0}, {1024, 3072, 1}};

enum { POOL_ROWS = 61 };   /* distinct weight rows per stage, repeated (a prime: rows of a slice differ) */

typedef struct vkb {
    const vk_instance_fns *fi;
    vk_device_fns f;
    VkPhysicalDevice phys;
    VkDevice dev;
    VkQueue queue;
    uint32_t fam, sgs;
    float ts_period;
    VkPhysicalDeviceMemoryProperties mem;
    VkCommandPool pool;
    PFN_vkGetPipelineExecutableStatisticsKHR get_stats;   /* NULL where the extension is missing */
} vkb;

typedef struct buf { VkBuffer b; VkDeviceMemory m; uint64_t addr; size_t bytes; void *map; } buf;

static uint32_t mem_type(const vkb *v, uint32_t bits, VkMemoryPropertyFlags want) {
    for (uint32_t i = 0; i < v->mem.memoryTypeCount; i++)
        if ((bits & (1u << i)) && (v->mem.memoryTypes[i].propertyFlags & want) == want) return i;
    fprintf(stderr, "vk_chain: no memory type with flags %#x\n", (unsigned)want);
    exit(1);
}

static buf buf_new(vkb *v, size_t bytes, bool host) {
    buf o = {0};
    o.bytes = bytes;
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT};
    CHECK_VK(v->f.vkCreateBuffer(v->dev, &bi, NULL, &o.b));
    VkMemoryRequirements rq;
    v->f.vkGetBufferMemoryRequirements(v->dev, o.b, &rq);
    VkMemoryAllocateFlagsInfo af = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO,
                                    .flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT};
    VkMemoryAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .pNext = &af, .allocationSize = rq.size,
                               .memoryTypeIndex = mem_type(v, rq.memoryTypeBits,
                                                           host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                                      VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                                                : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)};
    CHECK_VK(v->f.vkAllocateMemory(v->dev, &ai, NULL, &o.m));
    CHECK_VK(v->f.vkBindBufferMemory(v->dev, o.b, o.m, 0));
    VkBufferDeviceAddressInfo da = {.sType = VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, .buffer = o.b};
    o.addr = v->f.vkGetBufferDeviceAddress(v->dev, &da);
    if (host) CHECK_VK(v->f.vkMapMemory(v->dev, o.m, 0, VK_WHOLE_SIZE, 0, &o.map));
    return o;
}

static void buf_free(vkb *v, buf *b) {
    if (b->map) v->f.vkUnmapMemory(v->dev, b->m);
    v->f.vkDestroyBuffer(v->dev, b->b, NULL);
    v->f.vkFreeMemory(v->dev, b->m, NULL);
    memset(b, 0, sizeof *b);
}

static VkCommandBuffer cmd_begin(vkb *v) {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = v->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkCommandBuffer cb;
    CHECK_VK(v->f.vkAllocateCommandBuffers(v->dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK_VK(v->f.vkBeginCommandBuffer(cb, &bi));
    return cb;
}

static void cmd_submit_wait(vkb *v, VkCommandBuffer cb) {
    CHECK_VK(v->f.vkEndCommandBuffer(cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    CHECK_VK(v->f.vkQueueSubmit(v->queue, 1, &si, VK_NULL_HANDLE));
    CHECK_VK(v->f.vkQueueWaitIdle(v->queue));
}

/* Copies host bytes to a device buffer at an offset through a staging buffer. */
static void upload(vkb *v, buf *dst, size_t off, const void *src, size_t bytes, buf *stage) {
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < stage->bytes ? bytes - done : stage->bytes;
        memcpy(stage->map, (const char *)src + done, n);
        VkCommandBuffer cb = cmd_begin(v);
        VkBufferCopy c = {.srcOffset = 0, .dstOffset = off + done, .size = n};
        v->f.vkCmdCopyBuffer(cb, stage->b, dst->b, 1, &c);
        cmd_submit_wait(v, cb);
        v->f.vkFreeCommandBuffers(v->dev, v->pool, 1, &cb);
        done += n;
    }
}

static void download(vkb *v, buf *src, size_t off, void *dst, size_t bytes, buf *stage) {
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < stage->bytes ? bytes - done : stage->bytes;
        VkCommandBuffer cb = cmd_begin(v);
        VkBufferCopy c = {.srcOffset = off + done, .dstOffset = 0, .size = n};
        v->f.vkCmdCopyBuffer(cb, src->b, stage->b, 1, &c);
        cmd_submit_wait(v, cb);
        v->f.vkFreeCommandBuffers(v->dev, v->pool, 1, &cb);
        memcpy((char *)dst + done, stage->map, n);
        done += n;
    }
}

static void open_device(vkb *v, const char *want) {
    VkInstance inst;
    if (vk_instance_get(&inst, &v->fi) != RLX_OK) {
        fprintf(stderr, "vk_chain: %s\n", rlx_last_error());
        exit(1);
    }
    uint32_t n = 0;
    v->fi->vkEnumeratePhysicalDevices(inst, &n, NULL);
    VkPhysicalDevice ph[16];
    if (n > 16) n = 16;
    v->fi->vkEnumeratePhysicalDevices(inst, &n, ph);
    v->phys = VK_NULL_HANDLE;
    for (uint32_t i = 0; i < n && !v->phys; i++) {
        VkPhysicalDeviceProperties pr;
        v->fi->vkGetPhysicalDeviceProperties(ph[i], &pr);
        if (!want || strstr(pr.deviceName, want)) v->phys = ph[i];
    }
    if (!v->phys) {
        fprintf(stderr, "vk_chain: no Vulkan device%s%s\n", want ? " named " : "", want ? want : "");
        exit(1);
    }
    VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sub};
    v->fi->vkGetPhysicalDeviceProperties2(v->phys, &p2);
    v->sgs = sub.subgroupSize;
    v->ts_period = p2.properties.limits.timestampPeriod;
    v->fi->vkGetPhysicalDeviceMemoryProperties(v->phys, &v->mem);
    fprintf(stderr, "vk_chain: %s, subgroup %u\n", p2.properties.deviceName, v->sgs);

    uint32_t nq = 0;
    v->fi->vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nq, NULL);
    VkQueueFamilyProperties qf[32];
    if (nq > 32) nq = 32;
    v->fi->vkGetPhysicalDeviceQueueFamilyProperties(v->phys, &nq, qf);
    v->fam = UINT32_MAX;
    for (uint32_t i = 0; i < nq && v->fam == UINT32_MAX; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) v->fam = i;
    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = v->fam,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR idf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR, .shaderIntegerDotProduct = VK_TRUE};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &idf,
                                            .bufferDeviceAddress = VK_TRUE, .shaderInt8 = VK_TRUE,
                                            .storageBuffer8BitAccess = VK_TRUE};
    VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12,
                                            .storageBuffer16BitAccess = VK_TRUE};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
    f2.features.shaderInt64 = VK_TRUE;
    f2.features.shaderInt16 = VK_TRUE;
    const char *exts[2] = {"VK_KHR_shader_integer_dot_product", "VK_KHR_pipeline_executable_properties"};
    uint32_t n_ext = 0;
    v->fi->vkEnumerateDeviceExtensionProperties(v->phys, NULL, &n_ext, NULL);
    VkExtensionProperties *ep = calloc(n_ext ? n_ext : 1, sizeof *ep);
    v->fi->vkEnumerateDeviceExtensionProperties(v->phys, NULL, &n_ext, ep);
    bool stats = false;
    for (uint32_t i = 0; i < n_ext; i++) stats |= !strcmp(ep[i].extensionName, exts[1]);
    free(ep);
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR epf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, .pipelineExecutableInfo = VK_TRUE};
    if (stats) idf.pNext = &epf;
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = stats ? 2 : 1, .ppEnabledExtensionNames = exts};
    CHECK_VK(v->fi->vkCreateDevice(v->phys, &dci, NULL, &v->dev));
    if (stats)
        v->get_stats = (PFN_vkGetPipelineExecutableStatisticsKHR)v->fi->vkGetDeviceProcAddr(v->dev, "vkGetPipelineExecutableStatisticsKHR");
    if (vk_device_fns_load(v->dev, &v->f) != RLX_OK) {
        fprintf(stderr, "vk_chain: %s\n", rlx_last_error());
        exit(1);
    }
    v->f.vkGetDeviceQueue(v->dev, v->fam, 0, &v->queue);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = v->fam,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    CHECK_VK(v->f.vkCreateCommandPool(v->dev, &pci, NULL, &v->pool));
}

static uint32_t *read_file(const char *path, size_t *bytes) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint32_t *d = n > 0 ? malloc((size_t)n) : NULL;
    if (d && fread(d, 1, (size_t)n, fp) != (size_t)n) {
        free(d);
        d = NULL;
    }
    fclose(fp);
    *bytes = (size_t)n;
    return d;
}

typedef struct pipe { VkPipeline p; VkPipelineLayout l; } pipe;

/* The driver's register count for a pipeline, where it says
 * (VK_KHR_pipeline_executable_properties; NVIDIA: "Register Count"). */
static void print_registers(vkb *v, VkPipeline p, uint32_t pf) {
    if (!v->get_stats) return;
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = p};
    VkPipelineExecutableStatisticKHR st[32];
    uint32_t n = 32;
    for (uint32_t k = 0; k < n; k++) st[k] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    VkResult r = v->get_stats(v->dev, &ei, &n, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return;
    for (uint32_t k = 0; k < n; k++)
        if (strstr(st[k].name, "Register") && st[k].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR)
            fprintf(stderr, "vk_chain: pipeline (prefetch %u): %s %llu\n", pf, st[k].name, (unsigned long long)st[k].value.u64);
}

/* spec: the values of decode_chain.comp's constant_id 0..8. */
static pipe make_pipe(vkb *v, const uint32_t *code, size_t bytes, const uint32_t spec[9]) {
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = bytes, .pCode = code};
    VkShaderModule mod;
    CHECK_VK(v->f.vkCreateShaderModule(v->dev, &mi, NULL, &mod));
    uint32_t vals[9];
    memcpy(vals, spec, sizeof vals);
    VkSpecializationMapEntry me[9];
    for (uint32_t i = 0; i < 9; i++) me[i] = (VkSpecializationMapEntry){i, 4 * i, 4};
    VkSpecializationInfo spi = {.mapEntryCount = 9, .pMapEntries = me, .dataSize = sizeof vals, .pData = vals};
    VkPushConstantRange pr = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = sizeof(push_t)};
    VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &pr};
    pipe o;
    CHECK_VK(v->f.vkCreatePipelineLayout(v->dev, &li, NULL, &o.l));
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod, .pName = "main", .pSpecializationInfo = &spi},
        .layout = o.l, .flags = v->get_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0};
    CHECK_VK(v->f.vkCreateComputePipelines(v->dev, VK_NULL_HANDLE, 1, &ci, NULL, &o.p));
    v->f.vkDestroyShaderModule(v->dev, mod, NULL);
    print_registers(v, o.p, spec[3]);
    return o;
}

static void barrier_all(vkb *v, VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    v->f.vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* One timed run: reset the counter, then either one dispatch of all stages
 * or one per stage with barriers. Returns device µs; *err the sync error word. */
typedef struct chain { buf dev, sync, table; int n_stages; } chain;

static double run_once(vkb *v, const pipe *pp, chain *ch, uint32_t grid, bool persist, VkQueryPool qp, buf *stage,
                       uint32_t *err, double *stage_us) {
    VkCommandBuffer cb = cmd_begin(v);
    uint32_t nq = (uint32_t)ch->n_stages + 1;
    v->f.vkCmdResetQueryPool(cb, qp, 0, nq);
    v->f.vkCmdFillBuffer(cb, ch->sync.b, 0, 16, 0);
    barrier_all(v, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    v->f.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pp->p);
    v->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
    push_t pu = {.stages = ch->table.addr, .sync = ch->sync.addr, .spin_limit = 1u << 22};
    if (persist) {
        pu.first = 0;
        pu.count = (uint32_t)ch->n_stages;
        v->f.vkCmdPushConstants(cb, pp->l, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pu, &pu);
        v->f.vkCmdDispatch(cb, grid, 1, 1);
    } else {
        for (int s = 0; s < ch->n_stages; s++) {
            if (s) barrier_all(v, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
            pu.first = (uint32_t)s;
            pu.count = 1;
            v->f.vkCmdPushConstants(cb, pp->l, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pu, &pu);
            v->f.vkCmdDispatch(cb, grid, 1, 1);
            v->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, (uint32_t)s + 1);
        }
    }
    if (persist) {   /* only two timestamps were written */
        nq = 2;
        v->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
    }
    cmd_submit_wait(v, cb);
    v->f.vkFreeCommandBuffers(v->dev, v->pool, 1, &cb);
    uint64_t ts[257];
    CHECK_VK(v->f.vkGetQueryPoolResults(v->dev, qp, 0, nq, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    if (!persist && stage_us)
        for (int s = 0; s < ch->n_stages; s++) stage_us[s] = (double)(ts[s + 1] - ts[s]) * v->ts_period * 1e-3;
    uint32_t sw[2];
    download(v, &ch->sync, 0, sw, sizeof sw, stage);
    *err = sw[1];
    if (getenv("VK_CHAIN_DEBUG") && persist) fprintf(stderr, "sync count %u err %u\n", sw[0], sw[1]);
    return (double)(ts[nq - 1] - ts[0]) * v->ts_period * 1e-3;
}

/* x as the shader sees it: per 256-block d = absmax / 127, q = round half to
 * even of x * 127 / absmax (in f32, as on the GPU), x' = q * d. */
static void round_like_shader(const float *x, double *xr, int64_t K) {
    for (int64_t b = 0; b < K; b += 256) {
        float amax = 0;
        for (int k = 0; k < 256; k++) amax = fmaxf(amax, fabsf(x[b + k]));
        float id = amax > 0 ? fminf(127.0f / amax, 1e38f) : 0.0f, d = amax / 127.0f;
        for (int k = 0; k < 256; k++) xr[b + k] = (double)rintf(x[b + k] * id) * (double)d;
    }
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int parse_list(const char *s, uint32_t *out, int max) {
    int n = 0;
    while (s && *s && n < max) {
        out[n++] = (uint32_t)strtoul(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

int main(int argc, char **argv) {
    const char *device = NULL, *model = "8b", *shaders = NULL;
    int layers = 8, runs = 20;
    bool check = false;
    uint32_t grids[8] = {132}, n_grids = 1, wg = 512, u = 4, abl = 0, hn = 1, waitall = 0, xl = 1, xbatch = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *nx = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && nx) device = argv[++i];
        else if (!strcmp(a, "--model") && nx) model = argv[++i];
        else if (!strcmp(a, "--layers") && nx) layers = atoi(argv[++i]);
        else if (!strcmp(a, "--runs") && nx) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--grids") && nx) n_grids = (uint32_t)parse_list(argv[++i], grids, 8);
        else if (!strcmp(a, "--wg") && nx) wg = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--u") && nx) u = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--shaders") && nx) shaders = argv[++i];
        else if (!strcmp(a, "--abl") && nx) abl = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--hn") && nx) hn = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--waitall") && nx) waitall = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--xl") && nx) xl = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--xbatch") && nx) xbatch = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--check")) check = true;
        else {
            fprintf(stderr, "usage: vk_chain [--device NAME] [--model 8b|1b|tiny] [--layers L] [--grids a,b] [--wg N] "
                            "[--u 1-4] [--hn 0|1] [--waitall 0|1] [--xl 0|1] [--xbatch 1-4] [--abl BITS] [--runs N] [--check]\n"
                            "                [--shaders DIR]\n");
            return 2;
        }
    }
    if (layers < 1 || layers > 64 || runs < 1 || !n_grids || u < 1 || u > 4 || xbatch < 1 || xbatch > 4 || wg < 32 || wg > 1024) {
        fprintf(stderr, "vk_chain: bad arguments\n");
        return 2;
    }
    const stage_desc *lay = !strcmp(model, "1b") ? L1B : !strcmp(model, "tiny") ? LTINY : L8B;
    if (strcmp(model, "1b") && strcmp(model, "8b") && strcmp(model, "tiny")) {
        fprintf(stderr, "vk_chain: --model is 8b, 1b or tiny\n");
        return 2;
    }
    for (uint32_t gi = 0; gi < n_grids; gi++)
        if (grids[gi] < 1 || grids[gi] > 1024) {   /* every workgroup needs rows in every stage (N >= 1024) */
            fprintf(stderr, "vk_chain: grid %u outside 1..1024\n", grids[gi]);
            return 2;
        }
    char spv[1024];
    if (!shaders) {   /* next to the program: build/vk_chain reads build/bench_shaders */
        const char *slash = strrchr(argv[0], '/');
        snprintf(spv, sizeof spv, "%.*s/bench_shaders/decode_chain.spv", slash ? (int)(slash - argv[0]) : 1,
                 slash ? argv[0] : ".");
    } else {
        snprintf(spv, sizeof spv, "%s/decode_chain.spv", shaders);
    }
    size_t code_bytes;
    uint32_t *code = read_file(spv, &code_bytes);
    if (!code) {
        fprintf(stderr, "vk_chain: cannot read %s\n", spv);
        return 1;
    }
    vkb v;
    memset(&v, 0, sizeof v);
    open_device(&v, device);

    /* ---- weights: POOL_ROWS quantized rows per stage shape, tiled ---- */
    int n_st = 4 * layers;
    size_t off = 0, wbytes = 0;
    size_t *w_off = calloc((size_t)n_st, sizeof *w_off), *o_off = calloc((size_t)n_st, sizeof *o_off);
    size_t *r_off = calloc((size_t)n_st, sizeof *r_off);
    uint32_t qt = quant_type_of_dtype(RLX_Q4_K);
    int64_t maxk = 0;
    for (int s = 0; s < n_st; s++) {
        const stage_desc *d = &lay[s % 4];
        uint64_t rb;
        qtype_row_bytes(qt, (uint64_t)d->K, &rb);
        w_off[s] = off;
        off += (size_t)(rb * (uint64_t)d->N + 255) / 256 * 256;
        wbytes += (size_t)(rb * (uint64_t)d->N);
        if (d->K > maxk) maxk = d->K;
    }
    size_t x0_off = off;
    off += (size_t)maxk * 4 + 256;
    for (int s = 0; s < n_st; s++) {
        o_off[s] = off;
        off += ((size_t)lay[s % 4].N * 4 + 255) / 256 * 256;
        r_off[s] = off;
        off += ((size_t)lay[s % 4].N * 4 + 255) / 256 * 256;
    }
    buf staging = buf_new(&v, 64u << 20, true);
    buf dev = buf_new(&v, off, false);
    uint64_t h = 12345;
#define RNG() (h = h * 6364136223846793005ull + 1442695040888963407ull, (double)(h >> 11) / 9007199254740992.0 - 0.5)
    /* per stage shape: the pool (quantized) and its dequantized rows for --check */
    unsigned char *pool[4];
    float *pool_f[4];
    uint64_t prb[4];
    for (int t = 0; t < 4; t++) {
        int64_t K = lay[t].K;
        qtype_row_bytes(qt, (uint64_t)K, &prb[t]);
        pool[t] = malloc(prb[t] * POOL_ROWS);
        pool_f[t] = malloc(sizeof(float) * (size_t)K * POOL_ROWS);
        float *f = malloc(sizeof(float) * (size_t)K);
        for (int r = 0; r < POOL_ROWS; r++) {
            for (int64_t k = 0; k < K; k++) f[k] = (float)(RNG() * 2.0 * sqrt(3.0 / (double)K));   /* gain ~1 */
            quant_quantize_row(qt, f, pool[t] + prb[t] * r, K);
            quant_dequantize_row(qt, pool[t] + prb[t] * r, pool_f[t] + (size_t)K * r, K);
        }
        free(f);
    }
    {
        size_t most = 0;
        for (int t = 0; t < 4; t++)
            if (prb[t] * (size_t)lay[t].N > most) most = prb[t] * (size_t)lay[t].N;
        unsigned char *w = malloc(most);
        for (int t = 0; t < 4; t++) {
            for (int64_t n = 0; n < lay[t].N; n++) memcpy(w + prb[t] * n, pool[t] + prb[t] * (n % POOL_ROWS), prb[t]);
            for (int s = t; s < n_st; s += 4) upload(&v, &dev, w_off[s], w, prb[t] * (size_t)lay[t].N, &staging);
        }
        free(w);
    }
    float *x0 = malloc(sizeof(float) * (size_t)maxk);
    for (int64_t k = 0; k < maxk; k++) x0[k] = (float)RNG();
    upload(&v, &dev, x0_off, x0, sizeof(float) * (size_t)maxk, &staging);
    for (int s = 0; s < n_st; s++) {
        float *r = malloc(sizeof(float) * (size_t)lay[s % 4].N);
        for (int64_t n = 0; n < lay[s % 4].N; n++) r[n] = (float)RNG() * 0.1f;
        upload(&v, &dev, r_off[s], r, sizeof(float) * (size_t)lay[s % 4].N, &staging);
        free(r);
    }
    /* ---- stage table: x of stage s is stage s - 1's output ---- */
    gpu_stage *tab = calloc((size_t)n_st, sizeof *tab);
    for (int s = 0; s < n_st; s++) {
        const stage_desc *d = &lay[s % 4];
        tab[s] = (gpu_stage){.x = dev.addr + (s ? o_off[s - 1] : x0_off), .w = dev.addr + w_off[s],
                             .out = dev.addr + o_off[s], .res = dev.addr + r_off[s], .N = (uint32_t)d->N,
                             .K = (uint32_t)d->K, .row_bytes = (uint32_t)prb[s % 4], .epi = (uint32_t)d->epi};
    }
    chain ch = {.dev = dev, .n_stages = n_st};
    ch.table = buf_new(&v, sizeof *tab * (size_t)n_st, false);
    upload(&v, &ch.table, 0, tab, sizeof *tab * (size_t)n_st, &staging);
    ch.sync = buf_new(&v, 256, false);

    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = (uint32_t)n_st + 1};
    VkQueryPool qp;
    CHECK_VK(v.f.vkCreateQueryPool(v.dev, &qi, NULL, &qp));

    /* variants: per-stage dispatches, persistent without and with the prefetch */
    struct { const char *name; bool persist; uint32_t pf; } modes[3] = {
        {"per-stage dispatches", false, 0}, {"persistent", true, 0}, {"persistent + prefetch", true, 1}};
    uint32_t spec0[9] = {wg, (uint32_t)maxk, u, 0, hn, abl, waitall, xl, xbatch}, spec1[9];
    memcpy(spec1, spec0, sizeof spec1);
    spec1[3] = 1;   /* decode_chain.comp's PF */
    pipe pipes[2] = {make_pipe(&v, code, code_bytes, spec0), make_pipe(&v, code, code_bytes, spec1)};
    double gb = (double)wbytes / 1e9;
    printf("# vk_chain: %s-shaped layers x %d (%d stages, Q4_K, %.3f GB of weights), workgroup %u, U %u, %d runs\n",
           !strcmp(model, "1b") ? "1B" : !strcmp(model, "tiny") ? "tiny" : "8B", layers, n_st, gb, wg, u, runs);
    printf("| mode | grid | us / chain (median) | us / layer | GB/s |\n|---|---:|---:|---:|---:|\n");
    size_t out_total = 0;
    for (int s = 0; s < n_st; s++) out_total += (size_t)lay[s % 4].N;
    float *ref_out = NULL;
    int failures = 0;
    for (uint32_t gi = 0; gi < n_grids; gi++) {
        for (int mi = 0; mi < 3; mi++) {
            const pipe *pp = &pipes[modes[mi].pf];
            double *t = malloc(sizeof(double) * (size_t)runs), type_us[4] = {0}, *st_us = malloc(sizeof(double) * (size_t)n_st);
            uint32_t err = 0, e1;
            (void)run_once(&v, pp, &ch, grids[gi], modes[mi].persist, qp, &staging, &e1, NULL);   /* warm-up */
            err |= e1;
            for (int r = 0; r < runs && !err; r++) {
                t[r] = run_once(&v, pp, &ch, grids[gi], modes[mi].persist, qp, &staging, &e1, st_us);
                for (int s2 = 0; s2 < n_st; s2++) type_us[s2 % 4] += st_us[s2] / (runs * layers);
                err |= e1;
            }
            free(st_us);
            qsort(t, (size_t)runs, sizeof *t, cmp_d);
            double med = t[runs / 2];
            free(t);
            if (err) {
                printf("| %s | %u | grid barrier timed out (workgroups not co-resident) | | |\n", modes[mi].name, grids[gi]);
                failures++;
                continue;
            }
            printf("| %s | %u | %.1f | %.2f | %.0f |\n", modes[mi].name, grids[gi], med, med / layers, gb / (med * 1e-6));
            if (!modes[mi].persist) {   /* each stage shape's mean dispatch time (timestamps between dispatches) */
                printf("  per stage (mean us, GB/s):");
                for (int t2 = 0; t2 < 4; t2++)
                    printf(" %lldx%lld %.2f (%.0f)", (long long)lay[t2].N, (long long)lay[t2].K, type_us[t2],
                           (double)prb[t2] * (double)lay[t2].N / (type_us[t2] * 1e3));
                printf("\n");
            }
            fflush(stdout);
            if (!check) continue;
            /* every stage's output against float64, from the x the GPU read */
            float *outs = malloc(sizeof(float) * out_total);
            size_t at = 0;
            for (int s = 0; s < n_st; s++) {
                download(&v, &dev, o_off[s], outs + at, sizeof(float) * (size_t)lay[s % 4].N, &staging);
                at += (size_t)lay[s % 4].N;
            }
            float *res = malloc(sizeof(float) * 28672);
            double *xr = malloc(sizeof(double) * (size_t)maxk);
            at = 0;
            double worst = 0;
            for (int s = 0; s < n_st; s++) {
                const stage_desc *d = &lay[s % 4];
                const float *xs = s ? outs + at - lay[(s - 1) % 4].N : x0;
                download(&v, &dev, r_off[s], res, sizeof(float) * (size_t)d->N, &staging);
                /* x rounded as the shader rounds it (8 bits per 256-block), so
                 * the only difference left is float summation order */
                round_like_shader(xs, xr, d->K);
                double num = 0, den = 0;
                for (int64_t n = 0; n < d->N; n++) {
                    const float *wr = pool_f[s % 4] + (size_t)d->K * (size_t)(n % POOL_ROWS);
                    double y = d->epi ? res[n] : 0;
                    for (int64_t k = 0; k < d->K; k++) y += (double)wr[k] * xr[k];
                    double e = (double)outs[at + n] - y;
                    if (getenv("VK_CHAIN_DEBUG") && fabs(e) > 1e-4 * (fabs(y) + 1e-3))
                        fprintf(stderr, "stage %d row %lld: %g vs %g\n", s, (long long)n, outs[at + n], y);
                    num += e * e;
                    den += y * y;
                }
                double rel = sqrt(num / (den > 0 ? den : 1));
                if (rel > worst) worst = rel;
                if (!(rel < 1e-5)) {
                    printf("  stage %d: relative error %.3g against float64\n", s, rel);
                    failures++;
                }
                at += (size_t)d->N;
            }
            free(res);
            free(xr);
            if (!ref_out) {
                ref_out = outs;
            } else {
                if (memcmp(ref_out, outs, sizeof(float) * out_total)) {
                    printf("  %s, grid %u: results differ from the first variant's bit for bit\n", modes[mi].name, grids[gi]);
                    failures++;
                }
                free(outs);
            }
            printf("  check: worst stage relative error %.2e against float64\n", worst);
        }
        free(ref_out);   /* another grid splits rows differently: compare within a grid only */
        ref_out = NULL;
    }
    v.f.vkDestroyQueryPool(v.dev, qp, NULL);
    for (int i = 0; i < 2; i++) {
        v.f.vkDestroyPipeline(v.dev, pipes[i].p, NULL);
        v.f.vkDestroyPipelineLayout(v.dev, pipes[i].l, NULL);
    }
    buf_free(&v, &ch.table);
    buf_free(&v, &ch.sync);
    buf_free(&v, &dev);
    buf_free(&v, &staging);
    v.f.vkDestroyCommandPool(v.dev, v.pool, NULL);
    v.f.vkDestroyDevice(v.dev, NULL);
    for (int t = 0; t < 4; t++) {
        free(pool[t]);
        free(pool_f[t]);
    }
    free(tab);
    free(x0);
    free(w_off);
    free(o_off);
    free(r_off);
    free(code);
    if (check) printf("%s\n", failures ? "vk_chain: CHECK FAILED" : "vk_chain: check passed");
    return failures ? 1 : 0;
}
