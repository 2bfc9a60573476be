// common.glsl — shared declarations for rlx compute shaders.
//
// Tensors are addressed by buffer device address (GL_EXT_buffer_reference):
// a push-constant block holds one 64-bit reference per tensor. Element types
// get one reference type each. Dtype codes equal rlx_dtype (include/rlx.h).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32Buf  { float     v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16Buf  { uint16_t  v[]; };  // f16 / bf16 bits
layout(buffer_reference, std430, buffer_reference_align = 4) buffer I32Buf  { int       v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32Buf  { uint      v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer I64Buf  { int64_t   v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Buf   { uint8_t   v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer I8Buf   { int8_t    v[]; };

#define DT_F32  0u
#define DT_F16  1u
#define DT_BF16 2u
#define DT_F64  3u
#define DT_I32  4u
#define DT_I64  5u
#define DT_U8   6u
#define DT_BOOL 7u
#define DT_I8   8u

// Linear invocation id for a dispatch laid out by vk_grid_1d(). Declare the
// local size before using it (gl_WorkGroupSize is 1 until then). A macro, not
// a function: gl_WorkGroupSize must be read after the shader declares its
// local size (a function here would see the default size 1 when the size is
// a specialization constant; lavapipe hides that, NVIDIA does not).
#define linear_id() ((gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x)

float bf16_to_f32(uint16_t h) { return uintBitsToFloat(uint(h) << 16); }
uint16_t f32_to_bf16(float f) {
    uint u = floatBitsToUint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40u);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return uint16_t(u >> 16);
}
float f16_to_f32(uint16_t h) { return unpackHalf2x16(uint(h)).x; }
uint16_t f32_to_f16(float f) { return uint16_t(packHalf2x16(vec2(f, 0.0)) & 0xffffu); }

// Generic element access for the dtypes shaders support (f64 is not one).
float load_f(uint64_t addr, uint dt, uint i) {
    switch (dt) {
    case DT_F32:  return F32Buf(addr).v[i];
    case DT_F16:  return f16_to_f32(U16Buf(addr).v[i]);
    case DT_BF16: return bf16_to_f32(U16Buf(addr).v[i]);
    case DT_I32:  return float(I32Buf(addr).v[i]);
    case DT_I64:  return float(I64Buf(addr).v[i]);
    case DT_U8:   return float(U8Buf(addr).v[i]);
    case DT_BOOL: return U8Buf(addr).v[i] != uint8_t(0) ? 1.0 : 0.0;
    case DT_I8:   return float(I8Buf(addr).v[i]);
    }
    return 0.0;
}
