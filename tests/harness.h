/*
 * harness.h — the test framework: self-registering tests, checks that report
 * file:line, a seeded RNG, and norm-relative comparisons against float64
 * references. One binary runs every test and ends with
 * "N passed, N failed, N skipped". A test that cannot run here (no device, a
 * CPU without the ISA) calls SKIP(reason): it counts as skipped, with the
 * reason printed, never as passed.
 */
#ifndef RLX_TEST_HARNESS_H
#define RLX_TEST_HARNESS_H

#include "rlx.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef void (*test_fn)(void);
void harness_register(const char *name, test_fn fn);
void harness_fail(const char *file, int line, const char *fmt, ...);
bool harness_failed(void);   /* current test has failed */
/* Marks the current test skipped and prints why; a failure recorded in the
 * same test still makes it fail. Use SKIP(...) to also return. */
void harness_skip(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Adds the counts of tests run by another program (the Python suite) to the
 * summary line. */
void harness_add_counts(int passed, int failed, int skipped);
bool harness_has_test(const char *name);   /* a test of that exact name is registered */

#define TEST(name)                                                              \
    static void test_##name(void);                                              \
    __attribute__((constructor)) static void register_##name(void) {            \
        harness_register(#name, test_##name);                                   \
    }                                                                           \
    static void test_##name(void)

/* On failure: record and return from the test function. */
#define CHECK(cond)                                                             \
    do { if (!(cond)) { harness_fail(__FILE__, __LINE__, "%s", #cond); return; } } while (0)
#define CHECK_MSG(cond, ...)                                                    \
    do { if (!(cond)) { harness_fail(__FILE__, __LINE__, __VA_ARGS__); return; } } while (0)
/* The test cannot run here: record the reason (printf format) and return. */
#define SKIP(...)                                                               \
    do { harness_skip(__FILE__, __LINE__, __VA_ARGS__); return; } while (0)
/* An rlx call that must succeed. */
#define CHECK_OK(expr)                                                          \
    do { rlx_status st_ = (expr);                                               \
         if (st_ != RLX_OK) { harness_fail(__FILE__, __LINE__, "%s -> %s: %s", #expr, \
                 rlx_status_name(st_), rlx_last_error()); return; } } while (0)
/* An rlx call that must fail with the given status and a non-empty message. */
#define CHECK_STATUS(expr, want)                                                \
    do { rlx_status st_ = (expr);                                               \
         if (st_ != (want) || rlx_last_error()[0] == 0) {                       \
             harness_fail(__FILE__, __LINE__, "%s -> %s (want %s), msg '%s'", #expr, \
                 rlx_status_name(st_), rlx_status_name(want), rlx_last_error()); return; } } while (0)

/* Deterministic RNG (splitmix64), reseeded per test from the test's name. */
uint64_t test_rand_u64(void);
double   test_rand_uniform(double lo, double hi);
int64_t  test_rand_int(int64_t lo, int64_t hi);   /* inclusive */
void     test_fill_uniform_f32(float *x, int64_t n, double lo, double hi);

/* Runs a shell command, captures up to cap-1 bytes of its stdout, and
 * returns its exit status (-1 if it could not run or was killed). */
int test_run_command(const char *cmd, char *out, size_t cap);
/* A program path from the environment (set by `make test`), or fallback. */
const char *test_program(const char *env, const char *fallback);
/* A new empty file from a mkstemp template ("/tmp/name_XXXXXX", rewritten in
 * place with the real name); false if it could not be made. */
bool test_temp_file(char *path_template);
/* A whole file into a malloc'ed buffer (*size bytes; free it); false if it
 * could not be read. */
bool test_read_file(const char *path, void **out, size_t *size);
/* Sets environment variable `name` to `value` (NULL: unset) and returns its
 * previous value (malloc'ed, NULL if unset) for test_env_restore, which each
 * test calls before it returns, so no test leaves a setting behind. Where an
 * option exists (rlx_compile_options: fuse, threads, backend, exact_quant),
 * tests set the option instead; this is for the overrides that have none. */
char *test_env_swap(const char *name, const char *value);
void  test_env_restore(const char *name, char *saved);   /* frees saved */
/* How many times `what` occurs in text (NULL text: 0); e.g. in a report. */
int   test_count(const char *text, const char *what);

/* ||got - want||_2 / max(||want||_2, tiny). */
double test_rel_error_f32_f64(const float *got, const double *want, int64_t n);
/* Checks rel error <= tol; on failure prints the worst element. */
bool   test_close_f32_f64(const char *what, const float *got, const double *want, int64_t n, double tol);

#endif
