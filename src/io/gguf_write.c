/*
 * gguf_write.c — the GGUF v3 writer. Metadata values are serialized when set
 * (so the writer owns them). Tensor bytes are taken at write time, one tensor
 * after the other: borrowed ones straight from the caller's memory, filled
 * ones from the caller's callback into one scratch buffer (file) or straight
 * into the output (memory). So a tool that produces its tensors on the fly
 * (`rlx quantize`, `llm_bench --write-gguf`) holds one tensor, not a second
 * copy of the model.
 */
#include "io/gguf.h"
#include "core/file_out.h"
#include "quant/quant.h"
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wkv {
    char *key;
    uint8_t *blob;      /* u32 type + serialized value */
    size_t len;
} wkv;

typedef struct wtensor {
    char *name;
    uint32_t type, n_dims;
    int64_t dims[GGUF_MAX_DIMS];
    const void *data;       /* borrowed bytes, or NULL when fill produces them */
    gguf_fill_fn fill;
    void *fill_ctx;
    uint64_t size;
} wtensor;

/* Open addressing over the entries' names (slot = entry index + 1, 0 empty),
 * so a name check is O(1): with a linear scan, `rlx quantize` of a crafted
 * file with 40k tensors took seconds, and grew quadratically. */
typedef struct name_index {
    size_t *slot;
    size_t  cap;   /* a power of two, at least twice the entries */
} name_index;

struct gguf_writer {
    wkv *kv;
    size_t n_kv, cap_kv;
    wtensor *t;
    size_t n_t, cap_t;
    name_index kv_index, t_index;
};

typedef const char *(*name_of_fn)(const gguf_writer *w, size_t i);
static const char *kv_name(const gguf_writer *w, size_t i) { return w->kv[i].key; }
static const char *tensor_name(const gguf_writer *w, size_t i) { return w->t[i].name; }

static size_t name_hash(const char *s) {
    uint64_t h = rlx_hash_str(s);
    return (size_t)(h ^ (h >> 32));
}

/* Entry `name`'s index into *at; false if there is none. */
static bool index_find(const gguf_writer *w, const name_index *x, name_of_fn name_of, const char *name, size_t *at) {
    if (!x->cap) return false;
    for (size_t j = name_hash(name) & (x->cap - 1); x->slot[j]; j = (j + 1) & (x->cap - 1))
        if (strcmp(name_of(w, x->slot[j] - 1), name) == 0) {
            *at = x->slot[j] - 1;
            return true;
        }
    return false;
}

static void index_place(const gguf_writer *w, name_index *x, name_of_fn name_of, size_t i) {
    size_t j = name_hash(name_of(w, i)) & (x->cap - 1);
    while (x->slot[j]) j = (j + 1) & (x->cap - 1);
    x->slot[j] = i + 1;
}

/* Indexes entry n - 1 (just appended; n entries in all), growing the table
 * first when it would be more than half full. False if out of memory. */
static bool index_add(const gguf_writer *w, name_index *x, name_of_fn name_of, size_t n) {
    if (n > x->cap / 2) {
        size_t cap = x->cap ? x->cap : 64;
        while (n > cap / 2) {
            if (cap > SIZE_MAX / 2 / sizeof *x->slot) return false;
            cap *= 2;
        }
        size_t *slot = calloc(cap, sizeof *slot);
        if (!slot) return false;
        free(x->slot);
        x->slot = slot;
        x->cap = cap;
        for (size_t i = 0; i + 1 < n; i++) index_place(w, x, name_of, i);
    }
    index_place(w, x, name_of, n - 1);
    return true;
}

gguf_writer *gguf_writer_new(void) { return calloc(1, sizeof(gguf_writer)); }

void gguf_writer_free(gguf_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n_kv; i++) { free(w->kv[i].key); free(w->kv[i].blob); }
    for (size_t i = 0; i < w->n_t; i++) free(w->t[i].name);
    free(w->kv);
    free(w->t);
    free(w->kv_index.slot);
    free(w->t_index.slot);
    free(w);
}

static bool grow(void **buf, size_t *cap, size_t n, size_t elem) {
    if (n <= *cap) return true;
    size_t nc = *cap ? *cap : 16;
    while (nc < n) {   /* a length near SIZE_MAX must fail, not wrap to 0 and spin */
        if (nc > SIZE_MAX / 2) return false;
        nc *= 2;
    }
    if (nc > SIZE_MAX / elem) return false;
    void *nb = realloc(*buf, nc * elem);
    if (!nb) return false;
    *buf = nb;
    *cap = nc;
    return true;
}

/* ------------------------------------------------------------ byte buffer */

typedef struct bbuf {
    uint8_t *p;
    size_t len, cap;
    bool oom;
} bbuf;

static void put(bbuf *b, const void *src, size_t n) {
    if (b->oom) return;
    if (b->len + n < b->len || !grow((void **)&b->p, &b->cap, b->len + n, 1)) { b->oom = true; return; }
    if (n) memcpy(b->p + b->len, src, n);   /* src may be NULL for an empty array */
    b->len += n;
}
static void put_u32(bbuf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(bbuf *b, uint64_t v) { put(b, &v, 8); }
static void put_str(bbuf *b, const char *s, size_t n) { put_u64(b, n); put(b, s, n); }

/* --------------------------------------------------------------- metadata */

bool gguf_writer_has_key(const gguf_writer *w, const char *key) {
    size_t at;
    return w && key && index_find(w, &w->kv_index, kv_name, key, &at);
}

/* Takes ownership of b's bytes as key's value (replacing an existing one). */
static rlx_status set_blob(gguf_writer *w, const char *key, bbuf *b) {
    if (b->oom) { free(b->p); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: out of memory"); }
    size_t i;
    if (index_find(w, &w->kv_index, kv_name, key, &i)) {
        free(w->kv[i].blob);
        w->kv[i].blob = b->p;
        w->kv[i].len = b->len;
        return RLX_OK;
    }
    char *k = rlx_strdup(key);
    if (!k || !grow((void **)&w->kv, &w->cap_kv, w->n_kv + 1, sizeof *w->kv)) {
        free(k);
        free(b->p);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: out of memory");
    }
    w->kv[w->n_kv++] = (wkv){k, b->p, b->len};
    if (!index_add(w, &w->kv_index, kv_name, w->n_kv)) {
        w->n_kv--;
        free(k);
        free(b->p);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: out of memory");
    }
    return RLX_OK;
}

static rlx_status check_key(const gguf_writer *w, const char *key) {
    if (!w || !key) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: NULL argument");
    if (!key[0]) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: empty key");
    return RLX_OK;
}

static rlx_status set_scalar(gguf_writer *w, const char *key, gguf_vtype t, const void *v) {
    rlx_status st = check_key(w, key);
    if (st) return st;
    bbuf b = {0};
    put_u32(&b, t);
    put(&b, v, gguf_vtype_size(t));
    return set_blob(w, key, &b);
}

rlx_status gguf_set_u8(gguf_writer *w, const char *k, uint8_t v) { return set_scalar(w, k, GGUF_VT_U8, &v); }
rlx_status gguf_set_i8(gguf_writer *w, const char *k, int8_t v) { return set_scalar(w, k, GGUF_VT_I8, &v); }
rlx_status gguf_set_u16(gguf_writer *w, const char *k, uint16_t v) { return set_scalar(w, k, GGUF_VT_U16, &v); }
rlx_status gguf_set_i16(gguf_writer *w, const char *k, int16_t v) { return set_scalar(w, k, GGUF_VT_I16, &v); }
rlx_status gguf_set_u32(gguf_writer *w, const char *k, uint32_t v) { return set_scalar(w, k, GGUF_VT_U32, &v); }
rlx_status gguf_set_i32(gguf_writer *w, const char *k, int32_t v) { return set_scalar(w, k, GGUF_VT_I32, &v); }
rlx_status gguf_set_u64(gguf_writer *w, const char *k, uint64_t v) { return set_scalar(w, k, GGUF_VT_U64, &v); }
rlx_status gguf_set_i64(gguf_writer *w, const char *k, int64_t v) { return set_scalar(w, k, GGUF_VT_I64, &v); }
rlx_status gguf_set_f32(gguf_writer *w, const char *k, float v) { return set_scalar(w, k, GGUF_VT_F32, &v); }
rlx_status gguf_set_f64(gguf_writer *w, const char *k, double v) { return set_scalar(w, k, GGUF_VT_F64, &v); }
rlx_status gguf_set_bool(gguf_writer *w, const char *k, bool v) {
    uint8_t b = v ? 1 : 0;
    return set_scalar(w, k, GGUF_VT_BOOL, &b);
}

rlx_status gguf_set_str_n(gguf_writer *w, const char *key, const char *v, size_t len) {
    rlx_status st = check_key(w, key);
    if (st) return st;
    if (!v && len) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: '%s': NULL string", key);
    bbuf b = {0};
    put_u32(&b, GGUF_VT_STRING);
    put_str(&b, v, len);
    return set_blob(w, key, &b);
}

rlx_status gguf_set_str(gguf_writer *w, const char *key, const char *v) {
    if (!v) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: NULL string");
    return gguf_set_str_n(w, key, v, strlen(v));
}

rlx_status gguf_set_arr(gguf_writer *w, const char *key, gguf_vtype elem, const void *data, uint64_t n) {
    rlx_status st = check_key(w, key);
    if (st) return st;
    size_t es = gguf_vtype_size(elem);
    if (es == 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: '%s': array elements must be fixed-size, not %s",
                                 key, gguf_vtype_name(elem));
    if (!data && n) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: '%s': NULL array data", key);
    uint64_t bytes;
    if (!rlx_mul_overflow_u64(n, es, &bytes) || bytes > SIZE_MAX / 2)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: '%s': array too large", key);
    if (elem == GGUF_VT_BOOL)
        for (uint64_t i = 0; i < n; i++)
            if (((const uint8_t *)data)[i] > 1)
                return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: '%s': bool element %llu is not 0 or 1", key,
                                (unsigned long long)i);
    bbuf b = {0};
    put_u32(&b, GGUF_VT_ARRAY);
    put_u32(&b, elem);
    put_u64(&b, n);
    put(&b, data, (size_t)bytes);
    return set_blob(w, key, &b);
}

rlx_status gguf_set_arr_str(gguf_writer *w, const char *key, const char *const *v, uint64_t n) {
    rlx_status st = check_key(w, key);
    if (st) return st;
    if (!v && n) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: '%s': NULL array", key);
    bbuf b = {0};
    put_u32(&b, GGUF_VT_ARRAY);
    put_u32(&b, GGUF_VT_STRING);
    put_u64(&b, n);
    for (uint64_t i = 0; i < n; i++) {
        if (!v[i]) { free(b.p); return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: '%s': string %llu is NULL", key, (unsigned long long)i); }
        put_str(&b, v[i], strlen(v[i]));
    }
    return set_blob(w, key, &b);
}

rlx_status gguf_set_from(gguf_writer *w, const gguf_file *f, int64_t kv) {
    const char *key = gguf_kv_key(f, kv);
    rlx_status st = check_key(w, key);
    if (st) return st;
    /* The value's bytes as the reader validated them: exact for every type,
       arrays of arrays and NaN payloads included. */
    uint64_t bytes = 0;
    const void *raw = gguf_kv_raw(f, kv, &bytes);
    bbuf b = {0};
    put_u32(&b, gguf_kv_type(f, kv));
    put(&b, raw, (size_t)bytes);   /* bounded by the file */
    return set_blob(w, key, &b);
}

/* ---------------------------------------------------------------- tensors */

/* The checks and bookkeeping of both gguf_add_tensor and gguf_add_tensor_fill
 * (exactly one of data / fill is set, the caller checked its own argument). */
static rlx_status add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *dims,
                             uint64_t size, const void *data, gguf_fill_fn fill, void *fill_ctx) {
    if (!w || !name || (!dims && n_dims)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: NULL argument");
    if (!name[0]) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: empty tensor name");
    const qtype_info *qi = qtype_get(type);
    if (!qi) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: tensor '%s': unknown ggml type %u", name, type);
    if (n_dims > GGUF_MAX_DIMS)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: tensor '%s': %u dims, at most %d", name, n_dims,
                        GGUF_MAX_DIMS);
    uint64_t n = 1;
    for (uint32_t i = 0; i < n_dims; i++)
        if (dims[i] < 0 || !rlx_mul_overflow_u64(n, (uint64_t)dims[i], &n) || n > INT64_MAX)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: tensor '%s': bad dim %u", name, i);
    uint64_t want;
    if ((n_dims > 0 && dims[0] % qi->block_size) || !qtype_row_bytes(type, n, &want))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: tensor '%s': row length is not a multiple of the %s block size %u",
                        name, qi->name, qi->block_size);
    if (want != size)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: tensor '%s': %llu bytes given, %s needs %llu", name,
                        (unsigned long long)size, qi->name, (unsigned long long)want);
    size_t dup;
    if (index_find(w, &w->t_index, tensor_name, name, &dup))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: tensor '%s' added twice", name);
    char *nm = rlx_strdup(name);
    if (!nm || !grow((void **)&w->t, &w->cap_t, w->n_t + 1, sizeof *w->t)) {
        free(nm);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: out of memory");
    }
    wtensor *t = &w->t[w->n_t++];
    memset(t, 0, sizeof *t);
    t->name = nm;
    t->type = type;
    t->n_dims = n_dims;
    for (uint32_t i = 0; i < n_dims; i++) t->dims[i] = dims[i];
    t->data = data;
    t->fill = fill;
    t->fill_ctx = fill_ctx;
    t->size = size;
    if (!index_add(w, &w->t_index, tensor_name, w->n_t)) {
        free(w->t[--w->n_t].name);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: out of memory");
    }
    return RLX_OK;
}

rlx_status gguf_add_tensor(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *dims,
                           const void *data, uint64_t size) {
    if (!data && size) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: NULL argument");
    return add_tensor(w, name, type, n_dims, dims, size, data, NULL, NULL);
}

rlx_status gguf_add_tensor_fill(gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims, const int64_t *dims,
                                uint64_t size, gguf_fill_fn fill, void *ctx) {
    if (!fill) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: NULL argument");
    return add_tensor(w, name, type, n_dims, dims, size, NULL, fill, ctx);
}

/* ------------------------------------------------------------------ write */

static uint64_t align_up(uint64_t v, uint32_t a) { return (v + a - 1) / a * a; }

static rlx_status alignment_of(const gguf_writer *w, uint32_t *out) {
    *out = GGUF_DEFAULT_ALIGNMENT;
    for (size_t i = 0; i < w->n_kv; i++) {
        if (strcmp(w->kv[i].key, "general.alignment") != 0) continue;
        uint32_t t, a;
        memcpy(&t, w->kv[i].blob, 4);
        if (t != GGUF_VT_U32) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: general.alignment must be u32");
        memcpy(&a, w->kv[i].blob + 4, 4);
        if (!a || (a & (a - 1)))
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: general.alignment %u is not a power of two", a);
        *out = a;
    }
    return RLX_OK;
}

/* Everything before the data section, padded to the alignment. */
static rlx_status build_head(const gguf_writer *w, bbuf *b, uint32_t *align) {
    rlx_status st = alignment_of(w, align);
    if (st) return st;
    put(b, "GGUF", 4);
    put_u32(b, 3);
    put_u64(b, w->n_t);
    put_u64(b, w->n_kv);
    for (size_t i = 0; i < w->n_kv; i++) {
        put_str(b, w->kv[i].key, strlen(w->kv[i].key));
        put(b, w->kv[i].blob, w->kv[i].len);
    }
    uint64_t off = 0;
    for (size_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        put_str(b, t->name, strlen(t->name));
        put_u32(b, t->n_dims);
        put(b, t->dims, 8 * (size_t)t->n_dims);
        put_u32(b, t->type);
        put_u64(b, off);
        off = align_up(off + t->size, *align);
    }
    static const uint8_t zeros[256];
    size_t pad = (size_t)(align_up(b->len, *align) - b->len);
    while (pad > 0) {
        size_t k = pad < sizeof zeros ? pad : sizeof zeros;
        put(b, zeros, k);
        pad -= k;
    }
    if (b->oom) { free(b->p); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: out of memory"); }
    return RLX_OK;
}

/* One buffer for the filled tensors of a write, grown to the largest: its old
 * bytes are never needed, so it is freed before the larger one is taken and
 * the peak stays one tensor. */
typedef struct scratch {
    void *p;
    uint64_t cap;
} scratch;

static rlx_status scratch_get(scratch *sc, const wtensor *t, void **out) {
    if (t->size > sc->cap || !sc->p) {
        free(sc->p);
        sc->cap = 0;
        sc->p = t->size <= SIZE_MAX ? malloc(t->size ? (size_t)t->size : 1) : NULL;
        if (!sc->p)
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: tensor '%s': out of memory for %llu bytes", t->name,
                            (unsigned long long)t->size);
        sc->cap = t->size;
    }
    *out = sc->p;
    return RLX_OK;
}

/* Tensor i's bytes from its fill into dst. A failing fill keeps its status,
 * and its message gains the tensor's name. */
static rlx_status run_fill(const gguf_writer *w, size_t i, void *dst) {
    const wtensor *t = &w->t[i];
    rlx_clear_error();   /* so a fill that fails without a message is not blamed for an old one */
    rlx_status st = t->fill(t->fill_ctx, dst, t->size);
    if (st == RLX_OK) return RLX_OK;
    return rlx_fail(st, "gguf writer: tensor '%s' (%zu of %zu): %s", t->name, i + 1, w->n_t,
                    rlx_last_error()[0] ? rlx_last_error() : "(no message)");
}

static uint64_t pad_of(const wtensor *t, uint32_t align) { return align_up(t->size, align) - t->size; }

/* Tensor i's fill run into the scratch buffer (grown as needed); *bytes is it. */
static rlx_status fill_scratch(const gguf_writer *w, size_t i, scratch *sc, void **bytes) {
    rlx_status st = scratch_get(sc, &w->t[i], bytes);
    return st ? st : run_fill(w, i, *bytes);
}

rlx_status gguf_write_memory(const gguf_writer *w, void **out, size_t *size) {
    if (!w || !out || !size) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: NULL argument");
    bbuf b = {0};
    uint32_t align;
    rlx_status st = build_head(w, &b, &align);
    if (st) return st;
    /* the exact size up front: one allocation, no doubling past the file */
    uint64_t total = b.len;
    for (size_t i = 0; i < w->n_t; i++) {
        uint64_t next = total + align_up(w->t[i].size, align);
        if (next < total || next > SIZE_MAX) { free(b.p); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: file too large for memory"); }
        total = next;
    }
    uint8_t *p = realloc(b.p, total ? (size_t)total : 1);
    if (!p) { free(b.p); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "gguf writer: out of memory"); }
    size_t len = b.len;
    scratch sc = {0};
    for (size_t i = 0; i < w->n_t && st == RLX_OK; i++) {
        const wtensor *t = &w->t[i];
        uint8_t *dst = p + len;
        if (!t->fill) {
            if (t->size) memcpy(dst, t->data, (size_t)t->size);
        } else if ((uintptr_t)dst % _Alignof(max_align_t) == 0) {
            st = run_fill(w, i, dst);   /* in place: no scratch */
        } else {   /* general.alignment below malloc's: fills are promised aligned memory */
            void *tmp = NULL;
            st = fill_scratch(w, i, &sc, &tmp);
            if (!st && t->size) memcpy(dst, tmp, (size_t)t->size);
        }
        size_t pad = (size_t)pad_of(t, align);
        len += (size_t)t->size;
        memset(p + len, 0, pad);
        len += pad;
    }
    free(sc.p);
    if (st) { free(p); return st; }
    *out = p;
    *size = len;
    return RLX_OK;
}

/* Writes the head in b and the tensors to fp, and closes fp. A failing fill
 * returns its status (run_fill); a failing write RLX_STATUS_IO with the errno
 * of the first failing call (later calls may change errno). */
static rlx_status write_body(const gguf_writer *w, const bbuf *b, uint32_t align, FILE *fp, const char *path) {
    static const uint8_t zeros[256];
    scratch sc = {0};
    rlx_status st = RLX_OK;
    int e = 0;
    bool ok = fwrite(b->p, 1, b->len, fp) == b->len;
    for (size_t i = 0; ok && !st && i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        const void *src = t->data;
        if (t->fill) {
            void *filled = NULL;
            if ((st = fill_scratch(w, i, &sc, &filled)) != RLX_OK) break;
            src = filled;
        }
        ok = fwrite(src, 1, (size_t)t->size, fp) == t->size;
        size_t pad = (size_t)pad_of(t, align);
        while (ok && pad > 0) {
            size_t k = pad < sizeof zeros ? pad : sizeof zeros;
            ok = fwrite(zeros, 1, k, fp) == k;
            pad -= k;
        }
    }
    if (!ok) e = errno;
    free(sc.p);
    /* buffered bytes are written here, so a full disk often shows up only now */
    if (fclose(fp) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (st) return st;
    if (!ok) return rlx_fail(RLX_STATUS_IO, "gguf writer: writing '%s' failed: %s", path, e ? strerror(e) : "short write");
    return RLX_OK;
}

/* The file is written through rlx_file_out (core/file_out.h): to a
 * temporary next to it, renamed over it once complete. */
rlx_status gguf_write_file(const gguf_writer *w, const char *path) {
    if (!w || !path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "gguf writer: NULL argument");
    bbuf b = {0};
    uint32_t align;
    rlx_status st = build_head(w, &b, &align);
    if (st) return st;
    rlx_file_out o;
    if ((st = rlx_file_out_open(&o, path, "gguf writer")) != RLX_OK) {
        free(b.p);
        return st;
    }
    st = write_body(w, &b, align, o.fp, path);
    free(b.p);
    return rlx_file_out_finish(&o, st, path, "gguf writer");
}
