/*
 * tiny_model.h — writes a tiny random-weight Llama-family GGUF for tests (no
 * downloads): SentencePiece vocabulary with byte fallback, every weight in a
 * chosen storage type (F32, F16, Q8_0, Q4_K, ...); and copies GGUF files
 * with changes (dropped or replaced keys and tensors) for tests of bad files.
 */
#ifndef RLX_TEST_TINY_MODEL_H
#define RLX_TEST_TINY_MODEL_H

#include "io/gguf.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tiny_model_spec {
    const char *arch;        /* "llama", "qwen2", "qwen3" */
    uint32_t    weight_type; /* qtype for 2-D weights (norms stay F32) */
    int         n_layer, n_embd, n_head, n_head_kv, n_ff, n_ctx;
    uint64_t    seed;
    int         rope_freqs;  /* write llama3-style rope_freqs.weight */
    int         short_scores;/* write one score too few (a malformed vocabulary) */
    /* RoPE context extension keys (<arch>.rope.scaling.*); each is written
     * only when set (NULL / 0), so the default file has none of them. */
    const char *rope_scaling_type;   /* "linear", "yarn", "none", or any string */
    float       rope_scaling_factor;
    float       rope_scale_linear;   /* the legacy <arch>.rope.scale_linear key */
    uint32_t    rope_orig_ctx;       /* rope.scaling.original_context_length */
    float       rope_attn_factor;    /* rope.scaling.attn_factor */
    float       yarn_log_mul, yarn_beta_fast, yarn_beta_slow, yarn_ext_factor;
    int         head_dim;    /* != 0: attention.key_length/value_length (else n_embd / n_head, no keys) */
    int         rope_dims;   /* != 0: rope.dimension_count (partial rotary) */
    int         attn_bias;   /* llama: write the optional q/k/v/output biases */
} tiny_model_spec;

void tiny_model_spec_init(tiny_model_spec *s);
/* Writes the model to path; returns 0 on success. */
int tiny_model_write(const tiny_model_spec *s, const char *path);

/* A per-process temp path for a test model, /tmp/rlx_test_<tag>_<pid>.gguf. */
void tiny_model_tmp_path(char *buf, size_t n, const char *tag);
/* rlx_model_load with a 64-position context on backend (Vulkan: the test device), or NULL (printed). */
struct rlx_model *tiny_model_load(const char *path, int backend);
/* tiny_model_load with compile.exact_quant = exact_quant. */
struct rlx_model *tiny_model_load_quant(const char *path, int backend, int exact_quant);
/* What tiny_gguf_rewrite changes on the way; each hook may be NULL (keep
 * everything), and a hook that fails stops the copy with its status. */
typedef struct tiny_gguf_edit {
    void *user;
    /* Metadata entry kv of f: copied as it is (gguf_set_from) while *keep
     * stays true; set it false to leave the entry out, after setting a
     * replacement under its key in w when wanted (it takes the entry's place). */
    rlx_status (*kv)(void *user, gguf_writer *w, const gguf_file *f, int64_t kv, bool *keep);
    /* After the metadata, before the tensors: more keys (setting a key the
     * copy has replaces its value in place). */
    rlx_status (*more_kv)(void *user, gguf_writer *w);
    /* A copy of a tensor's info: change its dims, type, size or data to
     * write something else (the writer checks them), or set *keep false to
     * leave it out. */
    rlx_status (*tensor)(void *user, gguf_tensor *t, bool *keep);
} tiny_gguf_edit;

/* Reads the GGUF file at src and writes it to dst through a gguf_writer with
 * edit's changes (NULL: none). dst may be src: the writer's tensors then
 * borrow the mapping of the file being replaced. Returns the first failure
 * (rlx_last_error() says what). */
rlx_status tiny_gguf_rewrite(const char *src, const char *dst, const tiny_gguf_edit *edit);

/* Deterministic weights from a tensor's name: norms in [0.8, 1.2), others in
 * [-amp, amp), so CPU and GPU runs of one test see the same model. */
void tiny_model_hash_fill(const char *name, float *w, size_t n, double amp);

#endif
