/*
 * vk_device.c — physical device enumeration and probing, the device list that
 * `rlx devices` prints, device choice, and shared logical-device contexts.
 */
#include "vulkan/vk_backend.h"
#include "vulkan/vk_ctx.h"
#include "vulkan/vk_tuning.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VK_MAX_DEVICES 16

typedef struct vk_probe {
    VkPhysicalDevice                 phys;
    VkPhysicalDeviceProperties       props;
    VkPhysicalDeviceMemoryProperties mem;
    char     driver[256];
    uint32_t subgroup_size;
    bool     bda, int64, int16, int8, storage8, storage16, float16;
    bool     ext_coopmat_nv, ext_coopmat_khr, ext_coopmat2_nv, ext_bf16, ext_int_dot, ext_exec_props;
    bool     coopmat_nv_feature;
    bool     int_dot_feature;        /* shaderIntegerDotProduct (through VK_KHR_shader_integer_dot_product) */
    bool     int_dot_accel;          /* 4x8-bit packed signed dots reported as accelerated */
    bool     subgroup_shuffle;
    uint32_t sm_count, lanes_per_sm;  /* VK_NV_shader_sm_builtins; 0 when the device does not say */
    bool     usable;
    char     unusable_reason[160];
} vk_probe;

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static vk_ctx         *contexts[VK_MAX_DEVICES];

rlx_status vk_check(VkResult r, const char *what) {
    if (r == VK_SUCCESS) return RLX_OK;
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: %s: %s", what, vk_result_name(r));
    return rlx_fail(RLX_STATUS_DEVICE, "vulkan: %s: %s", what, vk_result_name(r));
}

static bool has_ext(const VkExtensionProperties *e, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++) if (strcmp(e[i].extensionName, name) == 0) return true;
    return false;
}

static void probe(const vk_instance_fns *fi, VkPhysicalDevice phys, vk_probe *p) {
    memset(p, 0, sizeof *p);
    p->phys = phys;
    fi->vkGetPhysicalDeviceProperties(phys, &p->props);
    fi->vkGetPhysicalDeviceMemoryProperties(phys, &p->mem);

    uint32_t n_ext = 0;
    fi->vkEnumerateDeviceExtensionProperties(phys, NULL, &n_ext, NULL);
    VkExtensionProperties *ext = calloc(n_ext ? n_ext : 1, sizeof *ext);
    if (ext) fi->vkEnumerateDeviceExtensionProperties(phys, NULL, &n_ext, ext);
    else n_ext = 0;
    p->ext_coopmat_nv = has_ext(ext, n_ext, "VK_NV_cooperative_matrix");
    p->ext_coopmat_khr = has_ext(ext, n_ext, "VK_KHR_cooperative_matrix");
    p->ext_coopmat2_nv = has_ext(ext, n_ext, "VK_NV_cooperative_matrix2");
    p->ext_bf16 = has_ext(ext, n_ext, "VK_KHR_shader_bfloat16");
    /* Integer dot products through the extension even on Vulkan 1.3 devices,
     * where they are core: the instance is created for Vulkan 1.2
     * (vk_loader.c), so 1.3 core features are not ours to enable. */
    p->ext_int_dot = has_ext(ext, n_ext, "VK_KHR_shader_integer_dot_product");
    p->ext_exec_props = has_ext(ext, n_ext, "VK_KHR_pipeline_executable_properties");
    /* only its properties are read (no feature to enable for that) */
    bool ext_sm_builtins = has_ext(ext, n_ext, "VK_NV_shader_sm_builtins");
    free(ext);

    VkPhysicalDeviceShaderIntegerDotProductPropertiesKHR idp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES_KHR};
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV smp = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV, .pNext = p->ext_int_dot ? &idp : NULL};
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES,
                                            .pNext = ext_sm_builtins ? (void *)&smp : p->ext_int_dot ? (void *)&idp : NULL};
    VkPhysicalDeviceSubgroupProperties sub = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES, .pNext = &drv};
    VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sub};
    fi->vkGetPhysicalDeviceProperties2(phys, &p2);
    snprintf(p->driver, sizeof p->driver, "%.120s %.120s", drv.driverName, drv.driverInfo);
    p->subgroup_size = sub.subgroupSize;
    p->subgroup_shuffle = (sub.supportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) &&
                          (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT);
    p->int_dot_accel = p->ext_int_dot && idp.integerDotProduct4x8BitPackedSignedAccelerated;
    if (ext_sm_builtins && smp.shaderSMCount && smp.shaderWarpsPerSM && smp.shaderWarpsPerSM <= 4096) {
        p->sm_count = smp.shaderSMCount;
        p->lanes_per_sm = smp.shaderWarpsPerSM * 32u;   /* NVIDIA warps are 32 lanes */
    }

    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR idf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                      .pNext = p->ext_int_dot ? &idf : NULL};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .pNext = p->ext_coopmat_nv ? (void *)&cm : p->ext_int_dot ? (void *)&idf : NULL};
    VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
    fi->vkGetPhysicalDeviceFeatures2(phys, &f2);
    if (p->ext_exec_props) {   /* RLX_VK_PIPELINE_STATS needs the feature, not just the extension */
        VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR epf = {
            .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
        VkPhysicalDeviceFeatures2 fe = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &epf};
        fi->vkGetPhysicalDeviceFeatures2(phys, &fe);
        p->ext_exec_props = epf.pipelineExecutableInfo;
    }
    p->bda = f12.bufferDeviceAddress;
    p->int8 = f12.shaderInt8;
    p->float16 = f12.shaderFloat16;
    p->storage8 = f12.storageBuffer8BitAccess;
    p->storage16 = f11.storageBuffer16BitAccess;
    p->int64 = f2.features.shaderInt64;
    p->int16 = f2.features.shaderInt16;
    p->coopmat_nv_feature = p->ext_coopmat_nv && cm.cooperativeMatrix;
    p->int_dot_feature = p->ext_int_dot && idf.shaderIntegerDotProduct;

    p->usable = true;
    const char *missing = !p->bda ? "bufferDeviceAddress" : !p->int64 ? "shaderInt64" : !p->int16 ? "shaderInt16"
                        : !p->int8 ? "shaderInt8" : !p->storage8 ? "storageBuffer8BitAccess"
                        : !p->storage16 ? "storageBuffer16BitAccess" : NULL;
    if (p->props.apiVersion < VK_API_VERSION_1_2) missing = "Vulkan 1.2";
    if (missing) {
        p->usable = false;
        snprintf(p->unusable_reason, sizeof p->unusable_reason, "lacks %s", missing);
    }
}

/* Enumerates and probes every physical device (in driver order). */
static rlx_status probe_all(vk_probe *out, int *count) {
    VkInstance inst;
    const vk_instance_fns *fi;
    *count = 0;
    rlx_status st = vk_instance_get(&inst, &fi);
    if (st != RLX_OK) return st;
    uint32_t n = VK_MAX_DEVICES;
    VkPhysicalDevice phys[VK_MAX_DEVICES];
    VkResult r = fi->vkEnumeratePhysicalDevices(inst, &n, phys);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return vk_check(r, "vkEnumeratePhysicalDevices");
    for (uint32_t i = 0; i < n; i++) probe(fi, phys[i], &out[i]);
    *count = (int)n;
    if (n == 0) return rlx_fail(RLX_STATUS_DEVICE, "no Vulkan device: the loader found no physical device");
    return RLX_OK;
}

static const char *type_name(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU (software)";
    default: return "other";
    }
}

/* Whether the i8 decode matvec may use the device's integer dot products
 * (its x rounding also uses subgroup shuffles). */
static bool int_dot_usable(const vk_probe *p, const vk_open_overrides *ov) {
    return p->int_dot_feature && p->subgroup_shuffle && !ov->no_int_dot;
}

int vk_device_count(void) {
    vk_probe p[VK_MAX_DEVICES];
    int n;
    if (probe_all(p, &n) != RLX_OK) return 0;
    return n;
}

char *vk_device_describe(int i) {
    vk_probe p[VK_MAX_DEVICES];
    int n;
    if (probe_all(p, &n) != RLX_OK) return NULL;
    if (i < 0 || i >= n) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "vulkan device %d: there are %d devices", i, n);
        return NULL;
    }
    const vk_probe *d = &p[i];
    vk_open_overrides ov = vk_open_overrides_read();
    size_t cap = 2048;
    char *s = malloc(cap);
    if (!s) {
        rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan device %d: out of memory for its description", i);
        return NULL;
    }
    char units[64] = "not reported";
    if (d->sm_count) snprintf(units, sizeof units, "%u SMs, %u lanes each", d->sm_count, d->lanes_per_sm);
    int w = snprintf(s, cap,
                     "vulkan %d  %s\n"
                     "  type             %s\n"
                     "  driver           %s (api %u.%u.%u)\n"
                     "  subgroup size    %u\n"
                     "  fp16 arithmetic  %s; 16-bit storage %s; bf16 %s\n"
                     "  coop. matrix     NV %s%s; KHR %s; NV2 %s\n"
                     "  integer dot      %s%s%s\n"
                     "  compute units    %s\n"
                     "  buffer address   %s\n"
                     "  usable by rlx    %s%s\n"
                     "  memory heaps    ",
                     i, d->props.deviceName, type_name(d->props.deviceType), d->driver,
                     VK_API_VERSION_MAJOR(d->props.apiVersion), VK_API_VERSION_MINOR(d->props.apiVersion),
                     VK_API_VERSION_PATCH(d->props.apiVersion), d->subgroup_size, d->float16 ? "yes" : "no",
                     d->storage16 ? "yes" : "no", d->ext_bf16 ? "yes (VK_KHR_shader_bfloat16)" : "no",
                     d->ext_coopmat_nv ? "yes" : "no", d->ext_coopmat_nv && !d->coopmat_nv_feature ? " (feature off)" : "",
                     d->ext_coopmat_khr ? "yes" : "no", d->ext_coopmat2_nv ? "yes" : "no",
                     d->int_dot_feature ? "yes" : "no", !d->int_dot_feature ? "" : d->int_dot_accel ? ", 4x8-bit accelerated" : "",
                     int_dot_usable(d, &ov) ? "" : d->int_dot_feature ? " (not used: RLX_VK_NO_INT_DOT or no subgroup shuffles)" : "",
                     units, d->bda ? "yes" : "no",
                     d->usable ? "yes" : "no, ", d->usable ? "" : d->unusable_reason);
    size_t len = w > 0 ? (size_t)w : 0;
    for (uint32_t h = 0; h < d->mem.memoryHeapCount && len < cap; h++) {
        w = snprintf(s + len, cap - len, " %.1f GiB%s", d->mem.memoryHeaps[h].size / 1073741824.0,
                     d->mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? " (device-local)" : "");
        if (w > 0) len += (size_t)w;
    }
    if (len < cap - 1) { s[len++] = '\n'; s[len] = 0; }
    return s;
}

rlx_status vk_device_info(int i, rlx_device_info *out) {
    vk_probe p[VK_MAX_DEVICES];
    int n;
    rlx_status st = probe_all(p, &n);
    if (st != RLX_OK) return st;
    if (i < 0 || i >= n) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "vulkan device %d: there are %d devices", i, n);
    const vk_probe *d = &p[i];
    vk_open_overrides ov = vk_open_overrides_read();
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", d->props.deviceName);
    out->kind = d->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU ? RLX_DEVICE_SOFTWARE_GPU : RLX_DEVICE_GPU;
    out->backend = RLX_BACKEND_VULKAN;
    out->backend_index = i;
    out->usable = d->usable;
    snprintf(out->unusable_reason, sizeof out->unusable_reason, "%s", d->usable ? "" : d->unusable_reason);
    snprintf(out->driver, sizeof out->driver, "%s", d->driver);
    out->api_version = d->props.apiVersion;
    out->compute_units = (int)d->sm_count;
    out->lanes_per_unit = (int)d->lanes_per_sm;
    out->subgroup_size = (int)d->subgroup_size;
    out->fp16 = d->float16;
    out->storage16 = d->storage16;
    out->bf16 = d->ext_bf16;
    out->cooperative_matrix_nv = d->coopmat_nv_feature;
    out->cooperative_matrix_khr = d->ext_coopmat_khr;
    out->integer_dot = d->int_dot_feature;
    out->integer_dot_accelerated = d->int_dot_accel;
    out->integer_dot_used = int_dot_usable(d, &ov);
    out->buffer_device_address = d->bda;
    for (uint32_t h = 0; h < d->mem.memoryHeapCount; h++)
        if (d->mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) out->device_local_bytes += d->mem.memoryHeaps[h].size;
    return RLX_OK;
}

static int rank_type(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 4;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 3;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 1;
    default: return 0;
    }
}

bool vk_hardware_present(void) {
    vk_probe p[VK_MAX_DEVICES];
    int n;
    if (probe_all(p, &n) != RLX_OK) { rlx_clear_error(); return false; }
    for (int i = 0; i < n; i++)
        if (p[i].usable && p[i].props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU) return true;
    return false;
}

static rlx_status choose(const vk_probe *p, int n, int index, const char *name, bool allow_software, int *out) {
    if (index >= 0) {
        if (index >= n) return rlx_fail(RLX_STATUS_DEVICE, "vulkan device %d does not exist (%d devices)", index, n);
        if (!p[index].usable)
            return rlx_fail(RLX_STATUS_DEVICE, "vulkan device %d (%s) %s", index, p[index].props.deviceName,
                            p[index].unusable_reason);
        *out = index;
        return RLX_OK;
    }
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (!p[i].usable) continue;
        if (name && *name) {
            if (!strstr(p[i].props.deviceName, name)) continue;
        } else if (!allow_software && p[i].props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU) {
            continue;
        }
        if (best < 0 || rank_type(p[i].props.deviceType) > rank_type(p[best].props.deviceType)) best = i;
    }
    if (best < 0) {
        if (name && *name) return rlx_fail(RLX_STATUS_DEVICE, "no usable Vulkan device matches '%s'", name);
        return rlx_fail(RLX_STATUS_DEVICE, "no usable Vulkan %sdevice", allow_software ? "" : "hardware ");
    }
    *out = best;
    return RLX_OK;
}

static rlx_status open_device(const vk_probe *p, int index, vk_ctx **out) {
    VkInstance inst;
    const vk_instance_fns *fi;
    rlx_status st = vk_instance_get(&inst, &fi);
    if (st != RLX_OK) return st;
    vk_ctx *c = calloc(1, sizeof *c);
    if (!c) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
    c->index = index;
    c->phys = p->phys;
    c->props = p->props;
    c->mem = p->mem;
    snprintf(c->name, sizeof c->name, "%s", p->props.deviceName);
    c->timestamp_period_ns = p->props.limits.timestampPeriod;
    pthread_mutex_init(&c->lock, NULL);

    uint32_t nq = 0;
    fi->vkGetPhysicalDeviceQueueFamilyProperties(p->phys, &nq, NULL);
    VkQueueFamilyProperties qf[32];
    if (nq > 32) nq = 32;
    fi->vkGetPhysicalDeviceQueueFamilyProperties(p->phys, &nq, qf);
    int fam = -1;
    for (uint32_t i = 0; i < nq && fam < 0; i++)   /* prefer a compute queue without graphics */
        if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) && !(qf[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) fam = (int)i;
    for (uint32_t i = 0; i < nq && fam < 0; i++)
        if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) fam = (int)i;
    if (fam < 0) {
        st = rlx_fail(RLX_STATUS_DEVICE, "vulkan: %s has no compute queue", c->name);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return st;
    }
    c->queue_family = (uint32_t)fam;

    float prio = 1.0f;
    VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = c->queue_family,
                                   .queueCount = 1, .pQueuePriorities = &prio};
    VkPhysicalDeviceCooperativeMatrixFeaturesNV cm = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV,
                                                      .cooperativeMatrix = VK_TRUE};
    VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            .pNext = p->coopmat_nv_feature ? &cm : NULL,
                                            .bufferDeviceAddress = VK_TRUE, .shaderInt8 = VK_TRUE,
                                            .storageBuffer8BitAccess = VK_TRUE, .shaderFloat16 = p->float16};
    VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12,
                                            .storageBuffer16BitAccess = VK_TRUE};
    VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
    f2.features.shaderInt64 = VK_TRUE;
    f2.features.shaderInt16 = VK_TRUE;
    vk_open_overrides ov = vk_open_overrides_read();   /* once per logical device */
    bool int_dot = int_dot_usable(p, &ov);
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR idf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR, .pNext = f12.pNext,
        .shaderIntegerDotProduct = VK_TRUE};
    if (int_dot) f12.pNext = &idf;
    /* RLX_VK_PIPELINE_STATS=1: the driver's statistics of every pipeline
     * (registers, shared memory, ...) on stderr as it is created, where
     * VK_KHR_pipeline_executable_properties exists (a tuning aid: registers
     * set a kernel's occupancy) */
    bool stats = p->ext_exec_props && ov.pipeline_stats;
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR epf = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR, .pNext = f12.pNext,
        .pipelineExecutableInfo = VK_TRUE};
    if (stats) f12.pNext = &epf;
    const char *exts[3];
    uint32_t n_exts = 0;
    if (p->coopmat_nv_feature) exts[n_exts++] = "VK_NV_cooperative_matrix";
    if (int_dot) exts[n_exts++] = "VK_KHR_shader_integer_dot_product";
    if (stats) exts[n_exts++] = "VK_KHR_pipeline_executable_properties";
    VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2, .queueCreateInfoCount = 1,
                              .pQueueCreateInfos = &qci, .enabledExtensionCount = n_exts, .ppEnabledExtensionNames = exts};
    VkResult r = fi->vkCreateDevice(p->phys, &dci, NULL, &c->dev);
    if (r != VK_SUCCESS) {
        pthread_mutex_destroy(&c->lock);
        free(c);
        return vk_check(r, "vkCreateDevice");
    }
    if ((st = vk_device_fns_load(c->dev, &c->f)) != RLX_OK) {
        fi->vkDestroyDevice(c->dev, NULL);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return st;
    }
    c->f.vkGetDeviceQueue(c->dev, c->queue_family, 0, &c->queue);
    if (stats) {
        c->get_exec_props = (PFN_vkGetPipelineExecutablePropertiesKHR)fi->vkGetDeviceProcAddr(
            c->dev, "vkGetPipelineExecutablePropertiesKHR");
        c->get_exec_stats = (PFN_vkGetPipelineExecutableStatisticsKHR)fi->vkGetDeviceProcAddr(
            c->dev, "vkGetPipelineExecutableStatisticsKHR");
    }

    vk_caps *k = &c->caps;
    k->subgroup_size = p->subgroup_size;
    k->max_workgroup_invocations = p->props.limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; i++) k->max_workgroup_count[i] = p->props.limits.maxComputeWorkGroupCount[i];
    k->max_shared_memory = p->props.limits.maxComputeSharedMemorySize;
    k->shader_float16 = p->float16;
    k->storage_16bit = p->storage16;
    k->shader_int64 = p->int64;
    k->coopmat_nv = p->coopmat_nv_feature && p->float16;
    k->coopmat_khr = p->ext_coopmat_khr;
    k->is_software = p->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    k->compute_units = p->sm_count;
    k->lanes_per_unit = p->lanes_per_sm;
    if (ov.no_coopmat) k->coopmat_nv = false;
    k->int_dot = int_dot;

    VkPushConstantRange range = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .offset = 0, .size = VK_MAX_PUSH};
    VkPipelineLayoutCreateInfo lci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, .pushConstantRangeCount = 1,
                                      .pPushConstantRanges = &range};
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                   .queueFamilyIndex = c->queue_family};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((st = vk_check(c->f.vkCreatePipelineLayout(c->dev, &lci, NULL, &c->layout), "vkCreatePipelineLayout")) != RLX_OK ||
        (st = vk_check(c->f.vkCreateCommandPool(c->dev, &pci, NULL, &c->upload_pool), "vkCreateCommandPool")) != RLX_OK ||
        (st = vk_check(c->f.vkCreateFence(c->dev, &fci, NULL, &c->upload_fence[0]), "vkCreateFence")) != RLX_OK ||
        (st = vk_check(c->f.vkCreateFence(c->dev, &fci, NULL, &c->upload_fence[1]), "vkCreateFence")) != RLX_OK) {
        c->refcount = 1;
        vk_ctx_release(c);
        return st;
    }
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = c->upload_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 2};
    if ((st = vk_check(c->f.vkAllocateCommandBuffers(c->dev, &ai, c->upload_cb), "vkAllocateCommandBuffers")) != RLX_OK) {
        c->refcount = 1;
        vk_ctx_release(c);
        return st;
    }
    *out = c;
    return RLX_OK;
}

rlx_status vk_ctx_acquire(int index, const char *name, bool allow_software, vk_ctx **out) {
    *out = NULL;
    vk_probe p[VK_MAX_DEVICES];
    int n, chosen = -1;
    rlx_status st = probe_all(p, &n);
    if (st != RLX_OK) return st;
    if ((st = choose(p, n, index, name, allow_software, &chosen)) != RLX_OK) return st;
    pthread_mutex_lock(&ctx_lock);
    if (!contexts[chosen]) st = open_device(&p[chosen], chosen, &contexts[chosen]);
    if (st == RLX_OK) {
        contexts[chosen]->refcount++;
        *out = contexts[chosen];
    }
    pthread_mutex_unlock(&ctx_lock);
    return st;
}

void vk_ctx_release(vk_ctx *c) {
    if (!c) return;
    pthread_mutex_lock(&ctx_lock);
    bool last = --c->refcount <= 0;
    if (last && contexts[c->index] == c) contexts[c->index] = NULL;
    pthread_mutex_unlock(&ctx_lock);
    if (!last) return;
    if (c->dev) {
        for (int i = 0; i < c->n_pipes; i++) c->f.vkDestroyPipeline(c->dev, c->pipes[i].pipeline, NULL);
        vk_upload_release(c);
        for (int i = 0; i < 2; i++)
            if (c->upload_fence[i]) c->f.vkDestroyFence(c->dev, c->upload_fence[i], NULL);
        if (c->upload_pool) c->f.vkDestroyCommandPool(c->dev, c->upload_pool, NULL);
        if (c->layout) c->f.vkDestroyPipelineLayout(c->dev, c->layout, NULL);
        VkInstance inst;
        const vk_instance_fns *fi;
        if (vk_instance_get(&inst, &fi) == RLX_OK) fi->vkDestroyDevice(c->dev, NULL);
    }
    free(c->pipes);
    pthread_mutex_destroy(&c->lock);
    free(c);
}
