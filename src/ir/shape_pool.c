/*
 * shape_pool.c — the shape rule of pool: x [N, C, *S] (1 to 3 spatial dims),
 * f32; output [N, C, *S'] with S' from ir_pool_out_size. Padding is at most
 * half the window (PyTorch's and ONNX's rule, so every window holds an input
 * element). N and C may be symbolic; spatial sizes are static.
 */
#include "ir/pool_geom.h"
#include "ir/shape_rules.h"
#include <stdio.h>

#define FAIL(status, ...) do {                                                                \
        char lbl_[160], msg_[400];                                                            \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                             \
        return rlx_fail(status, "%s: %s", ir_node_label(g, (int32_t)(n - g->nodes), lbl_,     \
                        sizeof lbl_), msg_);                                                  \
    } while (0)

rlx_status shape_pool(const ir_graph *g, ir_node *n) {
    ir_pool_geom p;
    ir_pool_geom_of(n, &p);
    const ir_node *x = &g->nodes[n->in[0]];
    if (p.dims < 1 || p.dims > 3) FAIL(RLX_STATUS_INVALID_ARGUMENT, "%d spatial dims (1 to 3)", p.dims);
    if (p.kind != IR_POOL_MAX && p.kind != IR_POOL_AVG) FAIL(RLX_STATUS_INVALID_ARGUMENT, "kind %d (0 max, 1 average)", p.kind);
    if (x->shape.rank != p.dims + 2) FAIL(RLX_STATUS_SHAPE, "x needs rank %d for %d spatial dims (got %d)", p.dims + 2, p.dims, x->shape.rank);
    if (x->dtype != RLX_F32) FAIL(RLX_STATUS_UNSUPPORTED, "x must be f32 (got %s)", rlx_dtype_name(x->dtype));
    n->shape = x->shape;
    for (int i = 0; i < p.dims; i++) {
        if (!ir_dim_is_static(x->shape.d[2 + i])) FAIL(RLX_STATUS_UNSUPPORTED, "spatial sizes must be static");
        if (p.kernel[i] < 1 || p.stride[i] < 1 || p.pad_begin[i] < 0 || p.pad_end[i] < 0 ||
            2 * p.pad_begin[i] > p.kernel[i] || 2 * p.pad_end[i] > p.kernel[i])
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "spatial dim %d: window %lld, stride %lld >= 1, padding %lld and %lld at most half the window",
                 i, (long long)p.kernel[i], (long long)p.stride[i], (long long)p.pad_begin[i], (long long)p.pad_end[i]);
        int64_t out = ir_pool_out_size(&p, i, x->shape.d[2 + i].k);
        if (out < 1) FAIL(RLX_STATUS_SHAPE, "spatial dim %d: a window of %lld does not fit %lld", i, (long long)p.kernel[i],
                          (long long)x->shape.d[2 + i].k);
        n->shape.d[2 + i] = ir_dim_const(out);
    }
    n->dtype = x->dtype;
    return RLX_OK;
}

/* pool_grad: x (pool's input) and dy (pool's output shape); out is x's shape. */
rlx_status shape_pool_grad(const ir_graph *g, ir_node *n) {
    ir_pool_geom p;
    ir_pool_geom_of(n, &p);
    const ir_node *x = &g->nodes[n->in[0]], *dy = &g->nodes[n->in[1]];
    if (p.dims < 1 || p.dims > 3 || x->shape.rank != p.dims + 2 || dy->shape.rank != p.dims + 2)
        FAIL(RLX_STATUS_SHAPE, "x and dy need rank dims + 2");
    if (x->dtype != RLX_F32 || dy->dtype != RLX_F32) FAIL(RLX_STATUS_UNSUPPORTED, "x and dy must be f32");
    for (int i = 0; i < p.dims; i++) {
        if (!ir_dim_is_static(x->shape.d[2 + i]) || !ir_dim_is_static(dy->shape.d[2 + i]))
            FAIL(RLX_STATUS_UNSUPPORTED, "spatial sizes must be static");
        if (ir_pool_out_size(&p, i, x->shape.d[2 + i].k) != dy->shape.d[2 + i].k)
            FAIL(RLX_STATUS_SHAPE, "dy's spatial dim %d is not the pooling's output size", i);
    }
    n->shape = x->shape;
    n->dtype = RLX_F32;
    return RLX_OK;
}
