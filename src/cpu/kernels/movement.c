/*
 * movement.c — CPU kernels that move bytes without arithmetic: reshape (when
 * the planner could not alias it), transpose, slice, concat and expand.
 *
 * Every kernel works on raw bytes of rlx_dtype_size(dtype), so one code path
 * serves all dtypes. Shapes are simplified first (size-1 dims dropped, dims
 * that stay adjacent merged) so that the common cases turn into long memcpy
 * runs or a batch of cache-blocked 2-D transposes.
 */
/* GCC's -O2 vectorizes only loops that need no scalar epilogue; the dynamic
 * cost model lets it vectorize the fill and gather loops (clang does at -O2). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "cpu/cpu_kernel.h"

#include <stdio.h>
#include <string.h>

/* Below this many bytes a kernel runs inline: waking the pool costs more. */
#define MOVE_PARALLEL_BYTES ((int64_t)1 << 18)

/* Copies one element of esize bytes; fixed sizes let the compiler emit a
 * single load/store instead of a memcpy call. */
static inline void copy_elem(char *dst, const char *src, size_t esize)
{
    switch (esize) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, esize); break;
    }
}

/* Items per parallel chunk so that a chunk moves at least ~64 KiB. */
static int64_t chunk_grain(int64_t item_bytes)
{
    int64_t g = ((int64_t)1 << 16) / RLX_MAX(item_bytes, (int64_t)1);
    return RLX_MAX(g, (int64_t)1);
}

/* ---------------------------------------------------------------- reshape */

rlx_status cpu_reshape(const cpu_kernel_ctx *k)
{
    size_t bytes = (size_t)k->out.numel * rlx_dtype_size(k->out.dtype);
    if (bytes && k->out.data != k->in[0].data)
        memmove(k->out.data, k->in[0].data, bytes);
    return RLX_OK;
}

/* -------------------------------------------------------------- transpose */

/* A transpose after simplification: out dim i has size dims[i] and reads
 * the input with element stride istride[i]. */
typedef struct transpose_plan {
    int     rank;
    int64_t dims[IR_MAX_RANK];
    int64_t istride[IR_MAX_RANK];
    int64_t ostride[IR_MAX_RANK];
    int     inner;       /* out dim whose input stride is 1, or -1 */
    size_t  esize;
    const char *src;
    char       *dst;
} transpose_plan;

#define TR_TILE 32

/* Copies the 2-D plane spanned by out dims `inner` (input-contiguous) and
 * rank-1 (output-contiguous) in TR_TILE x TR_TILE tiles, so that both the
 * reads and the writes touch few cache lines per tile. */
static void transpose_plane(const transpose_plan *p, const char *src, char *dst)
{
    int last = p->rank - 1, a = p->inner;
    int64_t na = p->dims[a], nl = p->dims[last];
    int64_t isa = p->istride[a], isl = p->istride[last];
    int64_t osa = p->ostride[a];
    size_t es = p->esize;
    for (int64_t a0 = 0; a0 < na; a0 += TR_TILE) {
        int64_t a1 = RLX_MIN(na, a0 + TR_TILE);
        for (int64_t l0 = 0; l0 < nl; l0 += TR_TILE) {
            int64_t l1 = RLX_MIN(nl, l0 + TR_TILE);
            for (int64_t x = a0; x < a1; x++) {
                const char *s = src + (size_t)(x * isa) * es;
                char *d = dst + (size_t)(x * osa) * es;
                switch (es) {
                case 4:
                    for (int64_t l = l0; l < l1; l++)
                        memcpy(d + l * 4, s + (size_t)(l * isl) * 4, 4);
                    break;
                case 2:
                    for (int64_t l = l0; l < l1; l++)
                        memcpy(d + l * 2, s + (size_t)(l * isl) * 2, 2);
                    break;
                default:
                    for (int64_t l = l0; l < l1; l++)
                        copy_elem(d + (size_t)l * es, s + (size_t)(l * isl) * es, es);
                    break;
                }
            }
        }
    }
}

/* Runs [begin, end) of the outer index space: all out dims except the last
 * (and except `inner` when the plane path is used). */
static void transpose_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const transpose_plan *p = ctx;
    int last = p->rank - 1;
    size_t es = p->esize;
    int64_t idx[IR_MAX_RANK] = {0};
    /* decompose begin over the outer dims (all dims < last, skipping inner) */
    int64_t rem = begin;
    for (int d = last - 1; d >= 0; d--) {
        if (d == p->inner)
            continue;
        idx[d] = rem % p->dims[d];
        rem /= p->dims[d];
    }
    for (int64_t it = begin; it < end; it++) {
        int64_t ioff = 0, ooff = 0;
        for (int d = 0; d < last; d++) {
            if (d == p->inner)
                continue;
            ioff += idx[d] * p->istride[d];
            ooff += idx[d] * p->ostride[d];
        }
        const char *s = p->src + (size_t)ioff * es;
        char *dst = p->dst + (size_t)ooff * es;
        if (p->istride[last] == 1) {
            memcpy(dst, s, (size_t)p->dims[last] * es);
        } else if (p->inner >= 0) {
            transpose_plane(p, s, dst);
        } else {
            int64_t isl = p->istride[last];
            for (int64_t l = 0; l < p->dims[last]; l++)
                copy_elem(dst + (size_t)l * es, s + (size_t)(l * isl) * es, es);
        }
        for (int d = last - 1; d >= 0; d--) {
            if (d == p->inner)
                continue;
            if (++idx[d] < p->dims[d])
                break;
            idx[d] = 0;
        }
    }
}

rlx_status cpu_transpose(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    const int64_t *perm = ir_attr_transpose_perm_dims(k->node);
    int rank = in->rank;
    size_t es = rlx_dtype_size(in->dtype);
    if (k->out.numel == 0)
        return RLX_OK;

    int64_t istr[IR_MAX_RANK];
    cpu_dense_strides(rank, in->dims, istr);

    /* Out dims in order with their input strides; drop size-1 dims and merge
     * out dims i, i+1 when they are adjacent in the input as well. */
    transpose_plan p;
    memset(&p, 0, sizeof p);
    p.esize = es;
    p.src = in->data;
    p.dst = k->out.data;
    for (int i = 0; i < rank; i++) {
        int64_t n = in->dims[perm[i]], s = istr[perm[i]];
        if (n == 1)
            continue;
        if (p.rank > 0 && p.istride[p.rank - 1] == s * n) {
            p.dims[p.rank - 1] *= n;
            p.istride[p.rank - 1] = s;
        } else {
            p.dims[p.rank] = n;
            p.istride[p.rank] = s;
            p.rank++;
        }
    }
    if (p.rank == 0) {
        p.rank = 1;
        p.dims[0] = 1;
        p.istride[0] = 1;
    }
    cpu_dense_strides(p.rank, p.dims, p.ostride);
    int last = p.rank - 1;
    p.inner = -1;
    if (p.istride[last] != 1) {
        for (int d = 0; d < last; d++)
            if (p.istride[d] == 1)
                p.inner = d;
    }

    int64_t outer = 1;
    for (int d = 0; d < last; d++)
        if (d != p.inner)
            outer *= p.dims[d];
    int64_t per_item = k->out.numel / outer;
    int64_t total = k->out.numel * (int64_t)es;
    rlx_parallel_for(total >= MOVE_PARALLEL_BYTES ? k->pool : NULL, outer,
                     chunk_grain(per_item * (int64_t)es), transpose_range, &p);
    return RLX_OK;
}

/* ------------------------------------------------------------------ slice */

typedef struct slice_ctx {
    const char *src;
    char       *dst;
    int64_t     in_len, out_len, start, step;
    size_t      inner;   /* bytes of one step along the axis */
} slice_ctx;

static void slice_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const slice_ctx *c = ctx;
    for (int64_t o = begin; o < end; o++) {
        const char *s = c->src + (size_t)o * (size_t)c->in_len * c->inner
                        + (size_t)c->start * c->inner;
        char *d = c->dst + (size_t)o * (size_t)c->out_len * c->inner;
        if (c->step == 1) {
            memcpy(d, s, (size_t)c->out_len * c->inner);
        } else {
            for (int64_t t = 0; t < c->out_len; t++)
                memcpy(d + (size_t)t * c->inner, s + (size_t)(t * c->step) * c->inner, c->inner);
        }
    }
}

rlx_status cpu_slice(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    int axis = (int)ir_attr_slice_axis(k->node);
    int64_t start = ir_attr_slice_start(k->node), step = ir_attr_slice_step(k->node);
    int64_t len = k->out.dims[axis];
    if (k->out.numel == 0)
        return RLX_OK;
    /* The shape rule checked these; re-check so a bad attribute can never
     * turn into an out-of-bounds read. */
    if (step < 1 || start < 0 || start + (len - 1) * step >= in->dims[axis]) {
        char lb[160];
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: slice start %lld step %lld length %lld "
                        "does not fit axis %d of size %lld", cpu_node_label(k->node, lb, sizeof lb),
                        (long long)start, (long long)step, (long long)len, axis,
                        (long long)in->dims[axis]);
    }
    slice_ctx c;
    c.src = in->data;
    c.dst = k->out.data;
    c.in_len = in->dims[axis];
    c.out_len = len;
    c.start = start;
    c.step = step;
    c.inner = rlx_dtype_size(in->dtype);
    int64_t outer = 1;
    for (int d = 0; d < axis; d++)
        outer *= in->dims[d];
    for (int d = axis + 1; d < in->rank; d++)
        c.inner *= (size_t)in->dims[d];
    int64_t total = k->out.numel * (int64_t)rlx_dtype_size(in->dtype);
    rlx_parallel_for(total >= MOVE_PARALLEL_BYTES ? k->pool : NULL, outer,
                     chunk_grain(len * (int64_t)c.inner), slice_range, &c);
    return RLX_OK;
}

/* ----------------------------------------------------------------- concat */

typedef struct concat_ctx {
    int         n;
    const char *src[IR_MAX_INPUTS];
    size_t      chunk[IR_MAX_INPUTS];   /* bytes of input i per outer index */
    size_t      out_chunk;
    char       *dst;
} concat_ctx;

static void concat_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const concat_ctx *c = ctx;
    for (int64_t o = begin; o < end; o++) {
        char *d = c->dst + (size_t)o * c->out_chunk;
        for (int i = 0; i < c->n; i++) {
            memcpy(d, c->src[i] + (size_t)o * c->chunk[i], c->chunk[i]);
            d += c->chunk[i];
        }
    }
}

rlx_status cpu_concat(const cpu_kernel_ctx *k)
{
    int axis = (int)ir_attr_axis_op_axis(k->node);
    if (k->out.numel == 0)
        return RLX_OK;
    size_t inner = rlx_dtype_size(k->out.dtype);
    for (int d = axis + 1; d < k->out.rank; d++)
        inner *= (size_t)k->out.dims[d];
    int64_t outer = 1;
    for (int d = 0; d < axis; d++)
        outer *= k->out.dims[d];
    concat_ctx c;
    c.n = k->n_in;
    c.dst = k->out.data;
    c.out_chunk = (size_t)k->out.dims[axis] * inner;
    for (int i = 0; i < k->n_in; i++) {
        c.src[i] = k->in[i].data;
        c.chunk[i] = (size_t)k->in[i].dims[axis] * inner;
    }
    int64_t total = k->out.numel * (int64_t)rlx_dtype_size(k->out.dtype);
    rlx_parallel_for(total >= MOVE_PARALLEL_BYTES ? k->pool : NULL, outer,
                     chunk_grain((int64_t)c.out_chunk), concat_range, &c);
    return RLX_OK;
}

/* ----------------------------------------------------------------- expand */

typedef struct expand_ctx {
    int         rank;               /* simplified; last dim is the row */
    int64_t     dims[IR_MAX_RANK];
    int64_t     istride[IR_MAX_RANK];
    size_t      esize;
    const char *src;
    char       *dst;
} expand_ctx;

/* One output row per item: a memcpy when the row is contiguous in the input,
 * a fill with one element when the row is broadcast. */
static void expand_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const expand_ctx *c = ctx;
    int last = c->rank - 1;
    int64_t n = c->dims[last];
    size_t es = c->esize, row = (size_t)n * es;
    int64_t idx[IR_MAX_RANK] = {0};
    int64_t rem = begin;
    for (int d = last - 1; d >= 0; d--) {
        idx[d] = rem % c->dims[d];
        rem /= c->dims[d];
    }
    for (int64_t it = begin; it < end; it++) {
        int64_t ioff = 0;
        for (int d = 0; d < last; d++)
            ioff += idx[d] * c->istride[d];
        const char *s = c->src + (size_t)ioff * es;
        char *d = c->dst + (size_t)it * row;
        if (c->istride[last] == 1) {
            memcpy(d, s, row);
        } else if (es == 4) {
            uint32_t v;
            memcpy(&v, s, 4);
            uint32_t *d4 = (uint32_t *)(void *)d;
            for (int64_t j = 0; j < n; j++)
                d4[j] = v;
        } else {
            for (int64_t j = 0; j < n; j++)
                copy_elem(d + (size_t)j * es, s, es);
        }
        for (int dd = last - 1; dd >= 0; dd--) {
            if (++idx[dd] < c->dims[dd])
                break;
            idx[dd] = 0;
        }
    }
}

static rlx_status expand_into(const cpu_kernel_ctx *k);

/* assign(param, value): the planner made out the param's memory; value is
 * broadcast into it (expand's copy, reading in[1]). */
rlx_status cpu_assign(const cpu_kernel_ctx *k)
{
    cpu_kernel_ctx e = *k;
    e.in[0] = k->in[1];
    e.n_in = 1;
    if (e.in[0].data == e.out.data) return RLX_OK;   /* assign(p, p) */
    return expand_into(&e);
}

rlx_status cpu_expand(const cpu_kernel_ctx *k) { return expand_into(k); }

static rlx_status expand_into(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    if (k->out.numel == 0)
        return RLX_OK;
    int64_t bstr[IR_MAX_RANK];
    cpu_broadcast_strides(in, &k->out, bstr);

    /* Merge adjacent out dims that are both broadcast or both contiguous
     * with each other in the input, so rows get as long as possible. */
    expand_ctx c;
    memset(&c, 0, sizeof c);
    c.esize = rlx_dtype_size(in->dtype);
    c.src = in->data;
    c.dst = k->out.data;
    for (int i = 0; i < k->out.rank; i++) {
        int64_t n = k->out.dims[i], s = bstr[i];
        if (n == 1)
            continue;
        if (c.rank > 0 && ((s == 0 && c.istride[c.rank - 1] == 0) ||
                           (s != 0 && c.istride[c.rank - 1] == s * n))) {
            c.dims[c.rank - 1] *= n;
            c.istride[c.rank - 1] = s;
        } else {
            c.dims[c.rank] = n;
            c.istride[c.rank] = s;
            c.rank++;
        }
    }
    if (c.rank == 0) {
        c.rank = 1;
        c.dims[0] = 1;
        c.istride[0] = 1;
    }
    int64_t rows = k->out.numel / c.dims[c.rank - 1];
    int64_t total = k->out.numel * (int64_t)c.esize;
    rlx_parallel_for(total >= MOVE_PARALLEL_BYTES ? k->pool : NULL, rows,
                     chunk_grain(c.dims[c.rank - 1] * (int64_t)c.esize), expand_range, &c);
    return RLX_OK;
}
