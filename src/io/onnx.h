/*
 * onnx.h — read ONNX model files (a ModelProto in protobuf's wire format)
 * into plain C structs, for the ONNX importer.
 *
 * The reader is our own, not a protobuf library: the wire format is five
 * encodings and the schema needs about forty fields, so a bounds-checked
 * reader of a few hundred lines beats a generated-code dependency for an
 * embeddable runtime (docs/formats.md, "ONNX"). Every length and offset is
 * checked against the buffer before it is used; a malformed file gives
 * RLX_STATUS_FORMAT with the byte offset and the message it was in, never a
 * crash. Unknown fields are skipped, as protobuf does. Repeated numbers are
 * accepted packed and unpacked.
 *
 * Strings and tensor bytes are borrowed from the buffer (onnx_str, not
 * NUL-terminated); the buffer must outlive the model. Everything else lives
 * in the model's arena, freed by onnx_model_free.
 */
#ifndef RLX_IO_ONNX_H
#define RLX_IO_ONNX_H

#include "core/core.h"

#define ONNX_MAX_DEPTH 16   /* nesting of graphs in attributes (If, Loop bodies) */

typedef struct onnx_str { const char *p; size_t n; } onnx_str;

/* TensorProto.DataType values (the format's numbers). */
enum {
    ONNX_FLOAT = 1, ONNX_UINT8 = 2, ONNX_INT8 = 3, ONNX_UINT16 = 4, ONNX_INT16 = 5, ONNX_INT32 = 6,
    ONNX_INT64 = 7, ONNX_STRING = 8, ONNX_BOOL = 9, ONNX_FLOAT16 = 10, ONNX_DOUBLE = 11,
    ONNX_UINT32 = 12, ONNX_UINT64 = 13, ONNX_BFLOAT16 = 16,
};

typedef struct onnx_tensor {
    onnx_str name;
    int32_t  data_type;
    int      n_dims;
    int64_t *dims;
    onnx_str raw_data;            /* raw_data bytes, little-endian (empty if absent) */
    /* the typed fields, decoded (counts are elements) */
    float   *float_data;   size_t n_float;
    int32_t *int32_data;   size_t n_int32;    /* also f16/bf16/bool/int8..uint16 bit patterns */
    int64_t *int64_data;   size_t n_int64;
    double  *double_data;  size_t n_double;
    uint64_t *uint64_data; size_t n_uint64;
    /* external data (data_location EXTERNAL): the "location", "offset", "length" entries */
    bool     external;
    onnx_str location;
    int64_t  ext_offset, ext_length;   /* -1 when not given */
} onnx_tensor;

/* AttributeProto.AttributeType */
enum {
    ONNX_ATTR_FLOAT = 1, ONNX_ATTR_INT = 2, ONNX_ATTR_STRING = 3, ONNX_ATTR_TENSOR = 4, ONNX_ATTR_GRAPH = 5,
    ONNX_ATTR_FLOATS = 6, ONNX_ATTR_INTS = 7, ONNX_ATTR_STRINGS = 8, ONNX_ATTR_TENSORS = 9, ONNX_ATTR_GRAPHS = 10,
};

typedef struct onnx_graph onnx_graph;

typedef struct onnx_attr {
    onnx_str name;
    int32_t  type;                /* ONNX_ATTR_*; 0 when the file did not say */
    float    f;
    int64_t  i;
    onnx_str s;
    onnx_tensor *t;
    onnx_graph  *g;
    float   *floats;  size_t n_floats;
    int64_t *ints;    size_t n_ints;
    onnx_str *strings; size_t n_strings;
    onnx_tensor *tensors; size_t n_tensors;
    onnx_graph  *graphs;  size_t n_graphs;
    onnx_str ref_attr_name;       /* functions only */
} onnx_attr;

typedef struct onnx_node {
    onnx_str  name, op_type, domain;
    onnx_str *inputs;  int n_inputs;    /* "" is an omitted optional input */
    onnx_str *outputs; int n_outputs;
    onnx_attr *attrs;  int n_attrs;
} onnx_node;

/* A dim of a value's shape: a number, a name (symbolic), or unknown. */
typedef struct onnx_dim {
    bool     has_value;
    int64_t  value;
    onnx_str param;               /* dim_param; empty if none */
} onnx_dim;

typedef struct onnx_value_info {
    onnx_str  name;
    int32_t   elem_type;          /* 0 when the type is not a tensor or not given */
    bool      has_shape;
    int       rank;
    onnx_dim *dims;
} onnx_value_info;

struct onnx_graph {
    onnx_str name;
    onnx_node *nodes;               int n_nodes;
    onnx_tensor *initializers;      int n_initializers;
    onnx_value_info *inputs;        int n_inputs;
    onnx_value_info *outputs;       int n_outputs;
    onnx_value_info *value_info;    int n_value_info;
    int n_sparse_initializers;      /* counted: the importer rejects them */
};

typedef struct onnx_opset { onnx_str domain; int64_t version; } onnx_opset;

typedef struct onnx_model {
    int64_t     ir_version;
    onnx_str    producer_name, producer_version;
    onnx_opset *opsets; int n_opsets;
    onnx_graph  graph;
    bool        has_graph;
    struct onnx_arena *arena;
} onnx_model;

/* Parses the n bytes at data (borrowed) into *m. FORMAT on any malformed
 * input, OUT_OF_MEMORY; *m is then empty and needs no free. */
rlx_status onnx_parse(const void *data, size_t n, onnx_model *m);
void       onnx_model_free(onnx_model *m);

/* The opset version of domain ("" and "ai.onnx" are the default domain), or
 * 0 when the model imports none. */
int64_t onnx_opset_version(const onnx_model *m, const char *domain);
/* s equals the C string z. */
bool onnx_str_eq(onnx_str s, const char *z);
/* "name" of a node attribute, or NULL. */
const onnx_attr *onnx_node_attr(const onnx_node *n, const char *name);
/* The data type's name ("FLOAT", ...; "?" if unknown). */
const char *onnx_type_name(int32_t data_type);

#endif
