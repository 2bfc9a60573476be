/*
 * test_gguf.c — the GGUF reader and writer (src/io/gguf*.c).
 *
 *  - writer -> reader round trip of every metadata type, arrays, and tensors
 *    of several types and ranks, in memory and through a file, at two alignments;
 *  - copying a file's metadata and tensors reproduces it byte for byte;
 *  - a corpus of malformed files built byte by byte here (every truncation of
 *    a valid file, huge counts, bad lengths, offsets, types and dims): each is
 *    rejected with RLX_STATUS_FORMAT and a message that says what and where;
 *  - random byte mutations of a valid file never crash (ASan run: make sanitize);
 *  - arrays of arrays: read, copied byte for byte, depth capped at exactly
 *    GGUF_MAX_ARRAY_DEPTH levels;
 *  - tensors may not share bytes, tensors of no bytes may sit anywhere;
 *  - writer: lengths near SIZE_MAX fail instead of spinning; write errors
 *    (ENOSPC, EFBIG, no directory) report the real errno and remove only a
 *    regular file;
 *  - `rlx inspect` and `rlx quantize` through the CLI: valid, invalid and
 *    crafted files, and bad arguments.
 */
#include "harness.h"
#include "tiny_model.h"
#include "core/core.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------- byte builder */

typedef struct buf { uint8_t *p; size_t len, cap; } buf;

static void b_put(buf *b, const void *src, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
    }
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
}
static void b_u32(buf *b, uint32_t v) { b_put(b, &v, 4); }
static void b_u64(buf *b, uint64_t v) { b_put(b, &v, 8); }
static void b_str(buf *b, const char *s) { b_u64(b, strlen(s)); b_put(b, s, strlen(s)); }
static void b_hdr(buf *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    b_put(b, "GGUF", 4); b_u32(b, version); b_u64(b, n_tensors); b_u64(b, n_kv);
}
static void b_kv_u32(buf *b, const char *key, uint32_t v) { b_str(b, key); b_u32(b, GGUF_VT_U32); b_u32(b, v); }
static void b_tensor(buf *b, const char *name, uint32_t n_dims, const int64_t *dims, uint32_t type, uint64_t off) {
    b_str(b, name); b_u32(b, n_dims);
    for (uint32_t i = 0; i < n_dims; i++) b_u64(b, (uint64_t)dims[i]);
    b_u32(b, type); b_u64(b, off);
}
/* Pads to align, then appends n data bytes. */
static void b_data(buf *b, uint32_t align, size_t n) {
    while (b->len % align) b_put(b, "", 1);
    for (size_t i = 0; i < n; i++) { uint8_t v = (uint8_t)i; b_put(b, &v, 1); }
}

/* Parses from an exact-size heap copy so that ASan sees any over-read. */
static rlx_status open_copy(const void *data, size_t n, gguf_file **out) {
    void *copy = malloc(n ? n : 1);
    if (n) memcpy(copy, data, n);
    rlx_status st = gguf_open_memory(copy, n, out);
    if (st == RLX_OK) gguf_close(*out);   /* the copy dies below */
    *out = NULL;
    free(copy);
    return st;
}

/* Expects RLX_STATUS_FORMAT with a message containing each of the words. */
static bool expect_format(const char *what, const buf *b, const char *w1, const char *w2) {
    gguf_file *f;
    rlx_status st = open_copy(b->p, b->len, &f);
    const char *msg = rlx_last_error();
    if (st != RLX_STATUS_FORMAT || !msg[0] || (w1 && !strstr(msg, w1)) || (w2 && !strstr(msg, w2))) {
        harness_fail(__FILE__, __LINE__, "%s: got %s '%s', want FORMAT with '%s' '%s'", what, rlx_status_name(st), msg,
                     w1 ? w1 : "", w2 ? w2 : "");
        return false;
    }
    return true;
}

/* --------------------------------------------------------- valid files */

static const char *TOKENS[] = {"<s>", "</s>", "hello", "", "w\xc3\xb6rld"};

/* Builds a file with every metadata type and five tensors; tensor data
 * buffers are returned so that the caller can compare (and must free). */
static rlx_status build_file(uint32_t align, void **out, size_t *size, float **tdata) {
    gguf_writer *w = gguf_writer_new();
    if (!w) return RLX_STATUS_OUT_OF_MEMORY;
    rlx_status st = RLX_OK;
#define T(x) do { if (st == RLX_OK) st = (x); } while (0)
    T(gguf_set_str(w, "general.architecture", "llama"));
    T(gguf_set_u8(w, "t.u8", 200));
    T(gguf_set_i8(w, "t.i8", -100));
    T(gguf_set_u16(w, "t.u16", 60000));
    T(gguf_set_i16(w, "t.i16", -30000));
    T(gguf_set_u32(w, "t.u32", 4000000000u));
    T(gguf_set_i32(w, "t.i32", -2000000000));
    T(gguf_set_u64(w, "t.u64", 0xFFFFFFFFFFFFFFF0ull));
    T(gguf_set_i64(w, "t.i64", -5000000000ll));
    T(gguf_set_f32(w, "t.f32", 0.15625f));
    T(gguf_set_f64(w, "t.f64", -1.0 / 3.0));
    T(gguf_set_bool(w, "t.bool", true));
    T(gguf_set_str(w, "t.empty", ""));
    T(gguf_set_str_n(w, "t.nul", "a\0b", 3));
    if (align != GGUF_DEFAULT_ALIGNMENT) T(gguf_set_u32(w, "general.alignment", align));
    uint8_t u8s[3] = {1, 2, 255};
    int8_t i8s[3] = {-1, 0, 127};
    uint16_t u16s[2] = {1, 65535};
    int16_t i16s[2] = {-32768, 5};
    uint32_t u32s[3] = {7, 8, 9};
    int32_t i32s[4] = {1, 2, 3, -4};
    float f32s[3] = {0.5f, -1.25f, 3.0f};
    uint8_t bools[4] = {1, 0, 0, 1};
    uint64_t u64s[2] = {1, 0xFFFFFFFFFFFFFFFFull};
    int64_t i64s[2] = {INT64_MIN, INT64_MAX};
    double f64s[2] = {1e300, -2.5};
    T(gguf_set_arr(w, "a.u8", GGUF_VT_U8, u8s, 3));
    T(gguf_set_arr(w, "a.i8", GGUF_VT_I8, i8s, 3));
    T(gguf_set_arr(w, "a.u16", GGUF_VT_U16, u16s, 2));
    T(gguf_set_arr(w, "a.i16", GGUF_VT_I16, i16s, 2));
    T(gguf_set_arr(w, "a.u32", GGUF_VT_U32, u32s, 3));
    T(gguf_set_arr(w, "a.i32", GGUF_VT_I32, i32s, 4));
    T(gguf_set_arr(w, "a.f32", GGUF_VT_F32, f32s, 3));
    T(gguf_set_arr(w, "a.bool", GGUF_VT_BOOL, bools, 4));
    T(gguf_set_arr(w, "a.u64", GGUF_VT_U64, u64s, 2));
    T(gguf_set_arr(w, "a.i64", GGUF_VT_I64, i64s, 2));
    T(gguf_set_arr(w, "a.f64", GGUF_VT_F64, f64s, 2));
    T(gguf_set_arr(w, "a.empty", GGUF_VT_I32, NULL, 0));
    T(gguf_set_arr_str(w, "tokenizer.ggml.tokens", TOKENS, RLX_ARRAY_LEN(TOKENS)));
    T(gguf_set_u32(w, "t.replaced", 1));
    T(gguf_set_u32(w, "t.replaced", 2));   /* replaces in place */

    /* tensors: f32 [4,3], f16 [8], q4_0 [64,2], 3-D f32 [2,3,4], f32 [64,2], q4_K [256,2] */
    float *a = malloc(12 * 4), *c = malloc(24 * 4), *src = malloc(512 * 4);
    for (int i = 0; i < 12; i++) a[i] = (float)i - 5.5f;
    for (int i = 0; i < 24; i++) c[i] = (float)i * 0.25f;
    for (int i = 0; i < 512; i++) src[i] = sinf((float)i * 0.1f);
    uint16_t *h = malloc(8 * 2);
    for (int i = 0; i < 8; i++) h[i] = rlx_f32_to_f16((float)i);
    uint8_t *q40 = malloc(4 * 18), *q4k = malloc(2 * 144);
    quant_quantize_row(QTYPE_Q4_0, src, q40, 128);
    quant_quantize_row(QTYPE_Q4_K, src, q4k, 512);
    int64_t d_a[2] = {4, 3}, d_h[1] = {8}, d_q[2] = {64, 2}, d_c[3] = {2, 3, 4}, d_k[2] = {256, 2};
    T(gguf_add_tensor(w, "a.weight", QTYPE_F32, 2, d_a, a, 48));
    T(gguf_add_tensor(w, "h", QTYPE_F16, 1, d_h, h, 16));
    T(gguf_add_tensor(w, "blk.0.q", QTYPE_Q4_0, 2, d_q, q40, 72));
    T(gguf_add_tensor(w, "cube", QTYPE_F32, 3, d_c, c, 96));
    int64_t d_f[2] = {64, 2};
    T(gguf_add_tensor(w, "blk.0.ffn", QTYPE_F32, 2, d_f, src, 512));
    T(gguf_add_tensor(w, "blk.0.k", QTYPE_Q4_K, 2, d_k, q4k, 288));   /* 288 = 9 * 32: no trailing pad */
    if (st == RLX_OK) st = gguf_write_memory(w, out, size);
#undef T
    gguf_writer_free(w);
    free(a); free(c); free(h); free(q40); free(q4k);
    *tdata = src;
    return st;
}

static void check_contents(const gguf_file *f, uint32_t align, const float *src) {
    uint32_t u32; int64_t i64; float f32; bool bl; const char *s; size_t len;
    CHECK(gguf_version(f) == 3 && gguf_alignment(f) == align && gguf_data_offset(f) % align == 0);
    CHECK_OK(gguf_get_str(f, "general.architecture", &s));
    CHECK(strcmp(s, "llama") == 0);
    CHECK_OK(gguf_get_u32(f, "t.u8", &u32)); CHECK(u32 == 200);
    CHECK_OK(gguf_get_i64(f, "t.i8", &i64)); CHECK(i64 == -100);
    CHECK_OK(gguf_get_u32(f, "t.u16", &u32)); CHECK(u32 == 60000);
    CHECK_OK(gguf_get_i64(f, "t.i16", &i64)); CHECK(i64 == -30000);
    CHECK_OK(gguf_get_u32(f, "t.u32", &u32)); CHECK(u32 == 4000000000u);
    CHECK_OK(gguf_get_i64(f, "t.i32", &i64)); CHECK(i64 == -2000000000);
    CHECK_OK(gguf_get_i64(f, "t.i64", &i64)); CHECK(i64 == -5000000000ll);
    uint64_t u64;
    CHECK(gguf_kv_uint(f, gguf_find_key(f, "t.u64"), &u64) && u64 == 0xFFFFFFFFFFFFFFF0ull);
    CHECK_STATUS(gguf_get_i64(f, "t.u64", &i64), RLX_STATUS_FORMAT);    /* does not fit */
    CHECK_STATUS(gguf_get_u32(f, "t.i8", &u32), RLX_STATUS_FORMAT);     /* negative */
    CHECK_OK(gguf_get_f32(f, "t.f32", &f32)); CHECK(f32 == 0.15625f);
    double dv;
    CHECK(gguf_kv_float(f, gguf_find_key(f, "t.f64"), &dv) && dv == -1.0 / 3.0);
    CHECK_OK(gguf_get_bool(f, "t.bool", &bl)); CHECK(bl);
    CHECK_STATUS(gguf_get_bool(f, "t.u8", &bl), RLX_STATUS_FORMAT);
    CHECK_STATUS(gguf_get_str(f, "t.u8", &s), RLX_STATUS_FORMAT);
    CHECK_STATUS(gguf_get_u32(f, "no.such.key", &u32), RLX_STATUS_NOT_FOUND);
    CHECK_OK(gguf_get_str(f, "t.empty", &s)); CHECK(s[0] == 0);
    s = gguf_kv_str(f, gguf_find_key(f, "t.nul"), &len);
    CHECK(s && len == 3 && memcmp(s, "a\0b", 4) == 0);
    CHECK_OK(gguf_get_u32(f, "t.replaced", &u32)); CHECK(u32 == 2);

    struct { const char *key; gguf_vtype t; uint64_t n; double v0, vlast; } arrs[] = {
        {"a.u8", GGUF_VT_U8, 3, 1, 255},       {"a.i8", GGUF_VT_I8, 3, -1, 127},
        {"a.u16", GGUF_VT_U16, 2, 1, 65535},   {"a.i16", GGUF_VT_I16, 2, -32768, 5},
        {"a.u32", GGUF_VT_U32, 3, 7, 9},       {"a.i32", GGUF_VT_I32, 4, 1, -4},
        {"a.f32", GGUF_VT_F32, 3, 0.5, 3},     {"a.bool", GGUF_VT_BOOL, 4, 1, 1},
        {"a.u64", GGUF_VT_U64, 2, 1, 18446744073709551615.0}, {"a.i64", GGUF_VT_I64, 2, -9223372036854775808.0, 9223372036854775807.0},
        {"a.f64", GGUF_VT_F64, 2, 1e300, -2.5}, {"a.empty", GGUF_VT_I32, 0, 0, 0},
    };
    for (size_t i = 0; i < RLX_ARRAY_LEN(arrs); i++) {
        int64_t kv; uint64_t n;
        CHECK_OK(gguf_get_arr(f, arrs[i].key, arrs[i].t, &kv, &n));
        CHECK_MSG(n == arrs[i].n && gguf_kv_type(f, kv) == GGUF_VT_ARRAY && gguf_kv_arr_type(f, kv) == arrs[i].t, "%s", arrs[i].key);
        if (n == 0) continue;
        double v0 = 0, vl = 0;
        if (arrs[i].t == GGUF_VT_BOOL) {
            int64_t a0, al;
            CHECK(gguf_kv_arr_int(f, kv, 0, &a0) && gguf_kv_arr_int(f, kv, n - 1, &al));
            v0 = (double)a0; vl = (double)al;
        } else {
            CHECK_MSG(gguf_kv_arr_float(f, kv, 0, &v0) && gguf_kv_arr_float(f, kv, n - 1, &vl), "%s", arrs[i].key);
        }
        CHECK_MSG(v0 == arrs[i].v0 && vl == arrs[i].vlast, "%s: %g %g", arrs[i].key, v0, vl);
        CHECK(!gguf_kv_arr_float(f, kv, n, &v0));   /* past the end */
    }
    int32_t i32s[4];
    int64_t kv;
    CHECK_OK(gguf_get_arr(f, "a.i32", GGUF_VT_I32, &kv, NULL));
    memcpy(i32s, gguf_kv_arr_data(f, kv), sizeof i32s);
    CHECK(i32s[3] == -4);
    CHECK_STATUS(gguf_get_arr(f, "a.i32", GGUF_VT_F32, &kv, NULL), RLX_STATUS_FORMAT);
    CHECK_STATUS(gguf_get_arr(f, "t.u8", GGUF_VT_COUNT, &kv, NULL), RLX_STATUS_FORMAT);
    uint64_t n;
    CHECK_OK(gguf_get_arr(f, "tokenizer.ggml.tokens", GGUF_VT_STRING, &kv, &n));
    CHECK(n == RLX_ARRAY_LEN(TOKENS));
    for (uint64_t i = 0; i < n; i++) {
        s = gguf_kv_arr_str(f, kv, i, &len);
        CHECK_MSG(s && len == strlen(TOKENS[i]) && strcmp(s, TOKENS[i]) == 0, "token %llu", (unsigned long long)i);
    }
    CHECK(gguf_kv_arr_str(f, kv, n, &len) == NULL);
    CHECK(strcmp(gguf_kv_key(f, 0), "general.architecture") == 0);

    /* tensors */
    CHECK(gguf_tensor_count(f) == 6);
    const gguf_tensor *t = gguf_find_tensor(f, "a.weight");
    CHECK(t && t->type == QTYPE_F32 && t->n_dims == 2 && t->dims[0] == 4 && t->dims[1] == 3 && t->dims[2] == 1);
    CHECK(t->n_elements == 12 && t->size == 48 && t->offset == 0);
    float x[512];
    memcpy(x, t->data, 48);
    CHECK(x[0] == -5.5f && x[11] == 5.5f);
    t = gguf_find_tensor(f, "h");
    CHECK(t && t->type == QTYPE_F16 && t->size == 16 && t->offset % align == 0);
    CHECK_OK(quant_dequantize_row(t->type, t->data, x, 8));
    CHECK(x[7] == 7.0f);
    t = gguf_find_tensor(f, "cube");
    CHECK(t && t->n_dims == 3 && t->dims[2] == 4 && t->n_elements == 24);
    memcpy(x, t->data, 96);
    CHECK(x[23] == 5.75f);
    t = gguf_find_tensor(f, "blk.0.k");
    CHECK(t && t->type == QTYPE_Q4_K && t->size == 288 && t->offset % align == 0);
    CHECK(((const uint8_t *)t->data - (const uint8_t *)gguf_tensor_at(f, 0)->data) % align == 0);
    CHECK_OK(quant_dequantize_row(t->type, t->data, x, 512));
    double e = 0, s2 = 0;
    for (int i = 0; i < 512; i++) { e += (x[i] - src[i]) * (x[i] - src[i]); s2 += src[i] * src[i]; }
    CHECK(sqrt(e / s2) < 0.1);
    CHECK(gguf_find_tensor(f, "nope") == NULL && gguf_tensor_at(f, 6) == NULL && gguf_tensor_at(f, -1) == NULL);
    /* the last tensor ends the file at alignment 32 (288 = 9 * 32); at 64 it is padded */
    const uint8_t *end = (const uint8_t *)gguf_tensor_at(f, 0)->data + (gguf_file_size(f) - gguf_data_offset(f));
    const uint8_t *last_end = (const uint8_t *)gguf_tensor_at(f, 5)->data + 288;
    CHECK(align == 32 ? last_end == end : last_end < end);
}

TEST(gguf_roundtrip_memory_and_file) {
    const uint32_t aligns[] = {32, 64};
    for (size_t k = 0; k < 2; k++) {
        void *bytes; size_t size; float *src;
        CHECK_OK(build_file(aligns[k], &bytes, &size, &src));
        const char *seeds = getenv("RLX_FUZZ_SEEDS");   /* seed corpus for tests/fuzz/fuzz_gguf.c */
        if (seeds && *seeds) {
            char sp[512];
            snprintf(sp, sizeof sp, "%s/valid_align%u.gguf", seeds, aligns[k]);
            FILE *fp = fopen(sp, "wb");
            if (fp) { fwrite(bytes, 1, size, fp); fclose(fp); }
        }
        gguf_file *f;
        CHECK_OK(gguf_open_memory(bytes, size, &f));
        check_contents(f, aligns[k], src);
        gguf_close(f);
        if (harness_failed()) return;

        char path[] = "/tmp/rlx_gguf_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        CHECK((size_t)write(fd, bytes, size) == size);
        close(fd);
        CHECK_OK(gguf_open(path, &f));
        check_contents(f, aligns[k], src);

        /* copy every KV and tensor into a new writer: same bytes */
        gguf_writer *w = gguf_writer_new();
        for (int64_t i = 0; i < gguf_kv_count(f); i++) CHECK_OK(gguf_set_from(w, f, i));
        for (int64_t i = 0; i < gguf_tensor_count(f); i++) {
            const gguf_tensor *t = gguf_tensor_at(f, i);
            CHECK_OK(gguf_add_tensor(w, t->name, t->type, t->n_dims, t->dims, t->data, t->size));
        }
        CHECK(gguf_writer_has_key(w, "t.u8") && !gguf_writer_has_key(w, "t.zz"));
        char path2[64];   /* not path: its mapping backs the borrowed tensor data */
        snprintf(path2, sizeof path2, "%s.copy", path);
        CHECK_OK(gguf_write_file(w, path2));
        gguf_writer_free(w);
        gguf_close(f);
        unlink(path);
        void *again;
        size_t got;
        CHECK(test_read_file(path2, &again, &got));
        unlink(path2);
        CHECK_MSG(again && got == size && memcmp(again, bytes, size) == 0, "copy differs (%zu vs %zu bytes)", got, size);
        free(again);
        free(bytes);
        free(src);
    }
    gguf_file *f;
    CHECK_STATUS(gguf_open("/nonexistent/x.gguf", &f), RLX_STATUS_IO);
    CHECK_STATUS(gguf_open("/tmp", &f), RLX_STATUS_IO);
}

TEST(gguf_v2_and_empty) {
    /* v2 has the same layout as v3; a file may have no metadata and no tensors */
    buf b = {0};
    b_hdr(&b, 2, 0, 1);
    b_kv_u32(&b, "x", 5);
    gguf_file *f;
    CHECK_OK(gguf_open_memory(b.p, b.len, &f));
    CHECK(gguf_version(f) == 2 && gguf_kv_count(f) == 1 && gguf_tensor_count(f) == 0);
    gguf_close(f);
    b.len = 0;
    b_hdr(&b, 3, 0, 0);
    CHECK_OK(gguf_open_memory(b.p, b.len, &f));
    gguf_close(f);
    /* a long value after its key grows the string arena: the key must not be
     * read through a pointer into the arena before it grew (ASan checks this) */
    b.len = 0;
    b_hdr(&b, 3, 0, 2);
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    b_str(&b, "general.alignment"); b_u32(&b, GGUF_VT_U32); b_u32(&b, 64);
    b_str(&b, "k"); b_u32(&b, GGUF_VT_STRING); b_str(&b, big);
    CHECK_OK(gguf_open_memory(b.p, b.len, &f));
    const char *s;
    CHECK_OK(gguf_get_str(f, "k", &s));
    CHECK(strlen(s) == sizeof big - 1 && gguf_alignment(f) == 64);
    gguf_close(f);
    free(b.p);
}

TEST(gguf_writer_rejects_bad_input) {
    gguf_writer *w = gguf_writer_new();
    float x[64] = {0};
    int64_t d1[1] = {16}, d2[2] = {64, 1}, d5[5] = {1, 1, 1, 1, 1}, dn[1] = {-1};
    CHECK_STATUS(gguf_add_tensor(w, "q", QTYPE_Q4_0, 1, d1, x, 9), RLX_STATUS_INVALID_ARGUMENT);  /* 16 % 32 */
    CHECK_STATUS(gguf_add_tensor(w, "q", QTYPE_F32, 2, d2, x, 100), RLX_STATUS_INVALID_ARGUMENT); /* size */
    CHECK_STATUS(gguf_add_tensor(w, "q", QTYPE_F32, 5, d5, x, 4), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(gguf_add_tensor(w, "q", QTYPE_F32, 1, dn, x, 0), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(gguf_add_tensor(w, "q", 4, 1, d1, x, 64), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(gguf_add_tensor(w, "q", QTYPE_F32, 2, d2, x, 256));
    CHECK_STATUS(gguf_add_tensor(w, "q", QTYPE_F32, 2, d2, x, 256), RLX_STATUS_INVALID_ARGUMENT); /* twice */
    uint8_t bad_bool = 2;
    CHECK_STATUS(gguf_set_arr(w, "b", GGUF_VT_BOOL, &bad_bool, 1), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(gguf_set_arr(w, "s", GGUF_VT_STRING, x, 1), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(gguf_set_u32(w, "", 1), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(gguf_set_u32(w, "general.alignment", 48));
    void *out; size_t size;
    CHECK_STATUS(gguf_write_memory(w, &out, &size), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(gguf_set_u32(w, "general.alignment", 16));
    CHECK_OK(gguf_write_memory(w, &out, &size));
    gguf_file *f;
    CHECK_OK(gguf_open_memory(out, size, &f));
    CHECK(gguf_alignment(f) == 16 && gguf_data_offset(f) % 16 == 0);
    gguf_close(f);
    free(out);
    gguf_writer_free(w);
}

/* ------------------------------------------------------ malformed corpus */

TEST(gguf_rejects_every_truncation) {
    void *bytes; size_t size; float *src;
    CHECK_OK(build_file(32, &bytes, &size, &src));
    for (size_t len = 0; len < size; len++) {
        gguf_file *f;
        rlx_status st = open_copy(bytes, len, &f);
        CHECK_MSG(st == RLX_STATUS_FORMAT && rlx_last_error()[0], "prefix of %zu/%zu bytes: %s '%s'", len, size,
                  rlx_status_name(st), rlx_last_error());
    }
    gguf_file *f;
    CHECK_OK(open_copy(bytes, size, &f));
    free(bytes);
    free(src);
}

TEST(gguf_rejects_malformed_corpus) {
    buf b = {0};
    const int64_t d1[1] = {32};
#define CASE(what, w1, w2, ...) do { b.len = 0; __VA_ARGS__; if (!expect_format(what, &b, w1, w2)) goto done; } while (0)
    CASE("empty", "too short", NULL, (void)0);
    CASE("magic", "not a GGUF file", NULL, b_put(&b, "GGML", 4); b_u32(&b, 3); b_u64(&b, 0); b_u64(&b, 0));
    CASE("version 1", "version 1", NULL, b_hdr(&b, 1, 0, 0));
    CASE("version 4", "version 4", "byte 4", b_hdr(&b, 4, 0, 0));
    CASE("big-endian", "big-endian", NULL, b_hdr(&b, 0x03000000u, 0, 0));
    CASE("header cut", "tensor count", NULL, b_put(&b, "GGUF", 4); b_u32(&b, 3); b_u32(&b, 0));
    CASE("huge kv count", "cannot fit", NULL, b_hdr(&b, 3, 0, 1ull << 60));
    CASE("huge tensor count", "cannot fit", NULL, b_hdr(&b, 3, 1ull << 60, 0));
    CASE("max counts", "cannot fit", NULL, b_hdr(&b, 3, UINT64_MAX, UINT64_MAX));
    CASE("huge key length", "key length", "key 0", b_hdr(&b, 3, 0, 1); b_u64(&b, 1ull << 60); b_put(&b, "abcdefghijklm", 13));
    CASE("max key length", "key length", NULL, b_hdr(&b, 3, 0, 1); b_u64(&b, UINT64_MAX); b_put(&b, "abcdefghijklm", 13));
    CASE("key with NUL", "NUL", NULL, b_hdr(&b, 3, 0, 1); b_u64(&b, 3); b_put(&b, "a\0b", 3); b_u32(&b, GGUF_VT_U8); b_put(&b, "x", 1));
    CASE("unknown value type", "unknown value type 13", "'k'", b_hdr(&b, 3, 0, 1); b_str(&b, "k"); b_u32(&b, 13); b_u32(&b, 0));
    CASE("huge string value", "string value length", "'k'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "k"); b_u32(&b, GGUF_VT_STRING); b_u64(&b, 1ull << 62); b_put(&b, "xx", 2));
    CASE("value cut", "truncated", "'k'", b_hdr(&b, 3, 0, 1); b_str(&b, "k"); b_u32(&b, GGUF_VT_U64); b_u32(&b, 0));
    CASE("bool 2", "bool value is 2", NULL, b_hdr(&b, 3, 0, 1); b_str(&b, "k"); b_u32(&b, GGUF_VT_BOOL); b_put(&b, "\2", 1));
    CASE("huge u32 array", "cannot fit", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_U32); b_u64(&b, 1ull << 62); b_u64(&b, 0));
    CASE("overflowing f64 array", "cannot fit", NULL,
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_F64); b_u64(&b, UINT64_MAX / 4); b_u64(&b, 0));
    CASE("huge string array", "cannot fit", NULL,
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_STRING); b_u64(&b, 1ull << 60); b_u64(&b, 0));
    CASE("bad string in array", "string 1 length", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_STRING); b_u64(&b, 2);
         b_str(&b, "ok"); b_u64(&b, 1000); b_put(&b, "short", 5));
    /* arrays of arrays: each level is checked like the top one, and depth is capped */
    CASE("nested array cut", "cannot fit", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_ARRAY); b_u64(&b, 1); b_u64(&b, 0));
    CASE("nested too deep", "nested deeper than", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY);
         for (int i = 0; i < 1000; i++) { b_u32(&b, GGUF_VT_ARRAY); b_u64(&b, 1); }
         b_u32(&b, GGUF_VT_U8); b_u64(&b, 0));
    CASE("huge array of arrays", "cannot fit", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_ARRAY); b_u64(&b, 1ull << 60);
         b_u32(&b, GGUF_VT_U8); b_u64(&b, 0));
    CASE("nested unknown type", "unknown array element type 99", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_ARRAY); b_u64(&b, 1);
         b_u32(&b, 99); b_u64(&b, 0));
    CASE("nested huge count", "cannot fit", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_ARRAY); b_u64(&b, 1);
         b_u32(&b, GGUF_VT_U32); b_u64(&b, 1ull << 62); b_u64(&b, 0));
    CASE("nested string length", "length", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_ARRAY); b_u64(&b, 1);
         b_u32(&b, GGUF_VT_STRING); b_u64(&b, 1); b_u64(&b, UINT64_MAX - 4); b_put(&b, "abcd", 4));
    CASE("nested bool 3", "bool element 0", "'arr'",
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_ARRAY); b_u64(&b, 1);
         b_u32(&b, GGUF_VT_BOOL); b_u64(&b, 1); b_put(&b, "\3", 1));
    CASE("bad array type", "unknown array element type", NULL,
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, 77); b_u64(&b, 1); b_u64(&b, 0));
    CASE("bool array 7", "bool element 1", NULL,
         b_hdr(&b, 3, 0, 1); b_str(&b, "arr"); b_u32(&b, GGUF_VT_ARRAY); b_u32(&b, GGUF_VT_BOOL); b_u64(&b, 2); b_put(&b, "\1\7", 2));
    CASE("duplicate key", "appears twice", "'k'", b_hdr(&b, 3, 0, 2); b_kv_u32(&b, "k", 1); b_kv_u32(&b, "k", 2));
    CASE("alignment 0", "not a power of two", NULL, b_hdr(&b, 3, 0, 1); b_kv_u32(&b, "general.alignment", 0));
    CASE("alignment 48", "not a power of two", NULL, b_hdr(&b, 3, 0, 1); b_kv_u32(&b, "general.alignment", 48));
    CASE("alignment u8", "must be u32", NULL,
         b_hdr(&b, 3, 0, 1); b_str(&b, "general.alignment"); b_u32(&b, GGUF_VT_U8); b_put(&b, "\x20", 1));
    /* tensor infos */
    CASE("n_dims 5", "n_dims 5", "tensor 0 'w'", int64_t d[5] = {32, 1, 1, 1, 1};
         b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 5, d, QTYPE_F32, 0); b_data(&b, 32, 128));
    CASE("negative dim", "negative", "'w'", int64_t d[2] = {32, -1};
         b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 2, d, QTYPE_F32, 0); b_data(&b, 32, 128));
    CASE("element overflow", "overflows", "'w'", int64_t d[3] = {1ll << 40, 1ll << 40, 1};
         b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 3, d, QTYPE_F32, 0); b_data(&b, 32, 128));
    CASE("byte size overflow", "byte size overflows", "'w'", int64_t d[2] = {1ll << 32, 1ll << 30};
         b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 2, d, QTYPE_F32, 0); b_data(&b, 32, 128));
    CASE("unknown type", "unknown ggml type 5", "'w'", b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d1, 5, 0); b_data(&b, 32, 128));
    CASE("type 1000", "unknown ggml type 1000", NULL, b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d1, 1000, 0); b_data(&b, 32, 128));
    CASE("row not multiple of block", "not a multiple of the q4_0 block size", "'w'", int64_t d[1] = {48};
         b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d, QTYPE_Q4_0, 0); b_data(&b, 32, 64));
    CASE("misaligned offset", "not a multiple of the alignment", "'w'",
         b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 4); b_data(&b, 32, 256));
    CASE("data out of range", "outside", "'w'", b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 0); b_data(&b, 32, 100));
    CASE("offset past end", "outside", "'w'", b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 1024); b_data(&b, 32, 128));
    CASE("offset wraps", "outside", "'w'",
         b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, UINT64_MAX - 31); b_data(&b, 32, 128));
    CASE("data section past end", "data section", NULL, b_hdr(&b, 3, 1, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 0));
    CASE("duplicate tensor", "appears twice", "'w'",
         b_hdr(&b, 3, 2, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 128); b_data(&b, 32, 256));
    CASE("tensor name length", "tensor name length", "tensor 0",
         b_hdr(&b, 3, 1, 0); b_u64(&b, 1ull << 50); b_put(&b, "w\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 26));
    CASE("overlapping tensors", "overlaps", "'w'",
         b_hdr(&b, 3, 2, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 0); b_tensor(&b, "v", 1, d1, QTYPE_F32, 96); b_data(&b, 32, 256));
    CASE("second tensor bad", "tensor 1 'v'", "outside",
         b_hdr(&b, 3, 2, 0); b_tensor(&b, "w", 1, d1, QTYPE_F32, 0); b_tensor(&b, "v", 1, d1, QTYPE_F32, 128); b_data(&b, 32, 128));
    /* the alignment from metadata governs offsets */
    CASE("offset vs alignment 64", "alignment 64", NULL,
         b_hdr(&b, 3, 1, 1); b_kv_u32(&b, "general.alignment", 64); b_tensor(&b, "w", 1, d1, QTYPE_F32, 32); b_data(&b, 64, 256));
#undef CASE
done:
    free(b.p);
}

/* Flipped bytes of a valid file: OK or FORMAT, never a crash; when it parses,
 * everything it describes is readable (ASan checks the bounds). */
TEST(gguf_random_mutations) {
    void *bytes; size_t size; float *src;
    CHECK_OK(build_file(32, &bytes, &size, &src));
    uint8_t *m = malloc(size);
    float *tmp = malloc(1 << 20);
    int parsed = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(m, bytes, size);
        int flips = 1 + (int)test_rand_int(0, 3);
        for (int k = 0; k < flips; k++) {
            size_t at = (size_t)test_rand_int(0, (int64_t)size - 1);
            m[at] = it % 3 == 0 ? (uint8_t)test_rand_u64() : (uint8_t)(m[at] ^ (1u << test_rand_int(0, 7)));
        }
        gguf_file *f;
        rlx_status st = gguf_open_memory(m, size, &f);
        CHECK_MSG(st == RLX_OK || (st == RLX_STATUS_FORMAT && rlx_last_error()[0]), "iteration %d: %s", it, rlx_status_name(st));
        if (st) continue;
        parsed++;
        for (int64_t i = 0; i < gguf_kv_count(f); i++) {
            size_t len;
            double dv;
            int64_t iv;
            (void)gguf_kv_float(f, i, &dv);
            (void)gguf_kv_int(f, i, &iv);
            (void)gguf_kv_str(f, i, &len);
            for (uint64_t j = 0; j < gguf_kv_arr_len(f, i); j++) {
                (void)gguf_kv_arr_float(f, i, j, &dv);
                (void)gguf_kv_arr_str(f, i, j, &len);
            }
        }
        for (int64_t i = 0; i < gguf_tensor_count(f); i++) {
            const gguf_tensor *t = gguf_tensor_at(f, i);
            const qtype_info *q = qtype_get(t->type);
            CHECK(q && (const uint8_t *)t->data + t->size <= m + size);
            if (q->to_f32 && t->n_elements * 4 <= (1 << 20)) CHECK_OK(quant_dequantize_row(t->type, t->data, tmp, t->n_elements));
        }
        gguf_close(f);
    }
    CHECK(parsed > 100);   /* mutations in tensor data keep the file valid */
    free(m); free(tmp); free(bytes); free(src);
}

/* Arrays of arrays (the format allows any nesting): three elements, a u32[2],
 * a string[2] and an array[1] holding an i8[1]. */
static void b_nested(buf *b) {
    b_str(b, "nest"); b_u32(b, GGUF_VT_ARRAY); b_u32(b, GGUF_VT_ARRAY); b_u64(b, 3);
    b_u32(b, GGUF_VT_U32); b_u64(b, 2); b_u32(b, 1); b_u32(b, 2);
    b_u32(b, GGUF_VT_STRING); b_u64(b, 2); b_str(b, "ab"); b_str(b, "");
    b_u32(b, GGUF_VT_ARRAY); b_u64(b, 1); b_u32(b, GGUF_VT_I8); b_u64(b, 1); b_put(b, "\xfd", 1);
}

static void b_nested_file(buf *b) {
    const int64_t d1[1] = {8};
    b_hdr(b, 3, 1, 4);
    b_kv_u32(b, "before", 7);
    b_nested(b);
    b_kv_u32(b, "after", 9);
    uint32_t snan = 0x7f800001u;   /* a signalling NaN: copies must keep its bits */
    b_str(b, "nan"); b_u32(b, GGUF_VT_F32); b_u32(b, snan);
    b_tensor(b, "w", 1, d1, QTYPE_F32, 0);
    b_data(b, 32, 32);
}

TEST(gguf_nested_arrays) {
    buf b = {0};
    b_nested_file(&b);
    gguf_file *f;
    CHECK_OK(gguf_open_memory(b.p, b.len, &f));
    if (harness_failed()) { free(b.p); return; }
    int64_t kv = gguf_find_key(f, "nest"), iv;
    size_t len;
    CHECK(gguf_kv_type(f, kv) == GGUF_VT_ARRAY && gguf_kv_arr_type(f, kv) == GGUF_VT_ARRAY && gguf_kv_arr_len(f, kv) == 3);
    /* element getters decline; the serialized value is available raw */
    CHECK(!gguf_kv_arr_int(f, kv, 0, &iv) && !gguf_kv_arr_str(f, kv, 0, &len) && !gguf_kv_arr_data(f, kv));
    uint64_t nb = 0;
    const uint8_t *raw = gguf_kv_raw(f, kv, &nb);
    const size_t value_at = 24 + (8 + 6 + 4 + 4) + (8 + 4) + 4;   /* header, "before", key "nest", type */
    CHECK(raw && nb == 4 + 8 + (12 + 8) + (12 + 10 + 8) + (12 + 12 + 1) && memcmp(raw, b.p + value_at, nb) == 0);
    raw = gguf_kv_raw(f, gguf_find_key(f, "before"), &nb);
    CHECK(raw && nb == 4 && raw[0] == 7);
    CHECK(gguf_kv_raw(f, gguf_kv_count(f), &nb) == NULL);
    uint32_t u;
    CHECK_OK(gguf_get_u32(f, "after", &u));
    CHECK(u == 9 && gguf_tensor_count(f) == 1);

    /* copying every entry through the writer reproduces the file byte for byte */
    gguf_writer *w = gguf_writer_new();
    for (int64_t i = 0; i < gguf_kv_count(f); i++) CHECK_OK(gguf_set_from(w, f, i));
    const gguf_tensor *t = gguf_tensor_at(f, 0);
    CHECK_OK(gguf_add_tensor(w, t->name, t->type, t->n_dims, t->dims, t->data, t->size));
    void *out = NULL;
    size_t size = 0;
    CHECK_OK(gguf_write_memory(w, &out, &size));
    CHECK_MSG(size == b.len && memcmp(out, b.p, size) == 0, "copy differs (%zu vs %zu bytes)", size, b.len);
    free(out);
    gguf_writer_free(w);
    gguf_close(f);

    /* every truncation is a format error; byte flips never crash */
    for (size_t n = 0; n < b.len; n++) {
        rlx_status st = open_copy(b.p, n, &f);
        CHECK_MSG(st == RLX_STATUS_FORMAT && rlx_last_error()[0], "prefix of %zu/%zu bytes: %s", n, b.len, rlx_status_name(st));
    }
    uint8_t *m = malloc(b.len);
    for (int it = 0; it < 2000; it++) {
        memcpy(m, b.p, b.len);
        m[test_rand_int(0, (int64_t)b.len - 1)] = (uint8_t)test_rand_u64();
        rlx_status st = gguf_open_memory(m, b.len, &f);
        CHECK(st == RLX_OK || st == RLX_STATUS_FORMAT);
        if (st) continue;
        for (int64_t i = 0; i < gguf_kv_count(f); i++) {
            raw = gguf_kv_raw(f, i, &nb);
            CHECK(raw && raw >= m && raw + nb <= m + b.len);
        }
        gguf_close(f);
    }
    free(m);
    free(b.p);
}

/* A file whose one key, "deep", is `levels` nested arrays: each holds the
 * next as its one element, and the innermost holds `inner`: a u8[1], or with
 * GGUF_VT_ARRAY no element at all (an empty array of arrays, so no array
 * below it). Returns the offset of the value (after its type tag) and sets
 * its length. */
static size_t b_deep_file(buf *b, int levels, gguf_vtype inner, size_t *value_len) {
    b_hdr(b, 3, 0, 1);
    b_str(b, "deep");
    b_u32(b, GGUF_VT_ARRAY);
    size_t value_at = b->len;
    for (int i = 1; i < levels; i++) { b_u32(b, GGUF_VT_ARRAY); b_u64(b, 1); }
    b_u32(b, inner);
    if (inner == GGUF_VT_ARRAY) b_u64(b, 0);
    else { b_u64(b, 1); b_put(b, "\x2a", 1); }
    *value_len = b->len - value_at;
    b_data(b, GGUF_DEFAULT_ALIGNMENT, 0);   /* the empty data section, aligned as the writer writes it */
    return value_at;
}

/* The nesting cap, exactly. How gguf.c counts (skip_elems' depth): the
 * metadata value is level 1, an array inside a level-d array is level d + 1,
 * and a level-d array that holds arrays is refused when d >=
 * GGUF_MAX_ARRAY_DEPTH; a count of 0 holds none, so it passes whatever its
 * element type. So a value of GGUF_MAX_ARRAY_DEPTH (16) nested arrays is
 * read, also when the innermost is an empty array of arrays, and its bytes
 * come back through gguf_kv_raw and gguf_set_from unchanged; one array more
 * (17 levels) is a FORMAT error at the 17th array's type tag. */
TEST(gguf_nested_array_depth_limit) {
    buf b = {0};
    const gguf_vtype inner[2] = {GGUF_VT_U8, GGUF_VT_ARRAY};
    for (int i = 0; i < 2; i++) {
        b.len = 0;
        size_t value_len, value_at = b_deep_file(&b, GGUF_MAX_ARRAY_DEPTH, inner[i], &value_len);
        gguf_file *f = NULL, *g = NULL;
        void *out = NULL;
        size_t size = 0;
        uint64_t nb = 0, nb2 = 0;
        rlx_status st = gguf_open_memory(b.p, b.len, &f);
        const char *why = st != RLX_OK ? rlx_last_error() : "";
        int64_t kv = st == RLX_OK ? gguf_find_key(f, "deep") : -1;
        const uint8_t *raw = kv >= 0 ? gguf_kv_raw(f, kv, &nb) : NULL;
        bool raw_ok = raw && nb == value_len && memcmp(raw, b.p + value_at, nb) == 0 &&
                      gguf_kv_arr_type(f, kv) == GGUF_VT_ARRAY && gguf_kv_arr_len(f, kv) == 1;
        /* through the writer and back */
        gguf_writer *w = raw ? gguf_writer_new() : NULL;
        rlx_status wst = w ? gguf_set_from(w, f, kv) : RLX_STATUS_INTERNAL;
        if (wst == RLX_OK) wst = gguf_write_memory(w, &out, &size);
        if (wst == RLX_OK) wst = gguf_open_memory(out, size, &g);
        const uint8_t *raw2 = wst == RLX_OK ? gguf_kv_raw(g, gguf_find_key(g, "deep"), &nb2) : NULL;
        bool copy_ok = raw2 && nb2 == nb && memcmp(raw2, raw, nb) == 0;
        bool same_file = out && size == b.len && memcmp(out, b.p, size) == 0;
        gguf_close(g);
        free(out);
        gguf_writer_free(w);
        gguf_close(f);
        if (st != RLX_OK) free(b.p);
        CHECK_MSG(st == RLX_OK, "%d levels (innermost %s): %s '%s'", GGUF_MAX_ARRAY_DEPTH, gguf_vtype_name(inner[i]),
                  rlx_status_name(st), why);
        if (!raw_ok || !copy_ok || !same_file) free(b.p);
        CHECK_MSG(raw_ok, "innermost %s: gguf_kv_raw gave %llu bytes, not the value's %zu", gguf_vtype_name(inner[i]),
                  (unsigned long long)nb, value_len);
        CHECK_MSG(copy_ok && same_file, "innermost %s: copy through gguf_set_from: %s, raw %s, file %s",
                  gguf_vtype_name(inner[i]), rlx_status_name(wst), copy_ok ? "same" : "differs", same_file ? "same" : "differs");
    }
    for (int i = 0; i < 2; i++) {
        b.len = 0;
        size_t value_len, value_at = b_deep_file(&b, GGUF_MAX_ARRAY_DEPTH + 1, inner[i], &value_len);
        char msg[64], at[64];
        snprintf(msg, sizeof msg, "arrays nested deeper than %d levels", GGUF_MAX_ARRAY_DEPTH);
        snprintf(at, sizeof at, "byte %zu, key 0 'deep':", value_at + 12 * GGUF_MAX_ARRAY_DEPTH);   /* 12: type + count */
        if (!expect_format(i ? "17 levels, the innermost empty" : "17 levels", &b, msg, at)) break;
    }
    free(b.p);
}

/* Tensors of no elements may share an offset (and have any dims); real data may not. */
TEST(gguf_zero_size_tensors_share_offsets) {
    buf b = {0};
    const int64_t d1[1] = {32}, dz[2] = {1ll << 62, 0}, dz2[1] = {0};
    b_hdr(&b, 3, 3, 0);
    b_tensor(&b, "z", 2, dz, QTYPE_F32, 0);
    b_tensor(&b, "w", 1, d1, QTYPE_F32, 0);
    b_tensor(&b, "e", 1, dz2, QTYPE_Q4_K, 128);
    b_data(&b, 32, 128);
    gguf_file *f;
    CHECK_OK(gguf_open_memory(b.p, b.len, &f));
    if (f) {
        CHECK(gguf_find_tensor(f, "z")->size == 0 && gguf_find_tensor(f, "z")->n_elements == 0);
        CHECK(gguf_find_tensor(f, "e")->size == 0 && gguf_find_tensor(f, "w")->size == 128);
        gguf_close(f);
    }
    free(b.p);
}

/* Lengths no buffer can have (near SIZE_MAX) fail cleanly instead of looping. */
TEST(gguf_writer_huge_lengths) {
    gguf_writer *w = gguf_writer_new();
    uint8_t x[8] = {0};
    CHECK(gguf_set_str_n(w, "k", "x", SIZE_MAX - 20) != RLX_OK);
    CHECK(gguf_set_str_n(w, "k", "x", SIZE_MAX) != RLX_OK);
    CHECK(gguf_set_arr(w, "k", GGUF_VT_U8, x, (1ull << 63) - 1) != RLX_OK);
    CHECK(gguf_set_arr(w, "k", GGUF_VT_U64, x, 1ull << 61) != RLX_OK);
    CHECK(!gguf_writer_has_key(w, "k"));
    gguf_writer_free(w);
}

/* Write failures: IO with the real reason; a regular file is removed, and a
 * path that is not one (a link to /dev/full) is left alone. */
TEST(gguf_writer_write_errors) {
    gguf_writer *w = gguf_writer_new();
    static float big[1 << 15];   /* 128 KiB: fwrite fails; the small header alone fails at fclose */
    int64_t d[1] = {1 << 15};
    CHECK_OK(gguf_set_u32(w, "k", 1));
    CHECK_STATUS(gguf_write_file(w, "/nonexistent-dir/x.gguf"), RLX_STATUS_IO);
    CHECK(strstr(rlx_last_error(), "No such file") != NULL);
    char link[] = "/tmp/rlx_gguf_full_XXXXXX";
    CHECK(test_temp_file(link));
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) CHECK_OK(gguf_add_tensor(w, "big", QTYPE_F32, 1, d, big, sizeof big));
        if (access("/dev/full", W_OK) == 0) {
            unlink(link);
            CHECK(symlink("/dev/full", link) == 0);
            CHECK_STATUS(gguf_write_file(w, link), RLX_STATUS_IO);
            CHECK_MSG(strstr(rlx_last_error(), "No space left") != NULL, "pass %d: %s", pass, rlx_last_error());
            struct stat sb;
            CHECK_MSG(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "pass %d: the link was removed", pass);
        }
    }
    unlink(link);
    /* a regular file cut short by RLIMIT_FSIZE (lowered for this call only;
     * the soft limit may be raised back without privilege) */
    char path[] = "/tmp/rlx_gguf_fsize_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, "old", 3) == 3);
    close(fd);
    struct rlimit old_rl, rl;
    CHECK(getrlimit(RLIMIT_FSIZE, &old_rl) == 0);
    rl = old_rl;
    rl.rlim_cur = 1000;
    void (*old_sig)(int) = signal(SIGXFSZ, SIG_IGN);
    bool limited = setrlimit(RLIMIT_FSIZE, &rl) == 0;
    rlx_status st = limited ? gguf_write_file(w, path) : RLX_OK;
    setrlimit(RLIMIT_FSIZE, &old_rl);   /* restored before any CHECK can return */
    signal(SIGXFSZ, old_sig);
    CHECK(limited);
    CHECK_STATUS(st, RLX_STATUS_IO);
    CHECK_MSG(strstr(rlx_last_error(), "too large") != NULL, "%s", rlx_last_error());
    /* the file that was there is untouched, and no temporary is left */
    struct stat sb;
    CHECK_MSG(stat(path, &sb) == 0 && sb.st_size == 3, "the old file was not kept as it was");
    char pattern[64];
    snprintf(pattern, sizeof pattern, "%s.tmp.*", path);
    glob_t gl;
    int left = glob(pattern, 0, NULL, &gl);
    if (left == 0) globfree(&gl);
    unlink(path);
    CHECK_MSG(left == GLOB_NOMATCH, "a temporary was left next to %s (glob %d)", path, left);
    gguf_writer_free(w);
}

/* Rewrites the GGUF file at `via` from its own mapping, unchanged. */
static rlx_status rewrite_from_own_mapping(const char *via) {
    return tiny_gguf_rewrite(via, via, NULL);
}

/* A file rewritten from itself, directly and through a symbolic link: the
 * writer's tensors borrow the mapping of the file being replaced (writing in
 * place would truncate it under the mapping: SIGBUS). The result is a
 * byte-exact copy with the old file's permissions, and the link stays a link. */
TEST(gguf_write_over_its_own_source) {
    void *bytes; size_t size; float *src;
    CHECK_OK(build_file(32, &bytes, &size, &src));
    free(src);
    char path[] = "/tmp/rlx_gguf_self_XXXXXX", link[64];
    int fd = mkstemp(path);
    bool wrote = fd >= 0 && (size_t)write(fd, bytes, size) == size && fchmod(fd, 0640) == 0;
    if (fd >= 0) close(fd);
    snprintf(link, sizeof link, "%s.link", path);
    bool linked = wrote && symlink(path, link) == 0;
    for (int via_link = 0; via_link < 2 && linked; via_link++) {
        rlx_status st = rewrite_from_own_mapping(via_link ? link : path);
        void *again = NULL;
        size_t n = 0;
        struct stat sb, lb;
        bool same = st == RLX_OK && test_read_file(path, &again, &n) && n == size && memcmp(again, bytes, size) == 0;
        bool mode = stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0640;
        bool still_link = lstat(link, &lb) == 0 && S_ISLNK(lb.st_mode);
        free(again);
        if (st != RLX_OK || !same || !mode || !still_link) {
            printf("    via %s: %s, %s, mode %o, link %s\n", via_link ? "link" : "path", rlx_status_name(st),
                   same ? "same" : "differs", (unsigned)(sb.st_mode & 0777), still_link ? "kept" : "gone");
            linked = false;
        }
    }
    bool ok = wrote && linked;
    unlink(link);
    unlink(path);
    free(bytes);
    CHECK(ok);
}

/* -------------------------------------------------------------------- CLI */

TEST(gguf_cli_inspect_and_quantize) {
    const char *rlx = test_program("RLX_CLI", NULL);
    if (!rlx || !*rlx) rlx = "build/rlx";
    void *bytes; size_t size; float *src;
    CHECK_OK(build_file(32, &bytes, &size, &src));
    char path[] = "/tmp/rlx_gguf_cli_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && (size_t)write(fd, bytes, size) == size);
    close(fd);
    char cmd[1024], out[65536];
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, path);
    int code = test_run_command(cmd, out, sizeof out);
    if (code == 2 && strstr(out, "unknown command")) {
        harness_skip(__FILE__, __LINE__, "this rlx has no inspect command");
        goto cleanup;
    }
    CHECK_MSG(code == 0, "inspect exited %d: %s", code, out);
    CHECK_MSG(strstr(out, "general.architecture") && strstr(out, "llama") && strstr(out, "blk.0.k") &&
              strstr(out, "q4_K") && strstr(out, "tokenizer.ggml.tokens"), "inspect printed: %s", out);

    /* quantize to q8_0: the 2-D f32 [64,2] tensor becomes q8_0; the one with a
     * row of 4 stays f32 (4 % 32), 1-D, 3-D and quantized tensors are copied;
     * general.file_type is added */
    char qpath[64];
    snprintf(qpath, sizeof qpath, "%s.q8", path);
    snprintf(cmd, sizeof cmd, "%s quantize %s %s q8_0 2>&1", rlx, path, qpath);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "quantize exited %d: %s", code, out);
    gguf_file *f;
    CHECK_OK(gguf_open(qpath, &f));
    uint32_t ft;
    CHECK_OK(gguf_get_u32(f, "general.file_type", &ft));
    CHECK(ft == 7);   /* llama.cpp's file-type id of "mostly Q8_0" */
    CHECK(gguf_find_tensor(f, "a.weight")->type == QTYPE_F32);
    CHECK(gguf_find_tensor(f, "blk.0.k")->type == QTYPE_Q4_K && gguf_find_tensor(f, "h")->type == QTYPE_F16);
    CHECK(gguf_find_tensor(f, "cube")->type == QTYPE_F32 && gguf_tensor_count(f) == 6);
    const gguf_tensor *t = gguf_find_tensor(f, "blk.0.ffn");
    CHECK(t->type == QTYPE_Q8_0 && t->size == 4 * 34 && t->dims[0] == 64 && t->dims[1] == 2);
    float y[128];
    CHECK_OK(quant_dequantize_row(t->type, t->data, y, 128));
    for (int i = 0; i < 128; i++) CHECK_MSG(fabsf(y[i] - src[i]) < 0.01f, "element %d: %g vs %g", i, y[i], src[i]);
    CHECK(gguf_find_key(f, "tokenizer.ggml.tokens") >= 0);
    gguf_close(f);
    unlink(qpath);

    /* an invalid file: non-zero exit and the reason */
    memcpy(bytes, "GGUX", 4);
    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(fd >= 0 && (size_t)write(fd, bytes, size) == size);
    close(fd);
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, path);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code != 0 && strstr(out, "not a GGUF file"), "inspect of a bad file exited %d: %s", code, out);
    snprintf(cmd, sizeof cmd, "%s quantize %s %s.out q4_0 2>&1", rlx, path, path);
    CHECK(test_run_command(cmd, out, sizeof out) != 0);
    snprintf(cmd, sizeof cmd, "%s inspect 2>&1", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
cleanup:
    unlink(path);
    free(bytes);
    free(src);
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *fp = fopen(path, "wb");
    if (fp) { fwrite(p, 1, n, fp); fclose(fp); }
}

/* `rlx quantize` on crafted input and bad arguments, and `rlx inspect` on an
 * array of arrays. */
TEST(gguf_cli_quantize_crafted) {
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    char path[] = "/tmp/rlx_gguf_q_XXXXXX";
    CHECK(test_temp_file(path));
    char qpath[64], cmd[1024], out[65536];
    snprintf(qpath, sizeof qpath, "%s.out", path);

    /* a tensor of no elements but a huge row length next to one to convert
     * (regression: the per-thread row scratch was sized by the huge row, and
     * the size wrapped to 0, so converting the real tensor overran it) */
    buf b = {0};
    const int64_t dz[2] = {1ll << 62, 0}, dw[2] = {64, 4};
    b_hdr(&b, 3, 2, 0);
    b_tensor(&b, "z", 2, dz, QTYPE_F32, 0);
    b_tensor(&b, "w", 2, dw, QTYPE_F32, 0);
    while (b.len % 32) b_put(&b, "", 1);
    for (int i = 0; i < 256; i++) { float v = sinf((float)i); b_put(&b, &v, 4); }
    write_file(path, b.p, b.len);
    snprintf(cmd, sizeof cmd, "%s quantize %s %s q8_0 2>&1", rlx, path, qpath);
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "quantize exited %d: %s", code, out);
    gguf_file *f;
    if (code == 0 && gguf_open(qpath, &f) == RLX_OK) {
        const gguf_tensor *z = gguf_find_tensor(f, "z"), *w = gguf_find_tensor(f, "w");
        CHECK(z && z->type == QTYPE_F32 && z->dims[0] == 1ll << 62 && z->size == 0);
        CHECK(w && w->type == QTYPE_Q8_0 && w->size == 8 * 34);
        gguf_close(f);
    }
    unlink(qpath);

    /* bad arguments: unknown or unsupported target type, OUT == IN, unwritable OUT */
    snprintf(cmd, sizeof cmd, "%s quantize %s %s iq2_xxs 2>&1", rlx, path, qpath);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 2 && strstr(out, "unknown type"), "exited %d: %s", code, out);
    snprintf(cmd, sizeof cmd, "%s quantize %s %s q4_0 2>&1", rlx, path, path);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
    snprintf(cmd, sizeof cmd, "%s quantize %s /nonexistent-dir/x.gguf q4_0 2>&1", rlx, path);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 1 && strstr(out, "cannot create"), "exited %d: %s", code, out);

    /* inspect shows an array of arrays, then quantize copies it unchanged */
    b.len = 0;
    b_nested_file(&b);
    write_file(path, b.p, b.len);
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, path);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0 && strstr(out, "array[3]") && strstr(out, "u32[2]") && strstr(out, "string[2]") &&
              strstr(out, "array[1]"), "inspect exited %d: %s", code, out);
    snprintf(cmd, sizeof cmd, "%s quantize %s %s q8_0 2>&1", rlx, path, qpath);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "quantize exited %d: %s", code, out);
    if (code == 0 && gguf_open(qpath, &f) == RLX_OK) {
        gguf_file *g;
        CHECK_OK(gguf_open(path, &g));
        uint64_t n1 = 0, n2 = 0;
        const void *r1 = gguf_kv_raw(f, gguf_find_key(f, "nest"), &n1), *r2 = gguf_kv_raw(g, gguf_find_key(g, "nest"), &n2);
        CHECK(r1 && r2 && n1 == n2 && memcmp(r1, r2, n1) == 0);
        gguf_close(g);
        gguf_close(f);
    }
    unlink(qpath);
    unlink(path);
    free(b.p);
}

/* rlx inspect escapes control bytes in keys and tensor names (a file must not
 * be able to send escape sequences to the terminal). */
TEST(gguf_cli_inspect_escapes_names) {
    const char *rlx = test_program("RLX_CLI", NULL);
    if (!rlx || !*rlx) rlx = "build/rlx";
    gguf_writer *w = gguf_writer_new();
    CHECK(w != NULL);
    static const float v[4] = {1, 2, 3, 4};
    const int64_t dims[1] = {4};
    CHECK_OK(gguf_set_u32(w, "evil\x1b[2J.key", 7));
    CHECK_OK(gguf_add_tensor(w, "bell\x07\x1b]0;title\x07.weight", QTYPE_F32, 1, dims, v, sizeof v));
    char path[] = "/tmp/rlx_gguf_esc_XXXXXX";
    CHECK(test_temp_file(path));
    rlx_status st = gguf_write_file(w, path);
    gguf_writer_free(w);
    if (st != RLX_OK) unlink(path);
    CHECK_OK(st);
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, path);
    int code = test_run_command(cmd, out, sizeof out);
    unlink(path);
    CHECK_MSG(code == 0, "inspect exited %d: %s", code, out);
    CHECK_MSG(strchr(out, 0x1b) == NULL && strchr(out, 0x07) == NULL, "raw control bytes in: %s", out);
    CHECK_MSG(strstr(out, "evil\\x1b[2J.key") && strstr(out, "bell\\x07\\x1b]0;title\\x07.weight"), "inspect printed: %s", out);
}

/* Many keys and tensors (the writer's name index grows several times):
 * a key set again replaces its value in place, a tensor name added again is
 * refused, and the file reads back with every entry in order. */
TEST(gguf_writer_many_names) {
    gguf_writer *w = gguf_writer_new();
    CHECK(w != NULL);
    enum { N = 3000 };
    static const float v[2] = {1, 2};
    const int64_t dims[1] = {2};
    char name[64];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "k.%d", i);
        CHECK_OK(gguf_set_u32(w, name, (uint32_t)i));
        snprintf(name, sizeof name, "t.%d", i);
        CHECK_OK(gguf_add_tensor(w, name, QTYPE_F32, 1, dims, v, sizeof v));
    }
    for (int i = 0; i < N; i += 7) {
        snprintf(name, sizeof name, "k.%d", i);
        CHECK(gguf_writer_has_key(w, name));
        CHECK_OK(gguf_set_u32(w, name, (uint32_t)(i + 1000000)));
        snprintf(name, sizeof name, "t.%d", i);
        CHECK_STATUS(gguf_add_tensor(w, name, QTYPE_F32, 1, dims, v, sizeof v), RLX_STATUS_INVALID_ARGUMENT);
    }
    CHECK(!gguf_writer_has_key(w, "k.3000") && !gguf_writer_has_key(w, "t.0"));
    void *mem;
    size_t size;
    rlx_status st = gguf_write_memory(w, &mem, &size);
    gguf_writer_free(w);
    CHECK_OK(st);
    gguf_file *f;
    st = gguf_open_memory(mem, size, &f);
    if (st != RLX_OK) free(mem);
    CHECK_OK(st);
    bool ok = gguf_kv_count(f) == N && gguf_tensor_count(f) == N;
    for (int i = 0; i < N && ok; i++) {
        snprintf(name, sizeof name, "k.%d", i);
        uint32_t x = 0;
        ok = strcmp(gguf_kv_key(f, i), name) == 0 && gguf_get_u32(f, name, &x) == RLX_OK &&
             x == (uint32_t)(i % 7 == 0 ? i + 1000000 : i);
        snprintf(name, sizeof name, "t.%d", i);
        ok = ok && strcmp(gguf_tensor_at(f, i)->name, name) == 0;
        if (!ok) printf("    entry %d\n", i);
    }
    gguf_close(f);
    free(mem);
    CHECK(ok);
}
