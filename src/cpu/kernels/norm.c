/*
 * norm.c — CPU kernel for LAYER_NORM, RMS_NORM and the fused residual forms
 * ADD_LAYER_NORM / ADD_RMS_NORM, all over the last dim.
 *
 * Inputs: x, gamma[, beta] or, fused, x, r, gamma[, beta] (attributes has_beta,
 * eps). layer_norm: (s - mean) / sqrt(var + eps) * gamma + beta with
 * the biased variance; rms_norm: s / sqrt(mean(s^2) + eps) * gamma + beta;
 * s = x, or x + r rounded to x's dtype (so fused and unfused graphs agree).
 *
 * Statistics are two-pass in double: inputs with a large mean and a small
 * spread (activations after a residual) lose nothing to cancellation. The
 * centring subtraction is done in double too, since a mean rounded to f32
 * would shift the whole row by up to half an ulp of the mean.
 *
 * cpu_rms_norm_f32 is the f32 rms_norm path on its own, for the fused
 * RMS_DEQUANT_* kernels (rms_dequant.c), so that they normalize bit for bit
 * as the unfused norm does.
 */
/* GCC's -O2 vectorizes only loops that need no scalar epilogue or alias check,
 * which excludes nearly every kernel loop here; the dynamic cost model lets it
 * vectorize them (clang does so at -O2 already). no-trapping-math lets float
 * selects (clamp, relu, max) become blends; results are unchanged. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
#include "cpu/cpu_kernel.h"
#include <math.h>

#define NORM_GRAIN 16384   /* elements per parallel task, roughly */

typedef struct norm_plan {
    bool        layer;     /* layer norm (centred) vs rms norm */
    rlx_dtype   dt;
    const void *x, *r, *gamma, *beta;   /* r, beta may be NULL */
    void       *out;
    int64_t     d;
    double      eps;
} norm_plan;

static double sum_f32(const float *x, int64_t n)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < n; i++) s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

/* Sum of (x - c)^2. */
static double sumsq_f32(const float *x, int64_t n, double c)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        double a = x[i] - c, b = x[i + 1] - c, e = x[i + 2] - c, f = x[i + 3] - c;
        s0 += a * a;
        s1 += b * b;
        s2 += e * e;
        s3 += f * f;
    }
    for (; i < n; i++) s0 += (x[i] - c) * (x[i] - c);
    return (s0 + s1) + (s2 + s3);
}

static void norm_f32_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const norm_plan *p = ctx;
    int64_t d = p->d;
    const float *g = p->gamma, *b = p->beta;
    for (int64_t row = begin; row < end; row++) {
        const float *s = (const float *)p->x + row * d;
        float *y = (float *)p->out + row * d;
        if (p->r) {
            /* The sum goes through y: same index in and out, so y may alias x or r. */
            const float *r = (const float *)p->r + row * d;
            for (int64_t i = 0; i < d; i++) y[i] = s[i] + r[i];
            s = y;
        }
        if (p->layer) {
            double mean = sum_f32(s, d) / (double)d;
            double inv = 1.0 / sqrt(sumsq_f32(s, d, mean) / (double)d + p->eps);
            if (b) for (int64_t i = 0; i < d; i++) y[i] = (float)((s[i] - mean) * inv) * g[i] + b[i];
            else   for (int64_t i = 0; i < d; i++) y[i] = (float)((s[i] - mean) * inv) * g[i];
        } else {
            float inv = (float)(1.0 / sqrt(sumsq_f32(s, d, 0.0) / (double)d + p->eps));
            if (b) for (int64_t i = 0; i < d; i++) y[i] = s[i] * inv * g[i] + b[i];
            else   for (int64_t i = 0; i < d; i++) y[i] = s[i] * inv * g[i];
        }
    }
}

/* Other float dtypes, all in double; the residual sum is rounded to the dtype
 * by storing it into the output row and reading it back. */
static void norm_generic_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const norm_plan *p = ctx;
    int64_t d = p->d;
    rlx_dtype dt = p->dt;
    for (int64_t row = begin; row < end; row++) {
        int64_t o = row * d;
        const void *src = p->x;
        if (p->r) {
            for (int64_t i = 0; i < d; i++)
                rlx_store_from_f64(p->out, dt, o + i, rlx_load_as_f64(p->x, dt, o + i) + rlx_load_as_f64(p->r, dt, o + i));
            src = p->out;
        }
        double mean = 0, ss = 0;
        if (p->layer) {
            for (int64_t i = 0; i < d; i++) mean += rlx_load_as_f64(src, dt, o + i);
            mean /= (double)d;
        }
        for (int64_t i = 0; i < d; i++) {
            double v = rlx_load_as_f64(src, dt, o + i) - mean;
            ss += v * v;
        }
        double inv = 1.0 / sqrt(ss / (double)d + p->eps);
        for (int64_t i = 0; i < d; i++) {
            double v = (rlx_load_as_f64(src, dt, o + i) - mean) * inv * rlx_load_as_f64(p->gamma, dt, i);
            if (p->beta) v += rlx_load_as_f64(p->beta, dt, i);
            rlx_store_from_f64(p->out, dt, o + i, v);
        }
    }
}

/* The parallel split over rows; each row's result does not depend on it. */
static void run_rows(rlx_threadpool *pool, const norm_plan *p, int64_t rows)
{
    rlx_parallel_for(pool, rows, RLX_MAX(1, NORM_GRAIN / p->d), p->dt == RLX_F32 ? norm_f32_rows : norm_generic_rows,
                     (void *)p);
}

void cpu_rms_norm_f32(rlx_threadpool *pool, const float *x, const float *gamma, float *out, int64_t rows, int64_t d,
                      double eps)
{
    if (rows <= 0 || d <= 0) return;
    norm_plan p = {.layer = false, .dt = RLX_F32, .x = x, .gamma = gamma, .out = out, .d = d, .eps = eps};
    run_rows(pool, &p, rows);
}

rlx_status cpu_norm(const cpu_kernel_ctx *k)
{
    ir_op op = k->node->op;
    const ir_op_info *info = ir_op_info_get(op);
    const char *what = info ? info->name : "norm";
    const char *name = k->node->name ? k->node->name : "";
    bool fused = op == IR_OP_ADD_LAYER_NORM || op == IR_OP_ADD_RMS_NORM;
    bool has_beta = ir_attr_norm_has_beta(k->node) != 0;
    int first = fused ? 2 : 1;
    const cpu_tensor *x = &k->in[0];
    rlx_dtype dt = x->dtype;

    if (k->n_in != first + 1 + has_beta)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': has %d inputs, expected %d", what, name, k->n_in,
                        first + 1 + has_beta);
    if (dt != RLX_F32 && dt != RLX_F64 && dt != RLX_F16 && dt != RLX_BF16)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s '%s': needs a float dtype, got %s", what, name, rlx_dtype_name(dt));
    if (x->rank < 1 || k->out.dtype != dt || k->out.numel != x->numel)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': output does not match the input", what, name);
    int64_t d = x->dims[x->rank - 1];
    for (int i = 1; i < k->n_in; i++) {
        const cpu_tensor *t = &k->in[i];
        int64_t want = (fused && i == 1) ? x->numel : d;
        if (t->dtype != dt || t->numel != want)
            return rlx_fail(RLX_STATUS_SHAPE, "%s '%s': input %d must be %s with %lld elements, got %s with %lld",
                            what, name, i, rlx_dtype_name(dt), (long long)want, rlx_dtype_name(t->dtype),
                            (long long)t->numel);
    }
    if (x->numel <= 0 || d <= 0) return RLX_OK;

    norm_plan p = {
        .layer = op == IR_OP_LAYER_NORM || op == IR_OP_ADD_LAYER_NORM,
        .dt = dt,
        .x = x->data,
        .r = fused ? k->in[1].data : NULL,
        .gamma = k->in[first].data,
        .beta = has_beta ? k->in[first + 1].data : NULL,
        .out = k->out.data,
        .d = d,
        .eps = ir_attr_norm_eps(k->node),
    };
    run_rows(k->pool, &p, x->numel / d);
    return RLX_OK;
}
