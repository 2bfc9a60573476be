// matvec_i8_round_x.glsl — dequant_matvec_i8.comp's x side: x (or
// attention's partials, XCOMB; or x normalized, NORM) rounded to 8-bit blocks
// in shared memory, in the layout of the weight type's units. Included by
// dequant_matvec_i8.comp after its spec constants, push block, shared arrays
// and helpers; not a shader of its own.

// ------------------------------------------------------------ x rounding

// 8 floats of x at flat index e (e % 8 == 0).
void ldx8(uint e, out vec4 a, out vec4 b) {
    if (VEC != 0u) {
        a = I8V4(p.x).v[e >> 2];
        b = I8V4(p.x).v[(e >> 2) + 1u];
    } else {
        a = vec4(F32Buf(p.x).v[e], F32Buf(p.x).v[e + 1u], F32Buf(p.x).v[e + 2u], F32Buf(p.x).v[e + 3u]);
        b = vec4(F32Buf(p.x).v[e + 4u], F32Buf(p.x).v[e + 5u], F32Buf(p.x).v[e + 6u], F32Buf(p.x).v[e + 7u]);
    }
}

// NORM: x row m normalized is x * gamma / rms(row m). The 8-bit rounding of a
// block is invariant to the positive factor 1 / rms (q = round(v * 127 /
// absmax(v)) is the same for v and c * v), so the quants are made from
// x * gamma and 1 / rms only multiplies the block scales: the norm's
// statistic rides along the first pass over x (no extra pass, one reduction).
// XCOMB: x[e .. e + 7] (M = 1; one head, as D % 8 == 0) merged from the
// partials, as attention_combine.comp merges them. The split count is a
// constant, so every load is issued before the first is used (a loop over
// a run-time count waited one L2 latency per split, twice).
layout(buffer_reference, std430, buffer_reference_align = 8) buffer CombML { vec2 v[]; };

void ldx8_comb(uint e, out vec4 a, out vec4 b) {
    const uint NSC = XCOMB >= 2u ? XCOMB : 1u;
    uint H = XK / p.D, h = e / p.D;
    vec2 ml[NSC];
    vec4 pa[NSC], pb[NSC];
    [[unroll]] for (uint s = 0u; s < NSC; s++) {
        ml[s] = CombML(p.off).v[s * H + h];
        uint i4 = (s * XK + e) >> 2;
        pa[s] = I8V4(p.x).v[i4];
        pb[s] = I8V4(p.x).v[i4 + 1u];
    }
    float M = -1.0 / 0.0;
    [[unroll]] for (uint s = 0u; s < NSC; s++) M = max(M, ml[s].x);
    vec4 na = vec4(0.0), nb = vec4(0.0);
    float den = 0.0;
    if (M != -1.0 / 0.0) {
        [[unroll]] for (uint s = 0u; s < NSC; s++) {
            float w = exp2(ml[s].x - M);
            den += w * ml[s].y;
            na += w * pa[s];
            nb += w * pb[s];
        }
    }
    a = den > 0.0 ? na / den : vec4(0.0);
    b = den > 0.0 ? nb / den : vec4(0.0);
}

// ldx8g: 8 floats of x times gamma (plain x without NORM); ss gets their
// squares before gamma (two buckets, sumsq.glsl), for the row's statistic.
void ldx8g(uint e, out vec4 a, out vec4 b, inout vec2 ss) {
    if (XCOMB != 0u) ldx8_comb(e, a, b);
    else ldx8(e, a, b);
    if (NORM != 0u) {
        ss += sumsq8(a, b);
        uint k = e % XK;
        a *= I8V4(p.res).v[k >> 2];
        b *= I8V4(p.res).v[(k >> 2) + 1u];
    }
}

// NORM: the rows' 1 / sqrt(mean of squares + eps) into xinv, from each
// invocation's partial sums (rows of whole 8-chunks: an invocation's chunks
// c, c + 256, ... may span rows, so partials are kept per row).
void norm_stats(vec2 ss[NM]) {
    [[unroll]] for (uint m = 0u; m < NM; m++) ss[m] = subgroupAdd(ss[m]);
    uint i0 = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    vec2 tot = vec2(0.0);
    [[unroll]] for (uint b = 0u; b < 2u; b++) {   // the two buckets in turn through red (no more shared memory)
        if (gl_SubgroupInvocationID == 0u)
            [[unroll]] for (uint m = 0u; m < NM; m++) red[gl_SubgroupID * NM + m] = ss[m][b];
        barrier();
        if (i0 < NM)
            for (uint k = 0u; k < gl_NumSubgroups; k++) tot[b] += red[k * NM + i0];
        barrier();
    }
    if (i0 < NM) xinv[i0] = inv_rms(tot, float(XK), uintBitsToFloat(p.pad0));
    barrier();
}

// Rounds 8 quants of K-quant x (chunk c: flat block blk = c >> 5, chunk
// k = c & 31 of it) with the block's 1 / scale id into xq4 / xs4, in the
// order load_x reads them. Lanes c and c ^ 1 must both be active (Q4_K's
// 16-position sums).
void store_chunk_k(uint c, vec4 a, vec4 b, float id) {
    uvec2 q = uvec2(round4(a, id), round4(b, id));
    int sum = sdot8(q, uvec2(0x01010101u));
    if (K45) sum += subgroupShuffleXor(sum, 1u);   // the unit's 16 positions: chunks k, k ^ 1 (adjacent lanes)
    uint e, half_, s, si;   // xq4 entry and its half, xs4 entry and slot (x_image.glsl)
    chunk_slot(K45, c, e, half_, s, si);
    if (half_ == 0u) xq4[e].xy = q;
    else xq4[e].zw = q;
    if (QT == 18u || half_ == 0u) xs4[s][si] = sum;
}

// Rounds the M rows of x into xq / xd (/ xs). Thread i takes 8-element
// chunks i, i + 256, ...; the i are numbered from the subgroup ids so that
// 4 consecutive chunks (a Q8_0 block) sit in one cluster of 4 lanes and, with
// subgroups of 32 or more, the 32 chunks of a 256-block in one cluster of 32.
// There a K-quant block's absmax is a 32-lane shuffle max and each chunk is
// rounded in the same pass (one read of x). With smaller subgroups the
// absmax gathers in shared memory first (atomicMax, a barrier) and a second
// pass over x rounds. Either way the result is the same: a max is exact.
void round_x() {
    const uint i0 = gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID;
    const uint n8 = NM * XK / 8u, nb = NM * XK / XB;
    const bool one_pass = QT != 13u && gl_SubgroupSize >= 32u;   // uniform
    vec2 ss[NM];   // NORM: sums of squares of x, per row (sumsq.glsl buckets)
    [[unroll]] for (uint m = 0u; m < NM; m++) ss[m] = vec2(0.0);
    if (i0 < NM) xbad[i0] = 0u;
    if (QT != 13u && !one_pass)
        for (uint b = i0; b < nb; b += 256u) xa[b] = 0u;
    barrier();
    // XROT: workgroup w starts at chunk w * XROT (mod n8), so that a grid's
    // workgroups do not all read the same lines of x at once; a rotation by a
    // multiple of 32 chunks keeps every cluster on whole blocks (Q8_0's
    // clusters of 4 too: n8 is then a multiple of 4)
    const uint rot = XROT != 0u ? (gl_WorkGroupID.x * XROT) % n8 : 0u;
    for (uint c0 = i0; c0 < n8; c0 += 256u) {   // n8 % 32 == 0: a cluster is all in or all out
        uint c = c0 + rot >= n8 ? c0 + rot - n8 : c0 + rot;
        vec4 a, b;
        vec2 sc = vec2(0.0);
        ldx8g(8u * c, a, b, sc);
        uint mc = c / (XK / 8u);
        [[unroll]] for (uint m = 0u; m < NM; m++) if (m == mc) ss[m] += sc;
        uint ab = absmax_bits(a, b);   // max over the 4 lanes of the cluster
        ab = max(ab, subgroupShuffleXor(ab, 1u));
        ab = max(ab, subgroupShuffleXor(ab, 2u));
        if (QT == 13u) {   // the cluster holds the whole 32-block
            float id = inv_scale(ab);
            xq2[c] = uvec2(round4(a, id), round4(b, id));
            if ((gl_SubgroupInvocationID & 3u) == 0u) xd[c >> 2] = block_scale(ab);
            if (ab >= 0x7f800000u) xbad[c / (XK / 8u)] = 1u;
        } else if (one_pass) {   // the cluster of 32 holds the whole 256-block
            ab = max(ab, subgroupShuffleXor(ab, 4u));
            ab = max(ab, subgroupShuffleXor(ab, 8u));
            ab = max(ab, subgroupShuffleXor(ab, 16u));
            store_chunk_k(c, a, b, inv_scale(ab));
            if ((c & 31u) == 0u) {
                xd[c >> 5] = block_scale(ab);   // times 1 / rms below (NORM)
                if (ab >= 0x7f800000u) xbad[c / (XK / 8u)] = 1u;
            }
        } else if ((gl_SubgroupInvocationID & 3u) == 0u) {
            atomicMax(xa[(8u * c) / XB], ab);
        }
    }
    if (NORM != 0u) norm_stats(ss);   // barriers: also orders the atomicMax and xd stores above
    if ((QT == 13u || one_pass) && NORM != 0u)
        for (uint b = i0; b < nb; b += 256u) xd[b] *= xinv[b / (XK / XB)];
    if (QT != 13u && !one_pass) {
        barrier();
        for (uint c = i0; c < n8; c += 256u) {
            vec4 a, b;
            vec2 unused = vec2(0.0);
            ldx8g(8u * c, a, b, unused);
            store_chunk_k(c, a, b, inv_scale(xa[c >> 5]));
        }
        for (uint b = i0; b < nb; b += 256u) {
            xd[b] = block_scale(xa[b]) * (NORM != 0u ? xinv[b / (XK / 256u)] : 1.0);
            if (xa[b] >= 0x7f800000u) xbad[b / (XK / 256u)] = 1u;
        }
    }
    barrier();
}

