// gather.comp — GATHER_ROWS (MODE 0: out[i, :] = table[ids[i], :], rows of
// row_units units) and GATHER (MODE 1, torch.gather: out[o] = x[o with the
// axis coordinate replaced by index[o]]). Ids are i32 or i64 (IDS64). One
// invocation per UNIT-byte unit of the output.
//
// An id outside [0, limit) writes zeros instead of reading out of range and
// sets the program's status word; the host then fails the run with
// RLX_STATUS_INVALID_ARGUMENT, as the CPU backend does for the same input.
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"

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
    uint code, pad1; // code: written to status when an id is out of range
    uint dims[8];    // MODE 1: index dims
    uint xs[8];      // MODE 1: x element strides
    uint64_t status; // the program's status word (0: none)
} p;

// id i if it lies in [0, limit); ok = false otherwise. Done on 32-bit words
// (an i64 id is in range iff its high word is 0 and its low word < limit).
uint load_id(uint i, out bool ok) {
    if (IDS64 != 0) {
        uvec2 w = U2Buf(p.ids).v[i];
        ok = w.y == 0u && w.x < p.limit;
        return w.x;
    }
    int v = I32Buf(p.ids).v[i];
    ok = v >= 0 && uint(v) < p.limit;
    return uint(v);
}

void copy_unit(uint64_t src, uint so, uint dof, bool ok) {
    if (ok) {
        if (UNIT == 16) U4Buf(p.dst).v[dof] = U4Buf(src).v[so];
        else if (UNIT == 8) U2Buf(p.dst).v[dof] = U2Buf(src).v[so];
        else if (UNIT == 4) U1Buf(p.dst).v[dof] = U1Buf(src).v[so];
        else if (UNIT == 2) U16Buf(p.dst).v[dof] = U16Buf(src).v[so];
        else U8Buf(p.dst).v[dof] = U8Buf(src).v[so];
    } else {
        if (p.status != 0ul) U1Buf(p.status).v[0] = p.code;   // the run then fails, naming this node
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
        bool ok;
        uint id = load_id(i, ok);
        uint64_t row = p.src + uint64_t(ok ? id : 0u) * uint64_t(p.row_units) * uint64_t(UNIT);
        copy_unit(row, j, o, ok);
    } else {
        uint rem = o, off = 0;
        for (int d = int(RANK) - 1; d >= 0; d--) {
            uint n = p.dims[d];
            uint i = rem % n;
            rem /= n;
            if (uint(d) != p.axis) off += i * p.xs[d];
        }
        bool ok;
        uint id = load_id(o, ok);
        if (ok) off += id * p.xs[p.axis];
        copy_unit(p.src, ok ? off : 0u, o, ok);
    }
}
