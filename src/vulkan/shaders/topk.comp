// topk.comp — TOPK_VALUES / TOPK_INDICES along the last axis: one workgroup
// per row, k selection passes. Each element maps to a 64-bit key whose
// unsigned order is the op's order (larger first; NaN above everything,
// NaNs equal; -0 == +0), and ties go to the lower index, so (key, index) is a
// strict total order. Pass t picks the best element strictly after the one
// picked by pass t-1: no marking, no sorting, O(k * n / 256) per row. Rows of
// up to CACHE elements keep their keys in shared memory across passes.
// Values are copied bit for bit from the input.
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"

layout(constant_id = 0) const uint DT = 0;       // rlx dtype code of x
layout(constant_id = 1) const uint IDX = 0;      // 1: write i32 indices, 0: values
layout(constant_id = 2) const uint CACHE = 1;    // row keys kept in shared memory when n <= CACHE

layout(push_constant, std430) uniform Push {
    uint64_t x, out_;
    uint n, k, rows, pad0;
} p;

shared uint64_t kc[CACHE];
shared uint64_t rk[256];
shared uint ri[256];

uint64_t key_of(uint i) {
    if (DT == DT_F32) {
        uint u = U1Buf(p.x).v[i];
        if ((u & 0x7fffffffu) > 0x7f800000u) return 0xffffffffu;   // NaN
        if ((u & 0x7fffffffu) == 0u) u = 0u;                          // -0 == +0
        return uint64_t((u & 0x80000000u) != 0u ? ~u : (u | 0x80000000u));
    } else if (DT == DT_F16 || DT == DT_BF16) {
        uint u = uint(U16Buf(p.x).v[i]);
        uint em = DT == DT_F16 ? 0x7c00u : 0x7f80u;
        if ((u & 0x7fffu) > em) return 0xffffu;
        if ((u & 0x7fffu) == 0u) u = 0u;
        return uint64_t((u & 0x8000u) != 0u ? (~u & 0xffffu) : (u | 0x8000u));
    } else if (DT == DT_F64) {
        uvec2 w = U2Buf(p.x).v[i];
        uint64_t u = (uint64_t(w.y) << 32) | uint64_t(w.x);
        uint64_t mag = u & 0x7fffffffffffffffUL;
        if (mag > 0x7ff0000000000000UL) return 0xffffffffffffffffUL;
        if (mag == 0UL) u = 0UL;
        return (u & 0x8000000000000000UL) != 0UL ? ~u : (u | 0x8000000000000000UL);
    } else if (DT == DT_I32) {
        return uint64_t(U1Buf(p.x).v[i] ^ 0x80000000u);
    } else if (DT == DT_I64) {
        uvec2 w = U2Buf(p.x).v[i];
        return ((uint64_t(w.y) << 32) | uint64_t(w.x)) ^ 0x8000000000000000UL;
    } else if (DT == DT_I8) {
        return uint64_t((uint(U8Buf(p.x).v[i]) ^ 0x80u) & 0xffu);
    }
    return uint64_t(U8Buf(p.x).v[i]);   // u8
}

void main() {
    const uint t = gl_LocalInvocationIndex;
    const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= p.rows) return;   // uniform per workgroup
    const uint n = p.n, base = row * n;
    const bool cached = n <= CACHE;
    if (cached) {
        for (uint i = t; i < n; i += 256) kc[i] = key_of(base + i);
        barrier();
    }
    // previous pick: start above everything
    uint64_t pk = 0xffffffffffffffffUL;
    uint pi = 0xffffffffu;
    bool first = true;
    for (uint s = 0; s < p.k; s++) {
        uint64_t bk = 0UL;
        uint bi = 0xffffffffu;
        for (uint i = t; i < n; i += 256) {
            uint64_t key = cached ? kc[i] : key_of(base + i);
            bool after = first || key < pk || (key == pk && i > pi);
            // strictly better than the best so far: larger key, or equal key and lower index
            if (after && (bi == 0xffffffffu || key > bk || (key == bk && i < bi))) {
                bk = key;
                bi = i;
            }
        }
        rk[t] = bk;
        ri[t] = bi;
        barrier();
        for (uint w = 128; w > 0; w >>= 1) {
            if (t < w) {
                uint64_t k2 = rk[t + w];
                uint i2 = ri[t + w];
                if (i2 != 0xffffffffu && (ri[t] == 0xffffffffu || k2 > rk[t] || (k2 == rk[t] && i2 < ri[t]))) {
                    rk[t] = k2;
                    ri[t] = i2;
                }
            }
            barrier();
        }
        pk = rk[0];
        pi = ri[0];
        first = false;
        barrier();
        if (t == 0) {
            uint o = row * p.k + s;
            if (IDX != 0) I32Buf(p.out_).v[o] = int(pi);
            else if (DT == DT_F64 || DT == DT_I64) U2Buf(p.out_).v[o] = U2Buf(p.x).v[base + pi];
            else if (DT == DT_F32 || DT == DT_I32) U1Buf(p.out_).v[o] = U1Buf(p.x).v[base + pi];
            else if (DT == DT_F16 || DT == DT_BF16) U16Buf(p.out_).v[o] = U16Buf(p.x).v[base + pi];
            else U8Buf(p.out_).v[o] = U8Buf(p.x).v[base + pi];
        }
    }
}
