// pool.comp — POOL (max / average, NCHW, 1 to 3 spatial dims as 3 with
// leading 1s): one invocation per output element, the window rules of
// src/ir/pool_geom.h (the window clipped to the padded input for the
// count_include_pad divisor; max propagates NaN and ignores padding).
//
// Spec constants: 0 = kind (0 max, 1 average), 1 = count_include_pad.
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint KIND = 0;
layout(constant_id = 1) const uint INCLUDE_PAD = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, out_;
    uint total, pad_;
    uint in0, in1, in2, o0, o1, o2;
    uint k0, k1, k2, s0, s1, s2;
    int b0, b1, b2, e0, e1, e2;
} pc;

void main() {
    uint idx = LIN_ID(256u);
    if (idx >= pc.total) return;
    uint ovol = pc.o0 * pc.o1 * pc.o2;
    uint plane = idx / ovol, sp = idx % ovol;
    uint a2 = sp % pc.o2, a1 = (sp / pc.o2) % pc.o1, a0 = sp / (pc.o2 * pc.o1);
    int in_[3] = int[3](int(pc.in0), int(pc.in1), int(pc.in2));
    int k[3] = int[3](int(pc.k0), int(pc.k1), int(pc.k2));
    int st[3] = int[3](int(pc.s0), int(pc.s1), int(pc.s2));
    int pb[3] = int[3](pc.b0, pc.b1, pc.b2), pe[3] = int[3](pc.e0, pc.e1, pc.e2);
    int a[3] = int[3](int(a0), int(a1), int(a2));
    int lo[3], hi[3];
    int area = 1;
    for (int d = 0; d < 3; d++) {
        int s = a[d] * st[d] - pb[d];
        int e = min(s + k[d], in_[d] + pe[d]);
        area *= e - s;
        lo[d] = max(s, 0);
        hi[d] = min(e, in_[d]);
    }
    F32Buf X = F32Buf(pc.x);
    uint base = plane * pc.in0 * pc.in1 * pc.in2;
    float acc = 0.0, comp = 0.0, mx = -1.0 / 0.0;
    int cnt = 0;
    for (int i0 = lo[0]; i0 < hi[0]; i0++)
        for (int i1 = lo[1]; i1 < hi[1]; i1++)
            for (int i2 = lo[2]; i2 < hi[2]; i2++) {
                float v = X.v[base + (uint(i0) * pc.in1 + uint(i1)) * pc.in2 + uint(i2)];
                if (KIND == 1u) kahan_add(acc, comp, v);
                else if (!isnan(mx) && (v > mx || isnan(v))) mx = v;
                cnt++;
            }
    float r = KIND == 1u ? (acc - comp) / float(INCLUDE_PAD != 0u ? area : cnt) : mx;
    F32Buf(pc.out_).v[idx] = r;
}
