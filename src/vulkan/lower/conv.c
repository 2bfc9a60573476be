/*
 * conv.c — Vulkan lowerings of CONV onto the implicit GEMM (conv_gemm.c)
 * where it applies, depthwise ones onto conv_depthwise.comp, else conv.comp
 * (direct), and of CONV_TRANSPOSE and
 * CONV_WEIGHT_GRAD onto conv_grad.comp (direct, one invocation per output
 * element), f32. Spatial dims are right-aligned into three, the leading ones
 * of size 1.
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"
#include "ir/conv_geom.h"
#include <string.h>

typedef struct conv_push {
    uint64_t x, w, bias, out;
    uint32_t Cg, Og, O, total;
    uint32_t in[3], k[3], o[3], s[3], d[3];
    int32_t  p[3];
    uint64_t res;
} conv_push;
_Static_assert(sizeof(conv_push) == 128, "conv_push must match PC in shaders/conv.comp");

#define VK_DW_SPAN 48   /* = DW_SPAN in conv_depthwise.comp: the staged input window's side */

typedef struct conv_dw_push {
    uint64_t x, w, bias, out;
    uint32_t C, H, W, OH, OW, KH, KW;
    uint32_t sh, sw, dh, dw;
    int32_t  ph, pw;
    uint32_t tiles_w, span_h, span_w;
    uint64_t res;
} conv_dw_push;
_Static_assert(sizeof(conv_dw_push) == 104, "conv_dw_push must match PC in shaders/conv_depthwise.comp");

/* Depthwise (groups == C == O), 1 or 2 spatial dims, onto conv_depthwise.comp
 * where its 16 x 16 output tile's input window fits the staged span; *taken
 * false otherwise. */
static rlx_status lower_depthwise(vk_lower_ctx *c, const ir_conv_geom *g, bool *taken) {
    *taken = false;
    const vk_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out;
    if (g->dims > 2 || w->dims[1] != 1 || g->groups != x->dims[1] || o->dims[1] != x->dims[1]) return RLX_OK;
    conv_dw_push p;
    memset(&p, 0, sizeof p);
    int two = g->dims == 2, i = g->dims - 1;   /* the last spatial dim is W; H is the one before, or 1 */
    p.C = (uint32_t)x->dims[1];
    p.H = two ? (uint32_t)x->dims[2] : 1, p.W = (uint32_t)x->dims[2 + i];
    p.OH = two ? (uint32_t)o->dims[2] : 1, p.OW = (uint32_t)o->dims[2 + i];
    p.KH = two ? (uint32_t)w->dims[2] : 1, p.KW = (uint32_t)w->dims[2 + i];
    p.sh = two ? (uint32_t)g->stride[0] : 1, p.sw = (uint32_t)g->stride[i];
    p.dh = two ? (uint32_t)g->dilation[0] : 1, p.dw = (uint32_t)g->dilation[i];
    p.ph = two ? (int32_t)g->pad_begin[0] : 0, p.pw = (int32_t)g->pad_begin[i];
    uint64_t span_h = (uint64_t)15 * p.sh + (uint64_t)(p.KH - 1) * p.dh + 1, span_w = (uint64_t)15 * p.sw + (uint64_t)(p.KW - 1) * p.dw + 1;
    uint64_t planes = (uint64_t)x->dims[0] * x->dims[1], tiles_h = (p.OH + 15) / 16;
    p.tiles_w = (p.OW + 15) / 16;
    if (span_h > VK_DW_SPAN || span_w > VK_DW_SPAN || planes > vk_max_groups(c->caps, 2) || tiles_h > vk_max_groups(c->caps, 1) ||
        p.tiles_w > vk_max_groups(c->caps, 0))
        return RLX_OK;
    p.span_h = (uint32_t)span_h, p.span_w = (uint32_t)span_w;
    p.x = x->addr, p.w = w->addr, p.bias = g->has_bias ? c->in[2].addr : 0, p.out = o->addr;
    p.res = g->has_residual ? c->in[c->n_in - 1].addr : 0;
    vk_dispatch *d = vk_emit(c, "conv_depthwise", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)g->act;
    d->spec[1] = g->has_bias ? 1u : 0u;
    d->spec[2] = g->has_residual ? 1u : 0u;
    d->n_spec = 3;
    d->groups[0] = p.tiles_w, d->groups[1] = (uint32_t)tiles_h, d->groups[2] = (uint32_t)planes;
    c->tier = "conv-depthwise";
    *taken = true;
    return RLX_OK;
}

rlx_status vk_lower_conv(vk_lower_ctx *c)
{
    ir_conv_geom g;
    ir_conv_geom_of(c->node, &g);
    if (c->n_in != 2 + (g.has_bias ? 1 : 0) + (g.has_residual ? 1 : 0))
        return rlx_fail(RLX_STATUS_INTERNAL, "conv lowering: %d inputs", c->n_in);
    const vk_tensor *x = &c->in[0], *w = &c->in[1];
    if (x->dtype != RLX_F32) return rlx_fail(RLX_STATUS_UNSUPPORTED, "conv: dtype %s has no GPU kernel", rlx_dtype_name(x->dtype));
    if (c->out.numel >= ((int64_t)1 << 31) || x->numel >= ((int64_t)1 << 31) || w->numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "conv: tensors of 2^31 elements or more exceed 32-bit shader indices");
    c->tier = "conv-direct";
    if (c->out.numel == 0) return RLX_OK;
    bool taken;
    rlx_status st = vk_lower_conv_gemm(c, &g, &taken);
    if (st != RLX_OK || taken) return st;
    if (c->tuning->conv_tier != 1 && ((st = lower_depthwise(c, &g, &taken)) != RLX_OK || taken)) return st;
    conv_push p;
    memset(&p, 0, sizeof p);
    p.x = x->addr, p.w = w->addr, p.bias = g.has_bias ? c->in[2].addr : 0, p.out = c->out.addr;
    p.res = g.has_residual ? c->in[c->n_in - 1].addr : 0;
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
    d->spec[2] = g.has_residual ? 1u : 0u;
    d->n_spec = 3;
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
