// reduce.comp — REDUCE_SUM/MEAN/MAX/MIN/PROD over an axes mask and
// ARGMAX/ARGMIN along one axis.
//
// The lowering coalesces the input's dims into <= 4 kept groups and <= 4
// reduced groups (sizes and element strides); output element o enumerates the
// kept groups row-major (the output is dense in them whatever keepdim says),
// and reduced element r enumerates the reduced groups the same way. For
// argmax/argmin the reduced group is the axis, so r is the index returned.
//
// Spec constants: 0 = op (ROP_*), 1 = input dtype, 2 = mode, 3 = output
// dtype (the input's, except for the split path's passes), 4 = TC (mode 2):
//   mode 0: one 256-wide workgroup per output; each invocation folds a
//           strided share of the reduced elements, then a shared-memory tree;
//   mode 1: one invocation per output, a serial fold (inner group kept, many
//           outputs: neighbouring invocations read neighbouring elements);
//   mode 2: first pass of a split reduction (float sum/mean/max/min): a
//           workgroup folds chunk s (pc.chunk reduced elements) of TC
//           adjacent outputs, 256 / TC lanes per output, and stores the f32
//           partial at out[o * pc.splits + s]. A second dispatch (mode 0 or 1
//           over the partials, f32 in, the node's dtype out) folds each
//           output's partials in a fixed order, so the result is the same
//           every run; no atomics.
// Float sums use compensated (Kahan) partials and a pairwise tree, which
// keeps them within a few ulp of the CPU's double accumulation; float
// products carry a separate exponent, so partial products do not underflow
// or overflow where the CPU's double would not. Integers
// accumulate in 64 bits and wrap to the dtype's width on store, like the CPU.
// max/min propagate NaN; argmax/argmin return the first extreme index, and a
// NaN counts as the extreme (the first NaN wins).
#version 450
#include "ew_common.glsl"

layout(constant_id = 0) const uint OP = 0;
layout(constant_id = 1) const uint DT = 0;
layout(constant_id = 2) const uint MODE = 0;
layout(constant_id = 3) const uint ODT = 0;
layout(constant_id = 4) const uint TC = 1;
layout(local_size_x = 256) in;

#define ROP_SUM    0u
#define ROP_MEAN   1u
#define ROP_MAX    2u
#define ROP_MIN    3u
#define ROP_PROD   4u
#define ROP_ARGMAX 5u
#define ROP_ARGMIN 6u

layout(push_constant) uniform PC {
    uint64_t x, out_;
    uint n_out, count;
    uint nk, nr;
    uint ksz[4], kst[4];
    uint rsz[4], rst[4];
    uint chunk, splits;   // mode 2: reduced elements per split, splits per output
    uint mean_n;          // mean's divisor (the count of the original reduction)
    uint pad0;
} pc;

const bool IS_ARG = OP == ROP_ARGMAX || OP == ROP_ARGMIN;
const bool IS_MAX = OP == ROP_MAX || OP == ROP_ARGMAX;
const bool IS_SUM = OP == ROP_SUM || OP == ROP_MEAN;
const uint TR = 256u / TC;   // mode 2: lanes per output

shared float sh_f[256];
shared int64_t sh_l[256];
shared uint sh_i[256];

uint kept_off(uint o) {
    uint off = 0;
    for (int d = int(pc.nk) - 1; d >= 0; d--) {
        uint q = o / pc.ksz[d];
        off += (o - q * pc.ksz[d]) * pc.kst[d];
        o = q;
    }
    return off;
}

uint red_off(uint r) {
    if (pc.nr == 1u) return r * pc.rst[0];   // r < rsz[0]: no division per element
    uint off = 0;
    for (int d = int(pc.nr) - 1; d >= 0; d--) {
        uint q = r / pc.rsz[d];
        off += (r - q * pc.rsz[d]) * pc.rst[d];
        r = q;
    }
    return off;
}

float identity_f() {
    if (OP == ROP_PROD) return 1.0;
    if (OP == ROP_MAX || OP == ROP_ARGMAX) return -F_INF;
    if (OP == ROP_MIN || OP == ROP_ARGMIN) return F_INF;
    return 0.0;
}

int64_t identity_l() {
    if (OP == ROP_PROD) return 1l;
    if (OP == ROP_MAX || OP == ROP_ARGMAX) return -0x7fffffffffffffffl - 1l;
    if (OP == ROP_MIN || OP == ROP_ARGMIN) return 0x7fffffffffffffffl;
    return 0l;
}

// Product as m * 2^e: renormalizes m after each multiplication.
void prod_fold(inout float m, inout int e, float v) {
    m *= v;
    if (m != 0.0 && !isinf(m) && !isnan(m)) {
        int k;
        m = frexp(m, k);
        e += k;
    }
}

// max/min folding with NaN propagation (a NaN accumulator stays).
float fold_f(float a, float v) {
    if (isnan(a)) return a;
    if (isnan(v)) return v;
    return IS_MAX ? max(a, v) : min(a, v);
}

int64_t fold_l(int64_t a, int64_t v) {
    if (IS_SUM) return a + v;
    if (OP == ROP_PROD) return a * v;
    return IS_MAX ? max(a, v) : min(a, v);
}

// (v, vi) beats (b, bi): NaN beats numbers, then the extreme, ties by index.
bool better_f(float v, uint vi, float b, uint bi) {
    if (isnan(v)) return !isnan(b) || vi < bi;
    if (isnan(b)) return false;
    if (IS_MAX ? v > b : v < b) return true;
    return v == b && vi < bi;
}

bool better_l(int64_t v, uint vi, int64_t b, uint bi) {
    if (IS_MAX ? v > b : v < b) return true;
    return v == b && vi < bi;
}

// Folds reduced elements r = first, first + step, ... < end of output o's row.
void fold_row(uint base, uint first, uint step, uint end, out float af, out int64_t al, out uint ai) {
    bool isf = dt_is_float(DT);
    float s = 0.0, c = 0.0;   // Kahan sum: s - c is the running total
    float a = identity_f();
    int64_t l = identity_l();
    int e = 0;   // float product: exponent of a
    uint bi = 0xffffffffu;
    for (uint r = first; r < end; r += step) {
        uint i = base + red_off(r);
        if (isf) {
            float v = load_f(pc.x, DT, i);
            if (IS_SUM) {
                kahan_add(s, c, v);
            } else if (IS_ARG) {
                if (bi == 0xffffffffu || better_f(v, r, a, bi)) { a = v; bi = r; }
            } else if (OP == ROP_PROD) {
                prod_fold(a, e, v);
            } else {
                a = fold_f(a, v);
            }
        } else {
            int64_t v = load_l(pc.x, DT, i);
            if (IS_ARG) {
                if (bi == 0xffffffffu || better_l(v, r, l, bi)) { l = v; bi = r; }
            } else {
                l = fold_l(l, v);
            }
        }
    }
    af = IS_SUM ? s - c : a;
    al = (isf && OP == ROP_PROD) ? int64_t(e) : l;
    ai = bi;
}

void write_out(uint o, float f, int64_t l, uint idx) {
    if (IS_ARG) {
        I32Buf(pc.out_).v[o] = int(idx);
    } else if (dt_is_float(DT)) {
        if (OP == ROP_MEAN) f = f / float(pc.mean_n);
        if (OP == ROP_PROD) f = scale2(f, int(clamp(l, -300l, 300l)));
        store_f(pc.out_, ODT, o, f);
    } else {
        store_l(pc.out_, ODT, o, l);
    }
}

// Mode 2: a float fold of r = first, first + step, ... < end, four loads
// issued before they are folded (in the same order as one at a time), so
// that a lane keeps several reads in flight.
float fold_chunk(uint base, uint first, uint step, uint end) {
    float s = 0.0, c = 0.0;
    float a = identity_f();
    uint r = first;
    for (; r + 3u * step < end; r += 4u * step) {
        float v0 = load_f(pc.x, DT, base + red_off(r));
        float v1 = load_f(pc.x, DT, base + red_off(r + step));
        float v2 = load_f(pc.x, DT, base + red_off(r + 2u * step));
        float v3 = load_f(pc.x, DT, base + red_off(r + 3u * step));
        if (IS_SUM) {
            kahan_add(s, c, v0);
            kahan_add(s, c, v1);
            kahan_add(s, c, v2);
            kahan_add(s, c, v3);
        } else {
            a = fold_f(fold_f(fold_f(fold_f(a, v0), v1), v2), v3);
        }
    }
    for (; r < end; r += step) {
        float v = load_f(pc.x, DT, base + red_off(r));
        if (IS_SUM) kahan_add(s, c, v);
        else a = fold_f(a, v);
    }
    return IS_SUM ? s - c : a;
}

void split_pass() {
    uint wg = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    uint tile = wg / pc.splits, s = wg - tile * pc.splits;
    if (tile * TC >= pc.n_out) return;   // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    uint col = t % TC, row = t / TC;   // adjacent lanes: adjacent outputs
    uint o = tile * TC + col;
    uint r0 = s * pc.chunk;
    uint r1 = min(r0 + pc.chunk, pc.count);
    sh_f[t] = o < pc.n_out ? fold_chunk(kept_off(o), r0 + row, TR, r1) : 0.0;
    barrier();
    for (uint h = TR / 2u; h > 0u; h >>= 1) {
        if (row < h) {
            float b = sh_f[t + h * TC];
            sh_f[t] = IS_SUM ? sh_f[t] + b : fold_f(sh_f[t], b);
        }
        barrier();
    }
    if (row == 0u && o < pc.n_out) F32Buf(pc.out_).v[o * pc.splits + s] = sh_f[t];
}

void main() {
    if (MODE == 2u) {
        split_pass();
        return;
    }
    if (MODE == 1u) {
        uint o = LIN_ID(256u);
        if (o >= pc.n_out) return;
        float f;
        int64_t l;
        uint idx;
        fold_row(kept_off(o), 0u, 1u, pc.count, f, l, idx);
        write_out(o, f, l, idx);
        return;
    }
    uint o = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
    if (o >= pc.n_out) return;   // uniform across the workgroup
    uint t = gl_LocalInvocationID.x;
    float f;
    int64_t l;
    uint idx;
    fold_row(kept_off(o), t, 256u, pc.count, f, l, idx);
    sh_f[t] = f;
    sh_l[t] = l;
    sh_i[t] = idx;
    barrier();
    for (uint h = 128u; h > 0u; h >>= 1) {
        if (t < h) {
            float fb = sh_f[t + h];
            int64_t lb = sh_l[t + h];
            uint ib = sh_i[t + h];
            if (IS_ARG) {
                // an empty share has index ~0u and never wins
                bool take = ib != 0xffffffffu && (sh_i[t] == 0xffffffffu ||
                            (dt_is_float(DT) ? better_f(fb, ib, sh_f[t], sh_i[t]) : better_l(lb, ib, sh_l[t], sh_i[t])));
                if (take) { sh_f[t] = fb; sh_l[t] = lb; sh_i[t] = ib; }
            } else if (dt_is_float(DT) && OP == ROP_PROD) {
                float m = sh_f[t];
                int e = int(sh_l[t] + lb);
                prod_fold(m, e, fb);
                sh_f[t] = m;
                sh_l[t] = int64_t(e);
            } else if (dt_is_float(DT)) {
                sh_f[t] = IS_SUM ? sh_f[t] + fb : fold_f(sh_f[t], fb);
            } else {
                sh_l[t] = fold_l(sh_l[t], lb);
            }
        }
        barrier();
    }
    if (t == 0u) write_out(o, sh_f[0], sh_l[0], sh_i[0]);
}
