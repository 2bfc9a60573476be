/*
 * tiny_model.h — writes a tiny random-weight Llama-family GGUF for tests (no
 * downloads): SentencePiece vocabulary with byte fallback, every weight in a
 * chosen storage type (F32, F16, Q8_0, Q4_K, ...).
 */
#ifndef RLX_TEST_TINY_MODEL_H
#define RLX_TEST_TINY_MODEL_H

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
/* Deterministic weights from a tensor's name: norms in [0.8, 1.2), others in
 * [-amp, amp), so CPU and GPU runs of one test see the same model. */
void tiny_model_hash_fill(const char *name, float *w, size_t n, double amp);

#endif
