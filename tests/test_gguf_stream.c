/*
 * test_gguf_stream.c — GGUF tensors whose bytes come from a callback at write
 * time (gguf_add_tensor_fill), and `rlx quantize`, which uses them.
 *
 *  - filled, borrowed and mixed writers give the same bytes, in memory and
 *    on disk, at alignments 1, 32 and 64 (1 puts tensors at odd offsets in
 *    memory, where the fill must still get aligned memory);
 *  - each fill runs exactly once per write, with the declared size; in memory
 *    it fills the output in place, on disk one reused buffer;
 *  - a failing fill fails the write with its status and message plus the
 *    tensor's name; later fills do not run; the old file stays as it was and
 *    no temporary is left;
 *  - bad arguments are rejected exactly as gguf_add_tensor rejects them;
 *  - `rlx quantize` output equals row-by-row quantization of its input, and
 *    its peak memory grows with the input, not with the whole output.
 */
#include "harness.h"
#include "core/core.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include <glob.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A fill that copies src and records how it was called. */
typedef struct src_fill {
    const uint8_t *src;
    uint64_t size;
    int calls;
    bool bad_size, misaligned;
    void *last_dst;
    rlx_status fail;        /* returned instead of filling, when set */
    const char *fail_msg;   /* its message (NULL: none set) */
} src_fill;

static rlx_status copy_fill(void *ctx, void *dst, uint64_t size) {
    src_fill *f = ctx;
    f->calls++;
    f->last_dst = dst;
    if (size != f->size) f->bad_size = true;
    if ((uintptr_t)dst % _Alignof(max_align_t)) f->misaligned = true;
    if (f->fail) return f->fail_msg ? rlx_fail(f->fail, "%s", f->fail_msg) : f->fail;
    if (size) memcpy(dst, f->src, (size_t)size);
    return RLX_OK;
}

/* Mixed types and shapes: sizes that need padding, an empty tensor, a
 * 3-D one. Bytes are random (the writer does not look at them). */
#define NT 7
static const struct { const char *name; uint32_t type, n_dims; int64_t dims[3]; } SPEC[NT] = {
    {"a.weight", QTYPE_F32, 2, {5, 3}},          /* 60 bytes */
    {"b", QTYPE_F16, 1, {7}},                    /* 14 */
    {"blk.0.q", QTYPE_Q4_0, 2, {64, 2}},         /* 72 */
    {"blk.0.k", QTYPE_Q8_0, 2, {32, 3}},         /* 102 */
    {"kq", QTYPE_Q4_K, 1, {256}},                /* 144 */
    {"empty", QTYPE_F32, 2, {0, 4}},             /* 0 */
    {"cube", QTYPE_BF16, 3, {3, 1, 2}},          /* 12 */
};

typedef struct tset {
    uint8_t *data[NT];
    uint64_t size[NT];
    src_fill fill[NT];
} tset;

static void tset_init(tset *s) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < NT; i++) {
        uint64_t n = 1;
        for (uint32_t d = 0; d < SPEC[i].n_dims; d++) n *= (uint64_t)SPEC[i].dims[d];
        qtype_row_bytes(SPEC[i].type, n, &s->size[i]);
        s->data[i] = malloc(s->size[i] + 1);
        for (uint64_t k = 0; k < s->size[i]; k++) s->data[i][k] = (uint8_t)test_rand_u64();
        s->fill[i] = (src_fill){.src = s->data[i], .size = s->size[i]};
    }
}

static void tset_free(tset *s) {
    for (int i = 0; i < NT; i++) free(s->data[i]);
}

/* mode 0: all borrowed, 1: all filled, 2: every other one filled */
static gguf_writer *make_writer(tset *s, int mode, uint32_t align) {
    gguf_writer *w = gguf_writer_new();
    if (!w) return NULL;
    rlx_status st = gguf_set_str(w, "general.architecture", "llama");
    if (!st && align) st = gguf_set_u32(w, "general.alignment", align);
    if (!st) st = gguf_set_u32(w, "k", 7);
    for (int i = 0; i < NT && !st; i++) {
        bool fill = mode == 1 || (mode == 2 && i % 2 == 0);
        st = fill ? gguf_add_tensor_fill(w, SPEC[i].name, SPEC[i].type, SPEC[i].n_dims, SPEC[i].dims, s->size[i],
                                         copy_fill, &s->fill[i])
                  : gguf_add_tensor(w, SPEC[i].name, SPEC[i].type, SPEC[i].n_dims, SPEC[i].dims, s->data[i], s->size[i]);
    }
    if (st) { gguf_writer_free(w); return NULL; }
    return w;
}

TEST(gguf_stream_matches_borrowed) {
    tset s;
    tset_init(&s);
    char path[] = "/tmp/rlx_gguf_stream_XXXXXX";
    CHECK(test_temp_file(path));
    static const uint32_t aligns[] = {0, 1, 64};   /* 0: the default, 32 */
    for (size_t a = 0; a < RLX_ARRAY_LEN(aligns); a++) {
        void *ref = NULL;
        size_t ref_size = 0;
        gguf_writer *w0 = make_writer(&s, 0, aligns[a]);
        CHECK(w0);
        rlx_status st = gguf_write_memory(w0, &ref, &ref_size);
        gguf_writer_free(w0);
        CHECK_OK(st);
        for (int mode = 1; mode <= 2; mode++) {
            for (int i = 0; i < NT; i++) s.fill[i].calls = 0;
            gguf_writer *w = make_writer(&s, mode, aligns[a]);
            CHECK(w);
            void *mem = NULL, *disk = NULL;
            size_t mem_size = 0, disk_size = 0;
            rlx_status sm = gguf_write_memory(w, &mem, &mem_size);
            rlx_status sf = gguf_write_file(w, path);
            gguf_writer_free(w);
            bool got_disk = sf == RLX_OK && test_read_file(path, &disk, &disk_size);
            bool same_mem = sm == RLX_OK && mem_size == ref_size && memcmp(mem, ref, ref_size) == 0;
            bool same_disk = got_disk && disk_size == ref_size && memcmp(disk, ref, ref_size) == 0;
            free(mem);
            free(disk);
            CHECK_MSG(same_mem && same_disk, "align %u mode %d: memory %s %s, file %s %s", aligns[a], mode,
                      rlx_status_name(sm), same_mem ? "same" : "differs", rlx_status_name(sf), same_disk ? "same" : "differs");
            for (int i = 0; i < NT; i++) {
                bool filled = mode == 1 || i % 2 == 0;
                CHECK_MSG(s.fill[i].calls == (filled ? 2 : 0), "align %u mode %d: '%s' filled %d times for 2 writes",
                          aligns[a], mode, SPEC[i].name, s.fill[i].calls);
                CHECK_MSG(!s.fill[i].bad_size && !s.fill[i].misaligned, "'%s': size %s, dst %s", SPEC[i].name,
                          s.fill[i].bad_size ? "wrong" : "ok", s.fill[i].misaligned ? "misaligned" : "aligned");
            }
        }
        /* the file reads back with the tensors' bytes */
        gguf_file *f;
        CHECK_OK(gguf_open_memory(ref, ref_size, &f));
        bool ok = gguf_tensor_count(f) == NT;
        for (int i = 0; ok && i < NT; i++) {
            const gguf_tensor *t = gguf_find_tensor(f, SPEC[i].name);
            ok = t && t->size == s.size[i] && (!t->size || memcmp(t->data, s.data[i], t->size) == 0);
        }
        gguf_close(f);
        free(ref);
        CHECK_MSG(ok, "align %u: tensors do not read back", aligns[a]);
    }
    unlink(path);
    tset_free(&s);
}

/* Memory: each tensor is filled where it lands in the output. File: one
 * buffer serves every fill (the sizes here never grow past the first). */
TEST(gguf_stream_fills_in_place_and_reuses_scratch) {
    enum { N = 4 };
    static const int64_t rows[N] = {64, 32, 64, 8};
    float *data[N];
    src_fill fill[N];
    void *dst_mem[N];
    gguf_writer *w = gguf_writer_new();
    CHECK(w);
    for (int i = 0; i < N; i++) {
        int64_t dims[2] = {rows[i], 16};
        data[i] = malloc(sizeof(float) * 16 * (size_t)rows[i]);
        test_fill_uniform_f32(data[i], 16 * rows[i], -1, 1);
        fill[i] = (src_fill){.src = (const uint8_t *)data[i], .size = 64 * (uint64_t)rows[i]};
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        CHECK_OK(gguf_add_tensor_fill(w, name, QTYPE_F32, 2, dims, fill[i].size, copy_fill, &fill[i]));
    }
    void *out = NULL;
    size_t size = 0;
    CHECK_OK(gguf_write_memory(w, &out, &size));
    for (int i = 0; i < N; i++) dst_mem[i] = fill[i].last_dst;
    gguf_file *f;
    CHECK_OK(gguf_open_memory(out, size, &f));
    bool in_place = true;
    for (int i = 0; i < N; i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        in_place = in_place && dst_mem[i] == (uint8_t *)out + gguf_data_offset(f) + t->offset;
    }
    gguf_close(f);
    free(out);
    CHECK_MSG(in_place, "gguf_write_memory filled somewhere other than the output");
    char path[] = "/tmp/rlx_gguf_stream_XXXXXX";
    CHECK(test_temp_file(path));
    rlx_status st = gguf_write_file(w, path);
    unlink(path);
    CHECK_OK(st);
    for (int i = 1; i < N; i++)
        CHECK_MSG(fill[i].last_dst == fill[0].last_dst, "fill %d got a new buffer in a file write", i);
    for (int i = 0; i < N; i++) free(data[i]);
    gguf_writer_free(w);
}

static int count_tmp(const char *dir) {
    char pattern[256];
    snprintf(pattern, sizeof pattern, "%s/*.tmp.*", dir);
    glob_t gl;
    int r = glob(pattern, 0, NULL, &gl);
    int n = r == 0 ? (int)gl.gl_pathc : 0;
    if (r == 0) globfree(&gl);
    return n;
}

TEST(gguf_stream_failing_fill) {
    char dir[] = "/tmp/rlx_gguf_stream_XXXXXX";
    CHECK(mkdtemp(dir));
    char path[300], fresh[300], link[300];
    snprintf(path, sizeof path, "%s/out.gguf", dir);
    snprintf(fresh, sizeof fresh, "%s/new.gguf", dir);
    snprintf(link, sizeof link, "%s/link.gguf", dir);
    static const char old[] = "the old file";
    FILE *fp = fopen(path, "wb");
    CHECK(fp);
    fwrite(old, 1, sizeof old - 1, fp);
    fclose(fp);
    CHECK(symlink(path, link) == 0);

    static const char *const names[3] = {"first", "second.weight", "third"};
    float x[3][32];
    src_fill fill[3];
    gguf_writer *w = gguf_writer_new();
    CHECK(w);
    int64_t dims[1] = {32};
    for (int i = 0; i < 3; i++) {
        test_fill_uniform_f32(x[i], 32, -1, 1);
        fill[i] = (src_fill){.src = (const uint8_t *)x[i], .size = sizeof x[i]};
        CHECK_OK(gguf_add_tensor_fill(w, names[i], QTYPE_F32, 1, dims, sizeof x[i], copy_fill, &fill[i]));
    }
    fill[1].fail = RLX_STATUS_DEVICE;
    fill[1].fail_msg = "sensor 42 melted";

    const char *targets[3] = {path, link, fresh};
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 3; i++) fill[i].calls = 0;
        CHECK_STATUS(gguf_write_file(w, targets[k]), RLX_STATUS_DEVICE);
        const char *msg = rlx_last_error();
        CHECK_MSG(strstr(msg, "sensor 42 melted") && strstr(msg, "'second.weight'"), "message: %s", msg);
        CHECK_MSG(fill[0].calls == 1 && fill[1].calls == 1 && fill[2].calls == 0, "%s: fills ran %d %d %d times",
                  targets[k], fill[0].calls, fill[1].calls, fill[2].calls);
        CHECK_MSG(count_tmp(dir) == 0, "%s: a temporary was left in %s", targets[k], dir);
    }
    void *back = NULL;
    size_t back_size = 0;
    bool kept = test_read_file(path, &back, &back_size) && back_size == sizeof old - 1 && memcmp(back, old, back_size) == 0;
    free(back);
    CHECK_MSG(kept, "the old file was changed");
    struct stat sb;
    CHECK_MSG(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "the link was replaced");
    CHECK_MSG(access(fresh, F_OK) != 0, "a failed write created %s", fresh);

    /* memory: the same status and message, *out untouched */
    void *out = &fill;
    size_t size = 12345;
    CHECK_STATUS(gguf_write_memory(w, &out, &size), RLX_STATUS_DEVICE);
    CHECK_MSG(strstr(rlx_last_error(), "sensor 42 melted") && strstr(rlx_last_error(), "second.weight"), "message: %s",
              rlx_last_error());
    CHECK(out == (void *)&fill && size == 12345);

    /* a fill that fails without a message: the status, the tensor, and not
     * an older message that happens to be in the buffer */
    fill[1].fail = RLX_STATUS_INTERNAL;
    fill[1].fail_msg = NULL;
    rlx_fail(RLX_STATUS_IO, "stale message");
    CHECK_STATUS(gguf_write_file(w, path), RLX_STATUS_INTERNAL);
    CHECK_MSG(strstr(rlx_last_error(), "second.weight") && !strstr(rlx_last_error(), "stale"), "message: %s",
              rlx_last_error());
    CHECK(count_tmp(dir) == 0);

    /* once it succeeds, the file is replaced and the link stays a link */
    fill[1].fail = RLX_OK;
    CHECK_OK(gguf_write_file(w, link));
    gguf_file *f;
    CHECK_OK(gguf_open(path, &f));
    const gguf_tensor *t = gguf_find_tensor(f, "second.weight");
    bool ok = t && t->size == sizeof x[1] && memcmp(t->data, x[1], sizeof x[1]) == 0;
    gguf_close(f);
    CHECK(ok);
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    gguf_writer_free(w);
    unlink(link);
    unlink(path);
    rmdir(dir);
}

/* Every bad argument fails both entry points with the same status and
 * message (one validation), and leaves the writer as it was. */
TEST(gguf_stream_rejects_bad_arguments) {
    gguf_writer *w = gguf_writer_new();
    CHECK(w);
    static float x[64];
    src_fill fill = {.src = (const uint8_t *)x, .size = sizeof x};
    int64_t d1[1] = {16}, d2[2] = {8, 8}, d5[5] = {1, 1, 1, 1, 64}, dn[1] = {-1}, d0[1] = {64};
    const struct { const char *name; uint32_t type, n_dims; const int64_t *dims; uint64_t size; } bad[] = {
        {"q", QTYPE_Q4_0, 1, d1, 9},      /* 16 % 32 */
        {"q", QTYPE_F32, 2, d2, 100},     /* size mismatch */
        {"q", QTYPE_F32, 2, d2, 0},       /* size mismatch, 0 */
        {"q", QTYPE_F32, 5, d5, 256},     /* too many dims */
        {"q", QTYPE_F32, 1, dn, 0},       /* negative dim */
        {"q", 4, 1, d0, 64},              /* unknown type (4 is unused in ggml) */
        {"", QTYPE_F32, 1, d0, 256},      /* empty name */
        {NULL, QTYPE_F32, 1, d0, 256},    /* NULL name */
        {"q", QTYPE_F32, 1, NULL, 256},   /* NULL dims */
    };
    for (size_t i = 0; i < RLX_ARRAY_LEN(bad); i++) {
        rlx_status sb = gguf_add_tensor(w, bad[i].name, bad[i].type, bad[i].n_dims, bad[i].dims, x, bad[i].size);
        char msg_b[1024];
        snprintf(msg_b, sizeof msg_b, "%s", rlx_last_error());
        rlx_status sf = gguf_add_tensor_fill(w, bad[i].name, bad[i].type, bad[i].n_dims, bad[i].dims, bad[i].size,
                                             copy_fill, &fill);
        CHECK_MSG(sb == RLX_STATUS_INVALID_ARGUMENT && sf == sb && strcmp(msg_b, rlx_last_error()) == 0 && msg_b[0],
                  "case %zu: borrowed %s '%s', fill %s '%s'", i, rlx_status_name(sb), msg_b, rlx_status_name(sf),
                  rlx_last_error());
    }
    CHECK_STATUS(gguf_add_tensor_fill(w, "q", QTYPE_F32, 1, d0, sizeof x, NULL, &fill), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(gguf_add_tensor_fill(NULL, "q", QTYPE_F32, 1, d0, sizeof x, copy_fill, &fill), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(gguf_add_tensor(w, "q", QTYPE_F32, 1, d0, NULL, sizeof x), RLX_STATUS_INVALID_ARGUMENT);
    /* names are shared: a filled tensor may not repeat a borrowed one, nor the reverse */
    CHECK_OK(gguf_add_tensor(w, "borrowed", QTYPE_F32, 1, d0, x, sizeof x));
    CHECK_OK(gguf_add_tensor_fill(w, "filled", QTYPE_F32, 1, d0, sizeof x, copy_fill, &fill));
    CHECK_STATUS(gguf_add_tensor_fill(w, "borrowed", QTYPE_F32, 1, d0, sizeof x, copy_fill, &fill), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "added twice"));
    CHECK_STATUS(gguf_add_tensor(w, "filled", QTYPE_F32, 1, d0, x, sizeof x), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "added twice"));
    void *out;
    size_t size;
    CHECK_OK(gguf_write_memory(w, &out, &size));
    gguf_file *f;
    rlx_status st = gguf_open_memory(out, size, &f);
    bool two = st == RLX_OK && gguf_tensor_count(f) == 2 && gguf_find_tensor(f, "borrowed") && gguf_find_tensor(f, "filled");
    if (st == RLX_OK) gguf_close(f);
    free(out);
    CHECK_MSG(two, "the rejected tensors changed the writer");
    CHECK_MSG(fill.calls == 1, "fill ran %d times for one write (only 'filled' uses it)", fill.calls);
    gguf_writer_free(w);
}

/* ------------------------------------------------------- rlx quantize */

static const char *rlx_cli(void) { return test_program("RLX_CLI", "build/rlx"); }

/* Writes a GGUF of n f32 (or f16) tensors named blk.L.<kind>.weight plus
 * output.weight, rows x cols each, random values; the f32 values in *vals. */
static rlx_status write_input(const char *path, int n, int64_t rows, int64_t cols, uint32_t type, float ***vals) {
    gguf_writer *w = gguf_writer_new();
    if (!w) return RLX_STATUS_OUT_OF_MEMORY;
    static const char *const kinds[3] = {"attn_v", "ffn_down", "attn_q"};
    float **v = calloc((size_t)n, sizeof *v);
    void **raw = calloc((size_t)n, sizeof *raw);
    char name[64];
    rlx_status st = v && raw ? gguf_set_str(w, "general.architecture", "llama") : RLX_STATUS_OUT_OF_MEMORY;
    uint64_t bytes = 0;
    if (!st) qtype_row_bytes(type, (uint64_t)(rows * cols), &bytes);
    for (int i = 0; i < n && !st; i++) {
        v[i] = malloc(sizeof(float) * (size_t)(rows * cols));
        raw[i] = malloc((size_t)bytes);
        if (!v[i] || !raw[i]) { st = RLX_STATUS_OUT_OF_MEMORY; break; }
        test_fill_uniform_f32(v[i], rows * cols, -2, 2);
        for (int64_t r = 0; r < rows && !st; r++)
            st = quant_quantize_row(type, v[i] + r * cols, (uint8_t *)raw[i] + (uint64_t)r * (bytes / (uint64_t)rows), cols);
        if (i == n - 1) snprintf(name, sizeof name, "output.weight");
        else snprintf(name, sizeof name, "blk.%d.%s.weight", i / 3, kinds[i % 3]);
        int64_t dims[2] = {cols, rows};
        if (!st) st = gguf_add_tensor(w, name, type, 2, dims, raw[i], bytes);
    }
    if (!st) st = gguf_write_file(w, path);
    gguf_writer_free(w);
    for (int i = 0; raw && i < n; i++) free(raw[i]);
    free(raw);
    if (vals && !st) *vals = v;
    else {
        for (int i = 0; v && i < n; i++) free(v[i]);
        free(v);
    }
    return st;
}

/* Every converted tensor equals its rows quantized one by one in-process
 * (the fill wrote each tensor's own rows, in order, at the right place). */
TEST(quantize_stream_matches_rows) {
    char path[] = "/tmp/rlx_quant_stream_XXXXXX", qpath[64], cmd[512], out[4096];
    CHECK(test_temp_file(path));
    snprintf(qpath, sizeof qpath, "%s.q", path);
    enum { N = 10, ROWS = 12, COLS = 256 };
    float **v = NULL;
    CHECK_OK(write_input(path, N, ROWS, COLS, QTYPE_F32, &v));
    snprintf(cmd, sizeof cmd, "%s quantize %s %s q4_K_M 2>&1", rlx_cli(), path, qpath);
    int code = test_run_command(cmd, out, sizeof out);
    gguf_file *f = NULL;
    rlx_status st = code == 0 ? gguf_open(qpath, &f) : RLX_STATUS_IO;
    bool ok = st == RLX_OK && gguf_tensor_count(f) == N;
    int n_q6 = 0;
    uint8_t want[ROWS * 210];
    for (int i = 0; ok && i < N; i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        uint64_t rb = 0;
        ok = (t->type == QTYPE_Q4_K || t->type == QTYPE_Q6_K) && qtype_row_bytes(t->type, COLS, &rb) &&
             t->size == rb * ROWS;
        for (int r = 0; ok && r < ROWS; r++) ok = quant_quantize_row(t->type, v[i] + r * COLS, want + r * rb, COLS) == RLX_OK;
        ok = ok && memcmp(t->data, want, (size_t)t->size) == 0;
        if (!ok) printf("    tensor %d '%s' (%s) differs\n", i, t->name, qtype_get(t->type)->name);
        n_q6 += t->type == QTYPE_Q6_K;
    }
    bool output_q6 = ok && gguf_find_tensor(f, "output.weight")->type == QTYPE_Q6_K;
    if (f) gguf_close(f);
    for (int i = 0; i < N; i++) free(v[i]);
    free(v);
    unlink(path);
    unlink(qpath);
    CHECK_MSG(code == 0, "quantize exited %d: %s", code, out);
    CHECK(ok);
    CHECK_MSG(output_q6 && n_q6 > 1 && n_q6 < N, "q4_K_M mix: %d of %d tensors q6_K", n_q6, N);
}

/* VmHWM of a process, in KiB, or -1. */
static long vm_hwm_kib(pid_t pid) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    long kib = -1;
    while (fp && fgets(line, sizeof line, fp))
        if (strncmp(line, "VmHWM:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (fp) fclose(fp);
    return kib;
}

/* Peak resident memory (KiB) of `rlx quantize in out type`: its VmHWM read
 * when it stops on its way out (ptrace's exit event), while its memory is
 * still there. Not ru_maxrss: that would also count the memory of this test
 * process, which the child is forked from. -2 when ptrace is not allowed
 * here, -1 when quantize fails. */
static long quantize_peak_kib(const char *in, const char *out, const char *type) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) { dup2(null, 1); dup2(null, 2); }
        /* LeakSanitizer (an ASan rlx) attaches to the threads at exit, which a traced process refuses */
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[512];
        snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", asan ? asan : "", asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0) _exit(126);
        execl(rlx_cli(), rlx_cli(), "quantize", in, out, type, (char *)NULL);
        _exit(127);
    }
    int status;
    long peak = -1;
    if (waitpid(pid, &status, 0) != pid) return -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status) == 126 ? -2 : -1;   /* no ptrace, or no exec */
    /* stopped by the SIGTRAP of a traced exec */
    ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_TRACEEXIT);
    ptrace(PTRACE_CONT, pid, NULL, NULL);
    for (;;) {
        if (waitpid(pid, &status, 0) != pid) return -1;
        if (WIFEXITED(status)) return WEXITSTATUS(status) == 0 ? peak : -1;
        if (WIFSIGNALED(status)) return -1;
        long sig = 0;
        if (status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) peak = vm_hwm_kib(pid);
        else sig = WSTOPSIG(status);   /* pass other signals on */
        ptrace(PTRACE_CONT, pid, NULL, (void *)sig);
    }
}

/* f16 -> f32 doubles every tensor. Holding the output until the write (the
 * old way) grew the peak by the whole output; filled at write time it grows
 * by the mapped input only. Compared between 1 and N tensors, so the
 * program's own footprint cancels out. */
TEST(quantize_stream_peak_memory) {
    char dir[] = "/tmp/rlx_quant_peak_XXXXXX";
    CHECK(mkdtemp(dir));
    char one[300], many[300], o1[300], on[300];
    snprintf(one, sizeof one, "%s/one.gguf", dir);
    snprintf(many, sizeof many, "%s/many.gguf", dir);
    snprintf(o1, sizeof o1, "%s/one.f32.gguf", dir);
    snprintf(on, sizeof on, "%s/many.f32.gguf", dir);
    enum { N = 24, ROWS = 256, COLS = 2048 };   /* 1 MiB of f16 in, 2 MiB of f32 out, per tensor */
    rlx_status s1 = write_input(one, 1, ROWS, COLS, QTYPE_F16, NULL);
    rlx_status sn = s1 ? s1 : write_input(many, N, ROWS, COLS, QTYPE_F16, NULL);
    long r1 = sn ? -1 : quantize_peak_kib(one, o1, "f32");
    long rn = r1 < 0 ? r1 : quantize_peak_kib(many, on, "f32");
    struct stat sb;
    bool out_ok = rn >= 0 && stat(on, &sb) == 0 && sb.st_size > (off_t)N * ROWS * COLS * 4;
    unlink(one); unlink(many); unlink(o1); unlink(on);
    rmdir(dir);
    CHECK_OK(s1);
    CHECK_OK(sn);
    if (r1 == -2 || rn == -2) SKIP("ptrace is not allowed here, so the child's peak cannot be read");
    CHECK_MSG(r1 > 0 && rn > 0 && out_ok, "quantize did not run (%ld, %ld KiB)", r1, rn);
    long in_kib = (long)(N - 1) * ROWS * COLS * 2 / 1024, out_kib = (long)(N - 1) * ROWS * COLS * 4 / 1024;
    long grew = rn - r1;
    printf("    peak %ld KiB for 1 tensor, %ld KiB for %d: +%ld KiB (input +%ld KiB, output +%ld KiB)\n", r1, rn, N, grew,
           in_kib, out_kib);
    CHECK_MSG(grew < in_kib + out_kib / 2, "peak grew by %ld KiB for %ld KiB more input: the output is held", grew, in_kib);
}
