/*
 * test_llama.c — the Llama-family decoder graph with random weights, for each
 * architecture variant: prefill logits equal step-by-step decode logits (the
 * KV cache and the active extent at work), on the CPU and on Vulkan, and the
 * two backends agree; the graph and tiny GGUF files (through rlx_model)
 * against a float64 reference decoder; defaults for absent optional keys;
 * missing and misshapen tensors as FORMAT errors naming them.
 */
#include "vk_parity.h"
#include "tiny_model.h"
#include "ref64.h"
#include "models/llama.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include <stdio.h>
#include <unistd.h>
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

/* Runs n tokens at pos and reads the logits: n rows (LLAMA_LOGITS_ALL), or
 * one row when last_only (LLAMA_LOGITS_LAST); a larger output fails the read. */
static rlx_status eval_rows(rlx_exec *e, const int32_t *tokens, int n, int pos, float *logits, int vocab, bool last_only) {
    int32_t p = pos, len = pos + n;
    rlx_tensor in[3] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 1, .dims = {n}, .data = (void *)tokens, .bytes = 4 * (size_t)n},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &p, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, 3);
    if (st == RLX_OK) st = rlx_exec_read_output(e, "logits", logits, sizeof(float) * (size_t)((last_only ? 1 : n) * vocab));
    return st;
}

static rlx_status eval(rlx_exec *e, const int32_t *tokens, int n, int pos, float *logits, int vocab) {
    return eval_rows(e, tokens, n, pos, logits, vocab, false);
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
    CHECK_OK(llama_build_graph(&hp, CTX, LLAMA_LOGITS_ALL, NULL, NULL, &g));
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

    /* LLAMA_LOGITS_LAST (what generation builds): one row, the last of the
     * prompt's, and each decode step's own (same weights: hashed by name) */
    CHECK_OK(llama_build_graph(&hp, CTX, LLAMA_LOGITS_LAST, NULL, NULL, &g));
    rlx_exec *el;
    CHECK_OK(rlx_compile(g, &o, &el));
    rlx_graph_free(g);
    set_random_weights(el);
    float last[37];
    CHECK_OK(eval_rows(el, tokens, T - 1, 0, last, hp.n_vocab, true));
    double dl = rel_diff(last, prefill + (T - 2) * hp.n_vocab, hp.n_vocab);
    CHECK_OK(eval_rows(el, tokens + T - 1, 1, T - 1, last, hp.n_vocab, true));
    dl = fmax(dl, rel_diff(last, prefill + (T - 1) * hp.n_vocab, hp.n_vocab));
    rlx_tensor lo;
    CHECK_OK(rlx_exec_output(el, "logits", &lo));
    CHECK_MSG(lo.rank == 2 && lo.dims[0] == 1 && lo.dims[1] == hp.n_vocab, "last-row logits [%lld, %lld]",
              (long long)lo.dims[0], (long long)lo.dims[1]);
    rlx_exec_free(el);
    CHECK_MSG(dl < 1e-5, "arch %d backend %d: last-row logits vs all rows rel diff %.3g", arch, backend, dl);
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
    CHECK_OK(llama_build_graph(&hp, 4, LLAMA_LOGITS_ALL, NULL, NULL, &g));
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
    CHECK_STATUS(llama_build_graph(&hp, 8, LLAMA_LOGITS_ALL, NULL, NULL, &g), RLX_STATUS_FORMAT);
    CHECK(g == NULL);
    /* rotary dims: even and at most the head dim */
    int bad_rot[] = {-2, 3, 10};
    for (int i = 0; i < 3; i++) {
        hp = small_hparams(LLAMA_ARCH_QWEN2);
        hp.rope_dims = bad_rot[i];
        CHECK_STATUS(llama_build_graph(&hp, 8, LLAMA_LOGITS_ALL, NULL, NULL, &g), RLX_STATUS_FORMAT);
        CHECK(g == NULL && strstr(rlx_last_error(), "rotary dims"));
    }
    /* which logits rows: one of the two values, nothing else */
    hp = small_hparams(LLAMA_ARCH_LLAMA);
    CHECK_STATUS(llama_build_graph(&hp, 8, (llama_logits)7, NULL, NULL, &g), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(g == NULL && strstr(rlx_last_error(), "logits rows 7"));
}

/* ------------------------------------------------------------------------
 * A float64 reference decoder written from the Llama-family definitions (and
 * llama.cpp's GGUF conventions), not from the graph, out of the ref64 ops:
 * RMSNorm, q/k/v projections (+ biases), qwen3's per-head q/k RMSNorm before
 * RoPE, RoPE on the first n_rot dims (GGUF llama: adjacent pairs; qwen: NEOX
 * halves) with freq factors, causal GQA (query head h reads kv head
 * h / (H / Hkv)), output projection (+ bias), SwiGLU, final norm, untied or
 * tied output. Weights come from a getter: malloc'ed doubles in GGUF's
 * row-major layout ([out, in] for projections), NULL when the tensor is absent.
 */
typedef double *(*ref_get_fn)(void *user, const char *name, int64_t n);

typedef struct ref_cfg {
    int  vocab, embd, layers, heads, heads_kv, ff, hd, n_rot;
    bool neox, qkv_bias, out_bias, qk_norm, tied, freq_factors;
    double eps, theta;
} ref_cfg;

static double *ref_w(ref_get_fn get, void *u, const char *fmt, int layer, int64_t n, int *missing) {
    char name[96];
    snprintf(name, sizeof name, fmt, layer);
    double *w = get(u, name, n);
    if (!w) { printf("    reference: no tensor '%s' of %lld values\n", name, (long long)n); *missing = 1; }
    return w;
}

/* A layer's weights, in this order; optional ones absent from the config are NULL. */
enum { AN, WQ, WK, WV, WO, BQ, BK, BV, BO, QN, KN, FN, WG, WU, WD, N_LAYER_W };

static ref_shape shape2(int64_t rows, int64_t cols) { return ref_shape_make(2, (int64_t[]){rows, cols}); }

/* rows of n: RMSNorm by w (when w is not NULL), in place */
static void rms_rows(double *x, int64_t rows, int64_t n, const double *w, double eps) {
    if (w) ref_norm(1, x, shape2(rows, n), w, NULL, eps, x);
}

/* One attention block's share of the residual, o [S, E], from its input x [S, E]. */
static void ref_attention_block(const ref_cfg *c, const double *const *wt, const double *ff, const double *x, int S,
                                double *o) {
    const int E = c->embd, H = c->heads, Hkv = c->heads_kv, hd = c->hd, qd = H * hd, kd = Hkv * hd;
    const rlx_rope_style style = c->neox ? RLX_ROPE_NEOX : RLX_ROPE_GPTJ;
    double *h = malloc(sizeof(double) * (size_t)S * E);
    double *q = malloc(sizeof(double) * (size_t)S * qd), *qh = malloc(sizeof(double) * (size_t)S * qd);
    double *k = malloc(sizeof(double) * (size_t)S * kd), *kh = malloc(sizeof(double) * (size_t)S * kd);
    double *v = malloc(sizeof(double) * (size_t)S * kd), *vh = malloc(sizeof(double) * (size_t)S * kd);
    ref_norm(1, x, shape2(S, E), wt[AN], NULL, c->eps, h);
    ref_dense(h, S, E, wt[WQ], qd, wt[BQ], q);
    ref_dense(h, S, E, wt[WK], kd, wt[BK], k);
    ref_dense(h, S, E, wt[WV], kd, wt[BV], v);
    rms_rows(q, (int64_t)S * H, hd, wt[QN], c->eps);   /* per head, before RoPE */
    rms_rows(k, (int64_t)S * Hkv, hd, wt[KN], c->eps);
    ref_split_heads(q, S, H, hd, qh);
    ref_split_heads(k, S, Hkv, hd, kh);
    ref_split_heads(v, S, Hkv, hd, vh);
    ref_rope_ff(qh, 1, H, S, hd, 0, style, c->theta, c->n_rot, ff, q);   /* q, k: now head-major, rotated */
    ref_rope_ff(kh, 1, Hkv, S, hd, 0, style, c->theta, c->n_rot, ff, k);
    ref_attention(q, k, vh, 1, H, Hkv, S, S, hd, RLX_MASK_CAUSAL, NULL, ref_shape_make(0, NULL), 0, qh);
    ref_merge_heads(qh, S, H, hd, q);
    ref_dense(q, S, qd, wt[WO], E, wt[BO], o);
    free(h); free(q); free(qh); free(k); free(kh); free(v); free(vh);
}

/* logits [S, vocab] of tokens at positions 0..S-1; returns 0, or -1 when a weight is missing */
static int ref_decoder(const ref_cfg *c, ref_get_fn get, void *u, const int32_t *tok, int S, double *logits) {
    const int E = c->embd, qd = c->heads * c->hd, kd = c->heads_kv * c->hd;
    int miss = 0;
    double *emb = ref_w(get, u, "token_embd.weight", 0, (int64_t)c->vocab * E, &miss);
    double *ff = c->freq_factors ? ref_w(get, u, "rope_freqs.weight", 0, c->n_rot / 2, &miss) : NULL;
    double *x = calloc((size_t)S * E, sizeof *x), *h = calloc((size_t)S * E, sizeof *h), *o = calloc((size_t)S * E, sizeof *o);
    double *g = calloc((size_t)S * c->ff, sizeof *g), *up = calloc((size_t)S * c->ff, sizeof *up);
    int64_t *ids = calloc((size_t)S, sizeof *ids);
    for (int s = 0; s < S; s++) ids[s] = tok[s];
    if (emb) ref_gather_rows(emb, shape2(c->vocab, E), ids, S, x);
    for (int l = 0; l < c->layers && !miss; l++) {
        double *wt[N_LAYER_W] = {
            [AN] = ref_w(get, u, "blk.%d.attn_norm.weight", l, E, &miss),
            [WQ] = ref_w(get, u, "blk.%d.attn_q.weight", l, (int64_t)qd * E, &miss),
            [WK] = ref_w(get, u, "blk.%d.attn_k.weight", l, (int64_t)kd * E, &miss),
            [WV] = ref_w(get, u, "blk.%d.attn_v.weight", l, (int64_t)kd * E, &miss),
            [WO] = ref_w(get, u, "blk.%d.attn_output.weight", l, (int64_t)E * qd, &miss),
            [BQ] = c->qkv_bias ? ref_w(get, u, "blk.%d.attn_q.bias", l, qd, &miss) : NULL,
            [BK] = c->qkv_bias ? ref_w(get, u, "blk.%d.attn_k.bias", l, kd, &miss) : NULL,
            [BV] = c->qkv_bias ? ref_w(get, u, "blk.%d.attn_v.bias", l, kd, &miss) : NULL,
            [BO] = c->out_bias ? ref_w(get, u, "blk.%d.attn_output.bias", l, E, &miss) : NULL,
            [QN] = c->qk_norm ? ref_w(get, u, "blk.%d.attn_q_norm.weight", l, c->hd, &miss) : NULL,
            [KN] = c->qk_norm ? ref_w(get, u, "blk.%d.attn_k_norm.weight", l, c->hd, &miss) : NULL,
            [FN] = ref_w(get, u, "blk.%d.ffn_norm.weight", l, E, &miss),
            [WG] = ref_w(get, u, "blk.%d.ffn_gate.weight", l, (int64_t)c->ff * E, &miss),
            [WU] = ref_w(get, u, "blk.%d.ffn_up.weight", l, (int64_t)c->ff * E, &miss),
            [WD] = ref_w(get, u, "blk.%d.ffn_down.weight", l, (int64_t)E * c->ff, &miss),
        };
        if (!miss) {
            ref_attention_block(c, (const double *const *)wt, ff, x, S, o);
            for (size_t i = 0; i < (size_t)S * E; i++) x[i] += o[i];
            ref_norm(1, x, shape2(S, E), wt[FN], NULL, c->eps, h);
            ref_dense(h, S, E, wt[WG], c->ff, NULL, g);
            ref_dense(h, S, E, wt[WU], c->ff, NULL, up);
            ref_swiglu(g, up, (int64_t)S * c->ff, g);
            ref_dense(g, S, c->ff, wt[WD], E, NULL, o);
            for (size_t i = 0; i < (size_t)S * E; i++) x[i] += o[i];
        }
        for (int i = 0; i < N_LAYER_W; i++) free(wt[i]);
    }
    double *on = miss ? NULL : ref_w(get, u, "output_norm.weight", 0, E, &miss);
    double *wout = miss ? NULL : c->tied ? emb : ref_w(get, u, "output.weight", 0, (int64_t)c->vocab * E, &miss);
    if (!miss) {
        ref_norm(1, x, shape2(S, E), on, NULL, c->eps, h);
        ref_dense(h, S, E, wout, c->vocab, NULL, logits);
    }
    if (wout != emb) free(wout);
    free(on); free(emb); free(ff); free(x); free(h); free(o); free(g); free(up); free(ids);
    return miss ? -1 : 0;
}

static double rel_diff64(const float *a, const double *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(a[i])) return INFINITY;
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* Graph params carry the hash weights of set_random_weights. */
static double *hash_get(void *user, const char *name, int64_t n) {
    (void)user;
    float *f = malloc(sizeof(float) * (size_t)n);
    double *d = malloc(sizeof(double) * (size_t)n);
    tiny_model_hash_fill(name, f, (size_t)n, 0.25);
    for (int64_t i = 0; i < n; i++) d[i] = f[i];
    free(f);
    return d;
}

static ref_cfg cfg_of_hparams(const llama_hparams *hp) {
    ref_cfg c = {.vocab = hp->n_vocab, .embd = hp->n_embd, .layers = hp->n_layer, .heads = hp->n_head,
                 .heads_kv = hp->n_head_kv, .ff = hp->n_ff, .hd = hp->head_dim,
                 .n_rot = hp->rope_dims ? hp->rope_dims : hp->head_dim, .neox = hp->rope_style == RLX_ROPE_NEOX,
                 .qkv_bias = hp->qkv_bias, .out_bias = hp->out_bias, .qk_norm = hp->qk_norm,
                 .tied = hp->tied_embeddings, .eps = hp->rms_eps, .theta = hp->rope_theta};
    return c;
}

/* The graph against the reference, per architecture, with a head dim that
 * is not embd / heads (qwen3), partial rotary dims, and llama's optional
 * attention biases. */
TEST(llama_graph_matches_float64_reference) {
    struct { llama_arch arch; int head_dim, rope_dims; bool bias; } cases[] = {
        {LLAMA_ARCH_LLAMA, 8, 0, false}, {LLAMA_ARCH_QWEN2, 8, 0, false}, {LLAMA_ARCH_QWEN3, 8, 0, false},
        {LLAMA_ARCH_QWEN3, 16, 0, false}, {LLAMA_ARCH_LLAMA, 8, 4, false}, {LLAMA_ARCH_QWEN2, 16, 6, false},
        {LLAMA_ARCH_LLAMA, 8, 0, true},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof *cases; ci++) {
        llama_hparams hp = small_hparams(cases[ci].arch);
        hp.head_dim = cases[ci].head_dim;
        hp.rope_dims = cases[ci].rope_dims;
        if (cases[ci].bias) hp.qkv_bias = hp.out_bias = true;
        int32_t tokens[T] = {1, 5, 36, 2, 2, 17};
        double want[T * 37];
        ref_cfg c = cfg_of_hparams(&hp);
        CHECK(ref_decoder(&c, hash_get, NULL, tokens, T, want) == 0);
        for (int vk = 0; vk < 2; vk++) {   /* the CPU, then Vulkan when present */
            if (vk && !vkp_available()) break;
            rlx_graph *g;
            CHECK_OK(llama_build_graph(&hp, CTX, LLAMA_LOGITS_ALL, NULL, NULL, &g));
            rlx_compile_options o;
            if (vk) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
            rlx_exec *e;
            rlx_status st = rlx_compile(g, &o, &e);
            rlx_graph_free(g);
            CHECK_OK(st);
            set_random_weights(e);
            float got[T * 37], step[T * 37];
            st = eval(e, tokens, T, 0, got, hp.n_vocab);   /* prefill, then the same tokens one by one */
            for (int t = 0; t < T && st == RLX_OK; t++) st = eval(e, tokens + t, 1, t, step + t * hp.n_vocab, hp.n_vocab);
            rlx_exec_free(e);
            CHECK_OK(st);
            double d = fmax(rel_diff64(got, want, (size_t)T * 37), rel_diff64(step, want, (size_t)T * 37));
            CHECK_MSG(d < (vk ? 1e-4 : 1e-5), "case %zu (arch %d, head dim %d, rope dims %d, bias %d) on %s: vs float64 reference %.3g",
                      ci, cases[ci].arch, cases[ci].head_dim, cases[ci].rope_dims, cases[ci].bias, vk ? "vulkan" : "cpu", d);
        }
    }
}

/* Weights of a GGUF file, decoded to doubles (as stored: GGUF's row-major). */
static double *gguf_get(void *user, const char *name, int64_t n) {
    const gguf_tensor *t = gguf_find_tensor(user, name);
    if (!t || t->n_elements != n) return NULL;
    float *f = malloc(sizeof(float) * (size_t)n);
    double *d = malloc(sizeof(double) * (size_t)n);
    if (quant_dequantize_row(t->type, t->data, f, n) != RLX_OK) { free(f); free(d); return NULL; }
    for (int64_t i = 0; i < n; i++) d[i] = f[i];
    free(f);
    return d;
}

/* A tiny GGUF file loaded by rlx_model against the reference reading the
 * same file, with the hyperparameters stated here from the GGUF keys the
 * file has (so the loader's reading of metadata is under test too). */
static bool listed(const char *const *names, const char *name) {
    for (; names && *names; names++)
        if (strcmp(*names, name) == 0) return true;
    return false;
}

/* A copy of a GGUF file without the keys and tensors named in drop
 * (NULL-terminated), with f32 tensor `swap`'s two dims swapped and f32
 * tensor `shrink` one row shorter. */
typedef struct llama_edit { const char *const *drop; const char *swap, *shrink; } llama_edit;

static rlx_status edit_kv(void *user, gguf_writer *w, const gguf_file *f, int64_t kv, bool *keep) {
    (void)w;
    *keep = !listed(((const llama_edit *)user)->drop, gguf_kv_key(f, kv));
    return RLX_OK;
}

static rlx_status edit_tensor(void *user, gguf_tensor *t, bool *keep) {
    const llama_edit *e = user;
    *keep = !listed(e->drop, t->name);
    if (e->swap && strcmp(t->name, e->swap) == 0) { int64_t d0 = t->dims[0]; t->dims[0] = t->dims[1]; t->dims[1] = d0; }
    if (e->shrink && strcmp(t->name, e->shrink) == 0) { t->dims[1]--; t->size -= (uint64_t)t->dims[0] * 4; }
    return RLX_OK;
}

/* Returns 0 on success. */
static int gguf_rewrite(const char *src, const char *dst, const char *const *drop, const char *swap, const char *shrink) {
    llama_edit e = {drop, swap, shrink};
    tiny_gguf_edit edit = {.user = &e, .kv = edit_kv, .tensor = edit_tensor};
    return tiny_gguf_rewrite(src, dst, &edit) == RLX_OK ? 0 : -1;
}

static void check_file_vs_reference_without(const tiny_model_spec *spec, const char *what, const char *const *drop_keys) {
    char path[128], orig[160];
    tiny_model_tmp_path(path, sizeof path, "llref");
    snprintf(orig, sizeof orig, "%s.orig.gguf", path);
    CHECK_MSG(tiny_model_write(spec, drop_keys ? orig : path) == 0, "%s: write", what);
    if (drop_keys) {   /* not in place: the source is mapped while the copy is written */
        int rc = gguf_rewrite(orig, path, drop_keys, NULL, NULL);
        unlink(orig);
        CHECK_MSG(rc == 0, "%s: rewrite", what);
    }
    /* exact decoding, as the reference decodes the same bytes (weights kept in
     * their block type: dequant_matmul, a quantized gather, tied output) */
    rlx_model *m = tiny_model_load_quant(path, RLX_BACKEND_CPU, 1);
    gguf_file *f = NULL;
    rlx_status st = gguf_open(path, &f);
    unlink(path);
    if (st != RLX_OK || !m) { rlx_model_free(m); gguf_close(f); CHECK_MSG(0, "%s: load", what); }
    for (const char *const *k = drop_keys; k && *k; k++)   /* their values are the defaults: only absence tells */
        if (gguf_find_key(f, *k) >= 0) { rlx_model_free(m); gguf_close(f); CHECK_MSG(0, "%s: '%s' still there", what, *k); }
    const bool llama = strcmp(spec->arch, "llama") == 0, qwen2 = strcmp(spec->arch, "qwen2") == 0;
    const int hd = spec->head_dim ? spec->head_dim : spec->n_embd / spec->n_head;
    rlx_model_info info;
    rlx_model_get_info(m, &info);
    ref_cfg c = {.vocab = info.n_vocab, .embd = spec->n_embd, .layers = spec->n_layer, .heads = spec->n_head,
                 .heads_kv = spec->n_head_kv, .ff = spec->n_ff, .hd = hd, .n_rot = spec->rope_dims ? spec->rope_dims : hd,
                 .neox = !llama, .qkv_bias = qwen2 || spec->attn_bias, .out_bias = spec->attn_bias,
                 .qk_norm = strcmp(spec->arch, "qwen3") == 0, .tied = strcmp(spec->arch, "qwen3") == 0,
                 .freq_factors = spec->rope_freqs != 0, .eps = 1e-5, .theta = 10000.0};
    int32_t tokens[T] = {1, 298, 262, 5, 290, 2};
    const float *lg = NULL;
    st = rlx_model_eval(m, tokens, T, &lg);
    float got[512];
    if (st == RLX_OK) memcpy(got, lg, sizeof(float) * (size_t)info.n_vocab);
    double *want = malloc(sizeof(double) * (size_t)T * (size_t)info.n_vocab);
    int rc = ref_decoder(&c, gguf_get, f, tokens, T, want);
    gguf_close(f);
    rlx_model_free(m);
    double d = st == RLX_OK && rc == 0 ? rel_diff64(got, want + (size_t)(T - 1) * (size_t)info.n_vocab, (size_t)info.n_vocab) : INFINITY;
    free(want);
    CHECK_MSG(st == RLX_OK, "%s: eval: %s", what, rlx_last_error());
    CHECK_MSG(d < 1e-5, "%s: last-token logits vs float64 reference %.3g", what, d);
}

static void check_file_vs_reference(const tiny_model_spec *spec, const char *what) {
    check_file_vs_reference_without(spec, what, NULL);
}

TEST(llama_gguf_files_match_float64_reference) {
    tiny_model_spec s;
    tiny_model_spec_init(&s);
    s.rope_freqs = 1;
    check_file_vs_reference(&s, "llama + rope_freqs");
    if (harness_failed()) return;
    tiny_model_spec_init(&s);
    s.arch = "qwen2";
    check_file_vs_reference(&s, "qwen2");
    if (harness_failed()) return;
    tiny_model_spec_init(&s);
    s.arch = "qwen3";
    s.head_dim = 32;   /* key_length != embd / heads, as in Qwen3 */
    check_file_vs_reference(&s, "qwen3, head dim 32");
    if (harness_failed()) return;
    tiny_model_spec_init(&s);
    s.rope_dims = 8;   /* rope.dimension_count < head dim: the rest passes */
    s.rope_freqs = 1;
    check_file_vs_reference(&s, "llama, 8 rotary dims of 16");
    if (harness_failed()) return;
    tiny_model_spec_init(&s);
    s.arch = "qwen2";
    s.rope_dims = 12;
    check_file_vs_reference(&s, "qwen2, 12 rotary dims of 16");
    if (harness_failed()) return;
    tiny_model_spec_init(&s);
    s.attn_bias = 1;   /* llama.cpp's optional llama biases: attn_q/k/v/output.bias */
    check_file_vs_reference(&s, "llama with attention biases");
    if (harness_failed()) return;
    /* weights kept in their block type (check_file_vs_reference decodes them exactly) */
    tiny_model_spec_init(&s);
    s.weight_type = QTYPE_Q8_0;
    s.rope_freqs = 1;
    check_file_vs_reference(&s, "llama Q8_0");
    tiny_model_spec_init(&s);
    s.arch = "qwen3";
    s.weight_type = QTYPE_Q4_K;
    s.n_embd = 256;
    s.n_ff = 512;
    s.head_dim = 128;   /* not embd / heads = 64; q rows 512, o rows of 512 (K-quant rows: multiples of 256) */
    if (!harness_failed()) check_file_vs_reference(&s, "qwen3 Q4_K, head dim 128");
}

/* Optional metadata takes llama.cpp's defaults: no head_count_kv means as
 * many KV heads as heads (the file's weights are MHA here), no rms epsilon
 * 1e-5, no freq_base 10000 (the values the reference uses). */
TEST(llama_gguf_optional_keys_default) {
    tiny_model_spec s;
    tiny_model_spec_init(&s);
    s.n_head_kv = s.n_head;
    const char *drop[] = {"llama.attention.head_count_kv", "llama.attention.layer_norm_rms_epsilon", "llama.rope.freq_base", NULL};
    check_file_vs_reference_without(&s, "llama without optional keys", drop);
    if (harness_failed()) return;
    s.arch = "qwen3";
    s.head_dim = 32;
    const char *drop3[] = {"qwen3.attention.head_count_kv", "qwen3.attention.layer_norm_rms_epsilon", "qwen3.rope.freq_base", NULL};
    check_file_vs_reference_without(&s, "qwen3 without optional keys", drop3);
}

/* A missing tensor, a tensor of the wrong shape (same element count,
 * transposed) or of the wrong size, and bad rotary dims are FORMAT errors
 * naming the culprit, never a crash. */
TEST(llama_gguf_missing_and_misshapen_tensors) {
    tiny_model_spec s;
    tiny_model_spec_init(&s);
    s.n_ff = 80;   /* ffn_down [64, 80]: transposing it keeps its element count */
    char path[128], bad[160];
    tiny_model_tmp_path(path, sizeof path, "llbad");
    snprintf(bad, sizeof bad, "%s.bad.gguf", path);
    CHECK(tiny_model_write(&s, path) == 0);
    struct { const char *drop, *swap, *shrink, *want; } cases[] = {
        {"blk.1.ffn_up.weight", NULL, NULL, "blk.1.ffn_up.weight"},
        {"output_norm.weight", NULL, NULL, "output_norm.weight"},
        {NULL, "blk.0.ffn_down.weight", NULL, "blk.0.ffn_down.weight"},
        {NULL, NULL, "blk.1.attn_k.weight", "blk.1.attn_k.weight"},
        {NULL, NULL, "token_embd.weight", "token_embd.weight"},   /* one row fewer than the tokenizer's tokens */
        {NULL, NULL, "output.weight", "output.weight"},           /* one row fewer than token_embd */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *drop[] = {cases[i].drop, NULL};
        CHECK(gguf_rewrite(path, bad, drop, cases[i].swap, cases[i].shrink) == 0);
        rlx_model *m = NULL;
        rlx_status st = rlx_model_load(bad, NULL, &m);
        unlink(bad);
        if (st != RLX_STATUS_FORMAT || m || !strstr(rlx_last_error(), cases[i].want)) unlink(path);
        CHECK_MSG(st == RLX_STATUS_FORMAT && m == NULL && strstr(rlx_last_error(), cases[i].want),
                  "case %zu: %s, '%s' (want FORMAT naming %s)", i, rlx_status_name(st), rlx_last_error(), cases[i].want);
    }
    unlink(path);
    /* rope.dimension_count above the head dim, or odd */
    int rot[] = {18, 7};
    for (int i = 0; i < 2; i++) {
        tiny_model_spec_init(&s);
        s.rope_dims = rot[i];
        CHECK(tiny_model_write(&s, path) == 0);
        rlx_model *m = NULL;
        rlx_status st = rlx_model_load(path, NULL, &m);
        unlink(path);
        CHECK_MSG(st == RLX_STATUS_FORMAT && m == NULL && strstr(rlx_last_error(), "rotary dims"), "rope dims %d: %s, '%s'",
                  rot[i], rlx_status_name(st), rlx_last_error());
    }
}
