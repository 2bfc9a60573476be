/*
 * gguf.c — the GGUF reader: maps a file (or borrows a buffer), parses and
 * validates the header, metadata and tensor infos, and serves lookups.
 *
 * Layout (little-endian): "GGUF" | u32 version | u64 n_tensors | u64 n_kv |
 * n_kv x (string key, u32 type, value) | n_tensors x (string name, u32 n_dims,
 * i64 dims[n_dims], u32 ggml type, u64 offset) | pad to alignment | data.
 * A string is u64 length + bytes (no NUL); an array is u32 element type,
 * u64 count, elements, which may be arrays again (up to GGUF_MAX_ARRAY_DEPTH
 * levels). v1 (32-bit counts) is rejected.
 *
 * Safety rules the parser keeps:
 *  - every read goes through need(), which compares against the bytes left
 *    (subtraction, never addition, so nothing overflows);
 *  - a count is checked against the bytes left divided by the smallest
 *    encoding of one element before any loop or allocation, and tables grow
 *    as entries are actually parsed, so memory stays proportional to input;
 *  - every loop consumes input, so parsing is linear in the file size.
 */
#include "io/gguf.h"
#include "core/file_map.h"
#include "quant/quant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kv_rec {
    uint64_t key;        /* arena offset of the NUL-terminated key */
    uint32_t type, arr_type;
    uint64_t n;          /* array length */
    uint64_t val;        /* scalar / numeric array: file offset of the bytes;
                            string: arena offset; string array: first index in stroff */
    uint64_t len;        /* string length */
    uint64_t raw, raw_len; /* the value's bytes in the file, after the type tag */
} kv_rec;

struct gguf_file {
    const uint8_t *base;
    uint64_t size;
    rlx_file_map map;          /* unmapped on close; empty for borrowed memory */
    uint32_t version, alignment;
    uint64_t data_offset;
    kv_rec *kv;
    int64_t n_kv;
    gguf_tensor *tensors;
    uint64_t *tensor_name_off; /* arena offsets, resolved into tensors[].name at the end */
    int64_t n_tensors;
    char *arena;               /* every key, name and string value, NUL-terminated */
    uint64_t arena_len, arena_cap;
    uint64_t *stroff;          /* string array elements: arena offset, then length */
    uint64_t n_stroff, cap_stroff;
};

/* ------------------------------------------------------------------ names */

static const char *VT_NAMES[GGUF_VT_COUNT] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32",
                                              "bool", "string", "array", "u64", "i64", "f64"};
static const uint8_t VT_SIZES[GGUF_VT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

const char *gguf_vtype_name(gguf_vtype t) { return (unsigned)t < GGUF_VT_COUNT ? VT_NAMES[t] : "?"; }
size_t gguf_vtype_size(gguf_vtype t) { return (unsigned)t < GGUF_VT_COUNT ? VT_SIZES[t] : 0; }

/* ----------------------------------------------------------------- parser */

typedef struct parser {
    gguf_file *f;
    const char *name;    /* path or "<memory>", for messages */
    uint64_t pos;
    char ctx[160];       /* "key 3 'general.name'" / "tensor 5 'blk.0.w'" */
} parser;

static rlx_status perr(parser *p, const char *fmt, ...) RLX_PRINTF(2, 3);
static rlx_status perr(parser *p, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return rlx_fail(RLX_STATUS_FORMAT, "gguf '%s': byte %llu%s%s: %s", p->name, (unsigned long long)p->pos,
                    p->ctx[0] ? ", " : "", p->ctx, msg);
}

static uint64_t left(const parser *p) { return p->f->size - p->pos; }

static rlx_status need(parser *p, uint64_t n, const char *what) {
    if (n > left(p))
        return perr(p, "truncated: %s needs %llu bytes, %llu left", what, (unsigned long long)n,
                    (unsigned long long)left(p));
    return RLX_OK;
}

static rlx_status rd(parser *p, void *dst, uint64_t n, const char *what) {
    rlx_status st = need(p, n, what);
    if (st) return st;
    memcpy(dst, p->f->base + p->pos, n);
    p->pos += n;
    return RLX_OK;
}
static rlx_status rd_u32(parser *p, uint32_t *v, const char *what) { return rd(p, v, 4, what); }
static rlx_status rd_u64(parser *p, uint64_t *v, const char *what) { return rd(p, v, 8, what); }

static bool grow(void **buf, uint64_t *cap, uint64_t need_n, size_t elem) {
    if (need_n <= *cap) return true;
    uint64_t nc = *cap ? *cap : 16;
    while (nc < need_n) {
        if (nc > UINT64_MAX / 2) return false;
        nc *= 2;
    }
    uint64_t bytes;
    if (!rlx_mul_overflow_u64(nc, elem, &bytes) || bytes > SIZE_MAX) return false;
    void *nb = realloc(*buf, (size_t)bytes);
    if (!nb) return false;
    *buf = nb;
    *cap = nc;
    return true;
}

/* Reads a string into the arena; *off gets its arena offset. Keys and names
 * (allow_nul false) may not contain NUL bytes, since they are looked up as C strings. */
static rlx_status rd_str(parser *p, uint64_t *off, uint64_t *len_out, bool allow_nul, const char *what) {
    uint64_t len;
    rlx_status st = rd_u64(p, &len, what);
    if (st) return st;
    if (len > left(p)) {
        p->pos -= 8;
        return perr(p, "%s length %llu exceeds the %llu bytes left", what, (unsigned long long)len,
                    (unsigned long long)(left(p) - 8));
    }
    gguf_file *f = p->f;
    if (!grow((void **)&f->arena, &f->arena_cap, f->arena_len + len + 1, 1))
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf '%s': out of memory for strings", p->name);
    const uint8_t *src = f->base + p->pos;
    if (!allow_nul && memchr(src, 0, len)) return perr(p, "%s contains a NUL byte", what);
    memcpy(f->arena + f->arena_len, src, len);
    f->arena[f->arena_len + len] = 0;
    *off = f->arena_len;
    if (len_out) *len_out = len;
    f->arena_len += len + 1;
    p->pos += len;
    return RLX_OK;
}

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

/* An array count too large for the bytes left; reported at the count (the
 * 8 bytes just read), so the message's offset points at the bad field. */
static rlx_status array_cannot_fit(parser *p, uint32_t et, uint64_t n) {
    p->pos -= 8;
    return perr(p, "array of %llu %s values cannot fit in the %llu bytes left", (unsigned long long)n, VT_NAMES[et],
                (unsigned long long)(left(p) - 8));
}

/* Validates and steps over the n elements of an array whose count was just
 * read (errors about the count point at it), at nesting level depth (1: a
 * metadata value). Nothing is stored, so arrays of arrays cost no memory;
 * every element consumes input, so the work is linear in the file size; and
 * the depth cap bounds the recursion. */
static rlx_status skip_elems(parser *p, uint32_t et, uint64_t n, int depth) {
    gguf_file *f = p->f;
    rlx_status st;
    if (et == GGUF_VT_STRING || et == GGUF_VT_ARRAY) {
        uint64_t min = et == GGUF_VT_STRING ? 8 : 12;   /* a length; a type and a count */
        if (n > left(p) / min) return array_cannot_fit(p, et, n);
        if (et == GGUF_VT_ARRAY && n > 0 && depth >= GGUF_MAX_ARRAY_DEPTH)
            return perr(p, "arrays nested deeper than %d levels", GGUF_MAX_ARRAY_DEPTH);
        for (uint64_t i = 0; i < n; i++) {
            if (et == GGUF_VT_STRING) {
                uint64_t len;
                if ((st = rd_u64(p, &len, "string length"))) return st;
                if (len > left(p)) {
                    p->pos -= 8;
                    return perr(p, "string %llu length %llu exceeds the %llu bytes left", (unsigned long long)i,
                                (unsigned long long)len, (unsigned long long)(left(p) - 8));
                }
                p->pos += len;
            } else {
                uint32_t t;
                uint64_t m;
                if ((st = rd_u32(p, &t, "array element type"))) return st;
                if (t >= GGUF_VT_COUNT) { p->pos -= 4; return perr(p, "unknown array element type %u", t); }
                if ((st = rd_u64(p, &m, "array length"))) return st;
                if ((st = skip_elems(p, t, m, depth + 1))) return st;
            }
        }
        return RLX_OK;
    }
    uint64_t bytes;
    if (!rlx_mul_overflow_u64(n, VT_SIZES[et], &bytes) || bytes > left(p)) return array_cannot_fit(p, et, n);
    if (et == GGUF_VT_BOOL)
        for (uint64_t i = 0; i < n; i++)
            if (f->base[p->pos + i] > 1) {
                p->pos += i;
                return perr(p, "bool element %llu is %u, not 0 or 1", (unsigned long long)i, f->base[p->pos]);
            }
    p->pos += bytes;
    return RLX_OK;
}

static rlx_status parse_kv(parser *p, kv_rec *kv) {
    gguf_file *f = p->f;
    uint64_t start = p->pos;
    rlx_status st = rd_str(p, &kv->key, NULL, false, "key");
    if (st) return st;
    /* by offset: parsing the value may grow (move) the arena */
    snprintf(p->ctx, sizeof p->ctx, "key %lld '%.100s'", (long long)f->n_kv, f->arena + kv->key);
    uint32_t type;
    if ((st = rd_u32(p, &type, "value type"))) return st;
    if (type >= GGUF_VT_COUNT) { p->pos -= 4; return perr(p, "unknown value type %u", type); }
    kv->type = type;
    kv->n = 0;
    kv->raw = p->pos;
    if (type == GGUF_VT_STRING) {
        st = rd_str(p, &kv->val, &kv->len, true, "string value");
    } else if (type == GGUF_VT_ARRAY) {
        uint32_t et;
        if ((st = rd_u32(p, &et, "array element type"))) return st;
        if (et >= GGUF_VT_COUNT) { p->pos -= 4; return perr(p, "unknown array element type %u", et); }
        kv->arr_type = et;
        if ((st = rd_u64(p, &kv->n, "array length"))) return st;
        if (et == GGUF_VT_STRING) {
            /* each element takes at least its 8-byte length */
            if (kv->n > left(p) / 8) {
                p->pos -= 8;
                return perr(p, "array of %llu strings cannot fit in the %llu bytes left", (unsigned long long)kv->n,
                            (unsigned long long)(left(p) - 8));
            }
            kv->val = f->n_stroff;
            for (uint64_t i = 0; i < kv->n; i++) {
                uint64_t off, len;
                char what[48];
                snprintf(what, sizeof what, "string %llu", (unsigned long long)i);
                if ((st = rd_str(p, &off, &len, true, what))) return st;
                if (!grow((void **)&f->stroff, &f->cap_stroff, f->n_stroff + 2, sizeof(uint64_t)))
                    return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf '%s': out of memory for string arrays", p->name);
                f->stroff[f->n_stroff++] = off;
                f->stroff[f->n_stroff++] = len;
            }
        } else {
            /* numbers: read in place; arrays of arrays: only through gguf_kv_raw */
            kv->val = p->pos;
            st = skip_elems(p, et, kv->n, 1);
        }
    } else {
        if ((st = need(p, VT_SIZES[type], "value"))) return st;
        kv->val = p->pos;
        if (type == GGUF_VT_BOOL && f->base[p->pos] > 1) return perr(p, "bool value is %u, not 0 or 1", f->base[p->pos]);
        p->pos += VT_SIZES[type];
    }
    if (st) return st;
    kv->raw_len = p->pos - kv->raw;
    if (strcmp(f->arena + kv->key, "general.alignment") == 0) {
        uint32_t a;
        if (type != GGUF_VT_U32) { p->pos = start; return perr(p, "general.alignment must be u32, not %s", VT_NAMES[type]); }
        memcpy(&a, f->base + kv->val, 4);
        if (!is_pow2(a)) { p->pos = start; return perr(p, "general.alignment %u is not a power of two", a); }
        f->alignment = a;
    }
    return RLX_OK;
}

static rlx_status parse_tensor(parser *p, gguf_tensor *t, uint64_t *name_off) {
    gguf_file *f = p->f;
    rlx_status st = rd_str(p, name_off, NULL, false, "tensor name");
    if (st) return st;
    snprintf(p->ctx, sizeof p->ctx, "tensor %lld '%.100s'", (long long)f->n_tensors, f->arena + *name_off);
    if ((st = rd_u32(p, &t->n_dims, "n_dims"))) return st;
    if (t->n_dims > GGUF_MAX_DIMS) { p->pos -= 4; return perr(p, "n_dims %u exceeds %d", t->n_dims, GGUF_MAX_DIMS); }
    uint64_t n = 1;
    for (int i = 0; i < GGUF_MAX_DIMS; i++) t->dims[i] = 1;
    for (uint32_t i = 0; i < t->n_dims; i++) {
        if ((st = rd(p, &t->dims[i], 8, "dim"))) return st;
        if (t->dims[i] < 0) { p->pos -= 8; return perr(p, "dim %u is negative (%lld)", i, (long long)t->dims[i]); }
        if (!rlx_mul_overflow_u64(n, (uint64_t)t->dims[i], &n) || n > INT64_MAX) {
            p->pos -= 8;
            return perr(p, "element count overflows at dim %u", i);
        }
    }
    t->n_elements = (int64_t)n;
    if ((st = rd_u32(p, &t->type, "tensor type"))) return st;
    const qtype_info *qi = qtype_get(t->type);
    if (!qi) { p->pos -= 4; return perr(p, "unknown ggml type %u", t->type); }
    if ((uint64_t)t->dims[0] % qi->block_size) {
        p->pos -= 4;
        return perr(p, "row length %lld is not a multiple of the %s block size %u", (long long)t->dims[0], qi->name,
                    qi->block_size);
    }
    if (!qtype_row_bytes(t->type, n, &t->size)) { p->pos -= 4; return perr(p, "byte size overflows"); }
    if ((st = rd_u64(p, &t->offset, "data offset"))) return st;
    if (t->offset % f->alignment) {
        p->pos -= 8;
        return perr(p, "data offset %llu is not a multiple of the alignment %u", (unsigned long long)t->offset,
                    f->alignment);
    }
    return RLX_OK;
}

static int cmp_names(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Finds a duplicate among n names (arena offsets) by sorting pointers to them:
 * O(n log n), since n is bounded only by the file size. */
static const char *find_duplicate(const char *arena, const uint64_t *offs, uint64_t n, rlx_status *st) {
    *st = RLX_OK;
    if (n < 2) return NULL;
    const char **tmp = malloc(n * sizeof *tmp);   /* n * 8 is bounded by the file size */
    if (!tmp) { *st = RLX_STATUS_OUT_OF_MEMORY; return NULL; }
    for (uint64_t i = 0; i < n; i++) tmp[i] = arena + offs[i];
    qsort(tmp, n, sizeof *tmp, cmp_names);
    const char *dup = NULL;
    for (uint64_t i = 1; i < n && !dup; i++)
        if (strcmp(tmp[i - 1], tmp[i]) == 0) dup = tmp[i];
    free(tmp);
    return dup;
}

static int cmp_offsets(const void *a, const void *b) {
    const gguf_tensor *x = *(const gguf_tensor *const *)a, *y = *(const gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Two tensors sharing bytes mean a corrupted table (writers lay tensors out
 * one after another); tensors of no bytes may sit anywhere. Sorting keeps it
 * O(n log n), since n is bounded only by the file size. */
static rlx_status check_overlap(parser *p) {
    gguf_file *f = p->f;
    if (f->n_tensors < 2) return RLX_OK;
    gguf_tensor **by = malloc((size_t)f->n_tensors * sizeof *by);
    if (!by) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf '%s': out of memory", p->name);
    int64_t n = 0;
    for (int64_t i = 0; i < f->n_tensors; i++)
        if (f->tensors[i].size) by[n++] = &f->tensors[i];
    qsort(by, (size_t)n, sizeof *by, cmp_offsets);
    rlx_status st = RLX_OK;
    for (int64_t i = 1; i < n && !st; i++) {
        const gguf_tensor *a = by[i - 1], *b = by[i];
        if (b->offset - a->offset < a->size)   /* sorted, and both lie inside the data section */
            st = rlx_fail(RLX_STATUS_FORMAT,
                          "gguf '%s': tensor %lld '%.100s': data [%llu, %llu) overlaps tensor %lld '%.100s' [%llu, %llu) "
                          "(offsets from the data section at byte %llu)",
                          p->name, (long long)(b - f->tensors), b->name, (unsigned long long)b->offset,
                          (unsigned long long)(b->offset + b->size), (long long)(a - f->tensors), a->name,
                          (unsigned long long)a->offset, (unsigned long long)(a->offset + a->size),
                          (unsigned long long)f->data_offset);
    }
    free(by);
    return st;
}

static rlx_status parse(parser *p) {
    gguf_file *f = p->f;
    rlx_status st;
    char magic[4];
    if (f->size < 4) return perr(p, "file of %llu bytes is too short for a GGUF header", (unsigned long long)f->size);
    memcpy(magic, f->base, 4);
    if (memcmp(magic, "GGUF", 4) != 0)
        return perr(p, "not a GGUF file: magic is %02x %02x %02x %02x, want 'GGUF'", (uint8_t)magic[0],
                    (uint8_t)magic[1], (uint8_t)magic[2], (uint8_t)magic[3]);
    p->pos = 4;
    if ((st = rd_u32(p, &f->version, "version"))) return st;
    if (f->version != 2 && f->version != 3) {
        p->pos = 4;
        if (f->version == 0x02000000u || f->version == 0x03000000u) return perr(p, "big-endian GGUF is not supported");
        if (f->version == 1) return perr(p, "GGUF version 1 is not supported (only 2 and 3)");
        return perr(p, "unsupported GGUF version %u (only 2 and 3)", f->version);
    }
    uint64_t n_tensors, n_kv;
    if ((st = rd_u64(p, &n_tensors, "tensor count"))) return st;
    if ((st = rd_u64(p, &n_kv, "metadata count"))) return st;
    /* smallest encodings: a KV is an 8-byte key length, a 4-byte type and a
     * 1-byte value; a tensor info is 8 + 4 + 4 + 8 bytes with no dims. */
    if (n_kv > left(p) / 13 || n_tensors > left(p) / 24 || n_kv + n_tensors > left(p) / 13) {
        p->pos -= 16;
        return perr(p, "%llu metadata entries and %llu tensors cannot fit in the %llu bytes left",
                    (unsigned long long)n_kv, (unsigned long long)n_tensors, (unsigned long long)(left(p) - 16));
    }
    f->alignment = GGUF_DEFAULT_ALIGNMENT;

    uint64_t cap = 0;
    for (uint64_t i = 0; i < n_kv; i++) {
        if (!grow((void **)&f->kv, &cap, i + 1, sizeof *f->kv))
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf '%s': out of memory for metadata", p->name);
        snprintf(p->ctx, sizeof p->ctx, "key %llu", (unsigned long long)i);
        memset(&f->kv[i], 0, sizeof f->kv[i]);
        if ((st = parse_kv(p, &f->kv[i]))) return st;
        f->n_kv++;
    }
    uint64_t tcap = 0, ncap = 0;
    for (uint64_t i = 0; i < n_tensors; i++) {
        if (!grow((void **)&f->tensors, &tcap, i + 1, sizeof *f->tensors) ||
            !grow((void **)&f->tensor_name_off, &ncap, i + 1, sizeof(uint64_t)))
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf '%s': out of memory for tensor infos", p->name);
        snprintf(p->ctx, sizeof p->ctx, "tensor %llu", (unsigned long long)i);
        memset(&f->tensors[i], 0, sizeof f->tensors[i]);
        if ((st = parse_tensor(p, &f->tensors[i], &f->tensor_name_off[i]))) return st;
        f->n_tensors++;
    }
    p->ctx[0] = 0;

    /* Duplicates would make lookups ambiguous. */
    uint64_t *koffs = f->n_kv ? malloc((size_t)f->n_kv * sizeof *koffs) : NULL;
    if (f->n_kv && !koffs) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf '%s': out of memory", p->name);
    for (int64_t i = 0; i < f->n_kv; i++) koffs[i] = f->kv[i].key;
    const char *dup = find_duplicate(f->arena, koffs, (uint64_t)f->n_kv, &st);
    free(koffs);
    if (st) return rlx_fail(st, "gguf '%s': out of memory", p->name);
    if (dup) return perr(p, "metadata key '%.100s' appears twice", dup);
    dup = find_duplicate(f->arena, f->tensor_name_off, (uint64_t)f->n_tensors, &st);
    if (st) return rlx_fail(st, "gguf '%s': out of memory", p->name);
    if (dup) return perr(p, "tensor name '%.100s' appears twice", dup);

    /* The data section starts at the next multiple of the alignment. */
    uint64_t pad = (f->alignment - p->pos % f->alignment) % f->alignment;
    f->data_offset = p->pos + pad;
    if (f->n_tensors > 0 && pad > left(p))
        return perr(p, "truncated: data section would start at %llu, past the end of the %llu-byte file",
                    (unsigned long long)f->data_offset, (unsigned long long)f->size);
    uint64_t data_size = f->data_offset <= f->size ? f->size - f->data_offset : 0;
    for (int64_t i = 0; i < f->n_tensors; i++) {
        gguf_tensor *t = &f->tensors[i];
        t->name = f->arena + f->tensor_name_off[i];
        if (t->offset > data_size || t->size > data_size - t->offset)
            return rlx_fail(RLX_STATUS_FORMAT,
                            "gguf '%s': tensor %lld '%.100s': data [%llu, %llu + %llu) lies outside the %llu-byte data "
                            "section at byte %llu",
                            p->name, (long long)i, t->name, (unsigned long long)t->offset,
                            (unsigned long long)t->offset, (unsigned long long)t->size, (unsigned long long)data_size,
                            (unsigned long long)f->data_offset);
        t->data = f->base + f->data_offset + t->offset;
    }
    return check_overlap(p);
}

static rlx_status open_common(gguf_file *f, const char *name, gguf_file **out) {
    parser p = {.f = f, .name = name};
    rlx_status st = parse(&p);
    if (st) {
        gguf_close(f);
        return st;
    }
    *out = f;
    return RLX_OK;
}

rlx_status gguf_open_memory(const void *data, size_t size, gguf_file **out) {
    if (!out || (!data && size)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf_open_memory: NULL argument");
    *out = NULL;
    gguf_file *f = calloc(1, sizeof *f);
    if (!f) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf: out of memory");
    static const uint8_t empty[1];
    f->base = data ? data : empty;
    f->size = size;
    return open_common(f, "<memory>", out);
}

rlx_status gguf_open(const char *path, gguf_file **out) {
    if (!path || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf_open: NULL argument");
    *out = NULL;
    gguf_file *f = calloc(1, sizeof *f);
    if (!f) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf: out of memory");
    rlx_status st = rlx_file_map_open(&f->map, path, "gguf");
    if (st) {
        free(f);
        return st;
    }
    f->base = f->map.data;
    f->size = f->map.size;
    return open_common(f, path, out);
}

void gguf_close(gguf_file *f) {
    if (!f) return;
    rlx_file_map_close(&f->map);
    free(f->kv);
    free(f->tensors);
    free(f->tensor_name_off);
    free(f->arena);
    free(f->stroff);
    free(f);
}

/* ---------------------------------------------------------------- lookups */

uint32_t gguf_version(const gguf_file *f) { return f ? f->version : 0; }
uint32_t gguf_alignment(const gguf_file *f) { return f ? f->alignment : 0; }
uint64_t gguf_data_offset(const gguf_file *f) { return f ? f->data_offset : 0; }
uint64_t gguf_file_size(const gguf_file *f) { return f ? f->size : 0; }

int64_t gguf_kv_count(const gguf_file *f) { return f ? f->n_kv : 0; }

static const kv_rec *kv_at(const gguf_file *f, int64_t kv) {
    return f && kv >= 0 && kv < f->n_kv ? &f->kv[kv] : NULL;
}

int64_t gguf_find_key(const gguf_file *f, const char *key) {
    if (!f || !key) return -1;
    for (int64_t i = 0; i < f->n_kv; i++)
        if (strcmp(f->arena + f->kv[i].key, key) == 0) return i;
    return -1;
}

const char *gguf_kv_key(const gguf_file *f, int64_t kv) {
    const kv_rec *r = kv_at(f, kv);
    return r ? f->arena + r->key : NULL;
}
gguf_vtype gguf_kv_type(const gguf_file *f, int64_t kv) {
    const kv_rec *r = kv_at(f, kv);
    return r ? (gguf_vtype)r->type : GGUF_VT_COUNT;
}
gguf_vtype gguf_kv_arr_type(const gguf_file *f, int64_t kv) {
    const kv_rec *r = kv_at(f, kv);
    return r && r->type == GGUF_VT_ARRAY ? (gguf_vtype)r->arr_type : GGUF_VT_COUNT;
}
uint64_t gguf_kv_arr_len(const gguf_file *f, int64_t kv) {
    const kv_rec *r = kv_at(f, kv);
    return r && r->type == GGUF_VT_ARRAY ? r->n : 0;
}

/* Decodes one fixed-size value of type t at p into an int (is_int) or double. */
static bool load_num(const uint8_t *p, uint32_t t, bool *is_int, int64_t *iv, uint64_t *uv, double *dv) {
    union { uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32; int32_t i32;
            uint64_t u64; int64_t i64; float f32; double f64; } v;
    if (t >= GGUF_VT_COUNT || VT_SIZES[t] == 0) return false;
    memcpy(&v, p, VT_SIZES[t]);
    *is_int = true;
    *uv = 0;
    switch (t) {
    case GGUF_VT_U8: case GGUF_VT_BOOL: *iv = v.u8; break;
    case GGUF_VT_I8:  *iv = v.i8; break;
    case GGUF_VT_U16: *iv = v.u16; break;
    case GGUF_VT_I16: *iv = v.i16; break;
    case GGUF_VT_U32: *iv = v.u32; break;
    case GGUF_VT_I32: *iv = v.i32; break;
    case GGUF_VT_I64: *iv = v.i64; break;
    case GGUF_VT_U64:
        *uv = v.u64;
        *iv = v.u64 > INT64_MAX ? -1 : (int64_t)v.u64;
        *dv = (double)v.u64;
        return true;
    case GGUF_VT_F32: *is_int = false; *dv = v.f32; return true;
    case GGUF_VT_F64: *is_int = false; *dv = v.f64; return true;
    default: return false;
    }
    *uv = *iv >= 0 ? (uint64_t)*iv : 0;
    *dv = (double)*iv;
    return true;
}

static bool conv_int(const uint8_t *p, uint32_t t, int64_t *out) {
    bool is_int; int64_t iv; uint64_t uv; double dv;
    if (!load_num(p, t, &is_int, &iv, &uv, &dv) || !is_int) return false;
    if (t == GGUF_VT_U64 && uv > INT64_MAX) return false;
    *out = iv;
    return true;
}

static bool conv_float(const uint8_t *p, uint32_t t, double *out) {
    bool is_int; int64_t iv; uint64_t uv; double dv;
    if (!load_num(p, t, &is_int, &iv, &uv, &dv)) return false;
    *out = dv;
    return true;
}

bool gguf_kv_int(const gguf_file *f, int64_t kv, int64_t *out) {
    const kv_rec *r = kv_at(f, kv);
    return r && out && conv_int(f->base + r->val, r->type, out);
}

bool gguf_kv_uint(const gguf_file *f, int64_t kv, uint64_t *out) {
    const kv_rec *r = kv_at(f, kv);
    if (!r || !out) return false;
    if (r->type == GGUF_VT_U64) { memcpy(out, f->base + r->val, 8); return true; }
    int64_t v;
    if (!conv_int(f->base + r->val, r->type, &v) || v < 0) return false;
    *out = (uint64_t)v;
    return true;
}

bool gguf_kv_float(const gguf_file *f, int64_t kv, double *out) {
    const kv_rec *r = kv_at(f, kv);
    return r && out && r->type != GGUF_VT_BOOL && conv_float(f->base + r->val, r->type, out);
}

const char *gguf_kv_str(const gguf_file *f, int64_t kv, size_t *len) {
    const kv_rec *r = kv_at(f, kv);
    if (!r || r->type != GGUF_VT_STRING) return NULL;
    if (len) *len = (size_t)r->len;
    return f->arena + r->val;
}

static const uint8_t *arr_elem(const gguf_file *f, const kv_rec *r, uint64_t i) {
    if (!r || r->type != GGUF_VT_ARRAY || i >= r->n || VT_SIZES[r->arr_type] == 0) return NULL;
    return f->base + r->val + i * VT_SIZES[r->arr_type];
}

bool gguf_kv_arr_int(const gguf_file *f, int64_t kv, uint64_t i, int64_t *out) {
    const kv_rec *r = kv_at(f, kv);
    const uint8_t *p = arr_elem(f, r, i);
    return p && out && conv_int(p, r->arr_type, out);
}

bool gguf_kv_arr_float(const gguf_file *f, int64_t kv, uint64_t i, double *out) {
    const kv_rec *r = kv_at(f, kv);
    const uint8_t *p = arr_elem(f, r, i);
    return p && out && r->arr_type != GGUF_VT_BOOL && conv_float(p, r->arr_type, out);
}

const char *gguf_kv_arr_str(const gguf_file *f, int64_t kv, uint64_t i, size_t *len) {
    const kv_rec *r = kv_at(f, kv);
    if (!r || r->type != GGUF_VT_ARRAY || r->arr_type != GGUF_VT_STRING || i >= r->n) return NULL;
    if (len) *len = (size_t)f->stroff[r->val + 2 * i + 1];
    return f->arena + f->stroff[r->val + 2 * i];
}

const void *gguf_kv_arr_data(const gguf_file *f, int64_t kv) {
    const kv_rec *r = kv_at(f, kv);
    if (!r || r->type != GGUF_VT_ARRAY || VT_SIZES[r->arr_type] == 0) return NULL;
    return f->base + r->val;
}

const void *gguf_kv_raw(const gguf_file *f, int64_t kv, uint64_t *bytes) {
    const kv_rec *r = kv_at(f, kv);
    if (!r) return NULL;
    if (bytes) *bytes = r->raw_len;
    return f->base + r->raw;
}

/* ---------------------------------------------------------- typed getters */

static rlx_status lookup(const gguf_file *f, const char *key, int64_t *kv) {
    *kv = -1;
    if (!f || !key) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf: NULL argument");
    *kv = gguf_find_key(f, key);
    if (*kv < 0) return rlx_fail(RLX_STATUS_NOT_FOUND, "gguf: no metadata key '%s'", key);
    return RLX_OK;
}

static rlx_status wrong_type(const gguf_file *f, int64_t kv, const char *want) {
    return rlx_fail(RLX_STATUS_FORMAT, "gguf: metadata '%s' is %s, want %s", gguf_kv_key(f, kv),
                    VT_NAMES[f->kv[kv].type], want);
}

rlx_status gguf_get_u32(const gguf_file *f, const char *key, uint32_t *out) {
    int64_t kv;
    uint64_t v;
    rlx_status st = lookup(f, key, &kv);
    if (st) return st;
    if (f->kv[kv].type == GGUF_VT_BOOL || !gguf_kv_uint(f, kv, &v) || v > UINT32_MAX)
        return wrong_type(f, kv, "an integer in [0, 2^32)");
    *out = (uint32_t)v;
    return RLX_OK;
}

rlx_status gguf_get_i64(const gguf_file *f, const char *key, int64_t *out) {
    int64_t kv;
    rlx_status st = lookup(f, key, &kv);
    if (st) return st;
    if (f->kv[kv].type == GGUF_VT_BOOL || !gguf_kv_int(f, kv, out)) return wrong_type(f, kv, "an integer");
    return RLX_OK;
}

rlx_status gguf_get_f32(const gguf_file *f, const char *key, float *out) {
    int64_t kv;
    double v;
    rlx_status st = lookup(f, key, &kv);
    if (st) return st;
    if (!gguf_kv_float(f, kv, &v)) return wrong_type(f, kv, "a number");
    *out = (float)v;
    return RLX_OK;
}

rlx_status gguf_get_bool(const gguf_file *f, const char *key, bool *out) {
    int64_t kv;
    rlx_status st = lookup(f, key, &kv);
    if (st) return st;
    if (f->kv[kv].type != GGUF_VT_BOOL) return wrong_type(f, kv, "bool");
    *out = f->base[f->kv[kv].val] != 0;
    return RLX_OK;
}

rlx_status gguf_get_str(const gguf_file *f, const char *key, const char **out) {
    int64_t kv;
    rlx_status st = lookup(f, key, &kv);
    if (st) return st;
    if (f->kv[kv].type != GGUF_VT_STRING) return wrong_type(f, kv, "string");
    *out = gguf_kv_str(f, kv, NULL);
    return RLX_OK;
}

rlx_status gguf_get_arr(const gguf_file *f, const char *key, gguf_vtype elem, int64_t *kv, uint64_t *n) {
    rlx_status st = lookup(f, key, kv);
    if (st) return st;
    const kv_rec *r = &f->kv[*kv];
    if (r->type != GGUF_VT_ARRAY || (elem != GGUF_VT_COUNT && r->arr_type != (uint32_t)elem)) {
        char want[32];
        snprintf(want, sizeof want, "array of %s", elem == GGUF_VT_COUNT ? "any" : gguf_vtype_name(elem));
        if (r->type == GGUF_VT_ARRAY)
            return rlx_fail(RLX_STATUS_FORMAT, "gguf: metadata '%s' is array of %s, want %s", key,
                            VT_NAMES[r->arr_type], want);
        return wrong_type(f, *kv, want);
    }
    if (n) *n = r->n;
    return RLX_OK;
}

/* ---------------------------------------------------------------- tensors */

int64_t gguf_tensor_count(const gguf_file *f) { return f ? f->n_tensors : 0; }

const gguf_tensor *gguf_tensor_at(const gguf_file *f, int64_t i) {
    return f && i >= 0 && i < f->n_tensors ? &f->tensors[i] : NULL;
}

const gguf_tensor *gguf_find_tensor(const gguf_file *f, const char *name) {
    if (!f || !name) return NULL;
    for (int64_t i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}
