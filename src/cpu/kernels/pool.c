/*
 * pool.c — CPU kernels for POOL (max and average, 1 to 3 spatial dims, NCHW):
 * a direct loop per output element, the (N, C) planes split over threads;
 * and POOL_GRAD, where each input element gathers from the windows covering
 * it (max: the windows whose first maximum it is), so no two threads write
 * one element and the sums have a fixed order.
 * Windows follow ir/pool_geom.h (PyTorch's rules); f32.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
#include "cpu/cpu_kernel.h"
#include "ir/pool_geom.h"

#include <math.h>

typedef struct pool_job {
    const float *x;
    float *y;
    ir_pool_geom p;
    int64_t in[3], out[3], k[3], st[3], pb[3], pe[3];
} pool_job;

static void pool_planes(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const pool_job *j = arg;
    int64_t iv = j->in[0] * j->in[1] * j->in[2], ov = j->out[0] * j->out[1] * j->out[2];
    bool avg = j->p.kind == IR_POOL_AVG;
    for (int64_t pl = begin; pl < end; pl++) {
        const float *x = j->x + pl * iv;
        float *y = j->y + pl * ov;
        for (int64_t a0 = 0; a0 < j->out[0]; a0++)
            for (int64_t a1 = 0; a1 < j->out[1]; a1++)
                for (int64_t a2 = 0; a2 < j->out[2]; a2++) {
                    int64_t lo[3], hi[3], area = 1, a[3] = {a0, a1, a2};
                    for (int d = 0; d < 3; d++) {
                        int64_t s = a[d] * j->st[d] - j->pb[d];
                        int64_t e = s + j->k[d] < j->in[d] + j->pe[d] ? s + j->k[d] : j->in[d] + j->pe[d];
                        area *= e - s;   /* the window clipped to the padded input */
                        lo[d] = s < 0 ? 0 : s;
                        hi[d] = e > j->in[d] ? j->in[d] : e;
                    }
                    double acc = 0;
                    float mx = -INFINITY;
                    int64_t cnt = 0;
                    for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
                        for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
                            for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
                                float v = x[(i0 * j->in[1] + i1) * j->in[2] + i2];
                                if (avg) acc += v;
                                else if (v > mx || isnan(v)) mx = isnan(mx) ? mx : v;
                                cnt++;
                            }
                    float r = avg ? (float)(acc / (double)(j->p.count_include_pad ? area : cnt)) : mx;
                    y[(a0 * j->out[1] + a1) * j->out[2] + a2] = r;
                }
    }
}

/* NaN-sticky max: once a NaN, the result stays that NaN (the generic loop's rule). */
static inline float max_nan(float m, float v) { return m != m ? m : (v > m || v != v) ? v : m; }

/* Max pooling of at most 2 spatial dims (j->in[0] == 1): per output row, each
 * window tap folds one input row into the row over the output columns whose
 * tap is inside the image, so the inner loop has no bounds checks and
 * vectorizes. Taps run in the generic loop's order, so the results are its. */
static void max_pool_planes_2d(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const pool_job *j = arg;
    int64_t ih = j->in[1], iw = j->in[2], oh = j->out[1], ow = j->out[2], st = j->st[2];
    for (int64_t pl = begin; pl < end; pl++) {
        const float *x = j->x + pl * ih * iw;
        for (int64_t oy = 0; oy < oh; oy++) {
            float *restrict y = j->y + (pl * oh + oy) * ow;
            for (int64_t ox = 0; ox < ow; ox++) y[ox] = -INFINITY;
            for (int64_t ky = 0; ky < j->k[1]; ky++) {
                int64_t iy = oy * j->st[1] - j->pb[1] + ky;
                if (iy < 0 || iy >= ih) continue;
                for (int64_t kx = 0; kx < j->k[2]; kx++) {
                    int64_t off = kx - j->pb[2];
                    int64_t lo = off >= 0 ? 0 : (-off + st - 1) / st, hi = iw - 1 - off < 0 ? 0 : (iw - 1 - off) / st + 1;
                    hi = hi < ow ? hi : ow;
                    const float *restrict xs = x + iy * iw + off;
                    if (st == 1) for (int64_t ox = lo; ox < hi; ox++) y[ox] = max_nan(y[ox], xs[ox]);
                    else if (st == 2) for (int64_t ox = lo; ox < hi; ox++) y[ox] = max_nan(y[ox], xs[2 * ox]);
                    else for (int64_t ox = lo; ox < hi; ox++) y[ox] = max_nan(y[ox], xs[ox * st]);
                }
            }
        }
    }
}

rlx_status cpu_pool(const cpu_kernel_ctx *k) {
    pool_job j = {.x = k->in[0].data, .y = k->out.data};
    ir_pool_geom_of(k->node, &j.p);
    char lb[160];
    if (k->in[0].dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the CPU pooling is f32", cpu_node_label(k->node, lb, sizeof lb));
    int off = 3 - j.p.dims;
    for (int d = 0; d < 3; d++) j.in[d] = j.out[d] = j.k[d] = j.st[d] = 1, j.pb[d] = j.pe[d] = 0;
    for (int i = 0; i < j.p.dims; i++) {
        j.in[off + i] = k->in[0].dims[2 + i], j.out[off + i] = k->out.dims[2 + i];
        j.k[off + i] = j.p.kernel[i], j.st[off + i] = j.p.stride[i];
        j.pb[off + i] = j.p.pad_begin[i], j.pe[off + i] = j.p.pad_end[i];
    }
    int64_t planes = k->in[0].dims[0] * k->in[0].dims[1];
    bool flat = j.in[0] == 1 && j.k[0] == 1 && j.out[0] == 1;
    rlx_parallel_for(k->pool, planes, 1, j.p.kind == IR_POOL_MAX && flat ? max_pool_planes_2d : pool_planes, &j);
    return RLX_OK;
}

/* ---------------------------------------------------------------- pool_grad */

typedef struct pool_grad_job {
    pool_job f;          /* the forward's geometry; f.x is x, f.y is dx */
    const float *dy;
} pool_grad_job;

/* The window of output a (3 right-aligned dims): its input range and divisor. */
static int64_t window_of(const pool_job *j, const int64_t *a, int64_t *lo, int64_t *hi) {
    int64_t area = 1, cnt = 1;
    for (int d = 0; d < 3; d++) {
        int64_t s = a[d] * j->st[d] - j->pb[d];
        int64_t e = s + j->k[d] < j->in[d] + j->pe[d] ? s + j->k[d] : j->in[d] + j->pe[d];
        area *= e - s;
        lo[d] = s < 0 ? 0 : s, hi[d] = e > j->in[d] ? j->in[d] : e;
        cnt *= hi[d] - lo[d];
    }
    return j->p.count_include_pad ? area : cnt;
}

/* Flat index (within the plane) of the window's first maximum (NaN wins). */
static int64_t window_argmax(const pool_job *j, const float *x, const int64_t *lo, const int64_t *hi) {
    int64_t best = -1;
    float mx = 0;
    for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
        for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
            for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
                int64_t at = (i0 * j->in[1] + i1) * j->in[2] + i2;
                float v = x[at];
                if (best < 0 || (!isnan(mx) && (v > mx || isnan(v)))) best = at, mx = v;
            }
    return best;
}

/* Each input element gathers from the windows that cover it, in output order. */
static void pool_grad_planes(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const pool_grad_job *gj = arg;
    const pool_job *j = &gj->f;
    int64_t iv = j->in[0] * j->in[1] * j->in[2], ov = j->out[0] * j->out[1] * j->out[2];
    bool avg = j->p.kind == IR_POOL_AVG;
    for (int64_t pl = begin; pl < end; pl++) {
        const float *x = j->x + pl * iv, *dy = gj->dy + pl * ov;
        float *dx = j->y + pl * iv;
        for (int64_t i = 0; i < iv; i++) {
            int64_t ii[3] = {i / (j->in[1] * j->in[2]), i / j->in[2] % j->in[1], i % j->in[2]}, olo[3], ohi[3];
            for (int d = 0; d < 3; d++) {   /* outputs a with a s - pb <= i < a s - pb + k */
                int64_t t = ii[d] + j->pb[d] - j->k[d] + 1;
                olo[d] = t <= 0 ? 0 : (t + j->st[d] - 1) / j->st[d];
                ohi[d] = (ii[d] + j->pb[d]) / j->st[d] + 1;
                if (ohi[d] > j->out[d]) ohi[d] = j->out[d];
            }
            double acc = 0;
            for (int64_t a0 = olo[0]; a0 < ohi[0]; a0++)
                for (int64_t a1 = olo[1]; a1 < ohi[1]; a1++)
                    for (int64_t a2 = olo[2]; a2 < ohi[2]; a2++) {
                        int64_t a[3] = {a0, a1, a2}, lo[3], hi[3];
                        int64_t div = window_of(j, a, lo, hi);
                        float g = dy[(a0 * j->out[1] + a1) * j->out[2] + a2];
                        if (avg) acc += (double)g / (double)div;
                        else if (window_argmax(j, x, lo, hi) == i) acc += g;
                    }
            dx[i] = (float)acc;
        }
    }
}

rlx_status cpu_pool_grad(const cpu_kernel_ctx *k) {
    pool_grad_job gj = {.f = {.x = k->in[0].data, .y = k->out.data}, .dy = k->in[1].data};
    pool_job *j = &gj.f;
    ir_pool_geom_of(k->node, &j->p);
    int off = 3 - j->p.dims;
    for (int d = 0; d < 3; d++) j->in[d] = j->out[d] = j->k[d] = j->st[d] = 1, j->pb[d] = j->pe[d] = 0;
    for (int i = 0; i < j->p.dims; i++) {
        j->in[off + i] = k->in[0].dims[2 + i], j->out[off + i] = k->in[1].dims[2 + i];
        j->k[off + i] = j->p.kernel[i], j->st[off + i] = j->p.stride[i];
        j->pb[off + i] = j->p.pad_begin[i], j->pe[off + i] = j->p.pad_end[i];
    }
    rlx_parallel_for(k->pool, k->in[0].dims[0] * k->in[0].dims[1], 1, pool_grad_planes, &gj);
    return RLX_OK;
}
