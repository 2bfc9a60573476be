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
                                               // the attention_dequant_matmul op, lower/attention_dequant.c)
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

#include "matvec_i8_round_x.glsl"   // ldx8 .. round_x: x to 8-bit blocks in shared memory
#include "matvec_i8_units.glsl"     // load_x, unit_dot, unit_pair_dot: the weights against x
#include "matvec_i8_store.glsl"     // slot_row, store_row: where a result row goes

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
