/*
 * autodiff.c — rlx_gradients: reverse-mode differentiation appended to the
 * graph that holds the forward pass, so fusion, dead-code removal and the
 * memory planner see forward and backward together.
 *
 * The path is the set of nodes that depend on a differentiated node (through
 * float tensors: ids, masks and comparisons carry no gradient) and that the
 * loss depends on. Every node on it with a path input must have a rule
 * (ir_vjp_rule_of); that is checked before anything is appended, so a graph
 * with a non-differentiable op on the path is left as it was. Nodes are then
 * visited in reverse insertion order, a reverse topological order; each
 * input's contributions are summed in that order, so the gradient graph is
 * the same for the same forward graph.
 */
#include "ir/autodiff.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ir_vjp_rule rules[IR_OP_COUNT];
static pthread_once_t rules_once = PTHREAD_ONCE_INIT;

static void register_rules(void) {
    ir_vjp_register_elementwise(rules);
    ir_vjp_register_nn(rules);
    ir_vjp_register_movement(rules);
    ir_vjp_register_vision(rules);
    ir_vjp_register_chan_norm(rules);
}

ir_vjp_rule ir_vjp_rule_of(ir_op op) {
    pthread_once(&rules_once, register_rules);
    return (unsigned)op < IR_OP_COUNT ? rules[op] : NULL;
}

/* ------------------------------------------------------------- helpers */

const ir_node *ad_node(const ad_ctx *c, rlx_node x) { return &c->g->g.nodes[x]; }

rlx_node ad_scalar(ad_ctx *c, rlx_dtype dt, double v) { return rlx_scalar(c->g, dt, v); }

rlx_node ad_reshape_to(ad_ctx *c, rlx_node x, const ir_shape *s) {
    if (x == RLX_NO_NODE) return x;
    const ir_shape *xs = &ad_node(c, x)->shape;
    bool same = xs->rank == s->rank;
    for (int i = 0; same && i < s->rank; i++) same = ir_dim_eq(xs->d[i], s->d[i]);
    return same ? x : ir_build_shaped(c->g, "rlx_gradients", IR_OP_RESHAPE, x, s);
}

rlx_node ad_expand_to(ad_ctx *c, rlx_node x, const ir_shape *s) {
    if (x == RLX_NO_NODE) return x;
    const ir_shape *xs = &ad_node(c, x)->shape;
    bool same = xs->rank == s->rank;
    for (int i = 0; same && i < s->rank; i++) same = ir_dim_eq(xs->d[i], s->d[i]);
    return same ? x : ir_build_shaped(c->g, "rlx_gradients", IR_OP_EXPAND, x, s);
}

rlx_node ad_zeros_like(ad_ctx *c, rlx_node x) {
    ir_shape s = ad_node(c, x)->shape;
    return ad_expand_to(c, ad_scalar(c, ad_node(c, x)->dtype, 0.0), &s);
}

rlx_node ad_sum_keep(ad_ctx *c, rlx_node x, uint32_t axes_mask) {
    ir_shape s = ad_node(c, x)->shape;
    return ad_expand_to(c, rlx_reduce_sum(c->g, x, axes_mask, 1), &s);
}

rlx_node ad_count(ad_ctx *c, rlx_node x, uint32_t axes_mask, rlx_dtype dt) {
    ir_shape s = ad_node(c, x)->shape;
    double count = 1;
    bool fixed = true;
    for (int i = 0; i < s.rank; i++)
        if (axes_mask & (1u << i)) {
            if (ir_dim_is_static(s.d[i])) count *= (double)s.d[i].k;
            else fixed = false;
        }
    if (fixed) return ad_scalar(c, dt, count);
    /* A symbolic reduced dim: count ones over those axes (one row of them). */
    ir_shape ones = s;
    for (int i = 0; i < s.rank; i++)
        if (!(axes_mask & (1u << i))) ones.d[i] = ir_dim_const(1);
    rlx_node one = ad_expand_to(c, ad_scalar(c, dt, 1.0), &ones);
    ir_shape scalar = {.rank = 0};
    return ad_reshape_to(c, rlx_reduce_sum(c->g, one, 0, 0), &scalar);
}

rlx_node ad_unreduce(ad_ctx *c, rlx_node gy, rlx_node x, uint32_t axes_mask) {
    ir_shape xs = ad_node(c, x)->shape, keep = xs;
    for (int i = 0; i < xs.rank; i++)
        if (axes_mask & (1u << i)) keep.d[i] = ir_dim_const(1);
    return ad_expand_to(c, ad_reshape_to(c, gy, &keep), &xs);
}

/* Sums gradient gx (a broadcast result) down to shape target. */
static rlx_node unbroadcast(ad_ctx *c, rlx_node gx, const ir_shape *target) {
    if (gx == RLX_NO_NODE) return gx;
    ir_shape s = ad_node(c, gx)->shape;
    uint32_t mask = 0;
    int lead = s.rank - target->rank;
    for (int i = 0; i < s.rank; i++) {
        int j = i - lead;
        bool one_in_target = j < 0 || (ir_dim_is_static(target->d[j]) && target->d[j].k == 1);
        bool one_here = ir_dim_is_static(s.d[i]) && s.d[i].k == 1;
        if (one_in_target && !one_here) mask |= 1u << i;
    }
    if (mask) gx = rlx_reduce_sum(c->g, gx, mask, 1);
    return ad_reshape_to(c, gx, target);
}

/* ---------------------------------------------------------------- driver */

static rlx_status fail_at(const rlx_graph *g, int32_t id, rlx_status st, const char *why) {
    char label[160];
    ir_node_label(&g->g, id, label, sizeof label);
    return rlx_fail(st, "rlx_gradients: %s: %s", label, why);
}

static bool is_float(rlx_dtype dt) { return ir_dtype_is_float(dt); }

rlx_status rlx_gradients(rlx_graph *g, rlx_node loss, int n, const rlx_node *wrt, rlx_node *grads) {
    if (!g) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_gradients: graph is NULL");
    if (g->g.first_error != RLX_OK)
        return rlx_fail(g->g.first_error, "rlx_gradients: the graph has an earlier error: %s", g->first_error_msg);
    if (n < 1 || !wrt || !grads)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_gradients: needs n >= 1 nodes in wrt and room in grads (n %d)", n);
    const int32_t N = g->g.n_nodes;
    if (loss < 0 || loss >= N) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_gradients: loss %d is not a node of this graph", loss);
    for (int i = 0; i < n; i++) {
        grads[i] = RLX_NO_NODE;
        if (wrt[i] < 0 || wrt[i] >= N)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_gradients: wrt[%d] = %d is not a node of this graph", i, wrt[i]);
        if (!is_float(g->g.nodes[wrt[i]].dtype))
            return fail_at(g, wrt[i], RLX_STATUS_INVALID_ARGUMENT, "only float tensors have gradients (wrt)");
    }
    const ir_node *L = &g->g.nodes[loss];
    if (!is_float(L->dtype)) return fail_at(g, loss, RLX_STATUS_INVALID_ARGUMENT, "the loss must be a float tensor");
    for (int i = 0; i < L->shape.rank; i++)
        if (!ir_dim_is_static(L->shape.d[i]) || L->shape.d[i].k != 1)
            return fail_at(g, loss, RLX_STATUS_SHAPE, "the loss must have one element (shape [] or all dims 1)");

    uint8_t *dep = calloc((size_t)N, 1), *reach = calloc((size_t)N, 1);
    rlx_node *grad = malloc(sizeof *grad * (size_t)N);
    if (!dep || !reach || !grad) {
        free(dep), free(reach), free(grad);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_gradients: out of memory for %d nodes", N);
    }
    for (int i = 0; i < n; i++) dep[wrt[i]] = 1;
    for (int32_t i = 0; i < N; i++) {
        const ir_node *x = &g->g.nodes[i];
        if (!is_float(x->dtype)) { dep[i] = 0; continue; }
        for (int k = 0; k < x->n_in && !dep[i]; k++) dep[i] = dep[x->in[k]];
    }
    reach[loss] = 1;
    for (int32_t i = loss; i >= 0; i--)
        if (reach[i])
            for (int k = 0; k < g->g.nodes[i].n_in; k++) reach[g->g.nodes[i].in[k]] = 1;

    /* Every node on the path that passes a gradient on needs a rule. */
    rlx_status st = RLX_OK;
    for (int32_t i = loss; i >= 0 && st == RLX_OK; i--) {
        const ir_node *x = &g->g.nodes[i];
        if (!dep[i] || !reach[i]) continue;
        bool passes = false;
        for (int k = 0; k < x->n_in; k++) passes |= dep[x->in[k]] && reach[x->in[k]];
        if (passes && !ir_vjp_rule_of(x->op)) {
            char why[128];
            snprintf(why, sizeof why, "op '%s' has no gradient rule, and it lies between the loss and a node "
                     "to differentiate", ir_op_info_get(x->op)->name);
            st = fail_at(g, i, RLX_STATUS_UNSUPPORTED, why);
        }
    }

    ad_ctx c = {.g = g};
    for (int32_t i = 0; i < N; i++) grad[i] = RLX_NO_NODE;
    if (st == RLX_OK) {
        ir_shape ls = L->shape;
        grad[loss] = ad_expand_to(&c, ad_scalar(&c, L->dtype, 1.0), &ls);
    }
    for (int32_t i = loss; i >= 0 && st == RLX_OK; i--) {
        if (!dep[i] || !reach[i] || grad[i] == RLX_NO_NODE) continue;
        ir_node x = g->g.nodes[i];   /* a copy: rules append nodes */
        bool need[IR_MAX_INPUTS] = {0}, any = false;
        for (int k = 0; k < x.n_in; k++) any |= need[k] = dep[x.in[k]] && reach[x.in[k]];
        if (!any) continue;
        rlx_node gin[IR_MAX_INPUTS];
        for (int k = 0; k < IR_MAX_INPUTS; k++) gin[k] = RLX_NO_NODE;
        c.id = i;
        st = ir_vjp_rule_of(x.op)(&c, &x, grad[i], need, gin);
        for (int k = 0; k < x.n_in && st == RLX_OK; k++) {
            if (!need[k] || gin[k] == RLX_NO_NODE) continue;
            ir_shape target = g->g.nodes[x.in[k]].shape;
            rlx_node gk = unbroadcast(&c, gin[k], &target);
            grad[x.in[k]] = grad[x.in[k]] == RLX_NO_NODE ? gk : rlx_add(g, grad[x.in[k]], gk);
        }
        if (st == RLX_OK && g->g.first_error != RLX_OK) st = g->g.first_error;
        if (st != RLX_OK) {
            char why[600];
            snprintf(why, sizeof why, "building its gradient failed: %s", rlx_last_error());
            st = fail_at(g, i, st, why);
        }
    }
    for (int i = 0; i < n && st == RLX_OK; i++) {
        grads[i] = grad[wrt[i]] != RLX_NO_NODE ? grad[wrt[i]] : ad_zeros_like(&c, wrt[i]);
        if (grads[i] == RLX_NO_NODE) st = fail_at(g, wrt[i], g->g.first_error, rlx_last_error());
    }
    if (st != RLX_OK)
        for (int i = 0; i < n; i++) grads[i] = RLX_NO_NODE;
    free(dep), free(reach), free(grad);
    return st;
}
