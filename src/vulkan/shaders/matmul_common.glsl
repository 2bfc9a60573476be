// matmul_common.glsl — shared by matmul_tiled, matmul_coopmat and matvec:
// the push-constant block (mirrored by mm_push in src/vulkan/lower/matmul.c),
// batch addressing, f32 <-> storage conversions and the fused
// bias + activation epilogue (rlx_activation codes, cpu_activate semantics).
//
// Include after common.glsl.

// Activation codes = rlx_activation.
#define ACT_NONE      0u
#define ACT_RELU      1u
#define ACT_GELU      2u
#define ACT_GELU_TANH 3u
#define ACT_SILU      4u
#define ACT_SIGMOID   5u
#define ACT_TANH      6u

// Element strides are 64-bit; per-matrix indices are 32-bit (the lowering
// guarantees every matrix has < 2^31 elements).
#ifndef RLX_CONV
layout(push_constant, std430) uniform MatmulPush {
    uint64_t a;        // [batch..., M, K] or [batch..., K, M] (matmul_tiled's TRANS_A)
    uint64_t b;        // [batch..., K, N] or [batch..., N, K] (TRANS_B)
    uint64_t bias;     // [N] or 0
    uint64_t c;        // [nbatch, M, N] dense
    uint M, N, K, nbatch;
    uint bd1, bd2;     // collapsed batch dims 1 and 2 (dim 0 is implied)
    uint tiles_m;      // row tiles (the y grid may be smaller and loop)
    uint pad0;
    uint64_t sa0, sa1, sa2;   // a's element strides over the 3 batch dims (0 = broadcast)
    uint64_t sb0, sb1, sb2;
} p;

uint elem_size(uint dt) { return dt == DT_F32 ? 4u : 2u; }

// Byte addresses of batch entry bz's matrices.
void batch_addrs(uint bz, uint dt, out uint64_t aa, out uint64_t ba, out uint64_t ca) {
    uint i2 = bz % p.bd2;
    uint t = bz / p.bd2;
    uint i1 = t % p.bd1;
    uint i0 = t / p.bd1;
    uint64_t es = uint64_t(elem_size(dt));
    aa = p.a + (uint64_t(i0) * p.sa0 + uint64_t(i1) * p.sa1 + uint64_t(i2) * p.sa2) * es;
    ba = p.b + (uint64_t(i0) * p.sb0 + uint64_t(i1) * p.sb1 + uint64_t(i2) * p.sb2) * es;
    ca = p.c + uint64_t(bz) * uint64_t(p.M) * uint64_t(p.N) * es;
}
#else
// Implicit-GEMM convolution (matmul_tiled.comp built with -DRLX_CONV; mirrored
// by conv_gemm_push in src/vulkan/lower/conv_gemm.c). Per channel group:
// C[Og, N*S'] = W[Og, Cg*prod(K)] x im2col(x)[Cg*prod(K), N*S'], the im2col
// matrix gathered on load, C scattered to NCHW on store. Spatial dims are
// right-aligned into three. sdp: stride (bits 0-7), dilation (8-15) and the
// leading pad (16-31, signed) of one spatial dim.
layout(push_constant, std430) uniform ConvGemmPush {
    uint64_t a;        // weights [O, Cg, *K]: the group's rows are A [M = Og, K]
    uint64_t b;        // x [N, C, *S]
    uint64_t bias;     // [O] or 0
    uint64_t c;        // out [N, O, *S']
    uint M, N, K, nbatch;     // N = images * prod(S'), K = Cg * prod(K), nbatch = groups
    uint tiles_m, pad0, C, O; // C, O: x's and out's channels
    uint ovol, o1, o2, kvol;
    uint k1, k2, in0, in1;
    uint in2, sdp0, sdp1, sdp2;
    uint64_t res;      // residual [N, O, *S'] added before the activation (HAS_BIAS bit 1), or 0
} p;

uint elem_size(uint dt) { return dt == DT_F32 ? 4u : 2u; }

// Group bz's weights, input channels and output channels.
void batch_addrs(uint bz, uint dt, out uint64_t aa, out uint64_t ba, out uint64_t ca) {
    uint64_t es = uint64_t(elem_size(dt));
    aa = p.a + uint64_t(bz) * uint64_t(p.M) * uint64_t(p.K) * es;
    ba = p.b + uint64_t(bz) * uint64_t(p.K / p.kvol) * uint64_t(p.in0 * p.in1 * p.in2) * es;
    ca = p.c + uint64_t(bz) * uint64_t(p.M) * uint64_t(p.ovol) * es;
}

uint conv_stride(uint sdp) { return sdp & 255u; }
uint conv_dilation(uint sdp) { return (sdp >> 8) & 255u; }
int conv_pad(uint sdp) { return int(sdp) >> 16; }
#endif

layout(buffer_reference, std430, buffer_reference_align = 16) buffer MmV4F32 { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer MmV2U32 { uvec2 v[]; };   // 4 x f16/bf16
layout(buffer_reference, std430, buffer_reference_align = 16) buffer MmV4U32 { uvec4 v[]; };  // 8 x f16/bf16

float mm_ld(uint64_t base, uint dt, uint i) {
    if (dt == DT_F32) return F32Buf(base).v[i];
    uint16_t h = U16Buf(base).v[i];
    return dt == DT_F16 ? f16_to_f32(h) : bf16_to_f32(h);
}

// 4 consecutive elements at element index i (i % 4 == 0, base suitably aligned).
vec4 mm_ld4_vec(uint64_t base, uint dt, uint i) {
    if (dt == DT_F32) return MmV4F32(base).v[i >> 2];
    uvec2 w = MmV2U32(base).v[i >> 2];
    if (dt == DT_F16) return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));
    return vec4(uintBitsToFloat(w.x << 16), uintBitsToFloat(w.x & 0xffff0000u),
                uintBitsToFloat(w.y << 16), uintBitsToFloat(w.y & 0xffff0000u));
}

// 4 consecutive elements, those at or past `limit` (an element index) read as 0.
vec4 mm_ld4_guard(uint64_t base, uint dt, uint i, uint limit) {
    vec4 r = vec4(0.0);
    if (i + 0u < limit) r.x = mm_ld(base, dt, i + 0u);
    if (i + 1u < limit) r.y = mm_ld(base, dt, i + 1u);
    if (i + 2u < limit) r.z = mm_ld(base, dt, i + 2u);
    if (i + 3u < limit) r.w = mm_ld(base, dt, i + 3u);
    return r;
}

void mm_st(uint64_t base, uint dt, uint i, float v) {
    if (dt == DT_F32) F32Buf(base).v[i] = v;
    else if (dt == DT_F16) U16Buf(base).v[i] = f32_to_f16(v);
    else U16Buf(base).v[i] = f32_to_bf16(v);
}

// 4 consecutive elements at i (i % 4 == 0, base suitably aligned).
void mm_st4_vec(uint64_t base, uint dt, uint i, vec4 v) {
    if (dt == DT_F32) {
        MmV4F32(base).v[i >> 2] = v;
    } else if (dt == DT_F16) {
        MmV2U32(base).v[i >> 2] = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));
    } else {
        uvec2 w = uvec2(uint(f32_to_bf16(v.x)) | (uint(f32_to_bf16(v.y)) << 16),
                        uint(f32_to_bf16(v.z)) | (uint(f32_to_bf16(v.w)) << 16));
        MmV2U32(base).v[i >> 2] = w;
    }
}

// erfc(x) with fractional error < 1.2e-7 everywhere (Chebyshev-fitted
// exp form, Numerical Recipes' erfcc). Used for the exact GELU.
float mm_erfc(float x) {
    float z = abs(x);
    float t = 1.0 / (1.0 + 0.5 * z);
    float r = t * exp(-z * z - 1.26551223 +
                      t * (1.00002368 +
                      t * (0.37409196 +
                      t * (0.09678418 +
                      t * (-0.18628806 +
                      t * (0.27886807 +
                      t * (-1.13520398 +
                      t * (1.48851587 +
                      t * (-0.82215223 +
                      t * 0.17087277)))))))));
    return x >= 0.0 ? r : 2.0 - r;
}

float mm_erf(float x) { return 1.0 - mm_erfc(x); }

// tanh without the inf/inf of the naive (e^2x - 1) / (e^2x + 1).
float mm_tanh(float x) {
    float ax = abs(x);
    float r;
    if (ax < 0.0004) {
        r = ax * (1.0 - ax * ax * (1.0 / 3.0));
    } else {
        float e = exp(-2.0 * ax);
        r = (1.0 - e) / (1.0 + e);
    }
    return x < 0.0 ? -r : r;
}

float mm_activate(float v, uint act) {
    if (act == ACT_RELU) return v < 0.0 ? 0.0 : v;   // NaN passes through
    if (act == ACT_GELU) return 0.5 * v * mm_erfc(v * -0.70710678118654752);
    if (act == ACT_GELU_TANH) {
        float u = 0.79788456080286536 * (v + 0.044715 * v * v * v);
        return v / (1.0 + exp(-2.0 * u));
    }
    if (act == ACT_SILU) return v / (1.0 + exp(-v));
    if (act == ACT_SIGMOID) return 1.0 / (1.0 + exp(-v));
    if (act == ACT_TANH) return mm_tanh(v);
    return v;
}
