/*
 * gpt_sample.c — `rlx generate -m DIR` for a folder `rlx train` wrote:
 * loads its config.json and checkpoint, then samples bytes one at a time
 * from the last max_seq bytes of the text so far (temperature, top-k) and
 * streams them to stdout.
 *
 * The sampling graph has a symbolic length; a window is padded on the right
 * to a multiple of 16 (causal attention: the padding cannot change the real
 * positions' logits), so generation compiles at most max_seq / 16 shapes.
 */
#include "train.h"
#include "models/gpt.h"
#include "rlx.h"
#include "device_arg.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int usage(void) {
    fprintf(stderr, "usage: rlx generate -m DIR [-p PROMPT] [-n N] [--temp T] [--top-k K] [--seed S] [--device D]\n"
                    "                    [--threads N]\n"
                    "  DIR: a folder written by `rlx train` (config.json + checkpoint.safetensors)\n");
    return 2;
}

static double uniform(uint64_t *s) {
    *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* A byte from logits[256]: temperature 0 is greedy; top_k 0 keeps all. */
static int sample(const float *logits, int V, double temp, int top_k, uint64_t *rng) {
    int best = 0;
    for (int i = 1; i < V; i++) if (logits[i] > logits[best]) best = i;
    if (temp <= 0) return best;
    double p[1024], kth = -INFINITY;
    if (top_k > 0 && top_k < V) {   /* the k-th largest logit */
        float tmp[1024];
        memcpy(tmp, logits, sizeof(float) * (size_t)V);
        for (int k = 0; k < top_k; k++) {
            int m = 0;
            for (int i = 1; i < V; i++) if (tmp[i] > tmp[m]) m = i;
            kth = tmp[m];
            tmp[m] = -INFINITY;
        }
    }
    double z = 0;
    for (int i = 0; i < V; i++) z += p[i] = logits[i] >= kth ? exp((logits[i] - logits[best]) / temp) : 0;
    double u = uniform(rng) * z;
    for (int i = 0; i < V; i++) if ((u -= p[i]) <= 0) return i;
    return best;
}

int cmd_gpt_generate(int argc, char **argv) {
    const char *dir = NULL, *prompt = "", *device = NULL;
    long n = 300, top_k = 40, threads = 0;
    double temp = 0.8;
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 0; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!v) return usage();
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) dir = v;
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) prompt = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "-n")) { n = strtol(v, &end, 10); if (*end || n < 0 || n > 1000000) return usage(); }
        else if (!strcmp(a, "--top-k")) { top_k = strtol(v, &end, 10); if (*end || top_k < 0) return usage(); }
        else if (!strcmp(a, "--threads")) { threads = strtol(v, &end, 10); if (*end || threads < 0 || threads > 1024) return usage(); }
        else if (!strcmp(a, "--temp")) { temp = strtod(v, &end); if (*end || !(temp >= 0 && temp <= 100)) return usage(); }
        else if (!strcmp(a, "--seed")) { seed = strtoull(v, &end, 10); if (*end) return usage(); }
        else { fprintf(stderr, "rlx generate: unknown option '%s'\n", a); return usage(); }
    }
    if (!dir) return usage();
    gpt_config c;
    if (gpt_load_config(dir, &c) != RLX_OK) { fprintf(stderr, "rlx generate: %s\n", rlx_last_error()); return 1; }
    if (c.vocab > 1024) { fprintf(stderr, "rlx generate: vocab %d is not a byte model's\n", c.vocab); return 1; }
    rlx_graph *g;
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.threads = (int)threads;
    tool_set_device(&o, device);
    rlx_exec *e = NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/checkpoint.safetensors", dir);
    if (gpt_build(&c, GPT_SAMPLE, 1, 0, NULL, &g) != RLX_OK || rlx_compile(g, &o, &e) != RLX_OK ||
        rlx_exec_load_params(e, path, 0) != RLX_OK) {
        fprintf(stderr, "rlx generate: %s\n", rlx_last_error());
        rlx_graph_free(g);
        rlx_exec_free(e);
        return 1;
    }
    rlx_graph_free(g);
    size_t len = strlen(prompt), cap = len + (size_t)n + 1;
    unsigned char *text = malloc(cap);
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)c.max_seq), *pos = malloc(sizeof(int32_t) * (size_t)c.max_seq);
    float *logits = malloc(sizeof(float) * (size_t)c.max_seq * (size_t)c.vocab);
    if (!text || !tok || !pos || !logits) { fprintf(stderr, "rlx generate: out of memory\n"); return 1; }
    memcpy(text, prompt, len);
    if (len == 0) text[len++] = '\n';
    fwrite(prompt, 1, strlen(prompt), stdout);
    int rc = 0;
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull | 1;
    for (long t = 0; t < n && rc == 0; t++) {
        int L = len < (size_t)c.max_seq ? (int)len : c.max_seq;
        int Lp = (L + 15) / 16 * 16;
        if (Lp > c.max_seq) Lp = c.max_seq;
        for (int i = 0; i < Lp; i++) tok[i] = i < L ? text[len - (size_t)L + (size_t)i] : 0, pos[i] = i;
        rlx_tensor in[2] = {
            {.name = "tokens", .dtype = RLX_I32, .rank = 2, .dims = {1, Lp}, .data = tok, .bytes = 4 * (size_t)Lp},
            {.name = "positions", .dtype = RLX_I32, .rank = 1, .dims = {Lp}, .data = pos, .bytes = 4 * (size_t)Lp},
        };
        if (rlx_exec_run(e, in, 2) != RLX_OK ||
            rlx_exec_read_output(e, "logits", logits, sizeof(float) * (size_t)Lp * (size_t)c.vocab) != RLX_OK) {
            fprintf(stderr, "\nrlx generate: %s\n", rlx_last_error());
            rc = 1;
            break;
        }
        int b = sample(logits + (size_t)(L - 1) * (size_t)c.vocab, c.vocab, temp, (int)top_k, &rng);
        text[len++] = (unsigned char)b;
        fputc(b, stdout);
        fflush(stdout);
    }
    if (rc == 0) putchar('\n');
    free(text), free(tok), free(pos), free(logits);
    rlx_exec_free(e);
    return rc;
}
