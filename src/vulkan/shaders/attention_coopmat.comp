// attention_coopmat.comp — fused attention on tensor cores ("flash-coopmat"):
// S = Q Kᵀ and O += P V as 16x16x16 f16 products with f32 accumulators
// through GL_NV_cooperative_matrix, the online softmax in f32 between them.
//
//   out = softmax(q k^T * scale + mask) v;  q [B,H,Sq,D], k/v [B,Hkv,Skv,D],
//   D % 16 == 0, D <= 128; storage DT (f16; f32 or bf16 under the fast
//   precision policy, rounded to f16 on load).
//
// A workgroup of NSG subgroups takes BQ = 16 * NSG consecutive rows of one kv
// head (rows as in attention.comp: the group's query heads are contiguous, so
// row r is head hk * group + r / Sq, query r % Sq); subgroup s owns rows
// 16s .. 16s + 15. Q's fragments are loaded once (through the K/V tile space)
// and kept. Per tile of BK keys the workgroup stages K and V (f16) in shared
// memory; each subgroup then
//   1. multiplies its Q fragments by Kᵀ into BK / 16 accumulator fragments and
//      stores them to its own f32 staging rows,
//   2. reads them back per lane (lane l: row l / 2, eight columns of each
//      16-column fragment from (l % 2) * 8): scale, mask, the row maximum over
//      the lane pair, the rescaling of its running sum and output, P = exp2(.)
//      written as f16 to its own rows of Ps,
//   3. multiplies P by V fragment by fragment of D and adds each product,
//      staged the same way, to its output registers.
// Only steps on the shared K / V tiles need workgroup barriers; a subgroup's
// staging and P rows are its own (subgroup barriers).
//
// Masks as attention.comp: causal (query i sees keys j <= L - Sq + i; a
// block stops at its last visible key), additive (element strides over
// [B,H,Sq,Skv], the mask in DT), the active extent kv_len. A row with no
// finite score outputs zeros. No split keys: the lowering takes this kernel
// for prefill-shaped launches only.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x_id = 4) in;   // 32 * NSG; before the includes (docs/gpu.md pitfalls)

#include "common.glsl"
#include "nn_common.glsl"

layout(constant_id = 0) const uint D   = 64;   // head dim, a multiple of 16, <= 128
layout(constant_id = 1) const uint BK  = 64;   // keys per tile: 64 (D <= 64) or 32
layout(constant_id = 2) const uint NSG = 4;    // subgroups (of 32): BQ = 16 * NSG rows per workgroup
layout(constant_id = 3) const uint DT  = 1;    // storage of q, k, v, mask and out
// constant_id 4: the local size, 32 * NSG

const uint NT = 32u * NSG;
const uint BQ = 16u * NSG;
const uint DS = (D + 8u) / 8u;        // row stride of the K / V / Q tiles in uvec4 (8 halves), padded
const uint PS = (BK + 8u) / 8u;       // row stride of P
const uint ND = D / 16u;              // fragments along D
const uint NK = BK / 16u;             // fragments along a key tile
const uint SROW = 16u;                // staging row: 64 floats (uvec4 of 4)
const float LOG2E = 1.4426950408889634;
const float NEG_INF = -1.0 / 0.0;

layout(push_constant, std430) uniform Push {
    uint64_t q, k, v, mask, out_;
    uint Sq, Skv, H, Hkv;
    uint rows;          // (H / Hkv) * Sq: rows per kv head
    uint kind;          // 0 none, 1 causal, 2 additive
    float scale_log2;   // scale * log2(e)
    uint pad0;
    uint ms0, ms1, ms2, ms3;
    uint64_t scratch;   // unused here (attention.comp's split keys)
    uint chunk, ml_off; // unused here
    uint64_t kvlen;     // 0, or an i32 buffer holding the active key count
    uint64_t counters;  // unused here
    uint pad1, pad2;
} p;   // attention.comp's push block (lower/attention.c att_push)

shared uvec4 KV[2u * BK * DS];        // K tile at 0, V tile at BK * DS; Q's staging before the loop
shared uvec4 Ps[BQ * PS];             // P, f16
shared uvec4 St[NSG * 16u * SROW];    // per subgroup: 16 rows of 64 f32

uvec4 pack8(vec4 lo, vec4 hi) {
    return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}
vec4 bf4(uint a, uint b) {
    return vec4(uintBitsToFloat(a << 16), uintBitsToFloat(a & 0xffff0000u), uintBitsToFloat(b << 16),
                uintBitsToFloat(b & 0xffff0000u));
}
// Eight elements at element index i (a multiple of 8, 16-byte aligned) as f16.
uvec4 ld8(uint64_t addr, uint i) {
    if (DT == DT_F16) return U4Buf(addr).v[i >> 3];
    if (DT == DT_F32) return pack8(V4Buf(addr).v[i >> 2], V4Buf(addr).v[(i >> 2) + 1u]);
    uvec4 w = U4Buf(addr).v[i >> 3];
    return pack8(bf4(w.x, w.y), bf4(w.z, w.w));
}
float ldm(uint i) { return load_f(p.mask, DT, i); }
uint16_t to16(float x) { return DT == DT_F16 ? f32_to_f16(x) : f32_to_bf16(x); }
// Eight outputs at element index i (a multiple of 8, 16-byte aligned).
void st8(uint i, float o[8]) {
    if (DT == DT_F32) {
        V4Buf(p.out_).v[i >> 2] = vec4(o[0], o[1], o[2], o[3]);
        V4Buf(p.out_).v[(i >> 2) + 1u] = vec4(o[4], o[5], o[6], o[7]);
    } else if (DT == DT_F16) {
        U4Buf(p.out_).v[i >> 3] = pack8(vec4(o[0], o[1], o[2], o[3]), vec4(o[4], o[5], o[6], o[7]));
    } else {
        uint w[4];
        [[unroll]] for (uint e = 0u; e < 4u; e++) w[e] = uint(to16(o[2u * e])) | (uint(to16(o[2u * e + 1u])) << 16);
        U4Buf(p.out_).v[i >> 3] = uvec4(w[0], w[1], w[2], w[3]);
    }
}

// n rows of D elements from row `row0` of the tensor at addr into KV at `off`, zeros from row `nvalid`.
void load_tile(uint64_t addr, uint row0, uint nvalid, uint n, uint off, uint tid) {
    const uint OCT = D / 8u;
    for (uint g = tid; g < n * OCT; g += NT) {
        uint r = g / OCT, o = g - r * OCT;
        KV[off + r * DS + o] = r < nvalid ? ld8(addr, (row0 + r) * D + o * 8u) : uvec4(0u);
    }
}

void main() {
    const uint tid = gl_LocalInvocationID.x, sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    const uint lr = lane >> 1, half_ = lane & 1u;   // the lane's row in its subgroup, its half of each fragment
    const uint blk = gl_WorkGroupID.x, hk = gl_WorkGroupID.y, b = gl_WorkGroupID.z;
    const uint group = p.H / p.Hkv, r0 = blk * BQ;
    const uint qrow0 = (b * p.H + hk * group) * p.Sq;   // first q / out row of this kv head
    const uint kvrow0 = (b * p.Hkv + hk) * p.Skv;
    const uint L = p.kvlen != 0ul ? uint(clamp(I32Buf(p.kvlen).v[0], 0, int(p.Skv))) : p.Skv;
    const int offs = int(L) - int(p.Sq);
    const bool causal = p.kind == 1u, additive = p.kind == 2u;
    uint kv_end = L;
    if (causal) {
        uint last = min(r0 + BQ, p.rows) - 1u;
        uint maxi = (r0 / p.Sq != last / p.Sq) ? p.Sq - 1u : last % p.Sq;
        kv_end = uint(clamp(offs + int(maxi) + 1, 0, int(L)));
    }

    // Q's fragments, staged through KV (BQ <= 2 * BK rows fit)
    load_tile(p.q, qrow0 + r0, p.rows > r0 ? p.rows - r0 : 0u, BQ, 0u, tid);
    barrier();
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fq[ND];
    [[unroll]] for (uint d = 0u; d < ND; d++) coopMatLoadNV(fq[d], KV, sg * 16u * DS + d * 2u, DS, false);

    // this lane's row
    const uint row = r0 + sg * 16u + lr;
    const uint qi = row % p.Sq, h = hk * group + row / p.Sq;
    const int lim = row >= p.rows ? 0 : (causal ? offs + int(qi) + 1 : int(L));
    const uint mbase = additive && row < p.rows ? b * p.ms0 + h * p.ms1 + qi * p.ms2 : 0u;
    float m = NEG_INF, l = 0.0;
    float o[ND][8];
    [[unroll]] for (uint d = 0u; d < ND; d++)
        [[unroll]] for (uint e = 0u; e < 8u; e++) o[d][e] = 0.0;
    const uint st = sg * 16u * SROW;   // this subgroup's staging rows

    for (uint j0 = 0u; j0 < kv_end; j0 += BK) {
        const uint nk = min(BK, kv_end - j0);
        barrier();   // Q's staging / the previous tile are no longer read
        load_tile(p.k, kvrow0 + j0, nk, BK, 0u, tid);
        load_tile(p.v, kvrow0 + j0, nk, BK, BK * DS, tid);
        barrier();

        // 1. S = Q Kᵀ into the staging rows
        [[unroll]] for (uint n = 0u; n < NK; n++) {
            fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> s = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
            [[unroll]] for (uint d = 0u; d < ND; d++) {
                fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fk;
                coopMatLoadNV(fk, KV, n * 16u * DS + d * 2u, DS, true);   // Kᵀ: column-major rows of K
                s = coopMatMulAddNV(fq[d], fk, s);
            }
            coopMatStoreNV(s, St, st + n * 4u, SROW, false);
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();

        // 2. online softmax of this lane's eight scores per key fragment
        float x[NK][8];
        float tmax = NEG_INF;
        [[unroll]] for (uint n = 0u; n < NK; n++) {
            uvec4 w0 = St[st + lr * SROW + n * 4u + half_ * 2u], w1 = St[st + lr * SROW + n * 4u + half_ * 2u + 1u];
            float sv[8] = float[8](uintBitsToFloat(w0.x), uintBitsToFloat(w0.y), uintBitsToFloat(w0.z),
                                   uintBitsToFloat(w0.w), uintBitsToFloat(w1.x), uintBitsToFloat(w1.y),
                                   uintBitsToFloat(w1.z), uintBitsToFloat(w1.w));
            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                uint j = j0 + n * 16u + half_ * 8u + e;
                float xv = NEG_INF;
                if (j < kv_end && int(j) < lim) {
                    xv = sv[e] * p.scale_log2;
                    if (additive) xv += ldm(mbase + j * p.ms3) * LOG2E;
                }
                x[n][e] = xv;
                tmax = max(tmax, xv);
            }
        }
        tmax = max(tmax, subgroupShuffleXor(tmax, 1u));
        float mn = max(m, tmax), corr = 1.0;
        if (mn != NEG_INF) {
            corr = exp2(m - mn);
            m = mn;
        }
        float ps = 0.0;
        [[unroll]] for (uint n = 0u; n < NK; n++) {
            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                x[n][e] = mn == NEG_INF ? 0.0 : exp2(x[n][e] - mn);
                ps += x[n][e];
            }
            Ps[(sg * 16u + lr) * PS + n * 2u + half_] =
                pack8(vec4(x[n][0], x[n][1], x[n][2], x[n][3]), vec4(x[n][4], x[n][5], x[n][6], x[n][7]));
        }
        l = l * corr + ps;
        [[unroll]] for (uint d = 0u; d < ND; d++)
            [[unroll]] for (uint e = 0u; e < 8u; e++) o[d][e] *= corr;
        subgroupMemoryBarrierShared();
        subgroupBarrier();   // P written; the staging rows read

        // 3. O += P V, one 16-column fragment of D at a time through the staging rows
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fp[NK];
        [[unroll]] for (uint n = 0u; n < NK; n++) coopMatLoadNV(fp[n], Ps, sg * 16u * PS + n * 2u, PS, false);
        [[unroll]] for (uint d0 = 0u; d0 < ND; d0 += 4u) {
            [[unroll]] for (uint d = d0; d < min(ND, d0 + 4u); d++) {
                fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
                [[unroll]] for (uint n = 0u; n < NK; n++) {
                    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fv;
                    coopMatLoadNV(fv, KV, BK * DS + n * 16u * DS + d * 2u, DS, false);
                    acc = coopMatMulAddNV(fp[n], fv, acc);
                }
                coopMatStoreNV(acc, St, st + (d - d0) * 4u, SROW, false);
            }
            subgroupMemoryBarrierShared();
            subgroupBarrier();
            [[unroll]] for (uint d = d0; d < min(ND, d0 + 4u); d++) {
                uvec4 w0 = St[st + lr * SROW + (d - d0) * 4u + half_ * 2u];
                uvec4 w1 = St[st + lr * SROW + (d - d0) * 4u + half_ * 2u + 1u];
                o[d][0] += uintBitsToFloat(w0.x), o[d][1] += uintBitsToFloat(w0.y);
                o[d][2] += uintBitsToFloat(w0.z), o[d][3] += uintBitsToFloat(w0.w);
                o[d][4] += uintBitsToFloat(w1.x), o[d][5] += uintBitsToFloat(w1.y);
                o[d][6] += uintBitsToFloat(w1.z), o[d][7] += uintBitsToFloat(w1.w);
            }
            subgroupBarrier();   // the staging rows are read before the next fragments land there
        }
    }

    l += subgroupShuffleXor(l, 1u);
    if (row >= p.rows) return;
    float inv = l > 0.0 ? 1.0 / l : 0.0;
    [[unroll]] for (uint d = 0u; d < ND; d++) {
        float ov[8];
        [[unroll]] for (uint e = 0u; e < 8u; e++) ov[e] = o[d][e] * inv;
        st8((qrow0 + row) * D + d * 16u + half_ * 8u, ov);
    }
}
