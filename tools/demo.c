/*
 * demo.c — builds a post-norm transformer encoder (BERT-style: attention,
 * residual + layer_norm, GELU MLP, residual + layer_norm) through the public
 * API, compiles it for the best backend, and checks it against the same graph
 * compiled op by op (no fusion, no DCE) on the CPU with one thread.
 */
#include "demo.h"
#include "rlx.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void demo_options_init(demo_options *o) {
    o->layers = 2;
    o->d_model = 256;
    o->heads = 4;
    o->d_ff = 1024;
    o->seq = 128;
    o->batch = 1;
    o->runs = 20;
    o->threads = 0;
    o->report = 0;
    o->fast = 0;
    o->check = 1;
    o->device = NULL;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float rand_uniform(float scale) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return scale * ((float)(rng >> 40) / (float)(1 << 24) * 2.0f - 1.0f);
}

static rlx_node param(rlx_graph *g, const char *prefix, const char *name, int rank, int64_t d0, int64_t d1) {
    char full[64];
    int64_t dims[2] = {d0, d1};
    snprintf(full, sizeof full, "%s.%s", prefix, name);
    return rlx_param(g, full, RLX_F32, rank, dims);
}

/* [B*S, D] -> [B, H, S, D/H] */
static rlx_node split_heads(rlx_graph *g, rlx_node x, const demo_options *o) {
    int64_t d4[4] = {o->batch, o->seq, o->heads, o->d_model / o->heads};
    int perm[4] = {0, 2, 1, 3};
    return rlx_transpose(g, rlx_reshape(g, x, 4, d4), perm);
}

static int parse_int(const char *cmd, const char *flag, const char *value, int lo, int hi, int *out) {
    char *end;
    long v = value ? strtol(value, &end, 10) : 0;
    if (!value || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s needs an integer in [%d, %d]\n", cmd, flag, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

int demo_parse_options(int argc, char **argv, const char *cmd, demo_options *o) {
    struct { const char *flag; int *dst; int lo, hi; } flags[] = {
        {"--layers", &o->layers, 1, 64},  {"--d-model", &o->d_model, 8, 8192}, {"--heads", &o->heads, 1, 128},
        {"--d-ff", &o->d_ff, 8, 32768},   {"--seq", &o->seq, 1, 8192},         {"--batch", &o->batch, 1, 1024},
        {"--runs", &o->runs, 1, 1000},    {"--threads", &o->threads, 0, 1024},
    };
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--report") == 0) { o->report = 1; continue; }
        if (strcmp(argv[i], "--no-check") == 0) { o->check = 0; continue; }
        if (strcmp(argv[i], "--precision") == 0) {
            const char *v = i + 1 < argc ? argv[++i] : NULL;
            if (!v || (strcmp(v, "f32") != 0 && strcmp(v, "fast") != 0)) {
                fprintf(stderr, "%s: --precision needs f32 or fast\n", cmd);
                return 2;
            }
            o->fast = strcmp(v, "fast") == 0;
            continue;
        }
        if (strcmp(argv[i], "--device") == 0) {
            if (i + 1 >= argc) { fprintf(stderr, "%s: --device needs a value\n", cmd); return 2; }
            o->device = argv[++i];
            continue;
        }
        size_t k = 0;
        while (k < sizeof flags / sizeof flags[0] && strcmp(argv[i], flags[k].flag) != 0) k++;
        if (k == sizeof flags / sizeof flags[0]) { fprintf(stderr, "%s: unknown option '%s'\n", cmd, argv[i]); return 2; }
        if (parse_int(cmd, flags[k].flag, i + 1 < argc ? argv[i + 1] : NULL, flags[k].lo, flags[k].hi, flags[k].dst))
            return 2;
        i++;
    }
    if (o->d_model % o->heads) { fprintf(stderr, "%s: --d-model must be a multiple of --heads\n", cmd); return 2; }
    return 0;
}

rlx_graph *demo_build_encoder(const demo_options *o) {
    rlx_graph *g = rlx_graph_new();
    if (!g) return NULL;
    int64_t xd[2] = {(int64_t)o->batch * o->seq, o->d_model};
    rlx_node h = rlx_input(g, "x", RLX_F32, 2, xd);
    for (int l = 0; l < o->layers; l++) {
        char p[32];
        snprintf(p, sizeof p, "layer%d", l);
        rlx_node q = rlx_add(g, rlx_matmul(g, h, param(g, p, "wq", 2, o->d_model, o->d_model), 1), param(g, p, "bq", 1, o->d_model, 0));
        rlx_node k = rlx_add(g, rlx_matmul(g, h, param(g, p, "wk", 2, o->d_model, o->d_model), 1), param(g, p, "bk", 1, o->d_model, 0));
        rlx_node v = rlx_add(g, rlx_matmul(g, h, param(g, p, "wv", 2, o->d_model, o->d_model), 1), param(g, p, "bv", 1, o->d_model, 0));
        rlx_node a = rlx_attention(g, split_heads(g, q, o), split_heads(g, k, o), split_heads(g, v, o), RLX_MASK_NONE,
                                   RLX_NO_NODE, 0);
        int perm[4] = {0, 2, 1, 3};
        a = rlx_reshape(g, rlx_transpose(g, a, perm), 2, xd);
        a = rlx_add(g, rlx_matmul(g, a, param(g, p, "wo", 2, o->d_model, o->d_model), 1), param(g, p, "bo", 1, o->d_model, 0));
        h = rlx_layer_norm(g, rlx_add(g, h, a), param(g, p, "ln1.g", 1, o->d_model, 0), param(g, p, "ln1.b", 1, o->d_model, 0), 1e-12f);
        rlx_node f = rlx_gelu(g, rlx_add(g, rlx_matmul(g, h, param(g, p, "w1", 2, o->d_ff, o->d_model), 1), param(g, p, "b1", 1, o->d_ff, 0)));
        f = rlx_add(g, rlx_matmul(g, f, param(g, p, "w2", 2, o->d_model, o->d_ff), 1), param(g, p, "b2", 1, o->d_model, 0));
        h = rlx_layer_norm(g, rlx_add(g, h, f), param(g, p, "ln2.g", 1, o->d_model, 0), param(g, p, "ln2.b", 1, o->d_model, 0), 1e-12f);
    }
    rlx_output(g, "y", h);
    return g;
}

void demo_compile_options(const demo_options *o, rlx_compile_options *best) {
    rlx_compile_options_init(best);
    best->threads = o->threads;
    best->precision = o->fast ? RLX_PRECISION_FAST : RLX_PRECISION_F32;
    if (o->device && strcmp(o->device, "auto") != 0) {
        char *end;
        long idx = strtol(o->device, &end, 10);
        if (strcmp(o->device, "cpu") == 0) best->backend = RLX_BACKEND_CPU;
        else if (strcmp(o->device, "vulkan") == 0) best->backend = RLX_BACKEND_VULKAN;
        else if (*end == 0 && idx >= 0) { best->backend = RLX_BACKEND_VULKAN; best->device_index = (int)idx; }
        else { best->backend = RLX_BACKEND_VULKAN; best->device_name = o->device; }
    }
}

/* Same random values for the same param in both executables. */
static int set_random_params(rlx_exec *e) {
    for (int i = 0; i < rlx_exec_param_count(e); i++) {
        rlx_tensor info;
        if (rlx_exec_param_info(e, i, &info) != RLX_OK) return -1;
        size_t n = info.bytes / sizeof(float);
        float *data = malloc(info.bytes);
        if (!data) return -1;
        uint64_t seed = 1469598103934665603ull;
        for (const char *c = info.name; *c; c++) seed = (seed ^ (unsigned char)*c) * 1099511628211ull;
        rng = seed | 1;
        bool is_gain = strstr(info.name, ".g") != NULL;
        for (size_t j = 0; j < n; j++) data[j] = is_gain ? 1.0f + rand_uniform(0.1f) : rand_uniform(0.08f);
        rlx_status st = rlx_exec_set_param_f32(e, info.name, data, n);
        free(data);
        if (st != RLX_OK) return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int demo_run(const demo_options *o) {
    rlx_graph *g = demo_build_encoder(o);
    if (!g) { fprintf(stderr, "rlx demo: out of memory\n"); return 1; }
    rlx_compile_options best, ref;
    demo_compile_options(o, &best);
    rlx_compile_options_init(&ref);
    ref.backend = RLX_BACKEND_CPU;
    ref.optimize = 0;
    ref.threads = 1;
    rlx_exec *e = NULL, *r = NULL;
    int code = 1;
    float *x = NULL, *want = NULL;
    if (rlx_compile(g, &best, &e) != RLX_OK || (o->check && rlx_compile(g, &ref, &r) != RLX_OK)) {
        fprintf(stderr, "rlx demo: compile failed: %s\n", rlx_last_error());
        goto done;
    }
    if (set_random_params(e) || (r && set_random_params(r))) {
        fprintf(stderr, "rlx demo: setting params failed: %s\n", rlx_last_error());
        goto done;
    }
    size_t n = (size_t)o->batch * o->seq * o->d_model;
    x = malloc(n * sizeof *x);
    want = malloc(n * sizeof *want);
    if (!x || !want) { fprintf(stderr, "rlx demo: out of memory\n"); goto done; }
    rng = 42;
    for (size_t i = 0; i < n; i++) x[i] = rand_uniform(1.0f);
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {(int64_t)o->batch * o->seq, o->d_model},
                     .data = x, .bytes = n * sizeof *x};
    if (r && (rlx_exec_run(r, &in, 1) != RLX_OK || rlx_exec_read_output(r, "y", want, n * sizeof *want) != RLX_OK)) {
        fprintf(stderr, "rlx demo: reference run failed: %s\n", rlx_last_error());
        goto done;
    }
    /* wall time of rlx_exec_run (the input's copy included) and, on a
     * GPU, its device time (rlx_exec_stats.device_seconds: first to last
     * timestamp), each the median over the runs */
    double times[1000], dev[1000];
    int runs = o->runs < 1 ? 1 : o->runs > 1000 ? 1000 : o->runs;
    if (rlx_exec_run(e, &in, 1) != RLX_OK) { fprintf(stderr, "rlx demo: run failed: %s\n", rlx_last_error()); goto done; }
    rlx_exec_stats s, sr;
    for (int i = 0; i < runs; i++) {
        double t0 = now_s();
        if (rlx_exec_run(e, &in, 1) != RLX_OK) { fprintf(stderr, "rlx demo: run failed: %s\n", rlx_last_error()); goto done; }
        times[i] = now_s() - t0;
        dev[i] = rlx_exec_get_stats(e, &s) == RLX_OK ? s.device_seconds : -1.0;
    }
    qsort(times, (size_t)runs, sizeof *times, cmp_double);
    qsort(dev, (size_t)runs, sizeof *dev, cmp_double);
    rlx_tensor out;
    if (rlx_exec_output(e, "y", &out) != RLX_OK) { fprintf(stderr, "rlx demo: %s\n", rlx_last_error()); goto done; }
    const float *got = out.data;
    double rel = 0;
    if (r) {
        double num = 0, den = 0;
        for (size_t i = 0; i < n; i++) {
            double d = (double)got[i] - want[i];
            num += d * d;
            den += (double)want[i] * want[i];
        }
        rel = sqrt(num / (den > 0 ? den : 1));
    }
    rlx_exec_get_stats(e, &s);
    if (r) rlx_exec_get_stats(r, &sr);
    double flops = 0;
    for (int l = 0; l < o->layers; l++) {
        double tokens = (double)o->batch * o->seq;
        flops += 2 * tokens * o->d_model * o->d_model * 4 + 2 * 2 * tokens * o->d_model * o->d_ff;
        flops += 2 * 2 * (double)o->batch * o->seq * o->seq * o->d_model;
    }
    printf("rlx demo: transformer encoder, %d layers, d_model %d, %d heads, d_ff %d, batch %d x seq %d, precision %s\n",
           o->layers, o->d_model, o->heads, o->d_ff, o->batch, o->seq, o->fast ? "fast" : "f32");
    printf("  backend          %s on %s (%d steps, %d fused nodes, %d host steps)\n", s.backend, s.device, s.steps,
           s.fused_nodes, s.host_steps);
    printf("  params           %.2f MiB\n", s.param_bytes / 1048576.0);
    if (r)
        printf("  arena            %.2f MiB planned for %.2f MiB of tensors (op-by-op graph: %.2f MiB)\n",
               s.arena_bytes / 1048576.0, s.tensor_bytes / 1048576.0, sr.arena_bytes / 1048576.0);
    else
        printf("  arena            %.2f MiB planned for %.2f MiB of tensors\n", s.arena_bytes / 1048576.0,
               s.tensor_bytes / 1048576.0);
    printf("  time per run     %.3f ms median, %.3f ms min over %d runs (%.1f GFLOP/s)\n", times[runs / 2] * 1e3,
           times[0] * 1e3, runs, flops / times[runs / 2] * 1e-9);
    if (dev[runs / 2] > 0)
        printf("  device time      %.3f ms median (%.1f GFLOP/s)\n", dev[runs / 2] * 1e3, flops / dev[runs / 2] * 1e-9);
    /* f16 operands (--precision fast) round each product's inputs to 11
     * bits: about 1e-3 relative a product, a few times that after the
     * layers */
    double tol = o->fast ? 3e-2 : 1e-4;
    if (r)
        printf("  check            rel. error vs unoptimized CPU run %.2e (%s)\n", rel, rel < tol ? "ok" : "MISMATCH");
    else
        printf("  check            skipped (--no-check)\n");
    printf("RESULT demo wall_ms %.4f device_ms %.4f rel_err %.3e\n", times[runs / 2] * 1e3,
           dev[runs / 2] > 0 ? dev[runs / 2] * 1e3 : -1.0, r ? rel : -1.0);
    if (o->report) {
        char *rep = rlx_exec_report(e);
        if (rep) { printf("%s", rep); free(rep); }
    }
    code = !r || rel < tol ? 0 : 1;
done:
    free(x);
    free(want);
    rlx_exec_free(e);
    rlx_exec_free(r);
    rlx_graph_free(g);
    return code;
}
