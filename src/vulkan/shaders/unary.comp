// unary.comp — elementwise unary ops on a dense tensor, one invocation per
// element: the float math ops (RELU..ATAN), CLAMP and CAST.
//
// Spec constants: 0 = op (UOP_* below), 1 = input dtype, 2 = output dtype
// (differs only for CAST), 3 = local size. Floats compute in f32 with the
// accurate helpers of ew_common.glsl; integer relu/neg/abs/clamp compute in
// 64-bit ints and wrap to the dtype's width on store (docs/ops.md).
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint DT_OUT = 0;
layout(constant_id = 3) const uint LOCAL = 256;
layout(constant_id = 4) const uint VEC = 0;   // 1: f32 in and out, n % 4 == 0, 16-byte aligned
layout(buffer_reference, std430, buffer_reference_align = 16) buffer EwVec4 { vec4 v[]; };
layout(local_size_x_id = 3) in;

#define UOP_RELU      0u
#define UOP_SIGMOID   1u
#define UOP_TANH      2u
#define UOP_EXP       3u
#define UOP_LOG       4u
#define UOP_SQRT      5u
#define UOP_RSQRT     6u
#define UOP_NEG       7u
#define UOP_ABS       8u
#define UOP_GELU      9u
#define UOP_GELU_TANH 10u
#define UOP_SILU      11u
#define UOP_ROUND     12u
#define UOP_SIN       13u
#define UOP_COS       14u
#define UOP_TAN       15u
#define UOP_ATAN      16u
#define UOP_CLAMP     17u
#define UOP_CAST      18u
#define UOP_ERF       19u

layout(push_constant) uniform PC {
    uint64_t x, out_;
    int64_t ilo, ihi;   // integer clamp bounds (the integers inside [lo, hi])
    uint n;
    float lo, hi;       // float clamp bounds
} pc;

float op_f(float x) {
    switch (OP) {
    // NaN passes relu and clamp; isnan() is explicit because NVIDIA's
    // compiler turns x < 0 ? 0 : x into max(x, 0), which drops NaN.
    case UOP_RELU:      return (x < 0.0 && !isnan(x)) ? 0.0 : x;
    case UOP_SIGMOID:   return sigmoid(x);
    case UOP_TANH:      return rlx_tanh(x);
    case UOP_EXP:       return rlx_exp(x);
    case UOP_LOG:       return rlx_log(x);
    case UOP_SQRT:      return x < 0.0 ? F_NAN : sqrt(x);
    case UOP_RSQRT:     return x < 0.0 ? F_NAN : 1.0 / sqrt(x);
    case UOP_NEG:       return -x;
    case UOP_ABS:       return abs(x);
    case UOP_GELU:      return gelu_erf(x);
    case UOP_GELU_TANH: return gelu_tanh(x);
    case UOP_SILU:      return x / (1.0 + rlx_exp(-x));
    case UOP_ROUND:     return roundEven(x);
    case UOP_SIN:       return rlx_sin(x);
    case UOP_COS:       return rlx_cos(x);
    case UOP_TAN:       return rlx_tan(x);
    case UOP_ATAN:      return rlx_atan(x);
    case UOP_ERF:       return rlx_erf(x);
    case UOP_CLAMP: {
        if (isnan(x)) return x;
        float v = x < pc.lo ? pc.lo : x;
        return v > pc.hi ? pc.hi : v;
    }
    }
    return 0.0;
}

int64_t op_l(int64_t x) {
    switch (OP) {
    case UOP_RELU:  return x < 0l ? 0l : x;
    case UOP_NEG:   return -x;
    case UOP_ABS: {
        int64_t m = x >> 63;   // branch-free: the x < 0 ? -x : x form miscompiles on lavapipe (returns x)
        return (x ^ m) - m;
    }
    case UOP_ROUND: return x;
    case UOP_CLAMP: {
        int64_t v = x < pc.ilo ? pc.ilo : x;
        return v > pc.ihi ? pc.ihi : v;
    }
    }
    return 0l;
}

// float -> integer dtype: truncate toward zero, saturate, NaN -> 0 (the
// saturation bounds are the CPU's, rlx_store_from_f64 in src/core/dtype.c).
int64_t f_to_int(float v, uint dt) {
    if (isnan(v)) return 0l;
    v = trunc(v);
    switch (dt) {
    case DT_I64:
        if (v >= 9223372036854775808.0) return 0x7ffffffffffffc00l;   // the largest double below 2^63
        if (v <= -9223372036854775808.0) return -0x7fffffffffffffffl - 1l;
        return int64_t(v);
    case DT_I32:
        if (v >= 2147483647.0) return 2147483647l;
        if (v <= -2147483648.0) return -2147483648l;
        return int64_t(v);
    case DT_U8: return int64_t(clamp(v, 0.0, 255.0));
    case DT_I8: return int64_t(clamp(v, -128.0, 127.0));
    }
    return 0l;
}

void main() {
    if (VEC != 0) {   // memory-bound fast path: one 16-byte load and store per invocation
        uint q = LIN_ID(LOCAL);
        if (q >= pc.n / 4u) return;
        vec4 x = EwVec4(pc.x).v[q];
        EwVec4(pc.out_).v[q] = OP == UOP_CAST ? x : vec4(op_f(x.x), op_f(x.y), op_f(x.z), op_f(x.w));
        return;
    }
    uint i = LIN_ID(LOCAL);
    if (i >= pc.n) return;
    if (OP == UOP_CAST) {
        if (DT_OUT == DT_BOOL) {
            bool nz;
            if (dt_is_float(DT)) {
                float v = load_f(pc.x, DT, i);
                nz = isnan(v) || v != 0.0;   // NaN -> true
            } else {
                nz = load_l(pc.x, DT, i) != 0l;
            }
            U8Buf(pc.out_).v[i] = uint8_t(nz ? 1u : 0u);
        } else if (dt_is_float(DT) && dt_is_float(DT_OUT)) {
            store_f(pc.out_, DT_OUT, i, load_f_exact(pc.x, DT, i));
        } else if (dt_is_float(DT)) {
            store_l(pc.out_, DT_OUT, i, f_to_int(load_f(pc.x, DT, i), DT_OUT));
        } else if (dt_is_float(DT_OUT)) {
            float v = DT == DT_I64 ? float(I64Buf(pc.x).v[i]) : float(load_i(pc.x, DT, i));
            store_f(pc.out_, DT_OUT, i, v);
        } else {
            store_l(pc.out_, DT_OUT, i, load_l(pc.x, DT, i));   // int -> int wraps
        }
        return;
    }
    if (dt_is_float(DT)) store_f(pc.out_, DT, i, op_f(load_f(pc.x, DT, i)));
    else store_l(pc.out_, DT, i, op_l(load_l(pc.x, DT, i)));
}
