/*
 * test_fold_bn.c — batch_norm folded into the conv before it
 * (passes/fold_bn.c): a conv + batch_norm (+ relu) graph gives the same
 * result folded and unfolded (opts.fuse = 0) on the CPU and on Vulkan, the
 * folded program has no batch_norm (or relu) step, a changed statistic after
 * a run reaches the next run, constants fold at compile time, a conv
 * whose result has another use is left alone, and a relu straight after a
 * conv becomes the conv's activation; checkpoints skip the folded params.
 */
#include "ops_common.h"
#include "vk_parity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 2, C = 3, O = 4, H = 7, W = 6, K = 3 };

typedef struct bn_data { float w[O * C * K * K], b[O], st[4][O]; } bn_data;

static void fill(bn_data *d) {
    float *r = ops_rand_f32(O * C * K * K, -1, 1);
    memcpy(d->w, r, sizeof d->w);
    memcpy(d->b, ops_rand_f32(O, -1, 1), sizeof d->b);
    for (int k = 0; k < 4; k++) memcpy(d->st[k], ops_rand_f32(O, k == 3 ? 0.2 : -1.5, 1.5), sizeof d->st[k]);
}

static const char *stat_names[4] = {"gamma", "beta", "mean", "var"};

/* consts: w, b and the statistics as constants instead of params; extra_use:
 * the conv result is an output too; relu: a relu after the batch_norm. */
static rlx_graph *build(const bn_data *d, bool consts, bool extra_use, bool relu, bool bias) {
    rlx_graph *g = ops_graph();
    int64_t xd[4] = {N, C, H, W}, wd[4] = {O, C, K, K}, od[1] = {O};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_node w = consts ? rlx_constant(g, RLX_F32, 4, wd, d->w) : rlx_param(g, "w", RLX_F32, 4, wd);
    rlx_node b = !bias ? RLX_NO_NODE : consts ? rlx_constant(g, RLX_F32, 1, od, d->b) : rlx_param(g, "b", RLX_F32, 1, od);
    rlx_node s[4];
    for (int k = 0; k < 4; k++) s[k] = consts ? rlx_constant(g, RLX_F32, 1, od, d->st[k]) : rlx_param(g, stat_names[k], RLX_F32, 1, od);
    rlx_conv_params p = {.pad_begin = {1, 0}, .pad_end = {1, 1}, .stride = {1, 2}};
    rlx_node cv = rlx_conv(g, x, w, b, &p);
    rlx_node y = rlx_batch_norm(g, cv, s[0], s[1], s[2], s[3], 1e-5f);
    if (relu) y = rlx_relu(g, y);
    rlx_output(g, "y", y);
    if (extra_use) rlx_output(g, "conv", cv);
    return g;
}

static void set_params(rlx_exec *e, const bn_data *d, bool bias) {
    CHECK(rlx_exec_set_param_f32(e, "w", d->w, O * C * K * K) == RLX_OK);
    if (bias) CHECK(rlx_exec_set_param_f32(e, "b", d->b, O) == RLX_OK);
    for (int k = 0; k < 4; k++) CHECK(rlx_exec_set_param_f32(e, stat_names[k], d->st[k], O) == RLX_OK);
}

static rlx_exec *compile(const rlx_graph *g, int fuse, bool vulkan) {
    rlx_compile_options o;
    if (vulkan) vkp_options(&o);
    else rlx_compile_options_init(&o), o.backend = RLX_BACKEND_CPU;
    o.fuse = fuse;
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(g, &o, &e);
    if (st != RLX_OK) harness_fail(__FILE__, __LINE__, "compile: %s", rlx_last_error());
    return e;
}

static bool run(rlx_exec *e, const float *x, float *y, int64_t ny) {
    ref_shape xs = {4, {N, C, H, W}};
    rlx_tensor in = ops_tensor("x", RLX_F32, xs, (void *)x);
    rlx_status st = rlx_exec_run(e, &in, 1);
    if (st != RLX_OK) harness_fail(__FILE__, __LINE__, "run: %s", rlx_last_error());
    return st == RLX_OK && rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)ny) == RLX_OK;
}

static bool report_has(const rlx_exec *e, const char *what) {
    char *r = rlx_exec_report(e);
    bool has = r && strstr(r, what);
    free(r);
    return has;
}

static int64_t out_numel(void) { return (int64_t)N * O * H * 3; }

static double rel_err(const float *a, const float *b, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]), den += (double)b[i] * b[i];
    return sqrt(num / (den > 0 ? den : 1));
}

static void check_folds(bool vulkan) {
    for (int variant = 0; variant < 4; variant++) {
        bool relu = variant & 1, bias = variant & 2;
        bn_data d;
        fill(&d);
        rlx_graph *g = build(&d, false, false, relu, bias);
        rlx_exec *ref = compile(g, 0, false), *e = compile(g, 1, vulkan);
        if (!ref || !e) { rlx_exec_free(ref), rlx_exec_free(e); return; }
        CHECK(report_has(ref, "batch_norm"));
        CHECK_MSG(!report_has(e, "batch_norm"), "the folded program still has a batch_norm");
        if (relu) CHECK_MSG(!report_has(e, "relu"), "the relu did not join the conv");
        set_params(ref, &d, bias), set_params(e, &d, bias);
        float *x = ops_rand_f32(N * C * H * W, -2, 2), *want = ops_f32(out_numel()), *got = ops_f32(out_numel());
        CHECK(run(ref, x, want, out_numel()) && run(e, x, got, out_numel()));
        CHECK_MSG(rel_err(got, want, out_numel()) < 1e-5, "variant %d: folded differs by %g", variant,
                  rel_err(got, want, out_numel()));
        /* a statistic changed after a run reaches the next run */
        for (int o = 0; o < O; o++) d.st[3][o] *= 2.0f, d.st[0][o] += 0.5f;
        CHECK(rlx_exec_set_param_f32(ref, "var", d.st[3], O) == RLX_OK && rlx_exec_set_param_f32(e, "var", d.st[3], O) == RLX_OK);
        CHECK(rlx_exec_set_param_f32(ref, "gamma", d.st[0], O) == RLX_OK && rlx_exec_set_param_f32(e, "gamma", d.st[0], O) == RLX_OK);
        CHECK(run(ref, x, want, out_numel()) && run(e, x, got, out_numel()));
        CHECK_MSG(rel_err(got, want, out_numel()) < 1e-5, "variant %d after new statistics: %g", variant,
                  rel_err(got, want, out_numel()));
        rlx_exec_free(ref), rlx_exec_free(e);
    }
}

TEST(fold_bn_conv_params) { check_folds(false); ops_free_all(); }

TEST(vk_fold_bn_conv_params) {
    VKP_REQUIRE();
    check_folds(true);
    ops_free_all();
}

TEST(fold_bn_conv_constants) {
    bn_data d;
    fill(&d);
    rlx_graph *g = build(&d, true, false, true, true);
    rlx_exec *ref = compile(g, 0, false), *e = compile(g, 1, false);
    if (!ref || !e) { rlx_exec_free(ref), rlx_exec_free(e); return; }
    CHECK(!report_has(e, "batch_norm") && rlx_exec_param_count(e) == 0);
    float *x = ops_rand_f32(N * C * H * W, -2, 2), *want = ops_f32(out_numel()), *got = ops_f32(out_numel());
    CHECK(run(ref, x, want, out_numel()) && run(e, x, got, out_numel()));
    CHECK_MSG(rel_err(got, want, out_numel()) < 1e-5, "folded constants differ by %g", rel_err(got, want, out_numel()));
    rlx_exec_free(ref), rlx_exec_free(e);
    ops_free_all();
}

TEST(fold_bn_conv_other_use_stays) {
    bn_data d;
    fill(&d);
    rlx_graph *g = build(&d, false, true, false, true);
    rlx_exec *e = compile(g, 1, false);
    if (!e) return;
    CHECK_MSG(report_has(e, "batch_norm"), "a conv with another use must not fold");
    rlx_exec_free(e);
    ops_free_all();
}

TEST(fold_conv_relu_without_batch_norm) {
    rlx_graph *g = ops_graph();
    int64_t xd[4] = {N, C, H, W}, wd[4] = {O, C, K, K}, od[1] = {O};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_node cv = rlx_conv(g, x, rlx_param(g, "w", RLX_F32, 4, wd), rlx_param(g, "b", RLX_F32, 1, od),
                           &(rlx_conv_params){.pad_begin = {1, 0}, .pad_end = {1, 1}, .stride = {1, 2}});
    rlx_output(g, "y", rlx_relu(g, cv));
    rlx_exec *ref = compile(g, 0, false), *e = compile(g, 1, false);
    if (!ref || !e) { rlx_exec_free(ref), rlx_exec_free(e); return; }
    CHECK(report_has(ref, "relu") && !report_has(e, "relu"));
    bn_data d;
    fill(&d);
    for (int k = 0; k < 2; k++) {
        rlx_exec *t = k ? e : ref;
        CHECK(rlx_exec_set_param_f32(t, "w", d.w, O * C * K * K) == RLX_OK && rlx_exec_set_param_f32(t, "b", d.b, O) == RLX_OK);
    }
    float *x0 = ops_rand_f32(N * C * H * W, -2, 2), *want = ops_f32(out_numel()), *got = ops_f32(out_numel());
    CHECK(run(ref, x0, want, out_numel()) && run(e, x0, got, out_numel()));
    CHECK_MSG(rel_err(got, want, out_numel()) < 1e-6, "conv + relu differs by %g", rel_err(got, want, out_numel()));
    rlx_exec_free(ref), rlx_exec_free(e);
    ops_free_all();
}

/* A checkpoint of the unfolded exec loads into the folded one (the folded
 * params are derived, neither saved nor expected) and gives its results. */
TEST(fold_bn_checkpoint_round_trip) {
    bn_data d;
    fill(&d);
    rlx_graph *g = build(&d, false, false, true, true);
    rlx_exec *ref = compile(g, 0, false), *e = compile(g, 1, false);
    if (!ref || !e) { rlx_exec_free(ref), rlx_exec_free(e); return; }
    set_params(ref, &d, true);
    char path[] = "/tmp/rlx_fold_bn_ckpt_XXXXXX";
    CHECK(test_temp_file(path));
    CHECK_MSG(rlx_exec_save_params(e, path, 0, NULL) == RLX_OK, "%s", rlx_last_error());   /* the folded exec's: no fold params */
    CHECK_MSG(rlx_exec_save_params(ref, path, 0, NULL) == RLX_OK, "%s", rlx_last_error());
    CHECK_MSG(rlx_exec_load_params(e, path, 0) == RLX_OK, "%s", rlx_last_error());
    remove(path);
    float *x = ops_rand_f32(N * C * H * W, -2, 2), *want = ops_f32(out_numel()), *got = ops_f32(out_numel());
    CHECK(run(ref, x, want, out_numel()) && run(e, x, got, out_numel()));
    CHECK_MSG(rel_err(got, want, out_numel()) < 1e-5, "after the checkpoint: %g", rel_err(got, want, out_numel()));
    rlx_exec_free(ref), rlx_exec_free(e);
    ops_free_all();
}
