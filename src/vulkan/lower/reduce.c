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
 */
#include "vulkan/vk_lower.h"
#include <string.h>

#define RED_LOCAL 256u
#define RED_MAX_NUMEL ((int64_t)1 << 31)

enum { ROP_SUM, ROP_MEAN, ROP_MAX, ROP_MIN, ROP_PROD, ROP_ARGMAX, ROP_ARGMIN };

typedef struct reduce_push {
    uint64_t x, out;
    uint32_t n_out, count;
    uint32_t nk, nr;
    uint32_t ksz[4], kst[4];
    uint32_t rsz[4], rst[4];
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
    /* serial per output when reductions are short, or when the innermost dims
     * are kept and there are enough outputs to fill the device */
    bool serial = count <= 32 || (!inner_reduced && c->out.numel >= 4096);
    vk_dispatch *d = vk_emit(c, "reduce", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)code;
    d->spec[1] = vk_dtype_code(dt);
    d->spec[2] = serial ? 1u : 0u;
    d->n_spec = 3;
    if (serial) vk_grid_1d(c->caps, (uint64_t)c->out.numel, RED_LOCAL, d->groups);
    else vk_grid_1d(c->caps, (uint64_t)c->out.numel, 1, d->groups);
    return RLX_OK;
}
