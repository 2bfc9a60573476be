/*
 * fuse.c — pattern fusion, for the patterns the backend claims:
 *
 *   matmul(a, b) [-> add(., bias[N])] [-> act(.)]   => matmul_bias_act
 *   add(x, r) -> layer_norm / rms_norm(., gamma[, beta]) => add_layer_norm / add_rms_norm
 *   add(dequant_matmul(x, w), r), r shaped like the product  => dequant_matmul_add
 *   mul(silu(dequant_matmul(x, wg)), dequant_matmul(x, wu))   => dequant_swiglu
 *     (wg, wu of one dtype and shape; a decoder's residual adds and SwiGLU,
 *     so a decode layer runs 5 fewer dispatches: two adds, silu, mul, and
 *     one of the two projections)
 *   kv_write(cache, rope(x, offset[, ff]), pos)                => rope_kv_write
 *     (a decoder's K rows are roped straight into the cache: on the GPU one
 *     dependent dispatch stage per layer fewer)
 *   act(add(conv(x, w[, b]), r)), r shaped like the conv      => conv(x, w[, b], r) [act]
 *     (has_residual: a ResNet block's last conv, its shortcut and the ReLU
 *     after them as one kernel; the conv has no activation of its own, and
 *     the activation is optional)
 *   rms_norm(x, gamma) whose every use is the x of a dequant_matmul or of a
 *   dequant_swiglu planned above                                => each user becomes
 *     rms_dequant_matmul(x, w, gamma) / rms_dequant_swiglu(x, wg, wu, gamma)
 *     (a second sweep, after the one above; the users normalize x themselves:
 *     a Llama layer's attn_norm -> q, k, v and ffn_norm -> gate/up, and the
 *     output norm -> lm head, so on the GPU the norm dispatch disappears)
 *
 * An interior result (the matmul, the add) may be absorbed only when the
 * pattern's next node is its one use and it is not a graph output; a norm
 * absorbed into several users needs all of its uses to be such users.
 * The fused node takes the root's place and name, so outputs stay valid.
 */
#include "passes/passes.h"
#include "passes/rebuild.h"
#include <stdlib.h>
#include <string.h>

int32_t *pass_use_counts(const ir_graph *g) {
    int32_t *uses = calloc((size_t)RLX_MAX(g->n_nodes, 1), sizeof *uses);
    if (!uses) return NULL;
    for (int32_t i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_in; j++) uses[g->nodes[i].in[j]]++;
    for (int32_t i = 0; i < g->n_outputs; i++) uses[g->outputs[i].node]++;
    return uses;
}

int pass_activation_of(ir_op op) {
    switch (op) {
    case IR_OP_RELU:      return RLX_ACT_RELU;
    case IR_OP_GELU:      return RLX_ACT_GELU;
    case IR_OP_GELU_TANH: return RLX_ACT_GELU_TANH;
    case IR_OP_SILU:      return RLX_ACT_SILU;
    case IR_OP_SIGMOID:   return RLX_ACT_SIGMOID;
    case IR_OP_TANH:      return RLX_ACT_TANH;
    default:              return -1;
    }
}

/* A fused node planned at `root`, replacing the nodes in absorbed[]. */
typedef struct fusion {
    ir_node fused;       /* inputs refer to src ids */
} fusion;

/* If `add` is matmul + bias[N] (either operand order), returns the bias id. */
static int32_t bias_of(const ir_graph *g, const ir_node *add, int32_t mm) {
    int32_t other = add->in[0] == mm ? add->in[1] : add->in[0];
    if (add->in[0] == add->in[1]) return -1;
    const ir_node *m = &g->nodes[mm], *b = &g->nodes[other];
    if (b->shape.rank != 1 || b->dtype != m->dtype) return -1;
    if (!ir_dim_eq(b->shape.d[0], m->shape.d[m->shape.rank - 1])) return -1;
    return other;
}

/* Only use of node id (uses[id] == 1 and the use is `user`). */
static bool sole_use(const int32_t *uses, int32_t id) { return uses[id] == 1; }

/* The single user of id, or -1. O(n) scan; passes run once per compile. */
static int32_t user_of(const ir_graph *g, int32_t id) {
    for (int32_t i = id + 1; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_in; j++)
            if (g->nodes[i].in[j] == id) return i;
    return -1;
}

/* dequant_matmul node id feeding operand j of `n` with no other use, or -1. */
static int32_t sole_dequant_in(const ir_graph *g, const int32_t *uses, const ir_node *n, int j) {
    int32_t id = n->in[j];
    return g->nodes[id].op == IR_OP_DEQUANT_MATMUL && sole_use(uses, id) ? id : -1;
}

/* add(dequant_matmul(x, w), r) with r shaped like the product: the fused node, or NULL. */
static fusion *match_dequant_add(const ir_graph *g, const int32_t *uses, int32_t i, bool *absorbed, rlx_status *st) {
    const ir_node *add = &g->nodes[i];
    if (add->op != IR_OP_ADD || add->in[0] == add->in[1] || add->dtype != RLX_F32) return NULL;
    for (int j = 0; j < 2; j++) {
        int32_t dm = sole_dequant_in(g, uses, add, j);
        int32_t r = add->in[1 - j];
        if (dm < 0 || absorbed[dm] || g->nodes[r].dtype != RLX_F32 || !ir_shape_eq(&g->nodes[r].shape, &add->shape) ||
            !ir_shape_eq(&g->nodes[dm].shape, &add->shape))
            continue;
        fusion *f = calloc(1, sizeof *f);
        if (!f) { *st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory"); return NULL; }
        f->fused = g->nodes[dm];
        f->fused.op = IR_OP_DEQUANT_MATMUL_ADD;
        f->fused.name = add->name;
        f->fused.shape = add->shape;
        f->fused.in[2] = r;
        f->fused.n_in = 3;
        absorbed[dm] = true;
        return f;
    }
    return NULL;
}

/* act(add(conv(x, w[, b]), r)) with r shaped like the conv (the activation
 * optional): the conv with r as its residual, planned at the root (the
 * activation, else the add; *root says which), or NULL. */
static fusion *match_conv_residual(const ir_graph *g, const int32_t *uses, int32_t i, bool *absorbed, int32_t *root,
                                   rlx_status *st) {
    const ir_node *add = &g->nodes[i];
    if (add->op != IR_OP_ADD || add->in[0] == add->in[1] || add->dtype != RLX_F32) return NULL;
    for (int j = 0; j < 2; j++) {
        int32_t cv = add->in[j], r = add->in[1 - j];
        const ir_node *conv = &g->nodes[cv];
        if (conv->op != IR_OP_CONV || !sole_use(uses, cv) || absorbed[cv] || ir_attr_conv_act(conv) != RLX_ACT_NONE ||
            ir_attr_conv_has_residual(conv) || conv->n_in >= IR_MAX_INPUTS || g->nodes[r].dtype != RLX_F32 ||
            !ir_shape_eq(&g->nodes[r].shape, &add->shape) || !ir_shape_eq(&conv->shape, &add->shape))
            continue;
        fusion *f = calloc(1, sizeof *f);
        if (!f) { *st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory"); return NULL; }
        f->fused = *conv;
        f->fused.in[f->fused.n_in++] = r;
        ir_attr_set_conv_has_residual(&f->fused, 1);
        *root = i;
        int32_t next = sole_use(uses, i) ? user_of(g, i) : -1;
        if (next >= 0 && pass_activation_of(g->nodes[next].op) >= 0) {
            ir_attr_set_conv_act(&f->fused, pass_activation_of(g->nodes[next].op));
            absorbed[i] = true;
            *root = next;
        }
        f->fused.name = g->nodes[*root].name;
        f->fused.shape = g->nodes[*root].shape;
        absorbed[cv] = true;
        return f;
    }
    return NULL;
}

/* mul(silu(dequant_matmul(x, wg)), dequant_matmul(x, wu)), either operand order. */
static fusion *match_dequant_swiglu(const ir_graph *g, const int32_t *uses, int32_t i, bool *absorbed, rlx_status *st) {
    const ir_node *mul = &g->nodes[i];
    if (mul->op != IR_OP_MUL || mul->in[0] == mul->in[1]) return NULL;
    for (int j = 0; j < 2; j++) {
        int32_t s = mul->in[j], up = sole_dequant_in(g, uses, mul, 1 - j);
        if (g->nodes[s].op != IR_OP_SILU || !sole_use(uses, s) || up < 0 || absorbed[up] || absorbed[s]) continue;
        int32_t gate = sole_dequant_in(g, uses, &g->nodes[s], 0);
        if (gate < 0 || absorbed[gate]) continue;
        const ir_node *gn = &g->nodes[gate], *un = &g->nodes[up];
        const ir_node *wg = &g->nodes[gn->in[1]], *wu = &g->nodes[un->in[1]];
        if (gn->in[0] != un->in[0] || wg->dtype != wu->dtype || !ir_shape_eq(&wg->shape, &wu->shape) ||
            !ir_shape_eq(&gn->shape, &mul->shape))
            continue;
        fusion *f = calloc(1, sizeof *f);
        if (!f) { *st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory"); return NULL; }
        f->fused = *gn;
        f->fused.op = IR_OP_DEQUANT_SWIGLU;
        f->fused.name = mul->name;
        f->fused.shape = mul->shape;
        f->fused.in[2] = un->in[1];
        f->fused.n_in = 3;
        absorbed[gate] = absorbed[s] = absorbed[up] = true;
        return f;
    }
    return NULL;
}

/* kv_write(cache, rope(...), pos) whose rope result has no other use. Inputs
 * become cache, x, pos, then rope's offset and factors; rope's attributes stay. */
static fusion *match_rope_kv_write(const ir_graph *g, const int32_t *uses, int32_t i, bool *absorbed, rlx_status *st) {
    const ir_node *kv = &g->nodes[i];
    int32_t r = kv->in[1];
    const ir_node *rope = &g->nodes[r];
    if (rope->op != IR_OP_ROPE || !sole_use(uses, r) || absorbed[r] || 2 + rope->n_in > IR_MAX_INPUTS) return NULL;
    fusion *f = calloc(1, sizeof *f);
    if (!f) { *st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory"); return NULL; }
    f->fused = *rope;
    f->fused.op = IR_OP_ROPE_KV_WRITE;
    f->fused.name = kv->name;
    f->fused.shape = kv->shape;
    f->fused.dtype = kv->dtype;
    f->fused.in[0] = kv->in[0];
    f->fused.in[1] = rope->in[0];
    f->fused.in[2] = kv->in[2];
    for (int j = 1; j < rope->n_in; j++) f->fused.in[2 + j] = rope->in[j];
    f->fused.n_in = 2 + rope->n_in;
    absorbed[r] = true;
    return f;
}

/* A norm node that is a plain f32 rms_norm: no beta, gamma f32 [K]. */
static bool plain_rms_norm(const ir_graph *g, const ir_node *n) {
    return n->op == IR_OP_RMS_NORM && n->n_in == 2 && ir_attr_norm_has_beta(n) == 0 && n->dtype == RLX_F32 &&
           g->nodes[n->in[0]].dtype == RLX_F32 && g->nodes[n->in[1]].dtype == RLX_F32;
}

/* A dequant_matmul taking norm i as x (only), left alone by the first sweep. */
static bool plain_norm_user(const ir_graph *g, const bool *absorbed, fusion *const *at_root, int32_t j, int32_t i) {
    const ir_node *u = &g->nodes[j];
    return u->op == IR_OP_DEQUANT_MATMUL && u->in[0] == i && u->in[1] != i && !absorbed[j] && !at_root[j];
}

/* A planned dequant_swiglu whose x is norm i (and neither weight is). */
static bool swiglu_of_norm(const fusion *f, int32_t i) {
    return f && f->fused.op == IR_OP_DEQUANT_SWIGLU && f->fused.in[0] == i && f->fused.in[1] != i && f->fused.in[2] != i;
}

/* Second sweep: rms_norm node i whose every use is the x of a plain
 * dequant_matmul or of a planned dequant_swiglu (whose gate and up products
 * each used it once) is folded into all of them. uses[] counts outputs too,
 * so a norm that is also an output, or feeds anything else, never matches. */
static rlx_status fuse_norm_prologue(const ir_graph *g, const int32_t *uses, int32_t i, bool *absorbed, fusion **at_root) {
    const ir_node *norm = &g->nodes[i];
    if (!plain_rms_norm(g, norm) || absorbed[i] || at_root[i] || uses[i] == 0) return RLX_OK;
    int32_t covered = 0;
    for (int32_t j = i + 1; j < g->n_nodes; j++) {
        if (plain_norm_user(g, absorbed, at_root, j, i)) covered++;
        else if (swiglu_of_norm(at_root[j], i)) covered += 2;
    }
    if (covered != uses[i]) return RLX_OK;
    for (int32_t j = i + 1; j < g->n_nodes; j++) {
        ir_node *f;
        if (plain_norm_user(g, absorbed, at_root, j, i)) {
            if (!(at_root[j] = calloc(1, sizeof *at_root[j]))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory");
            f = &at_root[j]->fused;
            *f = g->nodes[j];
            f->op = IR_OP_RMS_DEQUANT_MATMUL;
        } else if (swiglu_of_norm(at_root[j], i)) {
            f = &at_root[j]->fused;
            f->op = IR_OP_RMS_DEQUANT_SWIGLU;
        } else {
            continue;
        }
        f->in[0] = norm->in[0];
        f->in[f->n_in++] = norm->in[1];   /* gamma last: x and weights keep their places */
        ir_attr_set_rms_dequant_eps(f, ir_attr_norm_eps(norm));
    }
    absorbed[i] = true;
    return RLX_OK;
}

/*
 * The same fold on a specialized graph, in place (node ids stay: the runtime
 * indexes params and inputs by them), for norms of at most max_rows static
 * rows: a backend whose folded kernel pays off only at decode sizes (Vulkan:
 * the i8 matvec normalizes x for free, while a prefill-sized product would
 * need the norm materialized once per projection) folds there and leaves
 * prefill specializations as they are; ok() says which products the backend
 * folds (weight type, rows, K), gamma must be a param or constant (whose
 * storage the backend aligns). Users are the dequant_matmul /
 * dequant_swiglu nodes (already fused at compile time) taking the norm as x;
 * the norm node becomes an unused reshape of its input, a view the planner
 * gives no memory and the backends no step.
 */
rlx_status pass_fold_norm_inplace(ir_graph *g, int64_t max_rows, fold_norm_pred ok, void *ctx, int *n_folded) {
    *n_folded = 0;
    int32_t *uses = pass_use_counts(g);
    if (!uses) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fold norm: out of memory");
    for (int32_t i = 0; i < g->n_nodes; i++) {
        ir_node *norm = &g->nodes[i];
        if (!plain_rms_norm(g, norm) || uses[i] == 0 || !ir_shape_is_static(&norm->shape)) continue;
        const ir_node *gamma = &g->nodes[norm->in[1]];
        int64_t K = ir_shape_numel(&gamma->shape), rows = K > 0 ? ir_shape_numel(&norm->shape) / K : 0;
        if (K <= 0 || rows > max_rows || (gamma->op != IR_OP_PARAM && gamma->op != IR_OP_CONST)) continue;
        int32_t covered = 0;
        for (int32_t j = i + 1; j < g->n_nodes; j++) {
            const ir_node *u = &g->nodes[j];
            bool mm = u->op == IR_OP_DEQUANT_MATMUL && u->in[1] != i;
            bool sw = u->op == IR_OP_DEQUANT_SWIGLU && u->in[1] != i && u->in[2] != i;
            if ((mm || sw) && u->in[0] == i && u->n_in < IR_MAX_INPUTS && (!ok || ok(ctx, g->nodes[u->in[1]].dtype, rows, K)))
                covered++;
        }
        if (covered != uses[i]) continue;
        for (int32_t j = i + 1; j < g->n_nodes; j++) {
            ir_node *u = &g->nodes[j];
            if (u->in[0] != i || (u->op != IR_OP_DEQUANT_MATMUL && u->op != IR_OP_DEQUANT_SWIGLU)) continue;
            u->op = u->op == IR_OP_DEQUANT_MATMUL ? IR_OP_RMS_DEQUANT_MATMUL : IR_OP_RMS_DEQUANT_SWIGLU;
            u->in[0] = norm->in[0];
            u->in[u->n_in++] = norm->in[1];
            ir_attr_set_rms_dequant_eps(u, ir_attr_norm_eps(norm));
            (*n_folded)++;
        }
        norm->op = IR_OP_RESHAPE;   /* unused now: a view, no step */
        norm->n_in = 1;
    }
    free(uses);
    return RLX_OK;
}

rlx_status pass_fuse(const ir_graph *src, const fuse_claims *claims, ir_graph *dst, int *n_fused) {
    *n_fused = 0;
    int32_t n = src->n_nodes;
    int32_t *uses = pass_use_counts(src);
    bool *absorbed = calloc((size_t)RLX_MAX(n, 1), sizeof *absorbed);
    fusion **at_root = calloc((size_t)RLX_MAX(n, 1), sizeof *at_root);
    int32_t *remap = malloc((size_t)RLX_MAX(n, 1) * sizeof *remap);
    rlx_status st = RLX_OK;
    if (!uses || !absorbed || !at_root || !remap) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory"); goto done; }

    for (int32_t i = 0; i < n; i++) {
        const ir_node *node = &src->nodes[i];
        if (claims->dequant_epilogue && !absorbed[i] && !at_root[i] && (node->op == IR_OP_ADD || node->op == IR_OP_MUL)) {
            at_root[i] = node->op == IR_OP_ADD ? match_dequant_add(src, uses, i, absorbed, &st)
                                               : match_dequant_swiglu(src, uses, i, absorbed, &st);
            if (st != RLX_OK) goto done;
            if (at_root[i]) continue;
        }
        if (claims->conv_residual && node->op == IR_OP_ADD && !absorbed[i] && !at_root[i]) {
            int32_t root = -1;
            fusion *f = match_conv_residual(src, uses, i, absorbed, &root, &st);
            if (st != RLX_OK) goto done;
            if (f) {
                at_root[root] = f;
                continue;
            }
        }
        if (claims->rope_kv_write && node->op == IR_OP_KV_WRITE && !absorbed[i] && !at_root[i]) {
            at_root[i] = match_rope_kv_write(src, uses, i, absorbed, &st);
            if (st != RLX_OK) goto done;
            if (at_root[i]) continue;
        }
        if (claims->matmul_bias_act && node->op == IR_OP_MATMUL && sole_use(uses, i)) {
            int32_t root = i, bias = -1, act = RLX_ACT_NONE;
            int32_t next = user_of(src, root);
            if (next >= 0 && src->nodes[next].op == IR_OP_ADD && (bias = bias_of(src, &src->nodes[next], i)) >= 0) {
                root = next;
                next = sole_use(uses, root) ? user_of(src, root) : -1;
            } else {
                bias = -1;
            }
            if (next >= 0 && pass_activation_of(src->nodes[next].op) >= 0) {
                act = pass_activation_of(src->nodes[next].op);
                absorbed[root] = true;
                root = next;
            }
            if (root == i) continue;
            fusion *f = calloc(1, sizeof *f);
            if (!f) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory"); goto done; }
            f->fused = *node;
            f->fused.op = IR_OP_MATMUL_BIAS_ACT;
            f->fused.name = src->nodes[root].name;
            f->fused.shape = src->nodes[root].shape;
            ir_attr_set_matmul_act(&f->fused, act);
            ir_attr_set_matmul_has_bias(&f->fused, bias >= 0);
            f->fused.n_in = bias >= 0 ? 3 : 2;
            if (bias >= 0) f->fused.in[2] = bias;
            absorbed[i] = true;
            at_root[root] = f;
        }
        if (claims->add_norm && node->op == IR_OP_ADD && sole_use(uses, i) &&
            ir_shape_eq(&src->nodes[node->in[0]].shape, &src->nodes[node->in[1]].shape) &&
            ir_shape_eq(&node->shape, &src->nodes[node->in[0]].shape) && !absorbed[i] && !at_root[i]) {
            int32_t next = user_of(src, i);
            if (next < 0) continue;
            const ir_node *nn = &src->nodes[next];
            if ((nn->op != IR_OP_LAYER_NORM && nn->op != IR_OP_RMS_NORM) || nn->in[0] != i) continue;
            fusion *f = calloc(1, sizeof *f);
            if (!f) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "fuse: out of memory"); goto done; }
            f->fused = *nn;
            f->fused.op = nn->op == IR_OP_LAYER_NORM ? IR_OP_ADD_LAYER_NORM : IR_OP_ADD_RMS_NORM;
            f->fused.in[0] = node->in[0];
            f->fused.in[1] = node->in[1];
            for (int j = 1; j < nn->n_in; j++) f->fused.in[j + 1] = nn->in[j];
            f->fused.n_in = nn->n_in + 1;
            absorbed[i] = true;
            at_root[next] = f;
        }
    }

    /* after the sweep above, so the swiglus it plans can take their norm too */
    for (int32_t i = 0; claims->norm_prologue && i < n; i++)
        if ((st = fuse_norm_prologue(src, uses, i, absorbed, at_root)) != RLX_OK) goto done;

    st = rebuild_begin(src, dst);
    for (int32_t i = 0; st == RLX_OK && i < n; i++) {
        remap[i] = -1;
        if (absorbed[i]) continue;
        if (at_root[i]) {
            st = rebuild_copy_node(dst, &at_root[i]->fused, remap, &remap[i]);
            (*n_fused)++;
        } else {
            st = rebuild_copy_node(dst, &src->nodes[i], remap, &remap[i]);
        }
    }
    if (st == RLX_OK) st = rebuild_outputs(src, remap, dst);
    if (st != RLX_OK) ir_graph_clear(dst);
done:
    if (at_root) for (int32_t i = 0; i < n; i++) free(at_root[i]);
    free(at_root);
    free(absorbed);
    free(uses);
    free(remap);
    return st;
}
