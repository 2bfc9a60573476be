// conv.comp — CONV (cross-correlation, NCHW, 1 to 3 spatial dims as 3 with
// leading 1s), direct: one invocation per output element sums
// C/groups * prod(K) products in f32, adds the bias, applies the activation.
// For every shape the implicit GEMM (conv_gemm.c) and the depthwise kernel
// (conv_depthwise.comp) do not take: thin groups, and as the reference.
//
// Spec constants: 0 = activation (rlx_activation), 1 = has bias, 2 = has a
// residual (pc.res, added before the activation).
#version 450
#include "ew_common.glsl"
#include "conv_act.glsl"

layout(constant_id = 0) const uint ACT = 0;
layout(constant_id = 1) const uint HAS_BIAS = 0;
layout(constant_id = 2) const uint HAS_RES = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, w, bias, out_;
    uint Cg, Og, O, total;
    uint in0, in1, in2, k0, k1, k2;
    uint o0, o1, o2, s0, s1, s2;
    uint d0, d1, d2;
    int p0, p1, p2;
    uint64_t res;      // residual of out's shape (HAS_RES), added before the activation
} pc;

void main() {
    uint idx = LIN_ID(256u);
    if (idx >= pc.total) return;
    uint ovol = pc.o0 * pc.o1 * pc.o2;
    uint sp = idx % ovol, t = idx / ovol;
    uint o = t % pc.O, n = t / pc.O;
    uint a2 = sp % pc.o2, a1 = (sp / pc.o2) % pc.o1, a0 = sp / (pc.o2 * pc.o1);
    uint g = o / pc.Og;
    uint ivol = pc.in0 * pc.in1 * pc.in2, kvol = pc.k0 * pc.k1 * pc.k2;
    F32Buf X = F32Buf(pc.x), W = F32Buf(pc.w);
    uint xbase = (n * (pc.Cg * (pc.O / pc.Og)) + g * pc.Cg) * ivol;
    uint wbase = o * pc.Cg * kvol;
    float acc = 0.0;
    for (uint c = 0; c < pc.Cg; c++) {
        for (uint q0 = 0; q0 < pc.k0; q0++) {
            int i0 = int(a0 * pc.s0 + q0 * pc.d0) - pc.p0;
            if (i0 < 0 || i0 >= int(pc.in0)) continue;
            for (uint q1 = 0; q1 < pc.k1; q1++) {
                int i1 = int(a1 * pc.s1 + q1 * pc.d1) - pc.p1;
                if (i1 < 0 || i1 >= int(pc.in1)) continue;
                uint xrow = xbase + c * ivol + (uint(i0) * pc.in1 + uint(i1)) * pc.in2;
                uint wrow = wbase + ((c * pc.k0 + q0) * pc.k1 + q1) * pc.k2;
                for (uint q2 = 0; q2 < pc.k2; q2++) {
                    int i2 = int(a2 * pc.s2 + q2 * pc.d2) - pc.p2;
                    if (i2 < 0 || i2 >= int(pc.in2)) continue;
                    acc = fma(X.v[xrow + uint(i2)], W.v[wrow + q2], acc);
                }
            }
        }
    }
    if (HAS_BIAS != 0u) acc += F32Buf(pc.bias).v[o];
    if (HAS_RES != 0u) acc += F32Buf(pc.res).v[idx];
    F32Buf(pc.out_).v[idx] = conv_activate(acc, ACT);
}
