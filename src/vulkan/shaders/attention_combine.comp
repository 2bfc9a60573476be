// attention_combine.comp — second pass of split-key attention: merges the
// NSPLIT partial results of attention.comp (unnormalized accumulators and
// (m, l) pairs in the log2 domain, in scratch; att_splits.glsl) into the
// output (DT: f32, f16 or bf16, as attention.comp's), one invocation an element.
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"
#include "att_splits.glsl"   // split_max, split_merge (attention.comp's LASTC merges alike)

layout(constant_id = 0) const uint DT = 0;   // the output's storage: DT_F32, DT_F16 or DT_BF16

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
    float M = split_max(p.scratch, p.ml_off, b, hk, row, p.nsplit, p.Hkv, p.rows);
    float y = split_merge(p.scratch, p.ml_off, p.D, b, hk, row, d, M, p.nsplit, p.Hkv, p.rows);
    if (DT == DT_F32) F32Buf(p.out_).v[o] = y;
    else U16Buf(p.out_).v[o] = DT == DT_F16 ? f32_to_f16(y) : f32_to_bf16(y);
}
