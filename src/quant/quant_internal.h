/*
 * quant_internal.h — byte-level helpers shared by the quant codecs: unaligned
 * little-endian loads and stores (blocks sit at any byte offset inside a
 * mapped file) and a float-to-int rounding that is defined for every input.
 */
#ifndef RLX_QUANT_QUANT_INTERNAL_H
#define RLX_QUANT_QUANT_INTERNAL_H

#include "quant/quant.h"
#include <math.h>
#include <string.h>

static inline float q_ld_f16(const uint8_t *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return rlx_f16_to_f32(h);
}
static inline void q_st_f16(uint8_t *p, float v) {
    uint16_t h = rlx_f32_to_f16(v);
    memcpy(p, &h, 2);
}
/* v rounded to f16 precision: scales are stored as f16, so quants are chosen
 * against the scale the decoder will actually see. */
static inline float q_f16_round(float v) { return rlx_f16_to_f32(rlx_f32_to_f16(v)); }

/* Round to nearest (ties to even), clamped to [lo, hi]; NaN gives 0. Clamping
 * happens first, in float, so no out-of-range float-to-int conversion can
 * occur; then adding and subtracting 1.5 * 2^23 rounds in the FPU's default
 * mode (exact for |v| < 2^22), which is much faster than a nearbyintf call
 * and matters in the scale searches. */
static inline int q_round(float v, int lo, int hi) {
    if (!(v == v)) return 0;
    if (v <= (float)lo) return lo;
    if (v >= (float)hi) return hi;
    volatile float magic = 12582912.0f;   /* volatile: keep the compiler from folding the trick */
    return (int)((v + magic) - magic);
}

/* Codecs of the K-quants (quant_k.c). */
void q2_K_to_f32(const void *src, float *dst, int64_t n);
void q3_K_to_f32(const void *src, float *dst, int64_t n);
void q4_K_to_f32(const void *src, float *dst, int64_t n);
void q5_K_to_f32(const void *src, float *dst, int64_t n);
void q6_K_to_f32(const void *src, float *dst, int64_t n);
void q8_K_to_f32(const void *src, float *dst, int64_t n);
void q2_K_from_f32(const float *src, void *dst, int64_t n);
void q3_K_from_f32(const float *src, void *dst, int64_t n);
void q4_K_from_f32(const float *src, void *dst, int64_t n);
void q5_K_from_f32(const float *src, void *dst, int64_t n);
void q6_K_from_f32(const float *src, void *dst, int64_t n);
void q8_K_from_f32(const float *src, void *dst, int64_t n);

#endif
