/*
 * harness.c — runs registered tests (optionally filtered by substring args)
 * and prints one line per test ("ok", "FAIL" or "skip") and the summary line
 * "N passed, N failed, N skipped". The exit status is 1 when any test failed.
 */
#include "harness.h"
#include "core/core.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_TESTS 1024

static struct { const char *name; test_fn fn; } tests[MAX_TESTS];
static int n_tests;
static bool current_failed, current_skipped;
static uint64_t rng_state;

void harness_register(const char *name, test_fn fn) {
    if (n_tests < MAX_TESTS) { tests[n_tests].name = name; tests[n_tests].fn = fn; n_tests++; }
}

void harness_fail(const char *file, int line, const char *fmt, ...) {
    current_failed = true;
    fprintf(stdout, "    %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

bool harness_failed(void) { return current_failed; }

void harness_skip(const char *file, int line, const char *fmt, ...) {
    if (current_skipped) return;   /* the first reason is the one printed */
    current_skipped = true;
    fprintf(stdout, "    skipped (%s:%d): ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stdout, fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
}

bool harness_has_test(const char *name) {
    for (int i = 0; i < n_tests; i++) if (strcmp(tests[i].name, name) == 0) return true;
    return false;
}

uint64_t test_rand_u64(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double test_rand_uniform(double lo, double hi) {
    return lo + (hi - lo) * ((double)(test_rand_u64() >> 11) * (1.0 / 9007199254740992.0));
}

int64_t test_rand_int(int64_t lo, int64_t hi) {
    return lo + (int64_t)(test_rand_u64() % (uint64_t)(hi - lo + 1));
}

void test_fill_uniform_f32(float *x, int64_t n, double lo, double hi) {
    for (int64_t i = 0; i < n; i++) x[i] = (float)test_rand_uniform(lo, hi);
}

double test_rel_error_f32_f64(const float *got, const double *want, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)got[i] - want[i];
        if (isnan(got[i]) != isnan(want[i])) return INFINITY;
        if (isnan(want[i])) continue;
        if (isinf(want[i])) { if (got[i] != want[i]) return INFINITY; continue; }
        num += d * d;
        den += want[i] * want[i];
    }
    return sqrt(num) / (den > 1e-300 ? sqrt(den) : 1.0);
}

bool test_close_f32_f64(const char *what, const float *got, const double *want, int64_t n, double tol) {
    double err = test_rel_error_f32_f64(got, want, n);
    if (err <= tol) return true;
    int64_t worst = 0;
    double wd = -1;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (isnan(d)) { worst = i; break; }
        if (d > wd) { wd = d; worst = i; }
    }
    printf("    %s: rel error %.3g > %.3g; worst [%lld] got %.9g want %.9g\n", what, err, tol,
           (long long)worst, (double)got[worst], want[worst]);
    return false;
}

int test_run_command(const char *cmd, char *out, size_t cap) {
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    size_t n = cap ? fread(out, 1, cap - 1, f) : 0;
    if (cap) out[n] = 0;
    while (fgetc(f) != EOF) {}
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

bool test_temp_file(char *path_template) {
    int fd = mkstemp(path_template);
    if (fd < 0) return false;
    close(fd);
    return true;
}

bool test_read_file(const char *path, void **out, size_t *size) {
    *out = NULL;
    *size = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp) return false;
    long n = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
    bool ok = n >= 0 && fseek(fp, 0, SEEK_SET) == 0 && (*out = malloc(n > 0 ? (size_t)n : 1)) != NULL &&
              (*size = fread(*out, 1, (size_t)n, fp)) == (size_t)n;
    fclose(fp);
    if (!ok) {
        free(*out);
        *out = NULL;
    }
    return ok;
}

char *test_env_swap(const char *name, const char *value) {
    const char *old = getenv(name);
    char *saved = old ? strdup(old) : NULL;
    if (value) setenv(name, value, 1);
    else unsetenv(name);
    return saved;
}

void test_env_restore(const char *name, char *saved) {
    if (saved) setenv(name, saved, 1);
    else unsetenv(name);
    free(saved);
}

int test_count(const char *text, const char *what) {
    int n = 0;
    for (const char *s = text; s && (s = strstr(s, what)) != NULL; s++) n++;
    return n;
}

const char *test_program(const char *env, const char *fallback) {
    const char *p = getenv(env);
    return p && *p ? p : fallback;
}

static bool selected(const char *name, int argc, char **argv) {
    if (argc <= 1) return true;
    for (int i = 1; i < argc; i++) if (strstr(name, argv[i])) return true;
    return false;
}

/* Tests run outside this process (the Python suite), added to the totals. */
static int extra_passed, extra_failed, extra_skipped;

void harness_add_counts(int passed, int failed, int skipped) {
    extra_passed += passed;
    extra_failed += failed;
    extra_skipped += skipped;
}

int main(int argc, char **argv) {
    int passed = 0, failed = 0, skipped = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < n_tests; i++) {
        if (!selected(tests[i].name, argc, argv)) continue;
        current_failed = current_skipped = false;
        rng_state = rlx_hash_str(tests[i].name);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        tests[i].fn();
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        printf("%s %-48s %8.1f ms\n", current_failed ? "FAIL" : current_skipped ? "skip" : "ok  ", tests[i].name, ms);
        if (current_failed) failed++;
        else if (current_skipped) skipped++;
        else passed++;
    }
    passed += extra_passed;
    failed += extra_failed;
    skipped += extra_skipped;
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
