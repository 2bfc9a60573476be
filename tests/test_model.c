/*
 * test_model.c — rlx_model end to end on tiny GGUF files the test writes:
 * load (F32 and quantized weights, llama / qwen2 / qwen3), prefill logits
 * equal step-by-step decode logits, greedy generation is deterministic and
 * identical on the CPU and on Vulkan, the context limit, bad files, and
 * `rlx generate` argument errors.
 */
#include "vk_parity.h"
#include "tiny_model.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static int collect(const char *text, size_t len, int32_t id, void *user) {
    (void)text; (void)len;
    int32_t *ids = user;
    if (id >= 0 && ids[0] < 63) ids[1 + ids[0]++] = id;
    return 0;
}

static void greedy(rlx_model *m, const char *prompt, int n, int32_t *out /* [64]: count, ids */) {
    rlx_sampling s;
    rlx_sampling_init(&s);
    s.temperature = 0;
    out[0] = 0;
    rlx_generate_stats st;
    rlx_status r = rlx_model_generate(m, prompt, n, &s, collect, out, &st);
    if (r != RLX_OK) printf("    generate: %s\n", rlx_last_error());
}

/* The CPU models decode weights exactly (compile.exact_quant): the fast
 * path quantizes activations to 8 bits (about 1e-3 relative), which would
 * blur comparisons at 1e-5 and could flip near-tied greedy choices between
 * backends. */

TEST(model_prefill_equals_decode_each_arch_and_type) {
    const char *archs[] = {"llama", "qwen2", "qwen3"};
    uint32_t types[] = {QTYPE_F32, QTYPE_F16, QTYPE_Q8_0, QTYPE_Q4_K};
    for (int a = 0; a < 3; a++) {
        for (int t = 0; t < 4; t++) {
            if (a > 0 && t > 0 && t != 2) continue;   /* keep the matrix small */
            tiny_model_spec spec;
            tiny_model_spec_init(&spec);
            spec.arch = archs[a];
            spec.weight_type = types[t];
            spec.rope_freqs = a == 0 && t == 2;   /* llama3-style frequency factors once */
            if (types[t] == QTYPE_Q4_K) {   /* K-quant rows are multiples of 256 */
                spec.n_embd = 256;
                spec.n_ff = 512;
            }
            char path[128];
            tiny_model_tmp_path(path, sizeof path, "prefill");
            CHECK_MSG(tiny_model_write(&spec, path) == 0, "write %s", rlx_last_error());
            rlx_model *m = tiny_model_load_quant(path, RLX_BACKEND_CPU, 1);
            unlink(path);
            CHECK(m != NULL);
            rlx_model_info info;
            CHECK_OK(rlx_model_get_info(m, &info));
            int32_t ids[64];
            int n = 0;
            CHECK_OK(rlx_model_tokenize(m, "the cat sat on the mat", 1, ids, 64, &n));
            CHECK(n >= 4 && ids[0] == info.bos);
            float *prefill = malloc(sizeof(float) * (size_t)info.n_vocab);
            const float *lg;
            CHECK_OK(rlx_model_eval(m, ids, n, &lg));
            memcpy(prefill, lg, sizeof(float) * (size_t)info.n_vocab);
            CHECK_OK(rlx_model_reset(m));
            for (int i = 0; i < n; i++) CHECK_OK(rlx_model_eval(m, ids + i, 1, &lg));
            double num = 0, den = 0;
            for (int i = 0; i < info.n_vocab; i++) {
                num += ((double)lg[i] - prefill[i]) * ((double)lg[i] - prefill[i]);
                den += (double)prefill[i] * prefill[i];
            }
            free(prefill);
            rlx_model_free(m);
            CHECK_MSG(sqrt(num / den) < 1e-5, "%s %s: prefill vs decode %.3g", archs[a], qtype_name(types[t]), sqrt(num / den));
        }
    }
}

TEST(model_greedy_generation_cpu_equals_vulkan) {
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    spec.weight_type = QTYPE_Q8_0;
    spec.rope_freqs = 1;
    char path[128];
    tiny_model_tmp_path(path, sizeof path, "gen");
    CHECK(tiny_model_write(&spec, path) == 0);
    rlx_model *m = tiny_model_load_quant(path, RLX_BACKEND_CPU, 1);
    CHECK(m != NULL);
    int32_t a[64], b[64];
    greedy(m, "hello world", 20, a);
    greedy(m, "hello world", 20, b);
    CHECK_MSG(a[0] > 0, "no tokens generated");
    CHECK(a[0] == b[0] && memcmp(a, b, sizeof(int32_t) * (size_t)(a[0] + 1)) == 0);   /* deterministic */
    /* sampling with a seed is reproducible too */
    rlx_sampling s;
    rlx_sampling_init(&s);
    s.seed = 42;
    int32_t c[64] = {0}, d[64] = {0};
    CHECK_OK(rlx_model_generate(m, "the dog", 12, &s, collect, c, NULL));
    CHECK_OK(rlx_model_generate(m, "the dog", 12, &s, collect, d, NULL));
    CHECK(c[0] == d[0] && memcmp(c, d, sizeof(int32_t) * (size_t)(c[0] + 1)) == 0);
    /* an empty prompt starts from BOS */
    int32_t e[64];
    greedy(m, "", 5, e);
    CHECK(e[0] > 0);
    rlx_model_free(m);
    if (vkp_available()) {
        rlx_model *v = tiny_model_load(path, RLX_BACKEND_VULKAN);
        CHECK(v != NULL);
        int32_t g[64];
        greedy(v, "hello world", 20, g);
        rlx_model_info info;
        rlx_model_get_info(v, &info);
        rlx_model_free(v);
        CHECK(strcmp(info.backend, "vulkan") == 0);
        CHECK_MSG(g[0] == a[0] && memcmp(g, a, sizeof(int32_t) * (size_t)(a[0] + 1)) == 0,
                  "vulkan greedy tokens differ from the cpu's");
    }
    unlink(path);
}

TEST(model_context_limit_and_errors) {
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    char path[128];
    tiny_model_tmp_path(path, sizeof path, "ctx");
    CHECK(tiny_model_write(&spec, path) == 0);
    rlx_model_options o;
    rlx_model_options_init(&o);
    o.n_ctx = 8;
    rlx_model *m = NULL;
    CHECK_OK(rlx_model_load(path, &o, &m));
    int32_t ids[10] = {1, 260, 261, 262, 263, 264, 265, 266, 267, 268};
    const float *lg;
    CHECK_STATUS(rlx_model_eval(m, ids, 10, &lg), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "context limit"));
    CHECK_OK(rlx_model_eval(m, ids, 8, &lg));
    CHECK_STATUS(rlx_model_eval(m, ids, 1, &lg), RLX_STATUS_INVALID_ARGUMENT);
    /* a count that overflows pos + n is the context limit, not a read past ids */
    CHECK_OK(rlx_model_reset(m));
    CHECK_OK(rlx_model_eval(m, ids, 1, &lg));
    CHECK_STATUS(rlx_model_eval(m, ids, INT_MAX, &lg), RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "context limit"));
    int32_t bad = 100000;
    CHECK_OK(rlx_model_reset(m));
    CHECK_STATUS(rlx_model_eval(m, &bad, 1, &lg), RLX_STATUS_INVALID_ARGUMENT);
    /* generation that runs into the cache's end stops with the context limit (or at EOS first) */
    rlx_sampling gs;
    rlx_sampling_init(&gs);
    gs.temperature = 0;
    rlx_generate_stats gst;
    rlx_status gr = rlx_model_generate(m, "the cat", 50, &gs, NULL, NULL, &gst);
    CHECK_MSG(gst.stopped_at_eos ? gr == RLX_OK : gr == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "context limit"),
              "generate past n_ctx: %s, '%s'", rlx_status_name(gr), rlx_last_error());
    CHECK(gst.prompt_tokens + gst.generated_tokens <= 8 + 1);   /* the last sampled token needs no cache row */
    /* -n 0 evaluates the prompt and samples nothing */
    CHECK_OK(rlx_model_generate(m, "the cat", 0, &gs, NULL, NULL, &gst));
    CHECK(gst.generated_tokens == 0 && gst.prompt_tokens > 0);
    rlx_model_free(m);
    /* a file that is not a model */
    FILE *f = fopen(path, "wb");
    fputs("GGUF but not really", f);
    fclose(f);
    CHECK_STATUS(rlx_model_load(path, NULL, &m), RLX_STATUS_FORMAT);
    CHECK(m == NULL);
    unlink(path);
    /* a per-token tokenizer array of the wrong length */
    spec.short_scores = 1;
    CHECK(tiny_model_write(&spec, path) == 0);
    CHECK_STATUS(rlx_model_load(path, NULL, &m), RLX_STATUS_FORMAT);
    CHECK(strstr(rlx_last_error(), "tokenizer.ggml.scores") != NULL && m == NULL);
    unlink(path);
    CHECK_STATUS(rlx_model_load("/nonexistent/model.gguf", NULL, &m), RLX_STATUS_IO);
    CHECK_STATUS(rlx_model_load(NULL, NULL, &m), RLX_STATUS_INVALID_ARGUMENT);
}

/* Writes the default tiny model (context_length 128) to a temp path named
 * by tag; false if it could not be written. */
static bool default_model(char *path, size_t n, const char *tag) {
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    tiny_model_tmp_path(path, n, tag);
    return tiny_model_write(&spec, path) == 0;
}

/* default_model for a CLI test; returns the rlx binary to run, or NULL. */
static const char *cli_model(char *path, size_t n, const char *tag) {
    return default_model(path, n, tag) ? test_program("RLX_CLI", "build/rlx") : NULL;
}

TEST(model_cli_generate) {
    char path[128], cmd[512], out[8192];
    const char *rlx = cli_model(path, sizeof path, "cli");
    CHECK(rlx != NULL);
    snprintf(cmd, sizeof cmd, "%s generate -m %s -p 'the cat' -n 8 --temp 0 --device cpu 2>&1", rlx, path);
    int st = test_run_command(cmd, out, sizeof out);
    snprintf(cmd, sizeof cmd, "%s generate -m /nonexistent.gguf 2>/dev/null", rlx);
    int bad = system(cmd);
    unlink(path);
    CHECK_MSG(st == 0, "rlx generate failed: %s", out);
    CHECK_MSG(strstr(out, "generation: 8 tokens") || strstr(out, "stopped at EOS"), "output: %s", out);
    CHECK(strstr(out, "tok/s") != NULL);
    CHECK(bad != 0);
}

/* Bad arguments exit non-zero with a message naming the problem; -n 0 and a
 * prompt past --ctx behave as documented. */
TEST(model_cli_generate_arguments) {
    char path[128], cmd[768], out[8192];
    const char *rlx = cli_model(path, sizeof path, "cliargs");
    CHECK(rlx != NULL);
    struct { const char *args, *msg; int rc; } cases[] = {
        {"-n ''", "-n needs an integer", 2},          /* empty is not 0 */
        {"-n 2.5", "-n needs an integer", 2},         /* no silent truncation */
        {"-n -1", "-n needs an integer", 2},
        {"--ctx 0", "--ctx needs an integer", 2},
        {"--ctx -4", "--ctx needs an integer", 2},
        {"--temp abc", "--temp needs a number", 2},
        {"--top-k 1.5", "--top-k needs an integer", 2},
        {"--seed 1e3", "--seed needs an integer", 2},
        {"--seed -1", "--seed needs an integer", 2},
        {"--seed ' -1'", "--seed needs an integer", 2},   /* strtoull would skip the space and wrap */
        {"--bogus 1", "unknown option '--bogus'", 2},
        {"--bogus", "unknown option '--bogus'", 2},   /* unknown, not 'needs a value' */
        {"-n", "-n needs a value", 2},
        {"-p", "-p needs a value", 2},
        {"--ctx 4 -p 'the cat sat on the mat and the dog'", "context limit", 1},
        {"-n 0 -p 'the cat'", "generation: 0 tokens", 0},
        {"-n 3 --seed 18446744073709551615 --temp 0 -p 'the cat'", "tok/s", 0},   /* the largest 64-bit seed */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(cmd, sizeof cmd, "%s generate -m %s --device cpu %s 2>&1", rlx, path, cases[i].args);
        int st = test_run_command(cmd, out, sizeof out);
        if (st != cases[i].rc || !strstr(out, cases[i].msg)) unlink(path);
        CHECK_MSG(st == cases[i].rc && strstr(out, cases[i].msg), "'%s': exit %d (want %d), output: %s", cases[i].args, st,
                  cases[i].rc, out);
    }
    unlink(path);
}

TEST(model_readme_example_runs) {
    const char *exe = test_program("RLX_README_MODEL_EXAMPLE", "build/readme_model_example");
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    char path[128], cmd[512], out[8192];
    tiny_model_tmp_path(path, sizeof path, "readme");
    CHECK(tiny_model_write(&spec, path) == 0);
    snprintf(cmd, sizeof cmd, "RLX_DEVICE=cpu %s %s 'hello world' 2>&1", exe, path);
    int st = test_run_command(cmd, out, sizeof out);
    unlink(path);
    CHECK_MSG(st == 0, "%s: %s", exe, out);
    CHECK_MSG(strstr(out, " tokens, ") && strstr(out, "tok/s"), "output: %s", out);
}

/* Counts the warnings whose text holds `needle` (a log callback's user data). */
typedef struct warn_count { const char *needle; int n; } warn_count;
static void count_warnings(rlx_log_level level, const char *message, void *user) {
    warn_count *w = user;
    if (level == RLX_LOG_WARN && strstr(message, w->needle)) w->n++;
}

/* Copies the tiny model at src to dst with the vocabulary cut to its first
 * n_keep tokens (tokens, scores, types: the embedding keeps its rows) and,
 * when merges_i32, a 'tokenizer.ggml.merges' array of the wrong type, and the
 * BOS id set to bos. Returns 0 on success. */
typedef struct vocab_edit { uint64_t n_keep; bool merges_i32; uint32_t bos; } vocab_edit;

static rlx_status cut_vocab(void *user, gguf_writer *w, const gguf_file *f, int64_t kv, bool *keep) {
    const vocab_edit *e = user;
    const char *key = gguf_kv_key(f, kv);
    rlx_status st;
    if (strcmp(key, "tokenizer.ggml.tokens") == 0) {
        const char **tok = calloc(e->n_keep ? e->n_keep : 1, sizeof *tok);
        if (!tok) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rewrite_vocab: no memory for %llu tokens", (unsigned long long)e->n_keep);
        for (uint64_t i = 0; i < e->n_keep; i++) tok[i] = gguf_kv_arr_str(f, kv, i, NULL);
        st = gguf_set_arr_str(w, key, tok, e->n_keep);
        free(tok);
    } else if (strcmp(key, "tokenizer.ggml.scores") == 0) {
        st = gguf_set_arr(w, key, GGUF_VT_F32, gguf_kv_arr_data(f, kv), e->n_keep);
    } else if (strcmp(key, "tokenizer.ggml.token_type") == 0) {
        st = gguf_set_arr(w, key, GGUF_VT_I32, gguf_kv_arr_data(f, kv), e->n_keep);
    } else {
        return RLX_OK;
    }
    *keep = false;
    return st;
}

static rlx_status add_vocab_keys(void *user, gguf_writer *w) {
    const vocab_edit *e = user;
    const int32_t ints[3] = {1, 2, 3};
    rlx_status st = e->merges_i32 ? gguf_set_arr(w, "tokenizer.ggml.merges", GGUF_VT_I32, ints, 3) : RLX_OK;
    return st == RLX_OK ? gguf_set_u32(w, "tokenizer.ggml.bos_token_id", e->bos) : st;
}

static int rewrite_vocab(const char *src, const char *dst, uint64_t n_keep, bool merges_i32, uint32_t bos) {
    vocab_edit e = {n_keep, merges_i32, bos};
    tiny_gguf_edit edit = {.user = &e, .kv = cut_vocab, .more_kv = add_vocab_keys};
    return tiny_gguf_rewrite(src, dst, &edit) == RLX_OK ? 0 : -1;
}

/* Tokenizer metadata that does not fit the model: an embedding with more
 * rows than the vocabulary has tokens and merges of the wrong type are FORMAT
 * errors at load (not failures mid-generation, or BPE silently falling back
 * to bytes); a special-token id outside the vocabulary is ignored with a
 * warning (the default stays, as in llama.cpp), so no id past it is emitted. */
TEST(model_tokenizer_metadata_mismatch) {
    char path[128], bad[160];
    CHECK(default_model(path, sizeof path, "vocab"));
    snprintf(bad, sizeof bad, "%s.bad.gguf", path);
    gguf_file *f;
    CHECK_OK(gguf_open(path, &f));
    uint64_t n = gguf_kv_arr_len(f, gguf_find_key(f, "tokenizer.ggml.tokens"));
    gguf_close(f);
    rlx_model *m = NULL;

    CHECK(rewrite_vocab(path, bad, n - 1, false, 1) == 0);
    CHECK_STATUS(rlx_model_load(bad, NULL, &m), RLX_STATUS_FORMAT);
    CHECK_MSG(m == NULL && strstr(rlx_last_error(), "token_embd.weight") && strstr(rlx_last_error(), "tokens"),
              "vocabulary cut by one: '%s'", rlx_last_error());

    CHECK(rewrite_vocab(path, bad, n, true, 1) == 0);
    CHECK_STATUS(rlx_model_load(bad, NULL, &m), RLX_STATUS_FORMAT);
    CHECK_MSG(m == NULL && strstr(rlx_last_error(), "tokenizer.ggml.merges"), "i32 merges: '%s'", rlx_last_error());

    CHECK(rewrite_vocab(path, bad, n, false, (uint32_t)n + 5) == 0);
    warn_count bos_warn = {"bos_token_id", 0};
    rlx_set_log_callback(count_warnings, &bos_warn, RLX_LOG_WARN);
    rlx_status loaded = rlx_model_load(bad, NULL, &m);
    rlx_set_log_callback(NULL, NULL, RLX_LOG_WARN);
    CHECK_OK(loaded);
    CHECK_MSG(bos_warn.n == 1, "%d warnings about the BOS id", bos_warn.n);
    int32_t ids[16];
    int got = 0;
    CHECK_OK(rlx_model_tokenize(m, "the cat", 1, ids, 16, &got));
    CHECK(got > 0);
    for (int i = 0; i < got; i++) CHECK_MSG(ids[i] >= 0 && (uint64_t)ids[i] < n, "token %d is %d", i, ids[i]);
    rlx_model_free(m);
    unlink(bad);
    unlink(path);
}

typedef struct stop_seen { int calls, held; } stop_seen;
static int stop_at_first(const char *text, size_t len, int32_t id, void *user) {
    (void)text, (void)id;
    stop_seen *s = user;
    s->held += s->calls == 0 && len == 0;   /* the first piece's bytes are held back (incomplete UTF-8) */
    s->calls++;
    return 1;
}

/* A callback that asks to stop is not called again, not even for the bytes
 * the detokenizer still holds (most of this vocabulary is byte tokens, so some
 * seeds start with an incomplete UTF-8 sequence). */
TEST(model_generate_stop_means_stop) {
    char path[128];
    CHECK(default_model(path, sizeof path, "stop"));
    rlx_model *m = NULL;
    CHECK_OK(rlx_model_load(path, NULL, &m));
    unlink(path);
    rlx_sampling gs;
    rlx_sampling_init(&gs);
    gs.temperature = 2.0f;
    int held = 0;
    for (uint64_t seed = 1; seed <= 24; seed++) {
        gs.seed = seed;
        stop_seen seen = {0, 0};
        rlx_generate_stats st;
        rlx_status r = rlx_model_generate(m, "the cat", 4, &gs, stop_at_first, &seen, &st);
        if (r != RLX_OK) rlx_model_free(m);
        CHECK_OK(r);
        if (seen.calls != (st.generated_tokens > 0)) rlx_model_free(m);
        CHECK_MSG(seen.calls == (st.generated_tokens > 0), "seed %llu: %d calls after asking to stop, %d tokens",
                  (unsigned long long)seed, seen.calls, st.generated_tokens);
        held += seen.held;
    }
    rlx_model_free(m);
    CHECK_MSG(held > 0, "no seed started with held-back bytes: the case under test never arose");
}


/* A context past the model's context_length loads (as in llama.cpp), with a
 * warning; one within it loads silently. */
TEST(model_context_past_training_warns) {
    char path[128];
    CHECK(default_model(path, sizeof path, "ctxwarn"));   /* context_length 128 */
    warn_count warnings = {"trained for", 0};
    rlx_set_log_callback(count_warnings, &warnings, RLX_LOG_WARN);
    rlx_model_options o;
    rlx_model_options_init(&o);
    int sizes[2] = {64, 256}, want[2] = {0, 1};
    for (int i = 0; i < 2; i++) {
        o.n_ctx = sizes[i];
        rlx_model *m = NULL;
        rlx_status st = rlx_model_load(path, &o, &m);
        rlx_model_free(m);
        if (st != RLX_OK || warnings.n != want[i]) { rlx_set_log_callback(NULL, NULL, RLX_LOG_WARN); unlink(path); }
        CHECK_OK(st);
        CHECK_MSG(warnings.n == want[i], "n_ctx %d: %d warnings", sizes[i], warnings.n);
    }
    rlx_set_log_callback(NULL, NULL, RLX_LOG_WARN);
    unlink(path);
}

/* rlx_model_tokenize / _detokenize through the public API: size queries give
 * the counts, a buffer of exactly the needed size works, one byte or one id
 * short is INVALID_ARGUMENT (with the count still reported), and the text
 * comes back. A refused eval (logits NULL) leaves the position alone. */
TEST(model_tokenize_detokenize_sizes) {
    char path[128];
    CHECK(default_model(path, sizeof path, "tokrt"));
    rlx_model *m = tiny_model_load(path, RLX_BACKEND_CPU);
    unlink(path);
    CHECK(m);
    const char *text = "the cat sat on the mat";
    int n = -1, got = -1;
    CHECK_OK(rlx_model_tokenize(m, text, 0, NULL, 0, &n));
    CHECK(n > 1 && n <= 32);
    int32_t ids[32];
    CHECK_STATUS(rlx_model_tokenize(m, text, 0, ids, n - 1, &got), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(got == n, "a short cap reports the count: %d, want %d", got, n);
    CHECK_OK(rlx_model_tokenize(m, text, 0, ids, n, &got));
    CHECK(got == n);
    size_t len = 0, len2 = 0;
    CHECK_OK(rlx_model_detokenize(m, ids, n, NULL, 0, &len));
    CHECK(len == strlen(text));
    char buf[64];
    memset(buf, 'x', sizeof buf);
    CHECK_STATUS(rlx_model_detokenize(m, ids, n, buf, len, &len2), RLX_STATUS_INVALID_ARGUMENT);   /* no room for the NUL */
    CHECK(len2 == len && buf[0] == 0);
    CHECK_OK(rlx_model_detokenize(m, ids, n, buf, len + 1, &len2));
    CHECK_MSG(len2 == len && strcmp(buf, text) == 0, "round trip gave '%s'", buf);
    CHECK_OK(rlx_model_detokenize(m, NULL, 0, buf, sizeof buf, &len2));
    CHECK(len2 == 0 && buf[0] == 0);
    /* eval refused for a NULL logits pointer: the whole context (64) is still free */
    const float *lg = NULL;
    CHECK_STATUS(rlx_model_eval(m, ids, n, NULL), RLX_STATUS_INVALID_ARGUMENT);
    int32_t ctx[64];
    for (int i = 0; i < 64; i++) ctx[i] = ids[i % n];
    CHECK_OK(rlx_model_eval(m, ctx, 64, &lg));
    CHECK(lg != NULL);
    CHECK_STATUS(rlx_model_eval(m, ctx, 1, &lg), RLX_STATUS_INVALID_ARGUMENT);   /* now it is full */
    rlx_model_free(m);
}
