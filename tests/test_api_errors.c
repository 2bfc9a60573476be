/*
 * test_api_errors.c — the error paths of every public function: NULL
 * handles/names/pointers, unknown names, wrong sizes/dtypes/shapes at
 * set_param and run, duplicate names, bad axes and permutations, shape
 * mismatches naming the node, the sticky first builder error, symbol limits,
 * out-of-range gather ids at run time. Each call must fail with the right
 * rlx_status and a non-empty message, and never crash; the exec stays usable.
 */
#include "ops_common.h"
#include "ir/ir.h"
#include <stdlib.h>
#include <string.h>


/* A builder call on graph g that must return RLX_NO_NODE and leave g's first error = want. */
#define CHECK_BUILD_FAIL(g, expr, want)                                                             \
    do { rlx_node n_ = (expr);                                                                     \
         CHECK_MSG(n_ == RLX_NO_NODE, "%s returned node %d, want RLX_NO_NODE", #expr, (int)n_);    \
         CHECK_MSG(rlx_last_error()[0] != 0, "%s: empty error message", #expr);                    \
         CHECK_MSG(rlx_graph_status(g) == (want), "%s: graph status %s, want %s (msg '%s')", #expr, \
                   rlx_status_name(rlx_graph_status(g)), rlx_status_name(want), rlx_last_error()); \
    } while (0)


static const int64_t d234[3] = {2, 3, 4};

/* A fresh graph with input "x" f32 [2,3,4]. */
static rlx_graph *graph_x(rlx_node *x) {
    rlx_graph *g = ops_graph();
    *x = rlx_input(g, "x", RLX_F32, 3, d234);
    return g;
}

TEST(api_basics) {
    CHECK(strcmp(rlx_version(), "0.1.0") == 0);
    CHECK(strcmp(rlx_status_name(RLX_STATUS_SHAPE), "RLX_STATUS_SHAPE") == 0);
    CHECK(strcmp(rlx_status_name(RLX_OK), "RLX_OK") == 0);
    CHECK(rlx_status_name((rlx_status)1234) != NULL);
    CHECK(rlx_last_error() != NULL);
    CHECK(strcmp(rlx_dtype_name(RLX_F32), "f32") == 0 && strcmp(rlx_dtype_name(RLX_BOOL), "bool") == 0);
    CHECK(strcmp(rlx_dtype_name((rlx_dtype)99), "?") == 0);
    CHECK(rlx_dtype_size((rlx_dtype)99) == 0 && rlx_dtype_size((rlx_dtype)-1) == 0);
    CHECK(rlx_dtype_size(RLX_F32) == 4 && rlx_dtype_size(RLX_BF16) == 2 && rlx_dtype_size(RLX_BOOL) == 1 &&
          rlx_dtype_size(RLX_I64) == 8 && rlx_dtype_size(RLX_F64) == 8 && rlx_dtype_size(RLX_I8) == 1);
    CHECK(rlx_op_count() > 50);
    for (int i = 0; i < rlx_op_count(); i++) {
        CHECK(rlx_op_name(i) && rlx_op_name(i)[0]);
        CHECK(rlx_op_doc(i) != NULL);
        CHECK(rlx_op_arity(i) >= RLX_OP_ARITY_VARIADIC && rlx_op_arity(i) <= 8);
    }
    /* out of range: the documented failure values, distinct from "variadic" */
    CHECK(rlx_op_name(-1) == NULL && strstr(rlx_last_error(), "op -1"));
    CHECK(rlx_op_name(rlx_op_count()) == NULL);
    CHECK(rlx_op_doc(100000) == NULL && strstr(rlx_last_error(), "rlx_op_doc"));
    CHECK(rlx_op_arity(-5) == RLX_OP_ARITY_INVALID && strstr(rlx_last_error(), "rlx_op_arity: op -5"));
    CHECK(RLX_OP_ARITY_INVALID != RLX_OP_ARITY_VARIADIC);
}

TEST(api_null_graph) {
    int64_t d[1] = {3};
    CHECK(rlx_input(NULL, "x", RLX_F32, 1, d) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_param(NULL, "w", RLX_F32, 1, d) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_constant(NULL, RLX_F32, 1, d, d) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_scalar(NULL, RLX_F32, 1.0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_add(NULL, 0, 0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_exp(NULL, 0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_matmul(NULL, 0, 1, 0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_reduce_sum(NULL, 0, 0, 0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_concat(NULL, NULL, 0, 0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_attention(NULL, 0, 1, 2, RLX_MASK_NONE, RLX_NO_NODE, 0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_rope(NULL, 0, RLX_NO_NODE, RLX_ROPE_NEOX, 1e4f, 0) == RLX_NO_NODE && rlx_last_error()[0]);
    CHECK(rlx_symbol(NULL, "seq") == RLX_DIM_INFER && rlx_last_error()[0]);
    rlx_node v = 0, i = 0;
    CHECK_STATUS(rlx_topk(NULL, 0, 1, &v, &i), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_graph_status(NULL), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_output(NULL, "y", 0), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_set_name(NULL, 0, "n"), RLX_STATUS_INVALID_ARGUMENT);
    rlx_dtype dt;
    int rank;
    int64_t dims[RLX_MAX_RANK];
    CHECK_STATUS(rlx_node_shape(NULL, 0, &dt, &rank, dims), RLX_STATUS_INVALID_ARGUMENT);
    rlx_exec *e = (rlx_exec *)&v;   /* must be left alone or set to NULL */
    CHECK_STATUS(rlx_compile(NULL, NULL, &e), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(e == NULL || e == (rlx_exec *)&v);
    CHECK(rlx_graph_dump(NULL) == NULL && strstr(rlx_last_error(), "rlx_graph_dump: graph is NULL"));
    CHECK(rlx_graph_node_count(NULL) == -1 && strstr(rlx_last_error(), "rlx_graph_node_count: graph is NULL"));
    rlx_graph_free(NULL);
    rlx_exec_free(NULL);
}

TEST(api_source_errors) {
    rlx_graph *g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_input(g, NULL, RLX_F32, 3, d234), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, 2, NULL), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_input(g, "x", (rlx_dtype)42, 3, d234), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph();
    int64_t big[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, 9, big), RLX_STATUS_SHAPE);
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, -1, d234), RLX_STATUS_SHAPE);
    g = ops_graph();
    int64_t neg[2] = {3, -7};   /* not a symbol of this graph */
    CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, 2, neg), RLX_STATUS_SHAPE);
    g = ops_graph();
    int64_t inf[2] = {3, RLX_DIM_INFER};   /* -1 only in reshape */
    CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, 2, inf), RLX_STATUS_SHAPE);
    g = ops_graph();
    int64_t sd[1];
    sd[0] = rlx_symbol(g, "seq");
    CHECK(sd[0] <= -2);
    CHECK_BUILD_FAIL(g, rlx_param(g, "w", RLX_F32, 1, sd), RLX_STATUS_SHAPE);   /* params are static */
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_param(g, NULL, RLX_F32, 3, d234), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_constant(g, RLX_F32, 3, d234, NULL), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_scalar(g, (rlx_dtype)77, 1.0), RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

TEST(api_duplicate_names) {
    rlx_node x;
    rlx_graph *g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, 3, d234), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_param(g, "x", RLX_F32, 3, d234), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_STATUS(rlx_output(g, "x", rlx_exp(g, x)), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_OK(rlx_output(g, "y", rlx_exp(g, x)));
    CHECK_STATUS(rlx_output(g, "y", rlx_exp(g, x)), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_BUILD_FAIL(g, rlx_input(g, "y", RLX_F32, 3, d234), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_STATUS(rlx_output(g, NULL, x), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_STATUS(rlx_output(g, "y", 9999), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_STATUS(rlx_set_name(g, 9999, "n"), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_set_name(g, rlx_exp(g, x), NULL), RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

TEST(api_bad_axes_and_perms) {
    rlx_node x;
    rlx_graph *g;
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_reduce_sum(g, x, 1u << 3, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_reduce_max(g, x, 0x80000000u, 1), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_argmax(g, x, 3, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_argmin(g, x, -4, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_softmax(g, x, 3), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_log_softmax(g, x, -4), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_cumsum(g, x, 7), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_slice(g, x, 3, 0, 1, 1), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_narrow(g, x, -9, 0, 1), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_concat(g, &x, 1, 3), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_gather(g, x, x, 5), RLX_STATUS_INVALID_ARGUMENT);
    int dup[3] = {0, 0, 1}, oor[3] = {0, 1, 3}, negp[3] = {-1, 0, 1};
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_transpose(g, x, dup), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_transpose(g, x, oor), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_transpose(g, x, negp), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_transpose(g, x, NULL), RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

TEST(api_shape_errors) {
    rlx_node x, y;
    rlx_graph *g;
    int64_t d34[2] = {3, 4}, d5[1] = {5}, d4[1] = {4}, d3[1] = {3};
    g = graph_x(&x); y = rlx_input(g, "y", RLX_F32, 1, d3);       /* [2,3,4] + [3] */
    CHECK_BUILD_FAIL(g, rlx_add(g, x, y), RLX_STATUS_SHAPE);
    g = graph_x(&x); y = rlx_input(g, "y", RLX_I32, 3, d234);      /* dtypes differ */
    CHECK_BUILD_FAIL(g, rlx_mul(g, x, y), RLX_STATUS_SHAPE);
    g = graph_x(&x); y = rlx_input(g, "y", RLX_I32, 3, d234);
    CHECK_BUILD_FAIL(g, rlx_lt(g, x, y), RLX_STATUS_SHAPE);
    g = graph_x(&x); y = rlx_input(g, "y", RLX_I32, 3, d234);
    CHECK_BUILD_FAIL(g, rlx_exp(g, y), RLX_STATUS_SHAPE);          /* exp needs a float dtype */
    g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_where(g, x, x, x), RLX_STATUS_SHAPE);   /* cond must be bool */
    g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_clamp(g, x, 1.0, -1.0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_cast(g, x, (rlx_dtype)50), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_reshape(g, x, 2, d34), RLX_STATUS_SHAPE);
    int64_t two_infer[2] = {RLX_DIM_INFER, RLX_DIM_INFER}, d5i[2] = {5, RLX_DIM_INFER};
    g = graph_x(&x); rlx_node r = rlx_reshape(g, x, 2, two_infer);
    CHECK_MSG(r == RLX_NO_NODE && rlx_graph_status(g) != RLX_OK, "reshape with two inferred dims accepted");
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_reshape(g, x, 2, d5i), RLX_STATUS_SHAPE);   /* 24 % 5 != 0 */
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_expand(g, x, 1, d4), RLX_STATUS_SHAPE);     /* rank shrinks */
    int64_t e5[3] = {2, 5, 4};
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_expand(g, x, 3, e5), RLX_STATUS_SHAPE);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_slice(g, x, 1, 0, 4, 1), RLX_STATUS_SHAPE);   /* end > 3 */
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_slice(g, x, 1, 0, 2, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_narrow(g, x, 2, 3, 2), RLX_STATUS_SHAPE);
    g = graph_x(&x); y = rlx_input(g, "y", RLX_F32, 3, (int64_t[]){2, 4, 4});
    rlx_node xs[2] = {x, y};
    CHECK_BUILD_FAIL(g, rlx_concat(g, xs, 2, 2), RLX_STATUS_SHAPE);   /* differ outside the axis */
    rlx_node nine[9] = {x, x, x, x, x, x, x, x, x};
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_concat(g, nine, 9, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_concat(g, nine, 0, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_concat(g, NULL, 2, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x); y = rlx_input(g, "g", RLX_F32, 1, d5);
    CHECK_BUILD_FAIL(g, rlx_layer_norm(g, x, y, RLX_NO_NODE, 1e-5f), RLX_STATUS_SHAPE);   /* gamma [5] vs D 4 */
    g = graph_x(&x); y = rlx_input(g, "g", RLX_F32, 1, d4);
    CHECK_BUILD_FAIL(g, rlx_rms_norm(g, x, y, y, -1.0f), RLX_STATUS_INVALID_ARGUMENT);    /* eps < 0 */
    g = graph_x(&x); y = rlx_input(g, "ids", RLX_F32, 1, d4);
    CHECK_BUILD_FAIL(g, rlx_gather_rows(g, x, y), RLX_STATUS_SHAPE);   /* ids must be integer */
    g = graph_x(&x); y = rlx_input(g, "i", RLX_I32, 2, d34);
    CHECK_BUILD_FAIL(g, rlx_gather(g, x, y, 0), RLX_STATUS_SHAPE);     /* index rank differs */
    ops_free_all();
}

TEST(api_matmul_mismatch_names_node) {
    rlx_graph *g = ops_graph();
    int64_t da[2] = {4, 64}, db[2] = {32, 64};
    rlx_node a = rlx_input(g, "a", RLX_F32, 2, da), b = rlx_input(g, "b", RLX_F32, 2, db);
    CHECK_BUILD_FAIL(g, rlx_matmul(g, a, b, 0), RLX_STATUS_SHAPE);   /* [4,64] x [32,64] */
    CHECK_MSG(strstr(rlx_last_error(), "matmul") != NULL, "message does not say matmul: '%s'", rlx_last_error());
    CHECK_MSG(strstr(rlx_last_error(), "64") && strstr(rlx_last_error(), "32"), "message lacks the shapes: '%s'",
              rlx_last_error());
    /* with transpose_b the same operands fit */
    g = ops_graph();
    a = rlx_input(g, "a", RLX_F32, 2, da);
    b = rlx_input(g, "b", RLX_F32, 2, db);
    CHECK(rlx_matmul(g, a, b, 1) != RLX_NO_NODE);
    CHECK_OK(rlx_graph_status(g));
    /* batch dims that do not broadcast, and rank < 2 */
    g = ops_graph();
    int64_t ba[3] = {2, 4, 8}, bb[3] = {3, 8, 5}, v8[1] = {8};
    a = rlx_input(g, "a", RLX_F32, 3, ba);
    b = rlx_input(g, "b", RLX_F32, 3, bb);
    CHECK_BUILD_FAIL(g, rlx_matmul(g, a, b, 0), RLX_STATUS_SHAPE);
    g = ops_graph();
    a = rlx_input(g, "a", RLX_F32, 3, ba);
    b = rlx_input(g, "b", RLX_F32, 1, v8);
    CHECK_BUILD_FAIL(g, rlx_matmul(g, a, b, 0), RLX_STATUS_SHAPE);
    /* bias of the wrong size */
    g = ops_graph();
    int64_t w[2] = {8, 5}, bias7[1] = {7};
    a = rlx_input(g, "a", RLX_F32, 3, ba);
    b = rlx_input(g, "w", RLX_F32, 2, w);
    CHECK_BUILD_FAIL(g, rlx_matmul_bias_act(g, a, b, 0, rlx_input(g, "bias", RLX_F32, 1, bias7), RLX_ACT_RELU),
                     RLX_STATUS_SHAPE);
    g = ops_graph();
    a = rlx_input(g, "a", RLX_F32, 3, ba);
    b = rlx_input(g, "w", RLX_F32, 2, w);
    CHECK_BUILD_FAIL(g, rlx_matmul_bias_act(g, a, b, 0, RLX_NO_NODE, (rlx_activation)99), RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

/* A mismatch only visible once symbols are bound is reported at run time and
 * names the node given by rlx_set_name. */
TEST(api_deferred_mismatch_names_node) {
    rlx_graph *g = ops_graph();
    int64_t k = rlx_symbol(g, "k");
    int64_t da[2] = {4, k}, db[2] = {16, 8};
    rlx_node mm = rlx_matmul(g, rlx_input(g, "a", RLX_F32, 2, da), rlx_input(g, "b", RLX_F32, 2, db), 0);
    CHECK(mm != RLX_NO_NODE);
    CHECK_OK(rlx_set_name(g, mm, "attn.q"));
    CHECK_OK(rlx_output(g, "y", mm));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    float a[4 * 16] = {0}, b[16 * 8] = {0}, y[4 * 8];
    rlx_tensor in[2];
    int64_t ka = 12;   /* k = 12 but b has 16 rows */
    int64_t sa[2] = {4, ka};
    in[0] = ops_tensor("a", RLX_F32, ref_shape_make(2, sa), a);
    in[1] = ops_tensor("b", RLX_F32, ref_shape_make(2, db), b);
    rlx_status st = rlx_exec_run(e, in, 2);
    int named = strstr(rlx_last_error(), "attn.q") != NULL;
    char msg[512];
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    /* the right k still works afterwards */
    sa[1] = 16;
    in[0] = ops_tensor("a", RLX_F32, ref_shape_make(2, sa), a);
    rlx_status st2 = rlx_exec_run(e, in, 2);
    rlx_status st3 = st2 == RLX_OK ? rlx_exec_read_output(e, "y", y, sizeof y) : st2;
    rlx_exec_free(e);
    CHECK_MSG(st == RLX_STATUS_SHAPE, "run with k=12: %s (want RLX_STATUS_SHAPE): %s", rlx_status_name(st), msg);
    CHECK_MSG(named, "message does not name 'attn.q': '%s'", msg);
    CHECK_OK(st3);
    ops_free_all();
}

TEST(api_sticky_first_error) {
    rlx_node x;
    rlx_graph *g = graph_x(&x);
    rlx_node bad = rlx_reduce_sum(g, x, 1u << 6, 0);        /* first error: INVALID_ARGUMENT */
    CHECK(bad == RLX_NO_NODE);
    CHECK(rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT);
    rlx_node y = rlx_exp(g, bad);                            /* propagates quietly */
    CHECK(y == RLX_NO_NODE);
    rlx_node z = rlx_add(g, x, rlx_input(g, "w", RLX_F32, 1, (int64_t[]){5}));   /* a later SHAPE error */
    CHECK(z == RLX_NO_NODE);
    CHECK_MSG(rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT, "first error not kept: %s",
              rlx_status_name(rlx_graph_status(g)));
    CHECK(rlx_output(g, "y", y) != RLX_OK);
    CHECK(rlx_output(g, "x2", rlx_exp(g, x)) == RLX_OK || rlx_graph_status(g) != RLX_OK);
    rlx_exec *e = NULL;
    CHECK_STATUS(rlx_compile(g, NULL, &e), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(e == NULL);
    /* RLX_NO_NODE passed by the caller into a clean graph is an error too */
    g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_exp(g, RLX_NO_NODE), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_add(g, x, 12345), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_BUILD_FAIL(g, rlx_layer_norm(g, x, RLX_NO_NODE, RLX_NO_NODE, 1e-5f), RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

TEST(api_symbols) {
    rlx_graph *g = ops_graph();
    int64_t s[4];
    const char *names[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        s[i] = rlx_symbol(g, names[i]);
        CHECK(s[i] <= -2);
        for (int j = 0; j < i; j++) CHECK(s[i] != s[j]);
    }
    CHECK(rlx_symbol(g, "b") == s[1]);   /* same name, same symbol */
    int64_t fifth = rlx_symbol(g, "e");
    CHECK_MSG(fifth == RLX_DIM_INFER && rlx_last_error()[0], "fifth symbol: %lld", (long long)fifth);
    CHECK(rlx_symbol(g, NULL) == RLX_DIM_INFER && rlx_last_error()[0]);
    CHECK(rlx_symbol(g, "") == RLX_DIM_INFER);
    /* a symbol of another graph is not a symbol of this one */
    rlx_graph *g2 = ops_graph();
    int64_t other[1] = {-5};
    (void)rlx_symbol(g2, "z");
    CHECK_BUILD_FAIL(g2, rlx_input(g2, "x", RLX_F32, 1, other), RLX_STATUS_SHAPE);
    ops_free_all();
}

TEST(api_topk_errors) {
    rlx_node x, v = 0, i = 0;
    rlx_graph *g = graph_x(&x);
    CHECK_STATUS(rlx_topk(g, x, 5, &v, &i), RLX_STATUS_INVALID_ARGUMENT);   /* k > 4 */
    CHECK(rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_STATUS(rlx_topk(g, x, 0, &v, &i), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);
    CHECK_STATUS(rlx_topk(g, RLX_NO_NODE, 1, &v, &i), RLX_STATUS_INVALID_ARGUMENT);
    g = graph_x(&x);   /* both NULL asks for nothing: rejected (docs/ops.md) */
    CHECK_STATUS(rlx_topk(g, x, 4, NULL, NULL), RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

TEST(api_nn_build_errors) {
    rlx_graph *g;
    int64_t q[4] = {1, 3, 4, 8}, k2[4] = {1, 2, 4, 8}, kD[4] = {1, 3, 4, 6}, m[2] = {4, 5}, x3[3] = {1, 4, 8};
    rlx_node qn, kn;
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q); kn = rlx_input(g, "k", RLX_F32, 4, k2);
    CHECK_BUILD_FAIL(g, rlx_attention(g, qn, kn, kn, RLX_MASK_NONE, RLX_NO_NODE, 0), RLX_STATUS_SHAPE);  /* 3 % 2 */
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q); kn = rlx_input(g, "k", RLX_F32, 4, kD);
    CHECK_BUILD_FAIL(g, rlx_attention(g, qn, kn, kn, RLX_MASK_CAUSAL, RLX_NO_NODE, 0), RLX_STATUS_SHAPE); /* D */
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_attention(g, qn, qn, qn, RLX_MASK_ADDITIVE, RLX_NO_NODE, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_attention(g, qn, qn, qn, RLX_MASK_ADDITIVE, rlx_input(g, "m", RLX_F32, 2, m), 0),
                     RLX_STATUS_SHAPE);   /* [4,5] vs scores [1,3,4,4] */
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_attention(g, qn, qn, qn, (rlx_mask)9, RLX_NO_NODE, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 3, x3);
    CHECK_BUILD_FAIL(g, rlx_attention(g, qn, qn, qn, RLX_MASK_NONE, RLX_NO_NODE, 0), RLX_STATUS_SHAPE);
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_rope(g, qn, RLX_NO_NODE, RLX_ROPE_NEOX, 1e4f, 3), RLX_STATUS_INVALID_ARGUMENT); /* odd */
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_rope(g, qn, RLX_NO_NODE, RLX_ROPE_NEOX, 1e4f, 10), RLX_STATUS_INVALID_ARGUMENT); /* > D */
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_rope(g, qn, RLX_NO_NODE, (rlx_rope_style)5, 1e4f, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_rope(g, qn, RLX_NO_NODE, RLX_ROPE_GPTJ, -1.0f, 0), RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 3, x3);
    CHECK_BUILD_FAIL(g, rlx_rope(g, qn, RLX_NO_NODE, RLX_ROPE_NEOX, 1e4f, 0), RLX_STATUS_SHAPE);
    g = ops_graph(); qn = rlx_input(g, "q", RLX_F32, 4, q);
    CHECK_BUILD_FAIL(g, rlx_rope(g, qn, rlx_input(g, "off", RLX_F32, 1, (int64_t[]){1}), RLX_ROPE_NEOX, 1e4f, 0),
                     RLX_STATUS_SHAPE);   /* offset must be i32 */
    int64_t nc[2] = {4, 5}, n4[1] = {4}, n3[1] = {3};
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_softmax_cross_entropy(g, rlx_input(g, "l", RLX_F32, 2, nc), rlx_input(g, "y", RLX_F32, 1, n4)),
                     RLX_STATUS_SHAPE);   /* labels must be i32 */
    g = ops_graph();
    CHECK_BUILD_FAIL(g, rlx_softmax_cross_entropy_grad(g, rlx_input(g, "l", RLX_F32, 2, nc),
                                                       rlx_input(g, "y", RLX_I32, 1, n3)), RLX_STATUS_SHAPE);  /* N */
    ops_free_all();
}

TEST(api_compile_errors) {
    rlx_node x;
    rlx_graph *g = graph_x(&x);
    rlx_exec *e = NULL;
    CHECK_STATUS(rlx_compile(g, NULL, NULL), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_compile(g, NULL, &e), RLX_STATUS_INVALID_ARGUMENT);   /* no outputs */
    CHECK(e == NULL);
    CHECK_OK(rlx_output(g, "y", rlx_exp(g, x)));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    CHECK(o.backend == RLX_BACKEND_AUTO && o.threads == 0 && o.fuse == 1 && o.optimize == 1);
    o.backend = (rlx_backend)17;
    CHECK_STATUS(rlx_compile(g, &o, &e), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(e == NULL);
    rlx_compile_options_init(&o);
    rlx_compile_options_init(NULL);   /* must not crash */
    o.threads = -3;                   /* out of range: 0 means "all cores" */
    rlx_status st = rlx_compile(g, &o, &e);
    rlx_exec_free(e);
    CHECK_MSG(st == RLX_STATUS_INVALID_ARGUMENT, "threads = -3: %s", rlx_status_name(st));
    ops_free_all();
}

/* An exec with input x f32 [2,3,4], param w f32 [4], output y = x * w. */
static rlx_exec *make_exec(void) {
    rlx_node x;
    rlx_graph *g = graph_x(&x);
    int64_t d4[1] = {4};
    rlx_output(g, "y", rlx_mul(g, x, rlx_param(g, "w", RLX_F32, 1, d4)));
    rlx_exec *e = NULL;
    if (rlx_compile(g, NULL, &e) != RLX_OK) return NULL;
    return e;
}

TEST(api_set_param_errors) {
    rlx_exec *e = make_exec();
    CHECK_MSG(e != NULL, "compile: %s", rlx_last_error());
    float w[5] = {1, 2, 3, 4, 5};
    int32_t wi[4] = {1, 2, 3, 4};
    rlx_status s[12];
    char msgs[12][256];
    int k = 0;
#define TRY(expr) do { s[k] = (expr); snprintf(msgs[k], sizeof msgs[k], "%s", rlx_last_error()); k++; } while (0)
    TRY(rlx_exec_set_param_f32(NULL, "w", w, 4));
    TRY(rlx_exec_set_param_f32(e, NULL, w, 4));
    TRY(rlx_exec_set_param_f32(e, "w", NULL, 4));
    TRY(rlx_exec_set_param_f32(e, "nope", w, 4));
    TRY(rlx_exec_set_param_f32(e, "x", w, 4));          /* an input, not a param */
    TRY(rlx_exec_set_param_f32(e, "w", w, 5));          /* wrong count */
    TRY(rlx_exec_set_param(e, "w", RLX_F32, w, 12));    /* wrong bytes */
    TRY(rlx_exec_set_param(e, "w", RLX_I32, wi, 16));   /* wrong dtype */
    TRY(rlx_exec_set_param(e, "w", RLX_F32, w, 16));    /* right */
#undef TRY
    rlx_exec_free(e);
    const rlx_status want[9] = {RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT,
                                RLX_STATUS_NOT_FOUND, RLX_STATUS_NOT_FOUND, RLX_STATUS_SHAPE, RLX_STATUS_SHAPE,
                                RLX_STATUS_SHAPE, RLX_OK};
    for (int i = 0; i < 9; i++) {
        int ok = s[i] == want[i];
        CHECK_MSG(ok && (want[i] == RLX_OK || msgs[i][0]), "set_param case %d: %s (want %s), msg '%s'", i,
                  rlx_status_name(s[i]), rlx_status_name(want[i]), msgs[i]);
    }
    ops_free_all();
}

TEST(api_run_errors) {
    rlx_exec *e = make_exec();
    CHECK_MSG(e != NULL, "compile: %s", rlx_last_error());
    float x[24], w[4] = {1, 2, 3, 4}, y[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i;
    int32_t xi[24] = {0};
    rlx_status s[16];
    char msgs[16][256];
    int k = 0;
#define TRY(expr) do { s[k] = (expr); snprintf(msgs[k], sizeof msgs[k], "%s", rlx_last_error()); k++; } while (0)
    ref_shape sx = ref_shape_make(3, d234);
    rlx_tensor good = ops_tensor("x", RLX_F32, sx, x), t;
    TRY(RLX_STATUS_INVALID_ARGUMENT);                                      /* 0: see api_output_before_run */
    TRY(rlx_exec_run(NULL, &good, 1));                                     /* 1 */
    TRY(rlx_exec_run(e, NULL, 1));                                         /* 2 */
    TRY(rlx_exec_run(e, &good, 0));                                        /* 3: missing input */
    TRY(rlx_exec_run(e, &good, -1));                                       /* 4 */
    t = good; t.name = "nope";           TRY(rlx_exec_run(e, &t, 1));      /* 5: unknown name */
    t = good; t.name = NULL;             TRY(rlx_exec_run(e, &t, 1));      /* 6 */
    t = good; t.dtype = RLX_I32; t.data = xi; TRY(rlx_exec_run(e, &t, 1)); /* 7: wrong dtype */
    t = good; t.rank = 2; t.dims[1] = 12; TRY(rlx_exec_run(e, &t, 1));     /* 8: wrong rank */
    t = good; t.dims[2] = 5; t.bytes = 120; TRY(rlx_exec_run(e, &t, 1));   /* 9: wrong dims */
    t = good; t.bytes = 95;              TRY(rlx_exec_run(e, &t, 1));      /* 10: wrong bytes */
    t = good; t.data = NULL;             TRY(rlx_exec_run(e, &t, 1));      /* 11 */
    rlx_tensor two[2] = {good, good};    TRY(rlx_exec_run(e, two, 2));     /* 12: duplicate */
    t = good; t.name = "w";              TRY(rlx_exec_run(e, &t, 1));      /* 13: a param is not an input */
    TRY(rlx_exec_set_param_f32(e, "w", w, 4));                             /* 14 */
    TRY(rlx_exec_run(e, &good, 1));                                        /* 15: still works */
#undef TRY
    int read_ok = s[15] == RLX_OK && rlx_exec_read_output(e, "y", y, sizeof y) == RLX_OK;
    rlx_exec_free(e);
    const rlx_status want[16] = {
        RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT,
        RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_NOT_FOUND, RLX_STATUS_INVALID_ARGUMENT,
        RLX_STATUS_SHAPE, RLX_STATUS_SHAPE, RLX_STATUS_SHAPE, RLX_STATUS_SHAPE, RLX_STATUS_INVALID_ARGUMENT,
        RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_NOT_FOUND, RLX_OK, RLX_OK};
    for (int i = 0; i < 16; i++) {
        int ok = s[i] == want[i];
        CHECK_MSG(ok && (want[i] == RLX_OK || msgs[i][0]), "run case %d: %s (want %s), msg '%s'", i,
                  rlx_status_name(s[i]), rlx_status_name(want[i]), msgs[i]);
    }
    CHECK(read_ok);
    for (int i = 0; i < 24; i++) CHECK_MSG(y[i] == x[i] * w[i % 4], "y[%d] = %g", i, (double)y[i]);
    ops_free_all();
}

TEST(api_output_and_info_errors) {
    rlx_exec *e = make_exec();
    CHECK_MSG(e != NULL, "compile: %s", rlx_last_error());
    float x[24] = {0}, y[24];
    rlx_tensor good = ops_tensor("x", RLX_F32, ref_shape_make(3, d234), x), t, info;
    rlx_status run = rlx_exec_run(e, &good, 1);
    rlx_status s[12];
    char msgs[12][256];
    int k = 0;
#define TRY(expr) do { s[k] = (expr); snprintf(msgs[k], sizeof msgs[k], "%s", rlx_last_error()); k++; } while (0)
    TRY(rlx_exec_output(NULL, "y", &t));                        /* 0 */
    TRY(rlx_exec_output(e, NULL, &t));                          /* 1 */
    TRY(rlx_exec_output(e, "nope", &t));                        /* 2 */
    TRY(rlx_exec_output(e, "y", NULL));                         /* 3 */
    TRY(rlx_exec_read_output(e, "y", y, sizeof y - 4));         /* 4: too small */
    TRY(rlx_exec_read_output(e, "y", NULL, sizeof y));          /* 5 */
    TRY(rlx_exec_read_output(e, "x", y, sizeof y));             /* 6: an input, not an output */
    TRY(rlx_exec_input_info(e, 1, &info));                      /* 7 */
    TRY(rlx_exec_output_info(e, -1, &info));                    /* 8 */
    TRY(rlx_exec_param_info(e, 0, NULL));                       /* 9 */
    TRY(rlx_exec_get_stats(NULL, &(rlx_exec_stats){0}));        /* 10 */
    TRY(rlx_exec_get_stats(e, NULL));                           /* 11 */
#undef TRY
    /* valid queries */
    rlx_status si = rlx_exec_input_info(e, 0, &info);
    int info_ok = si == RLX_OK && info.name && strcmp(info.name, "x") == 0 && info.data == NULL &&
                  info.dtype == RLX_F32 && info.rank == 3 && info.dims[0] == 2 && info.dims[2] == 4;
    rlx_status sp = rlx_exec_param_info(e, 0, &info);
    int pinfo_ok = sp == RLX_OK && info.name && strcmp(info.name, "w") == 0 && info.rank == 1 && info.dims[0] == 4;
    rlx_status so = rlx_exec_output_info(e, 0, &info);
    int oinfo_ok = so == RLX_OK && info.name && strcmp(info.name, "y") == 0 && info.rank == 3;
    rlx_exec_stats st;
    rlx_status ss = rlx_exec_get_stats(e, &st);
    char *rep = rlx_exec_report(e);
    int rep_ok = rep && rep[0];
    free(rep);
    rlx_exec_free(e);
    CHECK_OK(run);
    const rlx_status want[12] = {
        RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_NOT_FOUND, RLX_STATUS_INVALID_ARGUMENT,
        RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_NOT_FOUND, RLX_STATUS_INVALID_ARGUMENT,
        RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT, RLX_STATUS_INVALID_ARGUMENT,
        RLX_STATUS_INVALID_ARGUMENT};
    for (int i = 0; i < 12; i++) {
        int ok = s[i] == want[i];
        CHECK_MSG(ok && msgs[i][0], "case %d: %s (want %s), msg '%s'", i, rlx_status_name(s[i]),
                  rlx_status_name(want[i]), msgs[i]);
    }
    CHECK(info_ok && pinfo_ok && oinfo_ok);
    CHECK_OK(ss);
    CHECK(st.backend && strcmp(st.backend, "cpu") == 0);
    CHECK(st.steps >= 1 && st.param_bytes == 16 && st.specializations >= 1);
    CHECK(st.arena_bytes <= st.tensor_bytes || st.tensor_bytes == 0);
    CHECK(rep_ok);
    CHECK(rlx_exec_input_count(NULL) == -1 && rlx_exec_output_count(NULL) == -1 && rlx_exec_param_count(NULL) == -1);
    CHECK(strstr(rlx_last_error(), "rlx_exec_param_count: exec is NULL"));
    CHECK(rlx_exec_report(NULL) == NULL);
    ops_free_all();
}

/* "Output of the last run": before any run there is none. */
TEST(api_output_before_run) {
    rlx_exec *e = make_exec();
    CHECK_MSG(e != NULL, "compile: %s", rlx_last_error());
    rlx_tensor t;
    float y[24];
    rlx_status s1 = rlx_exec_output(e, "y", &t);
    rlx_status s2 = rlx_exec_read_output(e, "y", y, sizeof y);
    rlx_exec_free(e);
    CHECK_MSG(s1 == RLX_STATUS_INVALID_ARGUMENT && s2 == RLX_STATUS_INVALID_ARGUMENT,
              "output before any run: %s / %s (want RLX_STATUS_INVALID_ARGUMENT)", rlx_status_name(s1),
              rlx_status_name(s2));
    ops_free_all();
}

/* Out-of-range ids are data errors found at run time: an error, never a crash. */
TEST(api_gather_out_of_range) {
    int64_t dt[2] = {5, 3}, di[1] = {4};
    ref_shape st = ref_shape_make(2, dt), si = ref_shape_make(1, di);
    float table[15] = {0}, out[12];
    const int32_t bad_ids[3][4] = {{0, 1, 5, 2}, {0, -1, 2, 3}, {0, 1, 2, 2147483647}};
    for (int c = 0; c < 3; c++) {
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_gather_rows(g, ops_input(g, "t", RLX_F32, st), ops_input(g, "ids", RLX_I32, si))));
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, NULL, &e));
        rlx_tensor in[2] = {ops_tensor("t", RLX_F32, st, table), ops_tensor("ids", RLX_I32, si, (void *)bad_ids[c])};
        rlx_status s = rlx_exec_run(e, in, 2);
        char msg[256];
        snprintf(msg, sizeof msg, "%s", rlx_last_error());
        const int32_t good[4] = {4, 0, 0, 1};
        in[1].data = (void *)good;
        rlx_status s2 = rlx_exec_run(e, in, 2);
        if (s2 == RLX_OK) s2 = rlx_exec_read_output(e, "y", out, sizeof out);
        rlx_exec_free(e);
        CHECK_MSG(s == RLX_STATUS_INVALID_ARGUMENT && msg[0], "gather_rows ids case %d: %s, msg '%s'", c,
                  rlx_status_name(s), msg);
        CHECK_OK(s2);
    }
    /* torch.gather index out of range */
    int64_t dx[2] = {3, 4};
    ref_shape sx = ref_shape_make(2, dx);
    float x[12] = {0}, y[12];
    int32_t idx[12] = {0, 1, 2, 3, 0, 1, 2, 4, 0, 0, 0, 0};   /* 4 >= dim 4 on axis 1 */
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_gather(g, ops_input(g, "x", RLX_F32, sx), ops_input(g, "i", RLX_I32, sx), 1)));
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, NULL, &e));
    rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("i", RLX_I32, sx, idx)};
    rlx_status s = rlx_exec_run(e, in, 2);
    (void)y;
    rlx_exec_free(e);
    CHECK_STATUS(s, RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

/* A user log callback receives messages at or above its level and can be removed. */
static int log_calls;
static void count_log(rlx_log_level level, const char *message, void *user) {
    (void)level;
    (void)message;
    (*(int *)user)++;
}

TEST(api_log_callback) {
    log_calls = 0;
    rlx_set_log_callback(count_log, &log_calls, RLX_LOG_OFF);   /* nothing gets through OFF */
    rlx_node x;
    rlx_graph *g = graph_x(&x);
    (void)rlx_reduce_sum(g, x, 1u << 7, 0);
    rlx_exec *e = NULL;
    (void)rlx_compile(g, NULL, &e);
    rlx_set_log_callback(NULL, NULL, RLX_LOG_WARN);   /* default restored */
    CHECK_MSG(log_calls == 0, "log callback called %d times at level OFF", log_calls);
    ops_free_all();
}

/* Sizes whose element count or byte count overflows int64/size_t (or is far
 * beyond any memory) are SHAPE errors at build; slice/narrow ranges near
 * INT64_MAX are errors, not signed overflow. Built under UBSan these were
 * signed-overflow aborts and zero-byte params that compiled. */
TEST(api_huge_dims) {
    rlx_node x;
    rlx_graph *g;
    int64_t big[2] = {1LL << 40, 1LL << 40}, sq[2] = {1LL << 31, 1LL << 31}, zbig[3] = {0, 1LL << 40, 1LL << 40};
    int64_t d3[1] = {3};
    g = ops_graph(); CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, 2, big), RLX_STATUS_SHAPE);
    CHECK_MSG(strstr(rlx_last_error(), "'x'") != NULL, "message does not name the input: '%s'", rlx_last_error());
    g = ops_graph(); CHECK_BUILD_FAIL(g, rlx_param(g, "w", RLX_F32, 2, sq), RLX_STATUS_SHAPE);   /* 2^64 bytes */
    g = ops_graph(); CHECK_BUILD_FAIL(g, rlx_input(g, "x", RLX_F32, 3, zbig), RLX_STATUS_SHAPE); /* strides overflow */
    g = ops_graph(); CHECK_BUILD_FAIL(g, rlx_constant(g, RLX_F32, 2, big, d3), RLX_STATUS_SHAPE);
    int64_t ebig[3] = {1LL << 40, 1LL << 40, 3};
    g = ops_graph(); x = rlx_input(g, "x", RLX_F32, 1, d3);
    CHECK_BUILD_FAIL(g, rlx_expand(g, x, 3, ebig), RLX_STATUS_SHAPE);
    int64_t rinf[3] = {RLX_DIM_INFER, 1LL << 40, 1LL << 40}, rbig[3] = {1LL << 40, 1LL << 40, 1LL << 40};
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_reshape(g, x, 3, rinf), RLX_STATUS_SHAPE);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_reshape(g, x, 3, rbig), RLX_STATUS_SHAPE);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_slice(g, x, 0, 0, INT64_MAX, INT64_MAX), RLX_STATUS_SHAPE);
    g = graph_x(&x); CHECK_BUILD_FAIL(g, rlx_slice(g, x, 1, 1, INT64_MAX, 1LL << 62), RLX_STATUS_SHAPE);
    g = graph_x(&x); rlx_node r = rlx_narrow(g, x, 0, INT64_MAX, 5);
    CHECK_MSG(r == RLX_NO_NODE && rlx_graph_status(g) != RLX_OK && rlx_last_error()[0], "narrow at INT64_MAX accepted");
    /* a slice that fits is still fine */
    g = graph_x(&x); CHECK(rlx_slice(g, x, 2, 1, 4, 2) != RLX_NO_NODE);
    CHECK_OK(rlx_graph_status(g));
    ops_free_all();
}

/* A symbol bound at run time to a size whose derived dims or bytes overflow
 * is a SHAPE error from rlx_exec_run, and the exec stays usable. */
TEST(api_huge_symbol_binding) {
    float buf[8] = {0};
    for (int c = 0; c < 2; c++) {
        rlx_graph *g = ops_graph();
        int64_t s = rlx_symbol(g, "s");
        int64_t ds[2] = {s, 2};
        /* case 0: x [s, 2] f32 past the size limit; case 1: x [s] i8 whose
         * own size is checked later than concat's s + s, which overflows */
        rlx_node x = c == 0 ? rlx_input(g, "x", RLX_F32, 2, ds) : rlx_input(g, "x", RLX_I8, 1, ds), y;
        if (c == 0) {
            y = rlx_reshape(g, x, 1, (int64_t[]){RLX_DIM_INFER});
        } else {
            rlx_node xs[2] = {x, x};
            y = rlx_concat(g, xs, 2, 0);
        }
        CHECK_OK(rlx_output(g, "y", y));
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, NULL, &e));
        int64_t sv = c == 0 ? (1LL << 61) - 1 : 1LL << 62;   /* x's bytes still fit in uint64 */
        rlx_tensor t = {.name = "x", .dtype = c == 0 ? RLX_F32 : RLX_I8, .rank = c == 0 ? 2 : 1, .dims = {sv, 2},
                        .data = buf, .bytes = c == 0 ? (size_t)sv * 8 : (size_t)sv};
        rlx_status st = rlx_exec_run(e, &t, 1);
        char msg[256];
        snprintf(msg, sizeof msg, "%s", rlx_last_error());
        t.dims[0] = 2;
        t.bytes = c == 0 ? 16 : 2;
        rlx_status st2 = rlx_exec_run(e, &t, 1);
        rlx_exec_free(e);
        CHECK_MSG(st == RLX_STATUS_SHAPE && strstr(msg, c == 0 ? "too large" : "overflows"),
                  "case %d: huge binding: %s, msg '%s'", c, rlx_status_name(st), msg);
        CHECK_OK(st2);
    }
    ops_free_all();
}

/* Block-quantized dtypes are storage for params and constants only
 * (docs/ops.md): a cast cannot produce one. */
TEST(api_cast_to_quantized) {
    rlx_graph *g = ops_graph();
    int64_t d[2] = {2, 32};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, d);
    CHECK_BUILD_FAIL(g, rlx_cast(g, x, RLX_Q4_0), RLX_STATUS_SHAPE);
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 2, d);
    CHECK_BUILD_FAIL(g, rlx_cast(g, x, RLX_Q8_K), RLX_STATUS_SHAPE);
    ops_free_all();
}

/* docs/ops.md: slice's end > dim is SHAPE, also when the step skips past it. */
TEST(api_slice_end_past_dim) {
    rlx_node x;
    rlx_graph *g = graph_x(&x);   /* [2,3,4] */
    CHECK_BUILD_FAIL(g, rlx_slice(g, x, 1, 0, 4, 5), RLX_STATUS_SHAPE);   /* takes index 0 only */
    g = graph_x(&x);
    CHECK(rlx_slice(g, x, 1, 0, 3, 4) != RLX_NO_NODE);                     /* end == dim: fine */
    CHECK_OK(rlx_graph_status(g));
    ops_free_all();
}

/* Options out of their documented ranges are INVALID_ARGUMENT, not silently
 * used: an unknown precision, device_index below -1, and a thread count that
 * would spend seconds starting threads before failing. */
TEST(api_compile_option_ranges) {
    rlx_node x;
    rlx_graph *g = graph_x(&x);
    CHECK_OK(rlx_output(g, "y", rlx_exp(g, x)));
    rlx_compile_options o;
    rlx_exec *e = NULL;
    rlx_status s[3];
    rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; o.precision = (rlx_precision)77;
    s[0] = rlx_compile(g, &o, &e); rlx_exec_free(e); e = NULL;
    rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; o.device_index = -7;
    s[1] = rlx_compile(g, &o, &e); rlx_exec_free(e); e = NULL;
    rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; o.threads = 1 << 20;
    s[2] = rlx_compile(g, &o, &e); rlx_exec_free(e); e = NULL;
    for (int i = 0; i < 3; i++)
        CHECK_MSG(s[i] == RLX_STATUS_INVALID_ARGUMENT, "case %d: %s", i, rlx_status_name(s[i]));
    CHECK(rlx_last_error()[0]);
    /* the environment is checked too (RLX_THREADS overrides valid options) */
    setenv("RLX_THREADS", "100000", 1);
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    rlx_status se = rlx_compile(g, &o, &e);
    unsetenv("RLX_THREADS");
    rlx_exec_free(e);
    CHECK_MSG(se == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "RLX_THREADS"), "RLX_THREADS=100000: %s, '%s'",
              rlx_status_name(se), rlx_last_error());
    ops_free_all();
}

/* opts.poison: 0 or 1 (RLX_POISON=1 sets it); a poisoned run computes the
 * same outputs, since every element of an output is written. */
TEST(api_compile_option_poison) {
    rlx_node x;
    rlx_graph *g = graph_x(&x);
    CHECK_OK(rlx_output(g, "y", rlx_exp(g, x)));
    rlx_compile_options o;
    rlx_exec *e = NULL;
    rlx_compile_options_init(&o);
    CHECK(o.poison == 0);
    o.backend = RLX_BACKEND_CPU;
    o.poison = 2;
    CHECK_STATUS(rlx_compile(g, &o, &e), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(strstr(rlx_last_error(), "poison") != NULL, "message '%s'", rlx_last_error());
    float xs[24], y[2][24];
    test_fill_uniform_f32(xs, 24, -2.0, 2.0);
    for (int p = 0; p < 2; p++) {
        o.poison = p;
        CHECK_OK(rlx_compile(g, &o, &e));
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 3, .dims = {2, 3, 4}, .data = xs, .bytes = sizeof xs};
        rlx_tensor out;
        rlx_status st = rlx_exec_run(e, &in, 1);
        if (st == RLX_OK) st = rlx_exec_output(e, "y", &out);
        if (st == RLX_OK) memcpy(y[p], out.data, sizeof y[p]);
        rlx_exec_free(e);
        e = NULL;
        CHECK_OK(st);
    }
    CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0);
    ops_free_all();
}

/* Thousands of huge tensors live at once: each is within IR_MAX_NUMEL, but
 * their arena would pass int64. Compile reports OUT_OF_MEMORY (the planner
 * overflowed before). */
TEST(api_arena_overflow) {
    rlx_graph *g = ops_graph();
    int64_t d[1] = {IR_MAX_NUMEL};
    rlx_node sum = RLX_NO_NODE;
    for (int i = 0; i < 4200; i++) {   /* 4200 * 2^51 bytes > 2^63; inputs are live for the whole run */
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        rlx_node x = rlx_input(g, name, RLX_F64, 1, d);
        sum = i ? rlx_add(g, sum, x) : x;
    }
    CHECK_OK(rlx_output(g, "y", sum));
    rlx_exec *e = NULL;
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    rlx_status st = rlx_compile(g, &o, &e);
    rlx_exec_free(e);
    CHECK_STATUS(st, RLX_STATUS_OUT_OF_MEMORY);
    ops_free_all();
}
