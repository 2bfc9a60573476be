/*
 * resize_geom.h — a resize node's attributes as arrays, and the per-axis
 * sampling rule every backend shares (ONNX Resize, opsets 13-19): the source
 * coordinate of an output index, its taps (index, weight) and, for the
 * backward, the outputs that read a given input index.
 *
 * The coordinate is affine in the output index, x = o * a + b, with a and b
 * worked out in double from the mode, the scale and the sizes, then rounded
 * to f32; x itself is computed in f32 with no contraction, here and in
 * shaders/resize.comp alike, so the CPU and the GPU pick the same nearest
 * index. (PyTorch's nearest computes floor(o * (float)(in / out)) the same
 * way.) Taps outside the input are clamped to its edge, as the ONNX
 * reference's edge padding does, unless cubic's exclude_outside drops them.
 */
#ifndef RLX_IR_RESIZE_GEOM_H
#define RLX_IR_RESIZE_GEOM_H

#include "ir/ir.h"
#include <math.h>

enum { IR_RESIZE_NEAREST = 0, IR_RESIZE_LINEAR = 1, IR_RESIZE_CUBIC = 2 };
enum {
    IR_COORD_HALF_PIXEL = 0, IR_COORD_HALF_PIXEL_SYMMETRIC = 1, IR_COORD_PYTORCH_HALF_PIXEL = 2,
    IR_COORD_ALIGN_CORNERS = 3, IR_COORD_ASYMMETRIC = 4,
};
enum { IR_NEAREST_ROUND_PREFER_FLOOR = 0, IR_NEAREST_ROUND_PREFER_CEIL = 1, IR_NEAREST_FLOOR = 2, IR_NEAREST_CEIL = 3 };

typedef struct ir_resize_geom {
    int     dims, mode, coord, nearest;
    bool    exclude_outside;
    int64_t out[3], in[3];
    double  scale[3], cubic_a;
} ir_resize_geom;

static inline void ir_resize_geom_of(const ir_node *n, ir_resize_geom *p) {
    p->dims = (int)ir_attr_resize_dims(n), p->mode = (int)ir_attr_resize_mode(n);
    p->coord = (int)ir_attr_resize_coord(n), p->nearest = (int)ir_attr_resize_nearest(n);
    p->exclude_outside = ir_attr_resize_exclude_outside(n) != 0;
    p->out[0] = ir_attr_resize_out0(n), p->out[1] = ir_attr_resize_out1(n), p->out[2] = ir_attr_resize_out2(n);
    p->in[0] = ir_attr_resize_in0(n), p->in[1] = ir_attr_resize_in1(n), p->in[2] = ir_attr_resize_in2(n);
    p->scale[0] = ir_attr_resize_scale0(n), p->scale[1] = ir_attr_resize_scale1(n), p->scale[2] = ir_attr_resize_scale2(n);
    p->cubic_a = ir_attr_resize_cubic_a(n);
}

static inline void ir_resize_geom_set(ir_node *n, const ir_resize_geom *p) {
    ir_attr_set_resize_dims(n, p->dims), ir_attr_set_resize_mode(n, p->mode);
    ir_attr_set_resize_coord(n, p->coord), ir_attr_set_resize_nearest(n, p->nearest);
    ir_attr_set_resize_exclude_outside(n, p->exclude_outside);
    ir_attr_set_resize_out0(n, p->out[0]), ir_attr_set_resize_out1(n, p->out[1]), ir_attr_set_resize_out2(n, p->out[2]);
    ir_attr_set_resize_in0(n, p->in[0]), ir_attr_set_resize_in1(n, p->in[1]), ir_attr_set_resize_in2(n, p->in[2]);
    ir_attr_set_resize_scale0(n, p->scale[0]), ir_attr_set_resize_scale1(n, p->scale[1]);
    ir_attr_set_resize_scale2(n, p->scale[2]), ir_attr_set_resize_cubic_a(n, p->cubic_a);
}

/* One spatial axis: x = o * a + b over input [0, in), out outputs. */
typedef struct ir_resize_axis {
    float   a, b, cubic_a;
    int64_t in, out;
    int     mode, nearest;
    bool    exclude_outside;
} ir_resize_axis;

/* Axis i of the geometry (i < dims). The formulas are the ONNX spec's, with
 * length_resized the integer output size (as onnxruntime and PyTorch). */
static inline ir_resize_axis ir_resize_axis_of(const ir_resize_geom *p, int i) {
    ir_resize_axis ax = {.in = p->in[i], .out = p->out[i], .mode = p->mode, .nearest = p->nearest,
                         .exclude_outside = p->exclude_outside, .cubic_a = (float)p->cubic_a};
    double s = p->scale[i], lin = (double)p->in[i], lout = (double)p->out[i], a = 1.0 / s, b = 0;
    switch (p->coord) {
    case IR_COORD_HALF_PIXEL: b = 0.5 / s - 0.5; break;
    case IR_COORD_HALF_PIXEL_SYMMETRIC: {
        double adjustment = lout / (s * lin), center = lin / 2;
        b = center * (1 - adjustment) + 0.5 / s - 0.5;
        break;
    }
    case IR_COORD_PYTORCH_HALF_PIXEL:
        if (p->out[i] > 1) b = 0.5 / s - 0.5;
        else a = 0;
        break;
    case IR_COORD_ALIGN_CORNERS: a = p->out[i] > 1 ? (lin - 1) / (lout - 1) : 0; break;
    default: break;   /* asymmetric */
    }
    ax.a = (float)a, ax.b = (float)b;
    return ax;
}

/* The source coordinate of output o, in f32 (two rounded steps, never fused). */
static inline float ir_resize_coord_of(const ir_resize_axis *ax, int64_t o) {
    volatile float prod = (float)o * ax->a;   /* a separate rounding, whatever the compiler's contraction */
    return prod + ax->b;
}

static inline int64_t ir_resize_clamp(int64_t i, int64_t n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

/* The unclamped index tap 0 is relative to (nearest: the pick; else floor(x)),
 * and the taps' offsets from it: [kmin, kmax]. */
static inline int64_t ir_resize_base(const ir_resize_axis *ax, int64_t o) {
    float x = ir_resize_coord_of(ax, o), f = floorf(x), fr = x - f;
    if (ax->mode != IR_RESIZE_NEAREST) return (int64_t)f;
    switch (ax->nearest) {
    case IR_NEAREST_ROUND_PREFER_FLOOR: return (int64_t)f + (fr > 0.5f);
    case IR_NEAREST_ROUND_PREFER_CEIL: return (int64_t)f + (fr >= 0.5f);
    case IR_NEAREST_FLOOR: return (int64_t)f;
    default: return (int64_t)f + (fr > 0);
    }
}
static inline int ir_resize_kmin(int mode) { return mode == IR_RESIZE_CUBIC ? -1 : 0; }
static inline int ir_resize_kmax(int mode) { return mode == IR_RESIZE_CUBIC ? 2 : mode == IR_RESIZE_LINEAR ? 1 : 0; }

/* Output o's taps: input indices (in range) and weights; returns their count. */
static inline int ir_resize_taps(const ir_resize_axis *ax, int64_t o, int64_t *idx, float *w) {
    int64_t base = ir_resize_base(ax, o);
    if (ax->mode == IR_RESIZE_NEAREST) {
        idx[0] = ir_resize_clamp(base, ax->in), w[0] = 1;
        return 1;
    }
    float x = ir_resize_coord_of(ax, o), t = x - floorf(x);
    if (ax->mode == IR_RESIZE_LINEAR) {
        idx[0] = ir_resize_clamp(base, ax->in), w[0] = 1 - t;
        idx[1] = ir_resize_clamp(base + 1, ax->in), w[1] = t;
        return 2;
    }
    float A = ax->cubic_a, u = t + 1, v = 1 - t, z = v + 1;   /* the ONNX reference's coefficients */
    w[0] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
    w[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
    w[2] = ((A + 2) * v - (A + 3)) * v * v + 1;
    w[3] = ((A * z - 5 * A) * z + 8 * A) * z - 4 * A;
    float sum = 0;
    for (int k = 0; k < 4; k++) {
        int64_t j = base - 1 + k;
        if (ax->exclude_outside && (j < 0 || j >= ax->in)) w[k] = 0;
        sum += w[k];
        idx[k] = ir_resize_clamp(j, ax->in);
    }
    if (ax->exclude_outside)
        for (int k = 0; k < 4; k++) w[k] /= sum;
    return 4;
}

/* The outputs [*lo, *hi) whose taps may reach input i: base(o) within
 * [i - kmax, i - kmin], widened at the edges where taps are clamped. base is
 * monotone in o (a >= 0), so two binary searches find the range. */
static inline void ir_resize_grad_range(const ir_resize_axis *ax, int64_t i, int64_t *lo, int64_t *hi) {
    int64_t want_lo = i == 0 ? INT64_MIN : i - ir_resize_kmax(ax->mode);
    int64_t want_hi = i == ax->in - 1 ? INT64_MAX : i - ir_resize_kmin(ax->mode);
    int64_t l = 0, h = ax->out;   /* first o with base >= want_lo */
    while (l < h) {
        int64_t m = l + (h - l) / 2;
        if (ir_resize_base(ax, m) >= want_lo) h = m;
        else l = m + 1;
    }
    *lo = l;
    h = ax->out;                 /* first o with base > want_hi */
    while (l < h) {
        int64_t m = l + (h - l) / 2;
        if (ir_resize_base(ax, m) > want_hi) h = m;
        else l = m + 1;
    }
    *hi = l;
}

/* The weight output o gives input i (the sum of o's taps that land on i). */
static inline float ir_resize_weight(const ir_resize_axis *ax, int64_t o, int64_t i) {
    int64_t idx[4];
    float w[4], s = 0;
    int n = ir_resize_taps(ax, o, idx, w);
    for (int k = 0; k < n; k++)
        if (idx[k] == i) s += w[k];
    return s;
}

/* resize_grad(dy) with resize's attributes (builder_vision.c), for autodiff. */
rlx_node ir_resize_grad(rlx_graph *g, const ir_node *resize, rlx_node dy);

#endif
