/*
 * adaptive_pool.c — CPU kernels for ADAPTIVE_POOL (average or max, 1 to 3
 * spatial dims right-aligned into three, f32) and ADAPTIVE_POOL_GRAD, where
 * each input element gathers from the windows holding it (max: the windows
 * whose first maximum it is), as pool_grad does, so the sums have a fixed
 * order at any thread count. Windows: ir/adaptive_pool_geom.h.
 */
#include "cpu/cpu_kernel.h"
#include "ir/adaptive_pool_geom.h"
#include "ir/pool_geom.h"

#include <math.h>

typedef struct ap_job {
    const float *x, *dy;
    float *y;
    int kind;
    int64_t in[3], out[3];
} ap_job;

static void window(const ap_job *j, const int64_t *a, int64_t *lo, int64_t *hi) {
    for (int d = 0; d < 3; d++) ir_adaptive_window(a[d], j->in[d], j->out[d], &lo[d], &hi[d]);
}

/* The window's mean, or its max (NaN wins); *at: the first maximum's index in the plane. */
static float reduce_window(const ap_job *j, const float *x, const int64_t *lo, const int64_t *hi, int64_t *at) {
    double acc = 0;
    float mx = 0;
    int64_t best = -1, cnt = 0;
    for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
        for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
            for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
                int64_t k = (i0 * j->in[1] + i1) * j->in[2] + i2;
                float v = x[k];
                acc += v, cnt++;
                if (best < 0 || (!isnan(mx) && (v > mx || isnan(v)))) best = k, mx = v;
            }
    if (at) *at = best;
    return j->kind == IR_POOL_AVG ? (float)(acc / (double)cnt) : mx;
}

static void ap_planes(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const ap_job *j = arg;
    int64_t iv = j->in[0] * j->in[1] * j->in[2], ov = j->out[0] * j->out[1] * j->out[2];
    for (int64_t pl = begin; pl < end; pl++)
        for (int64_t o = 0; o < ov; o++) {
            int64_t a[3] = {o / (j->out[1] * j->out[2]), o / j->out[2] % j->out[1], o % j->out[2]}, lo[3], hi[3];
            window(j, a, lo, hi);
            j->y[pl * ov + o] = reduce_window(j, j->x + pl * iv, lo, hi, NULL);
        }
}

static void ap_grad_planes(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const ap_job *j = arg;
    int64_t iv = j->in[0] * j->in[1] * j->in[2], ov = j->out[0] * j->out[1] * j->out[2];
    for (int64_t pl = begin; pl < end; pl++) {
        const float *x = j->x + pl * iv, *dy = j->dy + pl * ov;
        for (int64_t i = 0; i < iv; i++) {
            int64_t ii[3] = {i / (j->in[1] * j->in[2]), i / j->in[2] % j->in[1], i % j->in[2]}, olo[3], ohi[3];
            for (int d = 0; d < 3; d++) ir_adaptive_users(ii[d], j->in[d], j->out[d], &olo[d], &ohi[d]);
            double acc = 0;
            for (int64_t a0 = olo[0]; a0 < ohi[0]; a0++)
                for (int64_t a1 = olo[1]; a1 < ohi[1]; a1++)
                    for (int64_t a2 = olo[2]; a2 < ohi[2]; a2++) {
                        int64_t a[3] = {a0, a1, a2}, lo[3], hi[3];
                        window(j, a, lo, hi);
                        float g = dy[(a0 * j->out[1] + a1) * j->out[2] + a2];
                        if (j->kind == IR_POOL_AVG) {
                            int64_t cnt = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
                            acc += (double)g / (double)cnt;
                        } else {
                            int64_t at;
                            reduce_window(j, x, lo, hi, &at);
                            if (at == i) acc += g;
                        }
                    }
            j->y[pl * iv + i] = (float)acc;
        }
    }
}

static rlx_status run(const cpu_kernel_ctx *k, bool grad) {
    char lb[160];
    if (k->in[0].dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the CPU adaptive pooling is f32", cpu_node_label(k->node, lb, sizeof lb));
    ir_adaptive_geom p;
    ir_adaptive_geom_of(k->node, &p);
    ap_job j = {.x = k->in[0].data, .dy = grad ? k->in[1].data : NULL, .y = k->out.data, .kind = p.kind};
    int off = 3 - p.dims;
    for (int d = 0; d < 3; d++) j.in[d] = j.out[d] = 1;
    for (int i = 0; i < p.dims; i++) j.in[off + i] = k->in[0].dims[2 + i], j.out[off + i] = p.out[i];
    rlx_parallel_for(k->pool, k->in[0].dims[0] * k->in[0].dims[1], 1, grad ? ap_grad_planes : ap_planes, &j);
    return RLX_OK;
}

rlx_status cpu_adaptive_pool(const cpu_kernel_ctx *k) { return run(k, false); }
rlx_status cpu_adaptive_pool_grad(const cpu_kernel_ctx *k) { return run(k, true); }
