/*
 * vjp_nn.c — vector-Jacobian rules of matmul, convolution, the reductions,
 * softmax and log_softmax, the norms, attention, rope and softmax
 * cross-entropy.
 *
 * matmul: with op(A) op(B) = C, dop(A) = G op(B)^T and dop(B) = op(A)^T G,
 * each written as one matmul with transpose flags so no transpose is
 * materialized; batch broadcasting is summed away by the driver.
 * The norms recompute their statistics from x (mean, 1/sqrt(var + eps))
 * instead of keeping them from the forward pass: two row reductions, which
 * the fusion pass can merge, against an extra tensor per norm kept alive.
 * Attention recomputes the probabilities P from q and k (softmax of the
 * masked, scaled scores) and applies dS = P (dP - rowsum(dP P)).
 * rope is a rotation R(pos): its transpose is rope applied to the gradient
 * with every pair's second element negated before and after (F R F = R^T
 * for F = diag(1, -1) on each pair).
 */
#include "ir/autodiff.h"
#include "ir/conv_geom.h"
#include "ir/pool_geom.h"
#include <math.h>
#include <stdlib.h>

#define G (c->g)

static rlx_node k_(ad_ctx *c, rlx_dtype dt, double v) { return ad_scalar(c, dt, v); }
static const ir_shape *shape_(ad_ctx *c, rlx_node x) { return &ad_node(c, x)->shape; }
static uint32_t last_axis(ad_ctx *c, rlx_node x) { return 1u << (shape_(c, x)->rank - 1); }

/* ---------------------------------------------------------------- matmul */

static rlx_node mm(ad_ctx *c, rlx_node a, rlx_node b, bool ta, bool tb) {
    return rlx_matmul_ex(G, a, b, (ta ? RLX_MATMUL_TRANSPOSE_A : 0) | (tb ? RLX_MATMUL_TRANSPOSE_B : 0),
                         RLX_NO_NODE, RLX_ACT_NONE);
}

/* The gradients of op(a) op(b) given G, the gradient of the product. */
static void matmul_grads(ad_ctx *c, rlx_node a, rlx_node b, bool ta, bool tb, rlx_node gz, const bool *need,
                         rlx_node *gin) {
    if (need[0]) gin[0] = ta ? mm(c, b, gz, tb, true) : mm(c, gz, b, false, !tb);
    if (need[1]) gin[1] = tb ? mm(c, gz, a, true, ta) : mm(c, a, gz, !ta, false);
}

/* d act(z) / dz * g, from z (the pre-activation) and y = act(z). */
static rlx_node act_grad(ad_ctx *c, int act, rlx_node z, rlx_node y, rlx_node g) {
    rlx_dtype dt = ad_node(c, z)->dtype;
    rlx_node one = k_(c, dt, 1.0);
    switch (act) {
    case RLX_ACT_NONE: return g;
    case RLX_ACT_RELU: return rlx_where(G, rlx_gt(G, z, k_(c, dt, 0.0)), g, k_(c, dt, 0.0));
    case RLX_ACT_GELU: return rlx_gelu_grad(G, z, g);
    case RLX_ACT_GELU_TANH: return rlx_gelu_tanh_grad(G, z, g);
    case RLX_ACT_SIGMOID: return rlx_mul(G, g, rlx_mul(G, y, rlx_sub(G, one, y)));
    case RLX_ACT_TANH: return rlx_mul(G, g, rlx_sub(G, one, rlx_mul(G, y, y)));
    default: {   /* silu: its unary rule on z */
        rlx_node a = rlx_silu(G, z);
        if (a == RLX_NO_NODE) return a;
        ir_node n = *ad_node(c, a);
        bool need = true;
        rlx_node gz = RLX_NO_NODE;
        ad_ctx sub = {.g = c->g, .id = a};
        if (ir_vjp_rule_of(n.op)(&sub, &n, g, &need, &gz) != RLX_OK) return RLX_NO_NODE;
        return gz;
    }
    }
}

static rlx_status vjp_matmul(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    bool ta = ir_attr_matmul_transpose_a(n) != 0, tb = ir_attr_matmul_transpose_b(n) != 0;
    rlx_node gz = gy;
    if (n->op == IR_OP_MATMUL_BIAS_ACT) {
        int act = (int)ir_attr_matmul_act(n);
        bool bias = ir_attr_matmul_has_bias(n) != 0;
        if (act != RLX_ACT_NONE) {   /* the pre-activation, recomputed */
            rlx_node z = rlx_matmul_ex(G, n->in[0], n->in[1], (ta ? RLX_MATMUL_TRANSPOSE_A : 0) |
                                       (tb ? RLX_MATMUL_TRANSPOSE_B : 0), bias ? n->in[2] : RLX_NO_NODE, RLX_ACT_NONE);
            gz = act_grad(c, act, z, c->id, gy);
        }
        if (bias && need[2]) gin[2] = gz;   /* summed to [N] by the driver */
    }
    matmul_grads(c, n->in[0], n->in[1], ta, tb, gz, need, gin);
    return RLX_OK;
}

/* ----------------------------------------------------------- convolution */

/* conv: dx = conv_transpose(dz, w) with the output padding that gives back
 * x's size, dw = conv_weight_grad(x, dz), db = dz summed over all but the
 * channel dim; dz is dy through the activation (its pre-activation
 * recomputed when the derivative needs it). */
static rlx_status vjp_conv(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    ir_conv_geom geo;
    ir_conv_geom_of(n, &geo);
    if (geo.has_residual)   /* made by a compile pass, after gradients are built */
        return rlx_fail(RLX_STATUS_INTERNAL, "conv: no gradient for the fused residual form");
    rlx_node x = n->in[0], w = n->in[1], b = geo.has_bias ? n->in[2] : RLX_NO_NODE;
    rlx_conv_params p = {.dims = geo.dims, .groups = geo.groups};
    const ir_shape *xs = shape_(c, x), *ws = shape_(c, w), *ys = shape_(c, c->id);
    for (int i = 0; i < geo.dims; i++) {
        p.stride[i] = geo.stride[i], p.dilation[i] = geo.dilation[i];
        p.pad_begin[i] = geo.pad_begin[i], p.pad_end[i] = geo.pad_end[i];
        int64_t back = (ys->d[2 + i].k - 1) * geo.stride[i] - geo.pad_begin[i] - geo.pad_end[i] +
                       geo.dilation[i] * (ws->d[2 + i].k - 1) + 1;
        p.output_padding[i] = xs->d[2 + i].k - back;
    }
    rlx_node gz = gy;
    if (geo.act != RLX_ACT_NONE) {
        rlx_conv_params q = p;
        for (int i = 0; i < 3; i++) q.output_padding[i] = 0;
        gz = act_grad(c, (int)geo.act, rlx_conv(G, x, w, b, &q), c->id, gy);
    }
    if (need[0]) gin[0] = rlx_conv_transpose(G, gz, w, RLX_NO_NODE, &p);
    if (need[1]) gin[1] = ir_conv_weight_grad(G, n, x, gz, w);
    if (geo.has_bias && need[2]) {
        uint32_t axes = ((1u << ys->rank) - 1) & ~2u;
        gin[2] = rlx_reduce_sum(G, gz, axes, 0);
    }
    return RLX_OK;
}

/* pool: pool_grad(x, dy), which gathers each input's share of the windows covering it. */
static rlx_status vjp_pool(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = ir_pool_grad(G, n, n->in[0], gy);
    return RLX_OK;
}

/* ------------------------------------------------------------ reductions */

static rlx_status vjp_reduce(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    rlx_node x = n->in[0];
    uint32_t axes = (uint32_t)ir_attr_reduce_axes(n);
    rlx_node g = ad_unreduce(c, gy, x, axes);
    switch (n->op) {
    case IR_OP_REDUCE_SUM: gin[0] = g; break;
    case IR_OP_REDUCE_MEAN: gin[0] = rlx_div(G, g, ad_count(c, x, axes, n->dtype)); break;
    case IR_OP_REDUCE_PROD: gin[0] = rlx_div(G, rlx_mul(G, g, ad_unreduce(c, c->id, x, axes)), x); break;
    default: {   /* max / min: split evenly among the elements equal to the result */
        rlx_node hit = rlx_eq(G, x, ad_unreduce(c, c->id, x, axes));
        rlx_node zero = k_(c, n->dtype, 0.0);
        rlx_node count = ad_sum_keep(c, rlx_where(G, hit, k_(c, n->dtype, 1.0), zero), axes);
        gin[0] = rlx_where(G, hit, rlx_div(G, g, count), zero);
        break;
    }
    }
    return RLX_OK;
}

/* ------------------------------------------------------- softmax family */

static rlx_status vjp_softmax(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    uint32_t axis = 1u << ir_attr_axis_op_axis(n);
    rlx_node y = c->id;
    if (n->op == IR_OP_SOFTMAX)
        gin[0] = rlx_mul(G, y, rlx_sub(G, gy, ad_sum_keep(c, rlx_mul(G, gy, y), axis)));
    else
        gin[0] = rlx_sub(G, gy, rlx_mul(G, rlx_exp(G, y), ad_sum_keep(c, gy, axis)));
    return RLX_OK;
}

static rlx_status vjp_softmax_ce(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) {
        ir_shape scalar = {.rank = 0};
        gin[0] = rlx_mul(G, rlx_softmax_cross_entropy_grad(G, n->in[0], n->in[1]), ad_reshape_to(c, gy, &scalar));
    }
    return RLX_OK;
}

/* ---------------------------------------------------------------- norms */

static rlx_status vjp_norm(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    bool rms = n->op == IR_OP_RMS_NORM, beta = ir_attr_norm_has_beta(n) != 0;
    rlx_node x = n->in[0], gamma = n->in[1];
    rlx_dtype dt = n->dtype;
    uint32_t last = last_axis(c, x);
    rlx_node D = ad_count(c, x, last, dt);
    /* xc = x - mean (layer_norm) or x (rms_norm); rstd = 1 / sqrt(mean(xc^2) + eps) */
    rlx_node xc = rms ? x : rlx_sub(G, x, rlx_div(G, ad_sum_keep(c, x, last), D));
    rlx_node var = rlx_div(G, ad_sum_keep(c, rlx_mul(G, xc, xc), last), D);
    rlx_node rstd = rlx_rsqrt(G, rlx_add(G, var, k_(c, dt, ir_attr_norm_eps(n))));
    rlx_node xhat = rlx_mul(G, xc, rstd);
    if (need[1]) gin[1] = rlx_mul(G, gy, xhat);   /* summed to [D] by the driver */
    if (beta && need[2]) gin[2] = gy;
    if (need[0]) {
        rlx_node gh = rlx_mul(G, gy, gamma);
        rlx_node proj = rlx_mul(G, xhat, rlx_div(G, ad_sum_keep(c, rlx_mul(G, gh, xhat), last), D));
        rlx_node inner = rlx_sub(G, gh, proj);
        if (!rms) inner = rlx_sub(G, inner, rlx_div(G, ad_sum_keep(c, gh, last), D));
        gin[0] = rlx_mul(G, rstd, inner);
    }
    return RLX_OK;
}

/* ------------------------------------------------------------- attention */

/* kv [B, Hkv, S, D] repeated to [B, H, S, D] (query head h reads kv head h / rep). */
static rlx_node repeat_heads(ad_ctx *c, rlx_node kv, int64_t rep) {
    if (rep == 1) return kv;
    ir_shape s = *shape_(c, kv), s5 = {.rank = 5, .d = {s.d[0], s.d[1], ir_dim_const(1), s.d[2], s.d[3]}};
    ir_shape e5 = s5, out = s;
    e5.d[2] = ir_dim_const(rep);
    out.d[1].k *= rep;
    for (int i = 0; i < IR_MAX_SYMS; i++) out.d[1].coef[i] *= rep;
    return ad_reshape_to(c, ad_expand_to(c, ad_reshape_to(c, kv, &s5), &e5), &out);
}

/* g [B, H, S, D] summed over each kv head's rep query heads -> [B, Hkv, S, D]. */
static rlx_node sum_heads(ad_ctx *c, rlx_node g, const ir_shape *kv_shape, int64_t rep) {
    if (rep == 1) return g;
    ir_shape s = *kv_shape, s5 = {.rank = 5, .d = {s.d[0], s.d[1], ir_dim_const(rep), s.d[2], s.d[3]}};
    return ad_reshape_to(c, rlx_reduce_sum(G, ad_reshape_to(c, g, &s5), 1u << 2, 0), kv_shape);
}

/* Positions 0.. along axis of a [..] of ones-shaped `like`, minus the axis
 * length: -len .. -1, as floats (exact for any real length). */
static rlx_node index_from_end(ad_ctx *c, rlx_dtype dt, const ir_shape *like, int axis) {
    rlx_node one = ad_expand_to(c, k_(c, dt, 1.0), like);
    rlx_node pos = rlx_cumsum(G, one, axis);
    return rlx_sub(G, pos, rlx_add(G, ad_sum_keep(c, one, 1u << axis), k_(c, dt, 1.0)));
}

static rlx_status vjp_attention(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (ir_attr_attention_has_kv_len(n))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention over a KV cache's active extent (kv_len) has no gradient");
    rlx_node q = n->in[0], k = n->in[1], v = n->in[2];
    rlx_dtype dt = n->dtype;
    ir_shape qs = *shape_(c, q), ks = *shape_(c, k), vs = *shape_(c, v);
    if (!ir_dim_is_static(qs.d[1]) || !ir_dim_is_static(ks.d[1]))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention's gradient needs static head counts");
    int64_t rep = qs.d[1].k / ks.d[1].k;
    rlx_node ke = repeat_heads(c, k, rep), ve = repeat_heads(c, v, rep);
    rlx_node scale = k_(c, dt, ir_attr_attention_scale(n));
    rlx_node s = rlx_mul(G, mm(c, q, ke, false, true), scale);   /* [B, H, Sq, Skv] */
    if (ir_attr_attention_mask(n) == RLX_MASK_ADDITIVE) s = rlx_add(G, s, n->in[3]);
    if (ir_attr_attention_mask(n) == RLX_MASK_CAUSAL) {   /* key j visible to query i: j - Skv <= i - Sq */
        ir_shape rows = {.rank = 2, .d = {qs.d[2], ir_dim_const(1)}}, cols = {.rank = 2, .d = {ir_dim_const(1), ks.d[2]}};
        rlx_node visible = rlx_le(G, index_from_end(c, dt, &cols, 1), index_from_end(c, dt, &rows, 0));
        s = rlx_where(G, visible, s, k_(c, dt, -INFINITY));
    }
    rlx_node p = rlx_softmax(G, s, -1);
    bool want_s = need[0] || need[1] || (ir_attr_attention_mask(n) == RLX_MASK_ADDITIVE && need[3]);
    if (need[2]) gin[2] = sum_heads(c, mm(c, p, gy, true, false), &vs, rep);
    if (want_s) {
        rlx_node dp = mm(c, gy, ve, false, true);
        rlx_node ds = rlx_mul(G, p, rlx_sub(G, dp, ad_sum_keep(c, rlx_mul(G, dp, p), 1u << 3)));
        if (ir_attr_attention_mask(n) == RLX_MASK_ADDITIVE && need[3]) gin[3] = ds;
        rlx_node dss = rlx_mul(G, ds, scale);
        if (need[0]) gin[0] = mm(c, dss, ke, false, false);
        if (need[1]) gin[1] = sum_heads(c, mm(c, dss, q, true, false), &ks, rep);
    }
    return RLX_OK;
}

/* ------------------------------------------------------------------ rope */

static rlx_status vjp_rope(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    rlx_dtype dt = n->dtype;
    const ir_shape *xs = shape_(c, n->in[0]);
    if (!ir_dim_is_static(xs->d[3])) return rlx_fail(RLX_STATUS_UNSUPPORTED, "rope's gradient needs a static head dim");
    int64_t D = xs->d[3].k, R = ir_attr_rope_rotary_dims(n);
    double *sign = malloc(sizeof(double) * (size_t)D);
    void *data = malloc((size_t)D * 8);
    if (!sign || !data) { free(sign), free(data); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rope gradient: out of memory"); }
    for (int64_t i = 0; i < D; i++) {
        bool second = ir_attr_rope_style(n) == RLX_ROPE_NEOX ? (i >= R / 2 && i < R) : (i < R && (i & 1));
        sign[i] = second ? -1.0 : 1.0;
    }
    for (int64_t i = 0; i < D; i++) rlx_store_from_f64(data, dt, i, sign[i]);
    rlx_node f = rlx_constant(G, dt, 1, &D, data);
    free(sign), free(data);
    rlx_node offset = ir_attr_rope_has_offset(n) ? n->in[1] : RLX_NO_NODE;
    rlx_node ff = ir_attr_rope_has_freq_factors(n) ? n->in[n->n_in - 1] : RLX_NO_NODE;
    rlx_node r = rlx_rope_scaled(G, rlx_mul(G, gy, f), offset, (rlx_rope_style)ir_attr_rope_style(n),
                                 (float)ir_attr_rope_theta(n), (int)R, ff);
    gin[0] = rlx_mul(G, r, f);
    return RLX_OK;
}

void ir_vjp_register_nn(ir_vjp_rule *t) {
    t[IR_OP_MATMUL] = vjp_matmul;
    t[IR_OP_MATMUL_BIAS_ACT] = vjp_matmul;
    t[IR_OP_CONV] = vjp_conv;
    t[IR_OP_POOL] = vjp_pool;
    t[IR_OP_REDUCE_SUM] = vjp_reduce;
    t[IR_OP_REDUCE_MEAN] = vjp_reduce;
    t[IR_OP_REDUCE_MAX] = vjp_reduce;
    t[IR_OP_REDUCE_MIN] = vjp_reduce;
    t[IR_OP_REDUCE_PROD] = vjp_reduce;
    t[IR_OP_SOFTMAX] = vjp_softmax;
    t[IR_OP_LOG_SOFTMAX] = vjp_softmax;
    t[IR_OP_SOFTMAX_CE] = vjp_softmax_ce;
    t[IR_OP_LAYER_NORM] = vjp_norm;
    t[IR_OP_RMS_NORM] = vjp_norm;
    t[IR_OP_ATTENTION] = vjp_attention;
    t[IR_OP_ROPE] = vjp_rope;
}
