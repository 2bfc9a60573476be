/*
 * llm_bench.c — prefill and decode speed of Llama-family decoders with
 * random weights in GGUF storage types, on the CPU or a GPU. Prints one table:
 * tokens/s, the bytes a decode step must read (weights + KV cache), and the
 * bandwidth floor those bytes imply at a measured memory bandwidth.
 *
 *   build/llm_bench [--device cpu|vulkan] [--model 1b|8b|tiny] [--quant q8_0|q4_k_m|q5_k_m|f16]
 *                   [--prompt N] [--decode N] [--ctx N] [--bandwidth GBps] [--report]
 *                   [--report-prefill] [--write-gguf PATH] [--isa avx512|avx2|scalar]
 *
 * --isa (or RLX_BENCH_ISA) limits the CPU backend's quantized and f32
 * kernels to that ISA (bench_cpu.h), to time the AVX2 path on an AVX-512
 * machine.
 *
 * Prefill is the median of 3 runs of the prompt (after a warm-up run), decode
 * the median step. --report / --report-prefill print the per-step report of
 * the decode / prefill specialization (with RLX_PROFILE=1: device times).
 *
 * --ctx sets the KV cache's rows (default prompt + decode + 8): a long cache
 * changes how decode attention splits its keys (docs/gpu.md), so it is a
 * different workload from a short one at the same position.
 *
 * --write-gguf also writes the model it runs (metadata, a SentencePiece
 * vocabulary of n_vocab synthetic pieces, the same weight bytes) to a GGUF
 * file, so another runtime can be timed on exactly these weights
 * (bench/cpu_baseline.sh runs llama.cpp on it). Each tensor is made when the
 * writer reaches it (bench_param_fill into the writer's buffer), so writing
 * costs one tensor of memory beyond the compiled model: the 8B fits next to
 * its own weights.
 *
 * The graph is the one rlx_model_load builds (models/llama.c), compiled with
 * the same options; weights are one valid quantized row repeated, so every
 * byte is real memory traffic without minutes of quantizing random data.
 */
#include "rlx.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include "models/llama.h"
#include "bench_params.h"
#include "bench_cpu.h"
#include "cpu/kernels/gemm.h"
#include "cpu/kernels/qdot.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct bench_cfg {
    const char *quant;
} bench_cfg;

/* q4_k_m / q5_k_m: llama.cpp-like mixes, Q6_K for the embeddings, output,
 * attn_v and ffn_down, Q4_K / Q5_K elsewhere. */
static rlx_dtype weight_type(void *user, const char *name) {
    const bench_cfg *c = user;
    if (strcmp(c->quant, "q8_0") == 0) return RLX_Q8_0;
    if (strcmp(c->quant, "f16") == 0) return RLX_F16;
    if (strcmp(c->quant, "f32") == 0) return RLX_F32;
    if (strstr(name, "token_embd") || strcmp(name, "output.weight") == 0 || strstr(name, "attn_v") || strstr(name, "ffn_down"))
        return RLX_Q6_K;
    return strcmp(c->quant, "q5_k_m") == 0 ? RLX_Q5_K : RLX_Q4_K;
}

static rlx_status eval(rlx_exec *e, const int32_t *tokens, int n, int pos) {
    int32_t p = pos, len = pos + n;
    rlx_tensor in[3] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 1, .dims = {n}, .data = (void *)tokens, .bytes = 4 * (size_t)n},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &p, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
    };
    return rlx_exec_run(e, in, 3);
}

/* One parameter for the writer: the bytes bench_fill_params gave it. */
typedef struct param_src {
    rlx_tensor info;
    int index;
} param_src;

/* gguf_fill_fn: the parameter's bytes, made again (they are deterministic)
 * straight into the writer's buffer, since the exec does not give them back. */
static rlx_status fill_param(void *ctx, void *dst, uint64_t size) {
    const param_src *p = ctx;
    (void)size;   /* the writer took info.bytes when the tensor was added */
    if (bench_param_fill(&p->info, p->index, dst) != 0)
        return rlx_fail(RLX_STATUS_INTERNAL, "llm_bench: cannot make the %llu bytes of %s", (unsigned long long)p->info.bytes,
                        p->info.name);
    return RLX_OK;
}

/* The model of e (hparams hp) as a llama GGUF at path: 0, or -1 (printed). */
static int write_gguf(const char *path, const llama_hparams *hp, rlx_exec *e) {
    gguf_writer *w = gguf_writer_new();
    int n = rlx_exec_param_count(e), nv = hp->n_vocab, rc = -1;
    param_src *src = calloc((size_t)n + 1, sizeof *src);
    const char **tok = calloc((size_t)nv, sizeof *tok);
    char *names = malloc((size_t)nv * 16);
    float *scores = calloc((size_t)nv, sizeof *scores);
    int32_t *types = calloc((size_t)nv, sizeof *types);
    if (!w || !src || !tok || !names || !scores || !types || nv < 260) goto done;
    gguf_set_str(w, "general.architecture", "llama");
    gguf_set_str(w, "general.name", "rlx llm_bench synthetic");
    gguf_set_u32(w, "llama.context_length", (uint32_t)hp->n_ctx_train);
    gguf_set_u32(w, "llama.embedding_length", (uint32_t)hp->n_embd);
    gguf_set_u32(w, "llama.block_count", (uint32_t)hp->n_layer);
    gguf_set_u32(w, "llama.feed_forward_length", (uint32_t)hp->n_ff);
    gguf_set_u32(w, "llama.attention.head_count", (uint32_t)hp->n_head);
    gguf_set_u32(w, "llama.attention.head_count_kv", (uint32_t)hp->n_head_kv);
    gguf_set_u32(w, "llama.rope.dimension_count", (uint32_t)hp->head_dim);
    gguf_set_f32(w, "llama.rope.freq_base", hp->rope_theta);
    gguf_set_f32(w, "llama.attention.layer_norm_rms_epsilon", hp->rms_eps);
    gguf_set_u32(w, "llama.vocab_size", (uint32_t)nv);
    /* <unk> <s> </s>, the 256 byte tokens, then distinct pieces */
    for (int i = 0; i < nv; i++) {
        char *t = names + 16 * (size_t)i;
        if (i < 3) snprintf(t, 16, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
        else if (i < 259) snprintf(t, 16, "<0x%02X>", i - 3);
        else snprintf(t, 16, "\xe2\x96\x81t%d", i);
        tok[i] = t;
        types[i] = i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1;
        scores[i] = i < 259 ? 0.0f : -(float)i;
    }
    gguf_set_str(w, "tokenizer.ggml.model", "llama");
    gguf_set_arr_str(w, "tokenizer.ggml.tokens", tok, (uint64_t)nv);
    gguf_set_arr(w, "tokenizer.ggml.scores", GGUF_VT_F32, scores, (uint64_t)nv);
    gguf_set_arr(w, "tokenizer.ggml.token_type", GGUF_VT_I32, types, (uint64_t)nv);
    gguf_set_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gguf_set_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gguf_set_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    for (int i = 0; i < n; i++) {
        param_src *p = &src[i];
        if (rlx_exec_param_info(e, i, &p->info) != RLX_OK) goto done;
        if (strncmp(p->info.name, "cache.", 6) == 0) continue;
        p->index = i;
        int64_t dims[4];
        for (int d = 0; d < p->info.rank; d++) dims[d] = p->info.dims[p->info.rank - 1 - d];   /* ggml order */
        if (gguf_add_tensor_fill(w, p->info.name, quant_type_of_dtype(p->info.dtype), (uint32_t)p->info.rank, dims,
                                 p->info.bytes, fill_param, p) != RLX_OK)
            goto done;
    }
    rc = gguf_write_file(w, path) == RLX_OK ? 0 : -1;
done:
    if (rc) fprintf(stderr, "llm_bench: writing %s: %s\n", path, rlx_last_error());
    free(src);
    free(tok);
    free(names);
    free(scores);
    free(types);
    gguf_writer_free(w);
    return rc;
}

int main(int argc, char **argv) {
    const char *device = "cpu", *model = "1b", *gguf_out = NULL, *isa_arg = NULL;
    bench_cfg cfg = {"q8_0"};
    int n_prompt = 128, n_decode = 32, n_ctx_opt = 0;
    double bandwidth = 0;
    int report = 0, report_prefill = 0;
    for (int i = 1; i < argc; i += 2) {
        if (!strcmp(argv[i], "--report")) { report = 1; i--; continue; }
        if (!strcmp(argv[i], "--report-prefill")) { report_prefill = 1; i--; continue; }
        if (i + 1 >= argc) { fprintf(stderr, "llm_bench: %s needs a value\n", argv[i]); return 2; }
        if (!strcmp(argv[i], "--device")) device = argv[i + 1];
        else if (!strcmp(argv[i], "--model")) model = argv[i + 1];
        else if (!strcmp(argv[i], "--quant")) cfg.quant = argv[i + 1];
        else if (!strcmp(argv[i], "--prompt")) n_prompt = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--decode")) n_decode = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--ctx")) n_ctx_opt = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--bandwidth")) bandwidth = atof(argv[i + 1]) * 1e9;
        else if (!strcmp(argv[i], "--write-gguf")) gguf_out = argv[i + 1];
        else if (!strcmp(argv[i], "--isa")) isa_arg = argv[i + 1];
        else { fprintf(stderr, "llm_bench: unknown option %s\n", argv[i]); return 2; }
    }
    if (isa_arg && bench_isa_limit(isa_arg) != 0) return 2;
    bench_isa isa = bench_cpu_isa();   /* --isa, else RLX_BENCH_ISA, else the CPU's best */
    if (isa != bench_isa_detected()) {
        const char *k = isa == BENCH_ISA_SCALAR ? "portable" : bench_isa_name(isa);
        if (qdot_force_isa(k) != 0 || rlx_sgemm_force_kernel(k) != 0) {
            fprintf(stderr, "llm_bench: ISA %s not available for the qdot or sgemm kernels\n", k);
            return 2;
        }
        fprintf(stderr, "llm_bench: CPU kernels limited to %s\n", k);
    }
    static const char *const quants[] = {"q8_0", "q4_k_m", "q5_k_m", "f16", "f32"};
    bool known = false;
    for (size_t k = 0; k < sizeof quants / sizeof quants[0]; k++) known = known || !strcmp(cfg.quant, quants[k]);
    if (!known) { fprintf(stderr, "llm_bench: unknown --quant %s (q8_0, q4_k_m, q5_k_m, f16, f32)\n", cfg.quant); return 2; }
    llama_hparams hp = {.arch = LLAMA_ARCH_LLAMA, .n_ctx_train = 8192, .rms_eps = 1e-5f, .rope_theta = 500000.0f,
                        .rope_style = RLX_ROPE_GPTJ};
    if (!strcmp(model, "8b")) {   /* Llama-3-8B shapes */
        hp.n_vocab = 128256; hp.n_embd = 4096; hp.n_layer = 32; hp.n_head = 32; hp.n_head_kv = 8; hp.n_ff = 14336; hp.head_dim = 128;
    } else if (!strcmp(model, "tiny")) {
        hp.n_vocab = 4096; hp.n_embd = 512; hp.n_layer = 4; hp.n_head = 8; hp.n_head_kv = 4; hp.n_ff = 1536; hp.head_dim = 64;
    } else {   /* Llama-3.2-1B shapes (tied embeddings) */
        hp.n_vocab = 128256; hp.n_embd = 2048; hp.n_layer = 16; hp.n_head = 32; hp.n_head_kv = 8; hp.n_ff = 8192; hp.head_dim = 64;
        hp.tied_embeddings = true;
    }
    if (n_prompt < 1 || n_decode < 1 || n_ctx_opt < 0) {
        fprintf(stderr, "llm_bench: --prompt and --decode need at least 1, --ctx at least 0\n");
        return 2;
    }
    int n_ctx = n_ctx_opt ? n_ctx_opt : n_prompt + n_decode + 8;
    if (n_ctx < n_prompt + n_decode) {
        fprintf(stderr, "llm_bench: --ctx %d cannot hold %d prompt + %d decode tokens\n", n_ctx, n_prompt, n_decode);
        return 2;
    }
    rlx_graph *g;
    if (llama_build_graph(&hp, n_ctx, LLAMA_LOGITS_LAST, weight_type, &cfg, &g) != RLX_OK) { fprintf(stderr, "%s\n", rlx_last_error()); return 1; }
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = strcmp(device, "cpu") == 0 ? RLX_BACKEND_CPU : RLX_BACKEND_VULKAN;
    if (o.backend == RLX_BACKEND_VULKAN && strcmp(device, "vulkan") != 0) o.device_name = device;
    rlx_exec *e;
    double t0 = now_s();
    if (rlx_compile(g, &o, &e) != RLX_OK) { fprintf(stderr, "compile: %s\n", rlx_last_error()); return 1; }
    double weight_bytes;
    if (bench_fill_params(e, &weight_bytes)) return 1;
    double load_s = now_s() - t0;
    if (gguf_out && write_gguf(gguf_out, &hp, e)) return 1;
    int32_t *tokens = malloc(sizeof(int32_t) * (size_t)n_prompt);
    for (int i = 0; i < n_prompt; i++) tokens[i] = (i * 7919) % hp.n_vocab;
    /* warm-up: compiles the prefill and decode specializations */
    if (eval(e, tokens, n_prompt, 0) != RLX_OK || eval(e, tokens, 1, n_prompt) != RLX_OK) {
        fprintf(stderr, "eval: %s\n", rlx_last_error());
        return 1;
    }
    /* prefill: the median of PREFILL_RUNS runs (the cache rows are rewritten alike) */
    enum { PREFILL_RUNS = 3 };
    double tps[PREFILL_RUNS];
    for (int r = 0; r < PREFILL_RUNS; r++) {
        double t1 = now_s();
        if (eval(e, tokens, n_prompt, 0) != RLX_OK) { fprintf(stderr, "eval: %s\n", rlx_last_error()); return 1; }
        tps[r] = now_s() - t1;
    }
    qsort(tps, PREFILL_RUNS, sizeof *tps, cmp_d);
    double tp = tps[PREFILL_RUNS / 2];
    if (report_prefill) {   /* per-step report of the prefill specialization */
        char *r = rlx_exec_report(e);
        if (r) fputs(r, stdout);
        free(r);
    }
    double *td = malloc(sizeof(double) * (size_t)n_decode), *tdev = malloc(sizeof(double) * (size_t)n_decode);
    if (!td || !tdev) { fprintf(stderr, "out of memory\n"); return 1; }
    for (int i = 0; i < n_decode; i++) {
        double t1 = now_s();
        if (eval(e, tokens + (i % n_prompt), 1, n_prompt + i) != RLX_OK) { fprintf(stderr, "eval: %s\n", rlx_last_error()); return 1; }
        td[i] = now_s() - t1;
        rlx_exec_stats ds;   /* GPU: the step's device time (first to last timestamp), -1 on the CPU */
        tdev[i] = rlx_exec_get_stats(e, &ds) == RLX_OK ? ds.device_seconds : -1.0;
    }
    if (report) {   /* per-step report of the decode specialization (the last one run) */
        char *r = rlx_exec_report(e);
        if (r) fputs(r, stdout);
        free(r);
    }
    qsort(td, (size_t)n_decode, sizeof *td, cmp_d);
    double t_dec = td[n_decode / 2];
    qsort(tdev, (size_t)n_decode, sizeof *tdev, cmp_d);
    double t_dev = tdev[n_decode / 2];   /* wall - device: submission, waits, the logits' copy to the caller */
    /* bytes a decode step reads: every 2-D weight (the embedding only by row,
     * unless tied to the output) and the KV cache up to the position */
    int64_t embd_dims[2] = {hp.n_vocab, hp.n_embd};
    double embd_bytes = (double)rlx_tensor_bytes(weight_type(&cfg, "token_embd.weight"), 2, embd_dims);
    double step_weights = hp.tied_embeddings ? weight_bytes : weight_bytes - embd_bytes;
    double kv = 2.0 * hp.n_layer * hp.n_head_kv * hp.head_dim * 4.0 * (n_prompt + n_decode / 2);
    double bytes = step_weights + kv;
    rlx_exec_stats s;
    rlx_exec_get_stats(e, &s);
    printf("| model | quant | device | weights GB | prefill %d tok/s | decode tok/s | GB/token | floor tok/s | %% of floor | load s |\n",
           n_prompt);
    printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    char floor_s[32] = "-", pct[32] = "-";
    if (bandwidth > 0) {
        snprintf(floor_s, sizeof floor_s, "%.1f", bandwidth / bytes);
        snprintf(pct, sizeof pct, "%.0f%%", 100.0 * (bytes / t_dec) / bandwidth);
    }
    printf("| %s | %s | %s | %.2f | %.1f | %.1f | %.3f | %s | %s | %.1f |\n", model, cfg.quant, s.device, weight_bytes / 1e9,
           n_prompt / tp, 1.0 / t_dec, bytes / 1e9, floor_s, pct, load_s);
    printf("RESULT %s %s decode_tok_s %.3f prefill_tok_s %.3f gb_per_token %.4f decode_steps %d decode_us %.1f device_us %.1f\n",
           model, cfg.quant, 1.0 / t_dec, n_prompt / tp, bytes / 1e9, s.steps, 1e6 * t_dec, t_dev >= 0 ? 1e6 * t_dev : -1.0);
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(tokens);
    free(td);
    free(tdev);
    return 0;
}
