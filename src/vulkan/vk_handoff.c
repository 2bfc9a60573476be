/*
 * vk_handoff.c — which decode matvecs hand their output on to the next one
 * already rounded to 8 bits (the "x handoff" of dequant_matvec_i8.comp).
 *
 * Why: the i8 decode matvec rounds x to 8-bit blocks before its first
 * weight load, in every workgroup (thousands per matvec): a pass over f32 x
 * (and the folded norm's gamma), shuffles and barriers each time. On an
 * H200 that prologue was about a fifth of the 8B SwiGLU projection's time.
 * In a decoder layer every such x is the output of another matvec (down +
 * residual feeds the next q/k/v, o + residual the gate/up, the gate/up the
 * down), so the producer can round it once, block by block, as its
 * workgroups finish (the last workgroup of a block rounds it), into a small
 * area the consumer reads directly.
 *
 * This file finds the pairs (pure graph analysis); vk_program.c probes that
 * both lowerings take them, places the areas in a buffer of their own
 * (counters zeroed once; each run leaves them zero) and records the
 * hazards. The IR is unchanged. RLX_VK_NO_HANDOFF=1 turns it off.
 */
#include "vulkan/vk_backend.h"
#include "vulkan/vk_lower.h"
#include <stdlib.h>

static bool is_matvec_op(ir_op op) {
    return op == IR_OP_DEQUANT_MATMUL || op == IR_OP_DEQUANT_MATMUL_ADD || op == IR_OP_DEQUANT_SWIGLU ||
           op == IR_OP_RMS_DEQUANT_MATMUL || op == IR_OP_RMS_DEQUANT_SWIGLU;
}

int vk_handoff_layout(rlx_dtype dt) {
    switch (dt) {
    case RLX_Q8_0: return 1;
    case RLX_Q4_K:
    case RLX_Q5_K: return 2;   /* the same units, so the same x layout */
    case RLX_Q6_K: return 3;
    default: return 0;
    }
}

uint64_t vk_handoff_area_bytes(rlx_dtype dt, int64_t n) {
    int lay = vk_handoff_layout(dt);
    if (!lay || n <= 0) return 0;
    uint64_t un = (uint64_t)n, nb = un / (lay == 1 ? 32 : 256);
    uint64_t bytes = un + (lay == 1 ? 0 : un / 2) + nb * (4 + 8 + 4 + 4);   /* quants, sums, scale, sumsq, flag, count */
    return (bytes + 255) & ~(uint64_t)255;
}

bool vk_handoff_pair(const ir_graph *g, const mem_plan *plan, int32_t i, int32_t *producer, vk_handoff_key *key) {
    const ir_node *n = &g->nodes[i];
    if (!is_matvec_op(n->op) || plan->entries[i].is_view || n->n_in < 2) return false;
    int32_t x = n->in[0];
    const plan_entry *xe = &plan->entries[x];
    if (xe->storage != PLAN_ARENA) return false;
    int32_t pr = xe->base;
    if (pr < 0 || pr >= i || !is_matvec_op(g->nodes[pr].op) || plan->entries[pr].is_view) return false;
    /* x must be the producer's bytes from the start, all of them */
    if (xe->offset != plan->entries[pr].offset || xe->bytes != plan->entries[pr].bytes) return false;
    rlx_dtype wt = g->nodes[n->in[1]].dtype;
    if (!vk_handoff_layout(wt)) return false;
    bool norm = n->op == IR_OP_RMS_DEQUANT_MATMUL || n->op == IR_OP_RMS_DEQUANT_SWIGLU;
    *producer = pr;
    key->layout = vk_handoff_layout(wt);
    key->gamma = norm ? n->in[n->n_in - 1] : -1;
    key->type = wt;
    return true;
}
