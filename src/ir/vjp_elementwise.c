/*
 * vjp_elementwise.c — vector-Jacobian rules of the elementwise ops: binary
 * arithmetic, the unary functions and activations, where, fma, clamp and
 * cast. Each returns gradients shaped like the (broadcast) result; the
 * driver sums them to each input's shape.
 *
 * Ties of max / min split the gradient evenly between the operands (the
 * derivative's average over the two sides, which is what a central finite
 * difference measures). round's derivative is zero where it exists. Rules
 * that divide by an input (log, div, pow's base) give what the formula
 * gives at zero: inf or NaN, as PyTorch does.
 */
#include "ir/autodiff.h"
#include <math.h>

#define G (c->g)

static rlx_node in_(const ir_node *n, int k) { return n->in[k]; }
static rlx_node self_(const ad_ctx *c) { return c->id; }
static rlx_node k_(ad_ctx *c, const ir_node *n, double v) { return ad_scalar(c, n->dtype, v); }

static rlx_status vjp_add(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    (void)c, (void)n;
    if (need[0]) gin[0] = gy;
    if (need[1]) gin[1] = gy;
    return RLX_OK;
}

static rlx_status vjp_sub(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    (void)n;
    if (need[0]) gin[0] = gy;
    if (need[1]) gin[1] = rlx_neg(G, gy);
    return RLX_OK;
}

static rlx_status vjp_mul(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = rlx_mul(G, gy, in_(n, 1));
    if (need[1]) gin[1] = rlx_mul(G, gy, in_(n, 0));
    return RLX_OK;
}

static rlx_status vjp_div(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    rlx_node ga = rlx_div(G, gy, in_(n, 1));
    if (need[0]) gin[0] = ga;
    if (need[1]) gin[1] = rlx_neg(G, rlx_mul(G, ga, self_(c)));   /* -gy a / b^2 = -(gy / b) (a / b) */
    return RLX_OK;
}

/* max / min: the gradient goes to the operand that won, half each on a tie. */
static rlx_status vjp_minmax(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    rlx_node a = in_(n, 0), b = in_(n, 1);
    rlx_node half = rlx_mul(G, gy, k_(c, n, 0.5)), zero = k_(c, n, 0.0);
    rlx_node tie = rlx_eq(G, a, b);
    rlx_node a_wins = n->op == IR_OP_MAX ? rlx_gt(G, a, b) : rlx_lt(G, a, b);
    rlx_node b_wins = n->op == IR_OP_MAX ? rlx_lt(G, a, b) : rlx_gt(G, a, b);
    if (need[0]) gin[0] = rlx_where(G, a_wins, gy, rlx_where(G, tie, half, zero));
    if (need[1]) gin[1] = rlx_where(G, b_wins, gy, rlx_where(G, tie, half, zero));
    return RLX_OK;
}

static rlx_status vjp_pow(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    rlx_node a = in_(n, 0), b = in_(n, 1);
    if (need[0]) gin[0] = rlx_mul(G, gy, rlx_mul(G, b, rlx_pow(G, a, rlx_sub(G, b, k_(c, n, 1.0)))));
    if (need[1]) gin[1] = rlx_mul(G, gy, rlx_mul(G, self_(c), rlx_log(G, a)));
    return RLX_OK;
}

/* One-input ops: gin[0] = gy * f'(x), written with x = in[0] and y = the node. */
static rlx_status vjp_unary(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    rlx_node x = in_(n, 0), y = self_(c), one = k_(c, n, 1.0), zero = k_(c, n, 0.0), d;
    switch (n->op) {
    case IR_OP_RELU: gin[0] = rlx_where(G, rlx_gt(G, x, zero), gy, zero); return RLX_OK;
    case IR_OP_NEG: gin[0] = rlx_neg(G, gy); return RLX_OK;
    case IR_OP_ABS:
        gin[0] = rlx_where(G, rlx_gt(G, x, zero), gy, rlx_where(G, rlx_lt(G, x, zero), rlx_neg(G, gy), zero));
        return RLX_OK;
    case IR_OP_ROUND: gin[0] = ad_zeros_like(c, x); return RLX_OK;
    case IR_OP_SIGMOID: d = rlx_mul(G, y, rlx_sub(G, one, y)); break;
    case IR_OP_TANH: d = rlx_sub(G, one, rlx_mul(G, y, y)); break;
    case IR_OP_EXP: d = y; break;
    case IR_OP_LOG: gin[0] = rlx_div(G, gy, x); return RLX_OK;
    case IR_OP_SQRT: gin[0] = rlx_div(G, rlx_mul(G, gy, k_(c, n, 0.5)), y); return RLX_OK;
    case IR_OP_RSQRT: d = rlx_mul(G, k_(c, n, -0.5), rlx_mul(G, y, rlx_mul(G, y, y))); break;
    case IR_OP_SIN: d = rlx_cos(G, x); break;
    case IR_OP_COS: d = rlx_neg(G, rlx_sin(G, x)); break;
    case IR_OP_TAN: d = rlx_add(G, one, rlx_mul(G, y, y)); break;
    case IR_OP_ATAN: gin[0] = rlx_div(G, gy, rlx_add(G, one, rlx_mul(G, x, x))); return RLX_OK;
    case IR_OP_ERF: d = rlx_mul(G, k_(c, n, 1.12837916709551257390), rlx_exp(G, rlx_neg(G, rlx_mul(G, x, x)))); break;   /* 2/sqrt(pi) e^-x^2 */
    case IR_OP_SILU: {   /* s (1 + x (1 - s)) */
        rlx_node s = rlx_sigmoid(G, x);
        d = rlx_mul(G, s, rlx_add(G, one, rlx_mul(G, x, rlx_sub(G, one, s))));
        break;
    }
    case IR_OP_GELU_TANH: gin[0] = rlx_gelu_tanh_grad(G, x, gy); return RLX_OK;
    case IR_OP_GELU: gin[0] = rlx_gelu_grad(G, x, gy); return RLX_OK;
    default: return rlx_fail(RLX_STATUS_INTERNAL, "no elementwise gradient for this op");
    }
    gin[0] = rlx_mul(G, gy, d);
    return RLX_OK;
}

static rlx_status vjp_where(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    rlx_node zero = k_(c, n, 0.0);
    if (need[1]) gin[1] = rlx_where(G, in_(n, 0), gy, zero);
    if (need[2]) gin[2] = rlx_where(G, in_(n, 0), zero, gy);
    return RLX_OK;
}

static rlx_status vjp_fma(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = rlx_mul(G, gy, in_(n, 1));
    if (need[1]) gin[1] = rlx_mul(G, gy, in_(n, 0));
    if (need[2]) gin[2] = gy;
    return RLX_OK;
}

/* clamp passes the gradient where lo <= x <= hi (both ends included). */
static rlx_status vjp_clamp(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    rlx_node x = in_(n, 0), zero = k_(c, n, 0.0);
    rlx_node lo = k_(c, n, ir_attr_clamp_lo(n)), hi = k_(c, n, ir_attr_clamp_hi(n));
    gin[0] = rlx_where(G, rlx_lt(G, x, lo), zero, rlx_where(G, rlx_gt(G, x, hi), zero, gy));
    return RLX_OK;
}

static rlx_status vjp_cast(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = rlx_cast(G, gy, ad_node(c, in_(n, 0))->dtype);
    return RLX_OK;
}

void ir_vjp_register_elementwise(ir_vjp_rule *t) {
    t[IR_OP_ADD] = vjp_add;
    t[IR_OP_SUB] = vjp_sub;
    t[IR_OP_MUL] = vjp_mul;
    t[IR_OP_DIV] = vjp_div;
    t[IR_OP_MAX] = vjp_minmax;
    t[IR_OP_MIN] = vjp_minmax;
    t[IR_OP_POW] = vjp_pow;
    static const ir_op unary[] = {IR_OP_RELU, IR_OP_SIGMOID, IR_OP_TANH, IR_OP_EXP, IR_OP_LOG, IR_OP_SQRT,
                                  IR_OP_RSQRT, IR_OP_NEG, IR_OP_ABS, IR_OP_GELU, IR_OP_GELU_TANH, IR_OP_SILU,
                                  IR_OP_ROUND, IR_OP_SIN, IR_OP_COS, IR_OP_TAN, IR_OP_ATAN, IR_OP_ERF};
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) t[unary[i]] = vjp_unary;
    t[IR_OP_WHERE] = vjp_where;
    t[IR_OP_FMA] = vjp_fma;
    t[IR_OP_CLAMP] = vjp_clamp;
    t[IR_OP_CAST] = vjp_cast;
}
