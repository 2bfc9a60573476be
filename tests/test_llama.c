/*
 * test_llama.c — the Llama-family decoder graph with random weights, for each
 * architecture variant: prefill logits equal step-by-step decode logits (the
 * KV cache and the active extent at work), on the CPU and on Vulkan, and the
 * two backends agree.
 */
#include "vk_parity.h"
#include "tiny_model.h"
#include "models/llama.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { T = 6, CTX = 16 };

static llama_hparams small_hparams(llama_arch arch) {
    llama_hparams hp = {.arch = arch, .n_vocab = 37, .n_ctx_train = 64, .n_embd = 32, .n_layer = 2, .n_head = 4,
                        .n_head_kv = 2, .n_ff = 40, .head_dim = 8, .rms_eps = 1e-5f, .rope_theta = 10000.0f,
                        .rope_style = arch == LLAMA_ARCH_LLAMA ? RLX_ROPE_GPTJ : RLX_ROPE_NEOX,
                        .tied_embeddings = arch == LLAMA_ARCH_QWEN3, .qkv_bias = arch == LLAMA_ARCH_QWEN2,
                        .qk_norm = arch == LLAMA_ARCH_QWEN3};
    return hp;
}

/* Weights derived from each param's name, so two execs get the same model. */
static void set_random_weights(rlx_exec *e) {
    for (int i = 0; i < rlx_exec_param_count(e); i++) {
        rlx_tensor info;
        rlx_exec_param_info(e, i, &info);
        if (strncmp(info.name, "cache.", 6) == 0) continue;
        size_t n = info.bytes / 4;
        float *w = malloc(info.bytes);
        tiny_model_hash_fill(info.name, w, n, 0.25);
        rlx_exec_set_param_f32(e, info.name, w, n);
        free(w);
    }
}

static rlx_status eval(rlx_exec *e, const int32_t *tokens, int n, int pos, float *logits, int vocab) {
    int32_t p = pos, len = pos + n;
    rlx_tensor in[3] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 1, .dims = {n}, .data = (void *)tokens, .bytes = 4 * (size_t)n},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &p, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, 3);
    if (st == RLX_OK) st = rlx_exec_read_output(e, "logits", logits, sizeof(float) * (size_t)(n * vocab));
    return st;
}

static double rel_diff(const float *a, const float *b, int n) {
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* Prefill T tokens vs T decode steps; returns the prefill logits in out. */
static void prefill_vs_decode(llama_arch arch, rlx_backend backend, float *out) {
    llama_hparams hp = small_hparams(arch);
    rlx_graph *g;
    CHECK_OK(llama_build_graph(&hp, CTX, NULL, NULL, &g));
    rlx_compile_options o;
    if (backend == RLX_BACKEND_VULKAN) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
    rlx_exec *e;
    CHECK_OK(rlx_compile(g, &o, &e));
    rlx_graph_free(g);
    set_random_weights(e);
    int32_t tokens[T] = {1, 5, 36, 2, 2, 17};
    float prefill[T * 37], step[T * 37];
    CHECK_OK(eval(e, tokens, T, 0, prefill, hp.n_vocab));
    for (int t = 0; t < T; t++) CHECK_OK(eval(e, tokens + t, 1, t, step + t * hp.n_vocab, hp.n_vocab));
    double d = rel_diff(step, prefill, T * hp.n_vocab);
    rlx_exec_stats s;
    rlx_exec_get_stats(e, &s);
    rlx_exec_free(e);
    CHECK_MSG(d < 1e-5, "arch %d backend %d: prefill vs decode rel diff %.3g", arch, backend, d);
    CHECK_MSG(s.specializations == 2, "%d specializations (want 2: prefill and decode)", s.specializations);
    /* on the GPU every node, the KV cache writes and the active-extent attention included, is a kernel */
    CHECK_MSG(backend != RLX_BACKEND_VULKAN || s.host_steps == 0, "%d host steps on vulkan", s.host_steps);
    memcpy(out, prefill, sizeof prefill);
}

TEST(llama_prefill_equals_decode_cpu) {
    float logits[T * 37];
    for (int arch = 0; arch < 3; arch++) {
        prefill_vs_decode((llama_arch)arch, RLX_BACKEND_CPU, logits);
        if (harness_failed()) return;
    }
}

TEST(llama_vulkan_equals_cpu) {
    VKP_REQUIRE();
    float cpu[T * 37], vk[T * 37];
    for (int arch = 0; arch < 3; arch++) {
        prefill_vs_decode((llama_arch)arch, RLX_BACKEND_CPU, cpu);
        prefill_vs_decode((llama_arch)arch, RLX_BACKEND_VULKAN, vk);
        if (harness_failed()) return;
        double d = rel_diff(vk, cpu, T * 37);
        CHECK_MSG(d < 1e-4, "arch %d: vulkan vs cpu logits rel diff %.3g", arch, d);
    }
}

TEST(llama_context_limit) {
    llama_hparams hp = small_hparams(LLAMA_ARCH_LLAMA);
    rlx_graph *g;
    CHECK_OK(llama_build_graph(&hp, 4, NULL, NULL, &g));
    rlx_exec *e;
    CHECK_OK(rlx_compile(g, NULL, &e));
    rlx_graph_free(g);
    int32_t tokens[5] = {1, 2, 3, 4, 5};
    float logits[5 * 37];
    CHECK_STATUS(eval(e, tokens, 5, 0, logits, hp.n_vocab), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "context limit") != NULL);
    CHECK_OK(eval(e, tokens, 4, 0, logits, hp.n_vocab));
    rlx_exec_free(e);
}

TEST(llama_bad_hparams) {
    llama_hparams hp = small_hparams(LLAMA_ARCH_LLAMA);
    hp.n_head_kv = 3;
    rlx_graph *g = NULL;
    CHECK_STATUS(llama_build_graph(&hp, 8, NULL, NULL, &g), RLX_STATUS_FORMAT);
    CHECK(g == NULL);
}
