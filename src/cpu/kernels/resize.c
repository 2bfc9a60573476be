/*
 * resize.c — CPU kernels for RESIZE and RESIZE_GRAD (f32, NCHW, 1 to 3
 * spatial dims right-aligned into three). The sampling rule is
 * ir/resize_geom.h's: per axis, each output's taps are tabulated once, then
 * every output element sums the product of its axes' taps in a fixed order.
 * RESIZE_GRAD is the transpose as a gather: per axis, each input index
 * tabulates the outputs that reach it and their weights, and each input
 * element sums over those, so no two threads write one element and the
 * result does not depend on the thread count.
 */
#include "cpu/cpu_kernel.h"
#include "ir/resize_geom.h"

#include <stdlib.h>

/* One axis's table: for entry e (an output for RESIZE, an input for the
 * grad), items [start[e], start[e + 1]) of idx / w. */
typedef struct axis_table {
    int64_t *start, *idx;
    float   *w;
    int64_t  n;
} axis_table;

static void table_free(axis_table *t) { free(t->start), free(t->idx), free(t->w); }

/* Forward: output o's taps, duplicates (clamped edges) kept, in tap order. */
static bool table_fwd(const ir_resize_axis *ax, axis_table *t) {
    t->n = ax->out;
    t->start = malloc(sizeof(int64_t) * (size_t)(ax->out + 1));
    t->idx = malloc(sizeof(int64_t) * (size_t)ax->out * 4);
    t->w = malloc(sizeof(float) * (size_t)ax->out * 4);
    if (!t->start || !t->idx || !t->w) return false;
    int64_t k = 0;
    for (int64_t o = 0; o < ax->out; o++) {
        t->start[o] = k;
        k += ir_resize_taps(ax, o, t->idx + k, t->w + k);
    }
    t->start[ax->out] = k;
    return true;
}

/* Grad: input i's outputs and the weight each gives it (zeros dropped). */
static bool table_grad(const ir_resize_axis *ax, axis_table *t) {
    t->n = ax->in;
    t->start = malloc(sizeof(int64_t) * (size_t)(ax->in + 1));
    int64_t cap = 0, *lo = malloc(sizeof(int64_t) * (size_t)ax->in * 2);
    if (!t->start || !lo) return free(lo), false;
    for (int64_t i = 0; i < ax->in; i++) {
        ir_resize_grad_range(ax, i, &lo[2 * i], &lo[2 * i + 1]);
        cap += lo[2 * i + 1] - lo[2 * i];
    }
    t->idx = malloc(sizeof(int64_t) * (size_t)(cap + 1));
    t->w = malloc(sizeof(float) * (size_t)(cap + 1));
    if (!t->idx || !t->w) return free(lo), false;
    int64_t k = 0;
    for (int64_t i = 0; i < ax->in; i++) {
        t->start[i] = k;
        for (int64_t o = lo[2 * i]; o < lo[2 * i + 1]; o++) {
            float w = ir_resize_weight(ax, o, i);
            if (w != 0) t->idx[k] = o, t->w[k] = w, k++;
        }
    }
    t->start[ax->in] = k;
    free(lo);
    return true;
}

typedef struct resize_job {
    const float *src;
    float *dst;
    axis_table t[3];
    int64_t sv[3], dv[3];   /* source and destination spatial sizes, three dims */
} resize_job;

/* dst[a] = sum over the tables' items of w0 w1 w2 src[i0, i1, i2], one plane at a time. */
static void resize_planes(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const resize_job *j = arg;
    int64_t svol = j->sv[0] * j->sv[1] * j->sv[2], dvol = j->dv[0] * j->dv[1] * j->dv[2];
    const axis_table *t0 = &j->t[0], *t1 = &j->t[1], *t2 = &j->t[2];
    for (int64_t pl = begin; pl < end; pl++) {
        const float *s = j->src + pl * svol;
        float *d = j->dst + pl * dvol;
        for (int64_t a0 = 0; a0 < j->dv[0]; a0++)
            for (int64_t a1 = 0; a1 < j->dv[1]; a1++)
                for (int64_t a2 = 0; a2 < j->dv[2]; a2++) {
                    double acc = 0;
                    for (int64_t k0 = t0->start[a0]; k0 < t0->start[a0 + 1]; k0++)
                        for (int64_t k1 = t1->start[a1]; k1 < t1->start[a1 + 1]; k1++) {
                            double w01 = (double)t0->w[k0] * t1->w[k1];
                            const float *row = s + (t0->idx[k0] * j->sv[1] + t1->idx[k1]) * j->sv[2];
                            for (int64_t k2 = t2->start[a2]; k2 < t2->start[a2 + 1]; k2++)
                                acc += w01 * t2->w[k2] * row[t2->idx[k2]];
                        }
                    d[(a0 * j->dv[1] + a1) * j->dv[2] + a2] = (float)acc;
                }
    }
}

static rlx_status run(const cpu_kernel_ctx *k, bool grad) {
    char lb[160];
    if (k->in[0].dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the CPU resize is f32", cpu_node_label(k->node, lb, sizeof lb));
    ir_resize_geom p;
    ir_resize_geom_of(k->node, &p);
    resize_job j = {.src = k->in[0].data, .dst = k->out.data};
    int off = 3 - p.dims;
    bool ok = true;
    for (int d = 0; d < 3; d++) {
        j.sv[d] = j.dv[d] = 1;
        if (d < off) {   /* a size-1 axis: one item of weight 1 */
            ir_resize_geom one = {.mode = IR_RESIZE_NEAREST, .coord = IR_COORD_ASYMMETRIC, .in = {1}, .out = {1}, .scale = {1}};
            ir_resize_axis ax = ir_resize_axis_of(&one, 0);
            ok = ok && (grad ? table_grad(&ax, &j.t[d]) : table_fwd(&ax, &j.t[d]));
            continue;
        }
        ir_resize_axis ax = ir_resize_axis_of(&p, d - off);
        j.sv[d] = k->in[0].dims[2 + d - off], j.dv[d] = k->out.dims[2 + d - off];
        ok = ok && (grad ? table_grad(&ax, &j.t[d]) : table_fwd(&ax, &j.t[d]));
    }
    if (ok) rlx_parallel_for(k->pool, k->in[0].dims[0] * k->in[0].dims[1], 1, resize_planes, &j);
    for (int d = 0; d < 3; d++) table_free(&j.t[d]);
    if (!ok) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory for the tap tables", cpu_node_label(k->node, lb, sizeof lb));
    return RLX_OK;
}

rlx_status cpu_resize(const cpu_kernel_ctx *k) { return run(k, false); }
rlx_status cpu_resize_grad(const cpu_kernel_ctx *k) { return run(k, true); }
