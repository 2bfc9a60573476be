// x_image.glsl — the rounded-x image that one decode matvec hands to the
// next (dequant_matvec_i8.comp, spec constants XIN and XOUT; planned by
// vk_backend_plan_x_images in vk_program.c, after the memory plan).
//
// Why: without an image every workgroup of an i8 matvec rounds all of x into
// shared memory before its first weight load (round_x): a read of K floats from L2,
// a block absmax across 32 lanes, the rounding, and for K = 14336 seven
// dependent trips to L2. A decode step's matvecs mostly read the output of
// the matvec before them, so that matvec can round its output once, as its
// last workgroups finish, and the next one's workgroups copy the result
// (~1.6 bytes per x value instead of 4, no arithmetic) straight into shared
// memory. Measured on the H200 (bench/HISTORY.md, 2026-11-30, x images, first build): the
// consumers' side alone (a timing ablation) -13% device time per 8B Q4_K_M
// token, -12% for 1B; producers rounding their blocks +2.4% / +2.7%; whole
// builds -2.9% / +2%, so images are made where they pay (vk_program.c,
// image_pays). Q8_0 consumers (family 3) are not planned: on the H200 8B
// Q8_0 decode was 15% slower with them (bench/HISTORY.md, 2026-11-30).
//
// The image of x[K] (one row, K % 256 == 0), in bytes:
//   [0, K)                  xq4 as the consumer lays it out in shared memory
//                           (K / 16 uvec4; K45 or Q6_K order, store_chunk_k);
//                           for a Q8_0 consumer (family 3) xq2 (chunk c of 8
//                           quants at 8c)
//   [K, K + K/2)            xs4 likewise (K / 32 ivec4); Q8_0: the absmax bits
//                           of each 32-block (K / 32 uints), the rest unused
//   [K + K/2, K + K/2 + K/16) per 256-block: absmax bits of the block (of
//                           x * gamma when the consumer folds a norm), and
//                           the sum of squares of x (before gamma) as the two
//                           buckets of sumsq.glsl; 16 bytes
// The producer's completion counter per 256-block of its output is at
// p.pos + p.C, in a region of the slot that no image overlaps; it is zero
// between dispatches (the completing workgroup resets it).
//
// The quants and block scales are exactly those round_x makes from the same
// x (same formula, same inputs); only the norm's sum of squares is summed in
// another order.
//
// Without RLX_XIMAGE only chunk_slot is compiled. With it, the
// including shader declares before including this: common.glsl,
// int8_dot.glsl, sumsq.glsl, the spec constants XK, NORM, XOUT, the push
// block p (x, out_, N, pad0 = eps bits, pos = image out, ff = gamma, C =
// counters' offset), the
// shared xq4, xs4, xd, xbad, and I8U4 / I8V4 references, and enables the
// subgroup basic extension.

// Where rounded chunk c of x (8 quants; flat 256-block c >> 5, chunk k =
// c & 31 of it) goes in a K45 (Q4_K / Q5_K) or Q6_K consumer's layout:
// xq4 entry e, its half (.xy or .zw), and the sum's xs4 entry s, slot si.
//   K45: chunk k is sub-block k >> 2, positions 8 (k & 3)..; unit
//        u = 2 (sb >> 1) + ((k >> 1) & 1); a (part 0) or b (part 1) by sb & 1;
//        the sum is over the unit's 16 positions (chunks k and k ^ 1).
//   Q6_K: chunk k is half k >> 4, group (k >> 2) & 3, positions 8 (k & 3)..;
//        unit u = 4 (k >> 4) + (k & 3); part g >> 1, half g & 1, slot g.
void chunk_slot(bool k45, uint c, out uint e, out uint half_, out uint s, out uint si) {
    uint blk = c >> 5, k = c & 31u, u, part;
    if (k45) {
        uint sb = k >> 2;
        u = 2u * (sb >> 1) + ((k >> 1) & 1u);
        part = sb & 1u;
        half_ = k & 1u;
        si = part;
    } else {
        uint g = (k >> 2) & 3u;
        u = 4u * (k >> 4) + (k & 3u);
        part = g >> 1;
        half_ = g & 1u;
        si = g;
    }
    e = 16u * blk + 8u * part + u;
    s = 8u * blk + u;
}

#ifdef RLX_XIMAGE   // the rest: only in the "dequant_matvec_i8_xim" build

layout(buffer_reference, std430, buffer_reference_align = 16) buffer XimStats { uvec4 v[]; };
// The producer's output, stored (store_row) and read back by the workgroup
// completing a block through coherent references: the GLSL memory model
// makes only coherent stores visible to other invocations after the
// fence, and a read must not come from a stale line of this SM's L1.
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer XimOut { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer XimOutF { float v[]; };

// ------------------------------------------------------------ consumer (XIN)

// The 256-blocks' statistics at sa into xd (scales times 1 / rms with
// NORM; Q8_0: the 32-block scales already in xd) and xbad; one subgroup.
void image_stats(uint64_t sa, uint nb, bool q8) {
    vec2 ss = vec2(0.0);
    bool bad = false;
    for (uint b = gl_SubgroupInvocationID; b < nb; b += gl_SubgroupSize) {
        uvec4 st = XimStats(sa).v[b];
        if (!q8) xd[b] = block_scale(st.x);
        ss += uintBitsToFloat(st.yz);
        bad = bad || st.x >= 0x7f800000u;
    }
    bad = subgroupOr(bad ? 1u : 0u) != 0u;   // (arithmetic subgroups are required; vote is not)
    if (NORM != 0u) {
        float inv = inv_rms(subgroupAdd(ss), float(XK), uintBitsToFloat(p.pad0));
        const uint nxd = q8 ? 8u * nb : nb;
        for (uint b = gl_SubgroupInvocationID; b < nxd; b += gl_SubgroupSize) xd[b] *= inv;
    }
    if (gl_SubgroupInvocationID == 0u) xbad[0] = bad ? 1u : 0u;
}

// load_image for a Q8_0 consumer: K / 16 uvec4 of quants (two chunks each)
// into xq2, the K / 32 block scales into xd, then the statistics.
void load_image_q8_0() {
    const uint tid = gl_LocalInvocationIndex;
    const uint nq = XK / 16u, ns = XK / 32u, nb = XK / 256u;
    const uint LQ = (nq + 255u) / 256u, LS = (ns + 255u) / 256u;
    uvec4 vq[LQ];
    uint va[LS];
    [[unroll]] for (uint k = 0u; k < LQ; k++)
        if (tid + 256u * k < nq) vq[k] = I8U4(p.x).v[tid + 256u * k];
    [[unroll]] for (uint k = 0u; k < LS; k++)
        if (tid + 256u * k < ns) va[k] = U32Buf(p.x).v[4u * nq + tid + 256u * k];
    [[unroll]] for (uint k = 0u; k < LQ; k++)
        if (tid + 256u * k < nq) {
            xq2[2u * (tid + 256u * k)] = vq[k].xy;
            xq2[2u * (tid + 256u * k) + 1u] = vq[k].zw;
        }
    [[unroll]] for (uint k = 0u; k < LS; k++)
        if (tid + 256u * k < ns) xd[tid + 256u * k] = block_scale(va[k]);
    barrier();   // the scales, before the statistics scale them
    if (gl_SubgroupID == 0u) image_stats(p.x + uint64_t(16u * nq + 16u * ns), nb, true);
    barrier();
}

// Copies the image at p.x into shared memory in place of round_x (M = 1):
// every lane's loads are issued before any is stored. The block scales come
// from the absmax bits, times 1 / rms with NORM; a non-finite block flags
// the row (xbad) as round_x does.
void load_image() {
    const uint tid = gl_LocalInvocationIndex;
    const uint nq = XK / 16u, ns = XK / 32u, nb = XK / 256u;
    if (QT == 13u) {   // Q8_0: quants in chunk order, then each 32-block's absmax bits
        load_image_q8_0();
        return;
    }
    const uint LQ = (nq + 255u) / 256u, LS = (ns + 255u) / 256u;
    uvec4 vq[LQ], vs[LS];
    [[unroll]] for (uint k = 0u; k < LQ; k++)
        if (tid + 256u * k < nq) vq[k] = I8U4(p.x).v[tid + 256u * k];
    [[unroll]] for (uint k = 0u; k < LS; k++)
        if (tid + 256u * k < ns) vs[k] = I8U4(p.x).v[nq + tid + 256u * k];
    if (gl_SubgroupID == 0u) image_stats(p.x + uint64_t(16u * (nq + ns)), nb, false);   // one subgroup
    [[unroll]] for (uint k = 0u; k < LQ; k++)
        if (tid + 256u * k < nq) xq4[tid + 256u * k] = vq[k];
    [[unroll]] for (uint k = 0u; k < LS; k++)
        if (tid + 256u * k < ns) xs4[tid + 256u * k] = ivec4(vs[k]);
    barrier();
}

// ------------------------------------------------------------ producer (XOUT)

// Sized 1 unless XOUT: on the H200 even ~0.5 KB more shared memory made
// other specializations (Q8_0, no image) ~4% slower.
const uint XO_N = XOUT != 0u ? 32u : 1u;
shared uint xo_ab[XO_N];    // per chunk: absmax bits; [0] first: this workgroup completed the block
shared int xo_sum[XO_N];    // per chunk: sum of its 8 quants
shared vec2 xo_ss[XO_N];    // per chunk: sum of squares (sumsq.glsl buckets)

// After workgroup-uniform tile `tile` (rows_per_tile consecutive output rows,
// dividing 256) is stored: the workgroup that completes a 256-row block
// rounds it into the image at p.pos, in the layout of a K45 (XOUT 1), Q6_K
// (XOUT 2) or Q8_0 (XOUT 3: 32-blocks, each scaled by its own absmax)
// consumer, times the gamma at p.ff (0: none). Lanes 0..31
// take a chunk of 8 each; the reductions go through shared memory, so any
// subgroup size works. M = 1.
void image_tile_done(uint tile, uint rows_per_tile) {
    const uint need = 256u / rows_per_tile, blk = tile / need;
    const uint tid = gl_LocalInvocationIndex;
    const uint ib = p.N + p.N / 2u;   // byte offset of the statistics
    const uint64_t cnt = p.pos + uint64_t(p.C);
    memoryBarrierBuffer();   // this invocation's stored rows, before the count
    barrier();
    if (tid == 0u) {
        uint done = atomicAdd(U32Buf(cnt).v[blk], 1u) + 1u;
        xo_ab[0] = done == need ? 1u : 0u;
        if (done == need) atomicExchange(U32Buf(cnt).v[blk], 0u);   // zero for the next run
    }
    barrier();
    if (xo_ab[0] == 0u) return;   // workgroup-uniform
    barrier();                    // everyone has read it
    memoryBarrierBuffer();
    vec4 a = vec4(0.0), b = vec4(0.0);
    if (tid < 32u) {
        uint e4 = (256u * blk + 8u * tid) >> 2;
        a = XimOut(p.out_).v[e4];
        b = XimOut(p.out_).v[e4 + 1u];
        xo_ss[tid] = sumsq8(a, b);
        if (p.ff != 0ul) {
            a *= I8V4(p.ff).v[e4];
            b *= I8V4(p.ff).v[e4 + 1u];
        }
        xo_ab[tid] = absmax_bits(a, b);
    }
    barrier();
    uint ab = 0u;
    uvec2 q = uvec2(0u);
    if (tid < 32u) {
        for (uint k = 0u; k < 32u; k++) ab = max(ab, xo_ab[k]);
        if (XOUT == 3u) {   // the chunk's 32-block: chunks 4 (tid >> 2) ..
            uint a32 = max(max(xo_ab[tid & ~3u], xo_ab[(tid & ~3u) + 1u]), max(xo_ab[(tid & ~3u) + 2u], xo_ab[(tid & ~3u) + 3u]));
            float id = inv_scale(a32);
            q = uvec2(round4(a, id), round4(b, id));
            U32Buf(p.pos).v[2u * (32u * blk + tid)] = q.x;
            U32Buf(p.pos).v[2u * (32u * blk + tid) + 1u] = q.y;
            if ((tid & 3u) == 0u) U32Buf(p.pos).v[p.N / 4u + 8u * blk + (tid >> 2)] = a32;
        } else {
            float id = inv_scale(ab);
            q = uvec2(round4(a, id), round4(b, id));
            xo_sum[tid] = sdot8(q, uvec2(0x01010101u));
        }
    }
    barrier();
    if (tid < 32u && XOUT != 3u) {   // the K-quant layouts (Q8_0 stored its quants above)
        uint e, half_, s, si;
        chunk_slot(XOUT == 1u, 32u * blk + tid, e, half_, s, si);
        U32Buf(p.pos).v[4u * e + 2u * half_] = q.x;
        U32Buf(p.pos).v[4u * e + 2u * half_ + 1u] = q.y;
        int sum = xo_sum[tid] + (XOUT == 1u ? xo_sum[tid ^ 1u] : 0);
        if (XOUT == 2u || half_ == 0u) I32Buf(p.pos).v[p.N / 4u + 4u * s + si] = sum;
    }
    if (tid == 0u) {   // the block's statistics, every layout
        vec2 ss = vec2(0.0);
        for (uint k = 0u; k < 32u; k++) ss += xo_ss[k];
        XimStats(p.pos + uint64_t(ib)).v[blk] = uvec4(ab, floatBitsToUint(ss), 0u);
    }
}
#endif   // RLX_XIMAGE
