/*
 * quantize.c — `rlx quantize IN OUT TYPE`: writes a copy of a GGUF file with
 * its 2-D float weights (f32, f16, bf16, row length a multiple of the block
 * size) quantized to TYPE. Everything else — 1-D tensors such as norms and
 * biases, tensors already quantized, rows that do not fit the block — is
 * copied unchanged, as is all metadata; general.file_type is set.
 *
 * Tensors are quantized one at a time while the file is written (a fill
 * callback of the GGUF writer), so the peak memory is one output tensor, the
 * per-thread scratch rows and the mapped input, not the whole output.
 *
 * TYPE is a ggml type name (q4_0, q8_0, q4_K, f16, ...) or one of the mixes
 * q4_K_M / q5_K_M: like llama.cpp's, they store output.weight and the
 * attn_v / ffn_down weights of some layers (the first and last eighth, and
 * every third in between) as q6_K, the rest as q4_K / q5_K.
 */
#include "io_cmds.h"
#include "core/threadpool.h"
#include "io/gguf.h"
#include "quant/quant.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* llama.cpp's file-type ids ("mostly X"), written as general.file_type. */
static const struct { const char *name; uint32_t type, file_type; bool mix; } TARGETS[] = {
    {"f32", QTYPE_F32, 0, false},    {"f16", QTYPE_F16, 1, false},    {"bf16", QTYPE_BF16, 32, false},
    {"q4_0", QTYPE_Q4_0, 2, false},  {"q4_1", QTYPE_Q4_1, 3, false},  {"q8_0", QTYPE_Q8_0, 7, false},
    {"q5_0", QTYPE_Q5_0, 8, false},  {"q5_1", QTYPE_Q5_1, 9, false},  {"q2_K", QTYPE_Q2_K, 10, false},
    {"q3_K", QTYPE_Q3_K, 11, false}, {"q3_K_S", QTYPE_Q3_K, 11, false},
    {"q4_K", QTYPE_Q4_K, 14, false}, {"q4_K_S", QTYPE_Q4_K, 14, false}, {"q4_K_M", QTYPE_Q4_K, 15, true},
    {"q5_K", QTYPE_Q5_K, 16, false}, {"q5_K_S", QTYPE_Q5_K, 16, false}, {"q5_K_M", QTYPE_Q5_K, 17, true},
    {"q6_K", QTYPE_Q6_K, 18, false},
};

static bool is_float(uint32_t t) { return t == QTYPE_F32 || t == QTYPE_F16 || t == QTYPE_BF16; }
/* A 2-D float tensor with elements: what quantize may convert. */
static bool may_convert(const gguf_tensor *t) { return is_float(t->type) && t->n_dims == 2 && t->n_elements > 0; }

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Layer index of "blk.N.*", or -1. */
static int layer_of(const char *name) {
    if (strncmp(name, "blk.", 4) != 0) return -1;
    char *end;
    long v = strtol(name + 4, &end, 10);
    return end != name + 4 && *end == '.' && v >= 0 && v < 1000000 ? (int)v : -1;
}

static bool more_bits(int layer, int n_layers) {
    return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

/* One converted tensor: what its fill needs when the writer reaches it. */
typedef struct job {
    const gguf_tensor *t;
    uint32_t to;
    uint8_t *out;        /* the writer's buffer, set by quantize_fill */
    uint64_t row_bytes;
    float *scratch;      /* one row per worker, shared by all jobs */
    rlx_threadpool *pool;
} job;

static void quantize_rows(void *ctx, int64_t begin, int64_t end, int worker) {
    job *j = ctx;
    int64_t row = j->t->dims[0];
    float *x = j->scratch + (size_t)worker * (size_t)row;
    uint64_t in_row_bytes;
    qtype_row_bytes(j->t->type, (uint64_t)row, &in_row_bytes);
    for (int64_t r = begin; r < end; r++) {
        quant_dequantize_row(j->t->type, (const uint8_t *)j->t->data + (uint64_t)r * in_row_bytes, x, row);
        quant_quantize_row(j->to, x, j->out + (uint64_t)r * j->row_bytes, row);
    }
}

/* gguf_fill_fn: the tensor's rows quantized straight into the writer's buffer
 * (size was checked against the type when the tensor was added). */
static rlx_status quantize_fill(void *ctx, void *dst, uint64_t size) {
    (void)size;
    job *j = ctx;
    j->out = dst;
    rlx_parallel_for(j->pool, j->t->dims[1], 1, quantize_rows, j);
    j->out = NULL;
    return RLX_OK;
}

int cmd_quantize(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: rlx quantize IN OUT TYPE\n  TYPE: f32 f16 bf16 q4_0 q4_1 q5_0 q5_1 q8_0 q2_K q3_K q4_K q5_K q6_K"
                        " q4_K_M q5_K_M\n");
        return 2;
    }
    const char *in = argv[0], *out = argv[1];
    size_t ti = 0;
    while (ti < RLX_ARRAY_LEN(TARGETS) && strcasecmp(argv[2], TARGETS[ti].name) != 0) ti++;
    if (ti == RLX_ARRAY_LEN(TARGETS)) {
        fprintf(stderr, "rlx quantize: unknown type '%s' (see rlx quantize without arguments)\n", argv[2]);
        return 2;
    }
    struct stat si, so;
    if (stat(in, &si) == 0 && stat(out, &so) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
        fprintf(stderr, "rlx quantize: OUT must differ from IN\n");
        return 2;
    }
    gguf_file *f;
    if (gguf_open(in, &f) != RLX_OK) {
        fprintf(stderr, "rlx quantize: %s\n", rlx_last_error());
        return 1;
    }
    int rc = 1;
    gguf_writer *w = gguf_writer_new();
    int64_t nt = gguf_tensor_count(f);
    job *jobs = calloc((size_t)nt + 1, sizeof *jobs);
    rlx_threadpool *pool = rlx_threadpool_new(0);
    int threads = rlx_threadpool_size(pool);
    float *scratch = NULL;
    if (!w || !jobs) { fprintf(stderr, "rlx quantize: out of memory\n"); goto done; }

    for (int64_t i = 0; i < gguf_kv_count(f); i++)
        if (gguf_set_from(w, f, i) != RLX_OK) goto fail;
    if (gguf_set_u32(w, "general.file_type", TARGETS[ti].file_type) != RLX_OK) goto fail;
    if (TARGETS[ti].type != QTYPE_F32 && TARGETS[ti].type != QTYPE_F16 && TARGETS[ti].type != QTYPE_BF16 &&
        gguf_set_u32(w, "general.quantization_version", 2) != RLX_OK)
        goto fail;

    int n_layers = 0;
    for (int64_t i = 0; i < nt; i++) {
        int l = layer_of(gguf_tensor_at(f, i)->name);
        if (l + 1 > n_layers) n_layers = l + 1;
    }
    /* Scratch rows only for tensors that may be converted: a tensor of no
     * elements may claim any row length (dims {2^62, 0} is valid), and such a
     * length made this size wrap to 0 and the real rows overrun it. With at
     * least one element, the row fits in the file. */
    int64_t max_row = 1;
    for (int64_t i = 0; i < nt; i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        if (may_convert(t)) max_row = RLX_MAX(max_row, t->dims[0]);
    }
    uint64_t scratch_bytes;
    if (rlx_mul_overflow_u64((uint64_t)threads * sizeof(float), (uint64_t)max_row, &scratch_bytes) &&
        scratch_bytes <= SIZE_MAX)
        scratch = malloc((size_t)scratch_bytes);
    if (!scratch) { fprintf(stderr, "rlx quantize: out of memory\n"); goto done; }

    uint64_t bytes_in = 0, bytes_out = 0;
    int n_quant = 0;
    for (int64_t i = 0; i < nt; i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        uint32_t to = TARGETS[ti].type;
        if (TARGETS[ti].mix) {
            int l = layer_of(t->name);
            if (strcmp(t->name, "output.weight") == 0 ||
                (l >= 0 && (ends_with(t->name, ".attn_v.weight") || ends_with(t->name, ".ffn_down.weight")) &&
                 more_bits(l, n_layers)))
                to = QTYPE_Q6_K;
        }
        const qtype_info *q = qtype_get(to);
        uint64_t row_bytes, size;
        bytes_in += t->size;
        bool convert = may_convert(t) && t->type != to &&
                       t->dims[0] % q->block_size == 0 && qtype_row_bytes(to, (uint64_t)t->dims[0], &row_bytes) &&
                       qtype_row_bytes(to, (uint64_t)t->n_elements, &size);
        if (!convert) {
            bytes_out += t->size;
            if (gguf_add_tensor(w, t->name, t->type, t->n_dims, t->dims, t->data, t->size) != RLX_OK) goto fail;
            continue;
        }
        jobs[i] = (job){t, to, NULL, row_bytes, scratch, pool};
        if (gguf_add_tensor_fill(w, t->name, to, t->n_dims, t->dims, size, quantize_fill, &jobs[i]) != RLX_OK) goto fail;
        bytes_out += size;
        n_quant++;
    }
    if (gguf_write_file(w, out) != RLX_OK) goto fail;
    printf("%s: %d of %lld tensors quantized to %s, %.2f MiB -> %.2f MiB\n", out, n_quant, (long long)nt,
           TARGETS[ti].name, (double)bytes_in / 1048576.0, (double)bytes_out / 1048576.0);
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "rlx quantize: %s\n", rlx_last_error());
done:
    free(jobs);
    free(scratch);
    rlx_threadpool_free(pool);
    gguf_writer_free(w);
    gguf_close(f);
    return rc;
}
