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
        q.kind = 7;   /* the shape rule reports it, with the graph's sticky error */
    }
    ir_pool_geom_set(&n, &q);
    return ir_build(g, fn, IR_OP_POOL, &x, 1, &n);
}
