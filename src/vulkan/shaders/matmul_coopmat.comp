// matmul_coopmat.comp — the "coopmat-f16" tiers: C = act(A x B + bias) on
// tensor cores through GL_NV_cooperative_matrix (16x16x16, f16 A/B
// fragments, f32 accumulators). Chosen only when the device reports
// VK_NV_cooperative_matrix and a subgroup size of 32 (the lowering checks).
//
// A workgroup of WGM x WGN subgroups computes a BM x BN tile of C, each
// subgroup WM x WN accumulator fragments (the lowering's plan, coop_gemm.c:
// 2 x 4 subgroups of 4 x 2 fragments, a 128 x 128 tile, K steps of 64).
//
// Per K step of BK the workgroup loads the next A and B tiles into registers
// (16-byte loads, converted to f16), multiplies the current tiles from shared
// memory, then stores the registers into shared memory: with NBUF = 2 into
// the other buffer (one barrier a step), with NBUF = 1 into the same one
// between two barriers. Either way the global loads of step t + 1 are in
// flight while step t multiplies. Rows are padded by 16 bytes against
// bank conflicts. A [M, K] is staged k-contiguous, A [K, M] (TRANS_A)
// m-contiguous; B [K, N] n-contiguous, B [N, K] (TRANS_B) k-contiguous; the
// fragment loads take the matching major order, so every transpose flag runs
// at the same speed.
//
// Split-K (SPLIT = 1, no batch): workgroup z takes K range [z * KC, (z + 1) *
// KC) and stores its f32 partial product, without bias or activation, at
// c + z * M * N floats; matmul_splitk.comp sums the slices and applies the
// epilogue. Otherwise z walks the batch.
//
// RLX_CONV (built as conv_gemm_coopmat.spv; HAS_BIAS bits as there): implicit-GEMM convolution as in
// matmul_tiled.comp's RLX_CONV: A the group's weights, B the im2col matrix
// gathered on load (each invocation keeps, per B octet it loads, the first
// column's image offset and output position; the other seven follow by
// stepping the position; VEC bit 1: a 1x1 convolution of stride 1 without
// padding over images of prod(S') % 8 == 0 positions, its rows x's channels,
// read 8 at a time), C scattered to NCHW with the bias per row; z walks
// the channel groups, or with SPLIT (one image, one group) the K splits.
//
// The epilogue stages each accumulator fragment through shared memory so
// bias, activation, edge masking and the output dtype are per element.
//
// Operands: f16 (exact products, f32 sums); f32 or bf16 (DT_A) are rounded
// to f16 on load, which the lowering allows only under the fast precision
// policy (and avoids where it can by converting them once, decode_f16.comp).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x_id = 12) in;   // NT = 32 * WGM * WGN; before the includes (docs/gpu.md pitfalls)

#include "common.glsl"
#include "matmul_common.glsl"

layout(constant_id = 0) const uint DT_A = 1;       // DT_F16, DT_F32, DT_BF16: a and b
layout(constant_id = 1) const uint TRANS_B = 0;
layout(constant_id = 2) const uint ACT = 0;
layout(constant_id = 3) const uint HAS_BIAS = 0;
layout(constant_id = 4) const uint VEC = 0;        // bit 0: A, bit 1: B 8-element loads; bit 2: C 4-element stores
layout(constant_id = 5) const uint WM = 4;         // accumulator fragments per subgroup along M
layout(constant_id = 6) const uint WN = 4;         // ... along N
layout(constant_id = 7) const uint BK = 32;        // 32 or 64
layout(constant_id = 8) const uint TRANS_A = 0;
layout(constant_id = 9) const uint WGM = 2;        // subgroups along M
layout(constant_id = 10) const uint WGN = 2;       // subgroups along N
layout(constant_id = 11) const uint NBUF = 2;      // shared buffers (1 or 2)
layout(constant_id = 13) const uint DT_C = 1;      // bias and c
layout(constant_id = 14) const uint SPLIT = 0;     // 1: split-K partials (p.pad0 = K per split)

const uint NT = 32u * WGM * WGN;  // invocations (spec constant 12, the local size, is set to this)
const uint BM = WGM * WM * 16u, BN = WGN * WN * 16u;
const uint SK = (BK + 8u) / 8u;      // stride in uvec4 (8 halves) of a k-contiguous row
const uint SM = (BM + 8u) / 8u;      // ... of an m-contiguous row (TRANS_A)
const uint SN = (BN + 8u) / 8u;      // ... of an n-contiguous row (B [K, N])
const uint A_WORDS = TRANS_A != 0u ? BK * SM : BM * SK;
const uint B_WORDS = TRANS_B != 0u ? BN * SK : BK * SN;
const uint GA = BM * BK / 8u;        // octets in an A tile
const uint GB = BN * BK / 8u;
const uint LA = (GA + NT - 1u) / NT;
const uint LB = (GB + NT - 1u) / NT;
const uint NSG = WGM * WGN;

shared uvec4 As[NBUF * A_WORDS];     // the epilogue reuses it: needs NSG * 64 words (the lowering checks)
shared uvec4 Bs[NBUF * B_WORDS];

uvec4 ra[LA];
uvec4 rb[LB];

uvec4 pack8(vec4 lo, vec4 hi) {
    return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}

// 8 consecutive elements at element index i as f16; past `limit` reads 0.
uvec4 ld8(uint64_t base, uint i, uint limit, bool vec) {
    if (vec) {
        if (DT_A == DT_F16) return MmV4U32(base).v[i >> 3];
        if (DT_A == DT_F32) return pack8(MmV4F32(base).v[i >> 2], MmV4F32(base).v[(i >> 2) + 1u]);
        uvec4 w = MmV4U32(base).v[i >> 3];
        return pack8(vec4(uintBitsToFloat(w.x << 16), uintBitsToFloat(w.x & 0xffff0000u),
                          uintBitsToFloat(w.y << 16), uintBitsToFloat(w.y & 0xffff0000u)),
                     vec4(uintBitsToFloat(w.z << 16), uintBitsToFloat(w.z & 0xffff0000u),
                          uintBitsToFloat(w.w << 16), uintBitsToFloat(w.w & 0xffff0000u)));
    }
    return pack8(mm_ld4_guard(base, DT_A, i, limit), mm_ld4_guard(base, DT_A, i + 4u, limit));
}

#ifdef RLX_CONV
// Per loaded B octet: the first column's image (-1 past N) and output position.
int cimg[LB];
uint cpos0[LB], cpos1[LB], cpos2[LB];

void conv_cols(uint n0, uint tid) {
    [[unroll]] for (uint l = 0u; l < LB; l++) {
        uint j = n0 + ((tid + l * NT) % (BN / 8u)) * 8u;
        uint sp = j % p.ovol, t = sp / p.o2;
        cimg[l] = j < p.N ? int(j / p.ovol) : -1;
        cpos2[l] = sp % p.o2, cpos1[l] = t % p.o1, cpos0[l] = t / p.o1;
    }
}

// im2col(x)[gk][the 8 columns of octet l] as f16, zero outside the image and past N.
uvec4 conv_ld8(uint64_t ba, uint l, uint gk) {
    float v[8] = float[8](0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    if ((VEC & 2u) != 0u) {   // 1x1, stride 1, no padding, prod(S') % 8 == 0: 8 adjacent positions of one image
        if (cimg[l] < 0) return uvec4(0u);
        uint i = (uint(cimg[l]) * p.C + gk) * p.ovol + (cpos0[l] * p.o1 + cpos1[l]) * p.o2 + cpos2[l];
        return ld8(ba, i, i + 8u, true);
    }
    if (cimg[l] >= 0) {
        uint ch = gk / p.kvol, r = gk % p.kvol;
        uint q2 = r % p.k2, r2 = r / p.k2, q1 = r2 % p.k1, q0 = r2 / p.k1;
        uint o0 = p.ovol / (p.o1 * p.o2);
        uint ivol = p.in0 * p.in1 * p.in2;
        uint img = uint(cimg[l]), a0 = cpos0[l], a1 = cpos1[l], a2 = cpos2[l];
        int d0 = int(q0 * conv_dilation(p.sdp0)) - conv_pad(p.sdp0);
        int d1 = int(q1 * conv_dilation(p.sdp1)) - conv_pad(p.sdp1);
        int d2 = int(q2 * conv_dilation(p.sdp2)) - conv_pad(p.sdp2);
        uint s0 = conv_stride(p.sdp0), s1 = conv_stride(p.sdp1), s2 = conv_stride(p.sdp2);
        [[unroll]] for (uint e = 0u; e < 8u; e++) {
            int i0 = int(a0 * s0) + d0, i1 = int(a1 * s1) + d1, i2 = int(a2 * s2) + d2;
            if (img * p.ovol + (a0 * p.o1 + a1) * p.o2 + a2 < p.N && uint(i0) < p.in0 && uint(i1) < p.in1 &&
                uint(i2) < p.in2)
                v[e] = mm_ld(ba, DT_A, (img * p.C + ch) * ivol + (uint(i0) * p.in1 + uint(i1)) * p.in2 + uint(i2));
            if (++a2 == p.o2) {
                a2 = 0u;
                if (++a1 == p.o1) {
                    a1 = 0u;
                    if (++a0 == o0) { a0 = 0u; img++; }
                }
            }
        }
    }
    return pack8(vec4(v[0], v[1], v[2], v[3]), vec4(v[4], v[5], v[6], v[7]));
}
#endif

// Tile (m0, n0, k0) into registers; k past kend reads 0.
void fetch(uint64_t aa, uint64_t ba, uint m0, uint n0, uint k0, uint kend, uint tid) {
    [[unroll]] for (uint l = 0u; l < LA; l++) {
        uint g = tid + l * NT;
        uvec4 v = uvec4(0u);
        if (TRANS_A != 0u) {                                      // A [K, M]: BK rows of BM/8 octets
            uint kr = g / (BM / 8u), mo = (g % (BM / 8u)) * 8u;
            uint gk = k0 + kr, gm = m0 + mo;
            if (g < GA && gk < kend && gm < p.M) v = ld8(aa, gk * p.M + gm, gk * p.M + p.M, (VEC & 1u) != 0u);
        } else {                                                  // A [M, K]: BM rows of BK/8 octets
            uint row = g / (BK / 8u), ko = (g % (BK / 8u)) * 8u;
            uint gm = m0 + row, gk = k0 + ko;
            if (g < GA && gm < p.M && gk < kend) v = ld8(aa, gm * p.K + gk, gm * p.K + kend, (VEC & 1u) != 0u);
        }
        ra[l] = v;
    }
    [[unroll]] for (uint l = 0u; l < LB; l++) {
        uint g = tid + l * NT;
        uvec4 v = uvec4(0u);
        if (TRANS_B != 0u) {                                      // B [N, K]: BN rows of BK/8 octets
            uint row = g / (BK / 8u), ko = (g % (BK / 8u)) * 8u;
            uint gn = n0 + row, gk = k0 + ko;
            if (g < GB && gn < p.N && gk < kend) v = ld8(ba, gn * p.K + gk, gn * p.K + kend, (VEC & 2u) != 0u);
        } else {                                                  // B [K, N]: BK rows of BN/8 octets
            uint kr = g / (BN / 8u), no = (g % (BN / 8u)) * 8u;
            uint gk = k0 + kr, gn = n0 + no;
#ifdef RLX_CONV
            if (g < GB && gk < kend) v = conv_ld8(ba, l, gk);
#else
            if (g < GB && gk < kend && gn < p.N) v = ld8(ba, gk * p.N + gn, gk * p.N + p.N, (VEC & 2u) != 0u);
#endif
        }
        rb[l] = v;
    }
}

void stash(uint buf, uint tid) {
    [[unroll]] for (uint l = 0u; l < LA; l++) {
        uint g = tid + l * NT;
        if (g < GA) {
            if (TRANS_A != 0u) As[buf * A_WORDS + (g / (BM / 8u)) * SM + g % (BM / 8u)] = ra[l];
            else As[buf * A_WORDS + (g / (BK / 8u)) * SK + g % (BK / 8u)] = ra[l];
        }
    }
    [[unroll]] for (uint l = 0u; l < LB; l++) {
        uint g = tid + l * NT;
        if (g < GB) {
            if (TRANS_B != 0u) Bs[buf * B_WORDS + (g / (BK / 8u)) * SK + g % (BK / 8u)] = rb[l];
            else Bs[buf * B_WORDS + (g / (BN / 8u)) * SN + g % (BN / 8u)] = rb[l];
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID;
    uint wy = sg / WGN, wx = sg % WGN;
    uint n0 = gl_WorkGroupID.x * BN;
    uint kbeg = 0u, kend = p.K;
    if (SPLIT != 0u) {
        kbeg = gl_WorkGroupID.z * p.pad0;
        kend = min(p.K, kbeg + p.pad0);
    }
    uint ktiles = kend > kbeg ? (kend - kbeg + BK - 1u) / BK : 0u;
    uint64_t esa = uint64_t(elem_size(DT_A)), esc = uint64_t(elem_size(DT_C));
    uint bz0 = SPLIT != 0u ? 0u : gl_WorkGroupID.z, bstep = SPLIT != 0u ? 1u : gl_NumWorkGroups.z;

#ifdef RLX_CONV
    conv_cols(n0, tid);
#endif
    for (uint bz = bz0; bz < p.nbatch; bz += bstep) {
#ifdef RLX_CONV
        uint64_t aa, ba, ca;
        batch_addrs(bz, DT_A, aa, ba, ca);
        ca = SPLIT != 0u ? p.c + uint64_t(gl_WorkGroupID.z) * uint64_t(p.M) * uint64_t(p.N) * 4ul
                         : p.c + uint64_t(bz) * uint64_t(p.M) * uint64_t(p.ovol) * esc;
#else
        uint i2 = bz % p.bd2, t2 = bz / p.bd2;
        uint i1 = t2 % p.bd1, i0 = t2 / p.bd1;
        uint64_t aa = p.a + (uint64_t(i0) * p.sa0 + uint64_t(i1) * p.sa1 + uint64_t(i2) * p.sa2) * esa;
        uint64_t ba = p.b + (uint64_t(i0) * p.sb0 + uint64_t(i1) * p.sb1 + uint64_t(i2) * p.sb2) * esa;
        uint64_t ca = SPLIT != 0u ? p.c + uint64_t(gl_WorkGroupID.z) * uint64_t(p.M) * uint64_t(p.N) * 4ul
                                  : p.c + uint64_t(bz) * uint64_t(p.M) * uint64_t(p.N) * esc;
#endif
        for (uint tm = gl_WorkGroupID.y; tm < p.tiles_m; tm += gl_NumWorkGroups.y) {
            uint m0 = tm * BM;
            fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[WM][WN];
            [[unroll]] for (uint i = 0u; i < WM; i++)
                [[unroll]] for (uint j = 0u; j < WN; j++) acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

            barrier();   // the previous tile's epilogue is done with As
            if (ktiles > 0u) {
                fetch(aa, ba, m0, n0, kbeg, kend, tid);
                stash(0u, tid);
            }
            barrier();
            for (uint t = 0u; t < ktiles; t++) {
                uint cur = NBUF == 2u ? (t & 1u) : 0u;
                bool more = t + 1u < ktiles;
                if (more) fetch(aa, ba, m0, n0, kbeg + (t + 1u) * BK, kend, tid);
                uint abase = cur * A_WORDS, bbase = cur * B_WORDS;
                [[unroll]] for (uint kk = 0u; kk < BK / 16u; kk++) {
                    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[WM];
                    [[unroll]] for (uint i = 0u; i < WM; i++) {
                        uint mm = wy * WM * 16u + i * 16u;
                        if (TRANS_A != 0u) coopMatLoadNV(fa[i], As, abase + kk * 16u * SM + mm / 8u, SM, true);
                        else coopMatLoadNV(fa[i], As, abase + mm * SK + kk * 2u, SK, false);
                    }
                    [[unroll]] for (uint j = 0u; j < WN; j++) {
                        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb;
                        uint nn = wx * WN * 16u + j * 16u;
                        if (TRANS_B != 0u) coopMatLoadNV(fb, Bs, bbase + nn * SK + kk * 2u, SK, true);
                        else coopMatLoadNV(fb, Bs, bbase + kk * 16u * SN + nn / 8u, SN, false);
                        [[unroll]] for (uint i = 0u; i < WM; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
                    }
                }
                if (NBUF == 2u) {
                    if (more) stash(cur ^ 1u, tid);   // last read in step t - 1, which every subgroup has finished
                    barrier();
                } else {
                    barrier();                        // everyone is done reading this step
                    if (more) stash(0u, tid);
                    barrier();
                }
            }

            // Epilogue through this subgroup's 16 x 16 f32 staging area (64 words of As).
            uint stage = sg * 64u;
            [[unroll]] for (uint i = 0u; i < WM; i++) {
                [[unroll]] for (uint j = 0u; j < WN; j++) {
                    coopMatStoreNV(acc[i][j], As, stage, 4u, false);
                    subgroupMemoryBarrierShared();
                    subgroupBarrier();
                    uvec4 w0 = As[stage + lane * 2u], w1 = As[stage + lane * 2u + 1u];
                    subgroupBarrier();
                    float v[8] = float[8](uintBitsToFloat(w0.x), uintBitsToFloat(w0.y), uintBitsToFloat(w0.z),
                                          uintBitsToFloat(w0.w), uintBitsToFloat(w1.x), uintBitsToFloat(w1.y),
                                          uintBitsToFloat(w1.z), uintBitsToFloat(w1.w));
                    uint row = m0 + wy * WM * 16u + i * 16u + lane / 2u;
                    uint col = n0 + wx * WN * 16u + j * 16u + (lane % 2u) * 8u;
                    if (row >= p.M) continue;
#ifdef RLX_CONV
                    [[unroll]] for (uint e = 0u; e < 8u; e++) {
                        uint cl = col + e;
                        if (cl >= p.N) continue;
                        float x = v[e];
                        if (SPLIT != 0u) {   // one image, one group: [M, N] partials
                            mm_st(ca, DT_F32, row * p.N + cl, x);
                            continue;
                        }
                        if ((HAS_BIAS & 1u) != 0u) x += mm_ld(p.bias, DT_C, bz * p.M + row);
                        uint oi = (cl / p.ovol) * p.O * p.ovol + row * p.ovol + cl % p.ovol;   // within group bz's channels (ca)
                        if ((HAS_BIAS & 2u) != 0u) x += mm_ld(p.res, DT_C, oi + bz * p.M * p.ovol);
                        mm_st(ca, DT_C, oi, mm_activate(x, ACT));
                    }
                    continue;
#endif
                    if (SPLIT == 0u) {
                        [[unroll]] for (uint e = 0u; e < 8u; e++) {
                            float x = v[e];
                            if (HAS_BIAS != 0u && col + e < p.N) x += mm_ld(p.bias, DT_C, col + e);
                            v[e] = mm_activate(x, ACT);
                        }
                    }
                    uint dtc = SPLIT != 0u ? DT_F32 : DT_C;
                    uint o = row * p.N + col;
                    if ((VEC & 4u) != 0u && col + 8u <= p.N) {
                        mm_st4_vec(ca, dtc, o, vec4(v[0], v[1], v[2], v[3]));
                        mm_st4_vec(ca, dtc, o + 4u, vec4(v[4], v[5], v[6], v[7]));
                    } else {
                        [[unroll]] for (uint e = 0u; e < 8u; e++)
                            if (col + e < p.N) mm_st(ca, dtc, o + e, v[e]);
                    }
                }
            }
        }
    }
}
