/*
 * vjp_chan_norm.c — vector-Jacobian rules of batch_norm and group_norm as
 * composites of existing ops (no dedicated backward op).
 *
 * batch_norm, y = (x - mean) a + beta with a = gamma / sqrt(var + eps):
 *   dx = dy a, dgamma = sum(dy (x - mean)) / sqrt(var + eps), dbeta = sum(dy),
 *   dmean = -a sum(dy), dvar = -gamma sum(dy (x - mean)) / (2 (var + eps)^1.5),
 *   the sums over every dim but the channel's.
 * group_norm: x viewed as [N, G, M] (M = C/G * S) is a layer norm over the
 *   last dim whose gamma and beta are per channel; the statistics are
 *   recomputed from x, as the other norms' rules do (vjp_nn.c).
 */
#include "ir/autodiff.h"

#define G (c->g)

/* p [C] shaped [1, C, 1, ...] against x of rank r. */
static rlx_node per_channel(ad_ctx *c, rlx_node p, int r) {
    ir_shape s = {.rank = r};
    for (int i = 0; i < r; i++) s.d[i] = ir_dim_const(1);
    s.d[1] = ad_node(c, p)->shape.d[0];
    return ad_reshape_to(c, p, &s);
}

/* The bit mask of every dim of rank r but the channel dim. */
static uint32_t not_channel(int r) { return ((1u << r) - 1u) & ~2u; }

static rlx_status vjp_batch_norm(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    rlx_node x = n->in[0], gamma = n->in[1], mean = n->in[3], var = n->in[4];
    int r = ad_node(c, x)->shape.rank;
    rlx_dtype dt = n->dtype;
    uint32_t axes = not_channel(r);
    rlx_node inv = rlx_rsqrt(G, rlx_add(G, var, ad_scalar(c, dt, ir_attr_chan_norm_eps(n))));
    rlx_node a = rlx_mul(G, gamma, inv);
    if (need[0]) gin[0] = rlx_mul(G, gy, per_channel(c, a, r));
    rlx_node sum_gy = need[2] || need[3] ? rlx_reduce_sum(G, gy, axes, 0) : RLX_NO_NODE;
    if (need[2]) gin[2] = sum_gy;
    if (need[3]) gin[3] = rlx_neg(G, rlx_mul(G, sum_gy, a));
    if (need[1] || need[4]) {
        rlx_node sxm = rlx_reduce_sum(G, rlx_mul(G, gy, rlx_sub(G, x, per_channel(c, mean, r))), axes, 0);
        if (need[1]) gin[1] = rlx_mul(G, sxm, inv);
        if (need[4]) {
            rlx_node inv3 = rlx_mul(G, inv, rlx_mul(G, inv, inv));
            gin[4] = rlx_mul(G, rlx_mul(G, sxm, gamma), rlx_mul(G, inv3, ad_scalar(c, dt, -0.5)));
        }
    }
    return RLX_OK;
}

static rlx_status vjp_group_norm(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    rlx_node x = n->in[0], gamma = n->in[1];
    ir_shape xs = ad_node(c, x)->shape;
    int r = xs.rank;
    rlx_dtype dt = n->dtype;
    int64_t groups = ir_attr_chan_norm_groups(n), M = xs.d[1].k / groups;
    for (int i = 2; i < r; i++) {
        if (!ir_dim_is_static(xs.d[i])) return rlx_fail(RLX_STATUS_UNSUPPORTED, "group_norm's gradient needs static spatial dims");
        M *= xs.d[i].k;
    }
    ir_shape rs = {.rank = 3, .d = {xs.d[0], ir_dim_const(groups), ir_dim_const(M)}};
    uint32_t last = 1u << 2;
    rlx_node D = ad_scalar(c, dt, (double)M);
    rlx_node xr = ad_reshape_to(c, x, &rs);
    rlx_node xc = rlx_sub(G, xr, rlx_div(G, ad_sum_keep(c, xr, last), D));
    rlx_node var = rlx_div(G, ad_sum_keep(c, rlx_mul(G, xc, xc), last), D);
    rlx_node rstd = rlx_rsqrt(G, rlx_add(G, var, ad_scalar(c, dt, ir_attr_chan_norm_eps(n))));
    rlx_node xhat_r = rlx_mul(G, xc, rstd);
    if (need[1]) gin[1] = rlx_reduce_sum(G, rlx_mul(G, gy, ad_reshape_to(c, xhat_r, &xs)), not_channel(r), 0);
    if (need[2]) gin[2] = rlx_reduce_sum(G, gy, not_channel(r), 0);
    if (need[0]) {
        rlx_node ghr = ad_reshape_to(c, rlx_mul(G, gy, per_channel(c, gamma, r)), &rs);
        rlx_node mean_gh = rlx_div(G, ad_sum_keep(c, ghr, last), D);
        rlx_node proj = rlx_mul(G, xhat_r, rlx_div(G, ad_sum_keep(c, rlx_mul(G, ghr, xhat_r), last), D));
        gin[0] = ad_reshape_to(c, rlx_mul(G, rstd, rlx_sub(G, rlx_sub(G, ghr, mean_gh), proj)), &xs);
    }
    return RLX_OK;
}

void ir_vjp_register_chan_norm(ir_vjp_rule *t) {
    t[IR_OP_BATCH_NORM] = vjp_batch_norm;
    t[IR_OP_GROUP_NORM] = vjp_group_norm;
}
