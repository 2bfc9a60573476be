/*
 * dequant_fused.c — the fused DEQUANT_MATMUL forms on the CPU, with exactly
 * the unfused semantics: DEQUANT_MATMUL_ADD = dequant_matmul(x, w) + r and
 * DEQUANT_SWIGLU = silu(dequant_matmul(x, wg)) * dequant_matmul(x, wu).
 * Each runs the DEQUANT_MATMUL kernel (same paths, same rounding), then the
 * elementwise epilogue in one pass over the output. The product of the add
 * form goes straight to the output: the planner keeps an input live through
 * its consumer, so the output never shares the residual's memory (checked).
 */
#include "cpu/cpu_kernel.h"
#include <stdlib.h>
#include <string.h>

/* Runs DEQUANT_MATMUL(x = k->in[0], w = k->in[w_index]) into dst. */
static rlx_status product(const cpu_kernel_ctx *k, int w_index, float *dst) {
    ir_node n = *k->node;
    n.op = IR_OP_DEQUANT_MATMUL;
    n.n_in = 2;
    n.in[1] = k->node->in[w_index];
    cpu_kernel_ctx c = *k;
    c.node = &n;
    c.n_in = 2;
    c.in[1] = k->in[w_index];
    c.out.data = dst;
    return cpu_dequant_matmul(&c);
}

static bool overlaps(const void *a, const void *b, size_t bytes) {
    const char *x = a, *y = b;
    return x < y + bytes && y < x + bytes;
}

rlx_status cpu_dequant_fused(const cpu_kernel_ctx *k) {
    int64_t n = k->out.numel;
    size_t bytes = sizeof(float) * (size_t)n;
    float *out = k->out.data;
    char lb[96];
    if (k->n_in != 3 || k->in[2].numel != (k->node->op == IR_OP_DEQUANT_MATMUL_ADD ? n : k->in[1].numel))
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: bad fused inputs", cpu_node_label(k->node, lb, sizeof lb));
    if (k->node->op == IR_OP_DEQUANT_MATMUL_ADD) {
        const float *r = k->in[2].data;
        if (overlaps(out, r, bytes))
            return rlx_fail(RLX_STATUS_INTERNAL, "%s: output overlaps the residual", cpu_node_label(k->node, lb, sizeof lb));
        rlx_status st = product(k, 1, out);
        if (st == RLX_OK)
            for (int64_t i = 0; i < n; i++) out[i] += r[i];
        return st;
    }
    float *up = malloc(bytes ? bytes : 1);
    if (!up) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", cpu_node_label(k->node, lb, sizeof lb));
    rlx_status st = product(k, 1, out);
    if (st == RLX_OK) st = product(k, 2, up);
    if (st == RLX_OK)
        for (int64_t i = 0; i < n; i++) out[i] = cpu_activate(out[i], RLX_ACT_SILU) * up[i];
    free(up);
    return st;
}
