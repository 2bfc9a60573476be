// adaptive_pool.comp — ADAPTIVE_POOL (GRAD 0: one invocation per output
// element, its window's mean or max) and ADAPTIVE_POOL_GRAD (GRAD 1: one
// invocation per input element, gathering from the windows holding it in
// output order; max: where it is the window's first maximum, NaN winning).
// Windows: output o of O over S covers [floor(o S / O), ceil((o + 1) S / O))
// (src/ir/adaptive_pool_geom.h). Spatial dims as three.
//
// Spec constants: 0 = GRAD, 1 = kind (0 max, 1 average).
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint GRAD = 0;
layout(constant_id = 1) const uint KIND = 1;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, dy, out_;
    uint total, pad_;
    uint in0, in1, in2, o0, o1, o2;
} pc;

void window(int o, int S, int O, out int lo, out int hi) {
    lo = (o * S) / O;
    hi = ((o + 1) * S + O - 1) / O;
}

void main() {
    uint idx = LIN_ID(256u);
    if (idx >= pc.total) return;
    int in_[3] = int[3](int(pc.in0), int(pc.in1), int(pc.in2)), on[3] = int[3](int(pc.o0), int(pc.o1), int(pc.o2));
    uint ivol = pc.in0 * pc.in1 * pc.in2, ovol = pc.o0 * pc.o1 * pc.o2;
    F32Buf X = F32Buf(pc.x);
    if (GRAD == 0u) {
        uint plane = idx / ovol, sp = idx % ovol;
        int a[3] = int[3](int(sp / (pc.o2 * pc.o1)), int((sp / pc.o2) % pc.o1), int(sp % pc.o2));
        int lo[3], hi[3];
        for (int d = 0; d < 3; d++) window(a[d], in_[d], on[d], lo[d], hi[d]);
        uint base = plane * ivol;
        float acc = 0.0, comp = 0.0, mx = 0.0;
        bool any = false;
        for (int i0 = lo[0]; i0 < hi[0]; i0++)
            for (int i1 = lo[1]; i1 < hi[1]; i1++)
                for (int i2 = lo[2]; i2 < hi[2]; i2++) {
                    float v = X.v[base + (uint(i0) * pc.in1 + uint(i1)) * pc.in2 + uint(i2)];
                    if (KIND == 1u) kahan_add(acc, comp, v);
                    else if (!any || (!isnan(mx) && (v > mx || isnan(v)))) { mx = v; any = true; }
                }
        int cnt = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
        F32Buf(pc.out_).v[idx] = KIND == 1u ? (acc - comp) / float(cnt) : mx;
        return;
    }
    uint plane = idx / ivol, sp = idx % ivol;
    int ii[3] = int[3](int(sp / (pc.in2 * pc.in1)), int((sp / pc.in2) % pc.in1), int(sp % pc.in2));
    int olo[3], ohi[3];
    for (int d = 0; d < 3; d++) {
        olo[d] = (ii[d] * on[d]) / in_[d];
        ohi[d] = min(((ii[d] + 1) * on[d] + in_[d] - 1) / in_[d], on[d]);
    }
    F32Buf DY = F32Buf(pc.dy);
    uint xbase = plane * ivol, ybase = plane * ovol;
    float acc = 0.0, comp = 0.0;
    for (int a0 = olo[0]; a0 < ohi[0]; a0++)
        for (int a1 = olo[1]; a1 < ohi[1]; a1++)
            for (int a2 = olo[2]; a2 < ohi[2]; a2++) {
                int a[3] = int[3](a0, a1, a2), lo[3], hi[3];
                for (int d = 0; d < 3; d++) window(a[d], in_[d], on[d], lo[d], hi[d]);
                float g = DY.v[ybase + (uint(a0) * pc.o1 + uint(a1)) * pc.o2 + uint(a2)];
                if (KIND == 1u) {
                    int cnt = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
                    kahan_add(acc, comp, g / float(cnt));
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
                    if (best == int(sp)) kahan_add(acc, comp, g);
                }
            }
    F32Buf(pc.out_).v[idx] = acc - comp;
}
