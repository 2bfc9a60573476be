/*
 * vk_matmul.c — Vulkan matmul throughput through the public API: 4096^3
 * tiled f32, f16 (cooperative matrix where the device has it), f32 under
 * the fast precision policy, and decode-shaped matvecs.
 *
 * Each case compiles a chain y = x W W ... W (R matmuls sharing one weight,
 * activations stay on the GPU) for R = 1 and R = 1 + REPS, times both
 * (warm-up, then the median of RUNS runs) and reports the per-matmul time
 * (t(1 + REPS) - t(1)) / REPS, which cancels input/output transfers and
 * submission overhead. The tier comes from rlx_exec_report().
 *
 *   cc -std=c11 -Iinclude bench/vk_matmul.c build/librlx.a -lm -pthread -ldl
 *   ./a.out [device-name-substring]
 * RLX_BENCH_DIV=n divides every size by n (a quick check on a slow device);
 * RLX_BENCH_ONLY=text runs only the cases whose name contains text.
 */
#define _POSIX_C_SOURCE 199309L
#include "rlx.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 10
#define RUNS 7

typedef struct bench_case {
    const char   *name;
    int64_t       M, K;        /* N = K so the chain composes */
    int           transpose_b;
    rlx_dtype     dt;
    rlx_precision prec;
} bench_case;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint16_t to_f16(float f) {
    /* round-to-nearest-even f32 -> f16 for finite values in range */
    uint32_t u;
    memcpy(&u, &f, 4);
    uint32_t sign = (u >> 16) & 0x8000u;
    int32_t e = (int32_t)((u >> 23) & 0xff) - 127 + 15;
    uint32_t m = u & 0x7fffffu;
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        m |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e);
        uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    uint32_t h = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static void *make_data(rlx_dtype dt, int64_t n, float scale, unsigned seed) {
    size_t es = rlx_dtype_size(dt);
    unsigned char *p = malloc((size_t)n * es);
    if (!p) return NULL;
    uint64_t h = 0x9e3779b97f4a7c15ull * (seed + 1);
    for (int64_t i = 0; i < n; i++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        float v = (float)((double)(h >> 40) / 16777216.0 * 2 - 1) * scale;
        if (dt == RLX_F32) ((float *)p)[i] = v;
        else if (dt == RLX_F16) ((uint16_t *)p)[i] = to_f16(v);
        else ((uint16_t *)p)[i] = to_bf16(v);
    }
    return p;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median seconds per run of a chain of `chain` matmuls; tier receives the report's path. */
static double time_chain(const bench_case *c, int chain, const char *device, char *tier, size_t tier_len) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {c->M, c->K}, wd[2] = {c->K, c->K};
    rlx_node y = rlx_input(g, "x", c->dt, 2, xd);
    rlx_node w = rlx_param(g, "w", c->dt, 2, wd);
    for (int i = 0; i < chain; i++) y = rlx_matmul(g, y, w, c->transpose_b);
    rlx_output(g, "y", y);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_VULKAN;
    o.precision = c->prec;
    if (device) o.device_name = device;
    rlx_exec *e = NULL;
    double med = -1;
    void *x = make_data(c->dt, c->M * c->K, 1.0f, 1);
    /* uniform(-s, s) with s = sqrt(3 / K) keeps the chain's scale constant */
    void *wv = make_data(c->dt, c->K * c->K, sqrtf(3.0f / (float)c->K), 2);
    if (!x || !wv) { fprintf(stderr, "out of memory\n"); goto done; }
    if (rlx_compile(g, &o, &e) != RLX_OK) { fprintf(stderr, "%s: compile: %s\n", c->name, rlx_last_error()); goto done; }
    if (rlx_exec_set_param(e, "w", c->dt, wv, (size_t)(c->K * c->K) * rlx_dtype_size(c->dt)) != RLX_OK) {
        fprintf(stderr, "%s: set_param: %s\n", c->name, rlx_last_error());
        goto done;
    }
    rlx_tensor in;
    memset(&in, 0, sizeof in);
    in.name = "x";
    in.dtype = c->dt;
    in.rank = 2;
    in.dims[0] = c->M;
    in.dims[1] = c->K;
    in.data = x;
    in.bytes = (size_t)(c->M * c->K) * rlx_dtype_size(c->dt);
    double t[RUNS];
    for (int r = -2; r < RUNS; r++) {   /* two warm-up runs */
        double t0 = now();
        if (rlx_exec_run(e, &in, 1) != RLX_OK) { fprintf(stderr, "%s: run: %s\n", c->name, rlx_last_error()); goto done; }
        if (r >= 0) t[r] = now() - t0;
    }
    qsort(t, RUNS, sizeof t[0], cmp_double);
    med = t[RUNS / 2];
    if (tier) {
        snprintf(tier, tier_len, "?");
        char *rep = rlx_exec_report(e);
        char *line = rep ? strstr(rep, "matmul") : NULL;
        if (line) {
            char *eol = strchr(line, '\n');
            if (eol) *eol = 0;
            char *last = strrchr(line, ' ');
            snprintf(tier, tier_len, "%s", last ? last + 1 : line);
            if (strstr(line, "host")) snprintf(tier, tier_len, "host");
        }
        free(rep);
    }
done:
    free(x);
    free(wv);
    rlx_exec_free(e);
    rlx_graph_free(g);
    return med;
}

int main(int argc, char **argv) {
    const char *device = argc > 1 ? argv[1] : NULL;
    static const bench_case cases[] = {
        {"gemm f32", 4096, 4096, 0, RLX_F32, RLX_PRECISION_F32},
        {"gemm f32 tb", 4096, 4096, 1, RLX_F32, RLX_PRECISION_F32},
        {"gemm f16", 4096, 4096, 0, RLX_F16, RLX_PRECISION_F32},
        {"gemm f16 tb", 4096, 4096, 1, RLX_F16, RLX_PRECISION_F32},
        {"gemm f32 fast", 4096, 4096, 0, RLX_F32, RLX_PRECISION_FAST},
        {"gemm bf16", 4096, 4096, 0, RLX_BF16, RLX_PRECISION_F32},
        {"bert f32", 512, 768, 1, RLX_F32, RLX_PRECISION_F32},
        {"bert f16", 512, 768, 1, RLX_F16, RLX_PRECISION_F32},
        {"matvec f32 tb", 1, 4096, 1, RLX_F32, RLX_PRECISION_F32},
        {"matvec f32", 1, 4096, 0, RLX_F32, RLX_PRECISION_F32},
        {"matvec f16 tb", 1, 4096, 1, RLX_F16, RLX_PRECISION_F32},
    };
    if (rlx_vulkan_device_count() <= 0) {
        fprintf(stderr, "no Vulkan device: %s\n", rlx_last_error());
        return 1;
    }
    printf("%-15s %6s %6s %6s  %-12s %10s %10s %10s\n", "case", "M", "N", "K", "tier", "ms/matmul", "TFLOP/s",
           "GB/s");
    const char *div_env = getenv("RLX_BENCH_DIV");
    int64_t div = div_env ? atoll(div_env) : 1;
    if (div < 1) div = 1;
    const char *only = getenv("RLX_BENCH_ONLY");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bench_case cc = cases[i];
        if (only && !strstr(cc.name, only)) continue;
        const bench_case *c = &cc;
        cc.M = cc.M / div > 0 ? cc.M / div : 1;
        cc.K = cc.K / div > 0 ? cc.K / div : 1;
        char tier[64] = "?";
        double t1 = time_chain(c, 1, device, NULL, 0);
        double tn = time_chain(c, 1 + REPS, device, tier, sizeof tier);
        if (t1 < 0 || tn < 0) {
            printf("%-15s %6lld %6lld %6lld  %-12s %10s\n", c->name, (long long)c->M, (long long)c->K,
                   (long long)c->K, "failed", "-");
            continue;
        }
        double per = (tn - t1) / REPS;
        double flops = 2.0 * (double)c->M * (double)c->K * (double)c->K;
        double bytes = (double)rlx_dtype_size(c->dt) * ((double)c->K * c->K + 2.0 * (double)c->M * c->K);
        printf("%-15s %6lld %6lld %6lld  %-12s %10.4f %10.2f %10.1f\n", c->name, (long long)c->M, (long long)c->K,
               (long long)c->K, tier, per * 1e3, per > 0 ? flops / per * 1e-12 : 0.0,
               per > 0 ? bytes / per * 1e-9 : 0.0);
        fflush(stdout);
    }
    return 0;
}
