/*
 * generate.c — `rlx generate`: load a GGUF model, stream generated text to
 * stdout as it is produced, print prompt and generation speed on stderr.
 */
#include "generate.h"
#include "rlx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(void) {
    fprintf(stderr,
            "usage: rlx generate -m FILE [-p PROMPT] [-n N] [--device cpu|vulkan|auto|INDEX|NAME]\n"
            "                    [--temp T] [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R]\n"
            "                    [--seed S] [--ctx N] [--threads N]\n"
            "  --temp 0 is greedy. An empty prompt starts from BOS.\n");
    return 2;
}

static int on_token(const char *text, size_t len, int32_t id, void *user) {
    (void)id;
    (void)user;
    fwrite(text, 1, len, stdout);
    fflush(stdout);
    return 0;
}

static int num(const char *flag, const char *v, double lo, double hi, double *out) {
    char *end;
    double x = v ? strtod(v, &end) : 0;
    if (!v || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "rlx generate: %s needs a number in [%g, %g]\n", flag, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

int cmd_generate(int argc, char **argv) {
    const char *model = NULL, *prompt = "", *device = NULL;
    double n_predict = 128, ctx = 0, threads = 0, seed = 0, temp, top_k, top_p, min_p, rp;
    rlx_sampling s;
    rlx_sampling_init(&s);
    temp = s.temperature;
    top_k = s.top_k;
    top_p = s.top_p;
    min_p = s.min_p;
    rp = s.repeat_penalty;
    int have_seed = 0;
    for (int i = 0; i < argc; i += 2) {   /* every option takes one value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "-m") || !strcmp(a, "--model")) { if (!v) return usage(); model = v; }
        else if (!strcmp(a, "-p") || !strcmp(a, "--prompt")) { if (!v) return usage(); prompt = v; }
        else if (!strcmp(a, "--device")) { if (!v) return usage(); device = v; }
        else if (!strcmp(a, "-n")) bad = num(a, v, 0, 1e6, &n_predict);
        else if (!strcmp(a, "--temp")) bad = num(a, v, 0, 100, &temp);
        else if (!strcmp(a, "--top-k")) bad = num(a, v, 0, 1e9, &top_k);
        else if (!strcmp(a, "--top-p")) bad = num(a, v, 0, 1, &top_p);
        else if (!strcmp(a, "--min-p")) bad = num(a, v, 0, 1, &min_p);
        else if (!strcmp(a, "--repeat-penalty")) bad = num(a, v, 0.01, 100, &rp);
        else if (!strcmp(a, "--seed")) { bad = num(a, v, 0, 1.8e19, &seed); have_seed = 1; }
        else if (!strcmp(a, "--ctx")) bad = num(a, v, 1, 1 << 24, &ctx);
        else if (!strcmp(a, "--threads")) bad = num(a, v, 0, 1024, &threads);
        else { fprintf(stderr, "rlx generate: unknown option '%s'\n", a); return usage(); }
        if (bad) return 2;
    }
    if (!model) return usage();
    rlx_model_options o;
    rlx_model_options_init(&o);
    o.n_ctx = (int)ctx;
    o.compile.threads = (int)threads;
    if (device && strcmp(device, "auto") != 0) {
        char *end;
        long idx = strtol(device, &end, 10);
        if (!strcmp(device, "cpu")) o.compile.backend = RLX_BACKEND_CPU;
        else if (!strcmp(device, "vulkan")) o.compile.backend = RLX_BACKEND_VULKAN;
        else if (*end == 0 && idx >= 0) { o.compile.backend = RLX_BACKEND_VULKAN; o.compile.device_index = (int)idx; }
        else { o.compile.backend = RLX_BACKEND_VULKAN; o.compile.device_name = device; }
    }
    s.temperature = (float)temp;
    s.top_k = (int)top_k;
    s.top_p = (float)top_p;
    s.min_p = (float)min_p;
    s.repeat_penalty = (float)rp;
    if (have_seed) s.seed = (uint64_t)seed;
    rlx_model *m;
    if (isatty(2)) fprintf(stderr, "loading %s ...\r", model);
    if (rlx_model_load(model, &o, &m) != RLX_OK) {
        fprintf(stderr, "rlx generate: %s\n", rlx_last_error());
        return 1;
    }
    rlx_model_info info;
    rlx_model_get_info(m, &info);
    fprintf(stderr, "model %s (%s, %d layers, vocab %d, ctx %d) on %s (%s)\n", info.name[0] ? info.name : model, info.arch,
            info.n_layer, info.n_vocab, info.n_ctx, info.backend, info.device);
    rlx_generate_stats st;
    rlx_status r = rlx_model_generate(m, prompt, (int)n_predict, &s, on_token, NULL, &st);
    printf("\n");
    fflush(stdout);
    if (r != RLX_OK) fprintf(stderr, "rlx generate: %s\n", rlx_last_error());
    fprintf(stderr, "prompt: %d tokens in %.3f s (%.1f tok/s); generation: %d tokens in %.3f s (%.1f tok/s)%s\n",
            st.prompt_tokens, st.prompt_seconds, st.prompt_seconds > 0 ? st.prompt_tokens / st.prompt_seconds : 0,
            st.generated_tokens, st.generate_seconds,
            st.generate_seconds > 0 ? st.generated_tokens / st.generate_seconds : 0, st.stopped_at_eos ? ", stopped at EOS" : "");
    rlx_model_free(m);
    return r == RLX_OK ? 0 : 1;
}
