/*
 * test_tools.c — the README's C example and the `rlx` CLI, run as separate
 * processes: the example prints what the README says it prints, and the CLI
 * commands succeed (or fail with a usage error) as documented, and `rlx dump`
 * shows fused ops with their paths (on the demo encoder and a tiny model).
 * `make test` passes their paths in RLX_README_EXAMPLE and RLX_CLI.
 */
#include "harness.h"
#include "quant/quant.h"
#include "tiny_model.h"
#include "vk_parity.h"
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

TEST(tools_readme_example_runs) {
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "%s", test_program("RLX_README_EXAMPLE", "build/readme_example"));
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s exited %d: %s", cmd, code, out);
    CHECK_MSG(strstr(out, "y = [[1.5, 0], [4.5, 0]]") != NULL, "README example printed: %s", out);
}

TEST(tools_cli_commands) {
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    char out[65536], cmd[512];
    snprintf(cmd, sizeof cmd, "%s version", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 0 && strncmp(out, "rlx ", 4) == 0);
    snprintf(cmd, sizeof cmd, "%s ops", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
    for (int i = 0; i < rlx_op_count(); i++) CHECK_MSG(strstr(out, rlx_op_name(i)) != NULL, "ops lacks %s", rlx_op_name(i));
    snprintf(cmd, sizeof cmd, "%s devices", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 0 && strstr(out, "cpu") != NULL);
    snprintf(cmd, sizeof cmd, "%s frobnicate 2>/dev/null", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
    snprintf(cmd, sizeof cmd, "%s demo --seq 0 2>/dev/null", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
}

TEST(tools_cli_demo_small) {
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    char out[65536], cmd[512];
    snprintf(cmd, sizeof cmd, "%s demo --layers 1 --d-model 64 --heads 4 --d-ff 128 --seq 16 --runs 3 --report", rlx);
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "demo exited %d: %s", code, out);
    CHECK(strstr(out, "(ok)") != NULL);
    CHECK(strstr(out, "time per run") != NULL && strstr(out, "arena") != NULL);
    CHECK(strstr(out, "cpu-kernel") != NULL);
    CHECK(strstr(out, "RESULT demo wall_ms ") != NULL && strstr(out, "precision f32") != NULL);
    /* --precision fast (the CPU computes f32 either way) and --no-check */
    snprintf(cmd, sizeof cmd, "%s demo --layers 1 --d-model 64 --heads 4 --d-ff 128 --seq 16 --runs 3 --device cpu "
             "--precision fast --no-check", rlx);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "demo --precision fast exited %d: %s", code, out);
    CHECK(strstr(out, "precision fast") != NULL && strstr(out, "skipped (--no-check)") != NULL);
    CHECK(strstr(out, "rel_err -1.000e+00") != NULL);
    snprintf(cmd, sizeof cmd, "%s demo --precision half 2>/dev/null", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
    snprintf(cmd, sizeof cmd, "%s demo --precision 2>/dev/null", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
}

/* `rlx dump --demo`: the encoder after fusion, each node with its path. */
TEST(tools_cli_dump_demo) {
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    static char out[65536];
    char cmd[512];
    const char *small = "--layers 1 --d-model 64 --heads 4 --d-ff 128 --seq 16";
    snprintf(cmd, sizeof cmd, "%s dump --demo %s --device cpu", rlx, small);
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s exited %d: %s", cmd, code, out);
    /* fused ops, with the CPU's paths */
    CHECK_MSG(strstr(out, "cpu-kernel  matmul_bias_act") && strstr(out, "cpu-kernel  add_layer_norm") &&
                  strstr(out, "view        reshape") && strstr(out, "source      param 'layer0.wq'") &&
                  strstr(out, "fused nodes"),
              "dump --demo (cpu) printed:\n%s", out);
    snprintf(cmd, sizeof cmd, "%s dump --demo --seq 0 2>/dev/null", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
    snprintf(cmd, sizeof cmd, "%s dump 2>/dev/null", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 2);
    snprintf(cmd, sizeof cmd, "%s dump /nonexistent/model.gguf --device cpu 2>&1", rlx);
    CHECK(test_run_command(cmd, out, sizeof out) == 1 && strstr(out, "nonexistent"));
    if (!vkp_available()) return;
    snprintf(cmd, sizeof cmd, "%s dump --demo %s --device vulkan", rlx, small);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s exited %d: %s", cmd, code, out);
    /* on the GPU each kernel line ends with the kernel's tier */
    const char *mm = strstr(out, "gpu    matmul_bias_act");
    const char *eol = mm ? strchr(mm, '\n') : NULL;
    CHECK_MSG(mm && eol && memmem(mm, (size_t)(eol - mm), "tiled", 5) && strstr(out, "gpu    add_layer_norm") &&
                  strstr(out, "backend vulkan"),
              "dump --demo (vulkan) printed:\n%s", out);
}

/* `rlx dump MODEL.gguf`: a Llama model's decode program after fusion. */
TEST(tools_cli_dump_model) {
    const char *rlx = test_program("RLX_CLI", "build/rlx");
    char path[256], cmd[768];
    static char out[262144];
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    spec.weight_type = QTYPE_Q8_0;
    tiny_model_tmp_path(path, sizeof path, "dump");
    CHECK_MSG(tiny_model_write(&spec, path) == 0, "write %s", rlx_last_error());
    for (int vk = 0; vk < 2; vk++) {
        if (vk && !vkp_available()) break;
        snprintf(cmd, sizeof cmd, "%s dump %s --device %s --ctx 32 2>&1", rlx, path, vk ? "vulkan" : "cpu");
        int code = test_run_command(cmd, out, sizeof out);
        bool ok = code == 0 && strstr(out, "program for 1 token") && strstr(out, vk ? "gpu    rms_dequant" : "cpu-kernel  ") &&
                  strstr(out, vk ? "dequant_rope_kv" : "rope_kv_write") && strstr(out, "dequant_matmul_add");
        if (!ok) printf("    %s exited %d:\n%s", cmd, code, out);
        if (!ok) remove(path);
        CHECK(ok);
    }
    snprintf(cmd, sizeof cmd, "%s dump %s --device cpu --tokens 4 2>&1", rlx, path);
    int code = test_run_command(cmd, out, sizeof out);
    remove(path);
    CHECK_MSG(code == 0 && strstr(out, "program for 4 tokens"), "%s exited %d: %s", cmd, code, out);
}
