/*
 * shape_rules.h — declarations of the per-op shape rules named in ops.def.
 * A rule checks a node's inputs and attributes and sets its output shape and
 * dtype; it runs when the builder appends the node and again when the graph
 * is specialized (all dims static), where the checks become exact.
 */
#ifndef RLX_SHAPE_RULES_H
#define RLX_SHAPE_RULES_H

#include "ir/ir.h"

#define X(id, name, arity, rule, doc) rlx_status rule(const ir_graph *g, ir_node *n);
#include "ir/ops.def"
#undef X

/* Rejects block-quantized inputs to ops that do not decode them. */
rlx_status ir_check_quantized_inputs(const ir_graph *g, ir_node *n);
/* Rejects a node whose static dims multiply past IR_MAX_NUMEL (SHAPE). */
rlx_status ir_check_shape_size(const ir_graph *g, ir_node *n);

#endif
