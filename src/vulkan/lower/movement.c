/*
 * movement.c — Vulkan lowerings of RESHAPE (a copy, when the planner did not
 * alias it), TRANSPOSE, SLICE, CONCAT (one dispatch per input, up to 8) and
 * EXPAND, FLIP, DEPTH_TO_SPACE and SPACE_TO_DEPTH (ir/rearrange_geom.h), all
 * through the strided-copy shader shaders/move.comp.
 *
 * Each op is described as an index space with source and destination element
 * strides. Size-1 dims are dropped, neighbouring dims that stay contiguous in
 * both are merged, and when the innermost dim is contiguous on both sides the
 * copy unit is widened up to 16 bytes (subject to alignment). Every dtype is
 * moved bit-exactly by its byte size.
 */
#include "vulkan/vk_lower.h"
#include "ir/rearrange_geom.h"

#include <string.h>

typedef struct move_push {
    uint64_t src, dst;
    uint32_t n, pad0;
    uint32_t dims[8];
    uint32_t ss[8];
    uint32_t ds[8];
} move_push;

_Static_assert(sizeof(move_push) == 120, "move_push must match move.comp's push block");

/* A copy in elements: rank dims, source and destination strides, base offsets. */
typedef struct move_plan {
    int     rank;
    int64_t dims[IR_MAX_RANK];
    int64_t ss[IR_MAX_RANK];
    int64_t ds[IR_MAX_RANK];
    int64_t src_off, dst_off;
} move_plan;

static void dense_strides(int rank, const int64_t *dims, int64_t *st) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[i] = s;
        s *= dims[i];
    }
}

static rlx_status emit_plan(vk_lower_ctx *c, const move_plan *in, uint64_t src, uint64_t dst, size_t es) {
    move_plan p;
    memset(&p, 0, sizeof p);
    int64_t numel = 1;
    for (int i = 0; i < in->rank; i++) numel *= in->dims[i];
    if (numel == 0) return RLX_OK;
    /* drop size-1 dims, merge dims contiguous on both sides */
    for (int i = 0; i < in->rank; i++) {
        int64_t n = in->dims[i];
        if (n == 1) continue;
        if (p.rank > 0 && p.ss[p.rank - 1] == in->ss[i] * n && p.ds[p.rank - 1] == in->ds[i] * n) {
            p.dims[p.rank - 1] *= n;
            p.ss[p.rank - 1] = in->ss[i];
            p.ds[p.rank - 1] = in->ds[i];
        } else {
            p.dims[p.rank] = n;
            p.ss[p.rank] = in->ss[i];
            p.ds[p.rank] = in->ds[i];
            p.rank++;
        }
    }
    if (p.rank == 0) {
        p.rank = 1;
        p.dims[0] = 1;
        p.ss[0] = p.ds[0] = 1;
    }
    src += (uint64_t)in->src_off * es;
    dst += (uint64_t)in->dst_off * es;

    /* copy unit: widen when the innermost dim is contiguous on both sides */
    uint64_t unit = es;
    int last = p.rank - 1;
    if (p.ss[last] == 1 && p.ds[last] == 1) {
        for (uint64_t u = 16; u > es; u /= 2) {
            bool ok = ((uint64_t)p.dims[last] * es) % u == 0 && src % u == 0 && dst % u == 0;
            for (int i = 0; i < last && ok; i++)
                ok = ((uint64_t)p.ss[i] * es) % u == 0 && ((uint64_t)p.ds[i] * es) % u == 0;
            if (ok) {
                unit = u;
                break;
            }
        }
    }
    if (unit != es) {
        uint64_t f = unit / es;
        p.dims[last] /= (int64_t)f;
        for (int i = 0; i < last; i++) {
            p.ss[i] /= (int64_t)f;
            p.ds[i] /= (int64_t)f;
        }
    }
    if (unit != 1 && unit != 2 && unit != 4 && unit != 8 && unit != 16)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "movement: element size %zu", es);

    move_push pc;
    memset(&pc, 0, sizeof pc);
    pc.src = src;
    pc.dst = dst;
    int64_t n = 1, smax = 0, dmax = 0;
    for (int i = 0; i < p.rank; i++) {
        n *= p.dims[i];
        smax += (p.dims[i] - 1) * p.ss[i];
        dmax += (p.dims[i] - 1) * p.ds[i];
        pc.dims[i] = (uint32_t)p.dims[i];
        pc.ss[i] = (uint32_t)p.ss[i];
        pc.ds[i] = (uint32_t)p.ds[i];
    }
    if (n >= ((int64_t)1 << 32) || smax >= ((int64_t)1 << 32) || dmax >= ((int64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "movement: more than 2^32 units");
    pc.n = (uint32_t)n;
    vk_dispatch *d = vk_emit(c, "move", &pc, sizeof pc);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)unit;
    d->spec[1] = (uint32_t)p.rank;
    d->n_spec = 2;
    vk_grid_1d(c->caps, (uint64_t)n, 256, d->groups);
    return RLX_OK;
}

rlx_status vk_lower_movement(vk_lower_ctx *c) {
    const ir_node *nd = c->node;
    const vk_tensor *x = &c->in[0], *out = &c->out;
    const size_t es = rlx_dtype_size(out->dtype);
    if (es == 0) return rlx_fail(RLX_STATUS_UNSUPPORTED, "movement: unknown dtype %d", (int)out->dtype);
    c->tier = "copy";
    if (out->numel == 0) return RLX_OK;

    move_plan p;
    memset(&p, 0, sizeof p);
    int64_t xs[IR_MAX_RANK];
    dense_strides(x->rank, x->dims, xs);
    switch (nd->op) {
    case IR_OP_RESHAPE:
        if (x->addr == out->addr) return RLX_OK;   /* aliased: nothing to move */
        p.rank = 1;
        p.dims[0] = out->numel;
        p.ss[0] = p.ds[0] = 1;
        return emit_plan(c, &p, x->addr, out->addr, es);
    case IR_OP_TRANSPOSE:
        p.rank = out->rank;
        for (int i = 0; i < out->rank; i++) {
            int64_t pi = ir_attr_transpose_perm(nd, i);
            if (pi < 0 || pi >= x->rank) return rlx_fail(RLX_STATUS_INTERNAL, "transpose: bad perm");
            p.dims[i] = out->dims[i];
            p.ss[i] = xs[pi];
        }
        dense_strides(out->rank, out->dims, p.ds);
        return emit_plan(c, &p, x->addr, out->addr, es);
    case IR_OP_SLICE: {
        int axis = (int)ir_attr_slice_axis(nd);
        int64_t start = ir_attr_slice_start(nd), step = ir_attr_slice_step(nd);
        if (axis < 0 || axis >= x->rank || step < 1 || start < 0 ||
            start + (out->dims[axis] - 1) * step >= x->dims[axis])
            return rlx_fail(RLX_STATUS_INTERNAL, "slice: attributes do not fit the input");
        p.rank = out->rank;
        for (int i = 0; i < out->rank; i++) {
            p.dims[i] = out->dims[i];
            p.ss[i] = xs[i] * (i == axis ? step : 1);
        }
        p.src_off = start * xs[axis];
        dense_strides(out->rank, out->dims, p.ds);
        return emit_plan(c, &p, x->addr, out->addr, es);
    }
    case IR_OP_CONCAT: {
        int axis = (int)ir_attr_axis_op_axis(nd);
        int64_t os[IR_MAX_RANK], at = 0;
        dense_strides(out->rank, out->dims, os);
        for (int k = 0; k < c->n_in; k++) {
            const vk_tensor *t = &c->in[k];
            memset(&p, 0, sizeof p);
            p.rank = t->rank;
            memcpy(p.dims, t->dims, sizeof p.dims);
            dense_strides(t->rank, t->dims, p.ss);
            memcpy(p.ds, os, sizeof p.ds);
            p.dst_off = at * os[axis];
            at += t->dims[axis];
            rlx_status st = emit_plan(c, &p, t->addr, out->addr, es);
            if (st != RLX_OK) return st;
        }
        return RLX_OK;
    }
    case IR_OP_EXPAND:
        p.rank = out->rank;
        for (int i = 0; i < out->rank; i++) {
            int xi = x->rank - out->rank + i;
            int64_t d = xi >= 0 ? x->dims[xi] : 1;
            p.dims[i] = out->dims[i];
            p.ss[i] = (d == 1 && out->dims[i] != 1) || xi < 0 ? 0 : xs[xi];
        }
        dense_strides(out->rank, out->dims, p.ds);
        return emit_plan(c, &p, x->addr, out->addr, es);
    case IR_OP_FLIP:
    case IR_OP_DEPTH_TO_SPACE:
    case IR_OP_SPACE_TO_DEPTH: {   /* ir/rearrange_geom.h's plan; flipped strides wrap in the shader's uint math */
        ir_rearrange r;
        ir_rearrange_plan(nd, x->rank, x->dims, &r);
        p.rank = r.rank;
        for (int i = 0; i < r.rank; i++) p.dims[i] = r.dims[i], p.ss[i] = r.stride[i];
        p.src_off = r.offset;
        dense_strides(r.rank, r.dims, p.ds);
        return emit_plan(c, &p, x->addr, out->addr, es);
    }
    default:
        return rlx_fail(RLX_STATUS_INTERNAL, "movement lowering called for %s", ir_op_info_get(nd->op)->name);
    }
}

/* assign(param, value): expand's broadcast copy of value (in[1]) into the
 * param, which the planner made the node's output. */
rlx_status vk_lower_assign(vk_lower_ctx *c) {
    if (c->n_in != 2) return rlx_fail(RLX_STATUS_INTERNAL, "assign lowering: %d inputs", c->n_in);
    if (c->in[1].addr == c->out.addr) { c->tier = "copy"; return RLX_OK; }   /* assign(p, p) */
    ir_node as_expand = *c->node;
    as_expand.op = IR_OP_EXPAND;
    const ir_node *node = c->node;
    vk_tensor target = c->in[0];
    c->node = &as_expand;
    c->in[0] = c->in[1];
    c->n_in = 1;
    rlx_status st = vk_lower_movement(c);
    c->node = node;
    c->in[0] = target;
    c->n_in = 2;
    return st;
}
