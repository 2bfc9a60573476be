/*
 * pool_geom.h — a pool node's attributes as arrays, through the op_attrs
 * accessors, and the window rules every backend shares (PyTorch's and
 * ONNX's: output size with ceil mode, the average's divisor).
 */
#ifndef RLX_IR_POOL_GEOM_H
#define RLX_IR_POOL_GEOM_H

#include "ir/ir.h"

enum { IR_POOL_MAX = 0, IR_POOL_AVG = 1 };

typedef struct ir_pool_geom {
    int     dims, kind;
    int64_t kernel[3], stride[3], pad_begin[3], pad_end[3];
    bool    ceil_mode, count_include_pad;
} ir_pool_geom;

static inline void ir_pool_geom_of(const ir_node *n, ir_pool_geom *p) {
    p->dims = (int)ir_attr_pool_dims(n), p->kind = (int)ir_attr_pool_kind(n);
    p->kernel[0] = ir_attr_pool_kernel0(n), p->kernel[1] = ir_attr_pool_kernel1(n), p->kernel[2] = ir_attr_pool_kernel2(n);
    p->stride[0] = ir_attr_pool_stride0(n), p->stride[1] = ir_attr_pool_stride1(n), p->stride[2] = ir_attr_pool_stride2(n);
    p->pad_begin[0] = ir_attr_pool_pad_begin0(n), p->pad_begin[1] = ir_attr_pool_pad_begin1(n);
    p->pad_begin[2] = ir_attr_pool_pad_begin2(n);
    p->pad_end[0] = ir_attr_pool_pad_end0(n), p->pad_end[1] = ir_attr_pool_pad_end1(n), p->pad_end[2] = ir_attr_pool_pad_end2(n);
    p->ceil_mode = ir_attr_pool_ceil_mode(n) != 0, p->count_include_pad = ir_attr_pool_count_include_pad(n) != 0;
}

static inline void ir_pool_geom_set(ir_node *n, const ir_pool_geom *p) {
    ir_attr_set_pool_dims(n, p->dims), ir_attr_set_pool_kind(n, p->kind);
    ir_attr_set_pool_kernel0(n, p->kernel[0]), ir_attr_set_pool_kernel1(n, p->kernel[1]);
    ir_attr_set_pool_kernel2(n, p->kernel[2]);
    ir_attr_set_pool_stride0(n, p->stride[0]), ir_attr_set_pool_stride1(n, p->stride[1]);
    ir_attr_set_pool_stride2(n, p->stride[2]);
    ir_attr_set_pool_pad_begin0(n, p->pad_begin[0]), ir_attr_set_pool_pad_begin1(n, p->pad_begin[1]);
    ir_attr_set_pool_pad_begin2(n, p->pad_begin[2]);
    ir_attr_set_pool_pad_end0(n, p->pad_end[0]), ir_attr_set_pool_pad_end1(n, p->pad_end[1]);
    ir_attr_set_pool_pad_end2(n, p->pad_end[2]);
    ir_attr_set_pool_ceil_mode(n, p->ceil_mode), ir_attr_set_pool_count_include_pad(n, p->count_include_pad);
}

/* Output size along spatial dim i (< 1: the window does not fit). With ceil
 * mode the last window must start inside the input or the front padding. */
static inline int64_t ir_pool_out_size(const ir_pool_geom *p, int i, int64_t in) {
    int64_t room = in + p->pad_begin[i] + p->pad_end[i] - p->kernel[i];
    if (room < 0) return 0;
    int64_t out = (p->ceil_mode ? (room + p->stride[i] - 1) / p->stride[i] : room / p->stride[i]) + 1;
    if (p->ceil_mode && (out - 1) * p->stride[i] >= in + p->pad_begin[i]) out--;
    return out;
}

/* pool_grad(x, dy) with pool's attributes (builder_conv.c), for autodiff. */
rlx_node ir_pool_grad(rlx_graph *g, const ir_node *pool, rlx_node x, rlx_node dy);

#endif
