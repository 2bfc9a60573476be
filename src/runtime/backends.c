/*
 * backends.c — the list of backends and the choice among them. Today the CPU
 * backend is always present; a GPU backend registers here when built.
 */
#include "runtime/backend.h"
#include "cpu/cpu_backend.h"
#include <stdlib.h>
#include <string.h>

static rlx_status cpu_dev_new(const rlx_compile_options *opts, void **dev) {
    return cpu_device_new(opts->threads, (cpu_device **)dev);
}
static void cpu_dev_free(void *dev) { cpu_device_free(dev); }
static rlx_status cpu_p_alloc(void *dev, size_t bytes, void **h) { return cpu_param_alloc(dev, bytes, h); }
static rlx_status cpu_p_write(void *dev, void *h, const void *d, size_t b) { return cpu_param_write(dev, h, d, b); }
static void cpu_p_free(void *dev, void *h) { cpu_param_free(dev, h); }
static rlx_status cpu_prog_new(void *dev, const ir_graph *g, const mem_plan *plan, void *const *params, void **prog) {
    bool poison = rlx_env_int("RLX_POISON", 0) != 0;
    return cpu_program_new(dev, g, plan, params, poison, (cpu_program **)prog);
}
static void cpu_prog_free(void *prog) { cpu_program_free(prog); }
static rlx_status cpu_prog_run(void *prog, const void *const *inputs) { return cpu_program_run(prog, inputs); }
static rlx_status cpu_prog_result(void *prog, int32_t node, void **host) {
    *host = cpu_program_result(prog, node);
    return RLX_OK;
}
static int cpu_prog_steps(void *prog) { return cpu_program_steps(prog); }
static char *cpu_prog_report(void *prog) { return cpu_program_report(prog); }

static const rt_backend cpu_backend = {
    .name = "cpu",
    .claims = {.matmul_bias_act = true, .add_norm = true},
    .device_new = cpu_dev_new,
    .device_free = cpu_dev_free,
    .param_alloc = cpu_p_alloc,
    .param_write = cpu_p_write,
    .param_free = cpu_p_free,
    .program_new = cpu_prog_new,
    .program_free = cpu_prog_free,
    .program_run = cpu_prog_run,
    .program_result = cpu_prog_result,
    .program_steps = cpu_prog_steps,
    .program_report = cpu_prog_report,
};

rlx_status rt_backend_choose(rlx_backend want, const rt_backend **out) {
    *out = NULL;
    switch (want) {
    case RLX_BACKEND_AUTO:
    case RLX_BACKEND_CPU:
        *out = &cpu_backend;
        return RLX_OK;
    case RLX_BACKEND_VULKAN:
        return rlx_fail(RLX_STATUS_DEVICE, "backend vulkan: this build of rlx has no Vulkan backend");
    }
    return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "unknown backend %d", (int)want);
}
