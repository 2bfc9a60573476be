/*
 * op_support.h — which backend runs which op natively, read from the
 * backends' own tables (the CPU kernel table, the Vulkan lowering table),
 * and the op x backend x dtype matrix that docs/ops.md shows. `rlx ops
 * --matrix` prints it; tests/test_op_table.c checks that docs/ops.md holds
 * the same text. Lives in src/runtime: only the runtime knows the backends.
 */
#ifndef RLX_RT_OP_SUPPORT_H
#define RLX_RT_OP_SUPPORT_H

#include "ir/ir.h"

typedef enum rt_support_backend {
    RT_SUPPORT_CPU,
    RT_SUPPORT_VULKAN,
    RT_SUPPORT_BACKENDS
} rt_support_backend;

const char *rt_support_backend_name(rt_support_backend b);
/* Whether backend b was built into this library (Vulkan needs its headers). */
bool        rt_support_backend_built(rt_support_backend b);
/* Whether b has a kernel / lowering for op. Sources (input, param, const)
 * need none. A Vulkan lowering may still refuse a case (a dtype it has no
 * shader for): that node runs as a host step, on the CPU kernel. */
bool        rt_support_has(rt_support_backend b, ir_op op);
/* The markdown table (a header and one row per op), malloc'ed; NULL when
 * out of memory. Complete only when every backend is built. */
char       *rt_op_matrix_markdown(void);

#endif
