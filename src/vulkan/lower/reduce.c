/*
 * reduce.c — Vulkan lowering of REDUCE_{SUM,MEAN,MAX,MIN,PROD} (axes mask
 * attribute axes, keepdim) and ARGMAX/ARGMIN (attribute axis) onto reduce.comp.
 *
 * The input's dims are coalesced, as in the CPU kernel, into alternating kept
 * and reduced groups (size-1 dims dropped, neighbours of one kind merged);
 * the shader enumerates outputs over the kept groups and reduced elements over
 * the reduced groups, so every axes mask is one dispatch with no transpose.
 * A workgroup per output (mode 0) serves long reductions and reductions over
 * the innermost dims; an invocation per output (mode 1) serves short ones and
 * reductions over leading dims with many outputs, where neighbouring
 * invocations then read neighbouring elements.
 *
 * Neither fills a large GPU when there are few outputs and long reductions
 * (bias and norm-gain gradients: a sum over 8192 rows of 768 columns; a
 * gradient norm: one sum of 38M elements). A float sum/mean/max/min whose
 * outputs make fewer tiles than the device's split target
 * (vk_tuning.red_split_wgs) is split instead ("reduce-split"): a first pass
 * (mode 2) of tiles x splits workgroups, each folding one contiguous chunk
 * of the reduced range for a tile of adjacent outputs, writes f32 partials
 * to scratch ([n_out][splits]); a second pass, the ordinary reduction of
 * those partials (mode 0 or 1, f32 in, the node's dtype out, mean dividing
 * by the original count), folds each output's partials in a fixed order.
 * Both folds run in a fixed order with no atomics, so every run gives the
 * same bits; each partial is a compensated sum, so the result stays within
 * the one-pass modes' few ulp of the CPU's double accumulation.
 *
 * Software devices never split by default (vk_tuning.c says why).
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"
#include <string.h>

#define RED_LOCAL 256u
#define RED_MAX_NUMEL ((int64_t)1 << 31)
/* Split path: most adjacent outputs one first-pass workgroup takes (64 x 4
 * bytes: two 128-byte lines a row for f32, where the inner group is kept),
 * and the fewest elements each of its lanes folds, so that a split's
 * partials (one per output) stay a small fraction of what it reads and each
 * lane has loads to overlap. */
#define RED_SPLIT_MAX_COLS  64u
#define RED_SPLIT_MIN_STEPS 16u

enum { ROP_SUM, ROP_MEAN, ROP_MAX, ROP_MIN, ROP_PROD, ROP_ARGMAX, ROP_ARGMIN };

typedef struct reduce_push {
    uint64_t x, out;
    uint32_t n_out, count;
    uint32_t nk, nr;
    uint32_t ksz[4], kst[4];
    uint32_t rsz[4], rst[4];
    uint32_t chunk, splits;   /* mode 2 */
    uint32_t mean_n, pad0;
} reduce_push;

static const char *op_name(const vk_lower_ctx *c)
{
    const ir_op_info *info = ir_op_info_get(c->node->op);
    return info ? info->name : "?";
}

static int reduce_code(ir_op op)
{
    switch (op) {
    case IR_OP_REDUCE_SUM:  return ROP_SUM;
    case IR_OP_REDUCE_MEAN: return ROP_MEAN;
    case IR_OP_REDUCE_MAX:  return ROP_MAX;
    case IR_OP_REDUCE_MIN:  return ROP_MIN;
    case IR_OP_REDUCE_PROD: return ROP_PROD;
    case IR_OP_ARGMAX:      return ROP_ARGMAX;
    case IR_OP_ARGMIN:      return ROP_ARGMIN;
    default:                return -1;
    }
}

/* Appends dim (size n, element stride st) to the kept or reduced groups,
 * merging it into the previous group when that one is of the same kind. */
typedef struct groups {
    int     nk, nr, last;   /* last: -1 none, 0 kept, 1 reduced */
    int64_t ksz[IR_MAX_RANK], kst[IR_MAX_RANK], rsz[IR_MAX_RANK], rst[IR_MAX_RANK];
} groups;

static void add_dim(groups *g, int64_t n, int64_t st, int red)
{
    if (red && g->last == 1) {
        g->rsz[g->nr - 1] *= n;
        g->rst[g->nr - 1] = st;
    } else if (!red && g->last == 0) {
        g->ksz[g->nk - 1] *= n;
        g->kst[g->nk - 1] = st;
    } else if (red) {
        g->rsz[g->nr] = n;
        g->rst[g->nr++] = st;
    } else {
        g->ksz[g->nk] = n;
        g->kst[g->nk++] = st;
    }
    g->last = red;
}

/* A split reduction: tc adjacent outputs per first-pass workgroup, tiles of
 * them, each output's reduced range in splits chunks of chunk elements. */
typedef struct split_plan {
    uint32_t tc, tiles, splits, chunk;
} split_plan;

static uint32_t pow2_ceil(uint32_t n)
{
    uint32_t p = 1;
    while (p < n) p *= 2;
    return p;
}

/* Whether to split, and how: enough splits that tiles x splits reaches the
 * device's target (a full wave), as long as every lane still folds
 * RED_SPLIT_MIN_STEPS elements; fewer than 2 splits: no split. */
static bool plan_split(const vk_lower_ctx *c, int code, rlx_dtype dt, const groups *g, int64_t count,
                       split_plan *sp)
{
    bool floats = dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16;
    bool op_ok = code == ROP_SUM || code == ROP_MEAN || code == ROP_MAX || code == ROP_MIN;
    uint32_t target = c->tuning->red_split_wgs;
    if (!floats || !op_ok || target == 0 || count < 2) return false;
    /* adjacent outputs are adjacent elements where the inner group is kept;
     * otherwise lanes run along the reduced elements */
    uint64_t inner = g->nk > 0 && g->last == 0 ? (uint64_t)g->ksz[g->nk - 1] : 1;
    uint32_t tc = pow2_ceil((uint32_t)(inner < RED_SPLIT_MAX_COLS ? inner : RED_SPLIT_MAX_COLS));
    uint32_t tr = RED_LOCAL / tc;
    uint64_t tiles = ((uint64_t)c->out.numel + tc - 1) / tc;
    if (tiles >= target) return false;
    uint64_t want = (target + tiles - 1) / tiles;
    uint64_t most = (uint64_t)count / ((uint64_t)tr * RED_SPLIT_MIN_STEPS);
    uint64_t splits = want < most ? want : most;
    if (splits < 2) return false;
    uint64_t chunk = ((uint64_t)count + splits - 1) / splits;
    splits = ((uint64_t)count + chunk - 1) / chunk;   /* no empty chunk */
    sp->tc = tc;
    sp->tiles = (uint32_t)tiles;
    sp->splits = (uint32_t)splits;
    sp->chunk = (uint32_t)chunk;
    return true;
}

/* The two passes of a split reduction; p holds the node's groups. */
static rlx_status emit_split(vk_lower_ctx *c, int code, rlx_dtype dt, const reduce_push *p, const split_plan *sp)
{
    uint64_t n_out = (uint64_t)c->out.numel;
    c->scratch_bytes = n_out * sp->splits * sizeof(float);
    c->tier = "reduce-split";

    reduce_push p1 = *p;
    p1.out = c->scratch_addr;
    p1.chunk = sp->chunk;
    p1.splits = sp->splits;
    /* the first pass only folds; mean divides in the second */
    uint32_t first_op = code == ROP_MEAN ? (uint32_t)ROP_SUM : (uint32_t)code;
    vk_dispatch *d = vk_emit(c, "reduce", &p1, sizeof p1);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = first_op;
    d->spec[1] = vk_dtype_code(dt);
    d->spec[2] = 2;
    d->spec[3] = vk_dtype_code(RLX_F32);
    d->spec[4] = sp->tc;
    d->n_spec = 5;
    d->uses_scratch = true;
    vk_grid_1d(c->caps, (uint64_t)sp->tiles * sp->splits, 1, d->groups);

    /* the partials as an [n_out, splits] f32 tensor reduced over its rows */
    reduce_push p2;
    memset(&p2, 0, sizeof p2);
    p2.x = c->scratch_addr;
    p2.out = c->out.addr;
    p2.n_out = (uint32_t)n_out;
    p2.count = sp->splits;
    p2.mean_n = p->count;
    p2.nk = n_out > 1 ? 1 : 0;
    p2.ksz[0] = (uint32_t)n_out;
    p2.kst[0] = sp->splits;
    p2.nr = 1;
    p2.rsz[0] = sp->splits;
    p2.rst[0] = 1;
    bool serial = sp->splits <= 32;
    d = vk_emit(c, "reduce", &p2, sizeof p2);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)code;
    d->spec[1] = vk_dtype_code(RLX_F32);
    d->spec[2] = serial ? 1u : 0u;
    d->spec[3] = vk_dtype_code(dt);
    d->spec[4] = 1;
    d->n_spec = 5;
    d->uses_scratch = true;
    vk_grid_1d(c->caps, n_out, serial ? RED_LOCAL : 1, d->groups);
    return RLX_OK;
}

rlx_status vk_lower_reduce(vk_lower_ctx *c)
{
    int code = reduce_code(c->node->op);
    if (code < 0 || c->n_in != 1)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan reduce lowering called for %s", op_name(c));
    const vk_tensor *in = &c->in[0];
    rlx_dtype dt = in->dtype;
    bool is_arg = code == ROP_ARGMAX || code == ROP_ARGMIN;
    if (dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16 && dt != RLX_I32 && dt != RLX_I64 && dt != RLX_U8 &&
        dt != RLX_I8)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no GPU kernel", op_name(c), rlx_dtype_name(dt));
    if (in->numel >= RED_MAX_NUMEL)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %lld elements exceed 32-bit shader indices", op_name(c),
                        (long long)in->numel);
    c->tier = "reduce";
    if (c->out.numel == 0) return RLX_OK;
    if (in->numel == 0 && (code == ROP_MAX || code == ROP_MIN || is_arg))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: empty reduction (the host step reports the error)", op_name(c));

    /* dense strides of the input */
    int64_t dense[IR_MAX_RANK], s = 1;
    for (int d = in->rank - 1; d >= 0; d--) {
        dense[d] = s;
        s *= in->dims[d];
    }
    groups g;
    memset(&g, 0, sizeof g);
    g.last = -1;
    int64_t count = 1;
    if (is_arg) {
        int64_t axis = ir_attr_argreduce_axis(c->node);
        if (axis < 0 || axis >= in->rank)
            return rlx_fail(RLX_STATUS_INTERNAL, "%s: axis %lld outside rank %d", op_name(c), (long long)axis, in->rank);
        /* the axis is always a group of its own (even of size 1): r is its index */
        for (int d = 0; d < in->rank; d++) {
            if (d == axis) {
                g.rsz[0] = in->dims[d];
                g.rst[0] = dense[d];
                g.nr = 1;
                g.last = 1;
                count = in->dims[d];
            } else if (in->dims[d] != 1) {
                if (g.last == 1) g.last = -1;   /* do not merge kept dims into the axis group */
                add_dim(&g, in->dims[d], dense[d], 0);
            }
        }
    } else {
        uint64_t mask = (uint64_t)ir_attr_reduce_axes(c->node);
        if (mask == 0) mask = ~(uint64_t)0;
        for (int d = 0; d < in->rank; d++) {
            int red = (int)((mask >> d) & 1);
            if (red) count *= in->dims[d];
            if (in->dims[d] == 1) continue;
            add_dim(&g, in->dims[d], dense[d], red);
        }
    }
    if (g.nk > 4 || g.nr > 4)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d kept / %d reduced dim groups", op_name(c), g.nk, g.nr);
    bool inner_reduced = g.last == 1;

    reduce_push p;
    memset(&p, 0, sizeof p);
    p.x = in->addr;
    p.out = c->out.addr;
    p.n_out = (uint32_t)c->out.numel;
    p.count = (uint32_t)count;
    p.mean_n = (uint32_t)count;
    p.nk = (uint32_t)g.nk;
    p.nr = (uint32_t)g.nr;
    for (int i = 0; i < g.nk; i++) {
        p.ksz[i] = (uint32_t)g.ksz[i];
        p.kst[i] = (uint32_t)g.kst[i];
    }
    for (int i = 0; i < g.nr; i++) {
        p.rsz[i] = (uint32_t)g.rsz[i];
        p.rst[i] = (uint32_t)g.rst[i];
    }
    split_plan sp;
    if (plan_split(c, code, dt, &g, count, &sp)) return emit_split(c, code, dt, &p, &sp);
    /* serial per output when reductions are short, or when the innermost dims
     * are kept and there are enough outputs to fill the device */
    bool serial = count <= 32 || (!inner_reduced && c->out.numel >= 4096);
    vk_dispatch *d = vk_emit(c, "reduce", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)code;
    d->spec[1] = vk_dtype_code(dt);
    d->spec[2] = serial ? 1u : 0u;
    d->spec[3] = vk_dtype_code(is_arg ? RLX_I32 : dt);
    d->spec[4] = 1;
    d->n_spec = 5;
    if (serial) vk_grid_1d(c->caps, (uint64_t)c->out.numel, RED_LOCAL, d->groups);
    else vk_grid_1d(c->caps, (uint64_t)c->out.numel, 1, d->groups);
    return RLX_OK;
}
