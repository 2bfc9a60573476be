/*
 * vk_epilogue.c — work a decode matvec absorbs from its neighbour: the
 * combine pass of the split-key attention whose output is its x
 * (vk_combine_consumer, below). (A projection's rope / KV-write consumer is
 * a fused op of the IR instead: dequant_rope_kv, passes/fold_decode.c.)
 */
#include "vulkan/vk_backend.h"
#include "vulkan/vk_lower.h"

static bool is_output(const ir_graph *g, int32_t i) {
    for (int32_t k = 0; k < g->n_outputs; k++)
        if (g->outputs[k].node == i) return true;
    return false;
}

/* The one node that reads node i (once), or -1. */
static int32_t sole_user(const ir_graph *g, const int32_t *uses, int32_t i) {
    if (uses[i] != 1 || is_output(g, i)) return -1;
    for (int32_t u = i + 1; u < g->n_nodes; u++)
        for (int k = 0; k < g->nodes[u].n_in; k++)
            if (g->nodes[u].in[k] == i) return u;
    return -1;
}

/* The first node past node i's chain of view-only reshapes / transposes,
 * each the sole use of the one before (same bytes, same order), or -1;
 * *last gets the node it reads (i, or the last view). */
static int32_t past_views(const ir_graph *g, const mem_plan *plan, const int32_t *uses, int32_t i, int32_t *last) {
    int32_t cur = i;
    for (int hops = 0; hops < 8; hops++) {
        int32_t u = sole_user(g, uses, cur);
        if (u < 0) return -1;
        const ir_node *n = &g->nodes[u];
        if ((n->op == IR_OP_RESHAPE || n->op == IR_OP_TRANSPOSE) && plan->entries[u].is_view) {
            cur = u;
            continue;
        }
        *last = cur;
        return u;
    }
    return -1;
}

/*
 * Split-key attention (decode with a KV cache) ends with a combine pass: a
 * dispatch, and a dependent stage of its own, that merges a few KB of
 * partials between attention and the o projection. Where attention's output
 * reaches a (dequant_matmul or dequant_matmul_add) node as its x only
 * through views, with nothing run in between, that matvec can merge the
 * partials as it reads x (dequant_matvec_i8.comp, XCOMB), and attention
 * records no combine. Returns that matvec, or -1. vk_program.c confirms that
 * both lowerings take it; attention's output bytes are then never written,
 * which is why it must have no other reader.
 */
int32_t vk_combine_consumer(const ir_graph *g, const mem_plan *plan, const int32_t *uses, int32_t i) {
    if (g->nodes[i].op != IR_OP_ATTENTION) return -1;
    int32_t cur, u = past_views(g, plan, uses, i, &cur);
    if (u < 0) return -1;
    const ir_node *n = &g->nodes[u];
    if ((n->op != IR_OP_DEQUANT_MATMUL && n->op != IR_OP_DEQUANT_MATMUL_ADD) || n->in[0] != cur) return -1;
    /* nothing that runs between them (a scratch user would overwrite the partials) */
    for (int32_t m = i + 1; m < u; m++) {
        ir_op op = g->nodes[m].op;
        if (op != IR_OP_INPUT && op != IR_OP_PARAM && op != IR_OP_CONST && !plan->entries[m].is_view) return -1;
    }
    return u;
}
