/*
 * vk_matvec.c — device time of the decode-shaped DEQUANT_MATMUL (M = 1) and
 * its fused forms, one node per graph, on the Llama-3-8B and Llama-3.2-1B
 * projection shapes. Prints one table: the kernel tier, the profiled device
 * time (RLX_PROFILE=1 timestamps around the node: launch + execution, the
 * mean over the runs) and the weight bytes over that time.
 *
 *   build/vk_matvec [--device NAME] [--types q8_0,q4_K,q6_K] [--model 8b|1b|all] [--runs N]
 *
 * Tuning knobs of the lowering (RLX_VK_DQ_*) apply as usual, so a sweep is
 * one process per setting. Weights: bench_params.h (one valid row repeated).
 */
#include "rlx.h"
#include "bench_params.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct mv_shape { const char *model, *name; int64_t N, K; int epi; } mv_shape;   /* epi: 0, 1 add, 2 swiglu */

static const mv_shape SHAPES[] = {
    {"8b", "q / o", 4096, 4096, 0},     {"8b", "o + res", 4096, 4096, 1}, {"8b", "k / v", 1024, 4096, 0},
    {"8b", "gate/up", 14336, 4096, 2},  {"8b", "down + res", 4096, 14336, 1}, {"8b", "lm head", 128256, 4096, 0},
    {"1b", "q / o", 2048, 2048, 0},     {"1b", "k / v", 512, 2048, 0},    {"1b", "gate/up", 8192, 2048, 2},
    {"1b", "down + res", 2048, 8192, 1}, {"1b", "lm head", 128256, 2048, 0},
};

/* Device time of the dequant node in a profiled report ("... 13.30 us  tier"). */
static double node_us(const char *rep, char *tier, size_t tier_len) {
    for (const char *line = rep; line && *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        char *us = strstr(buf, " us ");
        if (strstr(buf, "dequant") && us) {
            char *num = us;
            while (num > buf && num[-1] != ' ') num--;
            snprintf(tier, tier_len, "%s", us + 4 + strspn(us + 4, " "));
            return atof(num);
        }
        line = nl ? nl + 1 : NULL;
    }
    return -1;
}

static rlx_dtype type_named(const char *s) {
    if (!strcmp(s, "q8_0")) return RLX_Q8_0;
    if (!strcmp(s, "q4_K")) return RLX_Q4_K;
    if (!strcmp(s, "q6_K")) return RLX_Q6_K;
    if (!strcmp(s, "q4_0")) return RLX_Q4_0;
    if (!strcmp(s, "q5_K")) return RLX_Q5_K;
    if (!strcmp(s, "f16")) return RLX_F16;
    return RLX_DTYPE_COUNT;
}

static int run_shape(const mv_shape *sh, rlx_dtype dt, const char *device, int runs) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {1, sh->K}, wd[2] = {sh->N, sh->K}, rd[2] = {1, sh->N};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node y = rlx_dequant_matmul(g, x, rlx_param(g, "w", dt, 2, wd));
    if (sh->epi == 1) y = rlx_add(g, y, rlx_input(g, "r", RLX_F32, 2, rd));
    if (sh->epi == 2) y = rlx_mul(g, rlx_silu(g, y), rlx_dequant_matmul(g, x, rlx_param(g, "u", dt, 2, wd)));
    rlx_output(g, "y", y);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_VULKAN;
    o.device_name = device;
    rlx_exec *e = NULL;
    double wbytes = 0;
    float *xv = malloc(sizeof(float) * (size_t)sh->K), *rv = calloc((size_t)sh->N, sizeof(float));
    for (int64_t k = 0; k < sh->K; k++) xv[k] = (float)((k * 37) % 101) / 101.0f - 0.5f;
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, sh->K}, .data = xv, .bytes = sizeof(float) * (size_t)sh->K},
        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {1, sh->N}, .data = rv, .bytes = sizeof(float) * (size_t)sh->N},
    };
    int rc = 1;
    if (rlx_compile(g, &o, &e) != RLX_OK || bench_fill_params(e, &wbytes)) goto done;
    for (int i = 0; i < runs + 3; i++)
        if (rlx_exec_run(e, in, sh->epi == 1 ? 2 : 1) != RLX_OK) goto done;
    char *rep = rlx_exec_report(e), tier[64] = "?";
    double us = rep ? node_us(rep, tier, sizeof tier) : -1;
    free(rep);
    printf("| %s | %s | %s | %lld x %lld | %s | %.2f | %.0f |\n", sh->model, sh->name, rlx_dtype_name(dt), (long long)sh->N,
           (long long)sh->K, tier, us, us > 0 ? wbytes / (us * 1e-6) / 1e9 : 0.0);
    rc = 0;
done:
    if (rc) fprintf(stderr, "vk_matvec: %s %s: %s\n", sh->name, rlx_dtype_name(dt), rlx_last_error());
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(xv);
    free(rv);
    return rc;
}

int main(int argc, char **argv) {
    const char *device = NULL, *types = "q8_0,q4_K,q6_K", *model = "all";
    int runs = 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--device")) device = argv[i + 1];
        else if (!strcmp(argv[i], "--types")) types = argv[i + 1];
        else if (!strcmp(argv[i], "--model")) model = argv[i + 1];
        else if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
        else { fprintf(stderr, "vk_matvec: unknown option %s\n", argv[i]); return 2; }
    }
    if (runs < 1) runs = 1;
    setenv("RLX_PROFILE", "1", 1);
    printf("| model | shape | type | N x K | tier | device us | GB/s |\n|---|---|---|---|---|---:|---:|\n");
    char list[128];
    snprintf(list, sizeof list, "%s", types);
    int fails = 0;
    for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        rlx_dtype dt = type_named(t);
        if (dt == RLX_DTYPE_COUNT) { fprintf(stderr, "vk_matvec: unknown type %s\n", t); return 2; }
        for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
            if (!strcmp(model, "all") || !strcmp(model, SHAPES[i].model)) fails += run_shape(&SHAPES[i], dt, device, runs);
    }
    return fails ? 1 : 0;
}
