/*
 * scatter.c — Vulkan lowerings of SCATTER_ADD_ROWS and SCATTER_ADD through
 * shaders/scatter.comp: a copy of base into the output, then one pass in
 * which every output element is owned by one invocation that adds its
 * contributions in index order (deterministic, as on the CPU). An index out
 * of range adds nothing and sets the program's status word, so the run fails
 * with RLX_STATUS_INVALID_ARGUMENT naming the node.
 */
#include "vulkan/vk_lower.h"

#include <string.h>

typedef struct scatter_push {
    uint64_t base, ids, src, dst;
    uint32_t n, width, count, limit, axis, code;
    uint32_t idims[8];
    uint32_t bstr[8];
    uint64_t status;
} scatter_push;

_Static_assert(sizeof(scatter_push) == 128, "scatter_push must match scatter.comp's push block");

static vk_dispatch *emit(vk_lower_ctx *c, const scatter_push *p, uint32_t mode, uint32_t rank) {
    vk_dispatch *d = vk_emit(c, "scatter", p, sizeof *p);
    if (!d) return NULL;
    d->spec[0] = mode;
    d->spec[1] = vk_dtype_code(c->out.dtype);
    d->spec[2] = c->in[1].dtype == RLX_I64;
    d->spec[3] = rank;
    d->spec[4] = 256;
    d->n_spec = 5;
    vk_grid_1d(c->caps, p->n, 256, d->groups);
    return d;
}

rlx_status vk_lower_scatter(vk_lower_ctx *c) {
    const vk_tensor *base = &c->in[0], *ids = &c->in[1], *src = &c->in[2];
    rlx_dtype dt = c->out.dtype;
    if (dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: Vulkan scatters f32, f16 and bf16, not %s",
                        ir_op_info_get(c->node->op)->name, rlx_dtype_name(dt));
    if ((dt != RLX_F32) && !c->caps->storage_16bit)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "scatter: %s needs 16-bit storage", rlx_dtype_name(dt));
    if (ids->dtype != RLX_I32 && ids->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "scatter: indices must be i32 or i64, got %s", rlx_dtype_name(ids->dtype));
    if ((uint64_t)base->numel >= ((uint64_t)1 << 32) || (uint64_t)src->numel >= ((uint64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "scatter: tensors of 2^32 elements or more");
    c->tier = "scatter";
    if (c->out.numel == 0) return RLX_OK;
    scatter_push p;
    memset(&p, 0, sizeof p);
    p.base = base->addr, p.ids = ids->addr, p.src = src->addr, p.dst = c->out.addr;
    p.status = c->status_addr, p.code = c->status_code;
    p.n = (uint32_t)c->out.numel;
    if (!emit(c, &p, 0, 1)) return RLX_STATUS_INTERNAL;
    if (src->numel == 0) return RLX_OK;
    if (c->node->op == IR_OP_SCATTER_ADD_ROWS) {
        uint64_t width = 1;
        for (int i = 1; i < base->rank; i++) width *= (uint64_t)base->dims[i];
        if (width == 0) return RLX_OK;
        p.width = (uint32_t)width;
        p.count = (uint32_t)ids->numel;
        p.limit = (uint32_t)base->dims[0];
        p.n = (uint32_t)width;
        return emit(c, &p, 1, 1) ? RLX_OK : RLX_STATUS_INTERNAL;
    }
    int axis = (int)ir_attr_axis_op_axis(c->node);
    if (base->rank < 1 || base->rank > 8 || axis < 0 || axis >= base->rank)
        return rlx_fail(RLX_STATUS_INTERNAL, "scatter_add: rank %d, axis %d", base->rank, axis);
    uint64_t s = 1, lines = 1;
    for (int i = base->rank - 1; i >= 0; i--) {
        p.bstr[i] = (uint32_t)s;
        p.idims[i] = (uint32_t)ids->dims[i];
        s *= (uint64_t)base->dims[i];
        if (i != axis) lines *= (uint64_t)ids->dims[i];
    }
    p.axis = (uint32_t)axis;
    p.count = (uint32_t)ids->dims[axis];
    p.limit = (uint32_t)base->dims[axis];
    p.n = (uint32_t)lines;
    if (lines == 0) return RLX_OK;
    return emit(c, &p, 2, (uint32_t)base->rank) ? RLX_OK : RLX_STATUS_INTERNAL;
}
