/*
 * vk_inflight.c — experiment: does a chain of dependent L2 hits slow down
 * while its SM has many DRAM loads outstanding? (bench/shaders/inflight.comp
 * says why it matters: loads issued ahead of a join help only if the join's
 * own loads can pass them.) Prints one table: order, loads a lane issues
 * first (P), dependent hops (H), device µs per dispatch (median of the runs).
 *
 *   build/vk_inflight [--device NAME] [--runs N] [--wg 512] [--grid G]
 *                     [--p 0,4,8,16,24] [--h 0,16] [--shaders DIR]
 *
 * Reading: with H = 0 the time is the loads' (P x lanes x 16 bytes from
 * DRAM); with P = 0 the hops' (H dependent L2 round trips). If the hops
 * passed the outstanding loads, loads-then-hops would take about the larger
 * of the two; if they queue behind them, about the sum. "Hops in a warp
 * without loads": subgroup 0 hops and loads nothing while the SM's other
 * subgroups load: the larger of the two if only a warp's own loads hold its
 * hops back, the sum if the SM's do.
 *
 * Raw Vulkan through the library's context (vulkan/vk_ctx.h; helpers in
 * bench/vk_bench_common.h). Results: bench/HISTORY.md, 2026-12-01 (the
 * decode target).
 */
#define BENCH_TOOL "vk_inflight"
#include "vk_bench_common.h"   /* CHECK_VK, die_on, shaders, pipelines, lists */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


enum { N_SPEC = 4, MAX_LIST = 8, TABLE_WORDS = 1 << 20, REGIONS = 24 };

typedef struct push_t { uint64_t big, table, out; uint32_t mask, pad; } push_t;

/* Device µs of one dispatch of pipe (median of runs), each run on the next
 * of the REGIONS regions of big (so a region's lines have left L2 when it is
 * read again). */
static double time_pipe(vk_ctx *c, VkCommandPool pool, VkQueryPool qp, VkPipeline pipe, uint32_t grid, push_t pu,
                        uint64_t region_bytes, int runs) {
    double *t = malloc(sizeof(double) * (size_t)runs);
    const uint64_t base = pu.big;
    for (int r = -2; r < runs; r++) {   /* two runs first, unmeasured */
        VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                          .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
        VkCommandBuffer cb;
        CHECK_VK(c->f.vkAllocateCommandBuffers(c->dev, &ai, &cb));
        VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
        CHECK_VK(c->f.vkBeginCommandBuffer(cb, &bi));
        c->f.vkCmdResetQueryPool(cb, qp, 0, 2);
        c->f.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
        pu.big = base + (uint64_t)((r + REGIONS * 4) % REGIONS) * region_bytes;
        c->f.vkCmdPushConstants(cb, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pu, &pu);
        c->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
        c->f.vkCmdDispatch(cb, grid, 1, 1);
        c->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, 1);
        CHECK_VK(c->f.vkEndCommandBuffer(cb));
        VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
        CHECK_VK(c->f.vkQueueSubmit(c->queue, 1, &si, VK_NULL_HANDLE));
        CHECK_VK(c->f.vkQueueWaitIdle(c->queue));
        c->f.vkFreeCommandBuffers(c->dev, pool, 1, &cb);
        uint64_t ts[2];
        CHECK_VK(c->f.vkGetQueryPoolResults(c->dev, qp, 0, 2, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
        if (r >= 0) t[r] = (double)(ts[1] - ts[0]) * c->timestamp_period_ns * 1e-3;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_d);
    double med = t[runs / 2];
    free(t);
    return med;
}

int main(int argc, char **argv) {
    const char *device = NULL, *shaders = NULL;
    int runs = 30;
    uint32_t wg = 512, grid = 0, ps[MAX_LIST] = {0, 4, 8, 16, 24}, hs[MAX_LIST] = {0, 16};
    int n_p = 5, n_h = 2;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *nx = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && nx) device = argv[++i];
        else if (!strcmp(a, "--runs") && nx) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--wg") && nx) wg = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--grid") && nx) grid = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--p") && nx) n_p = parse_list(argv[++i], ps, MAX_LIST);
        else if (!strcmp(a, "--h") && nx) n_h = parse_list(argv[++i], hs, MAX_LIST);
        else if (!strcmp(a, "--shaders") && nx) shaders = argv[++i];
        else {
            fprintf(stderr, "usage: vk_inflight [--device NAME] [--runs N] [--wg 512] [--grid G] [--p 0,4,8] [--h 0,16] "
                            "[--shaders DIR]\n");
            return 2;
        }
    }
    uint32_t pmax = 0;
    for (int i = 0; i < n_p; i++) {
        if (ps[i] > 32) {
            fprintf(stderr, "vk_inflight: --p values are 0..32\n");
            return 2;
        }
        pmax = ps[i] > pmax ? ps[i] : pmax;
    }
    if (runs < 1 || wg < 32 || wg > 1024 || wg % 32) {
        fprintf(stderr, "vk_inflight: --runs >= 1, --wg a multiple of 32 up to 1024\n");
        return 2;
    }
    size_t code_bytes;
    uint32_t *code = load_bench_shader(argv[0], shaders, "inflight", &code_bytes);
    vk_ctx *c;
    die_on(vk_ctx_acquire(-1, device, true, &c));
    if (!grid) grid = c->caps.compute_units ? c->caps.compute_units : 4;
    if (wg > c->caps.max_workgroup_invocations) wg = c->caps.max_workgroup_invocations / 32 * 32;
    fprintf(stderr, "vk_inflight: %s, %u workgroups of %u lanes\n", c->name, grid, wg);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = c->queue_family,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    VkCommandPool pool;
    CHECK_VK(c->f.vkCreateCommandPool(c->dev, &pci, NULL, &pool));
    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = 2};
    VkQueryPool qp;
    CHECK_VK(c->f.vkCreateQueryPool(c->dev, &qi, NULL, &qp));

    /* the table: one cycle through all its words (Sattolo), so every hop depends on the one before */
    uint32_t *tab = malloc(sizeof(uint32_t) * TABLE_WORDS);
    for (uint32_t i = 0; i < TABLE_WORDS; i++) tab[i] = i;
    uint64_t h = 0x243f6a8885a308d3ull;
    for (uint32_t i = TABLE_WORDS - 1; i > 0; i--) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t j = (uint32_t)((h >> 33) % i), t = tab[i];
        tab[i] = tab[j];
        tab[j] = t;
    }
    const uint64_t lanes = (uint64_t)grid * wg, region = (pmax ? pmax : 1) * lanes * 16;
    vk_buf big, table, out;
    die_on(vk_buf_create(c, region * REGIONS, false, "vk_inflight loads", &big));
    die_on(vk_buf_create(c, sizeof(uint32_t) * TABLE_WORDS, false, "vk_inflight table", &table));
    die_on(vk_buf_create(c, lanes * 4, false, "vk_inflight out", &out));
    die_on(vk_upload(c, &table, 0, tab, sizeof(uint32_t) * TABLE_WORDS));
    die_on(vk_fill_zero(c, &big));
    free(tab);
    push_t pu = {.big = big.addr, .table = table.addr, .out = out.addr, .mask = TABLE_WORDS - 1};

    printf("| order | loads a lane first (P) | KB a workgroup in flight | hops (H) | µs (median of %d) |\n|---|---:|---:|---:|---:|\n", runs);
    static const char *const order_name[3] = {"loads, then hops", "hops, then loads", "hops in a warp without loads"};
    for (uint32_t order = 0; order < 3; order++)
        for (int ip = 0; ip < n_p; ip++)
            for (int ih = 0; ih < n_h; ih++) {
                if (order >= 1 && (ps[ip] == 0 || hs[ih] == 0)) continue;   /* the same as order 0 */
                uint32_t spec[N_SPEC] = {wg, ps[ip], hs[ih], order};
                VkPipeline pipe = make_bench_pipe(c, code, code_bytes, spec, N_SPEC);
                double us = time_pipe(c, pool, qp, pipe, grid, pu, region, runs);
                printf("| %s | %u | %.0f | %u | %.2f |\n", order_name[order], ps[ip],
                       (double)ps[ip] * wg * 16 / 1024, hs[ih], us);
                c->f.vkDestroyPipeline(c->dev, pipe, NULL);
            }
    c->f.vkDestroyQueryPool(c->dev, qp, NULL);
    c->f.vkDestroyCommandPool(c->dev, pool, NULL);
    vk_buf_destroy(c, &big);
    vk_buf_destroy(c, &table);
    vk_buf_destroy(c, &out);
    vk_ctx_release(c);
    free(code);
    return 0;
}
