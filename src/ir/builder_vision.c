/*
 * builder_vision.c — rlx_resize, rlx_adaptive_pool, rlx_flip,
 * rlx_depth_to_space and rlx_space_to_depth, and the backward nodes autodiff
 * appends for them. Parameters are resolved here (output sizes from scales,
 * the scale from sizes); the shape rules (shape_vision.c) check them, so a
 * bad value is the graph's sticky error naming the node.
 */
#include "ir/adaptive_pool_geom.h"
#include "ir/builder_internal.h"
#include "ir/pool_geom.h"
#include "ir/resize_geom.h"
#include <math.h>
#include <string.h>

static int rank_if_node(const rlx_graph *g, rlx_node x) {
    return g && x >= 0 && x < g->g.n_nodes ? g->g.nodes[x].shape.rank : -1;
}

static const ir_dim *dim_if_node(const rlx_graph *g, rlx_node x, int i) {
    return g && x >= 0 && x < g->g.n_nodes && i < g->g.nodes[x].shape.rank ? &g->g.nodes[x].shape.d[i] : NULL;
}

void rlx_resize_params_init(rlx_resize_params *p) {
    if (!p) return;
    memset(p, 0, sizeof *p);
    p->mode = RLX_RESIZE_NEAREST, p->coord = RLX_COORD_HALF_PIXEL, p->nearest = RLX_NEAREST_ROUND_PREFER_FLOOR;
    p->cubic_a = -0.75;
}

rlx_node rlx_resize(rlx_graph *g, rlx_node x, const rlx_resize_params *p) {
    const char *fn = "rlx_resize";
    if (!g) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn);
        return RLX_NO_NODE;
    }
    if (!p) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: params are NULL (sizes or scales are required)", fn);
        return RLX_NO_NODE;
    }
    int rank = rank_if_node(g, x);
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_RESIZE;
    ir_resize_geom q = {.dims = p->dims ? p->dims : (rank >= 3 ? rank - 2 : 0), .mode = (int)p->mode, .coord = (int)p->coord,
                        .nearest = (int)p->nearest, .exclude_outside = p->exclude_outside != 0, .cubic_a = p->cubic_a};
    for (int i = 0; i < 3; i++) q.in[i] = q.out[i] = 1, q.scale[i] = 1;
    for (int i = 0; i < q.dims && i < 3; i++) {
        const ir_dim *d = dim_if_node(g, x, rank - q.dims + i);
        int64_t in = d && ir_dim_is_static(*d) ? d->k : -1;
        q.in[i] = in;
        if (p->sizes[i] > 0) {
            q.out[i] = p->sizes[i];
            /* an explicit scale beside the size: ONNX's keep_aspect_ratio_policy */
            q.scale[i] = p->scales[i] > 0 ? p->scales[i] : in > 0 ? (double)p->sizes[i] / (double)in : 0;
        } else if (p->sizes[i] < 0) {
            q.out[i] = p->sizes[i];   /* the shape rule names it */
        } else {
            q.scale[i] = p->scales[i];
            double o = in > 0 && p->scales[i] > 0 && isfinite(p->scales[i]) ? floor((double)in * p->scales[i]) : 0;
            q.out[i] = o < (double)((int64_t)1 << 40) ? (int64_t)o : 0;
        }
    }
    ir_resize_geom_set(&n, &q);
    return ir_build(g, fn, IR_OP_RESIZE, &x, 1, &n);
}

rlx_node ir_resize_grad(rlx_graph *g, const ir_node *resize, rlx_node dy) {
    ir_node n = *resize;
    n.op = IR_OP_RESIZE_GRAD;
    n.name = NULL, n.data = NULL, n.data_bytes = 0;
    return ir_build(g, "resize_grad", IR_OP_RESIZE_GRAD, &dy, 1, &n);
}

rlx_node rlx_adaptive_pool(rlx_graph *g, rlx_node x, rlx_pool_kind kind, int dims, const int64_t *out) {
    const char *fn = "rlx_adaptive_pool";
    if (!g) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn);
        return RLX_NO_NODE;
    }
    if (!out) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: the output sizes are NULL", fn);
        return RLX_NO_NODE;
    }
    int rank = rank_if_node(g, x);
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_ADAPTIVE_POOL;
    ir_adaptive_geom q = {.dims = dims ? dims : (rank >= 3 ? rank - 2 : 0), .kind = (int)kind, .out = {1, 1, 1}};
    for (int i = 0; i < q.dims && i < 3; i++) q.out[i] = out[i];
    ir_adaptive_geom_set(&n, &q);
    return ir_build(g, fn, IR_OP_ADAPTIVE_POOL, &x, 1, &n);
}

rlx_node ir_adaptive_pool_grad(rlx_graph *g, const ir_node *pool, rlx_node x, rlx_node dy) {
    ir_node n = *pool;
    n.op = IR_OP_ADAPTIVE_POOL_GRAD;
    n.name = NULL, n.data = NULL, n.data_bytes = 0;
    rlx_node in[2] = {x, dy};
    return ir_build(g, "adaptive_pool_grad", IR_OP_ADAPTIVE_POOL_GRAD, in, 2, &n);
}

rlx_node rlx_flip(rlx_graph *g, rlx_node x, uint32_t axes_mask) {
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_FLIP;
    ir_attr_set_flip_axes(&n, (int64_t)axes_mask);
    return ir_build(g, "rlx_flip", IR_OP_FLIP, &x, 1, &n);
}

static rlx_node depth_space(rlx_graph *g, const char *fn, ir_op op, rlx_node x, int64_t b, rlx_depth_space_mode mode) {
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = op;
    ir_attr_set_depth_space_blocksize(&n, b);
    ir_attr_set_depth_space_mode(&n, (int64_t)mode);
    return ir_build(g, fn, op, &x, 1, &n);
}

rlx_node rlx_depth_to_space(rlx_graph *g, rlx_node x, int64_t b, rlx_depth_space_mode mode) {
    return depth_space(g, "rlx_depth_to_space", IR_OP_DEPTH_TO_SPACE, x, b, mode);
}
rlx_node rlx_space_to_depth(rlx_graph *g, rlx_node x, int64_t b, rlx_depth_space_mode mode) {
    return depth_space(g, "rlx_space_to_depth", IR_OP_SPACE_TO_DEPTH, x, b, mode);
}
