// dequant_mm_coopmat.comp — the "dequant-mm-coopmat-<type>" tier:
// DEQUANT_MATMUL at prefill sizes, out[M, N] = x[M, K] · w[N, K]ᵀ with w in
// its storage type, on tensor cores through GL_NV_cooperative_matrix
// (16x16x16 f16 fragments, f32 accumulators). No scratch: each workgroup
// decodes the weight tile it needs straight into shared memory as f16.
//
// The structure is matmul_coopmat.comp with b = w [N, K] (TRANS_B): 8
// subgroups of 32 in a 2 x 4 grid, each owning WM x WN accumulator fragments
// (the lowering's default 2 x 2: a 64 x 128 tile). A K step is BK / 32 parts
// (dequant_mm_common.glsl): the tile's BN * BK / 32 (row, part) pairs are
// decoded in registers (quant_blocks.glsl) by one invocation each, rounded to
// f16 and stored row-major (k contiguous), and x is loaded at the same k
// positions and rounded to f16. The next step is decoded while the current
// one is multiplied. The epilogue goes through a per-subgroup 16 x 16 f32
// staging area so edges are masked per element.
//
// Rounding x and the decoded weights to f16 is the precision trade the
// lowering (dequant_gemm.c) decides on; values beyond f16 range become inf.
// Split-K (z grid): a range of parts per split (dequant_mm_common.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x = 256) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"
#include "quant_blocks.glsl"

layout(constant_id = 0) const uint QT = 16;    // rlx dtype of w
layout(constant_id = 1) const uint A4 = 0;     // w: 32-bit loads at 4-aligned block offsets
layout(constant_id = 2) const uint VEC = 0;    // bit 0: x 16-byte loads, bit 1: float w vector loads, bit 3: f16 w 16-byte loads
layout(constant_id = 3) const uint WM = 4;     // accumulator fragments per subgroup along M (2 or 4)
layout(constant_id = 4) const uint WN = 2;     // ... along N (2 or 4)
layout(constant_id = 5) const uint BK = 64;    // 32 or 64: parts per step = BK / 32

#include "dequant_mm_common.glsl"

const uint BM = 2u * WM * 16u, BN = 4u * WN * 16u;
const uint PPS = BK / 32u;            // parts per step
const uint SA = (BK + 8u) / 8u;       // row stride in uvec4 (8 halves each), padded against bank conflicts
const uint GA = BM * BK / 8u;         // x octets in a tile
const uint GB = BN * PPS;             // (row, part) pairs to decode
const uint LA = (GA + 255u) / 256u;
const uint LB = (GB + 255u) / 256u;

shared uvec4 As[BM * SA];
shared uvec4 Bs[BN * SA];
shared float Cs[8u * 256u];

uvec4 ra[LA];
uvec4 rb[LB][4];

uvec4 pack8(vec4 lo, vec4 hi) {
    return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}

uint g_q0, g_qend;   // this split's parts (dqmm_parts)

void fetch(uint m0, uint n0, uint s, uint tid) {
    uint k[PPS][4];
    [[unroll]] for (uint j = 0u; j < PPS; j++) part_k(g_q0 + s * PPS + j, k[j]);
    [[unroll]] for (uint l = 0u; l < LA; l++) {
        uint g = tid + l * 256u;
        uint row = g / (BK / 8u), o = g % (BK / 8u);   // octet o: part o / 4, run o % 4
        uint gm = m0 + row;
        uvec4 v = uvec4(0u);
        if (g < GA && gm < p.M && g_q0 + s * PPS + o / 4u < g_qend) {
            uint i = gm * p.K + k[o / 4u][o % 4u], lim = gm * p.K + p.K;
            v = pack8(dqmm_ldx4(i, lim, (VEC & 1u) != 0u), dqmm_ldx4(i + 4u, lim, (VEC & 1u) != 0u));
        }
        ra[l] = v;
    }
    [[unroll]] for (uint l = 0u; l < LB; l++) {
        uint g = tid + l * 256u;
        uint row = g / PPS, q = g_q0 + s * PPS + g % PPS;   // adjacent invocations: adjacent parts of a row
        uint n = n0 + row;
        [[unroll]] for (uint r = 0u; r < 4u; r++) rb[l][r] = uvec4(0u);
        if (g < GB && n < p.N && q < g_qend) {
            if (QT == DT_F16 && (VEC & 8u) != 0u) {   // already f16: copy (zeros past K come from K % 8 == 0)
                uint64_t rowa = p.w + uint64_t(n) * uint64_t(p.row_bytes);
                [[unroll]] for (uint r = 0u; r < 4u; r++) {
                    uint kk = 32u * q + 8u * r;
                    if (kk < p.K) rb[l][r] = DqmmU4(rowa).v[kk >> 3];
                }
            } else {
                float v[32];
                dqmm_decode(n, q, (VEC & 2u) != 0u, v);
                [[unroll]] for (uint r = 0u; r < 4u; r++)
                    rb[l][r] = pack8(vec4(v[8u * r], v[8u * r + 1u], v[8u * r + 2u], v[8u * r + 3u]),
                                     vec4(v[8u * r + 4u], v[8u * r + 5u], v[8u * r + 6u], v[8u * r + 7u]));
            }
        }
    }
}

void stash(uint tid) {
    [[unroll]] for (uint l = 0u; l < LA; l++) {
        uint g = tid + l * 256u;
        if (g < GA) As[(g / (BK / 8u)) * SA + g % (BK / 8u)] = ra[l];
    }
    [[unroll]] for (uint l = 0u; l < LB; l++) {
        uint g = tid + l * 256u;
        if (g < GB) {
            uint base = (g / PPS) * SA + (g % PPS) * 4u;
            [[unroll]] for (uint r = 0u; r < 4u; r++) Bs[base + r] = rb[l][r];
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint wy = sg / 4u, wx = sg % 4u;
    uint n0 = gl_WorkGroupID.x * BN;
    dqmm_parts(g_q0, g_qend);
    uint steps = (g_qend - g_q0 + PPS - 1u) / PPS;
    uint64_t outp = dqmm_out();

    for (uint tm = gl_WorkGroupID.y; tm < p.tiles_m; tm += gl_NumWorkGroups.y) {
        uint m0 = tm * BM;
        fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[WM][WN];
        [[unroll]] for (uint i = 0u; i < WM; i++)
            [[unroll]] for (uint j = 0u; j < WN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

        // Iteration t loads step t into registers, multiplies step t - 1 from
        // shared memory, then stores step t there: one fetch site keeps the
        // decoder inlined once.
        for (uint t = 0u; t <= steps; t++) {
            if (t < steps) fetch(m0, n0, t, tid);
            if (t > 0u) {
                [[unroll]] for (uint kk = 0u; kk < BK / 16u; kk++) {
                    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[WM];
                    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb[WN];
                    [[unroll]] for (uint i = 0u; i < WM; i++)
                        coopMatLoadNV(fa[i], As, (wy * WM * 16u + i * 16u) * SA + kk * 2u, SA, false);
                    [[unroll]] for (uint j = 0u; j < WN; j++)
                        coopMatLoadNV(fb[j], Bs, (wx * WN * 16u + j * 16u) * SA + kk * 2u, SA, true);
                    [[unroll]] for (uint i = 0u; i < WM; i++)
                        [[unroll]] for (uint j = 0u; j < WN; j++) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
                }
            }
            if (t < steps) {   // uniform: t and steps are the same for the whole workgroup
                barrier();     // everyone is done reading step t - 1
                stash(tid);
                barrier();
            }
        }

        // Epilogue through this subgroup's 16 x 16 staging area.
        [[unroll]] for (uint i = 0u; i < WM; i++) {
            [[unroll]] for (uint j = 0u; j < WN; j++) {
                coopMatStoreNV(acc[i][j], Cs, sg * 256u, 16u, false);
                subgroupMemoryBarrierShared();
                subgroupBarrier();
                [[unroll]] for (uint e = 0u; e < 8u; e++) {
                    uint el = lane * 8u + e;
                    uint row = m0 + wy * WM * 16u + i * 16u + el / 16u;
                    uint col = n0 + wx * WN * 16u + j * 16u + el % 16u;
                    if (row < p.M && col < p.N) F32Buf(outp).v[row * p.N + col] = Cs[sg * 256u + el];
                }
                subgroupBarrier();
            }
        }
    }
}
