/*
 * onnx_import.c — the ONNX front end: an .onnx file (io/onnx.h) into an
 * rlx_graph, its initializers as params with their data, so that the graph
 * compiles, runs and trains like any other (rlx_onnx_* in rlx.h).
 *
 * Graph inputs become rlx inputs; a named dim (dim_param, a dynamic batch)
 * becomes a symbol of that name. Float initializers become params named as
 * in the file; integer initializers (shapes, indices, axes) become import-
 * time values, as do Constant, Shape, Range and the integer arithmetic of
 * exports, so shape computations fold away at import. Before any node is
 * built, every operator is checked against the table (onnx_ops.c): a model
 * with unsupported operators fails with one error listing all of them.
 *
 * External data is read from files beside the model, mapped, with every
 * offset and length checked against the file.
 */
#include "models/onnx_import.h"
#include "core/file_map.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ox_param {
    char       *name;
    rlx_dtype   dtype;
    const void *data;     /* into a mapping, or own */
    void       *own;
    size_t      bytes;
} ox_param;

struct rlx_onnx {
    rlx_file_map file;
    rlx_file_map *ext;    /* external data files */
    char **ext_names;
    int n_ext;
    onnx_model model;
    rlx_graph *graph;
    ox_param *params;
    int n_params;
    char *dir;            /* the model's folder, for external data */
};

/* ----------------------------------------------------------------- values */

static char *dup_str(onnx_str s) {
    char *p = malloc(s.n + 1);
    if (p && s.n) memcpy(p, s.p, s.n);
    if (p) p[s.n] = 0;
    return p;
}

ox_value *ox_lookup(ox_ctx *c, onnx_str name) {
    for (int i = c->n_values - 1; i >= 0; i--)
        if (strlen(c->values[i].name) == name.n && (name.n == 0 || !memcmp(c->values[i].name, name.p, name.n))) return &c->values[i];
    return NULL;
}

static ox_value *new_value(ox_ctx *c, onnx_str name) {
    if (c->n_values == c->cap_values) {
        int cap = c->cap_values ? 2 * c->cap_values : 256;
        ox_value *v = realloc(c->values, sizeof *v * (size_t)cap);
        if (!v) return NULL;
        c->values = v, c->cap_values = cap;
    }
    ox_value *v = &c->values[c->n_values];
    memset(v, 0, sizeof *v);
    v->node = RLX_NO_NODE;
    if (!(v->name = dup_str(name))) return NULL;
    c->n_values++;
    return v;
}

rlx_status ox_fail(ox_ctx *c, rlx_status st, const char *fmt, ...) {
    char why[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (c->err == RLX_OK) c->err = st;
    if (c->node)
        return rlx_fail(st, "onnx: node '%.*s' (%.*s): %s", (int)c->node->name.n, c->node->name.p, (int)c->node->op_type.n,
                        c->node->op_type.p, why);
    return rlx_fail(st, "onnx: %s", why);
}

rlx_status ox_graph_status(ox_ctx *c) {
    if (c->err != RLX_OK) return c->err;   /* its message is the last error already */
    rlx_status st = rlx_graph_status(c->g);
    if (st == RLX_OK) return RLX_OK;
    char msg[600];
    snprintf(msg, sizeof msg, "%s", rlx_last_error());
    return ox_fail(c, st, "%s", msg);
}

rlx_status ox_set_node(ox_ctx *c, onnx_str name, rlx_node x) {
    if (x == RLX_NO_NODE) {
        rlx_status st = ox_graph_status(c);
        return st != RLX_OK ? st : ox_fail(c, RLX_STATUS_INTERNAL, "no node was made");
    }
    ox_value *v = new_value(c, name);
    if (!v) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
    v->node = x;
    return RLX_OK;
}

rlx_status ox_set_host(ox_ctx *c, onnx_str name, rlx_dtype dt, int rank, const int64_t *dims, const int64_t *i64,
                       const double *f64) {
    if (rank < 0 || rank > RLX_MAX_RANK) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "an import-time value of rank %d", rank);
    int64_t count = 1;
    for (int d = 0; d < rank; d++) {
        if (dims[d] < 0) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "an import-time value with dim %lld", (long long)dims[d]);
        if (dims[d] && count > OX_HOST_MAX / dims[d])
            return ox_fail(c, RLX_STATUS_UNSUPPORTED, "an import-time value of more than %d elements", (int)OX_HOST_MAX);
        count *= dims[d];
    }
    if (count > OX_HOST_MAX)
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "an import-time value of %lld elements is too large", (long long)count);
    ox_value *v = new_value(c, name);
    if (!v) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
    v->host = true, v->host_dtype = dt, v->host_rank = rank, v->host_count = count;
    memcpy(v->host_dims, dims, sizeof *dims * (size_t)rank);
    size_t n = (size_t)(count ? count : 1);
    if (dt == RLX_F32) {
        if (!(v->f64 = malloc(sizeof *v->f64 * n))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
        if (count) memcpy(v->f64, f64, sizeof *f64 * (size_t)count);
    } else {
        if (!(v->i64 = malloc(sizeof *v->i64 * n))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
        if (count) memcpy(v->i64, i64, sizeof *i64 * (size_t)count);
    }
    return RLX_OK;
}

bool ox_has(const onnx_node *n, int i) { return i < n->n_inputs && n->inputs[i].n > 0; }

static rlx_node materialize(ox_ctx *c, ox_value *v) {
    if (v->node != RLX_NO_NODE) return v->node;
    size_t n = (size_t)(v->host_count ? v->host_count : 1);
    for (int64_t i = 0; v->host_dtype != RLX_F32 && i < v->host_count; i++)
        if (v->i64[i] <= -2 && v->host_dtype == RLX_I64) {
            ox_fail(c, RLX_STATUS_UNSUPPORTED, "'%s' holds a symbolic dim and is used as a tensor", v->name);
            return RLX_NO_NODE;
        }
    void *buf = malloc(n * 8);
    if (!buf) {
        rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
        return RLX_NO_NODE;
    }
    for (int64_t i = 0; i < v->host_count; i++) {
        if (v->host_dtype == RLX_F32) ((float *)buf)[i] = (float)v->f64[i];
        else if (v->host_dtype == RLX_BOOL) ((uint8_t *)buf)[i] = v->i64[i] != 0;
        else ((int64_t *)buf)[i] = v->i64[i];
    }
    v->node = rlx_constant(c->g, v->host_dtype, v->host_rank, v->host_dims, buf);
    free(buf);
    return v->node;
}

rlx_node ox_in(ox_ctx *c, const onnx_node *n, int i) {
    if (!ox_has(n, i)) {
        ox_fail(c, RLX_STATUS_FORMAT, "input %d is missing", i);
        return RLX_NO_NODE;
    }
    ox_value *v = ox_lookup(c, n->inputs[i]);
    if (!v) {
        ox_fail(c, RLX_STATUS_FORMAT, "input '%.*s' is not produced by any earlier node, input or initializer",
                (int)n->inputs[i].n, n->inputs[i].p);
        return RLX_NO_NODE;
    }
    return materialize(c, v);
}

const ox_value *ox_host_in(ox_ctx *c, const onnx_node *n, int i) {
    if (!ox_has(n, i)) {
        ox_fail(c, RLX_STATUS_FORMAT, "input %d is missing", i);
        return NULL;
    }
    ox_value *v = ox_lookup(c, n->inputs[i]);
    if (!v || !v->host) {
        ox_fail(c, RLX_STATUS_UNSUPPORTED, "input '%.*s' must be known at import (a constant or a shape computation)",
                (int)n->inputs[i].n, n->inputs[i].p);
        return NULL;
    }
    return v;
}

int64_t ox_attr_i(const onnx_node *n, const char *name, int64_t dflt) {
    const onnx_attr *a = onnx_node_attr(n, name);
    return a ? a->i : dflt;
}

float ox_attr_f(const onnx_node *n, const char *name, float dflt) {
    const onnx_attr *a = onnx_node_attr(n, name);
    return a ? a->f : dflt;
}

int ox_attr_ints(const onnx_node *n, const char *name, int64_t *out, int cap) {
    const onnx_attr *a = onnx_node_attr(n, name);
    if (!a) return -1;
    for (size_t i = 0; i < a->n_ints && (int)i < cap; i++) out[i] = a->ints[i];
    return (int)a->n_ints;
}

/* ------------------------------------------------------- tensors' data */

static bool onnx_dtype_to_rlx(int32_t t, rlx_dtype *out) {
    switch (t) {
    case ONNX_FLOAT: *out = RLX_F32; return true;
    case ONNX_FLOAT16: *out = RLX_F16; return true;
    case ONNX_BFLOAT16: *out = RLX_BF16; return true;
    case ONNX_DOUBLE: *out = RLX_F64; return true;
    case ONNX_INT32: *out = RLX_I32; return true;
    case ONNX_INT64: *out = RLX_I64; return true;
    case ONNX_INT8: *out = RLX_I8; return true;
    case ONNX_UINT8: *out = RLX_U8; return true;
    case ONNX_BOOL: *out = RLX_BOOL; return true;
    default: return false;
    }
}

static const uint8_t *external_bytes(rlx_onnx *m, const onnx_tensor *t, size_t bytes, rlx_status *st) {
    char loc[1024];
    if (t->location.n == 0 || t->location.n >= sizeof loc) {
        *st = rlx_fail(RLX_STATUS_FORMAT, "onnx: tensor '%.*s' has external data with no location", (int)t->name.n, t->name.p);
        return NULL;
    }
    memcpy(loc, t->location.p, t->location.n), loc[t->location.n] = 0;
    if (loc[0] == '/' || strstr(loc, "..")) {
        *st = rlx_fail(RLX_STATUS_FORMAT, "onnx: tensor '%.*s': external data location '%s' leaves the model's folder",
                       (int)t->name.n, t->name.p, loc);
        return NULL;
    }
    int k;
    for (k = 0; k < m->n_ext; k++)
        if (!strcmp(m->ext_names[k], loc)) break;
    if (k == m->n_ext) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", m->dir, loc);
        rlx_file_map *ext = realloc(m->ext, sizeof *ext * (size_t)(m->n_ext + 1));
        char **names = ext ? realloc(m->ext_names, sizeof *names * (size_t)(m->n_ext + 1)) : NULL;
        if (ext) m->ext = ext;
        if (names) m->ext_names = names;
        if (!ext || !names || !(m->ext_names[k] = strdup(loc))) {
            *st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
            return NULL;
        }
        if ((*st = rlx_file_map_open(&m->ext[k], path, "onnx external data")) != RLX_OK) {
            free(m->ext_names[k]);
            return NULL;
        }
        m->n_ext++;
    }
    uint64_t off = t->ext_offset < 0 ? 0 : (uint64_t)t->ext_offset;
    uint64_t len = t->ext_length < 0 ? bytes : (uint64_t)t->ext_length;
    if (len != bytes || off > m->ext[k].size || len > m->ext[k].size - off) {
        *st = rlx_fail(RLX_STATUS_FORMAT, "onnx: tensor '%.*s': external data [%llu, +%llu) does not fit '%s' (%llu bytes) or its %zu bytes",
                       (int)t->name.n, t->name.p, (unsigned long long)off, (unsigned long long)len, loc,
                       (unsigned long long)m->ext[k].size, bytes);
        return NULL;
    }
    *st = RLX_OK;
    return m->ext[k].data + off;
}

/* The little-endian bytes of t as dtype dt: borrowed (raw, external) or made
 * (typed fields; *own is then set and must be freed). */
static rlx_status tensor_bytes(rlx_onnx *m, const onnx_tensor *t, rlx_dtype dt, int64_t count, const void **data, void **own) {
    size_t es = rlx_dtype_size(dt), bytes = (size_t)count * es;
    *own = NULL;
    if (t->external) {
        rlx_status st;
        *data = external_bytes(m, t, bytes, &st);
        return st;
    }
    if (t->raw_data.n || count == 0) {
        if (t->raw_data.n != bytes)
            return rlx_fail(RLX_STATUS_FORMAT, "onnx: tensor '%.*s' has %zu bytes of raw data, its shape needs %zu",
                            (int)t->name.n, t->name.p, t->raw_data.n, bytes);
        *data = t->raw_data.p;
        return RLX_OK;
    }
    size_t have = dt == RLX_F32 ? t->n_float : dt == RLX_F64 ? t->n_double : dt == RLX_I64 ? t->n_int64 : t->n_int32;
    if (have != (size_t)count)
        return rlx_fail(RLX_STATUS_FORMAT, "onnx: tensor '%.*s' has %zu values, its shape needs %lld", (int)t->name.n,
                        t->name.p, have, (long long)count);
    uint8_t *buf = malloc(bytes ? bytes : 1);
    if (!buf) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
    for (int64_t i = 0; i < count; i++) {
        switch (dt) {
        case RLX_F32: memcpy(buf + 4 * i, &t->float_data[i], 4); break;
        case RLX_F64: memcpy(buf + 8 * i, &t->double_data[i], 8); break;
        case RLX_I64: memcpy(buf + 8 * i, &t->int64_data[i], 8); break;
        case RLX_I32: memcpy(buf + 4 * i, &t->int32_data[i], 4); break;
        case RLX_F16: case RLX_BF16: { uint16_t h = (uint16_t)t->int32_data[i]; memcpy(buf + 2 * i, &h, 2); break; }
        case RLX_BOOL: buf[i] = t->int32_data[i] != 0; break;
        default: buf[i] = (uint8_t)t->int32_data[i]; break;
        }
    }
    *data = *own = buf;
    return RLX_OK;
}

static int64_t tensor_count(const onnx_tensor *t) {
    int64_t n = 1;
    for (int d = 0; d < t->n_dims; d++) {
        if (t->dims[d] > ((int64_t)1 << 48) / (n ? n : 1)) return -1;
        n *= t->dims[d];
    }
    return n;
}

rlx_status ox_host_from_tensor(ox_ctx *c, onnx_str name, const onnx_tensor *t) {
    rlx_onnx *m = c->owner;
    rlx_dtype dt;
    int64_t count = tensor_count(t);
    if (!onnx_dtype_to_rlx(t->data_type, &dt) || count < 0 || t->n_dims > RLX_MAX_RANK)
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "tensor '%.*s' of type %s and %d dims", (int)t->name.n, t->name.p,
                       onnx_type_name(t->data_type), t->n_dims);
    const void *data;
    void *own;
    rlx_status st = tensor_bytes(m, t, dt, count, &data, &own);
    if (st != RLX_OK) return st;
    if (count > OX_HOST_MAX) {
        free(own);
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "constant '%.*s' of %lld elements", (int)name.n, name.p, (long long)count);
    }
    int64_t iv[OX_HOST_MAX];
    double fv[OX_HOST_MAX];
    bool is_float = dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16;
    const uint8_t *b = data;
    for (int64_t i = 0; i < count; i++) {
        switch (dt) {
        case RLX_F32: { float x; memcpy(&x, b + 4 * i, 4); fv[i] = x; break; }
        case RLX_F64: memcpy(&fv[i], b + 8 * i, 8); break;
        case RLX_F16: case RLX_BF16: {
            uint16_t h;
            memcpy(&h, b + 2 * i, 2);
            fv[i] = dt == RLX_F16 ? (double)rlx_f16_to_f32(h) : (double)rlx_bf16_to_f32(h);
            break;
        }
        case RLX_I64: memcpy(&iv[i], b + 8 * i, 8); break;
        case RLX_I32: { int32_t x; memcpy(&x, b + 4 * i, 4); iv[i] = x; break; }
        case RLX_I8: iv[i] = (int8_t)b[i]; break;
        default: iv[i] = b[i]; break;
        }
    }
    free(own);
    int64_t dims[RLX_MAX_RANK];
    for (int d = 0; d < t->n_dims; d++) dims[d] = t->dims[d];
    return ox_set_host(c, name, is_float ? RLX_F32 : dt == RLX_BOOL ? RLX_BOOL : RLX_I64, t->n_dims, dims, iv, fv);
}

/* --------------------------------------------------------------- import */

/* Two borrowed strings with the same bytes (either may be empty, its pointer NULL). */
static bool str_same(onnx_str a, onnx_str b) { return a.n == b.n && (a.n == 0 || !memcmp(a.p, b.p, a.n)); }

static rlx_status check_operators(const onnx_model *m) {
    const onnx_graph *g = &m->graph;
    char list[1024] = "";
    size_t at = 0;
    int n_bad = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const onnx_node *n = &g->nodes[i];
        bool dflt = n->domain.n == 0 || onnx_str_eq(n->domain, "ai.onnx");
        if (dflt && ox_find_op(n->op_type.p, n->op_type.n)) continue;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++) {
            const onnx_node *o = &g->nodes[j];
            bool odflt = o->domain.n == 0 || onnx_str_eq(o->domain, "ai.onnx");
            if (odflt && ox_find_op(o->op_type.p, o->op_type.n)) continue;
            seen = str_same(o->op_type, n->op_type) && str_same(o->domain, n->domain);
        }
        if (seen) continue;
        int count = 0;
        for (int j = i; j < g->n_nodes; j++)
            if (str_same(g->nodes[j].op_type, n->op_type)) count++;
        n_bad++;
        if (at < sizeof list - 96)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s%.*s%s%.*s (%d node%s)", n_bad > 1 ? ", " : "",
                                   "", (int)(n->domain.n ? n->domain.n : 0), n->domain.p ? n->domain.p : "",
                                   n->domain.n ? "::" : "", (int)n->op_type.n, n->op_type.p ? n->op_type.p : "", count,
                                   count > 1 ? "s" : "");
    }
    if (n_bad)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "onnx: %d operator%s not supported: %s", n_bad,
                        n_bad > 1 ? "s are" : " is", list);
    return RLX_OK;
}

static bool is_initializer(const onnx_graph *g, onnx_str name) {
    for (int i = 0; i < g->n_initializers; i++)
        if (str_same(g->initializers[i].name, name)) return true;
    return false;
}

static rlx_status add_input(ox_ctx *c, const onnx_value_info *vi) {
    rlx_dtype dt;
    char *name = dup_str(vi->name);
    if (!name) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
    rlx_status st = RLX_OK;
    if (!onnx_dtype_to_rlx(vi->elem_type, &dt)) {
        st = rlx_fail(RLX_STATUS_UNSUPPORTED, "onnx: input '%s' has element type %s", name, onnx_type_name(vi->elem_type));
    } else if (!vi->has_shape || vi->rank > RLX_MAX_RANK) {
        st = rlx_fail(RLX_STATUS_UNSUPPORTED, "onnx: input '%s' has no shape or more than %d dims", name, RLX_MAX_RANK);
    } else {
        int64_t dims[RLX_MAX_RANK];
        for (int d = 0; d < vi->rank && st == RLX_OK; d++) {
            const onnx_dim *od = &vi->dims[d];
            if (od->has_value && od->value >= 0) dims[d] = od->value;
            else if (od->param.n) {
                char *sym = dup_str(od->param);
                dims[d] = sym ? rlx_symbol(c->g, sym) : 0;
                free(sym);
            } else {
                st = rlx_fail(RLX_STATUS_UNSUPPORTED, "onnx: input '%s' dim %d has neither a size nor a name", name, d);
            }
        }
        if (st == RLX_OK) st = ox_set_node(c, vi->name, rlx_input(c->g, name, dt, vi->rank, dims));
    }
    free(name);
    return st;
}

static rlx_status add_initializer(ox_ctx *c, rlx_onnx *m, const onnx_tensor *t) {
    rlx_dtype dt;
    int64_t count = tensor_count(t);
    if (!onnx_dtype_to_rlx(t->data_type, &dt) || count < 0 || t->n_dims > RLX_MAX_RANK)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "onnx: initializer '%.*s' of type %s with %d dims", (int)t->name.n,
                        t->name.p, onnx_type_name(t->data_type), t->n_dims);
    bool is_float = dt == RLX_F32 || dt == RLX_F64 || dt == RLX_F16 || dt == RLX_BF16;
    if (!is_float && count <= OX_HOST_MAX) return ox_host_from_tensor(c, t->name, t);
    ox_param *ps = realloc(m->params, sizeof *ps * (size_t)(m->n_params + 1));
    if (!ps) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
    m->params = ps;
    ox_param *p = &m->params[m->n_params];
    memset(p, 0, sizeof *p);
    if (!(p->name = dup_str(t->name))) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
    m->n_params++;
    p->dtype = dt;
    p->bytes = (size_t)count * rlx_dtype_size(dt);
    rlx_status st = tensor_bytes(m, t, dt, count, &p->data, &p->own);
    if (st != RLX_OK) return st;
    int64_t dims[RLX_MAX_RANK];
    for (int d = 0; d < t->n_dims; d++) dims[d] = t->dims[d];
    if (count <= 64) {
        /* small float tensors (Clip's bounds, scales) are also import-time
         * values, for the operators that need their numbers */
        if ((st = ox_host_from_tensor(c, t->name, t)) != RLX_OK) return st;
        ox_value *v = &c->values[c->n_values - 1];
        v->node = rlx_param(c->g, p->name, dt, t->n_dims, dims);
        return v->node == RLX_NO_NODE ? ox_graph_status(c) : RLX_OK;
    }
    return ox_set_node(c, t->name, rlx_param(c->g, p->name, dt, t->n_dims, dims));
}

static rlx_status import_graph(ox_ctx *c, rlx_onnx *m) {
    const onnx_graph *og = &m->model.graph;
    rlx_status st = check_operators(&m->model);
    for (int i = 0; i < og->n_initializers && st == RLX_OK; i++) st = add_initializer(c, m, &og->initializers[i]);
    for (int i = 0; i < og->n_inputs && st == RLX_OK; i++)
        if (!is_initializer(og, og->inputs[i].name)) st = add_input(c, &og->inputs[i]);
    for (int i = 0; i < og->n_nodes && st == RLX_OK; i++) {
        const onnx_node *n = &og->nodes[i];
        c->node = n;
        const ox_op *op = ox_find_op(n->op_type.p, n->op_type.n);
        st = op->fn(c, n);
        if (st == RLX_OK) st = ox_graph_status(c);
    }
    c->node = NULL;
    for (int i = 0; i < og->n_outputs && st == RLX_OK; i++) {
        ox_value *v = ox_lookup(c, og->outputs[i].name);
        if (!v) {
            st = rlx_fail(RLX_STATUS_FORMAT, "onnx: output '%.*s' is not produced by any node", (int)og->outputs[i].name.n,
                          og->outputs[i].name.p);
            break;
        }
        char *name = dup_str(og->outputs[i].name);
        rlx_node x = materialize(c, v);
        st = name ? (x == RLX_NO_NODE ? ox_graph_status(c) : rlx_output(c->g, name, x))
                  : rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
        free(name);
    }
    if (st == RLX_OK && og->n_outputs == 0) st = rlx_fail(RLX_STATUS_FORMAT, "onnx: the graph has no outputs");
    return st;
}

/* ----------------------------------------------------------- public API */

void rlx_onnx_free(rlx_onnx *m) {
    if (!m) return;
    for (int i = 0; i < m->n_params; i++) free(m->params[i].name), free(m->params[i].own);
    free(m->params);
    for (int i = 0; i < m->n_ext; i++) rlx_file_map_close(&m->ext[i]), free(m->ext_names[i]);
    free(m->ext), free(m->ext_names);
    onnx_model_free(&m->model);
    rlx_file_map_close(&m->file);
    rlx_graph_free(m->graph);
    free(m->dir);
    free(m);
}

rlx_status rlx_onnx_load(const char *path, rlx_onnx **out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_onnx_load: out is NULL");
    *out = NULL;
    if (!path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_onnx_load: path is NULL");
    rlx_onnx *m = calloc(1, sizeof *m);
    if (!m) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_onnx_load: out of memory");
    rlx_status st = rlx_file_map_open(&m->file, path, "rlx_onnx_load");
    if (st != RLX_OK) {
        free(m);
        return st;
    }
    const char *slash = strrchr(path, '/');
    m->dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
    if (!m->dir) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_onnx_load: out of memory");
    if (st == RLX_OK) st = onnx_parse(m->file.data, (size_t)m->file.size, &m->model);
    if (st == RLX_OK && !(m->graph = rlx_graph_new())) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_onnx_load: out of memory");
    ox_ctx c = {.g = m->graph, .m = &m->model, .owner = m};
    if (st == RLX_OK) {
        c.opset = onnx_opset_version(&m->model, "");
        if (c.opset < 7 || c.opset > 21)
            st = rlx_fail(RLX_STATUS_UNSUPPORTED, "onnx: opset %lld of the default domain (7 to 21 are read)", (long long)c.opset);
    }
    if (st == RLX_OK) st = import_graph(&c, m);
    for (int i = 0; i < c.n_values; i++) free(c.values[i].name), free(c.values[i].i64), free(c.values[i].f64);
    free(c.values);
    if (st != RLX_OK) {
        char msg[1200];
        snprintf(msg, sizeof msg, "%s", rlx_last_error());
        rlx_onnx_free(m);
        return rlx_fail(st, "%s: %s", path, msg);
    }
    *out = m;
    return RLX_OK;
}

rlx_graph *rlx_onnx_graph(rlx_onnx *m) {
    if (!m) rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_onnx_graph: model is NULL");
    return m ? m->graph : NULL;
}

rlx_status rlx_onnx_set_params(const rlx_onnx *m, rlx_exec *e) {
    if (!m || !e) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_onnx_set_params: model and exec are required");
    for (int i = 0; i < m->n_params; i++) {
        rlx_status st = rlx_exec_set_param(e, m->params[i].name, m->params[i].dtype, m->params[i].data, m->params[i].bytes);
        if (st == RLX_STATUS_NOT_FOUND) continue;   /* removed as dead code */
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}

rlx_status rlx_onnx_compile(const rlx_onnx *m, const rlx_compile_options *o, rlx_exec **out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_onnx_compile: out is NULL");
    *out = NULL;
    if (!m) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_onnx_compile: model is NULL");
    rlx_exec *e;
    rlx_status st = rlx_compile(m->graph, o, &e);
    if (st != RLX_OK) return st;
    if ((st = rlx_onnx_set_params(m, e)) != RLX_OK) {
        rlx_exec_free(e);
        return st;
    }
    *out = e;
    return RLX_OK;
}
