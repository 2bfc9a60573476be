/*
 * device_arg.h — the commands' --device argument: auto (or none), cpu,
 * vulkan, a device index of `rlx devices`, or a substring of a device's name.
 */
#ifndef RLX_TOOLS_DEVICE_ARG_H
#define RLX_TOOLS_DEVICE_ARG_H

#include "rlx.h"

/* Sets o's backend and device choice from device (NULL: leaves o as it is). */
void tool_set_device(rlx_compile_options *o, const char *device);

#endif
