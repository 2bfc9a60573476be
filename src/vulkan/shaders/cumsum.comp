// cumsum.comp — CUMSUM: inclusive prefix sum along an axis.
//
// A line is the n elements along the axis at one (outer, inner) position:
// element j of line q sits at (q / inner) * n * inner + q % inner + j * inner.
// Spec constants: 0 = dtype, 1 = mode:
//   mode 0: one 256-wide workgroup per line; invocation t scans a contiguous
//           chunk of the line, the chunk totals are scanned in shared memory,
//           then each invocation rescans its chunk from its offset;
//   mode 1: one invocation per line, a serial scan (inner > 1, many lines).
// Floats scan with a compensated (Kahan) running sum, staying within an ulp
// or so of the CPU's double accumulation; integers scan in 64 bits and wrap
// to the dtype's width on store.
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint DT = 0;
layout(constant_id = 1) const uint MODE = 0;
layout(local_size_x = 256) in;

layout(push_constant) uniform PC {
    uint64_t x, out_;
    uint lines, n, inner;
} pc;

shared float sh_f[256];
shared float sh_c[256];
shared int64_t sh_l[256];

// Scans elements [j0, j1) of the line from the running state (s, c) / l;
// writes the outputs when `write`.
void scan(uint base, uint j0, uint j1, inout float s, inout float c, inout int64_t l, bool write) {
    bool isf = dt_is_float(DT);
    for (uint j = j0; j < j1; j++) {
        uint i = base + j * pc.inner;
        if (isf) {
            kahan_add(s, c, load_f(pc.x, DT, i));
            if (write) store_f(pc.out_, DT, i, s - c);
        } else {
            l += load_l(pc.x, DT, i);
            if (write) store_l(pc.out_, DT, i, l);
        }
    }
}

void main() {
    if (MODE == 1u) {
        uint q = LIN_ID(256u);
        if (q >= pc.lines) return;
        uint base = (q / pc.inner) * pc.n * pc.inner + q % pc.inner;
        float s = 0.0, c = 0.0;
        int64_t l = 0l;
        scan(base, 0u, pc.n, s, c, l, true);
        return;
    }
    uint q = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (q >= pc.lines) return;   // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint base = (q / pc.inner) * pc.n * pc.inner + q % pc.inner;
    uint chunk = (pc.n + 255u) / 256u;
    uint j0 = min(t * chunk, pc.n), j1 = min(j0 + chunk, pc.n);
    float s = 0.0, c = 0.0;
    int64_t l = 0l;
    scan(base, j0, j1, s, c, l, false);
    sh_f[t] = s;
    sh_c[t] = c;
    sh_l[t] = l;
    barrier();
    if (t == 0u) {
        // exclusive scan of the chunk totals, carried as a compensated pair
        float rs = 0.0, rc = 0.0;
        int64_t rl = 0l;
        for (uint k = 0u; k < 256u; k++) {
            float fs = sh_f[k], fc = sh_c[k];
            int64_t fl = sh_l[k];
            sh_f[k] = rs;
            sh_c[k] = rc;
            sh_l[k] = rl;
            kahan_add(rs, rc, fs - fc);
            rl += fl;
        }
    }
    barrier();
    s = sh_f[t];
    c = sh_c[t];
    l = sh_l[t];
    scan(base, j0, j1, s, c, l, true);
}
