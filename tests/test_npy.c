/*
 * test_npy.c — NPY read and write (rlx_npy_load / _save) against numpy:
 * tests/ref/npy_files.py writes files of every supported dtype, big-endian,
 * Fortran order, version 2.0, a scalar and an empty array, with the expected
 * row-major little-endian bytes; rlx must load exactly those bytes. Files
 * rlx writes must load in numpy with the same dtype, shape and values.
 * Malformed files (every truncation, crafted headers) are FORMAT, never a crash.
 * With RLX_FUZZ_SEEDS=DIR, npy_load_matches_numpy copies numpy's files there
 * as seeds for tests/fuzz/fuzz_npy.c.
 */
#include "harness.h"
#include "rlx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool npy_dir(char *dir) {
    if (!mkdtemp(dir)) return false;
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char cmd[1024], out[2048];
    snprintf(cmd, sizeof cmd, "%s tests/ref/npy_files.py write %s 2>&1", py, dir);
    int rc = test_run_command(cmd, out, sizeof out);
    if (rc != 0) harness_fail(__FILE__, __LINE__, "npy_files.py failed: %s", out);
    return rc == 0;
}

static void rm_dir(const char *dir) {
    char cmd[600], out[16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    test_run_command(cmd, out, sizeof out);
}

TEST(npy_load_matches_numpy) {
    char dir[] = "/tmp/rlx_npy_XXXXXX";
    if (!npy_dir(dir)) return;
    static const struct { const char *name; rlx_dtype dt; int rank; int64_t dims[3]; } want[] = {
        {"f32", RLX_F32, 2, {3, 4}}, {"f64_be", RLX_F64, 3, {2, 3, 2}}, {"f16", RLX_F16, 1, {5}},
        {"i32_fortran", RLX_I32, 3, {2, 3, 4}}, {"i64", RLX_I64, 2, {2, 2}}, {"u8", RLX_U8, 1, {7}},
        {"i8", RLX_I8, 1, {3}}, {"bool", RLX_BOOL, 1, {4}}, {"scalar", RLX_F32, 0, {0}},
        {"empty", RLX_F32, 2, {0, 3}}, {"f32_fortran_be", RLX_F32, 2, {3, 5}}, {"v2", RLX_F32, 2, {2, 3}},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        char path[600];
        snprintf(path, sizeof path, "%s/%s.npy", dir, want[k].name);
        rlx_tensor t;
        CHECK_MSG(rlx_npy_load(path, &t) == RLX_OK, "%s: %s", want[k].name, rlx_last_error());
        snprintf(path, sizeof path, "%s/%s.bin", dir, want[k].name);
        void *bin;
        size_t n;
        CHECK(test_read_file(path, &bin, &n));
        bool shape_ok = t.dtype == want[k].dt && t.rank == want[k].rank;
        for (int d = 0; shape_ok && d < t.rank; d++) shape_ok = t.dims[d] == want[k].dims[d];
        CHECK_MSG(shape_ok, "%s: dtype %s rank %d", want[k].name, rlx_dtype_name(t.dtype), t.rank);
        CHECK_MSG(t.bytes == n && (n == 0 || memcmp(t.data, bin, n) == 0), "%s: data differs", want[k].name);
        const char *seeds = getenv("RLX_FUZZ_SEEDS");   /* seed corpus for tests/fuzz/fuzz_npy.c */
        if (seeds && *seeds) {
            char cmd[1400], out[16];
            snprintf(cmd, sizeof cmd, "cp %s/%s.npy %s/", dir, want[k].name, seeds);
            test_run_command(cmd, out, sizeof out);
        }
        free(bin);
        free(t.data);
    }
    rm_dir(dir);
}

TEST(npy_save_loads_in_numpy) {
    char path[] = "/tmp/rlx_npy_out_XXXXXX";
    CHECK(test_temp_file(path));
    float v[6] = {1.5f, -2, 3, 4, 5, 6.25f};
    rlx_tensor t = {.dtype = RLX_F32, .rank = 2, .dims = {2, 3}, .data = v, .bytes = sizeof v};
    CHECK_OK(rlx_npy_save(path, &t));
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char cmd[1024], out[512];
    snprintf(cmd, sizeof cmd, "%s tests/ref/npy_files.py check %s 2>&1", py, path);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "<f4 [2, 3] True 17.75") != NULL, "numpy read: %s", out);
    int64_t iv[3] = {-5, 1LL << 40, 7};
    rlx_tensor ti = {.dtype = RLX_I64, .rank = 1, .dims = {3}, .data = iv, .bytes = sizeof iv};
    CHECK_OK(rlx_npy_save(path, &ti));
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "<i8 [3] True 1099511627778.0") != NULL, "numpy read: %s", out);
    float s = 2.5f;
    rlx_tensor ts = {.dtype = RLX_F32, .rank = 0, .data = &s, .bytes = 4};
    CHECK_OK(rlx_npy_save(path, &ts));
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    CHECK_MSG(strstr(out, "<f4 [] True 2.5") != NULL, "numpy read: %s", out);
    rlx_tensor back;
    CHECK_OK(rlx_npy_load(path, &back));
    CHECK(back.rank == 0 && back.bytes == 4 && *(float *)back.data == 2.5f);
    free(back.data);
    /* errors: bytes that do not fit the shape, a quantized dtype, a path that cannot be written */
    rlx_tensor bad = t;
    bad.bytes = 8;
    CHECK_STATUS(rlx_npy_save(path, &bad), RLX_STATUS_SHAPE);
    bad = t, bad.dtype = RLX_Q4_0;
    CHECK_STATUS(rlx_npy_save(path, &bad), RLX_STATUS_UNSUPPORTED);
    CHECK_STATUS(rlx_npy_save("/nonexistent/dir/x.npy", &t), RLX_STATUS_IO);
    CHECK_STATUS(rlx_npy_load("/nonexistent/x.npy", &back), RLX_STATUS_IO);
    unlink(path);
}

static rlx_status load_text(const char *header, size_t data_bytes) {
    char buf[512];
    size_t hl = strlen(header);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (char)(hl & 0xff), buf[9] = (char)(hl >> 8);
    memcpy(buf + 10, header, hl);
    memset(buf + 10 + hl, 0, data_bytes);
    rlx_tensor t;
    rlx_status st = rlx_npy_load_memory(buf, 10 + hl + data_bytes, &t);
    if (st == RLX_OK) free(t.data);
    return st;
}

TEST(npy_rejects_malformed_files) {
    CHECK_OK(load_text("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 8));
    CHECK_OK(load_text("{\"shape\": (1, 2), \"descr\": \"<i4\", \"fortran_order\": True}", 8));
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", 7), RLX_STATUS_FORMAT);
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': False}", 4), RLX_STATUS_FORMAT);           /* no shape */
    CHECK_STATUS(load_text("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}", 4), RLX_STATUS_FORMAT);
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': maybe, 'shape': ()}", 4), RLX_STATUS_FORMAT);
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}", 8), RLX_STATUS_FORMAT);
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 8), RLX_STATUS_FORMAT);
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}", 8),
                 RLX_STATUS_FORMAT);
    CHECK_STATUS(load_text("{'descr': '<c8', 'fortran_order': False, 'shape': (1,)}", 8), RLX_STATUS_UNSUPPORTED);
    CHECK_STATUS(load_text("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", 4), RLX_STATUS_FORMAT);
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}", 4), RLX_STATUS_UNSUPPORTED);
    CHECK_STATUS(load_text("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} junk", 4), RLX_STATUS_FORMAT);
    char header_past_end[] = "\x93NUMPY\x01\x00\xff\x00{}";
    rlx_tensor t;
    CHECK_STATUS(rlx_npy_load_memory(header_past_end, sizeof header_past_end - 1, &t), RLX_STATUS_FORMAT);
    CHECK_STATUS(rlx_npy_load_memory("\x93NUMPX", 6, &t), RLX_STATUS_FORMAT);
    CHECK_STATUS(rlx_npy_load_memory("\x93NUMPY\x09\x00\x00\x00", 10, &t), RLX_STATUS_UNSUPPORTED);
    CHECK_STATUS(rlx_npy_load_memory(NULL, 0, &t), RLX_STATUS_FORMAT);
    /* every truncation of a real file */
    char dir[] = "/tmp/rlx_npy_XXXXXX";
    if (!npy_dir(dir)) return;
    char path[600];
    snprintf(path, sizeof path, "%s/f64_be.npy", dir);
    void *buf;
    size_t n;
    CHECK(test_read_file(path, &buf, &n));
    for (size_t k = 0; k < n; k++) {
        rlx_status st = rlx_npy_load_memory(buf, k, &t);
        CHECK_MSG(st == RLX_STATUS_FORMAT, "truncated at %zu: status %d", k, (int)st);
    }
    free(buf);
    rm_dir(dir);
}
