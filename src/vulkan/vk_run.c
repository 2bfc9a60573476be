/*
 * vk_run.c — running a recorded Vulkan program (vk_program.c builds it):
 * inputs into staging, each command-buffer segment submitted and waited for
 * (polling the fence about as long as the last run took), host steps in
 * between, outputs read back from staging; and the program's report, with
 * the per-node device times of RLX_PROFILE=1.
 *
 * With a trace (vk_backend_device_trace) a run records its host work (input
 * copies, each segment's submit and wait, host steps) on the host track and
 * each node's timestamps on the GPU track. Device ticks are placed on the
 * host clock by putting the run's first timestamp at its first submit: the
 * GPU starts a little after that, so GPU events may sit up to one launch
 * latency early, but their durations and order are the device's own.
 */
#include "vulkan/vk_program_priv.h"
#include "core/profile.h"
#include "vulkan/vk_weight_layout.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Submits a segment and waits for it. Waiting by sleeping in
 * vkWaitForFences costs a wake-up of ~100-200 us after the GPU is done (on
 * an H200, 8B decode: wall - device time 233 us per token); a run's length
 * repeats from one call to the next, so the host polls the fence for as long
 * as the previous run of this segment took, plus a margin, and sleeps only
 * beyond that (or beyond RLX_VK_SPIN_US). Polling keeps one CPU core busy
 * while the GPU runs, the usual trade of latency-bound inference. */
static rlx_status submit_and_wait(vk_program *p, vk_segment *seg) {
    vk_ctx *c = p->ctx;
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &seg->cb};
    pthread_mutex_lock(&c->lock);
    double t0 = rlx_now_seconds();
    seg->submit_s = t0;
    rlx_status st = vk_check(c->f.vkQueueSubmit(c->queue, 1, &si, p->fence), "vkQueueSubmit");
    pthread_mutex_unlock(&c->lock);
    if (st != RLX_OK) return st;
    double spin = seg->last_wait_s * 1.25 + 200e-6;
    double spin_until = t0 + (spin < p->spin_cap_s ? spin : p->spin_cap_s);
    VkResult r;
    while ((r = c->f.vkGetFenceStatus(c->dev, p->fence)) == VK_NOT_READY && rlx_now_seconds() < spin_until) {}
    if (r == VK_NOT_READY) r = c->f.vkWaitForFences(c->dev, 1, &p->fence, VK_TRUE, UINT64_MAX);
    seg->last_wait_s = rlx_now_seconds() - t0;
    st = vk_check(r, "waiting for the GPU");
    c->f.vkResetFences(c->dev, 1, &p->fence);
    return st;
}

/* A copy of node `node`'s bytes at host, from the device's layout of its
 * dtype (vk_weight_layout.h) back to the one the rest of rlx reads. */
static rlx_status from_device_layout(const vk_program *p, int32_t node, void *host) {
    const ir_node *n = &p->g->nodes[node];
    if (!vk_layout_is_planar(n->dtype)) return RLX_OK;
    return vk_layout_from_planar_in_place(n->dtype, ir_shape_row_elems(&n->shape), host, (size_t)node_bytes(n));
}

static rlx_status run_host_step(vk_program *p, int32_t i) {
    const ir_node *n = &p->g->nodes[i];
    void *in[IR_MAX_INPUTS];
    for (int j = 0; j < n->n_in; j++) {
        in[j] = (char *)p->hostio.map + p->info[i].host_in_off[j];
        rlx_status st = from_device_layout(p, n->in[j], in[j]);   /* the host kernel reads GGUF blocks */
        if (st != RLX_OK) return st;
    }
    void *outp = (char *)p->hostio.map + p->info[i].host_out_off;
    if (!p->dev->opts.host_kernel) return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: no host kernel runner");
    return p->dev->opts.host_kernel(p->dev->opts.host_user, p->g, i, in, outp);
}

/* The GPU kv_write (and rope_kv_write) skips out-of-range rows silently; check what the host can
 * see (a pos given as a graph input) so a full cache is a clear error. The
 * nodes to check are listed at build time, so a run stays O(inputs). */
static rlx_status check_kv_writes(const vk_program *p, const void *const *inputs) {
    for (int k = 0; k < p->n_kv_checks; k++) {
        const ir_node *n = &p->g->nodes[p->kv_checks[k]];
        if (!inputs[n->in[2]]) continue;
        /* rows per head: the rows' dim 2 (dequant_rope_kv: its view's) */
        int64_t S = n->op == IR_OP_DEQUANT_ROPE_KV ? ir_attr_dequant_rope_kv_view_s(n) : p->g->nodes[n->in[1]].shape.d[2].k;
        int64_t pos = *(const int32_t *)inputs[n->in[2]], C = n->shape.d[2].k;
        rlx_status st = ir_kv_range_check(n, pos, S, C);
        if (st != RLX_OK) return st;
    }
    return RLX_OK;
}

/* A GPU-track event for node i's dispatches, device ticks [a, b) placed
 * after the run's first timestamp gpu0 (at the first submit). */
static void trace_gpu_node(const vk_program *p, int32_t i, uint64_t gpu0, uint64_t a, uint64_t b) {
    const ir_node *n = &p->g->nodes[i];
    const ir_op_info *op = ir_op_info_get(n->op);
    double tick = p->ctx->timestamp_period_ns * 1e-9, base = p->segs[0].submit_s;
    char name[160], note[200];
    rlx_trace_event(p->dev->trace, p->dev->trace_gpu, "gpu", op ? op->name : "?", base + (double)(a - gpu0) * tick,
                    base + (double)(b - gpu0) * tick, "\"node\":%d,\"name\":\"%s\",\"kernel\":\"%s\",\"dispatches\":%d",
                    (int)i, rlx_json_escape(n->name, name, sizeof name), rlx_json_escape(p->info[i].note, note, sizeof note),
                    p->info[i].n_dispatch);
}

/* Adds this run's per-node device time (queries written by record_dispatches)
 * and, with a trace, records it; gpu0: the run's first timestamp. */
static void accumulate_profile(vk_program *p, uint64_t gpu0) {
    for (int32_t i = 0; i < p->g->n_nodes; i++) {
        if (!p->info[i].gpu || p->info[i].n_dispatch == 0) continue;
        uint64_t ts[2];
        if (p->ctx->f.vkGetQueryPoolResults(p->ctx->dev, p->queries, 2u + 2u * (uint32_t)i, 2, sizeof ts, ts, sizeof ts[0],
                                            VK_QUERY_RESULT_64_BIT) == VK_SUCCESS && ts[1] >= ts[0]) {
            p->prof_us[i] += (double)(ts[1] - ts[0]) * p->ctx->timestamp_period_ns * 1e-3;
            if (p->dev->trace && ts[0] >= gpu0) trace_gpu_node(p, i, gpu0, ts[0], ts[1]);
        }
    }
    p->prof_runs++;
}

rlx_status vk_program_run(vk_program *p, const void *const *inputs) {
    rlx_status cst = check_kv_writes(p, inputs);
    if (cst != RLX_OK) return cst;
    rlx_trace *trace = p->dev->trace;
    int tid = p->dev->trace_host;
    double t = trace ? rlx_now_seconds() : 0;
    size_t in_bytes = 0;
    for (int k = 0; k < p->n_input_nodes; k++) {
        int32_t i = p->input_nodes[k];
        if (!inputs[i]) continue;
        memcpy((char *)p->io.map + p->io_off[i], inputs[i], (size_t)node_bytes(&p->g->nodes[i]));
        in_bytes += (size_t)node_bytes(&p->g->nodes[i]);
    }
    if (trace) rlx_trace_event(trace, tid, "upload", "copy inputs to staging", t, rlx_now_seconds(), "\"bytes\":%zu", in_bytes);
    volatile uint32_t *status = (volatile uint32_t *)((char *)p->io.map + p->status_off);
    *status = 0;   /* host-coherent: visible to the submit below */
    for (int s = 0; s < p->n_segs; s++) {
        rlx_status st = submit_and_wait(p, &p->segs[s]);
        if (trace)
            rlx_trace_event(trace, tid, "run", "vulkan: submit and wait", p->segs[s].submit_s, rlx_now_seconds(),
                            "\"segment\":%d", s);
        if (st != RLX_OK) return st;
        if (*status) break;
        int32_t h = p->segs[s].host_node_after;
        t = trace ? rlx_now_seconds() : 0;
        if (h >= 0 && (st = run_host_step(p, h)) != RLX_OK) return st;
        if (trace && h >= 0) {
            const ir_op_info *op = ir_op_info_get(p->g->nodes[h].op);
            char name[160], why[200];
            rlx_trace_event(trace, tid, "host", op ? op->name : "?", t, rlx_now_seconds(),
                            "\"node\":%d,\"name\":\"%s\",\"host step\":\"%s\"", (int)h,
                            rlx_json_escape(p->g->nodes[h].name, name, sizeof name),
                            rlx_json_escape(p->info[h].note, why, sizeof why));
        }
    }
    if (*status) {
        uint32_t node = *status - 1;
        char lbl[128];
        if (node >= (uint32_t)p->g->n_nodes) return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: bad status word %u", *status);
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: an index is outside its valid range (found on the GPU); "
                        "outputs of this run are not valid", ir_node_label(p->g, (int32_t)node, lbl, sizeof lbl));
    }
    uint64_t ts[2];
    p->last_gpu_seconds = -1;
    if (p->ctx->f.vkGetQueryPoolResults(p->ctx->dev, p->queries, 0, 2, sizeof ts, ts, sizeof ts[0],
                                        VK_QUERY_RESULT_64_BIT) == VK_SUCCESS && ts[1] >= ts[0])
        p->last_gpu_seconds = (double)(ts[1] - ts[0]) * p->ctx->timestamp_period_ns * 1e-9;
    if (trace && p->last_gpu_seconds >= 0)
        rlx_trace_event(trace, p->dev->trace_gpu, "gpu", "run (device)", p->segs[0].submit_s,
                        p->segs[0].submit_s + p->last_gpu_seconds, "\"segments\":%d", p->n_segs);
    if (p->profile) accumulate_profile(p, ts[0]);
    t = trace ? rlx_now_seconds() : 0;
    for (int k = 0; k < p->n_planar_outputs; k++) {   /* block-quantized params as outputs */
        int32_t i = p->planar_outputs[k];
        rlx_status st = from_device_layout(p, i, (char *)p->io.map + p->io_off[i]);
        if (st != RLX_OK) return st;
    }
    if (trace && p->n_planar_outputs)
        rlx_trace_event(trace, tid, "readback", "outputs from the device layout", t, rlx_now_seconds(), "\"outputs\":%d",
                        p->n_planar_outputs);
    return RLX_OK;
}

/* Whether node i's own result is in its place after a run: a host step's
 * is copied in, a GPU node's written by its dispatches. A node a decode fold
 * turned into an unused view (its work done by the fused node) has none. */
static bool result_written(const vk_program *p, int32_t i) {
    const vk_node_info *in = &p->info[i];
    return in->host || (in->gpu && in->n_dispatch > 0);
}

rlx_status vk_program_node_data(vk_program *p, int32_t node, void *scratch, const void **data) {
    *data = NULL;
    const ir_node *n = &p->g->nodes[node];
    if (n->op != IR_OP_INPUT && !result_written(p, node)) return RLX_OK;
    rlx_status st = vk_download(p->ctx, p->loc[node].buf, p->loc[node].offset, scratch, (size_t)node_bytes(n));
    if (st == RLX_OK) st = from_device_layout(p, node, scratch);
    if (st == RLX_OK) *data = scratch;
    return st;
}

rlx_status vk_program_result(vk_program *p, int32_t node, void **host) {
    if (p->g->nodes[node].op == IR_OP_INPUT) {
        *host = (char *)p->io.map + p->io_off[node];
        return RLX_OK;
    }
    if (p->io_off[node] == (VkDeviceSize)-1) return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: node %d is not an output", node);
    *host = (char *)p->io.map + p->io_off[node];
    return RLX_OK;
}

int vk_program_steps(const vk_program *p) { return p->n_dispatches + p->n_host; }

int vk_program_host_steps(const vk_program *p) { return p->n_host; }

double vk_program_gpu_seconds(const vk_program *p) { return p->last_gpu_seconds; }

/* Profile summary: device time per kernel tier (the node's note), largest first. */
static void report_profile(const vk_program *p, char *out, size_t cap, size_t *len) {
    int32_t n = p->g->n_nodes, m = 0;
    const char **kind = malloc(sizeof(char *) * (size_t)RLX_MAX(n, 1));
    double *us = malloc(sizeof(double) * (size_t)RLX_MAX(n, 1));
    if (kind && us) {
        for (int32_t i = 0; i < n; i++) {
            if (!p->info[i].gpu || p->info[i].n_dispatch == 0) continue;
            kind[m] = p->info[i].note;
            us[m++] = p->prof_us[i] / p->prof_runs;
        }
        rlx_profile_summary(out, cap, len, kind, us, m, "device (nodes serialized)", p->prof_runs);
    }
    free(kind);
    free(us);
}

char *vk_program_report(const vk_program *p) {
    bool prof = p->profile && p->prof_runs > 0;
    size_t cap = 256 + (size_t)p->g->n_nodes * (prof ? 420 : 320), len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    for (int32_t i = 0; i < p->g->n_nodes; i++) {
        const ir_node *n = &p->g->nodes[i];
        const vk_node_info *info = &p->info[i];
        const char *path = n->op == IR_OP_INPUT || n->op == IR_OP_PARAM || n->op == IR_OP_CONST ? "source"
                         : p->plan->entries[i].is_view ? "view" : info->host ? "HOST" : "gpu";
        char shape[160], lbl[128], us[32] = "";
        ir_shape_format(&n->shape, p->g, shape, sizeof shape);
        if (prof && info->gpu && info->n_dispatch) snprintf(us, sizeof us, "%9.2f us  ", p->prof_us[i] / p->prof_runs);
        if (!rlx_report_add(out, cap, &len, "%4d  %-6s %-36s %s%-20s %s%s\n", i, path, ir_node_label(p->g, i, lbl, sizeof lbl),
                        rlx_dtype_name(n->dtype), shape, us, info->note))
            break;
    }
    if (prof) report_profile(p, out, cap, &len);
    return out;
}
