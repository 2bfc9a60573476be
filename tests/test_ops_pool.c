/*
 * test_ops_pool.c — pool (max and average) against a float64 reference on
 * random inputs: 1, 2 and 3 spatial dims, strides, asymmetric padding, ceil
 * mode (a last window starting in the end padding is dropped), both average
 * divisors; every op-test configuration on the CPU and Vulkan against the
 * CPU. The exported-model test (test_onnx_import.c) checks the same rules
 * against PyTorch. Bad windows are errors naming the node.
 */
#include "ops_common.h"
#include "vk_parity.h"

#include <math.h>
#include <string.h>

typedef struct pool_case {
    const char *what;
    rlx_pool_kind kind;
    int dims;
    int64_t N, C, in[3], k[3], st[3], pb[3], pe[3];
    int ceil_mode, include_pad;
} pool_case;

static const pool_case cases[] = {
    {"max 2d 3x3 s2 p1 (resnet)", RLX_MAXPOOL, 2, 2, 3, {9, 10}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0, 0},
    {"max 2d ceil", RLX_MAXPOOL, 2, 1, 2, {7, 8}, {2, 3}, {2, 2}, {0, 1}, {0, 1}, 1, 0},
    {"avg 2d include pad", RLX_AVGPOOL, 2, 1, 3, {6, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, 0, 1},
    {"avg 2d exclude pad ceil", RLX_AVGPOOL, 2, 2, 2, {7, 9}, {3, 2}, {2, 2}, {1, 0}, {1, 1}, 1, 0},
    {"avg 2d include pad ceil", RLX_AVGPOOL, 2, 1, 2, {5, 5}, {2, 2}, {2, 2}, {1, 1}, {1, 1}, 1, 1},
    {"max 1d", RLX_MAXPOOL, 1, 2, 4, {13}, {4}, {3}, {2}, {1}, 1, 0},
    {"avg 3d", RLX_AVGPOOL, 3, 1, 2, {4, 5, 6}, {2, 3, 2}, {2, 1, 2}, {1, 1, 0}, {0, 1, 1}, 0, 0},
};

static int64_t out_size(const pool_case *c, int i) {
    int64_t room = c->in[i] + c->pb[i] + c->pe[i] - c->k[i];
    int64_t out = (c->ceil_mode ? (room + c->st[i] - 1) / c->st[i] : room / c->st[i]) + 1;
    if (c->ceil_mode && (out - 1) * c->st[i] >= c->in[i] + c->pb[i]) out--;
    return out;
}

static rlx_graph *build(const pool_case *c, ref_shape *xs, ref_shape *ys) {
    rlx_graph *g = ops_graph();
    xs->rank = ys->rank = c->dims + 2;
    xs->d[0] = ys->d[0] = c->N, xs->d[1] = ys->d[1] = c->C;
    for (int i = 0; i < c->dims; i++) xs->d[2 + i] = c->in[i], ys->d[2 + i] = out_size(c, i);
    rlx_node x = rlx_input(g, "x", RLX_F32, xs->rank, xs->d);
    rlx_pool_params p = {.kind = c->kind, .dims = c->dims, .ceil_mode = c->ceil_mode, .count_include_pad = c->include_pad};
    for (int i = 0; i < c->dims; i++) p.kernel[i] = c->k[i], p.stride[i] = c->st[i], p.pad_begin[i] = c->pb[i], p.pad_end[i] = c->pe[i];
    rlx_output(g, "y", rlx_pool(g, x, &p));
    return g;
}

static int64_t numel(const ref_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= s->d[i];
    return n;
}

TEST(ops_pool_f32) {
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_shape xs, ys;
        rlx_graph *g = build(&cases[k], &xs, &ys);
        float *x = ops_rand_f32(numel(&xs), -2, 2), *got = ops_f32(numel(&ys));
        double *want = ops_f64(numel(&ys));
        const pool_case *c = &cases[k];
        ref_pool_params rp = {.average = c->kind == RLX_AVGPOOL, .ceil_mode = c->ceil_mode, .count_include_pad = c->include_pad};
        for (int i = 0; i < c->dims; i++) rp.kernel[i] = c->k[i], rp.stride[i] = c->st[i], rp.pad_begin[i] = c->pb[i], rp.pad_end[i] = c->pe[i];
        ref_shape ws;
        ref_pool(ops_f32_to_f64(x, numel(&xs)), xs, &rp, want, &ws);
        rlx_tensor in = ops_tensor("x", RLX_F32, xs, x), out = ops_tensor("y", RLX_F32, ys, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            if (!ops_run(g, cfg, &in, 1, &out, 1)) return;
            CHECK_CLOSE(cases[k].what, got, want, numel(&ys), 1e-6);
        }
    }
    ops_free_all();
}

TEST(vk_ops_pool_f32) {
    VKP_REQUIRE();
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        ref_shape xs, ys;
        rlx_graph *g = build(&cases[k], &xs, &ys);
        float *x = ops_rand_f32(numel(&xs), -2, 2);
        x[0] = NAN;   /* max propagates it, average too */
        rlx_tensor in = ops_tensor("x", RLX_F32, xs, x);
        CHECK_MSG(vkp_compare(g, &in, 1, 1e-6, true), "%s", cases[k].what);
    }
    ops_free_all();
}

TEST(ops_pool_errors) {
    rlx_graph *g = ops_graph();
    int64_t xd[4] = {1, 2, 5, 5};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_pool_params p = {.kernel = {2, 2}, .pad_begin = {2, 0}};   /* padding over half the window */
    CHECK(rlx_pool(g, x, &p) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "half the window"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd);
    p = (rlx_pool_params){.kernel = {6, 2}};
    CHECK(rlx_pool(g, x, &p) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_SHAPE);
    CHECK(rlx_pool(g, x, NULL) == RLX_NO_NODE);
    g = ops_graph();
    x = rlx_input(g, "x", RLX_I32, 4, xd);
    p = (rlx_pool_params){.kernel = {2, 2}};
    CHECK(rlx_pool(g, x, &p) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_UNSUPPORTED);
    ops_free_all();
}
