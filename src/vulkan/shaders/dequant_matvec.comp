// dequant_matvec.comp — the decode-shaped DEQUANT_MATMUL tier: out[M, N] =
// x[M, K] · w[N, K]ᵀ for M <= 8, with w in its storage type (QT: f32, f16,
// bf16 or a GGUF block type; quant_blocks.glsl decodes in registers).
//
// Memory-bound: each weight byte is read exactly once. A subgroup owns NR
// weight rows at a time; its lanes walk the rows' 32-element parts in order
// (adjacent lanes, adjacent bytes), decode them in registers and multiply
// them with all NM rows of x, so one x load from L1 serves NR rows and one
// decoded weight serves NM rows. subgroupAdd() finishes each dot product.
// A workgroup covers gl_NumSubgroups * NR rows; p.tiles counts such groups
// (the x grid may be smaller and loop). Rows past N re-read row N - 1 and
// store nothing, so control flow stays subgroup-uniform.
//
// f32/f16/bf16 weights (any K) take a plain path: 4 elements per lane step,
// vector loads when VEC proved them aligned, guarded scalars otherwise.
//
// Fused epilogues (EPI, for the fused DEQUANT_MATMUL_ADD / DEQUANT_SWIGLU):
// 1 adds res[m, n] to each result; 2 is SwiGLU: a subgroup's two "rows" are
// row n of w (gate) and row n of w2 (up), and it stores silu(gate) * up. Each
// output element reads its res element before writing it, so out may alias
// res.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require

layout(local_size_x = 256) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"
#include "quant_blocks.glsl"

layout(constant_id = 0) const uint QT = 16;    // rlx dtype of w
layout(constant_id = 1) const uint NM = 1;     // rows of x (= M), 1..8
layout(constant_id = 2) const uint NR = 1;     // weight rows per subgroup, 1..4
layout(constant_id = 3) const uint A4 = 0;     // w: 32-bit loads at 4-aligned block offsets
layout(constant_id = 4) const uint VEC = 0;    // bit 0: x rows 16-byte aligned (and K % 4 == 0); bit 1: same for float w
layout(constant_id = 5) const uint EPI = 0;    // 0 store, 1 + res, 2 SwiGLU (NR = 2: gate row, up row)

layout(push_constant, std430) uniform Push {
    uint64_t x, w, w2, res, out_;
    uint M, N, K;
    uint row_bytes;   // bytes of one row of w
    uint tiles;       // row groups of gl_NumSubgroups * NR rows
    uint pad0, pad1, pad2;
} p;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer DqV4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer DqU2 { uvec2 v[]; };

float ldx(uint i) { return F32Buf(p.x).v[i]; }

// x[i .. i+4) (i % 4 == 0), no bounds check (block types: K % 32 == 0).
vec4 ldx4(uint i) {
    if ((VEC & 1u) != 0u) return DqV4(p.x).v[i >> 2];
    return vec4(ldx(i), ldx(i + 1u), ldx(i + 2u), ldx(i + 3u));
}

float ldw(uint64_t row, uint k) {
    if (QT == DT_F32) return F32Buf(row).v[k];
    uint16_t h = U16Buf(row).v[k];
    return QT == DT_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

// 4 weights at k of a float row, zeros at or past K.
vec4 ldw4(uint64_t row, uint k) {
    if ((VEC & 2u) != 0u) {
        if (QT == DT_F32) return DqV4(row).v[k >> 2];
        uvec2 u = DqU2(row).v[k >> 2];
        if (QT == DT_F16) return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
        return vec4(uintBitsToFloat(u.x << 16), uintBitsToFloat(u.x & 0xffff0000u), uintBitsToFloat(u.y << 16),
                    uintBitsToFloat(u.y & 0xffff0000u));
    }
    vec4 r = vec4(0.0);
    if (k < p.K) r.x = ldw(row, k);
    if (k + 1u < p.K) r.y = ldw(row, k + 1u);
    if (k + 2u < p.K) r.z = ldw(row, k + 2u);
    if (k + 3u < p.K) r.w = ldw(row, k + 3u);
    return r;
}

vec4 ldx4_guard(uint base, uint k) {
    if ((VEC & 3u) == 3u) return ldx4(base + k);
    vec4 r = vec4(0.0);
    if (k < p.K) r.x = ldx(base + k);
    if (k + 1u < p.K) r.y = ldx(base + k + 1u);
    if (k + 2u < p.K) r.z = ldx(base + k + 2u);
    if (k + 3u < p.K) r.w = ldx(base + k + 3u);
    return r;
}

void main() {
    const bool a4 = A4 != 0u;
    uint sg = gl_SubgroupID, nsg = gl_NumSubgroups;
    uint lane = gl_SubgroupInvocationID, sgs = gl_SubgroupSize;

    for (uint tile = gl_WorkGroupID.x; tile < p.tiles; tile += gl_NumWorkGroups.x) {
        uint n0 = (tile * nsg + sg) * (EPI == 2u ? 1u : NR);
        if (n0 >= p.N) continue;   // subgroup-uniform
        uint64_t rows[NR];
        [[unroll]] for (uint r = 0u; r < NR; r++) {
            if (EPI == 2u) rows[r] = (r == 0u ? p.w : p.w2) + uint64_t(n0) * uint64_t(p.row_bytes);
            else rows[r] = p.w + uint64_t(min(n0 + r, p.N - 1u)) * uint64_t(p.row_bytes);
        }
        float acc[NR][NM];
        [[unroll]] for (uint r = 0u; r < NR; r++)
            [[unroll]] for (uint m = 0u; m < NM; m++) acc[r][m] = 0.0;

        if (qb_is_block(QT)) {
            const uint ppb = qb_parts_per_block(QT), be = qb_block_elems(QT);
            uint parts = p.K / 32u;
            for (uint pi = lane; pi < parts; pi += sgs) {
                uint blk = pi / ppb, part = pi - blk * ppb;
                float v[NR][32];
                uint off[4];
                [[unroll]] for (uint r = 0u; r < NR; r++) {
                    float vr[32];
                    qb_decode(QT, a4, rows[r], blk, p.K, part, vr, off);
                    v[r] = vr;
                }
                uint e0 = blk * be;
                [[unroll]] for (uint g = 0u; g < 4u; g++) {
                    [[unroll]] for (uint m = 0u; m < NM; m++) {
                        uint xi = m * p.K + e0 + off[g];
                        vec4 x0 = ldx4(xi), x1 = ldx4(xi + 4u);
                        [[unroll]] for (uint r = 0u; r < NR; r++) {
                            acc[r][m] += dot(x0, vec4(v[r][8u * g + 0u], v[r][8u * g + 1u], v[r][8u * g + 2u], v[r][8u * g + 3u])) +
                                         dot(x1, vec4(v[r][8u * g + 4u], v[r][8u * g + 5u], v[r][8u * g + 6u], v[r][8u * g + 7u]));
                        }
                    }
                }
            }
        } else {
            for (uint k = lane * 4u; k < p.K; k += sgs * 4u) {
                vec4 wv[NR];
                [[unroll]] for (uint r = 0u; r < NR; r++) wv[r] = ldw4(rows[r], k);
                [[unroll]] for (uint m = 0u; m < NM; m++) {
                    vec4 xv = ldx4_guard(m * p.K, k);
                    [[unroll]] for (uint r = 0u; r < NR; r++) acc[r][m] += dot(xv, wv[r]);
                }
            }
        }

        if (EPI == 2u) {
            [[unroll]] for (uint m = 0u; m < NM; m++) {
                float gate = subgroupAdd(acc[0][m]), up = subgroupAdd(acc[NR - 1u][m]);
                if (lane == 0u) F32Buf(p.out_).v[m * p.N + n0] = gate / (1.0 + exp(-gate)) * up;
            }
        } else {
            [[unroll]] for (uint r = 0u; r < NR; r++) {
                [[unroll]] for (uint m = 0u; m < NM; m++) {
                    float s = subgroupAdd(acc[r][m]);
                    uint oi = m * p.N + n0 + r;
                    if (lane == 0u && n0 + r < p.N) F32Buf(p.out_).v[oi] = EPI == 1u ? s + F32Buf(p.res).v[oi] : s;
                }
            }
        }
    }
}
