/*
 * test_ops_chan_norm.c — the channel norms against float64 references on
 * random inputs: batch_norm, group_norm (several group counts, 1 to 3
 * spatial dims, a large mean next to a small spread), instance_norm and
 * layer_norm_channels; every op-test configuration on the CPU, and Vulkan
 * against the CPU with every node on the GPU. Bad shapes are errors naming
 * the node.
 */
#include "ops_common.h"
#include "vk_parity.h"

#include <math.h>
#include <string.h>

typedef enum which { BN, GN, IN, LNC } which;

typedef struct cn_case {
    const char *what;
    which op;
    ref_shape s;
    int64_t groups;
    double offset;   /* added to x: a large mean with a small spread */
} cn_case;

static const cn_case cases[] = {
    {"batch_norm 2d", BN, {4, {2, 5, 7, 6}}, 0, 0},
    {"batch_norm 1d", BN, {3, {3, 4, 9}}, 0, 0},
    {"batch_norm no spatial", BN, {2, {4, 6}}, 0, 0},
    {"group_norm 2d g4", GN, {4, {2, 8, 5, 6}}, 4, 0},
    {"group_norm 2d g1", GN, {4, {1, 6, 9, 7}}, 1, 0},
    {"group_norm 3d g2", GN, {5, {2, 4, 3, 4, 5}}, 2, 0},
    {"group_norm offset 1000", GN, {4, {2, 4, 6, 6}}, 2, 1000},
    {"group_norm big run", GN, {4, {1, 4, 40, 41}}, 2, 0},
    {"instance_norm 2d", IN, {4, {2, 3, 8, 5}}, 0, 0},
    {"instance_norm 1d offset", IN, {3, {3, 2, 17}}, 0, 100},
    {"layer_norm_channels 2d", LNC, {4, {2, 6, 4, 5}}, 0, 0},
    {"layer_norm_channels 1d", LNC, {3, {2, 5, 7}}, 0, 0},
};

#define EPS 1e-5

static rlx_graph *build(const cn_case *c, ops_inputs *in, float **data) {
    rlx_graph *g = ops_graph();
    int64_t C = c->s.d[1], n = ref_numel(&c->s);
    ref_shape cs = {1, {C}};
    data[0] = ops_rand_f32(n, -2, 2);
    for (int64_t i = 0; i < n; i++) data[0][i] += (float)c->offset;
    int np = c->op == BN ? 4 : 2;
    for (int i = 1; i <= np; i++) data[i] = ops_rand_f32(C, i == 4 ? 0.1 : -1.5, 1.5);   /* var > 0 */
    rlx_node x = ops_add_input(g, in, RLX_F32, c->s, data[0]), p[5];
    for (int i = 1; i <= np; i++) p[i] = ops_add_input(g, in, RLX_F32, cs, data[i]);
    rlx_node y = c->op == BN ? rlx_batch_norm(g, x, p[1], p[2], p[3], p[4], (float)EPS)
               : c->op == GN ? rlx_group_norm(g, x, p[1], p[2], (int)c->groups, (float)EPS)
               : c->op == IN ? rlx_instance_norm(g, x, p[1], p[2], (float)EPS)
               : rlx_layer_norm_channels(g, x, p[1], p[2], (float)EPS);
    rlx_output(g, "y", y);
    return g;
}

static void reference(const cn_case *c, float **data, double *want) {
    int64_t C = c->s.d[1], n = ref_numel(&c->s);
    double *x = ops_f32_to_f64(data[0], n), *p[5] = {0};
    for (int i = 1; i <= (c->op == BN ? 4 : 2); i++) p[i] = ops_f32_to_f64(data[i], C);
    if (c->op == BN) ref_batch_norm(x, c->s, p[1], p[2], p[3], p[4], EPS, want);
    else if (c->op == GN) ref_group_norm(x, c->s, c->groups, p[1], p[2], EPS, want);
    else if (c->op == IN) ref_group_norm(x, c->s, C, p[1], p[2], EPS, want);
    else ref_layer_norm_channels(x, c->s, p[1], p[2], EPS, want);
}

TEST(ops_chan_norm_f32) {
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const cn_case *c = &cases[k];
        ops_inputs in = {0};
        float *data[5];
        rlx_graph *g = build(c, &in, data);
        int64_t n = ref_numel(&c->s);
        float *got = ops_f32(n);
        double *want = ops_f64(n);
        reference(c, data, want);
        rlx_tensor out = ops_tensor("y", RLX_F32, c->s, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            if (!ops_run(g, cfg, in.t, in.n, &out, 1)) return;
            /* the default config takes the best device: a GPU's norm.comp sums the mean in f32 (vk test below) */
            CHECK_CLOSE(c->what, got, want, n, c->offset >= 1000 ? 1e-4 : 1e-5);
        }
    }
    ops_free_all();
}

TEST(vk_ops_chan_norm_f32) {
    VKP_REQUIRE();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ops_inputs in = {0};
        float *data[5];
        rlx_graph *g = build(&cases[k], &in, data);
        /* norm.comp's mean is one f32 sum: at an offset of 1000 it is good to ~ulp(sum) / count */
        double tol = cases[k].offset >= 1000 ? 1e-4 : 1e-5;
        CHECK_MSG(vkp_compare(g, in.t, in.n, tol, true), "%s", cases[k].what);
    }
    ops_free_all();
}

TEST(ops_chan_norm_errors) {
    rlx_graph *g = ops_graph();
    int64_t xd[4] = {1, 6, 3, 3}, cd[1] = {6}, bad[1] = {5};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd), p = rlx_input(g, "p", RLX_F32, 1, cd);
    rlx_node q = rlx_input(g, "q", RLX_F32, 1, bad);
    CHECK(rlx_group_norm(g, x, p, p, 4, 1e-5f) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_SHAPE);
    CHECK(strstr(rlx_last_error(), "groups 4 must divide the 6 channels"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd), p = rlx_input(g, "p", RLX_F32, 1, cd), q = rlx_input(g, "q", RLX_F32, 1, bad);
    CHECK(rlx_batch_norm(g, x, p, p, q, p, 1e-5f) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_SHAPE);
    CHECK(strstr(rlx_last_error(), "batch_norm") && strstr(rlx_last_error(), "mean must be [6]"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd), p = rlx_input(g, "p", RLX_F32, 1, cd);
    CHECK(rlx_group_norm(g, x, p, p, 0, 1e-5f) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd), p = rlx_input(g, "p", RLX_F32, 1, cd);
    CHECK(rlx_batch_norm(g, x, p, p, p, p, -1.0f) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT);
    g = ops_graph();
    int64_t v[1] = {6};
    x = rlx_input(g, "x", RLX_F32, 1, v);
    CHECK(rlx_layer_norm_channels(g, x, x, x, 1e-5f) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_SHAPE);
    ops_free_all();
}
