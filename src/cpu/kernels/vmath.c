/*
 * vmath.c — the array forms of vmath.h: each loop runs the element function
 * over fixed 16-element chunks (so compilers vectorize it at -O2 without
 * -ffast-math), compiled three times on x86-64 (AVX-512, AVX2+FMA, baseline)
 * and picked once from the CPU's features. A tail shorter than a chunk goes
 * through a zero-padded copy, so every element takes the vector code. Each
 * chunk is computed into a local array first: y may alias x, and a local
 * needs no overlap check.
 */
/* no-trapping-math lets the clamps and selects become blends (results are
 * unchanged); the dynamic cost model lets GCC vectorize at -O2. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
#include "cpu/kernels/vmath.h"

#include <stdatomic.h>

#define VM_CHUNK 16

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VM_X86_DISPATCH 1
#endif

/* The chunk loops, as bodies the ISA variants instantiate. */
#define VM_UNARY_BODY(FN)                                                        \
    int64_t i = 0;                                                               \
    for (; i + VM_CHUNK <= n; i += VM_CHUNK) {                                   \
        float t[VM_CHUNK];                                                       \
        for (int l = 0; l < VM_CHUNK; l++) t[l] = FN(x[i + l]);                  \
        memcpy(y + i, t, sizeof t);                                              \
    }                                                                            \
    if (i < n) {                                                                 \
        float tx[VM_CHUNK] = {0}, ty[VM_CHUNK];                                  \
        memcpy(tx, x + i, (size_t)(n - i) * sizeof(float));                      \
        for (int l = 0; l < VM_CHUNK; l++) ty[l] = FN(tx[l]);                    \
        memcpy(y + i, ty, (size_t)(n - i) * sizeof(float));                      \
    }

#define VM_BINARY_BODY(FN)                                                       \
    int64_t i = 0;                                                               \
    for (; i + VM_CHUNK <= n; i += VM_CHUNK) {                                   \
        float t[VM_CHUNK];                                                       \
        for (int l = 0; l < VM_CHUNK; l++) t[l] = FN(x[i + l], dy[i + l]);       \
        memcpy(y + i, t, sizeof t);                                              \
    }                                                                            \
    if (i < n) {                                                                 \
        float tx[VM_CHUNK] = {0}, td[VM_CHUNK] = {0}, ty[VM_CHUNK];              \
        memcpy(tx, x + i, (size_t)(n - i) * sizeof(float));                      \
        memcpy(td, dy + i, (size_t)(n - i) * sizeof(float));                     \
        for (int l = 0; l < VM_CHUNK; l++) ty[l] = FN(tx[l], td[l]);             \
        memcpy(y + i, ty, (size_t)(n - i) * sizeof(float));                      \
    }

typedef void (*vm_unary_fn)(float *y, const float *x, int64_t n);
typedef void (*vm_binary_fn)(float *y, const float *x, const float *dy, int64_t n);

#define VM_VARIANTS(ATTR, SUFFIX)                                                                      \
    ATTR static void exp_##SUFFIX(float *y, const float *x, int64_t n) { VM_UNARY_BODY(vm_exp) }       \
    ATTR static void gelu_tanh_##SUFFIX(float *y, const float *x, int64_t n) { VM_UNARY_BODY(vm_gelu_tanh) } \
    ATTR static void gelu_tanh_grad_##SUFFIX(float *y, const float *x, const float *dy, int64_t n)     \
    { VM_BINARY_BODY(vm_gelu_tanh_grad) }

VM_VARIANTS(, base)
#ifdef VM_X86_DISPATCH
VM_VARIANTS(__attribute__((target("avx2,fma"))), avx2)
VM_VARIANTS(__attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma"))), avx512)
#endif

typedef struct vm_table {
    vm_unary_fn  exp, gelu_tanh;
    vm_binary_fn gelu_tanh_grad;
} vm_table;

static const vm_table table_base = {exp_base, gelu_tanh_base, gelu_tanh_grad_base};
#ifdef VM_X86_DISPATCH
static const vm_table table_avx2 = {exp_avx2, gelu_tanh_avx2, gelu_tanh_grad_avx2};
static const vm_table table_avx512 = {exp_avx512, gelu_tanh_avx512, gelu_tanh_grad_avx512};
#endif

static const vm_table *detect(void)
{
#ifdef VM_X86_DISPATCH
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq"))
        return &table_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &table_avx2;
#endif
    return &table_base;
}

/* The detected table is a pure function of the CPU, so racing first calls
 * store the same pointer; the forced one is a test override. */
static _Atomic(const vm_table *) chosen;
static _Atomic(const vm_table *) forced;

static const vm_table *table(void)
{
    const vm_table *t = atomic_load_explicit(&forced, memory_order_acquire);
    if (t) return t;
    t = atomic_load_explicit(&chosen, memory_order_acquire);
    if (t) return t;
    t = detect();
    atomic_store_explicit(&chosen, t, memory_order_release);
    return t;
}

int cpu_vmath_force(const char *isa)
{
    const vm_table *t = NULL;
    if (!isa) {
        atomic_store(&forced, NULL);
        return 0;
    }
    if (!strcmp(isa, "base")) t = &table_base;
#ifdef VM_X86_DISPATCH
    else if (!strcmp(isa, "avx512") && detect() == &table_avx512) t = &table_avx512;
    else if (!strcmp(isa, "avx2") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        t = &table_avx2;
#endif
    if (!t) return -1;
    atomic_store(&forced, t);
    return 0;
}

void cpu_vexp(float *y, const float *x, int64_t n) { if (n > 0) table()->exp(y, x, n); }
void cpu_vgelu_tanh(float *y, const float *x, int64_t n) { if (n > 0) table()->gelu_tanh(y, x, n); }
void cpu_vgelu_tanh_grad(float *y, const float *x, const float *dy, int64_t n)
{
    if (n > 0) table()->gelu_tanh_grad(y, x, dy, n);
}
