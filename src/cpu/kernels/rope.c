/*
 * rope.c — rotary position embedding on the CPU.
 *
 * x [B,H,S,D]; token s sits at pos = offset + s (offset: optional one-element
 * i32 input). With R rotary dims, pair i (i < R/2) turns by the angle
 * pos * theta^(-2i/R):
 *   NEOX pairs (i, i + R/2), GPTJ pairs (2i, 2i + 1);
 *   (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos); dims >= R pass through.
 * Angles are formed and reduced in double, then cast: at positions of 10^5
 * and more a float angle would already be off by whole fractions of a turn.
 * One cos/sin table per call, [S][R/2], is shared by all batches and heads.
 * Works in place (out may alias x). f32 fast path; other float dtypes go
 * through double loads/stores.
 *
 * ROPE_KV_WRITE (inputs cache, x, pos [, offset] [, factors]) is the same
 * rotation with each row stored at its cache row instead, (b*H + h)*C + pos + s
 * (KV_WRITE's prologue first: the context-limit check). Same arithmetic, so
 * it equals rope then kv_write bit for bit.
 */
#include "cpu/cpu_kernel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rope_ctx {
    const cpu_tensor *x;
    void             *out;
    int64_t           S, D, R, half, offset;
    int64_t           cap, cache_pos;      /* ROPE_KV_WRITE: cache capacity (0: plain rope), row pos */
    int               style;
    double            theta;
    float            *cos_t, *sin_t;   /* [S][half] */
    double           *inv_freq;        /* [half]: theta^(-2i/R) */
} rope_ctx;

static void table_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const rope_ctx *c = ctx;
    for (int64_t s = begin; s < end; s++) {
        double pos = (double)(c->offset + s);
        for (int64_t i = 0; i < c->half; i++) {
            double ang = pos * c->inv_freq[i];
            c->cos_t[s * c->half + i] = (float)cos(ang);
            c->sin_t[s * c->half + i] = (float)sin(ang);
        }
    }
}

/* One item is one row [D] of x, row index = (b*H + h)*S + s. */
static void rope_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const rope_ctx *c = ctx;
    int64_t D = c->D, half = c->half;
    /* pair i: first element at i*e0, second at i*e0 + e1 */
    int64_t e0 = c->style == RLX_ROPE_GPTJ ? 2 : 1;
    int64_t e1 = c->style == RLX_ROPE_GPTJ ? 1 : half;
    rlx_dtype dt = c->x->dtype;
    for (int64_t r = begin; r < end; r++) {
        int64_t s = r % c->S;
        int64_t orow = c->cap ? (r / c->S) * c->cap + c->cache_pos + s : r;
        const float *cs = c->cos_t + s * half, *sn = c->sin_t + s * half;
        if (dt == RLX_F32) {
            const float *xi = (const float *)c->x->data + r * D;
            float *xo = (float *)c->out + orow * D;
            for (int64_t i = 0; i < half; i++) {
                float x0 = xi[i * e0], x1 = xi[i * e0 + e1];
                xo[i * e0] = x0 * cs[i] - x1 * sn[i];
                xo[i * e0 + e1] = x0 * sn[i] + x1 * cs[i];
            }
            if (xo != xi && D > c->R)
                memcpy(xo + c->R, xi + c->R, (size_t)(D - c->R) * sizeof(float));
        } else {
            int64_t base = r * D, obase = orow * D;
            for (int64_t i = 0; i < half; i++) {
                double x0 = rlx_load_as_f64(c->x->data, dt, base + i * e0);
                double x1 = rlx_load_as_f64(c->x->data, dt, base + i * e0 + e1);
                rlx_store_from_f64(c->out, dt, obase + i * e0, x0 * cs[i] - x1 * sn[i]);
                rlx_store_from_f64(c->out, dt, obase + i * e0 + e1, x0 * sn[i] + x1 * cs[i]);
            }
            for (int64_t j = c->R; j < D; j++)
                rlx_store_from_f64(c->out, dt, obase + j, rlx_load_as_f64(c->x->data, dt, base + j));
        }
    }
}

rlx_status cpu_rope(const cpu_kernel_ctx *k)
{
    const ir_node *n = k->node;
    const bool kv = n->op == IR_OP_ROPE_KV_WRITE;
    const cpu_tensor *x = &k->in[kv ? 1 : 0];
    char lb[160];
    if (!ir_dtype_is_float(x->dtype))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: x must be a float dtype, got %s",
                        cpu_node_label(n, lb, sizeof lb), rlx_dtype_name(x->dtype));
    if (x->rank != 4)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: x must be [B,H,S,D], got rank %d",
                        cpu_node_label(n, lb, sizeof lb), x->rank);
    rope_ctx c;
    c.x = x;
    c.out = k->out.data;
    c.S = x->dims[2];
    c.D = x->dims[3];
    c.R = ir_attr_rope_rotary_dims(n) > 0 ? ir_attr_rope_rotary_dims(n) : c.D;
    c.half = c.R / 2;
    c.style = (int)ir_attr_rope_style(n);
    c.theta = ir_attr_rope_theta(n);
    c.offset = 0;
    c.cap = c.cache_pos = 0;
    if (c.R % 2 != 0 || c.R > c.D)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: rotary dims %lld must be even and <= D = %lld",
                        cpu_node_label(n, lb, sizeof lb), (long long)c.R, (long long)c.D);
    if (c.style != RLX_ROPE_NEOX && c.style != RLX_ROPE_GPTJ)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: unknown rope style %d",
                        cpu_node_label(n, lb, sizeof lb), c.style);
    if (ir_attr_rope_has_offset(n)) {
        const cpu_tensor *off = &k->in[kv ? 3 : 1];
        if (off->dtype != RLX_I32 || off->numel != 1)
            return rlx_fail(RLX_STATUS_SHAPE, "%s: offset must be one i32 element",
                            cpu_node_label(n, lb, sizeof lb));
        c.offset = *(const int32_t *)off->data;
    }
    if (kv) {
        rlx_status st = cpu_kv_begin(k, c.S, &c.cache_pos);
        if (st != RLX_OK)
            return st;
        c.cap = k->out.dims[2];
    }
    if (x->numel == 0)
        return RLX_OK;

    /* one block: inv_freq (doubles first, for alignment), then cos, sin */
    size_t fbytes = (size_t)c.half * sizeof(double);
    size_t tbytes = (size_t)(c.S * c.half) * sizeof(float);
    c.inv_freq = malloc(fbytes + 2 * tbytes + 1);
    if (!c.inv_freq)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for the angle table",
                        cpu_node_label(n, lb, sizeof lb));
    c.cos_t = (float *)(void *)(c.inv_freq + c.half);
    c.sin_t = c.cos_t + c.S * c.half;
    /* llama3-style scaling: frequency i is divided by factor i */
    const float *factors = ir_attr_rope_has_freq_factors(n) ? (const float *)k->in[k->n_in - 1].data : NULL;
    for (int64_t i = 0; i < c.half; i++)
        c.inv_freq[i] = pow(c.theta, -2.0 * (double)i / (double)c.R) / (factors ? (double)factors[i] : 1.0);

    int64_t rows = x->numel / c.D;
    rlx_threadpool *pool = x->numel >= 4096 ? k->pool : NULL;
    rlx_parallel_for(c.S * c.half >= 512 ? pool : NULL, c.S,
                     RLX_MAX((int64_t)1, 256 / RLX_MAX(c.half, (int64_t)1)), table_range, &c);
    rlx_parallel_for(pool, rows, RLX_MAX((int64_t)1, 2048 / c.D), rope_range, &c);
    free(c.inv_freq);
    return RLX_OK;
}
