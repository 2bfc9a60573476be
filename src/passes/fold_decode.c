/*
 * fold_decode.c — decode fusions the backend decides per specialization, on
 * a specialized graph, in place (node ids stay: the runtime indexes params
 * and inputs by them).
 *
 * 1. A projection and its consumer as one node (pass_fold_epilogue_inplace):
 *
 *   rope(view(p)), rope_kv_write(cache, view(p), pos[, ..]) or
 *   kv_write(cache, view(p), pos), p = dequant_matmul(x, w) or
 *   rms_dequant_matmul(x, w, gamma)                     => dequant_rope_kv
 *
 * where view is a chain of reshapes and order-keeping transposes (a
 * decoder's split into heads), each the sole use of the one before, and p
 * has no other use. In a decoder layer the q, k and v projections feed
 * rope(q), rope_kv_write(k) and kv_write(v); a GPU whose decode matvec can
 * store its rows rotated or into the cache row itself saves a dependent
 * stage of three tiny dispatches per layer. Which products fold is the
 * backend's decision (ok(): device capabilities and the product's size), so
 * this runs per specialization, after pass_fold_norm_inplace (a folded norm
 * comes along as gamma).
 *
 * The consumer's node becomes the fused node (it keeps its name, shape and
 * place in the schedule, so the memory plan sees it where the consumer was);
 * the product and the views become unused reshapes of x to x's own shape:
 * views, no memory and no step, valid under their shape rule.
 *
 * 2. Attention and the projection reading its result (pass_fold_combine_inplace):
 *
 *   dequant_matmul(view(a), w) or dequant_matmul_add(view(a), w, r),
 *   a = attention(q, k, v[, mask][, kv_len])           => attention_dequant_matmul
 *
 * view as above (a decoder's merge of the heads), x of rank 2. Split-key
 * decode attention ends with a combine pass, a dependent stage of its own;
 * a GPU whose matvec merges the partials as it reads x saves it. The
 * product's node becomes the fused node; attention and the views become
 * unused reshapes of q.
 */
#include "passes/passes.h"
#include <stdlib.h>

/* The node reading node id, or -1 (first in order; callers check counts). */
static int32_t first_user(const ir_graph *g, int32_t id) {
    for (int32_t u = id + 1; u < g->n_nodes; u++)
        for (int j = 0; j < g->nodes[u].n_in; j++)
            if (g->nodes[u].in[j] == id) return u;
    return -1;
}

/* A transpose that moves only dims of size 1 relative to each other keeps the
 * element order (the planner makes it a view too). */
static bool order_keeping_transpose(const ir_graph *g, const ir_node *n) {
    const ir_shape *x = &g->nodes[n->in[0]].shape;
    int64_t last = -1;
    for (int i = 0; i < x->rank; i++) {
        int64_t src = ir_attr_transpose_perm(n, i);
        if (!ir_dim_is_static(x->d[src])) return false;
        if (x->d[src].k == 1) continue;
        if (src < last) return false;
        last = src;
    }
    return true;
}

/* Whether input slot j of node n is its only read of node id. */
static bool read_once_at(const ir_node *n, int32_t id, int j) {
    if (n->in[j] != id) return false;
    for (int k = 0; k < n->n_in; k++)
        if (k != j && n->in[k] == id) return false;
    return true;
}

int32_t pass_epilogue_consumer(const ir_graph *g, const int32_t *uses, int32_t i) {
    const ir_node *p = &g->nodes[i];
    if (!((p->op == IR_OP_DEQUANT_MATMUL && p->n_in == 2) || (p->op == IR_OP_RMS_DEQUANT_MATMUL && p->n_in == 3)) ||
        !ir_shape_is_static(&p->shape))
        return -1;
    int32_t cur = i;
    for (int hops = 0; hops < 8; hops++) {
        if (uses[cur] != 1) return -1;   /* uses count graph outputs too */
        int32_t u = first_user(g, cur);
        if (u < 0) return -1;
        const ir_node *n = &g->nodes[u];
        if ((n->op == IR_OP_RESHAPE || (n->op == IR_OP_TRANSPOSE && order_keeping_transpose(g, n))) && n->in[0] == cur) {
            cur = u;
            continue;
        }
        const ir_shape *xs = &g->nodes[cur].shape;
        if (xs->rank != 4 || !ir_shape_is_static(xs) || n->n_in + 1 + (p->op == IR_OP_RMS_DEQUANT_MATMUL) > IR_MAX_INPUTS)
            return -1;
        if (n->op == IR_OP_ROPE && read_once_at(n, cur, 0)) return u;
        if ((n->op == IR_OP_ROPE_KV_WRITE || n->op == IR_OP_KV_WRITE) && read_once_at(n, cur, 1)) return u;
        return -1;
    }
    return -1;
}

/* Node id as an unused reshape of x to x's shape. */
static void make_unused(ir_graph *g, int32_t id, int32_t x) {
    ir_node *n = &g->nodes[id];
    n->op = IR_OP_RESHAPE;
    ir_attrs_clear(n);
    n->n_in = 1;
    n->in[0] = x;
    n->shape = g->nodes[x].shape;
    n->dtype = g->nodes[x].dtype;
}

rlx_status pass_fold_epilogue_inplace(ir_graph *g, fold_epilogue_pred ok, void *ctx, int *n_folded) {
    *n_folded = 0;
    int32_t *uses = pass_use_counts(g);
    if (!uses) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fold epilogue: out of memory");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int32_t j = pass_epilogue_consumer(g, uses, i);
        if (j < 0 || (ok && !ok(ctx, g, i, j))) continue;
        const ir_node p = g->nodes[i];
        ir_node *c = &g->nodes[j];
        const bool norm = p.op == IR_OP_RMS_DEQUANT_MATMUL;
        const int xi = c->op == IR_OP_ROPE ? 0 : 1;
        const ir_shape view = g->nodes[c->in[xi]].shape;
        /* the views, from the consumer back to the product */
        for (int32_t v = c->in[xi]; v != i;) {
            int32_t prev = g->nodes[v].in[0];
            make_unused(g, v, p.in[0]);
            v = prev;
        }
        /* the consumer's node becomes the fused one: rope's attributes (a
         * rope consumer's), then the product's */
        const ir_node cons = *c;
        const bool rope = cons.op != IR_OP_KV_WRITE;
        c->op = IR_OP_DEQUANT_ROPE_KV;
        ir_attrs_clear(c);
        if (rope) {
            ir_attr_set_dequant_rope_kv_style(c, ir_attr_rope_style(&cons));
            ir_attr_set_dequant_rope_kv_rotary_dims(c, ir_attr_rope_rotary_dims(&cons));
            ir_attr_set_dequant_rope_kv_has_offset(c, ir_attr_rope_has_offset(&cons));
            ir_attr_set_dequant_rope_kv_has_freq_factors(c, ir_attr_rope_has_freq_factors(&cons));
            ir_attr_set_dequant_rope_kv_theta(c, ir_attr_rope_theta(&cons));
        }
        ir_attr_set_dequant_rope_kv_consumer_op(c, cons.op);
        ir_attr_set_dequant_rope_kv_has_gamma(c, norm);
        ir_attr_set_dequant_rope_kv_eps(c, norm ? ir_attr_rms_dequant_eps(&p) : 0);
        ir_attr_set_dequant_rope_kv_view_b(c, view.d[0].k);
        ir_attr_set_dequant_rope_kv_view_h(c, view.d[1].k);
        ir_attr_set_dequant_rope_kv_view_s(c, view.d[2].k);
        ir_attr_set_dequant_rope_kv_view_d(c, view.d[3].k);
        c->in[xi] = p.in[0];
        c->in[c->n_in++] = p.in[1];
        if (norm) c->in[c->n_in++] = p.in[2];
        make_unused(g, i, p.in[0]);
        (*n_folded)++;
    }
    free(uses);
    return RLX_OK;
}

/* The dequant_matmul[_add] that attention node i's result reaches as its x
 * (rank 2) through views each the sole use of the one before, or -1. */
int32_t pass_combine_consumer(const ir_graph *g, const int32_t *uses, int32_t i) {
    const ir_node *a = &g->nodes[i];
    if (a->op != IR_OP_ATTENTION || !ir_shape_is_static(&a->shape)) return -1;
    int32_t cur = i;
    for (int hops = 0; hops < 8; hops++) {
        if (uses[cur] != 1) return -1;
        int32_t u = first_user(g, cur);
        if (u < 0) return -1;
        const ir_node *n = &g->nodes[u];
        if ((n->op == IR_OP_RESHAPE || (n->op == IR_OP_TRANSPOSE && order_keeping_transpose(g, n))) && n->in[0] == cur) {
            cur = u;
            continue;
        }
        bool prod = (n->op == IR_OP_DEQUANT_MATMUL && n->n_in == 2) || (n->op == IR_OP_DEQUANT_MATMUL_ADD && n->n_in == 3);
        if (!prod || !read_once_at(n, cur, 0) || g->nodes[cur].shape.rank != 2 || a->n_in + n->n_in - 1 > IR_MAX_INPUTS)
            return -1;
        return u;
    }
    return -1;
}

rlx_status pass_fold_combine_inplace(ir_graph *g, fold_epilogue_pred ok, void *ctx, int *n_folded) {
    *n_folded = 0;
    int32_t *uses = pass_use_counts(g);
    if (!uses) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fold combine: out of memory");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        int32_t j = pass_combine_consumer(g, uses, i);
        if (j < 0 || (ok && !ok(ctx, g, i, j))) continue;
        const ir_node a = g->nodes[i];
        ir_node *p = &g->nodes[j];
        const int32_t q = a.in[0];
        for (int32_t v = p->in[0]; v != i;) {   /* the views, from the product back to attention */
            int32_t prev = g->nodes[v].in[0];
            make_unused(g, v, q);
            v = prev;
        }
        ir_node f = a;   /* attention's inputs and attributes in the product's node (its name stays its own) */
        f.op = IR_OP_ATTENTION_DEQUANT;
        ir_attrs_clear(&f);
        ir_attr_set_attention_dequant_mask(&f, ir_attr_attention_mask(&a));
        ir_attr_set_attention_dequant_has_kv_len(&f, ir_attr_attention_has_kv_len(&a));
        ir_attr_set_attention_dequant_scale(&f, ir_attr_attention_scale(&a));
        ir_attr_set_attention_dequant_product_op(&f, p->op);
        ir_attr_set_attention_dequant_attention_inputs(&f, a.n_in);
        ir_attr_set_attention_dequant_rows(&f, p->shape.d[0].k);
        for (int k = 1; k < p->n_in; k++) f.in[f.n_in++] = p->in[k];
        f.name = p->name;
        f.shape = p->shape;
        f.dtype = p->dtype;
        f.data = NULL;
        f.data_bytes = 0;
        *p = f;
        make_unused(g, i, q);
        (*n_folded)++;
    }
    free(uses);
    return RLX_OK;
}
