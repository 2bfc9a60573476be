// decode_f16.comp — rows of w [N, K] in their storage type (a GGUF block type,
// or f32 / bf16 / f16) decoded to f16 rows, out [N, K] dense: the operand
// conversion in front of a tensor-core GEMM (matmul.c, dequant_gemm.c), so that
// the GEMM's inner loop copies f16 tiles instead of decoding or converting
// every tile again for every row tile of the other operand.
// One invocation per 32-element part (dequant_mm_common.glsl: the decode and
// the part's four runs of 8 k); a run is one 16-byte store when VEC bit 4
// says K % 8 == 0 and out is 16-byte aligned. Values beyond f16's range
// become inf (the fast precision policy's trade, made by the lowering).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"
#include "quant_blocks.glsl"

layout(constant_id = 0) const uint QT = 16;    // rlx dtype of w
layout(constant_id = 1) const uint A4 = 0;     // w: 32-bit loads at 4-aligned block offsets
layout(constant_id = 2) const uint VEC = 0;    // bit 1: float w vector loads; bit 4: 16-byte stores

#include "dequant_mm_common.glsl"

void main() {
    uint o = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
    if (o >= p.N * p.parts) return;
    uint n = o / p.parts, q = o - n * p.parts;
    float v[32];
    dqmm_decode(n, q, (VEC & 2u) != 0u, v);
    uint k[4];
    part_k(q, k);
    uint row = n * p.K;
    [[unroll]] for (uint r = 0u; r < 4u; r++) {
        if ((VEC & 16u) != 0u) {
            if (k[r] < p.K)
                DqmmU4(p.out_).v[(row + k[r]) >> 3] =
                    uvec4(packHalf2x16(vec2(v[8u * r], v[8u * r + 1u])), packHalf2x16(vec2(v[8u * r + 2u], v[8u * r + 3u])),
                          packHalf2x16(vec2(v[8u * r + 4u], v[8u * r + 5u])), packHalf2x16(vec2(v[8u * r + 6u], v[8u * r + 7u])));
        } else {
            [[unroll]] for (uint e = 0u; e < 8u; e++)
                if (k[r] + e < p.K) U16Buf(p.out_).v[row + k[r] + e] = f32_to_f16(v[8u * r + e]);
        }
    }
}
