/*
 * conv_dw.c — direct depthwise convolution (conv_dw.h). Per output row, the
 * row starts at the bias and each (kh, kw) tap adds w * x over the columns
 * whose input is inside the image (no padded copies, no branches in the
 * inner loop), which vectorizes over output columns (contiguous at stride 1).
 * The same C is compiled for AVX-512, AVX2+FMA and the baseline (like
 * vmath.c) and picked once from the CPU's features; ISO C mode does not
 * contract a*b+c, so every ISA gives the same bits. Planes (n, c) are split
 * over threads.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "cpu/kernels/conv_dw.h"
#include "cpu/cpu_kernel.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DW_X86_DISPATCH 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DW_INLINE static inline __attribute__((always_inline))
#else
#define DW_INLINE static inline
#endif

/* Output columns [lo, hi) whose input column o*s + off is in [0, n). */
DW_INLINE void valid_cols(int64_t ow, int64_t s, int64_t off, int64_t n, int64_t *lo, int64_t *hi) {
    int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
    int64_t h = n - 1 - off < 0 ? 0 : (n - 1 - off) / s + 1;
    *lo = l < ow ? l : ow;
    *hi = h < ow ? h : ow;
    if (*hi < *lo) *hi = *lo;
}

DW_INLINE void dw_planes_body(const cpu_conv_dw_args *a, int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; p++) {
        int64_t c = p % a->C;
        const float *x = a->x + p * a->ih * a->iw, *w = a->w + c * a->kh * a->kw;
        float bias = a->b ? a->b[c] : 0.0f;
        for (int64_t oy = 0; oy < a->oh; oy++) {
            float *restrict y = a->y + (p * a->oh + oy) * a->ow;
            for (int64_t ox = 0; ox < a->ow; ox++) y[ox] = bias;
            for (int64_t ky = 0; ky < a->kh; ky++) {
                int64_t iy = oy * a->sh - a->ph + ky * a->dh;
                if (iy < 0 || iy >= a->ih) continue;
                const float *restrict xr = x + iy * a->iw;
                for (int64_t kx = 0; kx < a->kw; kx++) {
                    int64_t off = kx * a->dw - a->pw, lo, hi;
                    valid_cols(a->ow, a->sw, off, a->iw, &lo, &hi);
                    float wv = w[ky * a->kw + kx];
                    const float *restrict xs = xr + off;
                    if (a->sw == 1)
                        for (int64_t ox = lo; ox < hi; ox++) y[ox] += wv * xs[ox];
                    else if (a->sw == 2)
                        for (int64_t ox = lo; ox < hi; ox++) y[ox] += wv * xs[2 * ox];
                    else
                        for (int64_t ox = lo; ox < hi; ox++) y[ox] += wv * xs[ox * a->sw];
                }
            }
            if (a->act == RLX_ACT_RELU)
                for (int64_t ox = 0; ox < a->ow; ox++) y[ox] = y[ox] > 0.0f ? y[ox] : 0.0f;
            else if (a->act != RLX_ACT_NONE)
                for (int64_t ox = 0; ox < a->ow; ox++) y[ox] = cpu_activate(y[ox], a->act);
        }
    }
}

typedef void (*dw_fn)(const cpu_conv_dw_args *a, int64_t begin, int64_t end);

static void dw_base(const cpu_conv_dw_args *a, int64_t begin, int64_t end) { dw_planes_body(a, begin, end); }
#ifdef DW_X86_DISPATCH
__attribute__((target("avx2,fma"))) static void dw_avx2(const cpu_conv_dw_args *a, int64_t begin, int64_t end) {
    dw_planes_body(a, begin, end);
}
__attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"))) static void dw_avx512(const cpu_conv_dw_args *a, int64_t begin,
                                                                                   int64_t end) {
    dw_planes_body(a, begin, end);
}
#endif

typedef struct dw_isa {
    const char *name;
    dw_fn       fn;
} dw_isa;

static const dw_isa isa_base = {"base", dw_base};
#ifdef DW_X86_DISPATCH
static const dw_isa isa_avx2 = {"avx2", dw_avx2};
static const dw_isa isa_avx512 = {"avx512", dw_avx512};
#endif

static const dw_isa *detect(void) {
#ifdef DW_X86_DISPATCH
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return &isa_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &isa_avx2;
#endif
    return &isa_base;
}

/* The detected ISA is a pure function of the CPU, so racing first calls store
 * the same pointer; the forced one is a test override. */
static _Atomic(const dw_isa *) chosen;
static _Atomic(const dw_isa *) forced;

static const dw_isa *current(void) {
    const dw_isa *t = atomic_load_explicit(&forced, memory_order_acquire);
    if (t) return t;
    t = atomic_load_explicit(&chosen, memory_order_acquire);
    if (t) return t;
    t = detect();
    atomic_store_explicit(&chosen, t, memory_order_release);
    return t;
}

int cpu_conv_dw_force(const char *isa) {
    const dw_isa *t = NULL;
    if (!isa) {
        atomic_store(&forced, NULL);
        return 0;
    }
    if (!strcmp(isa, "base")) t = &isa_base;
#ifdef DW_X86_DISPATCH
    else if (!strcmp(isa, "avx512") && detect() == &isa_avx512) t = &isa_avx512;
    else if (!strcmp(isa, "avx2") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) t = &isa_avx2;
#endif
    if (!t) return -1;
    atomic_store(&forced, t);
    return 0;
}

const char *cpu_conv_dw_isa(void) { return current()->name; }

typedef struct dw_job {
    const cpu_conv_dw_args *a;
    dw_fn fn;
} dw_job;

static void dw_task(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const dw_job *j = arg;
    j->fn(j->a, begin, end);
}

void cpu_conv_depthwise(rlx_threadpool *pool, const cpu_conv_dw_args *a) {
    dw_job j = {a, current()->fn};
    int64_t per_plane = a->oh * a->ow * a->kh * a->kw;
    int64_t grain = per_plane > 0 ? (1 << 15) / per_plane : a->planes;   /* ~32k multiply-adds a chunk */
    rlx_parallel_for(pool, a->planes, grain < 1 ? 1 : grain, dw_task, &j);
}
