/*
 * norm.c — Vulkan lowering of LAYER_NORM / RMS_NORM (inputs x, gamma[, beta])
 * and the fused residual forms ADD_LAYER_NORM / ADD_RMS_NORM (x, r, gamma[,
 * beta]) onto norm.comp: one workgroup per row of the last dim, the residual
 * add, both statistics passes and the affine output in one kernel.
 * attributes eps and has_beta (op_attrs.def).
 */
#include "vulkan/vk_lower.h"
#include <string.h>

typedef struct norm_push {
    uint64_t x, r, gamma, beta, out;
    uint32_t rows, d;
    float    eps;
    uint32_t sp, groups, pad;   /* group_norm: positions per channel, groups */
} norm_push;

rlx_status vk_lower_norm(vk_lower_ctx *c)
{
    ir_op op = c->node->op;
    const ir_op_info *info = ir_op_info_get(op);
    const char *what = info ? info->name : "norm";
    bool fused = op == IR_OP_ADD_LAYER_NORM || op == IR_OP_ADD_RMS_NORM;
    bool layer = op == IR_OP_LAYER_NORM || op == IR_OP_ADD_LAYER_NORM;
    bool has_beta = ir_attr_norm_has_beta(c->node) != 0;
    int first = fused ? 2 : 1;
    if ((!fused && op != IR_OP_LAYER_NORM && op != IR_OP_RMS_NORM) || c->n_in != first + 1 + (int)has_beta)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan norm lowering: %s with %d inputs", what, c->n_in);
    const vk_tensor *x = &c->in[0];
    rlx_dtype dt = x->dtype;
    if (dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no GPU kernel", what, rlx_dtype_name(dt));
    if (x->numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %lld elements exceed 32-bit shader indices", what,
                        (long long)x->numel);
    if (x->rank < 1) return rlx_fail(RLX_STATUS_INTERNAL, "%s: input of rank 0", what);
    int64_t d = x->dims[x->rank - 1];
    for (int i = 1; i < c->n_in; i++) {
        int64_t want = (fused && i == 1) ? x->numel : d;
        if (c->in[i].dtype != dt || c->in[i].numel != want)
            return rlx_fail(RLX_STATUS_INTERNAL, "%s: input %d does not match x", what, i);
    }
    c->tier = fused ? "norm-fused-residual" : "norm";
    if (x->numel == 0 || d == 0) return RLX_OK;

    norm_push p;
    memset(&p, 0, sizeof p);
    p.x = x->addr;
    p.r = fused ? c->in[1].addr : 0;
    p.gamma = c->in[first].addr;
    p.beta = has_beta ? c->in[first + 1].addr : 0;
    p.out = c->out.addr;
    p.rows = (uint32_t)(x->numel / d);
    p.d = (uint32_t)d;
    p.eps = (float)ir_attr_norm_eps(c->node);
    vk_dispatch *dp = vk_emit(c, "norm", &p, sizeof p);
    if (!dp) return RLX_STATUS_INTERNAL;
    dp->spec[0] = layer ? 0u : 1u;
    dp->spec[1] = vk_dtype_code(dt);
    dp->spec[2] = fused ? 1u : 0u;
    dp->spec[3] = has_beta ? 1u : 0u;
    dp->spec[4] = 0u;
    dp->n_spec = 5;
    vk_grid_1d(c->caps, (uint64_t)p.rows, 1, dp->groups);
    return RLX_OK;
}

/* BATCH_NORM onto batch_norm.comp (one invocation per element) and
 * GROUP_NORM onto norm.comp's grouped form (a workgroup per (n, group) run
 * of C/groups * S elements, gamma and beta per channel); f32. */
typedef struct batch_norm_push {
    uint64_t x, gamma, beta, mean, var, out;
    uint32_t total, C, S;
    float    eps;
} batch_norm_push;

rlx_status vk_lower_chan_norm(vk_lower_ctx *c)
{
    bool bn = c->node->op == IR_OP_BATCH_NORM;
    const vk_tensor *x = &c->in[0];
    if (c->n_in != (bn ? 5 : 3) || x->rank < 2) return rlx_fail(RLX_STATUS_INTERNAL, "vulkan chan_norm lowering: bad inputs");
    if (x->dtype != RLX_F32) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no GPU kernel", bn ? "batch_norm" : "group_norm",
                                             rlx_dtype_name(x->dtype));
    if (x->numel >= ((int64_t)1 << 31)) return rlx_fail(RLX_STATUS_UNSUPPORTED, "chan_norm: 2^31 elements or more");
    int64_t C = x->dims[1], S = 1;
    for (int i = 2; i < x->rank; i++) S *= x->dims[i];
    float eps = (float)ir_attr_chan_norm_eps(c->node);
    c->tier = bn ? "batch-norm" : "group-norm";
    if (x->numel == 0) return RLX_OK;
    if (bn) {
        batch_norm_push p = {.x = x->addr, .gamma = c->in[1].addr, .beta = c->in[2].addr, .mean = c->in[3].addr,
                             .var = c->in[4].addr, .out = c->out.addr, .total = (uint32_t)x->numel, .C = (uint32_t)C,
                             .S = (uint32_t)S, .eps = eps};
        vk_dispatch *d = vk_emit(c, "batch_norm", &p, sizeof p);
        if (!d) return RLX_STATUS_INTERNAL;
        vk_grid_1d(c->caps, (uint64_t)x->numel, 256u, d->groups);
        return RLX_OK;
    }
    int64_t G = ir_attr_chan_norm_groups(c->node);
    if (G < 1 || C % G) return rlx_fail(RLX_STATUS_INTERNAL, "group_norm: groups do not divide C");
    norm_push p;
    memset(&p, 0, sizeof p);
    p.x = x->addr, p.gamma = c->in[1].addr, p.beta = c->in[2].addr, p.out = c->out.addr;
    p.rows = (uint32_t)(x->numel / ((C / G) * S)), p.d = (uint32_t)((C / G) * S), p.eps = eps;
    p.sp = (uint32_t)S, p.groups = (uint32_t)G;
    vk_dispatch *d = vk_emit(c, "norm", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = 0u, d->spec[1] = vk_dtype_code(RLX_F32), d->spec[2] = 0u, d->spec[3] = 1u, d->spec[4] = 1u;
    d->n_spec = 5;
    vk_grid_1d(c->caps, (uint64_t)p.rows, 1, d->groups);
    return RLX_OK;
}
