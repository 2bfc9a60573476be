/*
 * llamacpp_run.c — times llama.cpp on a GGUF file, as a same-run peer of
 * bench/llm_bench: a P-token prefill (median of R runs, each on an empty
 * KV cache) and D single-token decode steps after it (the median step, so
 * decode at a depth of P tokens).
 *
 *   llamacpp_run LIBLLAMA.so MODEL.gguf P[,P...] D R [gpu_layers [flash_attn [threads [n_ctx [n_ubatch]]]]]
 *
 * Several prompt lengths (P a comma list) share one model load: each has a
 * context of its own. n_ctx: the KV cache's positions, 0 (default) = P + D +
 * 8, as llm_bench's default --ctx; n_ubatch: the micro-batch prefill runs in,
 * 0 (default) = P, the whole prompt at once (llama.cpp's own default is
 * 512). Prints one line a prompt length:
 *   RESULT llama.cpp prefill_tok_s X decode_tok_s Y prompt P n_ctx C n_ubatch U
 *
 * The library is opened with dlopen, so one binary times any build of the
 * same llama.h: the CUDA build made on the GPU machine and the prebuilt
 * Vulkan libraries of the npm package. A build that loads its ggml
 * backends at run time (the npm one) has them loaded from the library's own
 * folder. Compile against the llama.h of the version being timed
 * (bench/peers/build_llamacpp.sh does).
 */
#define _GNU_SOURCE
#include "llama.h"
#include "ggml-backend.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The entry points used, typed from llama.h's own declarations. */
static struct {
    __typeof__(&llama_backend_init) backend_init;
    __typeof__(&llama_model_default_params) model_defaults;
    __typeof__(&llama_context_default_params) context_defaults;
    __typeof__(&llama_model_load_from_file) load_model;
    __typeof__(&llama_init_from_model) new_context;
    __typeof__(&llama_model_get_vocab) vocab_of;
    __typeof__(&llama_vocab_n_tokens) vocab_size;
    __typeof__(&llama_batch_get_one) batch_one;
    __typeof__(&llama_decode) decode;
    __typeof__(&llama_synchronize) synchronize;
    __typeof__(&llama_get_memory) memory_of;
    __typeof__(&llama_memory_clear) memory_clear;
    __typeof__(&llama_free) free_context;
    __typeof__(&llama_model_free) free_model;
} api;

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_value);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void *need(void *lib, const char *name) {
    void *f = dlsym(lib, name);
    if (!f) {
        fprintf(stderr, "llamacpp_run: the library has no %s\n", name);
        exit(1);
    }
    return f;
}

/* Loads the library and, where it loads its backends at run time, the
 * backends beside it. */
static void *open_library(const char *path) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        fprintf(stderr, "llamacpp_run: %s\n", dlerror());
        exit(1);
    }
    /* a build with its GPU backend linked in has a GPU device already; one
     * that loads its backends at run time (the npm build) has none yet */
    __typeof__(&ggml_backend_dev_by_type) gpu_device = dlsym(RTLD_DEFAULT, "ggml_backend_dev_by_type");
    __typeof__(&ggml_backend_load_all_from_path) load_from = dlsym(RTLD_DEFAULT, "ggml_backend_load_all_from_path");
    if (load_from && gpu_device && !gpu_device(GGML_BACKEND_DEVICE_TYPE_GPU)) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) *slash = 0;
        else snprintf(dir, sizeof dir, ".");
        load_from(dir);
    }
    api.backend_init = need(lib, "llama_backend_init");
    api.model_defaults = need(lib, "llama_model_default_params");
    api.context_defaults = need(lib, "llama_context_default_params");
    api.load_model = need(lib, "llama_model_load_from_file");
    api.new_context = need(lib, "llama_init_from_model");
    api.vocab_of = need(lib, "llama_model_get_vocab");
    api.vocab_size = need(lib, "llama_vocab_n_tokens");
    api.batch_one = need(lib, "llama_batch_get_one");
    api.decode = need(lib, "llama_decode");
    api.synchronize = need(lib, "llama_synchronize");
    api.memory_of = need(lib, "llama_get_memory");
    api.memory_clear = need(lib, "llama_memory_clear");
    api.free_context = need(lib, "llama_free");
    api.free_model = need(lib, "llama_model_free");
    return lib;
}

/* Runs n tokens through the context as one batch and waits for the device. */
static void run_tokens(struct llama_context *ctx, llama_token *tokens, int n) {
    if (api.decode(ctx, api.batch_one(tokens, n)) != 0) {
        fprintf(stderr, "llamacpp_run: llama_decode of %d tokens failed\n", n);
        exit(1);
    }
    api.synchronize(ctx);
}

/* One prompt length: a context of n_ctx positions, R timed prefills of P
 * tokens after a warm-up one, then D decode steps; prints its RESULT line. */
static int time_prompt(struct llama_model *model, int P, int D, int R, int n_ctx, int n_ubatch, int flash, int threads) {
    struct llama_context_params cp = api.context_defaults();
    cp.n_ctx = (uint32_t)(n_ctx ? n_ctx : P + D + 8);
    cp.n_batch = (uint32_t)P;
    cp.n_ubatch = (uint32_t)(n_ubatch && n_ubatch < P ? n_ubatch : P);
    cp.n_threads = cp.n_threads_batch = threads;
    cp.flash_attn_type = flash ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    if (cp.n_ctx < (uint32_t)(P + D)) {
        fprintf(stderr, "llamacpp_run: n_ctx %u cannot hold %d prompt + %d decode tokens\n", cp.n_ctx, P, D);
        return 1;
    }
    struct llama_context *ctx = api.new_context(model, cp);
    if (!ctx) {
        fprintf(stderr, "llamacpp_run: cannot make a context of %u positions\n", cp.n_ctx);
        return 1;
    }
    int vocab = api.vocab_size(api.vocab_of(model));
    llama_token *prompt = malloc(sizeof *prompt * (size_t)P);
    double *prefill = malloc(sizeof *prefill * (size_t)(R + 1)), *steps = malloc(sizeof *steps * (size_t)D);
    if (!prompt || !prefill || !steps) return 1;
    for (int i = 0; i < P; i++) prompt[i] = (llama_token)(1 + (i * 7919) % (vocab - 1));
    /* run 0 warms up (kernel loading and compilation); runs 1..R are timed */
    for (int r = 0; r <= R; r++) {
        api.memory_clear(api.memory_of(ctx), true);
        double t = seconds();
        run_tokens(ctx, prompt, P);
        prefill[r] = seconds() - t;
    }
    for (int s = 0; s < D; s++) {
        llama_token next = (llama_token)(1 + (s * 104729) % (vocab - 1));
        double t = seconds();
        run_tokens(ctx, &next, 1);
        steps[s] = seconds() - t;
    }
    printf("RESULT llama.cpp prefill_tok_s %.2f decode_tok_s %.2f prompt %d n_ctx %u n_ubatch %u\n",
           P / median(prefill + 1, R), 1.0 / median(steps, D), P, cp.n_ctx, cp.n_ubatch);
    fflush(stdout);
    api.free_context(ctx);
    free(prompt);
    free(prefill);
    free(steps);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s LIBLLAMA.so MODEL.gguf P[,P...] D R [gpu_layers [flash_attn [threads [n_ctx [n_ubatch]]]]]\n",
                argv[0]);
        return 2;
    }
    int D = atoi(argv[4]), R = atoi(argv[5]);
    int layers = argc > 6 ? atoi(argv[6]) : 999, flash = argc > 7 ? atoi(argv[7]) : 1;
    int threads = argc > 8 ? atoi(argv[8]) : 4;
    int n_ctx = argc > 9 ? atoi(argv[9]) : 0, n_ubatch = argc > 10 ? atoi(argv[10]) : 0;
    enum { MAX_PROMPTS = 16 };
    int prompts[MAX_PROMPTS], n_prompts = 0;
    for (const char *p = argv[3]; *p && n_prompts < MAX_PROMPTS;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1 << 20 || (*end && *end != ',')) {
            fprintf(stderr, "llamacpp_run: P must be a comma list of positive lengths, not '%s'\n", argv[3]);
            return 2;
        }
        prompts[n_prompts++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (n_prompts == 0 || D < 1 || R < 1 || n_ctx < 0 || n_ubatch < 0) {
        fprintf(stderr, "llamacpp_run: P, D and R must be at least 1, n_ctx and n_ubatch at least 0\n");
        return 2;
    }
    open_library(argv[1]);
    api.backend_init();
    struct llama_model_params mp = api.model_defaults();
    mp.n_gpu_layers = layers;
    struct llama_model *model = api.load_model(argv[2], mp);
    if (!model) {
        fprintf(stderr, "llamacpp_run: cannot load %s\n", argv[2]);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < n_prompts && rc == 0; i++) rc = time_prompt(model, prompts[i], D, R, n_ctx, n_ubatch, flash, threads);
    api.free_model(model);
    return rc;
}
