/*
 * chan_norm.c — CPU kernels for BATCH_NORM and GROUP_NORM over the channel
 * dim of x [N, C, *S] (f32, NCHW): each (n, c) plane is a contiguous run of
 * S = prod(*S) elements.
 *
 * batch_norm: y = (x - mean[c]) * a[c] + beta[c] with a = gamma / sqrt(var + eps)
 * computed in double per plane; the planes split over threads.
 * group_norm: each (n, group) is one contiguous run of C/groups planes; its
 * mean and biased variance are two-pass in double (mean, then the sum of
 * squared deviations), so a large mean next to a small spread loses nothing
 * to cancellation; the output is (x - mean) * rstd * gamma[c] + beta[c], in
 * double, rounded once. The (n, group) runs split over threads.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
#include "cpu/cpu_kernel.h"
#include <math.h>

#define CHAN_NORM_GRAIN 16384   /* elements per parallel task, roughly */

typedef struct chan_job {
    const float *x, *gamma, *beta, *mean, *var;
    float *y;
    int64_t C, S, cg;            /* channels, positions per plane, channels per group */
    double eps;
} chan_job;

static void bn_planes(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const chan_job *j = arg;
    for (int64_t pl = begin; pl < end; pl++) {
        int64_t c = pl % j->C;
        double a = (double)j->gamma[c] / sqrt((double)j->var[c] + j->eps);
        float af = (float)a, m = j->mean[c], b = j->beta[c];
        const float *x = j->x + pl * j->S;
        float *y = j->y + pl * j->S;
        for (int64_t i = 0; i < j->S; i++) y[i] = (x[i] - m) * af + b;
    }
}

static double run_sum(const float *x, int64_t n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) s0 += x[i], s1 += x[i + 1], s2 += x[i + 2], s3 += x[i + 3];
    for (; i < n; i++) s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

static double run_sumsq(const float *x, int64_t n, double c) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        double a = x[i] - c, b = x[i + 1] - c, e = x[i + 2] - c, f = x[i + 3] - c;
        s0 += a * a, s1 += b * b, s2 += e * e, s3 += f * f;
    }
    for (; i < n; i++) s0 += (x[i] - c) * (x[i] - c);
    return (s0 + s1) + (s2 + s3);
}

static void gn_groups(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const chan_job *j = arg;
    int64_t len = j->cg * j->S, G = j->C / j->cg;
    for (int64_t t = begin; t < end; t++) {
        const float *x = j->x + t * len;
        float *y = j->y + t * len;
        double mean = run_sum(x, len) / (double)len;
        double rstd = 1.0 / sqrt(run_sumsq(x, len, mean) / (double)len + j->eps);
        for (int64_t k = 0; k < j->cg; k++) {
            int64_t c = (t % G) * j->cg + k;
            double a = rstd * j->gamma[c], b = j->beta[c];
            const float *xs = x + k * j->S;
            float *ys = y + k * j->S;
            for (int64_t i = 0; i < j->S; i++) ys[i] = (float)((xs[i] - mean) * a + b);
        }
    }
}

rlx_status cpu_chan_norm(const cpu_kernel_ctx *k) {
    char lb[160];
    bool bn = k->node->op == IR_OP_BATCH_NORM;
    const cpu_tensor *x = &k->in[0];
    if (k->n_in != (bn ? 5 : 3) || x->rank < 2 || x->dtype != RLX_F32 || k->out.numel != x->numel)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: inputs do not match the op", cpu_node_label(k->node, lb, sizeof lb));
    chan_job j = {.x = x->data, .y = k->out.data, .C = x->dims[1], .eps = ir_attr_chan_norm_eps(k->node)};
    for (int i = 1; i < k->n_in; i++)
        if (k->in[i].dtype != RLX_F32 || k->in[i].numel != j.C)
            return rlx_fail(RLX_STATUS_INTERNAL, "%s: input %d is not [C] f32", cpu_node_label(k->node, lb, sizeof lb), i);
    j.S = 1;
    for (int d = 2; d < x->rank; d++) j.S *= x->dims[d];
    j.gamma = k->in[1].data, j.beta = k->in[2].data;
    if (x->numel == 0) return RLX_OK;
    if (bn) {
        j.mean = k->in[3].data, j.var = k->in[4].data;
        int64_t planes = x->numel / j.S;
        rlx_parallel_for(k->pool, planes, RLX_MAX(1, CHAN_NORM_GRAIN / RLX_MAX(j.S, 1)), bn_planes, &j);
        return RLX_OK;
    }
    int64_t G = ir_attr_chan_norm_groups(k->node);
    if (G < 1 || j.C % G)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: groups %lld do not divide C", cpu_node_label(k->node, lb, sizeof lb),
                        (long long)G);
    j.cg = j.C / G;
    int64_t tasks = x->numel / (j.cg * j.S);
    rlx_parallel_for(k->pool, tasks, RLX_MAX(1, CHAN_NORM_GRAIN / RLX_MAX(j.cg * j.S, 1)), gn_groups, &j);
    return RLX_OK;
}
