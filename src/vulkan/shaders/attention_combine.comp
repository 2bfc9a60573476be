// attention_combine.comp — second pass of split-key attention: merges the
// NSPLIT partial results of attention.comp (unnormalized accumulators and
// (m, l) pairs in the log2 domain, in scratch) into the output:
//   out = sum_s 2^(m_s - M) acc_s / sum_s 2^(m_s - M) l_s,  M = max_s m_s;
// a row with no visible key (M = -inf or zero sum) outputs zeros.
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"
#define SYNC_ID0 0
#include "stage_sync.glsl"   // stage_wait / stage_signal, Act* (activation) loads

layout(push_constant, std430) uniform Push {
    uint64_t scratch, out_;
    uint n;        // output elements
    uint D, rows, Hkv, nsplit, ml_off;
    uint sync_wait, sync_sig;   // STAGE_SYNC (stage_sync.glsl): stage to wait for, counter to add to (0: none)
} p;

void main() {
    stage_wait(p.sync_wait);
    uint64_t lid = linear_id64();
    if (lid < uint64_t(p.n)) {   // no early return: stage_signal's barrier needs every invocation
        uint o = uint(lid);
        uint grow = o / p.D, d = o - grow * p.D;   // grow = (b * Hkv + hk) * rows + row
        uint row = grow % p.rows, bh = grow / p.rows, hk = bh % p.Hkv, b = bh / p.Hkv;
        float M = -1.0 / 0.0;
        for (uint s = 0; s < p.nsplit; s++) {
            uint part = ((b * p.nsplit + s) * p.Hkv + hk) * p.rows + row;
            M = max(M, ActF32(p.scratch).v[p.ml_off + 2 * part]);
        }
        float num = 0.0, den = 0.0;
        if (M != -1.0 / 0.0) {
            for (uint s = 0; s < p.nsplit; s++) {
                uint part = ((b * p.nsplit + s) * p.Hkv + hk) * p.rows + row;
                float w = exp2(ActF32(p.scratch).v[p.ml_off + 2 * part] - M);
                den += w * ActF32(p.scratch).v[p.ml_off + 2 * part + 1];
                num += w * ActF32(p.scratch).v[part * p.D + d];
            }
        }
        F32Buf(p.out_).v[o] = den > 0.0 ? num / den : 0.0;
    }
    stage_signal(p.sync_sig);
}
