/*
 * test_ops_conv.c — conv against a float64 direct convolution on random
 * inputs: 1, 2 and 3 spatial dims, stride, dilation, asymmetric padding,
 * groups and depthwise, bias and activations, a symbolic batch; every op-test
 * configuration on the CPU, and Vulkan against the CPU (lavapipe in CI). Bad
 * shapes and parameters are errors naming the node.
 */
#include "ops_common.h"
#include "vk_parity.h"

#include <math.h>
#include <string.h>

typedef struct conv_case {
    const char *what;
    int dims;
    int64_t N, C, O, groups;
    int64_t in[3], k[3];
    int64_t stride[3], dil[3], pb[3], pe[3];
    bool bias;
    rlx_activation act;
} conv_case;

static const conv_case cases[] = {
    {"1d", 1, 2, 3, 4, 1, {11}, {3}, {1}, {1}, {0}, {0}, true, RLX_ACT_NONE},
    {"1d stride dilation pad", 1, 1, 4, 6, 2, {17}, {3}, {2}, {2}, {3}, {1}, false, RLX_ACT_RELU},
    {"2d 3x3", 2, 2, 3, 5, 1, {7, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_NONE},
    {"2d stride 2 asymmetric", 2, 1, 4, 4, 1, {10, 8}, {3, 2}, {2, 3}, {1, 1}, {0, 2}, {1, 0}, true, RLX_ACT_GELU},
    {"2d 7x7 stride 2 (resnet stem)", 2, 1, 3, 8, 1, {16, 16}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, false, RLX_ACT_NONE},
    {"2d depthwise", 2, 2, 6, 6, 6, {9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_SILU},
    {"2d groups 2 dilation 2", 2, 1, 4, 6, 2, {12, 11}, {3, 3}, {1, 1}, {2, 2}, {2, 1}, {2, 1}, true, RLX_ACT_NONE},
    {"2d 1x1", 2, 3, 8, 5, 1, {4, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, RLX_ACT_SIGMOID},
    {"3d", 3, 1, 2, 3, 1, {5, 6, 7}, {3, 2, 3}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {1, 1, 2}, true, RLX_ACT_TANH},
};

static double act64(double v, rlx_activation a) {
    switch (a) {
    case RLX_ACT_RELU: return v < 0 ? 0 : v;
    case RLX_ACT_GELU: return 0.5 * v * (1 + erf(v / sqrt(2.0)));
    case RLX_ACT_SILU: return v / (1 + exp(-v));
    case RLX_ACT_SIGMOID: return 1 / (1 + exp(-v));
    case RLX_ACT_TANH: return tanh(v);
    default: return v;
    }
}

static int64_t out_size(const conv_case *c, int i) {
    return (c->in[i] + c->pb[i] + c->pe[i] - c->dil[i] * (c->k[i] - 1) - 1) / c->stride[i] + 1;
}

/* Direct float64 convolution, spatial dims padded to 3 with leading 1s. */
static void ref_conv(const conv_case *c, const float *x, const float *w, const float *b, double *y) {
    int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, o[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
    int off = 3 - c->dims;
    for (int i = 0; i < c->dims; i++)
        in[off + i] = c->in[i], k[off + i] = c->k[i], o[off + i] = out_size(c, i), st[off + i] = c->stride[i],
        dl[off + i] = c->dil[i], pb[off + i] = c->pb[i];
    int64_t Cg = c->C / c->groups, Og = c->O / c->groups, iv = in[0] * in[1] * in[2], kv = k[0] * k[1] * k[2];
    int64_t ov = o[0] * o[1] * o[2];
    for (int64_t n = 0; n < c->N; n++)
        for (int64_t oc = 0; oc < c->O; oc++)
            for (int64_t a0 = 0; a0 < o[0]; a0++)
                for (int64_t a1 = 0; a1 < o[1]; a1++)
                    for (int64_t a2 = 0; a2 < o[2]; a2++) {
                        double acc = b ? b[oc] : 0;
                        int64_t g = oc / Og;
                        for (int64_t ci = 0; ci < Cg; ci++)
                            for (int64_t q0 = 0; q0 < k[0]; q0++)
                                for (int64_t q1 = 0; q1 < k[1]; q1++)
                                    for (int64_t q2 = 0; q2 < k[2]; q2++) {
                                        int64_t i0 = a0 * st[0] - pb[0] + q0 * dl[0], i1 = a1 * st[1] - pb[1] + q1 * dl[1];
                                        int64_t i2 = a2 * st[2] - pb[2] + q2 * dl[2];
                                        if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                                        acc += (double)x[((n * c->C + g * Cg + ci) * iv) + (i0 * in[1] + i1) * in[2] + i2] *
                                               w[(oc * Cg + ci) * kv + (q0 * k[1] + q1) * k[2] + q2];
                                    }
                        y[(n * c->O + oc) * ov + (a0 * o[1] + a1) * o[2] + a2] = act64(acc, c->act);
                    }
}

typedef struct built {
    rlx_graph *g;
    ref_shape xs, ws, ys;
    float *x, *w, *b;
} built;

static built build(const conv_case *c, bool symbolic_batch) {
    built r;
    memset(&r, 0, sizeof r);
    r.g = ops_graph();
    r.xs.rank = r.ws.rank = r.ys.rank = c->dims + 2;
    r.xs.d[0] = c->N, r.xs.d[1] = c->C, r.ws.d[0] = c->O, r.ws.d[1] = c->C / c->groups, r.ys.d[0] = c->N, r.ys.d[1] = c->O;
    int64_t xn = c->N * c->C, wn = c->O * (c->C / c->groups), yn = c->N * c->O;
    for (int i = 0; i < c->dims; i++) {
        r.xs.d[2 + i] = c->in[i], r.ws.d[2 + i] = c->k[i], r.ys.d[2 + i] = out_size(c, i);
        xn *= c->in[i], wn *= c->k[i], yn *= out_size(c, i);
    }
    r.x = ops_rand_f32(xn, -1, 1), r.w = ops_rand_f32(wn, -1, 1), r.b = c->bias ? ops_rand_f32(c->O, -1, 1) : NULL;
    int64_t xd[5];
    for (int i = 0; i < r.xs.rank; i++) xd[i] = r.xs.d[i];
    if (symbolic_batch) xd[0] = rlx_symbol(r.g, "batch");
    rlx_node x = rlx_input(r.g, "x", RLX_F32, r.xs.rank, xd);
    rlx_node w = rlx_constant(r.g, RLX_F32, r.ws.rank, r.ws.d, r.w);
    rlx_node b = c->bias ? rlx_constant(r.g, RLX_F32, 1, &c->O, r.b) : RLX_NO_NODE;
    rlx_conv_params p = {.dims = c->dims, .groups = c->groups, .act = c->act};
    for (int i = 0; i < c->dims; i++)
        p.stride[i] = c->stride[i], p.dilation[i] = c->dil[i], p.pad_begin[i] = c->pb[i], p.pad_end[i] = c->pe[i];
    rlx_output(r.g, "y", rlx_conv(r.g, x, w, b, &p));   /* an error shows in ops_run / vkp_compare */
    (void)yn;
    return r;
}

TEST(ops_conv_f32) {
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const conv_case *c = &cases[k];
        for (int sym = 0; sym < 2; sym++) {
            built r = build(c, sym);
            int64_t yn = 1;
            for (int i = 0; i < r.ys.rank; i++) yn *= r.ys.d[i];
            double *want = ops_f64(yn);
            ref_conv(c, r.x, r.w, r.b, want);
            float *got = ops_f32(yn);
            rlx_tensor in = ops_tensor("x", RLX_F32, r.xs, r.x);
            rlx_tensor out = ops_tensor("y", RLX_F32, r.ys, got);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                if (!ops_run(r.g, cfg, &in, 1, &out, 1)) return;
                CHECK_CLOSE(c->what, got, want, yn, 1e-5);
            }
        }
    }
    ops_free_all();
}

TEST(vk_ops_conv_f32) {
    VKP_REQUIRE();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        built r = build(&cases[k], k % 2 == 1);
        rlx_tensor in = ops_tensor("x", RLX_F32, r.xs, r.x);
        CHECK_MSG(vkp_compare(r.g, &in, 1, 1e-5, true), "%s", cases[k].what);
    }
    ops_free_all();
}

TEST(ops_conv_errors) {
    rlx_graph *g = ops_graph();
    int64_t xd[4] = {1, 4, 8, 8}, wd[4] = {6, 3, 3, 3}, wd2[4] = {6, 2, 9, 3}, bd[1] = {5}, x3[3] = {1, 4, 8};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_conv_params p = {.groups = 2};
    CHECK(rlx_conv(g, x, rlx_input(g, "w", RLX_F32, 4, wd), RLX_NO_NODE, &p) == RLX_NO_NODE);   /* 3 != 4 / 2 */
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE && strstr(rlx_last_error(), "groups"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd);
    p.groups = 2;
    CHECK(rlx_conv(g, x, rlx_input(g, "w", RLX_F32, 4, wd2), RLX_NO_NODE, &p) == RLX_NO_NODE);   /* 9 > 8 */
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE && strstr(rlx_last_error(), "does not fit"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_node w = rlx_input(g, "w", RLX_F32, 4, (int64_t[4]){6, 4, 3, 3});
    CHECK(rlx_conv(g, x, w, rlx_input(g, "b", RLX_F32, 1, bd), NULL) == RLX_NO_NODE);   /* bias [5] for 6 */
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE && strstr(rlx_last_error(), "bias"));
    g = ops_graph();
    rlx_node x1 = rlx_input(g, "x", RLX_F32, 3, x3);
    p = (rlx_conv_params){.dims = 2};
    CHECK(rlx_conv(g, x1, rlx_input(g, "w", RLX_F32, 3, (int64_t[3]){2, 4, 3}), RLX_NO_NODE, &p) == RLX_NO_NODE);
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE && strstr(rlx_last_error(), "rank"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd);
    p = (rlx_conv_params){.stride = {-1, 1}};
    CHECK(rlx_conv(g, x, rlx_input(g, "w", RLX_F32, 4, (int64_t[4]){6, 4, 3, 3}), RLX_NO_NODE, &p) == RLX_NO_NODE);
    CHECK(rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "stride"));
    ops_free_all();
}
