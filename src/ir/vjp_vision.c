/*
 * vjp_vision.c — vector-Jacobian rules of the vision ops: resize (its input
 * gradient, resize_grad, a gather of each input element's weights: no
 * scatter, so no atomics on a GPU), adaptive_pool (adaptive_pool_grad, the
 * same gather shape as pool_grad), flip (flip again) and depth_to_space /
 * space_to_depth (each other's inverse in the same mode).
 */
#include "ir/adaptive_pool_geom.h"
#include "ir/autodiff.h"
#include "ir/resize_geom.h"

#define G (c->g)

static rlx_status vjp_resize(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = ir_resize_grad(G, n, gy);
    return RLX_OK;
}

static rlx_status vjp_adaptive_pool(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = ir_adaptive_pool_grad(G, n, n->in[0], gy);
    return RLX_OK;
}

static rlx_status vjp_flip(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = rlx_flip(G, gy, (uint32_t)ir_attr_flip_axes(n));
    return RLX_OK;
}

static rlx_status vjp_depth_space(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    int64_t b = ir_attr_depth_space_blocksize(n);
    rlx_depth_space_mode m = (rlx_depth_space_mode)ir_attr_depth_space_mode(n);
    gin[0] = n->op == IR_OP_DEPTH_TO_SPACE ? rlx_space_to_depth(G, gy, b, m) : rlx_depth_to_space(G, gy, b, m);
    return RLX_OK;
}

void ir_vjp_register_vision(ir_vjp_rule *t) {
    t[IR_OP_RESIZE] = vjp_resize;
    t[IR_OP_ADAPTIVE_POOL] = vjp_adaptive_pool;
    t[IR_OP_FLIP] = vjp_flip;
    t[IR_OP_DEPTH_TO_SPACE] = vjp_depth_space;
    t[IR_OP_SPACE_TO_DEPTH] = vjp_depth_space;
}
