// nn_common.glsl — extra buffer-reference types for the attention, rope,
// movement, gather, topk and loss shaders (on top of common.glsl): wide and
// element-size-aligned views used by the byte-moving kernels.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(buffer_reference, std430, buffer_reference_align = 16) buffer V4Buf  { vec4  v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer U4Buf  { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8)  buffer U2Buf  { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4)  buffer U1Buf  { uint  v[]; };

// Element index of a dispatch laid out by vk_grid_1d() (64-bit safe).
uint64_t linear_id64() {
    return (uint64_t(gl_WorkGroupID.y) * uint64_t(gl_NumWorkGroups.x) + uint64_t(gl_WorkGroupID.x)) *
               uint64_t(gl_WorkGroupSize.x) + uint64_t(gl_LocalInvocationID.x);
}
