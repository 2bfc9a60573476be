// int8_dot.glsl — 8-bit arithmetic the decode matvecs share
// (dequant_matvec_i8.comp, and the experiment bench/shaders/decode_chain.comp):
// packed 4 x 8-bit dot products and the rounding of x to 8-bit blocks the
// way the CPU fast path rounds it (src/cpu/kernels/qdot.c: d = amax / 127,
// q = round-half-even(x * 127 / amax)).
//
// The including shader enables GL_EXT_spirv_intrinsics.

// Packed 4 x 8-bit dot products (SPV_KHR_integer_dot_product; glslc has no
// GLSL extension for them): OpSDot / OpSUDot and their AccSat forms, format
// 0 = PackedVectorFormat4x8Bit. The sums here never come near saturation.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot4(uint a, uint b, spirv_literal int fmt);
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4453)
int sdot4_acc(uint a, uint b, int acc, spirv_literal int fmt);
// signed bytes of a times unsigned bytes of b
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4452)
int sudot4(uint a, uint b, spirv_literal int fmt);
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4455)
int sudot4_acc(uint a, uint b, int acc, spirv_literal int fmt);

int sdot8(uvec2 a, uvec2 b) { return sdot4_acc(a.y, b.y, sdot4(a.x, b.x, 0), 0); }
int sdot16(uvec4 a, uvec4 b) {
    return sdot4_acc(a.w, b.w, sdot4_acc(a.z, b.z, sdot4_acc(a.y, b.y, sdot4(a.x, b.x, 0), 0), 0), 0);
}
int sudot16(uvec4 a, uvec4 b) {
    return sudot4_acc(a.w, b.w, sudot4_acc(a.z, b.z, sudot4_acc(a.y, b.y, sudot4(a.x, b.x, 0), 0), 0), 0);
}

// Largest |x| of 8 as float bits: for non-negative floats the integer order
// is the float order, and Inf / NaN (>= 0x7f800000) sort above every finite
// value, so one unsigned max finds both the absmax and non-finite blocks
// (and no float max with NaN operands is involved).
uint absmax_bits(vec4 a, vec4 b) {
    uvec4 u = max(floatBitsToUint(a) & 0x7fffffffu, floatBitsToUint(b) & 0x7fffffffu);
    return max(max(u.x, u.y), max(u.z, u.w));
}

// 1 / scale as the CPU computes it (0 for an all-zero or non-finite block;
// capped so that a subnormal absmax cannot make it infinite).
float inv_scale(uint ab) {
    float amax = uintBitsToFloat(ab);
    return ab < 0x7f800000u && amax > 0.0 ? min(127.0 / amax, 1e38) : 0.0;
}
float block_scale(uint ab) { return ab < 0x7f800000u ? uintBitsToFloat(ab) / 127.0 : 0.0; }

// Four x values times id, rounded half to even, as packed signed bytes
// (|x * id| <= 127 by construction).
uint round4(vec4 v, float id) {
    uvec4 q = uvec4(ivec4(roundEven(v * id))) & 0xffu;
    return q.x | (q.y << 8) | (q.z << 16) | (q.w << 24);
}
