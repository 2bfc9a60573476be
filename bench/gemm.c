/*
 * bench/gemm.c — rlx_sgemm against OpenBLAS cblas_sgemm, measured in the same
 * run, plus the FMA peak of the ISA this run uses, measured here (bench_cpu.h:
 * AVX-512, AVX2 + FMA or scalar, checked before any SIMD code runs), so
 * "% of peak" is against what this core really does with that ISA.
 *
 * Prints one table: shape, threads, rlx GFLOP/s, OpenBLAS GFLOP/s, ratio,
 * rlx % of the FMA peak (per-core peak x threads). GFLOP/s are medians over
 * the reps after warm-up.
 * Usage: bench_gemm [--tb] [--isa avx512|avx2|scalar]
 *   --tb: rlx uses a transposed [N,K] B, as linear layers do; OpenBLAS gets
 *   CblasTrans too. --isa (or RLX_BENCH_ISA): run a lower ISA than the CPU's
 *   best; rlx's kernel is forced to match. OpenBLAS picks its kernel when it
 *   loads: OPENBLAS_CORETYPE=Haswell (AVX2) or Prescott (SSE3) makes it match.
 */
#include "core/threadpool.h"
#include "cpu/kernels/gemm.h"
#include "bench_cpu.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void openblas_set_num_threads(int num_threads);
char *openblas_get_corename(void);

static double now_s(void) { return bench_now_s(); }

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
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
    gemm_epilogue epi = { NULL, 0, 0, NULL };
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
    int tb = 0;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--tb") == 0) tb = 1;
        else if (strcmp(argv[a], "--isa") == 0 && a + 1 < argc) {
            if (bench_isa_limit(argv[++a]) != 0) return 2;
        } else {
            fprintf(stderr, "usage: bench_gemm [--tb] [--isa avx512|avx2|scalar]\n");
            return 2;
        }
    }
    bench_isa isa = bench_cpu_isa();
    if (rlx_sgemm_force_kernel(isa == BENCH_ISA_SCALAR ? "portable" : bench_isa_name(isa)) != 0) {
        fprintf(stderr, "bench_gemm: rlx has no %s sgemm kernel for this CPU\n", bench_isa_name(isa));
        return 1;
    }
    const shape shapes[] = {
        { "256^3", 256, 256, 256 },
        { "1024^3", 1024, 1024, 1024 },
        { "2048^3", 2048, 2048, 2048 },
        { "128x768x768", 128, 768, 768 },
        { "128x3072x768", 128, 3072, 768 },
        { "128x768x3072", 128, 768, 3072 },
    };
    double peak = bench_fma_peak(isa);
    printf("CPU ISA: %s (best here: %s); peak per core (measured, %s): %.1f GFLOP/s\n", bench_isa_name(isa),
           bench_isa_name(bench_isa_detected()), bench_isa_peak_kind(isa), peak);
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
                   g_rlx / g_ob, 100.0 * g_rlx / (peak * threads));
            fflush(stdout);
        }
        free(A); free(B); free(C);
    }
    rlx_threadpool_free(pool2);
    return 0;
}
