/*
 * backends.c — the list of backends and the choice among them. The CPU
 * backend is always present; the Vulkan backend when the build had its
 * headers and glslc (RLX_HAVE_VULKAN). This is the only file that knows both,
 * so it also gives Vulkan its host-step runner: the CPU kernels.
 */
#include "runtime/backend.h"
#include "cpu/cpu_backend.h"
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ cpu */

static rlx_status cpu_dev_new(const rlx_compile_options *opts, void **dev) {
    return cpu_device_new(opts->threads, opts->exact_quant != 0, opts->poison != 0, (cpu_device **)dev);
}
static void cpu_dev_free(void *dev) { cpu_device_free(dev); }
static rlx_status cpu_p_alloc(void *dev, size_t bytes, void **h) { return cpu_param_alloc(dev, bytes, h); }
static rlx_status cpu_p_write(void *dev, void *h, rlx_dtype dt, int64_t row, const void *d, size_t b) {
    (void)dt, (void)row;   /* the CPU reads every dtype as stored */
    return cpu_param_write(dev, h, d, b);
}
static void cpu_p_free(void *dev, void *h) { cpu_param_free(dev, h); }
static rlx_status cpu_p_read(void *dev, void *h, rlx_dtype dt, void *d, size_t b) {
    (void)dev, (void)dt;
    if (b) memcpy(d, h, b);
    return RLX_OK;
}
static rlx_status cpu_prog_new(void *dev, const ir_graph *g, const mem_plan *plan, void *const *params, void **prog) {
    return cpu_program_new(dev, g, plan, params, (cpu_program **)prog);
}
static void cpu_prog_free(void *prog) { cpu_program_free(prog); }
static rlx_status cpu_prog_run(void *prog, const void *const *inputs) { return cpu_program_run(prog, inputs); }
static rlx_status cpu_prog_result(void *prog, int32_t node, void **host) {
    *host = cpu_program_result(prog, node);
    return RLX_OK;
}
static int cpu_prog_steps(void *prog) { return cpu_program_steps(prog); }
static bool cpu_prog_holds(void *prog, const void *p, size_t bytes) { return cpu_program_holds(prog, p, bytes); }
static int cpu_prog_host_steps(void *prog) { (void)prog; return 0; }
static double cpu_prog_device_seconds(void *prog) { (void)prog; return -1; }
static char *cpu_prog_report(void *prog) { return cpu_program_report(prog); }
static const char *cpu_dev_name(void *dev) { (void)dev; return "cpu"; }
static void cpu_dev_trace(void *dev, rlx_trace *t, int host_tid, int gpu_tid) {
    (void)gpu_tid;   /* no device timeline: the steps are host time */
    cpu_device_set_trace(dev, t, host_tid);
}
static rlx_status cpu_prog_node_data(void *prog, int32_t node, void *scratch, const void **data) {
    (void)scratch;   /* results are host memory already */
    *data = cpu_program_result(prog, node);
    return RLX_OK;
}

static const rt_backend cpu_backend = {
    .name = "cpu",
    .claims = {.conv_bn_fold = true, .conv_residual = true, .matmul_bias_act = true, .add_norm = true, .dequant_epilogue = true, .rope_kv_write = true,
               .norm_prologue = true},
    .device_new = cpu_dev_new,
    .device_free = cpu_dev_free,
    .param_alloc = cpu_p_alloc,
    .param_write = cpu_p_write,
    .param_read = cpu_p_read,
    .param_free = cpu_p_free,
    .params_in_host_memory = true,
    .program_holds = cpu_prog_holds,
    .program_new = cpu_prog_new,
    .program_free = cpu_prog_free,
    .program_run = cpu_prog_run,
    .program_result = cpu_prog_result,
    .program_steps = cpu_prog_steps,
    .program_host_steps = cpu_prog_host_steps,
    .program_device_seconds = cpu_prog_device_seconds,
    .program_report = cpu_prog_report,
    .device_name = cpu_dev_name,
    .device_trace = cpu_dev_trace,
    .program_node_data = cpu_prog_node_data,
};

/* --------------------------------------------------------------- vulkan */

#ifdef RLX_HAVE_VULKAN
#include "vulkan/vk_backend.h"

/* user: the exec's exact_quant (one of the two flags below) */
static bool host_exact_quant = true, host_fast_quant = false;   /* never written */
static rlx_status host_kernel(void *user, const ir_graph *g, int32_t node, void *const *inputs, void *output) {
    return cpu_run_node(g, node, inputs, output, *(const bool *)user);
}

static rlx_status vk_dev_new(const rlx_compile_options *o, void **dev) {
    vk_device_options vo = {.index = o->device_index, .name = o->device_name,
                            .allow_software = o->backend == RLX_BACKEND_VULKAN, .precision = o->precision,
                            .poison_arena = o->check_numerics != 0,
                            .exact_quant = o->exact_quant != 0, .host_kernel = host_kernel,
                            .host_user = (o->exact_quant ? &host_exact_quant : &host_fast_quant)};
    return vk_backend_device_new(&vo, (vk_device **)dev);
}
static void vk_dev_free(void *dev) { vk_backend_device_free(dev); }
static rlx_status vk_p_alloc(void *dev, size_t bytes, void **h) { return vk_param_alloc(dev, bytes, h); }
static rlx_status vk_p_write(void *dev, void *h, rlx_dtype dt, int64_t row, const void *d, size_t b) {
    return vk_param_write(dev, h, dt, row, d, b);
}
static void vk_p_free(void *dev, void *h) { vk_param_free(dev, h); }
static rlx_status vk_p_read(void *dev, void *h, rlx_dtype dt, void *d, size_t b) { return vk_param_read(dev, h, dt, d, b); }
static rlx_status vk_prog_new(void *dev, const ir_graph *g, const mem_plan *plan, void *const *params, void **prog) {
    return vk_program_new(dev, g, plan, params, (vk_program **)prog);
}
static void vk_prog_free(void *prog) { vk_program_free(prog); }
static rlx_status vk_prog_run(void *prog, const void *const *inputs) { return vk_program_run(prog, inputs); }
static rlx_status vk_prog_result(void *prog, int32_t node, void **host) { return vk_program_result(prog, node, host); }
static int vk_prog_steps(void *prog) { return vk_program_steps(prog); }
static int vk_prog_host_steps(void *prog) { return vk_program_host_steps(prog); }
static double vk_prog_device_seconds(void *prog) { return vk_program_gpu_seconds(prog); }
static char *vk_prog_report(void *prog) { return vk_program_report(prog); }
static const char *vk_dev_name(void *dev) { return vk_backend_device_name(dev); }
static bool vk_folds_norm(void *dev, rlx_dtype w, int64_t rows, int64_t K) { return vk_backend_folds_norm(dev, w, rows, K); }
static void vk_dev_trace(void *dev, rlx_trace *t, int host_tid, int gpu_tid) { vk_backend_device_trace(dev, t, host_tid, gpu_tid); }
static rlx_status vk_prog_node_data(void *prog, int32_t node, void *scratch, const void **data) {
    return vk_program_node_data(prog, node, scratch, data);
}
static bool vk_folds_epilogue(void *dev, const ir_graph *g, int32_t p, int32_t c) {
    return vk_backend_folds_epilogue(dev, g, p, c);
}
static bool vk_folds_combine(void *dev, const ir_graph *g, int32_t a, int32_t p) { return vk_backend_folds_combine(dev, g, a, p); }
static rlx_status vk_plan_x_images(void *dev, ir_graph *g, const mem_plan *plan, int *n) {
    return vk_backend_plan_x_images(dev, g, plan, n);
}

/* Vulkan folds RMS norms into quantized projections per specialization, at
 * decode sizes only (vk_lower_rms_dequant: the i8 matvec normalizes x as it
 * rounds it; at prefill sizes a folded norm would be recomputed per
 * projection, which measured 16-18% slower prefill on the H200); then a
 * decode projection with its rope / KV-write consumer (dequant_rope_kv:
 * the i8 matvec stores its rows rotated or into the cache itself); then
 * split-key decode attention with the o projection (attention_dequant_matmul:
 * the matvec merges attention's partials as it reads x). */
static const rt_backend vulkan_backend = {
    .name = "vulkan",
    .claims = {.conv_bn_fold = true, .conv_residual = true, .matmul_bias_act = true, .add_norm = true, .dequant_epilogue = true, .rope_kv_write = true,
               .norm_fold_rows = 8, .epilogue_fold = true, .combine_fold = true},
    .folds_norm = vk_folds_norm,
    .folds_epilogue = vk_folds_epilogue,
    .folds_combine = vk_folds_combine,
    .plan_x_images = vk_plan_x_images,
    .device_new = vk_dev_new,
    .device_free = vk_dev_free,
    .param_alloc = vk_p_alloc,
    .param_write = vk_p_write,
    .param_read = vk_p_read,
    .param_free = vk_p_free,
    .program_new = vk_prog_new,
    .program_free = vk_prog_free,
    .program_run = vk_prog_run,
    .program_result = vk_prog_result,
    .program_steps = vk_prog_steps,
    .program_host_steps = vk_prog_host_steps,
    .program_device_seconds = vk_prog_device_seconds,
    .program_report = vk_prog_report,
    .device_name = vk_dev_name,
    .device_trace = vk_dev_trace,
    .program_node_data = vk_prog_node_data,
};
#endif

rlx_status rt_backend_choose(const rlx_compile_options *o, const rt_backend **out) {
    *out = NULL;
    switch (o->backend) {
    case RLX_BACKEND_AUTO:
#ifdef RLX_HAVE_VULKAN
        /* a device named or indexed explicitly, or a hardware GPU */
        if (o->device_index >= 0 || (o->device_name && *o->device_name) || vk_hardware_present()) {
            *out = &vulkan_backend;
            return RLX_OK;
        }
#endif
        *out = &cpu_backend;
        return RLX_OK;
    case RLX_BACKEND_CPU:
        *out = &cpu_backend;
        return RLX_OK;
    case RLX_BACKEND_VULKAN:
#ifdef RLX_HAVE_VULKAN
        *out = &vulkan_backend;
        return RLX_OK;
#else
        return rlx_fail(RLX_STATUS_DEVICE, "backend vulkan: this build of rlx has no Vulkan backend");
#endif
    }
    return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "unknown backend %d", (int)o->backend);
}
