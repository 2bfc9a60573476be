/*
 * test_vk_sumsq.c — RMS statistics on Vulkan for rows whose squares overflow
 * f32 (|x| beyond ~1e19; src/vulkan/shaders/sumsq.glsl): rms_norm and
 * layer_norm (norm.comp) and the RMS norm folded into the i8 decode matvec,
 * against the CPU, which sums in double.
 */
#include "harness.h"
#include "ops_common.h"
#include "vk_parity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { QK = 512 };

/* Row r of [rows, d]: uniform values times 10^scale[r], a few of them huge
 * next to the rest in the mixed rows. */
static void fill_rows(float *x, int rows, int d) {
    static const float scale[6] = {1.0f, 1e18f, 1e22f, 1e30f, 1e37f, 1.0f};
    for (int r = 0; r < rows; r++) {
        test_fill_uniform_f32(x + (size_t)r * d, d, -1, 1);
        for (int j = 0; j < d; j++) x[(size_t)r * d + j] *= scale[r % 6];
        if (r % 6 == 5) x[(size_t)r * d + 3] = 3e36f;   /* one huge value in a row of small ones */
    }
}

TEST(vk_norm_huge_rows) {
    VKP_REQUIRE();
    enum { ROWS = 6, D = 1000 };
    static float x[ROWS * D], g[D], b[D];
    fill_rows(x, ROWS, D);
    test_fill_uniform_f32(g, D, 0.5f, 1.5f);
    test_fill_uniform_f32(b, D, -1, 1);
    for (int kind = 0; kind < 2; kind++) {
        rlx_graph *gr = rlx_graph_new();
        int64_t xd[2] = {ROWS, D}, gd[1] = {D};
        rlx_node xn = rlx_input(gr, "x", RLX_F32, 2, xd), gn = rlx_constant(gr, RLX_F32, 1, gd, g);
        rlx_node y = kind == 0 ? rlx_rms_norm(gr, xn, gn, RLX_NO_NODE, 1e-5f)
                               : rlx_layer_norm(gr, xn, gn, rlx_constant(gr, RLX_F32, 1, gd, b), 1e-5f);
        rlx_output(gr, "y", y);
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {ROWS, D}, .data = x, .bytes = sizeof x};
        CHECK_MSG(vkp_compare(gr, &in, 1, 1e-5, true), "%s", kind == 0 ? "rms_norm" : "layer_norm");
        rlx_graph_free(gr);
    }
}

/* The folded norm (rms_dequant_matmul, i8 kernel) on huge rows, one per run. */
TEST(vk_norm_fold_huge_rows) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    static float x[6 * QK], g[QK];
    fill_rows(x, 6, QK);
    test_fill_uniform_f32(g, QK, 0.5f, 1.5f);
    double *wd;
    size_t bytes;
    void *w = ops_quantized_weights(RLX_Q4_K, 64, QK, &wd, &bytes);
    rlx_graph *gr = rlx_graph_new();
    int64_t xd[2] = {1, QK}, gd[1] = {QK}, wdims[2] = {64, QK};
    rlx_node xn = rlx_input(gr, "x", RLX_F32, 2, xd);
    rlx_node h = rlx_rms_norm(gr, xn, rlx_constant(gr, RLX_F32, 1, gd, g), RLX_NO_NODE, 1e-5f);
    rlx_output(gr, "y", rlx_dequant_matmul(gr, h, rlx_constant(gr, RLX_Q4_K, 2, wdims, w)));
    {   /* the norm must be folded, else this tests norm.comp again */
        rlx_compile_options o;
        vkp_options(&o);
        rlx_exec *e = NULL;
        char *rep = NULL;
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, QK}, .data = x, .bytes = sizeof(float) * QK};
        bool folded = rlx_compile(gr, &o, &e) == RLX_OK && rlx_exec_run(e, &in, 1) == RLX_OK &&
                      (rep = rlx_exec_report(e)) && strstr(rep, "dequant-i8-norm-q4_K");
        CHECK_MSG(folded, "the RMS norm was not folded into the i8 matvec:\n%s", rep ? rep : rlx_last_error());
        free(rep);
        rlx_exec_free(e);
    }
    for (int r = 0; r < 6; r++) {
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, QK}, .data = x + (size_t)r * QK,
                         .bytes = sizeof(float) * QK};
        CHECK_MSG(vkp_compare(gr, &in, 1, 2e-4, true), "row %d", r);
    }
    rlx_graph_free(gr);
    free(w);
    free(wd);
}
