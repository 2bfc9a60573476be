/*
 * builder_conv.c — rlx_conv and rlx_pool: convolution (cross-correlation, as PyTorch's
 * and ONNX's Conv) and pooling, with defaults for the parameters a caller
 * leaves zero.
 */
#include "ir/builder_internal.h"
#include "ir/conv_geom.h"
#include "ir/pool_geom.h"
#include <string.h>

rlx_node rlx_conv(rlx_graph *g, rlx_node x, rlx_node w, rlx_node bias, const rlx_conv_params *p) {
    const char *fn = "rlx_conv";
    rlx_conv_params dflt = {0};
    if (!p) p = &dflt;
    int rank = -1;
    if (!g) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn);
        return RLX_NO_NODE;
    }
    if (x >= 0 && x < g->g.n_nodes) rank = g->g.nodes[x].shape.rank;
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_CONV;
    ir_conv_geom c = {.dims = p->dims ? p->dims : (rank >= 3 ? rank - 2 : 0), .groups = p->groups ? p->groups : 1,
                      .act = p->act, .has_bias = bias != RLX_NO_NODE};
    for (int i = 0; i < 3; i++) {
        c.stride[i] = p->stride[i] ? p->stride[i] : 1;
        c.dilation[i] = p->dilation[i] ? p->dilation[i] : 1;
        c.pad_begin[i] = p->pad_begin[i], c.pad_end[i] = p->pad_end[i];
    }
    ir_conv_geom_set(&n, &c);
    rlx_node in[3] = {x, w, bias};
    return ir_build(g, fn, IR_OP_CONV, in, c.has_bias ? 3 : 2, &n);
}

rlx_node rlx_pool(rlx_graph *g, rlx_node x, const rlx_pool_params *p) {
    const char *fn = "rlx_pool";
    if (!g) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn);
        return RLX_NO_NODE;
    }
    if (!p) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: params are NULL (the window is required)", fn);
        return RLX_NO_NODE;
    }
    int rank = x >= 0 && x < g->g.n_nodes ? g->g.nodes[x].shape.rank : -1;
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_POOL;
    ir_pool_geom q = {.dims = p->dims ? p->dims : (rank >= 3 ? rank - 2 : 0), .kind = p->kind == RLX_AVGPOOL,
                      .ceil_mode = p->ceil_mode != 0, .count_include_pad = p->count_include_pad != 0};
    for (int i = 0; i < 3; i++) {
        q.kernel[i] = i < q.dims ? p->kernel[i] : 1;
        q.stride[i] = p->stride[i] ? p->stride[i] : q.kernel[i];
        q.pad_begin[i] = p->pad_begin[i], q.pad_end[i] = p->pad_end[i];
    }
    if ((unsigned)p->kind > RLX_AVGPOOL) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: kind %d is not an rlx_pool_kind", fn, (int)p->kind);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    ir_pool_geom_set(&n, &q);
    return ir_build(g, fn, IR_OP_POOL, &x, 1, &n);
}

rlx_node rlx_conv_transpose(rlx_graph *g, rlx_node x, rlx_node w, rlx_node bias, const rlx_conv_params *p) {
    const char *fn = "rlx_conv_transpose";
    rlx_conv_params dflt = {0};
    if (!p) p = &dflt;
    if (!g) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn);
        return RLX_NO_NODE;
    }
    int rank = x >= 0 && x < g->g.n_nodes ? g->g.nodes[x].shape.rank : -1;
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_CONV_TRANSPOSE;
    ir_conv_geom c = {.dims = p->dims ? p->dims : (rank >= 3 ? rank - 2 : 0), .groups = p->groups ? p->groups : 1,
                      .act = p->act, .has_bias = bias != RLX_NO_NODE};
    for (int i = 0; i < 3; i++) {
        c.stride[i] = p->stride[i] ? p->stride[i] : 1;
        c.dilation[i] = p->dilation[i] ? p->dilation[i] : 1;
        c.pad_begin[i] = p->pad_begin[i];
        c.pad_end[i] = p->pad_end[i] - p->output_padding[i];
        if (p->output_padding[i] < 0 || p->output_padding[i] >= (c.stride[i] > c.dilation[i] ? c.stride[i] : c.dilation[i])) {
            rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: output_padding %lld must be in [0, max(stride, dilation))", fn,
                     (long long)p->output_padding[i]);
            return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
        }
    }
    ir_conv_geom_set(&n, &c);
    rlx_node in[3] = {x, w, bias};
    return ir_build(g, fn, IR_OP_CONV_TRANSPOSE, in, c.has_bias ? 3 : 2, &n);
}

rlx_node ir_conv_weight_grad(rlx_graph *g, const ir_node *conv, rlx_node x, rlx_node dy, rlx_node w) {
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_CONV_WEIGHT_GRAD;
    ir_conv_geom c;
    ir_conv_geom_of(conv, &c);
    c.act = RLX_ACT_NONE, c.has_bias = 0;
    ir_conv_geom_set(&n, &c);
    rlx_node in[3] = {x, dy, w};
    return ir_build(g, "conv_weight_grad", IR_OP_CONV_WEIGHT_GRAD, in, 3, &n);
}

rlx_node ir_pool_grad(rlx_graph *g, const ir_node *pool, rlx_node x, rlx_node dy) {
    ir_node n = *pool;
    n.op = IR_OP_POOL_GRAD;
    n.name = NULL, n.data = NULL, n.data_bytes = 0;
    rlx_node in[2] = {x, dy};
    return ir_build(g, "pool_grad", IR_OP_POOL_GRAD, in, 2, &n);
}
