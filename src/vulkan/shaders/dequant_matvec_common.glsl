// dequant_matvec_common.glsl — pieces the decode matvecs for Q8_0 / Q4_K /
// Q6_K share (dequant_matvec_i8.comp, dequant_matvec_run.comp): the
// weight-byte loaders and the group sums.
//
// The including shader declares, before including this: common.glsl, the
// spec constants A4 (bit 0: w, w2 and row_bytes 4-byte aligned), NM (x rows,
// <= 8) and NS (weight rows per group), and enables the subgroup basic and
// arithmetic extensions. Groups are whole subgroups of >= 4 lanes.

#include "planar.glsl"   // pl_field: Q8_0 and Q6_K rows are planar

// Little-endian 32-bit word at an even byte offset of a row.
uint wword(uint64_t row, uint off) {
    if ((A4 & 1u) != 0u && (off & 3u) == 0u) return U32Buf(row).v[off >> 2];
    return uint(U16Buf(row).v[off >> 1]) | (uint(U16Buf(row).v[(off >> 1) + 1u]) << 16);
}

// 8 bytes at an even offset of a row. With 4-byte-aligned rows: two or three
// aligned 32-bit loads and a funnel shift (fewer load instructions than four
// 16-bit loads; reads at most 2 bytes past the span, inside the buffer's
// padding at the very end).
uvec2 wbytes8(uint64_t row, uint off) {
    if ((A4 & 1u) == 0u) return uvec2(wword(row, off), wword(row, off + 4u));
    uint i = off >> 2;
    uint w0 = U32Buf(row).v[i], w1 = U32Buf(row).v[i + 1u];
    if ((off & 2u) == 0u) return uvec2(w0, w1);
    uint w2 = U32Buf(row).v[i + 2u];
    return uvec2((w0 >> 16) | (w1 << 16), (w1 >> 16) | (w2 << 16));
}
// 8 bytes at an offset that is a multiple of 8 (planar fields): one load
// when rows are 16-byte aligned (A4 bit 1), two with 4-byte-aligned rows.
layout(buffer_reference, std430, buffer_reference_align = 8) buffer WU2 { uvec2 v[]; };
uvec2 wbytes8a(uint64_t row, uint off) {
    if ((A4 & 2u) != 0u) return WU2(row).v[off >> 3];
    if ((A4 & 1u) != 0u) return uvec2(U32Buf(row).v[off >> 2], U32Buf(row).v[(off >> 2) + 1u]);
    return uvec2(wword(row, off), wword(row, off + 4u));
}
uint wbyte(uint64_t row, uint off) { return uint(U8Buf(row).v[off]); }
float wf16(uint64_t row, uint off) { return unpackHalf2x16(uint(U16Buf(row).v[off >> 1])).x; }

shared float red[256u / 4u * 8u];   // per-subgroup partials (subgroups >= 4 lanes, NM <= 8)

// Sums each acc[s][m] over the group: subgroupAdd, then, when a group spans
// spg > 1 subgroups, the subgroups' partials through shared memory; after it
// lane 0 (spg == 1) or group thread t < NM (spg > 1: x row t) holds the sums.
// sg: subgroup id, lane: id in it, grp: group, t: thread in the group.
// Workgroup-uniform control flow only (barriers).
void group_sums(inout float acc[NS][NM], uint sg, uint lane, uint grp, uint spg, uint t) {
    [[unroll]] for (uint s = 0u; s < NS; s++)
        [[unroll]] for (uint m = 0u; m < NM; m++) acc[s][m] = subgroupAdd(acc[s][m]);
    if (spg > 1u) {
        [[unroll]] for (uint s = 0u; s < NS; s++) {
            barrier();
            if (lane == 0u)
                [[unroll]] for (uint m = 0u; m < NM; m++) red[sg * NM + m] = acc[s][m];
            barrier();
            if (t < NM) {   // thread t of the group finishes x row t
                float sum = 0.0;
                for (uint k = 0u; k < spg; k++) sum += red[(grp * spg + k) * NM + t];
                [[unroll]] for (uint m = 0u; m < NM; m++) if (m == t) acc[s][m] = sum;
            }
        }
    }
}
