/*
 * vk_chain.c — experiment: a decode layer's chain of dependent Q4_K (or Q8_0) matvecs
 * as one persistent dispatch with grid barriers (bench/shaders/decode_chain.comp)
 * against one dispatch per stage with pipeline barriers, same shader, same
 * weights. Prints one table: mode, grid, device µs per chain (median of the
 * runs), µs per layer and the weight bytes over that time.
 *
 *   build/vk_chain [--device NAME] [--model 8b|1b|tiny] [--layers L] [--grids 132,264]
 *                  [--wg 512] [--u 4] [--hn 0|1] [--waitall 0|1] [--xl 0|1] [--xbatch 1-4]
 *                  [--xim 0|1] [--abl BITS] [--runs N] [--check] [--shaders DIR]
 *                  [--modes 0,1,2,3,4] [--alt N] [--quant q4_k|q8_0]
 *
 * Modes: 0 per-stage dispatches with a timestamp after each (per-stage
 * times), 1 persistent, 2 persistent + prefetch, 3 flow (one dispatch per
 * stage and no pipeline barriers: each stage's workgroups load their first
 * weights, then wait on the counter for every workgroup of the earlier
 * dispatches), 4 per-stage dispatches with timestamps only at the ends (what
 * the runtime records). --alt 1: odd stages bind a second pipeline of the
 * same code; --alt N > 1: one whose shared x is sized for N times the
 * largest K. Results: bench/RESULTS.md, ninth and fifteenth sessions.
 *
 * --xim 1: in the persistent modes, x is handed from stage to stage as a
 * rounded image (decode_chain.comp, "x images"): the workgroup completing a
 * 256-block of a stage's output rounds it, and the grid barrier waits for
 * every block instead of every workgroup (on the H200 slower: 8B layer 59 -> 73 us).
 *
 * --quant q8_0 (with --xl 0): Q8_0 weights in the library's planar rows, a
 * unit a whole 32-weight block (the default is Q4_K).
 *
 * A "layer" is the 8B (or 1B) decode projections as plain matvecs, each x the
 * previous output's first K values: q+k+v [6144 x 4096], o + res [4096 x 4096],
 * gate+up [28672 x 4096], down + res [4096 x 14336] (1B: 3072 / 2048 / 16384 x
 * 2048 / 2048 x 8192). --check compares every stage's output with a float64
 * product of the dequantized weights and the stage's x as the GPU read it,
 * and the persistent result with the per-stage one bit for bit.
 *
 * VK_CHAIN_DEBUG=1 prints each wrong row of a failed check and the grid
 * counter after every persistent run.
 *
 * Raw Vulkan through the library's loader (vk_loader.h), not the runtime: the
 * point is to measure an execution model the runtime does not have yet. The
 * shader is read from bench_shaders/decode_chain.spv next to the program
 * (build/vk_chain: build/bench_shaders), or from --shaders DIR.
 */
#define BENCH_TOOL "vk_chain"
#include "vk_bench_common.h"   /* CHECK_VK, die_on, shaders, pipelines, lists */
#include "quant/quant.h"
#include "vulkan/vk_weight_layout.h"   /* Q8_0 rows planar, as the library lays them out */

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


typedef struct stage_desc { int64_t N, K; int epi; } stage_desc;
typedef struct gpu_stage { uint64_t x, w, out, res; uint32_t N, K, row_bytes, epi; } gpu_stage;   /* std430, 48 B */
typedef struct push_t { uint64_t stages, sync, xim; uint32_t first, count, spin_limit, xim_slot, xim_xs, xim_xd; } push_t;

static const stage_desc L8B[4] = {{6144, 4096, 0}, {4096, 4096, 1}, {28672, 4096, 0}, {4096, 14336, 1}};
static const stage_desc L1B[4] = {{3072, 2048, 0}, {2048, 2048, 1}, {16384, 2048, 0}, {2048, 8192, 1}};
/* For tests on lavapipe, which ends an invocation's loops after 65535 iterations
 * in all (docs/gpu.md, pitfalls): a few rows per subgroup. */
static const stage_desc LTINY[4] = {{1536, 1024, 0}, {1024, 1024, 1}, {3072, 1024, 0}, {1024, 3072, 1}};

static bool debug;   /* VK_CHAIN_DEBUG=1 */

enum { POOL_ROWS = 61 };   /* distinct weight rows per stage, repeated (a prime: rows of a slice differ) */

/* The library's device context (vulkan/vk_ctx.h: device, queue, buffers,
 * uploads, the shared pipeline layout), plus what a bench run needs beyond it:
 * its own command pool, and a mapped buffer for reading results back. */
typedef struct bench_vk {
    vk_ctx *c;
    VkCommandPool pool;
    vk_buf readback;
} bench_vk;

static vk_buf buf_new(bench_vk *v, size_t bytes, bool host) {
    vk_buf b;
    die_on(vk_buf_create(v->c, bytes, host, "vk_chain", &b));
    return b;
}

static VkCommandBuffer cmd_begin(bench_vk *v) {
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = v->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    VkCommandBuffer cb;
    CHECK_VK(v->c->f.vkAllocateCommandBuffers(v->c->dev, &ai, &cb));
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK_VK(v->c->f.vkBeginCommandBuffer(cb, &bi));
    return cb;
}

static void cmd_submit_wait(bench_vk *v, VkCommandBuffer cb) {
    CHECK_VK(v->c->f.vkEndCommandBuffer(cb));
    VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    CHECK_VK(v->c->f.vkQueueSubmit(v->c->queue, 1, &si, VK_NULL_HANDLE));
    CHECK_VK(v->c->f.vkQueueWaitIdle(v->c->queue));
    v->c->f.vkFreeCommandBuffers(v->c->dev, v->pool, 1, &cb);
}

/* Device bytes to the host through the readback buffer, in chunks. */
static void download(bench_vk *v, const vk_buf *src, size_t off, void *dst, size_t bytes) {
    for (size_t done = 0; done < bytes;) {
        size_t n = bytes - done < v->readback.size ? bytes - done : (size_t)v->readback.size;
        VkCommandBuffer cb = cmd_begin(v);
        VkBufferCopy c = {.srcOffset = off + done, .dstOffset = 0, .size = n};
        v->c->f.vkCmdCopyBuffer(cb, src->buf, v->readback.buf, 1, &c);
        cmd_submit_wait(v, cb);
        memcpy((char *)dst + done, v->readback.map, n);
        done += n;
    }
}

/* The driver's register count for a pipeline, where it says (with
 * RLX_VK_PIPELINE_STATS=1 the context has VK_KHR_pipeline_executable_properties;
 * NVIDIA: "Register Count"). */
static void print_registers(const vk_ctx *c, VkPipeline p, uint32_t pf) {
    if (!c->get_exec_stats) return;
    VkPipelineExecutableInfoKHR ei = {.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR, .pipeline = p};
    VkPipelineExecutableStatisticKHR st[32];
    uint32_t n = 32;
    for (uint32_t k = 0; k < n; k++) st[k] = (VkPipelineExecutableStatisticKHR){.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR};
    VkResult r = c->get_exec_stats(c->dev, &ei, &n, st);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return;
    for (uint32_t k = 0; k < n; k++)
        if (strstr(st[k].name, "Register") && st[k].format == VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR)
            fprintf(stderr, "vk_chain: pipeline (prefetch %u): %s %llu\n", pf, st[k].name, (unsigned long long)st[k].value.u64);
}

/* A pipeline of the chain shader on the context's shared layout (one push
 * range, no descriptors); spec: decode_chain.comp's constant_id 0..11. */
#define N_SPEC 13
static VkPipeline make_pipe(vk_ctx *c, const uint32_t *code, size_t bytes, const uint32_t spec[N_SPEC]) {
    VkPipeline p = make_bench_pipe(c, code, bytes, spec, N_SPEC);
    print_registers(c, p, spec[3]);
    return p;
}

static void barrier_all(const vk_ctx *c, VkCommandBuffer cb, VkPipelineStageFlags src, VkPipelineStageFlags dst) {
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    c->f.vkCmdPipelineBarrier(cb, src, dst, 0, 1, &mb, 0, NULL, 0, NULL);
}

/* One timed run: reset the counter, then either one dispatch of all stages
 * or one per stage with barriers (and a timestamp after each). Returns
 * device µs; *err the sync error word; stage_us (per-stage runs) each
 * stage's time. */
typedef struct chain {
    vk_buf dev, sync, table, xim;
    uint32_t xim_slot, xim_xs, xim_xd;
    int n_stages;
    /* --check: every stage's output is filled with NaN before each run, so a
     * stage that read x before the stage before had stored it fails the
     * check (instead of finding the previous run's identical values) */
    const size_t *out_off, *out_bytes;
    bool poison;
} chain;

/* per-stage runs: a timestamp after every dispatch (each stage's time), or
 * only at the end (what the runtime records: barriers alone) */
static bool stamps_between = true;
/* --alt 1: odd stages bind a second pipeline, the same code built with
 * another value of an unused spec constant (decode_chain.comp's ALT), as the
 * runtime binds a new pipeline for each stage kind; --alt N > 1: that
 * pipeline also sizes its shared x for N times the largest K (more shared
 * memory, the same work) */
static VkPipeline alt_pipe = VK_NULL_HANDLE;

static double run_once(bench_vk *v, VkPipeline pipe, chain *ch, uint32_t grid, bool persist, bool flow, VkQueryPool qp,
                       uint32_t *err, double *stage_us) {
    const vk_ctx *c = v->c;
    VkCommandBuffer cb = cmd_begin(v);
    uint32_t nq = persist || flow || !stamps_between ? 2 : (uint32_t)ch->n_stages + 1;
    c->f.vkCmdResetQueryPool(cb, qp, 0, nq);
    c->f.vkCmdFillBuffer(cb, ch->sync.buf, 0, 16, 0);
    for (int s = 0; ch->poison && s < ch->n_stages; s++)
        c->f.vkCmdFillBuffer(cb, ch->dev.buf, ch->out_off[s], ch->out_bytes[s], 0xffffffffu);
    if (ch->xim.buf)   /* the block counters after the two image slots */
        c->f.vkCmdFillBuffer(cb, ch->xim.buf, 2 * (VkDeviceSize)ch->xim_slot, VK_WHOLE_SIZE, 0);
    barrier_all(c, cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
    c->f.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    c->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, qp, 0);
    push_t pu = {.stages = ch->table.addr, .sync = ch->sync.addr, .xim = ch->xim.buf ? ch->xim.addr : 0,
                 .spin_limit = 1u << 22, .xim_slot = ch->xim_slot, .xim_xs = ch->xim_xs, .xim_xd = ch->xim_xd};
    for (int s = 0; s < (persist ? 1 : ch->n_stages); s++) {
        if (s && !flow) barrier_all(c, cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT);
        if (alt_pipe && !persist)
            c->f.vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, s % 2 ? alt_pipe : pipe);
        pu.first = (uint32_t)s;
        pu.count = persist ? (uint32_t)ch->n_stages : 1;
        c->f.vkCmdPushConstants(cb, c->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pu, &pu);
        c->f.vkCmdDispatch(cb, grid, 1, 1);
        if ((!flow && stamps_between) || s + 1 == ch->n_stages)
            c->f.vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qp, flow || !stamps_between ? 1 : (uint32_t)s + 1);
    }
    cmd_submit_wait(v, cb);
    uint64_t ts[257];
    CHECK_VK(c->f.vkGetQueryPoolResults(c->dev, qp, 0, nq, sizeof ts, ts, 8, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
    if (!persist && !flow && stamps_between && stage_us)
        for (int s = 0; s < ch->n_stages; s++) stage_us[s] = (double)(ts[s + 1] - ts[s]) * c->timestamp_period_ns * 1e-3;
    uint32_t sw[2];
    download(v, &ch->sync, 0, sw, sizeof sw);
    *err = sw[1];
    if (debug && (persist || flow)) fprintf(stderr, "sync count %u err %u\n", sw[0], sw[1]);
    return (double)(ts[nq - 1] - ts[0]) * c->timestamp_period_ns * 1e-3;
}

/* x as the shader sees it: per 256-block d = absmax / 127, q = round half to
 * even of x * 127 / absmax (in f32, as on the GPU), x' = q * d. */
static void round_like_shader(const float *x, double *xr, int64_t K) {
    for (int64_t b = 0; b < K; b += 256) {
        float amax = 0;
        for (int k = 0; k < 256; k++) amax = fmaxf(amax, fabsf(x[b + k]));
        float id = amax > 0 ? fminf(127.0f / amax, 1e38f) : 0.0f, d = amax / 127.0f;
        for (int k = 0; k < 256; k++) xr[b + k] = (double)rintf(x[b + k] * id) * (double)d;
    }
}

int main(int argc, char **argv) {
    const char *device = NULL, *model = "8b", *shaders = NULL;
    int layers = 8, runs = 20;
    bool check = false;
    uint32_t mode_mask = 31;
    uint32_t alt = 0;
    int ran = 0;   /* modes run */
    debug = getenv("VK_CHAIN_DEBUG") != NULL;
    uint32_t grids[8] = {132}, n_grids = 1, wg = 512, u = 4, abl = 0, hn = 1, waitall = 0, xl = 1, xbatch = 1, xim = 0;
    const char *quant = "q4_k";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *nx = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--device") && nx) device = argv[++i];
        else if (!strcmp(a, "--model") && nx) model = argv[++i];
        else if (!strcmp(a, "--layers") && nx) layers = atoi(argv[++i]);
        else if (!strcmp(a, "--runs") && nx) runs = atoi(argv[++i]);
        else if (!strcmp(a, "--grids") && nx) n_grids = (uint32_t)parse_list(argv[++i], grids, 8);
        else if (!strcmp(a, "--wg") && nx) wg = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--u") && nx) u = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--shaders") && nx) shaders = argv[++i];
        else if (!strcmp(a, "--abl") && nx) abl = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--hn") && nx) hn = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--waitall") && nx) waitall = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--xl") && nx) xl = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--xbatch") && nx) xbatch = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--xim") && nx) xim = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--check")) check = true;
        else if (!strcmp(a, "--quant") && nx) quant = argv[++i];
        else if (!strcmp(a, "--alt") && nx) alt = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(a, "--modes") && nx) {   /* indices of the modes to run: 0 per-stage, 1 persistent, 2 + prefetch, 3 flow,
                                                     4 per-stage without timestamps between */
            uint32_t ms[5];
            int nm = parse_list(argv[++i], ms, 5);
            mode_mask = 0;
            for (int m = 0; m < nm; m++) mode_mask |= ms[m] < 5 ? 1u << ms[m] : 0;
        }
        else {
            fprintf(stderr, "usage: vk_chain [--device NAME] [--model 8b|1b|tiny] [--layers L] [--grids a,b] [--wg N] "
                            "[--u 1-4] [--hn 0|1] [--waitall 0|1] [--xl 0|1] [--xbatch 1-4] [--xim 0|1] [--abl BITS] [--runs N]\n"
                            "                [--check] [--modes 0,1,2,3,4] [--alt N] [--quant q4_k|q8_0]\n"
                            "                [--shaders DIR]\n");
            return 2;
        }
    }
    const bool q8 = !strcmp(quant, "q8_0");
    if (!q8 && strcmp(quant, "q4_k")) {
        fprintf(stderr, "vk_chain: --quant is q4_k or q8_0\n");
        return 2;
    }
    if (q8 && (xl || xim)) {   /* Q8_0 units read x in position order, and images are the Q4_K layout */
        fprintf(stderr, "vk_chain: --quant q8_0 needs --xl 0 and no --xim\n");
        return 2;
    }
    if (layers < 1 || layers > 64 || runs < 1 || !n_grids || u < 1 || u > 4 || xbatch < 1 || xbatch > 4 || wg < 32 ||
        wg > 1024 || xim > 1 || (xim && !xl)) {   /* the image is the XL 1 layout */
        fprintf(stderr, "vk_chain: bad arguments\n");
        return 2;
    }
    const stage_desc *lay = !strcmp(model, "1b") ? L1B : !strcmp(model, "tiny") ? LTINY : L8B;
    if (strcmp(model, "1b") && strcmp(model, "8b") && strcmp(model, "tiny")) {
        fprintf(stderr, "vk_chain: --model is 8b, 1b or tiny\n");
        return 2;
    }
    for (uint32_t gi = 0; gi < n_grids; gi++)
        if (grids[gi] < 1 || grids[gi] > 1024) {   /* every workgroup needs rows in every stage (N >= 1024) */
            fprintf(stderr, "vk_chain: grid %u outside 1..1024\n", grids[gi]);
            return 2;
        }
    size_t code_bytes;
    uint32_t *code = load_bench_shader(argv[0], shaders, "decode_chain", &code_bytes);
    bench_vk v = {0};
    die_on(vk_ctx_acquire(-1, device, true, &v.c));
    vk_ctx *c = v.c;
    fprintf(stderr, "vk_chain: %s, subgroup %u\n", c->name, c->caps.subgroup_size);
    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = c->queue_family,
                                   .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT};
    CHECK_VK(c->f.vkCreateCommandPool(c->dev, &pci, NULL, &v.pool));
    v.readback = buf_new(&v, 1u << 20, true);

    /* ---- weights: POOL_ROWS quantized rows per stage shape, tiled ---- */
    int n_st = 4 * layers;
    size_t off = 0, wbytes = 0;
    size_t *w_off = calloc((size_t)n_st, sizeof *w_off), *o_off = calloc((size_t)n_st, sizeof *o_off);
    size_t *r_off = calloc((size_t)n_st, sizeof *r_off);
    uint32_t qt = quant_type_of_dtype(q8 ? RLX_Q8_0 : RLX_Q4_K);
    int64_t maxk = 0;
    for (int s = 0; s < n_st; s++) {
        const stage_desc *d = &lay[s % 4];
        uint64_t rb;
        qtype_row_bytes(qt, (uint64_t)d->K, &rb);   /* Q8_0 planar: the same bytes, reordered */
        w_off[s] = off;
        off += (size_t)(rb * (uint64_t)d->N + 255) / 256 * 256;
        wbytes += (size_t)(rb * (uint64_t)d->N);
        if (d->K > maxk) maxk = d->K;
    }
    size_t x0_off = off;
    off += (size_t)maxk * 4 + 256;
    for (int s = 0; s < n_st; s++) {
        o_off[s] = off;
        off += ((size_t)lay[s % 4].N * 4 + 255) / 256 * 256;
        r_off[s] = off;
        off += ((size_t)lay[s % 4].N * 4 + 255) / 256 * 256;
    }
    vk_buf dev = buf_new(&v, off, false);
    uint64_t h = 12345;
#define RNG() (h = h * 6364136223846793005ull + 1442695040888963407ull, (double)(h >> 11) / 9007199254740992.0 - 0.5)
    /* per stage shape: the pool (quantized) and its dequantized rows for --check */
    unsigned char *pool[4];
    float *pool_f[4];
    uint64_t prb[4];
    for (int t = 0; t < 4; t++) {
        int64_t K = lay[t].K;
        qtype_row_bytes(qt, (uint64_t)K, &prb[t]);
        pool[t] = malloc(prb[t] * POOL_ROWS);
        pool_f[t] = malloc(sizeof(float) * (size_t)K * POOL_ROWS);
        float *f = malloc(sizeof(float) * (size_t)K);
        unsigned char *gguf_row = malloc(prb[t]);   /* Q8_0: a row in GGUF blocks, before the planar layout */
        for (int r = 0; r < POOL_ROWS; r++) {
            for (int64_t k = 0; k < K; k++) f[k] = (float)(RNG() * 2.0 * sqrt(3.0 / (double)K));   /* gain ~1 */
            unsigned char *row = pool[t] + prb[t] * r;
            quant_quantize_row(qt, f, q8 ? gguf_row : row, K);
            quant_dequantize_row(qt, q8 ? gguf_row : row, pool_f[t] + (size_t)K * r, K);
            if (q8) vk_layout_to_planar(RLX_Q8_0, K, gguf_row, row, prb[t]);
        }
        free(f);
        free(gguf_row);
    }
    {
        size_t most = 0;
        for (int t = 0; t < 4; t++)
            if (prb[t] * (size_t)lay[t].N > most) most = prb[t] * (size_t)lay[t].N;
        unsigned char *w = malloc(most);
        for (int t = 0; t < 4; t++) {
            for (int64_t n = 0; n < lay[t].N; n++) memcpy(w + prb[t] * n, pool[t] + prb[t] * (n % POOL_ROWS), prb[t]);
            for (int s = t; s < n_st; s += 4) die_on(vk_upload(c, &dev, w_off[s], w, prb[t] * (size_t)lay[t].N));
        }
        free(w);
    }
    float *x0 = malloc(sizeof(float) * (size_t)maxk);
    for (int64_t k = 0; k < maxk; k++) x0[k] = (float)RNG();
    die_on(vk_upload(c, &dev, x0_off, x0, sizeof(float) * (size_t)maxk));
    float **res = calloc((size_t)n_st, sizeof *res);   /* each stage's residual, kept for --check */
    for (int s = 0; s < n_st; s++) {
        res[s] = malloc(sizeof(float) * (size_t)lay[s % 4].N);
        for (int64_t n = 0; n < lay[s % 4].N; n++) res[s][n] = (float)RNG() * 0.1f;
        die_on(vk_upload(c, &dev, r_off[s], res[s], sizeof(float) * (size_t)lay[s % 4].N));
    }
    /* ---- stage table: x of stage s is stage s - 1's output ---- */
    gpu_stage *tab = calloc((size_t)n_st, sizeof *tab);
    for (int s = 0; s < n_st; s++) {
        const stage_desc *d = &lay[s % 4];
        tab[s] = (gpu_stage){.x = dev.addr + (s ? o_off[s - 1] : x0_off), .w = dev.addr + w_off[s],
                             .out = dev.addr + o_off[s], .res = dev.addr + r_off[s], .N = (uint32_t)d->N,
                             .K = (uint32_t)d->K, .row_bytes = (uint32_t)prb[s % 4], .epi = (uint32_t)d->epi};
    }
    size_t *o_bytes = calloc((size_t)n_st, sizeof *o_bytes);
    for (int s = 0; s < n_st; s++) o_bytes[s] = (size_t)lay[s % 4].N * 4;
    chain ch = {.dev = dev, .n_stages = n_st, .out_off = o_off, .out_bytes = o_bytes, .poison = check};
    ch.table = buf_new(&v, sizeof *tab * (size_t)n_st, false);
    die_on(vk_upload(c, &ch.table, 0, tab, sizeof *tab * (size_t)n_st));
    ch.sync = buf_new(&v, 256, false);
    if (xim) {   /* two slots of the largest output's image (quants, sums, scales), then its block counters */
        int64_t maxn = 0;
        for (int t = 0; t < 4; t++) maxn = lay[t].N > maxn ? lay[t].N : maxn;
        ch.xim_xs = (uint32_t)maxn;                  /* quants: 1 byte per value */
        ch.xim_xd = (uint32_t)(maxn + maxn / 4);     /* sums: two ints per 32 values */
        ch.xim_slot = (uint32_t)((maxn + maxn / 4 + maxn / 64 + 255) / 256 * 256);
        ch.xim = buf_new(&v, 2 * (size_t)ch.xim_slot + (size_t)maxn / 256 * 4, false);
    }

    VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                .queryCount = (uint32_t)n_st + 1};
    VkQueryPool qp;
    CHECK_VK(c->f.vkCreateQueryPool(c->dev, &qi, NULL, &qp));

    /* variants: per-stage dispatches, persistent without and with the prefetch;
     * flow: one dispatch per stage with no pipeline barriers, each stage's
     * workgroups loading their first weights, then waiting on the counter
     * for every workgroup of the earlier dispatches (relies on the device
     * starting a dispatch's workgroups only after the earlier dispatch's) */
    struct { const char *name; bool persist, flow; uint32_t pf; } modes[5] = {
        {"per-stage dispatches", false, false, 0}, {"persistent", true, false, 0},
        {"persistent + prefetch", true, false, 1}, {"flow: dispatches, counter waits", false, true, 1},
        {"per-stage dispatches, no timestamps between", false, false, 0}};
    int n_modes = 5;
    uint32_t spec0[N_SPEC] = {wg, (uint32_t)maxk, u, 0, hn, abl, waitall, xl, xbatch, xim, 0, 0, q8}, spec1[N_SPEC],
             spec2[N_SPEC];
    memcpy(spec1, spec0, sizeof spec1);
    spec1[3] = 1;   /* decode_chain.comp's PF */
    memcpy(spec2, spec1, sizeof spec2);
    spec2[10] = 1;   /* FLOW */
    VkPipeline pipes[5] = {make_pipe(c, code, code_bytes, spec0), make_pipe(c, code, code_bytes, spec1),
                           make_pipe(c, code, code_bytes, spec2), VK_NULL_HANDLE, VK_NULL_HANDLE};
    /* the shared x: a byte a value, two sums per 32 values, scales and absmax per 256 */
    if (alt > 1 && (uint64_t)maxk * alt * 5 / 4 + 4096 > c->caps.max_shared_memory) {
        fprintf(stderr, "vk_chain: --alt %u needs more than the device's %u bytes of shared memory\n", alt,
                c->caps.max_shared_memory);
        return 2;
    }
    if (alt) {   /* the ALT twins of the per-stage (0) and flow (2) pipelines */
        spec0[11] = spec2[11] = 1;
        if (alt > 1) spec0[1] = spec2[1] = (uint32_t)maxk * (uint32_t)alt;   /* --alt N > 1: N times the shared memory too */
        pipes[3] = make_pipe(c, code, code_bytes, spec0);
        pipes[4] = make_pipe(c, code, code_bytes, spec2);
    }
    double gb = (double)wbytes / 1e9;
    printf("# vk_chain: %s-shaped layers x %d (%d stages, %s, %.3f GB of weights), workgroup %u, U %u, %d runs\n",
           !strcmp(model, "1b") ? "1B" : !strcmp(model, "tiny") ? "tiny" : "8B", layers, n_st, q8 ? "Q8_0" : "Q4_K", gb,
           wg, u, runs);
    printf("| mode | grid | us / chain (median) | us / layer | GB/s |\n|---|---:|---:|---:|---:|\n");
    size_t out_total = 0;
    for (int s = 0; s < n_st; s++) out_total += (size_t)lay[s % 4].N;
    float *ref_out = NULL;
    int failures = 0;
    for (uint32_t gi = 0; gi < n_grids; gi++) {
        for (int mi = 0; mi < n_modes; mi++) {
            if (!(mode_mask >> mi & 1) || (xim && mi == 3)) continue;   /* flow hands x on as stored rows only */
            stamps_between = mi != 4;
            ran++;
            VkPipeline pp = pipes[modes[mi].flow ? 2 : modes[mi].pf];
            alt_pipe = !alt || modes[mi].persist ? VK_NULL_HANDLE : pipes[modes[mi].flow ? 4 : 3];
            double *t = malloc(sizeof(double) * (size_t)runs), type_us[4] = {0}, *st_us = malloc(sizeof(double) * (size_t)n_st);
            uint32_t err = 0, e1;
            (void)run_once(&v, pp, &ch, grids[gi], modes[mi].persist, modes[mi].flow, qp, &e1, NULL);   /* warm-up */
            err |= e1;
            for (int r = 0; r < runs && !err; r++) {
                t[r] = run_once(&v, pp, &ch, grids[gi], modes[mi].persist, modes[mi].flow, qp, &e1, st_us);
                if (!modes[mi].persist && !modes[mi].flow && stamps_between)
                    for (int s2 = 0; s2 < n_st; s2++) type_us[s2 % 4] += st_us[s2] / (runs * layers);
                err |= e1;
            }
            free(st_us);
            qsort(t, (size_t)runs, sizeof *t, cmp_d);
            double med = t[runs / 2];
            free(t);
            if (err) {
                printf("| %s | %u | a wait timed out (workgroups not co-resident, or not started in order) | | |\n",
                       modes[mi].name, grids[gi]);
                failures++;
                continue;
            }
            printf("| %s | %u | %.1f | %.2f | %.0f |\n", modes[mi].name, grids[gi], med, med / layers, gb / (med * 1e-6));
            if (!modes[mi].persist && !modes[mi].flow && stamps_between) {   /* each stage shape's mean dispatch time (timestamps between dispatches) */
                printf("  per stage (mean us, GB/s):");
                for (int t2 = 0; t2 < 4; t2++)
                    printf(" %lldx%lld %.2f (%.0f)", (long long)lay[t2].N, (long long)lay[t2].K, type_us[t2],
                           (double)prb[t2] * (double)lay[t2].N / (type_us[t2] * 1e3));
                printf("\n");
            }
            fflush(stdout);
            if (!check) continue;
            /* every stage's output against float64, from the x the GPU read */
            float *outs = malloc(sizeof(float) * out_total);
            size_t at = 0;
            for (int s = 0; s < n_st; s++) {
                download(&v, &dev, o_off[s], outs + at, sizeof(float) * (size_t)lay[s % 4].N);
                at += (size_t)lay[s % 4].N;
            }
            double *xr = malloc(sizeof(double) * (size_t)maxk);
            at = 0;
            double worst = 0;
            for (int s = 0; s < n_st; s++) {
                const stage_desc *d = &lay[s % 4];
                const float *xs = s ? outs + at - lay[(s - 1) % 4].N : x0;
                /* x rounded as the shader rounds it (8 bits per 256-block), so
                 * the only difference left is float summation order */
                round_like_shader(xs, xr, d->K);
                double num = 0, den = 0;
                for (int64_t n = 0; n < d->N; n++) {
                    const float *wr = pool_f[s % 4] + (size_t)d->K * (size_t)(n % POOL_ROWS);
                    double y = d->epi ? res[s][n] : 0;
                    for (int64_t k = 0; k < d->K; k++) y += (double)wr[k] * xr[k];
                    double e = (double)outs[at + n] - y;
                    if (debug && fabs(e) > 1e-4 * (fabs(y) + 1e-3))
                        fprintf(stderr, "stage %d row %lld: %g vs %g\n", s, (long long)n, outs[at + n], y);
                    num += e * e;
                    den += y * y;
                }
                double rel = sqrt(num / (den > 0 ? den : 1));
                if (rel > worst) worst = rel;
                if (!(rel < 1e-5)) {
                    printf("  stage %d: relative error %.3g against float64\n", s, rel);
                    failures++;
                }
                at += (size_t)d->N;
            }
            free(xr);
            if (!ref_out) {
                ref_out = outs;
            } else {
                if (memcmp(ref_out, outs, sizeof(float) * out_total)) {
                    printf("  %s, grid %u: results differ from the first variant's bit for bit\n", modes[mi].name, grids[gi]);
                    failures++;
                }
                free(outs);
            }
            printf("  check: worst stage relative error %.2e against float64\n", worst);
        }
        free(ref_out);   /* another grid splits rows differently: compare within a grid only */
        ref_out = NULL;
    }
    c->f.vkDestroyQueryPool(c->dev, qp, NULL);
    for (int i = 0; i < 5; i++)
        if (pipes[i]) c->f.vkDestroyPipeline(c->dev, pipes[i], NULL);
    vk_buf_destroy(c, &ch.table);
    if (ch.xim.buf) vk_buf_destroy(c, &ch.xim);
    vk_buf_destroy(c, &ch.sync);
    vk_buf_destroy(c, &dev);
    vk_buf_destroy(c, &v.readback);
    c->f.vkDestroyCommandPool(c->dev, v.pool, NULL);
    vk_ctx_release(c);
    for (int s = 0; s < n_st; s++) free(res[s]);
    free(res);
    for (int t = 0; t < 4; t++) {
        free(pool[t]);
        free(pool_f[t]);
    }
    free(tab);
    free(x0);
    free(w_off);
    free(o_off);
    free(o_bytes);
    free(r_off);
    free(code);
    if (!ran) {
        printf("vk_chain: no mode ran (--modes, and --xim 1 skips flow)\n");
        failures++;
    }
    if (check) printf("%s\n", failures ? "vk_chain: CHECK FAILED" : "vk_chain: check passed");
    return failures ? 1 : 0;
}
