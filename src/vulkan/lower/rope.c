/*
 * rope.c — Vulkan lowering of ROPE through shaders/rope.comp (f32).
 *
 * The offset input (has_offset) is read by the shader from its buffer on every
 * run, so one recorded command buffer serves every decode position. The
 * per-pair frequency is rebuilt in the shader from q = theta^(-2/R) and
 * 1/(2 pi), passed as hi/lo float pairs computed here in double; see the
 * shader's header for the accuracy argument (parity with the CPU's double
 * angles to ~1e-6 relative at any i32 position).
 *
 * ROPE_KV_WRITE (inputs cache, x, pos [, offset] [, factors], made by
 * passes/fuse.c) is the same dispatch with the KV spec constant: rows go
 * straight to their cache rows, so a decode layer's K needs no kv_write
 * dispatch (and no dependent stage) after its rope. The node's output is the
 * cache param; the context-limit check of a pos input is vk_run.c's, as
 * for kv_write.
 */
#include "vulkan/vk_lower.h"

#include <math.h>
#include <string.h>

typedef struct rope_push {
    uint64_t x, off, out;
    uint32_t n, items, S, D, R, half;
    float    q_hi, q_lo, f0_hi, f0_lo;
    uint64_t ff;   /* 0, or f32 [R/2] frequency factors (llama3 scaling) */
    uint64_t pos;  /* ROPE_KV_WRITE: i32 cache position */
    uint32_t C, pad;   /* pad: the C struct's tail; the shader block ends at C */
} rope_push;

_Static_assert(sizeof(rope_push) == 88, "rope_push must match rope.comp's push block");

rlx_status vk_lower_rope(vk_lower_ctx *c) {
    const ir_node *nd = c->node;
    const bool kv = nd->op == IR_OP_ROPE_KV_WRITE;
    const vk_tensor *x = &c->in[kv ? 1 : 0], *off = &c->in[kv ? 3 : 1];
    if (x->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "rope: the Vulkan kernel is f32 only, got %s", rlx_dtype_name(x->dtype));
    if (x->rank != 4) return rlx_fail(RLX_STATUS_SHAPE, "rope: x must be [B,H,S,D]");
    const int64_t S = x->dims[2], D = x->dims[3];
    const int64_t R = ir_attr_rope_rotary_dims(nd) > 0 ? ir_attr_rope_rotary_dims(nd) : D;
    const int style = (int)ir_attr_rope_style(nd);
    if (R % 2 || R > D) return rlx_fail(RLX_STATUS_SHAPE, "rope: rotary dims %lld must be even and <= D", (long long)R);
    if (style != RLX_ROPE_NEOX && style != RLX_ROPE_GPTJ)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rope: unknown style %d", style);
    const bool has_off = ir_attr_rope_has_offset(nd) != 0;
    if (has_off && (c->n_in < (kv ? 4 : 2) || off->dtype != RLX_I32 || off->numel != 1))
        return rlx_fail(RLX_STATUS_SHAPE, "rope: offset must be one i32 element");
    c->tier = kv ? "rope-kv-write" : "rope";
    if (x->numel == 0) return RLX_OK;
    const int64_t rows = x->numel / D, items = R / 2 + (D - R);
    if ((uint64_t)c->out.numel >= ((uint64_t)1 << 32) || (uint64_t)x->numel >= ((uint64_t)1 << 32) ||
        (uint64_t)(rows * items) >= ((uint64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "rope: tensor of 2^32 elements or more");

    rope_push pc;
    memset(&pc, 0, sizeof pc);
    pc.x = x->addr;
    pc.off = has_off ? off->addr : 0;
    pc.out = c->out.addr;
    pc.n = (uint32_t)(rows * items);
    pc.items = (uint32_t)items;
    pc.S = (uint32_t)S;
    pc.D = (uint32_t)D;
    pc.R = (uint32_t)R;
    pc.half = (uint32_t)(R / 2);
    vk_split_df(pow(ir_attr_rope_theta(nd), -2.0 / (double)R), &pc.q_hi, &pc.q_lo);
    vk_split_df(1.0 / (2.0 * 3.14159265358979323846), &pc.f0_hi, &pc.f0_lo);
    if (ir_attr_rope_has_freq_factors(nd)) pc.ff = c->in[c->n_in - 1].addr;
    if (kv) {
        pc.pos = c->in[2].addr;
        pc.C = (uint32_t)c->out.dims[2];
    }
    vk_dispatch *d = vk_emit(c, "rope", &pc, sizeof pc);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = style == RLX_ROPE_GPTJ;
    d->spec[1] = has_off;
    d->spec[2] = ir_attr_rope_has_freq_factors(nd) != 0;
    d->spec[3] = kv;
    d->n_spec = 4;
    vk_grid_1d(c->caps, pc.n, 256, d->groups);
    return RLX_OK;
}
