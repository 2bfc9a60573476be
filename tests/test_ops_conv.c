/*
 * test_ops_conv.c — conv against a float64 direct convolution on random
 * inputs: 1, 2 and 3 spatial dims, stride, dilation, asymmetric padding,
 * groups and depthwise, bias and activations, a symbolic batch; every op-test
 * configuration on the CPU, with cases for each of the CPU kernel's paths and
 * each ISA of its depthwise kernel and GEMM, and Vulkan against the CPU (lavapipe in CI). Bad
 * shapes and parameters are errors naming the node.
 */
#include "ops_common.h"
#include "vk_parity.h"
#include "core/core.h"
#include "cpu/kernels/conv_dw.h"
#include "cpu/kernels/gemm.h"

#include <math.h>
#include <stdlib.h>
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
    /* depthwise shapes for the Vulkan depthwise kernel: tile edges, stride, dilation, asymmetric padding, 1d */
    {"2d depthwise 5x5 stride 2", 2, 2, 5, 5, 5, {37, 40}, {5, 5}, {2, 2}, {1, 1}, {2, 1}, {1, 2}, true, RLX_ACT_RELU},
    {"2d depthwise dilation 2", 2, 1, 3, 3, 3, {21, 18}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, false, RLX_ACT_NONE},
    {"1d depthwise", 1, 2, 4, 4, 4, {50}, {3}, {1}, {1}, {1}, {0}, true, RLX_ACT_NONE},
    {"2d depthwise window past the staged span", 2, 1, 2, 2, 2, {40, 40}, {9, 9}, {1, 1}, {5, 5}, {20, 20}, {20, 20}, false, RLX_ACT_NONE},
    /* shapes for the Vulkan implicit GEMM (Og >= 16, K >= 16): odd sizes cross its tile edges */
    {"2d 3x3 gemm", 2, 2, 8, 40, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_RELU},
    {"2d 3x3 stride 2 gemm", 2, 3, 5, 33, 1, {13, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 0}, {0, 1}, false, RLX_ACT_NONE},
    {"2d 1x1 gemm", 2, 2, 20, 24, 1, {5, 7}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, RLX_ACT_NONE},
    {"2d groups 2 gemm", 2, 1, 6, 40, 2, {8, 8}, {3, 3}, {1, 1}, {2, 1}, {2, 1}, {2, 1}, true, RLX_ACT_SILU},
    {"2d 7x7 stride 2 gemm", 2, 2, 3, 17, 1, {20, 18}, {7, 7}, {2, 2}, {1, 1}, {3, 3}, {3, 3}, true, RLX_ACT_NONE},
    {"1d gemm", 1, 3, 12, 20, 1, {30}, {5}, {1}, {2}, {4}, {3}, true, RLX_ACT_GELU},
    {"2d 1x1 pointwise gemm", 2, 2, 24, 32, 1, {4, 6}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, RLX_ACT_RELU},
    {"2d 3x3 one image gemm", 2, 1, 16, 24, 1, {12, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_RELU},
    {"3d gemm", 3, 2, 4, 16, 1, {5, 6, 7}, {2, 2, 2}, {1, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}, true, RLX_ACT_NONE},
    /* the CPU's paths (conv.c): depthwise direct kernel with stride, dilation and asymmetric padding,
     * 1d and 5x5 wide rows; a depthwise multiplier (generic GEMM path); several im2col chunks of
     * one image (K >= 512: 256 columns a chunk), in parallel tasks at batch 2; a 1x1 conv on x
     * in several chunks; 7x7 outputs computed transposed (batch 1: the threaded GEMM; batch 4:
     * parallel tasks: images folded into the positions); a 1x1 stride 2 (im2col); 3 images of 100
 * positions folded into chunks of 160 (a chunk boundary inside an image) */
    {"2d depthwise stride 2 dilation asymmetric", 2, 2, 5, 5, 5, {13, 11}, {3, 3}, {2, 2}, {2, 1}, {2, 1}, {1, 2}, true, RLX_ACT_RELU},
    {"1d depthwise stride 3", 1, 1, 4, 4, 4, {20}, {5}, {3}, {1}, {2}, {2}, true, RLX_ACT_NONE},
    {"2d depthwise 5x5 wide", 2, 1, 3, 3, 3, {6, 41}, {5, 5}, {1, 1}, {1, 1}, {2, 2}, {2, 2}, false, RLX_ACT_NONE},
    {"2d depthwise multiplier 2", 2, 1, 3, 6, 3, {8, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_NONE},
    {"2d 3x3 K 576 in chunks", 2, 2, 64, 8, 1, {20, 21}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_RELU},
    {"2d 1x1 in chunks", 2, 2, 16, 9, 1, {90, 100}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, true, RLX_ACT_NONE},
    {"2d 7x7 outputs transposed", 2, 1, 8, 16, 1, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_RELU},
    {"2d 7x7 outputs transposed batch 4 groups 2", 2, 4, 8, 32, 2, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_NONE},
    {"2d 1x1 stride 2", 2, 2, 6, 5, 1, {9, 8}, {1, 1}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, true, RLX_ACT_NONE},
    {"2d images folded into chunks across images", 2, 3, 64, 8, 1, {10, 10}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_RELU},
};

/* Grids of 128 x 128 tiles that fill any GPU (256 tiles): the fast policy's tensor-core tier. */
static const conv_case big_cases[] = {
    {"2d 3x3 big", 2, 2, 8, 128, 1, {128, 128}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, true, RLX_ACT_RELU},
    {"2d 1x1 pointwise big", 2, 2, 16, 128, 1, {128, 128}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false, RLX_ACT_NONE},
};

/* The Vulkan tier each case takes (conv_gemm.c's rule: Og >= 16 and K >= 16;
 * then conv.c's depthwise rule). */
static const char *vk_tier_of(const conv_case *c) {
    int64_t k = 1;
    for (int i = 0; i < c->dims; i++) k *= c->k[i];
    if (c->O / c->groups >= 16 && c->C / c->groups * k >= 16) return "conv-gemm-tiled";
    int last = c->dims - 1;   /* the 16 x 16 output tile's input window must fit conv_depthwise.comp's 48 x 48 */
    bool fits = 15 * c->stride[last] + (c->k[last] - 1) * c->dil[last] + 1 <= 48 &&
                (c->dims == 1 || 15 * c->stride[0] + (c->k[0] - 1) * c->dil[0] + 1 <= 48);
    return c->dims <= 2 && c->groups == c->C && c->O == c->C && fits ? "conv-depthwise" : "conv-direct";
}


static int64_t out_size(const conv_case *c, int i) {
    return (c->in[i] + c->pb[i] + c->pe[i] - c->dil[i] * (c->k[i] - 1) - 1) / c->stride[i] + 1;
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

/* Every case against the float64 reference in the configurations of cfg_mask. */
static void check_cases(unsigned cfg_mask, const char *isa) {
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const conv_case *c = &cases[k];
        for (int sym = 0; sym < 2; sym++) {
            built r = build(c, sym);
            int64_t yn = 1;
            for (int i = 0; i < r.ys.rank; i++) yn *= r.ys.d[i];
            double *want = ops_f64(yn);
            ref_conv_params rp = {.groups = c->groups, .act = c->act};
            for (int i = 0; i < c->dims; i++)
                rp.stride[i] = c->stride[i], rp.dilation[i] = c->dil[i], rp.pad_begin[i] = c->pb[i], rp.pad_end[i] = c->pe[i];
            ref_shape ys;
            int64_t wn = 1, xn = 1;
            for (int i = 0; i < r.ws.rank; i++) wn *= r.ws.d[i];
            for (int i = 0; i < r.xs.rank; i++) xn *= r.xs.d[i];
            ref_conv(ops_f32_to_f64(r.x, xn), r.xs, ops_f32_to_f64(r.w, wn), r.ws, r.b ? ops_f32_to_f64(r.b, c->O) : NULL, &rp,
                     want, &ys);
            float *got = ops_f32(yn);
            rlx_tensor in = ops_tensor("x", RLX_F32, r.xs, r.x);
            rlx_tensor out = ops_tensor("y", RLX_F32, r.ys, got);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                if (!(cfg_mask >> cfg & 1)) continue;
                if (!ops_run(r.g, cfg, &in, 1, &out, 1)) return;
                CHECK_MSG(test_close_f32_f64(c->what, got, want, yn, 1e-5), "%s (ISA %s, config %s)", c->what, isa,
                          ops_config_name(cfg));
            }
        }
    }
}

TEST(ops_conv_f32) {
    check_cases(~0u, "auto");
    ops_free_all();
}

/* Each ISA of the depthwise kernel and the GEMM it uses (portable for the
 * baseline), at 1 and 2 threads. */
TEST(ops_conv_isa_paths) {
    static const struct { const char *dw, *gemm; } isas[] = {{"base", "portable"}, {"avx2", "avx2"}, {"avx512", "avx512"}};
    int ran = 0;
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (cpu_conv_dw_force(isas[i].dw) != 0 || rlx_sgemm_force_kernel(isas[i].gemm) != 0) {
            printf("    (skipped %s: not on this CPU)\n", isas[i].dw);
            continue;
        }
        CHECK(!strcmp(cpu_conv_dw_isa(), isas[i].dw));
        check_cases(1u << 2 | 1u << 3, isas[i].dw);
        ran++;
    }
    cpu_conv_dw_force(NULL);
    rlx_sgemm_force_kernel(NULL);
    CHECK(ran >= 1);
    ops_free_all();
}

TEST(vk_ops_conv_f32) {
    VKP_REQUIRE();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        built r = build(&cases[k], k % 2 == 1);
        rlx_tensor in = ops_tensor("x", RLX_F32, r.xs, r.x);
        CHECK_MSG(vkp_compare(r.g, &in, 1, 1e-5, true), "%s", cases[k].what);
        rlx_exec *e = vkp_compile(r.g, true);
        char *rep = e && rlx_exec_run(e, &in, 1) == RLX_OK ? rlx_exec_report(e) : NULL;
        char tier[64];
        vkp_tier_of(rep, " conv", 0, tier, sizeof tier);
        const char *want = vk_tier_of(&cases[k]);
        CHECK_MSG(!strncmp(tier, want, strlen(want)), "%s: tier '%s', want %s\n%s", cases[k].what, tier, want, rep ? rep : "");
        free(rep);
        rlx_exec_free(e);
        /* one group: K split over workgroups, the slices summed with the per-channel bias and scattered
         * to NCHW (one image or several) */
        if (cases[k].groups == 1 && !strcmp(want, "conv-gemm-tiled")) {
            char *saved = test_env_swap("RLX_VK_MM_SPLITK", "3");
            bool same = vkp_compare(r.g, &in, 1, 1e-5, true);
            e = vkp_compile(r.g, true);
            rep = e && rlx_exec_run(e, &in, 1) == RLX_OK ? rlx_exec_report(e) : NULL;
            test_env_restore("RLX_VK_MM_SPLITK", saved);
            vkp_tier_of(rep, " conv", 0, tier, sizeof tier);
            rlx_exec_free(e);
            CHECK_MSG(same && strstr(tier, "splitk"), "%s split 3 ways: tier '%s'\n%s", cases[k].what, tier, rep ? rep : "");
            free(rep);
        }
    }
    ops_free_all();
}

static double via_f16(float v) { return rlx_f16_to_f32(rlx_f32_to_f16(v)); }

/* Under the fast precision policy the implicit GEMM takes the tensor-core
 * tier where the device has one (x and w rounded to f16, f32 sums): checked
 * against float64 on the rounded operands, norm-relative; elsewhere the f32
 * tier, checked exactly. */
TEST(vk_ops_conv_fast_precision) {
    VKP_REQUIRE();
    int coop = vkp_device_has_coopmat();
    size_t n_small = sizeof cases / sizeof cases[0], n_big = sizeof big_cases / sizeof big_cases[0];
    for (size_t k = 0; k < n_small + n_big; k++) {
        bool big = k >= n_small;
        const conv_case *c = big ? &big_cases[k - n_small] : &cases[k];
        if (strcmp(vk_tier_of(c), "conv-gemm-tiled") != 0) continue;
        built r = build(c, false);
        int64_t xn = 1, wn = 1, yn = 1;
        for (int i = 0; i < r.xs.rank; i++) xn *= r.xs.d[i], wn *= r.ws.d[i], yn *= r.ys.d[i];
        rlx_compile_options o;
        vkp_options(&o);
        o.precision = RLX_PRECISION_FAST;
        rlx_exec *e = NULL;
        rlx_tensor in = ops_tensor("x", RLX_F32, r.xs, r.x), out;
        bool ok = rlx_compile(r.g, &o, &e) == RLX_OK && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_output(e, "y", &out) == RLX_OK;
        CHECK_MSG(ok, "%s: %s", c->what, rlx_last_error());
        char *rep = rlx_exec_report(e);
        char tier[64];
        vkp_tier_of(rep, " conv", 0, tier, sizeof tier);
        const char *want_tier = coop == 1 && big ? "conv-gemm-coopmat" : coop == 0 || !big ? "conv-gemm-" : NULL;
        CHECK_MSG(!want_tier || !strncmp(tier, want_tier, strlen(want_tier)), "%s: tier '%s', want %s\n%s", c->what, tier,
                  want_tier, rep ? rep : "");
        free(rep);
        bool f16 = strncmp(tier, "conv-gemm-coopmat", 17) == 0;   /* operands rounded: so is the reference's */
        double *xd = ops_f64(xn), *wd = ops_f64(wn), *want = ops_f64(yn);
        for (int64_t i = 0; i < xn; i++) xd[i] = f16 ? via_f16(r.x[i]) : r.x[i];
        for (int64_t i = 0; i < wn; i++) wd[i] = f16 ? via_f16(r.w[i]) : r.w[i];
        ref_conv_params rp = {.groups = c->groups, .act = c->act};
        for (int i = 0; i < c->dims; i++)
            rp.stride[i] = c->stride[i], rp.dilation[i] = c->dil[i], rp.pad_begin[i] = c->pb[i], rp.pad_end[i] = c->pe[i];
        ref_shape ys;
        ref_conv(xd, r.xs, wd, r.ws, r.b ? ops_f32_to_f64(r.b, c->O) : NULL, &rp, want, &ys);
        double num = 0, den = 0, worst = -1;
        int64_t at = 0;
        for (int64_t i = 0; i < yn; i++) {
            double d = ((const float *)out.data)[i] - want[i];
            num += d * d, den += want[i] * want[i];
            if (fabs(d) > worst) worst = fabs(d), at = i;
        }
        double rel = sqrt(num / (den > 0 ? den : 1));
        CHECK_MSG(rel < (f16 ? 1e-3 : 1e-5), "%s (%s): norm-relative error %.3g, worst at %lld of %lld: %g, want %g", c->what,
                  tier, rel, (long long)at, (long long)yn, ((const float *)out.data)[at], want[at]);
        rlx_exec_free(e);
    }
    ops_free_all();
}

/* A new graph holding r's x as input "x" and conv(x, w, b) of c (the 2d 3x3
 * case, stride 1, padding 1, no activation): the base of the fusion tests. */
static rlx_node pad1_conv_graph(const built *r, const conv_case *c, rlx_graph **g) {
    *g = ops_graph();
    rlx_node x = rlx_input(*g, "x", RLX_F32, r->xs.rank, r->xs.d);
    rlx_node w = rlx_constant(*g, RLX_F32, r->ws.rank, r->ws.d, r->w);
    rlx_node b = rlx_constant(*g, RLX_F32, 1, &c->O, r->b);
    rlx_conv_params p = {.dims = 2, .groups = 1, .stride = {1, 1}, .dilation = {1, 1}, .pad_begin = {1, 1}, .pad_end = {1, 1}};
    return rlx_conv(*g, x, w, b, &p);
}

/* conv followed by an activation node runs as one conv with the activation
 * fused (fuse.c), on the CPU and on Vulkan; the result is the reference's. */
TEST(ops_conv_activation_fuses) {
    const conv_case *c = &cases[2];   /* 2d 3x3 with bias, no activation */
    for (int vk = 0; vk < 2; vk++) {
        if (vk && !vkp_available()) break;
        built r = build(c, false);
        rlx_graph *g;
        rlx_node cv = pad1_conv_graph(&r, c, &g);
        rlx_output(g, "y", rlx_silu(g, cv));
        int64_t xn = 1, wn = 1, yn = 1;
        for (int i = 0; i < r.xs.rank; i++) xn *= r.xs.d[i], wn *= r.ws.d[i], yn *= r.ys.d[i];
        double *want = ops_f64(yn);
        ref_conv_params rp = {.groups = 1, .act = RLX_ACT_SILU, .stride = {1, 1}, .dilation = {1, 1}, .pad_begin = {1, 1}, .pad_end = {1, 1}};
        ref_shape ys;
        ref_conv(ops_f32_to_f64(r.x, xn), r.xs, ops_f32_to_f64(r.w, wn), r.ws, ops_f32_to_f64(r.b, c->O), &rp, want, &ys);
        rlx_exec *e = vk ? vkp_compile(g, true) : vkp_compile(g, false);
        rlx_tensor in = ops_tensor("x", RLX_F32, r.xs, r.x), out;
        CHECK_MSG(e && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_output(e, "y", &out) == RLX_OK, "%s", rlx_last_error());
        CHECK_MSG(test_close_f32_f64(vk ? "vulkan" : "cpu", out.data, want, yn, 1e-5), "conv + silu on %s", vk ? "vulkan" : "cpu");
        char *rep = rlx_exec_report(e);
        CHECK_MSG(rep && !strstr(rep, "silu"), "the silu should be fused into the conv:\n%s", rep ? rep : "");
        free(rep);
        rlx_exec_free(e);
    }
    ops_free_all();
}

/* act(conv(x, w, b) + r) with r a second input, either add operand order,
 * with and without the activation: one conv node reading r (fuse.c's
 * conv_residual), the reference's result. On the CPU and on Vulkan, through
 * each Vulkan tier: the tiled implicit GEMM (one image and several), its K
 * split over workgroups, the direct kernel and the depthwise kernel. */
static void check_residual(const conv_case *c, rlx_activation act, bool r_first, bool vk, bool split) {
    built r = build(c, false);
    rlx_graph *g = ops_graph();
    rlx_node x = rlx_input(g, "x", RLX_F32, r.xs.rank, r.xs.d);
    rlx_node res = rlx_input(g, "r", RLX_F32, r.ys.rank, r.ys.d);
    rlx_node w = rlx_constant(g, RLX_F32, r.ws.rank, r.ws.d, r.w);
    rlx_node b = c->bias ? rlx_constant(g, RLX_F32, 1, &c->O, r.b) : RLX_NO_NODE;
    rlx_conv_params p = {.dims = c->dims, .groups = c->groups};
    ref_conv_params rp = {.groups = c->groups, .act = RLX_ACT_NONE};
    for (int i = 0; i < c->dims; i++) {
        p.stride[i] = rp.stride[i] = c->stride[i], p.dilation[i] = rp.dilation[i] = c->dil[i];
        p.pad_begin[i] = rp.pad_begin[i] = c->pb[i], p.pad_end[i] = rp.pad_end[i] = c->pe[i];
    }
    rlx_node cv = rlx_conv(g, x, w, b, &p);
    rlx_node sum = r_first ? rlx_add(g, res, cv) : rlx_add(g, cv, res);
    rlx_output(g, "y", act == RLX_ACT_RELU ? rlx_relu(g, sum) : act == RLX_ACT_GELU ? rlx_gelu(g, sum) : sum);
    int64_t xn = 1, wn = 1, yn = 1;
    for (int i = 0; i < r.xs.rank; i++) xn *= r.xs.d[i], wn *= r.ws.d[i], yn *= r.ys.d[i];
    float *rv = ops_rand_f32(yn, -1, 1);
    double *want = ops_f64(yn);
    ref_shape ys;
    ref_conv(ops_f32_to_f64(r.x, xn), r.xs, ops_f32_to_f64(r.w, wn), r.ws, r.b ? ops_f32_to_f64(r.b, c->O) : NULL, &rp, want, &ys);
    for (int64_t i = 0; i < yn; i++) want[i] = ref_act_apply(act, want[i] + rv[i]);
    char *saved = split ? test_env_swap("RLX_VK_MM_SPLITK", "3") : NULL;
    rlx_exec *e = vkp_compile(g, vk);
    rlx_tensor in[2] = {ops_tensor("x", RLX_F32, r.xs, r.x), ops_tensor("r", RLX_F32, r.ys, rv)}, out;
    bool ran = e && rlx_exec_run(e, in, 2) == RLX_OK && rlx_exec_output(e, "y", &out) == RLX_OK;
    if (split) test_env_restore("RLX_VK_MM_SPLITK", saved);
    char what[160];
    snprintf(what, sizeof what, "%s + residual%s, %s%s%s", c->what, r_first ? " (first operand)" : "", act ? "activation, " : "",
             vk ? "vulkan" : "cpu", split ? " split 3 ways" : "");
    CHECK_MSG(ran, "%s: %s", what, rlx_last_error());
    if (ran) CHECK_MSG(test_close_f32_f64(what, out.data, want, yn, 1e-5), "%s", what);
    char *rep = e ? rlx_exec_report(e) : NULL;
    CHECK_MSG(rep && !strstr(rep, "add #") && !strstr(rep, "relu #") && !strstr(rep, "gelu #"),
              "%s: the add and activation should be fused into the conv:\n%s", what, rep ? rep : "");
    if (vk && rep) {
        char tier[64];
        vkp_tier_of(rep, " conv", 0, tier, sizeof tier);
        const char *want_tier = vk_tier_of(c);
        CHECK_MSG(!strncmp(tier, want_tier, strlen(want_tier)) && (!split || strstr(tier, "splitk")), "%s: tier '%s', want %s%s",
                  what, tier, want_tier, split ? " splitk" : "");
    }
    free(rep);
    rlx_exec_free(e);
}

TEST(ops_conv_residual_fuses) {
    static const char *names[] = {"2d 3x3", "2d depthwise", "2d 3x3 gemm", "2d 3x3 one image gemm", "2d 1x1 gemm",
                                  "3d gemm", "1d depthwise", "2d 3x3 K 576 in chunks", "2d 7x7 outputs transposed"};
    for (size_t n = 0; n < sizeof names / sizeof names[0]; n++) {
        const conv_case *c = NULL;
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            if (!strcmp(cases[k].what, names[n])) c = &cases[k];
        CHECK_MSG(c, "no case '%s'", names[n]);
        if (!c) continue;
        for (int vk = 0; vk < 2; vk++) {
            if (vk && !vkp_available()) break;
            check_residual(c, RLX_ACT_RELU, n % 2 == 1, vk, false);
            check_residual(c, n % 3 == 0 ? RLX_ACT_GELU : RLX_ACT_NONE, n % 2 == 0, vk, false);
            if (vk && c->groups == 1 && !strcmp(vk_tier_of(c), "conv-gemm-tiled")) check_residual(c, RLX_ACT_RELU, false, vk, true);
        }
    }
    ops_free_all();
}

/* A conv whose result has another use keeps the add separate: the sum is
 * still right and the conv's own output is still seen. */
TEST(ops_conv_residual_needs_the_sole_use) {
    const conv_case *c = &cases[2];
    for (int vk = 0; vk < 2; vk++) {
        if (vk && !vkp_available()) break;
        built r = build(c, false);
        rlx_graph *g;
        rlx_node cv = pad1_conv_graph(&r, c, &g);
        rlx_output(g, "y", rlx_relu(g, rlx_add(g, cv, cv)));
        rlx_output(g, "c", cv);
        int64_t xn = 1, wn = 1, yn = 1;
        for (int i = 0; i < r.xs.rank; i++) xn *= r.xs.d[i], wn *= r.ws.d[i], yn *= r.ys.d[i];
        double *want = ops_f64(yn), *want2 = ops_f64(yn);
        ref_conv_params rp = {.groups = 1, .stride = {1, 1}, .dilation = {1, 1}, .pad_begin = {1, 1}, .pad_end = {1, 1}};
        ref_shape ys;
        ref_conv(ops_f32_to_f64(r.x, xn), r.xs, ops_f32_to_f64(r.w, wn), r.ws, ops_f32_to_f64(r.b, c->O), &rp, want, &ys);
        for (int64_t i = 0; i < yn; i++) want2[i] = want[i] > 0 ? 2 * want[i] : 0;
        rlx_exec *e = vkp_compile(g, vk);
        rlx_tensor in = ops_tensor("x", RLX_F32, r.xs, r.x), y, cout;
        CHECK_MSG(e && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_output(e, "y", &y) == RLX_OK &&
                      rlx_exec_output(e, "c", &cout) == RLX_OK,
                  "%s", rlx_last_error());
        CHECK(test_close_f32_f64("y", y.data, want2, yn, 1e-5));
        CHECK(test_close_f32_f64("c", cout.data, want, yn, 1e-5));
        rlx_exec_free(e);
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

/* conv_transpose against a float64 scatter: every x element adds x * w[k] at y = i s - pb + k d. */
TEST(ops_conv_transpose_f32) {
    static const struct { int dims; int64_t N, Cin, Cout, groups, in[2], k[2], st[2], dl[2], pb[2], pe[2], op[2]; bool bias; } cs[] = {
        {2, 2, 4, 6, 2, {3, 4}, {3, 2}, {2, 2}, {1, 1}, {1, 0}, {0, 1}, {1, 0}, true},
        {1, 1, 3, 2, 1, {5}, {4}, {3}, {1}, {2}, {1}, {2}, false},
        {2, 1, 2, 2, 1, {4, 4}, {3, 3}, {1, 1}, {2, 2}, {2, 2}, {2, 2}, {0, 0}, true},
    };
    for (size_t t = 0; t < sizeof cs / sizeof cs[0]; t++) {
        rlx_graph *g = ops_graph();
        int d = cs[t].dims;
        ref_shape xs = {d + 2, {cs[t].N, cs[t].Cin}}, ws = {d + 2, {cs[t].Cin, cs[t].Cout / cs[t].groups}}, ys = {d + 2, {cs[t].N, cs[t].Cout}};
        int64_t sp_in = 1, sp_k = 1, sp_o = 1, o[2] = {1, 1}, in[2] = {1, 1}, k[2] = {1, 1};
        for (int i = 0; i < d; i++) {
            xs.d[2 + i] = cs[t].in[i], ws.d[2 + i] = cs[t].k[i];
            ys.d[2 + i] = (cs[t].in[i] - 1) * cs[t].st[i] - cs[t].pb[i] - cs[t].pe[i] + cs[t].dl[i] * (cs[t].k[i] - 1) + cs[t].op[i] + 1;
            sp_in *= cs[t].in[i], sp_k *= cs[t].k[i], sp_o *= ys.d[2 + i];
            o[2 - d + i] = ys.d[2 + i], in[2 - d + i] = cs[t].in[i], k[2 - d + i] = cs[t].k[i];
        }
        int64_t st[2] = {1, 1}, dl[2] = {1, 1}, pb[2] = {0, 0};
        for (int i = 0; i < d; i++) st[2 - d + i] = cs[t].st[i], dl[2 - d + i] = cs[t].dl[i], pb[2 - d + i] = cs[t].pb[i];
        float *x = ops_rand_f32(cs[t].N * cs[t].Cin * sp_in, -1, 1), *w = ops_rand_f32(cs[t].Cin * ws.d[1] * sp_k, -1, 1);
        float *b = ops_rand_f32(cs[t].Cout, -1, 1), *got = ops_f32(cs[t].N * cs[t].Cout * sp_o);
        double *want = ops_f64(cs[t].N * cs[t].Cout * sp_o);
        int64_t Cg = cs[t].Cin / cs[t].groups, Og = cs[t].Cout / cs[t].groups;
        for (int64_t n = 0; n < cs[t].N; n++)
            for (int64_t oc = 0; oc < cs[t].Cout; oc++)
                for (int64_t y = 0; y < sp_o; y++) want[(n * cs[t].Cout + oc) * sp_o + y] = cs[t].bias ? b[oc] : 0;
        for (int64_t n = 0; n < cs[t].N; n++)
            for (int64_t ic = 0; ic < cs[t].Cin; ic++)
                for (int64_t i = 0; i < sp_in; i++)
                    for (int64_t q = 0; q < sp_k; q++)
                        for (int64_t ocg = 0; ocg < Og; ocg++) {
                            int64_t ii[2] = {i / in[1], i % in[1]}, qq[2] = {q / k[1], q % k[1]}, yy[2];
                            bool ok = true;
                            for (int a = 0; a < 2; a++) yy[a] = ii[a] * st[a] - pb[a] + qq[a] * dl[a], ok = ok && yy[a] >= 0 && yy[a] < o[a];
                            if (!ok) continue;
                            int64_t oc = (ic / Cg) * Og + ocg;
                            want[(n * cs[t].Cout + oc) * sp_o + yy[0] * o[1] + yy[1]] +=
                                (double)x[(n * cs[t].Cin + ic) * sp_in + i] * w[(ic * Og + ocg) * sp_k + q];
                        }
        rlx_node xn = rlx_input(g, "x", RLX_F32, xs.rank, xs.d);
        rlx_node wn = rlx_constant(g, RLX_F32, ws.rank, ws.d, w);
        rlx_node bn = cs[t].bias ? rlx_constant(g, RLX_F32, 1, &cs[t].Cout, b) : RLX_NO_NODE;
        rlx_conv_params p = {.groups = cs[t].groups};
        for (int i = 0; i < d; i++)
            p.stride[i] = cs[t].st[i], p.dilation[i] = cs[t].dl[i], p.pad_begin[i] = cs[t].pb[i], p.pad_end[i] = cs[t].pe[i],
            p.output_padding[i] = cs[t].op[i];
        CHECK_OK(rlx_output(g, "y", rlx_conv_transpose(g, xn, wn, bn, &p)));
        rlx_tensor tin = ops_tensor("x", RLX_F32, xs, x), tout = ops_tensor("y", RLX_F32, ys, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            if (!ops_run(g, cfg, &tin, 1, &tout, 1)) return;
            CHECK_CLOSE("conv_transpose", got, want, cs[t].N * cs[t].Cout * sp_o, 1e-5);
        }
        if (vkp_available()) CHECK_MSG(vkp_compare(g, &tin, 1, 1e-5, true), "conv_transpose case %zu (Vulkan)", t);
    }
    ops_free_all();
}
