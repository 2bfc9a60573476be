/*
 * train.c — `rlx train`: a GPT-style decoder (src/models/gpt.h) trained from
 * scratch on a text file, byte by byte. One compiled exec is one train step
 * (forward, backward, AdamW, all in place on the device); only the loss and
 * the gradient norm come back per step.
 *
 * Batches are windows of seq + 1 bytes at offsets drawn from a generator
 * seeded by (seed, step), so a step's batch depends on nothing else: a
 * resumed run and the NaN replay see the same data. The learning rate warms
 * up linearly, then follows a cosine down to a tenth. The output folder gets
 * config.json, checkpoint.safetensors (params and optimizer state; written
 * atomically every --save-every steps and at the end), loss.csv and loss.svg.
 *
 * A NaN or infinite loss stops training: the step is replayed from the last
 * checkpoint on an exec with check_numerics on, which names the first node
 * that produced a non-finite value; the checkpoint is left as it was.
 */
#include "train.h"
#include "models/gpt.h"
#include "svg_plot.h"
#include "device_arg.h"
#include "rlx.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct train_opts {
    const char *data, *out, *device;
    gpt_config model;
    int batch, steps, warmup, save_every, log_every, threads, accumulate;
    int fast;   /* --precision fast: f16 matmul operands on the GPU, dynamic loss scaling */
    double lr, weight_decay, clip;
    uint64_t seed;
    int resume;
} train_opts;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(void) {
    fprintf(stderr,
            "usage: rlx train --data FILE --out DIR [--layers N] [--d-model N] [--heads N] [--seq N]\n"
            "                 [--batch N] [--steps N] [--lr X] [--warmup N] [--weight-decay X] [--clip X]\n"
            "                 [--rope] [--seed N] [--save-every N] [--log-every N] [--device D] [--threads N]\n"
            "                 [--accumulate K] [--precision f32|fast] [--resume]\n"
            "  trains a byte-level GPT on FILE; DIR gets config.json, checkpoint.safetensors, loss.csv\n"
            "  and loss.svg. --resume continues from DIR's checkpoint (its config wins).\n"
            "  --accumulate K: each step averages the gradients of K micro-batches of --batch rows.\n"
            "  --precision fast: GPU matmuls on f16 operands (f32 master weights), with dynamic loss scaling.\n"
            "  defaults: --layers 2 --d-model 128 --heads 4 --seq 64 --batch 16 --steps 300 --lr 3e-3\n");
    return 2;
}

static int parse_num(const char *flag, const char *v, double lo, double hi, bool integer, double *out) {
    char *end = NULL;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || !(x >= lo && x <= hi) || (integer && x != floor(x))) {
        fprintf(stderr, "rlx train: %s needs %s in [%g, %g]\n", flag, integer ? "an integer" : "a number", lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse(int argc, char **argv, train_opts *o) {
    memset(o, 0, sizeof *o);
    o->model = (gpt_config){.vocab = 256, .layers = 2, .d_model = 128, .heads = 4, .max_seq = 64};
    o->batch = 16, o->steps = 300, o->lr = 3e-3, o->warmup = -1, o->weight_decay = 0.01, o->clip = 1.0;
    o->seed = 1, o->save_every = 0, o->log_every = 0, o->accumulate = 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double x;
        int *ip = NULL;
        double lo = 1, hi = 1 << 20;
        if (!strcmp(a, "--data")) { if (!v) return usage(); o->data = v; i++; continue; }
        if (!strcmp(a, "--out")) { if (!v) return usage(); o->out = v; i++; continue; }
        if (!strcmp(a, "--device")) { if (!v) return usage(); o->device = v; i++; continue; }
        if (!strcmp(a, "--rope")) { o->model.rope = true; continue; }
        if (!strcmp(a, "--resume")) { o->resume = 1; continue; }
        if (!strcmp(a, "--precision")) {
            if (!v || (strcmp(v, "f32") && strcmp(v, "fast"))) {
                fprintf(stderr, "rlx train: --precision needs f32 or fast\n");
                return 2;
            }
            o->fast = !strcmp(v, "fast"), i++;
            continue;
        }
        if (!strcmp(a, "--lr") || !strcmp(a, "--weight-decay") || !strcmp(a, "--clip")) {
            if (parse_num(a, v, 0, 10, false, &x)) return 2;
            *(!strcmp(a, "--lr") ? &o->lr : !strcmp(a, "--clip") ? &o->clip : &o->weight_decay) = x;
            i++;
            continue;
        }
        if (!strcmp(a, "--seed")) {
            if (parse_num(a, v, 0, 9007199254740992.0, true, &x)) return 2;
            o->seed = (uint64_t)x, i++;
            continue;
        }
        if (!strcmp(a, "--layers")) ip = &o->model.layers, hi = 256;
        else if (!strcmp(a, "--d-model")) ip = &o->model.d_model, lo = 2, hi = 65536;
        else if (!strcmp(a, "--heads")) ip = &o->model.heads, hi = 1024;
        else if (!strcmp(a, "--seq")) ip = &o->model.max_seq, hi = 65536;
        else if (!strcmp(a, "--batch")) ip = &o->batch, hi = 65536;
        else if (!strcmp(a, "--steps")) ip = &o->steps, hi = 1e9;
        else if (!strcmp(a, "--warmup")) ip = &o->warmup, lo = 0, hi = 1e9;
        else if (!strcmp(a, "--save-every")) ip = &o->save_every, lo = 0, hi = 1e9;
        else if (!strcmp(a, "--log-every")) ip = &o->log_every, lo = 0, hi = 1e9;
        else if (!strcmp(a, "--threads")) ip = &o->threads, lo = 0, hi = 1024;
        else if (!strcmp(a, "--accumulate")) ip = &o->accumulate, hi = 4096;
        else { fprintf(stderr, "rlx train: unknown option '%s'\n", a); return usage(); }
        if (parse_num(a, v, lo, hi, true, &x)) return 2;
        *ip = (int)x, i++;
    }
    if (!o->data || !o->out) return usage();
    if (o->warmup < 0) o->warmup = o->steps / 10 < 100 ? o->steps / 10 : 100;
    if (o->log_every == 0) o->log_every = o->steps / 20 > 0 ? o->steps / 20 : 1;
    return 0;
}


static float lr_at(const train_opts *o, int step) {
    if (step < o->warmup) return (float)(o->lr * (step + 1) / (o->warmup + 1));
    double t = o->steps > o->warmup ? (double)(step - o->warmup) / (o->steps - o->warmup) : 1;
    return (float)(o->lr * (0.1 + 0.9 * 0.5 * (1 + cos(M_PI * (t > 1 ? 1 : t)))));
}

typedef struct batch_buf { int32_t *tok, *tgt, *pos; } batch_buf;

/* The batch of micro-batch `step` (step * accumulate + j for micro-batch j
 * of a step): windows of seq + 1 bytes at offsets from (seed, step). */
static void make_batch(const train_opts *o, const unsigned char *text, size_t n, long step, batch_buf *b) {
    int S = o->model.max_seq;
    uint64_t s = o->seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)step * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull);
    for (int i = 0; i < o->batch; i++) {
        s ^= s >> 31, s *= 0x7fb5d329728ea185ull, s ^= s >> 27, s *= 0x81dadef4bc2dd44dull, s ^= s >> 33;
        size_t at = (size_t)(s % (uint64_t)(n - (size_t)S));
        for (int j = 0; j < S; j++) b->tok[i * S + j] = text[at + j], b->tgt[i * S + j] = text[at + j + 1];
    }
    for (int j = 0; j < S; j++) b->pos[j] = j;
}

static rlx_status run_batch(rlx_exec *e, const train_opts *o, const batch_buf *b, float lr, float *loss, float *norm) {
    int B = o->batch, S = o->model.max_seq;
    rlx_tensor in[4] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = b->tok, .bytes = 4 * (size_t)B * S},
        {.name = "positions", .dtype = RLX_I32, .rank = 1, .dims = {S}, .data = b->pos, .bytes = 4 * (size_t)S},
        {.name = "targets", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = b->tgt, .bytes = 4 * (size_t)B * S},
        {.name = "lr", .dtype = RLX_F32, .rank = 1, .dims = {1}, .data = &lr, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, 4);
    if (st == RLX_OK) st = rlx_exec_read_output(e, "loss", loss, sizeof *loss);
    if (st == RLX_OK) st = rlx_exec_read_output(e, "grad_norm", norm, sizeof *norm);
    return st;
}

/* One optimizer step: accumulate micro-batches; *loss is their mean, *norm
 * the applied gradient's norm. With report_nan, each run's numerics are
 * checked and the step stops at the first non-finite value (*found). */
static rlx_status run_step(rlx_exec *e, const train_opts *o, const unsigned char *text, size_t n, int step, batch_buf *b,
                           float *loss, float *norm, bool report_nan, bool *found) {
    double sum = 0;
    float lr = lr_at(o, step);
    for (int j = 0; j < o->accumulate; j++) {
        float l;
        make_batch(o, text, n, (long)step * o->accumulate + j, b);
        rlx_status st = run_batch(e, o, b, lr, &l, norm);
        if (st != RLX_OK) return st;
        sum += l;
        rlx_numerics_report r;
        if (report_nan && rlx_exec_numerics(e, &r) == RLX_OK && r.found) {
            fprintf(stderr, "rlx train: step %d: %s\n", step + 1, r.message);
            *found = true;
            break;
        }
    }
    *loss = (float)(sum / o->accumulate);
    return RLX_OK;
}

static int save(rlx_exec *e, const train_opts *o, int step, const double *xs, const double *ys, int n_log) {
    char path[4096], stepv[32];
    snprintf(path, sizeof path, "%s/checkpoint.safetensors", o->out);
    snprintf(stepv, sizeof stepv, "%d", step);
    const char *meta[2] = {"step", stepv};
    if (rlx_exec_save_params(e, path, 1, meta) != RLX_OK) {
        fprintf(stderr, "\nrlx train: saving %s: %s\n", path, rlx_last_error());
        return -1;
    }
    snprintf(path, sizeof path, "%s/loss.svg", o->out);
    if (n_log > 0 && svg_line_chart(path, "training loss (nats per byte)", "step", "loss", xs, ys, n_log) != 0)
        fprintf(stderr, "\nrlx train: cannot write %s\n", path);
    return 0;
}

/* Replays steps [from, to] from the checkpoint on an exec that checks every
 * result, and prints the first node that made a NaN or an Inf. */
static void find_nan(const rlx_graph *g, const rlx_compile_options *copts, const train_opts *o, const unsigned char *text,
                     size_t n, int from, int to, batch_buf *b) {
    rlx_compile_options c = *copts;
    c.check_numerics = 1;
    rlx_exec *e;
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.safetensors", o->out);
    if (rlx_compile(g, &c, &e) != RLX_OK || rlx_exec_load_params(e, path, 0) != RLX_OK) {
        fprintf(stderr, "rlx train: cannot replay to find the node: %s\n", rlx_last_error());
        return;
    }
    bool found = false;
    for (int s = from; s <= to && !found; s++) {
        float loss, norm;
        if (run_step(e, o, text, n, s, b, &loss, &norm, true, &found) != RLX_OK) break;
    }
    if (found) {
        rlx_exec_free(e);
        return;
    }
    fprintf(stderr, "rlx train: the replay from the checkpoint did not reproduce the non-finite value\n");
    rlx_exec_free(e);
}

static unsigned char *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            unsigned char *nb = realloc(buf, cap = cap ? 2 * cap : 1 << 16);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        size_t r = fread(buf + *n, 1, cap - *n, f);
        if (r == 0) break;
        *n += r;
    }
    fclose(f);
    return buf;
}

int cmd_train(int argc, char **argv) {
    train_opts o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc;
    if (o.resume && gpt_load_config(o.out, &o.model) != RLX_OK) {
        fprintf(stderr, "rlx train: --resume: %s\n", rlx_last_error());
        return 1;
    }
    if (gpt_config_check(&o.model) != RLX_OK) { fprintf(stderr, "rlx train: %s\n", rlx_last_error()); return 2; }
    size_t n;
    unsigned char *text = read_file(o.data, &n);
    if (!text) { fprintf(stderr, "rlx train: cannot read '%s'\n", o.data); return 1; }
    if (n < (size_t)o.model.max_seq + 2) {
        fprintf(stderr, "rlx train: '%s' has %zu bytes; a window needs seq + 1 = %d\n", o.data, n, o.model.max_seq + 1);
        free(text);
        return 1;
    }
    if (mkdir(o.out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "rlx train: cannot create '%s': %s\n", o.out, strerror(errno));
        free(text);
        return 1;
    }
    rlx_optimizer_options opt;
    rlx_optimizer_options_init(&opt, RLX_OPT_ADAMW);
    opt.weight_decay = o.weight_decay;
    opt.clip_norm = o.clip;
    opt.accumulate = o.accumulate;
    if (o.fast) opt.loss_scale = 65536;
    rlx_graph *g;
    rlx_compile_options copts;
    rlx_compile_options_init(&copts);
    tool_set_device(&copts, o.device);
    copts.threads = o.threads;
    copts.precision = o.fast ? RLX_PRECISION_FAST : RLX_PRECISION_F32;
    rlx_exec *e = NULL;
    double t_compile = now_s();
    if (gpt_build(&o.model, GPT_TRAIN, o.batch, o.model.max_seq, &opt, &g) != RLX_OK ||
        rlx_compile(g, &copts, &e) != RLX_OK) {
        fprintf(stderr, "rlx train: %s\n", rlx_last_error());
        free(text);
        return 1;
    }
    int start = 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.safetensors", o.out);
    rlx_status st = o.resume ? rlx_exec_load_params(e, path, 0) : gpt_init_params(&o.model, e, o.seed);
    if (st == RLX_OK && o.resume) {
        float step;
        st = rlx_exec_read_param(e, "optimizer.step", RLX_F32, &step, sizeof step);
        start = (int)step;
    }
    char extra[512];
    snprintf(extra, sizeof extra, "\"train\": {\"data\": \"%s\", \"batch\": %d, \"steps\": %d, \"lr\": %g, \"warmup\": %d, "
             "\"weight_decay\": %g, \"clip\": %g, \"seed\": %llu, \"accumulate\": %d, \"precision\": \"%s\"}", o.data,
             o.batch, o.steps, o.lr, o.warmup, o.weight_decay, o.clip, (unsigned long long)o.seed, o.accumulate,
             o.fast ? "fast" : "f32");
    for (char *p = strchr(extra, '\\'); p; p = strchr(p + 1, '\\')) *p = '/';   /* a path with backslashes stays valid JSON */
    if (st == RLX_OK) st = gpt_save_config(o.out, &o.model, extra);
    int S = o.model.max_seq, B = o.batch;
    batch_buf b = {malloc(4 * (size_t)B * S), malloc(4 * (size_t)B * S), malloc(4 * (size_t)S)};
    int cap = o.steps > 0 ? o.steps : 1;
    double *xs = malloc(sizeof *xs * (size_t)cap), *ys = malloc(sizeof *ys * (size_t)cap);
    bool no_memory = !b.tok || !b.tgt || !b.pos || !xs || !ys;
    if (st == RLX_OK && no_memory) { fprintf(stderr, "rlx train: out of memory\n"); rc = 1; }
    if (st != RLX_OK) {
        fprintf(stderr, "rlx train: %s\n", rlx_last_error());
        rc = 1;
    }
    rlx_exec_stats stats;
    memset(&stats, 0, sizeof stats);
    if (rc == 0 && !o.resume) rc = save(e, &o, 0, xs, ys, 0);   /* a checkpoint to fall back to */
    int last_save = start, n_log = 0;
    FILE *csv = NULL;
    if (rc == 0) {
        snprintf(path, sizeof path, "%s/loss.csv", o.out);
        csv = fopen(path, o.resume ? "a" : "w");
        if (csv && !o.resume) fprintf(csv, "step,loss,lr,grad_norm\n");
    }
    bool tty = isatty(2);
    double t0 = now_s(), t_log = t0, first_loss = NAN;
    t_compile = 0;
    long tokens_since = 0;
    for (int step = start; step < o.steps && rc == 0; step++) {
        float loss, norm, lr = lr_at(&o, step);
        if ((st = run_step(e, &o, text, n, step, &b, &loss, &norm, false, NULL)) != RLX_OK) {
            fprintf(stderr, "\nrlx train: step %d: %s\n", step + 1, rlx_last_error());
            rc = 1;
            break;
        }
        if (step == start && t_compile == 0) t_compile = now_s() - t0;   /* the first run compiles */
        if (!isfinite(loss)) {
            fprintf(stderr, "\nrlx train: step %d: the loss is %g; stopping (the checkpoint of step %d is kept)\n", step + 1,
                    (double)loss, last_save);
            find_nan(g, &copts, &o, text, n, last_save, step, &b);
            rc = 1;
            break;
        }
        if (isnan(first_loss)) first_loss = loss;
        xs[n_log] = step + 1, ys[n_log++] = loss;
        if (csv) fprintf(csv, "%d,%.6f,%.6g,%.6g\n", step + 1, (double)loss, (double)lr, (double)norm);
        tokens_since += (long)B * S * o.accumulate;
        bool log_now = (step + 1) % o.log_every == 0 || step + 1 == o.steps;
        if (tty) {
            int w = 30, f = (int)((double)w * (step + 1) / o.steps);
            fprintf(stderr, "\r[%.*s%*s] step %d/%d  loss %.4f", f, "##############################", w - f, "", step + 1,
                    o.steps, (double)loss);
        }
        if (log_now) {
            double t = now_s();
            char scale[48] = "";
            float e2;
            if (o.fast && rlx_exec_read_param(e, "optimizer.loss_scale_log2", RLX_F32, &e2, sizeof e2) == RLX_OK)
                snprintf(scale, sizeof scale, "  loss scale %g", ldexp(opt.loss_scale, (int)e2));
            fprintf(tty ? stderr : stdout, "%sstep %6d  loss %.4f  lr %.2e  grad norm %.3f%s  %.0f tok/s\n", tty ? "\r" : "",
                    step + 1, (double)loss, (double)lr, (double)norm, scale, tokens_since / (t - t_log));
            t_log = t, tokens_since = 0;
        }
        if (o.save_every > 0 && (step + 1) % o.save_every == 0 && step + 1 < o.steps) {
            if (save(e, &o, step + 1, xs, ys, n_log)) rc = 1;
            last_save = step + 1;
        }
    }
    double el = now_s() - t0;
    if (rc == 0) rc = save(e, &o, o.steps, xs, ys, n_log);
    if (rc == 0 && rlx_exec_get_stats(e, &stats) == RLX_OK) {
        int done = o.steps - start;
        printf("trained %d steps in %.1f s (%.0f tok/s, first step with compile %.2f s); loss %.4f -> %.4f; %s\n", done, el,
               done > 0 ? (double)done * B * S * o.accumulate / el : 0.0, t_compile, (double)first_loss,
               n_log ? ys[n_log - 1] : (double)NAN, o.out);
    }
    if (csv) fclose(csv);
    free(b.tok), free(b.tgt), free(b.pos), free(xs), free(ys), free(text);
    rlx_exec_free(e);
    rlx_graph_free(g);
    return rc;
}
