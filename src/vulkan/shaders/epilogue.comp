// epilogue.comp — the elementwise tail of a DEQUANT_MATMUL whose product came
// from the prefill GEMM (dequant_gemm.c, dequant_matmul.c): with A = a and
// B = b, out = A (EPI 0), A + B (EPI 1, the residual add) or silu(A) * B
// (EPI 2, SwiGLU), all f32. Split-K products are NS slices of n elements
// each, summed here in slice order (a fixed order, so runs repeat
// bit for bit): A = sum of a's NS slices, and for EPI 2 B = sum of b's (the
// up product's); EPI 1's b is the residual, one slice.
// out may alias a or b when NS is 1 (each element is read before it is written).
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "ew_common.glsl"

layout(constant_id = 0) const uint EPI = 1;
layout(constant_id = 1) const uint NS = 1;   // split-K slices, 1..16
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t a, b, out_;
    uint n, pad;
} pc;

float slices(uint64_t base, uint i) {
    float s = F32Buf(base).v[i];
    [[unroll]] for (uint z = 1u; z < NS; z++) s += F32Buf(base + uint64_t(z) * uint64_t(pc.n) * uint64_t(4)).v[i];
    return s;
}

void main() {
    uint i = LIN_ID(256u);
    if (i >= pc.n) return;
    float x = slices(pc.a, i);
    float y = EPI == 2u ? slices(pc.b, i) : EPI == 1u ? F32Buf(pc.b).v[i] : 0.0;
    F32Buf(pc.out_).v[i] = EPI == 2u ? x / (1.0 + exp(-x)) * y : EPI == 1u ? x + y : x;
}
