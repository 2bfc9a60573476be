/*
 * adaptive_pool.c — Vulkan lowering of ADAPTIVE_POOL and ADAPTIVE_POOL_GRAD
 * onto adaptive_pool.comp (one invocation per output element; the grad one
 * per input element, a gather in output order), f32. Spatial dims are
 * right-aligned into three.
 */
#include "vulkan/vk_lower.h"
#include "ir/adaptive_pool_geom.h"
#include <string.h>

typedef struct ap_push {
    uint64_t x, dy, out;
    uint32_t total, pad;
    uint32_t in[3], o[3];
} ap_push;

rlx_status vk_lower_adaptive_pool(vk_lower_ctx *c) {
    ir_adaptive_geom g;
    ir_adaptive_geom_of(c->node, &g);
    bool grad = c->node->op == IR_OP_ADAPTIVE_POOL_GRAD;
    const vk_tensor *x = &c->in[0];
    char lb[160];
    if (c->n_in != (grad ? 2 : 1)) return rlx_fail(RLX_STATUS_INTERNAL, "adaptive_pool lowering: %d inputs", c->n_in);
    if (x->dtype != RLX_F32) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no GPU kernel", vk_node_label(c, lb, sizeof lb), rlx_dtype_name(x->dtype));
    if (x->numel >= ((int64_t)1 << 31) || c->out.numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: 2^31 elements or more", vk_node_label(c, lb, sizeof lb));
    for (int i = 0; i < g.dims; i++)   /* the shader's window bounds (o + 1) S in int32 */
        if ((x->dims[2 + i] + 1) * (g.out[i] + 1) >= ((int64_t)1 << 31))
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: spatial dim %d: input times output size reaches 2^31", vk_node_label(c, lb, sizeof lb), i);
    c->tier = "adaptive-pool-direct";
    if (c->out.numel == 0) return RLX_OK;
    ap_push p;
    memset(&p, 0, sizeof p);
    p.x = x->addr, p.dy = grad ? c->in[1].addr : 0, p.out = c->out.addr, p.total = (uint32_t)c->out.numel;
    for (int i = 0; i < 3; i++) p.in[i] = p.o[i] = 1;
    int off = 3 - g.dims;
    for (int i = 0; i < g.dims; i++) p.in[off + i] = (uint32_t)x->dims[2 + i], p.o[off + i] = (uint32_t)g.out[i];
    vk_dispatch *d = vk_emit(c, "adaptive_pool", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = grad, d->spec[1] = (uint32_t)g.kind;
    d->n_spec = 2;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, 256u, d->groups);
    return RLX_OK;
}
