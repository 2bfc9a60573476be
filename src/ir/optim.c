/*
 * optim.c — optimizer steps as graph nodes (rlx_optimizer_step): SGD with
 * momentum and Nesterov, AdamW with bias correction and decoupled weight
 * decay, and clipping by the gradients' global norm. Each update is ordinary
 * elementwise nodes ending in rlx_assign on the param and its state params,
 * so a compiled train step updates everything in place on the device and
 * the fusion pass can merge each update into few kernels.
 *
 * The arithmetic follows PyTorch's single-tensor implementations step for
 * step (the order of operations included), so a run agrees with
 * torch.optim to f32 rounding: AdamW scales p by (1 - lr wd) first, then
 * p -= (lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps).
 */
#include "ir/ir.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

rlx_status rlx_optimizer_options_init(rlx_optimizer_options *o, rlx_optimizer kind) {
    if (!o) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_optimizer_options_init: options are NULL");
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->eps = 1e-8;
    if (kind == RLX_OPT_ADAMW) o->weight_decay = 0.01;
    else if (kind != RLX_OPT_SGD)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_optimizer_options_init: unknown optimizer %d", (int)kind);
    return RLX_OK;
}

static rlx_status check_options(const rlx_optimizer_options *o) {
    const char *fn = "rlx_optimizer_step";
    if (o->kind != RLX_OPT_SGD && o->kind != RLX_OPT_ADAMW)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: unknown optimizer %d", fn, (int)o->kind);
    double v[6] = {o->momentum, o->beta1, o->beta2, o->eps, o->weight_decay, o->clip_norm};
    for (int i = 0; i < 6; i++)
        if (!isfinite(v[i])) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: an option is not finite", fn);
    if (o->momentum < 0 || o->weight_decay < 0 || o->clip_norm < 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: momentum %g, weight_decay %g and clip_norm %g must be >= 0", fn,
                        o->momentum, o->weight_decay, o->clip_norm);
    if (o->kind == RLX_OPT_SGD && o->nesterov && !(o->momentum > 0))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: nesterov needs momentum > 0", fn);
    if (o->kind == RLX_OPT_ADAMW && (!(o->beta1 >= 0 && o->beta1 < 1) || !(o->beta2 >= 0 && o->beta2 < 1) || !(o->eps > 0)))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: AdamW needs betas in [0, 1) and eps > 0 (%g, %g, %g)", fn,
                        o->beta1, o->beta2, o->eps);
    return RLX_OK;
}

/* A state param shaped like p, named "<p's name><suffix>". */
static rlx_node state_like(rlx_graph *g, rlx_node p, const char *suffix) {
    const ir_node *pn = &g->g.nodes[p];
    char name[256];
    snprintf(name, sizeof name, "%s%s", pn->name ? pn->name : "param", suffix);
    int64_t dims[RLX_MAX_RANK];
    ir_shape_dims(&pn->shape, dims);
    return rlx_param(g, name, pn->dtype, pn->shape.rank, dims);
}

static rlx_node k(rlx_graph *g, double v) { return rlx_scalar(g, RLX_F32, v); }

rlx_status rlx_optimizer_step(rlx_graph *g, const rlx_optimizer_options *o, int n, const rlx_node *params,
                              const rlx_node *grads, rlx_node lr, rlx_node *grad_norm) {
    const char *fn = "rlx_optimizer_step";
    if (grad_norm) *grad_norm = RLX_NO_NODE;
    if (!g || !o) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph and options are required", fn);
    if (g->g.first_error != RLX_OK)
        return rlx_fail(g->g.first_error, "%s: the graph has an earlier error: %s", fn, g->first_error_msg);
    if (n < 1 || !params || !grads) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: needs n >= 1 params and grads", fn);
    rlx_status st = check_options(o);
    if (st != RLX_OK) return st;
    const int32_t N = g->g.n_nodes;
    if (lr < 0 || lr >= N || g->g.nodes[lr].dtype != RLX_F32 || !ir_shape_is_static(&g->g.nodes[lr].shape) ||
        ir_shape_numel(&g->g.nodes[lr].shape) != 1)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: lr must be an f32 node of one element", fn);
    for (int i = 0; i < n; i++) {
        char label[160];
        if (params[i] < 0 || params[i] >= N || grads[i] < 0 || grads[i] >= N)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: params[%d] or grads[%d] is not a node of this graph", fn, i, i);
        const ir_node *p = &g->g.nodes[params[i]], *gr = &g->g.nodes[grads[i]];
        ir_node_label(&g->g, params[i], label, sizeof label);
        if (p->op != IR_OP_PARAM) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: %s is not a param", fn, label);
        if (p->dtype != RLX_F32) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s is %s; optimizers update f32 params", fn, label, rlx_dtype_name(p->dtype));
        bool same = gr->dtype == p->dtype && gr->shape.rank == p->shape.rank;
        for (int d = 0; same && d < p->shape.rank; d++) same = ir_dim_eq(gr->shape.d[d], p->shape.d[d]);
        if (!same) return rlx_fail(RLX_STATUS_SHAPE, "%s: the gradient of %s is not shaped and typed like it", fn, label);
    }
    rlx_node lr0 = g->g.nodes[lr].shape.rank ? rlx_reshape(g, lr, 0, NULL) : lr;   /* a scalar */

    /* the gradients' global L2 norm, and clipping */
    rlx_node scale = RLX_NO_NODE;
    if (grad_norm || o->clip_norm > 0) {
        rlx_node total = RLX_NO_NODE;
        for (int i = 0; i < n; i++) {
            rlx_node s = rlx_reduce_sum(g, rlx_mul(g, grads[i], grads[i]), 0, 0);
            total = total == RLX_NO_NODE ? s : rlx_add(g, total, s);
        }
        total = rlx_sqrt(g, total);
        if (grad_norm) *grad_norm = total;
        if (o->clip_norm > 0)
            scale = rlx_min(g, k(g, 1.0), rlx_div(g, k(g, o->clip_norm), rlx_add(g, total, k(g, 1e-6))));
    }
    rlx_node t = RLX_NO_NODE, bc1 = RLX_NO_NODE, bc2s = RLX_NO_NODE;
    if (o->kind == RLX_OPT_ADAMW) {
        int64_t d[1] = {1};
        rlx_node step = rlx_param(g, "optimizer.step", RLX_F32, 1, d);
        t = rlx_assign(g, step, rlx_add(g, step, k(g, 1.0)));
        bc1 = rlx_sub(g, k(g, 1.0), rlx_pow(g, k(g, o->beta1), t));
        bc2s = rlx_sqrt(g, rlx_sub(g, k(g, 1.0), rlx_pow(g, k(g, o->beta2), t)));
        bc1 = rlx_reshape(g, bc1, 0, d);
        bc2s = rlx_reshape(g, bc2s, 0, d);
    }
    for (int i = 0; i < n; i++) {
        rlx_node p = params[i], gr = scale != RLX_NO_NODE ? rlx_mul(g, grads[i], scale) : grads[i];
        if (o->kind == RLX_OPT_SGD) {
            if (o->weight_decay > 0) gr = rlx_add(g, gr, rlx_mul(g, p, k(g, o->weight_decay)));
            if (o->momentum > 0) {
                rlx_node buf = state_like(g, p, ".momentum");
                rlx_node nb = rlx_assign(g, buf, rlx_add(g, rlx_mul(g, buf, k(g, o->momentum)), gr));
                gr = o->nesterov ? rlx_add(g, gr, rlx_mul(g, nb, k(g, o->momentum))) : nb;
            }
            rlx_assign(g, p, rlx_sub(g, p, rlx_mul(g, gr, lr0)));
        } else {
            rlx_node m = state_like(g, p, ".adam_m"), v = state_like(g, p, ".adam_v");
            rlx_node pd = o->weight_decay > 0 ? rlx_mul(g, p, rlx_sub(g, k(g, 1.0), rlx_mul(g, lr0, k(g, o->weight_decay)))) : p;
            rlx_node nm = rlx_assign(g, m, rlx_add(g, rlx_mul(g, m, k(g, o->beta1)), rlx_mul(g, gr, k(g, 1 - o->beta1))));
            rlx_node nv = rlx_assign(g, v, rlx_add(g, rlx_mul(g, v, k(g, o->beta2)),
                                                   rlx_mul(g, rlx_mul(g, gr, gr), k(g, 1 - o->beta2))));
            rlx_node denom = rlx_add(g, rlx_div(g, rlx_sqrt(g, nv), bc2s), k(g, o->eps));
            rlx_node step_size = rlx_div(g, lr0, bc1);
            rlx_assign(g, p, rlx_sub(g, pd, rlx_mul(g, step_size, rlx_div(g, nm, denom))));
        }
    }
    if (g->g.first_error != RLX_OK) return rlx_fail(g->g.first_error, "%s: %s", fn, g->first_error_msg);
    return RLX_OK;
}
