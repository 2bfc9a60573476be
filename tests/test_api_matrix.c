/*
 * test_api_matrix.c — the bad-argument matrix of the public API: a table of
 * misuse cases, one or more rows per function in include/rlx.h (NULL handles
 * and pointers, negative and huge sizes, wrong dtypes, unknown names, calls
 * in the wrong order). Each row gives the status the call must return and a
 * substring its message must contain, so a message that does not say which
 * argument is wrong fails here. Functions that cannot fail (the _free(NULL)
 * no-ops, rlx_version, the dtype queries) get rows asserting their
 * documented value, with no message required.
 *
 * api_matrix_covers_rlx_h parses include/rlx.h and fails listing every
 * declared function without a row, so a new public function cannot skip the
 * matrix. Freed-then-used handles are out of scope (undefined, as in C).
 */
#include "harness.h"
#include "tiny_model.h"
#include "core/core.h"
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Outcomes of calls that return no rlx_status. */
#define RETURNED_FAILURE ((rlx_status)1000)   /* its documented failure value (NULL, -1, RLX_NO_NODE) */
#define SUCCEEDED        ((rlx_status)1001)   /* a real node / pointer / count: the misuse was accepted */

static const char *outcome_name(rlx_status s) {
    if (s == RETURNED_FAILURE) return "its failure value";
    if (s == SUCCEEDED) return "a success value";
    return rlx_status_name(s);
}

/* What one case works on: a fresh graph with a few sources, and on request
 * a fresh exec (compiled, optionally run) and the shared tiny model. */
typedef struct fixture {
    rlx_graph *g;
    rlx_node   x, xi, xb, q, k, v, q3, pos, cache, w48;
    rlx_exec  *e;            /* fx_exec: x [2,3,4] * param w [4] -> y */
    rlx_model *model;        /* shared by all cases; misuse must leave it usable */
    const char *model_path;
} fixture;

typedef rlx_status (*case_fn)(fixture *f, const void *arg);

typedef struct matrix_row {
    const char *fn;          /* the rlx.h function the row misuses */
    const char *what;
    case_fn     run;
    const void *arg;
    rlx_status  want;
    const char *msg;         /* substring of rlx_last_error(); NULL for value rows (want RLX_OK) */
} matrix_row;

#define MAX_ROWS 512
static matrix_row rows[MAX_ROWS];
static int n_rows, rows_dropped;

static void matrix_add(const char *fn, const char *what, case_fn run, const void *arg, rlx_status want, const char *msg) {
    if (n_rows < MAX_ROWS) rows[n_rows++] = (matrix_row){fn, what, run, arg, want, msg};
    else rows_dropped++;
}

/* One row: MISUSE(fn, tag, want, "substring") { body returning an outcome } */
#define MISUSE(FN, TAG, WANT, MSG)                                                     \
    static rlx_status misuse_##FN##_##TAG(fixture *f, const void *arg);               \
    __attribute__((constructor)) static void register_##FN##_##TAG(void) {            \
        matrix_add(#FN, #TAG, misuse_##FN##_##TAG, NULL, WANT, MSG);                   \
    }                                                                                  \
    static rlx_status misuse_##FN##_##TAG(fixture *f, const void *arg)

#define INV   RLX_STATUS_INVALID_ARGUMENT
#define SHAPE RLX_STATUS_SHAPE
/* A value row: RLX_OK when the documented value came back. */
#define VALUE(cond) ((cond) ? RLX_OK : RLX_STATUS_INTERNAL)

/* ------------------------------------------------------------ helpers */

static const int64_t d234[3] = {2, 3, 4}, dq[4] = {1, 2, 4, 8}, dq3[3] = {2, 4, 8}, d1[1] = {1}, dc[4] = {1, 2, 16, 8},
                     d48[2] = {4, 8};

static void fx_graph(fixture *f) {
    rlx_graph *g = f->g = rlx_graph_new();
    f->x = rlx_input(g, "x", RLX_F32, 3, d234);
    f->xi = rlx_input(g, "xi", RLX_I32, 3, d234);
    f->xb = rlx_input(g, "xb", RLX_BOOL, 3, d234);
    f->q = rlx_input(g, "q", RLX_F32, 4, dq);
    f->k = rlx_input(g, "k", RLX_F32, 4, dq);
    f->v = rlx_input(g, "v", RLX_F32, 4, dq);
    f->q3 = rlx_input(g, "q3", RLX_F32, 3, dq3);
    f->pos = rlx_input(g, "pos", RLX_I32, 1, d1);
    f->cache = rlx_param(g, "cache", RLX_F32, 4, dc);
    f->w48 = rlx_param(g, "w48", RLX_F32, 2, d48);
}

/* The builder call's outcome: the graph's sticky status when it failed. */
static rlx_status node_outcome(fixture *f, rlx_node n) {
    if (n != RLX_NO_NODE) return SUCCEEDED;
    rlx_status st = rlx_graph_status(f->g);
    return st == RLX_OK ? RETURNED_FAILURE : st;
}

static rlx_status null_graph_outcome(rlx_node n) { return n == RLX_NO_NODE ? RETURNED_FAILURE : SUCCEEDED; }

static rlx_status ptr_outcome(char *p) {
    if (!p) return RETURNED_FAILURE;
    free(p);
    return SUCCEEDED;
}

static rlx_status count_outcome(int n) { return n == -1 ? RETURNED_FAILURE : SUCCEEDED; }

/* A fresh exec of x [2,3,4] * w [4] -> y on the CPU; ran: run once. */
static rlx_exec *fx_exec(fixture *f, bool ran) {
    rlx_graph *g = rlx_graph_new();
    rlx_node x = rlx_input(g, "x", RLX_F32, 3, d234);
    rlx_output(g, "y", rlx_mul(g, x, rlx_param(g, "w", RLX_F32, 1, d234 + 2)));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(g, &o, &e);
    rlx_graph_free(g);
    if (st != RLX_OK) return NULL;
    f->e = e;
    static float data[24];
    rlx_tensor t = {.name = "x", .dtype = RLX_F32, .rank = 3, .dims = {2, 3, 4}, .data = data, .bytes = sizeof data};
    if (ran && rlx_exec_run(e, &t, 1) != RLX_OK) return NULL;
    return e;
}

static rlx_tensor x_tensor(void) {
    static float data[24];
    return (rlx_tensor){.name = "x", .dtype = RLX_F32, .rank = 3, .dims = {2, 3, 4}, .data = data, .bytes = sizeof data};
}

/* An exec could not be made: an outcome no row wants, so the row fails visibly. */
#define NEED_EXEC(e) do { if (!(e)) return RLX_STATUS_INTERNAL; } while (0)
#define NEED_MODEL() do { if (!f->model) return RLX_STATUS_INTERNAL; } while (0)

/* ------------------------------------------------- status, version, log */

MISUSE(rlx_last_error, empty_when_none, RLX_OK, NULL) {
    (void)f; (void)arg;
    rlx_clear_error();
    return VALUE(rlx_last_error() != NULL && rlx_last_error()[0] == 0);
}
MISUSE(rlx_status_name, unknown_status, RLX_OK, NULL) {
    (void)f; (void)arg;
    return VALUE(strcmp(rlx_status_name((rlx_status)1234), "RLX_STATUS_UNKNOWN") == 0);
}
MISUSE(rlx_version, matches_macros, RLX_OK, NULL) {
    (void)f; (void)arg;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", RLX_VERSION_MAJOR, RLX_VERSION_MINOR, RLX_VERSION_PATCH);
    return VALUE(strcmp(rlx_version(), want) == 0);
}
static int log_calls;
static void count_log(rlx_log_level l, const char *m, void *u) { (void)l; (void)m; (void)u; log_calls++; }
MISUSE(rlx_set_log_callback, level_past_off_drops_all, RLX_OK, NULL) {
    (void)f; (void)arg;
    log_calls = 0;
    rlx_set_log_callback(count_log, NULL, (rlx_log_level)99);
    rlx_log_msg(RLX_LOG_ERROR, "matrix: dropped");
    rlx_set_log_callback(NULL, NULL, (rlx_log_level)-5);   /* NULL: the default, whatever the level */
    return VALUE(log_calls == 0);
}

/* ------------------------------------------------------------- dtypes */

MISUSE(rlx_dtype_name, unknown_is_question_mark, RLX_OK, NULL) {
    (void)f; (void)arg;
    return VALUE(strcmp(rlx_dtype_name((rlx_dtype)99), "?") == 0 && strcmp(rlx_dtype_name((rlx_dtype)-1), "?") == 0);
}
MISUSE(rlx_dtype_size, unknown_and_block_are_0, RLX_OK, NULL) {
    (void)f; (void)arg;
    return VALUE(rlx_dtype_size((rlx_dtype)99) == 0 && rlx_dtype_size((rlx_dtype)-1) == 0 && rlx_dtype_size(RLX_Q4_K) == 0);
}
MISUSE(rlx_dtype_is_quantized, unknown_is_0, RLX_OK, NULL) {
    (void)f; (void)arg;
    return VALUE(rlx_dtype_is_quantized((rlx_dtype)99) == 0 && rlx_dtype_is_quantized(RLX_DTYPE_COUNT) == 0 &&
                 rlx_dtype_is_quantized(RLX_Q8_0) == 1);
}
MISUSE(rlx_tensor_bytes, bad_shapes_are_0, RLX_OK, NULL) {
    (void)f; (void)arg;
    int64_t neg[2] = {2, -3}, huge[2] = {INT64_MAX, INT64_MAX}, q33[1] = {33};
    return VALUE(rlx_tensor_bytes(RLX_F32, -1, d234) == 0 && rlx_tensor_bytes(RLX_F32, 9, d234) == 0 &&
                 rlx_tensor_bytes(RLX_F32, 2, NULL) == 0 && rlx_tensor_bytes(RLX_F32, 2, neg) == 0 &&
                 rlx_tensor_bytes(RLX_F32, 2, huge) == 0 && rlx_tensor_bytes(RLX_Q4_0, 1, q33) == 0 &&
                 rlx_tensor_bytes((rlx_dtype)99, 1, d1) == 0 && rlx_tensor_bytes(RLX_F64, 0, NULL) == 8);
}

/* -------------------------------------------------------------- graph */

MISUSE(rlx_graph_new, empty_graph, RLX_OK, NULL) {
    (void)f; (void)arg;
    rlx_graph *g = rlx_graph_new();
    rlx_status st = VALUE(g && rlx_graph_node_count(g) == 0 && rlx_graph_status(g) == RLX_OK);
    rlx_graph_free(g);
    return st;
}
MISUSE(rlx_graph_free, null_is_noop, RLX_OK, NULL) { (void)f; (void)arg; rlx_graph_free(NULL); return RLX_OK; }
MISUSE(rlx_graph_status, null_graph, INV, "rlx_graph_status: graph is NULL") { (void)f; (void)arg; return rlx_graph_status(NULL); }
MISUSE(rlx_symbol, null_graph, RETURNED_FAILURE, "rlx_symbol: graph is NULL") {
    (void)f; (void)arg;
    return rlx_symbol(NULL, "s") == RLX_DIM_INFER ? RETURNED_FAILURE : SUCCEEDED;
}
MISUSE(rlx_symbol, empty_name, INV, "rlx_symbol: name is empty") {
    (void)arg;
    return rlx_symbol(f->g, "") == RLX_DIM_INFER ? rlx_graph_status(f->g) : SUCCEEDED;
}
MISUSE(rlx_symbol, fifth_symbol, RLX_STATUS_UNSUPPORTED, "at most 4 symbols") {
    (void)arg;
    const char *names[5] = {"a", "b", "c", "d", "e"};
    int64_t s = 0;
    for (int i = 0; i < 5; i++) s = rlx_symbol(f->g, names[i]);
    return s == RLX_DIM_INFER ? rlx_graph_status(f->g) : SUCCEEDED;
}
MISUSE(rlx_graph_dump, null_graph, RETURNED_FAILURE, "rlx_graph_dump: graph is NULL") {
    (void)f; (void)arg;
    return ptr_outcome(rlx_graph_dump(NULL));
}
MISUSE(rlx_graph_node_count, null_graph_is_minus_1, RETURNED_FAILURE, "rlx_graph_node_count: graph is NULL") {
    (void)f; (void)arg;
    return count_outcome(rlx_graph_node_count(NULL));
}

/* ------------------------------------------------------------ sources */

MISUSE(rlx_input, null_graph, RETURNED_FAILURE, "rlx_input: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_input(NULL, "a", RLX_F32, 3, d234));
}
MISUSE(rlx_input, null_name, INV, "rlx_input: name is NULL") {
    (void)arg; return node_outcome(f, rlx_input(f->g, NULL, RLX_F32, 3, d234));
}
MISUSE(rlx_input, rank_9, SHAPE, "rank 9 is outside [0, 8]") {
    (void)arg; int64_t d[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}; return node_outcome(f, rlx_input(f->g, "a", RLX_F32, 9, d));
}
MISUSE(rlx_input, negative_rank, SHAPE, "rank -1 is outside") {
    (void)arg; return node_outcome(f, rlx_input(f->g, "a", RLX_F32, -1, d234));
}
MISUSE(rlx_input, null_dims, INV, "rlx_input 'a': dims is NULL") {
    (void)arg; return node_outcome(f, rlx_input(f->g, "a", RLX_F32, 2, NULL));
}
MISUSE(rlx_input, unknown_dtype, INV, "unknown dtype 42") {
    (void)arg; return node_outcome(f, rlx_input(f->g, "a", (rlx_dtype)42, 3, d234));
}
MISUSE(rlx_input, duplicate_name, INV, "rlx_input 'x': the name is already used") {
    (void)arg; return node_outcome(f, rlx_input(f->g, "x", RLX_F32, 3, d234));
}
MISUSE(rlx_input, negative_dim, SHAPE, "dim 1 = -7 is neither a size nor a symbol") {
    (void)arg; int64_t d[2] = {3, -7}; return node_outcome(f, rlx_input(f->g, "a", RLX_F32, 2, d));
}
MISUSE(rlx_input, rank_0_null_dims_is_a_scalar, RLX_OK, NULL) {
    (void)arg;
    rlx_node n = rlx_input(f->g, "s", RLX_F32, 0, NULL);
    int rank = -1;
    return VALUE(n != RLX_NO_NODE && rlx_node_shape(f->g, n, NULL, &rank, NULL) == RLX_OK && rank == 0);
}
MISUSE(rlx_param, symbolic_dim, SHAPE, "param 'p': params need static dims") {
    (void)arg;
    int64_t d[1] = {rlx_symbol(f->g, "seq")};
    return node_outcome(f, rlx_param(f->g, "p", RLX_F32, 1, d));
}
MISUSE(rlx_param, null_name, INV, "rlx_param: name is NULL") {
    (void)arg; return node_outcome(f, rlx_param(f->g, NULL, RLX_F32, 1, d1));
}
MISUSE(rlx_param, null_graph, RETURNED_FAILURE, "rlx_param: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_param(NULL, "p", RLX_F32, 1, d1));
}
MISUSE(rlx_constant, null_data, INV, "rlx_constant: data is NULL") {
    (void)arg; return node_outcome(f, rlx_constant(f->g, RLX_F32, 3, d234, NULL));
}
MISUSE(rlx_constant, unknown_dtype, INV, "rlx_constant: unknown dtype 99") {
    (void)arg; return node_outcome(f, rlx_constant(f->g, (rlx_dtype)99, 1, d1, d1));
}
MISUSE(rlx_constant, partial_block, SHAPE, "rlx_constant: a q4_0 constant needs a last dim that is a whole number of blocks") {
    (void)arg; int64_t d[1] = {33}; static char data[64]; return node_outcome(f, rlx_constant(f->g, RLX_Q4_0, 1, d, data));
}
MISUSE(rlx_constant, too_large, SHAPE, "rlx_constant: 281474976710656 bytes is too large") {
    (void)arg; int64_t d[2] = {1LL << 30, 1LL << 16}; static char data[4]; return node_outcome(f, rlx_constant(f->g, RLX_F32, 2, d, data));
}
MISUSE(rlx_constant, null_graph, RETURNED_FAILURE, "rlx_constant: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_constant(NULL, RLX_F32, 1, d1, d1));
}
MISUSE(rlx_scalar, unknown_dtype, INV, "rlx_scalar: unknown dtype 77") {
    (void)arg; return node_outcome(f, rlx_scalar(f->g, (rlx_dtype)77, 1.0));
}
MISUSE(rlx_scalar, null_graph, RETURNED_FAILURE, "rlx_scalar: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_scalar(NULL, RLX_F32, 1.0));
}
MISUSE(rlx_output, null_name, INV, "rlx_output: name is NULL") { (void)arg; return rlx_output(f->g, NULL, f->x); }
MISUSE(rlx_output, foreign_node, INV, "node 9999, which is not in this graph") { (void)arg; return rlx_output(f->g, "y", 9999); }
MISUSE(rlx_output, name_of_an_input, INV, "rlx_output 'x': the name is already used") { (void)arg; return rlx_output(f->g, "x", f->x); }
MISUSE(rlx_output, null_graph, INV, "rlx_output: graph is NULL") { (void)f; (void)arg; return rlx_output(NULL, "y", 0); }
MISUSE(rlx_set_name, null_name, INV, "rlx_set_name: name is NULL") {
    (void)arg; return rlx_set_name(f->g, rlx_exp(f->g, f->x), NULL);
}
MISUSE(rlx_set_name, empty_name, INV, "rlx_set_name: name is empty") {
    (void)arg; return rlx_set_name(f->g, rlx_exp(f->g, f->x), "");
}
MISUSE(rlx_set_name, an_input, INV, "is an input or param") { (void)arg; return rlx_set_name(f->g, f->x, "n"); }
MISUSE(rlx_set_name, foreign_node, INV, "node 9999, which is not in this graph") { (void)arg; return rlx_set_name(f->g, 9999, "n"); }

/* ------------------------------------------- elementwise families */

typedef rlx_node (*binary_fn)(rlx_graph *, rlx_node, rlx_node);
typedef rlx_node (*unary_fn)(rlx_graph *, rlx_node);
typedef struct { const char *name; binary_fn fn; } binary_entry;
typedef struct { const char *name; unary_fn fn; } unary_entry;

#define B(fn) {#fn, fn}
static const binary_entry binaries[] = {
    B(rlx_add), B(rlx_sub), B(rlx_mul), B(rlx_div), B(rlx_max), B(rlx_min), B(rlx_pow), B(rlx_gelu_grad), B(rlx_gelu_tanh_grad),
    B(rlx_eq), B(rlx_ne), B(rlx_lt), B(rlx_le), B(rlx_gt), B(rlx_ge),
};
static const unary_entry unaries[] = {
    B(rlx_relu), B(rlx_sigmoid), B(rlx_tanh), B(rlx_exp), B(rlx_log), B(rlx_sqrt), B(rlx_rsqrt), B(rlx_neg),
    B(rlx_abs), B(rlx_gelu), B(rlx_gelu_tanh), B(rlx_silu), B(rlx_round), B(rlx_sin), B(rlx_cos), B(rlx_tan), B(rlx_atan), B(rlx_erf),
};
#undef B

static rlx_status binary_null_graph(fixture *f, const void *arg) {
    (void)f; return null_graph_outcome(((const binary_entry *)arg)->fn(NULL, 0, 0));
}
static rlx_status binary_no_node(fixture *f, const void *arg) {
    return node_outcome(f, ((const binary_entry *)arg)->fn(f->g, f->x, RLX_NO_NODE));
}
static rlx_status binary_foreign(fixture *f, const void *arg) {
    return node_outcome(f, ((const binary_entry *)arg)->fn(f->g, 4242, f->x));
}
static rlx_status binary_dtypes(fixture *f, const void *arg) {
    return node_outcome(f, ((const binary_entry *)arg)->fn(f->g, f->x, f->xi));
}
static rlx_status binary_no_broadcast(fixture *f, const void *arg) {
    return node_outcome(f, ((const binary_entry *)arg)->fn(f->g, f->x, f->q3));
}
static rlx_status unary_null_graph(fixture *f, const void *arg) {
    (void)f; return null_graph_outcome(((const unary_entry *)arg)->fn(NULL, 0));
}
static rlx_status unary_no_node(fixture *f, const void *arg) {
    return node_outcome(f, ((const unary_entry *)arg)->fn(f->g, RLX_NO_NODE));
}
static rlx_status unary_foreign(fixture *f, const void *arg) {
    return node_outcome(f, ((const unary_entry *)arg)->fn(f->g, -7));
}
static rlx_status unary_bool(fixture *f, const void *arg) {
    return node_outcome(f, ((const unary_entry *)arg)->fn(f->g, f->xb));
}

__attribute__((constructor)) static void register_families(void) {
    for (size_t i = 0; i < RLX_ARRAY_LEN(binaries); i++) {
        const binary_entry *b = &binaries[i];
        matrix_add(b->name, "null_graph", binary_null_graph, b, RETURNED_FAILURE, "graph is NULL");
        matrix_add(b->name, "no_node_input", binary_no_node, b, INV, "input 1 is RLX_NO_NODE");
        matrix_add(b->name, "foreign_node", binary_foreign, b, INV, "input 0 is node 4242, which is not in this graph");
        matrix_add(b->name, "f32_with_i32", binary_dtypes, b, SHAPE, "operand dtypes differ: f32 and i32");
        matrix_add(b->name, "no_broadcast", binary_no_broadcast, b, SHAPE, "broadcast");
    }
    for (size_t i = 0; i < RLX_ARRAY_LEN(unaries); i++) {
        const unary_entry *u = &unaries[i];
        matrix_add(u->name, "null_graph", unary_null_graph, u, RETURNED_FAILURE, "graph is NULL");
        matrix_add(u->name, "no_node_input", unary_no_node, u, INV, "input 0 is RLX_NO_NODE");
        matrix_add(u->name, "foreign_node", unary_foreign, u, INV, "input 0 is node -7, which is not in this graph");
        matrix_add(u->name, "bool_input", unary_bool, u, SHAPE, "bool");
    }
}

MISUSE(rlx_where, float_condition, SHAPE, "cond") { (void)arg; return node_outcome(f, rlx_where(f->g, f->x, f->x, f->x)); }
MISUSE(rlx_where, null_graph, RETURNED_FAILURE, "rlx_where: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_where(NULL, 0, 1, 2));
}
MISUSE(rlx_fma, dtypes_differ, SHAPE, "dtypes differ") { (void)arg; return node_outcome(f, rlx_fma(f->g, f->x, f->x, f->xi)); }
MISUSE(rlx_clamp, lo_above_hi, INV, "lo 2 must be <= hi 1") { (void)arg; return node_outcome(f, rlx_clamp(f->g, f->x, 2.0, 1.0)); }
MISUSE(rlx_clamp, nan_bound, INV, "lo nan must be <= hi 1") { (void)arg; return node_outcome(f, rlx_clamp(f->g, f->x, NAN, 1.0)); }
MISUSE(rlx_cast, unknown_dtype, INV, "unknown target dtype 99") { (void)arg; return node_outcome(f, rlx_cast(f->g, f->x, (rlx_dtype)99)); }
MISUSE(rlx_cast, to_block_type, SHAPE, "cannot cast to q4_0") { (void)arg; return node_outcome(f, rlx_cast(f->g, f->x, RLX_Q4_0)); }

/* ------------------------------------------------------------- matmul */

MISUSE(rlx_dequant_matmul, inner_dims_differ, SHAPE, "dequant_matmul") {
    (void)arg; return node_outcome(f, rlx_dequant_matmul(f->g, f->x, f->w48));   /* K 4 vs 8 */
}
MISUSE(rlx_dequant_matmul, integer_weight, SHAPE, "i32") {
    (void)arg; return node_outcome(f, rlx_dequant_matmul(f->g, f->x, f->xi));
}
MISUSE(rlx_matmul, inner_dims_differ, SHAPE, "inner dims differ") { (void)arg; return node_outcome(f, rlx_matmul(f->g, f->x, f->x, 0)); }
MISUSE(rlx_matmul, rank_0, SHAPE, "rank >= 2") {
    (void)arg; return node_outcome(f, rlx_matmul(f->g, rlx_scalar(f->g, RLX_F32, 1), f->x, 0));
}
MISUSE(rlx_matmul_bias_act, unknown_activation, INV, "activation 99") {
    (void)arg;
    rlx_node x = rlx_input(f->g, "x8", RLX_F32, 2, d48);
    return node_outcome(f, rlx_matmul_bias_act(f->g, x, f->w48, 1, RLX_NO_NODE, (rlx_activation)99));
}
MISUSE(rlx_matmul_bias_act, bias_wrong_size, SHAPE, "bias") {
    (void)arg;
    rlx_node b = rlx_input(f->g, "b", RLX_F32, 1, d234);   /* [2], N is 8 */
    rlx_node x = rlx_input(f->g, "x8", RLX_F32, 2, d48);
    return node_outcome(f, rlx_matmul_bias_act(f->g, x, f->w48, 1, b, RLX_ACT_RELU));
}

MISUSE(rlx_matmul_ex, unknown_flag, INV, "rlx_matmul_ex: unknown flags 0x8") {
    (void)arg; return node_outcome(f, rlx_matmul_ex(f->g, f->w48, f->w48, 8u, RLX_NO_NODE, RLX_ACT_NONE));
}
MISUSE(rlx_matmul_ex, transposed_inner_dims_differ, SHAPE, "inner dims differ: [4,8] x [4,8] (a and b transposed)") {
    (void)arg;   /* a = w48 [4, 8] stored [K, M]: K 4; b = x8 [4, 8] stored [N, K]: K 8 */
    rlx_node x = rlx_input(f->g, "x8", RLX_F32, 2, d48);
    return node_outcome(f, rlx_matmul_ex(f->g, f->w48, x, RLX_MATMUL_TRANSPOSE_A | RLX_MATMUL_TRANSPOSE_B, RLX_NO_NODE,
                                         RLX_ACT_NONE));
}
MISUSE(rlx_matmul_ex, null_graph, RETURNED_FAILURE, "rlx_matmul_ex: graph is NULL") {
    (void)arg; return null_graph_outcome(rlx_matmul_ex(NULL, f->x, f->x, 0, RLX_NO_NODE, RLX_ACT_NONE));
}
MISUSE(rlx_matmul_ex, unknown_activation, INV, "activation 99") {
    (void)arg; return node_outcome(f, rlx_matmul_ex(f->g, f->w48, f->w48, RLX_MATMUL_TRANSPOSE_A, RLX_NO_NODE, (rlx_activation)99));
}

/* --------------------------------------------------------- reductions */

typedef rlx_node (*reduce_fn)(rlx_graph *, rlx_node, uint32_t, int);
typedef struct { const char *name; reduce_fn fn; } reduce_entry;
static const reduce_entry reductions[] = {
    {"rlx_reduce_sum", rlx_reduce_sum}, {"rlx_reduce_mean", rlx_reduce_mean}, {"rlx_reduce_max", rlx_reduce_max},
    {"rlx_reduce_min", rlx_reduce_min}, {"rlx_reduce_prod", rlx_reduce_prod},
};
static rlx_status reduce_axis_past_rank(fixture *f, const void *arg) {
    return node_outcome(f, ((const reduce_entry *)arg)->fn(f->g, f->x, 1u << 3, 0));
}
static rlx_status reduce_null_graph(fixture *f, const void *arg) {
    (void)f; return null_graph_outcome(((const reduce_entry *)arg)->fn(NULL, 0, 0, 0));
}
typedef rlx_node (*axis_fn)(rlx_graph *, rlx_node, int);
typedef struct { const char *name; axis_fn fn; } axis_entry;
static rlx_node argmax2(rlx_graph *g, rlx_node x, int a) { return rlx_argmax(g, x, a, 0); }
static rlx_node argmin2(rlx_graph *g, rlx_node x, int a) { return rlx_argmin(g, x, a, 1); }
static const axis_entry axis_ops[] = {
    {"rlx_argmax", argmax2}, {"rlx_argmin", argmin2}, {"rlx_softmax", rlx_softmax},
    {"rlx_log_softmax", rlx_log_softmax}, {"rlx_cumsum", rlx_cumsum},
};
static rlx_status axis_past_rank(fixture *f, const void *arg) { return node_outcome(f, ((const axis_entry *)arg)->fn(f->g, f->x, 3)); }
static rlx_status axis_below(fixture *f, const void *arg) { return node_outcome(f, ((const axis_entry *)arg)->fn(f->g, f->x, -4)); }

__attribute__((constructor)) static void register_axis_families(void) {
    for (size_t i = 0; i < RLX_ARRAY_LEN(reductions); i++) {
        matrix_add(reductions[i].name, "axis_past_rank", reduce_axis_past_rank, &reductions[i], INV,
                   "axes mask 0x8 names axes beyond rank 3");
        matrix_add(reductions[i].name, "null_graph", reduce_null_graph, &reductions[i], RETURNED_FAILURE, "graph is NULL");
    }
    for (size_t i = 0; i < RLX_ARRAY_LEN(axis_ops); i++) {
        matrix_add(axis_ops[i].name, "axis_3_of_rank_3", axis_past_rank, &axis_ops[i], INV, "axis 3 is outside rank 3");
        matrix_add(axis_ops[i].name, "axis_minus_4", axis_below, &axis_ops[i], INV, "axis -4 is outside rank 3");
    }
}

/* -------------------------------------------------------------- norms */

MISUSE(rlx_layer_norm, gamma_wrong_size, SHAPE, "gamma") {
    (void)arg;
    rlx_node gm = rlx_input(f->g, "gm", RLX_F32, 1, d234);   /* [2], D is 4 */
    return node_outcome(f, rlx_layer_norm(f->g, f->x, gm, RLX_NO_NODE, 1e-5f));
}
MISUSE(rlx_layer_norm, negative_eps, INV, "eps") {
    (void)arg;
    rlx_node gm = rlx_input(f->g, "gm", RLX_F32, 1, d234 + 2);
    return node_outcome(f, rlx_layer_norm(f->g, f->x, gm, RLX_NO_NODE, -1.0f));
}
MISUSE(rlx_rms_norm, gamma_wrong_dtype, SHAPE, "operand dtypes differ: f32 and i32") {
    (void)arg; return node_outcome(f, rlx_rms_norm(f->g, f->x, f->pos, RLX_NO_NODE, 1e-5f));
}
MISUSE(rlx_rms_norm, nan_eps, INV, "eps") {
    (void)arg;
    rlx_node gm = rlx_input(f->g, "gm", RLX_F32, 1, d234 + 2);
    return node_outcome(f, rlx_rms_norm(f->g, f->x, gm, RLX_NO_NODE, NAN));
}

/* ------------------------------------------------------ data movement */

MISUSE(rlx_reshape, count_differs, SHAPE, "reshape") {
    (void)arg; int64_t d[1] = {25}; return node_outcome(f, rlx_reshape(f->g, f->x, 1, d));
}
MISUSE(rlx_reshape, two_inferred, INV, "more than one dim is -1") {
    (void)arg; int64_t d[2] = {-1, -1}; return node_outcome(f, rlx_reshape(f->g, f->x, 2, d));
}
MISUSE(rlx_reshape, rank_9, INV, "rank 9 is outside [0, 8]") {
    (void)arg; int64_t d[9] = {24, 1, 1, 1, 1, 1, 1, 1, 1}; return node_outcome(f, rlx_reshape(f->g, f->x, 9, d));
}
MISUSE(rlx_reshape, null_dims, INV, "rlx_reshape: dims is NULL") { (void)arg; return node_outcome(f, rlx_reshape(f->g, f->x, 2, NULL)); }
MISUSE(rlx_transpose, null_perm, INV, "rlx_transpose: perm is NULL") { (void)arg; return node_outcome(f, rlx_transpose(f->g, f->x, NULL)); }
MISUSE(rlx_transpose, repeated_axis, INV, "perm") {
    (void)arg; int p[3] = {0, 0, 1}; return node_outcome(f, rlx_transpose(f->g, f->x, p));
}
MISUSE(rlx_transpose, axis_past_rank, INV, "perm") {
    (void)arg; int p[3] = {0, 1, 7}; return node_outcome(f, rlx_transpose(f->g, f->x, p));
}
MISUSE(rlx_narrow, negative_length, INV, "rlx_narrow: length must be >= 0") {
    (void)arg; return node_outcome(f, rlx_narrow(f->g, f->x, 0, 0, -1));
}
MISUSE(rlx_narrow, past_the_end, SHAPE, "rlx_narrow: end 5 is past axis 1 of size 3") {
    (void)arg; return node_outcome(f, rlx_narrow(f->g, f->x, 1, 2, 3));
}
MISUSE(rlx_slice, step_0, INV, "rlx_slice: step must be >= 1") { (void)arg; return node_outcome(f, rlx_slice(f->g, f->x, 0, 0, 1, 0)); }
MISUSE(rlx_slice, end_before_start, INV, "range [2, 1) is invalid") {
    (void)arg; return node_outcome(f, rlx_slice(f->g, f->x, 1, 2, 1, 1));
}
MISUSE(rlx_slice, axis_past_rank, INV, "rlx_slice: axis 5 is outside rank 3") {
    (void)arg; return node_outcome(f, rlx_slice(f->g, f->x, 5, 0, 1, 1));
}
MISUSE(rlx_slice_last, length_0, INV, "rlx_slice_last: length must be >= 1") {
    (void)arg; return node_outcome(f, rlx_slice_last(f->g, f->x, 1, 0));
}
MISUSE(rlx_slice_last, longer_than_dim, SHAPE, "the last 4 entries of axis 1, whose size is 3") { (void)arg; return node_outcome(f, rlx_slice_last(f->g, f->x, 1, 4)); }
MISUSE(rlx_concat, zero_inputs, INV, "rlx_concat: needs 1 to 8 inputs, got 0") {
    (void)arg; return node_outcome(f, rlx_concat(f->g, &f->x, 0, 0));
}
MISUSE(rlx_concat, nine_inputs, INV, "needs 1 to 8 inputs, got 9") {
    (void)arg; rlx_node xs[9]; for (int i = 0; i < 9; i++) xs[i] = f->x;
    return node_outcome(f, rlx_concat(f->g, xs, 9, 0));
}
MISUSE(rlx_concat, null_list, INV, "rlx_concat: xs is NULL with n 2") { (void)arg; return node_outcome(f, rlx_concat(f->g, NULL, 2, 0)); }
MISUSE(rlx_concat, dims_differ, SHAPE, "concat") {
    (void)arg; rlx_node xs[2] = {f->x, f->q3}; return node_outcome(f, rlx_concat(f->g, xs, 2, 0));
}
MISUSE(rlx_expand, incompatible, SHAPE, "expand") {
    (void)arg; int64_t d[3] = {2, 5, 4}; return node_outcome(f, rlx_expand(f->g, f->x, 3, d));
}
MISUSE(rlx_expand, null_dims, INV, "rlx_expand 'target': dims is NULL") {
    (void)arg; return node_outcome(f, rlx_expand(f->g, f->x, 3, NULL));
}

/* ----------------------------------------------------------- indexing */

MISUSE(rlx_gather_rows, float_ids, SHAPE, "ids") { (void)arg; return node_outcome(f, rlx_gather_rows(f->g, f->w48, f->x)); }
MISUSE(rlx_gather_rows, rank_0_table, SHAPE, "table") {
    (void)arg; return node_outcome(f, rlx_gather_rows(f->g, rlx_scalar(f->g, RLX_F32, 1), f->pos));
}
MISUSE(rlx_gather, axis_past_rank, INV, "rlx_gather: axis 3 is outside rank 3") {
    (void)arg; return node_outcome(f, rlx_gather(f->g, f->x, f->xi, 3));
}
MISUSE(rlx_gather, index_rank_differs, SHAPE, "index") { (void)arg; return node_outcome(f, rlx_gather(f->g, f->x, f->pos, 0)); }
MISUSE(rlx_scatter_add_rows, rows_misshapen, SHAPE, "rows [2,3,4] must be [ids.., base[1:]..]") {
    (void)arg; return node_outcome(f, rlx_scatter_add_rows(f->g, f->x, f->pos, f->x));
}
MISUSE(rlx_scatter_add_rows, float_ids, SHAPE, "ids") { (void)arg; return node_outcome(f, rlx_scatter_add_rows(f->g, f->x, f->x, f->x)); }
MISUSE(rlx_scatter_add, axis_past_rank, INV, "rlx_scatter_add: axis 3 is outside rank 3") {
    (void)arg; return node_outcome(f, rlx_scatter_add(f->g, f->x, f->xi, f->x, 3));
}
MISUSE(rlx_scatter_add, src_not_index_shaped, SHAPE, "src") {
    (void)arg; return node_outcome(f, rlx_scatter_add(f->g, f->x, f->xi, f->q3, 0));
}
MISUSE(rlx_topk, both_outputs_null, INV, "values and indices are both NULL") {
    (void)arg; return rlx_topk(f->g, f->x, 1, NULL, NULL);
}
MISUSE(rlx_topk, k_0, INV, "k = 0 must be in [1, 4]") { (void)arg; rlx_node v; return rlx_topk(f->g, f->x, 0, &v, NULL); }
MISUSE(rlx_topk, k_past_dim, INV, "k = 5 must be in [1, 4]") { (void)arg; rlx_node i; return rlx_topk(f->g, f->x, 5, NULL, &i); }
MISUSE(rlx_topk, null_graph, INV, "rlx_topk: graph is NULL") { (void)f; (void)arg; rlx_node v; return rlx_topk(NULL, 0, 1, &v, NULL); }

/* ----------------------------------------------------------- training */

MISUSE(rlx_gradients, loss_not_one_element, SHAPE, "the loss must have one element") {
    (void)arg; rlx_node gr; return rlx_gradients(f->g, f->x, 1, &f->x, &gr);
}
MISUSE(rlx_gradients, int_wrt, INV, "only float tensors have gradients") {
    (void)arg; rlx_node gr; return rlx_gradients(f->g, rlx_reduce_sum(f->g, f->x, 0, 0), 1, &f->xi, &gr);
}
MISUSE(rlx_gradients, null_grads, INV, "rlx_gradients: needs n >= 1") {
    (void)arg; return rlx_gradients(f->g, rlx_reduce_sum(f->g, f->x, 0, 0), 1, &f->x, NULL);
}
MISUSE(rlx_gradients, null_graph, INV, "rlx_gradients: graph is NULL") {
    (void)f; (void)arg; rlx_node w = 0, gr; return rlx_gradients(NULL, 0, 1, &w, &gr);
}

/* ---------------------------------------------------------- nn blocks */

MISUSE(rlx_attention, rank_3_q, SHAPE, "q, k, v must be [B,H,S,D], got [2,4,8]") {
    (void)arg; return node_outcome(f, rlx_attention(f->g, f->q3, f->k, f->v, RLX_MASK_NONE, RLX_NO_NODE, 0));
}
MISUSE(rlx_attention, mask_without_additive, INV, "a mask tensor needs RLX_MASK_ADDITIVE") {
    (void)arg; return node_outcome(f, rlx_attention(f->g, f->q, f->k, f->v, RLX_MASK_CAUSAL, f->x, 0));
}
MISUSE(rlx_attention, additive_without_mask, INV, "rlx_attention: RLX_MASK_ADDITIVE needs a mask tensor") {
    (void)arg; return node_outcome(f, rlx_attention(f->g, f->q, f->k, f->v, RLX_MASK_ADDITIVE, RLX_NO_NODE, 0));
}
MISUSE(rlx_attention, unknown_mask_kind, INV, "unknown mask kind 9") {
    (void)arg; return node_outcome(f, rlx_attention(f->g, f->q, f->k, f->v, (rlx_mask)9, RLX_NO_NODE, 0));
}
MISUSE(rlx_attention, nan_scale, INV, "rlx_attention: scale nan is not finite") {
    (void)arg; return node_outcome(f, rlx_attention(f->g, f->q, f->k, f->v, RLX_MASK_NONE, RLX_NO_NODE, NAN));
}
MISUSE(rlx_attention_kv, infinite_scale, INV, "rlx_attention_kv: scale inf is not finite") {
    (void)arg; return node_outcome(f, rlx_attention_kv(f->g, f->q, f->k, f->v, RLX_MASK_CAUSAL, RLX_NO_NODE, INFINITY, f->pos));
}
MISUSE(rlx_attention, integer_q, SHAPE, "q must be a float dtype") {
    (void)arg; return node_outcome(f, rlx_attention(f->g, f->xi, f->k, f->v, RLX_MASK_NONE, RLX_NO_NODE, 1));
}
MISUSE(rlx_attention_kv, float_kv_len, SHAPE, "kv_len must be an i32 tensor of one element") {
    (void)arg; return node_outcome(f, rlx_attention_kv(f->g, f->q, f->k, f->v, RLX_MASK_CAUSAL, RLX_NO_NODE, 0, f->x));
}
MISUSE(rlx_attention_kv, null_graph, RETURNED_FAILURE, "rlx_attention_kv: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_attention_kv(NULL, 0, 1, 2, RLX_MASK_CAUSAL, RLX_NO_NODE, 0, 3));
}
MISUSE(rlx_kv_write, cache_not_a_param, INV, "the cache must be a param") {
    (void)arg; return node_outcome(f, rlx_kv_write(f->g, f->q, f->k, f->pos));
}
MISUSE(rlx_kv_write, float_pos, SHAPE, "pos must be an i32 tensor of one element") {
    (void)arg; return node_outcome(f, rlx_kv_write(f->g, f->cache, f->k, f->q));
}
MISUSE(rlx_rope, unknown_style, INV, "unknown rope style 7") {
    (void)arg; return node_outcome(f, rlx_rope(f->g, f->q, f->pos, (rlx_rope_style)7, 1e4f, 0));
}
MISUSE(rlx_rope, odd_rotary_dims, INV, "rotary dims 3 must be even") {
    (void)arg; return node_outcome(f, rlx_rope(f->g, f->q, f->pos, RLX_ROPE_NEOX, 1e4f, 3));
}
MISUSE(rlx_rope, rank_3_input, SHAPE, "input must be [B,H,S,D], got [2,4,8]") {
    (void)arg; return node_outcome(f, rlx_rope(f->g, f->q3, f->pos, RLX_ROPE_NEOX, 1e4f, 0));
}
MISUSE(rlx_rope, nan_theta, INV, "theta must be > 0") {
    (void)arg; return node_outcome(f, rlx_rope(f->g, f->q, RLX_NO_NODE, RLX_ROPE_GPTJ, NAN, 0));
}
MISUSE(rlx_rope_scaled, factors_wrong_size, SHAPE, "frequency factors must be f32 [rotary_dims / 2] = [4]") {
    (void)arg; return node_outcome(f, rlx_rope_scaled(f->g, f->q, f->pos, RLX_ROPE_NEOX, 1e4f, 8, f->pos));
}
MISUSE(rlx_softmax_cross_entropy, float_labels, SHAPE, "labels must be i32, got f32") {
    (void)arg; return node_outcome(f, rlx_softmax_cross_entropy(f->g, f->w48, f->x));
}
MISUSE(rlx_softmax_cross_entropy_grad, rank_3_logits, SHAPE, "logits must be [N,C] and labels [N]") {
    (void)arg; return node_outcome(f, rlx_softmax_cross_entropy_grad(f->g, f->x, f->pos));
}

/* ------------------------------------------------------ node, op table */

MISUSE(rlx_node_shape, null_graph, INV, "rlx_node_shape: graph is NULL") {
    (void)f; (void)arg; int r; return rlx_node_shape(NULL, 0, NULL, &r, NULL);
}
MISUSE(rlx_node_shape, foreign_node, INV, "rlx_node_shape: node 9999 is not in the graph") {
    (void)arg; int r; return rlx_node_shape(f->g, 9999, NULL, &r, NULL);
}
MISUSE(rlx_node_shape, all_outputs_null, RLX_OK, NULL) { (void)arg; return rlx_node_shape(f->g, f->x, NULL, NULL, NULL); }
MISUSE(rlx_op_count, positive, RLX_OK, NULL) { (void)f; (void)arg; return VALUE(rlx_op_count() > 0); }
MISUSE(rlx_op_name, out_of_range, RETURNED_FAILURE, "rlx_op_name: op -1 is outside") {
    (void)f; (void)arg; return rlx_op_name(-1) ? SUCCEEDED : RETURNED_FAILURE;
}
MISUSE(rlx_op_arity, out_of_range, RETURNED_FAILURE, "rlx_op_arity: op 100000 is outside") {
    (void)f; (void)arg;
    int a = rlx_op_arity(100000);
    return a == RLX_OP_ARITY_INVALID ? RETURNED_FAILURE : a == RLX_OP_ARITY_VARIADIC ? RLX_STATUS_INTERNAL : SUCCEEDED;
}
MISUSE(rlx_op_doc, out_of_range, RETURNED_FAILURE, "rlx_op_doc: op") {
    (void)f; (void)arg; return rlx_op_doc(rlx_op_count()) ? SUCCEEDED : RETURNED_FAILURE;
}

/* ------------------------------------------------------------ compile */

MISUSE(rlx_compile_options_init, null_is_noop, RLX_OK, NULL) {
    (void)f; (void)arg;
    rlx_compile_options_init(NULL);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    return VALUE(o.fuse == 1 && o.optimize == 1 && o.device_index == -1 && o.backend == RLX_BACKEND_AUTO);
}
/* Compiles f->g with output exp(x) under options changed by arg's setter. */
typedef void (*options_edit)(rlx_compile_options *o);
static rlx_status compile_with(fixture *f, options_edit edit) {
    rlx_output(f->g, "y", rlx_exp(f->g, f->x));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    edit(&o);
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(f->g, &o, &e);
    rlx_exec_free(e);
    return st;
}
static void fuse_7(rlx_compile_options *o) { o->fuse = 7; }
static void optimize_minus_1(rlx_compile_options *o) { o->optimize = -1; }
static void backend_17(rlx_compile_options *o) { o->backend = (rlx_backend)17; }
static void precision_77(rlx_compile_options *o) { o->precision = (rlx_precision)77; }
static void threads_minus_3(rlx_compile_options *o) { o->threads = -3; }
static void threads_huge(rlx_compile_options *o) { o->threads = 1 << 20; }
static void device_index_minus_7(rlx_compile_options *o) { o->device_index = -7; }
MISUSE(rlx_compile, fuse_7, INV, "fuse must be 0 or 1") { (void)arg; return compile_with(f, fuse_7); }
MISUSE(rlx_compile, optimize_minus_1, INV, "optimize must be 0 or 1") { (void)arg; return compile_with(f, optimize_minus_1); }
MISUSE(rlx_compile, backend_17, INV, "backend is not an rlx_backend") { (void)arg; return compile_with(f, backend_17); }
MISUSE(rlx_compile, precision_77, INV, "precision is not an rlx_precision") { (void)arg; return compile_with(f, precision_77); }
MISUSE(rlx_compile, threads_negative, INV, "threads must be >= 0") { (void)arg; return compile_with(f, threads_minus_3); }
MISUSE(rlx_compile, threads_huge, INV, "threads must be <= 1024") { (void)arg; return compile_with(f, threads_huge); }
MISUSE(rlx_compile, device_index_minus_7, INV, "device_index must be >= 0, or -1") {
    (void)arg; return compile_with(f, device_index_minus_7);
}
MISUSE(rlx_compile, null_out, INV, "rlx_compile: out is NULL") { (void)arg; return rlx_compile(f->g, NULL, NULL); }
MISUSE(rlx_compile, null_graph, INV, "rlx_compile: graph is NULL") { (void)f; (void)arg; rlx_exec *e; return rlx_compile(NULL, NULL, &e); }
MISUSE(rlx_compile, no_outputs, INV, "the graph has no outputs") { (void)arg; rlx_exec *e; return rlx_compile(f->g, NULL, &e); }
MISUSE(rlx_compile, builder_error, INV, "builder error: rlx_softmax: axis 9 is outside rank 3") {
    (void)arg;
    rlx_output(f->g, "y", rlx_softmax(f->g, f->x, 9));
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(f->g, NULL, &e);
    rlx_exec_free(e);
    return st;
}
MISUSE(rlx_exec_free, null_is_noop, RLX_OK, NULL) { (void)f; (void)arg; rlx_exec_free(NULL); return RLX_OK; }

/* -------------------------------------------------------------- params */

MISUSE(rlx_exec_set_param_f32, null_exec, INV, "rlx_exec_set_param_f32: exec is NULL") {
    (void)f; (void)arg; float w[4] = {0}; return rlx_exec_set_param_f32(NULL, "w", w, 4);
}
MISUSE(rlx_exec_set_param_f32, unknown_name, RLX_STATUS_NOT_FOUND, "no param named 'nope'") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[4] = {0}; return rlx_exec_set_param_f32(e, "nope", w, 4);
}
MISUSE(rlx_exec_set_param_f32, wrong_count, SHAPE, "'w': 20 bytes given, the param has 16") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[5] = {0}; return rlx_exec_set_param_f32(e, "w", w, 5);
}
MISUSE(rlx_exec_set_param_f32, huge_count, INV, "count") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[4] = {0}; return rlx_exec_set_param_f32(e, "w", w, SIZE_MAX);
}
MISUSE(rlx_exec_read_param, unknown_name, RLX_STATUS_NOT_FOUND, "rlx_exec_read_param: no param named 'nope'") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[4]; return rlx_exec_read_param(e, "nope", RLX_F32, w, 16);
}
MISUSE(rlx_exec_read_param, wrong_size, SHAPE, "'w': 8 bytes given, the param has 16") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[4]; return rlx_exec_read_param(e, "w", RLX_F32, w, 8);
}
MISUSE(rlx_npy_load, missing_file, RLX_STATUS_IO, "/nonexistent-dir/x.npy") {
    (void)f; (void)arg; rlx_tensor t; return rlx_npy_load("/nonexistent-dir/x.npy", &t);
}
MISUSE(rlx_npy_load, null_out, INV, "rlx_npy_load: out is NULL") {
    (void)f; (void)arg; return rlx_npy_load("x.npy", NULL);
}
MISUSE(rlx_npy_load_memory, not_npy, RLX_STATUS_FORMAT, "not an NPY file") {
    (void)f; (void)arg; rlx_tensor t; return rlx_npy_load_memory("hello world", 11, &t);
}
MISUSE(rlx_npy_save, null_tensor, INV, "rlx_npy_save: path and tensor are required") {
    (void)f; (void)arg; return rlx_npy_save("/tmp/x.npy", NULL);
}
MISUSE(rlx_npy_save, wrong_bytes, SHAPE, "its shape needs 16") {
    (void)f; (void)arg; float v[4] = {0};
    rlx_tensor t = {.dtype = RLX_F32, .rank = 1, .dims = {4}, .data = v, .bytes = 12};
    return rlx_npy_save("/tmp/rlx_api_matrix_never_written.npy", &t);
}
MISUSE(rlx_exec_save_params, null_path, INV, "rlx_exec_save_params: exec and path are required") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_save_params(e, NULL, 0, NULL);
}
MISUSE(rlx_exec_save_params, unwritable, RLX_STATUS_IO, "/nonexistent-dir") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_save_params(e, "/nonexistent-dir/ck.safetensors", 0, NULL);
}
MISUSE(rlx_exec_load_params, missing_file, RLX_STATUS_IO, "/nonexistent-dir/ck.safetensors") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_load_params(e, "/nonexistent-dir/ck.safetensors", 0);
}
MISUSE(rlx_exec_load_params, unknown_flags, INV, "unknown flags 0x8") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_load_params(e, "x", 8);
}
MISUSE(rlx_assign, computed_target, INV, "the target must be a param") {
    (void)arg; return node_outcome(f, rlx_assign(f->g, rlx_exp(f->g, f->x), f->x));
}
MISUSE(rlx_optimizer_options_init, unknown_kind, INV, "unknown optimizer 7") {
    (void)f; (void)arg; rlx_optimizer_options o; return rlx_optimizer_options_init(&o, (rlx_optimizer)7);
}
MISUSE(rlx_optimizer_step, not_a_param, INV, "is not a param") {
    (void)arg; rlx_optimizer_options o; rlx_optimizer_options_init(&o, RLX_OPT_SGD);
    int64_t one = 1; rlx_node lr = rlx_input(f->g, "lr", RLX_F32, 1, &one);
    return rlx_optimizer_step(f->g, &o, 1, &f->x, &f->x, lr, NULL);
}
MISUSE(rlx_optimizer_step, loss_not_scaled, INV, "no loss was scaled") {
    (void)arg; rlx_optimizer_options o; rlx_optimizer_options_init(&o, RLX_OPT_SGD);
    o.loss_scale = 1024;
    int64_t one = 1; rlx_node lr = rlx_input(f->g, "lr", RLX_F32, 1, &one);
    rlx_node w = rlx_param(f->g, "w2", RLX_F32, 1, &one);
    return rlx_optimizer_step(f->g, &o, 1, &w, &lr, lr, NULL);
}
MISUSE(rlx_scale_loss, twice, INV, "the graph already scales a loss") {
    (void)arg; rlx_optimizer_options o; rlx_optimizer_options_init(&o, RLX_OPT_SGD);
    o.loss_scale = 1024;
    rlx_node l = rlx_reduce_sum(f->g, f->x, 0, 0);
    rlx_scale_loss(f->g, l, &o);
    return node_outcome(f, rlx_scale_loss(f->g, l, &o));
}
MISUSE(rlx_scale_loss, null_graph, INV, "rlx_scale_loss: graph is NULL") {
    (void)f; (void)arg; rlx_optimizer_options o; rlx_optimizer_options_init(&o, RLX_OPT_SGD);
    return rlx_scale_loss(NULL, 0, &o) == RLX_NO_NODE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_exec_set_param, null_name, INV, "rlx_exec_set_param: name is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[4] = {0}; return rlx_exec_set_param(e, NULL, RLX_F32, w, 16);
}
MISUSE(rlx_exec_set_param, null_data, INV, "'w': data is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_set_param(e, "w", RLX_F32, NULL, 16);
}
MISUSE(rlx_exec_set_param, wrong_dtype, SHAPE, "dtype i32 given, the param is f32") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); int32_t w[4] = {0}; return rlx_exec_set_param(e, "w", RLX_I32, w, 16);
}
MISUSE(rlx_exec_set_param, unknown_dtype, INV, "rlx_exec_set_param 'w': dtype 99 is not an rlx_dtype") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[4] = {0}; return rlx_exec_set_param(e, "w", (rlx_dtype)99, w, 16);
}
MISUSE(rlx_exec_set_param, an_input, RLX_STATUS_NOT_FOUND, "no param named 'x'") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); float w[24] = {0}; return rlx_exec_set_param(e, "x", RLX_F32, w, 96);
}
MISUSE(rlx_exec_use_param_memory, unaligned, INV, "data must be 16-byte aligned") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e);
    static _Alignas(16) float w[8];
    return rlx_exec_use_param_memory(e, "w", RLX_F32, (const char *)w + 4, 16);
}
MISUSE(rlx_exec_use_param_memory, null_exec, INV, "rlx_exec_use_param_memory: exec is NULL") {
    (void)f; (void)arg; static _Alignas(16) float w[4]; return rlx_exec_use_param_memory(NULL, "w", RLX_F32, w, 16);
}

/* ----------------------------------------------------------------- run */

MISUSE(rlx_exec_run, null_exec, INV, "rlx_exec_run: exec is NULL") {
    (void)f; (void)arg; rlx_tensor t = x_tensor(); return rlx_exec_run(NULL, &t, 1);
}
MISUSE(rlx_exec_run, null_inputs, INV, "rlx_exec_run: inputs is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_run(e, NULL, 1);
}
MISUSE(rlx_exec_run, negative_count, INV, "n_inputs -1 is negative") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); return rlx_exec_run(e, &t, -1);
}
MISUSE(rlx_exec_run, missing_input, INV, "input 'x' is not given") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_run(e, NULL, 0);
}
MISUSE(rlx_exec_run, unknown_name, RLX_STATUS_NOT_FOUND, "no input named 'nope'") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.name = "nope"; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, null_name, INV, "inputs[0].name is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.name = NULL; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, wrong_dtype, SHAPE, "input 'x' is i32, the graph expects f32") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.dtype = RLX_I32; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, unknown_dtype, INV, "rlx_exec_run: input 'x' dtype -3 is not an rlx_dtype") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.dtype = (rlx_dtype)-3; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, wrong_rank, SHAPE, "input 'x' has rank 9, the graph expects 3") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.rank = 9; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, negative_rank, SHAPE, "input 'x' has rank -1") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.rank = -1; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, wrong_dim, SHAPE, "input 'x' dim 2 is 5, the graph expects 4") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.dims[2] = 5; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, wrong_bytes, SHAPE, "input 'x' has bytes = 95, its shape needs 96") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.bytes = 95; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, null_data, INV, "input 'x' data is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.data = NULL; return rlx_exec_run(e, &t, 1);
}
MISUSE(rlx_exec_run, given_twice, INV, "input 'x' is given twice") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t[2] = {x_tensor(), x_tensor()}; return rlx_exec_run(e, t, 2);
}
/* data, not the call, is wrong: a max over an axis bound to 0 has no value */
MISUSE(rlx_exec_run, max_of_empty_axis, INV, "reduce_max: reduces an empty axis, which has no max") {
    (void)arg;
    int64_t d[1] = {rlx_symbol(f->g, "n")};
    rlx_output(f->g, "m", rlx_reduce_max(f->g, rlx_input(f->g, "e", RLX_F32, 1, d), 0, 0));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    if (rlx_compile(f->g, &o, &f->e) != RLX_OK) return RLX_STATUS_INTERNAL;
    static float none[1024];   /* larger than any fixture source */
    rlx_tensor t[10];
    int n = rlx_exec_input_count(f->e);
    for (int i = 0; i < n && i < 10; i++) {   /* every source of the fixture, at its shape; "e" empty */
        rlx_exec_input_info(f->e, i, &t[i]);
        t[i].data = none;
        if (strcmp(t[i].name, "e") == 0) t[i].dims[0] = 0;
        t[i].bytes = rlx_tensor_bytes(t[i].dtype, t[i].rank, t[i].dims);
    }
    return rlx_exec_run(f->e, t, n);
}
MISUSE(rlx_exec_prepare, null_exec, INV, "rlx_exec_prepare: exec is NULL") {
    (void)f; (void)arg; rlx_tensor t = x_tensor(); return rlx_exec_prepare(NULL, &t, 1);
}
MISUSE(rlx_exec_prepare, wrong_rank, SHAPE, "rlx_exec_prepare: input 'x' has rank 2") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.rank = 2; t.data = NULL;
    return rlx_exec_prepare(e, &t, 1);
}
MISUSE(rlx_exec_prepare, null_data_is_allowed, RLX_OK, NULL) {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.data = NULL; return rlx_exec_prepare(e, &t, 1);
}

/* ------------------------------------------------------------- outputs */

MISUSE(rlx_exec_output, before_any_run, INV, "rlx_exec_output 'y': no successful run to read from") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t; return rlx_exec_output(e, "y", &t);
}
MISUSE(rlx_exec_output, after_a_failed_run, INV, "no successful run") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); rlx_tensor t = x_tensor(); t.bytes = 1;
    (void)rlx_exec_run(e, &t, 1);
    return rlx_exec_output(e, "y", &t);
}
MISUSE(rlx_exec_output, null_exec, INV, "rlx_exec_output: exec is NULL") { (void)f; (void)arg; rlx_tensor t; return rlx_exec_output(NULL, "y", &t); }
MISUSE(rlx_exec_output, null_name, INV, "rlx_exec_output: name is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); rlx_tensor t; return rlx_exec_output(e, NULL, &t);
}
MISUSE(rlx_exec_output, null_out, INV, "rlx_exec_output: out is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); return rlx_exec_output(e, "y", NULL);
}
MISUSE(rlx_exec_output, unknown_name, RLX_STATUS_NOT_FOUND, "no output named 'x'") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); rlx_tensor t; return rlx_exec_output(e, "x", &t);
}
MISUSE(rlx_exec_read_output, null_dst, INV, "rlx_exec_read_output 'y': dst is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); return rlx_exec_read_output(e, "y", NULL, 96);
}
MISUSE(rlx_exec_read_output, dst_too_small, INV, "dst has 92 bytes, the output needs 96") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); float y[24]; return rlx_exec_read_output(e, "y", y, 92);
}

/* ------------------------------------------------------------- queries */

MISUSE(rlx_exec_input_count, null_exec_is_minus_1, RETURNED_FAILURE, "rlx_exec_input_count: exec is NULL") {
    (void)f; (void)arg; return count_outcome(rlx_exec_input_count(NULL));
}
MISUSE(rlx_exec_output_count, null_exec_is_minus_1, RETURNED_FAILURE, "rlx_exec_output_count: exec is NULL") {
    (void)f; (void)arg; return count_outcome(rlx_exec_output_count(NULL));
}
MISUSE(rlx_exec_param_count, null_exec_is_minus_1, RETURNED_FAILURE, "rlx_exec_param_count: exec is NULL") {
    (void)f; (void)arg; return count_outcome(rlx_exec_param_count(NULL));
}
MISUSE(rlx_exec_input_info, index_past_end, INV, "rlx_exec_input_info: index 1 is outside [0, 1)") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t; return rlx_exec_input_info(e, 1, &t);
}
MISUSE(rlx_exec_input_info, null_exec, INV, "rlx_exec_input_info: exec is NULL") {
    (void)f; (void)arg; rlx_tensor t; return rlx_exec_input_info(NULL, 0, &t);
}
MISUSE(rlx_exec_output_info, negative_index, INV, "rlx_exec_output_info: index -1 is outside [0, 1)") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); rlx_tensor t; return rlx_exec_output_info(e, -1, &t);
}
MISUSE(rlx_exec_param_info, null_info, INV, "rlx_exec_param_info: info is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_param_info(e, 0, NULL);
}
MISUSE(rlx_vulkan_device_count, never_negative, RLX_OK, NULL) { (void)f; (void)arg; return VALUE(rlx_vulkan_device_count() >= 0); }
/* A build without the Vulkan backend says so for any index; with it, the
 * index is named (the suite's machines have a Vulkan device: lavapipe). */
#ifdef RLX_HAVE_VULKAN
#define NO_DEVICE(what) what
#else
#define NO_DEVICE(what) "this build of rlx has no Vulkan backend"
#endif
MISUSE(rlx_vulkan_device_describe, negative_index, RETURNED_FAILURE, NO_DEVICE("device -1")) {
    (void)f; (void)arg; return ptr_outcome(rlx_vulkan_device_describe(-1));
}
MISUSE(rlx_vulkan_device_describe, index_past_end, RETURNED_FAILURE, NO_DEVICE("device 1000")) {
    (void)f; (void)arg; return ptr_outcome(rlx_vulkan_device_describe(1000));
}
MISUSE(rlx_exec_get_stats, null_stats, INV, "rlx_exec_get_stats: stats is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_exec_get_stats(e, NULL);
}
MISUSE(rlx_exec_get_stats, null_exec, INV, "rlx_exec_get_stats: exec is NULL") {
    (void)f; (void)arg; rlx_exec_stats s; return rlx_exec_get_stats(NULL, &s);
}
MISUSE(rlx_exec_report, null_exec, RETURNED_FAILURE, "rlx_exec_report: exec is NULL") {
    (void)f; (void)arg; return ptr_outcome(rlx_exec_report(NULL));
}

MISUSE(rlx_exec_numerics, null_exec, INV, "rlx_exec_numerics: exec is NULL") {
    (void)f; (void)arg; rlx_numerics_report r; return rlx_exec_numerics(NULL, &r);
}
MISUSE(rlx_exec_numerics, null_out, INV, "rlx_exec_numerics: out is NULL") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); return rlx_exec_numerics(e, NULL);
}
MISUSE(rlx_exec_numerics, check_off, INV, "check_numerics") {
    (void)arg; rlx_exec *e = fx_exec(f, true); NEED_EXEC(e); rlx_numerics_report r; return rlx_exec_numerics(e, &r);
}

/* ------------------------------------------------------------- devices */
MISUSE(rlx_device_count, cpu_first, RLX_OK, NULL) {
    (void)f; (void)arg; return VALUE(rlx_device_count() >= 1);
}
MISUSE(rlx_device_get_info, null_out, INV, "rlx_device_get_info: out is NULL") {
    (void)f; (void)arg; return rlx_device_get_info(0, NULL);
}
MISUSE(rlx_device_get_info, negative_index, INV, "device -1 does not exist") {
    (void)f; (void)arg; rlx_device_info d; return rlx_device_get_info(-1, &d);
}
MISUSE(rlx_device_get_info, past_the_end, INV, "does not exist") {
    (void)f; (void)arg; rlx_device_info d; return rlx_device_get_info(rlx_device_count(), &d);
}

/* ------------------------------------------------------------ encoders */

MISUSE(rlx_encoder_options_init, null_is_noop, RLX_OK, NULL) {
    (void)f; (void)arg;
    rlx_encoder_options_init(NULL);
    rlx_encoder_options o;
    rlx_encoder_options_init(&o);
    return VALUE(o.pooling == RLX_POOL_MEAN && o.normalize == 0 && o.max_length == 0 && o.compile.fuse == 1);
}
MISUSE(rlx_encoder_load, null_out, INV, "rlx_encoder_load: dir and out must not be NULL") {
    (void)f; (void)arg; return rlx_encoder_load("/tmp", NULL, NULL);
}
MISUSE(rlx_encoder_load, null_dir, INV, "rlx_encoder_load: dir and out must not be NULL") {
    (void)f; (void)arg; rlx_encoder *e; return rlx_encoder_load(NULL, NULL, &e);
}
MISUSE(rlx_encoder_load, no_config, RLX_STATUS_IO, "has no config.json") {
    (void)f; (void)arg; rlx_encoder *e; return rlx_encoder_load("/nonexistent/model", NULL, &e);
}
MISUSE(rlx_encoder_load, bad_pooling, INV, "pooling 7") {
    (void)f; (void)arg;
    rlx_encoder_options o;
    rlx_encoder_options_init(&o);
    o.pooling = (rlx_pooling)7;
    rlx_encoder *e;
    return rlx_encoder_load("/tmp", &o, &e);
}
MISUSE(rlx_encoder_free, null_is_noop, RLX_OK, NULL) { (void)f; (void)arg; rlx_encoder_free(NULL); return RLX_OK; }
MISUSE(rlx_encoder_get_info, null_encoder, INV, "rlx_encoder_get_info: NULL argument") {
    (void)f; (void)arg; rlx_encoder_info i; return rlx_encoder_get_info(NULL, &i);
}
MISUSE(rlx_encoder_label, null_encoder, RETURNED_FAILURE, "rlx_encoder_label: encoder is NULL") {
    (void)f; (void)arg; return rlx_encoder_label(NULL, 0) == NULL ? RETURNED_FAILURE : SUCCEEDED;
}
MISUSE(rlx_encoder_embed, null_encoder, INV, "rlx_encoder_embed: need an encoder") {
    (void)f; (void)arg; const char *t = "x"; float o[4]; return rlx_encoder_embed(NULL, &t, 1, o, 4);
}
MISUSE(rlx_encoder_embed, null_out, INV, "rlx_encoder_embed: out is NULL") {
    (void)f; (void)arg; const char *t = "x"; return rlx_encoder_embed(NULL, &t, 1, NULL, 0);
}
MISUSE(rlx_encoder_classify, null_logits, INV, "rlx_encoder_classify: logits is NULL") {
    (void)f; (void)arg; const char *t = "x"; return rlx_encoder_classify(NULL, &t, 1, NULL, 0);
}
MISUSE(rlx_encoder_tokenize, null_encoder, INV, "rlx_encoder_tokenize: need an encoder") {
    (void)f; (void)arg; int n; int32_t ids[4]; return rlx_encoder_tokenize(NULL, "x", NULL, ids, NULL, 4, &n);
}
MISUSE(rlx_encoder_run_ids, null_encoder, INV, "rlx_encoder_run_ids: need an encoder") {
    (void)f; (void)arg; int32_t id = 0; return rlx_encoder_run_ids(NULL, 1, 1, &id, NULL, NULL, NULL, NULL, NULL, NULL);
}

/* -------------------------------------------------------------- models */

MISUSE(rlx_model_options_init, null_is_noop, RLX_OK, NULL) {
    (void)f; (void)arg;
    rlx_model_options_init(NULL);
    rlx_model_options o;
    rlx_model_options_init(&o);
    return VALUE(o.n_ctx == 0 && o.compile.fuse == 1);
}
MISUSE(rlx_model_load, null_out, INV, "rlx_model_load: out is NULL") { (void)arg; return rlx_model_load(f->model_path, NULL, NULL); }
MISUSE(rlx_model_load, null_path, INV, "rlx_model_load: path is NULL") { (void)f; (void)arg; rlx_model *m; return rlx_model_load(NULL, NULL, &m); }
MISUSE(rlx_model_load, missing_file, RLX_STATUS_IO, "/nonexistent/m.gguf") {
    (void)f; (void)arg; rlx_model *m; return rlx_model_load("/nonexistent/m.gguf", NULL, &m);
}
MISUSE(rlx_model_load, a_directory, RLX_STATUS_IO, "/tmp") { (void)f; (void)arg; rlx_model *m; return rlx_model_load("/tmp", NULL, &m); }
MISUSE(rlx_model_load, negative_n_ctx, INV, "n_ctx -1 < 0") {
    (void)arg; rlx_model_options o; rlx_model_options_init(&o); o.n_ctx = -1; rlx_model *m;
    return rlx_model_load(f->model_path, &o, &m);
}
MISUSE(rlx_model_load, fuse_7, INV, "rlx_model_load: rlx_compile: options: fuse must be 0 or 1") {
    (void)arg; rlx_model_options o; rlx_model_options_init(&o); o.compile.backend = RLX_BACKEND_CPU; o.compile.fuse = 7;
    rlx_model *m = NULL;
    rlx_status st = rlx_model_load(f->model_path, &o, &m);
    rlx_model_free(m);
    return st;
}
MISUSE(rlx_conv, null_graph, INV, "rlx_conv: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_conv(NULL, 0, 1, RLX_NO_NODE, NULL)) == RETURNED_FAILURE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_conv, rank_mismatch, SHAPE, "need rank") {
    (void)arg; return node_outcome(f, rlx_conv(f->g, f->x, f->q, RLX_NO_NODE, NULL));
}
MISUSE(rlx_conv_transpose, bad_output_padding, INV, "output_padding 5 must be in [0, max(stride, dilation))") {
    (void)arg; rlx_conv_params p = {.output_padding = {5}};
    return node_outcome(f, rlx_conv_transpose(f->g, f->x, f->x, RLX_NO_NODE, &p)) == RLX_OK ? RLX_OK : RLX_STATUS_INVALID_ARGUMENT;
}
MISUSE(rlx_pool, null_params, INV, "the window is required") {
    (void)arg; return rlx_pool(f->g, f->x, NULL) == RLX_NO_NODE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_pool, rank_mismatch, SHAPE, "x needs rank") {
    (void)arg; rlx_pool_params p = {.dims = 2, .kernel = {2, 2}}; return node_outcome(f, rlx_pool(f->g, f->x, &p));
}
MISUSE(rlx_resize_params_init, null_is_noop, RLX_OK, NULL) {
    (void)f; (void)arg; rlx_resize_params_init(NULL);
    rlx_resize_params p; rlx_resize_params_init(&p); return VALUE(p.cubic_a == -0.75 && p.coord == RLX_COORD_HALF_PIXEL);
}
MISUSE(rlx_resize, null_graph, INV, "rlx_resize: graph is NULL") {
    (void)f; (void)arg; rlx_resize_params p; rlx_resize_params_init(&p); p.sizes[0] = 2;
    return null_graph_outcome(rlx_resize(NULL, 0, &p)) == RETURNED_FAILURE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_resize, null_params, INV, "sizes or scales are required") {
    (void)arg; return rlx_resize(f->g, f->x, NULL) == RLX_NO_NODE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_resize, negative_size, INV, "output size -3") {
    (void)arg; rlx_resize_params p; rlx_resize_params_init(&p); p.dims = 1; p.sizes[0] = -3;
    return node_outcome(f, rlx_resize(f->g, f->x, &p));
}
MISUSE(rlx_adaptive_pool, null_sizes, INV, "the output sizes are NULL") {
    (void)arg; return rlx_adaptive_pool(f->g, f->x, RLX_AVGPOOL, 1, NULL) == RLX_NO_NODE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_adaptive_pool, bad_kind, INV, "kind 9") {
    (void)arg; int64_t o[1] = {2}; return node_outcome(f, rlx_adaptive_pool(f->g, f->x, (rlx_pool_kind)9, 1, o));
}
MISUSE(rlx_flip, axis_past_rank, INV, "past rank 3") {
    (void)arg; return node_outcome(f, rlx_flip(f->g, f->x, 8));
}
MISUSE(rlx_depth_to_space, bad_blocksize, INV, "blocksize 0") {
    (void)arg; return node_outcome(f, rlx_depth_to_space(f->g, f->q, 0, RLX_DCR));
}
MISUSE(rlx_space_to_depth, not_multiple, SHAPE, "multiples of blocksize 3") {
    (void)arg; return node_outcome(f, rlx_space_to_depth(f->g, f->q, 3, RLX_CRD));
}
MISUSE(rlx_batch_norm, mean_wrong_size, SHAPE, "mean must be [3]") {
    (void)arg;   /* x is [2, 3, 4]: C = 3 */
    rlx_node c = rlx_input(f->g, "c", RLX_F32, 1, d234 + 1), m = rlx_input(f->g, "m", RLX_F32, 1, d234 + 2);
    return node_outcome(f, rlx_batch_norm(f->g, f->x, c, c, m, c, 1e-5f));
}
MISUSE(rlx_batch_norm, null_graph, INV, "rlx_batch_norm: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_batch_norm(NULL, 0, 1, 2, 3, 4, 1e-5f)) == RETURNED_FAILURE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_group_norm, zero_groups, INV, "groups 0 must be >= 1") {
    (void)arg; rlx_node c = rlx_input(f->g, "c", RLX_F32, 1, d234 + 1);
    return node_outcome(f, rlx_group_norm(f->g, f->x, c, c, 0, 1e-5f));
}
MISUSE(rlx_group_norm, groups_not_dividing, SHAPE, "groups 2 must divide the 3 channels") {
    (void)arg; rlx_node c = rlx_input(f->g, "c", RLX_F32, 1, d234 + 1);
    return node_outcome(f, rlx_group_norm(f->g, f->x, c, c, 2, 1e-5f));
}
MISUSE(rlx_instance_norm, null_graph, INV, "rlx_instance_norm: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_instance_norm(NULL, 0, 1, 2, 1e-5f)) == RETURNED_FAILURE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_instance_norm, gamma_wrong_size, SHAPE, "gamma must be [3]") {
    (void)arg; rlx_node c = rlx_input(f->g, "c", RLX_F32, 1, d234 + 2);
    return node_outcome(f, rlx_instance_norm(f->g, f->x, c, c, 1e-5f));
}
MISUSE(rlx_layer_norm_channels, rank_1, SHAPE, "rank >= 2") {
    (void)arg; rlx_node c = rlx_input(f->g, "c", RLX_F32, 1, d234 + 1);
    return node_outcome(f, rlx_layer_norm_channels(f->g, c, c, c, 1e-5f));
}
MISUSE(rlx_layer_norm_channels, null_graph, INV, "rlx_layer_norm_channels: graph is NULL") {
    (void)f; (void)arg; return null_graph_outcome(rlx_layer_norm_channels(NULL, 0, 1, 2, 1e-5f)) == RETURNED_FAILURE ? RLX_STATUS_INVALID_ARGUMENT : RLX_OK;
}
MISUSE(rlx_onnx_free, null_is_noop, RLX_OK, NULL) { (void)f; (void)arg; rlx_onnx_free(NULL); return RLX_OK; }
MISUSE(rlx_onnx_load, missing_file, RLX_STATUS_IO, "/nonexistent-dir/m.onnx") {
    (void)f; (void)arg; rlx_onnx *m; return rlx_onnx_load("/nonexistent-dir/m.onnx", &m);
}
MISUSE(rlx_onnx_load, null_out, INV, "rlx_onnx_load: out is NULL") {
    (void)f; (void)arg; return rlx_onnx_load("m.onnx", NULL);
}
MISUSE(rlx_onnx_graph, null_model, INV, "rlx_onnx_graph: model is NULL") {
    (void)f; (void)arg; return rlx_onnx_graph(NULL) ? RLX_OK : RLX_STATUS_INVALID_ARGUMENT;
}
MISUSE(rlx_onnx_set_params, null_model, INV, "model and exec are required") {
    (void)arg; rlx_exec *e = fx_exec(f, false); NEED_EXEC(e); return rlx_onnx_set_params(NULL, e);
}
MISUSE(rlx_onnx_compile, null_model, INV, "rlx_onnx_compile: model is NULL") {
    (void)f; (void)arg; rlx_exec *e; return rlx_onnx_compile(NULL, NULL, &e);
}
MISUSE(rlx_model_free, null_is_noop, RLX_OK, NULL) { (void)f; (void)arg; rlx_model_free(NULL); return RLX_OK; }
MISUSE(rlx_model_get_info, null_model, INV, "rlx_model_get_info: model is NULL") {
    (void)f; (void)arg; rlx_model_info i; return rlx_model_get_info(NULL, &i);
}
MISUSE(rlx_model_get_info, null_info, INV, "rlx_model_get_info: info is NULL") {
    (void)arg; NEED_MODEL(); return rlx_model_get_info(f->model, NULL);
}
MISUSE(rlx_model_tokenize, null_model, INV, "rlx_model_tokenize: model is NULL") {
    (void)f; (void)arg; int n; return rlx_model_tokenize(NULL, "a", 1, NULL, 0, &n);
}
MISUSE(rlx_model_tokenize, null_text, INV, "rlx_model_tokenize: text is NULL") {
    (void)arg; NEED_MODEL(); int n; return rlx_model_tokenize(f->model, NULL, 1, NULL, 0, &n);
}
MISUSE(rlx_model_tokenize, null_count, INV, "rlx_model_tokenize: n is NULL") {
    (void)arg; NEED_MODEL(); return rlx_model_tokenize(f->model, "a", 1, NULL, 0, NULL);
}
MISUSE(rlx_model_tokenize, negative_cap, INV, "rlx_model_tokenize: cap -1 is negative") {
    (void)arg; NEED_MODEL(); int32_t ids[4]; int n; return rlx_model_tokenize(f->model, "a", 1, ids, -1, &n);
}
MISUSE(rlx_model_tokenize, null_ids_with_cap, INV, "rlx_model_tokenize: ids is NULL with cap 4") {
    (void)arg; NEED_MODEL(); int n; return rlx_model_tokenize(f->model, "a", 1, NULL, 4, &n);
}
MISUSE(rlx_model_tokenize, cap_too_small, INV, "rlx_model_tokenize: the text needs") {
    (void)arg; NEED_MODEL(); int32_t ids[1]; int n; return rlx_model_tokenize(f->model, "the cat sat", 1, ids, 1, &n);
}
MISUSE(rlx_model_tokenize, count_query, RLX_OK, NULL) {
    (void)arg; NEED_MODEL(); int n = -1;
    rlx_status st = rlx_model_tokenize(f->model, "the cat", 1, NULL, 0, &n);
    return st == RLX_OK ? VALUE(n > 1) : st;
}
MISUSE(rlx_model_detokenize, null_model, INV, "rlx_model_detokenize: model is NULL") {
    (void)f; (void)arg; size_t len; return rlx_model_detokenize(NULL, NULL, 0, NULL, 0, &len);
}
MISUSE(rlx_model_detokenize, null_len, INV, "rlx_model_detokenize: len is NULL") {
    (void)arg; NEED_MODEL(); char buf[8]; return rlx_model_detokenize(f->model, NULL, 0, buf, 8, NULL);
}
MISUSE(rlx_model_detokenize, negative_n, INV, "rlx_model_detokenize: n -2 is negative") {
    (void)arg; NEED_MODEL(); int32_t ids[1] = {1}; size_t len; return rlx_model_detokenize(f->model, ids, -2, NULL, 0, &len);
}
MISUSE(rlx_model_detokenize, null_ids, INV, "rlx_model_detokenize: ids is NULL with n 3") {
    (void)arg; NEED_MODEL(); size_t len; return rlx_model_detokenize(f->model, NULL, 3, NULL, 0, &len);
}
MISUSE(rlx_model_detokenize, null_buf_with_cap, INV, "rlx_model_detokenize: buf is NULL with cap 8") {
    (void)arg; NEED_MODEL(); int32_t ids[1] = {260}; size_t len; return rlx_model_detokenize(f->model, ids, 1, NULL, 8, &len);
}
MISUSE(rlx_model_detokenize, id_outside_vocab, INV, "rlx_model_detokenize: ids[1] = -5 is outside the vocabulary") {
    (void)arg; NEED_MODEL(); int32_t ids[2] = {260, -5}; size_t len; return rlx_model_detokenize(f->model, ids, 2, NULL, 0, &len);
}
MISUSE(rlx_model_detokenize, cap_too_small, INV, "rlx_model_detokenize: the text needs") {
    (void)arg; NEED_MODEL(); int32_t ids[2] = {260, 261}; char buf[1]; size_t len;
    return rlx_model_detokenize(f->model, ids, 2, buf, 1, &len);
}
MISUSE(rlx_model_reset, null_model, INV, "rlx_model_reset: model is NULL") { (void)f; (void)arg; return rlx_model_reset(NULL); }
MISUSE(rlx_model_report, null_model, RETURNED_FAILURE, "rlx_model_report: model is NULL") {
    (void)f; (void)arg; return ptr_outcome(rlx_model_report(NULL));
}
MISUSE(rlx_model_report, before_any_eval, RETURNED_FAILURE, "rlx_model_report: no eval yet") {
    (void)arg;
    rlx_model *m = tiny_model_load(f->model_path, RLX_BACKEND_CPU);
    if (!m) return RLX_STATUS_INTERNAL;
    rlx_status st = ptr_outcome(rlx_model_report(m));
    char msg[256];
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    rlx_model_free(m);
    rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s", msg);   /* the report's message, not one from the free */
    return st;
}
MISUSE(rlx_model_eval, null_logits, INV, "rlx_model_eval: logits is NULL") {
    (void)arg; NEED_MODEL(); int32_t ids[1] = {260}; return rlx_model_eval(f->model, ids, 1, NULL);
}
MISUSE(rlx_model_eval, null_ids, INV, "rlx_model_eval: ids is NULL") {
    (void)arg; NEED_MODEL(); const float *lg; return rlx_model_eval(f->model, NULL, 1, &lg);
}
MISUSE(rlx_model_eval, n_0, INV, "rlx_model_eval: n 0 must be >= 1") {
    (void)arg; NEED_MODEL(); int32_t ids[1] = {260}; const float *lg; return rlx_model_eval(f->model, ids, 0, &lg);
}
MISUSE(rlx_model_eval, null_model, INV, "rlx_model_eval: model is NULL") {
    (void)f; (void)arg; int32_t ids[1] = {260}; const float *lg; return rlx_model_eval(NULL, ids, 1, &lg);
}
MISUSE(rlx_model_eval, id_outside_vocab, INV, "token 99999 at 0 is outside the vocabulary") {
    (void)arg; NEED_MODEL(); int32_t ids[1] = {99999}; const float *lg; return rlx_model_eval(f->model, ids, 1, &lg);
}
MISUSE(rlx_model_eval, past_context, INV, "context limit") {
    (void)arg; NEED_MODEL(); static int32_t ids[65]; const float *lg; return rlx_model_eval(f->model, ids, 65, &lg);
}
MISUSE(rlx_sampling_init, null_is_noop, RLX_OK, NULL) {
    (void)f; (void)arg;
    rlx_sampling_init(NULL);
    rlx_sampling s;
    rlx_sampling_init(&s);
    return VALUE(s.top_k == 40 && s.repeat_penalty == 1.0f);
}
MISUSE(rlx_model_generate, null_model, INV, "rlx_model_generate: model is NULL") {
    (void)f; (void)arg; return rlx_model_generate(NULL, "a", 1, NULL, NULL, NULL, NULL);
}
MISUSE(rlx_model_generate, null_prompt, INV, "rlx_model_generate: prompt is NULL") {
    (void)arg; NEED_MODEL(); return rlx_model_generate(f->model, NULL, 1, NULL, NULL, NULL, NULL);
}
MISUSE(rlx_model_generate, negative_n_predict, INV, "rlx_model_generate: n_predict -1 is negative") {
    (void)arg; NEED_MODEL(); return rlx_model_generate(f->model, "a", -1, NULL, NULL, NULL, NULL);
}
/* on_token that calls back into the generating model: refused, recorded */
typedef struct reentry { rlx_model *m; int what; rlx_status st; char msg[256]; } reentry;
static int reenter(const char *text, size_t len, int32_t id, void *user) {
    (void)text; (void)len; (void)id;
    reentry *r = user;
    const float *lg;
    int32_t tok = 260;
    r->st = r->what == 0 ? rlx_model_eval(r->m, &tok, 1, &lg)
          : r->what == 1 ? rlx_model_reset(r->m)
                         : rlx_model_generate(r->m, "a", 1, NULL, NULL, NULL, NULL);
    snprintf(r->msg, sizeof r->msg, "%s", rlx_last_error());
    return 1;
}
static rlx_status generate_reentering(fixture *f, int what) {
    if (!f->model) return RLX_STATUS_INTERNAL;
    rlx_sampling s;
    rlx_sampling_init(&s);
    s.temperature = 0;
    reentry r = {.m = f->model, .what = what, .st = SUCCEEDED};
    rlx_status st = rlx_model_generate(f->model, "the cat", 3, &s, reenter, &r, NULL);
    if (st != RLX_OK) return st;
    rlx_fail(r.st, "%s", r.msg);   /* the inner call's message */
    return r.st;
}
MISUSE(rlx_model_eval, inside_on_token, INV, "rlx_model_eval: called from rlx_model_generate's on_token") {
    (void)arg; return generate_reentering(f, 0);
}
MISUSE(rlx_model_reset, inside_on_token, INV, "rlx_model_reset: called from rlx_model_generate's on_token") {
    (void)arg; return generate_reentering(f, 1);
}
MISUSE(rlx_model_generate, inside_on_token, INV, "rlx_model_generate: called from rlx_model_generate's on_token") {
    (void)arg; return generate_reentering(f, 2);
}
/* Generates with one sampling field changed by arg's setter. */
typedef void (*sampling_edit)(rlx_sampling *s);
static rlx_status generate_with(fixture *f, sampling_edit edit) {
    if (!f->model) return RLX_STATUS_INTERNAL;
    rlx_sampling s;
    rlx_sampling_init(&s);
    edit(&s);
    return rlx_model_generate(f->model, "the cat", 2, &s, NULL, NULL, NULL);
}
static void top_p_nan(rlx_sampling *s) { s->top_p = NAN; }
static void temperature_nan(rlx_sampling *s) { s->temperature = NAN; }
static void top_p_negative(rlx_sampling *s) { s->top_p = -0.5f; }
static void min_p_2(rlx_sampling *s) { s->min_p = 2.0f; }
static void repeat_penalty_0(rlx_sampling *s) { s->repeat_penalty = 0; }
static void repeat_penalty_inf(rlx_sampling *s) { s->repeat_penalty = INFINITY; }
static void repeat_last_n_negative(rlx_sampling *s) { s->repeat_last_n = -1; }
static void repeat_last_n_huge(rlx_sampling *s) { s->repeat_last_n = INT_MAX; }
static void min_p_negative(rlx_sampling *s) { s->min_p = -1.0f; }
MISUSE(rlx_model_generate, top_p_nan, INV, "sampling top_p is NaN") { (void)arg; return generate_with(f, top_p_nan); }
MISUSE(rlx_model_generate, temperature_nan, INV, "sampling temperature is NaN") { (void)arg; return generate_with(f, temperature_nan); }
MISUSE(rlx_model_generate, top_p_negative, INV, "sampling top_p -0.5 is negative") { (void)arg; return generate_with(f, top_p_negative); }
MISUSE(rlx_model_generate, min_p_above_1, INV, "sampling min_p 2 is above 1") { (void)arg; return generate_with(f, min_p_2); }
MISUSE(rlx_model_generate, repeat_penalty_0, INV, "sampling repeat_penalty 0 must be finite and > 0") {
    (void)arg; return generate_with(f, repeat_penalty_0);
}
MISUSE(rlx_model_generate, repeat_penalty_inf, INV, "sampling repeat_penalty inf") { (void)arg; return generate_with(f, repeat_penalty_inf); }
MISUSE(rlx_model_generate, repeat_last_n_negative, INV, "sampling repeat_last_n -1 is negative") {
    (void)arg; return generate_with(f, repeat_last_n_negative);
}
/* documented: a look-back past the context is bounded by it, min_p <= 0 is off */
MISUSE(rlx_model_generate, repeat_last_n_huge_is_bounded, RLX_OK, NULL) { (void)arg; return generate_with(f, repeat_last_n_huge); }
MISUSE(rlx_model_generate, min_p_negative_is_off, RLX_OK, NULL) { (void)arg; return generate_with(f, min_p_negative); }
MISUSE(rlx_model_generate, null_sampling_is_defaults, RLX_OK, NULL) {
    (void)arg; NEED_MODEL(); return rlx_model_generate(f->model, "the cat", 2, NULL, NULL, NULL, NULL);
}

/* ------------------------------------------------------- the matrix runs */

static bool row_passes(const matrix_row *r, rlx_status got, const char *msg) {
    if (got != r->want) return false;
    if (r->want == RLX_OK) return true;
    return msg[0] && r->msg && strstr(msg, r->msg);
}

TEST(api_matrix_misuse_cases) {
    char path[128];
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    tiny_model_tmp_path(path, sizeof path, "matrix");
    CHECK(tiny_model_write(&spec, path) == 0);
    fixture f = {.model_path = path};
    f.model = tiny_model_load(path, RLX_BACKEND_CPU);
    int failed = 0;
    for (int i = 0; i < n_rows; i++) {
        const matrix_row *r = &rows[i];
        fixture c = f;
        fx_graph(&c);
        c.e = NULL;
        rlx_clear_error();
        rlx_status got = r->run(&c, r->arg);
        char msg[512];
        snprintf(msg, sizeof msg, "%s", rlx_last_error());
        rlx_exec_free(c.e);
        rlx_graph_free(c.g);
        if (getenv("RLX_MATRIX_VERBOSE")) printf("    . %s / %s: %s '%s'\n", r->fn, r->what, outcome_name(got), msg);
        if (!row_passes(r, got, msg)) {
            failed++;
            printf("    %s / %s: got %s, want %s with '%s'; message '%s'\n", r->fn, r->what, outcome_name(got),
                   outcome_name(r->want), r->msg ? r->msg : "", msg);
        }
    }
    /* the shared model took every misuse and still works */
    const float *lg = NULL;
    int32_t id = 260;
    rlx_status after = f.model && rlx_model_reset(f.model) == RLX_OK ? rlx_model_eval(f.model, &id, 1, &lg) : RLX_STATUS_INTERNAL;
    rlx_model_free(f.model);
    unlink(path);
    CHECK_MSG(failed == 0, "%d of %d misuse rows failed", failed, n_rows);
    CHECK_MSG(after == RLX_OK && lg, "the model after the matrix: %s", rlx_last_error());
}

/* Function names declared in rlx.h: identifiers rlx_* followed by '(' outside
 * comments and preprocessor lines (a function-pointer typedef's name, as in
 * (*rlx_log_fn)(...), is followed by ')', so it is not counted). */
static int header_functions(const char *text, char names[][64], int cap) {
    int n = 0;
    size_t len = strlen(text);
    bool line_start = true;
    for (size_t i = 0; i < len;) {
        if (text[i] == '/' && text[i + 1] == '*') {
            const char *end = strstr(text + i + 2, "*/");
            i = end ? (size_t)(end - text) + 2 : len;
            continue;
        }
        if (text[i] == '/' && text[i + 1] == '/') { while (i < len && text[i] != '\n') i++; continue; }
        if (line_start && text[i] == '#') {   /* a directive, with its continuation lines */
            while (i < len && !(text[i] == '\n' && text[i - 1] != '\\')) i++;
            continue;
        }
        if (text[i] == '\n') { line_start = true; i++; continue; }
        if (isspace((unsigned char)text[i])) { i++; continue; }
        line_start = false;
        if (isalpha((unsigned char)text[i]) || text[i] == '_') {
            size_t s = i;
            while (i < len && (isalnum((unsigned char)text[i]) || text[i] == '_')) i++;
            size_t j = i;
            while (j < len && (text[j] == ' ' || text[j] == '\t')) j++;
            bool is_rlx = i - s > 4 && strncmp(text + s, "rlx_", 4) == 0 && i - s < 64;
            if (is_rlx && j < len && text[j] == '(') {
                bool seen = false;
                for (int k = 0; k < n && !seen; k++) seen = strlen(names[k]) == i - s && strncmp(names[k], text + s, i - s) == 0;
                if (!seen && n < cap) { memcpy(names[n], text + s, i - s); names[n][i - s] = 0; n++; }
            }
            continue;
        }
        i++;
    }
    return n;
}

/* include/rlx.h next to this file's tests/ folder: __FILE__ is the path the
 * build compiled (tests/test_api_matrix.c from the repository root). */
static void header_path(char *buf, size_t n) {
    const char *file = __FILE__, *slash = strrchr(file, '/'), *up = NULL;
    for (const char *p = file; slash && p < slash; p++) if (*p == '/') up = p;
    if (!slash) snprintf(buf, n, "../include/rlx.h");
    else if (!up) snprintf(buf, n, "include/rlx.h");
    else snprintf(buf, n, "%.*s/include/rlx.h", (int)(up - file), file);
}

TEST(api_matrix_covers_rlx_h) {
    char path[512];
    header_path(path, sizeof path);
    void *text = NULL;
    size_t size = 0;
    CHECK_MSG(test_read_file(path, &text, &size), "cannot read %s", path);
    char *h = realloc(text, size + 1);
    CHECK(h);
    h[size] = 0;
    static char names[400][64];
    int n = header_functions(h, names, 400);
    free(h);
    CHECK_MSG(n > 100, "only %d functions found in %s: the parser is broken", n, path);
    CHECK_MSG(rows_dropped == 0, "%d rows past MAX_ROWS (%d) were dropped: raise it", rows_dropped, MAX_ROWS);
    int missing = 0;
    char list[4096] = "";
    for (int i = 0; i < n; i++) {
        bool found = false;
        for (int r = 0; r < n_rows && !found; r++) found = strcmp(rows[r].fn, names[i]) == 0;
        if (!found) {
            missing++;
            size_t l = strlen(list);
            snprintf(list + l, sizeof list - l, " %.63s", names[i]);
        }
    }
    CHECK_MSG(missing == 0, "%d function(s) of rlx.h have no row in tests/test_api_matrix.c:%s", missing, list);
    for (int r = 0; r < n_rows; r++) {   /* and no row names a function the header lacks */
        bool found = false;
        for (int i = 0; i < n && !found; i++) found = strcmp(rows[r].fn, names[i]) == 0;
        CHECK_MSG(found, "row %s / %s names no function of rlx.h", rows[r].fn, rows[r].what);
    }
    printf("    %d functions in rlx.h, %d misuse rows\n", n, n_rows);
}
