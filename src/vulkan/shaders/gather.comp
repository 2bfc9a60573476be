// gather.comp — GATHER_ROWS (MODE 0: out[i, :] = table[ids[i], :], rows of
// row_units units) and GATHER (MODE 1, torch.gather: out[o] = x[o with the
// axis coordinate replaced by index[o]]). Ids are i32 or i64 (IDS64). One
// invocation per UNIT-byte unit of the output.
//
// The GPU cannot report an error from inside a command buffer, so an id
// outside [0, limit) writes zeros instead of reading out of range (the CPU
// backend returns RLX_STATUS_INVALID_ARGUMENT for the same input).
#version 450
#include "common.glsl"
#include "nn_common.glsl"

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint UNIT  = 4;
layout(constant_id = 1) const uint MODE  = 0;
layout(constant_id = 2) const uint IDS64 = 0;
layout(constant_id = 3) const uint RANK  = 1;

layout(push_constant, std430) uniform Push {
    uint64_t src, ids, dst;
    uint n;          // output units
    uint axis;       // MODE 1
    uint limit;      // rows of the table / size of x along axis
    uint row_units;  // MODE 0
    uint pad0, pad1;
    uint dims[8];    // MODE 1: index dims
    uint xs[8];      // MODE 1: x element strides
} p;

int64_t load_id(uint i) {
    return IDS64 != 0 ? I64Buf(p.ids).v[i] : int64_t(I32Buf(p.ids).v[i]);
}

void copy_unit(uint64_t src, uint so, uint dof, bool ok) {
    if (ok) {
        if (UNIT == 16) U4Buf(p.dst).v[dof] = U4Buf(src).v[so];
        else if (UNIT == 8) U2Buf(p.dst).v[dof] = U2Buf(src).v[so];
        else if (UNIT == 4) U1Buf(p.dst).v[dof] = U1Buf(src).v[so];
        else if (UNIT == 2) U16Buf(p.dst).v[dof] = U16Buf(src).v[so];
        else U8Buf(p.dst).v[dof] = U8Buf(src).v[so];
    } else {
        if (UNIT == 16) U4Buf(p.dst).v[dof] = uvec4(0);
        else if (UNIT == 8) U2Buf(p.dst).v[dof] = uvec2(0);
        else if (UNIT == 4) U1Buf(p.dst).v[dof] = 0u;
        else if (UNIT == 2) U16Buf(p.dst).v[dof] = uint16_t(0);
        else U8Buf(p.dst).v[dof] = uint8_t(0);
    }
}

void main() {
    uint64_t lid = linear_id64();
    if (lid >= uint64_t(p.n)) return;
    uint o = uint(lid);
    if (MODE == 0) {
        uint i = o / p.row_units, j = o - i * p.row_units;
        int64_t id = load_id(i);
        bool ok = id >= 0 && id < int64_t(p.limit);
        uint64_t row = p.src + uint64_t(ok ? id : 0) * uint64_t(p.row_units) * uint64_t(UNIT);
        copy_unit(row, j, o, ok);
    } else {
        uint rem = o, off = 0;
        for (int d = int(RANK) - 1; d >= 0; d--) {
            uint n = p.dims[d];
            uint i = rem % n;
            rem /= n;
            if (uint(d) != p.axis) off += i * p.xs[d];
        }
        int64_t id = load_id(o);
        bool ok = id >= 0 && id < int64_t(p.limit);
        if (ok) off += uint(id) * p.xs[p.axis];
        copy_unit(p.src, ok ? off : 0u, o, ok);
    }
}
