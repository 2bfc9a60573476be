/*
 * gather.c — CPU kernels that index one tensor with another: gather_rows
 * (embedding lookup, table[ids]) and gather (torch.gather along an axis).
 *
 * Ids come from user data, so every id is range-checked before any read; a
 * bad id is an RLX_STATUS_INVALID_ARGUMENT error naming the id and its
 * position. Checks run on the calling thread before the parallel copy,
 * because the error message is kept per thread.
 */
#include "cpu/cpu_kernel.h"
#include "quant/quant.h"

#include <stdio.h>
#include <string.h>

static inline int64_t load_id(const void *ids, rlx_dtype dt, int64_t i)
{
    return dt == RLX_I64 ? ((const int64_t *)ids)[i] : (int64_t)((const int32_t *)ids)[i];
}

/* Returns the position of the first id outside [0, limit), or -1. */
static int64_t find_bad_id(const void *ids, rlx_dtype dt, int64_t n, int64_t limit)
{
    if (dt == RLX_I64) {
        const int64_t *p = ids;
        for (int64_t i = 0; i < n; i++)
            if ((uint64_t)p[i] >= (uint64_t)limit)
                return i;
    } else {
        const int32_t *p = ids;
        for (int64_t i = 0; i < n; i++)
            if (p[i] < 0 || (int64_t)p[i] >= limit)
                return i;
    }
    return -1;
}

static rlx_status check_ids(const cpu_kernel_ctx *k, const cpu_tensor *ids, int64_t limit)
{
    char lb[160];
    if (ids->dtype != RLX_I32 && ids->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: ids must be i32 or i64, got %s",
                        cpu_node_label(k->node, lb, sizeof lb), rlx_dtype_name(ids->dtype));
    int64_t bad = find_bad_id(ids->data, ids->dtype, ids->numel, limit);
    if (bad >= 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: id %lld at position %lld is outside [0, %lld)",
                        cpu_node_label(k->node, lb, sizeof lb),
                        (long long)load_id(ids->data, ids->dtype, bad), (long long)bad,
                        (long long)limit);
    return RLX_OK;
}

/* ------------------------------------------------------------ gather_rows */

typedef struct rows_ctx {
    const char *table;
    const void *ids;
    rlx_dtype   id_dtype;
    size_t      row;      /* bytes */
    char       *dst;
} rows_ctx;

static void rows_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const rows_ctx *c = ctx;
    for (int64_t i = begin; i < end; i++)
        memcpy(c->dst + (size_t)i * c->row,
               c->table + (size_t)load_id(c->ids, c->id_dtype, i) * c->row, c->row);
}

/* A block-quantized table [V, D]: each picked row is decoded to f32. */
static rlx_status gather_quantized_rows(const cpu_kernel_ctx *k)
{
    const cpu_tensor *table = &k->in[0], *ids = &k->in[1];
    int64_t D = table->dims[1];
    size_t row_bytes = rlx_tensor_bytes(table->dtype, 1, &D);
    uint32_t qt = quant_type_of_dtype(table->dtype);
    float *out = k->out.data;
    for (int64_t i = 0; i < ids->numel; i++) {
        int64_t id = load_id(ids->data, ids->dtype, i);
        rlx_status st = quant_dequantize_row(qt, (const char *)table->data + (size_t)id * row_bytes, out + i * D, D);
        if (st != RLX_OK)
            return rlx_fail(st, "gather_rows: cannot decode %s rows", rlx_dtype_name(table->dtype));
    }
    return RLX_OK;
}

rlx_status cpu_gather_rows(const cpu_kernel_ctx *k)
{
    const cpu_tensor *table = &k->in[0], *ids = &k->in[1];
    rlx_status st = check_ids(k, ids, table->dims[0]);
    if (st != RLX_OK || k->out.numel == 0)
        return st;
    if (rlx_dtype_is_quantized(table->dtype))
        return gather_quantized_rows(k);
    rows_ctx c;
    c.table = table->data;
    c.ids = ids->data;
    c.id_dtype = ids->dtype;
    c.row = rlx_dtype_size(table->dtype);
    for (int d = 1; d < table->rank; d++)
        c.row *= (size_t)table->dims[d];
    c.dst = k->out.data;
    int64_t grain = RLX_MAX((int64_t)1, ((int64_t)1 << 16) / (int64_t)RLX_MAX(c.row, (size_t)1));
    int64_t total = (int64_t)c.row * ids->numel;
    rlx_parallel_for(total >= ((int64_t)1 << 18) ? k->pool : NULL, ids->numel, grain,
                     rows_range, &c);
    return RLX_OK;
}

/* ----------------------------------------------------------------- gather */

typedef struct gather_ctx {
    int         rank, axis;
    int64_t     dims[IR_MAX_RANK];     /* index/out dims */
    int64_t     xstride[IR_MAX_RANK];  /* x element strides */
    const char *x;
    const void *index;
    rlx_dtype   idx_dtype;
    size_t      esize;
    char       *dst;
} gather_ctx;

/* One item is one row along the last out dim. */
static void gather_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const gather_ctx *c = ctx;
    int last = c->rank - 1;
    int64_t n = c->dims[last];
    size_t es = c->esize;
    int64_t idx[IR_MAX_RANK] = {0};
    int64_t rem = begin;
    for (int d = last - 1; d >= 0; d--) {
        idx[d] = rem % c->dims[d];
        rem /= c->dims[d];
    }
    for (int64_t it = begin; it < end; it++) {
        int64_t base = 0;
        for (int d = 0; d < last; d++)
            if (d != c->axis)
                base += idx[d] * c->xstride[d];
        int64_t axis_stride = c->xstride[c->axis];
        for (int64_t j = 0; j < n; j++) {
            int64_t o = it * n + j;
            int64_t id = load_id(c->index, c->idx_dtype, o);
            int64_t off = base + id * axis_stride;
            if (c->axis != last)
                off += j * c->xstride[last];
            memcpy(c->dst + (size_t)o * es, c->x + (size_t)off * es, es);
        }
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < c->dims[d])
                break;
            idx[d] = 0;
        }
    }
}

rlx_status cpu_gather(const cpu_kernel_ctx *k)
{
    const cpu_tensor *x = &k->in[0], *index = &k->in[1];
    int axis = (int)ir_attr_axis_op_axis(k->node);
    rlx_status st = check_ids(k, index, x->dims[axis]);
    if (st != RLX_OK || k->out.numel == 0)
        return st;
    if (x->rank == 0) {   /* rank 0: the only valid index is 0 */
        memcpy(k->out.data, x->data, rlx_dtype_size(x->dtype));
        return RLX_OK;
    }
    gather_ctx c;
    c.rank = index->rank;
    c.axis = axis;
    memcpy(c.dims, index->dims, sizeof c.dims);
    cpu_dense_strides(x->rank, x->dims, c.xstride);
    c.x = x->data;
    c.index = index->data;
    c.idx_dtype = index->dtype;
    c.esize = rlx_dtype_size(x->dtype);
    c.dst = k->out.data;
    int64_t rows = index->numel / index->dims[index->rank - 1];
    rlx_parallel_for(index->numel >= ((int64_t)1 << 16) ? k->pool : NULL, rows,
                     RLX_MAX((int64_t)1, ((int64_t)1 << 12) / index->dims[index->rank - 1]),
                     gather_range, &c);
    return RLX_OK;
}
