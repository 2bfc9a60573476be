/*
 * vk_loader.c — dlopen of libvulkan.so.1 and the one VkInstance of the
 * process. Both are created lazily, once, under pthread_once; they live until
 * the process exits (destroying an instance while another thread might be
 * creating devices from it is not worth the risk or the code).
 */
#include "vulkan/vk_loader.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_once_t   once = PTHREAD_ONCE_INIT;
static rlx_status       init_status;
static char             init_error[512];
static VkInstance       instance;
static vk_instance_fns  ifns;
static PFN_vkGetInstanceProcAddr get_instance_proc;

const char *vk_result_name(VkResult r) {
    switch (r) {
    case VK_SUCCESS: return "VK_SUCCESS";
    case VK_NOT_READY: return "VK_NOT_READY";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
    default: return "VkResult(other)";
    }
}

static void set_init_error(rlx_status st, const char *fmt, const char *detail) {
    init_status = st;
    snprintf(init_error, sizeof init_error, fmt, detail ? detail : "");
}

static void init_once(void) {
    const char *names[] = {"libvulkan.so.1", "libvulkan.so", "libvulkan.1.dylib", "libMoltenVK.dylib"};
    void *lib = NULL;
    for (size_t i = 0; i < RLX_ARRAY_LEN(names) && !lib; i++) lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        set_init_error(RLX_STATUS_DEVICE, "no Vulkan: libvulkan.so.1 could not be loaded (%s)", dlerror());
        return;
    }
    get_instance_proc = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
    if (!get_instance_proc) { set_init_error(RLX_STATUS_DEVICE, "no Vulkan: libvulkan lacks vkGetInstanceProcAddr%s", NULL); return; }
    PFN_vkCreateInstance create = (PFN_vkCreateInstance)get_instance_proc(NULL, "vkCreateInstance");
    PFN_vkEnumerateInstanceVersion version_fn =
        (PFN_vkEnumerateInstanceVersion)get_instance_proc(NULL, "vkEnumerateInstanceVersion");
    uint32_t version = VK_API_VERSION_1_0;
    if (version_fn) version_fn(&version);
    if (!create || version < VK_API_VERSION_1_2) {
        set_init_error(RLX_STATUS_DEVICE, "no usable Vulkan: rlx needs Vulkan 1.2 (buffer device address)%s", NULL);
        return;
    }
    VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "rlx",
                             .pEngineName = "rlx", .apiVersion = VK_API_VERSION_1_2};
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
    VkResult r = create(&ci, NULL, &instance);
    if (r != VK_SUCCESS) {
        set_init_error(RLX_STATUS_DEVICE, "no Vulkan: vkCreateInstance failed (%s)", vk_result_name(r));
        return;
    }
#define X(n)                                                                          \
    ifns.n = (PFN_##n)get_instance_proc(instance, #n);                                \
    if (!ifns.n) { set_init_error(RLX_STATUS_DEVICE, "Vulkan loader lacks %s", #n); return; }
    VK_INSTANCE_FUNCS(X)
#undef X
    init_status = RLX_OK;
}

rlx_status vk_instance_get(VkInstance *out, const vk_instance_fns **fns) {
    pthread_once(&once, init_once);
    if (init_status != RLX_OK) return rlx_fail(init_status, "%s", init_error);
    *out = instance;
    *fns = &ifns;
    return RLX_OK;
}

rlx_status vk_device_fns_load(VkDevice device, vk_device_fns *fns) {
#define X(n)                                                                          \
    fns->n = (PFN_##n)ifns.vkGetDeviceProcAddr(device, #n);                           \
    if (!fns->n) return rlx_fail(RLX_STATUS_DEVICE, "vulkan: the device lacks %s", #n);
    VK_DEVICE_FUNCS(X)
#undef X
    return RLX_OK;
}
