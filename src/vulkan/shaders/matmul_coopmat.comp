// matmul_coopmat.comp — the "coopmat-f16" tier: C = act(A x B + bias) on
// tensor cores through GL_NV_cooperative_matrix (16x16x16, f16 A/B
// fragments, f32 accumulators). Chosen only when the device reports
// VK_NV_cooperative_matrix and a subgroup size of 32 (the lowering checks).
//
// A workgroup of 8 subgroups computes a BM x BN tile of C; subgroup
// (wy, wx) of the 2 x 4 grid owns WM x WN accumulator fragments (default
// 4 x 2: a 128 x 128 tile). Each BK step the workgroup converts A and B
// tiles to f16 into shared
// memory (rows padded by 16 bytes against bank conflicts); the next step's
// tiles are fetched into registers while the current one is multiplied.
// b [K, N] is staged row-major, b [N, K] (TRANS_B) column-major.
// The epilogue goes through a per-subgroup 16 x 16 f32 staging area so bias,
// activation, edge masking and the output dtype are handled per element.
//
// Operands: f16 (exact products, f32 sums); f32 or bf16 are rounded to f16
// on load, which the lowering allows only under the fast precision policy.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#include "common.glsl"
#include "matmul_common.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint DT = 1;         // DT_F16, DT_F32, DT_BF16 (a, b, bias, c)
layout(constant_id = 1) const uint TRANS_B = 0;
layout(constant_id = 2) const uint ACT = 0;
layout(constant_id = 3) const uint HAS_BIAS = 0;
layout(constant_id = 4) const uint VEC = 0;        // bit 0: A loads, bit 1: B loads (8-element aligned)
layout(constant_id = 5) const uint WM = 4;         // accumulator fragments per subgroup along M (2 or 4)
layout(constant_id = 6) const uint WN = 2;         // ... along N (2 or 4)
layout(constant_id = 7) const uint BK = 64;        // 32 or 64

const uint BM = 2u * WM * 16u, BN = 4u * WN * 16u;
const uint SA = (BK + 8u) / 8u;      // A row stride in uvec4 (8 halves each); also B [N, K]
const uint SBN = (BN + 8u) / 8u;     // B [K, N] row stride
const uint B_WORDS = (BK * SBN > BN * SA) ? BK * SBN : BN * SA;
const uint GA = BM * BK / 8u;        // octets in an A tile
const uint GB = BN * BK / 8u;
const uint LA = (GA + 255u) / 256u;
const uint LB = (GB + 255u) / 256u;

shared uvec4 As[BM * SA];
shared uvec4 Bs[B_WORDS];
shared float Cs[8u * 256u];

uvec4 ra[LA];
uvec4 rb[LB];

uvec4 pack8(vec4 lo, vec4 hi) {
    return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}

// 8 consecutive elements at element index i as f16; past `limit` reads 0.
uvec4 ld8(uint64_t base, uint i, uint limit, bool vec) {
    if (vec) {
        if (DT == DT_F16) return MmV4U32(base).v[i >> 3];
        if (DT == DT_F32) return pack8(MmV4F32(base).v[i >> 2], MmV4F32(base).v[(i >> 2) + 1u]);
        uvec4 w = MmV4U32(base).v[i >> 3];
        return pack8(vec4(uintBitsToFloat(w.x << 16), uintBitsToFloat(w.x & 0xffff0000u),
                          uintBitsToFloat(w.y << 16), uintBitsToFloat(w.y & 0xffff0000u)),
                     vec4(uintBitsToFloat(w.z << 16), uintBitsToFloat(w.z & 0xffff0000u),
                          uintBitsToFloat(w.w << 16), uintBitsToFloat(w.w & 0xffff0000u)));
    }
    return pack8(mm_ld4_guard(base, DT, i, limit), mm_ld4_guard(base, DT, i + 4u, limit));
}

void fetch(uint64_t aa, uint64_t ba, uint m0, uint n0, uint k0, uint tid) {
    [[unroll]] for (uint l = 0; l < LA; l++) {
        uint g = tid + l * 256u;
        uint row = g / (BK / 8u), ko = (g % (BK / 8u)) * 8u;      // A: BM rows of BK/8 octets
        uint gm = m0 + row, gk = k0 + ko;
        ra[l] = (g < GA && gm < p.M && gk < p.K) ? ld8(aa, gm * p.K + gk, gm * p.K + p.K, (VEC & 1u) != 0u)
                                                 : uvec4(0u);
    }
    [[unroll]] for (uint l = 0; l < LB; l++) {
        uint g = tid + l * 256u;
        if (TRANS_B != 0u) {                                      // B [N, K]: BN rows of BK/8 octets
            uint row = g / (BK / 8u), ko = (g % (BK / 8u)) * 8u;
            uint gn = n0 + row, gk = k0 + ko;
            rb[l] = (g < GB && gn < p.N && gk < p.K) ? ld8(ba, gn * p.K + gk, gn * p.K + p.K, (VEC & 2u) != 0u)
                                                     : uvec4(0u);
        } else {                                                  // B [K, N]: BK rows of BN/8 octets
            uint kr = g / (BN / 8u), no = (g % (BN / 8u)) * 8u;
            uint gk = k0 + kr, gn = n0 + no;
            rb[l] = (g < GB && gk < p.K && gn < p.N) ? ld8(ba, gk * p.N + gn, gk * p.N + p.N, (VEC & 2u) != 0u)
                                                     : uvec4(0u);
        }
    }
}

void stash(uint tid) {
    [[unroll]] for (uint l = 0; l < LA; l++) {
        uint g = tid + l * 256u;
        if (g < GA) As[(g / (BK / 8u)) * SA + (g % (BK / 8u))] = ra[l];
    }
    [[unroll]] for (uint l = 0; l < LB; l++) {
        uint g = tid + l * 256u;
        if (g < GB) {
            if (TRANS_B != 0u) Bs[(g / (BK / 8u)) * SA + (g % (BK / 8u))] = rb[l];
            else Bs[(g / (BN / 8u)) * SBN + (g % (BN / 8u))] = rb[l];
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint wy = sg / 4u, wx = sg % 4u;
    uint n0 = gl_WorkGroupID.x * BN;
    uint ktiles = (p.K + BK - 1u) / BK;

    for (uint bz = gl_WorkGroupID.z; bz < p.nbatch; bz += gl_NumWorkGroups.z) {
        uint64_t aa, ba, ca;
        batch_addrs(bz, DT, aa, ba, ca);
        for (uint tm = gl_WorkGroupID.y; tm < p.tiles_m; tm += gl_NumWorkGroups.y) {
            uint m0 = tm * BM;
            fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[WM][WN];
            [[unroll]] for (uint i = 0; i < WM; i++)
                [[unroll]] for (uint j = 0; j < WN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

            if (ktiles > 0u) fetch(aa, ba, m0, n0, 0u, tid);
            for (uint t = 0; t < ktiles; t++) {
                barrier();
                stash(tid);
                barrier();
                if (t + 1u < ktiles) fetch(aa, ba, m0, n0, (t + 1u) * BK, tid);
                [[unroll]] for (uint kk = 0; kk < BK / 16u; kk++) {
                    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[WM];
                    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb[WN];
                    [[unroll]] for (uint i = 0; i < WM; i++)
                        coopMatLoadNV(fa[i], As, (wy * WM * 16u + i * 16u) * SA + kk * 2u, SA, false);
                    [[unroll]] for (uint j = 0; j < WN; j++) {
                        uint nn = wx * WN * 16u + j * 16u;
                        if (TRANS_B != 0u) coopMatLoadNV(fb[j], Bs, nn * SA + kk * 2u, SA, true);
                        else coopMatLoadNV(fb[j], Bs, kk * 16u * SBN + nn / 8u, SBN, false);
                    }
                    [[unroll]] for (uint i = 0; i < WM; i++)
                        [[unroll]] for (uint j = 0; j < WN; j++) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
                }
            }

            // Epilogue through this subgroup's 16 x 16 staging area.
            [[unroll]] for (uint i = 0; i < WM; i++) {
                [[unroll]] for (uint j = 0; j < WN; j++) {
                    coopMatStoreNV(acc[i][j], Cs, sg * 256u, 16u, false);
                    subgroupMemoryBarrierShared();
                    subgroupBarrier();
                    [[unroll]] for (uint e = 0; e < 8u; e++) {
                        uint el = lane * 8u + e;
                        uint row = m0 + wy * WM * 16u + i * 16u + el / 16u;
                        uint col = n0 + wx * WN * 16u + j * 16u + el % 16u;
                        if (row < p.M && col < p.N) {
                            float v = Cs[sg * 256u + el];
                            if (HAS_BIAS != 0u) v += mm_ld(p.bias, DT, col);
                            mm_st(ca, DT, row * p.N + col, mm_activate(v, ACT));
                        }
                    }
                    subgroupBarrier();
                }
            }
        }
    }
}
