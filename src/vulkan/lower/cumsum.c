/*
 * cumsum.c — Vulkan lowering of CUMSUM (inclusive, along its axis) onto
 * cumsum.comp: a chunked workgroup scan per line for long lines along the
 * last axis (or few lines), an invocation per line otherwise. f32/f16/bf16
 * and the integer dtypes (64-bit running sums, wrapped on store).
 */
#include "vulkan/vk_lower.h"
#include <string.h>

typedef struct cumsum_push {
    uint64_t x, out;
    uint32_t lines, n, inner;
    uint32_t pad;
} cumsum_push;

rlx_status vk_lower_cumsum(vk_lower_ctx *c)
{
    if (c->node->op != IR_OP_CUMSUM || c->n_in != 1)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan cumsum lowering called for another op");
    const vk_tensor *in = &c->in[0];
    rlx_dtype dt = in->dtype;
    if (dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16 && dt != RLX_I32 && dt != RLX_I64 && dt != RLX_U8 &&
        dt != RLX_I8)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "cumsum: dtype %s has no GPU kernel", rlx_dtype_name(dt));
    if (in->numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "cumsum: %lld elements exceed 32-bit shader indices",
                        (long long)in->numel);
    int64_t axis = ir_attr_axis_op_axis(c->node);
    if (axis < 0 || axis >= in->rank)
        return rlx_fail(RLX_STATUS_INTERNAL, "cumsum: axis %lld outside rank %d", (long long)axis, in->rank);
    c->tier = "scan";
    if (in->numel == 0) return RLX_OK;
    int64_t outer = 1, inner = 1, n = in->dims[axis];
    for (int d = 0; d < axis; d++) outer *= in->dims[d];
    for (int d = (int)axis + 1; d < in->rank; d++) inner *= in->dims[d];

    cumsum_push p;
    memset(&p, 0, sizeof p);
    p.x = in->addr;
    p.out = c->out.addr;
    p.lines = (uint32_t)(outer * inner);
    p.n = (uint32_t)n;
    p.inner = (uint32_t)inner;
    bool serial = n <= 64 || (inner > 1 && outer * inner >= 1024);
    vk_dispatch *d = vk_emit(c, "cumsum", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = vk_dtype_code(dt);
    d->spec[1] = serial ? 1u : 0u;
    d->n_spec = 2;
    vk_grid_1d(c->caps, (uint64_t)(outer * inner), serial ? 256u : 1u, d->groups);
    return RLX_OK;
}
