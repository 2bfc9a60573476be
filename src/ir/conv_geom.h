/*
 * conv_geom.h — a conv node's attributes as arrays (stride, dilation and
 * padding per spatial dim), read and written through the op_attrs
 * accessors, and the output size rule every backend shares.
 */
#ifndef RLX_IR_CONV_GEOM_H
#define RLX_IR_CONV_GEOM_H

#include "ir/ir.h"

typedef struct ir_conv_geom {
    int     dims;                      /* spatial dims, 1..3 */
    int64_t groups, act, has_bias, has_residual;
    int64_t stride[3], dilation[3], pad_begin[3], pad_end[3];
} ir_conv_geom;

static inline void ir_conv_geom_of(const ir_node *n, ir_conv_geom *c) {
    c->dims = (int)ir_attr_conv_dims(n);
    c->groups = ir_attr_conv_groups(n), c->act = ir_attr_conv_act(n), c->has_bias = ir_attr_conv_has_bias(n);
    c->has_residual = ir_attr_conv_has_residual(n);
    c->stride[0] = ir_attr_conv_stride0(n), c->stride[1] = ir_attr_conv_stride1(n), c->stride[2] = ir_attr_conv_stride2(n);
    c->dilation[0] = ir_attr_conv_dilation0(n), c->dilation[1] = ir_attr_conv_dilation1(n);
    c->dilation[2] = ir_attr_conv_dilation2(n);
    c->pad_begin[0] = ir_attr_conv_pad_begin0(n), c->pad_begin[1] = ir_attr_conv_pad_begin1(n);
    c->pad_begin[2] = ir_attr_conv_pad_begin2(n);
    c->pad_end[0] = ir_attr_conv_pad_end0(n), c->pad_end[1] = ir_attr_conv_pad_end1(n), c->pad_end[2] = ir_attr_conv_pad_end2(n);
}

static inline void ir_conv_geom_set(ir_node *n, const ir_conv_geom *c) {
    ir_attr_set_conv_dims(n, c->dims);
    ir_attr_set_conv_groups(n, c->groups), ir_attr_set_conv_act(n, c->act), ir_attr_set_conv_has_bias(n, c->has_bias);
    ir_attr_set_conv_has_residual(n, c->has_residual);
    ir_attr_set_conv_stride0(n, c->stride[0]), ir_attr_set_conv_stride1(n, c->stride[1]);
    ir_attr_set_conv_stride2(n, c->stride[2]);
    ir_attr_set_conv_dilation0(n, c->dilation[0]), ir_attr_set_conv_dilation1(n, c->dilation[1]);
    ir_attr_set_conv_dilation2(n, c->dilation[2]);
    ir_attr_set_conv_pad_begin0(n, c->pad_begin[0]), ir_attr_set_conv_pad_begin1(n, c->pad_begin[1]);
    ir_attr_set_conv_pad_begin2(n, c->pad_begin[2]);
    ir_attr_set_conv_pad_end0(n, c->pad_end[0]), ir_attr_set_conv_pad_end1(n, c->pad_end[1]);
    ir_attr_set_conv_pad_end2(n, c->pad_end[2]);
}

/* Output size along spatial dim i for input size in and kernel size k
 * (< 1 when the kernel does not fit). */
static inline int64_t ir_conv_out_size(const ir_conv_geom *c, int i, int64_t in, int64_t k) {
    int64_t span = c->dilation[i] * (k - 1) + 1;
    int64_t room = in + c->pad_begin[i] + c->pad_end[i] - span;
    return room < 0 ? 0 : room / c->stride[i] + 1;
}

/* conv_weight_grad(x, dy, w) with conv's attributes (builder_conv.c): the
 * gradient of conv's w, shaped like w, for autodiff. */
rlx_node ir_conv_weight_grad(rlx_graph *g, const ir_node *conv, rlx_node x, rlx_node dy, rlx_node w);

#endif
