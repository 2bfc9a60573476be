// conv_grad.comp — CONV_TRANSPOSE (MODE 0) and CONV_WEIGHT_GRAD (MODE 1),
// direct gathers in f32, one invocation per output element, spatial dims
// right-aligned into three (src/cpu/kernels/conv_grad.c computes the same
// sums in the same order in double).
//   MODE 0: out[n, oc, y] = b[oc] + sum_{ic in oc's group, k} x[n, ic, i] w[ic, oc % Og, k]
//           where y = i * stride - pad + k * dilation;
//   MODE 1: out[o, c, k] = sum_{n, y} dy[n, o, y] x[n, g Cg + c, y * stride - pad + k * dilation].
// Spec constants: 0 = mode, 1 = has bias (mode 0).
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint MODE = 0;
layout(constant_id = 1) const uint HAS_BIAS = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t a, b, bias, out_;        // mode 0: a = x, b = w; mode 1: a = x, b = dy
    uint N, C, O, groups, total;
    uint in0, in1, in2, k0, k1, k2;
    uint o0, o1, o2;                  // mode 0: the output's spatial dims; mode 1: dy's
    uint s0, s1, s2, d0, d1, d2;
    int p0, p1, p2;
} pc;

void main() {
    uint idx = LIN_ID(256u);
    if (idx >= pc.total) return;
    uint ivol = pc.in0 * pc.in1 * pc.in2, kvol = pc.k0 * pc.k1 * pc.k2, ovol = pc.o0 * pc.o1 * pc.o2;
    uint Cg = pc.C / pc.groups, Og = pc.O / pc.groups;
    int in_[3] = int[3](int(pc.in0), int(pc.in1), int(pc.in2));
    int st[3] = int[3](int(pc.s0), int(pc.s1), int(pc.s2)), dl[3] = int[3](int(pc.d0), int(pc.d1), int(pc.d2));
    int pd[3] = int[3](pc.p0, pc.p1, pc.p2);
    F32Buf A = F32Buf(pc.a), B = F32Buf(pc.b);
    float acc = 0.0, comp = 0.0;
    if (MODE == 0u) {
        uint y = idx % ovol, t = idx / ovol, oc = t % pc.O, n = t / pc.O;
        int yy[3] = int[3](int(y / (pc.o1 * pc.o2)), int((y / pc.o2) % pc.o1), int(y % pc.o2));
        uint g = oc / Og, ocg = oc % Og;
        for (uint ic = g * Cg; ic < (g + 1u) * Cg; ic++)
            for (uint k = 0; k < kvol; k++) {
                int kk[3] = int[3](int(k / (pc.k1 * pc.k2)), int((k / pc.k2) % pc.k1), int(k % pc.k2));
                bool ok = true;
                uint src = 0;
                for (int d = 0; d < 3; d++) {
                    int q = yy[d] + pd[d] - kk[d] * dl[d];
                    bool here = q >= 0 && q % st[d] == 0 && q / st[d] < in_[d];
                    ok = ok && here;
                    src = src * uint(in_[d]) + (here ? uint(q / st[d]) : 0u);
                }
                if (ok) kahan_add(acc, comp, A.v[(n * pc.C + ic) * ivol + src] * B.v[(ic * Og + ocg) * kvol + k]);
            }
        float r = acc - comp;
        if (HAS_BIAS != 0u) r += F32Buf(pc.bias).v[oc];
        F32Buf(pc.out_).v[idx] = r;
    } else {
        uint k = idx % kvol, t = idx / kvol, c = t % Cg, o = t / Cg;
        int kk[3] = int[3](int(k / (pc.k1 * pc.k2)), int((k / pc.k2) % pc.k1), int(k % pc.k2));
        uint g = o / Og;
        for (uint n = 0; n < pc.N; n++)
            for (uint y = 0; y < ovol; y++) {
                int yy[3] = int[3](int(y / (pc.o1 * pc.o2)), int((y / pc.o2) % pc.o1), int(y % pc.o2));
                bool ok = true;
                uint src = 0;
                for (int d = 0; d < 3; d++) {
                    int i = yy[d] * st[d] - pd[d] + kk[d] * dl[d];
                    bool here = i >= 0 && i < in_[d];
                    ok = ok && here;
                    src = src * uint(in_[d]) + (here ? uint(i) : 0u);
                }
                if (ok) kahan_add(acc, comp, B.v[(n * pc.O + o) * ovol + y] * A.v[(n * pc.C + g * Cg + c) * ivol + src]);
            }
        F32Buf(pc.out_).v[idx] = acc - comp;
    }
}
