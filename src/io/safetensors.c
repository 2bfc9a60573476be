/*
 * safetensors.c — the safetensors reader: the dtype table, header checks,
 * tensor table and lookups (safetensors.h; the rules are in docs/formats.md).
 *
 * The header's JSON DOM is kept for the file's lifetime: tensor names and
 * metadata point into it, so nothing is copied twice. Checks, in order: the
 * length field against the file and the cap; the JSON (strict, duplicate
 * names rejected by the parser); each entry's fields, dtype, shape and
 * offsets, with shape x dtype equal to the byte span; then the spans, sorted,
 * must tile the data region exactly: no overlap, no gap, nothing past it.
 */
#include "io/safetensors.h"
#include "core/file_map.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- dtypes */

static const struct {
    const char *name;
    unsigned bits;
    int rlx;               /* rlx_dtype, or -1 */
} DTYPES[SFT_DTYPE_COUNT] = {
    [SFT_BOOL] = {"BOOL", 8, RLX_BOOL},        [SFT_U8] = {"U8", 8, RLX_U8},
    [SFT_I8] = {"I8", 8, RLX_I8},              [SFT_I16] = {"I16", 16, -1},
    [SFT_U16] = {"U16", 16, -1},               [SFT_I32] = {"I32", 32, RLX_I32},
    [SFT_U32] = {"U32", 32, -1},               [SFT_I64] = {"I64", 64, RLX_I64},
    [SFT_U64] = {"U64", 64, -1},               [SFT_F16] = {"F16", 16, RLX_F16},
    [SFT_BF16] = {"BF16", 16, RLX_BF16},       [SFT_F32] = {"F32", 32, RLX_F32},
    [SFT_F64] = {"F64", 64, RLX_F64},          [SFT_C64] = {"C64", 64, -1},
    [SFT_F8_E4M3] = {"F8_E4M3", 8, -1},        [SFT_F8_E5M2] = {"F8_E5M2", 8, -1},
    [SFT_F8_E8M0] = {"F8_E8M0", 8, -1},        [SFT_F6_E2M3] = {"F6_E2M3", 6, -1},
    [SFT_F6_E3M2] = {"F6_E3M2", 6, -1},        [SFT_F4] = {"F4", 4, -1},
};

const char *sft_dtype_name(sft_dtype t) { return (unsigned)t < SFT_DTYPE_COUNT ? DTYPES[t].name : "?"; }
unsigned sft_dtype_bits(sft_dtype t) { return (unsigned)t < SFT_DTYPE_COUNT ? DTYPES[t].bits : 0; }

bool sft_dtype_from_name(const char *s, sft_dtype *out) {
    for (int i = 0; s && i < SFT_DTYPE_COUNT; i++)
        if (strcmp(s, DTYPES[i].name) == 0) {
            *out = (sft_dtype)i;
            return true;
        }
    return false;
}

rlx_status sft_dtype_from_rlx(rlx_dtype t, sft_dtype *out) {
    for (int i = 0; i < SFT_DTYPE_COUNT; i++) {
        rlx_dtype r;
        if (sft_dtype_to_rlx((sft_dtype)i, &r) == RLX_OK && r == t) {
            *out = (sft_dtype)i;
            return RLX_OK;
        }
    }
    return rlx_fail(RLX_STATUS_UNSUPPORTED, "safetensors has no dtype for %s", rlx_dtype_name(t));
}

rlx_status sft_dtype_to_rlx(sft_dtype t, rlx_dtype *out) {
    if ((unsigned)t >= SFT_DTYPE_COUNT)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "safetensors: dtype %d is not a safetensors dtype", (int)t);
    if (DTYPES[t].rlx < 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED,
                        "safetensors dtype %s has no rlx type (rlx reads BOOL, U8, I8, I32, I64, F16, BF16, F32, F64)",
                        DTYPES[t].name);
    *out = (rlx_dtype)DTYPES[t].rlx;
    return RLX_OK;
}

bool sft_tensor_bytes(sft_dtype t, int n_dims, const int64_t *dims, uint64_t *bytes, int64_t *n_elements,
                      const char **why) {
    uint64_t n = 1;
    for (int i = 0; i < n_dims; i++) {
        if (dims[i] < 0) {
            *why = "a dim is negative";
            return false;
        }
        if (!rlx_mul_overflow_u64(n, (uint64_t)dims[i], &n) || n > (uint64_t)INT64_MAX) {
            *why = "the element count overflows";
            return false;
        }
    }
    uint64_t bits;
    if (!rlx_mul_overflow_u64(n, sft_dtype_bits(t), &bits)) {
        *why = "the byte size overflows";
        return false;
    }
    if (bits % 8) {
        *why = "the elements do not fill whole bytes";
        return false;
    }
    *bytes = bits / 8;
    if (n_elements) *n_elements = (int64_t)n;
    return true;
}

/* ---------------------------------------------------------------- reader */

struct sft_file {
    char *name;
    const uint8_t *base;
    uint64_t size, header_len;
    rlx_file_map map;            /* empty for borrowed memory */
    json_doc *doc;               /* the header; names and metadata point into it */
    sft_tensor *tensors;
    int64_t n_tensors;
    int64_t *dims;
    const sft_tensor **by_name;  /* sorted by name */
    const json_member *meta;     /* "__metadata__" members, or NULL */
    int64_t n_meta;
};

#define NAME_CHARS 100           /* of a tensor name in a message */

static rlx_status ferr(const sft_file *f, const char *fmt, ...) RLX_PRINTF(2, 3);
static rlx_status ferr(const sft_file *f, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rlx_fail(RLX_STATUS_FORMAT, "safetensors '%s': %s", f->name, msg);
}

/* An error about tensor entry m (named, with the header byte of its name). */
static rlx_status terr(const sft_file *f, const json_member *m, const char *fmt, ...) RLX_PRINTF(3, 4);
static rlx_status terr(const sft_file *f, const json_member *m, const char *fmt, ...) {
    char msg[300], name[NAME_CHARS];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_printable(name, sizeof name, m->key, m->key_len);
    return ferr(f, "tensor '%s' (byte %llu): %s", name, (unsigned long long)m->key_offset, msg);
}

static rlx_status parse_metadata(sft_file *f, const json_member *m) {
    const json_value *v = &m->value;
    if (v->type != JSON_OBJECT)
        return ferr(f, "__metadata__ (byte %llu) is %s, not an object of strings", (unsigned long long)v->offset,
                    json_type_name(v->type));
    for (size_t i = 0; i < v->u.obj.n; i++) {
        const json_member *e = &v->u.obj.members[i];
        char key[NAME_CHARS];
        json_printable(key, sizeof key, e->key, e->key_len);
        if (e->value.type != JSON_STRING)
            return ferr(f, "__metadata__ key '%s' (byte %llu): the value is %s, not a string", key,
                        (unsigned long long)e->value.offset, json_type_name(e->value.type));
        if (memchr(e->key, 0, e->key_len))
            return ferr(f, "__metadata__ key '%s' (byte %llu) contains a NUL character", key,
                        (unsigned long long)e->key_offset);
    }
    f->meta = v->u.obj.members;
    f->n_meta = (int64_t)v->u.obj.n;
    return RLX_OK;
}

/* A non-negative integer JSON value. */
static bool get_u64(const json_value *v, uint64_t *out) {
    if (v->type != JSON_NUMBER || !v->u.num.is_int || v->u.num.i < 0) return false;
    *out = (uint64_t)v->u.num.i;
    return true;
}

/* One tensor entry: its fields, checked against each other and the data region. */
static rlx_status parse_tensor(sft_file *f, const json_member *m, sft_tensor *t, int64_t **dims_next) {
    const json_value *e = &m->value;
    if (memchr(m->key, 0, m->key_len)) return terr(f, m, "the name contains a NUL character");
    if (e->type != JSON_OBJECT)
        return terr(f, m, "the entry is %s, not an object with dtype, shape and data_offsets", json_type_name(e->type));
    for (size_t i = 0; i < e->u.obj.n; i++) {
        const char *k = e->u.obj.members[i].key;
        if (strcmp(k, "dtype") && strcmp(k, "shape") && strcmp(k, "data_offsets")) {
            char kk[NAME_CHARS];
            json_printable(kk, sizeof kk, k, e->u.obj.members[i].key_len);
            return terr(f, m, "unknown field '%s' (a tensor has dtype, shape and data_offsets)", kk);
        }
    }
    const json_value *dt = json_get(e, "dtype"), *shape = json_get(e, "shape"), *offs = json_get(e, "data_offsets");
    if (!dt || !shape || !offs)
        return terr(f, m, "no %s", !dt ? "dtype" : !shape ? "shape" : "data_offsets");
    if (dt->type != JSON_STRING) return terr(f, m, "dtype is %s, not a string", json_type_name(dt->type));
    if (!sft_dtype_from_name(dt->u.str.s, &t->dtype)) {
        char d[40];
        json_printable(d, sizeof d, dt->u.str.s, dt->u.str.len);
        return terr(f, m, "unknown dtype \"%s\"", d);
    }
    if (shape->type != JSON_ARRAY) return terr(f, m, "shape is %s, not an array", json_type_name(shape->type));
    t->n_dims = (int)shape->u.arr.n;
    t->dims = *dims_next;
    for (size_t i = 0; i < shape->u.arr.n; i++) {
        uint64_t d;
        if (!get_u64(&shape->u.arr.items[i], &d))
            return terr(f, m, "shape[%zu] (byte %llu) is not a non-negative integer", i,
                        (unsigned long long)shape->u.arr.items[i].offset);
        (*dims_next)[i] = (int64_t)d;
    }
    *dims_next += shape->u.arr.n;
    uint64_t begin, end;
    if (offs->type != JSON_ARRAY || offs->u.arr.n != 2 || !get_u64(&offs->u.arr.items[0], &begin) ||
        !get_u64(&offs->u.arr.items[1], &end))
        return terr(f, m, "data_offsets (byte %llu) is not [begin, end] of two non-negative integers",
                    (unsigned long long)offs->offset);
    uint64_t data_size = f->size - 8 - f->header_len;
    if (begin > end) return terr(f, m, "data_offsets [%llu, %llu] end before they begin", (unsigned long long)begin,
                                 (unsigned long long)end);
    if (end > data_size)
        return terr(f, m, "data_offsets [%llu, %llu] run past the end of the %llu-byte data region",
                    (unsigned long long)begin, (unsigned long long)end, (unsigned long long)data_size);
    const char *why;
    uint64_t bytes;
    if (!sft_tensor_bytes(t->dtype, t->n_dims, t->dims, &bytes, &t->n_elements, &why))
        return terr(f, m, "shape of %s: %s", DTYPES[t->dtype].name, why);
    if (bytes != end - begin)
        return terr(f, m, "%lld elements of %s are %llu bytes, but data_offsets [%llu, %llu] span %llu",
                    (long long)t->n_elements, DTYPES[t->dtype].name, (unsigned long long)bytes,
                    (unsigned long long)begin, (unsigned long long)end, (unsigned long long)(end - begin));
    t->name = m->key;
    t->offset = begin;
    t->size = end - begin;
    t->data = f->base + 8 + f->header_len + begin;
    return RLX_OK;
}

static int cmp_span(const void *a, const void *b) {
    const sft_tensor *x = *(const sft_tensor *const *)a, *y = *(const sft_tensor *const *)b;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return (x->size > y->size) - (x->size < y->size);
}

static int cmp_name(const void *a, const void *b) {
    return strcmp((*(const sft_tensor *const *)a)->name, (*(const sft_tensor *const *)b)->name);
}

/* The spans, sorted, tile the data region: each begins where the last ended
 * and the last ends at the region's end. by_name is the scratch for sorting. */
static rlx_status check_tiling(sft_file *f) {
    uint64_t data_size = f->size - 8 - f->header_len, at = 0;
    const sft_tensor **s = f->by_name;
    for (int64_t i = 0; i < f->n_tensors; i++) s[i] = &f->tensors[i];
    qsort(s, (size_t)f->n_tensors, sizeof *s, cmp_span);
    char a[NAME_CHARS], b[NAME_CHARS];
    for (int64_t i = 0; i < f->n_tensors; i++) {
        const sft_tensor *t = s[i];
        json_printable(b, sizeof b, t->name, strlen(t->name));
        if (t->offset > at)
            return ferr(f, "gap: bytes [%llu, %llu) of the data region belong to no tensor (the next is '%s' at [%llu, %llu])",
                        (unsigned long long)at, (unsigned long long)t->offset, b, (unsigned long long)t->offset,
                        (unsigned long long)(t->offset + t->size));
        if (t->offset < at) {
            const sft_tensor *prev = s[i - 1];
            json_printable(a, sizeof a, prev->name, strlen(prev->name));
            return ferr(f, "overlap: tensor '%s' at [%llu, %llu] overlaps tensor '%s' at [%llu, %llu]", b,
                        (unsigned long long)t->offset, (unsigned long long)(t->offset + t->size), a,
                        (unsigned long long)prev->offset, (unsigned long long)(prev->offset + prev->size));
        }
        at = t->offset + t->size;
    }
    if (at < data_size) {
        if (f->n_tensors) json_printable(a, sizeof a, s[f->n_tensors - 1]->name, strlen(s[f->n_tensors - 1]->name));
        return ferr(f, "gap: bytes [%llu, %llu) at the end of the data region belong to no tensor (%s%s%s)",
                    (unsigned long long)at, (unsigned long long)data_size, f->n_tensors ? "the last is '" : "there are no tensors",
                    f->n_tensors ? a : "", f->n_tensors ? "'" : "");
    }
    return RLX_OK;
}

static rlx_status parse(sft_file *f) {
    if (f->size < 8)
        return ferr(f, "truncated: the file is %llu bytes, but its header length alone takes 8",
                    (unsigned long long)f->size);
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | f->base[i];   /* little-endian on any host */
    if (n > SFT_MAX_HEADER)
        return ferr(f, "header length %llu exceeds the %llu-byte limit", (unsigned long long)n,
                    (unsigned long long)SFT_MAX_HEADER);
    if (n > f->size - 8)
        return ferr(f, "header length %llu runs past the end of the file (%llu bytes follow the length)",
                    (unsigned long long)n, (unsigned long long)(f->size - 8));
    if (n < 2 || f->base[8] != '{')
        return ferr(f, "the header (byte 8, %llu bytes) does not start with '{'", (unsigned long long)n);
    f->header_len = n;
    char what[300];
    snprintf(what, sizeof what, "safetensors '%s': header", f->name);
    json_options o;
    json_options_init(&o);
    o.name = what;
    o.base_offset = 8;
    o.max_depth = 8;   /* the format nests three levels */
    rlx_status st = json_parse((const char *)f->base + 8, (size_t)n, &o, &f->doc);
    if (st) return st;
    const json_value *root = json_root(f->doc);
    if (root->type != JSON_OBJECT) return ferr(f, "the header is %s, not an object", json_type_name(root->type));
    /* room for every tensor and every dim, counted before anything is filled */
    size_t n_dims = 0;
    for (size_t i = 0; i < root->u.obj.n; i++) {
        const json_value *shape = json_get(&root->u.obj.members[i].value, "shape");
        if (shape && shape->type == JSON_ARRAY) n_dims += shape->u.arr.n;
    }
    size_t cap = root->u.obj.n;
    f->tensors = calloc(cap ? cap : 1, sizeof *f->tensors);
    f->by_name = calloc(cap ? cap : 1, sizeof *f->by_name);
    f->dims = calloc(n_dims ? n_dims : 1, sizeof *f->dims);
    if (!f->tensors || !f->by_name || !f->dims) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors '%s': out of memory", f->name);
    int64_t *dims_next = f->dims;
    for (size_t i = 0; i < root->u.obj.n; i++) {
        const json_member *m = &root->u.obj.members[i];
        if (strcmp(m->key, "__metadata__") == 0 && m->key_len == 12) st = parse_metadata(f, m);
        else st = parse_tensor(f, m, &f->tensors[f->n_tensors++], &dims_next);
        if (st) return st;
    }
    if ((st = check_tiling(f))) return st;
    for (int64_t i = 0; i < f->n_tensors; i++) f->by_name[i] = &f->tensors[i];
    qsort(f->by_name, (size_t)f->n_tensors, sizeof *f->by_name, cmp_name);
    return RLX_OK;
}

static rlx_status open_common(sft_file *f, sft_file **out) {
    rlx_status st = f->name ? parse(f) : rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    if (st) {
        sft_close(f);
        return st;
    }
    *out = f;
    return RLX_OK;
}

rlx_status sft_open_memory(const void *data, size_t size, sft_file **out) {
    if (!out || (!data && size)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_open_memory: NULL argument");
    *out = NULL;
    sft_file *f = calloc(1, sizeof *f);
    if (!f) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    static const uint8_t empty[1];
    f->base = data ? data : empty;
    f->size = size;
    f->name = rlx_strdup("<memory>");
    return open_common(f, out);
}

rlx_status sft_open(const char *path, sft_file **out) {
    if (!path || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_open: NULL argument");
    *out = NULL;
    sft_file *f = calloc(1, sizeof *f);
    if (!f) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors: out of memory");
    rlx_status st = rlx_file_map_open(&f->map, path, "safetensors");
    if (st) {
        free(f);
        return st;
    }
    f->base = f->map.data;
    f->size = f->map.size;
    f->name = rlx_strdup(path);
    return open_common(f, out);
}

void sft_close(sft_file *f) {
    if (!f) return;
    rlx_file_map_close(&f->map);
    json_free(f->doc);
    free(f->tensors);
    free(f->by_name);
    free(f->dims);
    free(f->name);
    free(f);
}

const char *sft_name(const sft_file *f) { return f ? f->name : NULL; }
uint64_t sft_file_size(const sft_file *f) { return f ? f->size : 0; }
uint64_t sft_data_offset(const sft_file *f) { return f ? 8 + f->header_len : 0; }
int64_t sft_tensor_count(const sft_file *f) { return f ? f->n_tensors : 0; }

const sft_tensor *sft_tensor_at(const sft_file *f, int64_t i) {
    return f && i >= 0 && i < f->n_tensors ? &f->tensors[i] : NULL;
}

static int cmp_name_key(const void *key, const void *t) {
    return strcmp(*(const char *const *)key, (*(const sft_tensor *const *)t)->name);
}

const sft_tensor *sft_find(const sft_file *f, const char *name) {
    if (!f || !name) return NULL;
    const sft_tensor *const *t = bsearch(&name, f->by_name, (size_t)f->n_tensors, sizeof *f->by_name, cmp_name_key);
    return t ? *t : NULL;
}

rlx_status sft_checked_get(const char *file, const char *name, const sft_tensor *t, const sft_tensor **out,
                           rlx_dtype *dtype) {
    char n[NAME_CHARS];
    json_printable(n, sizeof n, name ? name : "", name ? strlen(name) : 0);
    if (!t) return rlx_fail(RLX_STATUS_NOT_FOUND, "safetensors '%s': no tensor '%s'", file, n);
    if (DTYPES[t->dtype].rlx < 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED,
                        "safetensors '%s': tensor '%s' is %s, which rlx has no type for (rlx reads BOOL, U8, I8, I32, "
                        "I64, F16, BF16, F32, F64)",
                        file, n, DTYPES[t->dtype].name);
    if (out) *out = t;
    if (dtype) *dtype = (rlx_dtype)DTYPES[t->dtype].rlx;
    return RLX_OK;
}

rlx_status sft_get(const sft_file *f, const char *name, const sft_tensor **out, rlx_dtype *dtype) {
    if (!f || !name) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_get: NULL argument");
    return sft_checked_get(f->name, name, sft_find(f, name), out, dtype);
}

int64_t sft_metadata_count(const sft_file *f) { return f ? f->n_meta : 0; }

const char *sft_metadata_key(const sft_file *f, int64_t i) {
    return f && i >= 0 && i < f->n_meta ? f->meta[i].key : NULL;
}

const char *sft_metadata_value(const sft_file *f, int64_t i) {
    return f && i >= 0 && i < f->n_meta ? f->meta[i].value.u.str.s : NULL;
}

const char *sft_metadata_get(const sft_file *f, const char *key) {
    for (int64_t i = 0; f && key && i < f->n_meta; i++)
        if (strcmp(f->meta[i].key, key) == 0) return f->meta[i].value.u.str.s;
    return NULL;
}
