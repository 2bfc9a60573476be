/*
 * backend.h — the runtime's view of a backend: one table of functions per
 * backend. Only src/runtime knows the list (backends.c).
 */
#ifndef RLX_RT_BACKEND_H
#define RLX_RT_BACKEND_H

#include "core/trace.h"
#include "passes/passes.h"

typedef struct rt_backend {
    const char *name;
    fuse_claims claims;
    /* The device is created at compile and owned by the exec. */
    rlx_status (*device_new)(const rlx_compile_options *opts, void **dev);
    void       (*device_free)(void *dev);
    rlx_status (*param_alloc)(void *dev, size_t bytes, void **handle);
    /* bytes of a whole param of `dtype` with rows of row_elems elements (its
     * last dim): a backend may keep a dtype in a layout of its own. */
    rlx_status (*param_write)(void *dev, void *handle, rlx_dtype dtype, int64_t row_elems, const void *data, size_t bytes);
    void       (*param_free)(void *dev, void *handle);
    /* Copies a param's current bytes (as param_write took them) to data;
     * UNSUPPORTED for a dtype the backend keeps in a layout of its own. */
    rlx_status (*param_read)(void *dev, void *handle, rlx_dtype dtype, void *data, size_t bytes);
    /* A param's handle is the host address of its bytes, which programs read
     * (the CPU): such a backend can read a param straight from the caller's
     * memory (rlx_exec_use_param_memory) instead of a copy; program_holds
     * then says whether memory is a program's own (its results). */
    bool       params_in_host_memory;
    bool       (*program_holds)(void *prog, const void *ptr, size_t bytes);
    rlx_status (*program_new)(void *dev, const ir_graph *g, const mem_plan *plan, void *const *param_handles,
                              void **prog);
    void       (*program_free)(void *prog);
    rlx_status (*program_run)(void *prog, const void *const *inputs);
    /* Host-readable pointer to a node's result after a run (may read back). */
    rlx_status (*program_result)(void *prog, int32_t node, void **host);
    int        (*program_steps)(void *prog);
    int        (*program_host_steps)(void *prog);
    double     (*program_device_seconds)(void *prog);
    const char*(*device_name)(void *dev);
    char      *(*program_report)(void *prog);
    /* claims.norm_fold_rows > 0: whether a norm of rows x K folds into a
     * product with weights of type w on this device (pass_fold_norm_inplace) */
    bool       (*folds_norm)(void *dev, rlx_dtype w, int64_t rows, int64_t K);
    /* Tracing (rlx_compile_options.trace_path): the device's programs record
     * their runs' steps on track host_tid (and GPU time on gpu_tid). */
    void       (*device_trace)(void *dev, rlx_trace *t, int host_tid, int gpu_tid);
    /* After a run: node's result as host memory, in *data (the program's
     * own memory, or a copy into scratch of its bytes); *data NULL when the
     * program keeps no result for it (fused into a neighbour's kernel). For
     * the numerics check, under a plan that keeps every result. */
    rlx_status (*program_node_data)(void *prog, int32_t node, void *scratch, const void **data);
    /* claims.epilogue_fold: whether product p and its consumer c of the
     * specialized graph g become one dequant_rope_kv on this device
     * (pass_fold_epilogue_inplace) */
    bool       (*folds_epilogue)(void *dev, const ir_graph *g, int32_t p, int32_t c);
    /* claims.combine_fold: whether attention a and the product p reading its
     * result become one attention_dequant_matmul (pass_fold_combine_inplace) */
    bool       (*folds_combine)(void *dev, const ir_graph *g, int32_t a, int32_t p);
    /* Per specialization, after its memory plan: marks the decode matvecs
     * that hand x on as a rounded image (ir.h, ir_ximage_out / ir_ximage_from);
     * NULL: none */
    rlx_status (*plan_x_images)(void *dev, ir_graph *g, const mem_plan *plan, int *n_images);
} rt_backend;

/* The backend for a request (AUTO picks a hardware GPU when there is one,
 * else the CPU), or an error naming what is missing. */
rlx_status rt_backend_choose(const rlx_compile_options *opts, const rt_backend **out);

/* Whether param `name` of e is a batch_norm fold's (passes/fold_bn.c): the
 * runtime derives it from other params, so checkpoints skip it (exec.c). */
bool rt_exec_param_is_folded(const rlx_exec *e, const char *name);

#endif
