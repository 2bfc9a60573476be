// epilogue.comp — the elementwise tail of a fused DEQUANT_MATMUL form when
// its product came from the prefill GEMM (dequant_matmul.c): out = a + b
// (EPI 1, the residual add) or out = silu(a) * b (EPI 2, SwiGLU), all f32.
// out may alias a or b (each element is read before it is written).
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint EPI = 1;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t a, b, out_;
    uint n, pad;
} pc;

void main() {
    uint i = LIN_ID(256u);
    if (i >= pc.n) return;
    float x = F32Buf(pc.a).v[i], y = F32Buf(pc.b).v[i];
    F32Buf(pc.out_).v[i] = EPI == 2u ? x / (1.0 + exp(-x)) * y : x + y;
}
