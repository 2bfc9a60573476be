/*
 * autodiff.h — reverse-mode differentiation over the IR (autodiff.c), and the
 * vector-Jacobian rules it applies (vjp_*.c), one per differentiable op,
 * looked up by op id like the op table.
 *
 * A rule gets the node as it was built (a copy: appending nodes may move the
 * graph's storage), the gradient gy flowing into its output, and which inputs
 * need a gradient. It appends the nodes that compute those gradients with the
 * builder and writes their ids to gin[i] (RLX_NO_NODE where none is needed or
 * none exists). A gradient may have the shape of the op's broadcast result:
 * the driver sums it down to the input's shape, so rules never undo
 * broadcasting themselves.
 */
#ifndef RLX_IR_AUTODIFF_H
#define RLX_IR_AUTODIFF_H

#include "ir/builder_internal.h"

typedef struct ad_ctx {
    rlx_graph *g;
    int32_t    id;      /* the node whose rule runs */
} ad_ctx;

typedef rlx_status (*ir_vjp_rule)(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin);

/* The rule of op, or NULL when the op has none (the driver then reports it
 * UNSUPPORTED if it lies on a differentiated path). */
ir_vjp_rule ir_vjp_rule_of(ir_op op);

/* Rule tables of the vjp_*.c files: each fills the slots of its ops. */
void ir_vjp_register_elementwise(ir_vjp_rule *table);
void ir_vjp_register_nn(ir_vjp_rule *table);
void ir_vjp_register_movement(ir_vjp_rule *table);
void ir_vjp_register_vision(ir_vjp_rule *table);
void ir_vjp_register_chan_norm(ir_vjp_rule *table);

/* Helpers shared by the rules (autodiff.c). */
const ir_node *ad_node(const ad_ctx *c, rlx_node x);              /* current storage: re-fetch after appends */
rlx_node ad_scalar(ad_ctx *c, rlx_dtype dt, double v);
rlx_node ad_zeros_like(ad_ctx *c, rlx_node x);                    /* 0 broadcast to x's shape */
rlx_node ad_reshape_to(ad_ctx *c, rlx_node x, const ir_shape *s);
rlx_node ad_expand_to(ad_ctx *c, rlx_node x, const ir_shape *s);
/* x reduced over axes_mask with keepdim, expanded back to shape s (x's own). */
rlx_node ad_sum_keep(ad_ctx *c, rlx_node x, uint32_t axes_mask);
/* The element count of x's axes in axes_mask as a scalar of dtype dt:
 * a constant for static dims, a node counting ones otherwise. */
rlx_node ad_count(ad_ctx *c, rlx_node x, uint32_t axes_mask, rlx_dtype dt);
/* gy reshaped to the keepdim form of a reduction of x over axes_mask and
 * expanded to x's shape. */
rlx_node ad_unreduce(ad_ctx *c, rlx_node gy, rlx_node x, uint32_t axes_mask);

#endif
