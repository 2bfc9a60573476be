// move.comp — generic strided copy for the movement ops (reshape copy,
// transpose, slice, concat, expand). Moves units of UNIT bytes (1, 2, 4, 8 or
// 16): one invocation per unit of an index space of RANK dims, reading at
// sum(idx * ss) and writing at sum(idx * ds) units from the two base
// addresses. The lowering merges dims and widens units where it can.
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"

layout(constant_id = 0) const uint UNIT = 4;
layout(constant_id = 1) const uint RANK = 1;

layout(push_constant, std430) uniform Push {
    uint64_t src, dst;
    uint n, pad0;
    uint dims[8];
    uint ss[8];
    uint ds[8];
} p;

void main() {
    uint64_t id = linear_id64();
    if (id >= uint64_t(p.n)) return;
    uint o = uint(id), so = 0, dof = 0;
    for (int d = int(RANK) - 1; d >= 0; d--) {
        uint n = p.dims[d];
        uint i = o % n;
        o /= n;
        so += i * p.ss[d];
        dof += i * p.ds[d];
    }
    if (UNIT == 16) U4Buf(p.dst).v[dof] = U4Buf(p.src).v[so];
    else if (UNIT == 8) U2Buf(p.dst).v[dof] = U2Buf(p.src).v[so];
    else if (UNIT == 4) U1Buf(p.dst).v[dof] = U1Buf(p.src).v[so];
    else if (UNIT == 2) U16Buf(p.dst).v[dof] = U16Buf(p.src).v[so];
    else U8Buf(p.dst).v[dof] = U8Buf(p.src).v[so];
}
