/*
 * dump.c — `rlx dump`: a graph as compiled, after fusion, one node per line
 * with its op, name, path and shape (rlx_exec_report). The path says how the
 * node runs: cpu-kernel; gpu with the kernel tier it got; HOST with the
 * reason it is a host step between GPU segments; view (an alias of its
 * input, no work); source (input, param, constant).
 *
 *   rlx dump MODEL.gguf [--device D] [--ctx N] [--tokens N] [--threads N]
 *       the Llama-family model's program for an eval of N tokens (1: the
 *       decode step, the default; more: a prompt), after evaluating them
 *   rlx dump --demo [demo options]
 *       the `rlx demo` transformer encoder, compiled (not run)
 */
#include "dump.h"
#include "demo.h"
#include "rlx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
    fprintf(stderr, "usage: rlx dump MODEL.gguf [--device cpu|vulkan|auto|INDEX|NAME] [--ctx N] [--tokens N] [--threads N]\n"
                    "       rlx dump --demo [--layers N] [--d-model N] [--heads N] [--d-ff N] [--seq N] [--batch N]\n"
                    "                       [--threads N] [--device D]\n");
    return 2;
}

static void print_header(const rlx_exec_stats *s) {
    printf("backend %s on %s: %d steps, %d fused nodes, %d host steps; arena %.2f MiB for %.2f MiB of tensors\n",
           s->backend, s->device, s->steps, s->fused_nodes, s->host_steps, s->arena_bytes / 1048576.0,
           s->tensor_bytes / 1048576.0);
    printf("node  path   op 'name'  dtype[shape]  kernel tier or host-step reason (GPU)\n");
}

static int dump_demo(int argc, char **argv) {
    demo_options o;
    demo_options_init(&o);
    int code = demo_parse_options(argc, argv, "rlx dump --demo", &o);
    if (code) return code;
    rlx_graph *g = demo_build_encoder(&o);
    if (!g) { fprintf(stderr, "rlx dump: out of memory\n"); return 1; }
    rlx_compile_options co;
    demo_compile_options(&o, &co);
    rlx_exec *e = NULL;
    rlx_exec_stats s;
    char *rep = NULL;
    code = 1;
    if (rlx_compile(g, &co, &e) != RLX_OK || rlx_exec_get_stats(e, &s) != RLX_OK || !(rep = rlx_exec_report(e))) {
        fprintf(stderr, "rlx dump: %s\n", rlx_last_error());
    } else {
        printf("rlx demo encoder: %d layers, d_model %d, %d heads, d_ff %d, batch %d x seq %d\n", o.layers, o.d_model,
               o.heads, o.d_ff, o.batch, o.seq);
        print_header(&s);
        printf("%s", rep);
        code = 0;
    }
    free(rep);
    rlx_exec_free(e);
    rlx_graph_free(g);
    return code;
}

static int parse_count(const char *flag, const char *v, int lo, int hi, int *out) {
    char *end;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || *end || n < lo || n > hi) {
        fprintf(stderr, "rlx dump: %s needs an integer in [%d, %d]\n", flag, lo, hi);
        return -1;
    }
    *out = (int)n;
    return 0;
}

static int dump_model(const char *path, int argc, char **argv) {
    demo_options dev;   /* only its --device / --threads: the compile options they give */
    demo_options_init(&dev);
    int ctx = 0, tokens = 1;
    for (int i = 0; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { fprintf(stderr, "rlx dump: %s needs a value\n", a); return usage(); }
        if (!strcmp(a, "--device")) dev.device = v;
        else if (!strcmp(a, "--ctx")) { if (parse_count(a, v, 1, 1 << 24, &ctx)) return 2; }
        else if (!strcmp(a, "--tokens")) { if (parse_count(a, v, 1, 1 << 16, &tokens)) return 2; }
        else if (!strcmp(a, "--threads")) { if (parse_count(a, v, 0, 1024, &dev.threads)) return 2; }
        else { fprintf(stderr, "rlx dump: unknown option '%s'\n", a); return usage(); }
    }
    rlx_model_options mo;
    rlx_model_options_init(&mo);
    demo_compile_options(&dev, &mo.compile);
    mo.n_ctx = ctx;
    rlx_model *m = NULL;
    rlx_model_info info;
    if (rlx_model_load(path, &mo, &m) != RLX_OK || rlx_model_get_info(m, &info) != RLX_OK) {
        fprintf(stderr, "rlx dump: %s\n", rlx_last_error());
        rlx_model_free(m);
        return 1;
    }
    if (tokens > info.n_ctx) {
        fprintf(stderr, "rlx dump: --tokens %d exceeds the context of %d\n", tokens, info.n_ctx);
        rlx_model_free(m);
        return 2;
    }
    int32_t *ids = malloc(sizeof *ids * (size_t)tokens);
    const float *logits = NULL;
    char *rep = NULL;
    int code = 1;
    if (!ids) {
        fprintf(stderr, "rlx dump: out of memory\n");
    } else {
        for (int i = 0; i < tokens; i++) ids[i] = info.bos >= 0 ? info.bos : 0;   /* the program, not the text, matters */
        if (rlx_model_eval(m, ids, tokens, &logits) != RLX_OK || !(rep = rlx_model_report(m))) {
            fprintf(stderr, "rlx dump: %s\n", rlx_last_error());
        } else {
            printf("%s (%s): %d layers, n_embd %d, %d heads (%d kv), vocab %d, context %d; program for %d token%s\n",
                   info.name[0] ? info.name : path, info.arch, info.n_layer, info.n_embd, info.n_head, info.n_head_kv,
                   info.n_vocab, info.n_ctx, tokens, tokens == 1 ? "" : "s");
            printf("backend %s on %s\n", info.backend, info.device);
            printf("node  path   op 'name'  dtype[shape]  kernel tier or host-step reason (GPU)\n");
            printf("%s", rep);
            code = 0;
        }
    }
    free(ids);
    free(rep);
    rlx_model_free(m);
    return code;
}

int cmd_dump(int argc, char **argv) {
    if (argc < 1) return usage();
    if (!strcmp(argv[0], "--demo")) return dump_demo(argc - 1, argv + 1);
    if (argv[0][0] == '-') return usage();
    return dump_model(argv[0], argc - 1, argv + 1);
}
