// matvec.comp — the "matvec" tier: M == 1 (decode-shaped, memory-bound)
// c[n] = act(sum_k a[k] * b[k, n] + bias[n]), f32 accumulation.
//
// TRANS_B (b [N, K], a linear layer's weight layout): each subgroup owns
// one output column at a time, its lanes stride along the weight row with
// 4-element loads (four in flight) and subgroupAdd() finishes the dot
// product. A workgroup covers p.pad0 columns (256 / subgroup size, so every
// subgroup has one and the grid is wide enough to fill the GPU). Works for
// any subgroup size that divides 256 (8 on lavapipe, 32 on NVIDIA).
//
// Otherwise (b [K, N]): each invocation owns 4 adjacent columns of one of 16
// k-slices, so a row of b is read contiguously across the workgroup; the 16
// partial sums meet in shared memory.
//
// p.tiles_m holds the number of column tiles (the x grid may be smaller and
// loop), p.pad0 the columns per workgroup when TRANS_B.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "matmul_common.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint DT = 0;
layout(constant_id = 1) const uint TRANS_B = 0;
layout(constant_id = 2) const uint ACT = 0;
layout(constant_id = 3) const uint HAS_BIAS = 0;
layout(constant_id = 4) const uint VEC = 0;   // bit 0: a and b rows allow aligned 4-element loads

const uint COLS_N = 64u;    // columns per workgroup, b [K, N]
const uint KS = 16u;        // k-slices, b [K, N]

shared vec4 red[KS * COLS_N / 4u];

float epilogue(float v, uint n) {
    if (HAS_BIAS != 0u) v += mm_ld(p.bias, DT, n);
    return mm_activate(v, ACT);
}

vec4 ld4(uint64_t base, uint i, uint limit) {
    return (VEC & 1u) != 0u ? mm_ld4_vec(base, DT, i) : mm_ld4_guard(base, DT, i, limit);
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    for (uint bz = gl_WorkGroupID.z; bz < p.nbatch; bz += gl_NumWorkGroups.z) {
        uint64_t aa, ba, ca;
        batch_addrs(bz, DT, aa, ba, ca);
        for (uint tile = gl_WorkGroupID.x; tile < p.tiles_m; tile += gl_NumWorkGroups.x) {
            if (TRANS_B != 0u) {
                uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
                uint lane = gl_SubgroupInvocationID, sgs = gl_SubgroupSize;
                uint n0 = tile * p.pad0;
                for (uint c = sg; c < p.pad0; c += nsg) {
                    uint n = n0 + c;
                    if (n >= p.N) break;   // subgroup-uniform
                    uint64_t row = ba + uint64_t(n) * uint64_t(p.K) * uint64_t(elem_size(DT));
                    vec4 acc = vec4(0.0);
                    uint step = sgs * 4u;
                    uint k = lane * 4u;
                    // 4 loads of the weight row in flight per lane
                    for (; k + 3u * step < p.K; k += 4u * step) {
                        vec4 w0 = ld4(row, k, p.K), w1 = ld4(row, k + step, p.K);
                        vec4 w2 = ld4(row, k + 2u * step, p.K), w3 = ld4(row, k + 3u * step, p.K);
                        acc += ld4(aa, k, p.K) * w0 + ld4(aa, k + step, p.K) * w1 +
                               ld4(aa, k + 2u * step, p.K) * w2 + ld4(aa, k + 3u * step, p.K) * w3;
                    }
                    for (; k < p.K; k += step) acc += ld4(aa, k, p.K) * ld4(row, k, p.K);
                    float s = subgroupAdd(acc.x + acc.y + acc.z + acc.w);
                    if (lane == 0u) mm_st(ca, DT, n, epilogue(s, n));
                }
            } else {
                uint tx = tid % (COLS_N / 4u), ks = tid / (COLS_N / 4u);
                uint n = tile * COLS_N + tx * 4u;
                vec4 acc = vec4(0.0);
                if (n < p.N) {
                    for (uint k = ks; k < p.K; k += KS) {
                        float av = mm_ld(aa, DT, k);
                        acc += av * ld4(ba, k * p.N + n, k * p.N + p.N);
                    }
                }
                red[tid] = acc;
                barrier();
                if (ks == 0u && n < p.N) {
                    vec4 s = red[tx];
                    [[unroll]] for (uint j = 1; j < KS; j++) s += red[j * (COLS_N / 4u) + tx];
                    mm_st(ca, DT, n, epilogue(s.x, n));
                    if (n + 1u < p.N) mm_st(ca, DT, n + 1u, epilogue(s.y, n + 1u));
                    if (n + 2u < p.N) mm_st(ca, DT, n + 2u, epilogue(s.z, n + 2u));
                    if (n + 3u < p.N) mm_st(ca, DT, n + 3u, epilogue(s.w, n + 3u));
                }
                barrier();
            }
        }
    }
}
