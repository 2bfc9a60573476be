/*
 * fused_parts.c — the nodes a fused decode op (DEQUANT_ROPE_KV,
 * ATTENTION_DEQUANT; passes/fold_decode.c) was made of, rebuilt from its
 * attributes with their own ops, inputs and attributes. Shape rules, CPU
 * kernels and backend lowerings of the fused ops reuse the parts' own code on
 * these, so each part reads its attributes through its own family (a rope
 * kernel handed the fused node itself would read another family's slots).
 */
#include "ir/ir.h"

/* A copy of n with no attributes and no data (the caller sets op, inputs and attributes). */
static void bare_copy(const ir_node *n, ir_node *out) {
    *out = *n;
    ir_attrs_clear(out);
    out->data = NULL;
    out->data_bytes = 0;
}

void ir_dequant_rope_kv_product(const ir_node *n, ir_node *p) {
    const bool norm = ir_attr_dequant_rope_kv_has_gamma(n) != 0;
    const int xi = ir_dequant_rope_kv_x(n), wi = ir_dequant_rope_kv_w(n);
    bare_copy(n, p);
    p->op = norm ? IR_OP_RMS_DEQUANT_MATMUL : IR_OP_DEQUANT_MATMUL;
    p->n_in = norm ? 3 : 2;
    p->in[0] = n->in[xi];
    p->in[1] = n->in[wi];
    if (norm) {
        p->in[2] = n->in[wi + 1];
        ir_attr_set_rms_dequant_eps(p, ir_attr_dequant_rope_kv_eps(n));
    }
    /* the product's x image is the fused node's: it reads x */
    ir_set_ximage_from(p, ir_attr_dequant_rope_kv_ximage_from(n));
}

void ir_dequant_rope_kv_consumer(const ir_node *n, ir_node *c) {
    const int wi = ir_dequant_rope_kv_w(n);
    bare_copy(n, c);
    c->op = (ir_op)ir_attr_dequant_rope_kv_consumer_op(n);
    c->n_in = wi;
    if (c->op == IR_OP_ROPE || c->op == IR_OP_ROPE_KV_WRITE) {
        ir_attr_set_rope_style(c, ir_attr_dequant_rope_kv_style(n));
        ir_attr_set_rope_rotary_dims(c, ir_attr_dequant_rope_kv_rotary_dims(n));
        ir_attr_set_rope_has_offset(c, ir_attr_dequant_rope_kv_has_offset(n));
        ir_attr_set_rope_has_freq_factors(c, ir_attr_dequant_rope_kv_has_freq_factors(n));
        ir_attr_set_rope_theta(c, ir_attr_dequant_rope_kv_theta(n));
    }
}

void ir_attention_dequant_attention(const ir_node *n, ir_node *a) {
    bare_copy(n, a);
    a->op = IR_OP_ATTENTION;
    a->n_in = ir_attention_dequant_w(n);
    ir_attr_set_attention_mask(a, ir_attr_attention_dequant_mask(n));
    ir_attr_set_attention_has_kv_len(a, ir_attr_attention_dequant_has_kv_len(n));
    ir_attr_set_attention_scale(a, ir_attr_attention_dequant_scale(n));
}

void ir_attention_dequant_product(const ir_node *n, ir_node *p) {
    const int wi = ir_attention_dequant_w(n);
    bare_copy(n, p);
    p->op = (ir_op)ir_attr_attention_dequant_product_op(n);
    p->n_in = n->n_in - wi + 1;
    for (int j = 1; j < p->n_in; j++) p->in[j] = n->in[wi + j - 1];
    /* the product's x image is the fused node's: it writes the output */
    ir_set_ximage_out(p, ir_attr_attention_dequant_ximage_out(n));
}
