/*
 * safetensors_write.c — the safetensors writer (safetensors.h): tensors and
 * "__metadata__" strings in, a file that the reader's rules accept out.
 *
 * Layout: tensors are placed back to back (no gaps, as the reader requires)
 * in order of decreasing element size, caller's order among equals, so that
 * with the header padded with spaces to a multiple of 8 every tensor starts
 * at a multiple of its element size. The header lists tensors in the
 * caller's order. Training checkpoints and the tests write through it.
 */
#include "io/safetensors.h"
#include "core/file_out.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct wtensor {
    char *name;
    sft_dtype dtype;
    int n_dims;
    int64_t *dims;
    const void *data;    /* borrowed */
    uint64_t size, offset;
} wtensor;

typedef struct wmeta {
    char *key, *value;
} wmeta;

struct sft_writer {
    wtensor *t;
    size_t n_t, cap_t;
    wmeta *m;
    size_t n_m, cap_m;
};

sft_writer *sft_writer_new(void) { return calloc(1, sizeof(sft_writer)); }

void sft_writer_free(sft_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n_t; i++) {
        free(w->t[i].name);
        free(w->t[i].dims);
    }
    for (size_t i = 0; i < w->n_m; i++) {
        free(w->m[i].key);
        free(w->m[i].value);
    }
    free(w->t);
    free(w->m);
    free(w);
}

static bool grow(void **p, size_t *cap, size_t n, size_t elem) {
    if (n < *cap) return true;
    size_t nc = *cap ? *cap * 2 : 16;
    void *q = realloc(*p, nc * elem);
    if (!q) return false;
    *p = q;
    *cap = nc;
    return true;
}

static rlx_status check_utf8(const char *s, const char *what) {
    size_t bad;
    if (!json_utf8_valid(s, strlen(s), &bad))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "safetensors writer: %s is not valid UTF-8 (byte %zu)", what, bad);
    return RLX_OK;
}

rlx_status sft_writer_set_metadata(sft_writer *w, const char *key, const char *value) {
    if (!w || !key || !value) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_writer_set_metadata: NULL argument");
    rlx_status st;
    if ((st = check_utf8(key, "a metadata key")) || (st = check_utf8(value, "a metadata value"))) return st;
    char *v = rlx_strdup(value);
    if (!v) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors writer: out of memory");
    for (size_t i = 0; i < w->n_m; i++)
        if (strcmp(w->m[i].key, key) == 0) {
            free(w->m[i].value);
            w->m[i].value = v;
            return RLX_OK;
        }
    char *k = rlx_strdup(key);
    if (!k || !grow((void **)&w->m, &w->cap_m, w->n_m, sizeof *w->m)) {
        free(k);
        free(v);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors writer: out of memory");
    }
    w->m[w->n_m++] = (wmeta){k, v};
    return RLX_OK;
}

rlx_status sft_writer_add(sft_writer *w, const char *name, sft_dtype dtype, int n_dims, const int64_t *dims,
                          const void *data, uint64_t size) {
    if (!w || !name || n_dims < 0 || (n_dims > 0 && !dims) || (size > 0 && !data))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_writer_add: NULL argument or negative rank");
    if ((unsigned)dtype >= SFT_DTYPE_COUNT)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "safetensors writer: tensor '%.100s': dtype %d is not a safetensors dtype",
                        name, (int)dtype);
    if (!name[0] || strcmp(name, "__metadata__") == 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "safetensors writer: '%s' cannot name a tensor", name);
    rlx_status st = check_utf8(name, "a tensor name");
    if (st) return st;
    for (size_t i = 0; i < w->n_t; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "safetensors writer: tensor '%.100s' was already added", name);
    uint64_t bytes;
    const char *why;
    if (!sft_tensor_bytes(dtype, n_dims, dims, &bytes, NULL, &why))
        return rlx_fail(RLX_STATUS_SHAPE, "safetensors writer: tensor '%.100s' of %s: %s", name, sft_dtype_name(dtype), why);
    if (bytes != size)
        return rlx_fail(RLX_STATUS_SHAPE, "safetensors writer: tensor '%.100s': its shape of %s is %llu bytes, not %llu",
                        name, sft_dtype_name(dtype), (unsigned long long)bytes, (unsigned long long)size);
    wtensor t = {.name = rlx_strdup(name), .dtype = dtype, .n_dims = n_dims, .data = data, .size = size};
    t.dims = malloc(n_dims ? (size_t)n_dims * sizeof *t.dims : 1);
    if (!t.name || !t.dims || !grow((void **)&w->t, &w->cap_t, w->n_t, sizeof *w->t)) {
        free(t.name);
        free(t.dims);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors writer: out of memory");
    }
    if (n_dims) memcpy(t.dims, dims, (size_t)n_dims * sizeof *t.dims);
    w->t[w->n_t++] = t;
    return RLX_OK;
}

/* ------------------------------------------------------------- the header */

typedef struct sbuf {
    char *p;
    size_t len, cap;
    bool oom;
} sbuf;

static char *reserve(sbuf *b, size_t n) {
    if (b->oom) return NULL;
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap : 256;
        while (nc < b->len + n) nc *= 2;
        char *q = realloc(b->p, nc);
        if (!q) {
            b->oom = true;
            return NULL;
        }
        b->p = q;
        b->cap = nc;
    }
    return b->p + b->len;
}

static void put(sbuf *b, const char *s) {
    size_t n = strlen(s);
    char *d = reserve(b, n);
    if (d) {
        memcpy(d, s, n);
        b->len += n;
    }
}

static void put_quoted(sbuf *b, const char *s) {
    size_t n = strlen(s), q = json_quoted_len(s, n);
    char *d = reserve(b, q);
    if (d) b->len = (size_t)(json_quote(d, s, n) - b->p);
}

static void put_u64(sbuf *b, uint64_t v) {
    char num[24];
    snprintf(num, sizeof num, "%llu", (unsigned long long)v);
    put(b, num);
}

/* Places the tensors (sets each offset), builds the padded header into b
 * and returns the data region's size in *data_size. order gets the layout. */
static rlx_status build_header(const sft_writer *w, sbuf *b, size_t *order, uint64_t *data_size) {
    static const unsigned bits[] = {64, 32, 16, 8, 6, 4};   /* every dtype's element size, decreasing */
    size_t k = 0;
    for (size_t s = 0; s < RLX_ARRAY_LEN(bits); s++)
        for (size_t i = 0; i < w->n_t; i++)
            if (sft_dtype_bits(w->t[i].dtype) == bits[s]) order[k++] = i;
    uint64_t at = 0;
    for (k = 0; k < w->n_t; k++) {
        wtensor *t = &w->t[order[k]];
        t->offset = at;
        at += t->size;
    }
    *data_size = at;
    put(b, "{");
    if (w->n_m) {
        put(b, "\"__metadata__\":{");
        for (size_t i = 0; i < w->n_m; i++) {
            if (i) put(b, ",");
            put_quoted(b, w->m[i].key);
            put(b, ":");
            put_quoted(b, w->m[i].value);
        }
        put(b, "}");
    }
    for (size_t i = 0; i < w->n_t; i++) {
        const wtensor *t = &w->t[i];
        if (i || w->n_m) put(b, ",");
        put_quoted(b, t->name);
        put(b, ":{\"dtype\":\"");
        put(b, sft_dtype_name(t->dtype));
        put(b, "\",\"shape\":[");
        for (int d = 0; d < t->n_dims; d++) {
            if (d) put(b, ",");
            put_u64(b, (uint64_t)t->dims[d]);
        }
        put(b, "],\"data_offsets\":[");
        put_u64(b, t->offset);
        put(b, ",");
        put_u64(b, t->offset + t->size);
        put(b, "]}");
    }
    put(b, "}");
    while (!b->oom && b->len % 8) put(b, " ");
    if (b->oom) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors writer: out of memory for the header");
    if (b->len > SFT_MAX_HEADER)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "safetensors writer: the header would be %zu bytes, above the %llu that readers accept",
                        b->len, (unsigned long long)SFT_MAX_HEADER);
    return RLX_OK;
}

static void le64(uint8_t out[8], uint64_t v) {
    for (int i = 0; i < 8; i++) out[i] = (uint8_t)(v >> (8 * i));
}

/* The header and layout, or a status; the caller frees b.p and *order. */
static rlx_status prepare(const sft_writer *w, sbuf *b, size_t **order, uint64_t *data_size) {
    *order = malloc((w->n_t ? w->n_t : 1) * sizeof **order);
    if (!*order) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors writer: out of memory");
    return build_header(w, b, *order, data_size);
}

rlx_status sft_write_memory(const sft_writer *w, void **out, size_t *size) {
    if (!w || !out || !size) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_write_memory: NULL argument");
    *out = NULL;
    *size = 0;
    sbuf b = {0};
    size_t *order = NULL;
    uint64_t data_size = 0;
    rlx_status st = prepare(w, &b, &order, &data_size);
    uint64_t total = 8 + (uint64_t)b.len + data_size;
    uint8_t *p = NULL;
    if (!st && (total > SIZE_MAX || !(p = malloc((size_t)total))))
        st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "safetensors writer: out of memory for %llu bytes", (unsigned long long)total);
    if (!st) {
        le64(p, b.len);
        memcpy(p + 8, b.p, b.len);
        for (size_t k = 0; k < w->n_t; k++) {
            const wtensor *t = &w->t[order[k]];
            if (t->size) memcpy(p + 8 + b.len + t->offset, t->data, (size_t)t->size);
        }
        *out = p;
        *size = (size_t)total;
    }
    free(b.p);
    free(order);
    return st;
}

rlx_status sft_write_file(const sft_writer *w, const char *path) {
    if (!w || !path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "sft_write_file: NULL argument");
    sbuf b = {0};
    size_t *order = NULL;
    uint64_t data_size = 0;
    rlx_status st = prepare(w, &b, &order, &data_size);
    rlx_file_out o;
    if (!st && (st = rlx_file_out_open(&o, path, "safetensors writer")) == RLX_OK) {
        uint8_t len[8];
        le64(len, b.len);
        bool ok = fwrite(len, 1, 8, o.fp) == 8 && fwrite(b.p, 1, b.len, o.fp) == b.len;
        for (size_t k = 0; ok && k < w->n_t; k++) {
            const wtensor *t = &w->t[order[k]];
            ok = !t->size || fwrite(t->data, 1, (size_t)t->size, o.fp) == t->size;
        }
        int e = ok ? 0 : errno;
        /* buffered bytes are written here, so a full disk often shows up only now */
        if (fclose(o.fp) != 0 && ok) {
            ok = false;
            e = errno;
        }
        if (!ok)
            st = rlx_fail(RLX_STATUS_IO, "safetensors writer: writing '%s' failed: %s", path, e ? strerror(e) : "short write");
        st = rlx_file_out_finish(&o, st, path, "safetensors writer");
    }
    free(b.p);
    free(order);
    return st;
}
