/*
 * adaptive_pool_geom.h — an adaptive_pool node's attributes as arrays, and
 * PyTorch's window rule every backend shares: output o of O over an input of
 * S covers [floor(o S / O), ceil((o + 1) S / O)), so windows vary in size
 * and may overlap (S not a multiple of O), unlike pool's strided windows.
 */
#ifndef RLX_IR_ADAPTIVE_POOL_GEOM_H
#define RLX_IR_ADAPTIVE_POOL_GEOM_H

#include "ir/ir.h"

typedef struct ir_adaptive_geom {
    int     dims, kind;     /* kind: IR_POOL_MAX 0, IR_POOL_AVG 1 (pool_geom.h) */
    int64_t out[3];
} ir_adaptive_geom;

static inline void ir_adaptive_geom_of(const ir_node *n, ir_adaptive_geom *p) {
    p->dims = (int)ir_attr_adaptive_pool_dims(n), p->kind = (int)ir_attr_adaptive_pool_kind(n);
    p->out[0] = ir_attr_adaptive_pool_out0(n), p->out[1] = ir_attr_adaptive_pool_out1(n);
    p->out[2] = ir_attr_adaptive_pool_out2(n);
}

static inline void ir_adaptive_geom_set(ir_node *n, const ir_adaptive_geom *p) {
    ir_attr_set_adaptive_pool_dims(n, p->dims), ir_attr_set_adaptive_pool_kind(n, p->kind);
    ir_attr_set_adaptive_pool_out0(n, p->out[0]), ir_attr_set_adaptive_pool_out1(n, p->out[1]);
    ir_attr_set_adaptive_pool_out2(n, p->out[2]);
}

/* Output o's window [*lo, *hi) over an input of S, O outputs. */
static inline void ir_adaptive_window(int64_t o, int64_t S, int64_t O, int64_t *lo, int64_t *hi) {
    *lo = o * S / O;
    *hi = ((o + 1) * S + O - 1) / O;
}

/* The outputs [*lo, *hi) whose windows hold input i. */
static inline void ir_adaptive_users(int64_t i, int64_t S, int64_t O, int64_t *lo, int64_t *hi) {
    *lo = i * O / S;
    int64_t h = ((i + 1) * O + S - 1) / S;
    *hi = h > O ? O : h;
}

/* adaptive_pool_grad(x, dy) with adaptive_pool's attributes (builder_vision.c), for autodiff. */
rlx_node ir_adaptive_pool_grad(rlx_graph *g, const ir_node *pool, rlx_node x, rlx_node dy);

#endif
