/*
 * fold_bn.c — batch_norm folded into the convolution before it:
 *
 *   batch_norm(conv(x, w[, b]), gamma, beta, mean, var) [-> act]
 *     => conv(x, w', b') [act]    w'[o] = w[o] a[o], b' = (b - mean) a + beta,
 *                                 a = gamma / sqrt(var + eps)
 *
 * when the conv result has no other use (and is not an output), the conv has
 * no activation of its own, and w, b and the four statistics are all
 * constants or all params. A following activation whose input is the
 * batch_norm alone (relu, ... as fuse.c knows them) becomes the conv's, and
 * so does one straight after a conv without a batch_norm (an export whose
 * exporter folded the batch_norm itself):
 *
 *   act(conv(x, w[, b]))  =>  conv(x, w[, b]) [act]
 *
 * Constants fold here, on the host, into new constants. Params' values are
 * known only once set, so the conv takes two new params instead (named
 * "<w>.bn_fold<k>" and "<w>.bn_fold<k>.bias") and the pass returns a recipe
 * per fold; the runtime (exec.c) computes the folded values on the host with
 * bn_fold_compute whenever a source param was set since the last run — once
 * per param change, not per run. Sources written in place by the graph
 * (assign, a KV cache) never fold.
 */
#include "passes/passes.h"
#include "passes/rebuild.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bn_fold_list_free(bn_fold_list *l) {
    for (int i = 0; i < l->n; i++) {
        bn_fold *f = &l->items[i];
        free(f->w_out), free(f->b_out), free(f->w), free(f->b);
        for (int k = 0; k < 4; k++) free(f->stat[k]);
    }
    free(l->items);
    l->items = NULL, l->n = 0;
}

void bn_fold_compute(int64_t O, int64_t per_o, double eps, const float *w, const float *b, const float *const stat[4],
                     float *w_out, float *b_out) {
    for (int64_t o = 0; o < O; o++) {
        double a = (double)stat[0][o] / sqrt((double)stat[3][o] + eps);
        for (int64_t k = 0; k < per_o; k++) w_out[o * per_o + k] = (float)((double)w[o * per_o + k] * a);
        b_out[o] = (float)(((b ? (double)b[o] : 0.0) - (double)stat[2][o]) * a + (double)stat[1][o]);
    }
}

static bool written_in_place(const ir_graph *g, int32_t id) {
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (ir_writes_param(&g->nodes[i]) && g->nodes[i].in[0] == id) return true;
    return false;
}

/* 1: every source a constant, 2: every source a param (none written in place), 0: no fold. */
static int sources_kind(const ir_graph *g, const int32_t *src, int n) {
    bool all_const = true, all_param = true;
    for (int i = 0; i < n; i++) {
        const ir_node *s = &g->nodes[src[i]];
        all_const &= s->op == IR_OP_CONST && s->data != NULL && s->dtype == RLX_F32;
        all_param &= s->op == IR_OP_PARAM && s->dtype == RLX_F32 && !written_in_place(g, src[i]);
    }
    return all_const ? 1 : all_param ? 2 : 0;
}

/* The one node using id (uses[id] == 1), or -1. */
static int32_t user_of(const ir_graph *g, int32_t id) {
    for (int32_t i = id + 1; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_in; j++)
            if (g->nodes[i].in[j] == id) return i;
    return -1;
}

typedef struct fold_plan {
    int32_t conv, bn, act_node;   /* bn -1: no plan here; ACT_ONLY: an activation joins the conv alone */
    int kind;                     /* sources_kind */
} fold_plan;

#define ACT_ONLY (-2)

static char *str_dup_or_null(const char *s) { return s ? rlx_strdup(s) : NULL; }

static bool name_taken(const ir_graph *g, const char *name) {
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].name && !strcmp(g->nodes[i].name, name)) return true;
    return false;
}

/* "<w>.bn_fold<k><suffix>", with a further "_" while a node of src has that name. */
static char *fold_name(const ir_graph *src, const char *w, int k, const char *suffix) {
    char name[600];
    int extra = 0;
    do {
        snprintf(name, sizeof name, "%s.bn_fold%d%.*s%s", w, k, extra, "________________", suffix);
    } while (name_taken(src, name) && ++extra <= 16);
    return rlx_strdup(name);
}

static rlx_status append_source(ir_graph *dst, ir_op op, const char *name, const ir_shape *shape, void *data,
                                size_t bytes, int32_t *id) {
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = op, n.dtype = RLX_F32, n.shape = *shape;
    n.name = (char *)name, n.data = data, n.data_bytes = bytes;
    return rebuild_copy_node(dst, &n, NULL, id);
}

/* The conv of plan p with the activation node's act, name and shape. */
static rlx_status emit_act_only(const ir_graph *src, const fold_plan *p, const int32_t *remap, ir_graph *dst, int32_t *id) {
    const ir_node *act = &src->nodes[p->act_node];
    ir_node c = src->nodes[p->conv];
    c.name = act->name;
    c.shape = act->shape;
    ir_attr_set_conv_act(&c, pass_activation_of(act->op));
    return rebuild_copy_node(dst, &c, remap, id);
}

/* Emits the folded conv for plan p into dst; *conv_id is its id. */
static rlx_status emit_fold(const ir_graph *src, const fold_plan *p, const int32_t *remap, ir_graph *dst,
                            bn_fold_list *folds, int32_t *conv_id) {
    if (p->bn == ACT_ONLY) return emit_act_only(src, p, remap, dst, conv_id);
    const ir_node *conv = &src->nodes[p->conv], *bn = &src->nodes[p->bn];
    const ir_node *w = &src->nodes[conv->in[1]];
    bool has_b = ir_attr_conv_has_bias(conv) != 0;
    const ir_node *b = has_b ? &src->nodes[conv->in[2]] : NULL;
    int64_t O = w->shape.d[0].k, per_o = O > 0 ? ir_shape_numel(&w->shape) / O : 0;
    double eps = ir_attr_chan_norm_eps(bn);
    ir_shape bs = {.rank = 1, .d = {ir_dim_const(O)}};
    int32_t wid, bid;
    rlx_status st;
    if (p->kind == 1) {   /* constants: fold now */
        float *wo = malloc(sizeof(float) * (size_t)RLX_MAX(O * per_o, 1)), *bo = malloc(sizeof(float) * (size_t)RLX_MAX(O, 1));
        if (!wo || !bo) { free(wo), free(bo); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fold batch_norm: out of memory"); }
        const float *stat[4];
        for (int k = 0; k < 4; k++) stat[k] = src->nodes[bn->in[1 + k]].data;
        bn_fold_compute(O, per_o, eps, w->data, b ? b->data : NULL, stat, wo, bo);
        st = append_source(dst, IR_OP_CONST, NULL, &w->shape, wo, sizeof(float) * (size_t)(O * per_o), &wid);
        if (st == RLX_OK) st = append_source(dst, IR_OP_CONST, NULL, &bs, bo, sizeof(float) * (size_t)O, &bid);
        free(wo), free(bo);
    } else {              /* params: new params the runtime fills (a recipe) */
        bn_fold *grown = realloc(folds->items, sizeof *grown * (size_t)(folds->n + 1));
        if (!grown) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fold batch_norm: out of memory");
        folds->items = grown;
        bn_fold *f = &folds->items[folds->n];
        memset(f, 0, sizeof *f);
        folds->n++;
        f->w_out = fold_name(src, w->name, folds->n - 1, "");
        f->b_out = fold_name(src, w->name, folds->n - 1, ".bias");
        f->w = rlx_strdup(w->name);
        f->b = b ? str_dup_or_null(b->name) : NULL;
        bool ok = f->w_out && f->b_out && f->w && (!b || f->b);
        for (int k = 0; k < 4; k++) ok &= (f->stat[k] = rlx_strdup(src->nodes[bn->in[1 + k]].name)) != NULL;
        if (!ok) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fold batch_norm: out of memory");
        f->eps = eps, f->O = O, f->per_o = per_o;
        st = append_source(dst, IR_OP_PARAM, f->w_out, &w->shape, NULL, 0, &wid);
        if (st == RLX_OK) st = append_source(dst, IR_OP_PARAM, f->b_out, &bs, NULL, 0, &bid);
    }
    if (st != RLX_OK) return st;
    const ir_node *root = &src->nodes[p->act_node >= 0 ? p->act_node : p->bn];
    ir_node c = *conv;
    c.name = root->name;
    c.shape = root->shape;
    c.n_in = 3;
    c.in[2] = conv->in[0];   /* remapped below; patched after the copy */
    ir_attr_set_conv_has_bias(&c, 1);
    ir_attr_set_conv_act(&c, p->act_node >= 0 ? pass_activation_of(src->nodes[p->act_node].op) : RLX_ACT_NONE);
    c.in[1] = conv->in[0];
    if ((st = rebuild_copy_node(dst, &c, remap, conv_id)) != RLX_OK) return st;
    dst->nodes[*conv_id].in[1] = wid;
    dst->nodes[*conv_id].in[2] = bid;
    return RLX_OK;
}

rlx_status pass_fold_batch_norm(const ir_graph *src, ir_graph *dst, bn_fold_list *folds, int *n_folded) {
    *n_folded = 0;
    int32_t n = src->n_nodes;
    int32_t *uses = pass_use_counts(src), *remap = malloc(sizeof *remap * (size_t)RLX_MAX(n, 1));
    fold_plan *at = malloc(sizeof *at * (size_t)RLX_MAX(n, 1));   /* per node: the fold rooted there (bn = -1: none) */
    bool *skip = calloc((size_t)RLX_MAX(n, 1), sizeof *skip);
    rlx_status st = RLX_OK;
    if (!uses || !remap || !at || !skip) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fold batch_norm: out of memory"); goto done; }
    for (int32_t i = 0; i < n; i++) at[i].bn = -1;
    for (int32_t i = 0; i < n; i++) {
        const ir_node *bn = &src->nodes[i];
        if (bn->op != IR_OP_BATCH_NORM) continue;
        int32_t cv = bn->in[0];
        const ir_node *conv = &src->nodes[cv];
        if (conv->op != IR_OP_CONV || uses[cv] != 1 || ir_attr_conv_act(conv) != RLX_ACT_NONE) continue;
        int32_t s[7];
        int ns = 0;
        s[ns++] = conv->in[1];
        if (ir_attr_conv_has_bias(conv)) s[ns++] = conv->in[2];
        for (int k = 1; k <= 4; k++) s[ns++] = bn->in[k];
        int kind = sources_kind(src, s, ns);
        if (!kind || !ir_shape_is_static(&src->nodes[conv->in[1]].shape)) continue;
        fold_plan p = {.conv = cv, .bn = i, .act_node = -1, .kind = kind};
        int32_t next = uses[i] == 1 ? user_of(src, i) : -1;
        if (next >= 0 && pass_activation_of(src->nodes[next].op) >= 0) p.act_node = next;
        skip[cv] = true;
        if (p.act_node >= 0) skip[i] = true;
        at[p.act_node >= 0 ? p.act_node : i] = p;
        (*n_folded)++;
    }
    for (int32_t i = 0; i < n; i++) {   /* act(conv) left over: the activation joins the conv */
        const ir_node *a = &src->nodes[i];
        if (pass_activation_of(a->op) < 0 || skip[i] || at[i].bn != -1) continue;
        int32_t cv = a->in[0];
        const ir_node *conv = &src->nodes[cv];
        if (conv->op != IR_OP_CONV || uses[cv] != 1 || skip[cv] || ir_attr_conv_act(conv) != RLX_ACT_NONE) continue;
        at[i] = (fold_plan){.conv = cv, .bn = ACT_ONLY, .act_node = i};
        skip[cv] = true;
        (*n_folded)++;
    }
    st = rebuild_begin(src, dst);
    for (int32_t i = 0; st == RLX_OK && i < n; i++) {
        remap[i] = -1;
        if (skip[i]) continue;
        if (at[i].bn != -1) st = emit_fold(src, &at[i], remap, dst, folds, &remap[i]);
        else st = rebuild_copy_node(dst, &src->nodes[i], remap, &remap[i]);
    }
    if (st == RLX_OK) st = rebuild_outputs(src, remap, dst);
    if (st != RLX_OK) ir_graph_clear(dst);
done:
    free(uses), free(remap), free(at), free(skip);
    return st;
}
