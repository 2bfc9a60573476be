// batch_norm.comp — BATCH_NORM at inference over x [N, C, *S] (f32, NCHW):
// one invocation per element, y = (x - mean[c]) * a + beta[c] with
// a = gamma[c] / sqrt(var[c] + eps), c = (i / S) % C, as the CPU kernel
// (src/cpu/kernels/chan_norm.c) computes it.
#version 450
#include "ew_common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, gamma, beta, mean, var_, out_;
    uint total, C, S;
    float eps;
} pc;

void main() {
    uint idx = LIN_ID(256u);
    if (idx >= pc.total) return;
    uint c = (idx / pc.S) % pc.C;
    float a = load_f(pc.gamma, DT_F32, c) / sqrt(load_f(pc.var_, DT_F32, c) + pc.eps);
    float y = (load_f(pc.x, DT_F32, idx) - load_f(pc.mean, DT_F32, c)) * a + load_f(pc.beta, DT_F32, c);
    store_f(pc.out_, DT_F32, idx, y);
}
