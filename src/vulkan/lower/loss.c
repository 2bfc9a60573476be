/*
 * loss.c — Vulkan lowerings of SOFTMAX_CE (mean loss, rank 0) and
 * SOFTMAX_CE_GRAD through shaders/softmax_ce.comp, f32 logits.
 *
 * The loss needs a reduction across rows: dispatch 1 writes one loss per row
 * into the node's scratch buffer (N floats), dispatch 2 (one workgroup) sums
 * them in a fixed order, so the result does not depend on scheduling. Sums
 * are f32 (the CPU uses double): parity is ~1e-6 relative for typical C.
 * A label outside [0, C) makes its row NaN (the CPU reports an error).
 */
#include "vulkan/vk_lower.h"

#include <string.h>

typedef struct ce_push {
    uint64_t logits, labels, out, scratch;
    uint32_t N, C, code, pad1;   /* code: written to status for a label out of range */
    uint64_t status;
} ce_push;

_Static_assert(sizeof(ce_push) == 56, "ce_push must match softmax_ce.comp's push block");

rlx_status vk_lower_loss(vk_lower_ctx *c) {
    const vk_tensor *lg = &c->in[0], *lb = &c->in[1];
    const bool grad = c->node->op == IR_OP_SOFTMAX_CE_GRAD;
    if (lg->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "softmax_cross_entropy: the Vulkan kernel is f32 only, got %s",
                        rlx_dtype_name(lg->dtype));
    if (lb->dtype != RLX_I32 && lb->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "softmax_cross_entropy: labels must be i32, got %s",
                        rlx_dtype_name(lb->dtype));
    if (lg->rank != 2) return rlx_fail(RLX_STATUS_SHAPE, "softmax_cross_entropy: logits must be [N,C]");
    const int64_t N = lg->dims[0], C = lg->dims[1];
    if ((uint64_t)lg->numel >= ((uint64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "softmax_cross_entropy: 2^32 logits or more");
    c->tier = "softmax-ce";
    if (grad && c->out.numel == 0) return RLX_OK;

    ce_push pc;
    memset(&pc, 0, sizeof pc);
    pc.logits = lg->addr;
    pc.labels = lb->addr;
    pc.out = c->out.addr;
    pc.scratch = c->scratch_addr;
    pc.N = (uint32_t)N;
    pc.status = c->status_addr;
    pc.code = c->status_code;
    pc.C = (uint32_t)C;
    vk_dispatch *d;
    if (grad) {
        d = vk_emit(c, "softmax_ce", &pc, sizeof pc);
        if (!d) return RLX_STATUS_INTERNAL;
        d->spec[0] = 1;
        d->spec[1] = lb->dtype == RLX_I64;
        d->n_spec = 2;
        vk_grid_1d(c->caps, (uint64_t)N, 1, d->groups);
        return RLX_OK;
    }
    c->scratch_bytes = (uint64_t)N * sizeof(float);
    if (N > 0) {
        d = vk_emit(c, "softmax_ce", &pc, sizeof pc);
        if (!d) return RLX_STATUS_INTERNAL;
        d->spec[0] = 0;
        d->spec[1] = lb->dtype == RLX_I64;
        d->n_spec = 2;
        d->uses_scratch = true;
        vk_grid_1d(c->caps, (uint64_t)N, 1, d->groups);
    }
    d = vk_emit(c, "softmax_ce", &pc, sizeof pc);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = 2;
    d->spec[1] = lb->dtype == RLX_I64;
    d->n_spec = 2;
    d->uses_scratch = true;
    return RLX_OK;
}
