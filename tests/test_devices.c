/*
 * test_devices.c — rlx_device_count / rlx_device_get_info: the CPU is device
 * 0, every Vulkan device follows with its capabilities, bad arguments fail
 * with a message, and `rlx devices` prints what the API returns.
 */
#include "harness.h"
#include "vk_parity.h"
#include <stdlib.h>
#include <string.h>

TEST(devices_cpu_first_and_bad_arguments) {
    int n = rlx_device_count();
    CHECK_MSG(n >= 1, "rlx_device_count() = %d", n);
    rlx_device_info d;
    CHECK_OK(rlx_device_get_info(0, &d));
    CHECK(d.kind == RLX_DEVICE_CPU && d.backend == RLX_BACKEND_CPU && d.usable == 1);
    CHECK_MSG(d.name[0] != 0 && d.compute_units >= 1, "cpu: '%s', %d units", d.name, d.compute_units);
    CHECK_STATUS(rlx_device_get_info(0, NULL), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "out") != NULL);
    CHECK_STATUS(rlx_device_get_info(-1, &d), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_device_get_info(n, &d), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(strstr(rlx_last_error(), "does not exist") != NULL, "%s", rlx_last_error());
    int vulkan = rlx_vulkan_device_count();
    CHECK_MSG(n == 1 + (vulkan > 0 ? vulkan : 0), "%d devices, %d Vulkan", n, vulkan);
}

/* Every Vulkan device: backend index in order, a name, a subgroup size, and
 * the flags rlx's kernel choice depends on. */
TEST(devices_vulkan_capabilities) {
    VKP_REQUIRE();
    int n = rlx_device_count();
    CHECK(n >= 2);
    for (int i = 1; i < n; i++) {
        rlx_device_info d;
        CHECK_OK(rlx_device_get_info(i, &d));
        CHECK(d.backend == RLX_BACKEND_VULKAN && d.backend_index == i - 1);
        CHECK(d.kind == RLX_DEVICE_GPU || d.kind == RLX_DEVICE_SOFTWARE_GPU);
        CHECK_MSG(d.name[0] && d.driver[0], "device %d: name '%s', driver '%s'", i, d.name, d.driver);
        CHECK_MSG(d.subgroup_size >= 1 && d.subgroup_size <= 128, "%s: subgroup %d", d.name, d.subgroup_size);
        CHECK_MSG(d.api_version >= ((1u << 22) | (2u << 12)) || !d.usable, "%s: usable below Vulkan 1.2", d.name);
        CHECK_MSG(d.usable || d.unusable_reason[0], "%s: unusable with no reason", d.name);
        CHECK(!d.integer_dot_used || d.integer_dot);
        CHECK(!d.integer_dot_accelerated || d.integer_dot);
        CHECK(d.usable == 0 || d.buffer_device_address == 1);   /* rlx needs it */
    }
}

/* `rlx devices` prints from the API: each device's name and subgroup size. */
TEST(devices_cli_prints_the_api) {
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    char cmd[512], out[65536];
    snprintf(cmd, sizeof cmd, "%s devices", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    int n = rlx_device_count();
    for (int i = 0; i < n; i++) {
        rlx_device_info d;
        CHECK_OK(rlx_device_get_info(i, &d));
        CHECK_MSG(strstr(out, d.name) != NULL, "`rlx devices` lacks '%s':\n%s", d.name, out);
        if (d.backend != RLX_BACKEND_VULKAN) continue;
        char line[64];
        snprintf(line, sizeof line, "subgroup size    %d\n", d.subgroup_size);
        CHECK_MSG(strstr(out, line) != NULL, "`rlx devices` lacks '%s' for %s", line, d.name);
    }
    if (n == 1) CHECK_MSG(strstr(out, "vulkan    none: ") != NULL, "%s", out);
}
