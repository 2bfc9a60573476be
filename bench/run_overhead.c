/*
 * run_overhead.c — per-call time of rlx_exec_run on a tiny graph (y = a + b,
 * two f32 [16] inputs, one output read back), from C: the baseline that
 * bench/python_overhead.py sets the Python binding against. Prints the
 * median over 7 batches of microseconds per run + read.
 *
 *     build/run_overhead [calls per batch]
 */
#include "rlx.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int calls = argc > 1 ? atoi(argv[1]) : 200000;
    int64_t dims[1] = {16};
    rlx_graph *g = rlx_graph_new();
    rlx_node a = rlx_input(g, "a", RLX_F32, 1, dims), b = rlx_input(g, "b", RLX_F32, 1, dims);
    rlx_output(g, "y", rlx_add(g, a, b));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.threads = 1;
    rlx_exec *e = NULL;
    if (rlx_compile(g, &o, &e) != RLX_OK) {
        fprintf(stderr, "run_overhead: %s\n", rlx_last_error());
        return 1;
    }
    float x[16], y[16], out[16];
    for (int i = 0; i < 16; i++) x[i] = (float)i, y[i] = 1.0f;
    rlx_tensor in[2] = {{.name = "a", .dtype = RLX_F32, .rank = 1, .dims = {16}, .data = x, .bytes = sizeof x},
                        {.name = "b", .dtype = RLX_F32, .rank = 1, .dims = {16}, .data = y, .bytes = sizeof y}};
    double us[7];
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        for (int i = 0; i < calls; i++) {
            if (rlx_exec_run(e, in, 2) != RLX_OK || rlx_exec_read_output(e, "y", out, sizeof out) != RLX_OK) {
                fprintf(stderr, "run_overhead: %s\n", rlx_last_error());
                return 1;
            }
        }
        us[r] = (now() - t0) / calls * 1e6;
    }
    qsort(us, 7, sizeof us[0], cmp);
    printf("%.4f\n", us[3]);
    rlx_exec_free(e);
    rlx_graph_free(g);
    return out[3] == 4.0f ? 0 : 1;
}
