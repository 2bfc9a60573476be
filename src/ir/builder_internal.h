/*
 * builder_internal.h — the builder's node maker for code inside src/ir that
 * builds graphs from IR shapes rather than public dims (autodiff): the same
 * checks, sticky errors and shape rules as the public builder calls.
 */
#ifndef RLX_IR_BUILDER_INTERNAL_H
#define RLX_IR_BUILDER_INTERNAL_H

#include "ir/ir.h"

/* Appends op on inputs in[0..n_in) with proto's attributes (NULL: none);
 * fn names the caller in error messages. */
rlx_node ir_build(rlx_graph *g, const char *fn, ir_op op, const rlx_node *in, int n_in, ir_node *proto);
/* Appends a one-input op whose target shape is an attribute (reshape,
 * expand) with that shape given as IR dims, symbolic ones included. */
rlx_node ir_build_shaped(rlx_graph *g, const char *fn, ir_op op, rlx_node x, const ir_shape *shape);
/* Records the error rlx_fail just set as the graph's sticky one (if it has
 * none yet) and returns RLX_NO_NODE. */
rlx_node ir_build_fail(rlx_graph *g, rlx_status st);
/* Checks a builder call's graph and input ids: false (with the sticky error,
 * or an earlier one that explains an RLX_NO_NODE input) when it must not
 * proceed. */
bool ir_build_inputs_ok(rlx_graph *g, const char *fn, const rlx_node *in, int n);

#endif
