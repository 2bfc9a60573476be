/*
 * shape_vision.c — the shape rules of resize, resize_grad, flip,
 * depth_to_space / space_to_depth and adaptive_pool(_grad). All take x
 * [N, C, *S] (flip: any rank); N and C may be symbolic, the spatial sizes
 * they rearrange or resample are static.
 */
#include "ir/adaptive_pool_geom.h"
#include "ir/pool_geom.h"
#include "ir/rearrange_geom.h"
#include "ir/resize_geom.h"
#include "ir/shape_rules.h"
#include <math.h>
#include <stdio.h>

#define FAIL(status, ...) do {                                                                \
        char lbl_[160], msg_[400];                                                            \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                             \
        return rlx_fail(status, "%s: %s", ir_node_label(g, (int32_t)(n - g->nodes), lbl_,     \
                        sizeof lbl_), msg_);                                                  \
    } while (0)

/* The spatial-dims checks resize and adaptive_pool share. */
#define CHECK_SPATIAL(x, dims, what) do {                                                      \
        if ((dims) < 1 || (dims) > 3) FAIL(RLX_STATUS_INVALID_ARGUMENT, "%d spatial dims (1 to 3)", (dims)); \
        if ((x)->shape.rank != (dims) + 2)                                                     \
            FAIL(RLX_STATUS_SHAPE, "%s needs rank %d for %d spatial dims (got %d)", what, (dims) + 2, (dims), (x)->shape.rank); \
        if ((x)->dtype != RLX_F32) FAIL(RLX_STATUS_UNSUPPORTED, "%s must be f32 (got %s)", what, rlx_dtype_name((x)->dtype)); \
        for (int i_ = 0; i_ < (dims); i_++)                                                    \
            if (!ir_dim_is_static((x)->shape.d[2 + i_])) FAIL(RLX_STATUS_UNSUPPORTED, "spatial sizes must be static"); \
    } while (0)

static rlx_status resize_checks(const ir_graph *g, ir_node *n, const ir_resize_geom *p) {
    if (p->mode < IR_RESIZE_NEAREST || p->mode > IR_RESIZE_CUBIC) FAIL(RLX_STATUS_INVALID_ARGUMENT, "mode %d (0 nearest, 1 linear, 2 cubic)", p->mode);
    if (p->coord < IR_COORD_HALF_PIXEL || p->coord > IR_COORD_ASYMMETRIC)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "coordinate mode %d is not an rlx_resize_coord", p->coord);
    if (p->nearest < IR_NEAREST_ROUND_PREFER_FLOOR || p->nearest > IR_NEAREST_CEIL)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "nearest mode %d is not an rlx_resize_nearest", p->nearest);
    if (!isfinite(p->cubic_a)) FAIL(RLX_STATUS_INVALID_ARGUMENT, "cubic_a must be finite");
    for (int i = 0; i < p->dims; i++) {
        if (p->out[i] < 1 || p->out[i] > ((int64_t)1 << 24) || p->in[i] > ((int64_t)1 << 24))
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "spatial dim %d: output size %lld must be in [1, 2^24]", i, (long long)p->out[i]);
        if (!(p->scale[i] > 0) || !isfinite(p->scale[i]))
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "spatial dim %d: scale %g must be positive and finite", i, p->scale[i]);
    }
    return RLX_OK;
}

rlx_status shape_resize(const ir_graph *g, ir_node *n) {
    ir_resize_geom p;
    ir_resize_geom_of(n, &p);
    const ir_node *x = &g->nodes[n->in[0]];
    CHECK_SPATIAL(x, p.dims, "x");
    for (int i = 0; i < p.dims; i++)
        if (x->shape.d[2 + i].k != p.in[i] || p.in[i] < 1)
            FAIL(RLX_STATUS_SHAPE, "spatial dim %d of x is %lld, the resize was built for %lld", i, (long long)x->shape.d[2 + i].k,
                 (long long)p.in[i]);
    rlx_status st = resize_checks(g, n, &p);
    if (st != RLX_OK) return st;
    n->shape = x->shape;
    for (int i = 0; i < p.dims; i++) n->shape.d[2 + i] = ir_dim_const(p.out[i]);
    n->dtype = RLX_F32;
    return RLX_OK;
}

/* resize_grad: dy (resize's output shape) to resize's input shape. */
rlx_status shape_resize_grad(const ir_graph *g, ir_node *n) {
    ir_resize_geom p;
    ir_resize_geom_of(n, &p);
    const ir_node *dy = &g->nodes[n->in[0]];
    CHECK_SPATIAL(dy, p.dims, "dy");
    for (int i = 0; i < p.dims; i++)
        if (dy->shape.d[2 + i].k != p.out[i]) FAIL(RLX_STATUS_SHAPE, "dy's spatial dim %d is not the resize's output size", i);
    rlx_status st = resize_checks(g, n, &p);
    if (st != RLX_OK) return st;
    n->shape = dy->shape;
    for (int i = 0; i < p.dims; i++) {
        if (p.in[i] < 1) FAIL(RLX_STATUS_INVALID_ARGUMENT, "input size %lld of spatial dim %d", (long long)p.in[i], i);
        n->shape.d[2 + i] = ir_dim_const(p.in[i]);
    }
    n->dtype = RLX_F32;
    return RLX_OK;
}

rlx_status shape_flip(const ir_graph *g, ir_node *n) {
    const ir_node *x = &g->nodes[n->in[0]];
    int64_t axes = ir_attr_flip_axes(n);
    if (axes < 0 || (x->shape.rank < 63 && (axes >> x->shape.rank) != 0))
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "axes mask 0x%llx names an axis past rank %d", (unsigned long long)axes, x->shape.rank);
    for (int i = 0; i < x->shape.rank; i++)
        if (((axes >> i) & 1) && !ir_dim_is_static(x->shape.d[i])) FAIL(RLX_STATUS_UNSUPPORTED, "flipped axis %d must be static", i);
    n->shape = x->shape;
    n->dtype = x->dtype;
    return RLX_OK;
}

rlx_status shape_depth_space(const ir_graph *g, ir_node *n) {
    const ir_node *x = &g->nodes[n->in[0]];
    int64_t b = ir_attr_depth_space_blocksize(n), mode = ir_attr_depth_space_mode(n);
    if (x->shape.rank != 4) FAIL(RLX_STATUS_SHAPE, "x must be [N, C, H, W] (rank %d)", x->shape.rank);
    if (b < 1 || b > 4096) FAIL(RLX_STATUS_INVALID_ARGUMENT, "blocksize %lld (1 to 4096)", (long long)b);
    if (mode != IR_DS_DCR && mode != IR_DS_CRD) FAIL(RLX_STATUS_INVALID_ARGUMENT, "mode %lld (0 DCR, 1 CRD)", (long long)mode);
    for (int i = 1; i < 4; i++)
        if (!ir_dim_is_static(x->shape.d[i])) FAIL(RLX_STATUS_UNSUPPORTED, "C, H and W must be static");
    int64_t C = x->shape.d[1].k, H = x->shape.d[2].k, W = x->shape.d[3].k;
    n->shape = x->shape;
    if (n->op == IR_OP_DEPTH_TO_SPACE) {
        if (C % (b * b)) FAIL(RLX_STATUS_SHAPE, "C = %lld is not a multiple of blocksize^2 = %lld", (long long)C, (long long)(b * b));
        n->shape.d[1] = ir_dim_const(C / (b * b)), n->shape.d[2] = ir_dim_const(H * b), n->shape.d[3] = ir_dim_const(W * b);
    } else {
        if (H % b || W % b) FAIL(RLX_STATUS_SHAPE, "H = %lld and W = %lld must be multiples of blocksize %lld", (long long)H, (long long)W, (long long)b);
        n->shape.d[1] = ir_dim_const(C * b * b), n->shape.d[2] = ir_dim_const(H / b), n->shape.d[3] = ir_dim_const(W / b);
    }
    n->dtype = x->dtype;
    return RLX_OK;
}

rlx_status shape_adaptive_pool(const ir_graph *g, ir_node *n) {
    ir_adaptive_geom p;
    ir_adaptive_geom_of(n, &p);
    const ir_node *x = &g->nodes[n->in[0]];
    if (p.kind != IR_POOL_MAX && p.kind != IR_POOL_AVG) FAIL(RLX_STATUS_INVALID_ARGUMENT, "kind %d (0 max, 1 average)", p.kind);
    CHECK_SPATIAL(x, p.dims, "x");
    n->shape = x->shape;
    for (int i = 0; i < p.dims; i++) {
        if (p.out[i] < 1 || p.out[i] > ((int64_t)1 << 24))
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "spatial dim %d: output size %lld must be in [1, 2^24]", i, (long long)p.out[i]);
        if (x->shape.d[2 + i].k < 1) FAIL(RLX_STATUS_SHAPE, "spatial dim %d of x is empty", i);
        n->shape.d[2 + i] = ir_dim_const(p.out[i]);
    }
    n->dtype = RLX_F32;
    return RLX_OK;
}

/* adaptive_pool_grad: x (the pooling's input) and dy (its output shape); out is x's shape. */
rlx_status shape_adaptive_pool_grad(const ir_graph *g, ir_node *n) {
    ir_adaptive_geom p;
    ir_adaptive_geom_of(n, &p);
    const ir_node *x = &g->nodes[n->in[0]], *dy = &g->nodes[n->in[1]];
    CHECK_SPATIAL(x, p.dims, "x");
    CHECK_SPATIAL(dy, p.dims, "dy");
    for (int i = 0; i < p.dims; i++)
        if (dy->shape.d[2 + i].k != p.out[i]) FAIL(RLX_STATUS_SHAPE, "dy's spatial dim %d is not the pooling's output size", i);
    n->shape = x->shape;
    n->dtype = RLX_F32;
    return RLX_OK;
}
