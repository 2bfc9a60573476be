/*
 * resize.c — Vulkan lowering of RESIZE and RESIZE_GRAD onto resize.comp (one
 * invocation per output element; the grad gathers per input element), f32.
 * Each axis's coordinate constants a, b come from ir/resize_geom.h, as the
 * CPU kernel's do, so both backends sample the same taps.
 */
#include "vulkan/vk_lower.h"
#include "ir/resize_geom.h"
#include <string.h>

typedef struct resize_push {
    uint64_t src, dst;
    uint32_t total, pad;
    uint32_t in[3], o[3];
    float    a[3], b[3];
    float    cubic_a;
} resize_push;

rlx_status vk_lower_resize(vk_lower_ctx *c) {
    ir_resize_geom g;
    ir_resize_geom_of(c->node, &g);
    bool grad = c->node->op == IR_OP_RESIZE_GRAD;
    const vk_tensor *x = &c->in[0];
    char lb[160];
    if (c->n_in != 1) return rlx_fail(RLX_STATUS_INTERNAL, "resize lowering: %d inputs", c->n_in);
    if (x->dtype != RLX_F32) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no GPU kernel", vk_node_label(c, lb, sizeof lb), rlx_dtype_name(x->dtype));
    if (x->numel >= ((int64_t)1 << 31) || c->out.numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: 2^31 elements or more", vk_node_label(c, lb, sizeof lb));
    c->tier = "resize-direct";
    if (c->out.numel == 0) return RLX_OK;
    resize_push p;
    memset(&p, 0, sizeof p);
    p.src = x->addr, p.dst = c->out.addr, p.total = (uint32_t)c->out.numel, p.cubic_a = (float)g.cubic_a;
    for (int i = 0; i < 3; i++) p.in[i] = p.o[i] = 1, p.a[i] = 0, p.b[i] = 0;
    int off = 3 - g.dims;
    for (int i = 0; i < g.dims; i++) {
        ir_resize_axis ax = ir_resize_axis_of(&g, i);
        p.in[off + i] = (uint32_t)g.in[i], p.o[off + i] = (uint32_t)g.out[i];
        p.a[off + i] = ax.a, p.b[off + i] = ax.b;
    }
    vk_dispatch *d = vk_emit(c, "resize", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = grad, d->spec[1] = (uint32_t)g.mode, d->spec[2] = (uint32_t)g.nearest, d->spec[3] = g.exclude_outside;
    d->n_spec = 4;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, 256u, d->groups);
    return RLX_OK;
}
