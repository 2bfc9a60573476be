// dequant_matvec_run.comp — the decode-shaped DEQUANT_MATMUL for the GGUF
// types that LLM weights mostly use (Q8_0, Q4_K, Q6_K): out[M, N] =
// x[M, K] · w[N, K]ᵀ for M <= 8, with the fused epilogues of
// dequant_matvec.comp (EPI 1: + res; EPI 2: SwiGLU over w (gate) and w2 (up)).
//
// Why a second matvec: dequant_matvec.comp gives each lane a whole 32-weight
// part, so adjacent lanes read x 128 bytes apart and every x load instruction
// touches 32 cache lines. On an H200 that, not DRAM, held it near 1 TB/s. Here
// the unit of work is a "run" of 8 consecutive weights: lane t takes runs
// t, t + T, ... of its rows, so adjacent lanes read adjacent 32-byte pieces of
// x (and nearby weight bytes), and one warp-wide load serves 32 lanes from a
// few cache lines. Each run is decoded with its block scale factored out of
// the dot product (d * Σ q·x instead of Σ (d·q)·x): the result differs from
// the CPU reference by float rounding only. Q8_0 on 16-byte-aligned planar
// rows (RUN16) takes runs of 16 weights instead: one 16-byte quant load.
//
// Groups of T threads (T a multiple of the subgroup size) own NR rows each
// (EPI 2: one output row, two weight rows); partial sums meet through
// subgroupAdd and, when a group spans several subgroups, shared memory.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 256) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"

layout(constant_id = 0) const uint QT = 13;    // rlx dtype of w: Q8_0 (13), Q4_K (16) or Q6_K (18)
layout(constant_id = 1) const uint NM = 1;     // rows of x (= M), 1..8
layout(constant_id = 2) const uint T = 64;     // threads per group: divides 256, a multiple of the subgroup size
layout(constant_id = 3) const uint NR = 1;     // output rows per group, 1..4 (EPI 2: 1)
layout(constant_id = 4) const uint VEC = 0;    // x rows 16-byte aligned (K % 8 == 0 always)
layout(constant_id = 5) const uint EPI = 0;    // 0 store, 1 + res, 2 SwiGLU
layout(constant_id = 6) const uint A4 = 0;     // bit 0: w (and w2) and row_bytes 4-byte aligned (Q4_K needs it);
                                               // bit 1: 16-byte aligned (Q4_K: one 16-byte header load)
layout(constant_id = 7) const uint RUN16 = 0;  // Q8_0 runs of 16 weights, one 16-byte load (the host sets it
                                               // only with w, w2, row_bytes and x 16-byte aligned)

const uint G = 256u / T;                       // groups per workgroup
const bool WIDE = RUN16 != 0u;
const uint RW = WIDE ? 16u : 8u;               // weights per run
const uint NS = EPI == 2u ? 2u : NR;           // weight rows (slots) per group

layout(push_constant, std430) uniform Push {
    uint64_t x, w, w2, res, out_;
    uint M, N, K;
    uint row_bytes;
    uint tiles;      // groups of G * (EPI 2 ? 1 : NR) output rows
    uint pad0, pad1, pad2;
} p;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer RunV4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer RunU4 { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer RunU2 { uvec2 v[]; };

vec4 ldx4(uint i) {   // i % 4 == 0
    if (VEC != 0u) return RunV4(p.x).v[i >> 2];
    return vec4(F32Buf(p.x).v[i], F32Buf(p.x).v[i + 1u], F32Buf(p.x).v[i + 2u], F32Buf(p.x).v[i + 3u]);
}

#include "dequant_matvec_common.glsl"   // wword, wbytes8, wbyte, wf16, group_sums
// Signed bytes of a word as floats.
vec4 s8x4(uint w) { return vec4((ivec4(int(w)) << ivec4(24, 16, 8, 0)) >> 24); }

// Run r (weights 8r .. 8r + 7) of the row at `row`: the quants q0, q1 and
// the run's scale ds (and, for Q4_K, the min term dmn): weight = ds*q - dmn.
struct run_t { vec4 q0, q1; float ds, dmn; };

run_t decode_run(uint64_t row, uint r) {
    run_t o;
    o.dmn = 0.0;
    if (QT == 13u) {   // Q8_0 (planar): run = 8 quants
        o.ds = wf16(row, pl_field(QT, p.K, 1u, r >> 2));
        uvec2 q = wbytes8a(row, 8u * r);
        o.q0 = s8x4(q.x);
        o.q1 = s8x4(q.y);
    } else if (QT == 16u) {   // Q4_K: 144-byte blocks [d, dmin f16][scales 12][qs 128]
        uint base = (r >> 5) * 144u, rr = r & 31u, sb = rr >> 2, c = rr & 3u;   // sub-block sb, chunk c
        // header: d, dmin, then scales[12] as words; all lanes of a block read the same 16 bytes
        uvec4 h = (A4 & 2u) != 0u ? RunU4(row).v[base >> 4]
                                  : uvec4(U32Buf(row).v[base >> 2], U32Buf(row).v[(base >> 2) + 1u],
                                          U32Buf(row).v[(base >> 2) + 2u], U32Buf(row).v[(base >> 2) + 3u]);
        vec2 dm = unpackHalf2x16(h.x);
        // scales byte j is byte (j & 3) of word h[1 + j / 4]; k4_scale_min in quant_k.c
        uint j4 = sb & 3u;
        uint b_lo = (h.y >> (8u * j4)) & 0xffu, b_mid = (h.z >> (8u * j4)) & 0xffu, b_hi = (h.w >> (8u * j4)) & 0xffu;
        uint sc, mn;   // 6-bit scale and min of sub-block sb
        if (sb < 4u) {
            sc = b_lo & 63u;
            mn = b_mid & 63u;
        } else {
            sc = (b_hi & 15u) | ((b_lo >> 6) << 4);
            mn = (b_hi >> 4) | ((b_mid >> 6) << 4);
        }
        uint qo = base + 16u + (sb >> 1) * 32u + 8u * c, sh = 4u * (sb & 1u);
        uvec2 qq = (A4 & 2u) != 0u ? RunU2(row).v[qo >> 3] : uvec2(U32Buf(row).v[qo >> 2], U32Buf(row).v[(qo >> 2) + 1u]);
        uint w0 = qq.x >> sh, w1 = qq.y >> sh;
        uvec4 sh8 = uvec4(0u, 8u, 16u, 24u);
        o.q0 = vec4((uvec4(w0) >> sh8) & 15u);
        o.q1 = vec4((uvec4(w1) >> sh8) & 15u);
        o.ds = dm.x * float(sc);
        o.dmn = dm.y * float(mn);
    } else {   // Q6_K (planar): per block ql 128, qh 64, scales 16 x int8, d f16
        uint b = r >> 5, rr = r & 31u;
        uint hh = rr >> 4, g = (rr >> 2) & 3u, l = 8u * (rr & 3u);
        float sc = float(bitfieldExtract(int(wbyte(row, pl_field(QT, p.K, 2u, b) + 8u * hh + (l >> 4) + 2u * g)), 0, 8));
        uint lo = pl_field(QT, p.K, 0u, b) + 64u * hh + 32u * (g & 1u) + l, hi = pl_field(QT, p.K, 1u, b) + 32u * hh + l;
        uvec2 lw = wbytes8a(row, lo) >> (4u * (g >> 1)), hw = wbytes8a(row, hi) >> (2u * g);
        uint l0 = lw.x, l1 = lw.y, h0 = hw.x, h1 = hw.y;
        uvec4 sh8 = uvec4(0u, 8u, 16u, 24u);
        o.q0 = vec4(ivec4(((uvec4(l0) >> sh8) & 15u) | (((uvec4(h0) >> sh8) & 3u) << 4)) - 32);
        o.q1 = vec4(ivec4(((uvec4(l1) >> sh8) & 15u) | (((uvec4(h1) >> sh8) & 3u) << 4)) - 32);
        o.ds = wf16(row, pl_field(QT, p.K, 3u, b)) * sc;
    }
    return o;
}

void main() {
    // A group is T / sgs whole subgroups; lanes are numbered from the subgroup
    // ids, not the invocation index, so the subgroup reductions stay inside a
    // group whatever layout the driver gives subgroups.
    const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID, sgs = gl_SubgroupSize;
    const uint spg = T / sgs;   // subgroups per group (T % sgs == 0)
    const uint grp = sg / spg, t = (sg - grp * spg) * sgs + lane;
    const uint runs = p.K / RW;
    const uint rows_per_group = EPI == 2u ? 1u : NR;

    for (uint tile = gl_WorkGroupID.x; tile < p.tiles; tile += gl_NumWorkGroups.x) {   // workgroup-uniform
        uint n0 = (tile * G + grp) * rows_per_group;
        uint64_t rows[NS];
        [[unroll]] for (uint s = 0u; s < NS; s++) {
            if (EPI == 2u) rows[s] = (s == 0u ? p.w : p.w2) + uint64_t(min(n0, p.N - 1u)) * uint64_t(p.row_bytes);
            else rows[s] = p.w + uint64_t(min(n0 + s, p.N - 1u)) * uint64_t(p.row_bytes);
        }
        float acc[NS][NM];
        [[unroll]] for (uint s = 0u; s < NS; s++)
            [[unroll]] for (uint m = 0u; m < NM; m++) acc[s][m] = 0.0;

        if (n0 < p.N && WIDE) {   // Q8_0, 16-weight runs: planar quants 16r.., the block's scale
            for (uint r = t; r < runs; r += T) {
                vec4 xv[NM][4];
                [[unroll]] for (uint m = 0u; m < NM; m++)
                    [[unroll]] for (uint j = 0u; j < 4u; j++) xv[m][j] = RunV4(p.x).v[(m * p.K + 16u * r) / 4u + j];
                [[unroll]] for (uint s = 0u; s < NS; s++) {
                    float ds = wf16(rows[s], pl_field(QT, p.K, 1u, r >> 1));
                    uvec4 q = RunU4(rows[s]).v[r];
                    [[unroll]] for (uint m = 0u; m < NM; m++)
                        acc[s][m] += ds * (dot(s8x4(q.x), xv[m][0]) + dot(s8x4(q.y), xv[m][1]) +
                                           dot(s8x4(q.z), xv[m][2]) + dot(s8x4(q.w), xv[m][3]));
                }
            }
        } else if (n0 < p.N) {   // group-uniform; rows past N skip the loads (no barriers inside)
            for (uint r = t; r < runs; r += T) {
                vec4 x0[NM], x1[NM];
                [[unroll]] for (uint m = 0u; m < NM; m++) {
                    x0[m] = ldx4(m * p.K + 8u * r);
                    x1[m] = ldx4(m * p.K + 8u * r + 4u);
                }
                [[unroll]] for (uint s = 0u; s < NS; s++) {
                    run_t q = decode_run(rows[s], r);
                    [[unroll]] for (uint m = 0u; m < NM; m++) {
                        float v = q.ds * (dot(q.q0, x0[m]) + dot(q.q1, x1[m]));
                        if (QT == 16u) {
                            vec4 xs = x0[m] + x1[m];
                            v -= q.dmn * (xs.x + xs.y + xs.z + xs.w);
                        }
                        acc[s][m] += v;
                    }
                }
            }
        }

        group_sums(acc, sg, lane, grp, spg, t);
        bool writer = spg > 1u ? t < NM : t == 0u;
        if (writer) {
            [[unroll]] for (uint s = 0u; s < rows_per_group; s++) {
                if (n0 + s >= p.N) continue;
                [[unroll]] for (uint m = 0u; m < NM; m++) {
                    if (spg > 1u && m != t) continue;
                    uint oi = m * p.N + n0 + s;
                    float y = acc[s][m];
                    if (EPI == 1u) y += F32Buf(p.res).v[oi];
                    if (EPI == 2u) y = y / (1.0 + exp(-y)) * acc[NS - 1u][m];
                    F32Buf(p.out_).v[oi] = y;
                }
            }
        }
    }
}
