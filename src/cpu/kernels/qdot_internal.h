/*
 * qdot_internal.h — what the qdot dispatcher (qdot.c) shares with its per-ISA
 * kernel files (qdot_avx2.c, qdot_avx512.c, the portable one in qdot.c):
 * the table of one ISA's kernels and accessors for the activation layouts
 * documented in qdot.h.
 */
#ifndef RLX_CPU_QDOT_INTERNAL_H
#define RLX_CPU_QDOT_INTERNAL_H

#include "cpu/kernels/qdot.h"
#include <string.h>

typedef struct qdot_isa_table {
    const char   *name;
    qdot_quant_fn quant_q8_32, quant_q8_256;
    qdot_dot_fn   q8_0, q4_0, q4_K, q5_K, q6_K;
    /* Where the entries this table leaves NULL come from (qdot_find resolves
     * them): the AVX-512 table has only some dots and reuses the AVX2 rest. */
    const struct qdot_isa_table *base;
} qdot_isa_table;

static inline float *qa_d(const void *xq, int64_t K) { return (float *)((char *)(uintptr_t)xq + K); }
/* Only for QDOT_ACT_Q8_256 (K a multiple of 256). */
static inline int16_t *qa_bsums(const void *xq, int64_t K) {
    return (int16_t *)((char *)(uintptr_t)xq + K + 4 * (K / 256));
}

static inline uint16_t qd_ld_u16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

/* The 12 packed bytes of Q4_K/Q5_K 6-bit scales and mins (quant_k.c) to
 * out[0..7] = scales, out[8..15] = mins (llama.cpp's mask trick). */
static inline void qd_k4_scales(const uint8_t *s12, uint8_t out[16]) {
    const uint32_t km1 = 0x3f3f3f3fu, km2 = 0x0f0f0f0fu, km3 = 0x03030303u;
    uint32_t u[4];
    memcpy(u, s12, 12);
    u[3] = ((u[2] >> 4) & km2) | (((u[1] >> 6) & km3) << 4);
    uint32_t t = u[1] & km1;
    u[1] = (u[2] & km2) | (((u[0] >> 6) & km3) << 4);
    u[2] = t;
    u[0] &= km1;
    memcpy(out, u, 16);
}

#if defined(__x86_64__)
#define RLX_QDOT_HAVE_X86 1
#define RLX_QDOT_HAVE_AVX512 1
extern const qdot_isa_table rlx_qdot_avx2;
extern const qdot_isa_table rlx_qdot_avx512;
#endif

#endif
