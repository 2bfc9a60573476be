/*
 * builder.c — the public graph builder: one function per op. Each validates
 * its arguments, fills an ir_node and appends it (which runs the shape rule).
 *
 * Errors are sticky: the first one is kept in the graph, and a builder call
 * given RLX_NO_NODE returns RLX_NO_NODE without a new message, so a user can
 * build a whole graph and check once (rlx_graph_status or rlx_compile).
 */
#include "ir/ir.h"
#include "ir/builder_internal.h"
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

rlx_graph *rlx_graph_new(void) {
    rlx_graph *g = calloc(1, sizeof *g);
    if (g) ir_graph_init(&g->g);
    return g;
}

void rlx_graph_free(rlx_graph *g) {
    if (!g) return;
    ir_graph_clear(&g->g);
    free(g);
}

rlx_status rlx_graph_status(const rlx_graph *g) {
    if (!g) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_graph_status: graph is NULL");
    return g->g.first_error;
}

int rlx_graph_node_count(const rlx_graph *g) {
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_graph_node_count: graph is NULL"); return -1; }
    return g->g.n_nodes;
}

char *rlx_graph_dump(const rlx_graph *g) {
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_graph_dump: graph is NULL"); return NULL; }
    char *text = ir_graph_dump(&g->g);
    if (!text) rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_graph_dump: out of memory for the text");
    return text;
}

/* Records the first error of the graph and returns RLX_NO_NODE. */
rlx_node ir_build_fail(rlx_graph *g, rlx_status st) {
    if (g && g->g.first_error == RLX_OK) {
        g->g.first_error = st;
        snprintf(g->first_error_msg, sizeof g->first_error_msg, "%s", rlx_last_error());
    }
    return RLX_NO_NODE;
}

static rlx_node fail_msg(rlx_graph *g, rlx_status st, const char *fn, const char *why) {
    rlx_fail(st, "%s: %s", fn, why);
    return ir_build_fail(g, st);
}

/* Checks the graph and input ids of a builder call. Returns false (and the
 * sticky error) when the call must not proceed. */
bool ir_build_inputs_ok(rlx_graph *g, const char *fn, const rlx_node *in, int n) {
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn); return false; }
    for (int i = 0; i < n; i++) {
        if (in[i] == RLX_NO_NODE) {
            if (g->g.first_error == RLX_OK) {  /* no earlier failure explains it */
                rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: input %d is RLX_NO_NODE", fn, i);
                ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
            }
            return false;
        }
        if (in[i] < 0 || in[i] >= g->g.n_nodes) {
            char why[96];
            snprintf(why, sizeof why, "input %d is node %d, which is not in this graph", i, in[i]);
            fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, why);
            return false;
        }
    }
    return true;
}

static void node_init(ir_node *n, ir_op op) {
    memset(n, 0, sizeof *n);
    n->op = op;
}

static rlx_node append(rlx_graph *g, ir_node *n) {
    int32_t id;
    rlx_status st = ir_graph_append(&g->g, n, &id);
    if (st != RLX_OK) {
        free(n->name);
        free(n->data);
        return ir_build_fail(g, st);
    }
    return id;
}

static rlx_node make(rlx_graph *g, const char *fn, ir_op op, const rlx_node *in, int n_in, ir_node *proto) {
    if (!ir_build_inputs_ok(g, fn, in, n_in)) return RLX_NO_NODE;
    ir_node n;
    if (proto) n = *proto; else node_init(&n, op);
    n.op = op;
    n.n_in = n_in;
    for (int i = 0; i < n_in; i++) n.in[i] = in[i];
    return append(g, &n);
}

static int rank_of(const rlx_graph *g, rlx_node x) { return g->g.nodes[x].shape.rank; }

rlx_node ir_build(rlx_graph *g, const char *fn, ir_op op, const rlx_node *in, int n_in, ir_node *proto) {
    return make(g, fn, op, in, n_in, proto);
}

rlx_node ir_build_shaped(rlx_graph *g, const char *fn, ir_op op, rlx_node x, const ir_shape *shape) {
    ir_node n;
    node_init(&n, op);
    n.shape = *shape;
    return make(g, fn, op, &x, 1, &n);
}

static bool normalize_axis(int *axis, int rank) {
    if (*axis < 0) *axis += rank;
    return *axis >= 0 && *axis < rank;
}

/* ---------------------------------------------------------------- symbols */

int64_t rlx_symbol(rlx_graph *g, const char *name) {
    if (!g || !name || !*name) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_symbol: %s", !g ? "graph is NULL" : !name ? "name is NULL" : "name is empty");
        ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
        return RLX_DIM_INFER;
    }
    for (int i = 0; i < g->g.n_syms; i++)
        if (strcmp(g->g.sym_names[i], name) == 0) return -2 - i;
    if (g->g.n_syms == IR_MAX_SYMS) {
        rlx_fail(RLX_STATUS_UNSUPPORTED, "rlx_symbol '%s': a graph has at most %d symbols", name, IR_MAX_SYMS);
        ir_build_fail(g, RLX_STATUS_UNSUPPORTED);
        return RLX_DIM_INFER;
    }
    char *copy = rlx_strdup(name);
    if (!copy) { rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_symbol: out of memory"); ir_build_fail(g, RLX_STATUS_OUT_OF_MEMORY); return RLX_DIM_INFER; }
    g->g.sym_names[g->g.n_syms] = copy;
    return -2 - g->g.n_syms++;
}

/* Public dim value -> ir_dim. infer_ok allows -1 (reshape). */
static bool dim_from_public(const rlx_graph *g, int64_t v, ir_dim *out) {
    if (v >= 0) { *out = ir_dim_const(v); return true; }
    int64_t s = -2 - v;
    if (v <= -2 && s < g->g.n_syms) { *out = ir_dim_sym((int)s); return true; }
    return false;
}

static bool shape_from_public(rlx_graph *g, const char *fn, const char *what, int rank,
                              const int64_t *dims, ir_shape *out) {
    if (rank < 0 || rank > IR_MAX_RANK) {
        rlx_fail(RLX_STATUS_SHAPE, "%s '%s': rank %d is outside [0, %d]", fn, what, rank, IR_MAX_RANK);
        ir_build_fail(g, RLX_STATUS_SHAPE);
        return false;
    }
    if (rank > 0 && !dims) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s '%s': dims is NULL", fn, what);
        ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
        return false;
    }
    out->rank = rank;
    for (int i = 0; i < rank; i++) {
        if (!dim_from_public(g, dims[i], &out->d[i])) {
            rlx_fail(RLX_STATUS_SHAPE, "%s '%s': dim %d = %lld is neither a size nor a symbol of this graph",
                     fn, what, i, (long long)dims[i]);
            ir_build_fail(g, RLX_STATUS_SHAPE);
            return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- sources */

static bool name_taken(const ir_graph *g, const char *name) {
    return ir_graph_find_io(g, IR_OP_INPUT, name) >= 0 || ir_graph_find_io(g, IR_OP_PARAM, name) >= 0 ||
           ir_graph_find_output(g, name) >= 0;
}

static rlx_node named_source(rlx_graph *g, const char *fn, ir_op op, const char *name, rlx_dtype dt,
                             int rank, const int64_t *dims) {
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn); return RLX_NO_NODE; }
    if (!name || !*name) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, name ? "name is empty" : "name is NULL");
    if ((unsigned)dt >= RLX_DTYPE_COUNT) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s '%s': unknown dtype %d", fn, name, (int)dt);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    if (name_taken(&g->g, name)) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s '%s': the name is already used by an input, param or output", fn, name);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    ir_node n;
    node_init(&n, op);
    if (!shape_from_public(g, fn, name, rank, dims, &n.shape)) return RLX_NO_NODE;
    n.dtype = dt;
    if (!(n.name = rlx_strdup(name))) return fail_msg(g, RLX_STATUS_OUT_OF_MEMORY, fn, "out of memory");
    return append(g, &n);
}

rlx_node rlx_input(rlx_graph *g, const char *name, rlx_dtype dt, int rank, const int64_t *dims) {
    return named_source(g, "rlx_input", IR_OP_INPUT, name, dt, rank, dims);
}

rlx_node rlx_param(rlx_graph *g, const char *name, rlx_dtype dt, int rank, const int64_t *dims) {
    return named_source(g, "rlx_param", IR_OP_PARAM, name, dt, rank, dims);
}

rlx_node rlx_constant(rlx_graph *g, rlx_dtype dt, int rank, const int64_t *dims, const void *data) {
    const char *fn = "rlx_constant";
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn); return RLX_NO_NODE; }
    if ((unsigned)dt >= RLX_DTYPE_COUNT) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: unknown dtype %d", fn, (int)dt);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    ir_node n;
    node_init(&n, IR_OP_CONST);
    if (!shape_from_public(g, fn, "constant", rank, dims, &n.shape)) return RLX_NO_NODE;
    if (!ir_shape_is_static(&n.shape)) return fail_msg(g, RLX_STATUS_SHAPE, fn, "constants need static dims");
    if (!ir_shape_size_ok(&n.shape)) return fail_msg(g, RLX_STATUS_SHAPE, fn, "shape is too large (over 2^48 elements)");
    int64_t cdims[IR_MAX_RANK];
    ir_shape_dims(&n.shape, cdims);
    uint64_t bytes = rlx_tensor_bytes(dt, rank, cdims);
    if (bytes == 0 && ir_shape_numel(&n.shape) != 0) {
        rlx_fail(RLX_STATUS_SHAPE, "%s: a %s constant needs a last dim that is a whole number of blocks", fn,
                 rlx_dtype_name(dt));
        return ir_build_fail(g, RLX_STATUS_SHAPE);
    }
    if (bytes > (1ull << 40)) {
        rlx_fail(RLX_STATUS_SHAPE, "%s: %llu bytes is too large (at most 2^40)", fn, (unsigned long long)bytes);
        return ir_build_fail(g, RLX_STATUS_SHAPE);
    }
    if (bytes && !data) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "data is NULL");
    n.dtype = dt;
    n.data_bytes = (size_t)bytes;
    if (!(n.data = malloc(bytes ? bytes : 1))) return fail_msg(g, RLX_STATUS_OUT_OF_MEMORY, fn, "out of memory");
    if (bytes) memcpy(n.data, data, bytes);
    return append(g, &n);
}

rlx_node rlx_scalar(rlx_graph *g, rlx_dtype dt, double value) {
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_scalar: graph is NULL"); return RLX_NO_NODE; }
    if ((unsigned)dt >= RLX_DTYPE_COUNT) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_scalar: unknown dtype %d", (int)dt);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    unsigned char buf[8] = {0};
    rlx_store_from_f64(buf, dt, 0, value);
    return rlx_constant(g, dt, 0, NULL, buf);
}

rlx_status rlx_output(rlx_graph *g, const char *name, rlx_node x) {
    if (!ir_build_inputs_ok(g, "rlx_output", &x, 1)) return g ? (g->g.first_error ? g->g.first_error : RLX_STATUS_INVALID_ARGUMENT) : RLX_STATUS_INVALID_ARGUMENT;
    if (!name || !*name) {
        fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, "rlx_output", name ? "name is empty" : "name is NULL");
        return RLX_STATUS_INVALID_ARGUMENT;
    }
    if (name_taken(&g->g, name)) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_output '%s': the name is already used by an input, param or output", name);
        ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
        return RLX_STATUS_INVALID_ARGUMENT;
    }
    ir_graph *ig = &g->g;
    if (ig->n_outputs == ig->cap_outputs) {
        int32_t cap = ig->cap_outputs ? ig->cap_outputs * 2 : 8;
        ir_output *o = realloc(ig->outputs, (size_t)cap * sizeof *o);
        if (!o) { ir_build_fail(g, RLX_STATUS_OUT_OF_MEMORY); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_output: out of memory"); }
        ig->outputs = o;
        ig->cap_outputs = cap;
    }
    char *copy = rlx_strdup(name);
    if (!copy) { ir_build_fail(g, RLX_STATUS_OUT_OF_MEMORY); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_output: out of memory"); }
    ig->outputs[ig->n_outputs].name = copy;
    ig->outputs[ig->n_outputs].node = x;
    ig->n_outputs++;
    return RLX_OK;
}

rlx_status rlx_set_name(rlx_graph *g, rlx_node x, const char *name) {
    if (!ir_build_inputs_ok(g, "rlx_set_name", &x, 1)) return RLX_STATUS_INVALID_ARGUMENT;
    if (!name || !*name) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_set_name: name is %s", name ? "empty" : "NULL");
    ir_node *n = &g->g.nodes[x];
    if (n->op == IR_OP_INPUT || n->op == IR_OP_PARAM)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_set_name: node %d is an input or param; its name is its interface name", x);
    char *copy = rlx_strdup(name);
    if (!copy) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_set_name: out of memory");
    free(n->name);
    n->name = copy;
    return RLX_OK;
}

rlx_status rlx_node_shape(const rlx_graph *g, rlx_node x, rlx_dtype *dtype, int *rank, int64_t *dims) {
    if (!g) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_node_shape: graph is NULL");
    if (x < 0 || x >= g->g.n_nodes) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_node_shape: node %d is not in the graph", x);
    const ir_node *n = &g->g.nodes[x];
    if (dtype) *dtype = n->dtype;
    if (rank) *rank = n->shape.rank;
    if (dims) for (int i = 0; i < n->shape.rank; i++) dims[i] = ir_dim_to_public(n->shape.d[i]);
    return RLX_OK;
}

/* ------------------------------------------------------------ elementwise */

#define BINARY(fn, OP) \
    rlx_node fn(rlx_graph *g, rlx_node a, rlx_node b) { rlx_node in[2] = {a, b}; return make(g, #fn, OP, in, 2, NULL); }
BINARY(rlx_add, IR_OP_ADD)
BINARY(rlx_sub, IR_OP_SUB)
BINARY(rlx_mul, IR_OP_MUL)
BINARY(rlx_div, IR_OP_DIV)
BINARY(rlx_max, IR_OP_MAX)
BINARY(rlx_min, IR_OP_MIN)
BINARY(rlx_pow, IR_OP_POW)
BINARY(rlx_gelu_grad, IR_OP_GELU_GRAD)
BINARY(rlx_gelu_tanh_grad, IR_OP_GELU_TANH_GRAD)
BINARY(rlx_eq, IR_OP_EQ)
BINARY(rlx_ne, IR_OP_NE)
BINARY(rlx_lt, IR_OP_LT)
BINARY(rlx_le, IR_OP_LE)
BINARY(rlx_gt, IR_OP_GT)
BINARY(rlx_ge, IR_OP_GE)
#undef BINARY

#define UNARY(fn, OP) \
    rlx_node fn(rlx_graph *g, rlx_node x) { return make(g, #fn, OP, &x, 1, NULL); }
UNARY(rlx_relu, IR_OP_RELU)
UNARY(rlx_sigmoid, IR_OP_SIGMOID)
UNARY(rlx_tanh, IR_OP_TANH)
UNARY(rlx_exp, IR_OP_EXP)
UNARY(rlx_log, IR_OP_LOG)
UNARY(rlx_sqrt, IR_OP_SQRT)
UNARY(rlx_rsqrt, IR_OP_RSQRT)
UNARY(rlx_neg, IR_OP_NEG)
UNARY(rlx_abs, IR_OP_ABS)
UNARY(rlx_gelu, IR_OP_GELU)
UNARY(rlx_gelu_tanh, IR_OP_GELU_TANH)
UNARY(rlx_silu, IR_OP_SILU)
UNARY(rlx_round, IR_OP_ROUND)
UNARY(rlx_sin, IR_OP_SIN)
UNARY(rlx_cos, IR_OP_COS)
UNARY(rlx_tan, IR_OP_TAN)
UNARY(rlx_atan, IR_OP_ATAN)
UNARY(rlx_erf, IR_OP_ERF)
#undef UNARY

rlx_node rlx_where(rlx_graph *g, rlx_node cond, rlx_node a, rlx_node b) {
    rlx_node in[3] = {cond, a, b};
    return make(g, "rlx_where", IR_OP_WHERE, in, 3, NULL);
}

rlx_node rlx_fma(rlx_graph *g, rlx_node a, rlx_node b, rlx_node c) {
    rlx_node in[3] = {a, b, c};
    return make(g, "rlx_fma", IR_OP_FMA, in, 3, NULL);
}

rlx_node rlx_clamp(rlx_graph *g, rlx_node x, double lo, double hi) {
    ir_node n;
    node_init(&n, IR_OP_CLAMP);
    ir_attr_set_clamp_lo(&n, lo);
    ir_attr_set_clamp_hi(&n, hi);
    return make(g, "rlx_clamp", IR_OP_CLAMP, &x, 1, &n);
}

rlx_node rlx_cast(rlx_graph *g, rlx_node x, rlx_dtype to) {
    ir_node n;
    node_init(&n, IR_OP_CAST);
    n.dtype = to;
    return make(g, "rlx_cast", IR_OP_CAST, &x, 1, &n);
}

/* ---------------------------------------------------------------- matmul */

rlx_node rlx_matmul(rlx_graph *g, rlx_node a, rlx_node b, int transpose_b) {
    ir_node n;
    node_init(&n, IR_OP_MATMUL);
    ir_attr_set_matmul_transpose_b(&n, transpose_b != 0);
    rlx_node in[2] = {a, b};
    return make(g, "rlx_matmul", IR_OP_MATMUL, in, 2, &n);
}

rlx_node rlx_matmul_bias_act(rlx_graph *g, rlx_node a, rlx_node b, int transpose_b, rlx_node bias,
                             rlx_activation act) {
    ir_node n;
    node_init(&n, IR_OP_MATMUL_BIAS_ACT);
    ir_attr_set_matmul_transpose_b(&n, transpose_b != 0);
    ir_attr_set_matmul_act(&n, act);
    ir_attr_set_matmul_has_bias(&n, bias != RLX_NO_NODE);
    rlx_node in[3] = {a, b, bias};
    return make(g, "rlx_matmul_bias_act", IR_OP_MATMUL_BIAS_ACT, in, bias != RLX_NO_NODE ? 3 : 2, &n);
}

rlx_node rlx_matmul_ex(rlx_graph *g, rlx_node a, rlx_node b, unsigned flags, rlx_node bias, rlx_activation act) {
    const unsigned known = RLX_MATMUL_TRANSPOSE_A | RLX_MATMUL_TRANSPOSE_B;
    if (g && (flags & ~known)) {
        char why[96];
        snprintf(why, sizeof why, "unknown flags 0x%x (RLX_MATMUL_TRANSPOSE_A | RLX_MATMUL_TRANSPOSE_B)", flags & ~known);
        return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, "rlx_matmul_ex", why);
    }
    bool fused = bias != RLX_NO_NODE || act != RLX_ACT_NONE;
    ir_node n;
    node_init(&n, fused ? IR_OP_MATMUL_BIAS_ACT : IR_OP_MATMUL);
    ir_attr_set_matmul_transpose_b(&n, (flags & RLX_MATMUL_TRANSPOSE_B) != 0);
    ir_attr_set_matmul_transpose_a(&n, (flags & RLX_MATMUL_TRANSPOSE_A) != 0);
    if (fused) {
        ir_attr_set_matmul_act(&n, act);
        ir_attr_set_matmul_has_bias(&n, bias != RLX_NO_NODE);
    }
    rlx_node in[3] = {a, b, bias};
    return make(g, "rlx_matmul_ex", n.op, in, bias != RLX_NO_NODE ? 3 : 2, &n);
}

rlx_node rlx_dequant_matmul(rlx_graph *g, rlx_node x, rlx_node w) {
    rlx_node in[2] = {x, w};
    return make(g, "rlx_dequant_matmul", IR_OP_DEQUANT_MATMUL, in, 2, NULL);
}

/* ------------------------------------------------------------ reductions */

static rlx_node reduce(rlx_graph *g, const char *fn, ir_op op, rlx_node x, uint32_t mask, int keepdim) {
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return RLX_NO_NODE;
    int rank = rank_of(g, x);
    ir_node n;
    node_init(&n, op);
    ir_attr_set_reduce_axes(&n, mask ? mask : (rank ? (int64_t)((1ull << rank) - 1) : 0));
    ir_attr_set_reduce_keepdim(&n, keepdim != 0);
    return make(g, fn, op, &x, 1, &n);
}

rlx_node rlx_reduce_sum(rlx_graph *g, rlx_node x, uint32_t m, int k) { return reduce(g, "rlx_reduce_sum", IR_OP_REDUCE_SUM, x, m, k); }
rlx_node rlx_reduce_mean(rlx_graph *g, rlx_node x, uint32_t m, int k) { return reduce(g, "rlx_reduce_mean", IR_OP_REDUCE_MEAN, x, m, k); }
rlx_node rlx_reduce_max(rlx_graph *g, rlx_node x, uint32_t m, int k) { return reduce(g, "rlx_reduce_max", IR_OP_REDUCE_MAX, x, m, k); }
rlx_node rlx_reduce_min(rlx_graph *g, rlx_node x, uint32_t m, int k) { return reduce(g, "rlx_reduce_min", IR_OP_REDUCE_MIN, x, m, k); }
rlx_node rlx_reduce_prod(rlx_graph *g, rlx_node x, uint32_t m, int k) { return reduce(g, "rlx_reduce_prod", IR_OP_REDUCE_PROD, x, m, k); }

/* One axis attribute (the axis_op family of op_attrs.def; argmax/argmin: argreduce, with extra as keepdim). */
static rlx_node axis_op(rlx_graph *g, const char *fn, ir_op op, rlx_node x, int axis, int64_t extra) {
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return RLX_NO_NODE;
    int rank = rank_of(g, x);
    int a = axis;
    if (!normalize_axis(&a, rank)) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: axis %d is outside rank %d", fn, axis, rank);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    ir_node n;
    node_init(&n, op);
    if (op == IR_OP_ARGMAX || op == IR_OP_ARGMIN) ir_attr_set_argreduce_axis(&n, a); else ir_attr_set_axis_op_axis(&n, a);
    if (op == IR_OP_ARGMAX || op == IR_OP_ARGMIN) ir_attr_set_argreduce_keepdim(&n, extra);
    return make(g, fn, op, &x, 1, &n);
}

rlx_node rlx_argmax(rlx_graph *g, rlx_node x, int axis, int k) { return axis_op(g, "rlx_argmax", IR_OP_ARGMAX, x, axis, k != 0); }
rlx_node rlx_argmin(rlx_graph *g, rlx_node x, int axis, int k) { return axis_op(g, "rlx_argmin", IR_OP_ARGMIN, x, axis, k != 0); }
rlx_node rlx_softmax(rlx_graph *g, rlx_node x, int axis) { return axis_op(g, "rlx_softmax", IR_OP_SOFTMAX, x, axis, 0); }
rlx_node rlx_log_softmax(rlx_graph *g, rlx_node x, int axis) { return axis_op(g, "rlx_log_softmax", IR_OP_LOG_SOFTMAX, x, axis, 0); }
rlx_node rlx_cumsum(rlx_graph *g, rlx_node x, int axis) { return axis_op(g, "rlx_cumsum", IR_OP_CUMSUM, x, axis, 0); }

/* ----------------------------------------------------------------- norms */

static rlx_node norm(rlx_graph *g, const char *fn, ir_op op, rlx_node x, rlx_node gamma, rlx_node beta, float eps) {
    ir_node n;
    node_init(&n, op);
    ir_attr_set_norm_eps(&n, eps);
    ir_attr_set_norm_has_beta(&n, beta != RLX_NO_NODE);
    rlx_node in[3] = {x, gamma, beta};
    return make(g, fn, op, in, beta != RLX_NO_NODE ? 3 : 2, &n);
}

rlx_node rlx_layer_norm(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps) {
    return norm(g, "rlx_layer_norm", IR_OP_LAYER_NORM, x, gamma, beta, eps);
}

rlx_node rlx_rms_norm(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps) {
    return norm(g, "rlx_rms_norm", IR_OP_RMS_NORM, x, gamma, beta, eps);
}

/* --------------------------------------------------------- data movement */

rlx_node rlx_reshape(rlx_graph *g, rlx_node x, int rank, const int64_t *dims) {
    const char *fn = "rlx_reshape";
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return RLX_NO_NODE;
    if (rank < 0 || rank > IR_MAX_RANK) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: rank %d is outside [0, %d]", fn, rank, IR_MAX_RANK);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    if (rank > 0 && !dims) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "dims is NULL");
    ir_node n;
    node_init(&n, IR_OP_RESHAPE);
    n.shape.rank = rank;
    int infer = -1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] == RLX_DIM_INFER) {
            if (infer >= 0) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "more than one dim is -1");
            infer = i;
            n.shape.d[i] = ir_dim_const(1);
        } else if (!dim_from_public(g, dims[i], &n.shape.d[i])) {
            return fail_msg(g, RLX_STATUS_SHAPE, fn, "a dim is neither a size nor a symbol of this graph");
        }
    }
    /* Bounded target dims keep the products below (and the rule's) in range. */
    if (!ir_shape_size_ok(&n.shape))
        return fail_msg(g, RLX_STATUS_SHAPE, fn, "target shape is too large (over 2^48 elements)");
    if (infer >= 0) {
        /* inferred = numel(x) / numel(known dims), exact on the affine forms */
        const ir_shape *xs = &g->g.nodes[x].shape;
        int64_t num = 1, den = 1;
        ir_dim sym_left = ir_dim_const(1);
        int n_left = 0;
        ir_dim xsym[IR_MAX_RANK], osym[IR_MAX_RANK];
        int nx = 0, no = 0;
        for (int i = 0; i < xs->rank; i++) {
            if (ir_dim_is_static(xs->d[i])) num *= xs->d[i].k; else xsym[nx++] = xs->d[i];
        }
        for (int i = 0; i < rank; i++) {
            if (ir_dim_is_static(n.shape.d[i])) den *= n.shape.d[i].k; else osym[no++] = n.shape.d[i];
        }
        for (int i = 0; i < nx; i++) {
            int match = -1;
            for (int j = 0; j < no; j++) if (ir_dim_eq(xsym[i], osym[j])) { match = j; break; }
            if (match >= 0) { osym[match] = osym[--no]; continue; }
            sym_left = xsym[i];
            n_left++;
        }
        /* With a symbolic dim left, den may divide it in part: [L, 2*batch, 16] to
         * [-1, 32] infers L*batch (2*batch*16*L / 32). */
        int64_t common = den, rest = num;
        while (rest) { int64_t t = common % rest; common = rest, rest = t; }   /* gcd(den, num) */
        if (no > 0 || n_left > 1 || den == 0 || (num % den != 0 && !n_left) ||
            (n_left && !ir_dim_div_exact(sym_left, den / common, &sym_left))) {
            return fail_msg(g, RLX_STATUS_SHAPE, fn, "cannot infer the -1 dim: the element counts do not divide");
        }
        if (!n_left) n.shape.d[infer] = ir_dim_const(num / den);
        else if (!ir_dim_scale_checked(sym_left, num / common, &n.shape.d[infer]))
            return fail_msg(g, RLX_STATUS_SHAPE, fn, "the inferred dim overflows int64");
    }
    return make(g, fn, IR_OP_RESHAPE, &x, 1, &n);
}

rlx_node rlx_transpose(rlx_graph *g, rlx_node x, const int *perm) {
    const char *fn = "rlx_transpose";
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return RLX_NO_NODE;
    int rank = rank_of(g, x);
    if (rank > 0 && !perm) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "perm is NULL");
    ir_node n;
    node_init(&n, IR_OP_TRANSPOSE);
    for (int i = 0; i < rank; i++) ir_attr_set_transpose_perm(&n, i, perm[i]);
    return make(g, fn, IR_OP_TRANSPOSE, &x, 1, &n);
}

/* x's shape and the normalized axis of a slice, or NULL (the graph failed). */
static const ir_shape *slice_operand(rlx_graph *g, const char *fn, rlx_node x, int axis, int *a) {
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return NULL;
    const ir_shape *xs = &g->g.nodes[x].shape;
    *a = axis;
    if (!normalize_axis(a, xs->rank)) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: axis %d is outside rank %d", fn, axis, xs->rank);
        ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
        return NULL;
    }
    return xs;
}

/* rlx_slice and rlx_narrow (fn: which, for messages). */
static rlx_node slice_named(rlx_graph *g, const char *fn, rlx_node x, int axis, int64_t start, int64_t end, int64_t step) {
    int a;
    const ir_shape *xs = slice_operand(g, fn, x, axis, &a);
    if (!xs) return RLX_NO_NODE;
    if (step < 1) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "step must be >= 1");
    if (start < 0 || end < start) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: range [%lld, %lld) is invalid (need 0 <= start <= end)", fn,
                 (long long)start, (long long)end);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    /* docs/ops.md: end > dim is SHAPE even when the last index taken fits (a
     * step past the end); the rule, which sees only the length, checks that. */
    if (ir_dim_is_static(xs->d[a]) && end > xs->d[a].k) {
        rlx_fail(RLX_STATUS_SHAPE, "%s: end %lld is past axis %d of size %lld", fn, (long long)end, a,
                 (long long)xs->d[a].k);
        return ir_build_fail(g, RLX_STATUS_SHAPE);
    }
    ir_node n;
    node_init(&n, IR_OP_SLICE);
    ir_attr_set_slice_axis(&n, a);
    ir_attr_set_slice_start(&n, start);
    ir_attr_set_slice_step(&n, step);
    n.shape = *xs;
    int64_t span = end - start;   /* 0 <= start <= end: no overflow; ceil without the + step - 1 */
    n.shape.d[a] = ir_dim_const(span / step + (span % step != 0));
    return make(g, fn, IR_OP_SLICE, &x, 1, &n);
}

rlx_node rlx_slice(rlx_graph *g, rlx_node x, int axis, int64_t start, int64_t end, int64_t step) {
    return slice_named(g, "rlx_slice", x, axis, start, end, step);
}

rlx_node rlx_slice_last(rlx_graph *g, rlx_node x, int axis, int64_t length) {
    const char *fn = "rlx_slice_last";
    int a;
    const ir_shape *xs = slice_operand(g, fn, x, axis, &a);
    if (!xs) return RLX_NO_NODE;
    if (length < 1) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "length must be >= 1");
    ir_node n;
    node_init(&n, IR_OP_SLICE);
    ir_attr_set_slice_axis(&n, a);
    ir_attr_set_slice_start(&n, 0);   /* start: dim - length, set by the shape rule once dim is static */
    ir_attr_set_slice_step(&n, 1);
    ir_attr_set_slice_last(&n, length);
    n.shape = *xs;
    n.shape.d[a] = ir_dim_const(length);
    return make(g, fn, IR_OP_SLICE, &x, 1, &n);
}

rlx_node rlx_narrow(rlx_graph *g, rlx_node x, int axis, int64_t start, int64_t length) {
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_narrow: graph is NULL"); return RLX_NO_NODE; }
    if (length < 0) return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, "rlx_narrow", "length must be >= 0");
    if (start > INT64_MAX - length)   /* start + length would overflow: far past any axis */
        return fail_msg(g, RLX_STATUS_SHAPE, "rlx_narrow", "start + length overflows int64");
    return slice_named(g, "rlx_narrow", x, axis, start, start + length, 1);
}

rlx_node rlx_concat(rlx_graph *g, const rlx_node *xs, int count, int axis) {
    const char *fn = "rlx_concat";
    if (!g) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: graph is NULL", fn); return RLX_NO_NODE; }
    if (count < 1 || count > IR_MAX_INPUTS) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: needs 1 to %d inputs, got %d", fn, IR_MAX_INPUTS, count);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    if (!xs) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: xs is NULL with n %d", fn, count);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    if (!ir_build_inputs_ok(g, fn, xs, count)) return RLX_NO_NODE;
    int a = axis;
    if (!normalize_axis(&a, rank_of(g, xs[0]))) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: axis %d is outside rank %d", fn, axis, rank_of(g, xs[0]));
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    ir_node n;
    node_init(&n, IR_OP_CONCAT);
    ir_attr_set_axis_op_axis(&n, a);
    return make(g, fn, IR_OP_CONCAT, xs, count, &n);
}

rlx_node rlx_expand(rlx_graph *g, rlx_node x, int rank, const int64_t *dims) {
    const char *fn = "rlx_expand";
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return RLX_NO_NODE;
    ir_node n;
    node_init(&n, IR_OP_EXPAND);
    if (!shape_from_public(g, fn, "target", rank, dims, &n.shape)) return RLX_NO_NODE;
    return make(g, fn, IR_OP_EXPAND, &x, 1, &n);
}

/* --------------------------------------------------------------- indexing */

rlx_node rlx_gather_rows(rlx_graph *g, rlx_node table, rlx_node ids) {
    rlx_node in[2] = {table, ids};
    return make(g, "rlx_gather_rows", IR_OP_GATHER_ROWS, in, 2, NULL);
}

rlx_node rlx_gather(rlx_graph *g, rlx_node x, rlx_node index, int axis) {
    const char *fn = "rlx_gather";
    rlx_node in[2] = {x, index};
    if (!ir_build_inputs_ok(g, fn, in, 2)) return RLX_NO_NODE;
    int a = axis;
    if (!normalize_axis(&a, rank_of(g, x))) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: axis %d is outside rank %d", fn, axis, rank_of(g, x));
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    ir_node n;
    node_init(&n, IR_OP_GATHER);
    ir_attr_set_axis_op_axis(&n, a);
    return make(g, fn, IR_OP_GATHER, in, 2, &n);
}

rlx_node rlx_scatter_add_rows(rlx_graph *g, rlx_node base, rlx_node ids, rlx_node rows) {
    rlx_node in[3] = {base, ids, rows};
    return make(g, "rlx_scatter_add_rows", IR_OP_SCATTER_ADD_ROWS, in, 3, NULL);
}

rlx_node rlx_scatter_add(rlx_graph *g, rlx_node base, rlx_node index, rlx_node src, int axis) {
    const char *fn = "rlx_scatter_add";
    rlx_node in[3] = {base, index, src};
    if (!ir_build_inputs_ok(g, fn, in, 3)) return RLX_NO_NODE;
    int a = axis;
    if (!normalize_axis(&a, rank_of(g, base))) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: axis %d is outside rank %d", fn, axis, rank_of(g, base));
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    ir_node n;
    node_init(&n, IR_OP_SCATTER_ADD);
    ir_attr_set_axis_op_axis(&n, a);
    return make(g, fn, IR_OP_SCATTER_ADD, in, 3, &n);
}

rlx_status rlx_topk(rlx_graph *g, rlx_node x, int k, rlx_node *values, rlx_node *indices) {
    const char *fn = "rlx_topk";
    if (values) *values = RLX_NO_NODE;
    if (indices) *indices = RLX_NO_NODE;
    if (!ir_build_inputs_ok(g, fn, &x, 1)) return g && g->g.first_error ? g->g.first_error : RLX_STATUS_INVALID_ARGUMENT;
    if (!values && !indices) {
        fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "values and indices are both NULL");
        return RLX_STATUS_INVALID_ARGUMENT;
    }
    ir_node n;
    node_init(&n, IR_OP_TOPK_VALUES);
    ir_attr_set_topk_k(&n, k);
    if (values) {
        *values = make(g, fn, IR_OP_TOPK_VALUES, &x, 1, &n);
        if (*values == RLX_NO_NODE) return g->g.first_error;
    }
    if (indices) {
        *indices = make(g, fn, IR_OP_TOPK_INDICES, &x, 1, &n);
        if (*indices == RLX_NO_NODE) return g->g.first_error;
    }
    return RLX_OK;
}

/* ------------------------------------------------------------- nn blocks */

rlx_node rlx_attention_kv(rlx_graph *g, rlx_node q, rlx_node k, rlx_node v, rlx_mask mask_kind, rlx_node mask,
                          float scale, rlx_node kv_len) {
    const char *fn = kv_len == RLX_NO_NODE ? "rlx_attention" : "rlx_attention_kv";
    rlx_node in[5] = {q, k, v, mask, kv_len};
    bool additive = mask_kind == RLX_MASK_ADDITIVE;
    if (!ir_build_inputs_ok(g, fn, in, 3)) return RLX_NO_NODE;
    if (additive && mask == RLX_NO_NODE && g->g.first_error == RLX_OK)
        return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "RLX_MASK_ADDITIVE needs a mask tensor, got RLX_NO_NODE");
    if (additive && !ir_build_inputs_ok(g, fn, in + 3, 1)) return RLX_NO_NODE;
    if (!additive && mask != RLX_NO_NODE)
        return fail_msg(g, RLX_STATUS_INVALID_ARGUMENT, fn, "a mask tensor needs RLX_MASK_ADDITIVE");
    int n_in = additive ? 4 : 3;
    if (kv_len != RLX_NO_NODE) {
        if (!ir_build_inputs_ok(g, fn, &kv_len, 1)) return RLX_NO_NODE;
        in[n_in++] = kv_len;
    }
    ir_node n;
    node_init(&n, IR_OP_ATTENTION);
    ir_attr_set_attention_mask(&n, mask_kind);
    ir_attr_set_attention_has_kv_len(&n, kv_len != RLX_NO_NODE);
    ir_attr_set_attention_scale(&n, scale);
    if (isnan(scale) || isinf(scale)) {   /* NaN is not "<= 0": it would pass for the default */
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: scale %g is not finite (<= 0: 1/sqrt(D))", fn, (double)scale);
        return ir_build_fail(g, RLX_STATUS_INVALID_ARGUMENT);
    }
    if (!(scale > 0) && g->g.nodes[q].shape.rank == 4) {   /* another rank: the shape rule names q */
        ir_dim d = g->g.nodes[q].shape.rank == 4 ? g->g.nodes[q].shape.d[3] : ir_dim_const(0);
        if (!ir_dim_is_static(d) || d.k <= 0)
            return fail_msg(g, RLX_STATUS_SHAPE, fn, "default scale needs a static head dim D > 0 (pass a scale)");
        ir_attr_set_attention_scale(&n, 1.0 / sqrt((double)d.k));
    }
    return make(g, fn, IR_OP_ATTENTION, in, n_in, &n);
}

rlx_node rlx_attention(rlx_graph *g, rlx_node q, rlx_node k, rlx_node v, rlx_mask mask_kind, rlx_node mask,
                       float scale) {
    return rlx_attention_kv(g, q, k, v, mask_kind, mask, scale, RLX_NO_NODE);
}

rlx_node rlx_assign(rlx_graph *g, rlx_node param, rlx_node value) {
    rlx_node in[2] = {param, value};
    return make(g, "rlx_assign", IR_OP_ASSIGN, in, 2, NULL);
}

rlx_node rlx_kv_write(rlx_graph *g, rlx_node cache, rlx_node rows, rlx_node pos) {
    rlx_node in[3] = {cache, rows, pos};
    return make(g, "rlx_kv_write", IR_OP_KV_WRITE, in, 3, NULL);
}

rlx_node rlx_rope_scaled(rlx_graph *g, rlx_node x, rlx_node offset, rlx_rope_style style, float theta, int rotary_dims,
                         rlx_node freq_factors) {
    const char *fn = freq_factors == RLX_NO_NODE ? "rlx_rope" : "rlx_rope_scaled";
    rlx_node in[3] = {x};
    int n_in = 1;
    if (offset != RLX_NO_NODE) in[n_in++] = offset;
    if (freq_factors != RLX_NO_NODE) in[n_in++] = freq_factors;
    if (!ir_build_inputs_ok(g, fn, in, n_in)) return RLX_NO_NODE;
    ir_node n;
    node_init(&n, IR_OP_ROPE);
    ir_attr_set_rope_style(&n, style);
    ir_attr_set_rope_rotary_dims(&n, rotary_dims);
    ir_attr_set_rope_has_offset(&n, offset != RLX_NO_NODE);
    ir_attr_set_rope_has_freq_factors(&n, freq_factors != RLX_NO_NODE);
    ir_attr_set_rope_theta(&n, theta);
    if (rotary_dims == 0 && rank_of(g, x) == 4) {   /* another rank: the shape rule names x */
        const ir_shape *xs = &g->g.nodes[x].shape;
        ir_dim d = xs->rank == 4 ? xs->d[3] : ir_dim_const(0);
        if (!ir_dim_is_static(d)) return fail_msg(g, RLX_STATUS_SHAPE, fn, "rotary_dims 0 needs a static head dim");
        ir_attr_set_rope_rotary_dims(&n, d.k);
    }
    return make(g, fn, IR_OP_ROPE, in, n_in, &n);
}

rlx_node rlx_rope(rlx_graph *g, rlx_node x, rlx_node offset, rlx_rope_style style, float theta, int rotary_dims) {
    return rlx_rope_scaled(g, x, offset, style, theta, rotary_dims, RLX_NO_NODE);
}

rlx_node rlx_softmax_cross_entropy(rlx_graph *g, rlx_node logits, rlx_node labels) {
    rlx_node in[2] = {logits, labels};
    return make(g, "rlx_softmax_cross_entropy", IR_OP_SOFTMAX_CE, in, 2, NULL);
}

rlx_node rlx_softmax_cross_entropy_grad(rlx_graph *g, rlx_node logits, rlx_node labels) {
    rlx_node in[2] = {logits, labels};
    return make(g, "rlx_softmax_cross_entropy_grad", IR_OP_SOFTMAX_CE_GRAD, in, 2, NULL);
}
