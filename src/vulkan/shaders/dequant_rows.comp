// dequant_rows.comp — the quantized gather_rows: decodes rows of a [rows, K]
// table of a GGUF block type to f32, out[i, :] = decode(table[id(i), :]),
// with ids i32 (IDS 1) or i64 (IDS 2). An id outside [0, limit) yields a row
// of zeros, like gather.comp, and sets the program's status word so the run
// fails naming the node, as on the CPU.
// One invocation per 32-element part (quant_blocks.glsl), four runs of 8
// floats stored as vec4 when VEC proved the output 16-byte aligned.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"
#include "quant_blocks.glsl"

layout(constant_id = 0) const uint QT = 16;    // rlx dtype of the table
layout(constant_id = 1) const uint IDS = 1;    // 1 i32, 2 i64
layout(constant_id = 2) const uint A4 = 0;     // 32-bit loads at 4-aligned block offsets
layout(constant_id = 3) const uint VEC = 0;    // output 16-byte aligned

layout(push_constant, std430) uniform Push {
    uint64_t src, ids, dst;
    uint n;           // invocations: parts
    uint K;           // elements per row
    uint row_bytes;   // bytes per table row
    uint limit;       // rows of the table
    uint64_t status;  // the program's status word (0: none)
    uint code, pad;   // written to status when an id is out of range
} p;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer DrV4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer DrU2 { uvec2 v[]; };

// Table row of output row i, ok = false when its id is out of range.
uint row_of(uint i, out bool ok) {
    if (IDS == 2u) {
        uvec2 w = DrU2(p.ids).v[i];
        ok = w.y == 0u && w.x < p.limit;
        return w.x;
    }
    int v = I32Buf(p.ids).v[i];
    ok = v >= 0 && uint(v) < p.limit;
    return uint(v);
}

void main() {
    uint o = linear_id();
    if (o >= p.n) return;
    uint ppr = p.K / 32u;   // parts per row
    uint i = o / ppr, pr = o - i * ppr;
    const uint ppb = qb_parts_per_block(QT);
    uint blk = pr / ppb, part = pr - blk * ppb;
    bool ok;
    uint id = row_of(i, ok);
    float v[32];
    uint off[4];
    if (ok) {
        qb_decode(QT, A4 != 0u, p.src + uint64_t(id) * uint64_t(p.row_bytes), blk, p.K, part, v, off);
    } else {
        if (p.status != 0ul) U32Buf(p.status).v[0] = p.code;   // the run then fails, naming this node
        [[unroll]] for (uint j = 0u; j < 32u; j++) v[j] = 0.0;
        uint base = part * 32u;   // any partition of the block into parts will do for zeros
        off[0] = base; off[1] = base + 8u; off[2] = base + 16u; off[3] = base + 24u;
    }
    uint64_t orow = uint64_t(i) * uint64_t(p.K) + uint64_t(blk * qb_block_elems(QT));
    [[unroll]] for (uint g = 0u; g < 4u; g++) {
        uint64_t e = orow + uint64_t(off[g]);
        if (VEC != 0u) {
            DrV4 d = DrV4(p.dst + e * 4ul);
            d.v[0] = vec4(v[8u * g], v[8u * g + 1u], v[8u * g + 2u], v[8u * g + 3u]);
            d.v[1] = vec4(v[8u * g + 4u], v[8u * g + 5u], v[8u * g + 6u], v[8u * g + 7u]);
        } else {
            [[unroll]] for (uint j = 0u; j < 8u; j++) F32Buf(p.dst).v[uint(e) + j] = v[8u * g + j];
        }
    }
}
