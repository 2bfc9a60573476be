// rope.comp — rotary position embedding, f32. x [B,H,S,D] viewed as rows of
// D; one invocation per (row, item): items i < R/2 rotate pair i (NEOX: i and
// i + R/2; GPTJ: 2i and 2i + 1), items past that copy the pass-through dims.
// The position offset is read from its buffer at run time.
// KV = 1 (ROPE_KV_WRITE): row (bh, s) is stored at cache row bh * C + pos + s,
// pos read from its device buffer as kv_write.comp does; out-of-range
// positions write nothing (the host checks the range before submitting).
//
// Angles: rope_angle.glsl (double-float frequencies, ~1e-7 rad at any i32
// position), shared with the rope epilogue of dequant_matvec_i8.comp.
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"

layout(constant_id = 0) const uint GPTJ = 0;
layout(constant_id = 1) const uint HAS_OFF = 0;
layout(constant_id = 2) const uint HAS_FF = 0;   // frequency factors (llama3 scaling)
layout(constant_id = 3) const uint KV = 0;       // out_ is a KV cache [B,H,C,D] written at pos

layout(push_constant, std430) uniform Push {
    uint64_t x, off, out_;
    uint n;        // rows * items
    uint items;    // R/2 + (D - R)
    uint S, D, R, half_;
    float q_hi, q_lo, f0_hi, f0_lo;
    uint64_t ff;
    uint64_t pos;  // KV: i32 cache position
    uint C;        // KV: cache capacity
} p;

#include "rope_angle.glsl"   // rope_cos_sin

void rotate(uint row, uint j, uint base, uint obase);

void main() {
    uint64_t lid = linear_id64();
    if (lid >= uint64_t(p.n)) return;
    uint o = uint(lid);
    uint row = o / p.items, j = o - row * p.items;
    uint base = row * p.D, obase = base;
    if (KV != 0) {
        int cp = I32Buf(p.pos).v[0];
        if (cp < 0 || uint(cp) + p.S > p.C) return;
        obase = ((row / p.S) * p.C + uint(cp) + row % p.S) * p.D;
    }
    if (j >= p.half_) {
        uint d = p.R + (j - p.half_);
        F32Buf(p.out_).v[obase + d] = F32Buf(p.x).v[base + d];
    } else {
        rotate(row, j, base, obase);
    }
}

void rotate(uint row, uint j, uint base, uint obase) {
    int pos = int(row % p.S);
    if (HAS_OFF != 0) pos += I32Buf(p.off).v[0];
    vec2 cs = rope_cos_sin(pos, j, vec2(p.q_hi, p.q_lo), vec2(p.f0_hi, p.f0_lo), HAS_FF != 0 ? F32Buf(p.ff).v[j] : 1.0,
                           HAS_FF != 0);
    uint a0 = GPTJ != 0 ? 2u * j : j;
    uint a1 = GPTJ != 0 ? a0 + 1u : j + p.half_;
    float x0 = F32Buf(p.x).v[base + a0], x1 = F32Buf(p.x).v[base + a1];
    F32Buf(p.out_).v[obase + a0] = x0 * cs.x - x1 * cs.y;
    F32Buf(p.out_).v[obase + a1] = x0 * cs.y + x1 * cs.x;
}
