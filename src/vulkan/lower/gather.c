/*
 * gather.c — Vulkan lowerings of GATHER_ROWS (embedding lookup) and GATHER
 * (torch.gather along its axis) through shaders/gather.comp.
 *
 * Out-of-range ids: the CPU backend checks every id first and returns
 * RLX_STATUS_INVALID_ARGUMENT. A dispatch cannot fail, so on the GPU an id
 * outside [0, limit) (negative included) yields zeros in its output slot,
 * nothing is read out of range, and the shader sets the program's status
 * word, so the run fails with RLX_STATUS_INVALID_ARGUMENT as on the CPU. (A future option: a flag word in scratch
 * that the core checks after the run.)
 */
#include "vulkan/vk_lower.h"

#include <string.h>

typedef struct gather_push {
    uint64_t src, ids, dst;
    uint32_t n, axis, limit, row_units, code, pad1;
    uint32_t dims[8];
    uint32_t xs[8];
    uint64_t status;   /* word set to code when an id is out of range */
} gather_push;

_Static_assert(sizeof(gather_push) == 120, "gather_push must match gather.comp's push block");

rlx_status vk_lower_gather(vk_lower_ctx *c) {
    const vk_tensor *x = &c->in[0], *ids = &c->in[1];
    /* a block-quantized table decodes to f32 rows (dequant_matmul.c) */
    if (c->node->op == IR_OP_GATHER_ROWS && rlx_dtype_is_quantized(x->dtype)) return vk_lower_dequant_rows(c);
    const size_t es = rlx_dtype_size(x->dtype);
    if (ids->dtype != RLX_I32 && ids->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "gather: ids must be i32 or i64, got %s", rlx_dtype_name(ids->dtype));
    if (es == 0) return rlx_fail(RLX_STATUS_UNSUPPORTED, "gather: unknown dtype %d", (int)x->dtype);
    c->tier = "gather";
    if (c->out.numel == 0) return RLX_OK;

    gather_push pc;
    memset(&pc, 0, sizeof pc);
    pc.src = x->addr;
    pc.ids = ids->addr;
    pc.dst = c->out.addr;
    pc.status = c->status_addr;
    pc.code = c->status_code;
    uint32_t unit = (uint32_t)es, rank = 1;
    uint64_t n;
    if (c->node->op == IR_OP_GATHER_ROWS) {
        if (x->rank < 1) return rlx_fail(RLX_STATUS_SHAPE, "gather_rows: table needs rank >= 1");
        uint64_t row_bytes = es;
        for (int i = 1; i < x->rank; i++) row_bytes *= (uint64_t)x->dims[i];
        for (uint32_t u = 16; u >= 1; u /= 2)
            if (row_bytes % u == 0 && x->addr % u == 0 && c->out.addr % u == 0) {
                unit = u;
                break;
            }
        if ((uint64_t)x->dims[0] >= ((uint64_t)1 << 32) || row_bytes / unit >= ((uint64_t)1 << 32))
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "gather_rows: table too large for the Vulkan kernel");
        pc.limit = (uint32_t)x->dims[0];
        pc.row_units = (uint32_t)(row_bytes / unit);
        n = (uint64_t)ids->numel * pc.row_units;
    } else {
        const int axis = (int)ir_attr_axis_op_axis(c->node);
        if (ids->rank != x->rank) return rlx_fail(RLX_STATUS_SHAPE, "gather: index rank differs from input rank");
        if ((uint64_t)x->numel >= ((uint64_t)1 << 32))
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "gather: input of 2^32 elements or more");
        if (x->rank == 0) {   /* the only valid index is 0 */
            pc.dims[0] = 1;
            pc.xs[0] = 0;
            pc.limit = 1;
        } else {
            if (axis < 0 || axis >= x->rank) return rlx_fail(RLX_STATUS_INTERNAL, "gather: bad axis %d", axis);
            rank = (uint32_t)x->rank;
            int64_t s = 1;
            for (int i = x->rank - 1; i >= 0; i--) {
                pc.xs[i] = (uint32_t)s;
                pc.dims[i] = (uint32_t)ids->dims[i];
                s *= x->dims[i];
            }
            pc.axis = (uint32_t)axis;
            pc.limit = (uint32_t)x->dims[axis];
        }
        n = (uint64_t)ids->numel;
    }
    if (n >= ((uint64_t)1 << 32)) return rlx_fail(RLX_STATUS_UNSUPPORTED, "gather: output of 2^32 units or more");
    pc.n = (uint32_t)n;
    vk_dispatch *d = vk_emit(c, "gather", &pc, sizeof pc);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = unit;
    d->spec[1] = c->node->op == IR_OP_GATHER_ROWS ? 0 : 1;
    d->spec[2] = ids->dtype == RLX_I64;
    d->spec[3] = rank;
    d->n_spec = 4;
    vk_grid_1d(c->caps, n, 256, d->groups);
    return RLX_OK;
}
