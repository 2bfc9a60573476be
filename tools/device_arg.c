/*
 * device_arg.c — the commands' --device argument into rlx_compile_options.
 */
#include "device_arg.h"
#include <stdlib.h>
#include <string.h>

void tool_set_device(rlx_compile_options *o, const char *device) {
    if (!device || !strcmp(device, "auto")) return;
    char *end;
    long idx = strtol(device, &end, 10);
    if (!strcmp(device, "cpu")) o->backend = RLX_BACKEND_CPU;
    else if (!strcmp(device, "vulkan")) o->backend = RLX_BACKEND_VULKAN;
    else if (end != device && *end == 0 && idx >= 0) o->backend = RLX_BACKEND_VULKAN, o->device_index = (int)idx;
    else o->backend = RLX_BACKEND_VULKAN, o->device_name = device;
}
