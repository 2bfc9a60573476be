/*
 * numerics.h — the numerics check (rlx_compile_options.check_numerics):
 * after a run, the first node in topological order whose floating-point
 * result holds a NaN or an Inf.
 */
#ifndef RLX_RT_NUMERICS_H
#define RLX_RT_NUMERICS_H

#include "runtime/backend.h"

typedef struct rt_numerics {
    bool    ran;                 /* a check has run (a run succeeded with the check on) */
    bool    found;
    int32_t node;
    int64_t element;
    double  value;
    int     checked, skipped;
    char    name[128], op[64], message[384];
} rt_numerics;

/* Scans the results of program prog (of specialized graph g, planned with
 * plan_memory_pinned) through be->program_node_data. */
rlx_status rt_numerics_scan(const rt_backend *be, void *prog, const ir_graph *g, const mem_plan *plan, rt_numerics *out);

#endif
