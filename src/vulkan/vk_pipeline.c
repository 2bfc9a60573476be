/*
 * vk_pipeline.c — compute pipelines from the embedded SPIR-V, one per
 * (shader, specialization constants), created on first use and cached in the
 * device context for every program on that device.
 */
#include "vulkan/vk_ctx.h"
#include "core/profile.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const vk_shader_blob *find_shader(const char *name) {
    for (int i = 0; i < rlx_vk_shader_count; i++)
        if (strcmp(rlx_vk_shaders[i].name, name) == 0) return &rlx_vk_shaders[i];
    return NULL;
}

/* RLX_VK_PIPELINE_STATS=1: one log line (warning level, so the default sink
 * prints it) per new pipeline with the driver's statistics (on NVIDIA:
 * registers per thread, shared memory, ...). */
static void log_stats(vk_ctx *c, const vk_shader_blob *blob, const uint32_t *spec, int n_spec, VkPipeline pipe) {
    VkPipelineInfoKHR pi = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
    uint32_t n_exec = 0;
    if (c->get_exec_props(c->dev, &pi, &n_exec, NULL) != VK_SUCCESS) return;
    for (uint32_t e = 0; e < n_exec; e++) {
        VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = pipe,
                                          .executableIndex = e};
        VkPipelineExecutableStatisticKHR st[32];
        uint32_t n = 32;
        for (uint32_t k = 0; k < n; k++)
            st[k] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
        VkResult r = c->get_exec_stats(c->dev, &ei, &n, st);
        if (r != VK_SUCCESS && r != VK_INCOMPLETE) continue;
        char line[1024];
        size_t len = 0;
        rlx_report_add(line, sizeof line, &len, "pipeline %s spec", blob->name);
        for (int i = 0; i < n_spec; i++) rlx_report_add(line, sizeof line, &len, "%s%u", i ? "," : " ", spec[i]);
        rlx_report_add(line, sizeof line, &len, ":");
        for (uint32_t k = 0; k < n; k++) {
            const VkPipelineExecutableStatisticValueKHR *v = &st[k].value;
            switch (st[k].format) {
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
                rlx_report_add(line, sizeof line, &len, " [%s] %u;", st[k].name, v->b32);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
                rlx_report_add(line, sizeof line, &len, " [%s] %lld;", st[k].name, (long long)v->i64);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
                rlx_report_add(line, sizeof line, &len, " [%s] %llu;", st[k].name, (unsigned long long)v->u64);
                break;
            case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR:
                rlx_report_add(line, sizeof line, &len, " [%s] %g;", st[k].name, v->f64);
                break;
            default: break;
            }
        }
        rlx_log_msg(RLX_LOG_WARN, "%s", line);
    }
}

static rlx_status create_pipeline(vk_ctx *c, const vk_shader_blob *blob, const uint32_t *spec, int n_spec, VkPipeline *out) {
    VkShaderModuleCreateInfo mci = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = blob->bytes,
                                    .pCode = blob->code};
    VkShaderModule mod;
    rlx_status st = vk_check(c->f.vkCreateShaderModule(c->dev, &mci, NULL, &mod), "vkCreateShaderModule");
    if (st != RLX_OK) return st;
    VkSpecializationMapEntry entries[VK_MAX_SPEC];
    for (int i = 0; i < n_spec; i++)
        entries[i] = (VkSpecializationMapEntry){.constantID = (uint32_t)i, .offset = (uint32_t)(i * 4), .size = 4};
    VkSpecializationInfo si = {.mapEntryCount = (uint32_t)n_spec, .pMapEntries = entries, .dataSize = (size_t)n_spec * 4,
                               .pData = spec};
    VkComputePipelineCreateInfo ci = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                  .module = mod, .pName = "main", .pSpecializationInfo = n_spec ? &si : NULL},
        .layout = c->layout};
    if (c->get_exec_props && c->get_exec_stats) ci.flags = VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    char what[96];
    snprintf(what, sizeof what, "vkCreateComputePipelines(%s)", blob->name);
    st = vk_check(c->f.vkCreateComputePipelines(c->dev, VK_NULL_HANDLE, 1, &ci, NULL, out), what);
    c->f.vkDestroyShaderModule(c->dev, mod, NULL);
    if (st == RLX_OK && c->get_exec_props && c->get_exec_stats) log_stats(c, blob, spec, n_spec, *out);
    return st;
}

rlx_status vk_pipeline_get(vk_ctx *c, const char *shader, const uint32_t *spec, int n_spec, VkPipeline *out) {
    if (n_spec < 0 || n_spec > VK_MAX_SPEC) return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: bad spec constant count %d", n_spec);
    pthread_mutex_lock(&c->lock);
    rlx_status st = RLX_OK;
    for (int i = 0; i < c->n_pipes; i++) {
        vk_pipeline_entry *e = &c->pipes[i];
        if (e->n_spec == n_spec && strcmp(e->shader, shader) == 0 && memcmp(e->spec, spec, (size_t)n_spec * 4) == 0) {
            *out = e->pipeline;
            goto done;
        }
    }
    const vk_shader_blob *blob = find_shader(shader);
    if (!blob) { st = rlx_fail(RLX_STATUS_INTERNAL, "vulkan: no embedded shader named '%s'", shader); goto done; }
    if (c->n_pipes == c->cap_pipes) {
        int cap = c->cap_pipes ? c->cap_pipes * 2 : 64;
        vk_pipeline_entry *p = realloc(c->pipes, (size_t)cap * sizeof *p);
        if (!p) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory"); goto done; }
        c->pipes = p;
        c->cap_pipes = cap;
    }
    VkPipeline pipe;
    if ((st = create_pipeline(c, blob, spec, n_spec, &pipe)) != RLX_OK) goto done;
    vk_pipeline_entry *e = &c->pipes[c->n_pipes++];
    memset(e, 0, sizeof *e);
    e->shader = blob->name;
    memcpy(e->spec, spec, (size_t)n_spec * 4);
    e->n_spec = n_spec;
    e->pipeline = pipe;
    *out = pipe;
done:
    pthread_mutex_unlock(&c->lock);
    return st;
}
