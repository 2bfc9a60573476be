// matmul_tiled.comp — the "tiled-f32" tier: C = act(A x B + bias), f32
// accumulation, for any device.
//
// One workgroup of 256 invocations (16 x 16) computes a BM x BN tile of C,
// each invocation a TM x TN = (BM/16) x (BN/16) block of registers. A and B
// tiles of depth BK are staged through shared memory (A transposed to
// k-major) with two buffers: the next tile is fetched into registers while the
// current one is multiplied, so one barrier per BK step suffices. Each
// invocation's rows/columns are groups of 4 spaced 64 apart, so shared reads
// are vec4 and conflict-free.
//
// TRANS_A: a is stored [K, M] (a weight gradient's X^T); its tile is then
// loaded in groups of 4 along m, already k-major.
//
// Split-K (SPLIT = 1, no batch): workgroup z walks K range [z * KC, (z + 1) *
// KC) (p.pad0 = KC, a multiple of BK) and stores its f32 partial product,
// without bias or activation, at slice z of p.c (M x N floats each);
// matmul_splitk.comp sums the slices and finishes them. For grids with far
// fewer tiles than the device has units (an encoder's projections at batch 1).
//
// RLX_CONV (built as conv_gemm_tiled.spv; HAS_BIAS bit 0 the bias, bit 1 the
// residual p.res added before the activation): implicit-GEMM convolution, A the
// group's weights, B the im2col matrix gathered from the image on load (each
// invocation's B columns are fixed for the tile: their image offsets and
// window origins are computed once, conv_cols; VEC bit 1: a 1x1 convolution
// of stride 1 without padding over images of prod(S') % 4 == 0 positions,
// whose im2col rows are x's channels, read 16 bytes at a time), C stored to NCHW with the
// bias per row (output channel); the z grid walks the channel groups, or
// with SPLIT (one image, one group, so C [M, N] is the output's layout) the
// K splits as for a matmul.
//
// Edges are zero-filled on load and masked on store, so any M, N, K (K = 0
// included) is correct. VEC selects 16-byte (f32) / 8-byte (f16, bf16)
// global accesses where the lowering proved them aligned.
#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "matmul_common.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint BM = 128;       // 64 or 128
layout(constant_id = 1) const uint BN = 128;       // 64 or 128
layout(constant_id = 2) const uint BK = 8;         // 8 or 16
layout(constant_id = 3) const uint DT = 0;         // DT_F32, DT_F16, DT_BF16 (a, b, bias, c)
layout(constant_id = 4) const uint TRANS_B = 0;    // b is [N, K]
layout(constant_id = 5) const uint ACT = 0;        // rlx_activation
layout(constant_id = 6) const uint HAS_BIAS = 0;
layout(constant_id = 7) const uint VEC = 0;        // bit 0: A loads, bit 1: B loads, bit 2: C stores
layout(constant_id = 8) const uint TRANS_A = 0;    // a is [K, M]
layout(constant_id = 9) const uint SPLIT = 0;      // 1: split-K partials (above)

const uint TM = BM / 16u;
const uint TN = BN / 16u;
const uint CM = BM / 64u;     // 4-row groups per invocation
const uint CN = BN / 64u;     // 4-column groups per invocation
const uint BMP = BM + 4u;     // padded k-major rows (transposed stores stay conflict-free)
const uint BNP = BN + 4u;

// Loader: 4-element groups along the contiguous dim, spread over the 256 invocations.
const uint GA = BM * BK / 4u;                  // groups in an A tile
const uint GB = BN * BK / 4u;                  // groups in a B tile
const uint LA = (GA + 255u) / 256u;
const uint LB = (GB + 255u) / 256u;

shared vec4 As[2 * BK * BMP / 4u];
shared vec4 Bs[2 * BK * BNP / 4u];

vec4 ra[LA];
vec4 rb[LB];

#ifdef RLX_CONV
// Per B column this invocation loads: the image's element offset (-1 past N)
// and the window origin a * stride - pad per spatial dim.
int cx[LB][4], c0[LB][4], c1[LB][4], c2[LB][4];
// Per B row this invocation loads: k = (channel, q0, q1, q2) in mixed radix
// (kvol = k0 * k1 * k2), advanced by BK per K step with carries rather than
// divided out again (integer division is the loader's costliest work).
uint kch[LB], kq0[LB], kq1[LB], kq2[LB];
uint dch, dq0, dq1, dq2;   // BK in the same radix

void conv_cols(uint n0, uint tid) {
    uint ivol = p.in0 * p.in1 * p.in2;
    int s0 = int(conv_stride(p.sdp0)), s1 = int(conv_stride(p.sdp1)), s2 = int(conv_stride(p.sdp2));
    [[unroll]] for (uint l = 0; l < LB; l++) {
        uint nq = ((tid + l * 256u) % (BN / 4u)) * 4u;
        [[unroll]] for (uint e = 0; e < 4u; e++) {
            uint j = n0 + nq + e;
            uint img = j / p.ovol, sp = j % p.ovol;
            uint a2 = sp % p.o2, t = sp / p.o2, a1 = t % p.o1, a0 = t / p.o1;
            cx[l][e] = j < p.N ? int(img * p.C * ivol) : -1;
            c0[l][e] = int(a0) * s0 - conv_pad(p.sdp0);
            c1[l][e] = int(a1) * s1 - conv_pad(p.sdp1);
            c2[l][e] = int(a2) * s2 - conv_pad(p.sdp2);
        }
    }
    uint k12 = p.k1 * p.k2, k0 = p.kvol / k12;
    dq2 = BK % p.k2, dq1 = (BK / p.k2) % p.k1, dq0 = (BK / k12) % k0, dch = BK / p.kvol;
}

// The B rows of the K step at k0 (the first of a walk over K).
void conv_rows_at(uint k0, uint tid) {
    [[unroll]] for (uint l = 0; l < LB; l++) {
        uint gk = k0 + (tid + l * 256u) / (BN / 4u);
        uint r = gk % p.kvol;
        kch[l] = gk / p.kvol, kq2[l] = r % p.k2, r /= p.k2, kq1[l] = r % p.k1, kq0[l] = r / p.k1;
    }
}

// The B rows of the next K step.
void conv_rows_next() {
    uint k0 = p.kvol / (p.k1 * p.k2);
    [[unroll]] for (uint l = 0; l < LB; l++) {
        uint q2 = kq2[l] + dq2, c = q2 >= p.k2 ? 1u : 0u;
        kq2[l] = q2 - c * p.k2;
        uint q1 = kq1[l] + dq1 + c;
        c = q1 >= p.k1 ? 1u : 0u;
        kq1[l] = q1 - c * p.k1;
        uint q0 = kq0[l] + dq0 + c;
        c = q0 >= k0 ? 1u : 0u;
        kq0[l] = q0 - c * k0;
        kch[l] += dch + c;
    }
}

// im2col(x)[row of loader group l][its 4 columns], zero outside the image.
vec4 conv_ld4(uint64_t ba, uint l) {
    int d0 = int(kq0[l] * conv_dilation(p.sdp0)), d1 = int(kq1[l] * conv_dilation(p.sdp1)), d2 = int(kq2[l] * conv_dilation(p.sdp2));
    int coff = int(kch[l] * p.in0 * p.in1 * p.in2);
    vec4 v = vec4(0.0);
    if ((VEC & 2u) != 0u) {   // 1x1, stride 1, no padding, prod(S') % 4 == 0: 4 adjacent positions of one image
        if (cx[l][0] >= 0)
            v = MmV4F32(ba).v[(uint(cx[l][0] + coff) + (uint(c0[l][0]) * p.in1 + uint(c1[l][0])) * p.in2 + uint(c2[l][0])) >> 2];
        return v;
    }
    [[unroll]] for (uint e = 0; e < 4u; e++) {
        int i0 = c0[l][e] + d0, i1 = c1[l][e] + d1, i2 = c2[l][e] + d2;
        if (cx[l][e] >= 0 && uint(i0) < p.in0 && uint(i1) < p.in1 && uint(i2) < p.in2)
            v[e] = mm_ld(ba, DT, uint(cx[l][e] + coff) + (uint(i0) * p.in1 + uint(i1)) * p.in2 + uint(i2));
    }
    return v;
}
#endif

void fetch(uint64_t aa, uint64_t ba, uint m0, uint n0, uint k0, uint tid) {
    [[unroll]] for (uint l = 0; l < LA; l++) {
        uint g = tid + l * 256u;
        vec4 v = vec4(0.0);
        if (g < GA) {
            if (TRANS_A != 0u) {        // a [K, M]: groups of 4 along m
                uint kr = g / (BM / 4u), mq = (g % (BM / 4u)) * 4u;
                uint gk = k0 + kr, gm = m0 + mq;
                if (gk < p.K && gm < p.M) {
                    uint idx = gk * p.M + gm;
                    v = (VEC & 1u) != 0u ? mm_ld4_vec(aa, DT, idx) : mm_ld4_guard(aa, DT, idx, gk * p.M + p.M);
                }
            } else {                    // a [M, K]: groups of 4 along k
                uint row = g / (BK / 4u), kq = (g % (BK / 4u)) * 4u;
                uint gm = m0 + row, gk = k0 + kq;
                if (gm < p.M && gk < p.K) {
                    uint idx = gm * p.K + gk;
                    v = (VEC & 1u) != 0u ? mm_ld4_vec(aa, DT, idx) : mm_ld4_guard(aa, DT, idx, gm * p.K + p.K);
                }
            }
        }
        ra[l] = v;
    }
    [[unroll]] for (uint l = 0; l < LB; l++) {
        uint g = tid + l * 256u;
        vec4 v = vec4(0.0);
        if (g < GB) {
            if (TRANS_B != 0u) {        // b [N, K]: groups of 4 along k
                uint row = g / (BK / 4u), kq = (g % (BK / 4u)) * 4u;
                uint gn = n0 + row, gk = k0 + kq;
                if (gn < p.N && gk < p.K) {
                    uint idx = gn * p.K + gk;
                    v = (VEC & 2u) != 0u ? mm_ld4_vec(ba, DT, idx) : mm_ld4_guard(ba, DT, idx, gn * p.K + p.K);
                }
            } else {                    // b [K, N]: groups of 4 along n
                uint kr = g / (BN / 4u), nq = (g % (BN / 4u)) * 4u;
                uint gk = k0 + kr, gn = n0 + nq;
#ifdef RLX_CONV
                if (gk < p.K) v = conv_ld4(ba, l);
#else
                if (gk < p.K && gn < p.N) {
                    uint idx = gk * p.N + gn;
                    v = (VEC & 2u) != 0u ? mm_ld4_vec(ba, DT, idx) : mm_ld4_guard(ba, DT, idx, gk * p.N + p.N);
                }
#endif
            }
        }
        rb[l] = v;
    }
#ifdef RLX_CONV
    conv_rows_next();
#endif
}

// Writes the fetched registers into shared buffer `buf`: A k-major, B k-major.
void stash(uint buf, uint tid) {
    uint abase = buf * BK * BMP, bbase = buf * BK * BNP;
    [[unroll]] for (uint l = 0; l < LA; l++) {
        uint g = tid + l * 256u;
        if (g < GA) {
            if (TRANS_A != 0u) {
                uint kr = g / (BM / 4u), mq = (g % (BM / 4u)) * 4u;
                As[(abase + kr * BMP + mq) >> 2] = ra[l];
            } else {
                uint row = g / (BK / 4u), kq = (g % (BK / 4u)) * 4u;
                [[unroll]] for (uint j = 0; j < 4u; j++) {
                    uint e = abase + (kq + j) * BMP + row;
                    As[e >> 2][e & 3u] = ra[l][j];
                }
            }
        }
    }
    [[unroll]] for (uint l = 0; l < LB; l++) {
        uint g = tid + l * 256u;
        if (g < GB) {
            if (TRANS_B != 0u) {
                uint row = g / (BK / 4u), kq = (g % (BK / 4u)) * 4u;
                [[unroll]] for (uint j = 0; j < 4u; j++) {
                    uint e = bbase + (kq + j) * BNP + row;
                    Bs[e >> 2][e & 3u] = rb[l][j];
                }
            } else {
                uint kr = g / (BN / 4u), nq = (g % (BN / 4u)) * 4u;
                Bs[(bbase + kr * BNP + nq) >> 2] = rb[l];
            }
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint tx = tid % 16u, ty = tid / 16u;
    uint n0 = gl_WorkGroupID.x * BN;
    uint kbeg = 0u, kend = p.K;
    if (SPLIT != 0u) {
        kbeg = gl_WorkGroupID.z * p.pad0;
        kend = min(p.K, kbeg + p.pad0);
    }
    uint ktiles = kend > kbeg ? (kend - kbeg + BK - 1u) / BK : 0u;
    uint bz0 = SPLIT != 0u ? 0u : gl_WorkGroupID.z, bstep = SPLIT != 0u ? 1u : gl_NumWorkGroups.z;
#ifdef RLX_CONV
    conv_cols(n0, tid);
#endif

    for (uint bz = bz0; bz < p.nbatch; bz += bstep) {
        uint64_t aa, ba, ca;
        batch_addrs(bz, DT, aa, ba, ca);
        if (SPLIT != 0u) ca = p.c + uint64_t(gl_WorkGroupID.z) * uint64_t(p.M) * uint64_t(p.N) * 4ul;
        for (uint tm = gl_WorkGroupID.y; tm < p.tiles_m; tm += gl_NumWorkGroups.y) {
            uint m0 = tm * BM;
            vec4 acc[TM][CN];
            [[unroll]] for (uint i = 0; i < TM; i++)
                [[unroll]] for (uint j = 0; j < CN; j++) acc[i][j] = vec4(0.0);

            if (ktiles > 0u) {
#ifdef RLX_CONV
                conv_rows_at(kbeg, tid);
#endif
                fetch(aa, ba, m0, n0, kbeg, tid);
                stash(0u, tid);
            }
            barrier();
            for (uint t = 0; t < ktiles; t++) {
                uint cur = t & 1u;
                bool more = t + 1u < ktiles;
                if (more) fetch(aa, ba, m0, n0, kbeg + (t + 1u) * BK, tid);
                uint abase = cur * BK * BMP, bbase = cur * BK * BNP;
                [[unroll]] for (uint k = 0; k < BK; k++) {
                    vec4 av[CM], bv[CN];
                    [[unroll]] for (uint i = 0; i < CM; i++) av[i] = As[(abase + k * BMP + i * 64u + ty * 4u) >> 2];
                    [[unroll]] for (uint j = 0; j < CN; j++) bv[j] = Bs[(bbase + k * BNP + j * 64u + tx * 4u) >> 2];
                    [[unroll]] for (uint i = 0; i < CM; i++) {
                        [[unroll]] for (uint j = 0; j < CN; j++) {
                            acc[i * 4u + 0u][j] += av[i].x * bv[j];
                            acc[i * 4u + 1u][j] += av[i].y * bv[j];
                            acc[i * 4u + 2u][j] += av[i].z * bv[j];
                            acc[i * 4u + 3u][j] += av[i].w * bv[j];
                        }
                    }
                }
                if (more) stash(cur ^ 1u, tid);
                barrier();
            }

#ifdef RLX_CONV
            // Epilogue: + the output channel's bias, activation, scattered to NCHW.
            [[unroll]] for (uint j = 0; j < CN; j++) {
                [[unroll]] for (uint e = 0; e < 4u; e++) {
                    uint col = n0 + j * 64u + tx * 4u + e;
                    if (col >= p.N) continue;
                    uint img = col / p.ovol, sp = col % p.ovol;
                    uint obase = img * p.O * p.ovol + sp;
                    [[unroll]] for (uint i = 0; i < TM; i++) {
                        uint row = m0 + (i / 4u) * 64u + ty * 4u + (i % 4u);
                        if (row >= p.M) continue;
                        float v = acc[i][j][e];
                        if (SPLIT != 0u) {   // one image, one group: [M, N] partials, finished by matmul_splitk.comp
                            mm_st(ca, DT_F32, row * p.N + col, v);
                            continue;
                        }
                        if ((HAS_BIAS & 1u) != 0u) v += mm_ld(p.bias, DT, bz * p.M + row);
                        uint oi = obase + row * p.ovol;   // within group bz's channels (ca)
                        if ((HAS_BIAS & 2u) != 0u) v += mm_ld(p.res, DT, oi + bz * p.M * p.ovol);
                        mm_st(ca, DT, oi, mm_activate(v, ACT));
                    }
                }
            }
#else
            // Epilogue: + bias, activation, convert, store.
            [[unroll]] for (uint j = 0; j < CN; j++) {
                uint col = n0 + j * 64u + tx * 4u;
                if (col >= p.N) continue;
                vec4 bias = vec4(0.0);
                if (HAS_BIAS != 0u && SPLIT == 0u) bias = mm_ld4_guard(p.bias, DT, col, p.N);
                [[unroll]] for (uint i = 0; i < TM; i++) {
                    uint row = m0 + (i / 4u) * 64u + ty * 4u + (i % 4u);
                    if (row >= p.M) continue;
                    vec4 v = acc[i][j] + bias;
                    uint idx = row * p.N + col;
                    if (SPLIT != 0u) {   // f32 partials, finished by matmul_splitk.comp
                        if ((VEC & 4u) != 0u) {
                            mm_st4_vec(ca, DT_F32, idx, v);
                        } else {
                            [[unroll]] for (uint e = 0u; e < 4u; e++)
                                if (col + e < p.N) mm_st(ca, DT_F32, idx + e, v[e]);
                        }
                        continue;
                    }
                    if (ACT != ACT_NONE) {
                        v = vec4(mm_activate(v.x, ACT), mm_activate(v.y, ACT), mm_activate(v.z, ACT),
                                 mm_activate(v.w, ACT));
                    }
                    if ((VEC & 4u) != 0u) {
                        mm_st4_vec(ca, DT, idx, v);
                    } else {
                        mm_st(ca, DT, idx, v.x);
                        if (col + 1u < p.N) mm_st(ca, DT, idx + 1u, v.y);
                        if (col + 2u < p.N) mm_st(ca, DT, idx + 2u, v.z);
                        if (col + 3u < p.N) mm_st(ca, DT, idx + 3u, v.w);
                    }
                }
            }
#endif
        }
    }
}
