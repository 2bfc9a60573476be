/*
 * onnx_import.h — the ONNX front end's internals shared by its files: the
 * value table (each ONNX value name is a graph node, or a small int64 / float
 * tensor known at import time, which is how Shape, Constant, Range and the
 * shape arithmetic of exports fold away), and the operator table.
 */
#ifndef RLX_MODELS_ONNX_IMPORT_H
#define RLX_MODELS_ONNX_IMPORT_H

#include "io/onnx.h"
#include "rlx.h"

#define OX_HOST_MAX 4096   /* elements a host (import-time) value may have */
/* An import-time dim that is a symbol times a size (nn.MultiheadAttention's
 * batch * heads): not a dim rlx can name, but a Reshape target may hold one,
 * which then becomes the dim rlx_reshape infers (-1). */
#define OX_DIM_SCALED_SYMBOL (-(INT64_C(1) << 62))

typedef struct ox_value {
    char    *name;
    rlx_node node;             /* RLX_NO_NODE when only the host value exists */
    bool     host;             /* the value is known at import: */
    rlx_dtype host_dtype;      /* RLX_I64 (shapes, indices; symbols as <= -2) or RLX_F32 / RLX_BOOL */
    int      host_rank;
    int64_t  host_dims[RLX_MAX_RANK];
    int64_t *i64;              /* host_dtype I64 or BOOL (0/1) */
    double  *f64;              /* host_dtype F32 */
    int64_t  host_count;
} ox_value;

typedef struct ox_ctx {
    rlx_graph *g;
    const onnx_model *m;
    int64_t opset;
    ox_value *values;
    int n_values, cap_values;
    const onnx_node *node;     /* the node being imported, for messages */
    struct rlx_onnx *owner;    /* where tensors' data lives (external files) */
    rlx_status err;            /* the first ox_fail, so a handler's NO_NODE path reports it */
} ox_ctx;

typedef rlx_status (*ox_handler)(ox_ctx *c, const onnx_node *n);

typedef struct ox_op { const char *name; ox_handler fn; } ox_op;

/* The operator table (onnx_ops.c), sorted by name. */
const ox_op *ox_find_op(const char *name, size_t len);
int         ox_op_count(void);
const char *ox_op_name(int i);

/* Handlers in onnx_ops_vision.c: Resize, DepthToSpace / SpaceToDepth. */
rlx_status ox_op_resize(ox_ctx *c, const onnx_node *n);
rlx_status ox_op_depth_space(ox_ctx *c, const onnx_node *n);

/* Values (onnx_import.c). */
ox_value *ox_lookup(ox_ctx *c, onnx_str name);
rlx_status ox_set_node(ox_ctx *c, onnx_str name, rlx_node x);
rlx_status ox_set_host(ox_ctx *c, onnx_str name, rlx_dtype dt, int rank, const int64_t *dims, const int64_t *i64,
                       const double *f64);
/* Input i of the current node as a graph node (materializing a host value
 * as a constant). RLX_NO_NODE with an error when it is missing. */
rlx_node ox_in(ox_ctx *c, const onnx_node *n, int i);
/* Whether input i is given (present and not ""). */
bool ox_has(const onnx_node *n, int i);
/* Input i as an import-time value (NULL with an error when not known). */
const ox_value *ox_host_in(ox_ctx *c, const onnx_node *n, int i);
/* An error about the current node. */
rlx_status ox_fail(ox_ctx *c, rlx_status st, const char *fmt, ...);
rlx_status ox_graph_status(ox_ctx *c);

/* A tensor (an initializer, a Constant's value) as an import-time value. */
rlx_status ox_host_from_tensor(ox_ctx *c, onnx_str name, const onnx_tensor *t);

/* Attributes with defaults. */
int64_t ox_attr_i(const onnx_node *n, const char *name, int64_t dflt);
float   ox_attr_f(const onnx_node *n, const char *name, float dflt);
/* ints attribute: count (or -1 when absent) and values in out[0..cap). */
int     ox_attr_ints(const onnx_node *n, const char *name, int64_t *out, int cap);

#endif
