/*
 * topk.c — CPU kernel for TOPK_VALUES and TOPK_INDICES: the k largest along
 * the last axis (attribute k), sorted descending.
 *
 * Order: larger value first; equal values by lower index; NaN ranks above
 * every number (including +inf), NaNs among themselves by lower index. -0 and
 * +0 are equal. This is one strict total order, so values and indices of the
 * same input always agree.
 *
 * Each row keeps a heap of its k best seen so far with the worst at the root,
 * so most elements cost one comparison against the root: O(n + k log k) for
 * typical data, O(n log k) at worst. Values are copied bit for bit from the
 * input, so every dtype is exact; keys compare as double (i64 beyond 2^53 may
 * tie where it should not).
 */
#include "cpu/cpu_kernel.h"
#include <stdlib.h>
#include <string.h>

#define TOPK_GRAIN 16384

typedef struct topk_item {
    double  v;
    int64_t i;
} topk_item;

typedef struct topk_plan {
    bool        want_indices;
    rlx_dtype   dt;
    size_t      esize;
    const void *x;
    void       *out;
    int64_t     n, k;
    topk_item  *scratch;   /* k items per worker */
} topk_plan;

static bool better(topk_item a, topk_item b)
{
    bool an = a.v != a.v, bn = b.v != b.v;
    if (an || bn) return an && bn ? a.i < b.i : an;
    return a.v > b.v || (a.v == b.v && a.i < b.i);
}

/* Heap with the worst item at the root: no child is worse than its parent. */
static void sift_down(topk_item *h, int64_t size, int64_t at)
{
    for (;;) {
        int64_t l = 2 * at + 1, w = at;
        if (l < size && better(h[w], h[l])) w = l;
        if (l + 1 < size && better(h[w], h[l + 1])) w = l + 1;
        if (w == at) return;
        topk_item t = h[at];
        h[at] = h[w];
        h[w] = t;
        at = w;
    }
}

static void sift_up(topk_item *h, int64_t at)
{
    while (at > 0) {
        int64_t parent = (at - 1) / 2;
        if (!better(h[parent], h[at])) return;
        topk_item t = h[at];
        h[at] = h[parent];
        h[parent] = t;
        at = parent;
    }
}

static double key(const topk_plan *p, const void *row, int64_t i)
{
    if (p->dt == RLX_F32) return ((const float *)row)[i];
    return rlx_load_as_f64(row, p->dt, i);
}

static void topk_rows(void *ctx, int64_t begin, int64_t end, int worker)
{
    const topk_plan *p = ctx;
    topk_item *h = p->scratch + (int64_t)worker * p->k;
    int64_t n = p->n, k = p->k;
    for (int64_t r = begin; r < end; r++) {
        const void *row = (const char *)p->x + (size_t)(r * n) * p->esize;
        int64_t size = 0;
        for (int64_t i = 0; i < n; i++) {
            topk_item it = {key(p, row, i), i};
            /* Fast reject: a number below the worst kept one (false for NaNs). */
            if (size == k && it.v < h[0].v) continue;
            if (size < k) {
                h[size] = it;
                sift_up(h, size++);
            } else if (better(it, h[0])) {
                h[0] = it;
                sift_down(h, size, 0);
            }
        }
        /* Pop the worst into the last free slot: the heap array ends sorted best first. */
        for (int64_t last = size - 1; last > 0; last--) {
            topk_item t = h[0];
            h[0] = h[last];
            h[last] = t;
            sift_down(h, last, 0);
        }
        if (p->want_indices) {
            int32_t *y = (int32_t *)p->out + r * k;
            for (int64_t j = 0; j < k; j++) y[j] = (int32_t)h[j].i;
        } else {
            char *y = (char *)p->out + (size_t)(r * k) * p->esize;
            for (int64_t j = 0; j < k; j++)
                memcpy(y + (size_t)j * p->esize, (const char *)row + (size_t)h[j].i * p->esize, p->esize);
        }
    }
}

rlx_status cpu_topk(const cpu_kernel_ctx *k)
{
    const cpu_tensor *in = &k->in[0];
    const char *name = k->node->name ? k->node->name : "";
    bool want_indices = k->node->op == IR_OP_TOPK_INDICES;
    const char *what = want_indices ? "topk_indices" : "topk_values";
    int64_t kk = ir_attr_topk_k(k->node);
    if (k->n_in != 1 || in->rank < 1)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': needs one input of rank >= 1", what, name);
    if (k->out.dtype != (want_indices ? RLX_I32 : in->dtype))
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': output dtype %s is wrong", what, name,
                        rlx_dtype_name(k->out.dtype));
    int64_t n = in->dims[in->rank - 1];
    if (kk < 0 || kk > n)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s '%s': k = %lld is outside [0, %lld]", what, name,
                        (long long)kk, (long long)n);
    if (want_indices && n > INT32_MAX)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s '%s': axis of %lld elements overflows i32 indices", what, name,
                        (long long)n);
    size_t esize = rlx_dtype_size(in->dtype);
    if (esize == 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s '%s': unknown dtype %d", what, name, (int)in->dtype);
    if (kk == 0 || in->numel == 0) return RLX_OK;

    int workers = rlx_threadpool_size(k->pool);
    topk_item *scratch = malloc((size_t)workers * (size_t)kk * sizeof *scratch);
    if (!scratch)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s '%s': out of memory for %lld-item heaps", what, name,
                        (long long)kk);
    topk_plan p = {want_indices, in->dtype, esize, in->data, k->out.data, n, kk, scratch};
    rlx_parallel_for(k->pool, in->numel / n, RLX_MAX(1, TOPK_GRAIN / n), topk_rows, &p);
    free(scratch);
    return RLX_OK;
}
