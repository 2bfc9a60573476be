// inflight.comp — experiment for bench/vk_inflight.c (not part of the
// library): does a chain of dependent L2 hits slow down while the SM has
// many DRAM loads outstanding?
//
// The question (bench/HISTORY.md, 2026-12-01, the decode target): every design that loaded
// a stage's weights ahead of a join (the persistent chain's prefetch through
// the grid wait, the fused attention + o projection's rows ahead of the
// attention) found the early loads and the work after them adding up instead
// of overlapping. If an SM's outstanding misses queue the later loads behind
// the early ones, loads issued ahead cannot hide a join: the join's own
// loads (x after the wait, the keys of the attention) wait for them.
//
// Each lane first issues P 16-byte loads of a region no run has read (DRAM),
// then lane 0 of each subgroup follows H dependent hops through a small
// table the previous runs left in L2, then the loaded words are folded into
// a store no run takes (so none of the loads can be dropped).
// ORDER 1: the hops first, then the P loads (the hops' own latency alone).
// ORDER 2: subgroup 0 takes the hops and issues no loads; the other
// subgroups issue theirs (does a warp with nothing outstanding wait for its
// SM's other warps' loads?).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require

layout(local_size_x_id = 0) in;

#include "common.glsl"

layout(constant_id = 1) const uint P = 0;       // loads a lane issues first (<= 32)
layout(constant_id = 2) const uint H = 16;      // dependent hops a subgroup takes through the table
layout(constant_id = 3) const uint ORDER = 0;   // 0 loads then hops, 1 hops then loads, 2 hops in a warp without loads

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer BigU4 { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer TableU { uint v[]; };

layout(push_constant, std430) uniform Push {
    uint64_t big;     // this run's region: P * lanes uvec4, read once
    uint64_t table;   // a cycle through `mask + 1` words
    uint64_t out_;    // written only if the folded value hits a magic number
    uint mask, pad0;
} p;

uint hops(uint start) {
    uint idx = start;
    if (subgroupElect())
        for (uint h = 0u; h < H; h++) idx = TableU(p.table).v[idx & p.mask];
    return subgroupBroadcastFirst(idx);
}

void main() {
    const uint lanes = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    const uint gid = gl_WorkGroupID.x * gl_WorkGroupSize.x + gl_LocalInvocationIndex;
    const bool loads = ORDER != 2u || gl_SubgroupID != 0u;
    uint idx = 0u;
    if (ORDER == 1u) idx = hops(gid * 977u);
    uvec4 v[P > 0u ? P : 1u];
    [[unroll]] for (uint i = 0u; i < P; i++) v[i] = loads ? BigU4(p.big).v[i * lanes + gid] : uvec4(0u);   // a warp: 512 adjacent bytes
    if (ORDER == 0u || (ORDER == 2u && !loads)) idx = hops(gid * 977u);
    uvec4 acc = uvec4(idx, 1u, 2u, 3u);   // folds to idx when P = 0 (the hops are kept)
    [[unroll]] for (uint i = 0u; i < P; i++) acc ^= v[i];
    if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x9e3779b9u) U32Buf(p.out_).v[gid] = acc.x;
}
