/*
 * sampler.c — host time of picking one token (src/models/sampler.c) from a
 * vocabulary-sized row of logits, per sampler setting, against a full-sort
 * sampler (sort the row by logit, then cut: what a top-p that sorts the whole
 * vocabulary costs) measured in the same run. Prints one table: median µs
 * per token over rotating rows, so the logits come from memory, not cache,
 * as they do after a GPU step; and the copy of one row for scale.
 *
 *   build/bench_sampler [--vocab N] [--runs R]
 *
 * Two kinds of rows: "peaked" (normal, sigma 2.5, and 20 tokens 12 above:
 * an LLM's usual shape, where top-p keeps a few tokens) and "flat" (uniform
 * in [-10, 10]: top-p keeps a large part of the vocabulary).
 */
#include "models/sampler.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 48 };   /* 48 x 0.5 MB: more than the caches */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static double uniform01(void) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}
static double normal01(void) {
    double u = uniform01(), v = uniform01();
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

typedef struct fs_cand { float logit; int32_t id; } fs_cand;
static int fs_cmp(const void *a, const void *b) {
    const fs_cand *x = a, *y = b;
    if (x->logit != y->logit) return x->logit > y->logit ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* The comparison point: sort every candidate, then top-k, top-p, min-p and
 * the draw over the sorted prefix (greedy: the first after the sort). */
static int32_t full_sort_sample(const sampler_params *p, const float *l, int32_t n, fs_cand *c, double *prob) {
    for (int32_t i = 0; i < n; i++) c[i] = (fs_cand){l[i], i};
    qsort(c, (size_t)n, sizeof *c, fs_cmp);
    if (!(p->temperature > 0)) return c[0].id;
    int32_t m = p->top_k > 0 && p->top_k < n ? p->top_k : n;
    double mx = c[0].logit, sum = 0;
    for (int32_t i = 0; i < m; i++) sum += prob[i] = exp((double)c[i].logit - mx);
    if (p->top_p < 1.0f) {
        double cum = 0;
        for (int32_t i = 0; i < m; i++)
            if ((cum += prob[i] / sum) >= p->top_p) { m = i + 1; break; }
    }
    double floor_logit = p->min_p > 0 ? mx + log((double)p->min_p) : -INFINITY, tot = 0;
    int32_t keep = 0;
    while (keep < m && c[keep].logit >= floor_logit) keep++;
    for (int32_t i = 0; i < keep; i++) tot += prob[i] = exp(((double)c[i].logit - mx) / p->temperature);
    double u = uniform01() * tot, acc = 0;
    for (int32_t i = 0; i < keep; i++)
        if (u < (acc += prob[i])) return c[i].id;
    return c[keep - 1].id;
}

typedef struct setting { const char *name; float temp; int32_t top_k; float top_p, min_p, repeat_penalty; } setting;

int main(int argc, char **argv) {
    int32_t nv = 128256;
    int runs = 101;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--vocab")) nv = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
        else { fprintf(stderr, "usage: %s [--vocab N] [--runs R]\n", argv[0]); return 2; }
    }
    if (nv < 64 || runs < 1) { fprintf(stderr, "bench_sampler: --vocab >= 64, --runs >= 1\n"); return 2; }
    float *rows[2][ROWS];
    for (int kind = 0; kind < 2; kind++)
        for (int r = 0; r < ROWS; r++) {
            float *l = rows[kind][r] = malloc(sizeof(float) * (size_t)nv);
            if (!l) { fprintf(stderr, "out of memory\n"); return 1; }
            for (int32_t i = 0; i < nv; i++) l[i] = kind ? (float)(20 * uniform01() - 10) : (float)(2.5 * normal01());
            if (!kind)
                for (int h = 0; h < 20; h++) l[(int32_t)(uniform01() * nv)] += 12.0f;
        }
    fs_cand *fc = malloc(sizeof *fc * (size_t)nv);
    double *fprob = malloc(sizeof(double) * (size_t)nv), *t = malloc(sizeof(double) * (size_t)runs);
    float *copy = malloc(sizeof(float) * (size_t)nv);
    if (!fc || !fprob || !t || !copy) { fprintf(stderr, "out of memory\n"); return 1; }

    static const setting settings[] = {
        {"greedy", 0.0f, 0, 1.0f, 0.0f, 1.0f},
        {"default: T 0.8, top-k 40, top-p 0.95, min-p 0.05", 0.8f, 40, 0.95f, 0.05f, 1.0f},
        {"default + repeat penalty 1.1 (64 tokens of history; the full sort applies none)", 0.8f, 40, 0.95f, 0.05f, 1.1f},
        {"T 0.8, top-p 0.95 (top-k off)", 0.8f, 0, 0.95f, 0.0f, 1.0f},
        {"T 0.8 only", 0.8f, 0, 1.0f, 0.0f, 1.0f},
    };
    for (int r = 0; r < runs; r++) {
        double t0 = rlx_now_seconds();
        memcpy(copy, rows[0][r % ROWS], sizeof(float) * (size_t)nv);
        t[r] = rlx_now_seconds() - t0;
    }
    qsort(t, (size_t)runs, sizeof *t, cmp_double);
    printf("# bench_sampler: vocabulary %d, median of %d tokens; copying one row of logits: %.1f us\n", nv, runs,
           t[runs / 2] * 1e6);
    printf("| setting | logits | rlx us | full-sort us | ratio |\n|---|---|---:|---:|---:|\n");
    for (size_t si = 0; si < sizeof settings / sizeof settings[0]; si++) {
        const setting *st = &settings[si];
        sampler_params p;
        rlx_sampler_params_init(&p);
        p.temperature = st->temp;
        p.top_k = st->top_k;
        p.top_p = st->top_p;
        p.min_p = st->min_p;
        p.repeat_penalty = st->repeat_penalty;
        for (int kind = 0; kind < 2; kind++) {
            sampler *s;
            if (rlx_sampler_new(&p, &s) != RLX_OK) { fprintf(stderr, "%s\n", rlx_last_error()); return 1; }
            for (int h = 0; h < p.repeat_last_n; h++) rlx_sampler_accept(s, (int32_t)(uniform01() * nv));
            double med[2];
            for (int impl = 0; impl < 2; impl++) {
                for (int r = 0; r < runs; r++) {
                    const float *l = rows[kind][r % ROWS];
                    int32_t tok = -1;
                    double t0 = rlx_now_seconds();
                    if (impl == 0) {
                        if (rlx_sampler_sample(s, l, nv, &tok) != RLX_OK) { fprintf(stderr, "%s\n", rlx_last_error()); return 1; }
                    } else {
                        tok = full_sort_sample(&p, l, nv, fc, fprob);
                    }
                    t[r] = rlx_now_seconds() - t0;
                    if (tok < 0 || tok >= nv) { fprintf(stderr, "bad token %d\n", tok); return 1; }
                }
                qsort(t, (size_t)runs, sizeof *t, cmp_double);
                med[impl] = t[runs / 2] * 1e6;
            }
            printf("| %s | %s | %.1f | %.1f | %.1fx |\n", st->name, kind ? "flat" : "peaked", med[0], med[1], med[1] / med[0]);
            rlx_sampler_free(s);
        }
    }
    for (int kind = 0; kind < 2; kind++)
        for (int r = 0; r < ROWS; r++) free(rows[kind][r]);
    free(fc);
    free(fprob);
    free(t);
    free(copy);
    return 0;
}
