/*
 * npy.c — numpy's .npy files (format versions 1.0, 2.0 and 3.0), read into
 * and written from rlx_tensor: the inputs and outputs of `rlx run` and the
 * tests' exchange format with numpy.
 *
 * A file is: "\x93NUMPY", major, minor, the header length (u16 in 1.0, u32
 * in 2.0 and 3.0), then the header: a Python dict literal with exactly the
 * keys 'descr' (a dtype string such as '<f4'), 'fortran_order' (True or
 * False) and 'shape' (a tuple of ints), padded with spaces and a newline;
 * then the data. The reader parses that literal with a small tokenizer of its
 * own, bounds-checks every byte, byte-swaps big-endian data and transposes
 * Fortran-order data into rlx's row-major layout. The writer writes version
 * 1.0 (its dict always fits a 16-bit length), little-endian, C order, through a
 * temporary file renamed into place.
 */
#include "core/core.h"
#include "core/file_map.h"
#include "core/file_out.h"
#include <stdlib.h>
#include <string.h>

static const char MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

typedef struct npy_header {
    rlx_dtype dtype;
    bool      big_endian, fortran;
    int       rank;
    int64_t   dims[RLX_MAX_RANK];
} npy_header;

typedef struct cursor { const char *p, *end; } cursor;

static void skip_space(cursor *c) {
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

static bool eat(cursor *c, char ch) {
    skip_space(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A quoted string ('..' or ".."; no escapes: numpy writes none) into buf. */
static bool quoted(cursor *c, char *buf, size_t cap) {
    skip_space(c);
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
    char q = *c->p++;
    size_t n = 0;
    while (c->p < c->end && *c->p != q) {
        if (*c->p == '\\' || n + 1 >= cap) return false;
        buf[n++] = *c->p++;
    }
    if (c->p >= c->end) return false;
    c->p++;
    buf[n] = 0;
    return true;
}

static bool word(cursor *c, const char *w) {
    skip_space(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n)) return false;
    c->p += n;
    return true;
}

static rlx_status descr_dtype(const char *d, npy_header *h, const char *who) {
    if (strlen(d) != 3 || (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '='))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype '%s' is not a plain number type", who, d);
    h->big_endian = d[0] == '>';
    static const struct { const char *code; rlx_dtype dt; } map[] = {
        {"f4", RLX_F32}, {"f2", RLX_F16}, {"f8", RLX_F64}, {"i4", RLX_I32}, {"i8", RLX_I64},
        {"u1", RLX_U8}, {"b1", RLX_BOOL}, {"i1", RLX_I8},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(d + 1, map[i].code)) {
            h->dtype = map[i].dt;
            return RLX_OK;
        }
    return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype '%s' has no rlx dtype (f2 f4 f8 i1 i4 i8 u1 b1 are read)", who, d);
}

static rlx_status parse_header(const char *p, size_t n, npy_header *h, const char *who) {
    cursor c = {p, p + n};
    bool seen[3] = {false, false, false};
    if (!eat(&c, '{')) return rlx_fail(RLX_STATUS_FORMAT, "%s: the header is not a dict", who);
    for (;;) {
        if (eat(&c, '}')) break;
        char key[32], val[32];
        if (!quoted(&c, key, sizeof key) || !eat(&c, ':'))
            return rlx_fail(RLX_STATUS_FORMAT, "%s: malformed header key at byte %zu of the header", who, (size_t)(c.p - p));
        int k = !strcmp(key, "descr") ? 0 : !strcmp(key, "fortran_order") ? 1 : !strcmp(key, "shape") ? 2 : -1;
        if (k < 0 || seen[k]) return rlx_fail(RLX_STATUS_FORMAT, "%s: header key '%s' is unknown or repeated", who, key);
        seen[k] = true;
        if (k == 0) {
            if (!quoted(&c, val, sizeof val)) return rlx_fail(RLX_STATUS_FORMAT, "%s: 'descr' is not a string", who);
            rlx_status st = descr_dtype(val, h, who);
            if (st != RLX_OK) return st;
        } else if (k == 1) {
            if (word(&c, "True")) h->fortran = true;
            else if (word(&c, "False")) h->fortran = false;
            else return rlx_fail(RLX_STATUS_FORMAT, "%s: 'fortran_order' is not True or False", who);
        } else {
            if (!eat(&c, '(')) return rlx_fail(RLX_STATUS_FORMAT, "%s: 'shape' is not a tuple", who);
            h->rank = 0;
            for (;;) {
                if (eat(&c, ')')) break;
                skip_space(&c);
                int64_t v = 0;
                int digits = 0;
                while (c.p < c.end && *c.p >= '0' && *c.p <= '9') {
                    if (++digits > 18) return rlx_fail(RLX_STATUS_FORMAT, "%s: a dim of 'shape' is too large", who);
                    v = v * 10 + (*c.p++ - '0');
                }
                if (!digits) return rlx_fail(RLX_STATUS_FORMAT, "%s: 'shape' holds something other than dims", who);
                if (h->rank == RLX_MAX_RANK)
                    return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: more than %d dims", who, RLX_MAX_RANK);
                h->dims[h->rank++] = v;
                if (eat(&c, ')')) break;
                if (!eat(&c, ',')) return rlx_fail(RLX_STATUS_FORMAT, "%s: 'shape' is not a tuple of ints", who);
            }
        }
        if (eat(&c, '}')) break;
        if (!eat(&c, ',')) return rlx_fail(RLX_STATUS_FORMAT, "%s: header entries are not separated by commas", who);
    }
    skip_space(&c);
    if (c.p != c.end) return rlx_fail(RLX_STATUS_FORMAT, "%s: bytes after the header dict", who);
    if (!seen[0] || !seen[1] || !seen[2])
        return rlx_fail(RLX_STATUS_FORMAT, "%s: the header lacks 'descr', 'fortran_order' or 'shape'", who);
    return RLX_OK;
}

/* Row-major copy of Fortran-order src (dims h->dims, element size es). */
static void from_fortran(const uint8_t *src, uint8_t *dst, const npy_header *h, size_t es, size_t count) {
    int64_t idx[RLX_MAX_RANK] = {0};
    for (size_t o = 0; o < count; o++) {
        /* o enumerates row-major; the Fortran offset puts the first dim fastest */
        size_t f = 0, stride = 1;
        for (int d = 0; d < h->rank; d++) f += (size_t)idx[d] * stride, stride *= (size_t)h->dims[d];
        memcpy(dst + o * es, src + f * es, es);
        for (int d = h->rank - 1; d >= 0; d--) {
            if (++idx[d] < h->dims[d]) break;
            idx[d] = 0;
        }
    }
}

rlx_status rlx_npy_load_memory(const void *data, size_t n, rlx_tensor *out) {
    const char *who = "npy";
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_npy_load_memory: out is NULL");
    memset(out, 0, sizeof *out);
    if (!data && n) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_npy_load_memory: data is NULL");
    const uint8_t *b = data;
    if (n < 10 || memcmp(b, MAGIC, 6)) return rlx_fail(RLX_STATUS_FORMAT, "%s: not an NPY file (no \\x93NUMPY magic)", who);
    int major = b[6];
    size_t hl, off;
    if (major == 1) hl = (size_t)b[8] | (size_t)b[9] << 8, off = 10;
    else if (major == 2 || major == 3) {
        if (n < 12) return rlx_fail(RLX_STATUS_FORMAT, "%s: truncated header length", who);
        hl = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24, off = 12;
    } else {
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: format version %d.%d (1.0 to 3.0 are read)", who, major, b[7]);
    }
    if (hl > n - off) return rlx_fail(RLX_STATUS_FORMAT, "%s: the header (%zu bytes) runs past the end of the file", who, hl);
    npy_header h = {0};
    rlx_status st = parse_header((const char *)b + off, hl, &h, who);
    if (st != RLX_OK) return st;
    size_t es = rlx_dtype_size(h.dtype), count = 1;
    for (int d = 0; d < h.rank; d++) {
        if (h.dims[d] != 0 && count > SIZE_MAX / 16 / (size_t)h.dims[d])
            return rlx_fail(RLX_STATUS_FORMAT, "%s: the shape's size overflows", who);
        count *= (size_t)h.dims[d];
    }
    size_t bytes = count * es, at = off + hl;
    if (bytes != n - at)
        return rlx_fail(RLX_STATUS_FORMAT, "%s: the shape needs %zu data bytes, the file has %zu", who, bytes, n - at);
    uint8_t *buf = malloc(bytes ? bytes : 1);
    if (!buf) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", who, bytes);
    if (h.fortran && h.rank > 1) from_fortran(b + at, buf, &h, es, count);
    else memcpy(buf, b + at, bytes);
    if (h.big_endian && es > 1)
        for (size_t i = 0; i < count; i++)
            for (size_t j = 0; j < es / 2; j++) {
                uint8_t t = buf[i * es + j];
                buf[i * es + j] = buf[i * es + es - 1 - j];
                buf[i * es + es - 1 - j] = t;
            }
    if (h.dtype == RLX_BOOL)
        for (size_t i = 0; i < count; i++) buf[i] = buf[i] != 0;
    out->dtype = h.dtype, out->rank = h.rank, out->data = buf, out->bytes = bytes;
    memcpy(out->dims, h.dims, sizeof h.dims);
    return RLX_OK;
}

rlx_status rlx_npy_load(const char *path, rlx_tensor *out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_npy_load: out is NULL");
    memset(out, 0, sizeof *out);
    if (!path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_npy_load: path is NULL");
    rlx_file_map m;
    rlx_status st = rlx_file_map_open(&m, path, "rlx_npy_load");
    if (st != RLX_OK) return st;
    st = rlx_npy_load_memory(m.data, (size_t)m.size, out);
    rlx_file_map_close(&m);
    if (st != RLX_OK) {
        char msg[768];
        snprintf(msg, sizeof msg, "%s", rlx_last_error());
        return rlx_fail(st, "'%s': %s", path, msg);
    }
    return RLX_OK;
}

rlx_status rlx_npy_save(const char *path, const rlx_tensor *t) {
    const char *fn = "rlx_npy_save";
    if (!path || !t) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: path and tensor are required", fn);
    static const char *codes[RLX_DTYPE_COUNT] = {
        [RLX_F32] = "<f4", [RLX_F16] = "<f2", [RLX_F64] = "<f8", [RLX_I32] = "<i4", [RLX_I64] = "<i8",
        [RLX_U8] = "|u1", [RLX_BOOL] = "|b1", [RLX_I8] = "|i1",
    };
    if ((unsigned)t->dtype >= RLX_DTYPE_COUNT || !codes[t->dtype])
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no NPY type", fn, rlx_dtype_name(t->dtype));
    if (t->rank < 0 || t->rank > RLX_MAX_RANK) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: rank %d", fn, t->rank);
    size_t count = 1;
    char shape[RLX_MAX_RANK * 24 + 8];
    size_t sl = 0;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: dim %d is %lld", fn, d, (long long)t->dims[d]);
        count *= (size_t)t->dims[d];
        sl += (size_t)snprintf(shape + sl, sizeof shape - sl, "%lld%s", (long long)t->dims[d],
                               t->rank == 1 ? "," : d + 1 < t->rank ? ", " : "");
    }
    shape[sl] = 0;
    size_t bytes = count * rlx_dtype_size(t->dtype);
    if (t->bytes != bytes || (!t->data && bytes))
        return rlx_fail(RLX_STATUS_SHAPE, "%s: the tensor has %zu bytes, its shape needs %zu", fn, t->bytes, bytes);
    char dict[RLX_MAX_RANK * 24 + 128];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", codes[t->dtype], shape);
    /* magic + version + length + dict + padding + '\n', a multiple of 64 */
    size_t total = 10 + (size_t)dl + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hl = (size_t)dl + pad + 1;
    uint8_t pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (uint8_t)(hl & 0xff), (uint8_t)(hl >> 8)};
    rlx_file_out o;
    rlx_status st = rlx_file_out_open(&o, path, fn);
    if (st != RLX_OK) return st;
    bool ok = fwrite(pre, 1, 10, o.fp) == 10 && fwrite(dict, 1, (size_t)dl, o.fp) == (size_t)dl;
    for (size_t i = 0; ok && i < pad; i++) ok = fputc(' ', o.fp) != EOF;
    ok = ok && fputc('\n', o.fp) != EOF && (bytes == 0 || fwrite(t->data, 1, bytes, o.fp) == bytes);
    ok = fclose(o.fp) == 0 && ok;
    return rlx_file_out_finish(&o, ok ? RLX_OK : rlx_fail(RLX_STATUS_IO, "%s: writing '%s' failed", fn, path), path, fn);
}
