/*
 * onnx.c — the ONNX reader: protobuf's wire format, bounds-checked, and the
 * ModelProto / GraphProto / NodeProto / AttributeProto / TensorProto /
 * ValueInfoProto fields the importer needs (field numbers from onnx.proto).
 *
 * Each message is read in two passes over its bytes: the first checks the
 * wire format and counts the repeated fields, the second allocates the arrays
 * once (in the model's arena) and fills them. So no array grows, and a field
 * count can never disagree with an allocation.
 */
#include "io/onnx.h"
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ arena */

typedef struct onnx_arena {
    struct onnx_arena *next;
    size_t used, cap;
    max_align_t data[];
} onnx_arena;

static void *arena_alloc(onnx_arena **a, size_t n, size_t count) {
    if (count && n > SIZE_MAX / count) return NULL;
    size_t bytes = n * count;
    bytes = (bytes + 15) & ~(size_t)15;
    if (bytes == 0) bytes = 16;
    if (!*a || (*a)->cap - (*a)->used < bytes) {
        size_t cap = bytes > (1u << 16) ? bytes : (1u << 16);
        onnx_arena *b = malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = *a, b->used = 0, b->cap = cap;
        *a = b;
    }
    void *p = (char *)(*a)->data + (*a)->used;
    (*a)->used += bytes;
    memset(p, 0, bytes);
    return p;
}

/* ------------------------------------------------------------- wire format */

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

typedef struct reader {
    const uint8_t *base;   /* the file's first byte, for offsets in messages */
    onnx_arena **arena;
    int depth;
} reader;

typedef struct span { const uint8_t *p, *end; const char *msg; } span;

typedef struct field {
    uint32_t num;
    int wt;
    uint64_t v;                 /* varint, fixed32, fixed64 */
    const uint8_t *data;        /* WT_LEN */
    size_t len;
    const uint8_t *at;          /* where the field starts */
} field;

static rlx_status bad(const reader *r, const uint8_t *at, const char *msg, const char *why) {
    return rlx_fail(RLX_STATUS_FORMAT, "onnx: malformed %s at byte %zu: %s", msg, (size_t)(at - r->base), why);
}

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (*p >= end) return false;
        uint8_t b = *(*p)++;
        if (i == 9 && b > 1) return false;   /* more than 64 bits */
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *out = v;
            return true;
        }
    }
    return false;
}

/* The next field of s into f; *more false at the end of s. */
static rlx_status next_field(const reader *r, span *s, field *f, bool *more) {
    *more = s->p < s->end;
    if (!*more) return RLX_OK;
    f->at = s->p;
    uint64_t key;
    if (!read_varint(&s->p, s->end, &key)) return bad(r, f->at, s->msg, "truncated or overlong field key");
    f->wt = (int)(key & 7);
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return bad(r, f->at, s->msg, "field number out of range");
    f->num = (uint32_t)(key >> 3);
    size_t left;
    switch (f->wt) {
    case WT_VARINT:
        if (!read_varint(&s->p, s->end, &f->v)) return bad(r, f->at, s->msg, "truncated varint");
        return RLX_OK;
    case WT_I64:
    case WT_I32: {
        size_t w = f->wt == WT_I64 ? 8 : 4;
        if ((size_t)(s->end - s->p) < w) return bad(r, f->at, s->msg, "truncated fixed-width number");
        f->v = 0;
        for (size_t i = 0; i < w; i++) f->v |= (uint64_t)s->p[i] << (8 * i);
        s->p += w;
        return RLX_OK;
    }
    case WT_LEN: {
        uint64_t n;
        if (!read_varint(&s->p, s->end, &n)) return bad(r, f->at, s->msg, "truncated length");
        left = (size_t)(s->end - s->p);
        if (n > left) return bad(r, f->at, s->msg, "a length runs past the end of its message");
        f->data = s->p, f->len = (size_t)n;
        s->p += n;
        return RLX_OK;
    }
    default:
        return bad(r, f->at, s->msg, "unsupported wire type (groups or an invalid type)");
    }
}

/* Repeated numbers: how many values a field holds (packed or not), checking
 * that a packed run decodes exactly. kind: WT_VARINT, WT_I32 or WT_I64. */
static rlx_status count_numbers(const reader *r, const span *s, const field *f, int kind, size_t *n) {
    if (f->wt == kind) {
        *n = 1;
        return RLX_OK;
    }
    if (f->wt != WT_LEN) return bad(r, f->at, s->msg, "a number field has the wrong wire type");
    if (kind == WT_VARINT) {
        size_t c = 0;
        const uint8_t *p = f->data, *end = f->data + f->len;
        uint64_t v;
        while (p < end) {
            if (!read_varint(&p, end, &v)) return bad(r, f->at, s->msg, "a packed varint is truncated");
            c++;
        }
        *n = c;
        return RLX_OK;
    }
    size_t w = kind == WT_I64 ? 8 : 4;
    if (f->len % w) return bad(r, f->at, s->msg, "a packed fixed-width run is not a whole number of values");
    *n = f->len / w;
    return RLX_OK;
}

/* Appends the values of f (already counted) to out as raw u64 (varints) or
 * the fixed-width bit patterns. */
static void read_numbers(const field *f, int kind, uint64_t *out) {
    if (f->wt == kind) {
        out[0] = f->v;
        return;
    }
    const uint8_t *p = f->data, *end = f->data + f->len;
    size_t i = 0;
    if (kind == WT_VARINT) {
        while (p < end) read_varint(&p, end, &out[i++]);
        return;
    }
    size_t w = kind == WT_I64 ? 8 : 4;
    for (; p + w <= end; p += w, i++) {
        uint64_t v = 0;
        for (size_t b = 0; b < w; b++) v |= (uint64_t)p[b] << (8 * b);
        out[i] = v;
    }
}

static rlx_status want(const reader *r, const span *s, const field *f, int wt) {
    return f->wt == wt ? RLX_OK : bad(r, f->at, s->msg, "a field has the wrong wire type");
}

static onnx_str str_of(const field *f) { return (onnx_str){(const char *)f->data, f->len}; }

static float f32_of(uint64_t bits) {
    uint32_t u = (uint32_t)bits;
    float x;
    memcpy(&x, &u, 4);
    return x;
}

static double f64_of(uint64_t bits) {
    double x;
    memcpy(&x, &bits, 8);
    return x;
}

/* A repeated number field: pass 0 counts into *count, pass 1 decodes into
 * scratch (u64 per value) then converts through conv. */
typedef struct numbers {
    size_t count, filled;
    uint64_t *raw;
} numbers;

static rlx_status numbers_field(const reader *r, const span *s, const field *f, int kind, int pass, numbers *nb) {
    size_t n = 0;
    rlx_status st = count_numbers(r, s, f, kind, &n);
    if (st != RLX_OK) return st;
    if (pass == 0) {
        if (nb->count > SIZE_MAX / 16 - n) return bad(r, f->at, s->msg, "too many values");
        nb->count += n;
    } else if (n) {
        read_numbers(f, kind, nb->raw + nb->filled);
        nb->filled += n;
    }
    return RLX_OK;
}

static rlx_status numbers_alloc(reader *r, numbers *nb) {
    nb->filled = 0;
    if (!nb->count) return RLX_OK;
    nb->raw = arena_alloc(r->arena, sizeof *nb->raw, nb->count);
    return nb->raw ? RLX_OK : rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory");
}

#define OOM() rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "onnx: out of memory")
#define ALLOC(ptr, n) (((ptr) = arena_alloc(r->arena, sizeof *(ptr), (size_t)(n))) != NULL || (n) == 0)

/* ------------------------------------------------------------- messages */

static rlx_status parse_graph(reader *r, const uint8_t *p, size_t n, onnx_graph *g);

static rlx_status parse_string_map_entry(reader *r, const uint8_t *p, size_t n, onnx_str *key, onnx_str *value) {
    span s = {p, p + n, "StringStringEntryProto"};
    field f;
    bool more;
    rlx_status st;
    *key = *value = (onnx_str){"", 0};
    while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
        if (f.num == 1 || f.num == 2) {
            if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) return st;
            *(f.num == 1 ? key : value) = str_of(&f);
        }
    }
    return st;
}

static bool parse_i64_text(onnx_str v, int64_t *out) {
    if (v.n == 0 || v.n > 19) return false;
    int64_t x = 0;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9') return false;
        x = x * 10 + (v.p[i] - '0');
    }
    *out = x;
    return true;
}

static rlx_status parse_tensor(reader *r, const uint8_t *p, size_t n, onnx_tensor *t) {
    numbers dims = {0}, fl = {0}, i32 = {0}, i64 = {0}, dbl = {0}, u64 = {0};
    rlx_status st = RLX_OK;
    t->ext_offset = t->ext_length = -1;
    for (int pass = 0; pass < 2 && st == RLX_OK; pass++) {
        if (pass == 1) {
            numbers *all[6] = {&dims, &fl, &i32, &i64, &dbl, &u64};
            for (int i = 0; i < 6; i++)
                if ((st = numbers_alloc(r, all[i])) != RLX_OK) return st;
        }
        span s = {p, p + n, "TensorProto"};
        field f;
        bool more;
        while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
            switch (f.num) {
            case 1: st = numbers_field(r, &s, &f, WT_VARINT, pass, &dims); break;
            case 2: if ((st = want(r, &s, &f, WT_VARINT)) == RLX_OK) t->data_type = (int32_t)f.v; break;
            case 4: st = numbers_field(r, &s, &f, WT_I32, pass, &fl); break;
            case 5: st = numbers_field(r, &s, &f, WT_VARINT, pass, &i32); break;
            case 7: st = numbers_field(r, &s, &f, WT_VARINT, pass, &i64); break;
            case 8: if ((st = want(r, &s, &f, WT_LEN)) == RLX_OK) t->name = str_of(&f); break;
            case 9: if ((st = want(r, &s, &f, WT_LEN)) == RLX_OK) t->raw_data = str_of(&f); break;
            case 10: st = numbers_field(r, &s, &f, WT_I64, pass, &dbl); break;
            case 11: st = numbers_field(r, &s, &f, WT_VARINT, pass, &u64); break;
            case 13:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) break;
                if (pass == 1) {
                    onnx_str key, value;
                    if ((st = parse_string_map_entry(r, f.data, f.len, &key, &value)) != RLX_OK) break;
                    int64_t x;
                    if (onnx_str_eq(key, "location")) t->location = value;
                    else if (onnx_str_eq(key, "offset") || onnx_str_eq(key, "length")) {
                        if (!parse_i64_text(value, &x)) st = bad(r, f.at, s.msg, "external data offset or length is not a number");
                        else *(onnx_str_eq(key, "offset") ? &t->ext_offset : &t->ext_length) = x;
                    }
                }
                break;
            case 14: if ((st = want(r, &s, &f, WT_VARINT)) == RLX_OK) t->external = f.v == 1; break;
            default: break;   /* segment, string_data, doc_string, metadata: unused */
            }
            if (st != RLX_OK) return st;
        }
        if (st != RLX_OK) return st;
    }
    if (dims.count > 64) return rlx_fail(RLX_STATUS_FORMAT, "onnx: tensor '%.*s' has %zu dims", (int)t->name.n, t->name.p, dims.count);
    t->n_dims = (int)dims.count;
    if (!ALLOC(t->dims, dims.count)) return OOM();
    for (size_t i = 0; i < dims.count; i++) {
        t->dims[i] = (int64_t)dims.raw[i];
        if (t->dims[i] < 0)
            return rlx_fail(RLX_STATUS_FORMAT, "onnx: tensor '%.*s' has a negative dim", (int)t->name.n, t->name.p);
    }
    if (!ALLOC(t->float_data, fl.count) || !ALLOC(t->int32_data, i32.count) || !ALLOC(t->int64_data, i64.count) ||
        !ALLOC(t->double_data, dbl.count) || !ALLOC(t->uint64_data, u64.count))
        return OOM();
    for (size_t i = 0; i < fl.count; i++) t->float_data[i] = f32_of(fl.raw[i]);
    for (size_t i = 0; i < i32.count; i++) t->int32_data[i] = (int32_t)(uint32_t)i32.raw[i];
    for (size_t i = 0; i < i64.count; i++) t->int64_data[i] = (int64_t)i64.raw[i];
    for (size_t i = 0; i < dbl.count; i++) t->double_data[i] = f64_of(dbl.raw[i]);
    for (size_t i = 0; i < u64.count; i++) t->uint64_data[i] = u64.raw[i];
    t->n_float = fl.count, t->n_int32 = i32.count, t->n_int64 = i64.count;
    t->n_double = dbl.count, t->n_uint64 = u64.count;
    return RLX_OK;
}

/* TensorShapeProto.Dimension */
static rlx_status parse_dim(reader *r, const uint8_t *p, size_t n, onnx_dim *d) {
    span s = {p, p + n, "TensorShapeProto.Dimension"};
    field f;
    bool more;
    rlx_status st;
    while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
        if (f.num == 1) {
            if ((st = want(r, &s, &f, WT_VARINT)) != RLX_OK) return st;
            d->has_value = true, d->value = (int64_t)f.v;
        } else if (f.num == 2) {
            if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) return st;
            d->param = str_of(&f);
        }
    }
    return st;
}

/* TypeProto.Tensor into vi (elem_type and shape). */
static rlx_status parse_tensor_type(reader *r, const uint8_t *p, size_t n, onnx_value_info *vi) {
    span s = {p, p + n, "TypeProto.Tensor"};
    field f;
    bool more;
    rlx_status st;
    while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
        if (f.num == 1) {
            if ((st = want(r, &s, &f, WT_VARINT)) != RLX_OK) return st;
            vi->elem_type = (int32_t)f.v;
        } else if (f.num == 2) {
            if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) return st;
            /* TensorShapeProto: repeated Dimension dim = 1 */
            int count = 0;
            for (int pass = 0; pass < 2; pass++) {
                if (pass == 1 && !ALLOC(vi->dims, count)) return OOM();
                span ss = {f.data, f.data + f.len, "TensorShapeProto"};
                field d;
                bool m2;
                int i = 0;
                while ((st = next_field(r, &ss, &d, &m2)) == RLX_OK && m2) {
                    if (d.num != 1) continue;
                    if ((st = want(r, &ss, &d, WT_LEN)) != RLX_OK) return st;
                    if (pass == 0) {
                        if (++count > 64) return bad(r, d.at, ss.msg, "more than 64 dims");
                    } else if ((st = parse_dim(r, d.data, d.len, &vi->dims[i++])) != RLX_OK) {
                        return st;
                    }
                }
                if (st != RLX_OK) return st;
            }
            vi->has_shape = true, vi->rank = count;
        }
    }
    return st;
}

static rlx_status parse_value_info(reader *r, const uint8_t *p, size_t n, onnx_value_info *vi) {
    span s = {p, p + n, "ValueInfoProto"};
    field f;
    bool more;
    rlx_status st;
    while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
        if (f.num == 1) {
            if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) return st;
            vi->name = str_of(&f);
        } else if (f.num == 2) {
            if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) return st;
            span ts = {f.data, f.data + f.len, "TypeProto"};
            field t;
            bool m2;
            while ((st = next_field(r, &ts, &t, &m2)) == RLX_OK && m2) {
                if (t.num != 1) continue;   /* sequence, map, optional types: elem_type stays 0 */
                if ((st = want(r, &ts, &t, WT_LEN)) != RLX_OK) return st;
                if ((st = parse_tensor_type(r, t.data, t.len, vi)) != RLX_OK) return st;
            }
            if (st != RLX_OK) return st;
        }
    }
    return st;
}

static rlx_status nested_graph(reader *r, const field *f, onnx_graph *g) {
    if (r->depth >= ONNX_MAX_DEPTH)
        return rlx_fail(RLX_STATUS_FORMAT, "onnx: graphs nest deeper than %d at byte %zu", ONNX_MAX_DEPTH,
                        (size_t)(f->at - r->base));
    r->depth++;
    rlx_status st = parse_graph(r, f->data, f->len, g);
    r->depth--;
    return st;
}

static rlx_status parse_attr(reader *r, const uint8_t *p, size_t n, onnx_attr *a) {
    numbers fl = {0}, in = {0};
    size_t ns = 0, nt = 0, ng = 0;
    rlx_status st = RLX_OK;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if ((st = numbers_alloc(r, &fl)) != RLX_OK || (st = numbers_alloc(r, &in)) != RLX_OK) return st;
            if (!ALLOC(a->strings, ns) || !ALLOC(a->tensors, nt) || !ALLOC(a->graphs, ng)) return OOM();
            a->n_strings = a->n_tensors = a->n_graphs = 0;
        }
        span s = {p, p + n, "AttributeProto"};
        field f;
        bool more;
        while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
            switch (f.num) {
            case 1: if ((st = want(r, &s, &f, WT_LEN)) == RLX_OK) a->name = str_of(&f); break;
            case 2: if ((st = want(r, &s, &f, WT_I32)) == RLX_OK) a->f = f32_of(f.v); break;
            case 3: if ((st = want(r, &s, &f, WT_VARINT)) == RLX_OK) a->i = (int64_t)f.v; break;
            case 4: if ((st = want(r, &s, &f, WT_LEN)) == RLX_OK) a->s = str_of(&f); break;
            case 5:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK || pass == 0) break;
                if (!(a->t = arena_alloc(r->arena, sizeof *a->t, 1))) return OOM();
                st = parse_tensor(r, f.data, f.len, a->t);
                break;
            case 6:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK || pass == 0) break;
                if (!(a->g = arena_alloc(r->arena, sizeof *a->g, 1))) return OOM();
                st = nested_graph(r, &f, a->g);
                break;
            case 7: st = numbers_field(r, &s, &f, WT_I32, pass, &fl); break;
            case 8: st = numbers_field(r, &s, &f, WT_VARINT, pass, &in); break;
            case 9:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) break;
                if (pass == 0) ns++;
                else a->strings[a->n_strings++] = str_of(&f);
                break;
            case 10:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) break;
                if (pass == 0) nt++;
                else st = parse_tensor(r, f.data, f.len, &a->tensors[a->n_tensors++]);
                break;
            case 11:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) break;
                if (pass == 0) ng++;
                else st = nested_graph(r, &f, &a->graphs[a->n_graphs++]);
                break;
            case 20: if ((st = want(r, &s, &f, WT_VARINT)) == RLX_OK) a->type = (int32_t)f.v; break;
            case 21: if ((st = want(r, &s, &f, WT_LEN)) == RLX_OK) a->ref_attr_name = str_of(&f); break;
            default: break;   /* doc_string, sparse tensors, type protos */
            }
            if (st != RLX_OK) return st;
        }
        if (st != RLX_OK) return st;
    }
    if (!ALLOC(a->floats, fl.count) || !ALLOC(a->ints, in.count)) return OOM();
    for (size_t i = 0; i < fl.count; i++) a->floats[i] = f32_of(fl.raw[i]);
    for (size_t i = 0; i < in.count; i++) a->ints[i] = (int64_t)in.raw[i];
    a->n_floats = fl.count, a->n_ints = in.count;
    return RLX_OK;
}

static rlx_status parse_node(reader *r, const uint8_t *p, size_t n, onnx_node *nd) {
    int ni = 0, no = 0, na = 0;
    rlx_status st = RLX_OK;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (!ALLOC(nd->inputs, ni) || !ALLOC(nd->outputs, no) || !ALLOC(nd->attrs, na)) return OOM();
            nd->n_inputs = nd->n_outputs = nd->n_attrs = 0;
        }
        span s = {p, p + n, "NodeProto"};
        field f;
        bool more;
        while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
            if (f.num > 7 || f.num == 6) continue;   /* doc_string, overload, metadata */
            if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) return st;
            switch (f.num) {
            case 1: if (pass == 0) ni++; else nd->inputs[nd->n_inputs++] = str_of(&f); break;
            case 2: if (pass == 0) no++; else nd->outputs[nd->n_outputs++] = str_of(&f); break;
            case 3: nd->name = str_of(&f); break;
            case 4: nd->op_type = str_of(&f); break;
            case 5:
                if (pass == 0) na++;
                else st = parse_attr(r, f.data, f.len, &nd->attrs[nd->n_attrs++]);
                break;
            case 7: nd->domain = str_of(&f); break;
            }
            if (st != RLX_OK) return st;
            if (ni > (1 << 20) || no > (1 << 20) || na > (1 << 20)) return bad(r, f.at, s.msg, "too many inputs, outputs or attributes");
        }
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}

static rlx_status parse_graph(reader *r, const uint8_t *p, size_t n, onnx_graph *g) {
    int nn = 0, ninit = 0, nin = 0, nout = 0, nvi = 0;
    rlx_status st = RLX_OK;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (!ALLOC(g->nodes, nn) || !ALLOC(g->initializers, ninit) || !ALLOC(g->inputs, nin) ||
                !ALLOC(g->outputs, nout) || !ALLOC(g->value_info, nvi))
                return OOM();
            g->n_nodes = g->n_initializers = g->n_inputs = g->n_outputs = g->n_value_info = 0;
            g->n_sparse_initializers = 0;
        }
        span s = {p, p + n, "GraphProto"};
        field f;
        bool more;
        while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
            switch (f.num) {
            case 1: case 2: case 5: case 11: case 12: case 13: case 15:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) return st;
                break;
            default: continue;   /* doc_string, quantization annotations, metadata */
            }
            switch (f.num) {
            case 1: if (pass == 0) nn++; else st = parse_node(r, f.data, f.len, &g->nodes[g->n_nodes++]); break;
            case 2: g->name = str_of(&f); break;
            case 5:
                if (pass == 0) ninit++;
                else st = parse_tensor(r, f.data, f.len, &g->initializers[g->n_initializers++]);
                break;
            case 11: if (pass == 0) nin++; else st = parse_value_info(r, f.data, f.len, &g->inputs[g->n_inputs++]); break;
            case 12: if (pass == 0) nout++; else st = parse_value_info(r, f.data, f.len, &g->outputs[g->n_outputs++]); break;
            case 13:
                if (pass == 0) nvi++;
                else st = parse_value_info(r, f.data, f.len, &g->value_info[g->n_value_info++]);
                break;
            case 15: if (pass == 1) g->n_sparse_initializers++; break;
            }
            if (st != RLX_OK) return st;
            if (nn > (1 << 24) || ninit > (1 << 24) || nin > (1 << 24) || nout > (1 << 24) || nvi > (1 << 24))
                return bad(r, f.at, s.msg, "too many entries");
        }
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}

static rlx_status parse_model(reader *r, const uint8_t *p, size_t n, onnx_model *m) {
    int nops = 0;
    rlx_status st = RLX_OK;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            if (!ALLOC(m->opsets, nops)) return OOM();
            m->n_opsets = 0;
        }
        span s = {p, p + n, "ModelProto"};
        field f;
        bool more;
        while ((st = next_field(r, &s, &f, &more)) == RLX_OK && more) {
            switch (f.num) {
            case 1: if ((st = want(r, &s, &f, WT_VARINT)) == RLX_OK) m->ir_version = (int64_t)f.v; break;
            case 2: if ((st = want(r, &s, &f, WT_LEN)) == RLX_OK) m->producer_name = str_of(&f); break;
            case 3: if ((st = want(r, &s, &f, WT_LEN)) == RLX_OK) m->producer_version = str_of(&f); break;
            case 7:
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK || pass == 0) break;
                if (m->has_graph) return bad(r, f.at, s.msg, "more than one graph");
                m->has_graph = true;
                st = parse_graph(r, f.data, f.len, &m->graph);
                break;
            case 8: {
                if ((st = want(r, &s, &f, WT_LEN)) != RLX_OK) break;
                if (pass == 0) {
                    if (++nops > 4096) return bad(r, f.at, s.msg, "too many opset imports");
                    break;
                }
                onnx_opset *o = &m->opsets[m->n_opsets++];
                span os = {f.data, f.data + f.len, "OperatorSetIdProto"};
                field of;
                bool m2;
                while ((st = next_field(r, &os, &of, &m2)) == RLX_OK && m2) {
                    if (of.num == 1 && (st = want(r, &os, &of, WT_LEN)) == RLX_OK) o->domain = str_of(&of);
                    else if (of.num == 2 && (st = want(r, &os, &of, WT_VARINT)) == RLX_OK) o->version = (int64_t)of.v;
                    if (st != RLX_OK) return st;
                }
                break;
            }
            default: break;   /* domain, model_version, doc_string, metadata, functions, ... */
            }
            if (st != RLX_OK) return st;
        }
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}

rlx_status onnx_parse(const void *data, size_t n, onnx_model *m) {
    if (!m) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "onnx_parse: model is NULL");
    memset(m, 0, sizeof *m);
    if (!data && n) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "onnx_parse: data is NULL");
    onnx_arena *arena = NULL;
    reader r = {data, &arena, 0};
    rlx_status st = parse_model(&r, data, n, m);
    m->arena = arena;
    if (st == RLX_OK && !m->has_graph) st = rlx_fail(RLX_STATUS_FORMAT, "onnx: the model has no graph");
    if (st != RLX_OK) onnx_model_free(m);
    return st;
}

void onnx_model_free(onnx_model *m) {
    if (!m) return;
    for (onnx_arena *a = m->arena, *next; a; a = next) {
        next = a->next;
        free(a);
    }
    memset(m, 0, sizeof *m);
}

bool onnx_str_eq(onnx_str s, const char *z) {
    size_t n = strlen(z);
    return s.n == n && (n == 0 || memcmp(s.p, z, n) == 0);
}

int64_t onnx_opset_version(const onnx_model *m, const char *domain) {
    bool dflt = !domain || !*domain || !strcmp(domain, "ai.onnx");
    for (int i = 0; i < m->n_opsets; i++) {
        onnx_str d = m->opsets[i].domain;
        bool is_dflt = d.n == 0 || onnx_str_eq(d, "ai.onnx");
        if (dflt ? is_dflt : onnx_str_eq(d, domain)) return m->opsets[i].version;
    }
    return 0;
}

const onnx_attr *onnx_node_attr(const onnx_node *n, const char *name) {
    for (int i = 0; i < n->n_attrs; i++)
        if (onnx_str_eq(n->attrs[i].name, name)) return &n->attrs[i];
    return NULL;
}

const char *onnx_type_name(int32_t t) {
    switch (t) {
    case ONNX_FLOAT: return "FLOAT";
    case ONNX_UINT8: return "UINT8";
    case ONNX_INT8: return "INT8";
    case ONNX_UINT16: return "UINT16";
    case ONNX_INT16: return "INT16";
    case ONNX_INT32: return "INT32";
    case ONNX_INT64: return "INT64";
    case ONNX_STRING: return "STRING";
    case ONNX_BOOL: return "BOOL";
    case ONNX_FLOAT16: return "FLOAT16";
    case ONNX_DOUBLE: return "DOUBLE";
    case ONNX_UINT32: return "UINT32";
    case ONNX_UINT64: return "UINT64";
    case ONNX_BFLOAT16: return "BFLOAT16";
    default: return "?";
    }
}
