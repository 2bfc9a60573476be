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

static const char *path_or(const char *env, const char *fallback) {
    const char *p = getenv(env);
    return p && *p ? p : fallback;
}

/* Runs cmd, captures up to cap-1 bytes of stdout, returns the exit status. */
static int run_cmd(const char *cmd, char *out, size_t cap) {
    FILE *f = popen(cmd, "r");
    if (!f) return -1;
    size_t n = fread(out, 1, cap - 1, f);
    out[n] = 0;
    while (fgetc(f) != EOF) {}
    int st = pclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(tools_readme_example_runs) {
    char out[4096], cmd[512];
    snprintf(cmd, sizeof cmd, "%s", path_or("RLX_README_EXAMPLE", "build/readme_example"));
    int code = run_cmd(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s exited %d: %s", cmd, code, out);
    CHECK_MSG(strstr(out, "y = [[1.5, 0], [4.5, 0]]") != NULL, "README example printed: %s", out);
}

TEST(tools_cli_commands) {
    const char *rlx = path_or("RLX_CLI", "build/rlx");
    char out[65536], cmd[512];
    snprintf(cmd, sizeof cmd, "%s version", rlx);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strncmp(out, "rlx ", 4) == 0);
    snprintf(cmd, sizeof cmd, "%s ops", rlx);
    CHECK(run_cmd(cmd, out, sizeof out) == 0);
    for (int i = 0; i < rlx_op_count(); i++) CHECK_MSG(strstr(out, rlx_op_name(i)) != NULL, "ops lacks %s", rlx_op_name(i));
    snprintf(cmd, sizeof cmd, "%s devices", rlx);
    CHECK(run_cmd(cmd, out, sizeof out) == 0 && strstr(out, "cpu") != NULL);
    snprintf(cmd, sizeof cmd, "%s frobnicate 2>/dev/null", rlx);
    CHECK(run_cmd(cmd, out, sizeof out) == 2);
    snprintf(cmd, sizeof cmd, "%s demo --seq 0 2>/dev/null", rlx);
    CHECK(run_cmd(cmd, out, sizeof out) == 2);
}

TEST(tools_cli_demo_small) {
    const char *rlx = path_or("RLX_CLI", "build/rlx");
    char out[65536], cmd[512];
    snprintf(cmd, sizeof cmd, "%s demo --layers 1 --d-model 64 --heads 4 --d-ff 128 --seq 16 --runs 3 --report", rlx);
    int code = run_cmd(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "demo exited %d: %s", code, out);
    CHECK(strstr(out, "(ok)") != NULL);
    CHECK(strstr(out, "time per run") != NULL && strstr(out, "arena") != NULL);
    CHECK(strstr(out, "cpu-kernel") != NULL);
}
