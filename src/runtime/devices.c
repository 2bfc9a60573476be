/*
 * devices.c — the public device queries: rlx_device_count / _get_info over
 * the CPU and every Vulkan device, and rlx_vulkan_device_count / _describe,
 * forwarded to the Vulkan backend when this build has one.
 */
#include "runtime/backend.h"
#include "cpu/cpu_backend.h"
#include <stdlib.h>
#include <string.h>

#ifdef RLX_HAVE_VULKAN
#include "vulkan/vk_backend.h"

int rlx_vulkan_device_count(void) { return vk_device_count(); }

char *rlx_vulkan_device_describe(int i) { return vk_device_describe(i); }

static rlx_status vulkan_device_info(int i, rlx_device_info *out) { return vk_device_info(i, out); }

#else

int rlx_vulkan_device_count(void) {
    rlx_fail(RLX_STATUS_DEVICE, "this build of rlx has no Vulkan backend (Vulkan headers or glslc were missing)");
    return 0;
}

char *rlx_vulkan_device_describe(int i) {
    (void)i;
    rlx_fail(RLX_STATUS_DEVICE, "this build of rlx has no Vulkan backend");
    return NULL;
}

static rlx_status vulkan_device_info(int i, rlx_device_info *out) {
    (void)i;
    (void)out;
    return rlx_fail(RLX_STATUS_DEVICE, "this build of rlx has no Vulkan backend");
}

#endif

int rlx_device_count(void) {
    int n = rlx_vulkan_device_count();
    rlx_clear_error();   /* no Vulkan is not an error here: the CPU is always there */
    return 1 + (n > 0 ? n : 0);
}

rlx_status rlx_device_get_info(int i, rlx_device_info *out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_device_get_info: out is NULL");
    if (i == 0) {
        cpu_device_info(out);
        return RLX_OK;
    }
    int n = rlx_device_count();
    if (i < 0 || i >= n)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_device_get_info: device %d does not exist (%d devices: the CPU%s)",
                        i, n, n > 1 ? " and Vulkan" : " only");
    return vulkan_device_info(i - 1, out);
}
