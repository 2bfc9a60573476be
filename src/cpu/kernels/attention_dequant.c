/*
 * attention_dequant.c — ATTENTION_DEQUANT on the CPU, with exactly the
 * unfused semantics (the reference):
 *   dequant_matmul[_add](view(attention(q, k, v[, mask][, kv_len])), w[, r])
 * the view being attention's result [B,H,S,D] as x [M, K] (M = rows; a
 * decoder's merge of the heads at S = 1). The CPU gains nothing from the
 * fusion (a GPU's matvec merges split-key attention's partials as it reads
 * x), so this runs attention's kernel into a temporary and the product's
 * kernel on it: the result is the unfused graph's bit for bit.
 */
#include "cpu/cpu_kernel.h"
#include <stdlib.h>

rlx_status cpu_attention_dequant(const cpu_kernel_ctx *k) {
    const ir_node *n = k->node;
    const int wi = ir_attention_dequant_w(n);
    const cpu_tensor *q = &k->in[0], *w = &k->in[wi];
    char lb[96];
    const int64_t M = ir_attr_attention_dequant_rows(n);
    if (q->rank != 4 || w->rank != 2 || M * w->dims[1] != q->numel)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: bad fused inputs", cpu_node_label(n, lb, sizeof lb));
    float *a = malloc(q->numel > 0 ? sizeof(float) * (size_t)q->numel : 1);
    if (!a) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", cpu_node_label(n, lb, sizeof lb));

    ir_node an;   /* attention: its inputs, its result [B,H,S,D] into a */
    ir_attention_dequant_attention(n, &an);
    cpu_kernel_ctx ac = *k;
    ac.node = &an;
    ac.n_in = wi;
    ac.out = (cpu_tensor){.data = a, .dtype = RLX_F32, .rank = 4, .numel = q->numel};
    for (int d = 0; d < 4; d++) ac.out.dims[d] = q->dims[d];
    rlx_status st = cpu_attention(&ac);

    if (st == RLX_OK) {   /* the product: a as x [M, K], w [, r] */
        ir_node pn;
        ir_attention_dequant_product(n, &pn);
        cpu_kernel_ctx pc = {.node = &pn, .n_in = pn.n_in, .pool = k->pool, .out = k->out, .exact_quant = k->exact_quant};
        pc.in[0] = (cpu_tensor){.data = a, .dtype = RLX_F32, .rank = 2, .dims = {M, w->dims[1]}, .numel = q->numel};
        for (int j = 1; j < pn.n_in; j++) pc.in[j] = k->in[wi + j - 1];
        st = pn.op == IR_OP_DEQUANT_MATMUL ? cpu_dequant_matmul(&pc) : cpu_dequant_fused(&pc);
    }
    free(a);
    return st;
}
