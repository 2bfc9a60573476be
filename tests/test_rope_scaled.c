/*
 * test_rope_scaled.c — rotary embedding with per-frequency factors (llama3
 * long-context scaling): against a float64 reference at large positions, both
 * styles, on the CPU and on Vulkan; bad factor shapes are rejected.
 */
#include "vk_parity.h"
#include "ref64.h"
#include <stdlib.h>
#include <string.h>

enum { B = 1, H = 2, S = 5, D = 16, R = 12 };

static rlx_graph *graph(int style, rlx_node *ffn_out) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[4] = {B, H, S, D}, one[1] = {1}, fd[1] = {R / 2};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_node off = rlx_input(g, "off", RLX_I32, 1, one);
    rlx_node ff = rlx_input(g, "ff", RLX_F32, 1, fd);
    if (ffn_out) *ffn_out = ff;
    rlx_output(g, "y", rlx_rope_scaled(g, x, off, (rlx_rope_style)style, 500000.0f, R, ff));
    return g;
}

TEST(rope_scaled_matches_reference_and_gpu) {
    for (int style = 0; style < 2; style++) {
        float x[B * H * S * D], ff[R / 2];
        test_fill_uniform_f32(x, B * H * S * D, -1, 1);
        for (int i = 0; i < R / 2; i++) ff[i] = i < 2 ? 1.0f : (float)test_rand_uniform(1.0, 8.0);
        int32_t off = 7000;
        rlx_graph *g = graph(style, NULL);
        rlx_tensor in[3] = {
            {.name = "x", .dtype = RLX_F32, .rank = 4, .dims = {B, H, S, D}, .data = x, .bytes = sizeof x},
            {.name = "off", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &off, .bytes = 4},
            {.name = "ff", .dtype = RLX_F32, .rank = 1, .dims = {R / 2}, .data = ff, .bytes = sizeof ff},
        };
        rlx_exec *e;
        CHECK_OK(rlx_compile(g, NULL, &e));
        CHECK_OK(rlx_exec_run(e, in, 3));
        float y[B * H * S * D];
        CHECK_OK(rlx_exec_read_output(e, "y", y, sizeof y));
        rlx_exec_free(e);
        double x64[B * H * S * D], ff64[R / 2], want[B * H * S * D];
        for (int i = 0; i < B * H * S * D; i++) x64[i] = x[i];
        for (int i = 0; i < R / 2; i++) ff64[i] = ff[i];
        ref_rope_ff(x64, B, H, S, D, off, (rlx_rope_style)style, 500000.0, R, ff64, want);
        CHECK(test_close_f32_f64(style ? "gptj" : "neox", y, want, B * H * S * D, 2e-6));
        if (vkp_available()) CHECK(vkp_compare(g, in, 3, 2e-6, true));
        rlx_graph_free(g);
    }
}

TEST(rope_scaled_rejects_bad_factors) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[4] = {1, 1, 2, 8}, fd[1] = {3};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_node ff = rlx_input(g, "ff", RLX_F32, 1, fd);   /* rotary 8 needs 4 factors */
    CHECK(rlx_rope_scaled(g, x, RLX_NO_NODE, RLX_ROPE_NEOX, 10000.0f, 0, ff) == RLX_NO_NODE);
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE && strstr(rlx_last_error(), "factors"));
    rlx_graph_free(g);
}
