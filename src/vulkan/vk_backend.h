/*
 * vk_backend.h — the Vulkan backend as the runtime sees it: a device (a
 * shared context plus this executable's settings), params in device-local
 * buffers, and programs: a planned, specialized graph lowered to compute
 * dispatches, recorded once into command buffers and replayed per run.
 *
 * Nodes without a GPU lowering run as explicit host steps between recorded
 * segments. The backend knows no other backend: the runtime passes the host
 * kernel runner in as a callback.
 */
#ifndef RLX_VK_BACKEND_H
#define RLX_VK_BACKEND_H

#include "core/trace.h"
#include "passes/passes.h"

typedef struct vk_device  vk_device;
typedef struct vk_program vk_program;

/* Runs node's reference kernel on host memory (inputs in node input order). */
typedef rlx_status (*vk_host_kernel_fn)(void *user, const ir_graph *g, int32_t node, void *const *inputs, void *output);

typedef struct vk_device_options {
    int               index;           /* -1: choose */
    const char       *name;            /* substring, or NULL */
    bool              allow_software;  /* lavapipe may be chosen without index/name */
    int               precision;       /* rlx_precision */
    bool              poison_arena;    /* fill each program's arena with NaN bytes once (the numerics
                                        * check: a result no kernel writes reads as NaN, not as zeros) */
    bool              exact_quant;     /* rlx_compile_options.exact_quant: no 8-bit x in quantized products */
    vk_host_kernel_fn host_kernel;
    void             *host_user;
} vk_device_options;

int   vk_device_count(void);
char *vk_device_describe(int i);
/* Device i's capabilities for rlx_device_get_info (backend fields set). */
rlx_status vk_device_info(int i, rlx_device_info *out);
bool  vk_hardware_present(void);

rlx_status  vk_backend_device_new(const vk_device_options *o, vk_device **out);
void        vk_backend_device_free(vk_device *d);
const char *vk_backend_device_name(const vk_device *d);
/* Whether this device's decode matvec folds an RMS norm of rows x K into its
 * products with weights of type w (the runtime folds only those norms). */
bool        vk_backend_folds_norm(const vk_device *d, rlx_dtype w, int64_t rows, int64_t K);
/* Whether this device's decode matvec does product p's consumer c (rope,
 * rope_kv_write or kv_write of its result) in its epilogue: p and c then
 * fold into one dequant_rope_kv (pass_fold_epilogue_inplace). */
bool        vk_backend_folds_epilogue(const vk_device *d, const ir_graph *g, int32_t p, int32_t c);
/* Whether decode attention a splits its keys and the matvec p reading its
 * result merges the partials as it reads x: the two then fold into one
 * attention_dequant_matmul (pass_fold_combine_inplace). */
bool        vk_backend_folds_combine(const vk_device *d, const ir_graph *g, int32_t a, int32_t p);
/* Marks in g (planned) the decode matvecs that hand x on as a rounded image
 * (ir.h, ir_ximage_out / ir_ximage_from; vk_program.c); *n_images producers. */
rlx_status  vk_backend_plan_x_images(const vk_device *d, ir_graph *g, const mem_plan *plan, int *n_images);

rlx_status vk_param_alloc(vk_device *d, size_t bytes, void **handle);
rlx_status vk_param_write(vk_device *d, void *handle, rlx_dtype dtype, int64_t row_elems, const void *data, size_t bytes);
/* A param's bytes back to the host; block-quantized params (kept re-laid) are UNSUPPORTED. */
rlx_status vk_param_read(vk_device *d, void *handle, rlx_dtype dtype, void *data, size_t bytes);
void       vk_param_free(vk_device *d, void *handle);

rlx_status vk_program_new(vk_device *d, const ir_graph *g, const mem_plan *plan, void *const *param_handles,
                          vk_program **out);
void       vk_program_free(vk_program *p);
rlx_status vk_program_run(vk_program *p, const void *const *inputs);
/* Host pointer to an output node's result after a run (persistent staging). */
rlx_status vk_program_result(vk_program *p, int32_t node, void **host);
int        vk_program_steps(const vk_program *p);
int        vk_program_host_steps(const vk_program *p);
char      *vk_program_report(const vk_program *p);
/* GPU time of the last run in seconds (timestamp queries), or -1 if unknown. */
double     vk_program_gpu_seconds(const vk_program *p);
/* Whether the lowering table has a lowering for op (else: a host step). */
bool       vk_backend_has_lowering(ir_op op);
/* Programs built after this record their build phases and each run's host
 * work on track host_tid of trace t, and each node's GPU time (timestamps,
 * placed on the host clock) on gpu_tid; per-node timestamps serialize the
 * nodes, as RLX_PROFILE=1 does. t is borrowed; NULL turns it off. */
void       vk_backend_device_trace(vk_device *d, rlx_trace *t, int host_tid, int gpu_tid);
/* After a run: node's result copied to scratch (its bytes) and *data =
 * scratch, or *data NULL when no dispatch writes its own result (it is
 * fused into a neighbour's kernel). For the numerics check. */
rlx_status vk_program_node_data(vk_program *p, int32_t node, void *scratch, const void **data);

#endif
