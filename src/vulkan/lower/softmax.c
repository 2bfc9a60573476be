/*
 * softmax.c — Vulkan lowering of SOFTMAX / LOG_SOFTMAX along its axis onto
 * softmax.comp: one workgroup per row, or one invocation per row when the
 * axis is not the last and there are many rows (column-wise access then
 * stays coalesced) or the rows are very short.
 */
#include "vulkan/vk_lower.h"
#include <string.h>

typedef struct softmax_push {
    uint64_t x, out;
    uint32_t rows, n, inner;
    uint32_t pad;
} softmax_push;

rlx_status vk_lower_softmax(vk_lower_ctx *c)
{
    bool is_log = c->node->op == IR_OP_LOG_SOFTMAX;
    const char *what = is_log ? "log_softmax" : "softmax";
    if ((!is_log && c->node->op != IR_OP_SOFTMAX) || c->n_in != 1)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan softmax lowering called for another op");
    const vk_tensor *in = &c->in[0];
    rlx_dtype dt = in->dtype;
    if (dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no GPU kernel", what, rlx_dtype_name(dt));
    if (in->numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %lld elements exceed 32-bit shader indices", what,
                        (long long)in->numel);
    int64_t axis = ir_attr_axis_op_axis(c->node);
    if (axis < 0 || axis >= in->rank)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: axis %lld outside rank %d", what, (long long)axis, in->rank);
    c->tier = "softmax";
    if (in->numel == 0) return RLX_OK;
    int64_t outer = 1, inner = 1, n = in->dims[axis];
    for (int d = 0; d < axis; d++) outer *= in->dims[d];
    for (int d = (int)axis + 1; d < in->rank; d++) inner *= in->dims[d];

    softmax_push p;
    memset(&p, 0, sizeof p);
    p.x = in->addr;
    p.out = c->out.addr;
    p.rows = (uint32_t)(outer * inner);
    p.n = (uint32_t)n;
    p.inner = (uint32_t)inner;
    bool serial = n <= 32 || (inner > 1 && outer * inner >= 4096);
    vk_dispatch *d = vk_emit(c, "softmax", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = is_log ? 1u : 0u;
    d->spec[1] = vk_dtype_code(dt);
    d->spec[2] = serial ? 1u : 0u;
    d->n_spec = 3;
    vk_grid_1d(c->caps, (uint64_t)(outer * inner), serial ? 256u : 1u, d->groups);
    return RLX_OK;
}
