// pool_grad.comp — POOL_GRAD: pool's input gradient, one invocation per input
// element, gathering from the windows that cover it in output order (the
// CPU kernel's order): average adds dy / divisor, max adds dy where this
// element is the window's first maximum (NaN wins). Spatial dims as three.
//
// Spec constants: 0 = kind (0 max, 1 average), 1 = count_include_pad.
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint KIND = 0;
layout(constant_id = 1) const uint INCLUDE_PAD = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, dy, out_;
    uint total, pad_;
    uint in0, in1, in2, o0, o1, o2;
    uint k0, k1, k2, s0, s1, s2;
    int b0, b1, b2, e0, e1, e2;
} pc;

void main() {
    uint idx = LIN_ID(256u);
    if (idx >= pc.total) return;
    uint ivol = pc.in0 * pc.in1 * pc.in2, ovol = pc.o0 * pc.o1 * pc.o2;
    uint plane = idx / ivol, i = idx % ivol;
    int in_[3] = int[3](int(pc.in0), int(pc.in1), int(pc.in2)), out_n[3] = int[3](int(pc.o0), int(pc.o1), int(pc.o2));
    int k[3] = int[3](int(pc.k0), int(pc.k1), int(pc.k2)), st[3] = int[3](int(pc.s0), int(pc.s1), int(pc.s2));
    int pb[3] = int[3](pc.b0, pc.b1, pc.b2), pe[3] = int[3](pc.e0, pc.e1, pc.e2);
    int ii[3] = int[3](int(i / (pc.in1 * pc.in2)), int((i / pc.in2) % pc.in1), int(i % pc.in2));
    int olo[3], ohi[3];
    for (int d = 0; d < 3; d++) {
        int t = ii[d] + pb[d] - k[d] + 1;
        olo[d] = t <= 0 ? 0 : (t + st[d] - 1) / st[d];
        ohi[d] = min((ii[d] + pb[d]) / st[d] + 1, out_n[d]);
    }
    F32Buf X = F32Buf(pc.x), DY = F32Buf(pc.dy);
    uint xbase = plane * ivol, ybase = plane * ovol;
    float acc = 0.0, comp = 0.0;
    for (int a0 = olo[0]; a0 < ohi[0]; a0++)
        for (int a1 = olo[1]; a1 < ohi[1]; a1++)
            for (int a2 = olo[2]; a2 < ohi[2]; a2++) {
                int a[3] = int[3](a0, a1, a2), lo[3], hi[3];
                int area = 1, cnt = 1;
                for (int d = 0; d < 3; d++) {
                    int s = a[d] * st[d] - pb[d], e = min(s + k[d], in_[d] + pe[d]);
                    area *= e - s;
                    lo[d] = max(s, 0), hi[d] = min(e, in_[d]);
                    cnt *= hi[d] - lo[d];
                }
                float g = DY.v[ybase + (uint(a0) * pc.o1 + uint(a1)) * pc.o2 + uint(a2)];
                if (KIND == 1u) {
                    kahan_add(acc, comp, g / float(INCLUDE_PAD != 0u ? area : cnt));
                } else {
                    int best = -1;
                    float mx = 0.0;
                    for (int i0 = lo[0]; i0 < hi[0]; i0++)
                        for (int i1 = lo[1]; i1 < hi[1]; i1++)
                            for (int i2 = lo[2]; i2 < hi[2]; i2++) {
                                int at = (i0 * in_[1] + i1) * in_[2] + i2;
                                float v = X.v[xbase + uint(at)];
                                if (best < 0 || (!isnan(mx) && (v > mx || isnan(v)))) { best = at; mx = v; }
                            }
                    if (best == int(i)) kahan_add(acc, comp, g);
                }
            }
    F32Buf(pc.out_).v[idx] = acc - comp;
}
