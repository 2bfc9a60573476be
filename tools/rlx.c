/*
 * rlx.c — the `rlx` command-line program.
 *
 *   rlx version          library version
 *   rlx ops              the op table
 *   rlx devices          backends and devices rlx can use here
 *   rlx demo [options]   transformer encoder demo (see --help)
 *   rlx generate ...     text generation with a GGUF model
 *   rlx inspect FILE     a GGUF file's metadata and tensor table
 *   rlx quantize IN OUT TYPE  a GGUF file with its 2-D float weights quantized
 */
#include "demo.h"
#include "generate.h"
#include "io_cmds.h"
#include "rlx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(FILE *f) {
    fprintf(f,
            "usage: rlx <command> [options]\n"
            "  version                 print the version\n"
            "  ops                     list every op with its arity and semantics\n"
            "  devices                 list the backends and devices available here\n"
            "  demo [--layers N] [--d-model N] [--heads N] [--d-ff N] [--seq N] [--batch N]\n"
            "       [--runs N] [--threads N] [--device auto|cpu|vulkan|INDEX|NAME] [--report]\n"
            "                          build, compile and time a transformer encoder;\n"
            "                          check it against an unoptimized CPU run\n"
            "  generate -m FILE [-p PROMPT] [-n N] [--device D] [--temp T] [--top-k K]\n"
            "       [--top-p P] [--min-p P] [--repeat-penalty R] [--seed S] [--ctx N] [--threads N]\n"
            "                          generate text with a Llama-family GGUF model\n"
            "  inspect FILE            print a GGUF file's metadata and tensor table\n"
            "  quantize IN OUT TYPE    quantize a GGUF file's 2-D float weights (q8_0, q4_K_M, ...)\n");
    return f == stderr ? 2 : 0;
}

static int cmd_ops(void) {
    printf("%-28s %-6s %s\n", "op", "arity", "semantics");
    for (int i = 0; i < rlx_op_count(); i++) {
        char arity[8];
        if (rlx_op_arity(i) == RLX_OP_ARITY_VARIADIC) snprintf(arity, sizeof arity, "var");
        else snprintf(arity, sizeof arity, "%d", rlx_op_arity(i));
        printf("%-28s %-6s %s\n", rlx_op_name(i), arity, rlx_op_doc(i));
    }
    return 0;
}

static int cmd_devices(void) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("cpu       %ld cores (always available)\n", cores);
    int n = rlx_vulkan_device_count();
    if (n == 0) printf("vulkan    none: %s\n", rlx_last_error());
    for (int i = 0; i < n; i++) {
        char *d = rlx_vulkan_device_describe(i);
        if (d) { printf("%s", d); free(d); }
    }
    return 0;
}

static int parse_int(const char *flag, const char *value, int lo, int hi, int *out) {
    char *end;
    long v = value ? strtol(value, &end, 10) : 0;
    if (!value || *end || v < lo || v > hi) {
        fprintf(stderr, "rlx: %s needs an integer in [%d, %d]\n", flag, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int cmd_demo(int argc, char **argv) {
    demo_options o;
    demo_options_init(&o);
    struct { const char *flag; int *dst; int lo, hi; } flags[] = {
        {"--layers", &o.layers, 1, 64},  {"--d-model", &o.d_model, 8, 8192}, {"--heads", &o.heads, 1, 128},
        {"--d-ff", &o.d_ff, 8, 32768},   {"--seq", &o.seq, 1, 8192},         {"--batch", &o.batch, 1, 1024},
        {"--runs", &o.runs, 1, 1000},    {"--threads", &o.threads, 0, 1024},
    };
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--report") == 0) { o.report = 1; continue; }
        if (strcmp(argv[i], "--device") == 0) {
            if (i + 1 >= argc) { fprintf(stderr, "rlx demo: --device needs a value\n"); return 2; }
            o.device = argv[++i];
            continue;
        }
        size_t k = 0;
        while (k < sizeof flags / sizeof flags[0] && strcmp(argv[i], flags[k].flag) != 0) k++;
        if (k == sizeof flags / sizeof flags[0]) { fprintf(stderr, "rlx demo: unknown option '%s'\n", argv[i]); return 2; }
        if (parse_int(flags[k].flag, i + 1 < argc ? argv[i + 1] : NULL, flags[k].lo, flags[k].hi, flags[k].dst)) return 2;
        i++;
    }
    if (o.d_model % o.heads) { fprintf(stderr, "rlx demo: --d-model must be a multiple of --heads\n"); return 2; }
    return demo_run(&o);
}

int main(int argc, char **argv) {
    if (argc < 2) return usage(stderr);
    const char *cmd = argv[1];
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) { printf("rlx %s\n", rlx_version()); return 0; }
    if (strcmp(cmd, "ops") == 0) return cmd_ops();
    if (strcmp(cmd, "devices") == 0) return cmd_devices();
    if (strcmp(cmd, "demo") == 0) return cmd_demo(argc - 2, argv + 2);
    if (strcmp(cmd, "generate") == 0) return cmd_generate(argc - 2, argv + 2);
    if (strcmp(cmd, "inspect") == 0) return cmd_inspect(argc - 2, argv + 2);
    if (strcmp(cmd, "quantize") == 0) return cmd_quantize(argc - 2, argv + 2);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return usage(stdout);
    fprintf(stderr, "rlx: unknown command '%s'\n", cmd);
    return usage(stderr);
}
