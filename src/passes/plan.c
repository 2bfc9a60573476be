/*
 * plan.c — memory planning of a specialized graph into one arena.
 *
 * 1. Storage: params and constants stay where they are; a reshape, a slice
 *    that is contiguous (step 1, all outer dims 1), or a transpose that only
 *    moves size-1 dims aliases its source.
 * 2. Liveness over the topological order: a storage root lives from its
 *    definition to the last use of it or of any view of it. Inputs and
 *    outputs are pinned for the whole run.
 * 3. Placement: largest first; each tensor takes the best-fitting gap (the
 *    smallest that fits) among tensors whose lifetimes overlap; 64-byte
 *    aligned.
 */
#include "passes/passes.h"
#include <stdlib.h>
#include <string.h>

static int64_t align_up(int64_t v) { return (v + PLAN_ALIGN - 1) / PLAN_ALIGN * PLAN_ALIGN; }

static bool slice_is_contiguous(const ir_graph *g, const ir_node *n, int64_t *byte_offset) {
    const ir_node *x = &g->nodes[n->in[0]];
    int axis = (int)ir_attr_slice_axis(n);
    if (ir_attr_slice_step(n) != 1) return false;
    for (int i = 0; i < axis; i++) if (x->shape.d[i].k != 1) return false;
    int64_t inner = 1;
    for (int i = axis + 1; i < x->shape.rank; i++) inner *= x->shape.d[i].k;
    *byte_offset = ir_attr_slice_start(n) * inner * (int64_t)rlx_dtype_size(n->dtype);
    return true;
}

/* A transpose that only moves size-1 dims keeps the bytes in the same order
 * (decode's [1,1,H,D] -> [1,H,1,D]): it can alias its source. */
static bool transpose_is_identity_layout(const ir_graph *g, const ir_node *n) {
    const ir_shape *x = &g->nodes[n->in[0]].shape;
    int64_t last = -1;
    for (int i = 0; i < x->rank; i++) {
        int64_t src = ir_attr_transpose_perm(n, i);
        if (x->d[src].k == 1) continue;
        if (src < last) return false;
        last = src;
    }
    return true;
}

typedef struct placed { int64_t offset, bytes; int32_t first, last; } placed;

static int cmp_size_desc(const void *a, const void *b, void *ctx) {
    const plan_entry *e = ctx;
    int32_t ia = *(const int32_t *)a, ib = *(const int32_t *)b;
    if (e[ia].bytes != e[ib].bytes) return e[ia].bytes > e[ib].bytes ? -1 : 1;
    return ia - ib;
}

static int cmp_offset(const void *a, const void *b) {
    const placed *pa = a, *pb = b;
    return pa->offset < pb->offset ? -1 : pa->offset > pb->offset;
}

static rlx_status plan_arena(const ir_graph *g, mem_plan *plan, bool pin_all) {
    memset(plan, 0, sizeof *plan);
    int32_t n = g->n_nodes;
    plan->n = n;
    plan->entries = calloc((size_t)RLX_MAX(n, 1), sizeof *plan->entries);
    int32_t *order = malloc((size_t)RLX_MAX(n, 1) * sizeof *order);
    placed *done = malloc((size_t)RLX_MAX(n, 1) * sizeof *done);
    placed *conflicts = malloc((size_t)RLX_MAX(n, 1) * sizeof *conflicts);
    if (!plan->entries || !order || !done || !conflicts) {
        free(order); free(done); free(conflicts); plan_free(plan);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "plan: out of memory");
    }
    plan_entry *e = plan->entries;

    /* 1. storage and sizes */
    for (int32_t i = 0; i < n; i++) {
        const ir_node *node = &g->nodes[i];
        e[i].bytes = ir_node_bytes(node);
        e[i].first = e[i].last = i;
        e[i].base = i;
        int64_t view_offset = 0;
        bool view = node->op == IR_OP_RESHAPE ||
                    (node->op == IR_OP_SLICE && slice_is_contiguous(g, node, &view_offset)) ||
                    (node->op == IR_OP_TRANSPOSE && transpose_is_identity_layout(g, node));
        if (ir_writes_param(node)) {   /* in place: the result is the param (a cache, optimizer state) */
            const plan_entry *src = &e[node->in[0]];
            e[i].storage = src->storage;
            e[i].base = src->base;
            e[i].offset = src->offset;
        } else if (node->op == IR_OP_PARAM) e[i].storage = PLAN_PARAM;
        else if (node->op == IR_OP_CONST) e[i].storage = PLAN_CONST;
        else if (view) {
            const plan_entry *src = &e[node->in[0]];
            e[i].storage = src->storage;
            e[i].base = src->base;
            e[i].offset = src->offset + view_offset;   /* relative to the root for now */
            e[i].is_view = true;
        }
    }
    /* 2. liveness of arena roots */
    for (int32_t i = 0; i < n; i++) {
        const ir_node *node = &g->nodes[i];
        for (int j = 0; j < node->n_in; j++) {
            plan_entry *root = &e[e[node->in[j]].base];
            if (root->last < i) root->last = i;
        }
        if (node->op == IR_OP_INPUT) e[i].first = 0;
    }
    for (int32_t i = 0; i < n; i++)
        if (g->nodes[i].op == IR_OP_INPUT) e[e[i].base].last = n;
    for (int32_t i = 0; i < g->n_outputs; i++) e[e[g->outputs[i].node].base].last = n;
    if (pin_all)
        for (int32_t i = 0; i < n; i++) {
            e[i].first = 0;
            e[i].last = n;
        }

    /* 3. placement of arena roots, largest first */
    int32_t n_roots = 0;
    for (int32_t i = 0; i < n; i++) {
        if (e[i].storage != PLAN_ARENA || e[i].is_view) continue;
        plan->tensor_bytes += (size_t)align_up(e[i].bytes);
        if (e[i].bytes > 0) order[n_roots++] = i;
    }
    qsort_r(order, (size_t)n_roots, sizeof *order, cmp_size_desc, e);
    int32_t n_done = 0;
    int64_t arena = 0;
    for (int32_t r = 0; r < n_roots; r++) {
        plan_entry *t = &e[order[r]];
        int32_t nc = 0;
        for (int32_t k = 0; k < n_done; k++)
            if (done[k].first <= t->last && t->first <= done[k].last) conflicts[nc++] = done[k];
        qsort(conflicts, (size_t)nc, sizeof *conflicts, cmp_offset);
        int64_t need = align_up(t->bytes), best = -1, best_gap = INT64_MAX, cursor = 0;
        for (int32_t k = 0; k < nc; k++) {
            int64_t gap = conflicts[k].offset - cursor;
            if (gap >= need && gap < best_gap) { best = cursor; best_gap = gap; }
            int64_t end = conflicts[k].offset + align_up(conflicts[k].bytes);
            if (end > cursor) cursor = end;
        }
        if (best < 0) best = cursor;
        int64_t top;
        /* Each tensor is <= 2^51 bytes (IR_MAX_NUMEL), but thousands live at
         * once could still pass int64: no memory has that, so it is OOM. */
        if (__builtin_add_overflow(best, need, &top) || (uint64_t)top > SIZE_MAX / 2) {   /* 2nd: 32-bit hosts */
            free(order); free(done); free(conflicts); plan_free(plan);
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "plan: the tensors live at once need more bytes than this host can address");
        }
        t->offset = best;
        done[n_done++] = (placed){best, t->bytes, t->first, t->last};
        if (top > arena) arena = top;
    }
    /* views: offset relative to their root becomes absolute */
    for (int32_t i = 0; i < n; i++) {
        if (!e[i].is_view) continue;
        const plan_entry *root = &e[e[i].base];
        if (e[i].storage == PLAN_ARENA) e[i].offset += root->offset;
        e[i].first = root->first;
        e[i].last = root->last;
    }
    plan->arena_bytes = (size_t)arena;
    free(order);
    free(done);
    free(conflicts);
    return RLX_OK;
}

void plan_free(mem_plan *plan) {
    free(plan->entries);
    memset(plan, 0, sizeof *plan);
}

rlx_status plan_validate(const ir_graph *g, const mem_plan *plan) {
    const plan_entry *e = plan->entries;
    char la[128], lb[128];
    for (int32_t i = 0; i < plan->n; i++) {
        if (e[i].storage != PLAN_ARENA || e[i].bytes == 0) continue;
        if (e[i].offset < 0 || (size_t)(e[i].offset + e[i].bytes) > plan->arena_bytes)
            return rlx_fail(RLX_STATUS_INTERNAL, "plan: %s [%lld, +%lld) is outside the arena of %zu bytes",
                            ir_node_label(g, i, la, sizeof la), (long long)e[i].offset, (long long)e[i].bytes,
                            plan->arena_bytes);
        if (e[i].offset % PLAN_ALIGN && !e[i].is_view)
            return rlx_fail(RLX_STATUS_INTERNAL, "plan: %s is not aligned", ir_node_label(g, i, la, sizeof la));
        for (int32_t j = i + 1; j < plan->n; j++) {
            if (e[j].storage != PLAN_ARENA || e[j].bytes == 0 || e[i].base == e[j].base) continue;
            bool live_together = e[i].first <= e[j].last && e[j].first <= e[i].last;
            bool overlap = e[i].offset < e[j].offset + e[j].bytes && e[j].offset < e[i].offset + e[i].bytes;
            if (live_together && overlap)
                return rlx_fail(RLX_STATUS_INTERNAL, "plan: %s and %s are live together and overlap",
                                ir_node_label(g, i, la, sizeof la), ir_node_label(g, j, lb, sizeof lb));
        }
    }
    if (plan->arena_bytes > plan->tensor_bytes)
        return rlx_fail(RLX_STATUS_INTERNAL, "plan: arena %zu exceeds the sum of tensors %zu", plan->arena_bytes,
                        plan->tensor_bytes);
    return RLX_OK;
}

rlx_status plan_memory(const ir_graph *g, mem_plan *p) { return plan_arena(g, p, false); }

rlx_status plan_memory_pinned(const ir_graph *g, mem_plan *p) { return plan_arena(g, p, true); }
