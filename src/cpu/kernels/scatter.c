/*
 * scatter.c — CPU kernels that add one tensor into a copy of another at
 * indexed places: scatter_add_rows (gather_rows' backward: rows added into a
 * table) and scatter_add (torch.scatter_add along an axis, gather's
 * backward).
 *
 * Indices come from data, so all are range-checked before anything is
 * written, on the calling thread (the error message is per thread). Each
 * output element sums its contributions in index order, whatever the thread
 * count: scatter_add_rows splits the work by columns, never by ids, so the
 * result is bit-identical run to run.
 */
#include "cpu/cpu_kernel.h"

#include <string.h>

static inline int64_t load_index(const void *p, rlx_dtype dt, int64_t i)
{
    return dt == RLX_I64 ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

static rlx_status check_indices(const cpu_kernel_ctx *k, const cpu_tensor *idx, int64_t limit, const char *what)
{
    char lb[160];
    if (idx->dtype != RLX_I32 && idx->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s must be i32 or i64, got %s", cpu_node_label(k->node, lb, sizeof lb),
                        what, rlx_dtype_name(idx->dtype));
    for (int64_t i = 0; i < idx->numel; i++) {
        int64_t v = load_index(idx->data, idx->dtype, i);
        if (v < 0 || v >= limit)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: %s %lld at position %lld is outside [0, %lld)",
                            cpu_node_label(k->node, lb, sizeof lb), what, (long long)v, (long long)i, (long long)limit);
    }
    return RLX_OK;
}

static void copy_base(const cpu_kernel_ctx *k)
{
    if (k->out.data != k->in[0].data)
        memcpy(k->out.data, k->in[0].data, rlx_tensor_bytes(k->out.dtype, k->out.rank, k->out.dims));
}

/* ------------------------------------------------------ scatter_add_rows */

typedef struct rows_ctx {
    const cpu_tensor *ids, *rows;
    void             *out;
    rlx_dtype         dt;
    int64_t           width;   /* elements of one row */
} rows_ctx;

/* Items are columns: every id's row adds its column [begin, end) in id order. */
static void rows_cols(void *p, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const rows_ctx *c = p;
    int64_t W = c->width;
    for (int64_t i = 0; i < c->ids->numel; i++) {
        int64_t r = load_index(c->ids->data, c->ids->dtype, i);
        if (c->dt == RLX_F32) {
            float *dst = (float *)c->out + r * W;
            const float *src = (const float *)c->rows->data + i * W;
            for (int64_t j = begin; j < end; j++) dst[j] += src[j];
        } else {
            for (int64_t j = begin; j < end; j++) {
                int64_t o = r * W + j;
                double v = rlx_load_as_f64(c->out, c->dt, o) + rlx_load_as_f64(c->rows->data, c->dt, i * W + j);
                rlx_store_from_f64(c->out, c->dt, o, v);
            }
        }
    }
}

rlx_status cpu_scatter_add_rows(const cpu_kernel_ctx *k)
{
    const cpu_tensor *base = &k->in[0], *ids = &k->in[1], *rows = &k->in[2];
    rlx_status st = check_indices(k, ids, base->dims[0], "id");
    if (st != RLX_OK) return st;
    copy_base(k);
    rows_ctx c = {ids, rows, k->out.data, k->out.dtype, 1};
    for (int d = 1; d < base->rank; d++) c.width *= base->dims[d];
    if (c.width == 0 || ids->numel == 0) return RLX_OK;
    int64_t grain = RLX_MAX((int64_t)64, c.width / 64);
    rlx_parallel_for(c.width * ids->numel >= ((int64_t)1 << 16) ? k->pool : NULL, c.width, grain, rows_cols, &c);
    return RLX_OK;
}

/* ------------------------------------------------------------ scatter_add */

rlx_status cpu_scatter_add(const cpu_kernel_ctx *k)
{
    const cpu_tensor *base = &k->in[0], *idx = &k->in[1], *src = &k->in[2];
    int axis = (int)ir_attr_axis_op_axis(k->node), rank = base->rank;
    rlx_status st = check_indices(k, idx, base->dims[axis], "index");
    if (st != RLX_OK) return st;
    copy_base(k);
    int64_t bstride[IR_MAX_RANK];
    cpu_dense_strides(rank, base->dims, bstride);
    int64_t pos[IR_MAX_RANK] = {0};
    rlx_dtype dt = k->out.dtype;
    for (int64_t i = 0; i < idx->numel; i++) {
        int64_t o = 0;
        for (int d = 0; d < rank; d++)
            o += (d == axis ? load_index(idx->data, idx->dtype, i) : pos[d]) * bstride[d];
        if (dt == RLX_F32) ((float *)k->out.data)[o] += ((const float *)src->data)[i];
        else rlx_store_from_f64(k->out.data, dt, o, rlx_load_as_f64(k->out.data, dt, o) + rlx_load_as_f64(src->data, dt, i));
        for (int d = rank - 1; d >= 0; d--) {   /* next index position, row-major */
            if (++pos[d] < idx->dims[d]) break;
            pos[d] = 0;
        }
    }
    return RLX_OK;
}
