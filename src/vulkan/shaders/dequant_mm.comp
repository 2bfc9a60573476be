// dequant_mm.comp — the "dequant-mm-<type>" tier: DEQUANT_MATMUL at prefill
// sizes (M > 8), out[M, N] = x[M, K] · w[N, K]ᵀ with w in its storage type,
// in f32 on any device. No scratch: each workgroup decodes the weight tile
// it needs straight into shared memory.
//
// One workgroup of 256 invocations (16 x 16) computes a 64 x 64 tile of out,
// each invocation a 4 x 4 block of registers, like matmul_tiled.comp. A K
// step is one 32-element part (dequant_mm_common.glsl): invocations 0..63
// decode part q of the tile's 64 weight rows (quant_blocks.glsl, in
// registers), and every invocation loads one 8-element run of x (one row, the
// part's run r) at the same k. Both tiles are stored k-major in shared memory,
// 64 floats per k without padding: the decoders write one column each and
// the x loaders one row each, so consecutive invocations hit consecutive
// banks. The next step is decoded and loaded into registers while the current
// one is multiplied. DBUF = 1: two shared buffers, one barrier per step
// (32 KiB); DBUF = 0: one buffer, two barriers (16 KiB, the Vulkan minimum).
//
// Edges: weight rows past N and x rows past M are zeros, stores are masked.
// Split-K (z grid): a range of parts per split (dequant_mm_common.glsl).
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x = 256) in;   // before the includes (docs/gpu.md pitfalls)

#include "common.glsl"
#include "quant_blocks.glsl"

layout(constant_id = 0) const uint QT = 16;    // rlx dtype of w
layout(constant_id = 1) const uint A4 = 0;     // w: 32-bit loads at 4-aligned block offsets
layout(constant_id = 2) const uint VEC = 0;    // bit 0: x 16-byte loads, bit 1: float w vector loads, bit 2: out 16-byte stores
layout(constant_id = 3) const uint DBUF = 1;   // two shared buffers

#include "dequant_mm_common.glsl"

const uint BM = 64u, BN = 64u, BK = 32u;
const uint NBUF = DBUF != 0u ? 2u : 1u;
const uint TILE = BK * BM;                 // floats per tile (BM == BN)

shared vec4 As[NBUF * TILE / 4u];          // x: As[k * BM + m]
shared vec4 Bs[NBUF * TILE / 4u];          // w: Bs[k * BN + n]

vec4 rx[2];
float rw[32];

// Registers for step q: run tid / 64 of x row tid % 64 at the part's k
// positions, and (invocations < BN) the decoded part of weight row tid.
void fetch(uint m0, uint n0, uint q, uint tid) {
    uint k[4];
    part_k(q, k);
    uint gm = m0 + tid % BM, r = tid / BM;
    bool vec = (VEC & 1u) != 0u;
    rx[0] = vec4(0.0);
    rx[1] = vec4(0.0);
    if (gm < p.M) {
        uint i = gm * p.K + k[r], lim = gm * p.K + p.K;
        rx[0] = dqmm_ldx4(i, lim, vec);
        rx[1] = dqmm_ldx4(i + 4u, lim, vec);
    }
    if (tid < BN) {
        uint n = n0 + tid;
        if (n < p.N) {
            dqmm_decode(n, q, (VEC & 2u) != 0u, rw);
        } else {
            [[unroll]] for (uint i = 0u; i < 32u; i++) rw[i] = 0.0;
        }
    }
}

void stash(uint buf, uint tid) {
    uint base = buf * TILE;
    uint row = tid % BM, r = tid / BM;
    [[unroll]] for (uint i = 0u; i < 8u; i++) {
        uint e = base + (8u * r + i) * BM + row;
        As[e >> 2][e & 3u] = rx[i >> 2][i & 3u];
    }
    if (tid < BN) {
        [[unroll]] for (uint i = 0u; i < 32u; i++) {
            uint e = base + i * BN + tid;
            Bs[e >> 2][e & 3u] = rw[i];
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint tx = tid % 16u, ty = tid / 16u;
    uint n0 = gl_WorkGroupID.x * BN;
    uint q0, qend;
    dqmm_parts(q0, qend);
    uint steps = qend - q0;
    uint64_t outp = dqmm_out();

    for (uint tm = gl_WorkGroupID.y; tm < p.tiles_m; tm += gl_NumWorkGroups.y) {
        uint m0 = tm * BM;
        vec4 acc[4];
        [[unroll]] for (uint i = 0u; i < 4u; i++) acc[i] = vec4(0.0);

        // Iteration t loads step t into registers, multiplies step t - 1 from
        // shared memory, then stores step t: one fetch site keeps the decoder
        // inlined once.
        for (uint t = 0u; t <= steps; t++) {
            bool more = t < steps;
            if (more) fetch(m0, n0, q0 + t, tid);
            if (t > 0u) {
                uint cur = (t - 1u) & (NBUF - 1u);
                uint base = cur * TILE;
                // unrolled by 8, not 32: lavapipe's compiler handles the full unroll
                // badly (1.4x slower), and 8 already amortizes the loop on a GPU
                [[dont_unroll]] for (uint k0 = 0u; k0 < BK; k0 += 8u) {
                    [[unroll]] for (uint kk = 0u; kk < 8u; kk++) {
                        uint k = k0 + kk;
                        vec4 av = As[(base + k * BM + ty * 4u) >> 2];
                        vec4 bv = Bs[(base + k * BN + tx * 4u) >> 2];
                        acc[0] += av.x * bv;
                        acc[1] += av.y * bv;
                        acc[2] += av.z * bv;
                        acc[3] += av.w * bv;
                    }
                }
            }
            if (DBUF == 0u) barrier();   // one buffer: everyone is done reading it
            if (more) stash(t & (NBUF - 1u), tid);
            barrier();
        }

        uint col = n0 + tx * 4u;
        if (col < p.N) {
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                uint row = m0 + ty * 4u + i;
                if (row >= p.M) continue;
                uint idx = row * p.N + col;
                if ((VEC & 4u) != 0u) {
                    DqmmV4(outp).v[idx >> 2] = acc[i];
                } else {
                    F32Buf(outp).v[idx] = acc[i].x;
                    if (col + 1u < p.N) F32Buf(outp).v[idx + 1u] = acc[i].y;
                    if (col + 2u < p.N) F32Buf(outp).v[idx + 2u] = acc[i].z;
                    if (col + 3u < p.N) F32Buf(outp).v[idx + 3u] = acc[i].w;
                }
            }
        }
    }
}
