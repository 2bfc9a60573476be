/*
 * dequant_rope_kv.c — DEQUANT_ROPE_KV on the CPU, with exactly the unfused
 * semantics (the reference):
 *   consumer(view(p)), p = [rms_]dequant_matmul(x, w[, gamma])
 * where the consumer (consumer_op) is rope, rope_kv_write or kv_write and the
 * view is p's elements as view_b..view_d = [B,H,S,D]. The CPU gains nothing from the
 * fusion (a GPU's matvec stores its rows rotated or into the cache itself),
 * so this runs the product's kernel into a temporary and the consumer's
 * kernel on it: the result is the unfused graph's bit for bit.
 */
#include "cpu/cpu_kernel.h"
#include <stdlib.h>

rlx_status cpu_dequant_rope_kv(const cpu_kernel_ctx *k) {
    const ir_node *n = k->node;
    const bool norm = ir_attr_dequant_rope_kv_has_gamma(n) != 0;
    const int xi = ir_dequant_rope_kv_x(n), wi = ir_dequant_rope_kv_w(n);
    const cpu_tensor *x = &k->in[xi], *w = &k->in[wi];
    char lb[96];
    if (x->rank < 1 || w->rank != 2 || x->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: bad fused inputs", cpu_node_label(n, lb, sizeof lb));
    int64_t K = x->dims[x->rank - 1], N = w->dims[0], M = K > 0 ? x->numel / K : 0;
    float *p = malloc(M * N > 0 ? sizeof(float) * (size_t)(M * N) : 1);
    if (!p) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", cpu_node_label(n, lb, sizeof lb));

    /* the product: x, w [, gamma] into p */
    ir_node pn;
    ir_dequant_rope_kv_product(n, &pn);
    cpu_kernel_ctx pc = {.node = &pn, .n_in = pn.n_in, .pool = k->pool, .exact_quant = k->exact_quant};
    pc.in[0] = *x;
    pc.in[1] = *w;
    if (norm) pc.in[2] = k->in[wi + 1];
    pc.out = (cpu_tensor){.data = p, .dtype = RLX_F32, .rank = x->rank, .numel = M * N};
    for (int d = 0; d < x->rank; d++) pc.out.dims[d] = x->dims[d];
    pc.out.dims[x->rank - 1] = N;
    rlx_status st = norm ? cpu_rms_dequant(&pc) : cpu_dequant_matmul(&pc);

    /* the consumer: its own inputs, p viewed as [B,H,S,D] in its x slot */
    if (st == RLX_OK) {
        ir_node cn;
        ir_dequant_rope_kv_consumer(n, &cn);
        cpu_kernel_ctx cc = *k;
        cc.node = &cn;
        cc.n_in = wi;
        cc.in[xi] = (cpu_tensor){.data = p, .dtype = RLX_F32, .rank = 4, .numel = M * N};
        cc.in[xi].dims[0] = ir_attr_dequant_rope_kv_view_b(n);
        cc.in[xi].dims[1] = ir_attr_dequant_rope_kv_view_h(n);
        cc.in[xi].dims[2] = ir_attr_dequant_rope_kv_view_s(n);
        cc.in[xi].dims[3] = ir_attr_dequant_rope_kv_view_d(n);
        st = cn.op == IR_OP_KV_WRITE ? cpu_kv_write(&cc) : cpu_rope(&cc);
    }
    free(p);
    return st;
}
