// norm_sg.comp — the row-per-subgroup variant of norm.comp (same ops, same
// spec constants 0..3, same push constants, same numerics): each subgroup owns
// one row, held in registers (spec constant 4 = K, elements per lane, so
// d <= K * subgroup size), statistics by subgroupAdd only: no shared memory,
// no barrier. A workgroup of 128 invocations holds 128 / subgroup size rows;
// subgroups walk the rows grid-stride, so the result is right whatever
// subgroup size the device picks. Lane l holds elements l, l + S, l + 2S, ...
// (S = gl_SubgroupSize), so each load instruction of the subgroup is
// contiguous. Every element is read once and written by the lane that read
// it, so out may alias x or r. Loads are scalar (load_f per element, any
// dtype); 16-byte vector loads for f32 are left to do.
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
layout(constant_id = 4) const uint K = 32;
layout(local_size_x = 128) in;

layout(push_constant) uniform PC {
    uint64_t x, r, gamma, beta, out_;
    uint rows, d;
    float eps;
} pc;

float round_dt(float v) {
    if (DT == DT_F16) return f16_to_f32(f32_to_f16(v));
    if (DT == DT_BF16) return bf16_to_f32(f32_to_bf16(v));
    return v;
}

void add_square(inout vec2 s, inout vec2 c, float v) {
    if (abs(v) <= SUMSQ_BIG) {
        kahan_add(s.x, c.x, v * v);
    } else {
        float w = v * SUMSQ_S;
        kahan_add(s.y, c.y, w * w);
    }
}

void main() {
    uint S = gl_SubgroupSize;
    uint l = gl_SubgroupInvocationID;
    uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint n_wg = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    float fd = float(pc.d);
    for (uint row = wg * gl_NumSubgroups + gl_SubgroupID; row < pc.rows; row += n_wg * gl_NumSubgroups) {
        uint base = row * pc.d;
        float v[K];
        [[unroll]] for (uint u = 0u; u < K; u++) {
            uint j = l + S * u;
            v[u] = 0.0;
            if (j < pc.d) {
                float a = load_f(pc.x, DT, base + j);
                if (FUSED == 1u) a = round_dt(a + load_f(pc.r, DT, base + j));
                v[u] = a;
            }
        }
        float mean_hi = 0.0, mean_lo = 0.0;
        if (KIND == 0u) {
            float s = 0.0, c = 0.0;
            [[unroll]] for (uint u = 0u; u < K; u++) kahan_add(s, c, v[u]);   // zeros past the end add nothing
            // compensated across lanes: subgroupAdd of the sums and of the corrections
            precise float total = subgroupAdd(s) - subgroupAdd(c);
            mean_hi = total / fd;
            precise float res = fma(-mean_hi, fd, total);
            mean_lo = res / fd;
        }
        vec2 s2 = vec2(0.0), c2 = vec2(0.0);
        [[unroll]] for (uint u = 0u; u < K; u++) {
            precise float dv = (v[u] - mean_hi) - mean_lo;
            if (l + S * u < pc.d) add_square(s2, c2, dv);
        }
        float inv = inv_rms(subgroupAdd(s2) - subgroupAdd(c2), fd, pc.eps);
        [[unroll]] for (uint u = 0u; u < K; u++) {
            uint j = l + S * u;
            if (j >= pc.d) continue;
            float y;
            if (KIND == 0u) y = (((v[u] - mean_hi) - mean_lo) * inv) * load_f(pc.gamma, DT, j);
            else y = v[u] * inv * load_f(pc.gamma, DT, j);
            if (HAS_BETA == 1u) y += load_f(pc.beta, DT, j);
            store_f(pc.out_, DT, base + j, y);
        }
    }
}
