/*
 * rebuild.h — helpers for passes that produce a new graph from an old one:
 * copying nodes with remapped inputs, and copying the outputs and symbols.
 */
#ifndef RLX_REBUILD_H
#define RLX_REBUILD_H

#include "ir/ir.h"

/* Starts dst as an empty graph with src's symbols. */
rlx_status rebuild_begin(const ir_graph *src, ir_graph *dst);
/* Appends a copy of n (name and data duplicated) with inputs mapped through
 * remap, without re-running the shape rule (the shape is already known). */
rlx_status rebuild_copy_node(ir_graph *dst, const ir_node *n, const int32_t *remap, int32_t *new_id);
/* Copies src's outputs with node ids mapped through remap. */
rlx_status rebuild_outputs(const ir_graph *src, const int32_t *remap, ir_graph *dst);
/* Keeps the nodes where keep[i]; every kept node's inputs must be kept. */
rlx_status rebuild_keep(const ir_graph *src, const bool *keep, ir_graph *dst);

#endif
