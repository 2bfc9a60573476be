/*
 * qdot.c — dispatch of the quantized dot kernels (qdot.h) and their portable
 * scalar reference: the same integer arithmetic as the SIMD files, written
 * for clarity. The portable table is only used when forced (tests, and as the
 * spec of the SIMD kernels); on CPUs without AVX2 qdot_find reports no kernel
 * and DEQUANT_MATMUL keeps its exact decode-and-dot path.
 */
#include "cpu/kernels/qdot_internal.h"
#include "core/core.h"
#include "io/quant.h"
#include <math.h>
#include <stdatomic.h>
#if defined(RLX_QDOT_HAVE_X86)
#include <cpuid.h>
#endif

static float ld_f16(const uint8_t *p) { return rlx_f16_to_f32(qd_ld_u16(p)); }

/* ------------------------------------------------ activation quantization */

/* One block of n elements with one scale; bsums (optional) gets sums of 16. */
static bool quant_block(const float *x, int n, int8_t *qs, float *d, int16_t *bsums) {
    float amax = 0;
    bool finite = true;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i])) finite = false;
        else if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
    }
    float id = amax > 0 ? 127.0f / amax : 0.0f;
    *d = amax / 127.0f;
    for (int i = 0; i < n; i++) {
        float v = finite ? x[i] * id : 0.0f;
        qs[i] = (int8_t)(int)nearbyintf(v);   /* |v| <= 127 (+ rounding), never past 127.5 */
    }
    if (bsums)
        for (int g = 0; g < n / 16; g++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += qs[16 * g + l];
            bsums[g] = (int16_t)s;
        }
    return finite;
}

static bool p_quant_q8_32(const float *x, int64_t K, void *xq) {
    bool ok = true;
    for (int64_t b = 0; b < K / 32; b++)
        ok &= quant_block(x + 32 * b, 32, (int8_t *)xq + 32 * b, qa_d(xq, K) + b, NULL);
    return ok;
}

static bool p_quant_q8_256(const float *x, int64_t K, void *xq) {
    bool ok = true;
    for (int64_t b = 0; b < K / 256; b++)
        ok &= quant_block(x + 256 * b, 256, (int8_t *)xq + 256 * b, qa_d(xq, K) + b, qa_bsums(xq, K) + 16 * b);
    return ok;
}

/* ------------------------------------------------------- legacy dots */

static float p_dot_q8_0(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; b++, w += 34, xs += 32) {
        int32_t s = 0;
        for (int j = 0; j < 32; j++) s += (int8_t)w[2 + j] * xs[j];
        sum += ld_f16(w) * xd[b] * (float)s;
    }
    return sum;
}

static float p_dot_q4_0(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; b++, w += 18, xs += 32) {
        int32_t s = 0;
        for (int j = 0; j < 16; j++)
            s += ((w[2 + j] & 15) - 8) * xs[j] + ((w[2 + j] >> 4) - 8) * xs[j + 16];
        sum += ld_f16(w) * xd[b] * (float)s;
    }
    return sum;
}

/* --------------------------------------------------------- K-quant dots */

/* Q4_K (qh NULL) and Q5_K: sum_s d*sc_s*dot(q_s, x_s) - dmin*m_s*sum(x_s). */
static float k45_dot(int64_t K, const uint8_t *w, size_t bytes, size_t qs_off, bool has_qh, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; b++, w += bytes, xs += 256, bs += 16) {
        uint8_t sm[16];
        qd_k4_scales(w + 4, sm);
        const uint8_t *qs = w + qs_off, *qh = w + 16;
        int32_t sumi = 0, summ = 0;
        for (int s = 0; s < 8; s++) {
            int32_t t = 0;
            for (int l = 0; l < 32; l++) {
                int q = (qs[(s / 2) * 32 + l] >> (4 * (s & 1))) & 15;
                if (has_qh) q += 16 * ((qh[l] >> s) & 1);
                t += q * xs[32 * s + l];
            }
            sumi += sm[s] * t;
            summ += sm[8 + s] * (bs[2 * s] + bs[2 * s + 1]);
        }
        sum += xd[b] * (ld_f16(w) * (float)sumi - ld_f16(w + 2) * (float)summ);
    }
    return sum;
}

static float p_dot_q4_K(int64_t K, const uint8_t *w, const void *xq) { return k45_dot(K, w, 144, 16, false, xq); }
static float p_dot_q5_K(int64_t K, const uint8_t *w, const void *xq) { return k45_dot(K, w, 176, 48, true, xq); }

/* Q6_K: d * sum_g sc_g * dot(q_g - 32, x_g), the -32 folded in through bsums. */
static float p_dot_q6_K(int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    float sum = 0;
    for (int64_t b = 0; b < K / 256; b++, w += 210, xs += 256, bs += 16) {
        const int8_t *sc = (const int8_t *)(w + 192);
        int32_t sumi = 0;
        for (int g = 0; g < 16; g++) {
            int32_t t = 0;
            for (int l = 0; l < 16; l++) {
                int i = 16 * g + l, h = i / 128, j = (i % 128) / 32, r = i % 32;
                int lo = (w[h * 64 + (j & 1) * 32 + r] >> (4 * (j >> 1))) & 15;
                int hi = (w[128 + h * 32 + r] >> (2 * j)) & 3;
                t += (lo | hi << 4) * xs[i];
            }
            sumi += sc[g] * (t - 32 * bs[g]);
        }
        sum += ld_f16(w + 208) * xd[b] * (float)sumi;
    }
    return sum;
}

static const qdot_isa_table portable = {
    "portable", p_quant_q8_32, p_quant_q8_256, p_dot_q8_0, p_dot_q4_0, p_dot_q4_K, p_dot_q5_K, p_dot_q6_K, NULL,
};

/* ------------------------------------------------------------- dispatch */

#if defined(RLX_QDOT_HAVE_X86)
static bool have_f16c(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
}
static bool have_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && have_f16c();
}
#if defined(RLX_QDOT_HAVE_AVX512)
static bool have_avx512(void) {
    return have_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
}
#endif
#endif

static const qdot_isa_table *detect(void) {
#if defined(RLX_QDOT_HAVE_X86)
#if defined(RLX_QDOT_HAVE_AVX512)
    if (have_avx512()) return &rlx_qdot_avx512;
#endif
    if (have_avx2()) return &rlx_qdot_avx2;
#endif
    return NULL;
}

/* 0: not detected yet; the detected table is a pure function of the CPU, so
 * racing first calls store the same value. */
static _Atomic(const qdot_isa_table *) detected;
static _Atomic int detected_done;
static _Atomic(const qdot_isa_table *) forced;

static const qdot_isa_table *current(void) {
    const qdot_isa_table *t = atomic_load_explicit(&forced, memory_order_acquire);
    if (t) return t;
    if (!atomic_load_explicit(&detected_done, memory_order_acquire)) {
        atomic_store_explicit(&detected, detect(), memory_order_relaxed);
        atomic_store_explicit(&detected_done, 1, memory_order_release);
    }
    return atomic_load_explicit(&detected, memory_order_relaxed);
}

const char *qdot_isa_name(void) {
    const qdot_isa_table *t = current();
    return t ? t->name : "none";
}

int qdot_force_isa(const char *name) {
    if (!name) {
        atomic_store(&forced, NULL);
        return 0;
    }
    const qdot_isa_table *t = NULL;
    if (strcmp(name, "portable") == 0) t = &portable;
#if defined(RLX_QDOT_HAVE_X86)
    else if (strcmp(name, "avx2") == 0 && have_avx2()) t = &rlx_qdot_avx2;
#if defined(RLX_QDOT_HAVE_AVX512)
    else if (strcmp(name, "avx512") == 0 && have_avx512()) t = &rlx_qdot_avx512;
#endif
#endif
    if (!t) return -1;
    atomic_store(&forced, t);
    return 0;
}

/* The table that supplies entry `field` for table t: t itself, or its base
 * (one level: the AVX-512 table's base is the complete AVX2 one), or NULL. */
#define QDOT_OWNER(t, field) ((t)->field ? (t) : (t)->base && (t)->base->field ? (t)->base : NULL)
#define QDOT_PICK(t, field, o) ((o) = QDOT_OWNER(t, field), (o) ? (o)->field : NULL)

bool qdot_find(uint32_t qtype, qdot_kernel *out) {
    const qdot_isa_table *t = current();
    if (!t) return false;
    const qdot_isa_table *od = NULL, *oq = NULL;
    qdot_kernel k = {t->name, QDOT_ACT_Q8_32, NULL, NULL};
    switch (qtype) {
    case QTYPE_Q8_0: k.dot = QDOT_PICK(t, q8_0, od); break;
    case QTYPE_Q4_0: k.dot = QDOT_PICK(t, q4_0, od); break;
    case QTYPE_Q4_K: k.dot = QDOT_PICK(t, q4_K, od); break;
    case QTYPE_Q5_K: k.dot = QDOT_PICK(t, q5_K, od); break;
    case QTYPE_Q6_K: k.dot = QDOT_PICK(t, q6_K, od); break;
    default: return false;
    }
    if (qtype == QTYPE_Q4_K || qtype == QTYPE_Q5_K || qtype == QTYPE_Q6_K) {
        k.act = QDOT_ACT_Q8_256;
        k.quantize = QDOT_PICK(t, quant_q8_256, oq);
    } else {
        k.quantize = QDOT_PICK(t, quant_q8_32, oq);
    }
    if (!k.dot || !k.quantize) return false;
    k.isa = od->name;   /* the dot's ISA: "avx2" for a type the AVX-512 table lacks */
    *out = k;
    return true;
}

size_t qdot_act_bytes(qdot_act act, int64_t K) {
    if (K <= 0) return 0;
    size_t n = (size_t)K;
    size_t b = act == QDOT_ACT_Q8_32 ? n + 4 * (n / 32) : act == QDOT_ACT_Q8_256 ? n + 4 * (n / 256) + 2 * (n / 16) : 0;
    return (b + 63) & ~(size_t)63;
}
