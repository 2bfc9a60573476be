/*
 * attention_dequant.c — ATTENTION_DEQUANT on Vulkan: split-key decode
 * attention, then the o projection's i8 matvec merging attention's partials
 * as it reads x (dequant_matvec_i8.comp, XCOMB), so attention's combine pass
 * (a dispatch, and a dependent stage of its own) is not run. The two
 * dispatches are attention's and the product's own lowerings, on the two
 * nodes the fused one was made of (passes/fold_decode.c, where
 * vk_backend_folds_combine accepted the pair); attention's result is never
 * stored. Anything the lowerings decline here is RLX_STATUS_UNSUPPORTED (a
 * host step, the CPU's reference kernel).
 */
#include "vulkan/vk_lower.h"
#include <string.h>

rlx_status vk_lower_attention_dequant(vk_lower_ctx *c) {
    const ir_node *n = c->node;
    const int wi = ir_attention_dequant_w(n);
    char lb[96];
    if (wi < 3 || c->n_in < wi + 1) return rlx_fail(RLX_STATUS_INTERNAL, "%s: bad inputs", vk_node_label(c, lb, sizeof lb));

    ir_node an, pn;
    ir_attention_dequant_attention(n, &an);
    ir_attention_dequant_product(n, &pn);
    vk_lower_ctx a = *c;   /* attention, its partials left in scratch */
    a.node = &an;
    a.n_in = wi;
    a.out = c->in[0];      /* attention's result is q's shape; never written here */
    a.out.addr = 0;
    a.skip_combine = true;
    memset(&a.xim_out, 0, sizeof a.xim_out);
    rlx_status st = vk_lower_attention(&a);
    if (st != RLX_OK) return st;
    if (a.comb.nsplit <= 1 || a.n_d < 1)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: attention did not split its keys", vk_node_label(c, lb, sizeof lb));

    vk_lower_ctx p = *c;   /* the product, x = the partials */
    p.node = &pn;
    p.n_in = pn.n_in;
    const int64_t M = ir_attr_attention_dequant_rows(n);
    p.in[0] = (vk_tensor){.addr = 0, .dtype = RLX_F32, .rank = 2, .dims = {M, c->in[wi].dims[1]}, .numel = M * c->in[wi].dims[1]};
    for (int j = 1; j < p.n_in; j++) p.in[j] = c->in[wi + j - 1];
    p.comb_in = a.comb;
    p.counters_addr = c->counters_addr ? c->counters_addr + 4ull * a.counter_words : 0;
    st = pn.op == IR_OP_DEQUANT_MATMUL ? vk_lower_dequant_matmul(&p) : vk_lower_dequant_fused(&p);
    if (st != RLX_OK) return st;
    if (!p.comb_taken || a.n_d + p.n_d > VK_MAX_DISPATCHES)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the matvec does not merge attention's partials",
                        vk_node_label(c, lb, sizeof lb));

    /* attention's dispatches, then the product's (a barrier between: scratch) */
    memcpy(c->d, a.d, sizeof a.d[0] * (size_t)a.n_d);
    memcpy(c->d + a.n_d, p.d, sizeof p.d[0] * (size_t)p.n_d);
    c->n_d = a.n_d + p.n_d;
    c->scratch_bytes = a.scratch_bytes > p.scratch_bytes ? a.scratch_bytes : p.scratch_bytes;
    c->counter_words = a.counter_words + p.counter_words;
    c->xim_out_done = p.xim_out_done;
    c->tier = p.tier;   /* the report adds that attention ran here (vk_program.c) */
    return RLX_OK;
}
