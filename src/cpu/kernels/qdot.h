/*
 * qdot.h — integer kernels for DEQUANT_MATMUL with GGUF block weights on the
 * CPU, llama.cpp's approach: the activations are quantized to 8 bits once per
 * call and every weight block is used straight from its bytes with integer
 * products (maddubs / vpdpbusd), then one float multiply-add per block with
 * the block scales. Weights are never expanded to f32 in memory.
 *
 * Entry points per weight type:
 *   - dot: one weight row with one quantized x row (decode, M = 1);
 *   - gemm: out[m, n] for x rows against weight rows; the SIMD kernels
 *     unpack each weight block once and use it for up to 4 x rows held in
 *     registers (few rows: decode with M = 2..4);
 *   - gemm_packed (AVX-512 VNNI): repacks 16 weight rows at a time into a
 *     panel whose vector lanes are the rows, then streams every x row past it
 *     (prefill). qdot_gemm picks it from packed_min_rows x rows on.
 * Use: quantize each x row once (qdot_kernel.quantize into qdot_act_bytes(act,
 * K) bytes), then call dot or qdot_gemm. Types: Q8_0 Q4_0 Q4_1 Q5_0 Q5_1
 * Q2_K Q3_K Q4_K Q5_K Q6_K.
 *
 * Accuracy: this is NOT the exact f32 result. Each activation element is
 * rounded to q * d with d = (absmax of its block) / 127, an error of up to
 * d/2 per element. For activations of similar size the relative error of the
 * dot is about 1/254 / sqrt(3) * (absmax / rms of the block), i.e. ~2e-3..4e-3
 * for uniformly distributed x (tests/test_qdot.c measures it). The integer
 * part is exact, so against the decoded weights times the *decoded activations*
 * the kernels agree to f32 rounding. The exact path (decode rows to f32) stays
 * in dequant_matmul.c; rlx_compile_options.exact_quant forces it there.
 *
 * Activation layouts (xq, 64-byte aligned by the caller for speed, any
 * alignment works; every field after qs is f32 unless said otherwise):
 *   QDOT_ACT_Q8_32   legacy types (32-blocks b):
 *       qs[K] (int8) | d[K/32] | s[K/32] | de[K/4]
 *       s[b] = d[b] * sum of the block's qs (the min / offset terms),
 *       de[i] = d[i / 8]: each block scale repeated for the 8 int32 lanes a
 *       block's products land in (the gemm kernels multiply by it directly)
 *   QDOT_ACT_Q8_256  K-quants (256-blocks b, 16-groups g, 32-groups s):
 *       qs[K] (int8) | d[K/256] | bsums[K/16] (int16) | gs[K/16] | gs32[K/32]
 *       bsums[g] = sum of qs[16g .. 16g+15], gs[g] = d[g / 16] * bsums[g],
 *       gs32[s] = d[s / 8] * (bsums[2s] + bsums[2s+1])
 * with x[i] ~ d[i / block] * qs[i], qs in [-127, 127].
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
/* out[m * ldo + n] = dot(weight row n, x row m) for m < nx, n < nw; weight
 * rows w_stride bytes apart, quantized x rows x_stride bytes apart. */
typedef void (*qdot_gemm_fn)(int64_t K, const uint8_t *w, size_t w_stride, int64_t nw, const uint8_t *xq,
                             size_t x_stride, int64_t nx, float *out, int64_t ldo);
/* The same with scratch of qdot_gemm_scratch_bytes(K) bytes (the panel). */
typedef void (*qdot_gemm_packed_fn)(int64_t K, const uint8_t *w, size_t w_stride, int64_t nw, const uint8_t *xq,
                                    size_t x_stride, int64_t nx, float *out, int64_t ldo, void *scratch);

typedef struct qdot_kernel {
    const char   *isa;        /* the dot's ISA: "avx512", "avx2" or "portable" (with AVX-512
                                 chosen, types it has no kernel for report "avx2") */
    const char   *gemm_isa;   /* the same for gemm; "dots" when gemm is a loop over dot */
    qdot_act      act;
    qdot_quant_fn quantize;
    qdot_dot_fn   dot;
    qdot_gemm_fn  gemm;       /* NULL: qdot_gemm loops over dot */
    qdot_gemm_packed_fn gemm_packed;   /* NULL when this ISA has none */
    /* From this many x rows on qdot_gemm uses gemm_packed: repacking a panel
     * costs about 14 rows of packed work, which the row tiles recover in
     * ~5 rows for the 32-block types (4 float ops per 32 weights and row)
     * and ~10 for the K-quants (bench_qdot --kernels, M = 4..12 sweeps, 2026-11-29). */
    int           packed_min_rows;
} qdot_kernel;

/* The fast kernels for weight type qtype (a ggml type id, io/quant.h) on
 * this CPU: false when the type has none or the CPU lacks the ISA (AVX2 +
 * FMA + F16C). Then use the exact path. */
bool qdot_find(uint32_t qtype, qdot_kernel *out);

/* out = x · wᵀ as qdot_gemm_fn, with the best of k's kernels for nx rows:
 * gemm_packed (when k has one, nx >= k->packed_min_rows and scratch is not
 * NULL), else gemm, else dot for every pair. scratch: NULL or
 * qdot_gemm_scratch_bytes(K) bytes, 64-byte aligned for speed. */
void qdot_gemm(const qdot_kernel *k, int64_t K, const uint8_t *w, size_t w_stride, int64_t nw, const uint8_t *xq,
               size_t x_stride, int64_t nx, float *out, int64_t ldo, void *scratch);
size_t qdot_gemm_scratch_bytes(int64_t K);

/* Bytes of one quantized activation row of K elements (a multiple of 64). */
size_t qdot_act_bytes(qdot_act act, int64_t K);

/* Which ISA qdot_find uses now: "avx512", "avx2", or "none". */
const char *qdot_isa_name(void);

/* Tests and benches: force "avx512", "avx2" or "portable" (the scalar
 * integer reference of the same kernels, also on CPUs without AVX2), or NULL
 * for the automatic choice. Returns 0 when that ISA is available. */
int qdot_force_isa(const char *name);

#endif
