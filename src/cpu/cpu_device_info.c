/*
 * cpu_device_info.c — the host CPU as rlx_device_get_info reports it: its
 * model name (Linux /proc/cpuinfo, else the machine type) and online cores.
 */
#include "cpu/cpu_backend.h"
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static void cpu_model_name(char *name, size_t cap) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    name[0] = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) != 0 || !colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t') colon++;
        snprintf(name, cap, "%s", colon);
        name[strcspn(name, "\n")] = 0;
        break;
    }
    if (f) fclose(f);
    if (!name[0]) {
        struct utsname u;
        snprintf(name, cap, "cpu (%s)", uname(&u) == 0 ? u.machine : "unknown");
    }
}

void cpu_device_info(rlx_device_info *out) {
    memset(out, 0, sizeof *out);
    cpu_model_name(out->name, sizeof out->name);
    out->kind = RLX_DEVICE_CPU;
    out->backend = RLX_BACKEND_CPU;
    out->backend_index = 0;
    out->usable = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    out->compute_units = cores > 0 ? (int)cores : 1;
}
