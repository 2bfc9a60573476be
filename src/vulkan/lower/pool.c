/*
 * pool.c — Vulkan lowerings of POOL onto pool.comp (one invocation per output
 * element) and POOL_GRAD onto pool_grad.comp (one per input element), f32.
 * Spatial dims are right-aligned into three.
 */
#include "vulkan/vk_lower.h"
#include "ir/pool_geom.h"
#include <string.h>

/* The window geometry both shaders take, spatial dims right-aligned into three. */
typedef struct pool_geom_push {
    uint32_t in[3], o[3], k[3], s[3];
    int32_t  b[3], e[3];
} pool_geom_push;

static void fill_geom(pool_geom_push *p, const ir_pool_geom *g, const int64_t *in_dims, const int64_t *out_dims)
{
    for (int i = 0; i < 3; i++) p->in[i] = p->o[i] = p->k[i] = p->s[i] = 1, p->b[i] = p->e[i] = 0;
    int off = 3 - g->dims;
    for (int i = 0; i < g->dims; i++) {
        p->in[off + i] = (uint32_t)in_dims[i], p->o[off + i] = (uint32_t)out_dims[i];
        p->k[off + i] = (uint32_t)g->kernel[i], p->s[off + i] = (uint32_t)g->stride[i];
        p->b[off + i] = (int32_t)g->pad_begin[i], p->e[off + i] = (int32_t)g->pad_end[i];
    }
}

typedef struct pool_push {
    uint64_t x, out;
    uint32_t total, pad;
    pool_geom_push geom;
} pool_push;

rlx_status vk_lower_pool(vk_lower_ctx *c)
{
    ir_pool_geom g;
    ir_pool_geom_of(c->node, &g);
    const vk_tensor *x = &c->in[0];
    if (c->n_in != 1) return rlx_fail(RLX_STATUS_INTERNAL, "pool lowering: %d inputs", c->n_in);
    if (x->dtype != RLX_F32) return rlx_fail(RLX_STATUS_UNSUPPORTED, "pool: dtype %s has no GPU kernel", rlx_dtype_name(x->dtype));
    if (x->numel >= ((int64_t)1 << 31)) return rlx_fail(RLX_STATUS_UNSUPPORTED, "pool: 2^31 elements or more");
    c->tier = "pool-direct";
    if (c->out.numel == 0) return RLX_OK;
    pool_push p;
    memset(&p, 0, sizeof p);
    p.x = x->addr, p.out = c->out.addr, p.total = (uint32_t)c->out.numel;
    fill_geom(&p.geom, &g, x->dims + 2, c->out.dims + 2);
    vk_dispatch *d = vk_emit(c, "pool", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)g.kind;
    d->spec[1] = g.count_include_pad ? 1u : 0u;
    d->n_spec = 2;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, 256u, d->groups);
    return RLX_OK;
}

typedef struct pool_grad_push {
    uint64_t x, dy, out;
    uint32_t total, pad;
    pool_geom_push geom;
} pool_grad_push;

rlx_status vk_lower_pool_grad(vk_lower_ctx *c)
{
    ir_pool_geom g;
    ir_pool_geom_of(c->node, &g);
    if (c->n_in != 2 || c->in[0].dtype != RLX_F32 || c->in[1].dtype != RLX_F32 || c->in[0].numel >= ((int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "pool_grad: f32 x and dy under 2^31 elements only");
    c->tier = "pool-grad-direct";
    if (c->out.numel == 0) return RLX_OK;
    pool_grad_push p;
    memset(&p, 0, sizeof p);
    p.x = c->in[0].addr, p.dy = c->in[1].addr, p.out = c->out.addr, p.total = (uint32_t)c->out.numel;
    fill_geom(&p.geom, &g, c->in[0].dims + 2, c->in[1].dims + 2);
    vk_dispatch *d = vk_emit(c, "pool_grad", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)g.kind;
    d->spec[1] = g.count_include_pad ? 1u : 0u;
    d->n_spec = 2;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, 256u, d->groups);
    return RLX_OK;
}
