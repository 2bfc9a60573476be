/*
 * test_quant.c — the ggml block codecs (src/io/quant*.c).
 *
 *  - Dequantization against a decoder written here independently, element by
 *    element from the format description (the library decodes block-wise):
 *    on literal blocks with values worked out by hand, on blocks built from
 *    known codes and scales, and on random bytes.
 *  - Quantize -> dequantize error on random normal data, bounded per type.
 *    Measured norm-relative RMS error (n = 16384 N(0,1) samples; print them
 *    with RLX_QUANT_REPORT=1):
 *      f16 2.1e-4  bf16 1.7e-3  q8_0 5.3e-3  q8_K 6.9e-3  q6_K 1.73e-2
 *      q5_1 3.8e-2  q5_0 4.3e-2  q5_K 3.6e-2  q4_1 7.8e-2  q4_0 8.6e-2
 *      q4_K 7.1e-2  q3_K 0.144  q2_K 0.268
 *    The bounds below are these plus about 25%. For scale: at R bits per
 *    weight no quantizer of Gaussian data beats 2^-R (Shannon), e.g. 0.044 for
 *    q4_K's 4.5 bpw, and scalar rounding costs about 1.5 dB more.
 */
#include "harness.h"
#include "core/core.h"
#include "quant/quant.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ independent reference */

static float h2f(const uint8_t *p) { uint16_t h; memcpy(&h, p, 2); return rlx_f16_to_f32(h); }
static void f2h(uint8_t *p, float v) { uint16_t h = rlx_f32_to_f16(v); memcpy(p, &h, 2); }

/* 4-bit field of element i in a 32-element legacy block: elements 0..15 are
 * the low nibbles of bytes 0..15, elements 16..31 their high nibbles. */
static int nib(const uint8_t *qs, int i) { return i < 16 ? qs[i] & 15 : qs[i - 16] >> 4; }
static int bit(const uint8_t *p, int k) { return (p[k / 8] >> (k % 8)) & 1; }

/* The unsigned code stored for element i (for int8 types: the signed value). */
static int code_of(uint32_t t, const uint8_t *b, int i) {
    int h = i / 128, j = (i % 128) / 32, l = i % 32, s = i / 32;
    switch (t) {
    case QTYPE_Q4_0: return nib(b + 2, i);
    case QTYPE_Q4_1: return nib(b + 4, i);
    case QTYPE_Q5_0: return nib(b + 6, i) | bit(b + 2, i) << 4;
    case QTYPE_Q5_1: return nib(b + 8, i) | bit(b + 4, i) << 4;
    case QTYPE_Q8_0: return (int8_t)b[2 + i];
    case QTYPE_Q2_K: return (b[16 + h * 32 + l] >> (2 * j)) & 3;
    case QTYPE_Q3_K: return ((b[32 + h * 32 + l] >> (2 * j)) & 3) | bit(b + l, h * 4 + j) << 2;
    case QTYPE_Q4_K: return (b[16 + (s / 2) * 32 + l] >> (4 * (s % 2))) & 15;
    case QTYPE_Q5_K: return ((b[48 + (s / 2) * 32 + l] >> (4 * (s % 2))) & 15) | bit(b + 16 + l, s) << 4;
    case QTYPE_Q6_K:
        return ((b[h * 64 + (j % 2) * 32 + l] >> (4 * (j / 2))) & 15) | ((b[128 + h * 32 + l] >> (2 * j)) & 3) << 4;
    case QTYPE_Q8_K: return (int8_t)b[4 + i];
    }
    return 0;
}

/* Stores code c for element i into a zeroed block (fields are disjoint). */
static void set_code(uint32_t t, uint8_t *b, int i, int c) {
    int h = i / 128, j = (i % 128) / 32, l = i % 32, s = i / 32;
    switch (t) {
    case QTYPE_Q4_0: case QTYPE_Q4_1: case QTYPE_Q5_0: case QTYPE_Q5_1: {
        int qs = t == QTYPE_Q4_0 ? 2 : t == QTYPE_Q4_1 ? 4 : t == QTYPE_Q5_0 ? 6 : 8;
        b[qs + i % 16] |= (uint8_t)((c & 15) << (i < 16 ? 0 : 4));
        if (t == QTYPE_Q5_0 || t == QTYPE_Q5_1) b[qs - 4 + i / 8] |= (uint8_t)((c >> 4) << (i % 8));
        break;
    }
    case QTYPE_Q8_0: b[2 + i] = (uint8_t)(int8_t)c; break;
    case QTYPE_Q2_K: b[16 + h * 32 + l] |= (uint8_t)(c << (2 * j)); break;
    case QTYPE_Q3_K:
        b[32 + h * 32 + l] |= (uint8_t)((c & 3) << (2 * j));
        b[l] |= (uint8_t)((c >> 2) << (h * 4 + j));
        break;
    case QTYPE_Q4_K: b[16 + (s / 2) * 32 + l] |= (uint8_t)(c << (4 * (s % 2))); break;
    case QTYPE_Q5_K:
        b[48 + (s / 2) * 32 + l] |= (uint8_t)((c & 15) << (4 * (s % 2)));
        b[16 + l] |= (uint8_t)((c >> 4) << s);
        break;
    case QTYPE_Q6_K:
        b[h * 64 + (j % 2) * 32 + l] |= (uint8_t)((c & 15) << (4 * (j / 2)));
        b[128 + h * 32 + l] |= (uint8_t)((c >> 4) << (2 * j));
        break;
    case QTYPE_Q8_K: b[4 + i] = (uint8_t)(int8_t)c; break;
    }
}

/* Q3_K: 6-bit scale j (biased by 32) in the 12 bytes at b+96. */
static int q3_scale6(const uint8_t *b, int j) {
    int lo = j < 8 ? b[96 + j] & 15 : b[96 + j - 8] >> 4;
    return lo | ((b[104 + j % 4] >> (2 * (j / 4))) & 3) << 4;
}
static void q3_set_scale6(uint8_t *b, int j, int v) {
    b[96 + j % 8] |= (uint8_t)((v & 15) << (j < 8 ? 0 : 4));
    b[104 + j % 4] |= (uint8_t)((v >> 4) << (2 * (j / 4)));
}
/* Q4_K/Q5_K: 6-bit scale and min of sub-block j in the 12 bytes at b+4. */
static void k4_get(const uint8_t *b, int j, int *sc, int *m) {
    if (j < 4) { *sc = b[4 + j] & 63; *m = b[8 + j] & 63; return; }
    *sc = (b[8 + j] & 15) | (b[j] >> 6) << 4;
    *m = (b[8 + j] >> 4) | (b[4 + j] >> 6) << 4;
}
static void k4_set(uint8_t *b, int j, int sc, int m) {
    if (j < 4) { b[4 + j] |= (uint8_t)sc; b[8 + j] |= (uint8_t)m; return; }
    b[8 + j] |= (uint8_t)((sc & 15) | (m & 15) << 4);
    b[j] |= (uint8_t)((sc >> 4) << 6);
    b[4 + j] |= (uint8_t)((m >> 4) << 6);
}

static double ref_value(uint32_t t, const uint8_t *b, int i) {
    double c = code_of(t, b, i);
    switch (t) {
    case QTYPE_Q4_0: return (double)h2f(b) * (c - 8);
    case QTYPE_Q4_1: return (double)h2f(b) * c + h2f(b + 2);
    case QTYPE_Q5_0: return (double)h2f(b) * (c - 16);
    case QTYPE_Q5_1: return (double)h2f(b) * c + h2f(b + 2);
    case QTYPE_Q8_0: return (double)h2f(b) * c;
    case QTYPE_Q2_K: { int sc = b[i / 16]; return (double)h2f(b + 80) * (sc & 15) * c - (double)h2f(b + 82) * (sc >> 4); }
    case QTYPE_Q3_K: return (double)h2f(b + 108) * (q3_scale6(b, i / 16) - 32) * (c - 4);
    case QTYPE_Q4_K: case QTYPE_Q5_K: {
        int sc, m;
        k4_get(b, i / 32, &sc, &m);
        return (double)h2f(b) * sc * c - (double)h2f(b + 2) * m;
    }
    case QTYPE_Q6_K: return (double)h2f(b + 208) * (int8_t)b[192 + i / 16] * (c - 32);
    case QTYPE_Q8_K: { float d; memcpy(&d, b, 4); return (double)d * c; }
    }
    return 0;
}

static const uint32_t BLOCK_TYPES[] = {QTYPE_Q4_0, QTYPE_Q4_1, QTYPE_Q5_0, QTYPE_Q5_1, QTYPE_Q8_0, QTYPE_Q2_K,
                                       QTYPE_Q3_K, QTYPE_Q4_K, QTYPE_Q5_K, QTYPE_Q6_K, QTYPE_Q8_K};

/* Number of distinct codes, and whether the code is a signed int8. */
static int code_count(uint32_t t) {
    switch (t) {
    case QTYPE_Q4_0: case QTYPE_Q4_1: case QTYPE_Q4_K: return 16;
    case QTYPE_Q5_0: case QTYPE_Q5_1: case QTYPE_Q5_K: return 32;
    case QTYPE_Q2_K: return 4;
    case QTYPE_Q3_K: return 8;
    case QTYPE_Q6_K: return 64;
    default: return 256;   /* int8 */
    }
}

/* ------------------------------------------------------------------ tests */

TEST(quant_table) {
    struct { uint32_t t; const char *name; uint32_t bs, ts; } want[] = {
        {QTYPE_F32, "f32", 1, 4},       {QTYPE_F16, "f16", 1, 2},       {QTYPE_BF16, "bf16", 1, 2},
        {QTYPE_Q4_0, "q4_0", 32, 18},   {QTYPE_Q4_1, "q4_1", 32, 20},   {QTYPE_Q5_0, "q5_0", 32, 22},
        {QTYPE_Q5_1, "q5_1", 32, 24},   {QTYPE_Q8_0, "q8_0", 32, 34},   {QTYPE_Q2_K, "q2_K", 256, 84},
        {QTYPE_Q3_K, "q3_K", 256, 110}, {QTYPE_Q4_K, "q4_K", 256, 144}, {QTYPE_Q5_K, "q5_K", 256, 176},
        {QTYPE_Q6_K, "q6_K", 256, 210}, {QTYPE_Q8_K, "q8_K", 256, 292},
    };
    for (size_t i = 0; i < RLX_ARRAY_LEN(want); i++) {
        const qtype_info *q = qtype_get(want[i].t);
        CHECK_MSG(q && strcmp(q->name, want[i].name) == 0, "type %u", want[i].t);
        CHECK_MSG(q->block_size == want[i].bs && q->type_size == want[i].ts, "%s geometry", q->name);
        CHECK(q->to_f32 && q->from_f32);
        CHECK(qtype_from_name(want[i].name) == (int)want[i].t);
    }
    CHECK(qtype_from_name("Q4_K") == QTYPE_Q4_K && qtype_from_name("Q4_K_M") == -1);
    CHECK(qtype_get(4) == NULL && qtype_get(QTYPE_ID_LIMIT) == NULL && qtype_get(0xffffffffu) == NULL);
    uint64_t bytes;
    CHECK(qtype_row_bytes(QTYPE_Q4_K, 4096, &bytes) && bytes == 16 * 144);
    CHECK(!qtype_row_bytes(QTYPE_Q4_K, 100, &bytes));
    CHECK(!qtype_row_bytes(QTYPE_F32, UINT64_MAX / 2, &bytes));   /* overflows */
    CHECK(!qtype_row_bytes(5, 32, &bytes));
    float x[32] = {0};
    uint8_t buf[64];
    CHECK_STATUS(quant_quantize_row(QTYPE_Q4_0, x, buf, 31), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(quant_dequantize_row(QTYPE_IQ2_XXS, buf, x, 256), RLX_STATUS_UNSUPPORTED);
    CHECK_STATUS(quant_dequantize_row(77, buf, x, 32), RLX_STATUS_INVALID_ARGUMENT);
}

/* Blocks whose values are worked out by hand from the format description. */
TEST(quant_dequant_literal_blocks) {
    float y[256];
    uint8_t b[292];

    /* Q4_0: d = 0.5, qs[0] = 0x9F: element 0 = (15-8)*0.5, element 16 = (9-8)*0.5 */
    memset(b, 0, sizeof b);
    f2h(b, 0.5f);
    b[2] = 0x9F;
    CHECK_OK(quant_dequantize_row(QTYPE_Q4_0, b, y, 32));
    CHECK(y[0] == 3.5f && y[16] == 0.5f && y[1] == -4.0f);

    /* Q4_1: d = 2, m = -1, qs[3] = 0x4C: element 3 = 12*2-1, element 19 = 4*2-1 */
    memset(b, 0, sizeof b);
    f2h(b, 2.0f); f2h(b + 2, -1.0f);
    b[4 + 3] = 0x4C;
    CHECK_OK(quant_dequantize_row(QTYPE_Q4_1, b, y, 32));
    CHECK(y[3] == 23.0f && y[19] == 7.0f && y[0] == -1.0f);

    /* Q5_0: d = 1, qh bit 1 and bit 17 set, qs[1] = 0x21: element 1 = (1|16)-16 = 1,
     * element 17 = (2|16)-16 = 2; element 0 = 0-16 */
    memset(b, 0, sizeof b);
    f2h(b, 1.0f);
    b[2] = 0x02; b[4] = 0x02;
    b[6 + 1] = 0x21;
    CHECK_OK(quant_dequantize_row(QTYPE_Q5_0, b, y, 32));
    CHECK(y[1] == 1.0f && y[17] == 2.0f && y[0] == -16.0f);

    /* Q5_1: d = 0.25, m = 1, qh bit 31 set, qs[15] = 0xF0: element 31 = (15|16)*0.25 + 1 */
    memset(b, 0, sizeof b);
    f2h(b, 0.25f); f2h(b + 2, 1.0f);
    b[7] = 0x80;
    b[8 + 15] = 0xF0;
    CHECK_OK(quant_dequantize_row(QTYPE_Q5_1, b, y, 32));
    CHECK(y[31] == 8.75f && y[15] == 1.0f);

    /* Q8_0: d = 0.125, qs[5] = -100 */
    memset(b, 0, sizeof b);
    f2h(b, 0.125f);
    b[2 + 5] = (uint8_t)-100;
    CHECK_OK(quant_dequantize_row(QTYPE_Q8_0, b, y, 32));
    CHECK(y[5] == -12.5f && y[4] == 0.0f);

    /* Q2_K: scales[0] = 0x23 (scale 3, min 2), d = 1, dmin = 0.5, qs[0] = 0b11100100:
     * elements 0, 32, 64, 96 take 2-bit fields 0,1,2,3 of qs[0] -> codes 0,1,2,3;
     * element 0 uses sub-block 0: 1*3*0 - 0.5*2 = -1; element 32 uses sub-block 2 */
    memset(b, 0, sizeof b);
    b[0] = 0x23; b[2] = 0x11; b[4] = 0x05;
    b[16] = 0xE4;
    f2h(b + 80, 1.0f); f2h(b + 82, 0.5f);
    CHECK_OK(quant_dequantize_row(QTYPE_Q2_K, b, y, 256));
    CHECK(y[0] == -1.0f);           /* 3*0 - 1 */
    CHECK(y[32] == 1.0f - 0.5f);    /* sub-block 2: scale 1, min 1, code 1 */
    CHECK(y[64] == 10.0f);          /* sub-block 4: scale 5, min 0, code 2 */
    CHECK(y[96] == 0.0f);           /* sub-block 6: scale 0, min 0 */

    /* Q3_K: d = 0.5; scale 0 = 40 (-> 8): low nibble 8 in scales[0], top bits 2 in scales[8];
     * element 0: qs[32] low bits 3, hmask[0] bit 0 set -> code 7 -> 7-4 = 3 -> 0.5*8*3 */
    memset(b, 0, sizeof b);
    b[96] = 8; b[104] = 2;
    b[32] = 3; b[0] = 1;
    f2h(b + 108, 0.5f);
    CHECK_OK(quant_dequantize_row(QTYPE_Q3_K, b, y, 256));
    CHECK(y[0] == 12.0f);
    CHECK(y[1] == 0.5f * 8 * -4);   /* code 0, high bit clear */
    CHECK(y[16] == 64.0f);          /* scale 1 = 0 - 32, code 0 -> 0.5 * -32 * -4 */

    /* Q4_K: d = 1, dmin = 0.5; sub-block 0 scale 3 min 2, sub-block 1 scale 1 min 0;
     * qs[0] = 0x5A: element 0 (low nibble) = 3*10 - 0.5*2, element 32 (high nibble) = 1*5 */
    memset(b, 0, sizeof b);
    f2h(b, 1.0f); f2h(b + 2, 0.5f);
    b[4] = 3; b[8] = 2; b[5] = 1;
    b[16] = 0x5A;
    /* sub-block 5: scale 0x25 = 37 (low nibble 5 in scales[9] bits 0-3, top 2 in scales[1] bits 6-7), min 0 */
    b[4 + 9] = 0x05; b[4 + 1] |= 0x80;
    b[16 + 64] = 0x20;               /* element 160 (sub-block 5: pair 2, high nibble of qs[64]) code 2 */
    CHECK_OK(quant_dequantize_row(QTYPE_Q4_K, b, y, 256));
    CHECK(y[0] == 29.0f && y[32] == 5.0f && y[1] == -1.0f);
    CHECK(y[160] == 74.0f);

    /* Q5_K: as Q4_K plus qh: bit 0 of qh[0] adds 16 to element 0 */
    memset(b, 0, sizeof b);
    f2h(b, 1.0f); f2h(b + 2, 0.5f);
    b[4] = 3; b[8] = 2;
    b[16] = 0x01; b[48] = 0x0A;
    CHECK_OK(quant_dequantize_row(QTYPE_Q5_K, b, y, 256));
    CHECK(y[0] == 3.0f * 26 - 1.0f && y[1] == -1.0f);

    /* Q6_K: d = 0.25, scales[0] = -2, scales[2] = 3; element 0: ql[0] low 4 = 0xF,
     * qh[0] bits 0-1 = 2 -> code 47 -> 15 -> 0.25*-2*15; element 32: ql[32] low = 1,
     * qh[0] bits 2-3 = 1 -> 17 - 32 = -15 with scale 3 */
    memset(b, 0, sizeof b);
    b[0] = 0x0F; b[32] = 0x01; b[128] = 0x02 | 0x04;
    b[192] = (uint8_t)-2; b[194] = 3;
    f2h(b + 208, 0.25f);
    CHECK_OK(quant_dequantize_row(QTYPE_Q6_K, b, y, 256));
    CHECK(y[0] == -7.5f && y[32] == -11.25f);
    CHECK(y[1] == 0.25f * -2 * -32);

    /* Q8_K: d = 0.5 (f32), qs[7] = 9 */
    memset(b, 0, sizeof b);
    float d = 0.5f;
    memcpy(b, &d, 4);
    b[4 + 7] = 9;
    CHECK_OK(quant_dequantize_row(QTYPE_Q8_K, b, y, 256));
    CHECK(y[7] == 4.5f && y[6] == 0.0f);

    /* f16 / bf16 */
    uint16_t h[2] = {0x3C00, 0xC000};   /* 1, -2 */
    CHECK_OK(quant_dequantize_row(QTYPE_F16, h, y, 2));
    CHECK(y[0] == 1.0f && y[1] == -2.0f);
    uint16_t bf[2] = {0x3F80, 0x4040};  /* 1, 3 */
    CHECK_OK(quant_dequantize_row(QTYPE_BF16, bf, y, 2));
    CHECK(y[0] == 1.0f && y[1] == 3.0f);
}

/* Builds one block of each type from known codes and scales through the
 * element-wise reference layout; values are exact in float by construction. */
TEST(quant_dequant_built_blocks) {
    for (size_t k = 0; k < RLX_ARRAY_LEN(BLOCK_TYPES); k++) {
        uint32_t t = BLOCK_TYPES[k];
        const qtype_info *q = qtype_get(t);
        uint8_t b[292] = {0};
        int nc = code_count(t), bs = (int)q->block_size;
        int codes[256];
        for (int i = 0; i < bs; i++) {
            int c = (i * 5 + 3 + (int)k) % nc;
            if (nc == 256) c -= 128;
            codes[i] = c;
            set_code(t, b, i, c);
        }
        double want[256];
        switch (t) {
        case QTYPE_Q4_0: case QTYPE_Q5_0: case QTYPE_Q8_0: f2h(b, 0.5f); break;
        case QTYPE_Q4_1: case QTYPE_Q5_1: f2h(b, 0.25f); f2h(b + 2, -3.0f); break;
        case QTYPE_Q2_K:
            for (int j = 0; j < 16; j++) b[j] = (uint8_t)((j % 16) | ((15 - j) << 4));
            f2h(b + 80, 0.5f); f2h(b + 82, 0.125f);
            break;
        case QTYPE_Q3_K:
            for (int j = 0; j < 16; j++) q3_set_scale6(b, j, j * 4 + 1);
            f2h(b + 108, 0.25f);
            break;
        case QTYPE_Q4_K: case QTYPE_Q5_K:
            for (int j = 0; j < 8; j++) k4_set(b, j, 63 - j * 7, j * 9);
            f2h(b, 0.5f); f2h(b + 2, 0.25f);
            break;
        case QTYPE_Q6_K:
            for (int j = 0; j < 16; j++) b[192 + j] = (uint8_t)(int8_t)(j * 17 - 128);
            f2h(b + 208, 0.125f);
            break;
        case QTYPE_Q8_K: { float d = 0.75f; memcpy(b, &d, 4); break; }
        }
        for (int i = 0; i < bs; i++) {
            CHECK_MSG(code_of(t, b, i) == codes[i], "%s: code of element %d", q->name, i);
            want[i] = ref_value(t, b, i);
        }
        float y[256];
        CHECK_OK(quant_dequantize_row(t, b, y, bs));
        for (int i = 0; i < bs; i++)
            CHECK_MSG((double)y[i] == want[i], "%s element %d: got %.9g want %.9g", q->name, i, y[i], want[i]);
    }
}

/* Random bytes with finite scales: every bit of the layout is exercised. */
TEST(quant_dequant_random_blocks) {
    for (size_t k = 0; k < RLX_ARRAY_LEN(BLOCK_TYPES); k++) {
        uint32_t t = BLOCK_TYPES[k];
        const qtype_info *q = qtype_get(t);
        int bs = (int)q->block_size, nb = 4;
        uint8_t *b = malloc((size_t)nb * q->type_size);
        float *y = malloc((size_t)nb * bs * sizeof *y);
        for (int r = 0; r < 20; r++) {
            for (size_t i = 0; i < (size_t)nb * q->type_size; i++) b[i] = (uint8_t)test_rand_u64();
            for (int blk = 0; blk < nb; blk++) {   /* scale fields: random finite values */
                uint8_t *p = b + (size_t)blk * q->type_size;
                int offs[2] = {-1, -1};
                switch (t) {
                case QTYPE_Q4_0: case QTYPE_Q5_0: case QTYPE_Q8_0: offs[0] = 0; break;
                case QTYPE_Q4_1: case QTYPE_Q5_1: case QTYPE_Q4_K: case QTYPE_Q5_K: offs[0] = 0; offs[1] = 2; break;
                case QTYPE_Q2_K: offs[0] = 80; offs[1] = 82; break;
                case QTYPE_Q3_K: offs[0] = 108; break;
                case QTYPE_Q6_K: offs[0] = 208; break;
                case QTYPE_Q8_K: { float d = (float)test_rand_uniform(-1, 1); memcpy(p, &d, 4); break; }
                }
                for (int s = 0; s < 2; s++)
                    if (offs[s] >= 0) f2h(p + offs[s], (float)test_rand_uniform(-2, 2));
            }
            CHECK_OK(quant_dequantize_row(t, b, y, (int64_t)nb * bs));
            for (int blk = 0; blk < nb; blk++)
                for (int i = 0; i < bs; i++) {
                    double want = ref_value(t, b + (size_t)blk * q->type_size, i), got = y[blk * bs + i];
                    CHECK_MSG(fabs(got - want) <= 1e-6 * (fabs(want) + 1e-3), "%s block %d element %d: got %.9g want %.9g",
                              q->name, blk, i, got, want);
                }
        }
        free(b);
        free(y);
    }
}

/* Gaussian samples (Box-Muller) on the harness RNG. */
static void fill_normal(float *x, int64_t n) {
    for (int64_t i = 0; i < n; i += 2) {
        double u1 = test_rand_uniform(1e-12, 1), u2 = test_rand_uniform(0, 1);
        double r = sqrt(-2 * log(u1));
        x[i] = (float)(r * cos(2 * M_PI * u2));
        if (i + 1 < n) x[i + 1] = (float)(r * sin(2 * M_PI * u2));
    }
}

static double rel_rms(const float *a, const float *b, int64_t n) {
    double e = 0, s = 0;
    for (int64_t i = 0; i < n; i++) { e += ((double)a[i] - b[i]) * ((double)a[i] - b[i]); s += (double)b[i] * b[i]; }
    return sqrt(e / (s > 0 ? s : 1));
}

static const struct { uint32_t t; double bound; } ERROR_BOUNDS[] = {
    {QTYPE_F32, 0},        {QTYPE_F16, 2.6e-4},  {QTYPE_BF16, 2.1e-3}, {QTYPE_Q8_0, 6.7e-3}, {QTYPE_Q8_K, 8.6e-3},
    {QTYPE_Q6_K, 2.2e-2},  {QTYPE_Q5_1, 4.7e-2}, {QTYPE_Q5_0, 5.3e-2}, {QTYPE_Q5_K, 4.5e-2},
    {QTYPE_Q4_1, 9.8e-2},  {QTYPE_Q4_0, 0.107},  {QTYPE_Q4_K, 8.9e-2}, {QTYPE_Q3_K, 0.18},   {QTYPE_Q2_K, 0.335},
};

TEST(quant_roundtrip_error_bounds) {
    enum { N = 16384 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    uint8_t *q = malloc(N * 4);
    fill_normal(x, N);
    for (size_t k = 0; k < RLX_ARRAY_LEN(ERROR_BOUNDS); k++) {
        uint32_t t = ERROR_BOUNDS[k].t;
        memset(q, 0xA5, N * 4);
        CHECK_OK(quant_quantize_row(t, x, q, N));
        for (int i = 0; i < N; i++) y[i] = NAN;
        CHECK_OK(quant_dequantize_row(t, q, y, N));
        double err = rel_rms(y, x, N);
        if (getenv("RLX_QUANT_REPORT")) printf("  %-5s rel rms %.3g (bound %.3g)\n", qtype_name(t), err, ERROR_BOUNDS[k].bound);
        CHECK_MSG(err <= ERROR_BOUNDS[k].bound, "%s: rel rms error %.4g > %.4g", qtype_name(t), err, ERROR_BOUNDS[k].bound);
    }
    free(x); free(y); free(q);
}

/* Rows the scale search must survive: zeros, constants, one outlier, all
 * positive (mins clamp to zero), tiny values, and non-finite input (must not
 * crash; the output is unspecified but decoding it must not fault). */
TEST(quant_edge_rows) {
    enum { N = 512 };
    float x[N], y[N];
    uint8_t q[N * 4];
    for (size_t k = 0; k < RLX_ARRAY_LEN(ERROR_BOUNDS); k++) {
        uint32_t t = ERROR_BOUNDS[k].t;
        const char *nm = qtype_name(t);
        for (int kind = 0; kind < 6; kind++) {
            for (int i = 0; i < N; i++) {
                switch (kind) {
                case 0: x[i] = 0; break;
                case 1: x[i] = 1.5f; break;
                case 2: x[i] = i == 77 ? 100.0f : (float)test_rand_uniform(-0.01, 0.01); break;
                case 3: x[i] = (float)test_rand_uniform(2, 3); break;
                case 4: x[i] = (float)test_rand_uniform(-1e-6, 1e-6); break;
                case 5: x[i] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : 1.0f; break;
                }
            }
            CHECK_OK(quant_quantize_row(t, x, q, N));
            CHECK_OK(quant_dequantize_row(t, q, y, N));
            if (kind == 0)
                for (int i = 0; i < N; i++) CHECK_MSG(y[i] == 0, "%s zeros: element %d = %g", nm, i, y[i]);
            if (kind == 1 || kind == 3) {
                double err = rel_rms(y, x, N);
                CHECK_MSG(err <= 2 * ERROR_BOUNDS[k].bound + 1e-3, "%s kind %d: rel rms %.4g", nm, kind, err);
            }
            if (kind == 2) {   /* the outlier itself survives well */
                CHECK_MSG(fabsf(y[77] - 100.0f) <= 100.0f * (float)ERROR_BOUNDS[k].bound, "%s outlier -> %g", nm, y[77]);
            }
            if (kind >= 1 && kind <= 4)
                for (int i = 0; i < N; i++) CHECK_MSG(isfinite(y[i]), "%s kind %d: element %d not finite", nm, kind, i);
        }
    }
}

/* Quantizing a dequantized row again reproduces it (the codes are a fixed point). */
TEST(quant_requantize_stable) {
    enum { N = 1024 };
    float x[N], y[N], z[N];
    uint8_t q[N * 4];
    fill_normal(x, N);
    const uint32_t types[] = {QTYPE_Q4_0, QTYPE_Q5_0, QTYPE_Q8_0, QTYPE_Q8_K};
    for (size_t k = 0; k < RLX_ARRAY_LEN(types); k++) {
        CHECK_OK(quant_quantize_row(types[k], x, q, N));
        CHECK_OK(quant_dequantize_row(types[k], q, y, N));
        CHECK_OK(quant_quantize_row(types[k], y, q, N));
        CHECK_OK(quant_dequantize_row(types[k], q, z, N));
        CHECK_MSG(rel_rms(z, y, N) < 1e-6, "%s: requantize drifts by %.3g", qtype_name(types[k]), rel_rms(z, y, N));
    }
}
