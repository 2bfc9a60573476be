/*
 * vk_loader.h — libvulkan loaded at run time with dlopen, so that rlx and the
 * `rlx` CLI work on machines with no Vulkan at all. The function pointers
 * are process-wide (the loader is process-wide state anyway) and are filled
 * once; device-level functions are resolved through vkGetDeviceProcAddr.
 */
#ifndef RLX_VK_LOADER_H
#define RLX_VK_LOADER_H

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include "core/core.h"

#define VK_INSTANCE_FUNCS(X)                      \
    X(vkDestroyInstance)                          \
    X(vkEnumeratePhysicalDevices)                 \
    X(vkGetPhysicalDeviceProperties)              \
    X(vkGetPhysicalDeviceProperties2)             \
    X(vkGetPhysicalDeviceFeatures2)               \
    X(vkGetPhysicalDeviceMemoryProperties)        \
    X(vkGetPhysicalDeviceQueueFamilyProperties)   \
    X(vkEnumerateDeviceExtensionProperties)       \
    X(vkCreateDevice)                             \
    X(vkDestroyDevice)                            \
    X(vkGetDeviceProcAddr)

#define VK_DEVICE_FUNCS(X)                        \
    X(vkDestroyDevice)                            \
    X(vkGetDeviceQueue)                           \
    X(vkCreateBuffer)                             \
    X(vkDestroyBuffer)                            \
    X(vkGetBufferMemoryRequirements)              \
    X(vkAllocateMemory)                           \
    X(vkFreeMemory)                               \
    X(vkBindBufferMemory)                         \
    X(vkMapMemory)                                \
    X(vkUnmapMemory)                              \
    X(vkGetBufferDeviceAddress)                   \
    X(vkCreateShaderModule)                       \
    X(vkDestroyShaderModule)                      \
    X(vkCreatePipelineLayout)                     \
    X(vkDestroyPipelineLayout)                    \
    X(vkCreateComputePipelines)                   \
    X(vkDestroyPipeline)                          \
    X(vkCreateCommandPool)                        \
    X(vkDestroyCommandPool)                       \
    X(vkAllocateCommandBuffers)                   \
    X(vkFreeCommandBuffers)                       \
    X(vkBeginCommandBuffer)                       \
    X(vkEndCommandBuffer)                         \
    X(vkCmdBindPipeline)                          \
    X(vkCmdPushConstants)                         \
    X(vkCmdDispatch)                              \
    X(vkCmdPipelineBarrier)                       \
    X(vkCmdCopyBuffer)                            \
    X(vkCmdFillBuffer)                            \
    X(vkCmdWriteTimestamp)                        \
    X(vkCmdResetQueryPool)                        \
    X(vkCreateQueryPool)                          \
    X(vkDestroyQueryPool)                         \
    X(vkGetQueryPoolResults)                      \
    X(vkQueueSubmit)                              \
    X(vkQueueWaitIdle)                            \
    X(vkCreateFence)                              \
    X(vkDestroyFence)                             \
    X(vkWaitForFences)                            \
    X(vkGetFenceStatus)                           \
    X(vkResetFences)

typedef struct vk_instance_fns {
#define X(n) PFN_##n n;
    VK_INSTANCE_FUNCS(X)
#undef X
} vk_instance_fns;

typedef struct vk_device_fns {
#define X(n) PFN_##n n;
    VK_DEVICE_FUNCS(X)
#undef X
} vk_device_fns;

/* Loads libvulkan and creates the process-wide instance on first use.
 * Returns RLX_STATUS_DEVICE with the reason when Vulkan is unavailable. */
rlx_status vk_instance_get(VkInstance *instance, const vk_instance_fns **fns);

/* Resolves the device functions for a new logical device. */
rlx_status vk_device_fns_load(VkDevice device, vk_device_fns *fns);

/* A readable name for a VkResult. */
const char *vk_result_name(VkResult r);

#endif
