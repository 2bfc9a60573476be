/*
 * cpu_backend.h — the CPU backend: a device (thread pool + params in host
 * memory) and programs (a planned, specialized graph lowered to a flat list of
 * kernel calls with every pointer resolved at build time).
 *
 * The runtime wraps these in its backend table; the CPU backend knows nothing
 * of the runtime or of other backends.
 */
#ifndef RLX_CPU_BACKEND_H
#define RLX_CPU_BACKEND_H

#include "core/trace.h"
#include "passes/passes.h"

typedef struct cpu_device  cpu_device;
typedef struct cpu_program cpu_program;

/* threads <= 0: one per core. exact_quant: products with block-quantized
 * weights decode them to f32 instead of rounding x to 8 bits
 * (rlx_compile_options.exact_quant). poison: programs fill their arena with
 * NaN bytes before every run (rlx_compile_options.poison). The
 * device's programs keep both. */
rlx_status cpu_device_new(int threads, bool exact_quant, bool poison, cpu_device **out);
void       cpu_device_free(cpu_device *dev);
int        cpu_device_threads(const cpu_device *dev);
/* The host CPU's rlx_device_info (cpu_device_info.c). */
void       cpu_device_info(rlx_device_info *out);
/* Programs of this device record each run's steps on track tid of trace t
 * (borrowed; NULL turns it off). */
void       cpu_device_set_trace(cpu_device *dev, rlx_trace *t, int tid);

/* Param storage: zero-filled host memory; the handle is the data pointer. */
rlx_status cpu_param_alloc(cpu_device *dev, size_t bytes, void **handle);
rlx_status cpu_param_write(cpu_device *dev, void *handle, const void *data, size_t bytes);
void       cpu_param_free(cpu_device *dev, void *handle);

/* g must be specialized (static shapes) and planned. param_handles[i] is the
 * handle of node i when it is a PARAM (NULL otherwise). g and plan must outlive
 * the program. */
rlx_status cpu_program_new(cpu_device *dev, const ir_graph *g, const mem_plan *plan,
                           void *const *param_handles, cpu_program **out);
void       cpu_program_free(cpu_program *p);

/* inputs[i] is the data for node i when it is an INPUT (NULL otherwise);
 * sizes were checked by the caller. */
rlx_status cpu_program_run(cpu_program *p, const void *const *inputs);
/* Host pointer to node's result after a run. */
void      *cpu_program_result(cpu_program *p, int32_t node);
/* Whether [ptr, ptr + bytes) overlaps the program's arena (its results). */
bool       cpu_program_holds(const cpu_program *p, const void *ptr, size_t bytes);
int        cpu_program_steps(const cpu_program *p);
/* One line per node: op, name, path ("kernel", "view", "source"), shapes. malloc'ed. */
char      *cpu_program_report(const cpu_program *p);

/* Runs one node's kernel on host memory, single-threaded (for other backends'
 * host steps, through the runtime). inputs follow the node's input order;
 * exact_quant as for cpu_device_new. */
rlx_status cpu_run_node(const ir_graph *g, int32_t node, void *const *inputs, void *output, bool exact_quant);
/* Whether the kernel table has a kernel for op (sources have none). */
bool       cpu_backend_has_kernel(ir_op op);

#endif
