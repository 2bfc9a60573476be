/*
 * rebuild.c — building a pass's output graph node by node from its input.
 */
#include "passes/rebuild.h"
#include <stdlib.h>
#include <string.h>

rlx_status rebuild_begin(const ir_graph *src, ir_graph *dst) {
    ir_graph_init(dst);
    for (int i = 0; i < src->n_syms; i++) {
        if (!(dst->sym_names[i] = rlx_strdup(src->sym_names[i]))) {
            ir_graph_clear(dst);
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "pass: out of memory");
        }
        dst->n_syms = i + 1;
    }
    return RLX_OK;
}

rlx_status rebuild_copy_node(ir_graph *dst, const ir_node *n, const int32_t *remap, int32_t *new_id) {
    if (dst->n_nodes == dst->cap_nodes) {
        int32_t cap = dst->cap_nodes ? dst->cap_nodes * 2 : 64;
        ir_node *nodes = realloc(dst->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "pass: out of memory");
        dst->nodes = nodes;
        dst->cap_nodes = cap;
    }
    ir_node c = *n;
    c.name = NULL;
    c.data = NULL;
    if (n->name && !(c.name = rlx_strdup(n->name))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "pass: out of memory");
    if (n->data) {
        if (!(c.data = malloc(n->data_bytes ? n->data_bytes : 1))) {
            free(c.name);
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "pass: out of memory");
        }
        memcpy(c.data, n->data, n->data_bytes);
    }
    for (int j = 0; j < c.n_in; j++) c.in[j] = remap ? remap[n->in[j]] : n->in[j];
    *new_id = dst->n_nodes;
    dst->nodes[dst->n_nodes++] = c;
    return RLX_OK;
}

rlx_status rebuild_outputs(const ir_graph *src, const int32_t *remap, ir_graph *dst) {
    dst->outputs = calloc((size_t)RLX_MAX(src->n_outputs, 1), sizeof *dst->outputs);
    if (!dst->outputs) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "pass: out of memory");
    dst->cap_outputs = RLX_MAX(src->n_outputs, 1);
    for (int32_t i = 0; i < src->n_outputs; i++) {
        if (!(dst->outputs[i].name = rlx_strdup(src->outputs[i].name)))
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "pass: out of memory");
        dst->outputs[i].node = remap[src->outputs[i].node];
        dst->n_outputs = i + 1;
    }
    return RLX_OK;
}

rlx_status rebuild_keep(const ir_graph *src, const bool *keep, ir_graph *dst) {
    int32_t *remap = malloc((size_t)RLX_MAX(src->n_nodes, 1) * sizeof *remap);
    if (!remap) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "pass: out of memory");
    rlx_status st = rebuild_begin(src, dst);
    for (int32_t i = 0; st == RLX_OK && i < src->n_nodes; i++) {
        remap[i] = -1;
        if (keep[i]) st = rebuild_copy_node(dst, &src->nodes[i], remap, &remap[i]);
    }
    if (st == RLX_OK) st = rebuild_outputs(src, remap, dst);
    free(remap);
    if (st != RLX_OK) ir_graph_clear(dst);
    return st;
}
