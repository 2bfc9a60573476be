/*
 * train_bench.c — the time of one GPT train step (forward, backward, AdamW
 * in place) through the graph `rlx train` compiles (src/models/gpt.h), on
 * random tokens: median wall ms of --steps steps after --warmup, tokens/s,
 * and the exec's memory (planned arena + params and optimizer state).
 *
 *   build/train_bench [--layers 12 --d-model 768 --heads 12 --seq 1024 --batch 8]
 *                     [--steps 10 --warmup 3] [--device D] [--precision f32|fast] [--threads N]
 *                     [--report 1]   (the per-step report; with RLX_PROFILE=1, each step's time)
 *
 * Prints: RESULT train layers L d_model D heads H seq S batch B step_ms X tok_s Y
 *         arena_mb A param_mb P loss L
 */
#include "models/gpt.h"
#include "rlx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    gpt_config c = {.vocab = 256, .layers = 12, .d_model = 768, .heads = 12, .max_seq = 1024};
    int B = 8, steps = 10, warmup = 3, threads = 0, report = 0;
    const char *device = NULL, *prec = "f32";
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        if (!strcmp(a, "--layers")) c.layers = atoi(v);
        else if (!strcmp(a, "--d-model")) c.d_model = atoi(v);
        else if (!strcmp(a, "--heads")) c.heads = atoi(v);
        else if (!strcmp(a, "--seq")) c.max_seq = atoi(v);
        else if (!strcmp(a, "--batch")) B = atoi(v);
        else if (!strcmp(a, "--steps")) steps = atoi(v);
        else if (!strcmp(a, "--warmup")) warmup = atoi(v);
        else if (!strcmp(a, "--threads")) threads = atoi(v);
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--precision")) prec = v;
        else if (!strcmp(a, "--report")) report = atoi(v);
        else { fprintf(stderr, "train_bench: unknown option %s\n", a); return 2; }
    }
    if (steps < 1) steps = 1;
    int S = c.max_seq;
    rlx_optimizer_options opt;
    rlx_optimizer_options_init(&opt, RLX_OPT_ADAMW);
    opt.clip_norm = 1.0;
    if (!strcmp(prec, "fast")) opt.loss_scale = 65536;   /* mixed precision as rlx train runs it */
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.threads = threads;
    o.precision = !strcmp(prec, "fast") ? RLX_PRECISION_FAST : RLX_PRECISION_F32;
    if (device && !strcmp(device, "cpu")) o.backend = RLX_BACKEND_CPU;
    else if (device) {
        o.backend = RLX_BACKEND_VULKAN;
        if (strcmp(device, "vulkan")) o.device_name = device;
    }
    rlx_graph *g;
    rlx_exec *e;
    if (gpt_build(&c, GPT_TRAIN, B, S, &opt, &g) != RLX_OK || rlx_compile(g, &o, &e) != RLX_OK ||
        gpt_init_params(&c, e, 1) != RLX_OK) {
        fprintf(stderr, "train_bench: %s\n", rlx_last_error());
        return 1;
    }
    rlx_graph_free(g);
    int32_t *tok = malloc(4 * (size_t)B * S), *tgt = malloc(4 * (size_t)B * S), *pos = malloc(4 * (size_t)S);
    double *t = malloc(sizeof(double) * (size_t)steps);
    if (!tok || !tgt || !pos || !t) return 1;
    uint64_t r = 1;
    for (int i = 0; i < B * S; i++) {
        r = r * 6364136223846793005ull + 1;
        tok[i] = (int32_t)((r >> 33) % 256), tgt[i] = (int32_t)((r >> 41) % 256);
    }
    for (int i = 0; i < S; i++) pos[i] = i;
    float lr = 3e-4f, loss = 0;
    rlx_tensor in[4] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = tok, .bytes = 4 * (size_t)B * S},
        {.name = "positions", .dtype = RLX_I32, .rank = 1, .dims = {S}, .data = pos, .bytes = 4 * (size_t)S},
        {.name = "targets", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = tgt, .bytes = 4 * (size_t)B * S},
        {.name = "lr", .dtype = RLX_F32, .rank = 1, .dims = {1}, .data = &lr, .bytes = 4},
    };
    for (int i = -warmup; i < steps; i++) {
        double t0 = now_ms();
        if (rlx_exec_run(e, in, 4) != RLX_OK || rlx_exec_read_output(e, "loss", &loss, sizeof loss) != RLX_OK) {
            fprintf(stderr, "train_bench: %s\n", rlx_last_error());
            return 1;
        }
        if (i >= 0) t[i] = now_ms() - t0;
    }
    qsort(t, (size_t)steps, sizeof *t, cmp_d);
    double ms = t[steps / 2];
    rlx_exec_stats st;
    memset(&st, 0, sizeof st);
    rlx_exec_get_stats(e, &st);
    printf("RESULT train layers %d d_model %d heads %d seq %d batch %d precision %s step_ms %.2f tok_s %.0f "
           "arena_mb %.1f param_mb %.1f loss %.4f\n", c.layers, c.d_model, c.heads, S, B, prec, ms,
           (double)B * S / (ms / 1e3), st.arena_bytes / 1048576.0, st.param_bytes / 1048576.0, (double)loss);
    if (report) {   /* per-step times need RLX_PROFILE=1 */
        char *r = rlx_exec_report(e);
        if (r) fputs(r, stdout);
        free(r);
    }
    free(tok), free(tgt), free(pos), free(t);
    rlx_exec_free(e);
    return 0;
}
