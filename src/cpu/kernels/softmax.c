/*
 * softmax.c — CPU kernel for SOFTMAX and LOG_SOFTMAX along any axis.
 *
 * Numerically stable: the row max is subtracted before exp, and the sum of
 * exps is kept in double. The f32 exp is vmath.h's polynomial (~1 ulp), which
 * vectorizes where a libm call per element would dominate. When the axis is the last one, rows are contiguous;
 * otherwise a block of neighbouring columns is processed together so every
 * load stays contiguous.
 *
 * Semantics (docs/ops.md): a row containing NaN gives NaN everywhere; a row
 * that is all -inf gives NaN (0/0), as in torch; +inf in a row gives NaN.
 */
/* GCC's -O2 vectorizes only loops that need no scalar epilogue or alias check,
 * which excludes nearly every kernel loop here; the dynamic cost model lets it
 * vectorize them (clang does so at -O2 already). no-trapping-math lets float
 * selects (clamp, relu, max) become blends; results are unchanged. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/vmath.h"
#include <math.h>

#define SM_GRAIN 16384   /* elements per parallel task, roughly */
#define SM_BLOCK 64      /* columns per block when the axis is not the last */

typedef struct sm_plan {
    bool        log;
    rlx_dtype   dt;
    const void *x;
    void       *out;
    int64_t     outer, n, inner, n_chunks;
} sm_plan;

static void sm_f32_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const sm_plan *p = ctx;
    int64_t n = p->n;
    for (int64_t r = begin; r < end; r++) {
        const float *x = (const float *)p->x + r * n;
        float *y = (float *)p->out + r * n;
        float m = x[0];
        for (int64_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
        double s = 0;
        if (p->log) {   /* x is read again below: the exps go through a block */
            float e[SM_BLOCK];
            for (int64_t i0 = 0; i0 < n; i0 += SM_BLOCK) {
                int64_t c = RLX_MIN(SM_BLOCK, n - i0);
                for (int64_t i = 0; i < c; i++) e[i] = x[i0 + i] - m;
                cpu_vexp(e, e, c);
                for (int64_t i = 0; i < c; i++) s += e[i];
            }
            /* In double: x - m is exact, and log(sum) is small next to it. */
            double lse = (double)m + log(s);
            for (int64_t i = 0; i < n; i++) y[i] = (float)((double)x[i] - lse);
        } else {
            for (int64_t i = 0; i < n; i++) y[i] = x[i] - m;
            cpu_vexp(y, y, n);
            for (int64_t i = 0; i < n; i++) s += y[i];
            float inv = (float)(1.0 / s);
            for (int64_t i = 0; i < n; i++) y[i] *= inv;
        }
    }
}

static void sm_f32_cols(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const sm_plan *p = ctx;
    int64_t n = p->n, inner = p->inner;
    float m[SM_BLOCK];
    double s[SM_BLOCK];
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / p->n_chunks, c0 = (t % p->n_chunks) * SM_BLOCK;
        int64_t nc = RLX_MIN(SM_BLOCK, inner - c0);
        const float *x = (const float *)p->x + o * n * inner + c0;
        float *y = (float *)p->out + o * n * inner + c0;
        for (int64_t c = 0; c < nc; c++) {
            m[c] = x[c];
            s[c] = 0;
        }
        for (int64_t i = 1; i < n; i++)
            for (int64_t c = 0; c < nc; c++) m[c] = x[i * inner + c] > m[c] ? x[i * inner + c] : m[c];
        for (int64_t i = 0; i < n; i++) {
            for (int64_t c = 0; c < nc; c++) {
                float e = vm_exp(x[i * inner + c] - m[c]);
                if (!p->log) y[i * inner + c] = e;
                s[c] += e;
            }
        }
        if (p->log) {
            for (int64_t c = 0; c < nc; c++) s[c] = (double)m[c] + log(s[c]);
            for (int64_t i = 0; i < n; i++)
                for (int64_t c = 0; c < nc; c++) y[i * inner + c] = (float)((double)x[i * inner + c] - s[c]);
        } else {
            float inv[SM_BLOCK];
            for (int64_t c = 0; c < nc; c++) inv[c] = (float)(1.0 / s[c]);
            for (int64_t i = 0; i < n; i++)
                for (int64_t c = 0; c < nc; c++) y[i * inner + c] *= inv[c];
        }
    }
}

/* Other float dtypes: all in double, one (outer, column) line at a time. */
static void sm_generic(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const sm_plan *p = ctx;
    int64_t n = p->n, inner = p->inner;
    for (int64_t t = begin; t < end; t++) {
        int64_t base = (t / inner) * n * inner + t % inner;
        double m = rlx_load_as_f64(p->x, p->dt, base);
        for (int64_t i = 1; i < n; i++) {
            double v = rlx_load_as_f64(p->x, p->dt, base + i * inner);
            m = v > m ? v : m;
        }
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += exp(rlx_load_as_f64(p->x, p->dt, base + i * inner) - m);
        double lse = m + log(s);
        for (int64_t i = 0; i < n; i++) {
            double v = rlx_load_as_f64(p->x, p->dt, base + i * inner);
            rlx_store_from_f64(p->out, p->dt, base + i * inner, p->log ? v - lse : exp(v - m) / s);
        }
    }
}

rlx_status cpu_softmax(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    const char *name = k->node->name ? k->node->name : "";
    const char *what = k->node->op == IR_OP_LOG_SOFTMAX ? "log_softmax" : "softmax";
    int64_t axis = ir_attr_axis_op_axis(k->node);
    if (k->n_in != 1 || in->dtype != k->out.dtype || axis < 0 || axis >= in->rank)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': bad axis %lld or dtypes", what, name, (long long)axis);
    if (in->dtype != RLX_F32 && in->dtype != RLX_F64 && in->dtype != RLX_F16 && in->dtype != RLX_BF16)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s '%s': needs a float dtype, got %s", what, name,
                        rlx_dtype_name(in->dtype));
    if (k->out.numel <= 0) return RLX_OK;
    sm_plan p = {k->node->op == IR_OP_LOG_SOFTMAX, in->dtype, in->data, k->out.data, 1, in->dims[axis], 1, 1};
    for (int d = 0; d < axis; d++) p.outer *= in->dims[d];
    for (int d = (int)axis + 1; d < in->rank; d++) p.inner *= in->dims[d];
    int64_t grain = RLX_MAX(1, SM_GRAIN / p.n);
    if (p.dt == RLX_F32 && p.inner == 1) {
        rlx_parallel_for(k->pool, p.outer, grain, sm_f32_rows, &p);
    } else if (p.dt == RLX_F32) {
        p.n_chunks = (p.inner + SM_BLOCK - 1) / SM_BLOCK;
        rlx_parallel_for(k->pool, p.outer * p.n_chunks, RLX_MAX(1, grain / SM_BLOCK), sm_f32_cols, &p);
    } else {
        rlx_parallel_for(k->pool, p.outer * p.inner, grain, sm_generic, &p);
    }
    return RLX_OK;
}
