/*
 * model.c — rlx_model: a Llama-family GGUF file turned into a compiled
 * decoder (models/llama.c), its tokenizer, and the generate loop.
 *
 * 2-D weights keep their GGUF storage type (f16, bf16, Q4_K, Q8_0, ...) as
 * params and are multiplied through rlx_dequant_matmul, so a Q4_K model
 * occupies Q4_K bytes on the device and decode reads Q4_K bytes per token.
 * Types rlx has no kernel for are decoded to f32 at load (or rejected).
 * The KV cache is a pair of params per layer, so it stays on the device
 * between calls; decode steps replay one cached specialization.
 */
#include "io/gguf.h"
#include "quant/quant.h"
#include "models/llama.h"
#include "models/sampler.h"
#include "models/tokenizer.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rlx_model {
    llama_hparams hp;
    char          arch[32];
    char          name[128];
    int           n_ctx;
    int           pos;            /* positions filled in the KV cache */
    bool          evaluated;      /* an eval succeeded: rlx_model_report has a program to report */
    bool          in_on_token;    /* generate is calling its on_token: calls that move the cache are refused */
    bool          keep_storage;   /* false: every weight decoded to f32 (RLX_MODEL_F32=1) */
    rlx_exec     *exec;
    tokenizer    *tok;
    gguf_file    *weights;        /* kept open where the exec reads weights from its mapping (the CPU) */
};

void rlx_model_options_init(rlx_model_options *o) {
    if (!o) return;
    rlx_compile_options_init(&o->compile);
    o->n_ctx = 0;
}

void rlx_sampling_init(rlx_sampling *s) {
    if (!s) return;
    sampler_params p;
    rlx_sampler_params_init(&p);
    s->temperature = p.temperature;
    s->top_k = p.top_k;
    s->top_p = p.top_p;
    s->min_p = p.min_p;
    s->repeat_penalty = p.repeat_penalty;
    s->repeat_last_n = p.repeat_last_n;
    s->seed = p.seed;
}

/* ---------------------------------------------------------------- load */

static rlx_status arch_key_u32(const gguf_file *f, const char *arch, const char *suffix, bool required, uint32_t dflt,
                               uint32_t *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    if (gguf_find_key(f, key) < 0) {
        if (required) return rlx_fail(RLX_STATUS_FORMAT, "model: the file lacks '%s'", key);
        *out = dflt;
        return RLX_OK;
    }
    return gguf_get_u32(f, key, out);
}

static rlx_status arch_key_f32(const gguf_file *f, const char *arch, const char *suffix, float dflt, float *out) {
    char key[128];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    if (gguf_find_key(f, key) < 0) { *out = dflt; return RLX_OK; }
    return gguf_get_f32(f, key, out);
}

/* RoPE context extension, read with llama.cpp's semantics (the keys and
 * their defaults are its GGUF conventions; the math is in models/llama.c):
 *   rope.scaling.type: "none", "linear", "yarn"; absent means linear, so an
 *     old file with only rope.scale_linear still scales. Anything else
 *     ("longrope", ...) is UNSUPPORTED: a model roped wrong would load and
 *     talk nonsense, which is worse than a clear error.
 *   rope.scaling.factor (legacy rope.scale_linear); absent or 0 means 1.
 *   rope.scaling.original_context_length (default: context_length).
 *   rope.scaling.yarn_ext_factor: absent or < 0 means 1 for yarn, 0 otherwise.
 *   rope.scaling.yarn_beta_fast / _slow (32 / 1), .yarn_log_multiplier (0).
 *   rope.scaling.attn_factor multiplies the cos/sin magnitude;
 *     .yarn_attn_factor is that magnitude only when ext_factor is 0 (with
 *     ext_factor != 0 llama.cpp replaces it by YaRN's 0.1 ln F + 1).
 * rope_freqs.weight (llama3) is applied in addition, before the YaRN blend. */
static rlx_status read_rope_scaling(const gguf_file *f, const char *arch, llama_hparams *hp) {
    llama_rope_scaling *rs = &hp->rope_scaling;
    char key[128];
    snprintf(key, sizeof key, "%s.rope.scaling.type", arch);
    const char *type = "linear";
    rlx_status st;
    if (gguf_find_key(f, key) >= 0 && (st = gguf_get_str(f, key, &type)) != RLX_OK) return st;
    if (strcmp(type, "none") == 0) {
        rs->type = LLAMA_ROPE_SCALING_NONE;
    } else if (strcmp(type, "linear") == 0) {
        rs->type = LLAMA_ROPE_SCALING_LINEAR;
    } else if (strcmp(type, "yarn") == 0) {
        rs->type = LLAMA_ROPE_SCALING_YARN;
    } else {
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "model: rope scaling '%.40s' (%s) is not supported (none, linear, yarn)", type,
                        key);
    }
    float factor = 0, ext = -1, yarn_attn = 1, attn = 1;
    snprintf(key, sizeof key, "%s.rope.scaling.factor", arch);
    if ((st = arch_key_f32(f, arch, gguf_find_key(f, key) >= 0 ? "rope.scaling.factor" : "rope.scale_linear", 0.0f,
                           &factor)) != RLX_OK)
        return st;
    uint32_t orig;
    if ((st = arch_key_u32(f, arch, "rope.scaling.original_context_length", false, (uint32_t)hp->n_ctx_train, &orig)) != RLX_OK ||
        (st = arch_key_f32(f, arch, "rope.scaling.yarn_ext_factor", -1.0f, &ext)) != RLX_OK ||
        (st = arch_key_f32(f, arch, "rope.scaling.yarn_beta_fast", 32.0f, &rs->beta_fast)) != RLX_OK ||
        (st = arch_key_f32(f, arch, "rope.scaling.yarn_beta_slow", 1.0f, &rs->beta_slow)) != RLX_OK ||
        (st = arch_key_f32(f, arch, "rope.scaling.yarn_log_multiplier", 0.0f, &rs->log_mul)) != RLX_OK ||
        (st = arch_key_f32(f, arch, "rope.scaling.yarn_attn_factor", 1.0f, &yarn_attn)) != RLX_OK ||
        (st = arch_key_f32(f, arch, "rope.scaling.attn_factor", 1.0f, &attn)) != RLX_OK)
        return st;
    if (factor < 0 || isnan(factor))
        return rlx_fail(RLX_STATUS_FORMAT, "model: rope scaling factor %g must be >= 0 (0: none)", factor);
    rs->factor = factor == 0 || rs->type == LLAMA_ROPE_SCALING_NONE ? 1.0f : factor;   /* "none" never scales */
    rs->orig_ctx = orig > (uint32_t)INT32_MAX ? INT32_MAX : (int)orig;
    rs->ext_factor = ext < 0 ? (rs->type == LLAMA_ROPE_SCALING_YARN ? 1.0f : 0.0f) : ext;
    rs->attn_factor = (rs->ext_factor == 0 ? yarn_attn : 1.0f) * attn;
    /* factor 1 makes every divisor and YaRN's magnitude 1: with no attention
     * factor either, keep the graph identical to an unscaled one */
    if (rs->factor == 1.0f && rs->attn_factor == 1.0f) {
        rs->type = LLAMA_ROPE_SCALING_NONE;
        return RLX_OK;
    }
    if (rs->type == LLAMA_ROPE_SCALING_NONE)
        rs->type = LLAMA_ROPE_SCALING_LINEAR;   /* "none" with an attention factor: magnitude only, factor 1 */
    rlx_log_msg(RLX_LOG_INFO, "model: rope scaling %s, factor %g, ext %g, original context %d, attention factor %g",
                rs->type == LLAMA_ROPE_SCALING_YARN ? "yarn" : "linear", rs->factor, rs->ext_factor, rs->orig_ctx,
                rs->attn_factor);
    return RLX_OK;
}

static rlx_status read_hparams(const gguf_file *f, rlx_model *m) {
    const char *arch;
    rlx_status st = gguf_get_str(f, "general.architecture", &arch);
    if (st != RLX_OK) return st;
    snprintf(m->arch, sizeof m->arch, "%s", arch);
    const char *name = NULL;
    if (gguf_find_key(f, "general.name") >= 0 && gguf_get_str(f, "general.name", &name) == RLX_OK)
        snprintf(m->name, sizeof m->name, "%s", name);
    llama_hparams *hp = &m->hp;
    memset(hp, 0, sizeof *hp);
    if (strcmp(arch, "llama") == 0 || strcmp(arch, "mistral") == 0) {
        hp->arch = LLAMA_ARCH_LLAMA;
        hp->rope_style = RLX_ROPE_GPTJ;   /* GGUF llama weights are permuted for adjacent pairs */
        /* llama.cpp loads optional q/k/v and output biases for llama (HF attention_bias) */
        hp->qkv_bias = gguf_find_tensor(f, "blk.0.attn_q.bias") != NULL;
        hp->out_bias = gguf_find_tensor(f, "blk.0.attn_output.bias") != NULL;
    } else if (strcmp(arch, "qwen2") == 0) {
        hp->arch = LLAMA_ARCH_QWEN2;
        hp->rope_style = RLX_ROPE_NEOX;
        hp->qkv_bias = true;
    } else if (strcmp(arch, "qwen3") == 0) {
        hp->arch = LLAMA_ARCH_QWEN3;
        hp->rope_style = RLX_ROPE_NEOX;
        hp->qk_norm = true;
    } else {
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "model: architecture '%s' is not supported (llama, mistral, qwen2, qwen3)",
                        arch);
    }
    uint32_t v, heads, heads_kv;
    if ((st = arch_key_u32(f, arch, "context_length", false, 4096, &v)) != RLX_OK) return st;
    hp->n_ctx_train = (int)v;
    if ((st = arch_key_u32(f, arch, "embedding_length", true, 0, &v)) != RLX_OK) return st;
    hp->n_embd = (int)v;
    if ((st = arch_key_u32(f, arch, "block_count", true, 0, &v)) != RLX_OK) return st;
    hp->n_layer = (int)v;
    if ((st = arch_key_u32(f, arch, "feed_forward_length", true, 0, &v)) != RLX_OK) return st;
    hp->n_ff = (int)v;
    if ((st = arch_key_u32(f, arch, "attention.head_count", true, 0, &heads)) != RLX_OK) return st;
    if ((st = arch_key_u32(f, arch, "attention.head_count_kv", false, heads, &heads_kv)) != RLX_OK) return st;
    hp->n_head = (int)heads;
    hp->n_head_kv = (int)heads_kv;
    if ((st = arch_key_u32(f, arch, "attention.key_length", false, heads ? (uint32_t)hp->n_embd / heads : 0, &v)) != RLX_OK)
        return st;
    hp->head_dim = (int)v;
    /* rotary dims: llama.cpp's default is the head dim (a V head dim that
     * differs from it shows up as attn_v.weight's shape, a FORMAT error) */
    if ((st = arch_key_u32(f, arch, "rope.dimension_count", false, (uint32_t)hp->head_dim, &v)) != RLX_OK) return st;
    hp->rope_dims = (int)v;
    if ((st = arch_key_f32(f, arch, "rope.freq_base", 10000.0f, &hp->rope_theta)) != RLX_OK) return st;
    if ((st = arch_key_f32(f, arch, "attention.layer_norm_rms_epsilon", 1e-5f, &hp->rms_eps)) != RLX_OK) return st;
    /* llama3 long-context scaling ships as per-frequency factors */
    const gguf_tensor *freqs = gguf_find_tensor(f, "rope_freqs.weight");
    hp->rope_freq_factors = freqs != NULL;
    if (freqs && (freqs->n_dims != 1 || freqs->type != QTYPE_F32))
        return rlx_fail(RLX_STATUS_FORMAT, "model: 'rope_freqs.weight' must be a 1-D f32 tensor");
    if ((st = read_rope_scaling(f, arch, hp)) != RLX_OK) return st;
    const gguf_tensor *emb = gguf_find_tensor(f, "token_embd.weight");
    if (!emb || emb->n_dims != 2) return rlx_fail(RLX_STATUS_FORMAT, "model: no 2-D 'token_embd.weight' tensor");
    hp->n_vocab = (int)emb->dims[1];
    hp->tied_embeddings = gguf_find_tensor(f, "output.weight") == NULL;
    return llama_hparams_check(hp);
}

/* Storage dtype for a 2-D weight: its GGUF type when rlx can compute with it. */
static rlx_dtype weight_dtype(void *user, const char *name) {
    const gguf_file *f = user;
    const gguf_tensor *t = gguf_find_tensor(f, name);
    if (!t || t->n_dims != 2) return RLX_F32;
    int dt = quant_dtype_of_type(t->type);
    return dt < 0 ? RLX_F32 : (rlx_dtype)dt;
}

/* Copies one GGUF tensor into a param: as stored when the param has the
 * file's type, else decoded to f32. */
static rlx_status load_param(rlx_exec *e, const gguf_file *f, const rlx_tensor *info) {
    const gguf_tensor *t = gguf_find_tensor(f, info->name);
    if (!t) return rlx_fail(RLX_STATUS_FORMAT, "model: the file has no tensor '%s'", info->name);
    /* ggml dims are reversed: dims[0] is our last dim */
    int64_t numel = 1;
    for (int d = 0; d < info->rank; d++) numel *= info->dims[d];
    bool fits = (int)t->n_dims <= info->rank || t->n_elements == numel;
    for (int d = 0; fits && d < info->rank && d < (int)t->n_dims; d++)
        if (t->dims[d] != info->dims[info->rank - 1 - d]) fits = false;
    if (!fits || t->n_elements != numel)
        return rlx_fail(RLX_STATUS_FORMAT, "model: tensor '%s' has %lld elements in a shape that is not the expected one",
                        info->name, (long long)t->n_elements);
    if (t->type == quant_type_of_dtype(info->dtype)) {
        if (t->size != info->bytes)
            return rlx_fail(RLX_STATUS_FORMAT, "model: tensor '%s' has %llu bytes, its shape needs %zu", info->name,
                            (unsigned long long)t->size, info->bytes);
        /* read in place from the file's mapping where the backend can (the
         * CPU: no copy, and no second copy of the weights in memory), copied
         * to the device otherwise */
        if ((uintptr_t)t->data % 16 == 0) return rlx_exec_use_param_memory(e, info->name, info->dtype, t->data, info->bytes);
        return rlx_exec_set_param(e, info->name, info->dtype, t->data, info->bytes);
    }
    if (info->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_INTERNAL, "model: tensor '%s' type mismatch", info->name);
    float *buf = malloc((size_t)numel * sizeof *buf);
    if (!buf) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "model: no memory to convert '%s'", info->name);
    rlx_status st = quant_dequantize_row(t->type, t->data, buf, numel);
    if (st != RLX_OK) st = rlx_fail(st, "model: tensor '%s' (%s): %s", info->name, qtype_name(t->type), rlx_last_error());
    if (st == RLX_OK) st = rlx_exec_set_param_f32(e, info->name, buf, (size_t)numel);
    free(buf);
    return st;
}

/* An optional per-token array: absent is fine (*m = 0); present with the
 * wrong type or length is a format error, not something to guess around. */
static rlx_status optional_array(const gguf_file *f, const char *key, gguf_vtype type, uint64_t n, int64_t *kv,
                                 uint64_t *m) {
    *m = 0;
    if (gguf_find_key(f, key) < 0) return RLX_OK;
    rlx_status st = gguf_get_arr(f, key, type, kv, m);
    if (st != RLX_OK) return st;
    if (*m != n)
        return rlx_fail(RLX_STATUS_FORMAT, "model: '%s' has %llu entries for %llu tokens", key, (unsigned long long)*m,
                        (unsigned long long)n);
    return RLX_OK;
}

/* GGUF tokenizer metadata -> tokenizer. Strings and arrays are read through
 * the reader's checked accessors; the tokenizer copies what it keeps. */
static rlx_status load_tokenizer(const gguf_file *f, tokenizer **out) {
    tok_vocab_desc d;
    tok_vocab_desc_init(&d);
    rlx_status st = gguf_get_str(f, "tokenizer.ggml.model", &d.model);
    if (st != RLX_OK) return st;
    if (gguf_find_key(f, "tokenizer.ggml.pre") >= 0) gguf_get_str(f, "tokenizer.ggml.pre", &d.pre);
    int64_t kv;
    uint64_t n;
    if ((st = gguf_get_arr(f, "tokenizer.ggml.tokens", GGUF_VT_STRING, &kv, &n)) != RLX_OK) return st;
    if (n == 0 || n > (1u << 24)) return rlx_fail(RLX_STATUS_FORMAT, "model: %llu tokens in the vocabulary", (unsigned long long)n);
    const char **tokens = calloc(n, sizeof *tokens);
    uint32_t *lens = calloc(n, sizeof *lens);
    float *scores = NULL;
    int32_t *types = NULL;
    const char **merges = NULL;
    uint32_t *merge_lens = NULL;
    if (!tokens || !lens) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "model: out of memory"); goto done; }
    for (uint64_t i = 0; i < n; i++) {
        size_t len;
        tokens[i] = gguf_kv_arr_str(f, kv, i, &len);
        lens[i] = (uint32_t)len;
        if (!tokens[i]) { st = rlx_fail(RLX_STATUS_FORMAT, "model: token %llu is unreadable", (unsigned long long)i); goto done; }
    }
    d.n_tokens = (int32_t)n;
    d.tokens = tokens;
    d.token_lens = lens;
    uint64_t m;
    if ((st = optional_array(f, "tokenizer.ggml.scores", GGUF_VT_F32, n, &kv, &m)) != RLX_OK) goto done;
    if (m) {
        if (!(scores = malloc(n * sizeof *scores))) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "model: out of memory"); goto done; }
        for (uint64_t i = 0; i < n; i++) {
            double x = 0;
            gguf_kv_arr_float(f, kv, i, &x);
            scores[i] = (float)x;
        }
        d.scores = scores;
    }
    if ((st = optional_array(f, "tokenizer.ggml.token_type", GGUF_VT_I32, n, &kv, &m)) != RLX_OK) goto done;
    if (m) {
        if (!(types = malloc(n * sizeof *types))) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "model: out of memory"); goto done; }
        for (uint64_t i = 0; i < n; i++) {
            int64_t x = 0;
            gguf_kv_arr_int(f, kv, i, &x);
            types[i] = (int32_t)x;
        }
        d.token_types = types;
    }
    /* merges present but unusable would silently turn BPE into byte-level
     * encoding: an error instead */
    if (gguf_find_key(f, "tokenizer.ggml.merges") >= 0) {
        if ((st = gguf_get_arr(f, "tokenizer.ggml.merges", GGUF_VT_STRING, &kv, &m)) != RLX_OK) goto done;
        if (m >= (1u << 24)) {
            st = rlx_fail(RLX_STATUS_FORMAT, "model: 'tokenizer.ggml.merges' has %llu entries (at most %u)",
                          (unsigned long long)m, (1u << 24) - 1);
            goto done;
        }
    } else {
        m = 0;
    }
    if (m > 0) {
        merges = calloc(m, sizeof *merges);
        merge_lens = calloc(m, sizeof *merge_lens);
        if (!merges || !merge_lens) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "model: out of memory"); goto done; }
        for (uint64_t i = 0; i < m; i++) {
            size_t len;
            merges[i] = gguf_kv_arr_str(f, kv, i, &len);
            merge_lens[i] = (uint32_t)len;
            if (!merges[i]) { st = rlx_fail(RLX_STATUS_FORMAT, "model: merge %llu is unreadable", (unsigned long long)i); goto done; }
        }
        d.n_merges = (int32_t)m;
        d.merges = merges;
        d.merge_lens = merge_lens;
    }
    struct { const char *key; int32_t *dst; } ids[] = {
        {"tokenizer.ggml.bos_token_id", &d.bos_id}, {"tokenizer.ggml.eos_token_id", &d.eos_id},
        {"tokenizer.ggml.eot_token_id", &d.eot_id}, {"tokenizer.ggml.unknown_token_id", &d.unk_id},
        {"tokenizer.ggml.padding_token_id", &d.pad_id},
    };
    for (size_t i = 0; i < RLX_ARRAY_LEN(ids); i++) {
        uint32_t x;
        if (gguf_find_key(f, ids[i].key) < 0 || gguf_get_u32(f, ids[i].key, &x) != RLX_OK) continue;
        if (x < n) *ids[i].dst = (int32_t)x;
        else   /* as llama.cpp: the default stays, with a warning */
            rlx_log_msg(RLX_LOG_WARN, "model: %s %u is outside the vocabulary of %llu tokens; ignored", ids[i].key, x,
                        (unsigned long long)n);
    }
    struct { const char *key; int *dst; } flags[] = {
        {"tokenizer.ggml.add_bos_token", &d.add_bos}, {"tokenizer.ggml.add_eos_token", &d.add_eos},
        {"tokenizer.ggml.add_space_prefix", &d.add_space_prefix},
    };
    for (size_t i = 0; i < RLX_ARRAY_LEN(flags); i++) {
        bool b;
        if (gguf_find_key(f, flags[i].key) >= 0 && gguf_get_bool(f, flags[i].key, &b) == RLX_OK) *flags[i].dst = b;
    }
    st = rlx_tokenizer_new(&d, out);
done:
    free(tokens);
    free(lens);
    free(scores);
    free(types);
    free(merges);
    free(merge_lens);
    return st;
}

/* The graph's inputs for n tokens (llama_build_graph): the ids, the position
 * of the first and the cache's fill after them (NULL data: shapes only). */
static void graph_inputs(rlx_tensor in[3], const int32_t *ids, int n, const int32_t *pos, const int32_t *len) {
    in[0] = (rlx_tensor){.name = "tokens", .dtype = RLX_I32, .rank = 1, .dims = {n}, .data = (void *)ids, .bytes = 4 * (size_t)n};
    in[1] = (rlx_tensor){.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = (void *)pos, .bytes = 4};
    in[2] = (rlx_tensor){.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = (void *)len, .bytes = 4};
}

/* Compiles the one-token (decode) program at load, so that a generation's
 * first token does not pay for it (it did: ~10-30 ms on an H200, inside the
 * generation time). The prompt's program depends on its length and is
 * compiled by its first eval. */
static rlx_status prepare_decode(rlx_model *m) {
    rlx_tensor in[3];
    graph_inputs(in, NULL, 1, NULL, NULL);
    return rlx_exec_prepare(m->exec, in, 3);
}

rlx_status rlx_model_load(const char *path, const rlx_model_options *o, rlx_model **out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_load: out is NULL");
    *out = NULL;
    if (!path) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_load: path is NULL");
    rlx_model_options defaults;
    if (!o) { rlx_model_options_init(&defaults); o = &defaults; }
    if (o->n_ctx < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_load: n_ctx %d < 0", o->n_ctx);
    gguf_file *f = NULL;
    rlx_status st = gguf_open(path, &f);
    if (st != RLX_OK) return st;
    rlx_model *m = calloc(1, sizeof *m);
    rlx_graph *g = NULL;
    if (!m) { gguf_close(f); return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_model_load: out of memory"); }
    if ((st = read_hparams(f, m)) != RLX_OK) goto fail;
    m->n_ctx = o->n_ctx ? o->n_ctx : RLX_MIN(m->hp.n_ctx_train > 0 ? m->hp.n_ctx_train : 4096, 4096);
    if (m->hp.n_ctx_train > 0 && m->n_ctx > m->hp.n_ctx_train)   /* allowed, as in llama.cpp, but said */
        rlx_log_msg(RLX_LOG_WARN, "model: a context of %d positions exceeds the %d the model was trained for", m->n_ctx,
                    m->hp.n_ctx_train);
    if ((st = load_tokenizer(f, &m->tok)) != RLX_OK) goto fail;
    if (rlx_tokenizer_n_vocab(m->tok) != m->hp.n_vocab) {   /* ids past either would fail mid-generation */
        st = rlx_fail(RLX_STATUS_FORMAT, "model: 'token_embd.weight' has %d rows but the tokenizer has %d tokens",
                      m->hp.n_vocab, rlx_tokenizer_n_vocab(m->tok));
        goto fail;
    }
    m->keep_storage = rlx_env_int("RLX_MODEL_F32", 0) == 0;
    if ((st = llama_build_graph(&m->hp, m->n_ctx, LLAMA_LOGITS_LAST, m->keep_storage ? weight_dtype : NULL, f, &g)) != RLX_OK)
        goto fail;
    if ((st = rlx_compile(g, &o->compile, &m->exec)) != RLX_OK) {
        st = rlx_fail(st, "rlx_model_load: %s", rlx_last_error());   /* e.g. an option of o->compile */
        goto fail;
    }
    for (int i = 0; i < rlx_exec_param_count(m->exec) && st == RLX_OK; i++) {
        rlx_tensor info;
        rlx_exec_param_info(m->exec, i, &info);
        if (strncmp(info.name, "cache.", 6) == 0) continue;   /* zero until written */
        st = load_param(m->exec, f, &info);
    }
    if (st != RLX_OK) goto fail;
    if ((st = prepare_decode(m)) != RLX_OK) goto fail;
    rlx_graph_free(g);
    rlx_exec_stats es;   /* on the CPU params point into the mapping; when unsure, it stays */
    if (rlx_exec_get_stats(m->exec, &es) != RLX_OK || !es.backend || strcmp(es.backend, "cpu") == 0) m->weights = f;
    else gguf_close(f);
    *out = m;
    return RLX_OK;
fail:
    rlx_graph_free(g);
    gguf_close(f);
    rlx_model_free(m);
    return st;
}

void rlx_model_free(rlx_model *m) {
    if (!m) return;
    rlx_exec_free(m->exec);
    gguf_close(m->weights);   /* after the exec, which reads from it */
    rlx_tokenizer_free(m->tok);
    free(m);
}

rlx_status rlx_model_get_info(const rlx_model *m, rlx_model_info *info) {
    if (!m || !info) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_get_info: %s is NULL", m ? "info" : "model");
    rlx_exec_stats s;
    rlx_exec_get_stats(m->exec, &s);
    memset(info, 0, sizeof *info);
    info->arch = m->arch;
    info->name = m->name;
    info->n_vocab = m->hp.n_vocab;
    info->n_ctx = m->n_ctx;
    info->n_layer = m->hp.n_layer;
    info->n_embd = m->hp.n_embd;
    info->n_head = m->hp.n_head;
    info->n_head_kv = m->hp.n_head_kv;
    info->bos = rlx_tokenizer_bos(m->tok);
    info->eos = rlx_tokenizer_eos(m->tok);
    info->backend = s.backend;
    info->device = s.device;
    return RLX_OK;
}

/* ------------------------------------------------------------ text */

rlx_status rlx_model_tokenize(rlx_model *m, const char *text, int add_special, int32_t *ids, int cap, int *n) {
    const char *fn = "rlx_model_tokenize";
    if (n) *n = 0;
    if (!m) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: model is NULL", fn);
    if (!text) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: text is NULL", fn);
    if (!n) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: n is NULL (it receives the token count)", fn);
    if (cap < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: cap %d is negative", fn, cap);
    if (!ids && cap > 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: ids is NULL with cap %d (NULL asks for the count with cap 0)",
                        fn, cap);
    size_t need = 0;
    rlx_status st = rlx_tokenizer_encode(m->tok, text, strlen(text), add_special != 0, false, ids, (size_t)cap, &need);
    if (need > INT32_MAX) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: the text needs %zu tokens, more than an int holds", fn, need);
    *n = (int)need;
    if (ids && need > (size_t)cap)   /* the count is set: the caller can grow ids and call again */
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: the text needs %zu tokens, cap is %d", fn, need, cap);
    return st;
}

rlx_status rlx_model_detokenize(rlx_model *m, const int32_t *ids, int n, char *buf, size_t cap, size_t *len) {
    const char *fn = "rlx_model_detokenize";
    if (len) *len = 0;
    if (!m) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: model is NULL", fn);
    if (!len) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: len is NULL (it receives the text's length)", fn);
    if (n < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: n %d is negative", fn, n);
    if (!ids && n > 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: ids is NULL with n %d", fn, n);
    if (!buf && cap > 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: buf is NULL with cap %zu (NULL asks for the length with cap 0)",
                        fn, cap);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->hp.n_vocab)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: ids[%d] = %d is outside the vocabulary [0, %d)", fn, i,
                            ids[i], m->hp.n_vocab);
    size_t need = 0;
    rlx_status st = rlx_tokenizer_decode(m->tok, ids, (size_t)n, 0, NULL, 0, &need);
    if (st != RLX_OK) return st;
    *len = need;
    if (!buf) return RLX_OK;   /* a length query */
    if (cap <= need) {
        if (cap) buf[0] = 0;
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: the text needs %zu bytes and a NUL, cap is %zu", fn, need, cap);
    }
    return rlx_tokenizer_decode(m->tok, ids, (size_t)n, 0, buf, cap, len);
}

/* ------------------------------------------------------------ eval */

/* The user's callback, during which eval, reset and generate on m are
 * refused: they would move the cache under the generation in progress. */
static int call_on_token(rlx_model *m, rlx_token_fn on_token, const char *text, size_t len, int32_t id, void *user) {
    m->in_on_token = true;
    int stop = on_token(text, len, id, user);
    m->in_on_token = false;
    return stop;
}

static rlx_status refuse_in_on_token(const rlx_model *m, const char *fn) {
    if (!m->in_on_token) return RLX_OK;
    return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: called from rlx_model_generate's on_token on the same model, "
                    "whose generation is in progress", fn);
}

rlx_status rlx_model_reset(rlx_model *m) {
    if (!m) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_reset: model is NULL");
    rlx_status refused = refuse_in_on_token(m, "rlx_model_reset");
    if (refused != RLX_OK) return refused;
    m->pos = 0;   /* cache rows past kv_len are never read, so no clearing is needed */
    return RLX_OK;
}

char *rlx_model_report(const rlx_model *m) {
    if (!m) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_report: model is NULL"); return NULL; }
    if (!m->evaluated) { rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_report: no eval yet (the report is of the last one)"); return NULL; }
    return rlx_exec_report(m->exec);
}

rlx_status rlx_model_eval(rlx_model *m, const int32_t *ids, int n, const float **logits) {
    const char *fn = "rlx_model_eval";
    if (!m) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: model is NULL", fn);
    if (!ids) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: ids is NULL", fn);
    if (n <= 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: n %d must be >= 1", fn, n);
    if (!logits) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: logits is NULL (it receives the last token's logits)", fn);
    rlx_status refused = refuse_in_on_token(m, fn);
    if (refused != RLX_OK) return refused;
    if (n > m->n_ctx - m->pos)   /* not pos + n, which can overflow */
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_eval: context limit: %d + %d tokens exceed n_ctx %d",
                        m->pos, n, m->n_ctx);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->hp.n_vocab)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_eval: token %d at %d is outside the vocabulary of %d",
                            ids[i], i, m->hp.n_vocab);
    int32_t pos = m->pos, len = m->pos + n;
    rlx_tensor in[3];
    graph_inputs(in, ids, n, &pos, &len);
    rlx_status st = rlx_exec_run(m->exec, in, 3);
    rlx_tensor out;
    if (st == RLX_OK) st = rlx_exec_output(m->exec, "logits", &out);
    if (st != RLX_OK) return st;
    if (out.bytes != sizeof(float) * (size_t)m->hp.n_vocab)   /* the graph's one row (LLAMA_LOGITS_LAST) */
        return rlx_fail(RLX_STATUS_INTERNAL, "rlx_model_eval: logits of %zu bytes, expected one row of %d", out.bytes,
                        m->hp.n_vocab);
    m->pos += n;
    m->evaluated = true;
    /* the program's own output, not a copy: a copy cost ~20 us per token (an
     * H200 1B decode step is ~760 us), and the contract (valid until the next
     * eval) is the exec's */
    *logits = out.data;
    return RLX_OK;
}

/* ------------------------------------------------------------ generate */

static double seconds_now(void) { return rlx_now_seconds(); }

/* rlx_sampling -> sampler_params, with each field checked against rlx.h's
 * ranges (named in the message; the sampler's own checks name its fields).
 * The look-back is bounded by the context: no more tokens exist. */
static rlx_status sampling_params(const rlx_sampling *s, int n_ctx, sampler_params *sp) {
    const char *fn = "rlx_model_generate";
    rlx_sampler_params_init(sp);
    const struct { const char *name; float v; } floats[] = {
        {"temperature", s->temperature}, {"top_p", s->top_p}, {"min_p", s->min_p}, {"repeat_penalty", s->repeat_penalty},
    };
    for (size_t i = 0; i < RLX_ARRAY_LEN(floats); i++)
        if (isnan(floats[i].v)) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: sampling %s is NaN", fn, floats[i].name);
    if (s->top_p < 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: sampling top_p %g is negative (>= 1: off)", fn, (double)s->top_p);
    if (s->min_p > 1)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: sampling min_p %g is above 1 (<= 0: off)", fn, (double)s->min_p);
    if (!(s->repeat_penalty > 0) || isinf(s->repeat_penalty))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: sampling repeat_penalty %g must be finite and > 0 (1: off)", fn,
                        (double)s->repeat_penalty);
    if (s->repeat_last_n < 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: sampling repeat_last_n %d is negative", fn, s->repeat_last_n);
    sp->temperature = s->temperature;
    sp->top_k = s->top_k;
    sp->top_p = s->top_p;
    sp->min_p = s->min_p > 0 ? s->min_p : 0;
    sp->repeat_penalty = s->repeat_penalty;
    sp->repeat_last_n = RLX_MIN(s->repeat_last_n, n_ctx);
    sp->seed = s->seed;
    return RLX_OK;
}

rlx_status rlx_model_generate(rlx_model *m, const char *prompt, int n_predict, const rlx_sampling *s,
                              rlx_token_fn on_token, void *user, rlx_generate_stats *stats) {
    if (!m || !prompt) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_generate: %s is NULL", m ? "prompt" : "model");
    if (n_predict < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_generate: n_predict %d is negative", n_predict);
    rlx_status refused = refuse_in_on_token(m, "rlx_model_generate");
    if (refused != RLX_OK) return refused;
    rlx_generate_stats local;
    if (!stats) stats = &local;
    memset(stats, 0, sizeof *stats);
    rlx_sampling defaults;
    if (!s) { rlx_sampling_init(&defaults); s = &defaults; }
    sampler_params sp;
    sampler *smp = NULL;
    tok_stream *stream = NULL;
    int32_t *ids = NULL;
    size_t n_ids = 0;
    rlx_status st = sampling_params(s, m->n_ctx, &sp);
    if (st == RLX_OK) st = rlx_sampler_new(&sp, &smp);
    if (st == RLX_OK) st = rlx_tokenizer_encode_alloc(m->tok, prompt, strlen(prompt), true, false, &ids, &n_ids);
    if (st != RLX_OK) goto done;
    if (n_ids == 0) {   /* an empty prompt starts from BOS */
        int32_t bos = rlx_tokenizer_bos(m->tok);
        if (bos < 0) { st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_generate: empty prompt and no BOS token"); goto done; }
        free(ids);
        if (!(ids = malloc(sizeof *ids))) { st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "out of memory"); goto done; }
        ids[0] = bos;
        n_ids = 1;
    }
    if ((st = rlx_tok_stream_new(m->tok, 0, &stream)) != RLX_OK) goto done;
    rlx_model_reset(m);
    const float *logits;
    double t0 = seconds_now();
    if ((st = rlx_model_eval(m, ids, (int)n_ids, &logits)) != RLX_OK) goto done;
    stats->prompt_tokens = (int)n_ids;
    stats->prompt_seconds = seconds_now() - t0;
    for (size_t i = 0; i < n_ids; i++) {
        const char *text;
        size_t len;
        rlx_sampler_accept(smp, ids[i]);
        rlx_tok_stream_push(stream, ids[i], &text, &len);   /* the prompt primes the detokenizer; not echoed */
    }
    t0 = seconds_now();
    bool stopped = false;   /* the callback asked to stop: it is not called again */
    for (int i = 0; i < n_predict; i++) {
        int32_t next;
        if ((st = rlx_sampler_sample(smp, logits, m->hp.n_vocab, &next)) != RLX_OK) break;
        rlx_sampler_accept(smp, next);
        if (rlx_tokenizer_is_eog(m->tok, next)) { stats->stopped_at_eos = 1; break; }
        stats->generated_tokens++;
        const char *text;
        size_t len;
        if ((st = rlx_tok_stream_push(stream, next, &text, &len)) != RLX_OK) break;
        if (on_token && call_on_token(m, on_token, text, len, next, user)) { stopped = true; break; }
        if (i + 1 == n_predict) break;
        if (m->pos >= m->n_ctx) { st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_model_generate: context limit %d reached", m->n_ctx); break; }
        if ((st = rlx_model_eval(m, &next, 1, &logits)) != RLX_OK) break;
    }
    stats->generate_seconds = seconds_now() - t0;
    if (st == RLX_OK && !stopped) {
        const char *text;
        size_t len;
        if (rlx_tok_stream_flush(stream, &text, &len) == RLX_OK && len && on_token)
            call_on_token(m, on_token, text, len, -1, user);
    }
done:
    rlx_tok_stream_free(stream);
    rlx_sampler_free(smp);
    free(ids);
    return st;
}
