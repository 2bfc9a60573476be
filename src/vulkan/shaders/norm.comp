// norm.comp — LAYER_NORM and RMS_NORM over the last dim, and the fused
// residual forms ADD_LAYER_NORM / ADD_RMS_NORM (s = x + r rounded to the
// dtype, then the norm of s): one 256-wide workgroup per row of d elements.
//
// Spec constants: 0 = kind (0 layer, 1 rms), 1 = dtype (f32/f16/bf16),
// 2 = fused (reads r), 3 = has_beta, 4 = grouped: GROUP_NORM, whose rows are
// the (n, group) runs of x [N, C, *S] (d = C/groups * S elements) and whose
// gamma and beta are per channel: element j of row r has channel
// ((r % groups) * d + j) / sp, sp = S.
// Statistics are two-pass (mean, then sum of squared deviations) with
// compensated per-invocation partials, summed across the workgroup by
// subgroupAdd and then over the subgroups' partials; the mean is kept as
// hi + lo so that centring loses nothing when the mean is large next to the
// spread (the CPU centres in double). Every pass recomputes s from x and r,
// so out may alias x or r: an element is written only by the invocation
// that reads it, after the statistics are complete.
//
// The sum of squares has two buckets (sumsq.glsl), so it cannot overflow.
//
// Why chunks of CH loads: a row is short (a decode step normalizes one row of
// a few thousand elements), so the kernel is one workgroup long and its time
// is load latency. Walking the row one element per invocation at a time
// waits for each load before issuing the next (time grows with d: ~12 us per
// 4096-element row on an H200), so each pass issues CH independent loads per
// invocation before using any of them.
#version 450
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "ew_common.glsl"
#include "sumsq.glsl"

layout(constant_id = 0) const uint KIND = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint FUSED = 0;
layout(constant_id = 3) const uint HAS_BETA = 0;
layout(constant_id = 4) const uint GROUPED = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, r, gamma, beta, out_;
    uint rows, d;
    float eps;
    uint sp, groups, pad_;
} pc;

const uint CH = 8u;   // loads in flight per invocation and pass

shared float sh[256];   // one partial per subgroup (subgroups of >= 1 invocation)
shared vec2 sh2[256];

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

// CH elements of the row, 256 apart from j0 (past the row's end the index
// falls back to j0, this invocation's own element, so the loads need no branch
// and never touch an element another invocation may be writing when out
// aliases x; callers skip those).
void load_chunk(uint base, uint j0, out float v[CH]) {
    [[unroll]] for (uint u = 0u; u < CH; u++) {
        uint j = j0 + 256u * u;
        v[u] = load_s(base + (j < pc.d ? j : j0));
    }
}

float workgroup_sum(float v) {
    float s = subgroupAdd(v);
    if (subgroupElect()) sh[gl_SubgroupID] = s;
    barrier();
    float total = 0.0, c = 0.0;   // compensated: a mean far from zero must not lose digits here
    for (uint i = 0u; i < gl_NumSubgroups; i++) kahan_add(total, c, sh[i]);
    barrier();
    return total - c;
}

// Both buckets of the sum of squares in one reduction.
vec2 workgroup_sum2(vec2 v) {
    vec2 s = subgroupAdd(v);
    if (subgroupElect()) sh2[gl_SubgroupID] = s;
    barrier();
    float t0 = 0.0, c0 = 0.0, t1 = 0.0, c1 = 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; i++) {
        kahan_add(t0, c0, sh2[i].x);
        kahan_add(t1, c1, sh2[i].y);
    }
    barrier();
    return vec2(t0 - c0, t1 - c1);
}

// Adds v * v to the lo or hi bucket.
void add_square(inout vec2 s, inout vec2 c, float v) {
    if (abs(v) <= SUMSQ_BIG) {
        kahan_add(s.x, c.x, v * v);
    } else {
        float w = v * SUMSQ_S;
        kahan_add(s.y, c.y, w * w);
    }
}

// gamma's and beta's index for element j of a row (chan0: the row's first
// element's offset within its sample, grouped).
uint param_index(uint chan0, uint j) { return GROUPED == 1u ? (chan0 + j) / pc.sp : j; }

void main() {
    uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= pc.rows) return;   // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint base = row * pc.d;
    float fd = float(pc.d);
    float mean_hi = 0.0, mean_lo = 0.0;
    float v[CH];
    if (KIND == 0u) {
        float s = 0.0, c = 0.0;
        for (uint j0 = t; j0 < pc.d; j0 += 256u * CH) {
            load_chunk(base, j0, v);
            [[unroll]] for (uint u = 0u; u < CH; u++)
                if (j0 + 256u * u < pc.d) kahan_add(s, c, v[u]);
        }
        precise float total = workgroup_sum(s - c);
        mean_hi = total / fd;
        precise float res = fma(-mean_hi, fd, total);   // total - mean_hi * d, exactly
        mean_lo = res / fd;
    }
    vec2 s2 = vec2(0.0), c2 = vec2(0.0);
    for (uint j0 = t; j0 < pc.d; j0 += 256u * CH) {
        load_chunk(base, j0, v);
        [[unroll]] for (uint u = 0u; u < CH; u++) {
            precise float dv = (v[u] - mean_hi) - mean_lo;
            if (j0 + 256u * u < pc.d) add_square(s2, c2, dv);
        }
    }
    float inv = inv_rms(workgroup_sum2(s2 - c2), fd, pc.eps);
    uint chan0 = GROUPED == 1u ? (row % pc.groups) * pc.d : 0u;
    for (uint j0 = t; j0 < pc.d; j0 += 256u * CH) {
        load_chunk(base, j0, v);
        float g[CH];
        [[unroll]] for (uint u = 0u; u < CH; u++) g[u] = load_f(pc.gamma, DT, param_index(chan0, min(j0 + 256u * u, pc.d - 1u)));   // gamma is never written
        [[unroll]] for (uint u = 0u; u < CH; u++) {
            uint j = j0 + 256u * u;
            if (j >= pc.d) continue;
            float y;
            if (KIND == 0u) y = (((v[u] - mean_hi) - mean_lo) * inv) * g[u];
            else y = v[u] * inv * g[u];
            if (HAS_BETA == 1u) y += load_f(pc.beta, DT, param_index(chan0, j));
            store_f(pc.out_, DT, base + j, y);
        }
    }
}
