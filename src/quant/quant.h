/*
 * quant.h — the ggml storage types that GGUF tensors use: their ids (the GGUF
 * tensor-type enum), block geometry, and reference conversion of a row to and
 * from f32. The layouts follow the public ggml block formats; the code is ours.
 *
 * A row of n elements of a block type is n / block_size blocks laid end to end,
 * each type_size bytes. Conversions here are the scalar reference that fast
 * kernels (CPU SIMD, Vulkan shaders) are tested against.
 */
#ifndef RLX_QUANT_QUANT_H
#define RLX_QUANT_QUANT_H

#include "core/core.h"

/* ggml type ids as stored in GGUF tensor infos. Gaps are ids ggml retired. */
typedef enum qtype {
    QTYPE_F32     = 0,
    QTYPE_F16     = 1,
    QTYPE_Q4_0    = 2,
    QTYPE_Q4_1    = 3,
    QTYPE_Q5_0    = 6,
    QTYPE_Q5_1    = 7,
    QTYPE_Q8_0    = 8,
    QTYPE_Q8_1    = 9,
    QTYPE_Q2_K    = 10,
    QTYPE_Q3_K    = 11,
    QTYPE_Q4_K    = 12,
    QTYPE_Q5_K    = 13,
    QTYPE_Q6_K    = 14,
    QTYPE_Q8_K    = 15,
    QTYPE_IQ2_XXS = 16,
    QTYPE_IQ2_XS  = 17,
    QTYPE_IQ3_XXS = 18,
    QTYPE_IQ1_S   = 19,
    QTYPE_IQ4_NL  = 20,
    QTYPE_IQ3_S   = 21,
    QTYPE_IQ2_S   = 22,
    QTYPE_IQ4_XS  = 23,
    QTYPE_I8      = 24,
    QTYPE_I16     = 25,
    QTYPE_I32     = 26,
    QTYPE_I64     = 27,
    QTYPE_F64     = 28,
    QTYPE_IQ1_M   = 29,
    QTYPE_BF16    = 30,
    QTYPE_TQ1_0   = 34,
    QTYPE_TQ2_0   = 35,
    QTYPE_MXFP4   = 39,
    QTYPE_ID_LIMIT = 40   /* every known id is below this */
} qtype;

#define QK_LEGACY 32     /* elements per block of Q4_0 .. Q8_1 */
#define QK_K      256    /* elements per super-block of the K-quants */

/* Dequantize / quantize n elements (n a multiple of block_size). */
typedef void (*qtype_to_f32_fn)(const void *src, float *dst, int64_t n);
typedef void (*qtype_from_f32_fn)(const float *src, void *dst, int64_t n);

typedef struct qtype_info {
    const char       *name;        /* "q4_K", as ggml spells it */
    uint32_t          block_size;  /* elements per block */
    uint32_t          type_size;   /* bytes per block */
    qtype_to_f32_fn   to_f32;      /* NULL: rlx cannot decode this type yet */
    qtype_from_f32_fn from_f32;    /* NULL: rlx cannot encode this type yet */
} qtype_info;

/* Info for a type id, or NULL when the id is not a known ggml type. Known
 * types without a codec (the IQ family, ...) have sizes so files holding them
 * can still be read and inspected. */
const qtype_info *qtype_get(uint32_t type);
const char *qtype_name(uint32_t type);           /* "?" when unknown */
/* Type id for a name ("Q4_K", "q4_k", "f16"), case-insensitive; -1 if unknown. */
int qtype_from_name(const char *name);

/* Bytes of n elements of type: false when the type is unknown, n is not a
 * multiple of the block size, or the size overflows. */
bool qtype_row_bytes(uint32_t type, uint64_t n, uint64_t *bytes);

/* Row conversions with checks: RLX_STATUS_UNSUPPORTED for a type without a
 * codec, RLX_STATUS_INVALID_ARGUMENT when n is not a multiple of the block. */
rlx_status quant_dequantize_row(uint32_t type, const void *src, float *dst, int64_t n);
rlx_status quant_quantize_row(uint32_t type, const float *src, void *dst, int64_t n);

/* The ggml type of an rlx dtype (f32, f16, bf16 and the block types), or
 * QTYPE_ID_LIMIT when it has none. */
uint32_t quant_type_of_dtype(rlx_dtype dt);
/* The rlx dtype of a ggml type, or -1. */
int      quant_dtype_of_type(uint32_t type);

#endif
