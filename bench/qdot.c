/*
 * bench/qdot.c — decode-shaped quantized matvec on the CPU (DEQUANT_MATMUL
 * with M = 1): the 8-bit-activation fast path (cpu/kernels/qdot.h) against the
 * exact generic path (exact_quant = 1: decode each row to f32, dot),
 * for Llama-3.2-1B-like shapes, and f32 weights for reference (fast column:
 * rlx_sgemm with M = 1 and B as [N, K]; generic column: dequant_matmul f32).
 *
 * Weights are cold, as in real decode: a graph holds enough copies of the
 * matrix (independent params, each its own dequant_matmul) that one run
 * streams >= 256 MiB, more than this VM's last-level cache; time per matvec
 * is run time / copies. The floor is the read bandwidth measured here (a
 * large-array sum, 1 GiB, AVX2 or SSE2 as this run's ISA allows) with the same
 * thread count.
 *
 * Prints one table: shape, type, threads, fast us and GB/s (weight bytes per
 * second), generic us and GB/s, speedup, fast GB/s as % of the read floor.
 * --types q4_K,q8_0 limits the types (by dtype name) in both modes.
 * Times are medians after a warm-up.
 * Usage: bench_qdot [--quick] [--isa avx512|avx2|portable] (default: the
 * run-time choice, checked first (bench_cpu.h); --isa or RLX_BENCH_ISA forces
 * a lower ISA for the qdot and sgemm kernels and the read floor)
 * [--no-exact] (skip the slow exact path: its columns then repeat "fast").
 *
 * Prefill mode, --m M (M > 1): DEQUANT_MATMUL with M x rows for every type
 * with a kernel, the gemm kernels against the exact path, on one warm weight
 * matrix per shape (the work is compute-bound), in GMAC/s (M*N*K per second).
 * --threads T (up to T, default 2), --types q4_K,q8_0 (a subset, by dtype
 * name), --no-exact (skip the slow exact column).
 *
 * Kernel mode, --kernels: the dot / gemm kernels alone on one thread for
 * M in {1, 4, 8, 16, 32, 128} (and M = 1 on 256 L2-resident rows), timed in
 * thread CPU time (robust to other tenants of a shared VM); --isa and
 * --types apply.
 */
#include "rlx.h"
#include "core/core.h"
#include "core/threadpool.h"
#include "cpu/kernels/gemm.h"
#include "cpu/kernels/qdot.h"
#include "quant/quant.h"
#include "bench_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int quick, skip_exact;
static const char *types_filter;

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 0x1234567;
static float frand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 11) / 9007199254740992.0) * 2 - 1;
}

/* ------------------------------------------------- read bandwidth floor */

typedef struct { const float *x; size_t n; float part[64]; } sum_ctx;

#if defined(__x86_64__)
__attribute__((target("avx2"))) static void sum_range_avx2(void *p, int64_t b, int64_t e, int worker) {
    sum_ctx *c = p;
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
    for (int64_t blk = b; blk < e; blk++) {
        const float *x = c->x + (size_t)blk * 4096;
        for (int i = 0; i < 4096; i += 32) {
            a0 = _mm256_add_ps(a0, _mm256_load_ps(x + i));
            a1 = _mm256_add_ps(a1, _mm256_load_ps(x + i + 8));
            a2 = _mm256_add_ps(a2, _mm256_load_ps(x + i + 16));
            a3 = _mm256_add_ps(a3, _mm256_load_ps(x + i + 24));
        }
    }
    float o[8];
    _mm256_storeu_ps(o, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    c->part[worker] += o[0] + o[3] + o[7];
}
#endif

/* Baseline x86-64 (SSE2) or portable C: the same sum, 4 lanes. */
static void sum_range_base(void *p, int64_t b, int64_t e, int worker) {
    sum_ctx *c = p;
    float a0[4] = {0}, a1[4] = {0};
    for (int64_t blk = b; blk < e; blk++) {
        const float *x = c->x + (size_t)blk * 4096;
        for (int i = 0; i < 4096; i += 8)
            for (int l = 0; l < 4; l++) {
                a0[l] += x[i + l];
                a1[l] += x[i + 4 + l];
            }
    }
    c->part[worker] += a0[0] + a1[1] + a0[3];
}

/* Median GB/s of summing 1 GiB of floats with `threads` threads. */
static double read_bw(int threads) {
    size_t n = (size_t)1 << 28;
    float *x = rlx_aligned_alloc(n * sizeof(float));
    if (!x) return 0;
    for (size_t i = 0; i < n; i++) x[i] = 1.0f;
    rlx_threadpool *pool = threads > 1 ? rlx_threadpool_new(threads) : NULL;
    sum_ctx c = {x, n, {0}};
    double t[9];
    for (int r = 0; r < 9; r++) {
        double t0 = now_s();
#if defined(__x86_64__)
        rlx_parallel_for(pool, (int64_t)(n / 4096), 1024, bench_cpu_isa() >= BENCH_ISA_AVX2 ? sum_range_avx2 : sum_range_base, &c);
#else
        rlx_parallel_for(pool, (int64_t)(n / 4096), 1024, sum_range_base, &c);
#endif
        t[r] = now_s() - t0;
    }
    qsort(t, 9, sizeof t[0], cmp_d);
    if (c.part[0] == 42) printf("!");   /* keep the sums alive */
    rlx_threadpool_free(pool);
    rlx_aligned_free(x);
    return (double)(n * sizeof(float)) / t[4] / 1e9;
}

/* ------------------------------------------------------------ matvec */

/* Median seconds per call of fn over reps (>= 3, until ~0.4 s), after a warm-up. */
typedef int (*call_fn)(void *);
static double time_med(call_fn fn, void *ctx) {
    if (fn(ctx)) return -1;
    double t[64], start = now_s();
    int r = 0;
    while (r < 64 && (r < 3 || now_s() - start < (quick ? 0.15 : 0.4))) {
        double t0 = now_s();
        if (fn(ctx)) return -1;
        t[r++] = now_s() - t0;
    }
    qsort(t, (size_t)r, sizeof t[0], cmp_d);
    return t[r / 2];
}

typedef struct { rlx_exec *e; rlx_tensor in; } run_ctx;
static int run_exec(void *p) {
    run_ctx *c = p;
    return rlx_exec_run(c->e, &c->in, 1) != RLX_OK;
}

typedef struct { rlx_threadpool *pool; int64_t N, K; const float *x, *w; float *y; } sgemm_ctx;
static int run_sgemm(void *p) {
    sgemm_ctx *c = p;
    gemm_epilogue epi = {0};
    return rlx_sgemm(c->pool, 1, c->N, c->K, c->x, c->K, c->w, c->K, 1, c->y, c->N, &epi);
}

/* Weights of dt: 64 distinct random rows, repeated to N rows. */
static void *make_weights(rlx_dtype dt, int64_t N, int64_t K, size_t *bytes) {
    uint32_t qt = quant_type_of_dtype(dt);
    int64_t one[1] = {K};
    size_t rb = rlx_tensor_bytes(dt, 1, one);
    *bytes = rb * (size_t)N;
    uint8_t *w = malloc(*bytes);
    float *f = malloc(sizeof(float) * (size_t)K);
    if (!w || !f) { free(w); free(f); return NULL; }
    for (int64_t r = 0; r < 64 && r < N; r++) {
        for (int64_t k = 0; k < K; k++) f[k] = frand();
        quant_quantize_row(qt, f, w + (size_t)r * rb, K);
    }
    for (int64_t r = 64; r < N; r++) memcpy(w + (size_t)r * rb, w + (size_t)(r % 64) * rb, rb);
    free(f);
    return w;
}

/* Seconds per matvec through DEQUANT_MATMUL, copies weights streamed per run. */
static double time_dequant(rlx_dtype dt, const void *w, size_t bytes, int64_t N, int64_t K, int copies, int threads,
                           const float *x, bool exact) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {1, K}, wd[2] = {N, K};
    rlx_node xn = rlx_input(g, "x", RLX_F32, 2, xd);
    char name[32];
    for (int i = 0; i < copies; i++) {
        snprintf(name, sizeof name, "w%d", i);
        rlx_node wn = rlx_param(g, name, dt, 2, wd);
        snprintf(name, sizeof name, "y%d", i);
        rlx_output(g, name, rlx_dequant_matmul(g, xn, wn));
    }
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.threads = threads;
    o.exact_quant = exact;
    rlx_exec *e = NULL;
    double t = -1;
    if (rlx_compile(g, &o, &e) == RLX_OK) {
        bool ok = true;
        for (int i = 0; i < copies && ok; i++) {
            snprintf(name, sizeof name, "w%d", i);
            ok = rlx_exec_set_param(e, name, dt, w, bytes) == RLX_OK;
        }
        run_ctx c = {e, {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, K}, .data = (void *)x,
                         .bytes = sizeof(float) * (size_t)K}};
        if (ok) t = time_med(run_exec, &c);
    }
    if (t < 0) fprintf(stderr, "bench_qdot: %s\n", rlx_last_error());
    rlx_exec_free(e);
    rlx_graph_free(g);
    return t < 0 ? t : t / copies;
}

/* Seconds per DEQUANT_MATMUL of M rows against one (warm) weight matrix. */
static double time_dequant_m(rlx_dtype dt, const void *w, size_t bytes, int64_t N, int64_t K, int64_t M, int threads,
                             const float *x, bool exact) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wd[2] = {N, K};
    rlx_output(g, "y", rlx_dequant_matmul(g, rlx_input(g, "x", RLX_F32, 2, xd), rlx_param(g, "w", dt, 2, wd)));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.threads = threads;
    o.exact_quant = exact;
    rlx_exec *e = NULL;
    double t = -1;
    if (rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param(e, "w", dt, w, bytes) == RLX_OK) {
        run_ctx c = {e, {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = (void *)x,
                         .bytes = sizeof(float) * (size_t)(M * K)}};
        t = time_med(run_exec, &c);
    }
    if (t < 0) fprintf(stderr, "bench_qdot: %s\n", rlx_last_error());
    rlx_exec_free(e);
    rlx_graph_free(g);
    return t;
}

/* ------------------------------------------------------------ prefill */

/* DEQUANT_MATMUL with M rows, every type: the gemm kernels against the exact
 * path, one warm weight matrix (prefill is compute-bound; the weights of a
 * shape fit the last-level cache or stream at a small fraction of the time). */
static int prefill_table(int64_t M, int threads_max) {
    static const struct { int64_t N, K; } shapes[] = {{2048, 2048}, {8192, 2048}, {2048, 8192}, {4096, 4096}, {14336, 4096}};
    static const rlx_dtype types[] = {RLX_Q8_0, RLX_Q4_0, RLX_Q4_1, RLX_Q5_0, RLX_Q5_1,
                                      RLX_Q2_K, RLX_Q3_K, RLX_Q4_K, RLX_Q5_K, RLX_Q6_K};
    printf("qdot ISA: %s; M = %lld x rows; GMAC/s = M*N*K / time / 1e9\n\n", qdot_isa_name(), (long long)M);
    printf("| N x K | type | threads | gemm isa | fast ms | fast GMAC/s | exact ms | exact GMAC/s | fast/exact |\n");
    printf("|---|---|---:|---|---:|---:|---:|---:|---:|\n");
    size_t nshapes = quick ? 2 : sizeof shapes / sizeof shapes[0];
    for (size_t s = 0; s < nshapes; s++) {
        int64_t N = shapes[s].N, K = shapes[s].K;
        float *x = malloc(sizeof(float) * (size_t)(M * K));
        for (int64_t k = 0; k < M * K; k++) x[k] = frand();
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            if (types_filter && !strstr(types_filter, rlx_dtype_name(types[t]))) continue;
            size_t bytes;
            void *w = make_weights(types[t], N, K, &bytes);
            if (!w) { fprintf(stderr, "bench_qdot: out of memory\n"); return 1; }
            qdot_kernel k;
            bool have = qdot_find(quant_type_of_dtype(types[t]), &k);
            for (int threads = 1; threads <= threads_max; threads++) {
                double fast = time_dequant_m(types[t], w, bytes, N, K, M, threads, x, false);
                double gen = skip_exact ? 0 : time_dequant_m(types[t], w, bytes, N, K, M, threads, x, true);
                if (fast <= 0 || gen < 0) return 1;
                double macs = (double)M * (double)N * (double)K / 1e9;
                if (skip_exact)
                    printf("| %lldx%lld | %s | %d | %s | %.2f | %.1f | - | - | - |\n", (long long)N, (long long)K,
                           rlx_dtype_name(types[t]), threads, have ? k.gemm_isa : "none", fast * 1e3, macs / fast);
                else
                    printf("| %lldx%lld | %s | %d | %s | %.2f | %.1f | %.2f | %.1f | %.1fx |\n", (long long)N, (long long)K,
                           rlx_dtype_name(types[t]), threads, have ? k.gemm_isa : "none", fast * 1e3, macs / fast,
                           gen * 1e3, macs / gen, gen / fast);
                fflush(stdout);
            }
            free(w);
        }
        free(x);
    }
    return 0;
}

/* ------------------------------------------------------------ kernels */

static double thread_cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The kernels alone, one thread, timed in thread CPU time (time the VM
 * gives to other tenants does not count): a 2048 x 2048 weight matrix
 * (L2/L3-resident, as one layer's weights during prefill) against M x rows
 * already quantized; M = 1 is the dot, M > 1 qdot_gemm over 16-row slices
 * (the row tiles below packed_min_rows, the packed panels from there on).
 * GMAC/s = M*N*K / CPU seconds, median of 9. The first column, "M=1 (L2)",
 * is the dot over the first 256 rows only, 8 times (<= 0.6 MB of weights:
 * L2-resident, so it measures the dot's instruction throughput, where the
 * full matrix of the wider types is served by L3). */
static int kernels_table(void) {
    static const rlx_dtype types[] = {RLX_Q8_0, RLX_Q4_0, RLX_Q4_1, RLX_Q5_0, RLX_Q5_1,
                                      RLX_Q2_K, RLX_Q3_K, RLX_Q4_K, RLX_Q5_K, RLX_Q6_K};
    static const int64_t Ms[] = {1, 4, 8, 16, 32, 128};
    const int64_t N = 2048, K = 2048, MMAX = 128;
    float *x = malloc(sizeof(float) * (size_t)(MMAX * K)), *out = malloc(sizeof(float) * (size_t)(MMAX * N));
    if (!x || !out) return 1;
    for (int64_t i = 0; i < MMAX * K; i++) x[i] = frand();
    printf("qdot ISA: %s; %lldx%lld weights, 1 thread, GMAC/s per CPU second (median of 9)\n\n", qdot_isa_name(),
           (long long)N, (long long)K);
    printf("| type | M=1 (L2) | M=1 (dot) |");
    for (size_t j = 1; j < sizeof Ms / sizeof Ms[0]; j++) printf(" M=%lld |", (long long)Ms[j]);
    printf("\n|---|---:|");
    for (size_t j = 0; j < sizeof Ms / sizeof Ms[0]; j++) printf("---:|");
    printf("\n");
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        if (types_filter && !strstr(types_filter, rlx_dtype_name(types[t]))) continue;
        qdot_kernel k;
        if (!qdot_find(quant_type_of_dtype(types[t]), &k)) continue;
        size_t bytes, rb = 0;
        uint8_t *w = make_weights(types[t], N, K, &bytes);
        size_t ab = qdot_act_bytes(k.act, K);
        uint8_t *xq = rlx_aligned_alloc(ab * (size_t)MMAX);
        void *scratch = rlx_aligned_alloc(qdot_gemm_scratch_bytes(K));
        if (!w || !xq || !scratch) return 1;
        rb = bytes / (size_t)N;
        for (int64_t m = 0; m < MMAX; m++) k.quantize(x + m * K, K, xq + (size_t)m * ab);
        printf("| %s |", rlx_dtype_name(types[t]));
        {
            const int64_t NL2 = 256;
            double tt[9];
            for (int r = 0; r < 9; r++) {
                double t0 = thread_cpu_s();
                for (int rep = 0; rep < 8; rep++)
                    for (int64_t n = 0; n < NL2; n++) out[n] = k.dot(K, w + (size_t)n * rb, xq);
                tt[r] = thread_cpu_s() - t0;
            }
            qsort(tt, 9, sizeof tt[0], cmp_d);
            printf(" %.0f |", 8.0 * (double)NL2 * (double)K / tt[4] / 1e9);
        }
        for (size_t j = 0; j < sizeof Ms / sizeof Ms[0]; j++) {
            int64_t M = Ms[j];
            double tt[9];
            for (int r = 0; r < 9; r++) {
                double t0 = thread_cpu_s();
                if (M == 1)
                    for (int64_t n = 0; n < N; n++) out[n] = k.dot(K, w + (size_t)n * rb, xq);
                else
                    for (int64_t n0 = 0; n0 < N; n0 += 16)
                        qdot_gemm(&k, K, w + (size_t)n0 * rb, rb, 16, xq, ab, M, out + n0, N, scratch);
                tt[r] = thread_cpu_s() - t0;
            }
            qsort(tt, 9, sizeof tt[0], cmp_d);
            printf(" %.0f |", (double)M * (double)N * (double)K / tt[4] / 1e9);
            fflush(stdout);
        }
        printf("\n");
        free(w);
        rlx_aligned_free(xq);
        rlx_aligned_free(scratch);
    }
    free(x);
    free(out);
    return 0;
}

int main(int argc, char **argv) {
    int64_t m_rows = 1;
    int kernels = 0;
    int threads_max = 2;
    const char *isa_arg = NULL;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[a], "--isa") == 0 && a + 1 < argc) {
            isa_arg = argv[++a];
        } else if (strcmp(argv[a], "--m") == 0 && a + 1 < argc) {
            m_rows = atoll(argv[++a]);
        } else if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc) {
            threads_max = atoi(argv[++a]);
        } else if (strcmp(argv[a], "--types") == 0 && a + 1 < argc) {
            types_filter = argv[++a];
        } else if (strcmp(argv[a], "--no-exact") == 0) {
            skip_exact = 1;
        } else if (strcmp(argv[a], "--kernels") == 0) {
            kernels = 1;
        } else {
            fprintf(stderr, "usage: bench_qdot [--quick] [--isa avx512|avx2|portable] [--m M [--threads T] [--types q4_K,q8_0] "
                            "[--no-exact]] [--kernels]\n");
            return 1;
        }
    }
    if (m_rows < 1 || threads_max < 1) { fprintf(stderr, "bench_qdot: bad --m or --threads\n"); return 1; }
    if (isa_arg && bench_isa_limit(isa_arg) != 0) return 1;
    bench_isa isa = bench_cpu_isa();   /* --isa, else RLX_BENCH_ISA, else the CPU's best */
    if (isa_arg || isa != bench_isa_detected()) {
        const char *k = isa == BENCH_ISA_SCALAR ? "portable" : bench_isa_name(isa);
        if (qdot_force_isa(k) != 0 || rlx_sgemm_force_kernel(k) != 0) {
            fprintf(stderr, "bench_qdot: ISA %s not available for the qdot or sgemm kernels\n", k);
            return 1;
        }
    }
    if (kernels) return kernels_table();
    if (m_rows > 1) return prefill_table(m_rows, threads_max);
    static const struct { int64_t N, K; } shapes[] = {{2048, 2048}, {8192, 2048}, {2048, 8192}, {128256, 2048}};
    static const rlx_dtype types[] = {RLX_Q8_0, RLX_Q4_0, RLX_Q4_1, RLX_Q5_0, RLX_Q5_1, RLX_Q2_K,
                                      RLX_Q3_K, RLX_Q4_K, RLX_Q5_K, RLX_Q6_K, RLX_F32};
    double bw[3] = {0, read_bw(1), read_bw(2)};
    printf("read bandwidth floor (1 GiB sum, %s): 1 thread %.1f GB/s, 2 threads %.1f GB/s\n",
           bench_cpu_isa() >= BENCH_ISA_AVX2 ? "AVX2" : "portable C", bw[1], bw[2]);
    printf("qdot ISA: %s; sgemm kernel: %s; weights streamed per run >= 256 MiB (cold)\n\n", qdot_isa_name(),
           rlx_sgemm_kernel_name());
    printf("| N x K | type | threads | fast us | fast GB/s | generic us | generic GB/s | fast/generic | fast %% of read BW |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    size_t nshapes = quick ? 2 : sizeof shapes / sizeof shapes[0];
    for (size_t s = 0; s < nshapes; s++) {
        int64_t N = shapes[s].N, K = shapes[s].K;
        float *x = malloc(sizeof(float) * (size_t)K);
        for (int64_t k = 0; k < K; k++) x[k] = frand();
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            if (types_filter && !strstr(types_filter, rlx_dtype_name(types[t]))) continue;
            size_t bytes;
            void *w = make_weights(types[t], N, K, &bytes);
            if (!w) { fprintf(stderr, "bench_qdot: out of memory\n"); return 1; }
            int copies = (int)RLX_MIN((int64_t)128, (int64_t)(((size_t)256 << 20) + bytes - 1) / (int64_t)bytes);
            for (int threads = 1; threads <= 2; threads++) {
                double fast, gen = skip_exact ? 0 : time_dequant(types[t], w, bytes, N, K, copies, threads, x, true);
                if (types[t] == RLX_F32) {
                    /* rlx_sgemm on the same cold working set: rotate over copies of w */
                    int nc = copies;
                    float **wc = malloc(sizeof(float *) * (size_t)nc), *y = malloc(sizeof(float) * (size_t)N);
                    for (int i = 0; i < nc; i++) { wc[i] = malloc(bytes); memcpy(wc[i], w, bytes); }
                    rlx_threadpool *pool = threads > 1 ? rlx_threadpool_new(threads) : NULL;
                    double tt[16];
                    int reps = quick ? 3 : 7;
                    for (int r = 0; r < reps; r++) {
                        double t0 = now_s();
                        for (int i = 0; i < nc; i++) {
                            sgemm_ctx c = {pool, N, K, x, wc[i], y};
                            run_sgemm(&c);
                        }
                        tt[r] = (now_s() - t0) / nc;
                    }
                    qsort(tt, (size_t)reps, sizeof tt[0], cmp_d);
                    fast = tt[reps / 2];
                    rlx_threadpool_free(pool);
                    for (int i = 0; i < nc; i++) free(wc[i]);
                    free(wc);
                    free(y);
                } else {
                    fast = time_dequant(types[t], w, bytes, N, K, copies, threads, x, false);
                }
                if (fast <= 0 || (gen <= 0 && !skip_exact)) return 1;
                if (skip_exact) gen = fast;   /* --no-exact: the generic columns repeat fast */
                printf("| %lldx%lld | %s%s | %d | %.1f | %.1f | %.1f | %.1f | %.2fx | %.0f%% |\n", (long long)N, (long long)K,
                       rlx_dtype_name(types[t]), types[t] == RLX_F32 ? " (fast: sgemm)" : "", threads, fast * 1e6,
                       (double)bytes / fast / 1e9, gen * 1e6, (double)bytes / gen / 1e9, gen / fast,
                       100.0 * (double)bytes / fast / 1e9 / bw[threads]);
                fflush(stdout);
            }
            free(w);
        }
        free(x);
    }
    return 0;
}
