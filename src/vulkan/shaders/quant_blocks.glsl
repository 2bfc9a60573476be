// quant_blocks.glsl — GPU decoders of the GGUF block types, bit for bit the
// reference codecs in src/io/quant.c (legacy 32-element blocks) and
// src/io/quant_k.c (256-element K-quants); their header comments give the
// layouts. Used by dequant_matvec.comp and dequant_rows.comp.
//
// Every block is cut into "parts" of 32 elements (1 per legacy block, 8 per
// K-quant super-block), so one invocation decodes 32 weights from a few 32-bit
// words held in registers. A part's elements are 4 runs of 8 contiguous
// elements: v[8r + e] is element off[r] + e of the block. Adjacent parts of a
// block read adjacent bytes, so lanes walking parts in order read coalesced.
//
// Blocks are only 2-byte aligned in general (Q4_0 is 18 bytes), so words are
// assembled from two 16-bit loads unless the caller proved 4-byte alignment
// (a4: the block size is a multiple of 4 and the tensor address is 4-aligned).
// Arithmetic follows the C expressions term by term, so the decoded f32
// values equal the CPU's (e.g. Q2_K: (d * sc) * q - dmin * m).
//
// Q8_0 and Q6_K rows are planar in device memory (planar.glsl), so their
// fields are addressed from the row, not from a block.
//
// Include after common.glsl. Type codes are rlx_dtype values (include/rlx.h).

#include "planar.glsl"

#define QB_Q4_0  9u
#define QB_Q4_1 10u
#define QB_Q5_0 11u
#define QB_Q5_1 12u
#define QB_Q8_0 13u
#define QB_Q2_K 14u
#define QB_Q3_K 15u
#define QB_Q4_K 16u
#define QB_Q5_K 17u
#define QB_Q6_K 18u
#define QB_Q8_K 19u

bool qb_is_block(uint qt) { return qt >= QB_Q4_0 && qt <= QB_Q8_K; }
bool qb_is_k(uint qt) { return qt >= QB_Q2_K; }
uint qb_block_elems(uint qt) { return qb_is_k(qt) ? 256u : 32u; }
uint qb_parts_per_block(uint qt) { return qb_is_k(qt) ? 8u : 1u; }

uint qb_block_bytes(uint qt) {
    switch (qt) {
    case QB_Q4_0: return 18u;
    case QB_Q4_1: return 20u;
    case QB_Q5_0: return 22u;
    case QB_Q5_1: return 24u;
    case QB_Q8_0: return 34u;
    case QB_Q2_K: return 84u;
    case QB_Q3_K: return 110u;
    case QB_Q4_K: return 144u;
    case QB_Q5_K: return 176u;
    case QB_Q6_K: return 210u;
    case QB_Q8_K: return 292u;
    }
    return 0u;
}

// Little-endian 32-bit word at byte offset off (even) of the block at blk.
uint qb_word(uint64_t blk, uint off, bool a4) {
    if (a4 && (off & 3u) == 0u) return U32Buf(blk).v[off >> 2];
    return uint(U16Buf(blk).v[off >> 1]) | (uint(U16Buf(blk).v[(off >> 1) + 1u]) << 16);
}
uint qb_u16(uint64_t blk, uint off) { return uint(U16Buf(blk).v[off >> 1]); }
uint qb_u8(uint64_t blk, uint off) { return uint(U8Buf(blk).v[off]); }
float qb_f16(uint64_t blk, uint off) { return unpackHalf2x16(qb_u16(blk, off)).x; }

// Byte j of a little-endian array of words.
#define QB_BYTE(w, j) (((w)[(j) >> 2] >> (8u * ((j) & 3u))) & 0xffu)

// v = expr without contracting a*b+c into an fma: the CPU reference rounds twice.
#define QB_SET(dst, expr) { precise float t_ = (expr); dst = t_; }

// Q4_K / Q5_K 6-bit scale and min of sub-block j (k4_scale_min in quant_k.c); s = scales' offset.
void qb_k4_scale_min(uint64_t blk, uint s, uint j, out uint sc, out uint m) {
    if (j < 4u) {
        sc = qb_u8(blk, s + j) & 63u;
        m = qb_u8(blk, s + j + 4u) & 63u;
    } else {
        uint a = qb_u8(blk, s + j + 4u);
        sc = (a & 15u) | ((qb_u8(blk, s + j - 4u) >> 6) << 4);
        m = (a >> 4) | ((qb_u8(blk, s + j) >> 6) << 4);
    }
}

// Q3_K signed 6-bit scale of sub-block g (q3_scale in quant_k.c); s = scales' offset.
int qb_q3_scale(uint64_t blk, uint s, uint g) {
    uint lo = g < 8u ? qb_u8(blk, s + g) & 15u : qb_u8(blk, s + g - 8u) >> 4;
    uint hi = (qb_u8(blk, s + 8u + (g & 3u)) >> (2u * (g >> 2))) & 3u;
    return int(lo | (hi << 4)) - 32;
}

// Decodes part `part` (< qb_parts_per_block(qt)) of block bi of the row of
// K elements at row. a4: the row (and, for the GGUF layout, its blocks) is
// 4-byte aligned.
void qb_decode(uint qt, bool a4, uint64_t row, uint bi, uint K, uint part, out float v[32], out uint off[4]) {
    uint64_t blk = row + uint64_t(bi) * uint64_t(qb_block_bytes(qt));   // GGUF layouts
    if (!qb_is_k(qt)) {   // legacy: the whole 32-element block, elements in order
        off[0] = 0u; off[1] = 8u; off[2] = 16u; off[3] = 24u;
        if (qt == QB_Q8_0) {
            float d = qb_f16(row, pl_field(qt, K, 1u, bi));
            uint qs = pl_field(qt, K, 0u, bi);
            uint w[8];
            [[unroll]] for (uint i = 0u; i < 8u; i++) w[i] = qb_word(row, qs + 4u * i, a4);
            [[unroll]] for (uint j = 0u; j < 32u; j++)
                v[j] = d * float(bitfieldExtract(int(w[j >> 2]), int(8u * (j & 3u)), 8));
            return;
        }
        // 4- and 5-bit: qs[16] after d (and m) (and qh)
        uint qso = qt == QB_Q4_0 ? 2u : qt == QB_Q4_1 ? 4u : qt == QB_Q5_0 ? 6u : 8u;
        float d = qb_f16(blk, 0u);
        float m = (qt == QB_Q4_1 || qt == QB_Q5_1) ? qb_f16(blk, 2u) : 0.0;
        uint qh = qt == QB_Q5_0 ? qb_word(blk, 2u, a4) : qt == QB_Q5_1 ? qb_word(blk, 4u, a4) : 0u;
        uint w[4];
        [[unroll]] for (uint i = 0u; i < 4u; i++) w[i] = qb_word(blk, qso + 4u * i, a4);
        [[unroll]] for (uint j = 0u; j < 16u; j++) {
            uint b = QB_BYTE(w, j);
            uint lo = b & 15u, hi = b >> 4;
            if (qt == QB_Q5_0 || qt == QB_Q5_1) {
                lo |= ((qh >> j) & 1u) << 4;
                hi |= ((qh >> (j + 16u)) & 1u) << 4;
            }
            if (qt == QB_Q4_0) {
                v[j] = d * float(int(lo) - 8);
                v[j + 16u] = d * float(int(hi) - 8);
            } else if (qt == QB_Q5_0) {
                v[j] = d * float(int(lo) - 16);
                v[j + 16u] = d * float(int(hi) - 16);
            } else {
                QB_SET(v[j], d * float(lo) + m);
                QB_SET(v[j + 16u], d * float(hi) + m);
            }
        }
        return;
    }

    if (qt == QB_Q4_K || qt == QB_Q5_K) {
        // sub-blocks s0 = 2 * pair (low nibbles) and s0 + 1 (high), elements hf*16 .. +16 of each
        uint pair = part >> 1, hf = part & 1u;
        uint s0 = 2u * pair;
        vec2 dm = unpackHalf2x16(qb_word(blk, 0u, a4));
        uint sc0, m0, sc1, m1;
        qb_k4_scale_min(blk, 4u, s0, sc0, m0);
        qb_k4_scale_min(blk, 4u, s0 + 1u, sc1, m1);
        float ds0 = dm.x * float(sc0), dm0 = dm.y * float(m0);
        float ds1 = dm.x * float(sc1), dm1 = dm.y * float(m1);
        uint qso = (qt == QB_Q4_K ? 16u : 48u) + pair * 32u + hf * 16u;
        uint w[4], h[4];
        [[unroll]] for (uint i = 0u; i < 4u; i++) {
            w[i] = qb_word(blk, qso + 4u * i, a4);
            h[i] = qt == QB_Q5_K ? qb_word(blk, 16u + hf * 16u + 4u * i, a4) : 0u;
        }
        [[unroll]] for (uint e = 0u; e < 16u; e++) {
            uint b = QB_BYTE(w, e);
            uint q0 = b & 15u, q1 = b >> 4;
            if (qt == QB_Q5_K) {
                uint hb = QB_BYTE(h, e);
                q0 += 16u * ((hb >> s0) & 1u);
                q1 += 16u * ((hb >> (s0 + 1u)) & 1u);
            }
            QB_SET(v[e], ds0 * float(q0) - dm0);
            QB_SET(v[e + 16u], ds1 * float(q1) - dm1);
        }
        off[0] = s0 * 32u + hf * 16u;
        off[1] = off[0] + 8u;
        off[2] = off[0] + 32u;
        off[3] = off[0] + 40u;
        return;
    }

    if (qt == QB_Q8_K) {
        float d = uintBitsToFloat(qb_word(blk, 0u, a4));
        uint w[8];
        [[unroll]] for (uint i = 0u; i < 8u; i++) w[i] = qb_word(blk, 4u + 32u * part + 4u * i, a4);
        [[unroll]] for (uint j = 0u; j < 32u; j++)
            v[j] = d * float(bitfieldExtract(int(w[j >> 2]), int(8u * (j & 3u)), 8));
        off[0] = 32u * part;
        off[1] = off[0] + 8u;
        off[2] = off[0] + 16u;
        off[3] = off[0] + 24u;
        return;
    }

    // Q2_K, Q3_K, Q6_K: element i = h*128 + g*32 + l; this part is h = part / 4, l = lq .. lq + 8
    uint hh = part >> 2, lq = (part & 3u) * 8u;
    [[unroll]] for (uint g = 0u; g < 4u; g++) off[g] = hh * 128u + g * 32u + lq;
    uint sub = hh * 8u + (lq >> 4);   // sub-block (16 elements) of run g is sub + 2g
    if (qt == QB_Q2_K) {
        uint w[2];
        w[0] = qb_word(blk, 16u + hh * 32u + lq, a4);
        w[1] = qb_word(blk, 20u + hh * 32u + lq, a4);
        vec2 dm = unpackHalf2x16(qb_word(blk, 80u, a4));
        [[unroll]] for (uint g = 0u; g < 4u; g++) {
            uint sc = qb_u8(blk, sub + 2u * g);
            float ds = dm.x * float(sc & 15u), dmn = dm.y * float(sc >> 4);
            [[unroll]] for (uint e = 0u; e < 8u; e++) QB_SET(v[8u * g + e], ds * float((QB_BYTE(w, e) >> (2u * g)) & 3u) - dmn);
        }
    } else if (qt == QB_Q3_K) {
        uint w[2], hm[2];
        w[0] = qb_word(blk, 32u + hh * 32u + lq, a4);
        w[1] = qb_word(blk, 36u + hh * 32u + lq, a4);
        hm[0] = qb_word(blk, lq, a4);
        hm[1] = qb_word(blk, lq + 4u, a4);
        float d = qb_f16(blk, 108u);
        [[unroll]] for (uint g = 0u; g < 4u; g++) {
            float ds = d * float(qb_q3_scale(blk, 96u, sub + 2u * g));
            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                int q = int((QB_BYTE(w, e) >> (2u * g)) & 3u) + 4 * int((QB_BYTE(hm, e) >> (hh * 4u + g)) & 1u) - 4;
                v[8u * g + e] = ds * float(q);
            }
        }
    } else {   // Q6_K (planar)
        uint l0[2], l1[2], qh[2];
        uint fl = pl_field(qt, K, 0u, bi), fh = pl_field(qt, K, 1u, bi), fs = pl_field(qt, K, 2u, bi);
        [[unroll]] for (uint i = 0u; i < 2u; i++) {
            l0[i] = qb_word(row, fl + hh * 64u + lq + 4u * i, a4);
            l1[i] = qb_word(row, fl + hh * 64u + 32u + lq + 4u * i, a4);
            qh[i] = qb_word(row, fh + hh * 32u + lq + 4u * i, a4);
        }
        float d = qb_f16(row, pl_field(qt, K, 3u, bi));
        [[unroll]] for (uint g = 0u; g < 4u; g++) {
            float ds = d * float(bitfieldExtract(int(qb_u8(row, fs + sub + 2u * g)), 0, 8));
            [[unroll]] for (uint e = 0u; e < 8u; e++) {
                uint lb = (g & 1u) != 0u ? QB_BYTE(l1, e) : QB_BYTE(l0, e);
                uint lo = (lb >> (4u * (g >> 1))) & 15u;
                uint hi = (QB_BYTE(qh, e) >> (2u * g)) & 3u;
                v[8u * g + e] = ds * float(int(lo | (hi << 4)) - 32);
            }
        }
    }
}
