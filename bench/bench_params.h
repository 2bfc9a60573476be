/*
 * bench_params.h — fills every parameter of a compiled graph for the
 * benchmarks: one valid row (random values around 0, or around 1 for norm
 * weights), quantized to the parameter's storage type, repeated over all
 * rows, so every byte is real memory traffic without minutes of quantizing.
 * KV-cache parameters ("cache.*") are left as they are. Adds the bytes of the
 * 2-D parameters to *weight_bytes. Returns 0, or -1 with a message on stderr.
 */
#ifndef RLX_BENCH_PARAMS_H
#define RLX_BENCH_PARAMS_H
#include "rlx.h"
#include "quant/quant.h"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of parameter i (info from rlx_exec_param_info) into dst, which
 * holds info->bytes: 0, or -1 when out of memory or the dtype has no rows.
 * Deterministic, so a benchmark can write the same weights to a file
 * (llm_bench --write-gguf fills the writer's buffer with it directly). */
static inline int bench_param_fill(const rlx_tensor *info, int i, unsigned char *dst) {
    int64_t K = info->dims[info->rank - 1];
    size_t row = rlx_tensor_bytes(info->dtype, 1, &K);
    float *f = malloc(sizeof(float) * (size_t)K);
    if (!f || row == 0 || row > info->bytes) { free(f); return -1; }
    bool norm = strstr(info->name, "norm") != NULL;
    uint64_t h = 7 + (uint64_t)i;
    for (int64_t k = 0; k < K; k++) {
        h = h * 6364136223846793005ull + 1442695040888963407ull;
        f[k] = (float)((double)(h >> 11) / 9007199254740992.0 - 0.5) * (norm ? 0.2f : 0.1f) + (norm ? 1.0f : 0.0f);
    }
    uint32_t qt = quant_type_of_dtype(info->dtype);
    rlx_status st = quant_quantize_row(qt, f, dst, K);
    free(f);
    if (st != RLX_OK) return -1;
    for (size_t off = row; off + row <= info->bytes; off += row) memcpy(dst + off, dst, row);
    return 0;
}

/* The same bytes in a malloc'ed buffer of info->bytes, or NULL. */
static inline unsigned char *bench_param_data(const rlx_tensor *info, int i) {
    unsigned char *buf = malloc(info->bytes);
    if (buf && bench_param_fill(info, i, buf) != 0) { free(buf); return NULL; }
    return buf;
}

static inline int bench_fill_params(rlx_exec *e, double *weight_bytes) {
    *weight_bytes = 0;
    for (int i = 0; i < rlx_exec_param_count(e); i++) {
        rlx_tensor info;
        rlx_exec_param_info(e, i, &info);
        if (strncmp(info.name, "cache.", 6) == 0) continue;
        unsigned char *buf = bench_param_data(&info, i);
        if (!buf) { fprintf(stderr, "bench: cannot make %s\n", info.name); return -1; }
        rlx_status st = rlx_exec_set_param(e, info.name, info.dtype, buf, info.bytes);
        free(buf);
        if (st != RLX_OK) { fprintf(stderr, "set %s: %s\n", info.name, rlx_last_error()); return -1; }
        if (info.rank == 2) *weight_bytes += (double)info.bytes;
    }
    return 0;
}

#endif
