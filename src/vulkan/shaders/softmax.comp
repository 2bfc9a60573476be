// softmax.comp — SOFTMAX and LOG_SOFTMAX along any axis.
//
// A row is the n elements along the axis at one (outer, inner) position:
// element j of row q sits at (q / inner) * n * inner + q % inner + j * inner.
// Spec constants: 0 = log (0 softmax, 1 log_softmax), 1 = dtype (f32/f16/bf16),
// 2 = mode: 0 = one 256-wide workgroup per row (max, sum of exp, write, with
// shared-memory trees), 1 = one invocation per row (inner > 1 with many rows:
// neighbouring invocations read neighbouring columns).
// The sum of exp uses compensated partials. A row with NaN or +inf, or all
// -inf, comes out all NaN, as on the CPU (the max subtraction gives NaN).
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint LOG = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint MODE = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, out_;
    uint rows, n, inner;
} pc;

shared float sh[256];

void write_row(uint base, uint first, uint step, float m, float s) {
    float inv = 1.0 / s, lse = rlx_log(s);
    for (uint j = first; j < pc.n; j += step) {
        uint i = base + j * pc.inner;
        float v = load_f(pc.x, DT, i) - m;
        store_f(pc.out_, DT, i, LOG == 1u ? v - lse : rlx_exp(v) * inv);
    }
}

void main() {
    if (MODE == 1u) {
        uint q = LIN_ID(256u);
        if (q >= pc.rows) return;
        uint base = (q / pc.inner) * pc.n * pc.inner + q % pc.inner;
        float m = -F_INF;
        for (uint j = 0; j < pc.n; j++) m = nan_max(load_f(pc.x, DT, base + j * pc.inner), m);
        float s = 0.0, c = 0.0;
        for (uint j = 0; j < pc.n; j++) kahan_add(s, c, rlx_exp(load_f(pc.x, DT, base + j * pc.inner) - m));
        write_row(base, 0u, 1u, m, s - c);
        return;
    }
    uint q = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (q >= pc.rows) return;   // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint base = (q / pc.inner) * pc.n * pc.inner + q % pc.inner;
    float m = -F_INF;
    for (uint j = t; j < pc.n; j += 256u) m = nan_max(load_f(pc.x, DT, base + j * pc.inner), m);
    sh[t] = m;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1) {
        if (t < h) sh[t] = nan_max(sh[t + h], sh[t]);
        barrier();
    }
    m = sh[0];
    barrier();
    float s = 0.0, c = 0.0;
    for (uint j = t; j < pc.n; j += 256u) kahan_add(s, c, rlx_exp(load_f(pc.x, DT, base + j * pc.inner) - m));
    sh[t] = s - c;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1) {
        if (t < h) sh[t] += sh[t + h];
        barrier();
    }
    write_row(base, t, 256u, m, sh[0]);
}
