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
 *
 * Gradient accumulation and dynamic loss scaling make the update
 * conditional: each assign stores where(apply, new, old), so the step stays
 * one graph with no host decision. apply is "the last micro-batch of the
 * window" and "the gradients are finite"; the finiteness test is the squared
 * global norm being at most FLT_MAX (an Inf or NaN anywhere makes it fail),
 * computed once and shared with clipping.
 */
#include "ir/ir.h"
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
    double v[7] = {o->momentum, o->beta1, o->beta2, o->eps, o->weight_decay, o->clip_norm, o->loss_scale};
    for (int i = 0; i < 7; i++)
        if (!isfinite(v[i])) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: an option is not finite", fn);
    if (o->momentum < 0 || o->weight_decay < 0 || o->clip_norm < 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: momentum %g, weight_decay %g and clip_norm %g must be >= 0", fn,
                        o->momentum, o->weight_decay, o->clip_norm);
    if (o->accumulate < 0 || o->accumulate > (1 << 24) || o->loss_scale < 0 || o->loss_scale_interval < 0 ||
        o->loss_scale > 1e30)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT,
                        "%s: accumulate %d must be in [0, 2^24], loss_scale %g in [0, 1e30], loss_scale_interval %d >= 0",
                        fn, o->accumulate, o->loss_scale, o->loss_scale_interval);
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

static rlx_node find_param(const rlx_graph *g, const char *name) {
    for (int32_t i = 0; i < g->g.n_nodes; i++)
        if (g->g.nodes[i].op == IR_OP_PARAM && g->g.nodes[i].name && !strcmp(g->g.nodes[i].name, name)) return i;
    return RLX_NO_NODE;
}

#define SCALE_LOG2 "optimizer.loss_scale_log2"
#define SCALE_GOOD "optimizer.loss_scale_good"

/* S = loss_scale * 2^e, a scalar, from the state param e. */
static rlx_node loss_scale_of(rlx_graph *g, const rlx_optimizer_options *o, rlx_node e) {
    return rlx_mul(g, k(g, o->loss_scale), rlx_pow(g, k(g, 2.0), rlx_reshape(g, e, 0, NULL)));
}

rlx_node rlx_scale_loss(rlx_graph *g, rlx_node loss, const rlx_optimizer_options *o) {
    if (!g) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_scale_loss: graph is NULL");
        return RLX_NO_NODE;
    }
    if (!o || !(o->loss_scale > 0)) return loss;
    if (find_param(g, SCALE_LOG2) != RLX_NO_NODE) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_scale_loss: the graph already scales a loss (" SCALE_LOG2 " exists)");
        if (g->g.first_error == RLX_OK) {
            g->g.first_error = RLX_STATUS_INVALID_ARGUMENT;
            snprintf(g->first_error_msg, sizeof g->first_error_msg, "%s", rlx_last_error());
        }
        return RLX_NO_NODE;
    }
    int64_t d[1] = {1};
    rlx_node e = rlx_param(g, SCALE_LOG2, RLX_F32, 1, d);
    return rlx_mul(g, loss, loss_scale_of(g, o, e));
}

/* param = apply ? value : param (plain assign when apply is no node). */
static rlx_node commit(rlx_graph *g, rlx_node apply, rlx_node param, rlx_node value) {
    return rlx_assign(g, param, apply == RLX_NO_NODE ? value : rlx_where(g, apply, value, param));
}

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
    rlx_node scale_e = RLX_NO_NODE;
    if (o->loss_scale > 0 && (scale_e = find_param(g, SCALE_LOG2)) == RLX_NO_NODE)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT,
                        "%s: loss_scale is set, but no loss was scaled: differentiate rlx_scale_loss(g, loss, options)", fn);
    rlx_node lr0 = g->g.nodes[lr].shape.rank ? rlx_reshape(g, lr, 0, NULL) : lr;   /* a scalar */
    int64_t d1[1] = {1};
    rlx_node *total_grad = malloc(sizeof *total_grad * (size_t)n);
    if (!total_grad) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", fn);
    memcpy(total_grad, grads, sizeof *total_grad * (size_t)n);

    /* accumulation: the window's last run applies; the others only add */
    rlx_node done = RLX_NO_NODE;
    if (o->accumulate > 1) {
        rlx_node micro = rlx_param(g, "optimizer.micro", RLX_F32, 1, d1);
        rlx_node m1 = rlx_add(g, micro, k(g, 1.0));
        done = rlx_ge(g, m1, k(g, o->accumulate));
        rlx_assign(g, micro, rlx_where(g, done, k(g, 0.0), m1));
        for (int i = 0; i < n; i++) {
            rlx_node acc = state_like(g, params[i], ".grad_acc");
            total_grad[i] = rlx_add(g, acc, grads[i]);
            rlx_assign(g, acc, rlx_where(g, done, k(g, 0.0), total_grad[i]));
        }
    }
    /* the mean over the window, unscaled: one factor, applied with clipping's
     * in a single multiply per gradient (the norm is the raw sum of squares
     * times the factor squared, exact for a power-of-two loss scale) */
    rlx_node unscale = o->accumulate > 1 ? k(g, 1.0 / o->accumulate) : RLX_NO_NODE;
    if (scale_e != RLX_NO_NODE) {
        rlx_node inv = rlx_div(g, k(g, 1.0), loss_scale_of(g, o, scale_e));
        unscale = unscale == RLX_NO_NODE ? inv : rlx_mul(g, inv, unscale);
    }

    /* the gradients' global L2 norm: clipping, the caller's output, the finiteness test */
    rlx_node scale = unscale, sumsq = RLX_NO_NODE;
    if (grad_norm || o->clip_norm > 0 || scale_e != RLX_NO_NODE) {
        for (int i = 0; i < n; i++) {
            rlx_node s = rlx_reduce_sum(g, rlx_mul(g, total_grad[i], total_grad[i]), 0, 0);
            sumsq = sumsq == RLX_NO_NODE ? s : rlx_add(g, sumsq, s);
        }
        if (unscale != RLX_NO_NODE) sumsq = rlx_mul(g, sumsq, rlx_mul(g, unscale, unscale));
        rlx_node total = rlx_sqrt(g, sumsq);
        if (grad_norm) *grad_norm = total;
        if (o->clip_norm > 0) {
            rlx_node clip = rlx_min(g, k(g, 1.0), rlx_div(g, k(g, o->clip_norm), rlx_add(g, total, k(g, 1e-6))));
            scale = unscale == RLX_NO_NODE ? clip : rlx_mul(g, unscale, clip);
        }
    }
    rlx_node apply = done;
    if (scale_e != RLX_NO_NODE) {
        rlx_node finite = rlx_reshape(g, rlx_le(g, sumsq, k(g, FLT_MAX)), 1, d1);
        apply = done == RLX_NO_NODE ? finite : rlx_where(g, done, finite, done);
        /* S halves after a skipped update and doubles after `interval` good ones */
        rlx_node good = rlx_param(g, SCALE_GOOD, RLX_F32, 1, d1);
        double interval = o->loss_scale_interval > 0 ? o->loss_scale_interval : 2000;
        rlx_node good1 = rlx_add(g, good, k(g, 1.0));
        rlx_node grow = rlx_ge(g, good1, k(g, interval));
        rlx_node e_ok = rlx_where(g, grow, rlx_add(g, scale_e, k(g, 1.0)), scale_e);
        rlx_node good_ok = rlx_where(g, grow, k(g, 0.0), good1);
        rlx_node e_new = rlx_where(g, finite, e_ok, rlx_sub(g, scale_e, k(g, 1.0)));
        rlx_node good_new = rlx_where(g, finite, good_ok, k(g, 0.0));
        if (done != RLX_NO_NODE) e_new = rlx_where(g, done, e_new, scale_e), good_new = rlx_where(g, done, good_new, good);
        rlx_assign(g, scale_e, e_new);
        rlx_assign(g, good, good_new);
    }

    rlx_node t = RLX_NO_NODE, bc1 = RLX_NO_NODE, bc2s = RLX_NO_NODE;
    if (o->kind == RLX_OPT_ADAMW) {
        rlx_node step = rlx_param(g, "optimizer.step", RLX_F32, 1, d1);
        t = commit(g, apply, step, rlx_add(g, step, k(g, 1.0)));
        bc1 = rlx_sub(g, k(g, 1.0), rlx_pow(g, k(g, o->beta1), t));
        bc2s = rlx_sqrt(g, rlx_sub(g, k(g, 1.0), rlx_pow(g, k(g, o->beta2), t)));
        bc1 = rlx_reshape(g, bc1, 0, d1);
        bc2s = rlx_reshape(g, bc2s, 0, d1);
    }
    /* the scalars every param's update shares, computed once */
    rlx_node decay = o->weight_decay > 0 ? rlx_sub(g, k(g, 1.0), rlx_mul(g, lr0, k(g, o->weight_decay))) : RLX_NO_NODE;
    rlx_node step_size = o->kind == RLX_OPT_ADAMW ? rlx_div(g, lr0, bc1) : RLX_NO_NODE;
    for (int i = 0; i < n; i++) {
        rlx_node p = params[i], gr = scale != RLX_NO_NODE ? rlx_mul(g, total_grad[i], scale) : total_grad[i];
        if (o->kind == RLX_OPT_SGD) {
            if (o->weight_decay > 0) gr = rlx_add(g, gr, rlx_mul(g, p, k(g, o->weight_decay)));
            if (o->momentum > 0) {
                rlx_node buf = state_like(g, p, ".momentum");
                rlx_node nb = commit(g, apply, buf, rlx_add(g, rlx_mul(g, buf, k(g, o->momentum)), gr));
                gr = o->nesterov ? rlx_add(g, gr, rlx_mul(g, nb, k(g, o->momentum))) : nb;
            }
            commit(g, apply, p, rlx_sub(g, p, rlx_mul(g, gr, lr0)));
        } else {
            rlx_node m = state_like(g, p, ".adam_m"), v = state_like(g, p, ".adam_v");
            rlx_node pd = decay != RLX_NO_NODE ? rlx_mul(g, p, decay) : p;
            rlx_node nm = commit(g, apply, m, rlx_add(g, rlx_mul(g, m, k(g, o->beta1)), rlx_mul(g, gr, k(g, 1 - o->beta1))));
            rlx_node nv = commit(g, apply, v, rlx_add(g, rlx_mul(g, v, k(g, o->beta2)),
                                                      rlx_mul(g, rlx_mul(g, gr, gr), k(g, 1 - o->beta2))));
            rlx_node denom = rlx_add(g, rlx_div(g, rlx_sqrt(g, nv), bc2s), k(g, o->eps));
            commit(g, apply, p, rlx_sub(g, pd, rlx_mul(g, step_size, rlx_div(g, nm, denom))));
        }
    }
    free(total_grad);
    if (g->g.first_error != RLX_OK) return rlx_fail(g->g.first_error, "%s: %s", fn, g->first_error_msg);
    return RLX_OK;
}
