/*
 * vk_bench_common.h — what the raw-Vulkan microbenchmarks (vk_inflight.c)
 * share: failing loudly on a Vulkan or library error, reading
 * a SPIR-V file from bench_shaders/ next to the program (or --shaders DIR),
 * a compute pipeline on the library context's shared layout with its
 * specialization constants, and list parsing for the command lines. These
 * programs measure execution models the runtime does not have, so they
 * drive Vulkan through vulkan/vk_ctx.h instead of the public API. Each
 * program defines BENCH_TOOL (its name, for messages) before including this.
 */
#ifndef RLX_BENCH_VK_BENCH_COMMON_H
#define RLX_BENCH_VK_BENCH_COMMON_H

#include "rlx.h"
#include "vulkan/vk_ctx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_VK(call)                                                                        \
    do {                                                                                      \
        VkResult r_ = (call);                                                                 \
        if (r_ != VK_SUCCESS) {                                                               \
            fprintf(stderr, "%s: %s failed: %s\n", BENCH_TOOL, #call, vk_result_name(r_));     \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static inline void die_on(rlx_status st) {
    if (st == RLX_OK) return;
    fprintf(stderr, "%s: %s\n", BENCH_TOOL, rlx_last_error());
    exit(1);
}

static inline uint32_t *read_file(const char *path, size_t *bytes) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint32_t *d = n > 0 ? malloc((size_t)n) : NULL;
    if (d && fread(d, 1, (size_t)n, fp) != (size_t)n) {
        free(d);
        d = NULL;
    }
    fclose(fp);
    *bytes = (size_t)n;
    return d;
}

/* The SPIR-V of bench/shaders/<name>.comp: from dir, or from bench_shaders/
 * next to the program (build/vk_inflight reads build/bench_shaders). Exits with
 * a message if it cannot be read. */
static inline uint32_t *load_bench_shader(const char *argv0, const char *dir, const char *name, size_t *bytes) {
    char spv[1024];
    if (!dir) {
        const char *slash = strrchr(argv0, '/');
        snprintf(spv, sizeof spv, "%.*s/bench_shaders/%s.spv", slash ? (int)(slash - argv0) : 1, slash ? argv0 : ".", name);
    } else {
        snprintf(spv, sizeof spv, "%s/%s.spv", dir, name);
    }
    uint32_t *code = read_file(spv, bytes);
    if (!code) {
        fprintf(stderr, "%s: cannot read %s\n", BENCH_TOOL, spv);
        exit(1);
    }
    return code;
}

/* A compute pipeline of code on the context's shared layout (one push range,
 * no descriptors), spec[i] as constant_id i; with statistics captured where
 * the context can report them (RLX_VK_PIPELINE_STATS=1). */
static inline VkPipeline make_bench_pipe(vk_ctx *c, const uint32_t *code, size_t bytes, const uint32_t *spec, uint32_t n_spec) {
    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = bytes, .pCode = code};
    VkShaderModule mod;
    CHECK_VK(c->f.vkCreateShaderModule(c->dev, &mi, NULL, &mod));
    VkSpecializationMapEntry me[32];
    if (n_spec > 32) n_spec = 32;
    for (uint32_t i = 0; i < n_spec; i++) me[i] = (VkSpecializationMapEntry){i, 4 * i, 4};
    VkSpecializationInfo spi = {.mapEntryCount = n_spec, .pMapEntries = me, .dataSize = n_spec * sizeof *spec, .pData = spec};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod, .pName = "main", .pSpecializationInfo = &spi},
        .layout = c->layout, .flags = c->get_exec_stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0};
    VkPipeline p;
    CHECK_VK(c->f.vkCreateComputePipelines(c->dev, VK_NULL_HANDLE, 1, &ci, NULL, &p));
    c->f.vkDestroyShaderModule(c->dev, mod, NULL);
    return p;
}

static inline int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* "a,b,c" into out (at most max); returns the count. */
static inline int parse_list(const char *s, uint32_t *out, int max) {
    int n = 0;
    while (s && *s && n < max) {
        out[n++] = (uint32_t)strtoul(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

#endif
