/*
 * vmath.h — f32 exp and the functions built on it (GELU tanh form and its
 * gradient), as array loops that vectorize, chosen at run time for the CPU
 * (AVX-512, AVX2+FMA or baseline), and as the same arithmetic per element.
 *
 * A libm expf call per element costs more than the GEMM that feeds a fused
 * activation, so the exp is Cephes' polynomial (~1 ulp): x = n ln2 + r, e^r
 * by a degree-6 polynomial, 2^n built in the exponent bits. The element
 * functions below are what the array loops compute, operation for operation
 * (ISO C mode does not contract a*b+c into fma), so a fused epilogue, the
 * unary op, a broadcast row and every ISA give the same bits.
 */
#ifndef RLX_CPU_VMATH_H
#define RLX_CPU_VMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define VM_INLINE static inline __attribute__((always_inline))
#else
#define VM_INLINE static inline
#endif

/* e^v: 0 below -87.3 (where f32 would go subnormal), +inf above f32's
 * overflow threshold, NaN stays NaN. Branch-free so loops over it vectorize. */
VM_INLINE float vm_exp(float v)
{
    float c = v > -87.3f ? v : -87.3f;
    c = c < 88.3f ? c : 88.3f;
    float fn = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;   /* round to nearest */
    float r = c - fn * 0.693359375f;
    r = r - fn * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t e = ((int32_t)fn + 127) << 23;
    float s;
    memcpy(&s, &e, sizeof s);
    float res = p * s;
    res = v < -87.3f ? 0.0f : res;
    res = v > 88.72284f ? INFINITY : res;
    return v != v ? v : res;
}

/* gelu_tanh(x) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3): the
 * sigmoid form of 0.5 x (1 + tanh u), accurate in the negative tail. */
VM_INLINE float vm_gelu_tanh(float x)
{
    float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return x / (1.0f + vm_exp(-2.0f * u));
}

/* dy * gelu_tanh'(x) = dy (s + 2 x s (1 - s) u'), s = 1 / (1 + e^(-2u)),
 * u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2). */
VM_INLINE float vm_gelu_tanh_grad(float x, float dy)
{
    const float c = 0.79788456080286536f;
    float u = c * (x + 0.044715f * x * x * x), s = 1.0f / (1.0f + vm_exp(-2.0f * u));
    return dy * (s + 2.0f * x * s * (1.0f - s) * c * (1.0f + 0.134145f * x * x));
}

/* Array forms (vmath.c); y may alias x / dy. */
void cpu_vexp(float *y, const float *x, int64_t n);
void cpu_vgelu_tanh(float *y, const float *x, int64_t n);
void cpu_vgelu_tanh_grad(float *y, const float *x, const float *dy, int64_t n);

/* Forces the array loops' ISA (for tests): "avx512", "avx2", "base", or NULL
 * for the automatic choice. Returns 0, or -1 if this CPU lacks it. */
int cpu_vmath_force(const char *isa);

#endif
