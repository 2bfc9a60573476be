/*
 * encoder_dump.c — runs a Hugging Face encoder folder through rlx_encoder
 * one input at a time and writes what it computed, for bench/encoder_hf.py
 * to compare with transformers; or times batches.
 *
 *   build/encoder_dump DIR IN.txt OUT.bin [--device D] [--precision f32|fast] [--threads N]
 *   build/encoder_dump DIR --bench B,S [--runs N] [--device D] [--precision f32|fast] [--threads N]
 *
 * IN.txt: one input a line: a text, or "ids: 0 31 7 2" for token ids as they
 * are (no tokenizer needed). OUT.bin (little-endian): int32 hidden,
 * has_pooler, count; then per input int32 n, n ids, n x hidden float32
 * last_hidden_state, hidden float32 pooler_output (zeros without a pooler).
 * --bench: RESULT lines with the median wall ms of a [B, S] batch of random ids.
 */
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

static int bench(rlx_encoder *e, const rlx_encoder_info *info, int B, int S, int runs) {
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)B * S);
    float *emb = malloc(sizeof(float) * (size_t)B * info->hidden);
    double *t = malloc(sizeof(double) * (size_t)runs);
    if (!ids || !emb || !t) return 1;
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < B * S; i++) r = r * 6364136223846793005ull + 1, ids[i] = (int32_t)(5 + (r >> 33) % (uint64_t)(info->vocab - 5));
    int rc = 0;
    for (int i = -3; i < runs && rc == 0; i++) {   /* 3 warm-up runs */
        double t0 = now_ms();
        if (rlx_encoder_run_ids(e, B, S, ids, NULL, NULL, NULL, emb, NULL, NULL) != RLX_OK) {
            fprintf(stderr, "encoder_dump: %s\n", rlx_last_error());
            rc = 1;
        }
        if (i >= 0) t[i] = now_ms() - t0;
    }
    if (rc == 0) {
        qsort(t, (size_t)runs, sizeof *t, cmp_d);
        printf("RESULT encoder batch %d seq %d median_ms %.4f on %s %s\n", B, S, t[runs / 2], info->backend, info->device);
    }
    free(ids), free(emb), free(t);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s DIR IN.txt OUT.bin [--device D] [--precision f32|fast]\n"
                        "       %s DIR --bench B,S [--runs N] [--device D] [--precision f32|fast]\n", argv[0], argv[0]);
        return 2;
    }
    rlx_encoder_options o;
    rlx_encoder_options_init(&o);
    const char *in = NULL, *out = NULL;
    int B = 0, S = 0, runs = 20;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--device")) {
            if (!strcmp(v, "cpu")) o.compile.backend = RLX_BACKEND_CPU;
            else o.compile.backend = RLX_BACKEND_VULKAN, o.compile.device_name = strcmp(v, "vulkan") ? v : NULL;
            i++;
        } else if (!strcmp(a, "--precision")) o.compile.precision = !strcmp(v, "fast") ? RLX_PRECISION_FAST : RLX_PRECISION_F32, i++;
        else if (!strcmp(a, "--bench")) { if (sscanf(v, "%d,%d", &B, &S) != 2) return 2; i++; }
        else if (!strcmp(a, "--runs")) runs = atoi(v), i++;
        else if (!strcmp(a, "--threads")) o.compile.threads = atoi(v), i++;
        else if (!in) in = a;
        else out = a;
    }
    rlx_encoder *e;
    if (rlx_encoder_load(argv[1], &o, &e) != RLX_OK) {
        fprintf(stderr, "encoder_dump: %s\n", rlx_last_error());
        return 1;
    }
    rlx_encoder_info info;
    rlx_encoder_get_info(e, &info);
    if (B > 0) {
        int rc = bench(e, &info, B, S, runs > 0 ? runs : 20);
        rlx_encoder_free(e);
        return rc;
    }
    FILE *fi = in ? fopen(in, "r") : NULL, *fo = out ? fopen(out, "wb") : NULL;
    if (!fi || !fo) { fprintf(stderr, "encoder_dump: cannot open %s / %s\n", in, out); return 1; }
    char *line = NULL;
    size_t cap = 0;
    int count = 0, H = info.hidden, pooled = 1, rc = 0;
    float *pool = calloc((size_t)H, sizeof(float));
    int32_t hdr[3] = {H, 0, 0};
    fwrite(hdr, 4, 3, fo);
    while (getline(&line, &cap, fi) >= 0 && rc == 0) {
        line[strcspn(line, "\r\n")] = 0;
        int32_t ids[4096], types[4096] = {0};
        int n = 0;
        if (!strncmp(line, "ids:", 4)) {
            for (char *p = line + 4, *end; n < 4096; p = end) {
                long v = strtol(p, &end, 10);
                if (end == p) break;
                ids[n++] = (int32_t)v;
            }
        } else if (rlx_encoder_tokenize(e, line, NULL, ids, types, 4096, &n) != RLX_OK) {
            fprintf(stderr, "encoder_dump: line %d: %s\n", count + 1, rlx_last_error());
            rc = 1;
            break;
        }
        float *hid = malloc(sizeof(float) * (size_t)n * H);
        rlx_status st = rlx_encoder_run_ids(e, 1, n, ids, types, NULL, hid, NULL, pooled ? pool : NULL, NULL);
        if (st == RLX_STATUS_UNSUPPORTED && pooled) {   /* no pooler in the checkpoint */
            pooled = 0;
            memset(pool, 0, sizeof(float) * (size_t)H);
            st = rlx_encoder_run_ids(e, 1, n, ids, types, NULL, hid, NULL, NULL, NULL);
        }
        if (st != RLX_OK) { fprintf(stderr, "encoder_dump: line %d: %s\n", count + 1, rlx_last_error()); rc = 1; }
        else {
            fwrite(&n, 4, 1, fo);
            fwrite(ids, 4, (size_t)n, fo);
            fwrite(hid, 4, (size_t)n * H, fo);
            fwrite(pool, 4, (size_t)H, fo);
            count++;
        }
        free(hid);
    }
    hdr[1] = pooled, hdr[2] = count;
    fseek(fo, 0, SEEK_SET);
    fwrite(hdr, 4, 3, fo);
    fclose(fo);
    fclose(fi);
    free(line);
    free(pool);
    printf("encoder_dump: %d inputs on %s %s\n", count, info.backend, info.device);
    rlx_encoder_free(e);
    return rc;
}
