/*
 * shape_conv.c — the shape rule of conv: x [N, C, *S] (1 to 3 spatial dims),
 * w [O, C / groups, *K], optional bias [O]; output [N, O, *S'] with
 * S'_i = (S_i + pad_begin_i + pad_end_i - dilation_i (K_i - 1) - 1) / stride_i + 1.
 * N may be symbolic; channels, spatial sizes and the kernel must be static.
 */
#include "ir/conv_geom.h"
#include "ir/shape_rules.h"
#include <stdio.h>

#define FAIL(status, ...) do {                                                                \
        char lbl_[160], msg_[400];                                                            \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                             \
        return rlx_fail(status, "%s: %s", ir_node_label(g, (int32_t)(n - g->nodes), lbl_,     \
                        sizeof lbl_), msg_);                                                  \
    } while (0)

rlx_status shape_conv(const ir_graph *g, ir_node *n) {
    ir_conv_geom c;
    ir_conv_geom_of(n, &c);
    if (n->n_in != 2 + (c.has_bias ? 1 : 0) + (c.has_residual ? 1 : 0))
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "takes x, w, with has_bias a bias and with has_residual a residual");
    const ir_node *x = &g->nodes[n->in[0]], *w = &g->nodes[n->in[1]];
    if (c.dims < 1 || c.dims > 3) FAIL(RLX_STATUS_INVALID_ARGUMENT, "%d spatial dims (1 to 3)", c.dims);
    if (x->shape.rank != c.dims + 2 || w->shape.rank != c.dims + 2)
        FAIL(RLX_STATUS_SHAPE, "x and w need rank %d for %d spatial dims (got %d and %d)", c.dims + 2, c.dims,
             x->shape.rank, w->shape.rank);
    if (x->dtype != RLX_F32 || w->dtype != RLX_F32)   /* the kernels' dtype so far */
        FAIL(RLX_STATUS_UNSUPPORTED, "x and w must be f32 (got %s, %s)", rlx_dtype_name(x->dtype), rlx_dtype_name(w->dtype));
    for (int d = 1; d < x->shape.rank; d++)
        if (!ir_dim_is_static(x->shape.d[d]) || !ir_dim_is_static(w->shape.d[d]) || !ir_dim_is_static(w->shape.d[0]))
            FAIL(RLX_STATUS_UNSUPPORTED, "channels, spatial sizes and the kernel must be static (only the batch may be symbolic)");
    int64_t C = x->shape.d[1].k, O = w->shape.d[0].k;
    if (c.groups < 1 || C % c.groups || O % c.groups)
        FAIL(RLX_STATUS_SHAPE, "groups %lld must divide the %lld input and %lld output channels", (long long)c.groups,
             (long long)C, (long long)O);
    if (w->shape.d[1].k != C / c.groups)
        FAIL(RLX_STATUS_SHAPE, "w's dim 1 is %lld; %lld channels in %lld groups need %lld", (long long)w->shape.d[1].k,
             (long long)C, (long long)c.groups, (long long)(C / c.groups));
    if (c.has_bias) {
        const ir_node *b = &g->nodes[n->in[2]];
        if (b->shape.rank != 1 || !ir_dim_is_static(b->shape.d[0]) || b->shape.d[0].k != O || b->dtype != x->dtype)
            FAIL(RLX_STATUS_SHAPE, "bias must be [%lld] of x's dtype", (long long)O);
    }
    if (c.act < RLX_ACT_NONE || c.act > RLX_ACT_TANH) FAIL(RLX_STATUS_INVALID_ARGUMENT, "activation %lld", (long long)c.act);
    n->shape = x->shape;
    n->shape.d[1] = ir_dim_const(O);
    for (int i = 0; i < c.dims; i++) {
        if (c.stride[i] < 1 || c.dilation[i] < 1 || c.pad_begin[i] < 0 || c.pad_end[i] < 0)
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "spatial dim %d: stride %lld and dilation %lld must be >= 1, padding >= 0", i,
                 (long long)c.stride[i], (long long)c.dilation[i]);
        int64_t k = w->shape.d[2 + i].k, out = ir_conv_out_size(&c, i, x->shape.d[2 + i].k, k);
        if (out < 1)
            FAIL(RLX_STATUS_SHAPE, "spatial dim %d: a kernel of %lld (dilation %lld) does not fit %lld + padding %lld + %lld", i,
                 (long long)k, (long long)c.dilation[i], (long long)x->shape.d[2 + i].k, (long long)c.pad_begin[i],
                 (long long)c.pad_end[i]);
        n->shape.d[2 + i] = ir_dim_const(out);
    }
    n->dtype = x->dtype;
    if (c.has_residual) {
        const ir_node *r = &g->nodes[n->in[n->n_in - 1]];
        if (r->dtype != n->dtype || !ir_shape_eq(&r->shape, &n->shape))
            FAIL(RLX_STATUS_SHAPE, "the residual must have the output's shape and dtype");
    }
    return RLX_OK;
}

/* conv_transpose: x [N, Cin, *S], w [Cin, Cout / groups, *K], bias [Cout];
 * out [N, Cout, *S'] with S'_i = (S_i - 1) stride_i - pad_begin_i - pad_end_i
 * + dilation_i (K_i - 1) + 1 (pad_end may be negative: output padding). */
rlx_status shape_conv_transpose(const ir_graph *g, ir_node *n) {
    ir_conv_geom c;
    ir_conv_geom_of(n, &c);
    if (n->n_in != 2 + (c.has_bias ? 1 : 0)) FAIL(RLX_STATUS_INVALID_ARGUMENT, "takes x, w and, with has_bias, a bias");
    const ir_node *x = &g->nodes[n->in[0]], *w = &g->nodes[n->in[1]];
    if (c.dims < 1 || c.dims > 3 || x->shape.rank != c.dims + 2 || w->shape.rank != c.dims + 2)
        FAIL(RLX_STATUS_SHAPE, "x and w need rank dims + 2 for 1 to 3 spatial dims");
    if (x->dtype != RLX_F32 || w->dtype != RLX_F32) FAIL(RLX_STATUS_UNSUPPORTED, "x and w must be f32");
    for (int d = 1; d < x->shape.rank; d++)
        if (!ir_dim_is_static(x->shape.d[d]) || !ir_dim_is_static(w->shape.d[d]) || !ir_dim_is_static(w->shape.d[0]))
            FAIL(RLX_STATUS_UNSUPPORTED, "channels, spatial sizes and the kernel must be static");
    int64_t Cin = x->shape.d[1].k, Cout = w->shape.d[1].k * c.groups;
    if (c.groups < 1 || Cin % c.groups || w->shape.d[0].k != Cin)
        FAIL(RLX_STATUS_SHAPE, "w's dim 0 (%lld) must be x's %lld channels, divisible by groups %lld", (long long)w->shape.d[0].k,
             (long long)Cin, (long long)c.groups);
    if (c.has_bias) {
        const ir_node *b = &g->nodes[n->in[2]];
        if (b->shape.rank != 1 || !ir_dim_is_static(b->shape.d[0]) || b->shape.d[0].k != Cout || b->dtype != RLX_F32)
            FAIL(RLX_STATUS_SHAPE, "bias must be f32 [%lld]", (long long)Cout);
    }
    if (c.act != RLX_ACT_NONE) FAIL(RLX_STATUS_UNSUPPORTED, "conv_transpose has no fused activation");
    n->shape = x->shape;
    n->shape.d[1] = ir_dim_const(Cout);
    for (int i = 0; i < c.dims; i++) {
        if (c.stride[i] < 1 || c.dilation[i] < 1 || c.pad_begin[i] < 0)
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "spatial dim %d: stride and dilation >= 1, pad_begin >= 0", i);
        int64_t out = (x->shape.d[2 + i].k - 1) * c.stride[i] - c.pad_begin[i] - c.pad_end[i] +
                      c.dilation[i] * (w->shape.d[2 + i].k - 1) + 1;
        if (out < 1) FAIL(RLX_STATUS_SHAPE, "spatial dim %d: the output would have %lld elements", i, (long long)out);
        n->shape.d[2 + i] = ir_dim_const(out);
    }
    n->dtype = RLX_F32;
    return RLX_OK;
}

/* conv_weight_grad: x [N, C, *S], dy [N, O, *S'] (conv's output shape for
 * these attributes), w [O, C / groups, *K]; out is w's shape. */
rlx_status shape_conv_weight_grad(const ir_graph *g, ir_node *n) {
    ir_conv_geom c;
    ir_conv_geom_of(n, &c);
    const ir_node *x = &g->nodes[n->in[0]], *dy = &g->nodes[n->in[1]], *w = &g->nodes[n->in[2]];
    if (c.dims < 1 || c.dims > 3 || x->shape.rank != c.dims + 2 || dy->shape.rank != c.dims + 2 || w->shape.rank != c.dims + 2)
        FAIL(RLX_STATUS_SHAPE, "x, dy and w need rank dims + 2");
    if (x->dtype != RLX_F32 || dy->dtype != RLX_F32 || w->dtype != RLX_F32) FAIL(RLX_STATUS_UNSUPPORTED, "x, dy and w must be f32");
    for (int d = 1; d < x->shape.rank; d++)
        if (!ir_dim_is_static(x->shape.d[d]) || !ir_dim_is_static(dy->shape.d[d]) || !ir_dim_is_static(w->shape.d[d]))
            FAIL(RLX_STATUS_UNSUPPORTED, "channels, spatial sizes and the kernel must be static");
    if (!ir_dim_eq(x->shape.d[0], dy->shape.d[0]) && ir_dim_is_static(x->shape.d[0]) && ir_dim_is_static(dy->shape.d[0]))
        FAIL(RLX_STATUS_SHAPE, "x and dy batches differ");
    if (c.groups < 1 || x->shape.d[1].k != w->shape.d[1].k * c.groups || dy->shape.d[1].k != w->shape.d[0].k)
        FAIL(RLX_STATUS_SHAPE, "channels of x, dy and w do not agree with groups %lld", (long long)c.groups);
    for (int i = 0; i < c.dims; i++)
        if (ir_conv_out_size(&c, i, x->shape.d[2 + i].k, w->shape.d[2 + i].k) != dy->shape.d[2 + i].k)
            FAIL(RLX_STATUS_SHAPE, "dy's spatial dim %d is not the convolution's output size", i);
    n->shape = w->shape;
    n->dtype = RLX_F32;
    return RLX_OK;
}
