// resize.comp — RESIZE (GRAD 0: one invocation per output element, the sum of
// its axes' taps) and RESIZE_GRAD (GRAD 1: one invocation per input element,
// gathering from the outputs that reach it, found by binary search on the
// monotone tap base): src/ir/resize_geom.h's rule, spatial dims as three.
// The source coordinate is o * a + b in f32, `precise` so that no fused
// multiply-add changes which input the nearest mode picks (the CPU rounds the
// same two steps). Sums in a fixed order; no atomics.
//
// Spec constants: 0 = GRAD, 1 = mode (0 nearest, 1 linear, 2 cubic),
// 2 = nearest mode (0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil),
// 3 = exclude_outside.
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint GRAD = 0;
layout(constant_id = 1) const uint MODE = 1;
layout(constant_id = 2) const uint NEAREST = 0;
layout(constant_id = 3) const uint EXCLUDE = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t src, dst;
    uint total, pad_;
    uint in0, in1, in2, o0, o1, o2;
    float a0, a1, a2, b0, b1, b2;
    float cubic_a;
} pc;

int base_of(float a, float b, int o, out float t) {
    precise float x = float(o) * a + b;
    float f = floor(x);
    t = x - f;
    int fi = int(f);
    if (MODE != 0u) return fi;
    if (NEAREST == 0u) return fi + (t > 0.5 ? 1 : 0);
    if (NEAREST == 1u) return fi + (t >= 0.5 ? 1 : 0);
    if (NEAREST == 2u) return fi;
    return fi + (t > 0.0 ? 1 : 0);
}

// Output o's taps along an axis of n inputs (clamped indices); returns the count.
int taps(float a, float b, int n, int o, out int idx[4], out float w[4]) {
    float t;
    int base = base_of(a, b, o, t);
    if (MODE == 0u) {
        idx[0] = clamp(base, 0, n - 1); w[0] = 1.0;
        return 1;
    }
    if (MODE == 1u) {
        idx[0] = clamp(base, 0, n - 1); w[0] = 1.0 - t;
        idx[1] = clamp(base + 1, 0, n - 1); w[1] = t;
        return 2;
    }
    float A = pc.cubic_a, u = t + 1.0, v = 1.0 - t, z = v + 1.0;
    w[0] = ((A * u - 5.0 * A) * u + 8.0 * A) * u - 4.0 * A;
    w[1] = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
    w[2] = ((A + 2.0) * v - (A + 3.0)) * v * v + 1.0;
    w[3] = ((A * z - 5.0 * A) * z + 8.0 * A) * z - 4.0 * A;
    float sum = 0.0;
    for (int k = 0; k < 4; k++) {
        int j = base - 1 + k;
        if (EXCLUDE != 0u && (j < 0 || j >= n)) w[k] = 0.0;
        sum += w[k];
        idx[k] = clamp(j, 0, n - 1);
    }
    if (EXCLUDE != 0u)
        for (int k = 0; k < 4; k++) w[k] /= sum;
    return 4;
}

float weight(float a, float b, int n, int o, int i) {
    int idx[4];
    float w[4], s = 0.0;
    int c = taps(a, b, n, o, idx, w);
    for (int k = 0; k < c; k++)
        if (idx[k] == i) s += w[k];
    return s;
}

// The outputs [lo, hi) of `out` whose taps may reach input i of n.
void users(float a, float b, int n, int outn, int i, out int lo, out int hi) {
    int kmin = MODE == 2u ? -1 : 0, kmax = MODE == 2u ? 2 : MODE == 1u ? 1 : 0;
    bool first = i == 0, last = i == n - 1;
    int want_lo = i - kmax, want_hi = i - kmin;
    float t;
    int l = 0, h = outn;
    while (l < h) {
        int m = (l + h) / 2;
        if (first || base_of(a, b, m, t) >= want_lo) h = m; else l = m + 1;
    }
    lo = l;
    h = outn;
    while (l < h) {
        int m = (l + h) / 2;
        if (!last && base_of(a, b, m, t) > want_hi) h = m; else l = m + 1;
    }
    hi = l;
}

void main() {
    uint idx = LIN_ID(256u);
    if (idx >= pc.total) return;
    F32Buf S = F32Buf(pc.src);
    float acc = 0.0, comp = 0.0;
    if (GRAD == 0u) {
        uint ovol = pc.o0 * pc.o1 * pc.o2, plane = idx / ovol, sp = idx % ovol;
        int q2 = int(sp % pc.o2), q1 = int((sp / pc.o2) % pc.o1), q0 = int(sp / (pc.o2 * pc.o1));
        int i0[4], i1[4], i2[4];
        float w0[4], w1[4], w2[4];
        int n0 = taps(pc.a0, pc.b0, int(pc.in0), q0, i0, w0);
        int n1 = taps(pc.a1, pc.b1, int(pc.in1), q1, i1, w1);
        int n2 = taps(pc.a2, pc.b2, int(pc.in2), q2, i2, w2);
        uint base = plane * pc.in0 * pc.in1 * pc.in2;
        for (int k0 = 0; k0 < n0; k0++)
            for (int k1 = 0; k1 < n1; k1++) {
                float w01 = w0[k0] * w1[k1];
                uint row = base + (uint(i0[k0]) * pc.in1 + uint(i1[k1])) * pc.in2;
                for (int k2 = 0; k2 < n2; k2++) kahan_add(acc, comp, w01 * w2[k2] * S.v[row + uint(i2[k2])]);
            }
    } else {
        // src is dy [.., o0, o1, o2], dst is dx [.., in0, in1, in2]
        uint ivol = pc.in0 * pc.in1 * pc.in2, plane = idx / ivol, sp = idx % ivol;
        int j2 = int(sp % pc.in2), j1 = int((sp / pc.in2) % pc.in1), j0 = int(sp / (pc.in2 * pc.in1));
        int l0, h0, l1, h1, l2, h2;
        users(pc.a0, pc.b0, int(pc.in0), int(pc.o0), j0, l0, h0);
        users(pc.a1, pc.b1, int(pc.in1), int(pc.o1), j1, l1, h1);
        users(pc.a2, pc.b2, int(pc.in2), int(pc.o2), j2, l2, h2);
        uint base = plane * pc.o0 * pc.o1 * pc.o2;
        for (int q0 = l0; q0 < h0; q0++) {
            float w0 = weight(pc.a0, pc.b0, int(pc.in0), q0, j0);
            if (w0 == 0.0) continue;
            for (int q1 = l1; q1 < h1; q1++) {
                float w1 = weight(pc.a1, pc.b1, int(pc.in1), q1, j1);
                if (w1 == 0.0) continue;
                float w01 = w0 * w1;
                uint row = base + (uint(q0) * pc.o1 + uint(q1)) * pc.o2;
                for (int q2 = l2; q2 < h2; q2++) {
                    float w2 = weight(pc.a2, pc.b2, int(pc.in2), q2, j2);
                    if (w2 != 0.0) kahan_add(acc, comp, w01 * w2 * S.v[row + uint(q2)]);
                }
            }
        }
    }
    F32Buf(pc.dst).v[idx] = acc - comp;
}
