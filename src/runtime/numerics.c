/*
 * numerics.c — the numerics check (see numerics.h): every floating-point
 * result that lives in the arena (inputs and computed nodes; not params,
 * constants or views, whose bytes are another node's) is read after the run
 * and scanned in topological order; the first NaN or Inf is reported.
 */
#include "runtime/numerics.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_float(rlx_dtype dt) { return dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16 || dt == RLX_F64; }

/* Index of the first non-finite element of data (n elements of dt), or -1. */
static int64_t first_non_finite(const void *data, rlx_dtype dt, int64_t n, double *value) {
    if (dt == RLX_F32) {
        const float *x = data;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(x[i])) { *value = x[i]; return i; }
        return -1;
    }
    for (int64_t i = 0; i < n; i++) {
        double v = rlx_load_as_f64(data, dt, i);
        if (!isfinite(v)) { *value = v; return i; }
    }
    return -1;
}

rlx_status rt_numerics_scan(const rt_backend *be, void *prog, const ir_graph *g, const mem_plan *plan, rt_numerics *out) {
    memset(out, 0, sizeof *out);
    out->node = -1;
    out->ran = true;
    size_t most = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (plan->entries[i].storage == PLAN_ARENA && (size_t)plan->entries[i].bytes > most) most = (size_t)plan->entries[i].bytes;
    void *scratch = malloc(most ? most : 1);
    if (!scratch) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "numerics check: out of memory (%zu bytes)", most);
    rlx_status st = RLX_OK;
    for (int32_t i = 0; i < g->n_nodes && st == RLX_OK && !out->found; i++) {
        const ir_node *n = &g->nodes[i];
        const plan_entry *e = &plan->entries[i];
        if (!is_float(n->dtype) || e->storage != PLAN_ARENA || e->is_view || e->bytes == 0) continue;
        const void *data = NULL;
        if ((st = be->program_node_data(prog, i, scratch, &data)) != RLX_OK) break;
        if (!data) { out->skipped++; continue; }
        out->checked++;
        int64_t at = first_non_finite(data, n->dtype, ir_shape_numel(&n->shape), &out->value);
        if (at < 0) continue;
        const ir_op_info *info = ir_op_info_get(n->op);
        out->found = true;
        out->node = i;
        out->element = at;
        snprintf(out->name, sizeof out->name, "%s", n->name ? n->name : "");
        snprintf(out->op, sizeof out->op, "%s", info ? info->name : "?");
        bool named = out->name[0] != 0;
        snprintf(out->message, sizeof out->message, "numerics: first non-finite value in node %d %s%s%s(%s): %s at element %lld",
                 i, named ? "'" : "", out->name, named ? "' " : "", out->op,
                 isnan(out->value) ? "NaN" : out->value > 0 ? "+Inf" : "-Inf", (long long)at);
    }
    free(scratch);
    return st;
}
