/*
 * test_fusion.c — every fusion pattern: the fused graph (fusion on) and the
 * unfused graph (fusion off) agree, the fused one really has fused nodes, and
 * patterns whose interior result has another use are left alone.
 */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fused_run {
    float *out;
    int    fused_nodes;
    int    steps;
} fused_run;

/* Compiles g with fusion on or off, sets every param to random values seeded
 * by its name, runs once with random input "x" and returns the output "y". */
static bool run_graph(const rlx_graph *g, int fuse, const int64_t *xdims, int xrank, fused_run *r) {
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;   /* AUTO would take a GPU where there is one */
    o.fuse = fuse;
    rlx_exec *e;
    if (rlx_compile(g, &o, &e) != RLX_OK) { printf("    compile: %s\n", rlx_last_error()); return false; }
    for (int i = 0; i < rlx_exec_param_count(e); i++) {
        rlx_tensor info;
        rlx_exec_param_info(e, i, &info);
        size_t n = info.bytes / 4;
        float *p = malloc(info.bytes);
        uint64_t h = 7;
        for (const char *c = info.name; *c; c++) h = h * 131 + (unsigned char)*c;
        for (size_t j = 0; j < n; j++) { h = h * 6364136223846793005ull + 1442695040888963407ull; p[j] = (float)((h >> 40) / 16777216.0 - 0.5); }
        rlx_exec_set_param_f32(e, info.name, p, n);
        free(p);
    }
    int64_t n = 1;
    for (int i = 0; i < xrank; i++) n *= xdims[i];
    float *x = malloc((size_t)n * 4);
    uint64_t h = 99;
    for (int64_t i = 0; i < n; i++) { h = h * 6364136223846793005ull + 1442695040888963407ull; x[i] = (float)((h >> 40) / 16777216.0 * 4 - 2); }
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = xrank, .data = x, .bytes = (size_t)n * 4};
    memcpy(in.dims, xdims, sizeof(int64_t) * (size_t)xrank);
    rlx_status st = rlx_exec_run(e, &in, 1);
    free(x);
    rlx_tensor out;
    if (st != RLX_OK || rlx_exec_output(e, "y", &out) != RLX_OK) {
        printf("    run: %s\n", rlx_last_error());
        rlx_exec_free(e);
        return false;
    }
    r->out = malloc(out.bytes);
    memcpy(r->out, out.data, out.bytes);
    rlx_exec_stats s;
    rlx_exec_get_stats(e, &s);
    r->fused_nodes = s.fused_nodes;
    r->steps = s.steps;
    rlx_exec_free(e);
    return true;
}

static double max_rel_diff(const float *a, const float *b, int64_t n) {
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* Checks fused == unfused and the expected number of fused nodes. */
#define CHECK_FUSION(g, xdims, xrank, n_out, want_fused)                                           \
    do {                                                                                           \
        fused_run on = {0}, off = {0};                                                             \
        CHECK(run_graph(g, 1, xdims, xrank, &on));                                                 \
        CHECK(run_graph(g, 0, xdims, xrank, &off));                                                \
        double d_ = max_rel_diff(on.out, off.out, n_out);                                          \
        int fo_ = on.fused_nodes, ff_ = off.fused_nodes, so_ = on.steps, sf_ = off.steps;          \
        free(on.out);                                                                              \
        free(off.out);                                                                             \
        CHECK_MSG(d_ < 1e-6, "fused vs unfused rel diff %.3g", d_);                                \
        CHECK_MSG(fo_ == (want_fused), "fused nodes %d, want %d", fo_, want_fused);                \
        CHECK_MSG(ff_ == 0, "fusion off still fused %d nodes", ff_);                               \
        CHECK_MSG((want_fused) == 0 ? so_ == sf_ : so_ < sf_, "steps fused %d unfused %d", so_, sf_); \
    } while (0)

TEST(fusion_matmul_bias_each_activation) {
    rlx_node (*acts[])(rlx_graph *, rlx_node) = {rlx_relu, rlx_gelu, rlx_gelu_tanh, rlx_silu, rlx_sigmoid, rlx_tanh, NULL};
    for (int a = 0; a < 7; a++) {
        rlx_graph *g = rlx_graph_new();
        int64_t xd[3] = {2, 5, 7}, wd[2] = {9, 7}, bd[1] = {9};
        rlx_node x = rlx_input(g, "x", RLX_F32, 3, xd);
        rlx_node w = rlx_param(g, "w", RLX_F32, 2, wd);
        rlx_node b = rlx_param(g, "b", RLX_F32, 1, bd);
        /* bias as the first operand on odd iterations */
        rlx_node mm = rlx_matmul(g, x, w, 1);
        rlx_node y = a % 2 ? rlx_add(g, b, mm) : rlx_add(g, mm, b);
        if (acts[a]) y = acts[a](g, y);
        rlx_output(g, "y", y);
        CHECK_FUSION(g, xd, 3, 2 * 5 * 9, 1);
        rlx_graph_free(g);
    }
}

TEST(fusion_matmul_activation_without_bias) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {6, 8}, wd[2] = {8, 5};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node w = rlx_param(g, "w", RLX_F32, 2, wd);
    rlx_output(g, "y", rlx_silu(g, rlx_matmul(g, x, w, 0)));
    CHECK_FUSION(g, xd, 2, 6 * 5, 1);
    rlx_graph_free(g);
}

/* matmul with transpose_a (rlx_matmul_ex) + bias + activation fuses into a
 * matmul_bias_act that keeps the transpose: fused == unfused. */
TEST(fusion_matmul_transpose_a_bias_act) {
    for (int tb = 0; tb < 2; tb++) {
        rlx_graph *g = rlx_graph_new();
        int64_t xd[2] = {11, 6}, wd[2] = {tb ? 9 : 11, tb ? 11 : 9}, bd[1] = {9};   /* x [K, M], w [K, N] or [N, K] */
        rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
        rlx_node mm = rlx_matmul_ex(g, x, rlx_param(g, "w", RLX_F32, 2, wd),
                                    RLX_MATMUL_TRANSPOSE_A | (tb ? RLX_MATMUL_TRANSPOSE_B : 0u), RLX_NO_NODE, RLX_ACT_NONE);
        rlx_output(g, "y", rlx_gelu(g, rlx_add(g, mm, rlx_param(g, "b", RLX_F32, 1, bd))));
        CHECK_FUSION(g, xd, 2, 6 * 9, 1);
        rlx_graph_free(g);
    }
}

TEST(fusion_residual_norms) {
    for (int kind = 0; kind < 4; kind++) {
        rlx_graph *g = rlx_graph_new();
        int64_t xd[2] = {5, 33}, dd[1] = {33};
        rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
        rlx_node r = rlx_param(g, "r", RLX_F32, 2, xd);
        rlx_node gamma = rlx_param(g, "gamma", RLX_F32, 1, dd);
        rlx_node beta = kind % 2 ? rlx_param(g, "beta", RLX_F32, 1, dd) : RLX_NO_NODE;
        rlx_node s = rlx_add(g, x, r);
        rlx_node y = kind < 2 ? rlx_layer_norm(g, s, gamma, beta, 1e-5f) : rlx_rms_norm(g, s, gamma, beta, 1e-6f);
        rlx_output(g, "y", y);
        CHECK_FUSION(g, xd, 2, 5 * 33, 1);
        rlx_graph_free(g);
    }
}

TEST(fusion_skips_interior_with_other_uses) {
    /* the matmul result is also an output: no fusion may swallow it */
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {4, 6}, wd[2] = {6, 3}, bd[1] = {3};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node mm = rlx_matmul(g, x, rlx_param(g, "w", RLX_F32, 2, wd), 0);
    rlx_output(g, "mm", mm);
    rlx_output(g, "y", rlx_relu(g, rlx_add(g, mm, rlx_param(g, "b", RLX_F32, 1, bd))));
    CHECK_FUSION(g, xd, 2, 4 * 3, 0);
    rlx_graph_free(g);

    /* the residual sum feeds the next block too (pre-norm): left unfused */
    g = rlx_graph_new();
    int64_t dd[1] = {6};
    x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node s = rlx_add(g, x, rlx_param(g, "r", RLX_F32, 2, xd));
    rlx_node n = rlx_rms_norm(g, s, rlx_param(g, "g", RLX_F32, 1, dd), RLX_NO_NODE, 1e-6f);
    rlx_output(g, "y", rlx_add(g, n, s));
    CHECK_FUSION(g, xd, 2, 4 * 6, 0);
    rlx_graph_free(g);
}

TEST(fusion_bias_must_be_a_row_vector) {
    /* adding a [M,N] tensor is a residual, not a bias: no matmul fusion */
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {4, 6}, wd[2] = {6, 3}, od[2] = {4, 3};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node mm = rlx_matmul(g, x, rlx_param(g, "w", RLX_F32, 2, wd), 0);
    rlx_output(g, "y", rlx_add(g, mm, rlx_param(g, "c", RLX_F32, 2, od)));
    CHECK_FUSION(g, xd, 2, 4 * 3, 0);
    rlx_graph_free(g);
}

TEST(fusion_env_override_turns_it_off) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {6, 8}, wd[2] = {8, 5};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_output(g, "y", rlx_relu(g, rlx_matmul(g, x, rlx_param(g, "w", RLX_F32, 2, wd), 0)));
    setenv("RLX_NO_FUSE", "1", 1);
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(g, NULL, &e);
    unsetenv("RLX_NO_FUSE");
    CHECK_OK(st);
    rlx_exec_stats s;
    CHECK_OK(rlx_exec_get_stats(e, &s));
    rlx_exec_free(e);
    rlx_graph_free(g);
    CHECK(s.fused_nodes == 0 && s.steps == 2);
}
