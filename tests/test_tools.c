/*
 * test_tools.c — the README's C example and the `rlx` CLI, run as separate
 * processes: the example prints what the README says it prints, and the CLI
 * commands succeed (or fail with a usage error) as documented.
 * `make test` passes their paths in RLX_README_EXAMPLE and RLX_CLI.
 */
#include "harness.h"
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
}
