/*
 * bench/gemm.c — rlx_sgemm against OpenBLAS cblas_sgemm, measured in the same
 * run, plus the machine's FMA peak measured here (AVX-512 and AVX2 FMA
 * throughput loops), so "% of peak" is against what this core really does.
 *
 * Prints one table: shape, threads, rlx GFLOP/s, OpenBLAS GFLOP/s, ratio,
 * rlx % of AVX-512 FMA peak (per-core peak x threads). GFLOP/s are medians
 * over the reps after warm-up. Usage: bench_gemm [--tb] (--tb: rlx uses a
 * transposed [N,K] B, as linear layers do; OpenBLAS gets CblasTrans too).
 */
#include "core/threadpool.h"
#include "cpu/kernels/gemm.h"

#include <cblas.h>
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* ------------------------------------------------------------ FMA peak */

/* Independent accumulators in named registers (an array would be kept in
 * memory): more chains than FMA latency x pipes on any current core, so the
 * loop is throughput bound. Returns GFLOP/s. */
#define FMA_CHAINS(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)
/* AVX2 has 16 ymm registers: 12 chains leave room for the operands. */
#define FMA_CHAINS12(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)

__attribute__((target("avx512f"))) static double fma_peak_avx512(long iters) {
    __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
#define DECL(i) __m512 a##i = _mm512_set1_ps((float)i);
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, x, y);
#define SUM(i) s = _mm512_add_ps(s, a##i);
    FMA_CHAINS(DECL)
    double t0 = now_s();
    for (long it = 0; it < iters; it++) { FMA_CHAINS(STEP) }
    double t = now_s() - t0;
    __m512 s = _mm512_setzero_ps();
    FMA_CHAINS(SUM)
    volatile float sink = _mm512_reduce_add_ps(s);
    (void)sink;
#undef DECL
#undef STEP
#undef SUM
    return (double)iters * 16 * 16 * 2 / t * 1e-9;
}

__attribute__((target("avx2,fma"))) static double fma_peak_avx2(long iters) {
    __m256 x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(0.9999999f);
#define DECL(i) __m256 a##i = _mm256_set1_ps((float)i);
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, x, y);
#define SUM(i) s = _mm256_add_ps(s, a##i);
    FMA_CHAINS12(DECL)
    double t0 = now_s();
    for (long it = 0; it < iters; it++) { FMA_CHAINS12(STEP) }
    double t = now_s() - t0;
    __m256 s = _mm256_setzero_ps();
    FMA_CHAINS12(SUM)
    float v[8];
    _mm256_storeu_ps(v, s);
    volatile float sink = v[0];
    (void)sink;
#undef DECL
#undef STEP
#undef SUM
    return (double)iters * 12 * 8 * 2 / t * 1e-9;
}

static double best_of(double (*f)(long), long iters, int reps) {
    double best = 0;
    for (int r = 0; r < reps; r++) {
        double g = f(iters);
        if (g > best) best = g;
    }
    return best;
}

/* ---------------------------------------------------------------- gemm */

typedef struct shape { const char *name; int M, N, K; } shape;

static void fill(float *x, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
}

/* Seconds per call for ~budget seconds of back-to-back calls (after one
 * warm-up call), appended to samples. */
static void time_block(void (*call)(void *), void *arg, double budget, double *samples, int *n,
                       int cap) {
    call(arg);
    double start = now_s();
    while (*n < cap) {
        double a = now_s();
        call(arg);
        double b = now_s();
        samples[(*n)++] = b - a;
        if (b - start > budget) break;
    }
}

static double median(double *x, int n) {
    qsort(x, (size_t)n, sizeof(double), cmp_double);
    return n ? x[n / 2] : 0;
}

typedef struct run_args {
    int M, N, K, tb;
    const float *A, *B;
    float *C;
    rlx_threadpool *pool;
} run_args;

static void call_rlx(void *p) {
    run_args *a = p;
    gemm_epilogue epi = { NULL, 0, 0 };
    rlx_sgemm(a->pool, a->M, a->N, a->K, a->A, a->K, a->B, a->tb ? a->K : a->N, a->tb, a->C, a->N,
              &epi);
}

static void call_openblas(void *p) {
    run_args *a = p;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, a->tb ? CblasTrans : CblasNoTrans, a->M, a->N, a->K,
                1.0f, a->A, a->K, a->B, a->tb ? a->K : a->N, 0.0f, a->C, a->N);
}

static void pause_ms(int ms) {
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
    int tb = argc > 1 && strcmp(argv[1], "--tb") == 0;
    const shape shapes[] = {
        { "256^3", 256, 256, 256 },
        { "1024^3", 1024, 1024, 1024 },
        { "2048^3", 2048, 2048, 2048 },
        { "128x768x768", 128, 768, 768 },
        { "128x3072x768", 128, 3072, 768 },
        { "128x768x3072", 128, 768, 3072 },
    };
    double peak512 = best_of(fma_peak_avx512, 20000000, 3);
    double peak256 = best_of(fma_peak_avx2, 20000000, 3);
    printf("FMA peak per core (measured): AVX-512 %.1f GFLOP/s, AVX2 %.1f GFLOP/s\n", peak512,
           peak256);
    printf("rlx kernel: %s; OpenBLAS core: %s; B layout: %s\n", rlx_sgemm_kernel_name(),
           openblas_get_corename(), tb ? "transposed [N,K]" : "[K,N]");
    rlx_threadpool *pool2 = rlx_threadpool_new(2);
    if (!pool2) {
        fprintf(stderr, "cannot start thread pool\n");
        return 1;
    }
    printf("\n| shape (MxNxK) | threads | rlx GFLOP/s | OpenBLAS GFLOP/s | rlx/OpenBLAS | rlx %% of peak |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const shape *sh = &shapes[s];
        size_t na = (size_t)sh->M * sh->K, nb = (size_t)sh->K * sh->N, nc = (size_t)sh->M * sh->N;
        float *A = aligned_alloc(64, (na * 4 + 63) / 64 * 64);
        float *B = aligned_alloc(64, (nb * 4 + 63) / 64 * 64);
        float *C = aligned_alloc(64, (nc * 4 + 63) / 64 * 64);
        if (!A || !B || !C) { fprintf(stderr, "out of memory\n"); return 1; }
        fill(A, na, 1);
        fill(B, nb, 2);
        double flops = 2.0 * sh->M * sh->N * sh->K;
        for (int threads = 1; threads <= 2; threads++) {
            run_args a = { sh->M, sh->N, sh->K, tb, A, B, C, threads == 2 ? pool2 : NULL };
            /* This VM's speed drifts over seconds (shared host), so the two
             * libraries take turns in short rounds and each gets the median of
             * all its samples. Each runs alone, after a pause, so neither
             * competes with the other's still-spinning idle threads. */
            enum { ROUNDS = 6, CAP = 4000 };
            static double s_rlx[CAP], s_ob[CAP];
            int n_rlx = 0, n_ob = 0;
            openblas_set_num_threads(threads);
            for (int r = 0; r < ROUNDS; r++) {
                time_block(call_rlx, &a, 0.06, s_rlx, &n_rlx, CAP);
                pause_ms(150);
                time_block(call_openblas, &a, 0.06, s_ob, &n_ob, CAP);
                pause_ms(150);
            }
            double t_rlx = median(s_rlx, n_rlx), t_ob = median(s_ob, n_ob);
            double g_rlx = flops / t_rlx * 1e-9, g_ob = flops / t_ob * 1e-9;
            printf("| %s | %d | %.1f | %.1f | %.2f | %.0f%% |\n", sh->name, threads, g_rlx, g_ob,
                   g_rlx / g_ob, 100.0 * g_rlx / (peak512 * threads));
            fflush(stdout);
        }
        free(A); free(B); free(C);
    }
    rlx_threadpool_free(pool2);
    return 0;
}
