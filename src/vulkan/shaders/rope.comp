// rope.comp — rotary position embedding, f32. x [B,H,S,D] viewed as rows of
// D; one invocation per (row, item): items i < R/2 rotate pair i (NEOX: i and
// i + R/2; GPTJ: 2i and 2i + 1), items past that copy the pass-through dims.
// The position offset is read from its buffer at run time.
// KV = 1 (ROPE_KV_WRITE): row (bh, s) is stored at cache row bh * C + pos + s,
// pos read from its device buffer as kv_write.comp does; out-of-range
// positions write nothing (the host checks the range before submitting).
//
// Angles: the CPU forms pos * theta^(-2i/R) in double. Here the frequency in
// turns, f_i = q^i / (2 pi) with q = theta^(-2/R), is built in double-float
// arithmetic (q and 1/(2 pi) come as hi/lo float pairs), and pos * f_i is
// reduced to a fraction of a turn with error-free products (Dekker), so the
// angle is accurate to ~1e-7 rad at any i32 position; sin/cos then see
// arguments in [-pi, pi].
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

// a * b = hi + lo exactly (Dekker; no fma needed, contraction forbidden)
void two_prod(float a, float b, out float hi, out float lo) {
    precise float ca = 4097.0 * a;
    precise float ah = ca - (ca - a);
    precise float al = a - ah;
    precise float cb = 4097.0 * b;
    precise float bh = cb - (cb - b);
    precise float bl = b - bh;
    precise float pr = a * b;
    precise float e = ((ah * bh - pr) + ah * bl + al * bh) + al * bl;
    hi = pr;
    lo = e;
}

vec2 df_mul(vec2 a, vec2 b) {
    float ph, pl;
    two_prod(a.x, b.x, ph, pl);
    precise float e = pl + (a.x * b.y + a.y * b.x);
    precise float s = ph + e;
    precise float err = e - (s - ph);
    return vec2(s, err);
}

// fractional part (in turns, about [-0.5, 0.5]) of a * f for an integer-valued a
float frac_turns(float a, vec2 f) {
    float ph, pl;
    two_prod(a, f.x, ph, pl);
    precise float fr = ph - round(ph);          // exact
    precise float t = fr + (pl + a * f.y);
    return t;
}

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

    // f = q^j / (2 pi) in double-float
    vec2 r = vec2(1.0, 0.0), b = vec2(p.q_hi, p.q_lo);
    for (uint k = j; k != 0u; k >>= 1) {
        if ((k & 1u) != 0u) r = df_mul(r, b);
        b = df_mul(b, b);
    }
    vec2 f = df_mul(r, vec2(p.f0_hi, p.f0_lo));
    if (HAS_FF != 0) {   // divide by the factor in double-float: 1/ff as hi + lo
        float ffj = F32Buf(p.ff).v[j];
        float inv_hi = 1.0 / ffj, ph, pl;
        two_prod(inv_hi, ffj, ph, pl);
        precise float resid = (1.0 - ph) - pl;
        f = df_mul(f, vec2(inv_hi, resid / ffj));
    }

    // pos = ph * 65536 + pl, both exact in float
    int ph = pos >> 16, pl = pos & 0xffff;
    // 65536 f reduced mod 1 (exact scaling; the integer part is whole turns)
    precise float gh = f.x * 65536.0;
    precise float gf = gh - round(gh);
    precise float gl = f.y * 65536.0;
    precise float g_s = gf + gl;
    precise float g_e = gl - (g_s - gf);
    float t = frac_turns(float(ph), vec2(g_s, g_e)) + frac_turns(float(pl), f);
    t -= round(t);
    float ang = t * 6.2831853071795865;
    float cs = cos(ang), sn = sin(ang);

    uint a0 = GPTJ != 0 ? 2u * j : j;
    uint a1 = GPTJ != 0 ? a0 + 1u : j + p.half_;
    float x0 = F32Buf(p.x).v[base + a0], x1 = F32Buf(p.x).v[base + a1];
    F32Buf(p.out_).v[obase + a0] = x0 * cs - x1 * sn;
    F32Buf(p.out_).v[obase + a1] = x0 * sn + x1 * cs;
}
