// softmax_ce.comp — softmax cross-entropy, f32 logits [N,C], labels [N].
//   MODE 0: one workgroup per row writes the row loss
//           (max - x[label]) + log(sum exp(x - max)) to scratch[row].
//   MODE 1: one workgroup per row writes the gradient row
//           (softmax(x) - onehot(label)) / N.
//   MODE 2: one workgroup sums scratch[0..N) in a fixed order and writes the
//           mean (N = 0 gives 0/0 = NaN, as on the CPU).
// A label outside [0, C) cannot be reported from a dispatch: its row's loss
// (and gradient row) is NaN instead (the CPU returns INVALID_ARGUMENT).
#version 450
layout(local_size_x = 256) in;   // before the includes: common.glsl reads gl_WorkGroupSize
#include "common.glsl"
#include "nn_common.glsl"

layout(constant_id = 0) const uint MODE = 0;
layout(constant_id = 1) const uint LBL64 = 0;

layout(push_constant, std430) uniform Push {
    uint64_t logits, labels, out_, scratch;
    uint N, C, code, pad1;   // code: written to status for a label out of range
    uint64_t status;         // the program's status word (0: none)
} p;

shared float red[256];
shared uint redn[256];

float reduce_sum(float x) {
    uint t = gl_LocalInvocationIndex;
    red[t] = x;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        barrier();
    }
    float r = red[0];
    barrier();
    return r;
}

void main() {
    const uint t = gl_LocalInvocationIndex;
    const float NAN_ = uintBitsToFloat(0x7fc00000u);
    if (MODE == 2) {
        float s = 0.0;
        for (uint i = t; i < p.N; i += 256) s += F32Buf(p.scratch).v[i];
        s = reduce_sum(s);
        if (t == 0) F32Buf(p.out_).v[0] = s / float(p.N);
        return;
    }
    const uint row = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (row >= p.N) return;   // uniform per workgroup
    const uint base = row * p.C;

    // max, with NaN propagating
    float mx = -1.0 / 0.0;
    uint nan = 0;
    for (uint j = t; j < p.C; j += 256) {
        float v = F32Buf(p.logits).v[base + j];
        if (isnan(v)) nan = 1;
        else mx = max(mx, v);
    }
    red[t] = mx;
    redn[t] = nan;
    barrier();
    for (uint s = 128; s > 0; s >>= 1) {
        if (t < s) {
            red[t] = max(red[t], red[t + s]);
            redn[t] |= redn[t + s];
        }
        barrier();
    }
    mx = redn[0] != 0u ? NAN_ : red[0];
    barrier();

    float sum = 0.0;
    for (uint j = t; j < p.C; j += 256) sum += exp(F32Buf(p.logits).v[base + j] - mx);
    sum = reduce_sum(sum);

    // label range check on 32-bit words (an i64 label is valid iff its high word is 0)
    uint label;
    bool ok;
    if (LBL64 != 0) {
        uvec2 w = U2Buf(p.labels).v[row];
        label = w.x;
        ok = w.y == 0u && w.x < p.C;
    } else {
        int v = I32Buf(p.labels).v[row];
        label = uint(v);
        ok = v >= 0 && label < p.C;
    }
    if (!ok && t == 0 && p.status != 0ul) U32Buf(p.status).v[0] = p.code;   // the run then fails, naming this node
    if (MODE == 0) {
        if (t == 0) {
            float loss = NAN_;
            if (ok) loss = (mx - F32Buf(p.logits).v[base + label]) + log(sum);
            F32Buf(p.scratch).v[row] = loss;
        }
        return;
    }
    float inv = 1.0 / sum, invN = 1.0 / float(p.N);
    for (uint j = t; j < p.C; j += 256) {
        float v = F32Buf(p.logits).v[base + j];
        float g = (exp(v - mx) * inv - (j == label ? 1.0 : 0.0)) * invN;
        F32Buf(p.out_).v[base + j] = ok ? g : NAN_;
    }
}
