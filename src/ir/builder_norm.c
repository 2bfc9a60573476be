/*
 * builder_norm.c — the image norms over the channel dim of x [N, C, *S]:
 * rlx_batch_norm (inference statistics given), rlx_group_norm and
 * rlx_instance_norm (statistics over each group of channels and all
 * positions), and rlx_layer_norm_channels (statistics over the channels at
 * each position: ConvNeXt's LayerNorm2d), which is layer_norm over the last
 * dim with C moved there and back, so it runs, and differentiates, as those
 * ops do.
 */
#include "ir/builder_internal.h"
#include <string.h>

static rlx_node chan_norm(rlx_graph *g, const char *fn, ir_op op, const rlx_node *in, int n_in, int64_t groups, float eps) {
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = op;
    ir_attr_set_chan_norm_groups(&n, groups);
    ir_attr_set_chan_norm_eps(&n, eps);
    return ir_build(g, fn, op, in, n_in, &n);
}

rlx_node rlx_batch_norm(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, rlx_node mean, rlx_node var, float eps) {
    rlx_node in[5] = {x, gamma, beta, mean, var};
    return chan_norm(g, "rlx_batch_norm", IR_OP_BATCH_NORM, in, 5, 0, eps);
}

rlx_node rlx_group_norm(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, int groups, float eps) {
    const char *fn = "rlx_group_norm";
    if (g && groups < 1) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: groups %d must be >= 1", fn, groups);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    rlx_node in[3] = {x, gamma, beta};
    return chan_norm(g, fn, IR_OP_GROUP_NORM, in, 3, groups, eps);
}

rlx_node rlx_instance_norm(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps) {
    const char *fn = "rlx_instance_norm";
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return RLX_NO_NODE;
    const ir_shape *s = &g->g.nodes[x].shape;
    if (s->rank < 2 || !ir_dim_is_static(s->d[1])) {
        rlx_fail(RLX_STATUS_SHAPE, "%s: x must be [N, C, ...] with a static C", fn);
        return ir_build_fail(g, RLX_STATUS_SHAPE);
    }
    rlx_node in[3] = {x, gamma, beta};
    return chan_norm(g, fn, IR_OP_GROUP_NORM, in, 3, s->d[1].k, eps);
}

rlx_node rlx_layer_norm_channels(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps) {
    const char *fn = "rlx_layer_norm_channels";
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return RLX_NO_NODE;
    int r = g->g.nodes[x].shape.rank;
    if (r < 2) {
        rlx_fail(RLX_STATUS_SHAPE, "%s: x must be [N, C, ...] (rank >= 2), got rank %d", fn, r);
        return ir_build_fail(g, RLX_STATUS_SHAPE);
    }
    int fwd[RLX_MAX_RANK], back[RLX_MAX_RANK];
    for (int i = 0, k = 0; i < r; i++)   /* [N, *S, C] */
        if (i != 1) fwd[k++] = i;
    fwd[r - 1] = 1;
    for (int i = 0; i < r; i++) back[fwd[i]] = i;
    rlx_node t = r == 2 ? x : rlx_transpose(g, x, fwd);
    rlx_node y = rlx_layer_norm(g, t, gamma, beta, eps);
    return r == 2 ? y : rlx_transpose(g, y, back);
}
