/*
 * rearrange.c — CPU kernel for FLIP, DEPTH_TO_SPACE and SPACE_TO_DEPTH: the
 * strided copy of ir/rearrange_geom.h (the output walked in order, the
 * source through per-dim strides, negative on flipped axes), any dtype by
 * its element size, rows split over threads.
 */
#include "cpu/cpu_kernel.h"
#include "ir/rearrange_geom.h"

#include <string.h>

typedef struct re_job {
    const char *src;
    char *dst;
    size_t es;
    ir_rearrange p;
    int64_t row;   /* elements of the innermost dim */
} re_job;

static void re_rows(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const re_job *j = arg;
    int r = j->p.rank, last = r - 1;
    int64_t sl = j->p.stride[last];
    for (int64_t row = begin; row < end; row++) {
        int64_t rem = row, so = j->p.offset;
        for (int d = last - 1; d >= 0; d--) {
            int64_t i = rem % j->p.dims[d];
            rem /= j->p.dims[d];
            so += i * j->p.stride[d];
        }
        char *dst = j->dst + (size_t)(row * j->row) * j->es;
        if (sl == 1) {
            memcpy(dst, j->src + (size_t)so * j->es, (size_t)j->row * j->es);
            continue;
        }
        for (int64_t e = 0; e < j->row; e++) memcpy(dst + (size_t)e * j->es, j->src + (size_t)(so + e * sl) * j->es, j->es);
    }
}

rlx_status cpu_rearrange(const cpu_kernel_ctx *k) {
    re_job j = {.src = k->in[0].data, .dst = k->out.data, .es = rlx_dtype_size(k->in[0].dtype)};
    char lb[160];
    if (j.es == 0) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no element size", cpu_node_label(k->node, lb, sizeof lb),
                                   rlx_dtype_name(k->in[0].dtype));
    if (k->out.numel == 0) return RLX_OK;
    ir_rearrange_plan(k->node, k->in[0].rank, k->in[0].dims, &j.p);
    if (j.p.rank == 0) {   /* a scalar */
        memcpy(j.dst, j.src, j.es);
        return RLX_OK;
    }
    j.row = j.p.dims[j.p.rank - 1];
    int64_t rows = k->out.numel / j.row;
    rlx_parallel_for(k->out.numel * (int64_t)j.es >= (1 << 16) ? k->pool : NULL, rows, 64, re_rows, &j);
    return RLX_OK;
}
