/*
 * dce.c — dead-code removal: keep what the outputs depend on. Inputs and
 * params are always kept so that an executable's interface does not change
 * with the graph's contents, and so is every assign (a param update is the
 * point of a train step, whether or not an output reads it).
 */
#include "passes/passes.h"
#include "passes/rebuild.h"
#include <stdlib.h>

rlx_status pass_dce(const ir_graph *src, ir_graph *dst) {
    bool *live = calloc((size_t)RLX_MAX(src->n_nodes, 1), sizeof *live);
    if (!live) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "dce: out of memory");
    for (int32_t i = 0; i < src->n_outputs; i++) live[src->outputs[i].node] = true;
    for (int32_t i = src->n_nodes - 1; i >= 0; i--) {
        const ir_node *n = &src->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_PARAM || n->op == IR_OP_ASSIGN) live[i] = true;
        if (!live[i]) continue;
        for (int j = 0; j < n->n_in; j++) live[n->in[j]] = true;
    }
    rlx_status st = rebuild_keep(src, live, dst);
    free(live);
    return st;
}
