/*
 * bench_cpu.h — the CPU ISA a benchmark runs, checked before any SIMD code:
 * AVX-512, AVX2 + FMA, or scalar (baseline x86-64: SSE2, which the compiler
 * may use to vectorize "scalar" C), from __builtin_cpu_supports, lowered
 * (never raised) by RLX_BENCH_ISA=avx512|avx2|scalar or a bench's --isa, so
 * that the other paths can be run on a machine that has them all. Also the
 * measured per-core peak of that ISA (FMA, or SSE2 mul + add), for "% of
 * peak" columns.
 *
 * The AVX code is compiled with target attributes, so a file including this
 * header builds with no ISA flags and runs on any x86-64.
 */
#ifndef RLX_BENCH_CPU_H
#define RLX_BENCH_CPU_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

typedef enum bench_isa { BENCH_ISA_SCALAR = 0, BENCH_ISA_AVX2 = 1, BENCH_ISA_AVX512 = 2 } bench_isa;

static inline const char *bench_isa_name(bench_isa isa) {
    return isa == BENCH_ISA_AVX512 ? "avx512" : isa == BENCH_ISA_AVX2 ? "avx2" : "scalar";
}

/* What bench_fma_peak measures for isa. */
static inline const char *bench_isa_peak_kind(bench_isa isa) {
    return isa == BENCH_ISA_AVX512 ? "AVX-512 FMA" : isa == BENCH_ISA_AVX2 ? "AVX2 FMA" : "SSE2 mul + add";
}

/* What the CPU runs: AVX-512 F/VL/DQ + FMA (the sgemm kernel's set), AVX2 + FMA, or scalar. */
static inline bench_isa bench_isa_detected(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
        return BENCH_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return BENCH_ISA_AVX2;
#endif
    return BENCH_ISA_SCALAR;
}

/* name: "avx512", "avx2", "scalar" (also "portable"); -1 if unknown. */
static inline int bench_isa_parse(const char *name, bench_isa *out) {
    if (!name) return -1;
    if (strcmp(name, "avx512") == 0) *out = BENCH_ISA_AVX512;
    else if (strcmp(name, "avx2") == 0) *out = BENCH_ISA_AVX2;
    else if (strcmp(name, "scalar") == 0 || strcmp(name, "portable") == 0) *out = BENCH_ISA_SCALAR;
    else return -1;
    return 0;
}

static bench_isa bench_isa_value;
static int       bench_isa_known;

/* Limits the ISA to `name` (a bench's --isa); -1, with a message, if the name
 * is unknown or the CPU lacks it. */
static inline int bench_isa_limit(const char *name) {
    bench_isa want, have = bench_isa_detected();
    if (bench_isa_parse(name, &want) != 0) {
        fprintf(stderr, "bench: unknown ISA '%s' (avx512, avx2, scalar)\n", name);
        return -1;
    }
    if (want > have) {
        fprintf(stderr, "bench: this CPU has no %s (best: %s)\n", bench_isa_name(want), bench_isa_name(have));
        return -1;
    }
    bench_isa_value = want;
    bench_isa_known = 1;
    return 0;
}

/* The ISA this run uses: detected, or as limited by --isa or RLX_BENCH_ISA
 * (read once; an ISA the CPU lacks falls back to the detected one, said on stderr). */
static inline bench_isa bench_cpu_isa(void) {
    if (!bench_isa_known) {
        const char *env = getenv("RLX_BENCH_ISA");
        if (!(env && *env && bench_isa_limit(env) == 0)) bench_isa_value = bench_isa_detected();
        bench_isa_known = 1;
    }
    return bench_isa_value;
}

static inline double bench_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Independent accumulators in named registers (an array would be kept in
 * memory): more chains than FMA latency x pipes on any current core, so the
 * loops are throughput bound. Each returns GFLOP/s of one core. */
#define BENCH_CHAINS16(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)
/* AVX2 has 16 ymm registers: 12 chains leave room for the operands. */
#define BENCH_CHAINS12(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11)

#if defined(__x86_64__)
__attribute__((target("avx512f"))) static inline double bench_fma_peak_avx512(long iters) {
    __m512 x = _mm512_set1_ps(1.0000001f), y = _mm512_set1_ps(0.9999999f);
#define DECL(i) __m512 a##i = _mm512_set1_ps((float)i);
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, x, y);
#define SUM(i) s = _mm512_add_ps(s, a##i);
    BENCH_CHAINS16(DECL)
    double t0 = bench_now_s();
    for (long it = 0; it < iters; it++) { BENCH_CHAINS16(STEP) }
    double t = bench_now_s() - t0;
    __m512 s = _mm512_setzero_ps();
    BENCH_CHAINS16(SUM)
    volatile float sink = _mm512_reduce_add_ps(s);
    (void)sink;
#undef DECL
#undef STEP
#undef SUM
    return (double)iters * 16 * 16 * 2 / t * 1e-9;
}

__attribute__((target("avx2,fma"))) static inline double bench_fma_peak_avx2(long iters) {
    __m256 x = _mm256_set1_ps(1.0000001f), y = _mm256_set1_ps(0.9999999f);
#define DECL(i) __m256 a##i = _mm256_set1_ps((float)i);
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, x, y);
#define SUM(i) s = _mm256_add_ps(s, a##i);
    BENCH_CHAINS12(DECL)
    double t0 = bench_now_s();
    for (long it = 0; it < iters; it++) { BENCH_CHAINS12(STEP) }
    double t = bench_now_s() - t0;
    __m256 s = _mm256_setzero_ps();
    BENCH_CHAINS12(SUM)
    float v[8];
    _mm256_storeu_ps(v, s);
    volatile float sink = v[0];
    (void)sink;
#undef DECL
#undef STEP
#undef SUM
    return (double)iters * 12 * 8 * 2 / t * 1e-9;
}
#endif

/* Baseline: what the portable kernels get, SSE2 mul + add on x86-64 (4 lanes,
 * no FMA), plain float mul + add elsewhere. */
#if defined(__x86_64__)
static inline double bench_fma_peak_scalar(long iters) {
    __m128 x = _mm_set1_ps(1.0000001f), y = _mm_set1_ps(0.9999999f);
#define DECL(i) __m128 a##i = _mm_set1_ps((float)i);
#define STEP(i) a##i = _mm_add_ps(_mm_mul_ps(a##i, x), y);
#define SUM(i) s = _mm_add_ps(s, a##i);
    BENCH_CHAINS12(DECL)
    double t0 = bench_now_s();
    for (long it = 0; it < iters; it++) { BENCH_CHAINS12(STEP) }
    double t = bench_now_s() - t0;
    __m128 s = _mm_setzero_ps();
    BENCH_CHAINS12(SUM)
    volatile float sink = _mm_cvtss_f32(s);
    (void)sink;
#undef DECL
#undef STEP
#undef SUM
    return (double)iters * 12 * 4 * 2 / t * 1e-9;
}
#else
static inline double bench_fma_peak_scalar(long iters) {
    volatile float xv = 1.0000001f, yv = 0.9999999f;
    float x = xv, y = yv;
#define DECL(i) float a##i = (float)i;
#define STEP(i) a##i = a##i * x + y;
#define SUM(i) s += a##i;
    BENCH_CHAINS12(DECL)
    double t0 = bench_now_s();
    for (long it = 0; it < iters; it++) { BENCH_CHAINS12(STEP) }
    double t = bench_now_s() - t0;
    float s = 0;
    BENCH_CHAINS12(SUM)
    volatile float sink = s;
    (void)sink;
#undef DECL
#undef STEP
#undef SUM
    return (double)iters * 12 * 2 / t * 1e-9;
}
#endif

/* Best of 3 runs of the per-core peak of `isa` (GFLOP/s). */
static inline double bench_fma_peak(bench_isa isa) {
    double best = 0;
    for (int r = 0; r < 3; r++) {
        double g;
#if defined(__x86_64__)
        if (isa == BENCH_ISA_AVX512) g = bench_fma_peak_avx512(20000000);
        else if (isa == BENCH_ISA_AVX2) g = bench_fma_peak_avx2(20000000);
        else
#endif
            g = bench_fma_peak_scalar(20000000);
        if (g > best) best = g;
    }
    return best;
}

#endif
