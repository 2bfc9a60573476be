/*
 * qdot.c — dispatch of the quantized dot / gemm kernels (qdot.h) and their
 * portable scalar reference: the same integer arithmetic as the SIMD files,
 * written for clarity from the block layouts (io/quant.c, io/quant_k.c). The
 * portable table is only used when forced (tests, and as the spec of the SIMD
 * kernels); on CPUs without AVX2 qdot_find reports no kernel and
 * DEQUANT_MATMUL keeps its exact decode-and-dot path.
 *
 * Every type is written as x = D * (q - off) + M per element with integer q:
 *   legacy 32-blocks: D = d, M = m (Q4_1, Q5_1) or 0, off 8 (Q4_0), 16
 *     (Q5_0) or 0 (Q8_0's q is signed here; the SIMD kernels use q + 128);
 *   K-quants per 16-group g: D = d * sc_g, M = -dmin * m_g (Q2_K Q4_K Q5_K),
 *     off 4 (Q3_K) or 32 (Q6_K);
 * so that dot = sum over blocks of dx * D * (sum q * qs - off * sum qs) +
 * M * dx * sum qs, the sums of qs coming with the activations (qdot.h).
 */
#include "cpu/kernels/qdot_internal.h"
#include "core/core.h"
#include "quant/quant.h"
#include <math.h>
#include <stdatomic.h>
#if defined(RLX_QDOT_HAVE_X86)
#include <cpuid.h>
#endif

static float ld_f16(const uint8_t *p) { return rlx_f16_to_f32(qd_ld_u16(p)); }

/* ------------------------------------------------ activation quantization */

/* One block of n elements with one scale; returns the scale, *sum the sum of qs. */
static float quant_block(const float *x, int n, int8_t *qs, int32_t *sum, bool *finite) {
    float amax = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i])) *finite = false;
        else if (fabsf(x[i]) > amax) amax = fabsf(x[i]);
    }
    float id = amax > 0 ? 127.0f / amax : 0.0f;
    *sum = 0;
    for (int i = 0; i < n; i++) {
        float v = *finite ? x[i] * id : 0.0f;
        qs[i] = (int8_t)(int)nearbyintf(v);   /* |v| <= 127 (+ rounding), never past 127.5 */
        *sum += qs[i];
    }
    return amax / 127.0f;
}

static bool p_quant_q8_32(const float *x, int64_t K, void *xq) {
    bool ok = true;
    for (int64_t b = 0; b < K / 32; b++) {
        int32_t sum;
        float d = quant_block(x + 32 * b, 32, (int8_t *)xq + 32 * b, &sum, &ok);
        qa_set_block_q8_32(xq, K, b, d, sum);
    }
    return ok;
}

static bool p_quant_q8_256(const float *x, int64_t K, void *xq) {
    bool ok = true;
    int8_t *qs = xq;
    int16_t *bs = qa_bsums(xq, K);
    for (int64_t b = 0; b < K / 256; b++) {
        int32_t sum;
        qa_d(xq, K)[b] = quant_block(x + 256 * b, 256, qs + 256 * b, &sum, &ok);
        for (int64_t g = 16 * b; g < 16 * b + 16; g++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += qs[16 * g + l];
            bs[g] = (int16_t)s;
        }
    }
    qa_fill_q8_256(xq, K);
    return ok;
}

/* ------------------------------------------------------- legacy dots */

typedef struct leg_fmt { int bytes, qs_off, qh_off, has_m, off, bits; } leg_fmt;
/* Q8_0 Q4_0 Q4_1 Q5_0 Q5_1: block bytes, where qs / qh start, min, offset, bits. */
static const leg_fmt leg_fmts[5] = {
    {34, 2, 0, 0, 0, 8}, {18, 2, 0, 0, 8, 4}, {20, 4, 0, 1, 0, 4}, {22, 6, 2, 0, 16, 5}, {24, 8, 4, 1, 0, 5},
};

/* Element j of a legacy block, offset included (signed). */
static int leg_q(const leg_fmt *f, const uint8_t *blk, int j) {
    if (f->bits == 8) return (int8_t)blk[f->qs_off + j];
    int q = j < 16 ? blk[f->qs_off + j] & 15 : blk[f->qs_off + j - 16] >> 4;
    if (f->bits == 5) q |= (int)((qd_ld_u32(blk + f->qh_off) >> j) & 1) << 4;
    return q - f->off;
}

static float leg_dot(int t, int64_t K, const uint8_t *w, const void *xq) {
    const leg_fmt *f = &leg_fmts[t];
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K), *s = qa_s(xq, K);
    float sum = 0;
    for (int64_t b = 0; b < K / 32; b++, w += f->bytes, xs += 32) {
        int32_t si = 0;
        for (int j = 0; j < 32; j++) si += leg_q(f, w, j) * xs[j];
        sum += ld_f16(w) * xd[b] * (float)si;
        if (f->has_m) sum += ld_f16(w + 2) * s[b];
    }
    return sum;
}

static float p_dot_q8_0(int64_t K, const uint8_t *w, const void *xq) { return leg_dot(QD_Q8_0, K, w, xq); }
static float p_dot_q4_0(int64_t K, const uint8_t *w, const void *xq) { return leg_dot(QD_Q4_0, K, w, xq); }
static float p_dot_q4_1(int64_t K, const uint8_t *w, const void *xq) { return leg_dot(QD_Q4_1, K, w, xq); }
static float p_dot_q5_0(int64_t K, const uint8_t *w, const void *xq) { return leg_dot(QD_Q5_0, K, w, xq); }
static float p_dot_q5_1(int64_t K, const uint8_t *w, const void *xq) { return leg_dot(QD_Q5_1, K, w, xq); }

/* --------------------------------------------------------- K-quant dots */

/* One K-quant super-block as q[256] (unsigned), per 16-group scale sc and
 * min m (integers), D, Dmin and the offset: x_i = D*sc_g*(q_i - off) - Dmin*m_g. */
typedef struct kblock { int q[256], sc[16], m[16], off; float D, Dmin; } kblock;

static int kbytes(int t) { return t == QD_Q2_K ? 84 : t == QD_Q3_K ? 110 : t == QD_Q4_K ? 144 : t == QD_Q5_K ? 176 : 210; }

static void k_unpack(int t, const uint8_t *w, kblock *k) {
    memset(k, 0, sizeof *k);
    for (int i = 0; i < 256; i++) {
        int h = i / 128, j = (i % 128) / 32, l = i % 32, s = i / 32;
        switch (t) {
        case QD_Q2_K: k->q[i] = (w[16 + h * 32 + l] >> (2 * j)) & 3; break;
        case QD_Q3_K: k->q[i] = ((w[32 + h * 32 + l] >> (2 * j)) & 3) + 4 * ((w[l] >> (4 * h + j)) & 1); break;
        case QD_Q4_K: k->q[i] = (w[16 + (s / 2) * 32 + l] >> (4 * (s & 1))) & 15; break;
        case QD_Q5_K: k->q[i] = ((w[48 + (s / 2) * 32 + l] >> (4 * (s & 1))) & 15) | ((w[16 + l] >> s) & 1) << 4; break;
        default: /* Q6_K */
            k->q[i] = ((w[h * 64 + (j & 1) * 32 + l] >> (4 * (j >> 1))) & 15) | ((w[128 + h * 32 + l] >> (2 * j)) & 3) << 4;
        }
    }
    if (t == QD_Q2_K) {
        for (int g = 0; g < 16; g++) { k->sc[g] = w[g] & 15; k->m[g] = w[g] >> 4; }
        k->D = ld_f16(w + 80);
        k->Dmin = ld_f16(w + 82);
    } else if (t == QD_Q3_K) {
        int8_t sc[16];
        qd_k3_scales(w + 96, sc);
        for (int g = 0; g < 16; g++) k->sc[g] = sc[g];
        k->off = 4;
        k->D = ld_f16(w + 108);
    } else if (t == QD_Q4_K || t == QD_Q5_K) {
        uint8_t sm[16];
        qd_k4_scales(w + 4, sm);
        for (int g = 0; g < 16; g++) { k->sc[g] = sm[g / 2]; k->m[g] = sm[8 + g / 2]; }
        k->D = ld_f16(w);
        k->Dmin = ld_f16(w + 2);
    } else {
        for (int g = 0; g < 16; g++) k->sc[g] = (int8_t)w[192 + g];
        k->off = 32;
        k->D = ld_f16(w + 208);
    }
}

static float k_dot(int t, int64_t K, const uint8_t *w, const void *xq) {
    const int8_t *xs = xq;
    const float *xd = qa_d(xq, K);
    const int16_t *bs = qa_bsums(xq, K);
    float sum = 0;
    kblock k;
    for (int64_t b = 0; b < K / 256; b++, w += kbytes(t), xs += 256, bs += 16) {
        k_unpack(t, w, &k);
        int32_t sumi = 0, summ = 0;
        for (int g = 0; g < 16; g++) {
            int32_t d = 0;
            for (int l = 0; l < 16; l++) d += k.q[16 * g + l] * xs[16 * g + l];
            sumi += k.sc[g] * (d - k.off * bs[g]);
            summ += k.m[g] * bs[g];
        }
        sum += xd[b] * (k.D * (float)sumi - k.Dmin * (float)summ);
    }
    return sum;
}

static float p_dot_q2_K(int64_t K, const uint8_t *w, const void *xq) { return k_dot(QD_Q2_K, K, w, xq); }
static float p_dot_q3_K(int64_t K, const uint8_t *w, const void *xq) { return k_dot(QD_Q3_K, K, w, xq); }
static float p_dot_q4_K(int64_t K, const uint8_t *w, const void *xq) { return k_dot(QD_Q4_K, K, w, xq); }
static float p_dot_q5_K(int64_t K, const uint8_t *w, const void *xq) { return k_dot(QD_Q5_K, K, w, xq); }
static float p_dot_q6_K(int64_t K, const uint8_t *w, const void *xq) { return k_dot(QD_Q6_K, K, w, xq); }

static const qdot_isa_table portable = {
    .name = "portable",
    .quant_q8_32 = p_quant_q8_32,
    .quant_q8_256 = p_quant_q8_256,
    .dot = {p_dot_q8_0, p_dot_q4_0, p_dot_q4_1, p_dot_q5_0, p_dot_q5_1,
            p_dot_q2_K, p_dot_q3_K, p_dot_q4_K, p_dot_q5_K, p_dot_q6_K},
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

static int type_index(uint32_t qtype) {
    switch (qtype) {
    case QTYPE_Q8_0: return QD_Q8_0;
    case QTYPE_Q4_0: return QD_Q4_0;
    case QTYPE_Q4_1: return QD_Q4_1;
    case QTYPE_Q5_0: return QD_Q5_0;
    case QTYPE_Q5_1: return QD_Q5_1;
    case QTYPE_Q2_K: return QD_Q2_K;
    case QTYPE_Q3_K: return QD_Q3_K;
    case QTYPE_Q4_K: return QD_Q4_K;
    case QTYPE_Q5_K: return QD_Q5_K;
    case QTYPE_Q6_K: return QD_Q6_K;
    default: return -1;
    }
}

/* The table among t and its base (one level: the AVX-512 table's base is the
 * complete AVX2 one) that has a dot / gemm for type i, or NULL. A hand-written
 * dot comes before one made of the gemm kernel. */
static qdot_dot_fn dot_of(const qdot_isa_table *t, int i) { return t->dot[i] ? t->dot[i] : t->gdot ? t->gdot[i] : NULL; }
static const qdot_isa_table *owner_dot(const qdot_isa_table *t, int i) {
    return dot_of(t, i) ? t : t->base && dot_of(t->base, i) ? t->base : NULL;
}
static const qdot_isa_table *owner_gemm(const qdot_isa_table *t, int i) {
    return t->gemm && t->gemm[i] ? t : t->base && t->base->gemm && t->base->gemm[i] ? t->base : NULL;
}
static qdot_gemm_packed_fn packed_of(const qdot_isa_table *t, int i) {
    return t->gemm_packed ? t->gemm_packed[i] : t->base && t->base->gemm_packed ? t->base->gemm_packed[i] : NULL;
}

bool qdot_find(uint32_t qtype, qdot_kernel *out) {
    const qdot_isa_table *t = current();
    int i = type_index(qtype);
    if (!t || i < 0) return false;
    const qdot_isa_table *od = owner_dot(t, i), *og = owner_gemm(t, i);
    bool k_quant = i >= QD_FIRST_K;
    qdot_quant_fn q = k_quant ? t->quant_q8_256 : t->quant_q8_32;
    if (!q && t->base) q = k_quant ? t->base->quant_q8_256 : t->base->quant_q8_32;
    if (!od || !q) return false;
    qdot_kernel k = {
        .isa = od->name,   /* the dot's ISA: "avx2" for a type the AVX-512 table lacks */
        .gemm_isa = og ? og->name : "dots",
        .act = k_quant ? QDOT_ACT_Q8_256 : QDOT_ACT_Q8_32,
        .quantize = q,
        .dot = dot_of(od, i),
        .gemm = og ? og->gemm[i] : NULL,
        .gemm_packed = packed_of(t, i),
        .packed_min_rows = k_quant ? 10 : 5,
    };
    *out = k;
    return true;
}

void qdot_gemm(const qdot_kernel *k, int64_t K, const uint8_t *w, size_t w_stride, int64_t nw, const uint8_t *xq,
               size_t x_stride, int64_t nx, float *out, int64_t ldo, void *scratch) {
    if (k->gemm_packed && scratch && nx >= k->packed_min_rows) {
        k->gemm_packed(K, w, w_stride, nw, xq, x_stride, nx, out, ldo, scratch);
        return;
    }
    if (k->gemm) {
        k->gemm(K, w, w_stride, nw, xq, x_stride, nx, out, ldo);
        return;
    }
    for (int64_t n = 0; n < nw; n++)
        for (int64_t m = 0; m < nx; m++) out[m * ldo + n] = k->dot(K, w + (size_t)n * w_stride, xq + (size_t)m * x_stride);
}

size_t qdot_act_bytes(qdot_act act, int64_t K) {
    if (K <= 0) return 0;
    size_t n = (size_t)K, b = 0;
    if (act == QDOT_ACT_Q8_32) b = n + 4 * (n / 32) * 2 + 4 * (n / 4);
    else if (act == QDOT_ACT_Q8_256) b = n + 4 * (n / 256) + 2 * (n / 16) + 4 * (n / 16) + 4 * (n / 32);
    return (b + 63) & ~(size_t)63;
}

/* The packed panel of 16 weight rows: K/G records of 128 + 16 G bytes, at
 * most 24 K (G = 16); see qgemm_packed_avx512.c. */
size_t qdot_gemm_scratch_bytes(int64_t K) { return K > 0 ? 24 * (size_t)K + 64 : 64; }
