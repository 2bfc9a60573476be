/*
 * embed.c — `rlx embed` and `rlx classify`: a Hugging Face encoder folder,
 * one text per line from a file or stdin, and per line either an embedding
 * (text: space-separated floats; --json: a JSON array; --npy FILE: one
 * float32 [n, hidden] array written to FILE) or the best label and its
 * softmax score. Texts go through in batches of --batch, sorted by length
 * within windows of 32 batches (the output keeps the input order); a progress
 * bar goes to stderr when it is a terminal, and the throughput when done.
 */
#include "embed.h"
#include "rlx.h"
#include "device_arg.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int usage(const char *cmd) {
    fprintf(stderr,
            "usage: rlx %s -m DIR [--device cpu|vulkan|auto|INDEX|NAME] [--batch N] [--max-len N]\n"
            "                 [--precision f32|fast] [--threads N] [-i FILE]%s\n"
            "  one text per line from FILE or stdin; empty lines are texts too\n",
            cmd, strcmp(cmd, "embed") == 0 ? "\n                 [--pool cls|mean|max] [--normalize] [--json | --npy FILE]" : "");
    return 2;
}

typedef struct lines { char **v; int n, cap; } lines;

static void lines_free(lines *l) {
    for (int i = 0; i < l->n; i++) free(l->v[i]);
    free(l->v);
}

/* Every line of f (without its newline); -1 when out of memory. */
static int read_lines(FILE *f, lines *l) {
    char *buf = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&buf, &cap, f)) >= 0) {
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = 0;
        if (l->n == l->cap) {
            int nc = l->cap ? 2 * l->cap : 64;
            char **nv = realloc(l->v, sizeof *nv * (size_t)nc);
            if (!nv) { free(buf); return -1; }
            l->v = nv, l->cap = nc;
        }
        if (!(l->v[l->n] = strdup(buf))) { free(buf); return -1; }
        l->n++;
    }
    free(buf);
    return 0;
}

static void progress(int done, int total, double t0) {
    if (!isatty(2) || total <= 0) return;
    int w = 30, f = (int)((double)w * done / total);
    double el = now_s() - t0;
    fprintf(stderr, "\r[%.*s%*s] %d/%d  %.0f texts/s", f, "##############################", w - f, "", done, total,
            el > 0 ? done / el : 0.0);
    if (done == total) fputc('\n', stderr);
}

typedef struct len_index { size_t len; int at; } len_index;

/* Longest first; equal lengths in input order (qsort is not stable). */
static int longest_first(const void *pa, const void *pb) {
    const len_index *a = pa, *b = pb;
    if (a->len != b->len) return a->len < b->len ? 1 : -1;
    return (a->at > b->at) - (a->at < b->at);
}

static int parse_int(const char *cmd, const char *flag, const char *v, int lo, int hi, int *out) {
    char *end;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || x < lo || x > hi) {
        fprintf(stderr, "rlx %s: %s needs an integer in [%d, %d]\n", cmd, flag, lo, hi);
        return -1;
    }
    *out = (int)x;
    return 0;
}


/* float32 [n, d] as a .npy file (format 1.0). */
static int write_npy(const char *path, const float *x, int n, int d) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    char hdr[128];
    int len = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", n, d);
    int total = 10 + len + 1, pad = (64 - total % 64) % 64;
    unsigned short hl = (unsigned short)(len + pad + 1);
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc(hl & 0xff, f), fputc(hl >> 8, f);
    fwrite(hdr, 1, (size_t)len, f);
    for (int i = 0; i < pad; i++) fputc(' ', f);
    fputc('\n', f);
    size_t cnt = (size_t)n * (size_t)d;
    bool ok = fwrite(x, sizeof(float), cnt, f) == cnt;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static int run(const char *cmd, int argc, char **argv) {
    bool classify = strcmp(cmd, "classify") == 0, json = false;
    const char *model = NULL, *device = NULL, *input = NULL, *npy = NULL, *pool = "mean", *prec = "f32";
    int batch = 32, max_len = 0, threads = 0, normalize = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = true;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) model = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "-i") || !strcmp(a, "--input")) input = v;
        else if (!strcmp(a, "--precision")) prec = v;
        else if (!strcmp(a, "--batch")) { if (parse_int(cmd, a, v, 1, 4096, &batch)) return 2; }
        else if (!strcmp(a, "--max-len")) { if (parse_int(cmd, a, v, 1, 1 << 20, &max_len)) return 2; }
        else if (!strcmp(a, "--threads")) { if (parse_int(cmd, a, v, 0, 1024, &threads)) return 2; }
        else if (!classify && !strcmp(a, "--pool")) pool = v;
        else if (!classify && !strcmp(a, "--npy")) npy = v;
        else if (!classify && !strcmp(a, "--normalize")) normalize = 1, takes = false;
        else if (!classify && !strcmp(a, "--json")) json = true, takes = false;
        else { fprintf(stderr, "rlx %s: unknown option '%s'\n", cmd, a); return usage(cmd); }
        if (takes && !v) { fprintf(stderr, "rlx %s: %s needs a value\n", cmd, a); return usage(cmd); }
        if (takes) i++;
    }
    if (!model) return usage(cmd);
    if (json && npy) { fprintf(stderr, "rlx embed: --json and --npy exclude each other\n"); return 2; }
    rlx_encoder_options o;
    rlx_encoder_options_init(&o);
    tool_set_device(&o.compile, device);
    o.compile.threads = threads;
    o.max_length = max_len;
    o.normalize = normalize;
    if (!strcmp(prec, "fast")) o.compile.precision = RLX_PRECISION_FAST;
    else if (strcmp(prec, "f32")) { fprintf(stderr, "rlx %s: --precision is f32 or fast, not '%s'\n", cmd, prec); return 2; }
    if (!strcmp(pool, "cls")) o.pooling = RLX_POOL_CLS;
    else if (!strcmp(pool, "mean")) o.pooling = RLX_POOL_MEAN;
    else if (!strcmp(pool, "max")) o.pooling = RLX_POOL_MAX;
    else { fprintf(stderr, "rlx embed: --pool is cls, mean or max, not '%s'\n", pool); return 2; }

    FILE *in = input ? fopen(input, "r") : stdin;
    if (!in) { fprintf(stderr, "rlx %s: cannot open '%s'\n", cmd, input); return 1; }
    lines l = {0};
    int rd = read_lines(in, &l);
    if (in != stdin) fclose(in);
    if (rd) { fprintf(stderr, "rlx %s: out of memory reading the input\n", cmd); lines_free(&l); return 1; }

    rlx_encoder *e = NULL;
    double t_load = now_s();
    if (rlx_encoder_load(model, &o, &e) != RLX_OK) {
        fprintf(stderr, "rlx %s: %s\n", cmd, rlx_last_error());
        lines_free(&l);
        return 1;
    }
    rlx_encoder_info info;
    rlx_encoder_get_info(e, &info);
    t_load = now_s() - t_load;
    if (classify && info.num_labels == 0) {
        fprintf(stderr, "rlx classify: %s has no classification head\n", model);
        rlx_encoder_free(e);
        lines_free(&l);
        return 1;
    }
    int width = classify ? info.num_labels : info.hidden;
    /* Texts go through in windows of EMBED_WINDOW batches, each window sorted
     * by length (longest first) so a batch pads to similar lengths, then
     * written in input order: bounded memory, output order kept. */
    enum { EMBED_WINDOW = 32 };
    int window = batch * EMBED_WINDOW < l.n ? batch * EMBED_WINDOW : (l.n ? l.n : 1);
    float *all = npy ? malloc(sizeof(float) * (size_t)(l.n ? l.n : 1) * (size_t)width) : NULL;
    float *win = malloc(sizeof(float) * (size_t)window * (size_t)width);
    float *rows = malloc(sizeof(float) * (size_t)batch * (size_t)width);
    len_index *order = malloc(sizeof *order * (size_t)window);
    const char **texts = malloc(sizeof *texts * (size_t)batch);
    int rc = 0;
    double t0 = now_s();
    if (!rows || !win || !order || !texts || (npy && !all)) { fprintf(stderr, "rlx %s: out of memory\n", cmd); rc = 1; }
    for (int w0 = 0; w0 < l.n && rc == 0; w0 += window) {
        int nw = l.n - w0 < window ? l.n - w0 : window;
        for (int i = 0; i < nw; i++) order[i].len = strlen(l.v[w0 + i]), order[i].at = i;
        qsort(order, (size_t)nw, sizeof *order, longest_first);
        for (int i = 0; i < nw && rc == 0; i += batch) {
            int nb = nw - i < batch ? nw - i : batch;
            for (int r = 0; r < nb; r++) texts[r] = l.v[w0 + order[i + r].at];
            rlx_status st = classify ? rlx_encoder_classify(e, texts, nb, rows, (size_t)batch * width)
                                     : rlx_encoder_embed(e, texts, nb, rows, (size_t)batch * width);
            if (st != RLX_OK) {
                fprintf(stderr, "\nrlx %s: lines %d-%d (sorted by length): %s\n", cmd, w0 + 1, w0 + nw, rlx_last_error());
                rc = 1;
                break;
            }
            for (int r = 0; r < nb; r++)
                memcpy(win + (size_t)order[i + r].at * width, rows + (size_t)r * width, sizeof(float) * (size_t)width);
            progress(w0 + i + nb, l.n, t0);
        }
        for (int r = 0; r < nw && rc == 0; r++) {
            const float *x = win + (size_t)r * width;
            if (npy) { memcpy(all + (size_t)(w0 + r) * width, x, sizeof(float) * (size_t)width); continue; }
            if (classify) {
                int best = 0;
                double mx = x[0], z = 0;
                for (int k = 1; k < width; k++) if (x[k] > mx) mx = x[k], best = k;
                for (int k = 0; k < width; k++) z += exp(x[k] - mx);
                printf("%s\t%.6f\n", rlx_encoder_label(e, best), 1.0 / z);
                continue;
            }
            if (json) putchar('[');
            for (int k = 0; k < width; k++) printf("%s%.7g", k ? (json ? ", " : " ") : "", (double)x[k]);
            puts(json ? "]" : "");
        }
    }
    double el = now_s() - t0;
    if (rc == 0 && npy && write_npy(npy, all, l.n, width)) { fprintf(stderr, "rlx embed: cannot write '%s'\n", npy); rc = 1; }
    if (rc == 0)
        fprintf(stderr, "rlx %s: %d texts in %.3f s (%.1f texts/s) on %s %s; load %.2f s\n", cmd, l.n, el,
                el > 0 ? l.n / el : 0.0, info.backend, info.device, t_load);
    free(rows);
    free(all);
    free(win);
    free(order);
    free(texts);
    rlx_encoder_free(e);
    lines_free(&l);
    return rc;
}

int cmd_embed(int argc, char **argv) { return run("embed", argc, argv); }
int cmd_classify(int argc, char **argv) { return run("classify", argc, argv); }
