/*
 * shape_rules.c — one shape rule per op family (named in ops.def).
 *
 * Rules run twice: when the builder appends a node (dims may be symbolic) and
 * when the graph is specialized (all dims static). A check between a symbolic
 * and a static dim that cannot be decided yet is accepted provisionally; the
 * second run decides it. Errors name the node: "matmul 'q': ...".
 */
#include "ir/shape_rules.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

/* -------------------------------------------------------------- helpers */

static const ir_node *in_node(const ir_graph *g, const ir_node *n, int i) { return &g->nodes[n->in[i]]; }

static const ir_shape *in_shape(const ir_graph *g, const ir_node *n, int i) { return &in_node(g, n, i)->shape; }

static rlx_dtype in_dtype(const ir_graph *g, const ir_node *n, int i) { return in_node(g, n, i)->dtype; }

/* Label of the node being checked; it is the last node of g during append
 * and a node in place during re-inference, so find it by address. */
static const char *label(const ir_graph *g, const ir_node *n, char *buf, size_t size) {
    return ir_node_label(g, (int32_t)(n - g->nodes), buf, size);
}

#define FAIL(status, ...) do {                                                     \
        char lbl_[160], msg_[512];                                                 \
        snprintf(msg_, sizeof msg_, __VA_ARGS__);                                  \
        return rlx_fail(status, "%s: %s", label(g, n, lbl_, sizeof lbl_), msg_);  \
    } while (0)

static const char *fmt_shape(const ir_graph *g, const ir_shape *s, char *buf, size_t size) {
    ir_shape_format(s, g, buf, size);
    return buf;
}

/* Equal, or undecidable yet (some side symbolic). */
static bool dims_compatible(ir_dim a, ir_dim b) {
    return ir_dim_eq(a, b) || !ir_dim_is_static(a) || !ir_dim_is_static(b);
}

static bool dim_is(ir_dim d, int64_t v) { return ir_dim_is_static(d) && d.k == v; }

static rlx_status require_float(const ir_graph *g, const ir_node *n, rlx_dtype dt, const char *what) {
    if (!ir_dtype_is_float(dt))
        FAIL(RLX_STATUS_SHAPE, "%s must be a float dtype, got %s", what, rlx_dtype_name(dt));
    return RLX_OK;
}

static rlx_status require_index(const ir_graph *g, const ir_node *n, rlx_dtype dt, const char *what) {
    if (dt != RLX_I32 && dt != RLX_I64)
        FAIL(RLX_STATUS_SHAPE, "%s must be i32 or i64, got %s", what, rlx_dtype_name(dt));
    return RLX_OK;
}

static rlx_status require_same_dtype(const ir_graph *g, const ir_node *n, int a, int b) {
    if (in_dtype(g, n, a) != in_dtype(g, n, b))
        FAIL(RLX_STATUS_SHAPE, "operand dtypes differ: %s and %s",
             rlx_dtype_name(in_dtype(g, n, a)), rlx_dtype_name(in_dtype(g, n, b)));
    return RLX_OK;
}

static rlx_status broadcast2(const ir_graph *g, ir_node *n, const ir_shape *a, const ir_shape *b, ir_shape *out) {
    if (ir_broadcast_shapes(a, b, out) != RLX_OK) {
        char sa[128], sb[128];
        FAIL(RLX_STATUS_SHAPE, "shapes %s and %s do not broadcast",
             fmt_shape(g, a, sa, sizeof sa), fmt_shape(g, b, sb, sizeof sb));
    }
    return RLX_OK;
}

#define TRY(x) do { rlx_status st_ = (x); if (st_ != RLX_OK) return st_; } while (0)

rlx_status ir_check_shape_size(const ir_graph *g, ir_node *n) {
    char s[192];
    if (!ir_shape_size_ok(&n->shape))
        FAIL(RLX_STATUS_SHAPE, "shape %s is too large (over 2^48 elements)", fmt_shape(g, &n->shape, s, sizeof s));
    return RLX_OK;
}

/* -------------------------------------------------------------- sources */

rlx_status shape_source(const ir_graph *g, ir_node *n) {
    if (n->shape.rank < 0 || n->shape.rank > IR_MAX_RANK)
        FAIL(RLX_STATUS_SHAPE, "rank %d is outside [0, %d]", n->shape.rank, IR_MAX_RANK);
    for (int i = 0; i < n->shape.rank; i++)
        if (ir_dim_is_static(n->shape.d[i]) && n->shape.d[i].k < 0)
            FAIL(RLX_STATUS_SHAPE, "dim %d is negative (%lld)", i, (long long)n->shape.d[i].k);
    TRY(ir_check_shape_size(g, n));   /* before anything multiplies the dims */
    if (n->op == IR_OP_PARAM && !ir_shape_is_static(&n->shape))
        FAIL(RLX_STATUS_SHAPE, "params need static dims");
    if (rlx_dtype_is_quantized(n->dtype)) {
        if (n->op == IR_OP_INPUT)
            FAIL(RLX_STATUS_SHAPE, "inputs cannot be %s; block-quantized data belongs in params", rlx_dtype_name(n->dtype));
        int64_t dims[IR_MAX_RANK];
        ir_shape_dims(&n->shape, dims);
        if (n->shape.rank < 1 || (ir_shape_numel(&n->shape) > 0 && rlx_tensor_bytes(n->dtype, n->shape.rank, dims) == 0))
            FAIL(RLX_STATUS_SHAPE, "a %s tensor needs a last dim that is a whole number of blocks", rlx_dtype_name(n->dtype));
    }
    return RLX_OK;
}

/* Block-quantized tensors only feed the ops that decode them. */
static bool takes_quantized(ir_op op) {
    return op == IR_OP_DEQUANT_MATMUL || op == IR_OP_DEQUANT_MATMUL_ADD || op == IR_OP_DEQUANT_SWIGLU ||
           op == IR_OP_RMS_DEQUANT_MATMUL || op == IR_OP_RMS_DEQUANT_SWIGLU || op == IR_OP_GATHER_ROWS ||
           op == IR_OP_DEQUANT_ROPE_KV || op == IR_OP_ATTENTION_DEQUANT;
}

rlx_status ir_check_quantized_inputs(const ir_graph *g, ir_node *n) {
    if (takes_quantized(n->op)) return RLX_OK;
    for (int i = 0; i < n->n_in; i++)
        if (rlx_dtype_is_quantized(in_dtype(g, n, i)))
            FAIL(RLX_STATUS_SHAPE, "input %d is %s; block-quantized tensors only feed dequant_matmul and gather_rows", i,
                 rlx_dtype_name(in_dtype(g, n, i)));
    return RLX_OK;
}

rlx_status shape_dequant_matmul(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0), *w = in_shape(g, n, 1);
    rlx_dtype wt = in_dtype(g, n, 1);
    char sx[128], sw[128];
    if (in_dtype(g, n, 0) != RLX_F32) FAIL(RLX_STATUS_SHAPE, "x must be f32, got %s", rlx_dtype_name(in_dtype(g, n, 0)));
    if (!(wt == RLX_F32 || wt == RLX_F16 || wt == RLX_BF16 || rlx_dtype_is_quantized(wt)))
        FAIL(RLX_STATUS_SHAPE, "w must be f32, f16, bf16 or block-quantized, got %s", rlx_dtype_name(wt));
    if (x->rank < 1 || w->rank != 2 || !dims_compatible(x->d[x->rank - 1], w->d[1]))
        FAIL(RLX_STATUS_SHAPE, "x %s and w %s do not fit: need x [..., K] and w [N, K]", fmt_shape(g, x, sx, sizeof sx),
             fmt_shape(g, w, sw, sizeof sw));
    n->shape = *x;
    n->shape.d[x->rank - 1] = w->d[0];
    n->dtype = RLX_F32;
    return RLX_OK;
}

/* The fused forms (made by passes/fuse.c): x · wᵀ as in dequant_matmul, then
 * + r (r f32 with the product's shape) or silu(x · wgᵀ) * (x · wuᵀ) (wu with
 * wg's dtype and dims, so one kernel decodes both). */
rlx_status shape_dequant_fused(const ir_graph *g, ir_node *n) {
    TRY(shape_dequant_matmul(g, n));
    const ir_shape *third = in_shape(g, n, 2);
    char s3[128], so[128];
    if (n->op == IR_OP_DEQUANT_MATMUL_ADD) {
        bool same = in_dtype(g, n, 2) == RLX_F32 && third->rank == n->shape.rank;
        for (int i = 0; same && i < third->rank; i++) same = dims_compatible(third->d[i], n->shape.d[i]);
        if (!same)
            FAIL(RLX_STATUS_SHAPE, "residual %s %s must be f32 shaped like the product %s", rlx_dtype_name(in_dtype(g, n, 2)),
                 fmt_shape(g, third, s3, sizeof s3), fmt_shape(g, &n->shape, so, sizeof so));
    } else {
        const ir_shape *wg = in_shape(g, n, 1);
        if (in_dtype(g, n, 2) != in_dtype(g, n, 1) || third->rank != 2 || !dims_compatible(third->d[0], wg->d[0]) ||
            !dims_compatible(third->d[1], wg->d[1]))
            FAIL(RLX_STATUS_SHAPE, "up weights %s %s must match gate weights %s %s", rlx_dtype_name(in_dtype(g, n, 2)),
                 fmt_shape(g, third, s3, sizeof s3), rlx_dtype_name(in_dtype(g, n, 1)), fmt_shape(g, wg, so, sizeof so));
    }
    return RLX_OK;
}

/* The rms-norm prologue forms (made by passes/fuse.c): x, w[, wu] checked as
 * the plain dequant_matmul / dequant_swiglu, then gamma (last) f32 [K] and
 * eps >= 0 as rms_norm has them. */
rlx_status shape_rms_dequant(const ir_graph *g, ir_node *n) {
    TRY(n->op == IR_OP_RMS_DEQUANT_SWIGLU ? shape_dequant_fused(g, n) : shape_dequant_matmul(g, n));
    const ir_shape *x = in_shape(g, n, 0), *gamma = in_shape(g, n, n->n_in - 1);
    char s[128];
    if (in_dtype(g, n, n->n_in - 1) != RLX_F32 || gamma->rank != 1 || !dims_compatible(gamma->d[0], x->d[x->rank - 1]))
        FAIL(RLX_STATUS_SHAPE, "gamma %s %s must be f32 [K] matching x's last dim", rlx_dtype_name(in_dtype(g, n, n->n_in - 1)),
             fmt_shape(g, gamma, s, sizeof s));
    if (!(ir_attr_rms_dequant_eps(n) >= 0)) FAIL(RLX_STATUS_INVALID_ARGUMENT, "eps must be >= 0, got %g", ir_attr_rms_dequant_eps(n));
    return RLX_OK;
}

/* ------------------------------------------------------------ elementwise */

rlx_status shape_unary(const ir_graph *g, ir_node *n) {
    rlx_dtype dt = in_dtype(g, n, 0);
    bool int_ok = n->op == IR_OP_NEG || n->op == IR_OP_ABS || n->op == IR_OP_RELU || n->op == IR_OP_CLAMP;
    if (!ir_dtype_is_float(dt) && !(int_ok && ir_dtype_is_int(dt)))
        FAIL(RLX_STATUS_SHAPE, "dtype %s is not supported (%s)", rlx_dtype_name(dt),
             int_ok ? "numeric dtypes only" : "float dtypes only");
    if (n->op == IR_OP_CLAMP && !(ir_attr_clamp_lo(n) <= ir_attr_clamp_hi(n)))
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "lo %g must be <= hi %g", ir_attr_clamp_lo(n), ir_attr_clamp_hi(n));
    n->shape = *in_shape(g, n, 0);
    n->dtype = dt;
    return RLX_OK;
}

rlx_status shape_binary(const ir_graph *g, ir_node *n) {
    TRY(require_same_dtype(g, n, 0, 1));
    rlx_dtype dt = in_dtype(g, n, 0);
    if (dt == RLX_BOOL) FAIL(RLX_STATUS_SHAPE, "arithmetic on bool is not supported; cast first");
    if (n->op == IR_OP_POW) TRY(require_float(g, n, dt, "pow operand"));
    if (n->op == IR_OP_GELU_GRAD || n->op == IR_OP_GELU_TANH_GRAD) TRY(require_float(g, n, dt, "gelu_grad operand"));
    TRY(broadcast2(g, n, in_shape(g, n, 0), in_shape(g, n, 1), &n->shape));
    n->dtype = dt;
    return RLX_OK;
}

rlx_status shape_compare(const ir_graph *g, ir_node *n) {
    TRY(require_same_dtype(g, n, 0, 1));
    TRY(broadcast2(g, n, in_shape(g, n, 0), in_shape(g, n, 1), &n->shape));
    n->dtype = RLX_BOOL;
    return RLX_OK;
}

rlx_status shape_where(const ir_graph *g, ir_node *n) {
    rlx_dtype c = in_dtype(g, n, 0);
    if (c != RLX_BOOL && c != RLX_U8) FAIL(RLX_STATUS_SHAPE, "condition must be bool or u8, got %s", rlx_dtype_name(c));
    TRY(require_same_dtype(g, n, 1, 2));
    ir_shape t;
    TRY(broadcast2(g, n, in_shape(g, n, 1), in_shape(g, n, 2), &t));
    TRY(broadcast2(g, n, in_shape(g, n, 0), &t, &n->shape));
    n->dtype = in_dtype(g, n, 1);
    return RLX_OK;
}

rlx_status shape_ternary(const ir_graph *g, ir_node *n) {
    TRY(require_same_dtype(g, n, 0, 1));
    TRY(require_same_dtype(g, n, 0, 2));
    TRY(require_float(g, n, in_dtype(g, n, 0), "fma operand"));
    ir_shape t;
    TRY(broadcast2(g, n, in_shape(g, n, 0), in_shape(g, n, 1), &t));
    TRY(broadcast2(g, n, &t, in_shape(g, n, 2), &n->shape));
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_cast(const ir_graph *g, ir_node *n) {
    if ((unsigned)n->dtype >= RLX_DTYPE_COUNT) FAIL(RLX_STATUS_INVALID_ARGUMENT, "unknown target dtype %d", (int)n->dtype);
    if (rlx_dtype_is_quantized(n->dtype))   /* storage for params and constants only */
        FAIL(RLX_STATUS_SHAPE, "cannot cast to %s: block-quantized dtypes are only params and constants",
             rlx_dtype_name(n->dtype));
    n->shape = *in_shape(g, n, 0);
    return RLX_OK;
}

/* ---------------------------------------------------------------- matmul */

rlx_status shape_matmul(const ir_graph *g, ir_node *n) {
    bool fused = n->op == IR_OP_MATMUL_BIAS_ACT;
    int want_in = 2 + (fused && ir_attr_matmul_has_bias(n) ? 1 : 0);
    if (n->n_in != want_in) FAIL(RLX_STATUS_INTERNAL, "has %d inputs, expected %d", n->n_in, want_in);
    const ir_shape *a = in_shape(g, n, 0), *b = in_shape(g, n, 1);
    char sa[128], sb[128];
    if (a->rank < 2 || b->rank < 2)
        FAIL(RLX_STATUS_SHAPE, "operands need rank >= 2, got %s x %s",
             fmt_shape(g, a, sa, sizeof sa), fmt_shape(g, b, sb, sizeof sb));
    TRY(require_same_dtype(g, n, 0, 1));
    TRY(require_float(g, n, in_dtype(g, n, 0), "matmul operand"));
    bool tb = ir_attr_matmul_transpose_b(n) != 0, ta = ir_attr_matmul_transpose_a(n) != 0;
    ir_dim m = ta ? a->d[a->rank - 1] : a->d[a->rank - 2], ka = ta ? a->d[a->rank - 2] : a->d[a->rank - 1];
    ir_dim kb = tb ? b->d[b->rank - 1] : b->d[b->rank - 2];
    ir_dim nn = tb ? b->d[b->rank - 2] : b->d[b->rank - 1];
    if (!dims_compatible(ka, kb))
        FAIL(RLX_STATUS_SHAPE, "inner dims differ: %s x %s%s", fmt_shape(g, a, sa, sizeof sa),
             fmt_shape(g, b, sb, sizeof sb), ta && tb ? " (a and b transposed)" : ta ? " (a transposed)" : tb ? " (b transposed)" : "");
    ir_shape ba = *a, bb = *b, batch;
    ba.rank -= 2;
    bb.rank -= 2;
    if (ir_broadcast_shapes(&ba, &bb, &batch) != RLX_OK)
        FAIL(RLX_STATUS_SHAPE, "batch dims of %s and %s do not broadcast",
             fmt_shape(g, a, sa, sizeof sa), fmt_shape(g, b, sb, sizeof sb));
    if (fused) {
        if (ir_attr_matmul_act(n) < RLX_ACT_NONE || ir_attr_matmul_act(n) > RLX_ACT_TANH)
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "unknown activation %lld", (long long)ir_attr_matmul_act(n));
        if (ir_attr_matmul_has_bias(n)) {
            const ir_shape *bias = in_shape(g, n, 2);
            TRY(require_same_dtype(g, n, 0, 2));
            if (bias->rank != 1 || !dims_compatible(bias->d[0], nn))
                FAIL(RLX_STATUS_SHAPE, "bias must be [N] with N matching the output, got %s",
                     fmt_shape(g, bias, sa, sizeof sa));
        }
    }
    if (batch.rank + 2 > IR_MAX_RANK) FAIL(RLX_STATUS_SHAPE, "result rank exceeds %d", IR_MAX_RANK);
    n->shape = batch;
    n->shape.d[n->shape.rank++] = m;
    n->shape.d[n->shape.rank++] = nn;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* ------------------------------------------------------------ reductions */

rlx_status shape_reduce(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    rlx_dtype dt = in_dtype(g, n, 0);
    if (dt == RLX_BOOL) FAIL(RLX_STATUS_SHAPE, "reductions over bool are not supported; cast first");
    if (n->op == IR_OP_REDUCE_MEAN) TRY(require_float(g, n, dt, "mean input"));
    uint64_t mask = (uint64_t)ir_attr_reduce_axes(n);
    if (x->rank < 64 && (mask >> x->rank) != 0)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "axes mask 0x%llx names axes beyond rank %d", (unsigned long long)mask, x->rank);
    ir_shape out = {0};
    for (int i = 0; i < x->rank; i++) {
        if (mask & (1ull << i)) {
            if (ir_attr_reduce_keepdim(n)) out.d[out.rank++] = ir_dim_const(1);
        } else {
            out.d[out.rank++] = x->d[i];
        }
    }
    n->shape = out;
    n->dtype = dt;
    return RLX_OK;
}

static rlx_status check_axis(const ir_graph *g, ir_node *n, int64_t axis, int rank) {
    if (axis < 0 || axis >= rank)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "axis %lld is outside rank %d", (long long)axis, rank);
    return RLX_OK;
}

rlx_status shape_argreduce(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    TRY(check_axis(g, n, ir_attr_argreduce_axis(n), x->rank));
    if (in_dtype(g, n, 0) == RLX_BOOL) FAIL(RLX_STATUS_SHAPE, "argmax/argmin over bool is not supported");
    if (dim_is(x->d[ir_attr_argreduce_axis(n)], 0)) FAIL(RLX_STATUS_SHAPE, "reduced axis is empty");
    ir_shape out = {0};
    for (int i = 0; i < x->rank; i++) {
        if (i == ir_attr_argreduce_axis(n)) { if (ir_attr_argreduce_keepdim(n)) out.d[out.rank++] = ir_dim_const(1); }
        else out.d[out.rank++] = x->d[i];
    }
    n->shape = out;
    n->dtype = RLX_I32;
    return RLX_OK;
}

rlx_status shape_axis_op(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    rlx_dtype dt = in_dtype(g, n, 0);
    TRY(check_axis(g, n, ir_attr_axis_op_axis(n), x->rank));
    if (n->op == IR_OP_CUMSUM) {
        if (dt == RLX_BOOL) FAIL(RLX_STATUS_SHAPE, "cumsum over bool is not supported; cast first");
    } else {
        TRY(require_float(g, n, dt, "input"));
    }
    n->shape = *x;
    n->dtype = dt;
    return RLX_OK;
}

/* ----------------------------------------------------------------- norms */

static rlx_status check_norm_params(const ir_graph *g, ir_node *n, int first_param, ir_dim d) {
    char s[128];
    int count = 1 + (ir_attr_norm_has_beta(n) ? 1 : 0);
    if (n->n_in != first_param + count)
        FAIL(RLX_STATUS_INTERNAL, "has %d inputs, expected %d", n->n_in, first_param + count);
    for (int i = first_param; i < first_param + count; i++) {
        const ir_shape *p = in_shape(g, n, i);
        TRY(require_same_dtype(g, n, 0, i));
        if (p->rank != 1 || !dims_compatible(p->d[0], d))
            FAIL(RLX_STATUS_SHAPE, "%s must be [D] matching the last dim, got %s",
                 i == first_param ? "gamma" : "beta", fmt_shape(g, p, s, sizeof s));
    }
    if (!(ir_attr_norm_eps(n) >= 0)) FAIL(RLX_STATUS_INVALID_ARGUMENT, "eps must be >= 0, got %g", ir_attr_norm_eps(n));
    return RLX_OK;
}

rlx_status shape_norm(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    TRY(require_float(g, n, in_dtype(g, n, 0), "input"));
    if (x->rank < 1) FAIL(RLX_STATUS_SHAPE, "input needs rank >= 1");
    TRY(check_norm_params(g, n, 1, x->d[x->rank - 1]));
    n->shape = *x;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_add_norm(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0), *r = in_shape(g, n, 1);
    TRY(require_float(g, n, in_dtype(g, n, 0), "input"));
    TRY(require_same_dtype(g, n, 0, 1));
    if (x->rank < 1 || x->rank != r->rank) FAIL(RLX_STATUS_SHAPE, "residual must have the input's shape");
    for (int i = 0; i < x->rank; i++)
        if (!dims_compatible(x->d[i], r->d[i])) FAIL(RLX_STATUS_SHAPE, "residual must have the input's shape");
    TRY(check_norm_params(g, n, 2, x->d[x->rank - 1]));
    n->shape = *x;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* ---------------------------------------------------------- data movement */

/* Product of the static dims, and the symbolic dims left over. */
typedef struct dim_product {
    int64_t static_part;
    int     n_sym;
    ir_dim  sym[IR_MAX_RANK];
} dim_product;

static void product_of(const ir_shape *s, dim_product *p) {
    p->static_part = 1;
    p->n_sym = 0;
    for (int i = 0; i < s->rank; i++) {
        if (ir_dim_is_static(s->d[i])) p->static_part *= s->d[i].k;
        else p->sym[p->n_sym++] = s->d[i];
    }
}

/* Removes symbolic dims that appear on both sides. */
static void cancel_common(dim_product *a, dim_product *b) {
    for (int i = 0; i < a->n_sym; i++) {
        for (int j = 0; j < b->n_sym; j++) {
            if (!ir_dim_eq(a->sym[i], b->sym[j])) continue;
            a->sym[i--] = a->sym[--a->n_sym];
            b->sym[j] = b->sym[--b->n_sym];
            break;
        }
    }
}

rlx_status shape_reshape(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    TRY(ir_check_shape_size(g, n));   /* the target, before product_of multiplies it */
    dim_product px, po;
    product_of(x, &px);
    product_of(&n->shape, &po);
    cancel_common(&px, &po);
    char sx[128], so[128];
    if (px.n_sym == 0 && po.n_sym == 0 && px.static_part != po.static_part)
        FAIL(RLX_STATUS_SHAPE, "cannot reshape %s (%lld elements) to %s (%lld elements)",
             fmt_shape(g, x, sx, sizeof sx), (long long)px.static_part,
             fmt_shape(g, &n->shape, so, sizeof so), (long long)po.static_part);
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_transpose(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    bool seen[IR_MAX_RANK] = {0};
    ir_shape out = {.rank = x->rank};
    for (int i = 0; i < x->rank; i++) {
        int64_t p = ir_attr_transpose_perm(n, i);
        if (p < 0 || p >= x->rank || seen[p])
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "perm is not a permutation of 0..%d (entry %d is %lld)",
                 x->rank - 1, i, (long long)p);
        seen[p] = true;
        out.d[i] = x->d[p];
    }
    n->shape = out;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_slice(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    TRY(check_axis(g, n, ir_attr_slice_axis(n), x->rank));
    int axis = (int)ir_attr_slice_axis(n);
    ir_dim dim = x->d[axis];
    if (ir_attr_slice_last(n) > 0) {   /* the last `last` entries: the start follows the dim */
        int64_t last = ir_attr_slice_last(n);
        if (ir_dim_is_static(dim)) {
            if (last > dim.k)
                FAIL(RLX_STATUS_SHAPE, "the last %lld entries of axis %d, whose size is %lld", (long long)last, axis,
                     (long long)dim.k);
            ir_attr_set_slice_start(n, dim.k - last);   /* step 1 and the length: the builder's */
        }
    }
    int64_t start = ir_attr_slice_start(n), step = ir_attr_slice_step(n);
    ir_dim len = n->shape.d[axis];   /* the builder stored the length */
    if (step < 1) FAIL(RLX_STATUS_INVALID_ARGUMENT, "step must be >= 1, got %lld", (long long)step);
    if (start < 0) FAIL(RLX_STATUS_INVALID_ARGUMENT, "start must be >= 0, got %lld", (long long)start);
    if (ir_dim_is_static(dim) && ir_dim_is_static(len)) {
        /* last index start + (len-1)*step < dim, written so nothing overflows */
        if (len.k < 0 || (len.k > 0 && (start >= dim.k || len.k - 1 > (dim.k - 1 - start) / step)))
            FAIL(RLX_STATUS_SHAPE, "range start %lld, length %lld, step %lld exceeds axis %d of size %lld",
                 (long long)start, (long long)len.k, (long long)step, axis, (long long)dim.k);
    }
    ir_shape out = *x;
    out.d[axis] = len;
    n->shape = out;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_concat(const ir_graph *g, ir_node *n) {
    if (n->n_in < 1 || n->n_in > IR_MAX_INPUTS) FAIL(RLX_STATUS_INVALID_ARGUMENT, "needs 1 to %d inputs", IR_MAX_INPUTS);
    const ir_shape *x0 = in_shape(g, n, 0);
    TRY(check_axis(g, n, ir_attr_axis_op_axis(n), x0->rank));
    int axis = (int)ir_attr_axis_op_axis(n);
    ir_shape out = *x0;
    char s0[128], si[128];
    for (int i = 1; i < n->n_in; i++) {
        const ir_shape *xi = in_shape(g, n, i);
        TRY(require_same_dtype(g, n, 0, i));
        if (xi->rank != x0->rank)
            FAIL(RLX_STATUS_SHAPE, "input %d has rank %d, input 0 rank %d", i, xi->rank, x0->rank);
        for (int d = 0; d < x0->rank; d++)
            if (d != axis && !dims_compatible(xi->d[d], x0->d[d]))
                FAIL(RLX_STATUS_SHAPE, "input %d %s does not match input 0 %s outside axis %d", i,
                     fmt_shape(g, xi, si, sizeof si), fmt_shape(g, x0, s0, sizeof s0), axis);
        out.d[axis] = ir_dim_add(out.d[axis], xi->d[axis]);
    }
    n->shape = out;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_expand(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    ir_shape out;
    char sx[128], so[128];
    if (x->rank > n->shape.rank || ir_broadcast_shapes(x, &n->shape, &out) != RLX_OK)
        FAIL(RLX_STATUS_SHAPE, "cannot expand %s to %s", fmt_shape(g, x, sx, sizeof sx),
             fmt_shape(g, &n->shape, so, sizeof so));
    for (int i = 0; i < out.rank; i++)
        if (!dims_compatible(out.d[i], n->shape.d[i]))
            FAIL(RLX_STATUS_SHAPE, "cannot expand %s to %s", fmt_shape(g, x, sx, sizeof sx),
                 fmt_shape(g, &n->shape, so, sizeof so));
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* --------------------------------------------------------------- indexing */

rlx_status shape_gather_rows(const ir_graph *g, ir_node *n) {
    const ir_shape *t = in_shape(g, n, 0), *ids = in_shape(g, n, 1);
    TRY(require_index(g, n, in_dtype(g, n, 1), "ids"));
    if (t->rank < 1) FAIL(RLX_STATUS_SHAPE, "table needs rank >= 1");
    if (ids->rank + t->rank - 1 > IR_MAX_RANK) FAIL(RLX_STATUS_SHAPE, "result rank exceeds %d", IR_MAX_RANK);
    bool quantized = rlx_dtype_is_quantized(in_dtype(g, n, 0));
    if (quantized && t->rank != 2) FAIL(RLX_STATUS_SHAPE, "a quantized table must be [V, D]");
    ir_shape out = *ids;
    for (int i = 1; i < t->rank; i++) out.d[out.rank++] = t->d[i];
    n->shape = out;
    n->dtype = quantized ? RLX_F32 : in_dtype(g, n, 0);   /* quantized rows are decoded to f32 */
    return RLX_OK;
}

rlx_status shape_gather(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0), *idx = in_shape(g, n, 1);
    TRY(require_index(g, n, in_dtype(g, n, 1), "index"));
    TRY(check_axis(g, n, ir_attr_axis_op_axis(n), x->rank));
    if (idx->rank != x->rank) FAIL(RLX_STATUS_SHAPE, "index rank %d differs from input rank %d", idx->rank, x->rank);
    for (int d = 0; d < x->rank; d++) {
        if (d == ir_attr_axis_op_axis(n) || !ir_dim_is_static(idx->d[d]) || !ir_dim_is_static(x->d[d])) continue;
        if (idx->d[d].k > x->d[d].k)   /* as in torch.gather: other axes index x directly */
            FAIL(RLX_STATUS_SHAPE, "index dim %d is %lld, larger than the input's %lld", d, (long long)idx->d[d].k,
                 (long long)x->d[d].k);
    }
    n->shape = *idx;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* scatter_add_rows(base [V, rest..], ids [..], rows [ids.., rest..]) -> base's shape. */
rlx_status shape_scatter_add_rows(const ir_graph *g, ir_node *n) {
    const ir_shape *b = in_shape(g, n, 0), *ids = in_shape(g, n, 1), *r = in_shape(g, n, 2);
    char sb[128], sr[128];
    TRY(require_float(g, n, in_dtype(g, n, 0), "base"));
    TRY(require_index(g, n, in_dtype(g, n, 1), "ids"));
    TRY(require_same_dtype(g, n, 0, 2));
    if (b->rank < 1) FAIL(RLX_STATUS_SHAPE, "base needs rank >= 1");
    bool ok = r->rank == ids->rank + b->rank - 1;
    for (int i = 0; ok && i < ids->rank; i++) ok = dims_compatible(r->d[i], ids->d[i]);
    for (int i = 1; ok && i < b->rank; i++) ok = dims_compatible(r->d[ids->rank + i - 1], b->d[i]);
    if (!ok)
        FAIL(RLX_STATUS_SHAPE, "rows %s must be [ids.., base[1:]..] for base %s", fmt_shape(g, r, sr, sizeof sr),
             fmt_shape(g, b, sb, sizeof sb));
    n->shape = *b;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* scatter_add(base, index, src) along axis: index and src alike, index's
 * other dims within base's (as gather's). */
rlx_status shape_scatter_add(const ir_graph *g, ir_node *n) {
    const ir_shape *b = in_shape(g, n, 0), *idx = in_shape(g, n, 1), *src = in_shape(g, n, 2);
    char si[128], ss[128];
    TRY(require_float(g, n, in_dtype(g, n, 0), "base"));
    TRY(require_index(g, n, in_dtype(g, n, 1), "index"));
    TRY(require_same_dtype(g, n, 0, 2));
    TRY(check_axis(g, n, ir_attr_axis_op_axis(n), b->rank));
    if (idx->rank != b->rank) FAIL(RLX_STATUS_SHAPE, "index rank %d differs from base rank %d", idx->rank, b->rank);
    bool same = src->rank == idx->rank;
    for (int d = 0; same && d < idx->rank; d++) same = dims_compatible(src->d[d], idx->d[d]);
    if (!same) FAIL(RLX_STATUS_SHAPE, "src %s must have index's shape %s", fmt_shape(g, src, ss, sizeof ss), fmt_shape(g, idx, si, sizeof si));
    for (int d = 0; d < b->rank; d++) {
        if (d == ir_attr_axis_op_axis(n) || !ir_dim_is_static(idx->d[d]) || !ir_dim_is_static(b->d[d])) continue;
        if (idx->d[d].k > b->d[d].k)
            FAIL(RLX_STATUS_SHAPE, "index dim %d is %lld, larger than base's %lld", d, (long long)idx->d[d].k, (long long)b->d[d].k);
    }
    n->shape = *b;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_topk(const ir_graph *g, ir_node *n) {
    const ir_shape *x = in_shape(g, n, 0);
    if (x->rank < 1) FAIL(RLX_STATUS_SHAPE, "input needs rank >= 1");
    if (in_dtype(g, n, 0) == RLX_BOOL) FAIL(RLX_STATUS_SHAPE, "topk over bool is not supported");
    ir_dim last = x->d[x->rank - 1];
    if (ir_attr_topk_k(n) < 1 || (ir_dim_is_static(last) && ir_attr_topk_k(n) > last.k))
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "k = %lld must be in [1, %lld]", (long long)ir_attr_topk_k(n), (long long)last.k);
    n->shape = *x;
    n->shape.d[x->rank - 1] = ir_dim_const(ir_attr_topk_k(n));
    n->dtype = n->op == IR_OP_TOPK_INDICES ? RLX_I32 : in_dtype(g, n, 0);
    return RLX_OK;
}

/* ------------------------------------------------------------ nn blocks */

rlx_status shape_attention(const ir_graph *g, ir_node *n) {
    const ir_shape *q = in_shape(g, n, 0), *k = in_shape(g, n, 1), *v = in_shape(g, n, 2);
    char sq[128], sk[128], sv[128];
    bool additive = ir_attr_attention_mask(n) == RLX_MASK_ADDITIVE;
    if (ir_attr_attention_mask(n) < RLX_MASK_NONE || ir_attr_attention_mask(n) > RLX_MASK_ADDITIVE)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "unknown mask kind %lld", (long long)ir_attr_attention_mask(n));
    int want_in = (additive ? 4 : 3) + (ir_attr_attention_has_kv_len(n) ? 1 : 0);
    if (n->n_in != want_in)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "%s", additive ? "additive mask needs a mask tensor" : "mask tensor given without RLX_MASK_ADDITIVE");
    if (ir_attr_attention_has_kv_len(n)) {
        const ir_shape *L = in_shape(g, n, want_in - 1);
        if (in_dtype(g, n, want_in - 1) != RLX_I32 || (ir_shape_is_static(L) && ir_shape_numel(L) != 1))
            FAIL(RLX_STATUS_SHAPE, "kv_len must be an i32 tensor of one element");
    }
    TRY(require_float(g, n, in_dtype(g, n, 0), "q"));
    TRY(require_same_dtype(g, n, 0, 1));
    TRY(require_same_dtype(g, n, 0, 2));
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        FAIL(RLX_STATUS_SHAPE, "q, k, v must be [B,H,S,D], got %s %s %s", fmt_shape(g, q, sq, sizeof sq),
             fmt_shape(g, k, sk, sizeof sk), fmt_shape(g, v, sv, sizeof sv));
    bool ok = dims_compatible(q->d[0], k->d[0]) && dims_compatible(k->d[0], v->d[0]) &&
              dims_compatible(k->d[1], v->d[1]) && dims_compatible(k->d[2], v->d[2]) &&
              dims_compatible(q->d[3], k->d[3]) && dims_compatible(k->d[3], v->d[3]);
    if (ok && ir_dim_is_static(q->d[1]) && ir_dim_is_static(k->d[1]))
        ok = k->d[1].k > 0 && q->d[1].k % k->d[1].k == 0;
    if (!ok)
        FAIL(RLX_STATUS_SHAPE, "q %s, k %s, v %s do not fit (B and D equal, H %% Hkv == 0, k and v alike)",
             fmt_shape(g, q, sq, sizeof sq), fmt_shape(g, k, sk, sizeof sk), fmt_shape(g, v, sv, sizeof sv));
    /* Queries sit at the end of the keys, so under a causal mask Sq > Skv
     * would give the first queries no key at all: a caller's mistake. */
    if (ir_attr_attention_mask(n) == RLX_MASK_CAUSAL && !ir_attr_attention_has_kv_len(n) && ir_dim_is_static(q->d[2]) && ir_dim_is_static(k->d[2]) &&
        q->d[2].k > k->d[2].k)
        FAIL(RLX_STATUS_SHAPE, "causal attention needs Sq <= Skv (queries sit at the end of the keys), got Sq %lld > Skv %lld",
             (long long)q->d[2].k, (long long)k->d[2].k);
    if (additive) {
        const ir_shape *m = in_shape(g, n, 3);
        ir_shape scores = {.rank = 4, .d = {q->d[0], q->d[1], q->d[2], k->d[2]}}, out;
        TRY(require_same_dtype(g, n, 0, 3));
        if (m->rank > 4 || ir_broadcast_shapes(m, &scores, &out) != RLX_OK)
            FAIL(RLX_STATUS_SHAPE, "mask %s does not broadcast to the scores [B,H,Sq,Skv]", fmt_shape(g, m, sk, sizeof sk));
    }
    if (!(ir_attr_attention_scale(n) > 0)) FAIL(RLX_STATUS_INVALID_ARGUMENT, "scale must be > 0");
    n->shape = *q;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* ROPE's checks with x at input xi and the optional offset at offi (the
 * factors, if any, are last): ROPE_KV_WRITE puts cache, rows, pos first. */
static rlx_status check_rope(const ir_graph *g, ir_node *n, int xi, int offi) {
    if (n->n_in != offi + (ir_attr_rope_has_offset(n) ? 1 : 0) + (ir_attr_rope_has_freq_factors(n) ? 1 : 0)) FAIL(RLX_STATUS_INTERNAL, "rope input count mismatch");
    const ir_shape *x = in_shape(g, n, xi);
    char s[128];
    TRY(require_float(g, n, in_dtype(g, n, xi), "input"));
    if (x->rank != 4) FAIL(RLX_STATUS_SHAPE, "input must be [B,H,S,D], got %s", fmt_shape(g, x, s, sizeof s));
    if (ir_attr_rope_has_freq_factors(n)) {
        const ir_shape *ff = in_shape(g, n, n->n_in - 1);
        if (in_dtype(g, n, n->n_in - 1) != RLX_F32 || ff->rank != 1 ||
            (ir_dim_is_static(ff->d[0]) && ff->d[0].k != ir_attr_rope_rotary_dims(n) / 2))
            FAIL(RLX_STATUS_SHAPE, "frequency factors must be f32 [rotary_dims / 2] = [%lld]", (long long)(ir_attr_rope_rotary_dims(n) / 2));
    }
    if (ir_attr_rope_has_offset(n)) {
        const ir_shape *o = in_shape(g, n, offi);
        if (in_dtype(g, n, offi) != RLX_I32) FAIL(RLX_STATUS_SHAPE, "offset must be i32, got %s", rlx_dtype_name(in_dtype(g, n, offi)));
        if (ir_shape_is_static(o) && ir_shape_numel(o) != 1) FAIL(RLX_STATUS_SHAPE, "offset must have one element");
    }
    if (ir_attr_rope_style(n) != RLX_ROPE_NEOX && ir_attr_rope_style(n) != RLX_ROPE_GPTJ)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "unknown rope style %lld", (long long)ir_attr_rope_style(n));
    ir_dim d = x->d[3];
    int64_t r = ir_attr_rope_rotary_dims(n);
    if (r <= 0 || r % 2 || (ir_dim_is_static(d) && r > d.k))
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "rotary dims %lld must be even, > 0 and <= D", (long long)r);
    if (!(ir_attr_rope_theta(n) > 0)) FAIL(RLX_STATUS_INVALID_ARGUMENT, "theta must be > 0, got %g", ir_attr_rope_theta(n));
    return RLX_OK;
}

rlx_status shape_rope(const ir_graph *g, ir_node *n) {
    TRY(check_rope(g, n, 0, 1));
    n->shape = *in_shape(g, n, 0);
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

static rlx_status check_ce(const ir_graph *g, ir_node *n) {
    const ir_shape *l = in_shape(g, n, 0), *y = in_shape(g, n, 1);
    char sl[128], sy[128];
    TRY(require_float(g, n, in_dtype(g, n, 0), "logits"));
    if (in_dtype(g, n, 1) != RLX_I32) FAIL(RLX_STATUS_SHAPE, "labels must be i32, got %s", rlx_dtype_name(in_dtype(g, n, 1)));
    if (l->rank != 2 || y->rank != 1 || !dims_compatible(l->d[0], y->d[0]))
        FAIL(RLX_STATUS_SHAPE, "logits must be [N,C] and labels [N], got %s and %s",
             fmt_shape(g, l, sl, sizeof sl), fmt_shape(g, y, sy, sizeof sy));
    return RLX_OK;
}

rlx_status shape_ce_loss(const ir_graph *g, ir_node *n) {
    TRY(check_ce(g, n));
    n->shape.rank = 0;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_ce_grad(const ir_graph *g, ir_node *n) {
    TRY(check_ce(g, n));
    n->shape = *in_shape(g, n, 0);
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* assign(param, value): value broadcasts to the param's shape, same dtype. */
rlx_status shape_assign(const ir_graph *g, ir_node *n) {
    const ir_shape *p = in_shape(g, n, 0), *v = in_shape(g, n, 1);
    char sp[128], sv[128];
    if (in_node(g, n, 0)->op != IR_OP_PARAM)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "the target must be a param (persistent state), not a computed tensor");
    TRY(require_same_dtype(g, n, 0, 1));
    ir_shape out;
    bool ok = v->rank <= p->rank && ir_broadcast_shapes(v, p, &out) == RLX_OK;
    for (int i = 0; ok && i < p->rank; i++) ok = dims_compatible(out.d[i], p->d[i]);
    if (!ok) FAIL(RLX_STATUS_SHAPE, "value %s does not broadcast to the param's %s", fmt_shape(g, v, sv, sizeof sv), fmt_shape(g, p, sp, sizeof sp));
    n->shape = *p;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

rlx_status shape_kv_write(const ir_graph *g, ir_node *n) {
    const ir_shape *c = in_shape(g, n, 0), *r = in_shape(g, n, 1), *pos = in_shape(g, n, 2);
    char sc[128], sr[128];
    if (in_node(g, n, 0)->op != IR_OP_PARAM)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "the cache must be a param (persistent state), not a computed tensor");
    TRY(require_same_dtype(g, n, 0, 1));
    if (c->rank != 4 || r->rank != 4 || !dims_compatible(c->d[0], r->d[0]) || !dims_compatible(c->d[1], r->d[1]) ||
        !dims_compatible(c->d[3], r->d[3]))
        FAIL(RLX_STATUS_SHAPE, "cache %s and rows %s must be [B,H,capacity,D] and [B,H,S,D]",
             fmt_shape(g, c, sc, sizeof sc), fmt_shape(g, r, sr, sizeof sr));
    if (in_dtype(g, n, 2) != RLX_I32 || (ir_shape_is_static(pos) && ir_shape_numel(pos) != 1))
        FAIL(RLX_STATUS_SHAPE, "pos must be an i32 tensor of one element");
    n->shape = *c;
    n->dtype = in_dtype(g, n, 0);
    return RLX_OK;
}

/* ATTENTION_DEQUANT (passes/fold_decode.c; attributes in ir/op_attrs.def):
 * attention's checks on its inputs, then the product of its result viewed as
 * x [M, K] (M = rows, K = w's dim 1: the same element count) with w [N, K], plus r
 * f32 [M, N] in the _add form. The output is the product [M, N]. */
rlx_status shape_attention_dequant(const ir_graph *g, ir_node *n) {
    const ir_op prod = (ir_op)ir_attr_attention_dequant_product_op(n);
    if (prod != IR_OP_DEQUANT_MATMUL && prod != IR_OP_DEQUANT_MATMUL_ADD)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "unknown product op %lld", (long long)ir_attr_attention_dequant_product_op(n));
    const int wi = ir_attention_dequant_w(n), add = prod == IR_OP_DEQUANT_MATMUL_ADD;
    if (wi < 3 || n->n_in != wi + 1 + add) FAIL(RLX_STATUS_INTERNAL, "attention_dequant_matmul input count mismatch");
    ir_node a;
    ir_attention_dequant_attention(n, &a);
    TRY(shape_attention(g, &a));
    const ir_shape *w = in_shape(g, n, wi);
    rlx_dtype wt = in_dtype(g, n, wi);
    char sw[128];
    if (!(wt == RLX_F32 || wt == RLX_F16 || wt == RLX_BF16 || rlx_dtype_is_quantized(wt)) || w->rank != 2)
        FAIL(RLX_STATUS_SHAPE, "w must be [N, K] of f32, f16, bf16 or a block-quantized type, got %s %s", rlx_dtype_name(wt),
             fmt_shape(g, w, sw, sizeof sw));
    const int64_t M = ir_attr_attention_dequant_rows(n);
    if (M < 0) FAIL(RLX_STATUS_INVALID_ARGUMENT, "M is %lld", (long long)M);
    if (ir_shape_is_static(&a.shape) && ir_dim_is_static(w->d[1]) && ir_shape_numel(&a.shape) != M * w->d[1].k)
        FAIL(RLX_STATUS_SHAPE, "attention's %lld elements are not x [%lld, K = %lld]", (long long)ir_shape_numel(&a.shape),
             (long long)M, (long long)w->d[1].k);
    n->shape.rank = 2;
    n->shape.d[0] = ir_dim_const(M);
    n->shape.d[1] = w->d[0];
    n->dtype = RLX_F32;
    if (add) {
        const ir_shape *r = in_shape(g, n, wi + 1);
        if (in_dtype(g, n, wi + 1) != RLX_F32 || r->rank != 2 || !dims_compatible(r->d[0], n->shape.d[0]) ||
            !dims_compatible(r->d[1], n->shape.d[1]))
            FAIL(RLX_STATUS_SHAPE, "residual must be f32 [M, N]");
    }
    return RLX_OK;
}

/* DEQUANT_ROPE_KV (passes/fold_decode.c; attributes in ir/op_attrs.def): the
 * product x · wᵀ (x f32 [.., K], w [N, K], gamma f32 [K] when folded), its
 * result viewed as view_b..view_d = [B,H,S,D] (the same element count), and the
 * consumer's checks on that view: rope's attributes, offset and factors;
 * kv_write's cache param [B,H,C,D] and pos. The output is rope's (the view's
 * shape) or the cache. */
rlx_status shape_dequant_rope_kv(const ir_graph *g, ir_node *n) {
    const ir_op cons = (ir_op)ir_attr_dequant_rope_kv_consumer_op(n);
    if (cons != IR_OP_ROPE && cons != IR_OP_ROPE_KV_WRITE && cons != IR_OP_KV_WRITE)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "unknown consumer op %lld", (long long)ir_attr_dequant_rope_kv_consumer_op(n));
    const bool rope = cons != IR_OP_KV_WRITE, kv = cons != IR_OP_ROPE;
    const int xi = ir_dequant_rope_kv_x(n), wi = ir_dequant_rope_kv_w(n);
    const bool has_off = ir_attr_dequant_rope_kv_has_offset(n) != 0, has_ff = ir_attr_dequant_rope_kv_has_freq_factors(n) != 0;
    const int want = (kv ? 3 : 1) + (rope ? (has_off ? 1 : 0) + (has_ff ? 1 : 0) : 0);
    if (wi != want) FAIL(RLX_STATUS_INTERNAL, "dequant_rope_kv input count mismatch");
    const ir_shape *x = in_shape(g, n, xi), *w = in_shape(g, n, wi);
    rlx_dtype wt = in_dtype(g, n, wi);
    char sx[128], sw[128];
    if (in_dtype(g, n, xi) != RLX_F32 || !(wt == RLX_F32 || wt == RLX_F16 || wt == RLX_BF16 || rlx_dtype_is_quantized(wt)))
        FAIL(RLX_STATUS_SHAPE, "x must be f32 and w f32, f16, bf16 or block-quantized, got %s and %s",
             rlx_dtype_name(in_dtype(g, n, xi)), rlx_dtype_name(wt));
    if (x->rank < 1 || w->rank != 2 || !dims_compatible(x->d[x->rank - 1], w->d[1]))
        FAIL(RLX_STATUS_SHAPE, "x %s and w %s do not fit: need x [..., K] and w [N, K]", fmt_shape(g, x, sx, sizeof sx),
             fmt_shape(g, w, sw, sizeof sw));
    if (ir_attr_dequant_rope_kv_has_gamma(n)) {
        const ir_shape *gm = in_shape(g, n, wi + 1);
        if (in_dtype(g, n, wi + 1) != RLX_F32 || gm->rank != 1 || !dims_compatible(gm->d[0], x->d[x->rank - 1]))
            FAIL(RLX_STATUS_SHAPE, "gamma must be f32 [K] matching x's last dim");
        if (!(ir_attr_dequant_rope_kv_eps(n) >= 0))
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "eps must be >= 0, got %g", ir_attr_dequant_rope_kv_eps(n));
    }
    const int64_t vd[4] = {ir_attr_dequant_rope_kv_view_b(n), ir_attr_dequant_rope_kv_view_h(n),
                           ir_attr_dequant_rope_kv_view_s(n), ir_attr_dequant_rope_kv_view_d(n)};
    ir_shape view = {.rank = 4};
    int64_t view_numel = 1;
    for (int d = 0; d < 4; d++) {
        if (vd[d] < 0) FAIL(RLX_STATUS_INVALID_ARGUMENT, "view dim %d is %lld", d, (long long)vd[d]);
        view.d[d] = ir_dim_const(vd[d]);
        view_numel *= vd[d];
    }
    if (ir_shape_is_static(x) && ir_dim_is_static(w->d[0]) && x->d[x->rank - 1].k > 0 &&
        ir_shape_numel(x) / x->d[x->rank - 1].k * w->d[0].k != view_numel)
        FAIL(RLX_STATUS_SHAPE, "the product of x %s and w %s does not have the view's %lld elements",
             fmt_shape(g, x, sx, sizeof sx), fmt_shape(g, w, sw, sizeof sw), (long long)view_numel);
    if (rope) {
        const int64_t style = ir_attr_dequant_rope_kv_style(n), r = ir_attr_dequant_rope_kv_rotary_dims(n);
        if (style != RLX_ROPE_NEOX && style != RLX_ROPE_GPTJ)
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "unknown rope style %lld", (long long)style);
        if (r <= 0 || r % 2 || r > vd[3])
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "rotary dims %lld must be even, > 0 and <= D", (long long)r);
        if (!(ir_attr_dequant_rope_kv_theta(n) > 0))
            FAIL(RLX_STATUS_INVALID_ARGUMENT, "theta must be > 0, got %g", ir_attr_dequant_rope_kv_theta(n));
        int offi = kv ? 3 : 1;
        if (has_off && (in_dtype(g, n, offi) != RLX_I32 ||
                         (ir_shape_is_static(in_shape(g, n, offi)) && ir_shape_numel(in_shape(g, n, offi)) != 1)))
            FAIL(RLX_STATUS_SHAPE, "offset must be one i32 element");
        if (has_ff) {
            const ir_shape *ff = in_shape(g, n, wi - 1);
            if (in_dtype(g, n, wi - 1) != RLX_F32 || ff->rank != 1 || (ir_dim_is_static(ff->d[0]) && ff->d[0].k != r / 2))
                FAIL(RLX_STATUS_SHAPE, "frequency factors must be f32 [rotary_dims / 2]");
        }
    }
    if (!kv) {
        n->shape = view;
        n->dtype = RLX_F32;
        return RLX_OK;
    }
    const ir_shape *c = in_shape(g, n, 0), *pos = in_shape(g, n, 2);
    char sc[128];
    if (in_node(g, n, 0)->op != IR_OP_PARAM || in_dtype(g, n, 0) != RLX_F32)
        FAIL(RLX_STATUS_INVALID_ARGUMENT, "the cache must be an f32 param");
    if (c->rank != 4 || !dims_compatible(c->d[0], view.d[0]) || !dims_compatible(c->d[1], view.d[1]) ||
        !dims_compatible(c->d[3], view.d[3]))
        FAIL(RLX_STATUS_SHAPE, "cache %s must be [B,H,capacity,D] for rows [%lld,%lld,%lld,%lld]", fmt_shape(g, c, sc, sizeof sc),
             (long long)vd[0], (long long)vd[1], (long long)vd[2], (long long)vd[3]);
    if (in_dtype(g, n, 2) != RLX_I32 || (ir_shape_is_static(pos) && ir_shape_numel(pos) != 1))
        FAIL(RLX_STATUS_SHAPE, "pos must be an i32 tensor of one element");
    n->shape = *c;
    n->dtype = RLX_F32;
    return RLX_OK;
}

/* kv_write(cache, rope(x, offset[, ff]), pos), made by passes/fuse.c: inputs
 * cache, x, pos, then rope's offset and factors; rope's attributes. */
rlx_status shape_rope_kv_write(const ir_graph *g, ir_node *n) {
    TRY(check_rope(g, n, 1, 3));
    return shape_kv_write(g, n);
}
