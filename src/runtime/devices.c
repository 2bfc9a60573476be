/*
 * devices.c — the public device queries (rlx_vulkan_device_count/_describe),
 * forwarded to the Vulkan backend when this build has one.
 */
#include "runtime/backend.h"
#include <stdlib.h>

#ifdef RLX_HAVE_VULKAN
#include "vulkan/vk_backend.h"

int rlx_vulkan_device_count(void) { return vk_device_count(); }

char *rlx_vulkan_device_describe(int i) { return vk_device_describe(i); }

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

#endif
