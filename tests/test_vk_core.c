/*
 * test_vk_core.c — the Vulkan backend's core on whatever device is present
 * (lavapipe in CI): replay of the recorded command buffers with changing
 * inputs, host steps between GPU segments, the out-of-memory path, device
 * choice errors, the report, and AUTO never picking a software device.
 */
#include "vk_parity.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* y = relu(x W^T + b); z = exp(x) * 2 — a fused matmul and an elementwise chain */
static rlx_graph *small_graph(void) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {5, 7}, wd[2] = {3, 7}, bd[1] = {3};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node y = rlx_relu(g, rlx_add(g, rlx_matmul(g, x, rlx_param(g, "w", RLX_F32, 2, wd), 1),
                                     rlx_param(g, "b", RLX_F32, 1, bd)));
    rlx_output(g, "y", y);
    rlx_output(g, "z", rlx_mul(g, rlx_exp(g, x), rlx_scalar(g, RLX_F32, 2.0)));
    return g;
}

TEST(vk_core_replay_with_changing_inputs) {
    VKP_REQUIRE();
    rlx_graph *g = small_graph();
    for (int run = 0; run < 4; run++) {
        float x[35];
        test_fill_uniform_f32(x, 35, -2, 2);
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {5, 7}, .data = x, .bytes = sizeof x};
        CHECK(vkp_compare(g, &in, 1, 1e-5, false));
    }
    /* one exec, several runs: each output must follow its own input */
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e;
    CHECK_OK(rlx_compile(g, &o, &e));
    float w[21] = {0}, b[3] = {0};
    w[0] = 1;   /* y[:,0] = relu(x[:,0]) */
    CHECK_OK(rlx_exec_set_param_f32(e, "w", w, 21));
    CHECK_OK(rlx_exec_set_param_f32(e, "b", b, 3));
    for (int run = 0; run < 5; run++) {
        float x[35];
        for (int i = 0; i < 35; i++) x[i] = (float)(run + 1) * (i % 7 == 0 ? 1.0f : -1.0f);
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {5, 7}, .data = x, .bytes = sizeof x};
        CHECK_OK(rlx_exec_run(e, &in, 1));
        float y[15];
        CHECK_OK(rlx_exec_read_output(e, "y", y, sizeof y));
        for (int r = 0; r < 5; r++) CHECK_MSG(y[r * 3] == (float)(run + 1), "run %d row %d: %g", run, r, y[r * 3]);
    }
    rlx_exec_free(e);
    rlx_graph_free(g);
}

TEST(vk_core_host_steps_match_cpu) {
    VKP_REQUIRE();
    /* every node as a host step between (empty) GPU segments */
    setenv("RLX_VK_FORCE_HOST", "1", 1);
    rlx_graph *g = small_graph();
    float x[35];
    test_fill_uniform_f32(x, 35, -2, 2);
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {5, 7}, .data = x, .bytes = sizeof x};
    bool same = vkp_compare(g, &in, 1, 1e-6, false);
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(g, &o, &e);
    unsetenv("RLX_VK_FORCE_HOST");
    CHECK(same);
    CHECK_OK(st);
    rlx_exec_stats s;
    CHECK_OK(rlx_exec_get_stats(e, &s));
    char *rep = rlx_exec_report(e);
    CHECK(rep && strstr(rep, "HOST") && strstr(rep, "forced by RLX_VK_FORCE_HOST"));
    free(rep);
    CHECK_MSG(s.host_steps >= 3, "host steps %d", s.host_steps);
    CHECK(strcmp(s.backend, "vulkan") == 0 && s.device && s.device[0]);
    rlx_exec_free(e);
    rlx_graph_free(g);
}

TEST(vk_core_out_of_memory_is_clean) {
    VKP_REQUIRE();
    rlx_compile_options o;
    vkp_options(&o);
    /* a param far larger than any heap of a test device: 1 TiB */
    rlx_graph *g = rlx_graph_new();
    int64_t big[2] = {1 << 20, 1 << 18};
    rlx_node p = rlx_param(g, "huge", RLX_F32, 2, big);
    rlx_output(g, "y", rlx_neg(g, p));
    rlx_exec *e = NULL;
    CHECK_STATUS(rlx_compile(g, &o, &e), RLX_STATUS_OUT_OF_MEMORY);
    CHECK(e == NULL);
    rlx_graph_free(g);
    /* an arena larger than the heap */
    g = rlx_graph_new();
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, big);
    rlx_output(g, "y", rlx_exp(g, x));
    CHECK_STATUS(rlx_compile(g, &o, &e), RLX_STATUS_OUT_OF_MEMORY);
    rlx_graph_free(g);
    /* and the device still works afterwards */
    g = small_graph();
    float xs[35];
    test_fill_uniform_f32(xs, 35, -1, 1);
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {5, 7}, .data = xs, .bytes = sizeof xs};
    CHECK(vkp_compare(g, &in, 1, 1e-5, false));
    rlx_graph_free(g);
}

TEST(vk_core_device_choice_errors) {
    VKP_REQUIRE();
    rlx_graph *g = small_graph();
    rlx_compile_options o;
    vkp_options(&o);
    o.device_index = 99;
    rlx_exec *e = NULL;
    CHECK_STATUS(rlx_compile(g, &o, &e), RLX_STATUS_DEVICE);
    vkp_options(&o);
    o.device_name = "no-such-gpu-name";
    CHECK_STATUS(rlx_compile(g, &o, &e), RLX_STATUS_DEVICE);
    CHECK(strstr(rlx_last_error(), "no-such-gpu-name") != NULL);
    /* AUTO never picks a software device: on a machine whose only Vulkan
     * device is lavapipe it compiles for the CPU */
    rlx_compile_options a;
    rlx_compile_options_init(&a);
    CHECK_OK(rlx_compile(g, &a, &e));
    rlx_exec_stats s;
    rlx_exec_get_stats(e, &s);
    bool only_software = true;
    for (int i = 0; i < rlx_device_count(); i++) {
        rlx_device_info d;
        if (rlx_device_get_info(i, &d) == RLX_OK && d.kind == RLX_DEVICE_GPU) only_software = false;
    }
    if (only_software) CHECK_MSG(strcmp(s.backend, "cpu") == 0, "AUTO chose %s", s.backend);
    rlx_exec_free(e);
    rlx_graph_free(g);
}

TEST(vk_core_cli_without_vulkan) {
    /* the CLI keeps working where the loader finds no device at all */
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json %s devices", rlx);
    int st = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(st == 0, "rlx devices failed: %s", out);
    CHECK_MSG(strstr(out, "cpu") && strstr(out, "vulkan    none"), "output: %s", out);
}

TEST(vk_core_vectorized_elementwise_paths) {
    VKP_REQUIRE();
    /* same-shape contiguous f32 (the vec4 path) next to an odd size (the scalar path) */
    int64_t sizes[2] = {4096, 4099};
    for (int k = 0; k < 2; k++) {
        rlx_graph *g = rlx_graph_new();
        int64_t d[1] = {sizes[k]};
        rlx_node a = rlx_input(g, "a", RLX_F32, 1, d), b = rlx_input(g, "b", RLX_F32, 1, d);
        rlx_output(g, "sum", rlx_add(g, a, b));
        rlx_output(g, "max", rlx_max(g, a, b));
        rlx_output(g, "gelu", rlx_gelu(g, a));
        rlx_output(g, "copy", rlx_cast(g, b, RLX_F32));
        float *x = malloc(sizeof(float) * (size_t)sizes[k]), *y = malloc(sizeof(float) * (size_t)sizes[k]);
        test_fill_uniform_f32(x, sizes[k], -3, 3);
        test_fill_uniform_f32(y, sizes[k], -3, 3);
        rlx_tensor in[2] = {
            {.name = "a", .dtype = RLX_F32, .rank = 1, .dims = {sizes[k]}, .data = x, .bytes = 4 * (size_t)sizes[k]},
            {.name = "b", .dtype = RLX_F32, .rank = 1, .dims = {sizes[k]}, .data = y, .bytes = 4 * (size_t)sizes[k]},
        };
        bool ok = vkp_compare(g, in, 2, 2e-6, true);
        free(x);
        free(y);
        rlx_graph_free(g);
        CHECK(ok);
    }
}

TEST(vk_core_norm_rows_in_registers_and_long_rows) {
    VKP_REQUIRE();
    /* rows that fit the register cache (<= 4096) and rows that do not */
    int64_t widths[3] = {1000, 4096, 5000};
    for (int k = 0; k < 3; k++) {
        rlx_graph *g = rlx_graph_new();
        int64_t d[2] = {3, widths[k]}, dd[1] = {widths[k]};
        rlx_node x = rlx_input(g, "x", RLX_F32, 2, d), r = rlx_input(g, "r", RLX_F32, 2, d);
        rlx_node gamma = rlx_param(g, "g", RLX_F32, 1, dd), beta = rlx_param(g, "b", RLX_F32, 1, dd);
        rlx_output(g, "ln", rlx_layer_norm(g, rlx_add(g, x, r), gamma, beta, 1e-5f));
        rlx_output(g, "rms", rlx_rms_norm(g, x, gamma, RLX_NO_NODE, 1e-6f));
        size_t n = (size_t)(3 * widths[k]);
        float *a = malloc(4 * n), *b = malloc(4 * n);
        test_fill_uniform_f32(a, (int64_t)n, -2, 5);
        test_fill_uniform_f32(b, (int64_t)n, -1, 1);
        rlx_tensor in[2] = {
            {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {3, widths[k]}, .data = a, .bytes = 4 * n},
            {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {3, widths[k]}, .data = b, .bytes = 4 * n},
        };
        bool ok = vkp_compare(g, in, 2, 1e-5, true);
        free(a);
        free(b);
        rlx_graph_free(g);
        CHECK_MSG(ok, "width %lld", (long long)widths[k]);
    }
}

TEST(vk_core_bad_indices_fail_like_the_cpu) {
    VKP_REQUIRE();
    /* torch.gather with an index past the axis, and a cross-entropy label past C:
     * both backends must refuse the run with INVALID_ARGUMENT */
    for (int be = 0; be < 2; be++) {
        rlx_graph *g = rlx_graph_new();
        int64_t xd[2] = {2, 3}, nd[1] = {2};
        rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
        rlx_node idx = rlx_input(g, "idx", RLX_I32, 2, xd);
        rlx_node lab = rlx_input(g, "lab", RLX_I32, 1, nd);
        rlx_output(g, "g", rlx_gather(g, x, idx, 1));
        rlx_output(g, "loss", rlx_softmax_cross_entropy(g, x, lab));
        rlx_compile_options o;
        if (be) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
        rlx_exec *e;
        CHECK_OK(rlx_compile(g, &o, &e));
        float xs[6] = {1, 2, 3, 4, 5, 6};
        int32_t good_idx[6] = {0, 1, 2, 2, 1, 0}, bad_idx[6] = {0, 1, 3, 2, 1, 0}, good_lab[2] = {0, 2}, bad_lab[2] = {0, 3};
        rlx_tensor in[3] = {{"x", RLX_F32, 2, {2, 3}, xs, sizeof xs}, {"idx", RLX_I32, 2, {2, 3}, good_idx, sizeof good_idx},
                            {"lab", RLX_I32, 1, {2}, good_lab, sizeof good_lab}};
        CHECK_OK(rlx_exec_run(e, in, 3));
        in[1].data = bad_idx;
        CHECK_STATUS(rlx_exec_run(e, in, 3), RLX_STATUS_INVALID_ARGUMENT);
        in[1].data = good_idx;
        in[2].data = bad_lab;
        CHECK_STATUS(rlx_exec_run(e, in, 3), RLX_STATUS_INVALID_ARGUMENT);
        in[2].data = good_lab;
        CHECK_OK(rlx_exec_run(e, in, 3));
        rlx_exec_free(e);
        rlx_graph_free(g);
    }
}
