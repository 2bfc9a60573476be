/*
 * graph.c — storage of the append-only SSA graph: appending a node (which runs
 * its op's shape rule), cloning, lookup of named inputs/params/outputs,
 * structural verification and whole-graph shape re-inference.
 */
#include "ir/shape_rules.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ir_graph_init(ir_graph *g) { memset(g, 0, sizeof *g); }

void ir_graph_clear(ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i].name);
        free(g->nodes[i].data);
    }
    for (int32_t i = 0; i < g->n_outputs; i++) free(g->outputs[i].name);
    for (int i = 0; i < g->n_syms; i++) free(g->sym_names[i]);
    free(g->nodes);
    free(g->outputs);
    ir_graph_init(g);
}

rlx_status ir_graph_clone(const ir_graph *src, ir_graph *dst) {
    ir_graph_init(dst);
    dst->first_error = src->first_error;
    dst->nodes = calloc((size_t)RLX_MAX(src->n_nodes, 1), sizeof(ir_node));
    dst->outputs = calloc((size_t)RLX_MAX(src->n_outputs, 1), sizeof(ir_output));
    if (!dst->nodes || !dst->outputs) goto oom;
    dst->cap_nodes = RLX_MAX(src->n_nodes, 1);
    dst->cap_outputs = RLX_MAX(src->n_outputs, 1);
    for (int32_t i = 0; i < src->n_nodes; i++) {
        ir_node *d = &dst->nodes[i];
        *d = src->nodes[i];
        d->name = NULL;
        d->data = NULL;
        dst->n_nodes = i + 1;
        if (src->nodes[i].name && !(d->name = rlx_strdup(src->nodes[i].name))) goto oom;
        if (src->nodes[i].data) {
            if (!(d->data = malloc(src->nodes[i].data_bytes ? src->nodes[i].data_bytes : 1))) goto oom;
            memcpy(d->data, src->nodes[i].data, src->nodes[i].data_bytes);
        }
    }
    for (int32_t i = 0; i < src->n_outputs; i++) {
        dst->outputs[i].node = src->outputs[i].node;
        dst->n_outputs = i + 1;
        if (!(dst->outputs[i].name = rlx_strdup(src->outputs[i].name))) goto oom;
    }
    for (int i = 0; i < src->n_syms; i++) {
        dst->n_syms = i + 1;
        if (!(dst->sym_names[i] = rlx_strdup(src->sym_names[i]))) goto oom;
    }
    return RLX_OK;
oom:
    ir_graph_clear(dst);
    return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "graph copy: out of memory");
}

const char *ir_node_label(const ir_graph *g, int32_t id, char *buf, size_t n) {
    if (id < 0 || id >= g->n_nodes) { snprintf(buf, n, "node #%d", id); return buf; }
    const ir_node *node = &g->nodes[id];
    const char *op = ir_op_info_get(node->op)->name;
    if (node->name) snprintf(buf, n, "%s '%s'", op, node->name);
    else snprintf(buf, n, "%s #%d", op, id);
    return buf;
}

rlx_status ir_kv_range_check(const ir_node *kv, int64_t pos, int64_t rows, int64_t cap) {
    if (pos >= 0 && pos <= cap - rows) return RLX_OK;   /* every run passes here: no formatting */
    char label[96] = "kv_write";
    if (kv->name && *kv->name) snprintf(label, sizeof label, "kv_write '%.80s'", kv->name);
    if (pos < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: position %lld is negative", label, (long long)pos);
    return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: positions [%lld, %lld) exceed the cache capacity %lld (context limit)",
                    label, (long long)pos, (long long)(pos + rows), (long long)cap);
}

rlx_status ir_graph_append(ir_graph *g, ir_node *n, int32_t *out_id) {
    *out_id = -1;
    if (g->n_nodes == g->cap_nodes) {
        int32_t cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
        ir_node *nodes = realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "graph: out of memory adding a node");
        g->nodes = nodes;
        g->cap_nodes = cap;
    }
    int32_t id = g->n_nodes;
    ir_node *slot = &g->nodes[id];
    *slot = *n;
    /* The rule reads the node in place so labels in its errors show the name. */
    g->n_nodes++;
    rlx_status st = ir_check_quantized_inputs(g, slot);
    if (st == RLX_OK) st = ir_op_info_get(n->op)->rule(g, slot);
    if (st == RLX_OK) st = ir_check_shape_size(g, slot);
    if (st != RLX_OK) {
        g->n_nodes--;
        return st;
    }
    *n = *slot;
    *out_id = id;
    return RLX_OK;
}

int32_t ir_graph_find_io(const ir_graph *g, ir_op op, const char *name) {
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == op && g->nodes[i].name && strcmp(g->nodes[i].name, name) == 0) return i;
    return -1;
}

int32_t ir_graph_find_output(const ir_graph *g, const char *name) {
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (strcmp(g->outputs[i].name, name) == 0) return i;
    return -1;
}

rlx_status ir_graph_verify(const ir_graph *g) {
    char label[128];
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if ((unsigned)n->op >= IR_OP_COUNT)
            return rlx_fail(RLX_STATUS_INTERNAL, "verify: node #%d has unknown op %d", i, (int)n->op);
        const ir_op_info *info = ir_op_info_get(n->op);
        if (info->arity >= 0 && n->n_in != info->arity)
            return rlx_fail(RLX_STATUS_INTERNAL, "verify: %s has %d inputs, op takes %d",
                            ir_node_label(g, i, label, sizeof label), n->n_in, info->arity);
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j] < 0 || n->in[j] >= i)
                return rlx_fail(RLX_STATUS_INTERNAL, "verify: %s input %d refers to node #%d (not earlier)",
                                ir_node_label(g, i, label, sizeof label), j, n->in[j]);
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i].node < 0 || g->outputs[i].node >= g->n_nodes)
            return rlx_fail(RLX_STATUS_INTERNAL, "verify: output '%s' refers to no node", g->outputs[i].name);
    return RLX_OK;
}

rlx_status ir_graph_infer_shapes(ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++) {
        rlx_status st = ir_op_info_get(g->nodes[i].op)->rule(g, &g->nodes[i]);
        if (st == RLX_OK) st = ir_check_shape_size(g, &g->nodes[i]);
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}
