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
 *   rlx dump MODEL.gguf | --demo  a compiled graph after fusion, each node's path
 */
#include "demo.h"
#include "dump.h"
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
            "  quantize IN OUT TYPE    quantize a GGUF file's 2-D float weights (q8_0, q4_K_M, ...)\n"
            "  dump MODEL.gguf [--device D] [--ctx N] [--tokens N] [--threads N]\n"
            "  dump --demo [demo options] [--device D]\n"
            "                          the compiled graph after fusion: each node's op, name, path\n"
            "                          (cpu-kernel, gpu + kernel tier, HOST + reason, view) and shape\n");
    return f == stderr ? 2 : 0;
}

static int cmd_ops(void) {
    printf("%-28s %-6s %s\n", "op", "arity", "semantics");
    for (int i = 0; i < rlx_op_count(); i++) {
        char arity[8];
        if (rlx_op_arity(i) < 0) snprintf(arity, sizeof arity, "var");
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

static int cmd_demo(int argc, char **argv) {
    demo_options o;
    demo_options_init(&o);
    int code = demo_parse_options(argc, argv, "rlx demo", &o);
    return code ? code : demo_run(&o);
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
    if (strcmp(cmd, "dump") == 0) return cmd_dump(argc - 2, argv + 2);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return usage(stdout);
    fprintf(stderr, "rlx: unknown command '%s'\n", cmd);
    return usage(stderr);
}
