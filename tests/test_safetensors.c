/*
 * test_safetensors.c — the safetensors reader, writer and sharded models
 * (src/io/safetensors*.c):
 *  - a round trip of every dtype through memory and a file, with alignment,
 *    metadata and the rlx dtype mapping (UNSUPPORTED where rlx has none);
 *  - the writer's bytes against the format's published examples;
 *  - every malformation class returns RLX_STATUS_FORMAT naming the problem;
 *  - sharded models through model.safetensors.index.json, and their errors;
 *  - `rlx inspect` on a file, an index and a broken file.
 * With RLX_FUZZ_SEEDS=DIR, safetensors_roundtrip writes seed files for
 * tests/fuzz/fuzz_safetensors.c there.
 */
#include "harness.h"
#include "io/safetensors.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A file of u64 len(header) | header | data_size bytes (0, 1, 2, ...). */
static uint8_t *raw_file(const char *header, size_t data_size, size_t *size) {
    size_t h = strlen(header);
    uint8_t *p = malloc(8 + h + data_size + 1);
    if (!p) return NULL;
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(p + 8, header, h);
    for (size_t i = 0; i < data_size; i++) p[8 + h + i] = (uint8_t)i;
    *size = 8 + h + data_size;
    return p;
}

static void write_seed(const char *name, const void *bytes, size_t size) {
    const char *seeds = getenv("RLX_FUZZ_SEEDS");   /* seed corpus for tests/fuzz/fuzz_safetensors.c */
    if (!seeds || !*seeds) return;
    char path[512];
    snprintf(path, sizeof path, "%s/%s", seeds, name);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(bytes, 1, size, fp);
        fclose(fp);
    }
}

static bool write_bytes(const char *path, const void *p, size_t n) {
    FILE *fp = fopen(path, "wb");
    if (!fp) return false;
    bool ok = fwrite(p, 1, n, fp) == n;
    return fclose(fp) == 0 && ok;
}

/* One tensor of each dtype: shapes whose bits fill whole bytes. */
typedef struct sample {
    sft_dtype dt;
    int n_dims;
    int64_t dims[3];
    uint8_t *data;
    uint64_t size;
} sample;

static void make_samples(sample *s) {
    for (int t = 0; t < SFT_DTYPE_COUNT; t++) {
        sample *x = &s[t];
        x->dt = (sft_dtype)t;
        unsigned bits = sft_dtype_bits(x->dt);
        x->n_dims = 1 + t % 3;
        int64_t base[3] = {2, 3, 4};
        for (int d = 0; d < x->n_dims; d++) x->dims[d] = base[d];
        int64_t n = 1;
        for (int d = 0; d < x->n_dims; d++) n *= x->dims[d];
        if ((uint64_t)n * bits % 8) {   /* sub-byte types: make the count fill whole bytes */
            x->n_dims = 1;
            x->dims[0] = 8;
            n = 8;
        }
        x->size = (uint64_t)n * bits / 8;
        x->data = malloc(x->size);
        for (uint64_t i = 0; i < x->size; i++) x->data[i] = (uint8_t)(x->dt == SFT_BOOL ? i & 1 : i * 7 + (uint64_t)t);
    }
}

static void free_samples(sample *s) {
    for (int t = 0; t < SFT_DTYPE_COUNT; t++) free(s[t].data);
}

static void check_file(const sft_file *f, const sample *s) {
    CHECK(sft_tensor_count(f) == SFT_DTYPE_COUNT);
    CHECK(sft_data_offset(f) % 8 == 0);
    for (int t = 0; t < SFT_DTYPE_COUNT; t++) {
        char name[32];
        snprintf(name, sizeof name, "t.%s", sft_dtype_name((sft_dtype)t));
        const sft_tensor *x = sft_find(f, name);
        CHECK_MSG(x, "no tensor %s", name);
        CHECK(sft_tensor_at(f, t) == x);   /* header order is the caller's */
        CHECK(x->dtype == s[t].dt && x->n_dims == s[t].n_dims && x->size == s[t].size);
        for (int d = 0; d < x->n_dims; d++) CHECK(x->dims[d] == s[t].dims[d]);
        CHECK_MSG(memcmp(x->data, s[t].data, x->size) == 0, "%s: bytes differ", name);
        unsigned bytes = sft_dtype_bits(x->dtype) / 8;
        CHECK_MSG(bytes == 0 || (sft_data_offset(f) + x->offset) % bytes == 0, "%s at %llu is not aligned", name,
                  (unsigned long long)x->offset);
        /* the rlx mapping: the same width, or UNSUPPORTED naming the tensor and dtype */
        rlx_dtype dt;
        const sft_tensor *got;
        rlx_status st = sft_get(f, name, &got, &dt);
        if (st == RLX_OK) {
            CHECK(got == x && rlx_dtype_size(dt) * 8 == sft_dtype_bits(x->dtype));
        } else {
            CHECK_STATUS(st, RLX_STATUS_UNSUPPORTED);
            CHECK_MSG(strstr(rlx_last_error(), name) && strstr(rlx_last_error(), sft_dtype_name(x->dtype)), "%s",
                      rlx_last_error());
        }
    }
    CHECK(sft_find(f, "absent") == NULL);
    CHECK_STATUS(sft_get(f, "absent", NULL, NULL), RLX_STATUS_NOT_FOUND);
    CHECK(strstr(rlx_last_error(), "'absent'"));
    CHECK(sft_metadata_count(f) == 2);
    CHECK(strcmp(sft_metadata_key(f, 0), "format") == 0 && strcmp(sft_metadata_value(f, 0), "pt") == 0);
    CHECK(strcmp(sft_metadata_get(f, "note"), "quote \" and \xc3\xa9") == 0);
    CHECK(sft_metadata_get(f, "nope") == NULL);
}

TEST(safetensors_roundtrip) {
    sample s[SFT_DTYPE_COUNT];
    make_samples(s);
    sft_writer *w = sft_writer_new();
    CHECK(w);
    CHECK_OK(sft_writer_set_metadata(w, "format", "np"));
    CHECK_OK(sft_writer_set_metadata(w, "note", "quote \" and \xc3\xa9"));
    CHECK_OK(sft_writer_set_metadata(w, "format", "pt"));   /* replaces, keeps the order */
    for (int t = 0; t < SFT_DTYPE_COUNT; t++) {
        char name[32];
        snprintf(name, sizeof name, "t.%s", sft_dtype_name((sft_dtype)t));
        CHECK_OK(sft_writer_add(w, name, s[t].dt, s[t].n_dims, s[t].dims, s[t].data, s[t].size));
    }
    void *bytes;
    size_t size;
    CHECK_OK(sft_write_memory(w, &bytes, &size));
    write_seed("valid_all_dtypes.safetensors", bytes, size);
    sft_file *f;
    CHECK_OK(sft_open_memory(bytes, size, &f));
    check_file(f, s);
    sft_close(f);

    char path[] = "/tmp/rlx_sft_XXXXXX";
    CHECK(test_temp_file(path));
    CHECK_OK(sft_write_file(w, path));
    void *disk;
    size_t disk_size;
    CHECK(test_read_file(path, &disk, &disk_size));
    CHECK(disk_size == size && memcmp(disk, bytes, size) == 0);   /* memory and file agree */
    free(disk);
    CHECK_OK(sft_open(path, &f));
    check_file(f, s);
    CHECK(strcmp(sft_name(f), path) == 0 && sft_file_size(f) == size);
    sft_close(f);
    unlink(path);
    free(bytes);
    sft_writer_free(w);

    /* no tensors at all, and a zero-size tensor */
    w = sft_writer_new();
    CHECK_OK(sft_write_memory(w, &bytes, &size));
    CHECK_OK(sft_open_memory(bytes, size, &f));
    CHECK(sft_tensor_count(f) == 0 && sft_metadata_count(f) == 0);
    sft_close(f);
    free(bytes);
    int64_t zero[2] = {0, 5};
    float one = 1.0f;
    int64_t d1[1] = {1};
    CHECK_OK(sft_writer_add(w, "empty", SFT_F32, 2, zero, NULL, 0));
    CHECK_OK(sft_writer_add(w, "scalar", SFT_F32, 0, NULL, &one, 4));
    CHECK_OK(sft_writer_add(w, "one", SFT_F32, 1, d1, &one, 4));
    CHECK_OK(sft_write_memory(w, &bytes, &size));
    write_seed("valid_zero_size.safetensors", bytes, size);
    CHECK_OK(sft_open_memory(bytes, size, &f));
    CHECK(sft_find(f, "empty")->size == 0 && sft_find(f, "empty")->n_elements == 0);
    CHECK(sft_find(f, "scalar")->n_dims == 0 && sft_find(f, "scalar")->n_elements == 1);
    sft_close(f);
    free(bytes);
    sft_writer_free(w);
    free_samples(s);
}

/* The writer's bytes for the format's published examples (header JSON,
 * padded with spaces to a multiple of 8). */
TEST(safetensors_writer_matches_format_examples) {
    static const float v[6] = {0, 1, 2, 3, 4, 5};
    int64_t dims[3] = {1, 2, 3};
    sft_writer *w = sft_writer_new();
    CHECK_OK(sft_writer_add(w, "attn.0", SFT_F32, 3, dims, v, sizeof v));
    void *bytes;
    size_t size;
    CHECK_OK(sft_write_memory(w, &bytes, &size));
    const char *want = "{\"attn.0\":{\"dtype\":\"F32\",\"shape\":[1,2,3],\"data_offsets\":[0,24]}}";
    CHECK(size == 8 + 64 + 24 && ((uint8_t *)bytes)[0] == 64 && memcmp((char *)bytes + 8, want, 64) == 0);
    CHECK(memcmp((char *)bytes + 72, v, 24) == 0);
    free(bytes);
    sft_writer_free(w);

    w = sft_writer_new();
    CHECK_OK(sft_write_memory(w, &bytes, &size));
    CHECK(size == 16 && memcmp(bytes, "\x08\0\0\0\0\0\0\0{}      ", 16) == 0);
    free(bytes);
    CHECK_OK(sft_writer_set_metadata(w, "framework", "pt"));
    CHECK_OK(sft_write_memory(w, &bytes, &size));
    CHECK(size == 48 && ((uint8_t *)bytes)[0] == 40 && memcmp((char *)bytes + 8, "{\"__metadata__\":{\"framework\":\"pt\"}}     ", 40) == 0);
    free(bytes);
    sft_writer_free(w);
}

TEST(safetensors_writer_rejects_bad_input) {
    sft_writer *w = sft_writer_new();
    float x[4] = {0};
    int64_t d[1] = {4}, neg[1] = {-1}, odd[1] = {3};
    CHECK_OK(sft_writer_add(w, "a", SFT_F32, 1, d, x, 16));
    CHECK_STATUS(sft_writer_add(w, "a", SFT_F32, 1, d, x, 16), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "'a' was already added"));
    CHECK_STATUS(sft_writer_add(w, "b", SFT_F32, 1, d, x, 12), RLX_STATUS_SHAPE);
    CHECK(strstr(rlx_last_error(), "16 bytes, not 12"));
    CHECK_STATUS(sft_writer_add(w, "c", SFT_F32, 1, neg, x, 0), RLX_STATUS_SHAPE);
    CHECK_STATUS(sft_writer_add(w, "c", SFT_F4, 1, odd, x, 1), RLX_STATUS_SHAPE);
    CHECK(strstr(rlx_last_error(), "whole bytes"));
    CHECK_STATUS(sft_writer_add(w, "__metadata__", SFT_F32, 1, d, x, 16), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(sft_writer_add(w, "", SFT_F32, 1, d, x, 16), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(sft_writer_add(w, "bad\xff", SFT_F32, 1, d, x, 16), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "UTF-8"));
    CHECK_STATUS(sft_writer_add(w, "e", SFT_DTYPE_COUNT, 1, d, x, 16), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(sft_writer_set_metadata(w, "k", "\xc3"), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(sft_writer_add(w, "f", SFT_F32, 1, d, NULL, 16), RLX_STATUS_INVALID_ARGUMENT);
    /* a failed file write leaves the old file as it was */
    char path[] = "/tmp/rlx_sft_XXXXXX";
    CHECK(test_temp_file(path));
    CHECK(write_bytes(path, "old", 3));
    CHECK_STATUS(sft_write_file(w, "/dev/full"), RLX_STATUS_IO);
    CHECK_STATUS(sft_write_file(w, "/nonexistent-dir/x.safetensors"), RLX_STATUS_IO);
    CHECK(strstr(rlx_last_error(), "cannot create"));
    CHECK_OK(sft_write_file(w, path));
    sft_file *f;
    CHECK_OK(sft_open(path, &f));
    CHECK(sft_tensor_count(f) == 1);
    sft_close(f);
    unlink(path);
    sft_writer_free(w);
}

/* Every malformation class: RLX_STATUS_FORMAT, and the message says what. */
TEST(safetensors_malformed) {
    static const struct { const char *header; size_t data; const char *want[2]; } cases[] = {
        /* JSON */
        {"{\"a\":", 0, {"header: byte 13", "expected a value"}},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{}}", 4, {"duplicate key \"a\"", NULL}},
        {"[1]", 0, {"does not start with '{'", NULL}},
        {" {}", 0, {"does not start with '{'", NULL}},
        {"{\"x\":\"\xff\"}", 0, {"invalid UTF-8", NULL}},
        /* entries */
        {"{\"w\":1}", 0, {"tensor 'w' (byte 9)", "not an object"}},
        {"{\"w\":{\"shape\":[1],\"data_offsets\":[0,4]}}", 4, {"tensor 'w'", "no dtype"}},
        {"{\"w\":{\"dtype\":\"F32\",\"data_offsets\":[0,4]}}", 4, {"tensor 'w'", "no shape"}},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, {"tensor 'w'", "no data_offsets"}},
        {"{\"w\":{\"dtype\":\"F128\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, {"tensor 'w'", "unknown dtype \"F128\""}},
        {"{\"w\":{\"dtype\":\"f32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, {"unknown dtype \"f32\"", NULL}},
        {"{\"w\":{\"dtype\":32,\"shape\":[1],\"data_offsets\":[0,4]}}", 4, {"dtype is number", NULL}},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, {"shape[0]", "non-negative integer"}},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, {"shape[0]", NULL}},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}}", 4, {"shape is number", NULL}},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}}", 4, {"data_offsets", "two non-negative"}},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,0]}}", 4, {"end before they begin", NULL}},
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"extra\":1}}", 4, {"unknown field 'extra'", NULL}},
        {"{\"a\\u0000b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, {"NUL", NULL}},
        /* shape x dtype against the span */
        {"{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}", 4, {"tensor 'w'", "2 elements of F32 are 8 bytes, but data_offsets [0, 4] span 4"}},
        {"{\"w\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", 2, {"tensor 'w'", "whole bytes"}},
        {"{\"w\":{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}}", 4, {"overflows", NULL}},
        /* tiling of the data region */
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[4,12]}}", 12,
         {"overlap: tensor 'b' at [4, 12] overlaps tensor 'a' at [0, 8]", NULL}},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,12]}}", 12,
         {"gap: bytes [4, 8)", "the next is 'b'"}},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}", 8, {"gap: bytes [0, 4)", NULL}},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}", 8, {"gap: bytes [4, 8) at the end", "the last is 'a'"}},
        {"{}", 3, {"gap: bytes [0, 3) at the end", "no tensors"}},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[16],\"data_offsets\":[0,16]}}", 8, {"tensor 'a'", "run past the end of the 8-byte data region"}},
        {"{\"a\":{\"dtype\":\"U8\",\"shape\":[2],\"data_offsets\":[0,2]},\"z\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[1,1]}}", 2,
         {"overlap: tensor 'z'", NULL}},
        /* metadata */
        {"{\"__metadata__\":{\"a\":1}}", 0, {"__metadata__ key 'a'", "not a string"}},
        {"{\"__metadata__\":[]}", 0, {"__metadata__", "not an object"}},
        {"{\"__metadata__\":{\"a\":\"x\"},\"__metadata__\":{}}", 0, {"duplicate key \"__metadata__\"", NULL}},
    };
    for (size_t k = 0; k < RLX_ARRAY_LEN(cases); k++) {
        size_t size;
        uint8_t *bytes = raw_file(cases[k].header, cases[k].data, &size);
        CHECK(bytes);
        sft_file *f = (sft_file *)1;
        rlx_status st = sft_open_memory(bytes, size, &f);
        free(bytes);
        CHECK_MSG(st == RLX_STATUS_FORMAT && f == NULL, "case %zu (%s): %s", k, cases[k].header, rlx_status_name(st));
        for (int j = 0; j < 2; j++)
            CHECK_MSG(!cases[k].want[j] || strstr(rlx_last_error(), cases[k].want[j]), "case %zu: want '%s' in: %s", k,
                      cases[k].want[j], rlx_last_error());
        CHECK(strstr(rlx_last_error(), "safetensors '<memory>'"));
    }

    /* the length field itself */
    uint8_t small[5] = {1, 0, 0, 0, 0};
    sft_file *f;
    CHECK_STATUS(sft_open_memory(small, sizeof small, &f), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "truncated: the file is 5 bytes"));
    CHECK_STATUS(sft_open_memory(NULL, 0, &f), RLX_STATUS_FORMAT);
    size_t size;
    uint8_t *bytes = raw_file("{}", 0, &size);
    bytes[0] = 200;   /* header length 200, 2 bytes there */
    CHECK_STATUS(sft_open_memory(bytes, size, &f), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "header length 200 runs past the end of the file (2 bytes follow"), "%s", rlx_last_error());
    memset(bytes, 0xff, 8);   /* 2^64 - 1 */
    CHECK_STATUS(sft_open_memory(bytes, size, &f), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "exceeds the 100000000-byte limit"));
    memset(bytes, 0, 8);
    CHECK_STATUS(sft_open_memory(bytes, size, &f), RLX_STATUS_FORMAT);
    free(bytes);
    write_seed("bad_overlap.safetensors", "\x10\0\0\0\0\0\0\0{\"a\":{\"dtype\":", 24);

    /* a truncated copy of a valid file fails at every length, never crashes */
    int64_t d[2] = {3, 5};
    float x[15] = {0};
    sft_writer *w = sft_writer_new();
    CHECK_OK(sft_writer_add(w, "w", SFT_F32, 2, d, x, sizeof x));
    CHECK_OK(sft_writer_set_metadata(w, "k", "v"));
    void *valid;
    size_t vsize;
    CHECK_OK(sft_write_memory(w, &valid, &vsize));
    sft_writer_free(w);
    for (size_t n = 0; n < vsize; n++) {
        rlx_status st = sft_open_memory(valid, n, &f);
        CHECK_MSG(st == RLX_STATUS_FORMAT && rlx_last_error()[0], "length %zu: %s", n, rlx_status_name(st));
    }
    free(valid);
    /* a missing file */
    CHECK_STATUS(sft_open("/nonexistent/model.safetensors", &f), RLX_STATUS_IO);
}

TEST(safetensors_dtype_table) {
    static const struct { const char *name; unsigned bits; int rlx; } want[] = {
        {"BOOL", 8, RLX_BOOL}, {"U8", 8, RLX_U8}, {"I8", 8, RLX_I8}, {"I16", 16, -1}, {"U16", 16, -1},
        {"I32", 32, RLX_I32}, {"U32", 32, -1}, {"I64", 64, RLX_I64}, {"U64", 64, -1}, {"F16", 16, RLX_F16},
        {"BF16", 16, RLX_BF16}, {"F32", 32, RLX_F32}, {"F64", 64, RLX_F64}, {"C64", 64, -1},
        {"F8_E4M3", 8, -1}, {"F8_E5M2", 8, -1}, {"F8_E8M0", 8, -1}, {"F6_E2M3", 6, -1}, {"F6_E3M2", 6, -1}, {"F4", 4, -1},
    };
    CHECK(RLX_ARRAY_LEN(want) == SFT_DTYPE_COUNT);
    for (size_t k = 0; k < RLX_ARRAY_LEN(want); k++) {
        sft_dtype t;
        CHECK_MSG(sft_dtype_from_name(want[k].name, &t) && strcmp(sft_dtype_name(t), want[k].name) == 0, "%s", want[k].name);
        CHECK(sft_dtype_bits(t) == want[k].bits);
        rlx_dtype r;
        rlx_status st = sft_dtype_to_rlx(t, &r);
        if (want[k].rlx >= 0) {
            CHECK(st == RLX_OK && (int)r == want[k].rlx);
        } else {
            CHECK_STATUS(st, RLX_STATUS_UNSUPPORTED);
            CHECK(strstr(rlx_last_error(), want[k].name) && strstr(rlx_last_error(), "no rlx type"));
        }
    }
    sft_dtype t;
    CHECK(!sft_dtype_from_name("F8_E4M3FNUZ", &t) && !sft_dtype_from_name("", &t));
    CHECK(strcmp(sft_dtype_name(SFT_DTYPE_COUNT), "?") == 0);
}

/* ------------------------------------------------------------- sharding */

typedef struct shard_dir {
    char dir[64];
    char path[3][128];
} shard_dir;

/* Writes shard a (x, y: F32) and b (z: I16, the dtype rlx lacks) in a new
 * directory, and an index with the given weight_map (NULL: the right one). */
static bool make_shards(shard_dir *s, const char *index_json) {
    snprintf(s->dir, sizeof s->dir, "/tmp/rlx_sft_shards_XXXXXX");
    if (!mkdtemp(s->dir)) return false;
    snprintf(s->path[0], sizeof s->path[0], "%s/model-00001-of-00002.safetensors", s->dir);
    snprintf(s->path[1], sizeof s->path[1], "%s/model-00002-of-00002.safetensors", s->dir);
    snprintf(s->path[2], sizeof s->path[2], "%s/model.safetensors.index.json", s->dir);
    static const float xv[4] = {1, 2, 3, 4}, yv[2] = {5, 6};
    static const int16_t zv[3] = {7, 8, 9};
    int64_t dx[2] = {2, 2}, dy[1] = {2}, dz[1] = {3};
    sft_writer *a = sft_writer_new(), *b = sft_writer_new();
    bool ok = a && b && sft_writer_add(a, "x", SFT_F32, 2, dx, xv, sizeof xv) == RLX_OK &&
              sft_writer_add(a, "y", SFT_F32, 1, dy, yv, sizeof yv) == RLX_OK &&
              sft_writer_add(b, "z", SFT_I16, 1, dz, zv, sizeof zv) == RLX_OK && sft_write_file(a, s->path[0]) == RLX_OK &&
              sft_write_file(b, s->path[1]) == RLX_OK;
    sft_writer_free(a);
    sft_writer_free(b);
    const char *good = "{\"metadata\": {\"total_size\": 30},\n \"weight_map\": {\"x\": \"model-00001-of-00002.safetensors\", "
                       "\"z\": \"model-00002-of-00002.safetensors\", \"y\": \"model-00001-of-00002.safetensors\"}}";
    const char *text = index_json ? index_json : good;
    return ok && write_bytes(s->path[2], text, strlen(text));
}

static void remove_shards(const shard_dir *s) {
    for (int i = 0; i < 3; i++) unlink(s->path[i]);
    rmdir(s->dir);
}

TEST(safetensors_sharded_index) {
    shard_dir s;
    CHECK(make_shards(&s, NULL));
    for (int how = 0; how < 2; how++) {   /* the index file, then its directory */
        sft_model *m;
        CHECK_OK(sft_model_open(how ? s.dir : s.path[2], &m));
        CHECK(sft_model_shard_count(m) == 2 && sft_model_tensor_count(m) == 3);
        const sft_file *shard;
        const sft_tensor *t = sft_model_find(m, "y", &shard);
        CHECK(t && shard == sft_model_shard(m, 0) && ((const float *)t->data)[1] == 6);
        t = sft_model_find(m, "z", &shard);
        CHECK(t && shard == sft_model_shard(m, 1) && t->dtype == SFT_I16 && ((const int16_t *)t->data)[2] == 9);
        CHECK(sft_model_find(m, "w", NULL) == NULL);
        CHECK(strcmp(sft_model_tensor_at(m, 0, NULL)->name, "x") == 0 && strcmp(sft_model_tensor_at(m, 2, NULL)->name, "z") == 0);
        int64_t total;
        CHECK_OK(json_get_i64(sft_model_index_metadata(m), "total_size", &total));
        CHECK(total == 30);
        rlx_dtype dt;
        CHECK_OK(sft_model_get(m, "x", &t, &dt));
        CHECK(dt == RLX_F32 && t->n_elements == 4);
        CHECK_STATUS(sft_model_get(m, "z", &t, &dt), RLX_STATUS_UNSUPPORTED);
        CHECK(strstr(rlx_last_error(), "tensor 'z' is I16") && strstr(rlx_last_error(), "model-00002-of-00002"));
        CHECK_STATUS(sft_model_get(m, "nope", &t, &dt), RLX_STATUS_NOT_FOUND);
        CHECK(strstr(rlx_last_error(), "'nope'"));
        sft_model_close(m);
    }
    /* a single file is a model of one shard */
    sft_model *m;
    CHECK_OK(sft_model_open(s.path[0], &m));
    CHECK(sft_model_shard_count(m) == 1 && sft_model_tensor_count(m) == 2 && sft_model_index_metadata(m) == NULL);
    CHECK(sft_model_find(m, "x", NULL) != NULL);
    sft_model_close(m);
    remove_shards(&s);
}

TEST(safetensors_sharded_index_errors) {
    static const struct { const char *index; rlx_status st; const char *want; } cases[] = {
        {"{\"weight_map\": {\"x\": \"model-00001-of-00002.safetensors\", \"q\": \"model-00002-of-00002.safetensors\"}}",
         RLX_STATUS_FORMAT, "weight_map puts tensor 'q' (byte 57) in 'model-00002-of-00002.safetensors', which has no such tensor"},
        {"{\"metadata\": {}}", RLX_STATUS_FORMAT, "no \"weight_map\" object"},
        {"{\"weight_map\": []}", RLX_STATUS_FORMAT, "no \"weight_map\" object"},
        {"{\"weight_map\": {\"x\": 3}}", RLX_STATUS_FORMAT, "weight_map['x'] (byte 21) is not a shard file name"},
        {"{\"weight_map\": {\"x\": \"../x.safetensors\"}}", RLX_STATUS_FORMAT, "is not a shard file name"},
        {"{\"weight_map\": {\"x\": \"..\"}}", RLX_STATUS_FORMAT, "is not a shard file name"},
        {"{\"weight_map\": {\"x\": \"missing.safetensors\"}}", RLX_STATUS_IO, "cannot open"},
        {"{\"weight_map\": {\"x\": \"a\", \"x\": \"b\"}}", RLX_STATUS_FORMAT, "duplicate key \"x\""},
        {"{\"weight_map\": {}, \"metadata\": 5}", RLX_STATUS_FORMAT, "\"metadata\" (byte 31) is number"},
        {"[]", RLX_STATUS_FORMAT, "not an object"},
        {"{\"weight_map\": {\"x\": ", RLX_STATUS_FORMAT, "byte 21: expected a value"},
    };
    for (size_t k = 0; k < RLX_ARRAY_LEN(cases); k++) {
        shard_dir s;
        CHECK(make_shards(&s, cases[k].index));
        sft_model *m = (sft_model *)1;
        rlx_status st = sft_model_open(s.path[2], &m);
        bool good = st == cases[k].st && m == NULL && strstr(rlx_last_error(), cases[k].want);
        if (st == RLX_STATUS_FORMAT) good = good && strstr(rlx_last_error(), "model.safetensors.index.json");
        remove_shards(&s);
        CHECK_MSG(good, "case %zu: %s: %s", k, rlx_status_name(st), rlx_last_error());
    }
    /* an index whose shard is itself malformed: the shard's error */
    shard_dir s;
    CHECK(make_shards(&s, NULL));
    CHECK(write_bytes(s.path[1], "\x02\0\0\0\0\0\0\0{}\x01", 11));
    sft_model *m;
    CHECK_STATUS(sft_model_open(s.path[2], &m), RLX_STATUS_FORMAT);
    CHECK_MSG(strstr(rlx_last_error(), "model-00002-of-00002.safetensors") && strstr(rlx_last_error(), "gap"), "%s", rlx_last_error());
    /* a directory without a model */
    remove_shards(&s);
    CHECK(mkdir(s.dir, 0700) == 0);
    CHECK_STATUS(sft_model_open(s.dir, &m), RLX_STATUS_IO);
    CHECK(strstr(rlx_last_error(), "neither"));
    rmdir(s.dir);
}

/* `rlx inspect` recognizes safetensors files and index files. */
TEST(safetensors_cli_inspect) {
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    if (access(rlx, X_OK) != 0) SKIP("no rlx CLI at %s", rlx);
    shard_dir s;
    CHECK(make_shards(&s, NULL));
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, s.path[0]);
    int code = test_run_command(cmd, out, sizeof out);
    bool ok = code == 0 && strstr(out, "safetensors") && strstr(out, "F32") && strstr(out, "[2, 2]") && strstr(out, "x");
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, s.path[2]);
    int code2 = test_run_command(cmd, out + strlen(out), sizeof out - strlen(out));
    ok = ok && code2 == 0 && strstr(out, "2 shards") && strstr(out, "I16") && strstr(out, "total_size");
    /* metadata is shown, escaped */
    sft_writer *w = sft_writer_new();
    CHECK_OK(sft_writer_set_metadata(w, "format", "line\nbreak"));
    CHECK_OK(sft_write_file(w, s.path[1]));
    sft_writer_free(w);
    char out3[2048];
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, s.path[1]);
    int code3 = test_run_command(cmd, out3, sizeof out3);
    ok = ok && code3 == 0 && strstr(out3, "format") && strstr(out3, "\"line\\nbreak\"");
    /* a broken file: exit 1 with the reader's message */
    CHECK(write_bytes(s.path[1], "\x02\0\0\0\0\0\0\0{}\x01", 11));
    char out4[2048];
    snprintf(cmd, sizeof cmd, "%s inspect %s 2>&1", rlx, s.path[1]);
    int code4 = test_run_command(cmd, out4, sizeof out4);
    ok = ok && code4 == 1 && strstr(out4, "gap");
    remove_shards(&s);
    CHECK_MSG(ok, "exits %d %d %d %d:\n%s\n%s\n%s", code, code2, code3, code4, out, out3, out4);
}
