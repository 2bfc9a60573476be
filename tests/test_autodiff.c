/*
 * test_autodiff.c — rlx_gradients against float64 finite differences
 * (gradcheck.h), op by op on random shapes: elementwise and activations with
 * broadcasting, matmul in every transpose form and with batch broadcasting,
 * matmul_bias_act, reductions, softmax, the norms, movement, gathers, cumsum,
 * attention (masks, GQA), rope and softmax cross-entropy. Then the API's
 * contract: errors, zeros for an unused input, symbolic dims. Every op test
 * also runs as vk_autodiff_<name>: the same graphs on Vulkan against the CPU.
 */
#include "gradcheck.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static ref_shape shp(int rank, ...) {
    ref_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int i = 0; i < rank; i++) s.d[i] = va_arg(ap, int64_t);
    va_end(ap);
    return s;
}
#define S(...) shp((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), __VA_ARGS__)
#define S0 shp(0)

/* ---------------------------------------------------------------- binary */

typedef rlx_node (*bin_builder)(rlx_graph *, rlx_node, rlx_node);
static const struct { const char *name; bin_builder fn; ref_binop op; double lo, hi; } binops[] = {
    {"add", rlx_add, REF_ADD, -1, 1}, {"sub", rlx_sub, REF_SUB, -1, 1}, {"mul", rlx_mul, REF_MUL, -1, 1},
    {"div", rlx_div, REF_DIV, 0.5, 2}, {"max", rlx_max, REF_MAX, -1, 1}, {"min", rlx_min, REF_MIN, -1, 1},
    {"pow", rlx_pow, REF_POW, 0.5, 2},
};

static rlx_node build_bin(rlx_graph *g, const rlx_node *x, const gc_case *c) { return binops[c->ia[0]].fn(g, x[0], x[1]); }
static void fwd_bin(const double *const *x, double *out, const gc_case *c) {
    ref_binary(binops[c->ia[0]].op, x[0], c->s[0], x[1], c->s[1], out);
}

GC_TEST(binary_broadcast) {
    for (size_t op = 0; op < sizeof binops / sizeof binops[0]; op++)
        for (int t = 0; t < 4; t++) {
            gc_case c = {.what = binops[op].name, .n = 2, .lo = binops[op].lo, .hi = binops[op].hi,
                         .build = build_bin, .fwd = fwd_bin};
            c.ia[0] = (int64_t)op;
            do ops_rand_bcast_pair(&c.s[0], &c.s[1]);
            while (ref_numel(&c.s[0]) > 300 || ref_numel(&c.s[1]) > 300);
            CHECK(ref_broadcast(&c.s[0], &c.s[1], &c.so));
            CHECK(gradcheck(&c));
        }
    ops_free_all();
}

/* ----------------------------------------------------------------- unary */

typedef rlx_node (*un_builder)(rlx_graph *, rlx_node);
static const struct { const char *name; un_builder fn; ref_unop op; double lo, hi; } unops[] = {
    {"relu", rlx_relu, REF_RELU, -2, 2}, {"sigmoid", rlx_sigmoid, REF_SIGMOID, -3, 3},
    {"tanh", rlx_tanh, REF_TANH, -2, 2}, {"exp", rlx_exp, REF_EXP, -2, 2}, {"log", rlx_log, REF_LOG, 0.3, 3},
    {"sqrt", rlx_sqrt, REF_SQRT, 0.3, 3}, {"rsqrt", rlx_rsqrt, REF_RSQRT, 0.3, 3}, {"neg", rlx_neg, REF_NEG, -2, 2},
    {"abs", rlx_abs, REF_ABS, -2, 2}, {"gelu", rlx_gelu, REF_GELU, -4, 4},
    {"gelu_tanh", rlx_gelu_tanh, REF_GELU_TANH, -4, 4}, {"silu", rlx_silu, REF_SILU, -4, 4},
    {"round", rlx_round, REF_ROUND, -3, 3}, {"sin", rlx_sin, REF_SIN, -3, 3}, {"cos", rlx_cos, REF_COS, -3, 3},
    {"tan", rlx_tan, REF_TAN, -1, 1}, {"atan", rlx_atan, REF_ATAN, -3, 3}, {"erf", rlx_erf, REF_ERF, -2, 2},
};

static rlx_node build_un(rlx_graph *g, const rlx_node *x, const gc_case *c) { return unops[c->ia[0]].fn(g, x[0]); }
static void fwd_un(const double *const *x, double *out, const gc_case *c) {
    ref_unary(unops[c->ia[0]].op, x[0], ref_numel(&c->s[0]), out);
}

GC_TEST(unary) {
    for (size_t op = 0; op < sizeof unops / sizeof unops[0]; op++) {
        gc_case c = {.what = unops[op].name, .n = 1, .lo = unops[op].lo, .hi = unops[op].hi,
                     .build = build_un, .fwd = fwd_un};
        c.ia[0] = (int64_t)op;
        c.s[0] = c.so = ops_rand_shape((int)test_rand_int(0, 3), 200);
        CHECK(gradcheck(&c));
    }
    ops_free_all();
}

/* where (the condition from a third input: no gradient flows through it), fma, clamp, cast */
static rlx_node build_misc(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    switch (c->ia[0]) {
    case 0: return rlx_where(g, rlx_gt(g, x[2], rlx_scalar(g, RLX_F32, 0)), x[0], x[1]);
    case 1: return rlx_fma(g, x[0], x[1], x[2]);
    case 2: return rlx_clamp(g, x[0], -0.5, 0.5);
    default: {   /* through f64 on the CPU; f16 on Vulkan, which has no f64 kernels */
        rlx_dtype wide = gc_get_mode() == GC_VULKAN ? RLX_F16 : RLX_F64;
        rlx_node d = rlx_cast(g, x[0], wide);
        return rlx_cast(g, rlx_mul(g, d, rlx_cast(g, x[1], wide)), RLX_F32);
    }
    }
}
static void fwd_misc(const double *const *x, double *out, const gc_case *c) {
    int64_t n = ref_numel(&c->so);
    for (int64_t i = 0; i < n; i++) {
        int64_t idx[RLX_MAX_RANK];
        ref_unravel(&c->so, i, idx);
        double a = x[0][ref_bcast_offset(&c->s[0], &c->so, idx)];
        double b = c->n > 1 ? x[1][ref_bcast_offset(&c->s[1], &c->so, idx)] : 0;
        double z = c->n > 2 ? x[2][ref_bcast_offset(&c->s[2], &c->so, idx)] : 0;
        switch (c->ia[0]) {
        case 0: out[i] = z > 0 ? a : b; break;
        case 1: out[i] = a * b + z; break;
        case 2: out[i] = a < -0.5 ? -0.5 : a > 0.5 ? 0.5 : a; break;
        default: out[i] = a * b; break;
        }
    }
}

GC_TEST(where_fma_clamp_cast) {
    static const char *names[] = {"where", "fma", "clamp", "cast"};
    for (int k = 0; k < 4; k++) {
        gc_case c = {.what = names[k], .n = k == 2 ? 1 : k == 3 ? 2 : 3, .build = build_misc, .fwd = fwd_misc};
        c.ia[0] = k;
        c.so = S(3, 4);
        c.s[0] = S(3, 4);
        c.s[1] = S(4);
        c.s[2] = S(3, 1);
        CHECK(gradcheck(&c));
    }
    ops_free_all();
}

/* ---------------------------------------------------------------- matmul */

static rlx_node build_mm(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    return rlx_matmul_ex(g, x[0], x[1], (unsigned)c->ia[0], c->n > 2 ? x[2] : RLX_NO_NODE, (rlx_activation)c->ia[1]);
}
static void fwd_mm(const double *const *x, double *out, const gc_case *c) {
    ref_shape so;
    ref_matmul_ex(x[0], c->s[0], x[1], c->s[1], (unsigned)c->ia[0], c->n > 2 ? x[2] : NULL, (rlx_activation)c->ia[1],
                  out, &so);
}

GC_TEST(matmul) {
    /* a [.., M, K] (or [.., K, M]), b [.., K, N] (or [.., N, K]); batch forms broadcast */
    static const int64_t batch_a[][2] = {{0, 0}, {2, 3}, {0, 0}, {1, 2}}, batch_b[][2] = {{0, 0}, {0, 0}, {2, 2}, {3, 2}};
    for (unsigned flags = 0; flags < 4; flags++)
        for (int b = 0; b < 4; b++) {
            int64_t M = test_rand_int(1, 5), K = test_rand_int(1, 6), N = test_rand_int(1, 5);
            gc_case c = {.what = "matmul", .n = 2, .build = build_mm, .fwd = fwd_mm};
            c.ia[0] = flags;
            bool ta = flags & RLX_MATMUL_TRANSPOSE_A, tb = flags & RLX_MATMUL_TRANSPOSE_B;
            int ra = 0, rb = 0;
            ref_shape sa = {0}, sb = {0};
            if (batch_a[b][0]) sa.d[ra++] = batch_a[b][0];
            if (batch_a[b][1] && batch_a[b][0]) sa.d[ra++] = batch_a[b][1];
            if (batch_b[b][0]) sb.d[rb++] = batch_b[b][0];
            if (batch_b[b][1] && batch_b[b][0]) sb.d[rb++] = batch_b[b][1];
            sa.d[ra++] = ta ? K : M, sa.d[ra++] = ta ? M : K;
            sb.d[rb++] = tb ? N : K, sb.d[rb++] = tb ? K : N;
            sa.rank = ra, sb.rank = rb;
            c.s[0] = sa, c.s[1] = sb;
            ref_shape ba = sa, bb = sb, bo;
            ba.rank -= 2, bb.rank -= 2;
            CHECK(ref_broadcast(&ba, &bb, &bo));
            c.so = bo;
            c.so.d[c.so.rank++] = M;
            c.so.d[c.so.rank++] = N;
            CHECK(gradcheck(&c));
        }
    ops_free_all();
}

/* conv: ia = groups, act, stride, dilation, pad_begin, pad_end (the same along every spatial dim) */
static rlx_conv_params conv_params(const gc_case *c) {
    rlx_conv_params p = {.groups = c->ia[0], .act = (rlx_activation)c->ia[1]};
    for (int i = 0; i < 3; i++) p.stride[i] = c->ia[2], p.dilation[i] = c->ia[3], p.pad_begin[i] = c->ia[4], p.pad_end[i] = c->ia[5];
    return p;
}
static rlx_node build_conv(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    rlx_conv_params p = conv_params(c);
    return rlx_conv(g, x[0], x[1], c->n > 2 ? x[2] : RLX_NO_NODE, &p);
}
static void fwd_conv(const double *const *x, double *out, const gc_case *c) {
    ref_conv_params p = {.groups = c->ia[0], .act = (int)c->ia[1]};
    for (int i = 0; i < 3; i++) p.stride[i] = c->ia[2], p.dilation[i] = c->ia[3], p.pad_begin[i] = c->ia[4], p.pad_end[i] = c->ia[5];
    ref_shape ys;
    ref_conv(x[0], c->s[0], x[1], c->s[1], c->n > 2 ? x[2] : NULL, &p, out, &ys);
}

GC_TEST(conv) {
    static const struct { int dims; int64_t N, C, O, groups, act, stride, dil, pb, pe, in, k; bool bias; } cs[] = {
        {1, 2, 3, 4, 1, RLX_ACT_NONE, 1, 1, 1, 1, 9, 3, true},
        {1, 1, 4, 2, 2, RLX_ACT_TANH, 2, 2, 2, 1, 11, 3, false},      /* output padding in the input gradient */
        {2, 2, 2, 3, 1, RLX_ACT_GELU, 2, 1, 1, 0, 6, 3, true},
        {2, 1, 4, 4, 4, RLX_ACT_SIGMOID, 1, 1, 1, 1, 5, 3, true},     /* depthwise */
        {2, 1, 2, 4, 2, RLX_ACT_SILU, 1, 2, 2, 2, 6, 2, false},
        {3, 1, 2, 2, 1, RLX_ACT_NONE, 1, 1, 1, 0, 4, 2, true},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        gc_case c = {.what = "conv", .n = cs[k].bias ? 3 : 2, .build = build_conv, .fwd = fwd_conv};
        c.ia[0] = cs[k].groups, c.ia[1] = cs[k].act, c.ia[2] = cs[k].stride, c.ia[3] = cs[k].dil, c.ia[4] = cs[k].pb, c.ia[5] = cs[k].pe;
        int r = cs[k].dims + 2;
        c.s[0].rank = c.s[1].rank = c.so.rank = r;
        c.s[0].d[0] = c.so.d[0] = cs[k].N, c.s[0].d[1] = cs[k].C;
        c.s[1].d[0] = c.so.d[1] = cs[k].O, c.s[1].d[1] = cs[k].C / cs[k].groups;
        for (int i = 0; i < cs[k].dims; i++) {
            c.s[0].d[2 + i] = cs[k].in, c.s[1].d[2 + i] = cs[k].k;
            c.so.d[2 + i] = (cs[k].in + cs[k].pb + cs[k].pe - cs[k].dil * (cs[k].k - 1) - 1) / cs[k].stride + 1;
        }
        c.s[2] = S(cs[k].O);
        CHECK_MSG(gradcheck(&c), "conv case %zu", k);
    }
    ops_free_all();
}

/* pool: ia = kind, kernel, stride, pad_begin, pad_end, ceil_mode, count_include_pad (same along every dim) */
static rlx_node build_pool(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    rlx_pool_params p = {.kind = (rlx_pool_kind)c->ia[0], .ceil_mode = (int)c->ia[5], .count_include_pad = (int)c->ia[6]};
    for (int i = 0; i < c->s[0].rank - 2; i++) p.kernel[i] = c->ia[1], p.stride[i] = c->ia[2], p.pad_begin[i] = c->ia[3], p.pad_end[i] = c->ia[4];
    return rlx_pool(g, x[0], &p);
}
static void fwd_pool(const double *const *x, double *out, const gc_case *c) {
    ref_pool_params p = {.average = c->ia[0] == RLX_AVGPOOL, .ceil_mode = c->ia[5] != 0, .count_include_pad = c->ia[6] != 0};
    for (int i = 0; i < c->s[0].rank - 2; i++) p.kernel[i] = c->ia[1], p.stride[i] = c->ia[2], p.pad_begin[i] = c->ia[3], p.pad_end[i] = c->ia[4];
    ref_shape ys;
    ref_pool(x[0], c->s[0], &p, out, &ys);
}

GC_TEST(pool) {
    static const struct { int kind; ref_shape s; int64_t k, st, pb, pe; int ceil, incl; } cs[] = {
        {RLX_MAXPOOL, {4, {2, 2, 6, 5}}, 3, 2, 1, 1, 0, 0},
        {RLX_MAXPOOL, {3, {1, 3, 9}}, 2, 2, 0, 1, 1, 0},
        {RLX_AVGPOOL, {4, {1, 2, 5, 7}}, 3, 2, 1, 1, 1, 0},
        {RLX_AVGPOOL, {4, {2, 1, 5, 5}}, 2, 2, 1, 1, 1, 1},
        {RLX_AVGPOOL, {5, {1, 1, 4, 4, 4}}, 2, 1, 0, 0, 0, 0},
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        gc_case c = {.what = "pool", .n = 1, .build = build_pool, .fwd = fwd_pool};
        c.ia[0] = cs[k].kind, c.ia[1] = cs[k].k, c.ia[2] = cs[k].st, c.ia[3] = cs[k].pb, c.ia[4] = cs[k].pe;
        c.ia[5] = cs[k].ceil, c.ia[6] = cs[k].incl;
        c.s[0] = cs[k].s;
        ref_pool_params p = {.average = cs[k].kind == RLX_AVGPOOL, .ceil_mode = cs[k].ceil, .count_include_pad = cs[k].incl};
        for (int i = 0; i < 3; i++) p.kernel[i] = cs[k].k, p.stride[i] = cs[k].st, p.pad_begin[i] = cs[k].pb, p.pad_end[i] = cs[k].pe;
        int64_t n = 1;
        for (int i = 0; i < c.s[0].rank; i++) n *= c.s[0].d[i];
        double *tmp = ops_f64(n), *out = ops_f64(n);
        ref_pool(tmp, c.s[0], &p, out, &c.so);   /* the output shape */
        CHECK_MSG(gradcheck(&c), "pool case %zu", k);
    }
    ops_free_all();
}

GC_TEST(matmul_bias_act) {
    for (int act = RLX_ACT_NONE; act <= RLX_ACT_TANH; act++) {
        gc_case c = {.what = "matmul_bias_act", .n = 3, .build = build_mm, .fwd = fwd_mm, .lo = -1, .hi = 1};
        c.ia[0] = act & 1 ? RLX_MATMUL_TRANSPOSE_B : 0;
        c.ia[1] = act;
        c.s[0] = S(2, 3, 4);
        c.s[1] = act & 1 ? S(5, 4) : S(4, 5);
        c.s[2] = S(5);
        c.so = S(2, 3, 5);
        CHECK(gradcheck(&c));
    }
    ops_free_all();
}

/* ------------------------------------------------------------ reductions */

static rlx_node build_red(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    typedef rlx_node (*red_fn)(rlx_graph *, rlx_node, uint32_t, int);
    static const red_fn fns[] = {rlx_reduce_sum, rlx_reduce_mean, rlx_reduce_max, rlx_reduce_min, rlx_reduce_prod};
    return fns[c->ia[0]](g, x[0], (uint32_t)c->ia[1], (int)c->ia[2]);
}
static void fwd_red(const double *const *x, double *out, const gc_case *c) {
    ref_reduce((ref_redop)c->ia[0], x[0], c->s[0], (uint32_t)c->ia[1], out);
}

GC_TEST(reductions) {
    static const char *names[] = {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"};
    for (int op = 0; op < 5; op++)
        for (int t = 0; t < 3; t++) {
            gc_case c = {.what = names[op], .n = 1, .build = build_red, .fwd = fwd_red, .lo = 0.5, .hi = 1.5};
            c.s[0] = S(3, 4, 2);
            c.ia[0] = op;
            c.ia[1] = t == 0 ? 0 : t == 1 ? 2 : 5;   /* all, axis 1, axes 0 and 2 */
            c.ia[2] = t == 1;
            c.so = ref_reduce_shape(c.s[0], (uint32_t)c.ia[1], (int)c.ia[2]);
            CHECK(gradcheck(&c));
        }
    ops_free_all();
}

/* -------------------------------------------------------- softmax, norms */

static rlx_node build_sm(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    return c->ia[1] ? rlx_log_softmax(g, x[0], (int)c->ia[0]) : rlx_softmax(g, x[0], (int)c->ia[0]);
}
static void fwd_sm(const double *const *x, double *out, const gc_case *c) {
    ref_softmax(x[0], c->s[0], (int)c->ia[0], (int)c->ia[1], out);
}

GC_TEST(softmax_log_softmax) {
    for (int log_form = 0; log_form < 2; log_form++)
        for (int axis = 0; axis < 3; axis++) {
            gc_case c = {.what = log_form ? "log_softmax" : "softmax", .n = 1, .build = build_sm, .fwd = fwd_sm,
                         .lo = -3, .hi = 3};
            c.s[0] = c.so = S(2, 3, 5);
            c.ia[0] = axis, c.ia[1] = log_form;
            CHECK(gradcheck(&c));
        }
    ops_free_all();
}

static rlx_node build_norm(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    rlx_node beta = c->n > 2 ? x[2] : RLX_NO_NODE;
    return c->ia[0] ? rlx_rms_norm(g, x[0], x[1], beta, 1e-5f) : rlx_layer_norm(g, x[0], x[1], beta, 1e-5f);
}
static void fwd_norm(const double *const *x, double *out, const gc_case *c) {
    ref_norm((int)c->ia[0], x[0], c->s[0], x[1], c->n > 2 ? x[2] : NULL, 1e-5, out);
}

GC_TEST(layer_norm_rms_norm) {
    for (int rms = 0; rms < 2; rms++)
        for (int beta = 0; beta < 2; beta++) {
            gc_case c = {.what = rms ? "rms_norm" : "layer_norm", .n = 2 + beta, .build = build_norm, .fwd = fwd_norm};
            int64_t D = test_rand_int(2, 9);
            c.s[0] = c.so = S(3, 2, D);
            c.s[1] = c.s[2] = S(D);
            c.ia[0] = rms;
            CHECK(gradcheck(&c));
        }
    ops_free_all();
}

/* -------------------------------------------------------------- movement */

static rlx_node build_move(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    switch (c->ia[0]) {
    case 0: { int64_t d[2] = {4, 6}; return rlx_reshape(g, x[0], 2, d); }
    case 1: { int p[3] = {2, 0, 1}; return rlx_transpose(g, x[0], p); }
    case 2: { int64_t d[3] = {2, 3, 4}; return rlx_expand(g, x[0], 3, d); }
    case 3: return rlx_slice(g, x[0], 1, 1, 3, 1);
    case 4: return rlx_slice(g, x[0], 2, 0, 4, 2);
    case 5: return rlx_slice_last(g, x[0], 0, 1);
    case 6: return rlx_concat(g, x, 2, 1);
    default: return rlx_cumsum(g, x[0], (int)c->ia[1]);
    }
}
static void fwd_move(const double *const *x, double *out, const gc_case *c) {
    switch (c->ia[0]) {
    case 0: memcpy(out, x[0], sizeof(double) * 24); break;
    case 1: { int p[3] = {2, 0, 1}; ref_transpose(x[0], c->s[0], p, out); break; }
    case 2: ref_expand(x[0], c->s[0], c->so, out); break;
    case 3: ref_slice(x[0], c->s[0], 1, 1, 3, 1, out); break;
    case 4: ref_slice(x[0], c->s[0], 2, 0, 4, 2, out); break;
    case 5: ref_slice(x[0], c->s[0], 0, c->s[0].d[0] - 1, c->s[0].d[0], 1, out); break;
    case 6: ref_concat(x, c->s, 2, 1, out); break;
    default: ref_cumsum(x[0], c->s[0], (int)c->ia[1], out); break;
    }
}

GC_TEST(movement) {
    static const char *names[] = {"reshape", "transpose", "expand", "slice", "slice step 2", "slice_last",
                                  "concat", "cumsum axis 0", "cumsum axis 2"};
    for (int k = 0; k < 9; k++) {
        gc_case c = {.what = names[k], .n = k == 6 ? 2 : 1, .build = build_move, .fwd = fwd_move};
        c.ia[0] = k > 7 ? 7 : k;
        c.ia[1] = k == 8 ? 2 : 0;
        c.s[0] = S(2, 3, 4);
        switch (k) {
        case 0: c.so = S(4, 6); break;
        case 1: c.so = S(4, 2, 3); break;
        case 2: c.s[0] = S(3, 1); c.so = S(2, 3, 4); break;
        case 3: c.so = S(2, 2, 4); break;
        case 4: c.s[0] = S(2, 3, 5); c.so = S(2, 3, 2); break;
        case 5: c.so = S(1, 3, 4); break;
        case 6: c.s[1] = S(2, 2, 4); c.so = S(2, 5, 4); break;
        default: c.so = c.s[0]; break;
        }
        CHECK(gradcheck(&c));
    }
    ops_free_all();
}

/* --------------------------------------------------------------- gathers */

static rlx_node build_gather(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    return c->ia[0] ? rlx_gather(g, x[0], x[1], (int)c->ia[1]) : rlx_gather_rows(g, x[0], x[1]);
}
static void fwd_gather(const double *const *x, double *out, const gc_case *c) {
    int64_t n = ref_numel(&c->si), ids[64];
    for (int64_t i = 0; i < n; i++) ids[i] = c->ints[i];
    if (c->ia[0]) ref_gather(x[0], c->s[0], ids, c->si, (int)c->ia[1], out);
    else ref_gather_rows(x[0], c->s[0], ids, n, out);
}

GC_TEST(gather_rows_and_gather) {
    int32_t ids[6] = {2, 0, 2, 4, 1, 2};   /* repeated ids: their rows' gradients add */
    gc_case c = {.what = "gather_rows", .n = 1, .build = build_gather, .fwd = fwd_gather, .has_int = true};
    c.s[0] = S(5, 3);
    c.si = S(2, 3);
    c.ints = ids;
    c.so = S(2, 3, 3);
    CHECK(gradcheck(&c));
    int32_t idx[12];
    for (int i = 0; i < 12; i++) idx[i] = (int32_t)test_rand_int(0, 3);
    gc_case d = {.what = "gather", .n = 1, .build = build_gather, .fwd = fwd_gather, .has_int = true};
    d.ia[0] = 1, d.ia[1] = 1;
    d.s[0] = S(3, 4, 2);
    d.si = d.so = S(2, 3, 2);
    d.ints = idx;
    CHECK(gradcheck(&d));
    ops_free_all();
}

/* ------------------------------------------------------ attention, rope */

static rlx_node build_att(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    rlx_mask kind = (rlx_mask)c->ia[0];
    return rlx_attention(g, x[0], x[1], x[2], kind, kind == RLX_MASK_ADDITIVE ? x[3] : RLX_NO_NODE, (float)c->fa[0]);
}
static void fwd_att(const double *const *x, double *out, const gc_case *c) {
    const ref_shape *q = &c->s[0], *k = &c->s[1];
    rlx_mask kind = (rlx_mask)c->ia[0];
    ref_attention(x[0], x[1], x[2], q->d[0], q->d[1], k->d[1], q->d[2], k->d[2], q->d[3], kind,
                  kind == RLX_MASK_ADDITIVE ? x[3] : NULL, c->s[3], c->fa[0], out);
}

GC_TEST(attention) {
    static const struct { rlx_mask kind; int64_t H, Hkv, Sq, Skv; } cases[] = {
        {RLX_MASK_NONE, 2, 2, 3, 4}, {RLX_MASK_CAUSAL, 2, 2, 4, 4}, {RLX_MASK_CAUSAL, 4, 2, 2, 5},
        {RLX_MASK_ADDITIVE, 2, 1, 3, 3},
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        int64_t B = 2, D = 4;
        gc_case c = {.what = "attention", .n = cases[t].kind == RLX_MASK_ADDITIVE ? 4 : 3, .build = build_att,
                     .fwd = fwd_att, .lo = -1.5, .hi = 1.5};
        c.ia[0] = cases[t].kind;
        c.fa[0] = 0.6;
        c.s[0] = c.so = S(B, cases[t].H, cases[t].Sq, D);
        c.s[1] = c.s[2] = S(B, cases[t].Hkv, cases[t].Skv, D);
        c.s[3] = S(1, 1, cases[t].Sq, cases[t].Skv);
        CHECK(gradcheck(&c));
    }
    ops_free_all();
}

static rlx_node build_rope(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    int32_t off = (int32_t)c->ia[1];
    int64_t one = 1;
    rlx_node o = rlx_constant(g, RLX_I32, 1, &one, &off);
    return rlx_rope(g, x[0], o, (rlx_rope_style)c->ia[0], 10000.0f, (int)c->ia[2]);
}
static void fwd_rope(const double *const *x, double *out, const gc_case *c) {
    const ref_shape *s = &c->s[0];
    ref_rope(x[0], s->d[0], s->d[1], s->d[2], s->d[3], c->ia[1], (rlx_rope_style)c->ia[0], 10000.0, (int)c->ia[2], out);
}

GC_TEST(rope) {
    for (int style = 0; style < 2; style++)
        for (int partial = 0; partial < 2; partial++) {
            gc_case c = {.what = style ? "rope gpt-j" : "rope neox", .n = 1, .build = build_rope, .fwd = fwd_rope};
            c.ia[0] = style, c.ia[1] = 3, c.ia[2] = partial ? 4 : 8;
            c.s[0] = c.so = S(1, 2, 3, 8);
            CHECK(gradcheck(&c));
        }
    ops_free_all();
}

static rlx_node build_ce(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    (void)c;
    return rlx_softmax_cross_entropy(g, x[0], x[1]);
}
static void fwd_ce(const double *const *x, double *out, const gc_case *c) {
    out[0] = ref_ce_loss(x[0], c->s[0].d[0], c->s[0].d[1], c->ints);
}

GC_TEST(softmax_cross_entropy) {
    int32_t labels[5] = {0, 3, 2, 3, 1};
    gc_case c = {.what = "softmax_cross_entropy", .n = 1, .build = build_ce, .fwd = fwd_ce, .has_int = true,
                 .lo = -2, .hi = 2};
    c.s[0] = S(5, 4);
    c.si = S(5);
    c.ints = labels;
    c.so = S0;
    CHECK(gradcheck(&c));
    ops_free_all();
}

/* A small MLP end to end: chain rule across ops, one input used twice. */
static rlx_node build_mlp(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    (void)c;
    rlx_node h = rlx_gelu(g, rlx_matmul_ex(g, x[0], x[1], RLX_MATMUL_TRANSPOSE_B, RLX_NO_NODE, RLX_ACT_NONE));
    h = rlx_layer_norm(g, rlx_add(g, h, x[0]), x[2], RLX_NO_NODE, 1e-5f);
    return rlx_softmax(g, rlx_mul(g, h, x[0]), -1);
}
static void fwd_mlp(const double *const *x, double *out, const gc_case *c) {
    double h[12], t[12];
    ref_shape sh;
    ref_matmul_ex(x[0], c->s[0], x[1], c->s[1], REF_MM_TB, NULL, RLX_ACT_NONE, h, &sh);
    for (int i = 0; i < 12; i++) h[i] = ref_unop_apply(REF_GELU, h[i]) + x[0][i];
    ref_norm(0, h, c->s[0], x[2], NULL, 1e-5, t);
    for (int i = 0; i < 12; i++) t[i] *= x[0][i];
    ref_softmax(t, c->s[0], 1, 0, out);
}

GC_TEST(chain_mlp) {
    gc_case c = {.what = "mlp", .n = 3, .build = build_mlp, .fwd = fwd_mlp};
    c.s[0] = c.so = S(3, 4);
    c.s[1] = S(4, 4);
    c.s[2] = S(4);
    CHECK(gradcheck(&c));
    ops_free_all();
}

/* -------------------------------------------------------------- contract */

TEST(autodiff_errors_leave_the_graph_unchanged) {
    rlx_graph *g = ops_graph();
    int64_t d[2] = {2, 4};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, d);
    rlx_node ids = rlx_input(g, "ids", RLX_I32, 2, d);
    rlx_node v;
    CHECK_OK(rlx_topk(g, x, 2, &v, NULL));
    rlx_node loss = rlx_reduce_sum(g, v, 0, 0), gr = 7;
    char *before = rlx_graph_dump(g);
    CHECK(before);
    CHECK_STATUS(rlx_gradients(g, loss, 1, &x, &gr), RLX_STATUS_UNSUPPORTED);
    CHECK_MSG(strstr(rlx_last_error(), "topk_values"), "message names the op: %s", rlx_last_error());
    CHECK(gr == RLX_NO_NODE);
    char *after = rlx_graph_dump(g);
    bool same = after && strcmp(before, after) == 0;
    free(before), free(after);
    CHECK_MSG(same, "the graph changed after a failed rlx_gradients");
    CHECK_OK(rlx_graph_status(g));
    CHECK_STATUS(rlx_gradients(g, x, 1, &x, &gr), RLX_STATUS_SHAPE);            /* x is not one element */
    CHECK_STATUS(rlx_gradients(g, loss, 1, &ids, &gr), RLX_STATUS_INVALID_ARGUMENT);   /* ints have no gradient */
    CHECK_STATUS(rlx_gradients(g, loss, 0, &x, &gr), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_gradients(g, 9999, 1, &x, &gr), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_gradients(NULL, loss, 1, &x, &gr), RLX_STATUS_INVALID_ARGUMENT);
    ops_free_all();
}

TEST(autodiff_unused_input_gets_zeros) {
    rlx_graph *g = ops_graph();
    int64_t d[1] = {3};
    rlx_node a = rlx_input(g, "a", RLX_F32, 1, d), b = rlx_input(g, "b", RLX_F32, 1, d);
    rlx_node loss = rlx_reduce_sum(g, rlx_mul(g, a, a), 0, 0);
    rlx_node wrt[2] = {a, b}, gr[2];
    CHECK_OK(rlx_gradients(g, loss, 2, wrt, gr));
    CHECK_OK(rlx_output(g, "ga", gr[0]));
    CHECK_OK(rlx_output(g, "gb", gr[1]));
    float av[3] = {1, -2, 3}, bv[3] = {4, 5, 6}, ga[3], gb[3];
    ref_shape s = ref_shape_make(1, d);
    rlx_tensor in[2] = {ops_tensor("a", RLX_F32, s, av), ops_tensor("b", RLX_F32, s, bv)};
    rlx_tensor out[2] = {ops_tensor("ga", RLX_F32, s, ga), ops_tensor("gb", RLX_F32, s, gb)};
    CHECK(ops_run(g, 0, in, 2, out, 2));
    for (int i = 0; i < 3; i++) CHECK(ga[i] == 2 * av[i] && gb[i] == 0);
    ops_free_all();
}

/* Symbolic dims through the gradient: one graph, run at two sequence lengths. */
TEST(autodiff_symbolic_dims) {
    rlx_graph *g = ops_graph();
    int64_t seq = rlx_symbol(g, "seq");
    CHECK(seq <= -2);
    int64_t dx[2] = {seq, 4}, dw[2] = {4, 4}, dg[1] = {4};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, dx), w = rlx_param(g, "w", RLX_F32, 2, dw);
    rlx_node gam = rlx_param(g, "gamma", RLX_F32, 1, dg);
    rlx_node h = rlx_layer_norm(g, rlx_tanh(g, rlx_matmul(g, x, w, 0)), gam, RLX_NO_NODE, 1e-5f);
    rlx_node loss = rlx_reduce_mean(g, rlx_mul(g, h, h), 0, 0);
    rlx_node wrt[3] = {x, w, gam}, gr[3];
    CHECK_OK(rlx_gradients(g, loss, 3, wrt, gr));
    CHECK_OK(rlx_output(g, "loss", loss));
    CHECK_OK(rlx_output(g, "gx", gr[0]));
    CHECK_OK(rlx_output(g, "gw", gr[1]));
    rlx_exec *e;
    CHECK_OK(rlx_compile(g, NULL, &e));
    float wv[16], gv[4];
    test_fill_uniform_f32(wv, 16, -1, 1);
    test_fill_uniform_f32(gv, 4, 0.5, 1.5);
    CHECK_OK(rlx_exec_set_param(e, "w", RLX_F32, wv, sizeof wv));
    CHECK_OK(rlx_exec_set_param(e, "gamma", RLX_F32, gv, sizeof gv));
    for (int64_t S = 1; S <= 5; S += 4) {
        float xv[20], gx[20], gw[16], lv;
        test_fill_uniform_f32(xv, S * 4, -1, 1);
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {S, 4}, .data = xv, .bytes = sizeof(float) * (size_t)(S * 4)};
        CHECK_OK(rlx_exec_run(e, &in, 1));
        CHECK_OK(rlx_exec_read_output(e, "loss", &lv, sizeof lv));
        CHECK_OK(rlx_exec_read_output(e, "gx", gx, sizeof(float) * (size_t)(S * 4)));
        CHECK_OK(rlx_exec_read_output(e, "gw", gw, sizeof gw));
        /* float64 finite differences of the same function in x */
        double x64[20], w64[16], g64[4];
        for (int i = 0; i < S * 4; i++) x64[i] = xv[i];
        for (int i = 0; i < 16; i++) w64[i] = wv[i];
        for (int i = 0; i < 4; i++) g64[i] = gv[i];
        double fd[20];
        for (int j = 0; j < S * 4; j++) {
            double lp = 0, lm = 0;
            for (int sgn = 0; sgn < 2; sgn++) {
                double keep = x64[j];
                x64[j] += sgn ? -1e-6 : 1e-6;
                double hh[20], t[20], L = 0;
                ref_shape sx = S(S, 4), sw = S(4, 4), so;
                ref_matmul(x64, sx, w64, sw, 0, NULL, RLX_ACT_NONE, hh, &so);
                for (int i = 0; i < S * 4; i++) hh[i] = tanh(hh[i]);
                ref_norm(0, hh, sx, g64, NULL, 1e-5, t);
                for (int i = 0; i < S * 4; i++) L += t[i] * t[i];
                L /= (double)(S * 4);
                x64[j] = keep;
                if (sgn) lm = L; else lp = L;
            }
            fd[j] = (lp - lm) / 2e-6;
        }
        CHECK_MSG(test_close_f32_f64("symbolic gx", gx, fd, S * 4, 2e-3), "seq %lld", (long long)S);
    }
    rlx_exec_free(e);
    ops_free_all();
}

/* The channel norms: ia[0] = groups (group_norm), ia[1] = which (0 batch_norm,
 * 1 group_norm, 2 layer_norm_channels); fa[0] = eps. */
static rlx_node build_chan_norm(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    float eps = (float)c->fa[0];
    if (c->ia[1] == 0) return rlx_batch_norm(g, x[0], x[1], x[2], x[3], x[4], eps);
    if (c->ia[1] == 1) return rlx_group_norm(g, x[0], x[1], x[2], (int)c->ia[0], eps);
    return rlx_layer_norm_channels(g, x[0], x[1], x[2], eps);
}
static void fwd_chan_norm(const double *const *x, double *out, const gc_case *c) {
    if (c->ia[1] == 0) ref_batch_norm(x[0], c->s[0], x[1], x[2], x[3], x[4], c->fa[0], out);
    else if (c->ia[1] == 1) ref_group_norm(x[0], c->s[0], c->ia[0], x[1], x[2], c->fa[0], out);
    else ref_layer_norm_channels(x[0], c->s[0], x[1], x[2], c->fa[0], out);
}

GC_TEST(chan_norms) {
    static const struct { int which; ref_shape s; int64_t groups; } cs[] = {
        {0, {4, {2, 3, 3, 4}}, 0},      /* batch_norm: x, gamma, beta, mean and var */
        {0, {3, {3, 2, 5}}, 0},
        {1, {4, {2, 4, 3, 3}}, 2},      /* group_norm */
        {1, {3, {2, 3, 5}}, 3},         /* instance norm */
        {1, {5, {1, 4, 2, 2, 3}}, 1},
        {2, {4, {2, 3, 2, 3}}, 0},      /* layer norm over channels */
    };
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        gc_case c = {.what = "chan_norm", .n = cs[k].which == 0 ? 5 : 3, .build = build_chan_norm, .fwd = fwd_chan_norm,
                     .lo = 0.25, .hi = 1.5};   /* var > 0 */
        c.ia[0] = cs[k].groups, c.ia[1] = cs[k].which, c.fa[0] = 1e-3;
        c.s[0] = c.so = cs[k].s;
        for (int i = 1; i < c.n; i++) c.s[i] = S(cs[k].s.d[1]);
        CHECK_MSG(gradcheck(&c), "chan_norm case %zu", k);
    }
    ops_free_all();
}
