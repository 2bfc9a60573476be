// attention_o.comp — decode attention fused with the o projection that reads
// it (lower/attention_o.c): one dispatch where there were two, and no
// pipeline barrier between them.
//
//   out[n] = res[n] + sum_k W[n, k] * a[k],  a = softmax(q k^T * scale) v
//
// for one query row: q [H, D], the k / v caches [Hkv, Skv, D] of which the
// first L rows are in use (L read on the device, so a recorded decode step
// replays as the cache fills), W Q8_0 in planar rows [N, H * D].
//
// Why (docs/gpu.md, "Attention fused with the o projection"): on the H200
// the o projection's time after the attention was not its weights' bytes but
// its stage: a launch behind a barrier, x read by every workgroup, the fill
// and drain of an 18 MB stream. Here the weights a workgroup needs are in
// flight while it computes the attention, and o's x never leaves it.
//
// Grid: (C chunks of o's rows) x (Hkv kv heads). Workgroup (c, g) computes
// the attention of the GH = H / Hkv query heads that share kv head g (the C
// workgroups of g compute the same; the cache rows come from L2), then the
// partial products of rows [c R, c R + R) with the group's GH * D columns of
// W, into part[g][row]. Then it counts itself done on chunk c's counter; the
// last of the chunk's Hkv workgroups adds the Hkv partials in the order
// g = 0, 1, ... (whichever finishes last, the sum is the same), adds res,
// stores out and zeroes the counter for the next run.
//
// Attention: subgroup s < NA walks keys s, s + NA, ... (KB at a time, their
// loads issued together); a lane holds SL vec4 slots of each head (slot t:
// dims 4 (t S + lane) .. + 3, S the subgroup size); a key's GH scores are
// subgroup sums; the online softmax works in the log2 domain as
// attention.comp's; the NA partial states merge in shared memory. No key
// (L = 0) gives zeros, as attention.comp.
//
// o: subgroup s takes rows c R + s, + NSG, ...; a lane units lane,
// lane + S, ... (UT of them) of a row's slice, a unit 8 quants and its block's
// scale. The first PF rows of every subgroup are loaded before the attention.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x_id = 0) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"

layout(constant_id = 1) const uint D = 128;   // head dim (% 4 == 0)
layout(constant_id = 2) const uint GH = 4;    // query heads per kv head
layout(constant_id = 3) const uint SL = 1;    // vec4 slots of a head per lane: ceil(D / 4 / S)
layout(constant_id = 4) const uint NA = 16;   // subgroups that walk the keys (<= subgroups)
layout(constant_id = 5) const uint UT = 2;    // units of a row's slice per lane: ceil(GH D / 8 / S)
layout(constant_id = 6) const uint PF = 8;    // rows per subgroup loaded before the attention
layout(constant_id = 7) const uint KB = 2;    // keys per subgroup whose loads issue together
layout(constant_id = 8) const uint ABL = 0;   // timing ablations (RLX_VK_ATT_O_ABL; results wrong): bit 0 no
                                              // attention (x = q), bit 1 no o weight loads, bit 2 no partial sums
                                              // (each workgroup stores its own partial as out)

const uint D4 = D / 4u;
const uint KS = GH * D;   // the group's columns of W
const float NEG_INF = -1.0 / 0.0;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer V4In { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer U2In { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) readonly buffer H16In { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CohF { float v[]; };

layout(push_constant, std430) uniform Push {
    uint64_t q, k, v, kvlen, w, res, out_, part, counters;
    uint Skv, N, K, row_bytes;
    uint rows;          // rows per chunk (R)
    float scale_log2;   // scale * log2(e)
    uint pad0, pad1;
} p;

shared vec4 s_acc[NA * GH * D4];   // the key walkers' unnormalized outputs
shared vec2 s_ml[NA * GH];         // and their (running max, sum)
shared vec4 s_x[KS / 4u];          // the group's attention output: o's x slice
shared bool s_last;

// Unit u (8 quants) of the group's slice of row `row`: quants, f16 scale bits.
void load_unit(uint row, uint u, out uvec2 qs, out uint d) {
    uint64_t base = p.w + uint64_t(row) * p.row_bytes;
    uint col = gl_WorkGroupID.y * KS + 8u * u;
    qs = U2In(base).v[col / 8u];
    d = uint(H16In(base).v[p.K / 2u + col / 32u]);
}

vec4 i8x4(uint w) {
    int s = int(w);
    return vec4(bitfieldExtract(s, 0, 8), bitfieldExtract(s, 8, 8), bitfieldExtract(s, 16, 8), bitfieldExtract(s, 24, 8));
}

float unit_dot(uvec2 qs, uint d, uint u) {
    return unpackHalf2x16(d).x * (dot(i8x4(qs.x), s_x[2u * u]) + dot(i8x4(qs.y), s_x[2u * u + 1u]));
}

void main() {
    const uint S = gl_SubgroupSize, sg = gl_SubgroupID, lane = gl_SubgroupInvocationID, NSG = gl_NumSubgroups;
    const uint lid = gl_LocalInvocationIndex, WG = gl_WorkGroupSize.x;
    const uint c = gl_WorkGroupID.x, g = gl_WorkGroupID.y, HKV = gl_NumWorkGroups.y;
    const uint r0 = c * p.rows, r1 = min(p.N, r0 + p.rows);
    const uint units = KS / 8u;

    // ---- the first PF rows' weights, in flight through the attention
    uvec2 wq[PF][UT];
    uint wd[PF][UT];
    [[unroll]] for (uint i = 0u; i < PF; i++) {
        uint row = r0 + sg + i * NSG;
        [[unroll]] for (uint t = 0u; t < UT; t++) {
            uint u = lane + t * S;
            wq[i][t] = uvec2(0u);
            wd[i][t] = 0u;
            if (row < r1 && u < units && (ABL & 2u) == 0u) load_unit(row, u, wq[i][t], wd[i][t]);
        }
    }

    // ---- attention of the group's GH heads
    const uint L = p.kvlen != 0ul ? uint(clamp(I32Buf(p.kvlen).v[0], 0, int(p.Skv))) : p.Skv;
    if (sg < NA && (ABL & 1u) != 0u) {   // ablation: q itself as the attention's output
        [[unroll]] for (uint h = 0u; h < GH; h++) {
            if (lane == 0u) s_ml[sg * GH + h] = vec2(0.0, 1.0);
            [[unroll]] for (uint t = 0u; t < SL; t++) {
                uint i4 = t * S + lane;
                if (i4 < D4) s_acc[(sg * GH + h) * D4 + i4] = V4In(p.q).v[(g * GH + h) * D4 + i4];
            }
        }
    } else if (sg < NA) {
        vec4 qv[GH][SL], acc[GH][SL];
        float m[GH], l[GH];
        [[unroll]] for (uint h = 0u; h < GH; h++) {
            m[h] = NEG_INF;
            l[h] = 0.0;
            [[unroll]] for (uint t = 0u; t < SL; t++) {
                uint i4 = t * S + lane;
                acc[h][t] = vec4(0.0);
                qv[h][t] = i4 < D4 ? V4In(p.q).v[(g * GH + h) * D4 + i4] : vec4(0.0);
            }
        }
        const uint kvrow0 = g * p.Skv;
        for (uint j0 = sg; j0 < L; j0 += NA * KB) {
            vec4 kr[KB][SL], vr[KB][SL];
            [[unroll]] for (uint b = 0u; b < KB; b++) {
                uint j = j0 + b * NA;
                [[unroll]] for (uint t = 0u; t < SL; t++) {
                    uint i4 = t * S + lane;
                    bool ok = j < L && i4 < D4;
                    kr[b][t] = ok ? V4In(p.k).v[(kvrow0 + j) * D4 + i4] : vec4(0.0);
                    vr[b][t] = ok ? V4In(p.v).v[(kvrow0 + j) * D4 + i4] : vec4(0.0);
                }
            }
            [[unroll]] for (uint b = 0u; b < KB; b++) {
                if (j0 + b * NA >= L) break;   // uniform in the subgroup
                [[unroll]] for (uint h = 0u; h < GH; h++) {
                    float s = 0.0;
                    [[unroll]] for (uint t = 0u; t < SL; t++) s += dot(qv[h][t], kr[b][t]);
                    s = subgroupAdd(s) * p.scale_log2;
                    float mn = max(m[h], s);
                    if (mn == NEG_INF) continue;   // no finite score yet
                    float corr = exp2(m[h] - mn), e = exp2(s - mn);
                    l[h] = l[h] * corr + e;
                    [[unroll]] for (uint t = 0u; t < SL; t++) acc[h][t] = acc[h][t] * corr + e * vr[b][t];
                    m[h] = mn;
                }
            }
        }
        [[unroll]] for (uint h = 0u; h < GH; h++) {
            if (lane == 0u) s_ml[sg * GH + h] = vec2(m[h], l[h]);
            [[unroll]] for (uint t = 0u; t < SL; t++) {
                uint i4 = t * S + lane;
                if (i4 < D4) s_acc[(sg * GH + h) * D4 + i4] = acc[h][t];
            }
        }
    }
    barrier();
    for (uint i = lid; i < GH * D4; i += WG) {   // the walkers' states merged: (head, vec4 of dims)
        uint h = i / D4, i4 = i - h * D4;
        float mx = NEG_INF;
        for (uint s = 0u; s < NA; s++) mx = max(mx, s_ml[s * GH + h].x);
        vec4 num = vec4(0.0);
        float den = 0.0;
        if (mx != NEG_INF) {
            for (uint s = 0u; s < NA; s++) {
                vec2 ml = s_ml[s * GH + h];
                float f = exp2(ml.x - mx);
                num += s_acc[(s * GH + h) * D4 + i4] * f;
                den += ml.y * f;
            }
        }
        s_x[i] = den > 0.0 ? num / den : vec4(0.0);
    }
    barrier();

    // ---- o: this workgroup's rows times the group's columns, PF rows at a time
    for (uint i0 = 0u; r0 + sg + i0 * NSG < r1; i0 += PF) {
        if (i0 > 0u) {
            [[unroll]] for (uint i = 0u; i < PF; i++) {
                uint row = r0 + sg + (i0 + i) * NSG;
                [[unroll]] for (uint t = 0u; t < UT; t++) {
                    uint u = lane + t * S;
                    wq[i][t] = uvec2(0u);
                    wd[i][t] = 0u;
                    if (row < r1 && u < units && (ABL & 2u) == 0u) load_unit(row, u, wq[i][t], wd[i][t]);
                    else wq[i][t] = uvec2(row);   // ablation: something row-dependent, not loaded
                }
            }
        }
        [[unroll]] for (uint i = 0u; i < PF; i++) {
            uint row = r0 + sg + (i0 + i) * NSG;
            if (row >= r1) break;   // uniform in the subgroup
            float y = 0.0;
            [[unroll]] for (uint t = 0u; t < UT; t++) {
                uint u = lane + t * S;
                if (u < units) y += unit_dot(wq[i][t], wd[i][t], u);
            }
            y = subgroupAdd(y);
            if (lane == 0u && (ABL & 4u) != 0u) F32Buf(p.out_).v[row] = y;
            else if (lane == 0u) CohF(p.part).v[g * p.N + row] = y;
        }
    }

    // ---- the last of the chunk's workgroups sums the partials in order
    if ((ABL & 4u) != 0u) return;
    memoryBarrierBuffer();
    barrier();
    if (lid == 0u) s_last = atomicAdd(U32Buf(p.counters).v[c], 1u) == HKV - 1u;
    barrier();
    if (!s_last) return;
    memoryBarrierBuffer();
    for (uint row = r0 + lid; row < r1; row += WG) {
        float y = 0.0;
        for (uint gg = 0u; gg < HKV; gg++) y += CohF(p.part).v[gg * p.N + row];
        F32Buf(p.out_).v[row] = y + F32Buf(p.res).v[row];
    }
    if (lid == 0u) U32Buf(p.counters).v[c] = 0u;
}
