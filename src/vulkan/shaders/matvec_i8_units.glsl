// matvec_i8_units.glsl — dequant_matvec_i8.comp's weight side: one unit
// (16 or 32 weights of a row) against x's rounded quants, per weight type,
// and the unit pairs (PAIR). Included by dequant_matvec_i8.comp after
// matvec_i8_round_x.glsl; not a shader of its own.

// ------------------------------------------------------------ units

// The x side of unit r for x row m: up to 32 quants (a, b), the sums the
// weights' offset terms need (s), the block scale (d).
struct xu_t { uvec4 a, b; ivec4 s; float d; };

xu_t load_x(uint m, uint r) {
    xu_t o;
    o.a = uvec4(0u);
    o.b = uvec4(0u);
    o.s = ivec4(0);
    if (QT == 13u) {
        uint c = m * (XK / 8u) + 2u * r;
        o.a = uvec4(xq2[c], xq2[c + 1u]);
        o.d = xd[m * (XK / 32u) + (r >> 1)];
    } else {   // the layout above
        uint b = m * (XK / 256u) + (r >> 3), u = r & 7u;
        o.a = xq4[16u * b + u];
        o.b = xq4[16u * b + 8u + u];
        o.s = xs4[8u * b + u];
        o.d = xd[b];
    }
    return o;
}

// The 6-bit scales and mins of sub-blocks 2j and 2j + 1 from a Q4_K / Q5_K
// header h (d, dmin, then scales[12] as words): bytes 2(j & 1) and
// 2(j & 1) + 1 of the scale words (k4_scale_min in quant_k.c).
// (scale 2j, scale 2j + 1, min 2j, min 2j + 1).
ivec4 k45_scale_min(uvec4 h, uint j) {
    uint sh = 16u * (j & 1u);
    uint lo = (h.y >> sh) & 0xffffu, mid = (h.z >> sh) & 0xffffu, hi = (h.w >> sh) & 0xffffu;
    uint scp = j < 2u ? lo & 0x3f3fu : (hi & 0x0f0fu) | ((lo >> 2) & 0x3030u);
    uint mnp = j < 2u ? mid & 0x3f3fu : ((hi >> 4) & 0x0f0fu) | ((mid >> 2) & 0x3030u);
    return ivec4(int(scp & 0xffu), int(scp >> 8), int(mnp & 0xffu), int(mnp >> 8));
}

// acc[m] += (unit r of the row at `row`) · (x row m's unit), for every m;
// nothing is added when !live (a select: inf or NaN in a clamped unit stays out).
void unit_dot(uint64_t row, uint r, xu_t x[NM], bool live, inout float acc[NM]) {
    if (QT == 13u) {   // Q8_0 (planar): quants 16r.., the block's scale after the row's quants
        float dw = wf16(row, pl_field(QT, p.K, 1u, r >> 1));
        uvec4 q = wbytes16a(row, 16u * r);
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            float v = dw * x[m].d * float(sdot16(q, x[m].a));
            acc[m] += live ? v : 0.0;
        }
    } else if (K45) {   // Q4_K: 144-byte blocks [d, dmin f16][scales 12][qs 128]; weight = d*sc*q - dmin*m
                        // Q5_K: 176-byte blocks [d, dmin][scales 12][qh 32][qs 128]; q += 16 * (bit s of qh[l])
        uint base = (r >> 3) * (QT == 17u ? 176u : 144u), j = (r >> 1) & 3u;
        uvec4 h = wbytes16(row, base);   // d, dmin, then scales[12] as words (k4_scale_min in quant_k.c)
        uvec4 qw = wbytes16(row, base + (QT == 17u ? 48u : 16u) + 16u * (r & 7u));
        vec2 dm = unpackHalf2x16(h.x);
        ivec4 sm = k45_scale_min(h, j);
        int sc0 = sm.x, sc1 = sm.y, mn0 = sm.z, mn1 = sm.w;
        uvec4 q0 = qw & 0x0f0f0f0fu, q1 = (qw >> 4) & 0x0f0f0f0fu;
        if (QT == 17u) {   // the 5th bits: positions 16h.. of qh, bits 2j (sub-block 2j) and 2j + 1
            uvec4 hb = wbytes16(row, base + 16u + 16u * (r & 1u));
            q0 |= ((hb >> (2u * j)) & 0x01010101u) << 4;
            q1 |= ((hb >> (2u * j + 1u)) & 0x01010101u) << 4;
        }
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            int isum = sc0 * sdot16(q0, x[m].a) + sc1 * sdot16(q1, x[m].b);
            int msum = mn0 * x[m].s.x + mn1 * x[m].s.y;
            float v = x[m].d * (dm.x * float(isum) - dm.y * float(msum));
            acc[m] += live ? v : 0.0;
        }
    } else {   // Q6_K (planar): per block ql 128, qh 64, scales 16 x int8, d f16; weight = d*sc*(q - 32)
        uint b = r >> 3, hh = (r >> 2) & 1u, l = 8u * (r & 3u);
        uint ql = pl_field(QT, p.K, 0u, b) + 64u * hh + l;
        uvec2 la = wbytes8a(row, ql);                                      // groups 0 (low nibbles) and 2 (high)
        uvec2 lb = wbytes8a(row, ql + 32u);                                // groups 1 and 3
        uvec2 qh = wbytes8a(row, pl_field(QT, p.K, 1u, b) + 32u * hh + l); // bits 2g, 2g + 1: group g's q bits 4, 5
        uvec2 sw = wbytes8a(row, pl_field(QT, p.K, 2u, b) + 8u * hh);      // scales 8hh .. 8hh + 7; group g's: (l >> 4) + 2g
        float d = wf16(row, pl_field(QT, p.K, 3u, b));
        const uvec2 M4 = uvec2(0x0f0f0f0fu), M30 = uvec2(0x30303030u);
        uvec2 q0 = (la & M4) | ((qh << 4) & M30), q1 = (lb & M4) | ((qh << 2) & M30);
        uvec2 q2 = ((la >> 4) & M4) | (qh & M30), q3 = ((lb >> 4) & M4) | ((qh >> 2) & M30);
        int o = int(8u * (l >> 4));
        int sc0 = bitfieldExtract(int(sw.x), o, 8), sc1 = bitfieldExtract(int(sw.x), o + 16, 8);
        int sc2 = bitfieldExtract(int(sw.y), o, 8), sc3 = bitfieldExtract(int(sw.y), o + 16, 8);
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            int isum = sc0 * (sdot8(q0, x[m].a.xy) - 32 * x[m].s.x) + sc1 * (sdot8(q1, x[m].a.zw) - 32 * x[m].s.y) +
                       sc2 * (sdot8(q2, x[m].b.xy) - 32 * x[m].s.z) + sc3 * (sdot8(q3, x[m].b.zw) - 32 * x[m].s.w);
            float v = x[m].d * d * float(isum);
            acc[m] += live ? v : 0.0;
        }
    }
}

// PAIR, Q6_K (planar): units r and r + 1 (r even: positions l.. and l + 8..
// of the four 32-groups of half hh, l = 0 or 16) share their group scales
// and d; their ql, ql + 32 and qh bytes are 16 contiguous bytes each.
void unit_pair_dot_q6k(uint64_t row, uint r, bool live, inout float acc[NM]) {
    uint b = r >> 3, hh = (r >> 2) & 1u, l = 8u * (r & 3u);
    uint ql = pl_field(QT, p.K, 0u, b) + 64u * hh + l;
    uvec4 la = wbytes16a(row, ql), lb = wbytes16a(row, ql + 32u);
    uvec4 qh = wbytes16a(row, pl_field(QT, p.K, 1u, b) + 32u * hh + l);
    uvec2 sw = wbytes8a(row, pl_field(QT, p.K, 2u, b) + 8u * hh);
    float d = wf16(row, pl_field(QT, p.K, 3u, b));
    int o = int(8u * (l >> 4));
    int sc0 = bitfieldExtract(int(sw.x), o, 8), sc1 = bitfieldExtract(int(sw.x), o + 16, 8);
    int sc2 = bitfieldExtract(int(sw.y), o, 8), sc3 = bitfieldExtract(int(sw.y), o + 16, 8);
    const uvec4 M4 = uvec4(0x0f0f0f0fu), M30 = uvec4(0x30303030u);
    uvec4 q0 = (la & M4) | ((qh << 4) & M30), q1 = (lb & M4) | ((qh << 2) & M30);
    uvec4 q2 = ((la >> 4) & M4) | (qh & M30), q3 = ((lb >> 4) & M4) | ((qh >> 2) & M30);
    [[unroll]] for (uint m = 0u; m < NM; m++) {
        xu_t xa = load_x(m, r), xb = load_x(m, r + 1u);
        int isum = sc0 * (sdot8(q0.xy, xa.a.xy) + sdot8(q0.zw, xb.a.xy) - 32 * (xa.s.x + xb.s.x)) +
                   sc1 * (sdot8(q1.xy, xa.a.zw) + sdot8(q1.zw, xb.a.zw) - 32 * (xa.s.y + xb.s.y)) +
                   sc2 * (sdot8(q2.xy, xa.b.xy) + sdot8(q2.zw, xb.b.xy) - 32 * (xa.s.z + xb.s.z)) +
                   sc3 * (sdot8(q3.xy, xa.b.zw) + sdot8(q3.zw, xb.b.zw) - 32 * (xa.s.w + xb.s.w));
        float v = xa.d * d * float(isum);
        acc[m] += live ? v : 0.0;
    }
}

// PAIR (K45): acc[m] += units r and r + 1 (r even: positions 0.. and 16.. of
// sub-blocks 2j and 2j + 1) of the row at `row` · x row m's units; the block
// header is loaded and its two scales and mins extracted once for both.
void unit_pair_dot(uint64_t row, uint r, bool live, inout float acc[NM]) {
    if (QT == 18u) {
        unit_pair_dot_q6k(row, r, live, acc);
        return;
    }
    if (QT == 13u) {   // Q8_0 (planar): units r and r + 1 are one block: its 32 quants, one scale
        float dw = wf16(row, pl_field(QT, p.K, 1u, r >> 1));
        uvec4 qa = wbytes16a(row, 16u * r), qb = wbytes16a(row, 16u * r + 16u);
        [[unroll]] for (uint m = 0u; m < NM; m++) {
            xu_t xa = load_x(m, r), xb = load_x(m, r + 1u);
            float v = dw * xa.d * float(sdot16(qa, xa.a) + sdot16(qb, xb.a));
            acc[m] += live ? v : 0.0;
        }
        return;
    }
    uint base = (r >> 3) * (QT == 17u ? 176u : 144u), j = (r >> 1) & 3u;
    uvec4 h = wbytes16(row, base);
    uint qoff = base + (QT == 17u ? 48u : 16u) + 16u * (r & 7u);
    uvec4 qa = wbytes16(row, qoff), qb = wbytes16(row, qoff + 16u);
    vec2 dm = unpackHalf2x16(h.x);
    ivec4 sm = k45_scale_min(h, j);
    int sc0 = sm.x, sc1 = sm.y, mn0 = sm.z, mn1 = sm.w;
    uvec4 a0 = qa & 0x0f0f0f0fu, a1 = (qa >> 4) & 0x0f0f0f0fu, b0 = qb & 0x0f0f0f0fu, b1 = (qb >> 4) & 0x0f0f0f0fu;
    if (QT == 17u) {   // the 5th bits: positions 0.. and 16.. of qh, bits 2j and 2j + 1
        uvec4 ha = wbytes16(row, base + 16u), hb = wbytes16(row, base + 32u);
        a0 |= ((ha >> (2u * j)) & 0x01010101u) << 4;
        a1 |= ((ha >> (2u * j + 1u)) & 0x01010101u) << 4;
        b0 |= ((hb >> (2u * j)) & 0x01010101u) << 4;
        b1 |= ((hb >> (2u * j + 1u)) & 0x01010101u) << 4;
    }
    [[unroll]] for (uint m = 0u; m < NM; m++) {
        xu_t xa = load_x(m, r), xb = load_x(m, r + 1u);
        int isum = sc0 * (sdot16(a0, xa.a) + sdot16(b0, xb.a)) + sc1 * (sdot16(a1, xa.b) + sdot16(b1, xb.b));
        int msum = mn0 * (xa.s.x + xb.s.x) + mn1 * (xa.s.y + xb.s.y);
        float v = xa.d * (dm.x * float(isum) - dm.y * float(msum));
        acc[m] += live ? v : 0.0;
    }
}

