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
    uint32_t pad;
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
    dp->n_spec = 4;
    vk_grid_1d(c->caps, (uint64_t)p.rows, 1, dp->groups);
    return RLX_OK;
}
