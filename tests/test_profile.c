/*
 * test_profile.c — RLX_PROFILE=1: the report of a profiled program shows a
 * time for every kernel step and a per-kind summary over the runs so far, on
 * the CPU and on Vulkan; without it the report has no times.
 */
#include "vk_parity.h"
#include <stdlib.h>
#include <string.h>

static bool profiled_report(bool vulkan, bool enable, char **report) {
    *report = NULL;
    if (enable) setenv("RLX_PROFILE", "1", 1);
    rlx_graph *g = rlx_graph_new();
    int64_t d[2] = {4, 64};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, d);
    rlx_output(g, "y", rlx_softmax(g, rlx_add(g, rlx_exp(g, x), x), 1));
    rlx_compile_options o;
    if (vulkan) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
    rlx_exec *e = NULL;
    float xv[4 * 64];
    test_fill_uniform_f32(xv, 4 * 64, -1, 1);
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {4, 64}, .data = xv, .bytes = sizeof xv};
    bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_run(e, &in, 1) == RLX_OK;
    unsetenv("RLX_PROFILE");
    if (ok) *report = rlx_exec_report(e);
    rlx_exec_free(e);
    rlx_graph_free(g);
    return ok && *report;
}

static bool check(bool vulkan) {
    char *rep;
    bool ok = profiled_report(vulkan, true, &rep);
    ok = ok && strstr(rep, "profile: ") && strstr(rep, "(mean of 2 runs)") && strstr(rep, " us");
    /* every kernel line carries a time: count lines with a path of kernel and " us" */
    int kernels = 0, timed = 0;
    for (char *line = rep; ok && line && *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        bool kernel = (memmem(line, n, "cpu-kernel", 10) || memmem(line, n, " gpu ", 5)) && !memmem(line, n, "steps", 5);
        kernels += kernel;
        timed += kernel && memmem(line, n, " us", 3);
        line = end ? end + 1 : NULL;
    }
    if (ok && (kernels < 2 || timed != kernels)) ok = false;
    if (!ok) printf("    %s profiled report (%d kernel lines, %d timed):\n%s", vulkan ? "vulkan" : "cpu", kernels, timed, rep ? rep : "");
    free(rep);
    bool ok2 = profiled_report(vulkan, false, &rep) && !strstr(rep, "profile: ");
    free(rep);
    return ok && ok2;
}

TEST(profile_report_cpu) { CHECK(check(false)); }

TEST(profile_report_vulkan) {
    VKP_REQUIRE();
    CHECK(check(true));
}
