/*
 * vjp_movement.c — vector-Jacobian rules of the ops that move data: reshape,
 * transpose, expand, slice, concat, gather_rows, gather and cumsum.
 *
 * A slice's gradient is the incoming gradient placed back among zeros along
 * the sliced axis (a concat; a stepped slice first interleaves zeros between
 * the rows). gather_rows and gather scatter-add the gradient into zeros
 * (scatter_add_rows, scatter_add), deterministic because each output element
 * sums its contributions in index order. cumsum's gradient is the reverse
 * inclusive sum, total - cumsum(g) + g.
 */
#include "ir/autodiff.h"
#include <string.h>

#define G (c->g)

static const ir_shape *shape_(ad_ctx *c, rlx_node x) { return &ad_node(c, x)->shape; }

static rlx_status vjp_reshape(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) {
        ir_shape s = *shape_(c, n->in[0]);
        gin[0] = ad_reshape_to(c, gy, &s);
    }
    return RLX_OK;
}

static rlx_status vjp_transpose(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    int rank = shape_(c, n->in[0])->rank, inv[IR_MAX_RANK];
    for (int i = 0; i < rank; i++) inv[ir_attr_transpose_perm(n, i)] = i;
    gin[0] = rlx_transpose(G, gy, inv);
    return RLX_OK;
}

/* expand's gradient is gy itself: the driver sums it to x's shape. */
static rlx_status vjp_pass(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    (void)c, (void)n;
    if (need[0]) gin[0] = gy;
    return RLX_OK;
}

/* Zeros shaped like `like` but with `len` along axis. */
static rlx_node zeros_along(ad_ctx *c, rlx_node like, int axis, ir_dim len) {
    ir_shape s = *shape_(c, like);
    s.d[axis] = len;
    return ad_expand_to(c, ad_scalar(c, ad_node(c, like)->dtype, 0.0), &s);
}

static bool dim_is_zero(ir_dim d) { return ir_dim_is_static(d) && d.k == 0; }

/* x[start : start + len] along axis (len the node's shape there). */
static rlx_node slice_of(ad_ctx *c, rlx_node x, int axis, int64_t start, ir_dim len) {
    ir_node p;
    memset(&p, 0, sizeof p);
    p.op = IR_OP_SLICE;
    p.shape = *shape_(c, x);
    p.shape.d[axis] = len;
    ir_attr_set_slice_axis(&p, axis);
    ir_attr_set_slice_start(&p, start);
    ir_attr_set_slice_step(&p, 1);
    return ir_build(G, "rlx_gradients", IR_OP_SLICE, &x, 1, &p);
}

static rlx_status vjp_slice(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    int axis = (int)ir_attr_slice_axis(n);
    ir_dim dim = shape_(c, n->in[0])->d[axis], len = n->shape.d[axis];
    int64_t step = ir_attr_slice_step(n), last = ir_attr_slice_last(n);
    ir_dim before = ir_dim_const(ir_attr_slice_start(n));
    if (last > 0) before = ir_dim_add(dim, ir_dim_const(-last));   /* follows a symbolic dim */
    rlx_node placed = gy;
    ir_dim span = len;   /* the rows gy covers once interleaved: (len - 1) * step + 1 */
    if (step > 1) {
        if (!ir_dim_is_static(len)) return rlx_fail(RLX_STATUS_UNSUPPORTED, "a stepped slice of a symbolic length has no gradient");
        /* [.., len, ..] -> [.., len, 1, ..] ++ zeros [.., len, step - 1, ..] -> [.., len * step, ..] */
        ir_shape s = n->shape, s1 = {.rank = s.rank + 1};
        for (int i = 0, j = 0; i < s.rank; i++) {
            s1.d[j++] = s.d[i];
            if (i == axis) s1.d[j++] = ir_dim_const(1);
        }
        rlx_node g1 = ad_reshape_to(c, gy, &s1);
        rlx_node parts[2] = {g1, zeros_along(c, g1, axis + 1, ir_dim_const(step - 1))};
        rlx_node wide = rlx_concat(G, parts, 2, axis + 1);
        ir_shape sw = s;
        sw.d[axis] = ir_dim_const(len.k * step);
        placed = ad_reshape_to(c, wide, &sw);
        span = ir_dim_const(len.k == 0 ? 0 : (len.k - 1) * step + 1);
        if (len.k > 0) placed = slice_of(c, placed, axis, 0, span);
    }
    ir_dim after = dim;   /* dim - before - span */
    after = ir_dim_add(after, ir_dim_const(-before.k));
    for (int i = 0; i < IR_MAX_SYMS; i++) after.coef[i] -= before.coef[i] + span.coef[i];
    after.k -= span.k;
    rlx_node parts[3];
    int count = 0;
    if (!dim_is_zero(before)) parts[count++] = zeros_along(c, placed, axis, before);
    parts[count++] = placed;
    if (!dim_is_zero(after)) parts[count++] = zeros_along(c, placed, axis, after);
    gin[0] = count == 1 ? placed : rlx_concat(G, parts, count, axis);
    return RLX_OK;
}

static rlx_status vjp_concat(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    int axis = (int)ir_attr_axis_op_axis(n);
    int64_t start = 0;
    for (int i = 0; i < n->n_in; i++) {
        ir_dim len = shape_(c, n->in[i])->d[axis];
        if (need[i]) gin[i] = slice_of(c, gy, axis, start, len);
        if (!ir_dim_is_static(len) && i + 1 < n->n_in) {
            for (int j = i + 1; j < n->n_in; j++)
                if (need[j])
                    return rlx_fail(RLX_STATUS_UNSUPPORTED, "concat's gradient after an input of symbolic length along the axis");
            break;
        }
        start += len.k;
    }
    return RLX_OK;
}

static rlx_status vjp_gather_rows(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = rlx_scatter_add_rows(G, ad_zeros_like(c, n->in[0]), n->in[1], gy);
    return RLX_OK;
}

static rlx_status vjp_gather(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (need[0]) gin[0] = rlx_scatter_add(G, ad_zeros_like(c, n->in[0]), n->in[1], gy, (int)ir_attr_axis_op_axis(n));
    return RLX_OK;
}

static rlx_status vjp_cumsum(ad_ctx *c, const ir_node *n, rlx_node gy, const bool *need, rlx_node *gin) {
    if (!need[0]) return RLX_OK;
    int axis = (int)ir_attr_axis_op_axis(n);
    gin[0] = rlx_add(G, rlx_sub(G, ad_sum_keep(c, gy, 1u << axis), rlx_cumsum(G, gy, axis)), gy);
    return RLX_OK;
}

void ir_vjp_register_movement(ir_vjp_rule *t) {
    t[IR_OP_RESHAPE] = vjp_reshape;
    t[IR_OP_TRANSPOSE] = vjp_transpose;
    t[IR_OP_EXPAND] = vjp_pass;
    t[IR_OP_SLICE] = vjp_slice;
    t[IR_OP_CONCAT] = vjp_concat;
    t[IR_OP_GATHER_ROWS] = vjp_gather_rows;
    t[IR_OP_GATHER] = vjp_gather;
    t[IR_OP_CUMSUM] = vjp_cumsum;
}
