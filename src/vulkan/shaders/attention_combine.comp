// attention_combine.comp — second pass of split-key attention: merges the
// NSPLIT partial results of attention.comp (unnormalized accumulators and
// (m, l) pairs in the log2 domain, in scratch) into the output:
//   out = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s,  M = max_s m_s;
// a row with no visible key (M = -inf or zero sum) outputs zeros.
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"

layout(push_constant, std430) uniform Push {
    uint64_t scratch, out_;
    uint n;        // output elements
    uint D, rows, Hkv, nsplit, ml_off;
} p;

void main() {
    uint64_t lid = linear_id64();
    if (lid >= uint64_t(p.n)) return;
    uint o = uint(lid);
    uint grow = o / p.D, d = o - grow * p.D;   // grow = (b * Hkv + hk) * rows + row
    uint row = grow % p.rows, bh = grow / p.rows, hk = bh % p.Hkv, b = bh / p.Hkv;
    float M = -1.0 / 0.0;
    for (uint s = 0; s < p.nsplit; s++) {
        uint part = ((b * p.nsplit + s) * p.Hkv + hk) * p.rows + row;
        M = max(M, F32Buf(p.scratch).v[p.ml_off + 2 * part]);
    }
    float num = 0.0, den = 0.0;
    if (M != -1.0 / 0.0) {
        for (uint s = 0; s < p.nsplit; s++) {
            uint part = ((b * p.nsplit + s) * p.Hkv + hk) * p.rows + row;
            float w = exp2(F32Buf(p.scratch).v[p.ml_off + 2 * part] - M);
            den += w * F32Buf(p.scratch).v[p.ml_off + 2 * part + 1];
            num += w * F32Buf(p.scratch).v[part * p.D + d];
        }
    }
    F32Buf(p.out_).v[o] = den > 0.0 ? num / den : 0.0;
}
