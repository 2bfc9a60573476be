// ternary.comp — WHERE(cond, a, b) and FMA(a, b, c) with three-way numpy
// broadcasting, one invocation per output element. The lowering collapses the
// broadcast to <= 5 dims with per-operand element strides (0 = broadcast).
//
// Spec constants: 0 = op (0 where, 1 fma), 1 = dtype (fma: f32/f16/bf16;
// where: element size in bytes 1/2/4/8, since where only copies elements and
// so serves every dtype bit-exactly), 2 = local size. The condition is bool
// or u8 (one byte, nonzero = true).
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint LOCAL = 256;
layout(local_size_x_id = 2) in;

layout(buffer_reference, std430, buffer_reference_align = 8) buffer U64Buf { uint64_t v[]; };

layout(push_constant) uniform PC {
    uint64_t p0, p1, p2, out_;
    uint n, rank;
    uint dims[5];
    uint s0[5];
    uint s1[5];
    uint s2[5];
} pc;

void main() {
    uint o = LIN_ID(LOCAL);
    if (o >= pc.n) return;
    uint i0 = 0, i1 = 0, i2 = 0, rem = o;
    for (int d = int(pc.rank) - 1; d >= 0; d--) {
        uint q = rem / pc.dims[d], c = rem - q * pc.dims[d];
        i0 += c * pc.s0[d];
        i1 += c * pc.s1[d];
        i2 += c * pc.s2[d];
        rem = q;
    }
    if (OP == 1u) {
        // one rounding, like C fmaf (precise keeps the compiler from splitting it)
        precise float r = fma(load_f(pc.p0, DT, i0), load_f(pc.p1, DT, i1), load_f(pc.p2, DT, i2));
        store_f(pc.out_, DT, o, r);
        return;
    }
    bool c = U8Buf(pc.p0).v[i0] != uint8_t(0);   // bool or u8: nonzero is true
    uint j = c ? i1 : i2;
    uint64_t src = c ? pc.p1 : pc.p2;
    switch (DT) {
    case 1u: U8Buf(pc.out_).v[o] = U8Buf(src).v[j]; break;
    case 2u: U16Buf(pc.out_).v[o] = U16Buf(src).v[j]; break;
    case 4u: U32Buf(pc.out_).v[o] = U32Buf(src).v[j]; break;
    case 8u: U64Buf(pc.out_).v[o] = U64Buf(src).v[j]; break;
    }
}
