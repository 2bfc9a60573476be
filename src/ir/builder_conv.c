/*
 * builder_conv.c — rlx_conv: convolution (cross-correlation, as PyTorch's
 * and ONNX's Conv) with defaults for the parameters a caller leaves zero.
 */
#include "ir/builder_internal.h"
#include "ir/conv_geom.h"
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
