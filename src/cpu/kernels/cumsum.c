/*
 * cumsum.c — CPU kernel for CUMSUM: inclusive prefix sum along its axis attribute.
 *
 * f32 and the other floats accumulate in double and round each output once,
 * so long scans do not drift. Integers accumulate in int64 and wrap to their
 * width (the same as a native running sum in that width).
 * When the axis is not the last, a block of columns is scanned together so the
 * loads stay contiguous.
 */
/* GCC's -O2 vectorizes only loops that need no scalar epilogue or alias check,
 * which excludes nearly every kernel loop here; the dynamic cost model lets it
 * vectorize them (clang does so at -O2 already). no-trapping-math lets float
 * selects (clamp, relu, max) become blends; results are unchanged. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
#include "cpu/cpu_kernel.h"

#define CS_GRAIN 16384
#define CS_BLOCK 256

typedef struct cs_plan {
    rlx_dtype   dt;
    const void *x;
    void       *out;
    int64_t     outer, n, inner, n_chunks;
} cs_plan;

static void cs_f32_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const cs_plan *p = ctx;
    for (int64_t r = begin; r < end; r++) {
        const float *x = (const float *)p->x + r * p->n;
        float *y = (float *)p->out + r * p->n;
        double s = 0;
        for (int64_t i = 0; i < p->n; i++) {
            s += x[i];
            y[i] = (float)s;
        }
    }
}

static void cs_f32_cols(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const cs_plan *p = ctx;
    double acc[CS_BLOCK];
    for (int64_t t = begin; t < end; t++) {
        int64_t o = t / p->n_chunks, c0 = (t % p->n_chunks) * CS_BLOCK;
        int64_t nc = RLX_MIN(CS_BLOCK, p->inner - c0);
        const float *x = (const float *)p->x + o * p->n * p->inner + c0;
        float *y = (float *)p->out + o * p->n * p->inner + c0;
        for (int64_t c = 0; c < nc; c++) acc[c] = 0;
        for (int64_t i = 0; i < p->n; i++) {
            for (int64_t c = 0; c < nc; c++) {
                acc[c] += x[i * p->inner + c];
                y[i * p->inner + c] = (float)acc[c];
            }
        }
    }
}

static void cs_generic(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const cs_plan *p = ctx;
    bool is_int = rlx_dtype_is_int_like(p->dt);
    for (int64_t t = begin; t < end; t++) {
        int64_t base = (t / p->inner) * p->n * p->inner + t % p->inner;
        uint64_t si = 0;
        double sf = 0;
        for (int64_t i = 0; i < p->n; i++) {
            int64_t j = base + i * p->inner;
            if (is_int) {
                si += (uint64_t)rlx_load_as_i64(p->x, p->dt, j);
                rlx_store_from_i64(p->out, p->dt, j, (int64_t)si);
            } else {
                sf += rlx_load_as_f64(p->x, p->dt, j);
                rlx_store_from_f64(p->out, p->dt, j, sf);
            }
        }
    }
}

rlx_status cpu_cumsum(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    const char *name = k->node->name ? k->node->name : "";
    int64_t axis = ir_attr_axis_op_axis(k->node);
    if (k->n_in != 1 || in->dtype != k->out.dtype || axis < 0 || axis >= in->rank)
        return rlx_fail(RLX_STATUS_INTERNAL, "cumsum '%s': bad axis %lld or dtypes", name, (long long)axis);
    if ((unsigned)in->dtype >= RLX_DTYPE_COUNT)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "cumsum '%s': unknown dtype %d", name, (int)in->dtype);
    if (k->out.numel <= 0) return RLX_OK;
    cs_plan p = {in->dtype, in->data, k->out.data, 1, in->dims[axis], 1, 1};
    for (int d = 0; d < axis; d++) p.outer *= in->dims[d];
    for (int d = (int)axis + 1; d < in->rank; d++) p.inner *= in->dims[d];
    int64_t grain = RLX_MAX(1, CS_GRAIN / p.n);
    if (p.dt == RLX_F32 && p.inner == 1) {
        rlx_parallel_for(k->pool, p.outer, grain, cs_f32_rows, &p);
    } else if (p.dt == RLX_F32) {
        p.n_chunks = (p.inner + CS_BLOCK - 1) / CS_BLOCK;
        rlx_parallel_for(k->pool, p.outer * p.n_chunks, RLX_MAX(1, grain / CS_BLOCK), cs_f32_cols, &p);
    } else {
        rlx_parallel_for(k->pool, p.outer * p.inner, grain, cs_generic, &p);
    }
    return RLX_OK;
}
