/*
 * fuzz_gguf.c — libFuzzer target for the GGUF reader: parse the input, and
 * when it parses, touch everything it describes (every key and value, every
 * array element, every tensor's bytes, decoding those rlx has a codec for),
 * so that an out-of-range offset or length shows up under ASan.
 *
 *   make fuzz                          builds build/fuzz/fuzz_gguf (clang)
 *   build/fuzz/fuzz_gguf -max_total_time=60 build/fuzz/corpus
 *
 * It lives in tests/fuzz/, outside the tests/ wildcard, so rlx_tests does not link it.
 */
#include "io/gguf.h"
#include "quant/quant.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    gguf_file *f;
    rlx_status st = gguf_open_memory(data, size, &f);
    if (st != RLX_OK) {
        if (st != RLX_STATUS_FORMAT || rlx_last_error()[0] == 0) abort();   /* invalid input must say FORMAT, why */
        return 0;
    }
    uint64_t acc = 0;
    for (int64_t i = 0; i < gguf_kv_count(f); i++) {
        const char *key = gguf_kv_key(f, i);
        acc += strlen(key);
        int64_t iv;
        uint64_t uv;
        double dv;
        size_t len;
        if (gguf_kv_int(f, i, &iv)) acc += (uint64_t)iv;
        if (gguf_kv_uint(f, i, &uv)) acc += uv;
        if (gguf_kv_float(f, i, &dv)) acc += (uint64_t)(dv == dv);
        const char *s = gguf_kv_str(f, i, &len);
        if (s) acc += len + (uint8_t)(len ? s[len - 1] : 0) + (uint8_t)s[len];
        if (gguf_find_key(f, key) < 0) abort();   /* keys are unique and findable */
        uint64_t raw_len;
        const uint8_t *raw = gguf_kv_raw(f, i, &raw_len);   /* every value, arrays of arrays included */
        if (!raw || raw < data || raw_len > size || raw + raw_len > data + size) abort();
        for (uint64_t k = 0; k < raw_len; k++) acc += raw[k];
        uint64_t n = gguf_kv_arr_len(f, i);
        for (uint64_t j = 0; j < n; j++) {
            if (gguf_kv_arr_int(f, i, j, &iv)) acc += (uint64_t)iv;
            if (gguf_kv_arr_float(f, i, j, &dv)) acc += (uint64_t)(dv == dv);
            s = gguf_kv_arr_str(f, i, j, &len);
            if (s) acc += len + (uint8_t)s[len];
        }
    }
    static float buf[1 << 16];
    for (int64_t i = 0; i < gguf_tensor_count(f); i++) {
        const gguf_tensor *t = gguf_tensor_at(f, i);
        const uint8_t *p = t->data;
        if (gguf_find_tensor(f, t->name) != t) abort();
        if (p < data || t->size > size || p + t->size > data + size) abort();
        for (uint64_t k = 0; k < t->size; k++) acc += p[k];
        const qtype_info *q = qtype_get(t->type);
        if (!q) abort();
        if (q->to_f32 && t->n_elements <= (int64_t)(sizeof buf / sizeof buf[0]) &&
            quant_dequantize_row(t->type, t->data, buf, t->n_elements) != RLX_OK)
            abort();
    }
    sink = acc;
    gguf_close(f);
    return 0;
}
