/*
 * generate.c — `rlx generate`: load a GGUF model, stream generated text to
 * stdout as it is produced, print prompt and generation speed on stderr.
 */
#include "generate.h"
#include "train.h"
#include <sys/stat.h>
#include "rlx.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double monotonic_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

/* A number in [lo, hi]; integer options refuse fractions rather than
 * truncate them, and "" is not 0. */
static int num_any(const char *flag, const char *v, double lo, double hi, bool integer, double *out) {
    char *end = NULL;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || !(x >= lo && x <= hi) || (integer && x != floor(x))) {
        fprintf(stderr, "rlx generate: %s needs %s in [%.10g, %.10g]\n", flag, integer ? "an integer" : "a number", lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}
static int num(const char *flag, const char *v, double lo, double hi, double *out) { return num_any(flag, v, lo, hi, false, out); }
static int inum(const char *flag, const char *v, double lo, double hi, double *out) { return num_any(flag, v, lo, hi, true, out); }

/* A full 64-bit seed: through a double, seeds above 2^53 would round. */
static int seed_arg(const char *v, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    /* a digit first: strtoull would skip spaces and wrap " -1" to 2^64 - 1 */
    unsigned long long x = v && isdigit((unsigned char)*v) ? strtoull(v, &end, 10) : 0;
    if (!end || *end || errno) {
        fprintf(stderr, "rlx generate: --seed needs an integer in [0, 2^64 - 1]\n");
        return -1;
    }
    *out = (uint64_t)x;
    return 0;
}

/* One row per option: the parse loop and the unknown-option check both read
 * this table, so an option cannot be accepted by one and missed by the other. */
typedef enum { OPT_STR, OPT_NUM, OPT_INT, OPT_SEED } opt_kind;
typedef struct {
    const char *name, *alias;   /* alias may be NULL */
    opt_kind    kind;
    double      lo, hi;         /* OPT_NUM / OPT_INT range */
    void       *dst;            /* const char ** / double * / uint64_t * */
} gen_option;

/* Parses v into o->dst: 0, or -1 (printed). */
static int parse_option(const gen_option *o, const char *flag, const char *v) {
    switch (o->kind) {
    case OPT_STR: *(const char **)o->dst = v; return 0;
    case OPT_NUM: return num(flag, v, o->lo, o->hi, o->dst);
    case OPT_INT: return inum(flag, v, o->lo, o->hi, o->dst);
    case OPT_SEED: return seed_arg(v, o->dst);
    }
    return -1;
}

int cmd_generate(int argc, char **argv) {
    for (int i = 0; i + 1 < argc; i++) {   /* a folder from `rlx train` rather than a GGUF file */
        struct stat sb;
        if ((!strcmp(argv[i], "-m") || !strcmp(argv[i], "--model")) && stat(argv[i + 1], &sb) == 0 && S_ISDIR(sb.st_mode))
            return cmd_gpt_generate(argc, argv);
    }
    const char *model = NULL, *prompt = "", *device = NULL;
    double n_predict = 128, ctx = 0, threads = 0, temp, top_k, top_p, min_p, rp;
    uint64_t seed = 0;
    rlx_sampling s;
    rlx_sampling_init(&s);
    temp = s.temperature;
    top_k = s.top_k;
    top_p = s.top_p;
    min_p = s.min_p;
    rp = s.repeat_penalty;
    const gen_option options[] = {
        {"-m", "--model", OPT_STR, 0, 0, &model},
        {"-p", "--prompt", OPT_STR, 0, 0, &prompt},
        {"--device", NULL, OPT_STR, 0, 0, &device},
        {"-n", NULL, OPT_INT, 0, 1e6, &n_predict},
        {"--temp", NULL, OPT_NUM, 0, 100, &temp},
        {"--top-k", NULL, OPT_INT, 0, 1e9, &top_k},
        {"--top-p", NULL, OPT_NUM, 0, 1, &top_p},
        {"--min-p", NULL, OPT_NUM, 0, 1, &min_p},
        {"--repeat-penalty", NULL, OPT_NUM, 0.01, 100, &rp},
        {"--seed", NULL, OPT_SEED, 0, 0, &seed},
        {"--ctx", NULL, OPT_INT, 1, 1 << 24, &ctx},
        {"--threads", NULL, OPT_INT, 0, 1024, &threads},
    };
    bool have_seed = false;
    for (int i = 0; i < argc; i += 2) {   /* every option takes one value */
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        const gen_option *o = NULL;
        for (size_t k = 0; k < sizeof options / sizeof *options && !o; k++)
            if (!strcmp(a, options[k].name) || (options[k].alias && !strcmp(a, options[k].alias))) o = &options[k];
        if (!o) { fprintf(stderr, "rlx generate: unknown option '%s'\n", a); return usage(); }
        if (!v) { fprintf(stderr, "rlx generate: %s needs a value\n", a); return usage(); }
        if (parse_option(o, a, v)) return 2;
        have_seed |= o->kind == OPT_SEED;
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
        else if (end != device && *end == 0 && idx >= 0) { o.compile.backend = RLX_BACKEND_VULKAN; o.compile.device_index = (int)idx; }
        else { o.compile.backend = RLX_BACKEND_VULKAN; o.compile.device_name = device; }
    }
    s.temperature = (float)temp;
    s.top_k = (int)top_k;
    s.top_p = (float)top_p;
    s.min_p = (float)min_p;
    s.repeat_penalty = (float)rp;
    if (have_seed) s.seed = seed;
    rlx_model *m;
    if (isatty(2)) fprintf(stderr, "loading %s ...\r", model);
    double t_load = monotonic_seconds();
    if (rlx_model_load(model, &o, &m) != RLX_OK) {
        fprintf(stderr, "rlx generate: %s\n", rlx_last_error());
        return 1;
    }
    rlx_model_info info;
    rlx_model_get_info(m, &info);
    t_load = monotonic_seconds() - t_load;
    fprintf(stderr, "model %s (%s, %d layers, vocab %d, ctx %d) on %s (%s), loaded in %.2f s\n",
            info.name[0] ? info.name : model, info.arch, info.n_layer, info.n_vocab, info.n_ctx, info.backend, info.device,
            t_load);
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
