/*
 * conv.c — Vulkan lowerings of CONV onto the implicit GEMM (conv_gemm.c)
 * where it applies, else conv.comp, and of CONV_TRANSPOSE and
 * CONV_WEIGHT_GRAD onto conv_grad.comp (direct, one invocation per output
 * element), f32. Spatial dims are right-aligned into three, the leading ones
 * of size 1.
 */
#include "vulkan/vk_lower.h"
#include "ir/conv_geom.h"
#include <string.h>

typedef struct conv_push {
    uint64_t x, w, bias, out;
    uint32_t Cg, Og, O, total;
    uint32_t in[3], k[3], o[3], s[3], d[3];
    int32_t  p[3];
} conv_push;

rlx_status vk_lower_conv(vk_lower_ctx *c)
{
    ir_conv_geom g;
    ir_conv_geom_of(c->node, &g);
    if (c->n_in != 2 + (g.has_bias ? 1 : 0)) return rlx_fail(RLX_STATUS_INTERNAL, "conv lowering: %d inputs", c->n_in);
    const vk_tensor *x = &c->in[0], *w = &c->in[1];
    if (x->dtype != RLX_F32) return rlx_fail(RLX_STATUS_UNSUPPORTED, "conv: dtype %s has no GPU kernel", rlx_dtype_name(x->dtype));
    if (c->out.numel >= ((int64_t)1 << 31) || x->numel >= ((int64_t)1 << 31) || w->numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "conv: tensors of 2^31 elements or more exceed 32-bit shader indices");
    c->tier = "conv-direct";
    if (c->out.numel == 0) return RLX_OK;
    bool gemm;
    rlx_status st = vk_lower_conv_gemm(c, &g, &gemm);
    if (st != RLX_OK || gemm) return st;
    conv_push p;
    memset(&p, 0, sizeof p);
    p.x = x->addr, p.w = w->addr, p.bias = g.has_bias ? c->in[2].addr : 0, p.out = c->out.addr;
    p.O = (uint32_t)w->dims[0];
    p.Og = (uint32_t)(w->dims[0] / g.groups);
    p.Cg = (uint32_t)w->dims[1];
    p.total = (uint32_t)c->out.numel;
    int off = 3 - g.dims;
    for (int i = 0; i < 3; i++) p.in[i] = p.k[i] = p.o[i] = p.s[i] = p.d[i] = 1;
    for (int i = 0; i < g.dims; i++) {
        p.in[off + i] = (uint32_t)x->dims[2 + i];
        p.k[off + i] = (uint32_t)w->dims[2 + i];
        p.o[off + i] = (uint32_t)c->out.dims[2 + i];
        p.s[off + i] = (uint32_t)g.stride[i];
        p.d[off + i] = (uint32_t)g.dilation[i];
        p.p[off + i] = (int32_t)g.pad_begin[i];
    }
    vk_dispatch *d = vk_emit(c, "conv", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)g.act;
    d->spec[1] = g.has_bias ? 1u : 0u;
    d->n_spec = 2;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, 256u, d->groups);
    return RLX_OK;
}

typedef struct conv_grad_push {
    uint64_t a, b, bias, out;
    uint32_t N, C, O, groups, total;
    uint32_t in[3], k[3], o[3], s[3], d[3];
    int32_t  p[3];
} conv_grad_push;

/* CONV_TRANSPOSE (x, w [, bias]) and CONV_WEIGHT_GRAD (x, dy, w) onto conv_grad.comp. */
rlx_status vk_lower_conv_grad(vk_lower_ctx *c)
{
    ir_conv_geom g;
    ir_conv_geom_of(c->node, &g);
    bool wgrad = c->node->op == IR_OP_CONV_WEIGHT_GRAD;
    for (int i = 0; i < c->n_in; i++)
        if (c->in[i].dtype != RLX_F32 || c->in[i].numel >= ((int64_t)1 << 31))
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: f32 tensors under 2^31 elements only", wgrad ? "conv_weight_grad" : "conv_transpose");
    c->tier = wgrad ? "conv-wgrad-direct" : "conv-transpose-direct";
    if (c->out.numel == 0) return RLX_OK;
    const vk_tensor *x = &c->in[0];
    conv_grad_push p;
    memset(&p, 0, sizeof p);
    p.a = x->addr, p.b = c->in[1].addr, p.out = c->out.addr;
    p.bias = !wgrad && g.has_bias ? c->in[2].addr : 0;
    p.N = (uint32_t)x->dims[0], p.C = (uint32_t)x->dims[1], p.groups = (uint32_t)g.groups, p.total = (uint32_t)c->out.numel;
    /* transpose: C = its input channels, O = its output channels; weight grad: C = x's, O = dy's */
    p.O = (uint32_t)(wgrad ? c->in[1].dims[1] : c->out.dims[1]);
    const int64_t *kd = wgrad ? c->in[2].dims + 2 : c->in[1].dims + 2;
    const int64_t *od = wgrad ? c->in[1].dims + 2 : c->out.dims + 2;
    for (int i = 0; i < 3; i++) p.in[i] = p.k[i] = p.o[i] = p.s[i] = p.d[i] = 1;
    int off = 3 - g.dims;
    for (int i = 0; i < g.dims; i++) {
        p.in[off + i] = (uint32_t)x->dims[2 + i], p.k[off + i] = (uint32_t)kd[i], p.o[off + i] = (uint32_t)od[i];
        p.s[off + i] = (uint32_t)g.stride[i], p.d[off + i] = (uint32_t)g.dilation[i], p.p[off + i] = (int32_t)g.pad_begin[i];
    }
    vk_dispatch *d = vk_emit(c, "conv_grad", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = wgrad ? 1u : 0u;
    d->spec[1] = p.bias ? 1u : 0u;
    d->n_spec = 2;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, 256u, d->groups);
    return RLX_OK;
}
