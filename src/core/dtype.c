/*
 * dtype.c — element types: names, sizes, f16/bf16 conversion, and the generic
 * load/store-as-double used by kernels' non-f32 paths and by cast.
 */
#include "core/core.h"
#include <math.h>
#include <string.h>

/* Per dtype: name, bytes per element (0 for block types), and for block
 * types the elements and bytes of one block (ggml layouts). */
static const struct { const char *name; uint8_t size; uint16_t block_elems, block_bytes; } dtypes[RLX_DTYPE_COUNT] = {
    [RLX_F32] = {"f32", 4, 1, 4},     [RLX_F16] = {"f16", 2, 1, 2},   [RLX_BF16] = {"bf16", 2, 1, 2},
    [RLX_F64] = {"f64", 8, 1, 8},     [RLX_I32] = {"i32", 4, 1, 4},   [RLX_I64] = {"i64", 8, 1, 8},
    [RLX_U8] = {"u8", 1, 1, 1},       [RLX_BOOL] = {"bool", 1, 1, 1}, [RLX_I8] = {"i8", 1, 1, 1},
    [RLX_Q4_0] = {"q4_0", 0, 32, 18}, [RLX_Q4_1] = {"q4_1", 0, 32, 20}, [RLX_Q5_0] = {"q5_0", 0, 32, 22},
    [RLX_Q5_1] = {"q5_1", 0, 32, 24}, [RLX_Q8_0] = {"q8_0", 0, 32, 34}, [RLX_Q2_K] = {"q2_K", 0, 256, 84},
    [RLX_Q3_K] = {"q3_K", 0, 256, 110}, [RLX_Q4_K] = {"q4_K", 0, 256, 144}, [RLX_Q5_K] = {"q5_K", 0, 256, 176},
    [RLX_Q6_K] = {"q6_K", 0, 256, 210}, [RLX_Q8_K] = {"q8_K", 0, 256, 292},
};

const char *rlx_dtype_name(rlx_dtype dt) { return (unsigned)dt < RLX_DTYPE_COUNT ? dtypes[dt].name : "?"; }

size_t rlx_dtype_size(rlx_dtype dt) { return (unsigned)dt < RLX_DTYPE_COUNT ? dtypes[dt].size : 0; }

int rlx_dtype_is_quantized(rlx_dtype dt) { return (unsigned)dt < RLX_DTYPE_COUNT && dtypes[dt].size == 0; }

size_t rlx_tensor_bytes(rlx_dtype dt, int rank, const int64_t *dims) {
    if ((unsigned)dt >= RLX_DTYPE_COUNT || rank < 0 || rank > RLX_MAX_RANK || (rank && !dims)) return 0;
    uint64_t n = 1;
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0 || !rlx_mul_overflow_u64(n, (uint64_t)dims[i], &n)) return 0;
    uint64_t be = dtypes[dt].block_elems, bytes;
    if (be > 1) {
        if (rank == 0 || dims[rank - 1] % (int64_t)be) return 0;   /* rows are whole blocks */
    }
    if (!rlx_mul_overflow_u64(n / be, dtypes[dt].block_bytes, &bytes) || bytes > SIZE_MAX) return 0;
    return (size_t)bytes;
}

static uint32_t f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

float rlx_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    if (exp == 0) {                      /* zero or subnormal: man * 2^-24 */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    if (exp == 31) return bits_f32(sign | 0x7f800000u | (man << 13));
    return bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t rlx_f32_to_f16(float f) {
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    uint32_t abs = u & 0x7fffffffu;
    if (abs >= 0x7f800000u)                                   /* inf / nan */
        return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);
    if (abs >= 0x477ff000u) return sign | 0x7c00;              /* overflow -> inf */
    if (abs < 0x38800000u) {                                   /* subnormal or zero */
        float v = bits_f32(abs) * 16777216.0f;                 /* scale by 2^24 */
        return sign | (uint16_t)nearbyintf(v);                 /* ties to even */
    }
    uint32_t e = (abs >> 23) - 112, m = abs & 0x7fffff;
    uint32_t half = (e << 10) | (m >> 13);
    uint32_t rest = m & 0x1fff;
    if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) half++;
    return sign | (uint16_t)half;
}

float rlx_bf16_to_f32(uint16_t h) { return bits_f32((uint32_t)h << 16); }

uint16_t rlx_f32_to_bf16(float f) {
    uint32_t u = f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40);  /* quiet NaN */
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

double rlx_load_as_f64(const void *data, rlx_dtype dt, int64_t i) {
    switch (dt) {
    case RLX_F32:  return ((const float *)data)[i];
    case RLX_F16:  return rlx_f16_to_f32(((const uint16_t *)data)[i]);
    case RLX_BF16: return rlx_bf16_to_f32(((const uint16_t *)data)[i]);
    case RLX_F64:  return ((const double *)data)[i];
    case RLX_I32:  return ((const int32_t *)data)[i];
    case RLX_I64:  return (double)((const int64_t *)data)[i];
    case RLX_U8:   return ((const uint8_t *)data)[i];
    case RLX_BOOL: return ((const uint8_t *)data)[i] != 0;
    case RLX_I8:   return ((const int8_t *)data)[i];
    default:       return 0;
    }
}

/* Float to integer: truncate toward zero, saturate at the type's range, NaN -> 0. */
static double to_int_range(double v, double lo, double hi) {
    if (isnan(v)) return 0;
    v = trunc(v);
    return v < lo ? lo : v > hi ? hi : v;
}

void rlx_store_from_f64(void *data, rlx_dtype dt, int64_t i, double v) {
    switch (dt) {
    case RLX_F32:  ((float *)data)[i] = (float)v; break;
    case RLX_F16:  ((uint16_t *)data)[i] = rlx_f32_to_f16((float)v); break;
    case RLX_BF16: ((uint16_t *)data)[i] = rlx_f32_to_bf16((float)v); break;
    case RLX_F64:  ((double *)data)[i] = v; break;
    case RLX_I32:  ((int32_t *)data)[i] = (int32_t)to_int_range(v, -2147483648.0, 2147483647.0); break;
    case RLX_I64:  ((int64_t *)data)[i] = (int64_t)to_int_range(v, -9223372036854775808.0, 9223372036854774784.0); break;
    case RLX_U8:   ((uint8_t *)data)[i] = (uint8_t)to_int_range(v, 0, 255); break;
    case RLX_BOOL: ((uint8_t *)data)[i] = v != 0 ? 1 : 0; break;   /* NaN is true, as in numpy */
    case RLX_I8:   ((int8_t *)data)[i] = (int8_t)to_int_range(v, -128, 127); break;
    default: break;
    }
}

bool rlx_dtype_is_int_like(rlx_dtype dt) {
    return dt == RLX_I32 || dt == RLX_I64 || dt == RLX_U8 || dt == RLX_I8 || dt == RLX_BOOL;
}

int64_t rlx_load_as_i64(const void *p, rlx_dtype dt, int64_t i) {
    switch (dt) {
    case RLX_I32:  return ((const int32_t *)p)[i];
    case RLX_I64:  return ((const int64_t *)p)[i];
    case RLX_U8:   return ((const uint8_t *)p)[i];
    case RLX_BOOL: return ((const uint8_t *)p)[i] != 0;
    case RLX_I8:   return ((const int8_t *)p)[i];
    default:       return (int64_t)rlx_load_as_f64(p, dt, i);
    }
}

void rlx_store_from_i64(void *p, rlx_dtype dt, int64_t i, int64_t v) {
    switch (dt) {
    case RLX_I32:  ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case RLX_I64:  ((int64_t *)p)[i] = v; break;
    case RLX_U8:   ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v; break;
    case RLX_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case RLX_I8:   ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    default:       rlx_store_from_f64(p, dt, i, (double)v); break;
    }
}
