// dequant_mm_common.glsl — shared by dequant_mm.comp (f32 FMA) and
// dequant_mm_coopmat.comp (tensor cores), the prefill tiers of
// DEQUANT_MATMUL: out[M, N] = x[M, K] · w[N, K]ᵀ with w in its storage type,
// decoded tile by tile into shared memory (scratch only for split-K partials).
//
// K is walked in "parts" of 32 elements, the unit quant_blocks.glsl decodes.
// A dot product may sum its terms in any order, so a K step need not be 32
// consecutive k: part q of every weight row covers the same four runs of 8
// contiguous k (part_k below), and x is loaded at exactly those k. For block
// types there are K / 32 parts per row (block by block, part by part); for
// f32/f16/bf16 rows, part q is k = 32q .. 32q + 32, zeros past K.
//
// Include after common.glsl and quant_blocks.glsl, and after the shader
// declares QT (rlx dtype of w), A4 (4-aligned block loads) and VEC.

layout(push_constant, std430) uniform DqmmPush {
    uint64_t x;        // [M, K] f32
    uint64_t w;        // [N, K] in QT
    uint64_t out_;     // [M, N] f32
    uint M, N, K;
    uint row_bytes;    // bytes of one row of w
    uint parts;        // parts per row: K / 32 (block types) or ceil(K / 32)
    uint tiles_m;      // row tiles (the y grid may be smaller and loop)
    uint kparts;       // split-K: parts per split (parts: one split); see dqmm_parts
    uint pad1;
} p;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer DqmmV4 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer DqmmU2 { uvec2 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer DqmmU4 { uvec4 v[]; };

// Split-K (the z grid, dequant_gemm.c): a grid of few tiles leaves most of
// a large GPU idle, so split z takes parts [z * kparts, (z + 1) * kparts) of
// every row (the last split fewer) and stores its partial product in slice z
// of out, [splits][M][N]; a second pass (epilogue.comp) sums the slices.
void dqmm_parts(out uint q0, out uint qend) {
    q0 = gl_WorkGroupID.z * p.kparts;
    qend = min(p.parts, q0 + p.kparts);
}
uint64_t dqmm_out() { return p.out_ + uint64_t(gl_WorkGroupID.z) * uint64_t(p.M) * uint64_t(p.N) * uint64_t(4); }

// First k of each of part q's four 8-element runs. Must match the off[]
// that qb_decode returns (quant_blocks.glsl); the parity tests of every type
// would catch a mismatch.
void part_k(uint q, out uint k[4]) {
    if (!qb_is_block(QT)) {
        k[0] = 32u * q; k[1] = k[0] + 8u; k[2] = k[0] + 16u; k[3] = k[0] + 24u;
        return;
    }
    const uint ppb = qb_parts_per_block(QT);
    uint blk = q / ppb, part = q - blk * ppb;
    uint base = blk * qb_block_elems(QT);
    if (!qb_is_k(QT) || QT == QB_Q8_K) {   // 32 elements in order
        k[0] = base + 32u * part; k[1] = k[0] + 8u; k[2] = k[0] + 16u; k[3] = k[0] + 24u;
    } else if (QT == QB_Q4_K || QT == QB_Q5_K) {
        uint o = (part >> 1) * 64u + (part & 1u) * 16u;
        k[0] = base + o; k[1] = k[0] + 8u; k[2] = k[0] + 32u; k[3] = k[0] + 40u;
    } else {   // Q2_K, Q3_K, Q6_K
        uint o = (part >> 2) * 128u + (part & 3u) * 8u;
        [[unroll]] for (uint g = 0u; g < 4u; g++) k[g] = base + o + 32u * g;
    }
}

float dqmm_ldw(uint64_t row, uint k) {
    if (QT == DT_F32) return F32Buf(row).v[k];
    uint16_t h = U16Buf(row).v[k];
    return QT == DT_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

// 4 weights at k (k % 4 == 0) of a float row, zeros at or past K; vec: the
// row is aligned for a vector load and K % 4 == 0.
vec4 dqmm_ldw4(uint64_t row, uint k, bool vec) {
    if (vec) {
        if (k >= p.K) return vec4(0.0);
        if (QT == DT_F32) return DqmmV4(row).v[k >> 2];
        uvec2 u = DqmmU2(row).v[k >> 2];
        if (QT == DT_F16) return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y));
        return vec4(uintBitsToFloat(u.x << 16), uintBitsToFloat(u.x & 0xffff0000u), uintBitsToFloat(u.y << 16),
                    uintBitsToFloat(u.y & 0xffff0000u));
    }
    vec4 r = vec4(0.0);
    if (k < p.K) r.x = dqmm_ldw(row, k);
    if (k + 1u < p.K) r.y = dqmm_ldw(row, k + 1u);
    if (k + 2u < p.K) r.z = dqmm_ldw(row, k + 2u);
    if (k + 3u < p.K) r.w = dqmm_ldw(row, k + 3u);
    return r;
}

// The 32 weights of part q of row n (n < N, q < p.parts) in part_k order.
void dqmm_decode(uint n, uint q, bool wvec, out float v[32]) {
    uint64_t row = p.w + uint64_t(n) * uint64_t(p.row_bytes);
    if (!qb_is_block(QT)) {
        [[unroll]] for (uint i = 0u; i < 8u; i++) {
            vec4 t = dqmm_ldw4(row, 32u * q + 4u * i, wvec);
            v[4u * i] = t.x; v[4u * i + 1u] = t.y; v[4u * i + 2u] = t.z; v[4u * i + 3u] = t.w;
        }
        return;
    }
    const uint ppb = qb_parts_per_block(QT);
    uint blk = q / ppb, part = q - blk * ppb;
    uint off[4];
    qb_decode(QT, A4 != 0u, row, blk, p.K, part, v, off);
}

// 4 elements of x at element index i (row limit lim: zeros at or past it);
// vec: 16-byte aligned and K % 4 == 0, so a group is all in or all out.
vec4 dqmm_ldx4(uint i, uint lim, bool vec) {
    if (vec) return i < lim ? DqmmV4(p.x).v[i >> 2] : vec4(0.0);
    vec4 r = vec4(0.0);
    if (i < lim) r.x = F32Buf(p.x).v[i];
    if (i + 1u < lim) r.y = F32Buf(p.x).v[i + 1u];
    if (i + 2u < lim) r.z = F32Buf(p.x).v[i + 2u];
    if (i + 3u < lim) r.w = F32Buf(p.x).v[i + 3u];
    return r;
}
