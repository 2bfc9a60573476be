// planar.glsl — where the fields of a Q8_0 or Q6_K block sit in device
// memory. Those rows are "planar" (src/vulkan/vk_weight_layout.c says why): a
// row of K elements holds each field of all its blocks together, largest first,
//   Q8_0: [qs: 32 a block][d: 2]             (K + K/16 bytes)
//   Q6_K: [ql: 128][qh: 64][scales: 16][d: 2] (210 K/256 bytes)
// so a field of block b is at a multiple of its size from the row's start.
// Included by quant_blocks.glsl and dequant_matvec_common.glsl.

#define PL_Q8_0 13u   // rlx_dtype; any other qt here is Q6_K

// Byte offset in a planar row of K elements of field f (in the order above)
// of block b.
uint pl_field(uint qt, uint K, uint f, uint b) {
    if (qt == PL_Q8_0) return f == 0u ? 32u * b : K + 2u * b;
    return f == 0u ? 128u * b : f == 1u ? K / 2u + 64u * b : f == 2u ? (K / 4u) * 3u + 16u * b : (K / 16u) * 13u + 2u * b;
}
