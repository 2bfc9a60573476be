// dequant_matvec_i8.comp — the decode-shaped DEQUANT_MATMUL for Q8_0, Q4_K,
// Q5_K and Q6_K with x rounded to 8 bits: out[M, N] = x[M, K] · w[N, K]ᵀ for
// M <= 8, with the fused epilogues of dequant_matvec_run.comp (EPI 1: + res;
// EPI 2: SwiGLU over w (gate) and w2 (up)) and its push block.
//
// Why: dequant_matvec_run.comp spends ~6 instructions per weight (nibble
// extraction, int -> float, f32 x loads, FMAs); on an H200 that held Q4_K and
// Q6_K near 1 TB/s. Here x is rounded the way the CPU fast path rounds it
// (src/cpu/kernels/qdot.c: blocks of 32 for Q8_0 and 256 for the K-quants,
// d = amax / 127, q = round-half-even(x * 127 / amax)), so the quants of 4
// weights and 4 x values meet in one packed 4 x 8-bit dot product (OpSDot,
// VK_KHR_shader_integer_dot_product), block scales are applied once per unit
// of 8 or 32 weights, and a K-quant's sub-block scales multiply integer dots.
//
// Each workgroup first rounds all M rows of x into shared memory (8-bit
// quants, a scale per x block, and for the K-quants the sum of each 8 quants,
// which the Q4_K min and Q6_K -32 offset terms need; starting at its own
// offset into x, XROT), then walks its row tiles (the grid may be capped:
// tile += NumWorkGroups). The weight side keeps
// the run kernel's pattern: lane t of a group of T takes units t, t + T, ...
// of its rows, adjacent lanes reading adjacent weight bytes; a unit is
//   Q8_0 16 weights: 16 quant bytes of a block (2 lanes per block; rows planar,
//        planar.glsl, so one aligned 16-byte load);
//   Q4_K 32 weights: 16 bytes of qs, low nibbles one sub-block, high nibbles
//        the next (8 lanes per 144-byte block; one 16-byte load when aligned);
//   Q5_K as Q4_K (176-byte blocks, qs at 48), plus the 16 bytes of qh at the
//        same positions, whose bits 2j and 2j + 1 are the two sub-blocks' 5th
//        bits (quants 0..31: still one packed signed dot per 4);
//   Q6_K 32 weights: 8 bytes of ql, of ql + 32 and of qh: 8 positions of the
//        four 32-groups of one 128-half (8 lanes per block; planar rows).
//
// Attention's combine (XCOMB): in decode, x is the output of split-key
// attention, whose second pass (attention_combine.comp) would merge the
// splits' partials in a dispatch and dependent stage of its own. Here the
// rounding pass reads the partials instead (p.x: accumulators, p.off: (m, l)
// pairs, p.D head dim; XCOMB splits) and merges each 8 values of x with the
// combine's arithmetic:
//   x = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s,  M = max_s m_s,
// zeros for a head with no visible key.
//
// The rounded-x image (x_image.glsl; only in the build "dequant_matvec_i8_xim",
// -DRLX_XIMAGE): with XIN, x arrives already rounded by the matvec before
// (M = 1) and is copied into shared memory instead of round_x;
// with XOUT, this matvec also rounds its own output, one 256-block at a time
// as the workgroup completing the block sees it done, for the next one.
//
// Non-finite x: the 8-bit format cannot carry Inf or NaN. A block whose
// absmax is Inf or NaN is rounded as zeros and flags its x row, and every
// output of a flagged row is stored as NaN (a select at the store, so no
// NaN arithmetic is relied on). The exact result of such a row is non-finite
// too (w * Inf is never finite), so outputs are non-finite exactly where the
// exact ones are; only Inf vs NaN may differ (the CPU sends such calls to its
// exact path).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_spirv_intrinsics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_shuffle : require

layout(local_size_x = 256) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"

layout(constant_id = 0) const uint QT = 13;    // rlx dtype of w: Q8_0 (13), Q4_K (16), Q5_K (17) or Q6_K (18)
layout(constant_id = 1) const uint NM = 1;     // rows of x (= M), 1..8
layout(constant_id = 2) const uint T = 64;     // threads per group: divides 256, a multiple of the subgroup size
layout(constant_id = 3) const uint NR = 1;     // output rows per group, 1..4 (EPI 2: 1 or 2)
layout(constant_id = 4) const uint VEC = 0;    // x 16-byte aligned
layout(constant_id = 5) const uint EPI = 0;    // 0 store, 1 + res, 2 SwiGLU
layout(constant_id = 6) const uint A4 = 0;     // bit 0: w (and w2) and row_bytes 4-byte aligned (Q4_K needs it);
                                               // bit 1: 16-byte aligned (Q4_K: 16-byte header and quant loads)
layout(constant_id = 7) const uint U = 1;      // units per lane per loop step, 1..4: their loads issue together
layout(constant_id = 8) const uint XK = 256;   // K (sizes the shared x)
layout(constant_id = 9) const uint NORM = 0;   // 1: x is RMS-normalized first (rms_dequant_*): gamma at p.res
                                               // (EPI 0 and 2 only), eps as the bits of p.pad0
layout(constant_id = 10) const uint RKV = 0;   // epilogue of a rope / KV-cache consumer (dequant_rope_kv; M = 1, EPI 0):
                                               // bits 0-1 rope pairs: 0 none, 1 GPTJ (rows 2j, 2j + 1 of a
                                               //   head), 2 NEOX (rows j, j + D/2); a group's two slots are one pair (NR 2);
                                               // bit 2: rows are stored in a KV cache [Hkv, C, D] at row p.pos;
                                               // bit 3: frequency factors at p.ff; bit 4: rope position offset at p.off
layout(constant_id = 11) const uint XCOMB = 0; // 2..8 (M = 1, EPI 0/1, no NORM/RKV): x is the partials of split-key
                                               // attention with XCOMB splits, combined as they are read (header;
                                               // vk_program.c plan_absorptions)
layout(constant_id = 12) const uint XROT = 0;   // > 0: workgroup w starts rounding x at chunk w * XROT (a multiple of 32; round_x)
layout(constant_id = 15) const uint PAIR = 0;  // a lane takes units 2p and 2p + 1 together (Q4_K / Q5_K: one header
                                               // decode for 64 weights; Q6_K: shared scales, 16-byte quant loads;
                                               // Q8_0: a whole block, one scale load; default: Q4_K
                                               // rows of >= 2 pairs a lane, dequant_matmul.c)
#ifdef RLX_XIMAGE   // the build "dequant_matvec_i8_xim" (Makefile)
layout(constant_id = 13) const uint XIN = 0;    // 1 (M = 1): p.x is the rounded image of x (x_image.glsl)
layout(constant_id = 14) const uint XOUT = 0;   // M = 1, EPI 0-2, no RKV: also round the output into an image at p.pos
                                                // for a K45 (1), Q6_K (2) or Q8_0 (3) consumer, times gamma at p.ff
                                                // (x_image.glsl)
#endif

const uint XB = QT == 13u ? 32u : 256u;        // x block: one scale each (the CPU's Q8_32 / Q8_256 formats)
const bool K45 = QT == 16u || QT == 17u;       // Q4_K / Q5_K: the same units, so the same x layout
const uint UW = QT == 13u ? 16u : 32u;         // weights per unit
const uint G = 256u / T;                       // groups per workgroup
const uint NS = EPI == 2u ? 2u * NR : NR;      // weight rows (slots) per group (EPI 2: NR gate rows, then NR up rows)
const uint ROPE = RKV & 3u;
const bool KVW = (RKV & 4u) != 0u;

// x rounded, all M rows back to back (flat block b = m * XK / XB + block of row m):
//   Q8_0: xq2[c] = quants c*8 .. c*8 + 7, so lane t's run reads entry t;
//   K-quants: per block, 16 entries of 16 quants and 8 of sums, in the order
//   the units read them, so the 8 lanes of a block read 128 contiguous bytes
//   (no shared-memory bank conflicts): unit u's x is xq4[16b + u] (a) and
//   xq4[16b + 8 + u] (b), its sums xs4[8b + u]:
//     Q4_K / Q5_K unit u = 2j + h: a = positions 16h.. of sub-block 2j, b = of 2j + 1;
//          sums (a, b, -, -);
//     Q6_K unit u = 4hh + i: group g's 8 positions 8i.. of half hh in a (g 0,
//          1) or b (g 2, 3); sums of the four groups' 8.
shared uvec2 xq2[QT == 13u ? NM * XK / 8u : 1u];
shared uvec4 xq4[QT == 13u ? 1u : NM * XK / 16u];
shared ivec4 xs4[QT == 13u ? 1u : NM * XK / 32u];
shared float xd[NM * XK / XB];                 // x block scales
shared uint xbad[NM];                          // x row m holds Inf or NaN
shared uint xa[QT == 13u ? 1u : NM * XK / XB]; // K-quants: block absmax bits while rounding
shared float xinv[NM];                         // NORM: 1 / rms of x row m

layout(push_constant, std430) uniform Push {
    uint64_t x, w, w2, res, out_;
    uint M, N, K;
    uint row_bytes;
    uint tiles;      // groups of G * NR output rows (ROPE: G pairs)
    uint pad0, pad1, pad2;
    // RKV only (pushed by vk_dequant_epilogue)
    uint64_t pos;    // KVW: i32 cache row
    uint64_t off;    // rope position offset, i32
    uint64_t ff;     // f32 frequency factors [D / 2]
    float q_hi, q_lo, f0_hi, f0_lo;   // theta^(-2/D) and 1 / (2 pi) as hi/lo pairs (rope_angle.glsl)
    uint C, D;       // cache capacity, head dim (XOUT: C is the counters' offset from pos; XCOMB: D the head dim)
} p;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer I8V4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer I8U4 { uvec4 v[]; };

#include "int8_dot.glsl"   // sdot4 .. sdot16, absmax_bits, inv_scale, block_scale, round4

// ------------------------------------------------------------ weight loads

#include "dequant_matvec_common.glsl"   // wword, wbytes8, wf16, group_sums
#include "rope_angle.glsl"                // rope_cos_sin
#include "sumsq.glsl"                      // sumsq8, inv_rms
#include "x_image.glsl"                    // chunk_slot; with RLX_XIMAGE load_image, image_tile_done

// 16 bytes at a 16-byte-aligned offset of a row (planar fields): one load
// when rows are 16-byte aligned, else two wbytes8a.
uvec4 wbytes16a(uint64_t row, uint off) {
    if ((A4 & 2u) != 0u) return I8U4(row).v[off >> 4];
    return uvec4(wbytes8a(row, off), wbytes8a(row, off + 8u));
}

// 16 bytes at a 4-byte-aligned offset (one load when rows are 16-byte aligned).
uvec4 wbytes16(uint64_t row, uint off) {
    if ((A4 & 2u) != 0u) return I8U4(row).v[off >> 4];
    uint i = off >> 2;
    return uvec4(U32Buf(row).v[i], U32Buf(row).v[i + 1u], U32Buf(row).v[i + 2u], U32Buf(row).v[i + 3u]);
}

// ------------------------------------------------------------ x rounding

// 8 floats of x at flat index e (e % 8 == 0).
void ldx8(uint e, out vec4 a, out vec4 b) {
    if (VEC != 0u) {
        a = I8V4(p.x).v[e >> 2];
        b = I8V4(p.x).v[(e >> 2) + 1u];
    } else {
        a = vec4(F32Buf(p.x).v[e], F32Buf(p.x).v[e + 1u], F32Buf(p.x).v[e + 2u], F32Buf(p.x).v[e + 3u]);
        b = vec4(F32Buf(p.x).v[e + 4u], F32Buf(p.x).v[e + 5u], F32Buf(p.x).v[e + 6u], F32Buf(p.x).v[e + 7u]);
    }
}

// NORM: x row m normalized is x * gamma / rms(row m). The 8-bit rounding of a
// block is invariant to the positive factor 1 / rms (q = round(v * 127 /
// absmax(v)) is the same for v and c * v), so the quants are made from
// x * gamma and 1 / rms only multiplies the block scales: the norm's
// statistic rides along the first pass over x (no extra pass, one reduction).
// XCOMB: x[e .. e + 7] (M = 1; one head, as D % 8 == 0) merged from the
// partials, as attention_combine.comp merges them. The split count is a
// constant, so every load is issued before the first is used (a loop over
// a run-time count waited one L2 latency per split, twice).
layout(buffer_reference, std430, buffer_reference_align = 8) buffer CombML { vec2 v[]; };

void ldx8_comb(uint e, out vec4 a, out vec4 b) {
    const uint NSC = XCOMB >= 2u ? XCOMB : 1u;
    uint H = XK / p.D, h = e / p.D;
    vec2 ml[NSC];
    vec4 pa[NSC], pb[NSC];
    [[unroll]] for (uint s = 0u; s < NSC; s++) {
        ml[s] = CombML(p.off).v[s * H + h];
        uint i4 = (s * XK + e) >> 2;
        pa[s] = I8V4(p.x).v[i4];
        pb[s] = I8V4(p.x).v[i4 + 1u];
    }
    float M = -1.0 / 0.0;
    [[unroll]] for (uint s = 0u; s < NSC; s++) M = max(M, ml[s].x);
    vec4 na = vec4(0.0), nb = vec4(0.0);
    float den = 0.0;
    if (M != -1.0 / 0.0) {
        [[unroll]] for (uint s = 0u; s < NSC; s++) {
            float w = exp2(ml[s].x - M);
            den += w * ml[s].y;
            na += w * pa[s];
            nb += w * pb[s];
        }
    }
    a = den > 0.0 ? na / den : vec4(0.0);
    b = den > 0.0 ? nb / den : vec4(0.0);
}

// ldx8g: 8 floats of x times gamma (plain x without NORM); ss gets their
// squares before gamma (two buckets, sumsq.glsl), for the row's statistic.
void ldx8g(uint e, out vec4 a, out vec4 b, inout vec2 ss) {
    if (XCOMB != 0u) ldx8_comb(e, a, b);
    else ldx8(e, a, b);
    if (NORM != 0u) {
        ss += sumsq8(a, b);
        uint k = e % XK;
        a *= I8V4(p.res).v[k >> 2];
        b *= I8V4(p.res).v[(k >> 2) + 1u];
    }
}

// NORM: the rows' 1 / sqrt(mean of squares + eps) into xinv, from each
// invocation's partial sums (rows of whole 8-chunks: an invocation's chunks
// c, c + 256, ... may span rows, so partials are kept per row).
void norm_stats(vec2 ss[NM]) {
    [[unroll]] for (uint m = 0u; m < NM; m++) ss[m] = subgroupAdd(ss[m]);
    uint i0 = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    vec2 tot = vec2(0.0);
    [[unroll]] for (uint b = 0u; b < 2u; b++) {   // the two buckets in turn through red (no more shared memory)
        if (gl_SubgroupInvocationID == 0u)
            [[unroll]] for (uint m = 0u; m < NM; m++) red[gl_SubgroupID * NM + m] = ss[m][b];
        barrier();
        if (i0 < NM)
            for (uint k = 0u; k < gl_NumSubgroups; k++) tot[b] += red[k * NM + i0];
        barrier();
    }
    if (i0 < NM) xinv[i0] = inv_rms(tot, float(XK), uintBitsToFloat(p.pad0));
    barrier();
}

// Rounds 8 quants of K-quant x (chunk c: flat block blk = c >> 5, chunk
// k = c & 31 of it) with the block's 1 / scale id into xq4 / xs4, in the
// order load_x reads them. Lanes c and c ^ 1 must both be active (Q4_K's
// 16-position sums).
void store_chunk_k(uint c, vec4 a, vec4 b, float id) {
    uvec2 q = uvec2(round4(a, id), round4(b, id));
    int sum = sdot8(q, uvec2(0x01010101u));
    if (K45) sum += subgroupShuffleXor(sum, 1u);   // the unit's 16 positions: chunks k, k ^ 1 (adjacent lanes)
    uint e, half_, s, si;   // xq4 entry and its half, xs4 entry and slot (x_image.glsl)
    chunk_slot(K45, c, e, half_, s, si);
    if (half_ == 0u) xq4[e].xy = q;
    else xq4[e].zw = q;
    if (QT == 18u || half_ == 0u) xs4[s][si] = sum;
}

// Rounds the M rows of x into xq / xd (/ xs). Thread i takes 8-element
// chunks i, i + 256, ...; the i are numbered from the subgroup ids so that
// 4 consecutive chunks (a Q8_0 block) sit in one cluster of 4 lanes and, with
// subgroups of 32 or more, the 32 chunks of a 256-block in one cluster of 32.
// There a K-quant block's absmax is a 32-lane shuffle max and each chunk is
// rounded in the same pass (one read of x). With smaller subgroups the
// absmax gathers in shared memory first (atomicMax, a barrier) and a second
// pass over x rounds. Either way the result is the same: a max is exact.
void round_x() {
    const uint i0 = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint n8 = NM * XK / 8u, nb = NM * XK / XB;
    const bool one_pass = QT != 13u && gl_SubgroupSize >= 32u;   // uniform
    vec2 ss[NM];   // NORM: sums of squares of x, per row (sumsq.glsl buckets)
    [[unroll]] for (uint m = 0u; m < NM; m++) ss[m] = vec2(0.0);
    if (i0 < NM) xbad[i0] = 0u;
    if (QT != 13u && !one_pass)
        for (uint b = i0; b < nb; b += 256u) xa[b] = 0u;
    barrier();
    // XROT: workgroup w starts at chunk w * XROT (mod n8), so that a grid's
    // workgroups do not all read the same lines of x at once; a rotation by a
    // multiple of 32 chunks keeps every cluster on whole blocks (Q8_0's
    // clusters of 4 too: n8 is then a multiple of 4)
    const uint rot = XROT != 0u ? (gl_WorkGroupID.x * XROT) % n8 : 0u;
    for (uint c0 = i0; c0 < n8; c0 += 256u) {   // n8 % 32 == 0: a cluster is all in or all out
        uint c = c0 + rot >= n8 ? c0 + rot - n8 : c0 + rot;
        vec4 a, b;
        vec2 sc = vec2(0.0);
        ldx8g(8u * c, a, b, sc);
        uint mc = c / (XK / 8u);
        [[unroll]] for (uint m = 0u; m < NM; m++) if (m == mc) ss[m] += sc;
        uint ab = absmax_bits(a, b);   // max over the 4 lanes of the cluster
        ab = max(ab, subgroupShuffleXor(ab, 1u));
        ab = max(ab, subgroupShuffleXor(ab, 2u));
        if (QT == 13u) {   // the cluster holds the whole 32-block
            float id = inv_scale(ab);
            xq2[c] = uvec2(round4(a, id), round4(b, id));
            if ((gl_SubgroupInvocationID & 3u) == 0u) xd[c >> 2] = block_scale(ab);
            if (ab >= 0x7f800000u) xbad[c / (XK / 8u)] = 1u;
        } else if (one_pass) {   // the cluster of 32 holds the whole 256-block
            ab = max(ab, subgroupShuffleXor(ab, 4u));
            ab = max(ab, subgroupShuffleXor(ab, 8u));
            ab = max(ab, subgroupShuffleXor(ab, 16u));
            store_chunk_k(c, a, b, inv_scale(ab));
            if ((c & 31u) == 0u) {
                xd[c >> 5] = block_scale(ab);   // times 1 / rms below (NORM)
                if (ab >= 0x7f800000u) xbad[c / (XK / 8u)] = 1u;
            }
        } else if ((gl_SubgroupInvocationID & 3u) == 0u) {
            atomicMax(xa[(8u * c) / XB], ab);
        }
    }
    if (NORM != 0u) norm_stats(ss);   // barriers: also orders the atomicMax and xd stores above
    if ((QT == 13u || one_pass) && NORM != 0u)
        for (uint b = i0; b < nb; b += 256u) xd[b] *= xinv[b / (XK / XB)];
    if (QT != 13u && !one_pass) {
        barrier();
        for (uint c = i0; c < n8; c += 256u) {
            vec4 a, b;
            vec2 unused = vec2(0.0);
            ldx8g(8u * c, a, b, unused);
            store_chunk_k(c, a, b, inv_scale(xa[c >> 5]));
        }
        for (uint b = i0; b < nb; b += 256u) {
            xd[b] = block_scale(xa[b]) * (NORM != 0u ? xinv[b / (XK / 256u)] : 1.0);
            if (xa[b] >= 0x7f800000u) xbad[b / (XK / 256u)] = 1u;
        }
    }
    barrier();
}

// ------------------------------------------------------------ units

// The x side of unit r for x row m: up to 32 quants (a, b), the sums the
// weights' offset terms need (s), the block scale (d).
struct xu_t { uvec4 a, b; ivec4 s; float d; };

xu_t load_x(uint m, uint r) {
    xu_t o;
    o.a = uvec4(0u);
    o.b = uvec4(0u);
    o.s = ivec4(0);
    if (QT == 13u) {
        uint c = m * (XK / 8u) + 2u * r;
        o.a = uvec4(xq2[c], xq2[c + 1u]);
        o.d = xd[m * (XK / 32u) + (r >> 1)];
    } else {   // the layout above
        uint b = m * (XK / 256u) + (r >> 3), u = r & 7u;
        o.a = xq4[16u * b + u];
        o.b = xq4[16u * b + 8u + u];
        o.s = xs4[8u * b + u];
        o.d = xd[b];
    }
    return o;
}

// The 6-bit scales and mins of sub-blocks 2j and 2j + 1 from a Q4_K / Q5_K
// header h (d, dmin, then scales[12] as words): bytes 2(j & 1) and
// 2(j & 1) + 1 of the scale words (k4_scale_min in quant_k.c).
// (scale 2j, scale 2j + 1, min 2j, min 2j + 1).
ivec4 k45_scale_min(uvec4 h, uint j) {
    uint sh = 16u * (j & 1u);
    uint lo = (h.y >> sh) & 0xffffu, mid = (h.z >> sh) & 0xffffu, hi = (h.w >> sh) & 0xffffu;
    uint scp = j < 2u ? lo & 0x3f3fu : (hi & 0x0f0fu) | ((lo >> 2) & 0x3030u);
    uint mnp = j < 2u ? mid & 0x3f3fu : ((hi >> 4) & 0x0f0fu) | ((mid >> 2) & 0x3030u);
    return ivec4(int(scp & 0xffu), int(scp >> 8), int(mnp & 0xffu), int(mnp >> 8));
}

// acc[m] += (unit r of the row at `row`) · (x row m's unit), for every m;
// nothing is added when !live (a select: inf or NaN in a clamped unit stays out).
void unit_dot(uint64_t row, uint r, xu_t x[NM], bool live, inout float acc[NM]) {
    if (QT == 13u) {   // Q8_0 (planar): quants 16r.., the block's scale after the row's quants
        float dw = wf16(row, pl_field(QT, p.K, 1u, r >> 1));
        uvec4 q = wbytes16a(row, 16u * r);
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            float v = dw * x[m].d * float(sdot16(q, x[m].a));
            acc[m] += live ? v : 0.0;
        }
    } else if (K45) {   // Q4_K: 144-byte blocks [d, dmin f16][scales 12][qs 128]; weight = d*sc*q - dmin*m
                        // Q5_K: 176-byte blocks [d, dmin][scales 12][qh 32][qs 128]; q += 16 * (bit s of qh[l])
        uint base = (r >> 3) * (QT == 17u ? 176u : 144u), j = (r >> 1) & 3u;
        uvec4 h = wbytes16(row, base);   // d, dmin, then scales[12] as words (k4_scale_min in quant_k.c)
        uvec4 qw = wbytes16(row, base + (QT == 17u ? 48u : 16u) + 16u * (r & 7u));
        vec2 dm = unpackHalf2x16(h.x);
        ivec4 sm = k45_scale_min(h, j);
        int sc0 = sm.x, sc1 = sm.y, mn0 = sm.z, mn1 = sm.w;
        uvec4 q0 = qw & 0x0f0f0f0fu, q1 = (qw >> 4) & 0x0f0f0f0fu;
        if (QT == 17u) {   // the 5th bits: positions 16h.. of qh, bits 2j (sub-block 2j) and 2j + 1
            uvec4 hb = wbytes16(row, base + 16u + 16u * (r & 1u));
            q0 |= ((hb >> (2u * j)) & 0x01010101u) << 4;
            q1 |= ((hb >> (2u * j + 1u)) & 0x01010101u) << 4;
        }
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            int isum = sc0 * sdot16(q0, x[m].a) + sc1 * sdot16(q1, x[m].b);
            int msum = mn0 * x[m].s.x + mn1 * x[m].s.y;
            float v = x[m].d * (dm.x * float(isum) - dm.y * float(msum));
            acc[m] += live ? v : 0.0;
        }
    } else {   // Q6_K (planar): per block ql 128, qh 64, scales 16 x int8, d f16; weight = d*sc*(q - 32)
        uint b = r >> 3, hh = (r >> 2) & 1u, l = 8u * (r & 3u);
        uint ql = pl_field(QT, p.K, 0u, b) + 64u * hh + l;
        uvec2 la = wbytes8a(row, ql);                                      // groups 0 (low nibbles) and 2 (high)
        uvec2 lb = wbytes8a(row, ql + 32u);                                // groups 1 and 3
        uvec2 qh = wbytes8a(row, pl_field(QT, p.K, 1u, b) + 32u * hh + l); // bits 2g, 2g + 1: group g's q bits 4, 5
        uvec2 sw = wbytes8a(row, pl_field(QT, p.K, 2u, b) + 8u * hh);      // scales 8hh .. 8hh + 7; group g's: (l >> 4) + 2g
        float d = wf16(row, pl_field(QT, p.K, 3u, b));
        const uvec2 M4 = uvec2(0x0f0f0f0fu), M30 = uvec2(0x30303030u);
        uvec2 q0 = (la & M4) | ((qh << 4) & M30), q1 = (lb & M4) | ((qh << 2) & M30);
        uvec2 q2 = ((la >> 4) & M4) | (qh & M30), q3 = ((lb >> 4) & M4) | ((qh >> 2) & M30);
        int o = int(8u * (l >> 4));
        int sc0 = bitfieldExtract(int(sw.x), o, 8), sc1 = bitfieldExtract(int(sw.x), o + 16, 8);
        int sc2 = bitfieldExtract(int(sw.y), o, 8), sc3 = bitfieldExtract(int(sw.y), o + 16, 8);
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            int isum = sc0 * (sdot8(q0, x[m].a.xy) - 32 * x[m].s.x) + sc1 * (sdot8(q1, x[m].a.zw) - 32 * x[m].s.y) +
                       sc2 * (sdot8(q2, x[m].b.xy) - 32 * x[m].s.z) + sc3 * (sdot8(q3, x[m].b.zw) - 32 * x[m].s.w);
            float v = x[m].d * d * float(isum);
            acc[m] += live ? v : 0.0;
        }
    }
}

// PAIR, Q6_K (planar): units r and r + 1 (r even: positions l.. and l + 8..
// of the four 32-groups of half hh, l = 0 or 16) share their group scales
// and d; their ql, ql + 32 and qh bytes are 16 contiguous bytes each.
void unit_pair_dot_q6k(uint64_t row, uint r, bool live, inout float acc[NM]) {
    uint b = r >> 3, hh = (r >> 2) & 1u, l = 8u * (r & 3u);
    uint ql = pl_field(QT, p.K, 0u, b) + 64u * hh + l;
    uvec4 la = wbytes16a(row, ql), lb = wbytes16a(row, ql + 32u);
    uvec4 qh = wbytes16a(row, pl_field(QT, p.K, 1u, b) + 32u * hh + l);
    uvec2 sw = wbytes8a(row, pl_field(QT, p.K, 2u, b) + 8u * hh);
    float d = wf16(row, pl_field(QT, p.K, 3u, b));
    int o = int(8u * (l >> 4));
    int sc0 = bitfieldExtract(int(sw.x), o, 8), sc1 = bitfieldExtract(int(sw.x), o + 16, 8);
    int sc2 = bitfieldExtract(int(sw.y), o, 8), sc3 = bitfieldExtract(int(sw.y), o + 16, 8);
    const uvec4 M4 = uvec4(0x0f0f0f0fu), M30 = uvec4(0x30303030u);
    uvec4 q0 = (la & M4) | ((qh << 4) & M30), q1 = (lb & M4) | ((qh << 2) & M30);
    uvec4 q2 = ((la >> 4) & M4) | (qh & M30), q3 = ((lb >> 4) & M4) | ((qh >> 2) & M30);
    [[unroll]] for (uint m = 0u; m < NM; m++) {
        xu_t xa = load_x(m, r), xb = load_x(m, r + 1u);
        int isum = sc0 * (sdot8(q0.xy, xa.a.xy) + sdot8(q0.zw, xb.a.xy) - 32 * (xa.s.x + xb.s.x)) +
                   sc1 * (sdot8(q1.xy, xa.a.zw) + sdot8(q1.zw, xb.a.zw) - 32 * (xa.s.y + xb.s.y)) +
                   sc2 * (sdot8(q2.xy, xa.b.xy) + sdot8(q2.zw, xb.b.xy) - 32 * (xa.s.z + xb.s.z)) +
                   sc3 * (sdot8(q3.xy, xa.b.zw) + sdot8(q3.zw, xb.b.zw) - 32 * (xa.s.w + xb.s.w));
        float v = xa.d * d * float(isum);
        acc[m] += live ? v : 0.0;
    }
}

// PAIR (K45): acc[m] += units r and r + 1 (r even: positions 0.. and 16.. of
// sub-blocks 2j and 2j + 1) of the row at `row` · x row m's units; the block
// header is loaded and its two scales and mins extracted once for both.
void unit_pair_dot(uint64_t row, uint r, bool live, inout float acc[NM]) {
    if (QT == 18u) {
        unit_pair_dot_q6k(row, r, live, acc);
        return;
    }
    if (QT == 13u) {   // Q8_0 (planar): units r and r + 1 are one block: its 32 quants, one scale
        float dw = wf16(row, pl_field(QT, p.K, 1u, r >> 1));
        uvec4 qa = wbytes16a(row, 16u * r), qb = wbytes16a(row, 16u * r + 16u);
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            xu_t xa = load_x(m, r), xb = load_x(m, r + 1u);
            float v = dw * xa.d * float(sdot16(qa, xa.a) + sdot16(qb, xb.a));
            acc[m] += live ? v : 0.0;
        }
        return;
    }
    uint base = (r >> 3) * (QT == 17u ? 176u : 144u), j = (r >> 1) & 3u;
    uvec4 h = wbytes16(row, base);
    uint qoff = base + (QT == 17u ? 48u : 16u) + 16u * (r & 7u);
    uvec4 qa = wbytes16(row, qoff), qb = wbytes16(row, qoff + 16u);
    vec2 dm = unpackHalf2x16(h.x);
    ivec4 sm = k45_scale_min(h, j);
    int sc0 = sm.x, sc1 = sm.y, mn0 = sm.z, mn1 = sm.w;
    uvec4 a0 = qa & 0x0f0f0f0fu, a1 = (qa >> 4) & 0x0f0f0f0fu, b0 = qb & 0x0f0f0f0fu, b1 = (qb >> 4) & 0x0f0f0f0fu;
    if (QT == 17u) {   // the 5th bits: positions 0.. and 16.. of qh, bits 2j and 2j + 1
        uvec4 ha = wbytes16(row, base + 16u), hb = wbytes16(row, base + 32u);
        a0 |= ((ha >> (2u * j)) & 0x01010101u) << 4;
        a1 |= ((ha >> (2u * j + 1u)) & 0x01010101u) << 4;
        b0 |= ((hb >> (2u * j)) & 0x01010101u) << 4;
        b1 |= ((hb >> (2u * j + 1u)) & 0x01010101u) << 4;
    }
    [[unroll]] for (uint m = 0u; m < NM; m++) {
        xu_t xa = load_x(m, r), xb = load_x(m, r + 1u);
        int isum = sc0 * (sdot16(a0, xa.a) + sdot16(b0, xb.a)) + sc1 * (sdot16(a1, xa.b) + sdot16(b1, xb.b));
        int msum = mn0 * (xa.s.x + xb.s.x) + mn1 * (xa.s.y + xb.s.y);
        float v = xa.d * (dm.x * float(isum) - dm.y * float(msum));
        acc[m] += live ? v : 0.0;
    }
}

// Output row of slot s of a group whose first row (or, ROPE, pair) is n0.
uint slot_row(uint n0, uint s) {
    if (ROPE == 0u) return n0 + s;
    uint hd = p.D >> 1;
    return ROPE == 1u ? 2u * n0 + s : (n0 / hd) * p.D + n0 % hd + s * hd;
}

// Stores output row r of x row m: to out[m, r], or (KVW, M = 1) to the
// cache row p.pos of head r / D; a position past the cache writes nothing
// (the host checks the range before submitting, as for kv_write).
void store_row(uint m, uint r, float y) {
    if (xbad[m] != 0u) y = uintBitsToFloat(0x7fc00000u);
    if (!KVW) {
#ifdef RLX_XIMAGE
        if (XOUT != 0u) {   // another workgroup may round this row's block (x_image.glsl)
            XimOutF(p.out_).v[m * p.N + r] = y;
            return;
        }
#endif
        F32Buf(p.out_).v[m * p.N + r] = y;
        return;
    }
    int cp = I32Buf(p.pos).v[0];
    if (cp >= 0 && uint(cp) < p.C) F32Buf(p.out_).v[((r / p.D) * p.C + uint(cp)) * p.D + r % p.D] = y;
}

void main() {
#ifdef RLX_XIMAGE
    if (XIN != 0u) load_image();
    else
#endif
    round_x();

    // A group is T / sgs whole subgroups; lanes are numbered from the subgroup
    // ids (as in dequant_matvec_run.comp), so the reductions stay in a group.
    const uint sg = gl_SubgroupID, lane = gl_SubgroupInvocationID, sgs = gl_SubgroupSize;
    const uint spg = T / sgs;   // subgroups per group (T % sgs == 0)
    const uint grp = sg / spg, t = (sg - grp * spg) * sgs + lane;
    const uint units = XK / UW;
    const uint rows_per_group = ROPE != 0u ? 1u : NR;   // ROPE: pairs
    const uint n_items = ROPE != 0u ? p.N / 2u : p.N;                // rows, or pairs

    for (uint tile = gl_WorkGroupID.x; tile < p.tiles; tile += gl_NumWorkGroups.x) {   // workgroup-uniform
        uint n0 = (tile * G + grp) * rows_per_group;
        uint64_t rows[NS];
        [[unroll]] for (uint s = 0u; s < NS; s++) {
            if (EPI == 2u) rows[s] = (s < NR ? p.w : p.w2) + uint64_t(min(n0 + s % NR, p.N - 1u)) * uint64_t(p.row_bytes);
            else rows[s] = p.w + uint64_t(min(slot_row(min(n0, n_items - 1u), s), p.N - 1u)) * uint64_t(p.row_bytes);
        }
        float acc[NS][NM];
        [[unroll]] for (uint s = 0u; s < NS; s++)
            [[unroll]] for (uint m = 0u; m < NM; m++) acc[s][m] = 0.0;

        if (n0 < n_items && PAIR != 0u) {   // units in pairs (K % 32 == 0: whole pairs)
            for (uint r0 = t; r0 < units / 2u; r0 += T * U) {
                [[unroll]] for (uint u = 0u; u < U; u++) {
                    uint pr = r0 + u * T;
                    bool live = pr < units / 2u;
                    pr = min(pr, units / 2u - 1u);
                    [[unroll]] for (uint s = 0u; s < NS; s++) unit_pair_dot(rows[s], 2u * pr, live, acc[s]);
                }
            }
        } else if (n0 < n_items) {   // group-uniform; rows past N skip the loads (no barriers inside)
            for (uint r0 = t; r0 < units; r0 += T * U) {
                [[unroll]] for (uint u = 0u; u < U; u++) {   // U units T apart, loads issued together
                    uint r = r0 + u * T;
                    bool live = r < units;
                    r = min(r, units - 1u);
                    xu_t x[NM];
                    [[unroll]] for (uint m = 0u; m < NM; m++) x[m] = load_x(m, r);
                    [[unroll]] for (uint s = 0u; s < NS; s++) unit_dot(rows[s], r, x, live, acc[s]);
                }
            }
        }

        group_sums(acc, sg, lane, grp, spg, t);
        bool writer = spg > 1u ? t < NM : t == 0u;
        if (writer && ROPE != 0u) {   // M = 1: slots 0 and 1 are the pair's rows
            if (n0 < n_items) {
                uint r0 = slot_row(n0, 0u), r1 = slot_row(n0, 1u);
                uint j = ROPE == 1u ? (r0 % p.D) >> 1 : r0 % p.D;   // the pair in its head
                int ps = (RKV & 16u) != 0u ? I32Buf(p.off).v[0] : 0;
                bool has_ff = (RKV & 8u) != 0u;
                vec2 cs = rope_cos_sin(ps, j, vec2(p.q_hi, p.q_lo), vec2(p.f0_hi, p.f0_lo),
                                       has_ff ? F32Buf(p.ff).v[j] : 1.0, has_ff);
                float y0 = acc[0][0], y1 = acc[NS - 1u][0];
                store_row(0u, r0, y0 * cs.x - y1 * cs.y);
                store_row(0u, r1, y0 * cs.y + y1 * cs.x);
            }
        } else if (writer) {
            [[unroll]] for (uint s = 0u; s < rows_per_group; s++) {
                if (n0 + s >= p.N) continue;
                [[unroll]] for (uint m = 0u; m < NM; m++) {
                    if (spg > 1u && m != t) continue;
                    uint oi = m * p.N + n0 + s;
                    float y = acc[s][m];
                    if (EPI == 1u) y += F32Buf(p.res).v[oi];
                    if (EPI == 2u) y = y / (1.0 + exp(-y)) * acc[NR + s][m];
                    store_row(m, n0 + s, y);
                }
            }
        }
#ifdef RLX_XIMAGE
        if (XOUT != 0u) image_tile_done(tile, G * rows_per_group);
#endif
    }
}
