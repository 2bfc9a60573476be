// binary.comp — elementwise binary ops with numpy broadcasting: ADD SUB MUL
// DIV MAX MIN POW (result in the operands' dtype) and EQ NE LT LE GT GE
// (result bool), and GELU_GRAD / GELU_TANH_GRAD: y * gelu'(x), the backward
// of gelu / gelu_tanh (floats only). One invocation per output element; the lowering collapses
// the broadcast to <= 6 dims with per-operand element strides (0 = broadcast).
//
// Spec constants: 0 = op (BOP_* below), 1 = operand dtype, 2 = local size.
// Floats compute in f32 (f16/bf16 round once on store); i32/u8/i8 in 32-bit
// ints and i64 in 64-bit ints, wrapping to the dtype's width on store.
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint LOCAL = 256;
layout(constant_id = 3) const uint VEC = 0;   // 1: f32, both operands contiguous, n % 4 == 0, 16-byte aligned
layout(buffer_reference, std430, buffer_reference_align = 16) buffer EwVec4 { vec4 v[]; };
layout(local_size_x_id = 2) in;

#define BOP_ADD 0u
#define BOP_SUB 1u
#define BOP_MUL 2u
#define BOP_DIV 3u
#define BOP_MAX 4u
#define BOP_MIN 5u
#define BOP_POW 6u
#define BOP_EQ  7u
#define BOP_NE  8u
#define BOP_LT  9u
#define BOP_LE  10u
#define BOP_GT  11u
#define BOP_GE  12u
#define BOP_GELU_GRAD 13u
#define BOP_GELU_TANH_GRAD 14u

layout(push_constant) uniform PC {
    uint64_t a, b, out_;
    uint n, rank;
    uint dims[6];
    uint sa[6];
    uint sb[6];
} pc;

float op_f(float x, float y) {
    switch (OP) {
    case BOP_ADD: return x + y;
    case BOP_SUB: return x - y;
    case BOP_MUL: return x * y;
    case BOP_DIV: return x / y;
    case BOP_MAX: return nan_max(x, y);
    case BOP_MIN: return nan_min(x, y);
    case BOP_POW: return rlx_pow(x, y);
    case BOP_GELU_GRAD:   // y (Phi(x) + x phi(x)), Phi through erfc as gelu_erf
        return y * (0.5 * rlx_erfc(x * -0.70710678118654752) + x * rlx_exp(-0.5 * x * x) * 0.39894228040143268);
    case BOP_GELU_TANH_GRAD: {   // y (s + 2 x s (1 - s) u'), s = 1 / (1 + exp(-2u)), as the CPU writes it
        float u = 0.79788456080286536 * (x + 0.044715 * x * x * x), s = 1.0 / (1.0 + rlx_exp(-2.0 * u));
        return y * (s + 2.0 * x * s * (1.0 - s) * 0.79788456080286536 * (1.0 + 0.134145 * x * x));
    }
    }
    return 0.0;
}

// Truncating division with x / 0 = 0; x / -1 is negation (INT_MIN wraps).
int op_i(int x, int y) {
    switch (OP) {
    case BOP_ADD: return x + y;
    case BOP_SUB: return x - y;
    case BOP_MUL: return x * y;
    case BOP_DIV: return y == 0 ? 0 : (y == -1 ? -x : x / y);
    case BOP_MAX: return max(x, y);
    case BOP_MIN: return min(x, y);
    }
    return 0;
}

int64_t op_l(int64_t x, int64_t y) {
    switch (OP) {
    case BOP_ADD: return x + y;
    case BOP_SUB: return x - y;
    case BOP_MUL: return x * y;
    case BOP_DIV: return y == 0l ? 0l : (y == -1l ? -x : x / y);
    case BOP_MAX: return max(x, y);
    case BOP_MIN: return min(x, y);
    }
    return 0l;
}

// Comparisons: ordered (false with NaN) except NE, which is true with NaN.
bool cmp_f(float x, float y) {
    switch (OP) {
    case BOP_EQ: return x == y;
    case BOP_NE: return isnan(x) || isnan(y) || x != y;
    case BOP_LT: return x < y;
    case BOP_LE: return x <= y;
    case BOP_GT: return x > y;
    case BOP_GE: return x >= y;
    }
    return false;
}

bool cmp_l(int64_t x, int64_t y) {
    switch (OP) {
    case BOP_EQ: return x == y;
    case BOP_NE: return x != y;
    case BOP_LT: return x < y;
    case BOP_LE: return x <= y;
    case BOP_GT: return x > y;
    case BOP_GE: return x >= y;
    }
    return false;
}

void main() {
    if (VEC != 0) {   // memory-bound fast path: one 16-byte load per operand per invocation
        uint q = LIN_ID(LOCAL);
        if (q >= pc.n / 4u) return;
        vec4 x = EwVec4(pc.a).v[q], y = EwVec4(pc.b).v[q];
        EwVec4(pc.out_).v[q] = vec4(op_f(x.x, y.x), op_f(x.y, y.y), op_f(x.z, y.z), op_f(x.w, y.w));
        return;
    }
    uint o = LIN_ID(LOCAL);
    if (o >= pc.n) return;
    uint ia = 0, ib = 0, rem = o;
    for (int d = int(pc.rank) - 1; d >= 0; d--) {
        uint q = rem / pc.dims[d], c = rem - q * pc.dims[d];
        ia += c * pc.sa[d];
        ib += c * pc.sb[d];
        rem = q;
    }
    bool is_cmp = OP >= BOP_EQ && OP <= BOP_GE;
    if (dt_is_float(DT)) {
        float x = load_f(pc.a, DT, ia), y = load_f(pc.b, DT, ib);
        if (is_cmp) U8Buf(pc.out_).v[o] = uint8_t(cmp_f(x, y) ? 1u : 0u);
        else store_f(pc.out_, DT, o, op_f(x, y));
    } else if (DT == DT_I64 || is_cmp) {
        int64_t x = load_l(pc.a, DT, ia), y = load_l(pc.b, DT, ib);
        if (is_cmp) U8Buf(pc.out_).v[o] = uint8_t(cmp_l(x, y) ? 1u : 0u);
        else store_l(pc.out_, DT, o, op_l(x, y));
    } else {
        store_i(pc.out_, DT, o, op_i(load_i(pc.a, DT, ia), load_i(pc.b, DT, ib)));
    }
}
