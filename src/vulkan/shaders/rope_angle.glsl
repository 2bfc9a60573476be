// rope_angle.glsl — cos and sin of a rotary-embedding angle, shared by
// rope.comp and the matvec epilogue of dequant_matvec_i8.comp.
//
// The CPU forms pos * theta^(-2j/R) in double. Here the frequency in turns,
// f_j = q^j / (2 pi) with q = theta^(-2/R), is built in double-float
// arithmetic (q and 1/(2 pi) come as hi/lo float pairs), and pos * f_j is
// reduced to a fraction of a turn with error-free products (Dekker), so the
// angle is accurate to ~1e-7 rad at any i32 position; sin/cos then see
// arguments in [-pi, pi].

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

// (cos, sin) of pair j's angle at position pos: q = theta^(-2/R) and
// f0 = 1 / (2 pi) as hi/lo pairs; ffj the pair's frequency factor (llama3
// scaling) when has_ff.
vec2 rope_cos_sin(int pos, uint j, vec2 q, vec2 f0, float ffj, bool has_ff) {
    // f = q^j / (2 pi) in double-float
    vec2 r = vec2(1.0, 0.0), b = q;
    for (uint k = j; k != 0u; k >>= 1) {
        if ((k & 1u) != 0u) r = df_mul(r, b);
        b = df_mul(b, b);
    }
    vec2 f = df_mul(r, f0);
    if (has_ff) {   // divide by the factor in double-float: 1/ff as hi + lo
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
    return vec2(cos(ang), sin(ang));
}
