// matmul_splitk.comp — the second pass of a split-K matmul (matmul.c):
// c[i] = act(sum over the slices of part[z][i] + bias[i % N]) in DT_C, the
// slices summed in slice order (a fixed order: runs repeat bit for bit).
// The push block is the matmul one (mm_push): a = the partials, p.nbatch f32
// slices of M * N elements each (matmul_coopmat.comp or matmul_tiled.comp
// with SPLIT = 1 wrote them), bias, c = the output.
//
// CONV (an implicit-GEMM convolution's split, conv_gemm.c): the bias is per
// row (output channel) and element (row, j) is stored to NCHW: image
// j / p.K, position j % p.K (p.K = the output's spatial volume), with the
// residual at p.sa0 (HAS_RES, same layout) added before the activation.
#version 450
#extension GL_EXT_control_flow_attributes : require
#include "ew_common.glsl"
#include "matmul_common.glsl"

layout(constant_id = 0) const uint DT_C = 0;
layout(constant_id = 1) const uint ACT = 0;
layout(constant_id = 2) const uint HAS_BIAS = 0;
layout(constant_id = 3) const uint CONV = 0;
layout(constant_id = 4) const uint HAS_RES = 0;
layout(local_size_x = 256) in;

void main() {
    uint i = LIN_ID(256u);
    uint n = p.M * p.N;
    if (i >= n) return;
    float s = F32Buf(p.a).v[i];
    for (uint z = 1u; z < p.nbatch; z++) s += F32Buf(p.a + uint64_t(z) * uint64_t(n) * 4ul).v[i];
    uint row = i / p.N, col = i % p.N, o = i;
    if (CONV != 0u) o = (col / p.K * p.M + row) * p.K + col % p.K;
    if (HAS_BIAS != 0u) s += mm_ld(p.bias, DT_C, CONV != 0u ? row : col);
    if (HAS_RES != 0u) s += mm_ld(p.sa0, DT_C, o);
    mm_st(p.c, DT_C, o, mm_activate(s, ACT));
}
