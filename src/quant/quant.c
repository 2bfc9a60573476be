/*
 * quant.c — the type table (ids, names, block geometry) and the codecs of the
 * float types and the 32-element "legacy" blocks Q4_0 Q4_1 Q5_0 Q5_1 Q8_0.
 * The K-quants live in quant_k.c.
 *
 * Legacy block layouts (little-endian, f16 scales), element j of 32:
 *   Q4_0  d | qs[16]            x = d * (q - 8)     q: j<16 low nibble of qs[j], else high nibble of qs[j-16]
 *   Q4_1  d m | qs[16]          x = d * q + m
 *   Q5_0  d | qh[4] | qs[16]    x = d * (q - 16)    q = nibble | bit j of qh (as u32) << 4
 *   Q5_1  d m | qh[4] | qs[16]  x = d * q + m
 *   Q8_0  d | qs[32] (int8)     x = d * q
 */
#include "quant/quant_internal.h"
#include <ctype.h>

/* ---------------------------------------------------------------- floats */

static void f32_to_f32(const void *src, float *dst, int64_t n) { memcpy(dst, src, (size_t)n * 4); }
static void f32_from_f32(const float *src, void *dst, int64_t n) { memcpy(dst, src, (size_t)n * 4); }

static void f16_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *p = src;
    for (int64_t i = 0; i < n; i++) dst[i] = q_ld_f16(p + 2 * i);
}
static void f16_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *p = dst;
    for (int64_t i = 0; i < n; i++) q_st_f16(p + 2 * i, src[i]);
}
static void bf16_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *p = src;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, p + 2 * i, 2);
        dst[i] = rlx_bf16_to_f32(h);
    }
}
static void bf16_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *p = dst;
    for (int64_t i = 0; i < n; i++) {
        uint16_t h = rlx_f32_to_bf16(src[i]);
        memcpy(p + 2 * i, &h, 2);
    }
}

/* ----------------------------------------------------------- legacy blocks */

/* The element of largest magnitude, with its sign: symmetric types map it to
 * the most negative code, which has one more step of range than the positive side. */
static float signed_absmax(const float *x, int n) {
    float amax = 0, max = 0;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > amax) { amax = fabsf(x[i]); max = x[i]; }
    return max;
}

static void min_max(const float *x, int n, float *mn, float *mx) {
    *mn = x[0]; *mx = x[0];
    for (int i = 1; i < n; i++) {
        if (x[i] < *mn) *mn = x[i];
        if (x[i] > *mx) *mx = x[i];
    }
}

static void q4_0_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 18, dst += 32) {
        float d = q_ld_f16(b);
        for (int j = 0; j < 16; j++) {
            dst[j]      = d * (float)((b[2 + j] & 15) - 8);
            dst[j + 16] = d * (float)((b[2 + j] >> 4) - 8);
        }
    }
}
static void q4_0_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 18, src += 32) {
        float d = q_f16_round(signed_absmax(src, 32) / -8.0f);
        float id = d != 0 ? 1.0f / d : 0;
        q_st_f16(b, d);
        for (int j = 0; j < 16; j++) {
            int lo = q_round(src[j] * id, -8, 7) + 8, hi = q_round(src[j + 16] * id, -8, 7) + 8;
            b[2 + j] = (uint8_t)(lo | hi << 4);
        }
    }
}

static void q4_1_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 20, dst += 32) {
        float d = q_ld_f16(b), m = q_ld_f16(b + 2);
        for (int j = 0; j < 16; j++) {
            dst[j]      = d * (float)(b[4 + j] & 15) + m;
            dst[j + 16] = d * (float)(b[4 + j] >> 4) + m;
        }
    }
}
static void q4_1_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 20, src += 32) {
        float mn, mx;
        min_max(src, 32, &mn, &mx);
        float d = q_f16_round((mx - mn) / 15.0f), m = q_f16_round(mn);
        float id = d != 0 ? 1.0f / d : 0;
        q_st_f16(b, d);
        q_st_f16(b + 2, m);
        for (int j = 0; j < 16; j++) {
            int lo = q_round((src[j] - m) * id, 0, 15), hi = q_round((src[j + 16] - m) * id, 0, 15);
            b[4 + j] = (uint8_t)(lo | hi << 4);
        }
    }
}

static uint32_t ld_u32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static void q5_0_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 22, dst += 32) {
        float d = q_ld_f16(b);
        uint32_t qh = ld_u32(b + 2);
        for (int j = 0; j < 16; j++) {
            int lo = (b[6 + j] & 15) | (int)((qh >> j) & 1) << 4;
            int hi = (b[6 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            dst[j] = d * (float)(lo - 16);
            dst[j + 16] = d * (float)(hi - 16);
        }
    }
}
static void q5_0_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 22, src += 32) {
        float d = q_f16_round(signed_absmax(src, 32) / -16.0f);
        float id = d != 0 ? 1.0f / d : 0;
        q_st_f16(b, d);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            int lo = q_round(src[j] * id, -16, 15) + 16, hi = q_round(src[j + 16] * id, -16, 15) + 16;
            b[6 + j] = (uint8_t)((lo & 15) | (hi & 15) << 4);
            qh |= (uint32_t)(lo >> 4) << j | (uint32_t)(hi >> 4) << (j + 16);
        }
        memcpy(b + 2, &qh, 4);
    }
}

static void q5_1_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 24, dst += 32) {
        float d = q_ld_f16(b), m = q_ld_f16(b + 2);
        uint32_t qh = ld_u32(b + 4);
        for (int j = 0; j < 16; j++) {
            int lo = (b[8 + j] & 15) | (int)((qh >> j) & 1) << 4;
            int hi = (b[8 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            dst[j] = d * (float)lo + m;
            dst[j + 16] = d * (float)hi + m;
        }
    }
}
static void q5_1_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 24, src += 32) {
        float mn, mx;
        min_max(src, 32, &mn, &mx);
        float d = q_f16_round((mx - mn) / 31.0f), m = q_f16_round(mn);
        float id = d != 0 ? 1.0f / d : 0;
        q_st_f16(b, d);
        q_st_f16(b + 2, m);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            int lo = q_round((src[j] - m) * id, 0, 31), hi = q_round((src[j + 16] - m) * id, 0, 31);
            b[8 + j] = (uint8_t)((lo & 15) | (hi & 15) << 4);
            qh |= (uint32_t)(lo >> 4) << j | (uint32_t)(hi >> 4) << (j + 16);
        }
        memcpy(b + 4, &qh, 4);
    }
}

static void q8_0_to_f32(const void *src, float *dst, int64_t n) {
    const uint8_t *b = src;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 34, dst += 32) {
        float d = q_ld_f16(b);
        for (int j = 0; j < 32; j++) dst[j] = d * (float)(int8_t)b[2 + j];
    }
}
static void q8_0_from_f32(const float *src, void *dst, int64_t n) {
    uint8_t *b = dst;
    for (int64_t blk = 0; blk < n / 32; blk++, b += 34, src += 32) {
        float d = q_f16_round(fabsf(signed_absmax(src, 32)) / 127.0f);
        float id = d != 0 ? 1.0f / d : 0;
        q_st_f16(b, d);
        for (int j = 0; j < 32; j++) b[2 + j] = (uint8_t)(int8_t)q_round(src[j] * id, -128, 127);
    }
}

/* ------------------------------------------------------------------ table */

static const qtype_info TABLE[QTYPE_ID_LIMIT] = {
    [QTYPE_F32]     = {"f32",     1,     4,   f32_to_f32,  f32_from_f32},
    [QTYPE_F16]     = {"f16",     1,     2,   f16_to_f32,  f16_from_f32},
    [QTYPE_BF16]    = {"bf16",    1,     2,   bf16_to_f32, bf16_from_f32},
    [QTYPE_Q4_0]    = {"q4_0",    32,    18,  q4_0_to_f32, q4_0_from_f32},
    [QTYPE_Q4_1]    = {"q4_1",    32,    20,  q4_1_to_f32, q4_1_from_f32},
    [QTYPE_Q5_0]    = {"q5_0",    32,    22,  q5_0_to_f32, q5_0_from_f32},
    [QTYPE_Q5_1]    = {"q5_1",    32,    24,  q5_1_to_f32, q5_1_from_f32},
    [QTYPE_Q8_0]    = {"q8_0",    32,    34,  q8_0_to_f32, q8_0_from_f32},
    [QTYPE_Q8_1]    = {"q8_1",    32,    36,  NULL, NULL},
    [QTYPE_Q2_K]    = {"q2_K",    QK_K,  84,  q2_K_to_f32, q2_K_from_f32},
    [QTYPE_Q3_K]    = {"q3_K",    QK_K,  110, q3_K_to_f32, q3_K_from_f32},
    [QTYPE_Q4_K]    = {"q4_K",    QK_K,  144, q4_K_to_f32, q4_K_from_f32},
    [QTYPE_Q5_K]    = {"q5_K",    QK_K,  176, q5_K_to_f32, q5_K_from_f32},
    [QTYPE_Q6_K]    = {"q6_K",    QK_K,  210, q6_K_to_f32, q6_K_from_f32},
    [QTYPE_Q8_K]    = {"q8_K",    QK_K,  292, q8_K_to_f32, q8_K_from_f32},
    [QTYPE_IQ2_XXS] = {"iq2_xxs", QK_K,  66,  NULL, NULL},
    [QTYPE_IQ2_XS]  = {"iq2_xs",  QK_K,  74,  NULL, NULL},
    [QTYPE_IQ3_XXS] = {"iq3_xxs", QK_K,  98,  NULL, NULL},
    [QTYPE_IQ1_S]   = {"iq1_s",   QK_K,  50,  NULL, NULL},
    [QTYPE_IQ4_NL]  = {"iq4_nl",  32,    18,  NULL, NULL},
    [QTYPE_IQ3_S]   = {"iq3_s",   QK_K,  110, NULL, NULL},
    [QTYPE_IQ2_S]   = {"iq2_s",   QK_K,  82,  NULL, NULL},
    [QTYPE_IQ4_XS]  = {"iq4_xs",  QK_K,  136, NULL, NULL},
    [QTYPE_I8]      = {"i8",      1,     1,   NULL, NULL},
    [QTYPE_I16]     = {"i16",     1,     2,   NULL, NULL},
    [QTYPE_I32]     = {"i32",     1,     4,   NULL, NULL},
    [QTYPE_I64]     = {"i64",     1,     8,   NULL, NULL},
    [QTYPE_F64]     = {"f64",     1,     8,   NULL, NULL},
    [QTYPE_IQ1_M]   = {"iq1_m",   QK_K,  56,  NULL, NULL},
    [QTYPE_TQ1_0]   = {"tq1_0",   QK_K,  54,  NULL, NULL},
    [QTYPE_TQ2_0]   = {"tq2_0",   QK_K,  66,  NULL, NULL},
    [QTYPE_MXFP4]   = {"mxfp4",   32,    17,  NULL, NULL},
};

const qtype_info *qtype_get(uint32_t type) {
    if (type >= QTYPE_ID_LIMIT || TABLE[type].name == NULL) return NULL;
    return &TABLE[type];
}

const char *qtype_name(uint32_t type) {
    const qtype_info *t = qtype_get(type);
    return t ? t->name : "?";
}

int qtype_from_name(const char *name) {
    if (!name) return -1;
    for (uint32_t t = 0; t < QTYPE_ID_LIMIT; t++) {
        const char *a = TABLE[t].name, *b = name;
        if (!a) continue;
        while (*a && *b && tolower((unsigned char)*a) == tolower((unsigned char)*b)) { a++; b++; }
        if (!*a && !*b) return (int)t;
    }
    return -1;
}

bool qtype_row_bytes(uint32_t type, uint64_t n, uint64_t *bytes) {
    const qtype_info *t = qtype_get(type);
    if (!t || n % t->block_size) return false;
    return rlx_mul_overflow_u64(n / t->block_size, t->type_size, bytes);
}

static rlx_status check_row(uint32_t type, int64_t n, bool encode, const qtype_info **out) {
    const qtype_info *t = qtype_get(type);
    if (!t) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "unknown ggml type %u", type);
    if (encode ? !t->from_f32 : !t->to_f32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s is not implemented", t->name,
                        encode ? "quantization" : "dequantization");
    if (n < 0 || n % t->block_size)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: row of %lld elements is not a multiple of the block size %u",
                        t->name, (long long)n, t->block_size);
    *out = t;
    return RLX_OK;
}

rlx_status quant_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n) {
    const qtype_info *t = NULL;
    rlx_status st = check_row(type, n, false, &t);
    if (st) return st;
    if (n) t->to_f32(src, dst, n);
    return RLX_OK;
}

rlx_status quant_quantize_row(uint32_t type, const float *src, void *dst, int64_t n) {
    const qtype_info *t = NULL;
    rlx_status st = check_row(type, n, true, &t);
    if (st) return st;
    if (n) t->from_f32(src, dst, n);
    return RLX_OK;
}

static const struct { rlx_dtype dt; uint32_t q; } dtype_qtype[] = {
    {RLX_F32, QTYPE_F32},   {RLX_F16, QTYPE_F16},   {RLX_BF16, QTYPE_BF16}, {RLX_Q4_0, QTYPE_Q4_0},
    {RLX_Q4_1, QTYPE_Q4_1}, {RLX_Q5_0, QTYPE_Q5_0}, {RLX_Q5_1, QTYPE_Q5_1}, {RLX_Q8_0, QTYPE_Q8_0},
    {RLX_Q2_K, QTYPE_Q2_K}, {RLX_Q3_K, QTYPE_Q3_K}, {RLX_Q4_K, QTYPE_Q4_K}, {RLX_Q5_K, QTYPE_Q5_K},
    {RLX_Q6_K, QTYPE_Q6_K}, {RLX_Q8_K, QTYPE_Q8_K},
};

uint32_t quant_type_of_dtype(rlx_dtype dt) {
    for (size_t i = 0; i < sizeof dtype_qtype / sizeof dtype_qtype[0]; i++)
        if (dtype_qtype[i].dt == dt) return dtype_qtype[i].q;
    return QTYPE_ID_LIMIT;
}

int quant_dtype_of_type(uint32_t type) {
    for (size_t i = 0; i < sizeof dtype_qtype / sizeof dtype_qtype[0]; i++)
        if (dtype_qtype[i].q == type) return (int)dtype_qtype[i].dt;
    return -1;
}
