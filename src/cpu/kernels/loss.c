/*
 * loss.c — softmax cross-entropy on the CPU: the mean loss (SOFTMAX_CE) and
 * its gradient with respect to the logits (SOFTMAX_CE_GRAD).
 *
 *   loss = mean_n(logsumexp(logits_n) - logits_n[label_n])        shape []
 *   grad = (softmax(logits_n) - onehot(label_n)) / N              shape [N,C]
 *
 * Row sums run in double: the loss is a mean over many rows and training
 * compares it across steps, so it should not drift with N. f32 logits take
 * their exps from vmath.h's vectorized polynomial (~1 ulp, against a libm
 * double exp per logit); other dtypes compute in double throughout. Labels are i32
 * (i64 accepted too); a label outside [0, C) is an INVALID_ARGUMENT error
 * naming the row. Logits may be any float dtype (f32 is the fast path).
 */
/* The dynamic cost model lets GCC vectorize the row loops at -O2. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/vmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct ce_ctx {
    const cpu_tensor *logits;
    const void       *labels;
    rlx_dtype         label_dtype;
    int64_t           N, C;
    int               grad;
    double           *row_loss;   /* [N], loss only */
    void             *out;        /* grad only */
} ce_ctx;

static inline int64_t load_label(const ce_ctx *c, int64_t n)
{
    return c->label_dtype == RLX_I64 ? ((const int64_t *)c->labels)[n]
                                     : (int64_t)((const int32_t *)c->labels)[n];
}

#define CE_BLOCK 256

/* One f32 row: the max (NaN wins), the exps of (x - max) through a block
 * buffer or, for the gradient, through the output row, summed in double. */
static void ce_row_f32(const ce_ctx *c, int64_t n)
{
    int64_t C = c->C, label = load_label(c, n);
    const float *x = (const float *)c->logits->data + n * C;
    float mx = -INFINITY;
    int nan = 0;
    for (int64_t j = 0; j < C; j++) {
        mx = x[j] > mx ? x[j] : mx;
        nan |= x[j] != x[j];
    }
    if (nan) mx = NAN;
    double sum = 0.0;
    if (!c->grad) {
        float e[CE_BLOCK];
        for (int64_t j0 = 0; j0 < C; j0 += CE_BLOCK) {
            int64_t m = RLX_MIN((int64_t)CE_BLOCK, C - j0);
            for (int64_t j = 0; j < m; j++) e[j] = x[j0 + j] - mx;
            cpu_vexp(e, e, m);
            for (int64_t j = 0; j < m; j++) sum += e[j];
        }
        /* Written as (mx - xl) + log(sum) so that a row of all -inf but the
         * label keeps its exact value. */
        c->row_loss[n] = ((double)mx - (double)x[label]) + log(sum);
        return;
    }
    float *y = (float *)c->out + n * C;   /* may be x: each x[j] is read before y[j] is written */
    for (int64_t j = 0; j < C; j++) y[j] = x[j] - mx;
    cpu_vexp(y, y, C);
    for (int64_t j = 0; j < C; j++) sum += y[j];
    double inv = 1.0 / sum, invN = 1.0 / (double)c->N;
    float el = y[label];
    for (int64_t j = 0; j < C; j++) y[j] = (float)((double)y[j] * inv * invN);
    y[label] = (float)(((double)el * inv - 1.0) * invN);
}

static void ce_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const ce_ctx *c = ctx;
    int64_t C = c->C;
    int f32 = c->logits->dtype == RLX_F32;
    const float *lf = c->logits->data;
    for (int64_t n = begin; n < end; n++) {
        if (f32) {
            ce_row_f32(c, n);
            continue;
        }
        int64_t base = n * C;
        double mx = -INFINITY;
        for (int64_t j = 0; j < C; j++) {
            double v = f32 ? lf[base + j] : rlx_load_as_f64(c->logits->data, c->logits->dtype, base + j);
            if (v > mx || isnan(v))
                mx = v;
        }
        double sum = 0.0;
        for (int64_t j = 0; j < C; j++) {
            double v = f32 ? lf[base + j] : rlx_load_as_f64(c->logits->data, c->logits->dtype, base + j);
            sum += exp(v - mx);
        }
        int64_t label = load_label(c, n);
        if (!c->grad) {
            double xl = f32 ? lf[base + label]
                            : rlx_load_as_f64(c->logits->data, c->logits->dtype, base + label);
            /* Written as (mx - xl) + log(sum) so that a row of all -inf but
             * the label keeps its exact value. */
            c->row_loss[n] = (mx - xl) + log(sum);
            continue;
        }
        double inv = 1.0 / sum, invN = 1.0 / (double)c->N;
        for (int64_t j = 0; j < C; j++) {
            double v = f32 ? lf[base + j] : rlx_load_as_f64(c->logits->data, c->logits->dtype, base + j);
            double g = (exp(v - mx) * inv - (j == label ? 1.0 : 0.0)) * invN;
            if (f32)
                ((float *)c->out)[base + j] = (float)g;
            else
                rlx_store_from_f64(c->out, c->logits->dtype, base + j, g);
        }
    }
}

rlx_status cpu_softmax_ce(const cpu_kernel_ctx *k)
{
    const cpu_tensor *logits = &k->in[0], *labels = &k->in[1];
    char lb[160];
    int grad = k->node->op == IR_OP_SOFTMAX_CE_GRAD;
    if (!ir_dtype_is_float(logits->dtype))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: logits must be a float dtype, got %s",
                        cpu_node_label(k->node, lb, sizeof lb), rlx_dtype_name(logits->dtype));
    if (labels->dtype != RLX_I32 && labels->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: labels must be i32, got %s",
                        cpu_node_label(k->node, lb, sizeof lb), rlx_dtype_name(labels->dtype));

    ce_ctx c;
    c.logits = logits;
    c.labels = labels->data;
    c.label_dtype = labels->dtype;
    c.N = logits->rank >= 1 ? logits->dims[0] : 1;
    c.C = logits->rank >= 2 ? logits->dims[1] : 1;
    c.grad = grad;
    c.row_loss = NULL;
    c.out = k->out.data;
    for (int64_t n = 0; n < c.N; n++) {
        int64_t l = load_label(&c, n);
        if (l < 0 || l >= c.C)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: label %lld of row %lld is outside [0, %lld)",
                            cpu_node_label(k->node, lb, sizeof lb), (long long)l, (long long)n,
                            (long long)c.C);
    }
    if (!grad) {
        if (c.N == 0) {   /* mean over no rows: NaN, as 0/0 */
            rlx_store_from_f64(k->out.data, k->out.dtype, 0, NAN);
            return RLX_OK;
        }
        c.row_loss = malloc((size_t)c.N * sizeof(double));
        if (!c.row_loss)
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for %lld row losses",
                            cpu_node_label(k->node, lb, sizeof lb), (long long)c.N);
    }
    if (c.N > 0) {
        int64_t grain = RLX_MAX((int64_t)1, ((int64_t)1 << 14) / RLX_MAX(c.C, (int64_t)1));
        rlx_parallel_for(c.N * c.C >= ((int64_t)1 << 15) ? k->pool : NULL, c.N, grain, ce_range, &c);
    }
    if (!grad) {
        /* Summed in row order on one thread so the result does not depend on
         * the number of threads. */
        double s = 0.0;
        for (int64_t n = 0; n < c.N; n++)
            s += c.row_loss[n];
        free(c.row_loss);
        rlx_store_from_f64(k->out.data, k->out.dtype, 0, s / (double)c.N);
    }
    return RLX_OK;
}
