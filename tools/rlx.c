/*
 * rlx.c — the `rlx` command-line program.
 *
 *   rlx version          library version
 *   rlx ops              the op table
 *   rlx devices          backends and devices rlx can use here
 *   rlx demo [options]   transformer encoder demo (see --help)
 *   rlx generate ...     text generation with a GGUF model or a trained folder
 *   rlx train ...        train a byte-level GPT on a text file
 *   rlx inspect FILE     a GGUF file's metadata and tensor table
 *   rlx quantize IN OUT TYPE  a GGUF file with its 2-D float weights quantized
 *   rlx dump MODEL.gguf | --demo  a compiled graph after fusion, each node's path
 *   rlx embed -m DIR     embeddings of lines of text with a Hugging Face encoder
 *   rlx classify -m DIR  their labels, with a sequence-classification checkpoint
 */
#include "demo.h"
#include "train.h"
#include "dump.h"
#include "embed.h"
#include "generate.h"
#include "io_cmds.h"
#include "rlx.h"
#include "runtime/op_support.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int usage(FILE *f) {
    fprintf(f,
            "usage: rlx <command> [options]\n"
            "  version                 print the version\n"
            "  ops                     list every op with its arity and semantics\n"
            "  ops --matrix            the op x backend x dtype support table of docs/ops.md\n"
            "  devices                 list the backends and devices available here\n"
            "  demo [--layers N] [--d-model N] [--heads N] [--d-ff N] [--seq N] [--batch N]\n"
            "       [--runs N] [--threads N] [--device auto|cpu|vulkan|INDEX|NAME]\n"
            "       [--precision f32|fast] [--no-check] [--report]\n"
            "                          build, compile and time a transformer encoder;\n"
            "                          check it against an unoptimized CPU run\n"
            "  generate -m FILE [-p PROMPT] [-n N] [--device D] [--temp T] [--top-k K]\n"
            "       [--top-p P] [--min-p P] [--repeat-penalty R] [--seed S] [--ctx N] [--threads N]\n"
            "                          generate text with a Llama-family GGUF model, or with\n"
            "                          -m DIR from a folder `rlx train` wrote (bytes; --temp, --top-k)\n"
            "  train --data FILE --out DIR [--layers N --d-model N --heads N --seq N --batch N]\n"
            "       [--steps N --lr X --warmup N --rope --seed N --save-every N --device D --resume]\n"
            "       [--accumulate K --precision f32|fast]\n"
            "                          train a byte-level GPT on a text file (AdamW, checkpoints,\n"
            "                          loss.csv and loss.svg in DIR)\n"
            "  embed -m DIR [--device D] [--pool cls|mean|max] [--normalize] [--batch N] [--max-len N]\n"
            "       [--precision f32|fast] [-i FILE] [--json | --npy FILE]\n"
            "                          embed lines of text (stdin or FILE) with a Hugging Face encoder folder\n"
            "  classify -m DIR [...]   the label and score of each line, for a classification checkpoint\n"
            "  inspect FILE            print a GGUF file's metadata and tensor table; a safetensors\n"
            "                          file's tensors; an ONNX model's operators and whether rlx imports each\n"
            "  run MODEL.onnx --input NAME=FILE.npy ... [--device D] [--out DIR] [--runs N]\n"
            "                          run an ONNX model on NPY inputs; outputs to DIR/NAME.npy\n"
            "  quantize IN OUT TYPE    quantize a GGUF file's 2-D float weights (q8_0, q4_K_M, ...)\n"
            "  dump MODEL.gguf [--device D] [--ctx N] [--tokens N] [--threads N]\n"
            "  dump --demo [demo options] [--device D]\n"
            "                          the compiled graph after fusion: each node's op, name, path\n"
            "                          (cpu-kernel, gpu + kernel tier, HOST + reason, view) and shape\n");
    return f == stderr ? 2 : 0;
}

/* `rlx ops --matrix`: the support matrix of docs/ops.md (runtime/op_support.c) */
static int cmd_ops_matrix(void) {
    char *m = rt_op_matrix_markdown();
    if (!m) { fprintf(stderr, "rlx ops: out of memory\n"); return 1; }
    fputs(m, stdout);
    free(m);
    if (!rt_support_backend_built(RT_SUPPORT_VULKAN))
        fprintf(stderr, "rlx ops: built without Vulkan: its column shows '?'\n");
    return 0;
}

static int cmd_ops(int argc, char **argv) {
    if (argc == 1 && strcmp(argv[0], "--matrix") == 0) return cmd_ops_matrix();
    if (argc > 0) { fprintf(stderr, "rlx ops: unknown option '%s' (--matrix)\n", argv[0]); return 2; }
    printf("%-28s %-6s %s\n", "op", "arity", "semantics");
    for (int i = 0; i < rlx_op_count(); i++) {
        char arity[8];
        if (rlx_op_arity(i) == RLX_OP_ARITY_VARIADIC) snprintf(arity, sizeof arity, "var");
        else snprintf(arity, sizeof arity, "%d", rlx_op_arity(i));
        printf("%-28s %-6s %s\n", rlx_op_name(i), arity, rlx_op_doc(i));
    }
    return 0;
}

static const char *yes_no(int v) { return v ? "yes" : "no"; }

/* Prints device i from rlx_device_get_info: what a user needs to choose a
 * device and what the GPU kernels will use on it. */
static void print_device(const rlx_device_info *d) {
    if (d->backend == RLX_BACKEND_CPU) {
        printf("cpu       %d cores (always available): %s\n", d->compute_units, d->name);
        return;
    }
    char units[64] = "not reported";
    if (d->compute_units) snprintf(units, sizeof units, "%d SMs, %d lanes each", d->compute_units, d->lanes_per_unit);
    printf("vulkan %d  %s\n", d->backend_index, d->name);
    printf("  type             %s\n", d->kind == RLX_DEVICE_SOFTWARE_GPU ? "software (runs on the CPU)" : "GPU");
    printf("  driver           %s (api %u.%u.%u)\n", d->driver, d->api_version >> 22, (d->api_version >> 12) & 0x3ffu,
           d->api_version & 0xfffu);
    printf("  subgroup size    %d\n", d->subgroup_size);
    printf("  fp16 arithmetic  %s; 16-bit storage %s; bf16 %s\n", yes_no(d->fp16), yes_no(d->storage16), yes_no(d->bf16));
    printf("  coop. matrix     NV %s; KHR %s\n", yes_no(d->cooperative_matrix_nv), yes_no(d->cooperative_matrix_khr));
    printf("  integer dot      %s%s%s\n", yes_no(d->integer_dot),
           d->integer_dot && d->integer_dot_accelerated ? ", 4x8-bit accelerated" : "",
           d->integer_dot && !d->integer_dot_used ? " (not used: RLX_VK_NO_INT_DOT or no subgroup shuffles)" : "");
    printf("  compute units    %s\n", units);
    printf("  buffer address   %s\n", yes_no(d->buffer_device_address));
    printf("  device memory    %.1f GiB\n", (double)d->device_local_bytes / 1073741824.0);
    printf("  usable by rlx    %s%s%s\n", yes_no(d->usable), d->usable ? "" : ", ", d->unusable_reason);
}

static int cmd_devices(void) {
    char no_vulkan[512] = "";
    if (rlx_vulkan_device_count() == 0) snprintf(no_vulkan, sizeof no_vulkan, "%s", rlx_last_error());
    int n = rlx_device_count();
    for (int i = 0; i < n; i++) {
        rlx_device_info d;
        if (rlx_device_get_info(i, &d) != RLX_OK) printf("device %d: %s\n", i, rlx_last_error());
        else print_device(&d);
    }
    if (n == 1) printf("vulkan    none: %s\n", no_vulkan);
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
    if (strcmp(cmd, "ops") == 0) return cmd_ops(argc - 2, argv + 2);
    if (strcmp(cmd, "devices") == 0) return cmd_devices();
    if (strcmp(cmd, "demo") == 0) return cmd_demo(argc - 2, argv + 2);
    if (strcmp(cmd, "generate") == 0) return cmd_generate(argc - 2, argv + 2);
    if (strcmp(cmd, "train") == 0) return cmd_train(argc - 2, argv + 2);
    if (strcmp(cmd, "inspect") == 0) return cmd_inspect(argc - 2, argv + 2);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "quantize") == 0) return cmd_quantize(argc - 2, argv + 2);
    if (strcmp(cmd, "dump") == 0) return cmd_dump(argc - 2, argv + 2);
    if (strcmp(cmd, "embed") == 0) return cmd_embed(argc - 2, argv + 2);
    if (strcmp(cmd, "classify") == 0) return cmd_classify(argc - 2, argv + 2);
    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) return usage(stdout);
    fprintf(stderr, "rlx: unknown command '%s'\n", cmd);
    return usage(stderr);
}
