/*
 * rms_dequant.c — the rms-norm prologue forms on the CPU, with exactly the
 * unfused semantics:
 *   RMS_DEQUANT_MATMUL(x, w, gamma)      = dequant_matmul(rms_norm(x, gamma, eps), w)
 *   RMS_DEQUANT_SWIGLU(x, wg, wu, gamma) = dequant_swiglu(rms_norm(x, gamma, eps), wg, wu)
 * with its eps attribute. The CPU gains nothing from the fusion (the GPU does: its
 * matvec normalizes x in shared memory), so this normalizes x into a
 * temporary with RMS_NORM's own f32 code and runs the plain kernel on it:
 * the result is the unfused graph's bit for bit.
 */
#include "cpu/cpu_kernel.h"
#include <stdlib.h>

rlx_status cpu_rms_dequant(const cpu_kernel_ctx *k) {
    bool swiglu = k->node->op == IR_OP_RMS_DEQUANT_SWIGLU;
    int n_plain = swiglu ? 3 : 2;   /* inputs of the plain form; gamma follows them */
    const cpu_tensor *x = &k->in[0], *gamma = &k->in[n_plain];
    char lb[96];
    if (k->n_in != n_plain + 1 || x->dtype != RLX_F32 || x->rank < 1 || gamma->dtype != RLX_F32 ||
        gamma->numel != x->dims[x->rank - 1])
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: bad fused inputs", cpu_node_label(k->node, lb, sizeof lb));
    int64_t d = x->dims[x->rank - 1];
    float *xn = malloc(x->numel > 0 ? sizeof(float) * (size_t)x->numel : 1);
    if (!xn) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", cpu_node_label(k->node, lb, sizeof lb));
    if (d > 0) cpu_rms_norm_f32(k->pool, x->data, gamma->data, xn, x->numel / d, d, ir_attr_rms_dequant_eps(k->node));

    /* The plain node and context: same inputs but gamma, x read from xn. */
    ir_node n = *k->node;
    n.op = swiglu ? IR_OP_DEQUANT_SWIGLU : IR_OP_DEQUANT_MATMUL;
    n.n_in = n_plain;
    ir_attrs_clear(&n);
    cpu_kernel_ctx c = *k;
    c.node = &n;
    c.n_in = n_plain;
    c.in[0].data = xn;
    rlx_status st = swiglu ? cpu_dequant_fused(&c) : cpu_dequant_matmul(&c);
    free(xn);
    return st;
}
