/*
 * shape_chan_norm.c — the shape rule of the channel norms: batch_norm (x,
 * gamma, beta, mean, var) and group_norm (x, gamma, beta, attribute groups).
 * x is [N, C, *S] (rank >= 2, C static, f32 like the conv family); every
 * other input is [C] of x's dtype; the output is x's shape.
 */
#include "ir/shape_rules.h"
#include <stdio.h>

#define FAIL(status, ...) do {                                                                \
        char lbl_[160], msg_[400];                                                            \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                             \
        return rlx_fail(status, "%s: %s", ir_node_label(g, (int32_t)(n - g->nodes), lbl_,     \
                        sizeof lbl_), msg_);                                                  \
    } while (0)

rlx_status shape_chan_norm(const ir_graph *g, ir_node *n) {
    static const char *names[5] = {"x", "gamma", "beta", "mean", "var"};
    bool bn = n->op == IR_OP_BATCH_NORM;
    int want = bn ? 5 : 3;
    if (n->n_in != want) FAIL(RLX_STATUS_INVALID_ARGUMENT, "takes %d inputs, got %d", want, n->n_in);
    const ir_node *x = &g->nodes[n->in[0]];
    if (x->shape.rank < 2) FAIL(RLX_STATUS_SHAPE, "x must be [N, C, ...] (rank >= 2), got rank %d", x->shape.rank);
    if (x->dtype != RLX_F32) FAIL(RLX_STATUS_UNSUPPORTED, "x must be f32 (got %s)", rlx_dtype_name(x->dtype));
    if (!ir_dim_is_static(x->shape.d[1])) FAIL(RLX_STATUS_UNSUPPORTED, "the channel dim must be static");
    int64_t C = x->shape.d[1].k;
    for (int i = 1; i < want; i++) {
        const ir_node *p = &g->nodes[n->in[i]];
        if (p->dtype != x->dtype || p->shape.rank != 1 || !ir_dim_is_static(p->shape.d[0]) || p->shape.d[0].k != C)
            FAIL(RLX_STATUS_SHAPE, "%s must be [%lld] of x's dtype (one per channel)", names[i], (long long)C);
    }
    double eps = ir_attr_chan_norm_eps(n);
    if (!(eps >= 0)) FAIL(RLX_STATUS_INVALID_ARGUMENT, "eps must be >= 0, got %g", eps);
    if (!bn) {
        int64_t G = ir_attr_chan_norm_groups(n);
        if (G < 1 || C % G) FAIL(RLX_STATUS_SHAPE, "groups %lld must divide the %lld channels", (long long)G, (long long)C);
    }
    n->shape = x->shape;
    n->dtype = x->dtype;
    return RLX_OK;
}
