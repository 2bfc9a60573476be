/*
 * ir.h — the graph IR: dims (static or affine in symbols), shapes, nodes, the
 * op table, and the graph that the builder appends to.
 *
 * A graph is append-only SSA: a node's inputs always have smaller ids, so
 * insertion order is a topological order. Nothing here knows any backend.
 */
#ifndef RLX_IR_H
#define RLX_IR_H

#include "core/core.h"

#define IR_MAX_SYMS   4
#define IR_MAX_INPUTS 8
#define IR_MAX_RANK   RLX_MAX_RANK
/* Most elements one tensor may have (2^48): beyond any real memory, and small
 * enough that element counts, strides and byte sizes (<= 8 bytes an element)
 * computed in int64 never overflow, even summed over a graph's tensors. */
#define IR_MAX_NUMEL  ((int64_t)1 << 48)

/* A dim: k + sum(coef[s] * symbol_s). Static when every coef is 0. Affine
 * forms cover what shape rules need: past+seq, seq*heads, ... */
typedef struct ir_dim {
    int64_t k;
    int64_t coef[IR_MAX_SYMS];
} ir_dim;

typedef struct ir_shape {
    int    rank;
    ir_dim d[IR_MAX_RANK];
} ir_shape;

typedef enum ir_op {
#define X(id, name, arity, rule, doc) IR_OP_##id,
#include "ir/ops.def"
#undef X
    IR_OP_COUNT
} ir_op;

/* Attribute slots. Only the named accessors of ir/op_attrs.h (generated from
 * ir/op_attrs.def, which says what each op's attributes mean) index them. */
#define IR_MAX_IATTR 20
#define IR_MAX_FATTR 4

typedef struct ir_node {
    ir_op     op;
    rlx_dtype dtype;
    int       n_in;
    int32_t   in[IR_MAX_INPUTS];
    ir_shape  shape;
    int64_t   ia[IR_MAX_IATTR];
    double    fa[IR_MAX_FATTR];
    char     *name;        /* optional, owned */
    void     *data;        /* CONST: owned copy of the bytes */
    size_t    data_bytes;
} ir_node;

#include "ir/op_attrs.h"

typedef struct ir_output {
    char   *name;
    int32_t node;
} ir_output;

typedef struct ir_graph {
    ir_node   *nodes;
    int32_t    n_nodes, cap_nodes;
    ir_output *outputs;
    int32_t    n_outputs, cap_outputs;
    char      *sym_names[IR_MAX_SYMS];
    int        n_syms;
    rlx_status first_error;
} ir_graph;

/* The public rlx_graph is an ir_graph plus the text of its first builder
 * error, which rlx_compile reports. */
struct rlx_graph {
    ir_graph g;
    char     first_error_msg[512];
};

/* Attributes: ir/op_attrs.def (the slots and what they mean). Inputs and
 * outputs beyond ops.def:
 *   CAST:         (dtype = target)
 *   RMS_DEQUANT_MATMUL/_SWIGLU: inputs x, w[, wu], gamma (the norm fused in, gamma last)
 *   KV_WRITE:     (inputs cache, rows, pos; output aliases the cache param)
 *   ROPE_KV_WRITE: inputs cache, x, pos [, offset] [, freq factors]; output aliases the cache
 *   ATTENTION_DEQUANT: inputs attention's, then w [, r]; x is attention's result as [rows, K]
 *   DEQUANT_ROPE_KV: inputs the consumer's with the product's x at its x slot, then w [, gamma];
 *                 kv forms alias the cache
 *   INPUT/PARAM:  name = interface name
 */

/* dims */
ir_dim  ir_dim_const(int64_t v);
ir_dim  ir_dim_sym(int s);
bool    ir_dim_is_static(ir_dim d);
bool    ir_dim_eq(ir_dim a, ir_dim b);
bool    ir_shape_eq(const ir_shape *a, const ir_shape *b);   /* same rank and dims */
ir_dim  ir_dim_add(ir_dim a, ir_dim b);
/* A dim's value for symbol values, and a dim times c; false (nothing
 * written) when that overflows int64. */
bool    ir_dim_eval_checked(ir_dim d, const int64_t *sym_values, int64_t *out);
bool    ir_dim_scale_checked(ir_dim a, int64_t c, ir_dim *out);
/* a / c where c divides k and every coefficient; false otherwise. */
bool    ir_dim_div_exact(ir_dim a, int64_t c, ir_dim *out);
/* Formats into buf, e.g. "seq", "past+seq", "12*seq", "64". */
void    ir_dim_format(ir_dim d, const ir_graph *g, char *buf, size_t n);
int64_t ir_dim_to_public(ir_dim d);  /* static value, single symbol code, or RLX_DIM_INFER */

/* Bytes of a node's tensor (static shape; block-quantized dtypes whole blocks). */
int64_t ir_node_bytes(const ir_node *n);

/* shapes */
bool    ir_shape_is_static(const ir_shape *s);
int64_t ir_shape_numel(const ir_shape *s);       /* static shapes only; callers rely on ir_shape_size_ok having held */
/* The product of the static dims (a 0 counted as 1, so strides stay bounded
 * too) is at most IR_MAX_NUMEL. Symbolic dims are checked once bound. */
bool    ir_shape_size_ok(const ir_shape *s);
void    ir_shape_format(const ir_shape *s, const ir_graph *g, char *buf, size_t n);
/* Static dims of a static shape. */
void    ir_shape_dims(const ir_shape *s, int64_t *dims);
/* Elements of a row of a static shape: its last dim (1 for a scalar); the
 * unit block-quantized data comes in (whole blocks per row). */
int64_t ir_shape_row_elems(const ir_shape *s);

/* graph storage */
void       ir_graph_init(ir_graph *g);
void       ir_graph_clear(ir_graph *g);
rlx_status ir_graph_clone(const ir_graph *src, ir_graph *dst);
/* Appends a node (copies n; takes ownership of n->name and n->data on success)
 * after running the op's shape rule, whose status it returns. */
rlx_status ir_graph_append(ir_graph *g, ir_node *n, int32_t *out_id);
const char *ir_node_label(const ir_graph *g, int32_t id, char *buf, size_t n); /* "matmul 'q'" / "matmul #12" */
/* KV_WRITE / ROPE_KV_WRITE semantics shared by the backends: rows [pos, pos +
 * rows) must lie in a cache of cap rows. The error names the node as the user
 * built it ("kv_write 'name'", or "kv_write": a fused rope_kv_write keeps the
 * kv_write's name, and optimized-graph indices mean nothing to a user), so
 * every backend, fused or not, reports a full cache alike. */
rlx_status ir_kv_range_check(const ir_node *kv, int64_t pos, int64_t rows, int64_t cap);
/* The rounded-x image a backend's decode matvecs hand on (Vulkan:
 * vk_backend_plan_x_images, per specialization): on a producer (a
 * dequant_matmul form, attention_dequant_matmul) ximage_out = its image
 * slot + 1; on a consumer (a dequant_matmul form, dequant_rope_kv)
 * ximage_from = the producer's id + 1, whose image it reads x from.
 * 0: none. The value computed is unchanged (the image holds x rounded as the
 * consumer's own 8-bit rounding would); the CPU ignores them. These read any
 * op (0 where it has no such slot); the setters take only the ops that have
 * one (ir/op_attrs.def) and return false for any other. */
static inline int64_t ir_ximage_out(const ir_node *n) {
    switch (ir_op_attr_family(n->op)) {
    case IR_ATTR_FAMILY_dequant: return ir_attr_dequant_ximage_out(n);
    case IR_ATTR_FAMILY_rms_dequant: return ir_attr_rms_dequant_ximage_out(n);
    case IR_ATTR_FAMILY_attention_dequant: return ir_attr_attention_dequant_ximage_out(n);
    default: return 0;
    }
}
static inline int64_t ir_ximage_from(const ir_node *n) {
    switch (ir_op_attr_family(n->op)) {
    case IR_ATTR_FAMILY_dequant: return ir_attr_dequant_ximage_from(n);
    case IR_ATTR_FAMILY_rms_dequant: return ir_attr_rms_dequant_ximage_from(n);
    case IR_ATTR_FAMILY_dequant_rope_kv: return ir_attr_dequant_rope_kv_ximage_from(n);
    default: return 0;
    }
}
static inline bool ir_set_ximage_out(ir_node *n, int64_t v) {
    switch (ir_op_attr_family(n->op)) {
    case IR_ATTR_FAMILY_dequant: ir_attr_set_dequant_ximage_out(n, v); return true;
    case IR_ATTR_FAMILY_rms_dequant: ir_attr_set_rms_dequant_ximage_out(n, v); return true;
    case IR_ATTR_FAMILY_attention_dequant: ir_attr_set_attention_dequant_ximage_out(n, v); return true;
    default: return false;
    }
}
static inline bool ir_set_ximage_from(ir_node *n, int64_t v) {
    switch (ir_op_attr_family(n->op)) {
    case IR_ATTR_FAMILY_dequant: ir_attr_set_dequant_ximage_from(n, v); return true;
    case IR_ATTR_FAMILY_rms_dequant: ir_attr_set_rms_dequant_ximage_from(n, v); return true;
    case IR_ATTR_FAMILY_dequant_rope_kv: ir_attr_set_dequant_rope_kv_ximage_from(n, v); return true;
    default: return false;
    }
}
/* ATTENTION_DEQUANT: attention's inputs are [0, attention_inputs), then w, then r. */
static inline int ir_attention_dequant_w(const ir_node *n) { return (int)ir_attr_attention_dequant_attention_inputs(n); }
/* DEQUANT_ROPE_KV's input slots: the product's x (the consumer's x slot) and w. */
static inline int ir_dequant_rope_kv_x(const ir_node *n) { return ir_attr_dequant_rope_kv_consumer_op(n) == IR_OP_ROPE ? 0 : 1; }
static inline int ir_dequant_rope_kv_w(const ir_node *n) {
    return n->n_in - 1 - (ir_attr_dequant_rope_kv_has_gamma(n) ? 1 : 0);
}
/* Whether node n writes a KV cache param in place (its in[0], pos in[2]):
 * kv_write, rope_kv_write, and dequant_rope_kv of those two. */
static inline bool ir_writes_kv_cache(const ir_node *n) {
    return n->op == IR_OP_KV_WRITE || n->op == IR_OP_ROPE_KV_WRITE ||
           (n->op == IR_OP_DEQUANT_ROPE_KV && ir_attr_dequant_rope_kv_consumer_op(n) != IR_OP_ROPE);
}
/* Whether node n writes a param in place (its in[0]): the KV-cache writes
 * and assign. The planner aliases its result to the param; dead-code
 * removal keeps assign even when no output depends on it. */
static inline bool ir_writes_param(const ir_node *n) { return ir_writes_kv_cache(n) || n->op == IR_OP_ASSIGN; }
/* The nodes a fused decode op was made of (passes/fold_decode.c), rebuilt
 * with their own ops, inputs (n_in, in[] node ids) and attributes, for the
 * shape rules and kernels the fused op reuses; name, shape and dtype stay
 * the fused node's (callers set what they need), data is NULL.
 *   ir_dequant_rope_kv_product:  dequant_matmul(x, w) or rms_dequant_matmul(x, w, gamma)
 *   ir_dequant_rope_kv_consumer: rope / rope_kv_write / kv_write on its inputs
 *                                before w (its x slot still the product's x)
 *   ir_attention_dequant_attention: attention on its inputs [0, w)
 *   ir_attention_dequant_product: dequant_matmul[_add](x, w[, r]), x's id
 *                                 attention's q (a placeholder: x is no node) */
void ir_dequant_rope_kv_product(const ir_node *n, ir_node *p);
void ir_dequant_rope_kv_consumer(const ir_node *n, ir_node *c);
void ir_attention_dequant_attention(const ir_node *n, ir_node *a);
void ir_attention_dequant_product(const ir_node *n, ir_node *p);
int32_t    ir_graph_find_io(const ir_graph *g, ir_op op, const char *name);
int32_t    ir_graph_find_output(const ir_graph *g, const char *name);

/* op table */
typedef rlx_status (*ir_shape_rule)(const ir_graph *g, ir_node *n);
typedef struct ir_op_info {
    const char   *name;
    int           arity;
    ir_shape_rule rule;
    const char   *doc;
} ir_op_info;
const ir_op_info *ir_op_info_get(ir_op op);

/* Re-runs every shape rule in order (after input shapes change). */
rlx_status ir_graph_infer_shapes(ir_graph *g);
/* Structural checks: input ids in range and earlier, arity, outputs valid. */
rlx_status ir_graph_verify(const ir_graph *g);


/* Text dump, malloc'ed. */
char *ir_graph_dump(const ir_graph *g);

/* Broadcast helper used by rules and kernels: out = broadcast(a, b). */
rlx_status ir_broadcast_shapes(const ir_shape *a, const ir_shape *b, ir_shape *out);

bool ir_dtype_is_float(rlx_dtype dt);
bool ir_dtype_is_int(rlx_dtype dt);

#endif
