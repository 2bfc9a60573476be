// scatter.comp — SCATTER_ADD_ROWS and SCATTER_ADD: out = base, then src
// added at indexed places, in three modes (spec constant MODE):
//   0  copy: out[o] = base[o], one invocation per element;
//   1  rows: one invocation per column j of a row of `width` elements, adding
//      src[i, j] into out[ids[i], j] for i = 0, 1, ... in order;
//   2  axis (torch.scatter_add): one invocation per position of index with
//      its axis coordinate left out, adding src along the axis in order.
// Each output element is written by one invocation, which adds its
// contributions in index order: the result is deterministic and matches the
// CPU's. Floats compute in f32, f16/bf16 round on each store (as the CPU's
// per-contribution store does). An index outside [0, limit) adds nothing and
// sets the program's status word, so the run fails as on the CPU.
#version 450
#include "ew_common.glsl"
#include "nn_common.glsl"

layout(constant_id = 0) const uint MODE = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint IDS64 = 0;
layout(constant_id = 3) const uint RANK = 1;
layout(constant_id = 4) const uint LOCAL = 256;
layout(local_size_x_id = 4) in;

layout(push_constant, std430) uniform Push {
    uint64_t base, ids, src, dst;
    uint n;          // invocations
    uint width;      // mode 1: elements of a row
    uint count;      // mode 1: ids; mode 2: index length along the axis
    uint limit;      // rows of base (mode 1) / base's size along the axis (mode 2)
    uint axis, code;
    uint idims[8];   // mode 2: index dims
    uint bstr[8];    // mode 2: base element strides
    uint64_t status;
} p;

int load_index(uint i, out bool ok) {
    if (IDS64 != 0) {
        uvec2 w = U2Buf(p.ids).v[i];
        ok = w.y == 0u && w.x < p.limit;
        return int(w.x);
    }
    int v = I32Buf(p.ids).v[i];
    ok = v >= 0 && uint(v) < p.limit;
    return v;
}

void bad_index() {
    if (p.status != 0ul) U1Buf(p.status).v[0] = p.code;
}

void main() {
    uint o = LIN_ID(LOCAL);
    if (o >= p.n) return;
    if (MODE == 0) {
        store_f(p.dst, DT, o, load_f(p.base, DT, o));
    } else if (MODE == 1) {
        for (uint i = 0; i < p.count; i++) {
            bool ok;
            int r = load_index(i, ok);
            if (!ok) { bad_index(); continue; }
            uint at = uint(r) * p.width + o;
            store_f(p.dst, DT, at, load_f(p.dst, DT, at) + load_f(p.src, DT, i * p.width + o));
        }
    } else {
        // o enumerates index positions with the axis dim taken as 1
        uint rem = o, ioff = 0, boff = 0, istride = 1, axis_stride = 1;
        for (int d = int(RANK) - 1; d >= 0; d--) {
            uint n = uint(d) == p.axis ? 1u : p.idims[d];
            uint c = rem % n;
            rem /= n;
            if (uint(d) == p.axis) axis_stride = istride;
            ioff += c * istride;
            boff += c * p.bstr[d];
            istride *= p.idims[d];
        }
        for (uint t = 0; t < p.count; t++) {
            uint ii = ioff + t * axis_stride;
            bool ok;
            int k = load_index(ii, ok);
            if (!ok) { bad_index(); continue; }
            uint at = boff + uint(k) * p.bstr[p.axis];
            store_f(p.dst, DT, at, load_f(p.dst, DT, at) + load_f(p.src, DT, ii));
        }
    }
}
