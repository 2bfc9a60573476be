/*
 * vk_bench.c — GPU benchmarks through the public API on a Vulkan device.
 * Prints one table, then "RESULT name value unit" lines that
 * bench/gpu_compare.py pairs with PyTorch measured in the same run.
 *
 * Inputs are params (device-resident) and outputs are narrowed to one row (a
 * view), so the device time measured by timestamps is the kernel's, not
 * PCIe's. Medians over many runs after warm-up.
 *
 *   build/vk_bench [--quick]     device from RLX_DEVICE (index or name), else the best GPU
 */
#include "rlx.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int quick;

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void fill_params(rlx_exec *e) {
    uint64_t h = 12345;
    for (int i = 0; i < rlx_exec_param_count(e); i++) {
        rlx_tensor info;
        rlx_exec_param_info(e, i, &info);
        size_t es = rlx_dtype_size(info.dtype), n = info.bytes / es;
        void *p = malloc(info.bytes);
        for (size_t j = 0; j < n; j++) {
            h = h * 6364136223846793005ull + 1442695040888963407ull;
            float v = (float)((h >> 40) / 16777216.0 - 0.5);
            if (info.dtype == RLX_F32) ((float *)p)[j] = v;
            else {   /* f16 bits via a simple conversion: values in [-0.5, 0.5) */
                uint32_t u;
                memcpy(&u, &v, 4);
                uint32_t sign = (u >> 16) & 0x8000, exp = (u >> 23) & 0xff, man = u & 0x7fffff;
                uint16_t hbits = exp < 103 ? (uint16_t)sign : (uint16_t)(sign | ((exp - 112) << 10) | (man >> 13));
                ((uint16_t *)p)[j] = hbits;
            }
        }
        rlx_exec_set_param(e, info.name, info.dtype, p, info.bytes);
        free(p);
    }
}

/* Compiles g on the GPU, runs it `runs` times, returns the median device
 * seconds (wall == 0), wall seconds (wall == 1), or wall minus device seconds:
 * the host's own overhead per run (wall == 2). -1 on failure. */
static double time_graph(rlx_graph *g, int runs, int wall, rlx_precision prec, const rlx_tensor *in, int n_in,
                         char *tier, size_t tier_cap) {
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_VULKAN;
    o.precision = prec;
    rlx_exec *e;
    if (rlx_compile(g, &o, &e) != RLX_OK) { fprintf(stderr, "compile: %s\n", rlx_last_error()); return -1; }
    fill_params(e);
    double *t = malloc(sizeof(double) * (size_t)runs);
    double med = -1;
    for (int i = 0; i < 3; i++) if (rlx_exec_run(e, in, n_in) != RLX_OK) goto done;
    for (int i = 0; i < runs; i++) {
        double t0 = now_s();
        if (rlx_exec_run(e, in, n_in) != RLX_OK) { fprintf(stderr, "run: %s\n", rlx_last_error()); goto done; }
        double t1 = now_s();
        rlx_exec_stats s;
        rlx_exec_get_stats(e, &s);
        t[i] = wall == 0 ? s.device_seconds : wall == 1 ? t1 - t0 : (t1 - t0) - s.device_seconds;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_d);
    med = t[runs / 2];
    if (tier) {
        char *rep = rlx_exec_report(e);
        tier[0] = 0;
        if (rep) {   /* the note of the first gpu/HOST line */
            char *line = strstr(rep, " gpu ");
            if (!line) line = strstr(rep, " HOST ");
            if (line) {
                char *end = strchr(line, '\n');
                char *note = end;
                while (note > line && note[-1] != ' ') note--;
                snprintf(tier, tier_cap, "%.*s", (int)(end - note), note);
            }
            free(rep);
        }
    }
done:
    free(t);
    rlx_exec_free(e);
    return med;
}

static rlx_node first_row(rlx_graph *g, rlx_node x) { return rlx_narrow(g, x, 0, 0, 1); }

static void row(const char *name, const char *tier, double sec, double amount, const char *unit) {
    double rate = amount / sec;
    printf("| %-28s | %-14s | %10.3f | %10.1f %-7s |\n", name, tier, sec * 1e3, unit[0] == 'G' ? rate / 1e9 : rate / 1e12,
           unit);
    printf("RESULT %s %.6e s %.6e %s\n", name, sec, amount, unit);
}

int main(int argc, char **argv) {
    quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    int runs = quick ? 5 : 30;
    int n = rlx_vulkan_device_count();
    if (n == 0) { fprintf(stderr, "vk_bench: %s\n", rlx_last_error()); return 1; }
    printf("| %-28s | %-14s | %10s | %18s |\n", "benchmark", "kernel", "median ms", "rate");
    printf("|------------------------------|----------------|------------|--------------------|\n");
    int64_t big = quick ? (1 << 20) : (64 << 20);   /* 256 MiB of f32 */
    char tier[64];

    { /* copy: cast f32 -> f32 */
        rlx_graph *g = rlx_graph_new();
        int64_t d[2] = {big / 1024, 1024};
        rlx_node x = rlx_param(g, "x", RLX_F32, 2, d);
        rlx_output(g, "y", first_row(g, rlx_cast(g, x, RLX_F32)));
        double t = time_graph(g, runs, 0, RLX_PRECISION_F32, NULL, 0, tier, sizeof tier);
        if (t > 0) row("copy_256MiB", tier, t, 2.0 * big * 4, "GB/s");
        rlx_graph_free(g);
    }
    { /* add */
        rlx_graph *g = rlx_graph_new();
        int64_t d[2] = {big / 1024, 1024};
        rlx_node x = rlx_param(g, "x", RLX_F32, 2, d), y = rlx_param(g, "y", RLX_F32, 2, d);
        rlx_output(g, "z", first_row(g, rlx_add(g, x, y)));
        double t = time_graph(g, runs, 0, RLX_PRECISION_F32, NULL, 0, tier, sizeof tier);
        if (t > 0) row("add_256MiB", tier, t, 3.0 * big * 4, "GB/s");
        rlx_graph_free(g);
    }
    { /* layer_norm over rows of 1024 */
        rlx_graph *g = rlx_graph_new();
        int64_t d[2] = {big / 1024, 1024}, dd[1] = {1024};
        rlx_node x = rlx_param(g, "x", RLX_F32, 2, d);
        rlx_node y = rlx_layer_norm(g, x, rlx_param(g, "g", RLX_F32, 1, dd), rlx_param(g, "b", RLX_F32, 1, dd), 1e-5f);
        rlx_output(g, "z", first_row(g, y));
        double t = time_graph(g, runs, 0, RLX_PRECISION_F32, NULL, 0, tier, sizeof tier);
        if (t > 0) row("layer_norm_256MiB", tier, t, 2.0 * big * 4, "GB/s");
        rlx_graph_free(g);
    }
    { /* rms_norm over rows of 1024 */
        rlx_graph *g = rlx_graph_new();
        int64_t d[2] = {big / 1024, 1024}, dd[1] = {1024};
        rlx_node x = rlx_param(g, "x", RLX_F32, 2, d);
        rlx_node y = rlx_rms_norm(g, x, rlx_param(g, "g", RLX_F32, 1, dd), RLX_NO_NODE, 1e-5f);
        rlx_output(g, "z", first_row(g, y));
        double t = time_graph(g, runs, 0, RLX_PRECISION_F32, NULL, 0, tier, sizeof tier);
        if (t > 0) row("rms_norm_256MiB", tier, t, 2.0 * big * 4, "GB/s");
        rlx_graph_free(g);
    }
    int64_t m = quick ? 512 : 4096;
    for (int variant = 0; variant < 3; variant++) { /* matmul f32, f32 fast, f16 */
        rlx_graph *g = rlx_graph_new();
        int64_t d[2] = {m, m};
        rlx_dtype dt = variant == 2 ? RLX_F16 : RLX_F32;
        rlx_node a = rlx_param(g, "a", dt, 2, d), b = rlx_param(g, "b", dt, 2, d);
        rlx_output(g, "c", first_row(g, rlx_matmul(g, a, b, 0)));
        double t = time_graph(g, quick ? 3 : 10, 0, variant == 1 ? RLX_PRECISION_FAST : RLX_PRECISION_F32, NULL, 0,
                              tier, sizeof tier);
        const char *name = variant == 0 ? "matmul_4096_f32" : variant == 1 ? "matmul_4096_f32_fast" : "matmul_4096_f16";
        if (t > 0) row(name, tier, t, 2.0 * m * m * m, "TFLOP/s");
        rlx_graph_free(g);
    }
    for (int variant = 0; variant < 3; variant++) { /* attention [1,12,512,64]: f32, f16, f32 under the fast policy */
        rlx_graph *g = rlx_graph_new();
        int64_t d[4] = {1, 12, 512, 64};
        rlx_dtype dt = variant == 1 ? RLX_F16 : RLX_F32;
        rlx_node q = rlx_param(g, "q", dt, 4, d), k = rlx_param(g, "k", dt, 4, d), v = rlx_param(g, "v", dt, 4, d);
        rlx_output(g, "o", first_row(g, rlx_attention(g, q, k, v, RLX_MASK_NONE, RLX_NO_NODE, 0)));
        double t = time_graph(g, runs, 0, variant == 2 ? RLX_PRECISION_FAST : RLX_PRECISION_F32, NULL, 0, tier, sizeof tier);
        const char *name = variant == 0 ? "attention_1x12x512x64" : variant == 1 ? "attention_1x12x512x64_f16"
                                                                                 : "attention_1x12x512x64_fast";
        if (t > 0) row(name, tier, t, 4.0 * 12 * 512 * 512 * 64, "TFLOP/s");
        rlx_graph_free(g);
    }
    if (!quick) { /* weights over 4 GiB in total: five 1 GiB params summed on the GPU */
        rlx_graph *g = rlx_graph_new();
        int64_t d[2] = {1 << 18, 1024};
        rlx_node acc = RLX_NO_NODE;
        char name[8];
        for (int i = 0; i < 5; i++) {
            snprintf(name, sizeof name, "w%d", i);
            rlx_node w = rlx_param(g, name, RLX_F32, 2, d);
            acc = i ? rlx_add(g, acc, w) : w;
        }
        rlx_output(g, "first", rlx_narrow(g, acc, 0, 0, 1));
        rlx_output(g, "last", rlx_narrow(g, acc, 0, (1 << 18) - 1, 1));
        rlx_compile_options o;
        rlx_compile_options_init(&o);
        o.backend = RLX_BACKEND_VULKAN;
        rlx_exec *e;
        int ok = rlx_compile(g, &o, &e) == RLX_OK;
        size_t n = (size_t)1 << 28;
        float *buf = ok ? malloc(n * sizeof *buf) : NULL;
        for (int i = 0; ok && buf && i < 5; i++) {
            for (size_t j = 0; j < n; j++) buf[j] = (float)(i + 1) + (float)(j % 7);
            snprintf(name, sizeof name, "w%d", i);
            ok = rlx_exec_set_param_f32(e, name, buf, n) == RLX_OK;
        }
        float first[1024], last[1024];
        ok = ok && buf && rlx_exec_run(e, NULL, 0) == RLX_OK && rlx_exec_read_output(e, "first", first, sizeof first) == RLX_OK &&
             rlx_exec_read_output(e, "last", last, sizeof last) == RLX_OK;
        for (int j = 0; ok && j < 1024; j++) {
            size_t jl = n - 1024 + (size_t)j;
            ok = first[j] == 15.0f + 5.0f * (float)(j % 7) && last[j] == 15.0f + 5.0f * (float)(jl % 7);
        }
        printf("| %-28s | %-14s | %10s | %18s |\n", "weights_5GiB_sum", ok ? "correct" : "WRONG", "-", "-");
        printf("RESULT weights_5GiB_sum %d ok 0 -\n", ok);
        if (!ok) fprintf(stderr, "weights_5GiB_sum: %s\n", rlx_last_error());
        free(buf);
        if (e) rlx_exec_free(e);
        rlx_graph_free(g);
    }
    for (int steps = 100; steps >= 1; steps -= 99) { /* host overhead: tiny tensors, wall time per run */
        rlx_graph *g = rlx_graph_new();
        int64_t d[1] = {4};
        rlx_node x = rlx_input(g, "x", RLX_F32, 1, d), y = x;
        rlx_node one = rlx_param(g, "one", RLX_F32, 1, d);
        for (int i = 0; i < steps; i++) y = i % 2 ? rlx_add(g, y, one) : rlx_mul(g, y, one);
        rlx_output(g, "y", y);
        float xs[4] = {1, 2, 3, 4};
        rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 1, .dims = {4}, .data = xs, .bytes = sizeof xs};
        const char *names100[3] = {"run_100_tiny_steps_device", "run_100_tiny_steps_wall", "run_100_tiny_steps_host"};
        const char *names1[3] = {"run_1_tiny_step_device", "run_1_tiny_step_wall", "run_1_tiny_step_host"};
        const char **names = steps == 100 ? names100 : names1;
        for (int mode = 0; mode < 3; mode++) {
            double t = time_graph(g, quick ? 50 : 1000, mode, RLX_PRECISION_F32, &in, 1, tier, sizeof tier);
            if (t > 0) {
                printf("| %-28s | %-14s | %10.4f | %15.1f us |\n", names[mode], tier, t * 1e3, t * 1e6);
                printf("RESULT %s %.6e s 0 us\n", names[mode], t);
            }
        }
        rlx_graph_free(g);
    }
    return 0;
}
