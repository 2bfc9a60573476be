/*
 * onnx_ops.c — the ONNX operators rlx imports, each onto rlx builder calls
 * (semantics from the ONNX operator specs, opsets 7 to 21). Operators whose
 * inputs are all import-time values (shape arithmetic: Shape, Gather,
 * Concat, Unsqueeze, Slice, Cast, integer Add/Sub/Mul/Div, Range,
 * ConstantOfShape, Equal, Where) are computed here instead of becoming nodes.
 */
#include "models/onnx_import.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static rlx_status out0(ox_ctx *c, const onnx_node *n, rlx_node x) {
    if (n->n_outputs < 1) return ox_fail(c, RLX_STATUS_FORMAT, "the node has no output");
    return ox_set_node(c, n->outputs[0], x);
}

static int rank_of(ox_ctx *c, rlx_node x, int64_t *dims) {
    int r = -1;
    if (rlx_node_shape(c->g, x, NULL, &r, dims) != RLX_OK) return -1;
    return r;
}

static bool norm_axis(int64_t *axis, int rank) {
    if (*axis < 0) *axis += rank;
    return *axis >= 0 && *axis < (rank ? rank : 1);
}

static bool all_host(ox_ctx *c, const onnx_node *n) {
    for (int i = 0; i < n->n_inputs; i++) {
        if (!ox_has(n, i)) continue;
        ox_value *v = ox_lookup(c, n->inputs[i]);
        if (!v || !v->host) return false;
    }
    return n->n_inputs > 0;
}

/* Host value as int64 list (I64/BOOL only). */
static const ox_value *host_ints(ox_ctx *c, const onnx_node *n, int i) {
    const ox_value *v = ox_host_in(c, n, i);
    if (v && v->host_dtype == RLX_F32) {
        ox_fail(c, RLX_STATUS_UNSUPPORTED, "input %d must be integers", i);
        return NULL;
    }
    return v;
}

/* The input's import-time value when it has no graph node (pure shape data). */
static ox_value *pure_host(ox_ctx *c, const onnx_node *n, int i) {
    ox_value *v = ox_has(n, i) ? ox_lookup(c, n->inputs[i]) : NULL;
    return v && v->host && v->node == RLX_NO_NODE ? v : NULL;
}

/* Element i of a host value, as double and int. */
static void host_get(const ox_value *v, int64_t i, int64_t *iv, double *fv) {
    if (v->host_dtype == RLX_F32) *fv = v->f64[i];
    else *iv = v->i64[i];
}

/* ----------------------------------------------------------- elementwise */

typedef rlx_node (*unary_fn)(rlx_graph *, rlx_node);

static const struct { const char *name; unary_fn fn; } unary_ops[] = {
    {"Relu", rlx_relu}, {"Sigmoid", rlx_sigmoid}, {"Tanh", rlx_tanh}, {"Exp", rlx_exp}, {"Log", rlx_log},
    {"Sqrt", rlx_sqrt}, {"Neg", rlx_neg}, {"Abs", rlx_abs}, {"Sin", rlx_sin}, {"Cos", rlx_cos}, {"Tan", rlx_tan},
    {"Atan", rlx_atan}, {"Round", rlx_round}, {"Erf", rlx_erf},
};

static rlx_status op_unary(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
        if (onnx_str_eq(n->op_type, unary_ops[i].name)) return out0(c, n, unary_ops[i].fn(c->g, x));
    return ox_fail(c, RLX_STATUS_INTERNAL, "no unary op");
}

static rlx_node scalar_like(ox_ctx *c, rlx_node x, double v) {
    rlx_dtype dt = RLX_F32;
    rlx_node_shape(c->g, x, &dt, NULL, NULL);
    return rlx_scalar(c->g, dt, v);
}

static rlx_status op_reciprocal(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    return x == RLX_NO_NODE ? ox_graph_status(c) : out0(c, n, rlx_div(c->g, scalar_like(c, x, 1.0), x));
}

static rlx_status op_identity(ox_ctx *c, const onnx_node *n) {
    ox_value *v = ox_has(n, 0) ? ox_lookup(c, n->inputs[0]) : NULL;
    if (v && v->host && v->node == RLX_NO_NODE)
        return ox_set_host(c, n->outputs[0], v->host_dtype, v->host_rank, v->host_dims, v->i64, v->f64);
    rlx_node x = ox_in(c, n, 0);
    return x == RLX_NO_NODE ? ox_graph_status(c) : out0(c, n, x);
}

static rlx_status op_gelu(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    const onnx_attr *a = onnx_node_attr(n, "approximate");
    bool tanh_form = a && onnx_str_eq(a->s, "tanh");
    return out0(c, n, tanh_form ? rlx_gelu_tanh(c->g, x) : rlx_gelu(c->g, x));
}

static rlx_status op_leaky_relu(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    double alpha = ox_attr_f(n, "alpha", 0.01f);
    rlx_node pos = rlx_ge(c->g, x, scalar_like(c, x, 0.0));
    return out0(c, n, rlx_where(c->g, pos, x, rlx_mul(c->g, x, scalar_like(c, x, alpha))));
}

static rlx_node hard_sigmoid(ox_ctx *c, rlx_node x, double alpha, double beta) {
    rlx_node y = rlx_add(c->g, rlx_mul(c->g, x, scalar_like(c, x, alpha)), scalar_like(c, x, beta));
    return rlx_clamp(c->g, y, 0.0, 1.0);
}

static rlx_status op_hard_sigmoid(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    return out0(c, n, hard_sigmoid(c, x, ox_attr_f(n, "alpha", 0.2f), ox_attr_f(n, "beta", 0.5f)));
}

static rlx_status op_hard_swish(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    return out0(c, n, rlx_mul(c->g, x, hard_sigmoid(c, x, 1.0 / 6.0, 0.5)));
}

static rlx_status op_clip(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    double lo = -INFINITY, hi = INFINITY;
    if (c->opset < 11) {
        lo = ox_attr_f(n, "min", -INFINITY), hi = ox_attr_f(n, "max", INFINITY);
    } else {
        for (int i = 1; i <= 2; i++) {
            if (!ox_has(n, i)) continue;
            const ox_value *v = ox_host_in(c, n, i);
            if (!v) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Clip's min and max must be constants");
            double b = v->host_dtype == RLX_F32 ? v->f64[0] : (double)v->i64[0];
            *(i == 1 ? &lo : &hi) = b;
        }
    }
    return out0(c, n, rlx_clamp(c->g, x, lo, hi));
}

static rlx_status op_cast(ox_ctx *c, const onnx_node *n) {
    int64_t to = ox_attr_i(n, "to", 0);
    rlx_dtype dt;
    switch (to) {
    case ONNX_FLOAT: dt = RLX_F32; break;
    case ONNX_FLOAT16: dt = RLX_F16; break;
    case ONNX_BFLOAT16: dt = RLX_BF16; break;
    case ONNX_DOUBLE: dt = RLX_F64; break;
    case ONNX_INT32: dt = RLX_I32; break;
    case ONNX_INT64: dt = RLX_I64; break;
    case ONNX_INT8: dt = RLX_I8; break;
    case ONNX_UINT8: dt = RLX_U8; break;
    case ONNX_BOOL: dt = RLX_BOOL; break;
    default: return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Cast to %s", onnx_type_name((int32_t)to));
    }
    ox_value *v = ox_has(n, 0) ? ox_lookup(c, n->inputs[0]) : NULL;
    if (v && v->host) {   /* shape arithmetic: stays an import-time value */
        int64_t iv[OX_HOST_MAX];
        double fv[OX_HOST_MAX];
        bool to_float = dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16;
        for (int64_t i = 0; i < v->host_count; i++) {
            double x = v->host_dtype == RLX_F32 ? v->f64[i] : (double)v->i64[i];
            if (to_float) fv[i] = x;
            else iv[i] = dt == RLX_BOOL ? x != 0 : v->host_dtype == RLX_F32 ? (int64_t)trunc(x) : v->i64[i];
        }
        return ox_set_host(c, n->outputs[0], to_float ? RLX_F32 : dt == RLX_BOOL ? RLX_BOOL : RLX_I64, v->host_rank,
                           v->host_dims, iv, fv);
    }
    rlx_node x = ox_in(c, n, 0);
    return x == RLX_NO_NODE ? ox_graph_status(c) : out0(c, n, rlx_cast(c->g, x, dt));
}

/* Binary ops on import-time values: same shapes or one a scalar. */
static rlx_status host_binary(ox_ctx *c, const onnx_node *n, const ox_value *a, const ox_value *b) {
    const ox_value *big = a->host_count >= b->host_count ? a : b;
    if (!(a->host_count == b->host_count || a->host_count == 1 || b->host_count == 1))
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "broadcasting import-time values of %lld and %lld elements",
                       (long long)a->host_count, (long long)b->host_count);
    bool fl = a->host_dtype == RLX_F32 || b->host_dtype == RLX_F32;
    bool cmp = onnx_str_eq(n->op_type, "Equal") || onnx_str_eq(n->op_type, "Less") || onnx_str_eq(n->op_type, "Greater");
    int64_t iv[OX_HOST_MAX];
    double fv[OX_HOST_MAX];
    for (int64_t i = 0; i < big->host_count; i++) {
        int64_t ia = a->host_dtype == RLX_F32 ? 0 : a->i64[a->host_count == 1 ? 0 : i];
        int64_t ib = b->host_dtype == RLX_F32 ? 0 : b->i64[b->host_count == 1 ? 0 : i];
        double fa = a->host_dtype == RLX_F32 ? a->f64[a->host_count == 1 ? 0 : i] : (double)ia;
        double fb = b->host_dtype == RLX_F32 ? b->f64[b->host_count == 1 ? 0 : i] : (double)ib;
        if (!fl && (ia <= -2 || ib <= -2)) {
            bool scaled = ia == OX_DIM_SCALED_SYMBOL || ib == OX_DIM_SCALED_SYMBOL;
            if (onnx_str_eq(n->op_type, "Mul") && ((ia <= -2 && ib >= 1) || (ib <= -2 && ia >= 1))) {
                iv[i] = OX_DIM_SCALED_SYMBOL, fv[i] = 0;   /* only a Reshape target can use it */
                continue;
            }
            if (!cmp || scaled)
                return ox_fail(c, RLX_STATUS_UNSUPPORTED, "arithmetic on a symbolic dim (a dynamic shape computed at run time)");
        }
        if (onnx_str_eq(n->op_type, "Add")) iv[i] = ia + ib, fv[i] = fa + fb;
        else if (onnx_str_eq(n->op_type, "Sub")) iv[i] = ia - ib, fv[i] = fa - fb;
        else if (onnx_str_eq(n->op_type, "Mul")) iv[i] = ia * ib, fv[i] = fa * fb;
        else if (onnx_str_eq(n->op_type, "Div")) {
            if (!fl && ib == 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "integer division by zero");
            iv[i] = fl ? 0 : ia / ib, fv[i] = fa / fb;
        } else if (onnx_str_eq(n->op_type, "Mod")) {
            /* fmod = 0: the remainder takes the divisor's sign (integers only); 1: C's fmod */
            if (fl && !ox_attr_i(n, "fmod", 0))
                return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "Mod of floats needs fmod = 1");
            if (!fl && ib == 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "integer modulo by zero");
            if (fl) fv[i] = fmod(fa, fb);
            else if (ox_attr_i(n, "fmod", 0)) iv[i] = ia % ib;
            else iv[i] = ((ia % ib) + ib) % ib;
        } else if (onnx_str_eq(n->op_type, "Max")) iv[i] = ia > ib ? ia : ib, fv[i] = fa > fb ? fa : fb;
        else if (onnx_str_eq(n->op_type, "Min")) iv[i] = ia < ib ? ia : ib, fv[i] = fa < fb ? fa : fb;
        else if (onnx_str_eq(n->op_type, "Equal")) iv[i] = fl ? fa == fb : ia == ib;
        else if (onnx_str_eq(n->op_type, "Less")) iv[i] = fl ? fa < fb : ia < ib;
        else if (onnx_str_eq(n->op_type, "Greater")) iv[i] = fl ? fa > fb : ia > ib;
        else return ox_fail(c, RLX_STATUS_INTERNAL, "no host form");
    }
    rlx_dtype dt = cmp ? RLX_BOOL : fl ? RLX_F32 : RLX_I64;
    return ox_set_host(c, n->outputs[0], dt, big->host_rank, big->host_dims, iv, fv);
}

typedef rlx_node (*binary_fn)(rlx_graph *, rlx_node, rlx_node);

/* host: host_binary folds it when both inputs are import-time values */
static const struct { const char *name; binary_fn fn; bool host; } binary_ops[] = {
    {"Add", rlx_add, true}, {"Sub", rlx_sub, true}, {"Mul", rlx_mul, true}, {"Div", rlx_div, true},
    {"Pow", rlx_pow, false}, {"Max", rlx_max, true}, {"Min", rlx_min, true}, {"Sum", rlx_add, false},
    {"Mod", NULL, true},
    {"Mean", rlx_add, false}, {"Equal", rlx_eq, true}, {"Less", rlx_lt, true}, {"Greater", rlx_gt, true},
    {"LessOrEqual", rlx_le, false}, {"GreaterOrEqual", rlx_ge, false},
};

static rlx_status op_binary(ox_ctx *c, const onnx_node *n) {
    binary_fn fn = NULL;
    bool host = false;
    for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
        if (onnx_str_eq(n->op_type, binary_ops[i].name)) fn = binary_ops[i].fn, host = binary_ops[i].host;
    if (host && n->n_inputs == 2 && all_host(c, n)) return host_binary(c, n, ox_host_in(c, n, 0), ox_host_in(c, n, 1));
    if (!fn) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "%.*s on run-time tensors (only import-time values fold)",
                            (int)n->op_type.n, n->op_type.p);
    rlx_node acc = ox_in(c, n, 0);
    for (int i = 1; i < n->n_inputs && acc != RLX_NO_NODE; i++) {
        rlx_node b = ox_in(c, n, i);
        if (b == RLX_NO_NODE) return ox_graph_status(c);
        acc = fn(c->g, acc, b);
    }
    if (acc == RLX_NO_NODE) return ox_graph_status(c);
    if (onnx_str_eq(n->op_type, "Mean")) acc = rlx_div(c->g, acc, scalar_like(c, acc, n->n_inputs));
    return out0(c, n, acc);
}

static rlx_status op_where(ox_ctx *c, const onnx_node *n) {
    ox_value *hc = pure_host(c, n, 0), *ha = pure_host(c, n, 1), *hb = pure_host(c, n, 2);
    if (hc && ha && hb && (ha->host_dtype == RLX_F32) == (hb->host_dtype == RLX_F32)) {   /* shape arithmetic */
        const ox_value *big = hc;
        if (ha->host_count > big->host_count) big = ha;
        if (hb->host_count > big->host_count) big = hb;
        const ox_value *all[3] = {hc, ha, hb};
        for (int i = 0; i < 3; i++)
            if (all[i]->host_count != 1 && all[i]->host_count != big->host_count)
                return ox_fail(c, RLX_STATUS_UNSUPPORTED, "broadcasting import-time values in Where");
        int64_t iv[OX_HOST_MAX];
        double fv[OX_HOST_MAX];
        for (int64_t i = 0; i < big->host_count; i++) {
            bool t = hc->i64[hc->host_count == 1 ? 0 : i] != 0;
            const ox_value *src = t ? ha : hb;
            host_get(src, src->host_count == 1 ? 0 : i, &iv[i], &fv[i]);
        }
        return ox_set_host(c, n->outputs[0], ha->host_dtype, big->host_rank, big->host_dims, iv, fv);
    }
    rlx_node cond = ox_in(c, n, 0), a = ox_in(c, n, 1), b = ox_in(c, n, 2);
    if (cond == RLX_NO_NODE || a == RLX_NO_NODE || b == RLX_NO_NODE) return ox_graph_status(c);
    return out0(c, n, rlx_where(c->g, cond, a, b));
}

/* ---------------------------------------------------------------- matmul */

static rlx_status op_matmul(ox_ctx *c, const onnx_node *n) {
    rlx_node a = ox_in(c, n, 0), b = ox_in(c, n, 1);
    if (a == RLX_NO_NODE || b == RLX_NO_NODE) return ox_graph_status(c);
    int64_t da[RLX_MAX_RANK], db[RLX_MAX_RANK];
    int ra = rank_of(c, a, da), rb = rank_of(c, b, db);
    if (ra < 1 || rb < 1) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "MatMul of scalars");
    /* 1-D operands: numpy's rule, a vector becomes a matrix and the dim goes away after */
    if (ra == 1) { int64_t d[2] = {1, da[0]}; a = rlx_reshape(c->g, a, 2, d); }
    if (rb == 1) { int64_t d[2] = {db[0], 1}; b = rlx_reshape(c->g, b, 2, d); }
    rlx_node y = rlx_matmul(c->g, a, b, 0);
    if (ra == 1 || rb == 1) {
        int64_t dy[RLX_MAX_RANK];
        int ry = rank_of(c, y, dy);
        if (ry < 2) return ox_graph_status(c);
        int64_t d[RLX_MAX_RANK];
        int k = 0;
        for (int i = 0; i < ry - 2; i++) d[k++] = dy[i];
        if (ra != 1) d[k++] = dy[ry - 2];
        if (rb != 1) d[k++] = dy[ry - 1];
        y = rlx_reshape(c->g, y, k, d);
    }
    return out0(c, n, y);
}

static rlx_status op_gemm(ox_ctx *c, const onnx_node *n) {
    rlx_node a = ox_in(c, n, 0), b = ox_in(c, n, 1);
    if (a == RLX_NO_NODE || b == RLX_NO_NODE) return ox_graph_status(c);
    unsigned flags = (ox_attr_i(n, "transA", 0) ? RLX_MATMUL_TRANSPOSE_A : 0) | (ox_attr_i(n, "transB", 0) ? RLX_MATMUL_TRANSPOSE_B : 0);
    double alpha = ox_attr_f(n, "alpha", 1.0f), beta = ox_attr_f(n, "beta", 1.0f);
    rlx_node bias = RLX_NO_NODE;
    if (ox_has(n, 2) && beta != 0) {
        bias = ox_in(c, n, 2);
        if (bias == RLX_NO_NODE) return ox_graph_status(c);
    }
    rlx_node y;
    int64_t dbias[RLX_MAX_RANK];
    bool row_bias = bias != RLX_NO_NODE && rank_of(c, bias, dbias) == 1 && beta == 1 && alpha == 1;
    if (row_bias) {
        y = rlx_matmul_ex(c->g, a, b, flags, bias, RLX_ACT_NONE);
    } else {
        y = rlx_matmul_ex(c->g, a, b, flags, RLX_NO_NODE, RLX_ACT_NONE);
        if (alpha != 1) y = rlx_mul(c->g, y, scalar_like(c, y, alpha));
        if (bias != RLX_NO_NODE) y = rlx_add(c->g, y, beta == 1 ? bias : rlx_mul(c->g, bias, scalar_like(c, bias, beta)));
    }
    return out0(c, n, y);
}

/* ----------------------------------------------------- softmax and norms */

static rlx_status op_softmax(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    int64_t axis = ox_attr_i(n, "axis", c->opset >= 13 ? -1 : 1);
    if (!norm_axis(&axis, r)) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis out of range");
    if (c->opset < 13 && axis != r - 1)   /* the old form flattens at axis: the same only for the last one */
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "opset %lld Softmax over axis %lld of %d dims", (long long)c->opset,
                       (long long)axis, r);
    bool lg = onnx_str_eq(n->op_type, "LogSoftmax");
    return out0(c, n, lg ? rlx_log_softmax(c->g, x, (int)axis) : rlx_softmax(c->g, x, (int)axis));
}

static rlx_status op_layer_norm(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0), gamma = ox_in(c, n, 1);
    if (x == RLX_NO_NODE || gamma == RLX_NO_NODE) return ox_graph_status(c);
    rlx_node beta = ox_has(n, 2) ? ox_in(c, n, 2) : RLX_NO_NODE;
    int64_t d[RLX_MAX_RANK], dg[RLX_MAX_RANK];
    int r = rank_of(c, x, d), rg = rank_of(c, gamma, dg);
    int64_t axis = ox_attr_i(n, "axis", -1);
    if (!norm_axis(&axis, r)) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis out of range");
    if (axis != r - 1 || rg != 1)
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "LayerNormalization over more than the last axis");
    for (int i = 1; i < n->n_outputs; i++)
        if (n->outputs[i].n) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "LayerNormalization's Mean and InvStdDev outputs");
    return out0(c, n, rlx_layer_norm(c->g, x, gamma, beta, ox_attr_f(n, "epsilon", 1e-5f)));
}

/* ------------------------------------------------------------- reductions */

static rlx_status op_reduce(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK], axes[RLX_MAX_RANK];
    int r = rank_of(c, x, d), na = -1;
    bool sum = onnx_str_eq(n->op_type, "ReduceSum");
    bool axes_input = (sum && c->opset >= 13) || c->opset >= 18;
    if (axes_input) {
        if (ox_has(n, 1)) {
            const ox_value *v = host_ints(c, n, 1);
            if (!v) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "the axes must be constants");
            if (v->host_count > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "too many axes");
            na = (int)v->host_count;
            for (int i = 0; i < na; i++) axes[i] = v->i64[i];
        }
    } else {
        na = ox_attr_ints(n, "axes", axes, RLX_MAX_RANK);
    }
    uint32_t mask = 0;
    if (na <= 0) {
        if (na == 0 && ox_attr_i(n, "noop_with_empty_axes", 0)) return out0(c, n, x);
        mask = r ? (1u << r) - 1 : 0;
    }
    for (int i = 0; i < na; i++) {
        if (!norm_axis(&axes[i], r)) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis %lld out of range", (long long)axes[i]);
        mask |= 1u << axes[i];
    }
    int keep = (int)ox_attr_i(n, "keepdims", 1);
    rlx_node y;
    if (sum) y = rlx_reduce_sum(c->g, x, mask, keep);
    else if (onnx_str_eq(n->op_type, "ReduceMean")) y = rlx_reduce_mean(c->g, x, mask, keep);
    else if (onnx_str_eq(n->op_type, "ReduceMax")) y = rlx_reduce_max(c->g, x, mask, keep);
    else if (onnx_str_eq(n->op_type, "ReduceMin")) y = rlx_reduce_min(c->g, x, mask, keep);
    else y = rlx_reduce_prod(c->g, x, mask, keep);
    return out0(c, n, y);
}

/* --------------------------------------------------------------- shapes */

static rlx_status op_shape(ox_ctx *c, const onnx_node *n) {
    ox_value *hv = pure_host(c, n, 0);
    int64_t d[RLX_MAX_RANK];
    int r;
    if (hv) {
        r = hv->host_rank;
        memcpy(d, hv->host_dims, sizeof *d * (size_t)r);
    } else {
        rlx_node x = ox_in(c, n, 0);
        if (x == RLX_NO_NODE) return ox_graph_status(c);
        r = rank_of(c, x, d);
    }
    int64_t start = ox_attr_i(n, "start", 0), end = ox_attr_i(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = start < 0 ? 0 : start > r ? r : start;
    end = end < start ? start : end > r ? r : end;
    int64_t len = end - start;
    return ox_set_host(c, n->outputs[0], RLX_I64, 1, &len, d + start, NULL);
}

/* Reshape's target with ONNX's 0 (copy the input's dim) resolved. */
static rlx_status op_reshape(ox_ctx *c, const onnx_node *n) {
    ox_value *hv = pure_host(c, n, 0);
    if (hv) {   /* shape data: stays an import-time value */
        const ox_value *s = host_ints(c, n, 1);
        if (!s || s->host_count > RLX_MAX_RANK) return RLX_STATUS_UNSUPPORTED;
        int64_t want[RLX_MAX_RANK], known = 1;
        int infer = -1;
        for (int64_t i = 0; i < s->host_count; i++) {
            want[i] = s->i64[i] == 0 && i < hv->host_rank ? hv->host_dims[i] : s->i64[i];
            if (want[i] == -1 && infer < 0) infer = (int)i;
            else if (want[i] < 0 || (want[i] && known > OX_HOST_MAX / want[i]))
                return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "Reshape of an import-time value to dim %lld", (long long)want[i]);
            else known *= want[i];
        }
        if (infer >= 0) want[infer] = known ? hv->host_count / known : 0;
        if ((infer >= 0 ? known * want[infer] : known) != hv->host_count)
            return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "Reshape of %lld import-time elements to another count",
                           (long long)hv->host_count);
        return ox_set_host(c, n->outputs[0], hv->host_dtype, (int)s->host_count, want, hv->i64, hv->f64);
    }
    rlx_node x = ox_in(c, n, 0);
    const ox_value *s = host_ints(c, n, 1);
    if (x == RLX_NO_NODE || !s) return ox_graph_status(c) != RLX_OK ? ox_graph_status(c) : RLX_STATUS_UNSUPPORTED;
    if (s->host_count > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "a shape of %lld dims", (long long)s->host_count);
    int64_t d[RLX_MAX_RANK], want[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    bool allowzero = ox_attr_i(n, "allowzero", 0) != 0;
    int inferred = 0;
    for (int64_t i = 0; i < s->host_count; i++) {
        want[i] = s->i64[i];
        if (want[i] == 0 && !allowzero) {
            if (i >= r) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "a 0 in the shape has no input dim to copy");
            want[i] = d[i];
        }
        if (want[i] == OX_DIM_SCALED_SYMBOL) want[i] = -1;   /* rlx_reshape infers it, exactly */
        if (want[i] == -1 && ++inferred > 1)
            return ox_fail(c, RLX_STATUS_UNSUPPORTED,
                           "Reshape with more than one dim to infer (-1 or a symbolic dim times a size)");
    }
    return out0(c, n, rlx_reshape(c->g, x, (int)s->host_count, want));
}

static rlx_status op_flatten(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    int64_t axis = ox_attr_i(n, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis out of range");
    int64_t outer = 1, inner = 1;
    bool sym_outer = false;
    for (int i = 0; i < axis; i++) {
        if (d[i] < 0) sym_outer = true;
        else outer *= d[i];
    }
    for (int i = (int)axis; i < r; i++) {
        if (d[i] < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Flatten over a symbolic inner dim");
        inner *= d[i];
    }
    int64_t want[2] = {sym_outer ? -1 : outer, inner};
    return out0(c, n, rlx_reshape(c->g, x, 2, want));
}

static rlx_status op_transpose(ox_ctx *c, const onnx_node *n) {
    ox_value *hv = pure_host(c, n, 0);
    if (hv) {
        int r = hv->host_rank;
        int64_t p[RLX_MAX_RANK], od[RLX_MAX_RANK], iv[OX_HOST_MAX], src_st[RLX_MAX_RANK];
        double fv[OX_HOST_MAX];
        int np = ox_attr_ints(n, "perm", p, RLX_MAX_RANK);
        if (np < 0) for (int i = 0; i < r; i++) p[i] = r - 1 - i;
        else if (np != r) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "perm has %d entries for %d dims", np, r);
        unsigned seen = 0;
        for (int i = 0; i < r; i++) {
            if (p[i] < 0 || p[i] >= r || (seen >> p[i] & 1u))
                return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "perm is not a permutation of %d dims", r);
            seen |= 1u << p[i];
        }
        for (int i = r - 1, st = 1; i >= 0; st *= (int)hv->host_dims[i], i--) src_st[i] = st;
        for (int i = 0; i < r; i++) od[i] = hv->host_dims[p[i]];
        for (int64_t o = 0; o < hv->host_count; o++) {
            int64_t rem = o, src = 0;
            for (int i = r - 1; i >= 0; i--) src += (rem % od[i]) * src_st[p[i]], rem /= od[i];
            host_get(hv, src, &iv[o], &fv[o]);
        }
        return ox_set_host(c, n->outputs[0], hv->host_dtype, r, od, iv, fv);
    }
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK], p[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    int np = ox_attr_ints(n, "perm", p, RLX_MAX_RANK);
    int perm[RLX_MAX_RANK];
    if (np < 0) for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
    else if (np != r) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "perm has %d entries for %d dims", np, r);
    else for (int i = 0; i < r; i++) perm[i] = (int)p[i];
    return out0(c, n, rlx_transpose(c->g, x, perm));
}

/* Unsqueeze / Squeeze: the output dims, then a reshape (or a host reshape). */
static rlx_status op_squeeze(ox_ctx *c, const onnx_node *n) {
    bool unsq = onnx_str_eq(n->op_type, "Unsqueeze");
    int64_t axes[RLX_MAX_RANK];
    int na;
    if (c->opset >= 13) {
        na = -1;
        if (ox_has(n, 1)) {
            const ox_value *v = host_ints(c, n, 1);
            if (!v) return RLX_STATUS_UNSUPPORTED;
            if (v->host_count > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "too many axes");
            na = (int)v->host_count;
            for (int i = 0; i < na; i++) axes[i] = v->i64[i];
        }
    } else {
        na = ox_attr_ints(n, "axes", axes, RLX_MAX_RANK);
    }
    ox_value *hv = ox_has(n, 0) ? ox_lookup(c, n->inputs[0]) : NULL;
    bool host = hv && hv->host && hv->node == RLX_NO_NODE;
    int64_t d[RLX_MAX_RANK];
    int r;
    rlx_node x = RLX_NO_NODE;
    if (host) {
        r = hv->host_rank;
        memcpy(d, hv->host_dims, sizeof *d * (size_t)r);
    } else {
        if ((x = ox_in(c, n, 0)) == RLX_NO_NODE) return ox_graph_status(c);
        r = rank_of(c, x, d);
    }
    int64_t out[RLX_MAX_RANK];
    int ro = 0;
    if (unsq) {
        if (na < 1) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "Unsqueeze needs axes");
        ro = r + na;
        if (ro > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "more than %d dims", RLX_MAX_RANK);
        bool ins[RLX_MAX_RANK] = {false};
        for (int i = 0; i < na; i++) {
            if (!norm_axis(&axes[i], ro) || ins[axes[i]]) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "bad axes");
            ins[axes[i]] = true;
        }
        for (int i = 0, k = 0; i < ro; i++) out[i] = ins[i] ? 1 : d[k++];
    } else {
        bool drop[RLX_MAX_RANK] = {false};
        if (na < 0) for (int i = 0; i < r; i++) drop[i] = d[i] == 1;
        for (int i = 0; i < na; i++) {
            if (!norm_axis(&axes[i], r) || d[axes[i]] != 1)
                return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis %lld is not a dim of size 1", (long long)axes[i]);
            drop[axes[i]] = true;
        }
        for (int i = 0; i < r; i++)
            if (!drop[i]) out[ro++] = d[i];
    }
    if (host) return ox_set_host(c, n->outputs[0], hv->host_dtype, ro, out, hv->i64, hv->f64);
    return out0(c, n, rlx_reshape(c->g, x, ro, out));
}

static rlx_status op_concat(ox_ctx *c, const onnx_node *n) {
    int64_t axis = ox_attr_i(n, "axis", 0);
    if (all_host(c, n)) {   /* shape lists */
        int64_t iv[OX_HOST_MAX];
        double fv[OX_HOST_MAX];
        int64_t total = 0;
        const ox_value *first = ox_host_in(c, n, 0);
        for (int i = 0; i < n->n_inputs; i++) {
            const ox_value *v = ox_host_in(c, n, i);
            if (v->host_rank != 1 || (v->host_dtype == RLX_F32) != (first->host_dtype == RLX_F32))
                return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Concat of import-time values other than 1-D lists");
            if (total + v->host_count > OX_HOST_MAX) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "too large");
            for (int64_t k = 0; k < v->host_count; k++) {
                if (v->host_dtype == RLX_F32) fv[total + k] = v->f64[k];
                else iv[total + k] = v->i64[k];
            }
            total += v->host_count;
        }
        return ox_set_host(c, n->outputs[0], first->host_dtype, 1, &total, iv, fv);
    }
    rlx_node acc = RLX_NO_NODE;
    for (int i = 0; i < n->n_inputs;) {
        rlx_node xs[8];
        int k = 0;
        if (acc != RLX_NO_NODE) xs[k++] = acc;
        while (k < 8 && i < n->n_inputs) {
            if ((xs[k] = ox_in(c, n, i++)) == RLX_NO_NODE) return ox_graph_status(c);
            k++;
        }
        int64_t d[RLX_MAX_RANK];
        int64_t ax = axis;
        if (!norm_axis(&ax, rank_of(c, xs[0], d))) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis out of range");
        acc = k == 1 ? xs[0] : rlx_concat(c->g, xs, k, (int)ax);
    }
    return out0(c, n, acc);
}

static rlx_status op_split(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK], sizes[64];
    int r = rank_of(c, x, d);
    int64_t axis = ox_attr_i(n, "axis", 0);
    if (!norm_axis(&axis, r) || d[axis] < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Split over a symbolic or missing axis");
    int k = n->n_outputs, ns = -1;
    if (k < 1 || k > 64) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Split into %d outputs", k);
    if (c->opset >= 13 && ox_has(n, 1)) {
        const ox_value *v = host_ints(c, n, 1);
        if (!v || v->host_count > 64) return RLX_STATUS_UNSUPPORTED;
        ns = (int)v->host_count;
        for (int i = 0; i < ns; i++) sizes[i] = v->i64[i];
    } else if (c->opset < 13) {
        ns = ox_attr_ints(n, "split", sizes, 64);
    }
    if (ns < 0) {
        int64_t each = (d[axis] + k - 1) / k;   /* the last part may be smaller (opset 18) */
        for (int i = 0; i < k; i++) sizes[i] = i + 1 < k ? each : d[axis] - each * (k - 1);
        ns = k;
    }
    if (ns != k) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "%d split sizes for %d outputs", ns, k);
    int64_t at = 0;
    for (int i = 0; i < k; i++) {
        if (sizes[i] < 0 || at + sizes[i] > d[axis]) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "split sizes exceed the axis");
        rlx_status st = ox_set_node(c, n->outputs[i], rlx_narrow(c->g, x, (int)axis, at, sizes[i]));
        if (st != RLX_OK) return st;
        at += sizes[i];
    }
    return at == d[axis] ? RLX_OK : ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "split sizes do not cover the axis");
}

/* Clamped [start, end) with step along a dim of size dim (ONNX Slice rules). */
static void slice_bounds(int64_t dim, int64_t *start, int64_t *end, int64_t step) {
    if (*start < 0) *start += dim;
    if (*end < 0) *end += dim;
    if (step > 0) {
        *start = *start < 0 ? 0 : *start > dim ? dim : *start;
        *end = *end < 0 ? 0 : *end > dim ? dim : *end;
    } else {
        *start = *start < 0 ? -1 : *start > dim - 1 ? dim - 1 : *start;
        *end = *end < -1 ? -1 : *end > dim - 1 ? dim - 1 : *end;
    }
}

static rlx_status op_slice(ox_ctx *c, const onnx_node *n) {
    int64_t starts[RLX_MAX_RANK], ends[RLX_MAX_RANK], axes[RLX_MAX_RANK], steps[RLX_MAX_RANK];
    int ns;
    if (c->opset >= 10) {
        const ox_value *vs = host_ints(c, n, 1), *ve = host_ints(c, n, 2);
        if (!vs || !ve) return RLX_STATUS_UNSUPPORTED;
        ns = (int)vs->host_count;
        if (ns > RLX_MAX_RANK || ve->host_count != ns) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "starts and ends differ");
        for (int i = 0; i < ns; i++) starts[i] = vs->i64[i], ends[i] = ve->i64[i], axes[i] = i, steps[i] = 1;
        for (int k = 3; k <= 4; k++) {
            if (!ox_has(n, k)) continue;
            const ox_value *v = host_ints(c, n, k);
            if (!v || v->host_count != ns) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "axes or steps must be constants of starts' length");
            for (int i = 0; i < ns; i++) (k == 3 ? axes : steps)[i] = v->i64[i];
        }
    } else {
        ns = ox_attr_ints(n, "starts", starts, RLX_MAX_RANK);
        if (ox_attr_ints(n, "ends", ends, RLX_MAX_RANK) != ns || ns < 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "starts and ends");
        if (ox_attr_ints(n, "axes", axes, RLX_MAX_RANK) < 0) for (int i = 0; i < ns; i++) axes[i] = i;
        for (int i = 0; i < ns; i++) steps[i] = 1;
    }
    ox_value *hv = pure_host(c, n, 0);
    if (hv) {   /* shape data, any rank and steps */
        int r = hv->host_rank;
        int64_t first[RLX_MAX_RANK], step[RLX_MAX_RANK], od[RLX_MAX_RANK], st_in[RLX_MAX_RANK], iv[OX_HOST_MAX];
        double fv[OX_HOST_MAX];
        for (int i = 0; i < r; i++) first[i] = 0, step[i] = 1, od[i] = hv->host_dims[i];
        for (int i = 0; i < ns; i++) {
            int64_t ax = axes[i], s0 = starts[i], e0 = ends[i];
            if (!norm_axis(&ax, r) || steps[i] == 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "bad axis or step 0");
            /* a step longer than the dim takes at most one element: clamp it so the arithmetic cannot overflow */
            int64_t dim = hv->host_dims[ax], sg = steps[i] > dim + 1 ? dim + 1 : steps[i] < -(dim + 1) ? -(dim + 1) : steps[i];
            if (s0 < -(dim + 1)) s0 = -(dim + 1);
            if (s0 > dim + 1) s0 = dim + 1;
            if (e0 < -(dim + 2)) e0 = -(dim + 2);
            if (e0 > dim + 1) e0 = dim + 1;
            slice_bounds(dim, &s0, &e0, sg);
            int64_t len = sg > 0 ? (e0 - s0 + sg - 1) / sg : (s0 - e0 - sg - 1) / -sg;
            first[ax] = s0, step[ax] = sg, od[ax] = len > 0 ? len : 0;
        }
        int64_t count = 1;
        for (int i = r - 1, stv = 1; i >= 0; stv *= (int)hv->host_dims[i], i--) st_in[i] = stv, count *= od[i];
        for (int64_t o = 0; o < count; o++) {
            int64_t rem = o, src = 0;
            for (int i = r - 1; i >= 0; i--) src += (first[i] + (rem % od[i]) * step[i]) * st_in[i], rem /= od[i];
            host_get(hv, src, &iv[o], &fv[o]);
        }
        return ox_set_host(c, n->outputs[0], hv->host_dtype, r, od, iv, fv);
    }
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    for (int i = 0; i < ns; i++) {
        int64_t ax = axes[i];
        if (!norm_axis(&ax, r)) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis out of range");
        if (steps[i] == 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "step 0");
        if (d[ax] < 0) {   /* symbolic: only a whole-axis slice is free */
            if (starts[i] == 0 && ends[i] >= ((int64_t)1 << 31) && steps[i] == 1) continue;
            return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Slice of a symbolic dim");
        }
        int64_t s = starts[i], e = ends[i];
        slice_bounds(d[ax], &s, &e, steps[i]);
        if (steps[i] < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Slice with a negative step");
        if (e < s) e = s;
        x = rlx_slice(c->g, x, (int)ax, s, e, steps[i]);
        rank_of(c, x, d);
    }
    return out0(c, n, x);
}

/* GatherND of a run-time tensor by import-time indices: the leading q dims
 * (static) flatten into rows, each index tuple becomes one row id, and
 * gather_rows picks them: [idx dims..., data dims q...]. */
static rlx_status gather_nd_rows(ox_ctx *c, const onnx_node *n) {
    ox_value *iv = ox_has(n, 1) ? ox_lookup(c, n->inputs[1]) : NULL;
    if (!iv || !iv->host || iv->host_dtype == RLX_F32)
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "GatherND with run-time indices");
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    int q = iv->host_rank ? (int)iv->host_dims[iv->host_rank - 1] : 0;
    if (q < 1 || q > r) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "GatherND index tuples of %d for data of rank %d", q, r);
    int64_t rows = 1, tuples = iv->host_count / q;
    for (int i = 0; i < q; i++) {
        if (d[i] < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "GatherND over a symbolic dim");
        rows *= d[i];
    }
    int out_rank = iv->host_rank - 1 + r - q;
    if (out_rank > RLX_MAX_RANK || 1 + r - q > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "more than %d dims", RLX_MAX_RANK);
    int32_t *ids = malloc(sizeof *ids * (size_t)(tuples ? tuples : 1));
    if (!ids) return ox_fail(c, RLX_STATUS_OUT_OF_MEMORY, "GatherND indices");
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int i = 0; i < q; i++) {
            int64_t k = iv->i64[t * q + i];
            if (k < 0) k += d[i];
            if (k < 0 || k >= d[i]) { free(ids); return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "GatherND index out of range"); }
            off = off * d[i] + k;
        }
        ids[t] = (int32_t)off;
    }
    int64_t flat[RLX_MAX_RANK], out[RLX_MAX_RANK];
    flat[0] = rows;
    for (int i = q; i < r; i++) flat[1 + i - q] = d[i];
    int k = 0;
    for (int i = 0; i < iv->host_rank - 1; i++) out[k++] = iv->host_dims[i];
    for (int i = q; i < r; i++) out[k++] = d[i];
    rlx_node idn = rlx_constant(c->g, RLX_I32, 1, &tuples, ids);
    free(ids);
    rlx_node y = rlx_gather_rows(c->g, rlx_reshape(c->g, x, 1 + r - q, flat), idn);
    return out0(c, n, rlx_reshape(c->g, y, out_rank, out));
}

/* GatherND (batch_dims 0): data[idx[..., :]] for each index tuple, the
 * tuple's length q picking the leading q dims. On import-time values it
 * folds (shape arithmetic in newer exporters' Resize and attention graphs);
 * on a tensor with import-time indices it is a gather of rows. */
static rlx_status op_gather_nd(ox_ctx *c, const onnx_node *n) {
    if (ox_attr_i(n, "batch_dims", 0) != 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "GatherND with batch_dims");
    const ox_value *data = all_host(c, n) ? ox_host_in(c, n, 0) : NULL;
    if (!data) return gather_nd_rows(c, n);
    const ox_value *idx = host_ints(c, n, 1);
    if (!idx) return ox_graph_status(c);
    int q = idx->host_rank ? (int)idx->host_dims[idx->host_rank - 1] : 0;
    if (idx->host_rank < 1 || q < 1 || q > data->host_rank)
        return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "GatherND index tuples of %d for data of rank %d", q, data->host_rank);
    int64_t tuples = idx->host_count / q, inner = 1;
    for (int d = q; d < data->host_rank; d++) inner *= data->host_dims[d];
    int out_rank = idx->host_rank - 1 + data->host_rank - q;
    if (out_rank > RLX_MAX_RANK || tuples * inner > OX_HOST_MAX)
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "a GatherND result too large to fold at import");
    int64_t dims[RLX_MAX_RANK], iv[OX_HOST_MAX];
    double fv[OX_HOST_MAX];
    int r = 0;
    for (int d = 0; d < idx->host_rank - 1; d++) dims[r++] = idx->host_dims[d];
    for (int d = q; d < data->host_rank; d++) dims[r++] = data->host_dims[d];
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int d = 0; d < q; d++) {
            int64_t k = idx->i64[t * q + d], len = data->host_dims[d];
            if (k < 0) k += len;
            if (k < 0 || k >= len) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "GatherND index out of range");
            off = off * len + k;
        }
        for (int64_t e = 0; e < inner; e++) host_get(data, off * inner + e, &iv[t * inner + e], &fv[t * inner + e]);
    }
    return ox_set_host(c, n->outputs[0], data->host_dtype, r, dims, iv, fv);
}

static rlx_status op_gather(ox_ctx *c, const onnx_node *n) {
    int64_t axis = ox_attr_i(n, "axis", 0);
    ox_value *hv = ox_has(n, 0) ? ox_lookup(c, n->inputs[0]) : NULL;
    if (hv && hv->host && hv->node == RLX_NO_NODE && hv->host_rank == 1 && all_host(c, n)) {   /* shape[i] */
        const ox_value *idx = host_ints(c, n, 1);
        if (!idx) return RLX_STATUS_UNSUPPORTED;
        int64_t iv[OX_HOST_MAX];
        double fv[OX_HOST_MAX];
        for (int64_t i = 0; i < idx->host_count; i++) {
            int64_t k = idx->i64[i] < 0 ? idx->i64[i] + hv->host_count : idx->i64[i];
            if (k < 0 || k >= hv->host_count) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "index out of range");
            if (hv->host_dtype == RLX_F32) fv[i] = hv->f64[k];
            else iv[i] = hv->i64[k];
        }
        return ox_set_host(c, n->outputs[0], hv->host_dtype, idx->host_rank, idx->host_dims, iv, fv);
    }
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    if (!norm_axis(&axis, r)) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis out of range");
    ox_value *iv = ox_has(n, 1) ? ox_lookup(c, n->inputs[1]) : NULL;
    if (iv && iv->host && iv->host_rank == 0 && iv->host_dtype != RLX_F32 && d[axis] >= 0) {   /* x[..., k, ...] */
        int64_t k = iv->i64[0] < 0 ? iv->i64[0] + d[axis] : iv->i64[0];
        if (k < 0 || k >= d[axis]) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "index out of range");
        rlx_node y = rlx_narrow(c->g, x, (int)axis, k, 1);
        int64_t out[RLX_MAX_RANK];
        int ro = 0;
        for (int i = 0; i < r; i++)
            if (i != axis) out[ro++] = d[i];
        return out0(c, n, rlx_reshape(c->g, y, ro, out));
    }
    rlx_node ids = ox_in(c, n, 1);
    if (ids == RLX_NO_NODE) return ox_graph_status(c);
    rlx_dtype idt;
    int64_t di[RLX_MAX_RANK];
    int ri = -1;
    rlx_node_shape(c->g, ids, &idt, &ri, di);
    if (idt == RLX_I64) ids = rlx_cast(c->g, ids, RLX_I32);
    if (r + ri - 1 > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "more than %d dims", RLX_MAX_RANK);
    /* move axis to the front, gather rows of [d_axis, rest], then put the index dims in its place */
    int perm[RLX_MAX_RANK], k = 0;
    perm[k++] = (int)axis;
    for (int i = 0; i < r; i++)
        if (i != axis) perm[k++] = i;
    rlx_node t = axis ? rlx_transpose(c->g, x, perm) : x;
    int64_t rest = 1;
    for (int i = 0; i < r; i++)
        if (i != axis) {
            if (d[i] < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Gather with a symbolic non-gathered dim");
            rest *= d[i];
        }
    int64_t d2[2] = {d[axis], rest};
    rlx_node rows = rlx_gather_rows(c->g, rlx_reshape(c->g, t, 2, d2), ids);   /* ids.shape + [rest] */
    int64_t out[RLX_MAX_RANK];
    int ro = 0;
    for (int i = 0; i < ri; i++) out[ro++] = di[i];
    for (int i = 0; i < r; i++)
        if (i != axis) out[ro++] = d[i];
    rlx_node y = rlx_reshape(c->g, rows, ro, out);
    if (axis) {   /* [idx..., before..., after...] -> [before..., idx..., after...] */
        int p2[RLX_MAX_RANK], q = 0;
        for (int i = 0; i < axis; i++) p2[q++] = ri + i;
        for (int i = 0; i < ri; i++) p2[q++] = i;
        for (int i = (int)axis + 1; i < r; i++) p2[q++] = ri + i - 1;
        y = rlx_transpose(c->g, y, p2);
    }
    return out0(c, n, y);
}

static rlx_status op_expand(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    const ox_value *s = host_ints(c, n, 1);
    if (x == RLX_NO_NODE || !s) return RLX_STATUS_UNSUPPORTED;
    int64_t d[RLX_MAX_RANK], out[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    int ro = (int)(s->host_count > r ? s->host_count : r);
    if (ro > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "more than %d dims", RLX_MAX_RANK);
    for (int i = 0; i < ro; i++) {   /* numpy broadcasting of the two shapes, right-aligned */
        int ix = i - (ro - r), is = i - (ro - (int)s->host_count);
        int64_t a = ix >= 0 ? d[ix] : 1, b = is >= 0 ? s->i64[is] : 1;
        out[i] = a == 1 ? b : a;
        if (!(b == 1 || a == b || a == 1)) return ox_fail(c, RLX_STATUS_SHAPE, "shapes do not broadcast");
    }
    return out0(c, n, rlx_expand(c->g, x, ro, out));
}

/* ---------------------------------------------------------------- vision */

/* The padding of Conv and the pools: "pads" (begins, then ends), or auto_pad
 * SAME_UPPER / SAME_LOWER (an output of ceil(in / stride), the odd element
 * after or before) or VALID. span: the window's extent, dilation included. */
static rlx_status spatial_pads(ox_ctx *c, const onnx_node *n, int sd, const int64_t *in, const int64_t *stride,
                               const int64_t *span, int64_t *pb, int64_t *pe) {
    const onnx_attr *ap = onnx_node_attr(n, "auto_pad");
    int64_t v[6];
    if (!ap || onnx_str_eq(ap->s, "NOTSET")) {
        int np = ox_attr_ints(n, "pads", v, 6);
        if (np == 2 * sd) for (int i = 0; i < sd; i++) pb[i] = v[i], pe[i] = v[sd + i];
        else if (np >= 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "pads has %d entries for %d spatial dims", np, sd);
    } else if (onnx_str_eq(ap->s, "SAME_UPPER") || onnx_str_eq(ap->s, "SAME_LOWER")) {
        for (int i = 0; i < sd; i++) {
            int64_t st = stride[i] ? stride[i] : 1, total = ((in[i] + st - 1) / st - 1) * st + span[i] - in[i];
            if (total < 0) total = 0;
            pb[i] = onnx_str_eq(ap->s, "SAME_UPPER") ? total / 2 : total - total / 2;
            pe[i] = total - pb[i];
        }
    } else if (!onnx_str_eq(ap->s, "VALID")) {
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "auto_pad '%.*s'", (int)ap->s.n, ap->s.p);
    }
    return RLX_OK;
}

static rlx_status op_conv(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0), w = ox_in(c, n, 1);
    if (x == RLX_NO_NODE || w == RLX_NO_NODE) return ox_graph_status(c);
    rlx_node b = ox_has(n, 2) ? ox_in(c, n, 2) : RLX_NO_NODE;
    int64_t dx[RLX_MAX_RANK], dw[RLX_MAX_RANK];
    int r = rank_of(c, x, dx);
    if (rank_of(c, w, dw) != r || r < 3 || r > 5) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Conv of rank %d", r);
    int sd = r - 2;
    rlx_conv_params p = {.dims = sd, .groups = ox_attr_i(n, "group", 1)};
    int64_t v[6];
    if (ox_attr_ints(n, "strides", v, 3) == sd) for (int i = 0; i < sd; i++) p.stride[i] = v[i];
    if (ox_attr_ints(n, "dilations", v, 3) == sd) for (int i = 0; i < sd; i++) p.dilation[i] = v[i];
    int64_t span[3];
    for (int i = 0; i < sd; i++) span[i] = (dw[2 + i] - 1) * (p.dilation[i] ? p.dilation[i] : 1) + 1;
    rlx_status st = spatial_pads(c, n, sd, dx + 2, p.stride, span, p.pad_begin, p.pad_end);
    if (st != RLX_OK) return st;
    return out0(c, n, rlx_conv(c->g, x, w, b, &p));
}

static rlx_status op_conv_transpose(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0), w = ox_in(c, n, 1);
    if (x == RLX_NO_NODE || w == RLX_NO_NODE) return ox_graph_status(c);
    rlx_node b = ox_has(n, 2) ? ox_in(c, n, 2) : RLX_NO_NODE;
    int64_t dx[RLX_MAX_RANK], v[6];
    int r = rank_of(c, x, dx);
    if (r < 3 || r > 5) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "ConvTranspose of rank %d", r);
    int sd = r - 2;
    if (onnx_node_attr(n, "output_shape")) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "ConvTranspose's output_shape (give pads)");
    const onnx_attr *ap = onnx_node_attr(n, "auto_pad");
    if (ap && !onnx_str_eq(ap->s, "NOTSET")) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "ConvTranspose with auto_pad");
    rlx_conv_params p = {.dims = sd, .groups = ox_attr_i(n, "group", 1)};
    if (ox_attr_ints(n, "strides", v, 3) == sd) for (int i = 0; i < sd; i++) p.stride[i] = v[i];
    if (ox_attr_ints(n, "dilations", v, 3) == sd) for (int i = 0; i < sd; i++) p.dilation[i] = v[i];
    if (ox_attr_ints(n, "output_padding", v, 3) == sd) for (int i = 0; i < sd; i++) p.output_padding[i] = v[i];
    int np = ox_attr_ints(n, "pads", v, 6);
    if (np == 2 * sd) for (int i = 0; i < sd; i++) p.pad_begin[i] = v[i], p.pad_end[i] = v[sd + i];
    else if (np >= 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "pads has %d entries for %d spatial dims", np, sd);
    return out0(c, n, rlx_conv_transpose(c->g, x, w, b, &p));
}

/* GlobalAveragePool / GlobalMaxPool: the mean / max over the spatial dims, kept as 1s. */
static rlx_status op_global_pool(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    if (r < 3) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "needs [N, C, spatial...]");
    uint32_t mask = ((1u << r) - 1) & ~3u;
    bool mx = onnx_str_eq(n->op_type, "GlobalMaxPool");
    return out0(c, n, mx ? rlx_reduce_max(c->g, x, mask, 1) : rlx_reduce_mean(c->g, x, mask, 1));
}

/* MaxPool / AveragePool: windows as PyTorch's (padding at most half the window). */
static rlx_status op_pool(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    if (n->n_outputs > 1 && n->outputs[1].n) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "MaxPool's Indices output");
    int64_t d[RLX_MAX_RANK], v[6];
    int r = rank_of(c, x, d);
    if (r < 3 || r > 5) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "pooling of rank %d", r);
    int sd = r - 2;
    bool avg = onnx_str_eq(n->op_type, "AveragePool");
    rlx_pool_params p = {.kind = avg ? RLX_AVGPOOL : RLX_MAXPOOL, .dims = sd, .ceil_mode = (int)ox_attr_i(n, "ceil_mode", 0),
                         .count_include_pad = (int)ox_attr_i(n, "count_include_pad", 0)};
    if (ox_attr_ints(n, "kernel_shape", v, 3) != sd) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "kernel_shape needs %d entries", sd);
    for (int i = 0; i < sd; i++) p.kernel[i] = v[i], p.stride[i] = 1;
    if (ox_attr_ints(n, "strides", v, 3) == sd) for (int i = 0; i < sd; i++) p.stride[i] = v[i];
    int nd = ox_attr_ints(n, "dilations", v, 3);
    for (int i = 0; i < nd && i < sd; i++)
        if (v[i] != 1) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "pooling with dilation %lld", (long long)v[i]);
    rlx_status st = spatial_pads(c, n, sd, d + 2, p.stride, p.kernel, p.pad_begin, p.pad_end);
    if (st != RLX_OK) return st;
    return out0(c, n, rlx_pool(c->g, x, &p));
}

/* Concatenates parts[0..n) along axis, eight at a time. */
static rlx_node concat_many(ox_ctx *c, rlx_node *parts, int n, int axis) {
    rlx_node acc = parts[0];
    for (int i = 1; i < n;) {
        rlx_node xs[8];
        int k = 0;
        xs[k++] = acc;
        while (k < 8 && i < n) xs[k++] = parts[i++];
        acc = rlx_concat(c->g, xs, k, axis);
    }
    return acc;
}

/* Pad (constant, edge, reflect) as slices and concatenations along each
 * padded axis; negative pads crop. */
static rlx_status op_pad(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK], pads[2 * RLX_MAX_RANK] = {0}, axes[RLX_MAX_RANK];
    int r = rank_of(c, x, d), na = r;
    for (int i = 0; i < r; i++) axes[i] = i;
    int np;
    if (c->opset >= 11) {
        const ox_value *v = host_ints(c, n, 1);
        if (!v) return RLX_STATUS_UNSUPPORTED;
        np = (int)v->host_count;
        if (ox_has(n, 3)) {
            const ox_value *a = host_ints(c, n, 3);
            if (!a || a->host_count > r) return RLX_STATUS_UNSUPPORTED;
            na = (int)a->host_count;
            for (int i = 0; i < na; i++) axes[i] = a->i64[i];
        }
        if (np != 2 * na) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "%d pads for %d axes", np, na);
        for (int i = 0; i < np; i++) pads[i] = v->i64[i];
    } else {
        np = ox_attr_ints(n, "pads", pads, 2 * RLX_MAX_RANK);
        if (np != 2 * r) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "%d pads for rank %d", np, r);
    }
    double value = c->opset >= 11 ? 0.0 : ox_attr_f(n, "value", 0.0f);
    if (c->opset >= 11 && ox_has(n, 2)) {
        const ox_value *v = ox_host_in(c, n, 2);
        if (!v) return RLX_STATUS_UNSUPPORTED;
        value = v->host_dtype == RLX_F32 ? v->f64[0] : (double)v->i64[0];
    }
    const onnx_attr *ma = onnx_node_attr(n, "mode");
    int mode = !ma || onnx_str_eq(ma->s, "constant") ? 0 : onnx_str_eq(ma->s, "edge") ? 1 : onnx_str_eq(ma->s, "reflect") ? 2 : -1;
    if (mode < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Pad mode '%.*s'", (int)ma->s.n, ma->s.p);
    for (int i = 0; i < na; i++) {
        int64_t ax = axes[i];
        if (!norm_axis(&ax, r)) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis out of range");
        int64_t before = pads[i], after = pads[na + i];
        if (before == 0 && after == 0) continue;
        rank_of(c, x, d);
        if (d[ax] < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Pad along a symbolic dim");
        if (before < 0 || after < 0) {   /* crop first */
            int64_t s0 = before < 0 ? -before : 0, e0 = d[ax] - (after < 0 ? -after : 0);
            if (e0 <= s0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "pads crop the whole axis");
            x = rlx_narrow(c->g, x, (int)ax, s0, e0 - s0);
            rank_of(c, x, d);
            before = before < 0 ? 0 : before, after = after < 0 ? 0 : after;
        }
        if (mode == 2 && (before >= d[ax] || after >= d[ax]))
            return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "reflect padding of %lld needs more than %lld elements",
                           (long long)(before > after ? before : after), (long long)d[ax]);
        int64_t total = before + after;
        if (total > 64 && mode == 2) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "reflect padding wider than 64");
        rlx_node parts[130];
        int k = 0;
        int64_t slab[RLX_MAX_RANK];
        memcpy(slab, d, sizeof slab);
        for (int side = 0; side < 2; side++) {
            int64_t w = side ? after : before;
            if (side) parts[k++] = x;
            if (w == 0) continue;
            if (mode == 0) {
                slab[ax] = w;
                parts[k++] = rlx_expand(c->g, scalar_like(c, x, value), r, slab);
            } else if (mode == 1) {
                slab[ax] = w;
                parts[k++] = rlx_expand(c->g, rlx_narrow(c->g, x, (int)ax, side ? d[ax] - 1 : 0, 1), r, slab);
            } else {
                for (int64_t j = 0; j < w; j++) {   /* before: x[w], .., x[1]; after: x[n-2], .., x[n-1-w] */
                    int64_t at = side ? d[ax] - 2 - j : w - j;
                    parts[k++] = rlx_narrow(c->g, x, (int)ax, at, 1);
                }
            }
        }
        if (k == 0) parts[k++] = x;
        x = concat_many(c, parts, k, (int)ax);
    }
    return out0(c, n, x);
}

/* BatchNormalization at inference: the batch_norm op (passes/fold_bn.c folds
 * it into a conv before it). Its optional training outputs are refused. */
static rlx_status op_batch_norm(ox_ctx *c, const onnx_node *n) {
    if (ox_attr_i(n, "training_mode", 0)) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "BatchNormalization in training mode");
    for (int i = 1; i < n->n_outputs; i++)
        if (n->outputs[i].n) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "BatchNormalization's running mean and variance outputs");
    rlx_node x = ox_in(c, n, 0), scale = ox_in(c, n, 1), bias = ox_in(c, n, 2), mean = ox_in(c, n, 3), var = ox_in(c, n, 4);
    if (x == RLX_NO_NODE || scale == RLX_NO_NODE || bias == RLX_NO_NODE || mean == RLX_NO_NODE || var == RLX_NO_NODE)
        return ox_graph_status(c);
    return out0(c, n, rlx_batch_norm(c->g, x, scale, bias, mean, var, ox_attr_f(n, "epsilon", 1e-5f)));
}

/* InstanceNormalization: group_norm with one channel per group. */
static rlx_status op_instance_norm(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0), scale = ox_in(c, n, 1), bias = ox_in(c, n, 2);
    if (x == RLX_NO_NODE || scale == RLX_NO_NODE || bias == RLX_NO_NODE) return ox_graph_status(c);
    return out0(c, n, rlx_instance_norm(c->g, x, scale, bias, ox_attr_f(n, "epsilon", 1e-5f)));
}

/* GroupNormalization: scale and bias are per channel from opset 21; opsets
 * 18 to 20 give them per group, which repeat over each group's channels. */
static rlx_status op_group_norm(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0), scale = ox_in(c, n, 1), bias = ox_in(c, n, 2);
    if (x == RLX_NO_NODE || scale == RLX_NO_NODE || bias == RLX_NO_NODE) return ox_graph_status(c);
    int64_t groups = ox_attr_i(n, "num_groups", 0), d[RLX_MAX_RANK];
    if (!onnx_node_attr(n, "num_groups") || groups < 1)
        return ox_fail(c, RLX_STATUS_FORMAT, "GroupNormalization needs num_groups >= 1");
    if (ox_attr_i(n, "stash_type", 1) != 1) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "stash_type other than float");
    int r = rank_of(c, x, d);
    if (r < 2 || d[1] < 1 || d[1] % groups)
        return ox_fail(c, RLX_STATUS_SHAPE, "x must be [N, C, ...] with C divisible by num_groups %lld", (long long)groups);
    if (c->opset < 21 && groups != d[1]) {
        int64_t g1[2] = {groups, 1}, ge[2] = {groups, d[1] / groups}, cd[1] = {d[1]};
        rlx_graph *g = c->g;
        scale = rlx_reshape(g, rlx_expand(g, rlx_reshape(g, scale, 2, g1), 2, ge), 1, cd);
        bias = rlx_reshape(g, rlx_expand(g, rlx_reshape(g, bias, 2, g1), 2, ge), 1, cd);
    }
    return out0(c, n, rlx_group_norm(c->g, x, scale, bias, (int)groups, ox_attr_f(n, "epsilon", 1e-5f)));
}

/* ----------------------------------------------------------- constants */

static rlx_status op_constant(ox_ctx *c, const onnx_node *n) {
    if (n->n_attrs != 1) return ox_fail(c, RLX_STATUS_FORMAT, "Constant needs exactly one attribute");
    const onnx_attr *a = &n->attrs[0];
    onnx_str out = n->outputs[0];
    if (onnx_str_eq(a->name, "value") && a->t) {
        int64_t count = 1;
        for (int d = 0; d < a->t->n_dims; d++) count *= a->t->dims[d];
        if (count <= OX_HOST_MAX) return ox_host_from_tensor(c, out, a->t);
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "a Constant of %lld elements", (long long)count);
    }
    if (onnx_str_eq(a->name, "value_float")) { double f = a->f; return ox_set_host(c, out, RLX_F32, 0, NULL, NULL, &f); }
    if (onnx_str_eq(a->name, "value_int")) return ox_set_host(c, out, RLX_I64, 0, NULL, &a->i, NULL);
    if (onnx_str_eq(a->name, "value_ints") || onnx_str_eq(a->name, "value_floats")) {
        bool fl = onnx_str_eq(a->name, "value_floats");
        int64_t len = (int64_t)(fl ? a->n_floats : a->n_ints);
        if (len > OX_HOST_MAX) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "too large");
        double fv[OX_HOST_MAX];
        for (int64_t i = 0; fl && i < len; i++) fv[i] = a->floats[i];
        return ox_set_host(c, out, fl ? RLX_F32 : RLX_I64, 1, &len, a->ints, fv);
    }
    return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Constant with attribute '%.*s'", (int)a->name.n, a->name.p);
}

static rlx_status op_constant_of_shape(ox_ctx *c, const onnx_node *n) {
    const ox_value *s = host_ints(c, n, 0);
    if (!s) return RLX_STATUS_UNSUPPORTED;
    int64_t count = 1;
    if (s->host_count > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "more than %d dims", RLX_MAX_RANK);
    for (int64_t i = 0; i < s->host_count; i++) {
        if (s->i64[i] < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "ConstantOfShape of a symbolic shape");
        count *= s->i64[i];
    }
    if (count > OX_HOST_MAX) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "ConstantOfShape of %lld elements", (long long)count);
    const onnx_attr *a = onnx_node_attr(n, "value");
    double fv = 0;
    int64_t iv = 0;
    rlx_dtype dt = RLX_F32;
    if (a && a->t) {
        onnx_str tmp = {"", 0};
        rlx_status st = ox_host_from_tensor(c, tmp, a->t);
        if (st != RLX_OK) return st;
        ox_value *v = &c->values[c->n_values - 1];
        dt = v->host_dtype;
        if (dt == RLX_F32) fv = v->f64[0];
        else iv = v->i64[0];
    }
    int64_t ivs[OX_HOST_MAX];
    double fvs[OX_HOST_MAX];
    for (int64_t i = 0; i < count; i++) ivs[i] = iv, fvs[i] = fv;
    return ox_set_host(c, n->outputs[0], dt, (int)s->host_count, s->i64, ivs, fvs);
}

static rlx_status op_range(ox_ctx *c, const onnx_node *n) {
    const ox_value *v[3];
    for (int i = 0; i < 3; i++)
        if (!(v[i] = ox_host_in(c, n, i))) return RLX_STATUS_UNSUPPORTED;
    bool fl = v[0]->host_dtype == RLX_F32;
    double s = fl ? v[0]->f64[0] : (double)v[0]->i64[0], e = fl ? v[1]->f64[0] : (double)v[1]->i64[0];
    double d = fl ? v[2]->f64[0] : (double)v[2]->i64[0];
    if (!fl && (v[0]->i64[0] <= -2 || v[1]->i64[0] <= -2))
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Range over a symbolic dim");
    if (d == 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "Range with delta 0");
    double cnt = ceil((e - s) / d);
    int64_t len = cnt > 0 ? (int64_t)cnt : 0;
    if (len > OX_HOST_MAX) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Range of %lld elements", (long long)len);
    int64_t iv[OX_HOST_MAX];
    double fv[OX_HOST_MAX];
    for (int64_t i = 0; i < len; i++) fv[i] = s + (double)i * d, iv[i] = (int64_t)fv[i];
    return ox_set_host(c, n->outputs[0], fl ? RLX_F32 : RLX_I64, 1, &len, iv, fv);
}

/* ----------------------------------------------------------------- table */

static const ox_op ops[] = {
    {"Abs", op_unary}, {"Add", op_binary}, {"Atan", op_unary}, {"AveragePool", op_pool}, {"Cast", op_cast}, {"Clip", op_clip},
    {"BatchNormalization", op_batch_norm}, {"Concat", op_concat}, {"Constant", op_constant}, {"Conv", op_conv}, {"ConvTranspose", op_conv_transpose}, {"ConstantOfShape", op_constant_of_shape}, {"Cos", op_unary}, {"DepthToSpace", ox_op_depth_space},
    {"Div", op_binary}, {"Equal", op_binary}, {"Erf", op_unary}, {"Exp", op_unary}, {"Expand", op_expand}, {"Flatten", op_flatten},
    {"Gather", op_gather}, {"GatherND", op_gather_nd}, {"Gelu", op_gelu}, {"Gemm", op_gemm}, {"GlobalAveragePool", op_global_pool},
    {"GlobalMaxPool", op_global_pool}, {"Greater", op_binary},
    {"GreaterOrEqual", op_binary}, {"GroupNormalization", op_group_norm}, {"HardSigmoid", op_hard_sigmoid}, {"HardSwish", op_hard_swish},
    {"Identity", op_identity}, {"InstanceNormalization", op_instance_norm}, {"LayerNormalization", op_layer_norm}, {"LeakyRelu", op_leaky_relu},
    {"Less", op_binary}, {"LessOrEqual", op_binary}, {"Log", op_unary}, {"LogSoftmax", op_softmax},
    {"MatMul", op_matmul}, {"Max", op_binary}, {"MaxPool", op_pool}, {"Mean", op_binary}, {"Min", op_binary}, {"Mod", op_binary}, {"Mul", op_binary},
    {"Neg", op_unary}, {"Pad", op_pad}, {"Pow", op_binary}, {"Range", op_range}, {"Reciprocal", op_reciprocal},
    {"ReduceMax", op_reduce}, {"ReduceMean", op_reduce}, {"ReduceMin", op_reduce}, {"ReduceProd", op_reduce},
    {"ReduceSum", op_reduce}, {"Relu", op_unary}, {"Reshape", op_reshape}, {"Resize", ox_op_resize}, {"Round", op_unary}, {"Shape", op_shape},
    {"Sigmoid", op_unary}, {"Sin", op_unary}, {"Slice", op_slice}, {"Softmax", op_softmax}, {"SpaceToDepth", ox_op_depth_space}, {"Split", op_split},
    {"Sqrt", op_unary}, {"Squeeze", op_squeeze}, {"Sub", op_binary}, {"Sum", op_binary}, {"Tan", op_unary},
    {"Tanh", op_unary}, {"Transpose", op_transpose}, {"Unsqueeze", op_squeeze}, {"Where", op_where},
};

const ox_op *ox_find_op(const char *name, size_t len) {
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strlen(ops[i].name) == len && !memcmp(ops[i].name, name, len)) return &ops[i];
    return NULL;
}

int ox_op_count(void) { return (int)(sizeof ops / sizeof ops[0]); }
const char *ox_op_name(int i) { return i >= 0 && i < ox_op_count() ? ops[i].name : NULL; }
