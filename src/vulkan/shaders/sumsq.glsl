// sumsq.glsl — an RMS statistic that cannot overflow in f32, shared by
// norm.comp and the folded norm of dequant_matvec_i8.comp.
//
// A sum of squares is kept in two buckets: squares of values with
// |v| <= 2^48 as they are (lo), squares of larger ones scaled by 2^-80 first
// (hi, i.e. in units of 2^160). Neither a square nor a sum of 2^32 of them can
// overflow, whatever the finite input (the CPU sums in double; one f32 sum
// overflowed for |v| beyond ~1e19 and the norm gave zeros).

const float SUMSQ_BIG = 281474976710656.0;                     // 2^48
const float SUMSQ_S = 1.0 / 1208925819614629174706176.0;       // 2^-80

// 1 / sqrt(mean square + eps) from the buckets (x: lo, y: hi) of n values,
// without forming the unscaled total.
float inv_rms(vec2 ss, float n, float eps) {
    if (ss.y <= 0.0) return 1.0 / sqrt(ss.x / n + eps);
    precise float lo = (ss.x * SUMSQ_S) * SUMSQ_S;
    precise float m = (ss.y + lo) / n;
    precise float e = (eps * SUMSQ_S) * SUMSQ_S;
    return SUMSQ_S / sqrt(m + e);
}

// The squares of 8 values into one bucket, chosen by their largest
// magnitude (values far below it lose nothing that matters next to it).
vec2 sumsq8(vec4 a, vec4 b) {
    vec4 m4 = max(abs(a), abs(b));
    float m = max(max(m4.x, m4.y), max(m4.z, m4.w));
    if (m <= SUMSQ_BIG) return vec2(dot(a, a) + dot(b, b), 0.0);
    vec4 as = a * SUMSQ_S, bs = b * SUMSQ_S;
    return vec2(0.0, dot(as, as) + dot(bs, bs));
}
