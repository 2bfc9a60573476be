// norm.comp — LAYER_NORM and RMS_NORM over the last dim, and the fused
// residual forms ADD_LAYER_NORM / ADD_RMS_NORM (s = x + r rounded to the
// dtype, then the norm of s): one 256-wide workgroup per row of d elements.
//
// Spec constants: 0 = kind (0 layer, 1 rms), 1 = dtype (f32/f16/bf16),
// 2 = fused (reads r), 3 = has_beta.
// Statistics are two-pass (mean, then sum of squared deviations) with
// compensated per-invocation partials and a pairwise tree; the mean is kept as
// hi + lo so that centring loses nothing when the mean is large next to the
// spread (the CPU centres in double). Every pass recomputes s from x and r,
// so out may alias x or r: an element is written only by the invocation
// that reads it, after the statistics are complete.
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint KIND = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint FUSED = 0;
layout(constant_id = 3) const uint HAS_BETA = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, r, gamma, beta, out_;
    uint rows, d;
    float eps;
} pc;

shared float sh[256];

float round_dt(float v) {
    if (DT == DT_F16) return f16_to_f32(f32_to_f16(v));
    if (DT == DT_BF16) return bf16_to_f32(f32_to_bf16(v));
    return v;
}

float load_s(uint i) {
    float v = load_f(pc.x, DT, i);
    if (FUSED == 1u) v = round_dt(v + load_f(pc.r, DT, i));
    return v;
}

float tree_sum(float v, uint t) {
    sh[t] = v;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1) {
        if (t < h) sh[t] += sh[t + h];
        barrier();
    }
    float s = sh[0];
    barrier();
    return s;
}

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= pc.rows) return;   // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint base = row * pc.d;
    float fd = float(pc.d);
    float mean_hi = 0.0, mean_lo = 0.0;
    if (KIND == 0u) {
        float s = 0.0, c = 0.0;
        for (uint j = t; j < pc.d; j += 256u) kahan_add(s, c, load_s(base + j));
        precise float total = tree_sum(s - c, t);
        mean_hi = total / fd;
        precise float res = fma(-mean_hi, fd, total);   // total - mean_hi * d, exactly
        mean_lo = res / fd;
    }
    float s = 0.0, c = 0.0;
    for (uint j = t; j < pc.d; j += 256u) {
        precise float v = (load_s(base + j) - mean_hi) - mean_lo;
        kahan_add(s, c, v * v);
    }
    float ss = tree_sum(s - c, t);
    float inv = 1.0 / sqrt(ss / fd + pc.eps);
    for (uint j = t; j < pc.d; j += 256u) {
        float v = load_s(base + j);
        float y;
        if (KIND == 0u) y = (((v - mean_hi) - mean_lo) * inv) * load_f(pc.gamma, DT, j);
        else y = v * inv * load_f(pc.gamma, DT, j);
        if (HAS_BETA == 1u) y += load_f(pc.beta, DT, j);
        store_f(pc.out_, DT, base + j, y);
    }
}
