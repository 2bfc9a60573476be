/*
 * reduce.c — CPU kernels for REDUCE_{SUM,MEAN,MAX,MIN,PROD} over an axes mask
 * and for ARGMAX/ARGMIN along one axis.
 *
 * A reduction first coalesces the input's dims into alternating groups of kept
 * and reduced dims (size-1 dims dropped). The output holds the kept groups in
 * order, so it is dense in them whatever keepdim says. Two f32 shapes of loop
 * then cover every mask with contiguous inner loops:
 *   - innermost group reduced: each output element sums contiguous runs;
 *   - innermost group kept: each output row accumulates contiguous input rows
 *     into a small block of accumulators (reducing over leading axes).
 *
 * Semantics (docs/ops.md):
 *  - f32 sum/mean/prod accumulate in double; other floats too; integers in
 *    int64 and wrap to their width like repeated native arithmetic would.
 *  - max/min propagate NaN. Reducing an empty axis: sum 0, prod 1, mean NaN,
 *    max/min fail (no identity).
 *  - argmax/argmin return the first index of the max/min; a NaN counts as the
 *    extreme for both (like torch), so the first NaN's index is returned.
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
#include <stdlib.h>

#define RED_GRAIN 16384   /* input elements per parallel task, roughly */
#define RED_BLOCK 512     /* accumulators per block when reducing leading axes */
#define ARG_BLOCK 256

static const char *node_name(const cpu_kernel_ctx *k) { return k->node->name ? k->node->name : ""; }

static const char *op_name(const cpu_kernel_ctx *k)
{
    const ir_op_info *info = ir_op_info_get(k->node->op);
    return info ? info->name : "?";
}

/* ------------------------------------------------------------- reduce */

typedef struct red_plan {
    ir_op       op;
    rlx_dtype   dt;
    const void *x;
    void       *out;
    int         nk, nr;                         /* kept / reduced groups */
    int64_t     ksz[IR_MAX_RANK], kst[IR_MAX_RANK];
    int64_t     rsz[IR_MAX_RANK], rst[IR_MAX_RANK];
    bool        inner_reduced;                  /* the input's innermost group is reduced */
    int64_t     count;                          /* reduced elements per output */
    int64_t     inner;                          /* length of the contiguous inner group */
    const int64_t *roff;                        /* offsets of the outer reduced combos */
    int64_t     n_roff;
    int64_t     n_chunks;                       /* blocks per output row (inner kept) */
} red_plan;

static void plan_groups(red_plan *p, const cpu_tensor *in, uint64_t mask)
{
    int64_t dense[IR_MAX_RANK];
    cpu_dense_strides(in->rank, in->dims, dense);
    p->nk = p->nr = 0;
    p->count = 1;
    int last = -1;   /* 0 kept, 1 reduced: the type of the previous group */
    for (int d = 0; d < in->rank; d++) {
        int64_t n = in->dims[d];
        int red = (mask >> d) & 1;
        if (red) p->count *= n;
        if (n == 1) continue;
        /* Adjacent dims of a dense tensor always merge: stride = inner one's. */
        if (red && last == 1) {
            p->rsz[p->nr - 1] *= n;
            p->rst[p->nr - 1] = dense[d];
        } else if (!red && last == 0) {
            p->ksz[p->nk - 1] *= n;
            p->kst[p->nk - 1] = dense[d];
        } else if (red) {
            p->rsz[p->nr] = n;
            p->rst[p->nr++] = dense[d];
        } else {
            p->ksz[p->nk] = n;
            p->kst[p->nk++] = dense[d];
        }
        last = red;
    }
    p->inner_reduced = last == 1;
}

/* Offsets of every combination of the first n reduced groups, row-major. */
static int64_t *combo_offsets(int n, const int64_t *sz, const int64_t *st, int64_t *count)
{
    int64_t total = 1;
    for (int i = 0; i < n; i++) total *= sz[i];
    int64_t *offs = malloc((size_t)total * sizeof *offs);
    if (!offs) return NULL;
    int64_t idx[IR_MAX_RANK] = {0}, off = 0;
    for (int64_t c = 0; c < total; c++) {
        offs[c] = off;
        for (int d = n - 1; d >= 0; d--) {
            off += st[d];
            if (++idx[d] < sz[d]) break;
            off -= sz[d] * st[d];
            idx[d] = 0;
        }
    }
    *count = total;
    return offs;
}

/* Input offset of output position q over the first nk kept groups. */
static int64_t kept_offset(const red_plan *p, int64_t q, int nk)
{
    int64_t off = 0;
    for (int d = nk - 1; d >= 0; d--) {
        off += (q % p->ksz[d]) * p->kst[d];
        q /= p->ksz[d];
    }
    return off;
}

static double sum_f32(const float *x, int64_t n)
{
    /* Four chains let the adds overlap; double keeps long sums accurate. */
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

/* NaN is tracked apart from the running extreme so the loop has no branch. */
static float max_f32(const float *x, int64_t n, float m)
{
    int nan = m != m;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        m = v > m ? v : m;
        nan |= v != v;
    }
    return nan ? NAN : m;
}

static float min_f32(const float *x, int64_t n, float m)
{
    int nan = m != m;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        m = v < m ? v : m;
        nan |= v != v;
    }
    return nan ? NAN : m;
}

/* Innermost group reduced: output o = reduce over roff[] x contiguous run. */
static void red_f32_inner(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const red_plan *p = ctx;
    const float *x = p->x;
    float *y = p->out;
    int64_t L = p->inner;
    for (int64_t o = begin; o < end; o++) {
        const float *base = x + kept_offset(p, o, p->nk);
        switch (p->op) {
        case IR_OP_REDUCE_SUM:
        case IR_OP_REDUCE_MEAN: {
            double s = 0;
            for (int64_t r = 0; r < p->n_roff; r++) s += sum_f32(base + p->roff[r], L);
            y[o] = (float)(p->op == IR_OP_REDUCE_MEAN ? s / (double)p->count : s);
            break;
        }
        case IR_OP_REDUCE_PROD: {
            double s = 1;
            for (int64_t r = 0; r < p->n_roff; r++) {
                const float *q = base + p->roff[r];
                for (int64_t i = 0; i < L; i++) s *= q[i];
            }
            y[o] = (float)s;
            break;
        }
        case IR_OP_REDUCE_MAX: {
            float m = base[0];
            for (int64_t r = 0; r < p->n_roff; r++) m = max_f32(base + p->roff[r], L, m);
            y[o] = m;
            break;
        }
        case IR_OP_REDUCE_MIN: {
            float m = base[0];
            for (int64_t r = 0; r < p->n_roff; r++) m = min_f32(base + p->roff[r], L, m);
            y[o] = m;
            break;
        }
        default: break;
        }
    }
}

/* Innermost group kept: task t covers a block of one output row of length L. */
static void red_f32_outer(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const red_plan *p = ctx;
    const float *x = p->x;
    float *y = p->out;
    int64_t L = p->inner;
    double acc[RED_BLOCK];
    for (int64_t t = begin; t < end; t++) {
        int64_t q = t / p->n_chunks, c0 = (t % p->n_chunks) * RED_BLOCK;
        int64_t n = RLX_MIN(RED_BLOCK, L - c0);
        const float *base = x + kept_offset(p, q, p->nk - 1) + c0;
        float *dst = y + q * L + c0;
        switch (p->op) {
        case IR_OP_REDUCE_SUM:
        case IR_OP_REDUCE_MEAN:
            for (int64_t i = 0; i < n; i++) acc[i] = 0;
            for (int64_t r = 0; r < p->n_roff; r++) {
                const float *s = base + p->roff[r];
                for (int64_t i = 0; i < n; i++) acc[i] += s[i];
            }
            if (p->op == IR_OP_REDUCE_MEAN)
                for (int64_t i = 0; i < n; i++) acc[i] /= (double)p->count;
            break;
        case IR_OP_REDUCE_PROD:
            for (int64_t i = 0; i < n; i++) acc[i] = 1;
            for (int64_t r = 0; r < p->n_roff; r++) {
                const float *s = base + p->roff[r];
                for (int64_t i = 0; i < n; i++) acc[i] *= s[i];
            }
            break;
        case IR_OP_REDUCE_MAX:
        case IR_OP_REDUCE_MIN: {
            bool is_max = p->op == IR_OP_REDUCE_MAX;
            for (int64_t i = 0; i < n; i++) acc[i] = base[i];
            for (int64_t r = 0; r < p->n_roff; r++) {
                const float *s = base + p->roff[r];
                for (int64_t i = 0; i < n; i++) {
                    double v = s[i];
                    bool take = (is_max ? v > acc[i] : v < acc[i]) || (v != v && acc[i] == acc[i]);
                    if (take) acc[i] = v;
                }
            }
            break;
        }
        default: break;
        }
        for (int64_t i = 0; i < n; i++) dst[i] = (float)acc[i];
    }
}

/* Any dtype: one output element at a time over all reduced combos (roff). */
static void red_generic(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const red_plan *p = ctx;
    bool is_int = rlx_dtype_is_int_like(p->dt);
    for (int64_t o = begin; o < end; o++) {
        int64_t base = kept_offset(p, o, p->nk);
        if (is_int) {
            uint64_t s = p->op == IR_OP_REDUCE_PROD ? 1 : 0;
            int64_t m = rlx_load_as_i64(p->x, p->dt, base);
            for (int64_t r = 0; r < p->n_roff; r++) {
                int64_t v = rlx_load_as_i64(p->x, p->dt, base + p->roff[r]);
                switch (p->op) {
                case IR_OP_REDUCE_PROD: s *= (uint64_t)v; break;
                case IR_OP_REDUCE_MAX:  m = v > m ? v : m; break;
                case IR_OP_REDUCE_MIN:  m = v < m ? v : m; break;
                default:                s += (uint64_t)v; break;
                }
            }
            if (p->op == IR_OP_REDUCE_MEAN)
                rlx_store_from_f64(p->out, p->dt, o, (double)(int64_t)s / (double)p->count);
            else
                rlx_store_from_i64(p->out, p->dt, o, (p->op == IR_OP_REDUCE_MAX || p->op == IR_OP_REDUCE_MIN) ? m : (int64_t)s);
        } else {
            double s = p->op == IR_OP_REDUCE_PROD ? 1 : 0;
            double m = rlx_load_as_f64(p->x, p->dt, base);
            for (int64_t r = 0; r < p->n_roff; r++) {
                double v = rlx_load_as_f64(p->x, p->dt, base + p->roff[r]);
                switch (p->op) {
                case IR_OP_REDUCE_PROD: s *= v; break;
                case IR_OP_REDUCE_MAX:  if ((v > m || v != v) && m == m) m = v; break;
                case IR_OP_REDUCE_MIN:  if ((v < m || v != v) && m == m) m = v; break;
                default:                s += v; break;
                }
            }
            if (p->op == IR_OP_REDUCE_MAX || p->op == IR_OP_REDUCE_MIN) s = m;
            if (p->op == IR_OP_REDUCE_MEAN) s /= (double)p->count;
            rlx_store_from_f64(p->out, p->dt, o, s);
        }
    }
}

static rlx_status reduce_empty(const cpu_kernel_ctx *k)
{
    ir_op op = k->node->op;
    char label[128];   /* "op 'name'", or the op alone for an unnamed node */
    if (op == IR_OP_REDUCE_MAX || op == IR_OP_REDUCE_MIN)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: reduces an empty axis, which has no %s",
                        cpu_node_label(k->node, label, sizeof label), op == IR_OP_REDUCE_MAX ? "max" : "min");
    double v = op == IR_OP_REDUCE_PROD ? 1 : op == IR_OP_REDUCE_MEAN ? NAN : 0;
    for (int64_t i = 0; i < k->out.numel; i++) rlx_store_from_f64(k->out.data, k->out.dtype, i, v);
    return RLX_OK;
}

rlx_status cpu_reduce(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    if (k->n_in != 1 || in->dtype != k->out.dtype)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': input and output dtypes differ", op_name(k), node_name(k));
    if (k->out.numel <= 0) return RLX_OK;
    if (in->numel == 0) return reduce_empty(k);

    red_plan p = {0};
    p.op = k->node->op;
    p.dt = in->dtype;
    p.x = in->data;
    p.out = k->out.data;
    plan_groups(&p, in, (uint64_t)ir_attr_reduce_axes(k->node));

    int64_t n_out = k->out.numel;
    int64_t *roff = NULL;
    if (p.dt == RLX_F32 && p.inner_reduced) {
        p.inner = p.rsz[p.nr - 1];
        roff = combo_offsets(p.nr - 1, p.rsz, p.rst, &p.n_roff);
        if (!roff) goto oom;
        p.roff = roff;
        rlx_parallel_for(k->pool, n_out, RLX_MAX(1, RED_GRAIN / p.count), red_f32_inner, &p);
    } else if (p.dt == RLX_F32) {
        /* The innermost group is kept, or there is none (a scalar input). */
        p.inner = p.nk > 0 ? p.ksz[p.nk - 1] : 1;
        p.n_chunks = (p.inner + RED_BLOCK - 1) / RED_BLOCK;
        if (p.nk == 0) {   /* keep red_f32_outer's "nk - 1 outer groups" meaningful */
            p.nk = 1;
            p.ksz[0] = 1;
            p.kst[0] = 1;
        }
        roff = combo_offsets(p.nr, p.rsz, p.rst, &p.n_roff);
        if (!roff) goto oom;
        p.roff = roff;
        int64_t tasks = (n_out / p.inner) * p.n_chunks;
        int64_t per_task = RLX_MIN(p.inner, RED_BLOCK) * p.count;
        rlx_parallel_for(k->pool, tasks, RLX_MAX(1, RED_GRAIN / per_task), red_f32_outer, &p);
    } else {
        roff = combo_offsets(p.nr, p.rsz, p.rst, &p.n_roff);
        if (!roff) goto oom;
        p.roff = roff;
        rlx_parallel_for(k->pool, n_out, RLX_MAX(1, RED_GRAIN / p.count), red_generic, &p);
    }
    free(roff);
    return RLX_OK;
oom:
    return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s '%s': out of memory for reduction offsets", op_name(k),
                    node_name(k));
}

/* ---------------------------------------------------------- argreduce */

typedef struct arg_plan {
    bool        is_max;
    rlx_dtype   dt;
    const void *x;
    int32_t    *out;
    int64_t     outer, n, inner, n_chunks;
} arg_plan;

/* NaN beats everything but an earlier NaN; ties keep the earlier index. */
#define ARG_BETTER(is_max, v, b) (((is_max) ? (v) > (b) : (v) < (b)) || ((v) != (v) && (b) == (b)))

static void arg_f32_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const arg_plan *p = ctx;
    for (int64_t r = begin; r < end; r++) {
        const float *x = (const float *)p->x + r * p->n;
        float b = x[0];
        int64_t bi = 0;
        for (int64_t i = 1; i < p->n && b == b; i++) {
            if (ARG_BETTER(p->is_max, x[i], b)) {
                b = x[i];
                bi = i;
            }
        }
        p->out[r] = (int32_t)bi;
    }
}

/* inner > 1: a block of columns at a time so every load is contiguous. */
static void arg_f32_cols(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const arg_plan *p = ctx;
    float best[ARG_BLOCK];
    int32_t bi[ARG_BLOCK];
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / p->n_chunks, c0 = (t % p->n_chunks) * ARG_BLOCK;
        int64_t nc = RLX_MIN(ARG_BLOCK, p->inner - c0);
        const float *x = (const float *)p->x + o * p->n * p->inner + c0;
        for (int64_t c = 0; c < nc; c++) {
            best[c] = x[c];
            bi[c] = 0;
        }
        for (int64_t i = 1; i < p->n; i++) {
            const float *row = x + i * p->inner;
            for (int64_t c = 0; c < nc; c++) {
                if (ARG_BETTER(p->is_max, row[c], best[c])) {
                    best[c] = row[c];
                    bi[c] = (int32_t)i;
                }
            }
        }
        for (int64_t c = 0; c < nc; c++) p->out[o * p->inner + c0 + c] = bi[c];
    }
}

static void arg_generic(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const arg_plan *p = ctx;
    bool is_int = rlx_dtype_is_int_like(p->dt);
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / p->inner, c = t % p->inner;
        int64_t base = o * p->n * p->inner + c, bi = 0;
        if (is_int) {
            int64_t b = rlx_load_as_i64(p->x, p->dt, base);
            for (int64_t i = 1; i < p->n; i++) {
                int64_t v = rlx_load_as_i64(p->x, p->dt, base + i * p->inner);
                if (p->is_max ? v > b : v < b) { b = v; bi = i; }
            }
        } else {
            double b = rlx_load_as_f64(p->x, p->dt, base);
            for (int64_t i = 1; i < p->n && b == b; i++) {
                double v = rlx_load_as_f64(p->x, p->dt, base + i * p->inner);
                if (ARG_BETTER(p->is_max, v, b)) { b = v; bi = i; }
            }
        }
        p->out[t] = (int32_t)bi;
    }
}

rlx_status cpu_argreduce(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    int64_t axis = ir_attr_argreduce_axis(k->node);
    if (k->n_in != 1 || k->out.dtype != RLX_I32 || axis < 0 || axis >= in->rank)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': bad axis %lld or output dtype", op_name(k), node_name(k),
                        (long long)axis);
    arg_plan p = {k->node->op == IR_OP_ARGMAX, in->dtype, in->data, k->out.data, 1, in->dims[axis], 1, 1};
    for (int d = 0; d < axis; d++) p.outer *= in->dims[d];
    for (int d = (int)axis + 1; d < in->rank; d++) p.inner *= in->dims[d];
    if (k->out.numel <= 0) return RLX_OK;
    char label[128];
    if (p.n <= 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: the reduced axis is empty", cpu_node_label(k->node, label, sizeof label));
    if (p.n > INT32_MAX)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s '%s': axis of %lld elements overflows i32 indices", op_name(k),
                        node_name(k), (long long)p.n);
    int64_t grain = RLX_MAX(1, RED_GRAIN / p.n);
    if (p.dt == RLX_F32 && p.inner == 1) {
        rlx_parallel_for(k->pool, p.outer, grain, arg_f32_rows, &p);
    } else if (p.dt == RLX_F32) {
        p.n_chunks = (p.inner + ARG_BLOCK - 1) / ARG_BLOCK;
        rlx_parallel_for(k->pool, p.outer * p.n_chunks, RLX_MAX(1, grain / ARG_BLOCK), arg_f32_cols, &p);
    } else {
        rlx_parallel_for(k->pool, p.outer * p.inner, grain, arg_generic, &p);
    }
    return RLX_OK;
}
