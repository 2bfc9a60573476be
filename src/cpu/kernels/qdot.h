/*
 * qdot.h — fast dot products of one quantized weight row with an activation
 * row that was itself quantized to 8 bits: the decode-shaped (M <= 4)
 * DEQUANT_MATMUL kernels, llama.cpp's approach to GGUF block types.
 *
 * Use: quantize each activation row once per call (qdot_kernel.quantize into
 * qdot_act_bytes(act, K) bytes), then for every weight row n call
 * qdot_kernel.dot(K, w + n * row_bytes, xq). The weight blocks are never
 * expanded to f32: integer products (maddubs) per block, then one float
 * multiply-add per block with the block scales.
 *
 * Accuracy: this is NOT the exact f32 result. Each activation element is
 * rounded to q * d with d = (absmax of its block) / 127, an error of up to
 * d/2 per element. For activations of similar size the relative error of the
 * dot is about 1/254 / sqrt(3) * (absmax / rms of the block), i.e. ~2e-3..4e-3
 * for uniformly distributed x (tests/test_qdot.c measures it). The integer
 * part is exact, so against the decoded weights times the *decoded activations*
 * the kernels agree to f32 rounding. The exact path (decode rows to f32) stays
 * in dequant_matmul.c; RLX_CPU_EXACT_QUANT=1 forces it there.
 *
 * Activation layouts (xq, 64-byte aligned by the caller for speed, any
 * alignment works):
 *   QDOT_ACT_Q8_32   qs[K] (int8) | d[K/32] (f32)                      legacy types
 *   QDOT_ACT_Q8_256  qs[K] (int8) | d[K/256] (f32) | bsums[K/16] (int16) K-quants
 * with x[i] ~ d[i / block] * qs[i], qs in [-127, 127] and bsums[g] the sum of
 * qs[16g .. 16g+15].
 */
#ifndef RLX_CPU_QDOT_H
#define RLX_CPU_QDOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum qdot_act {
    QDOT_ACT_NONE   = 0,
    QDOT_ACT_Q8_32  = 1,
    QDOT_ACT_Q8_256 = 2,
} qdot_act;

/* Quantizes x[0..K) (K a multiple of the format's block) into xq. Returns
 * false when x holds an Inf or NaN: the caller must then use the exact path
 * (the 8-bit format cannot carry them). */
typedef bool (*qdot_quant_fn)(const float *x, int64_t K, void *xq);
/* Dot of one weight row (K elements of the weight type) with quantized x. */
typedef float (*qdot_dot_fn)(int64_t K, const uint8_t *w, const void *xq);

typedef struct qdot_kernel {
    const char   *isa;        /* this dot's ISA: "avx512", "avx2" or "portable" (with AVX-512
                                 chosen, types it has no kernel for report "avx2") */
    qdot_act      act;
    qdot_quant_fn quantize;
    qdot_dot_fn   dot;
} qdot_kernel;

/* The fast kernel for weight type qtype (a ggml type id, io/quant.h) on this
 * CPU: false when the type has none (only Q8_0 Q4_0 Q4_K Q5_K Q6_K do) or the
 * CPU lacks the ISA (AVX2 + FMA + F16C). Then use the exact path. */
bool qdot_find(uint32_t qtype, qdot_kernel *out);

/* Bytes of one quantized activation row of K elements (a multiple of 64). */
size_t qdot_act_bytes(qdot_act act, int64_t K);

/* Which ISA qdot_find uses now: "avx512", "avx2", or "none". */
const char *qdot_isa_name(void);

/* Tests and benches: force "avx512", "avx2" or "portable" (the scalar
 * integer reference of the same kernels, also on CPUs without AVX2), or NULL
 * for the automatic choice. Returns 0 when that ISA is available. */
int qdot_force_isa(const char *name);

#endif
