/*
 * fuzz_safetensors.c — libFuzzer target for the safetensors reader and the
 * JSON parser under it. Each input is parsed twice:
 *  - as a whole safetensors file; when it parses, everything it describes is
 *    touched (every tensor's bytes and dims, every lookup, the metadata), so
 *    that an out-of-range offset or length shows up under ASan;
 *  - from byte 8 on as JSON text (the header region, whatever the length
 *    field says), walking the whole DOM, so the parser is fuzzed on header-
 *    shaped input even where the file checks would stop first.
 * A rejected input must say RLX_STATUS_FORMAT, with a message.
 *
 *   make fuzz                                    builds build/fuzz/fuzz_safetensors (clang)
 *   build/fuzz/fuzz_safetensors -max_total_time=45 build/fuzz/corpus_st
 *
 * It lives in tests/fuzz/, outside the tests/ wildcard, so rlx_tests does not link it.
 */
#include "io/safetensors.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void must_be_format(rlx_status st) {
    if (st != RLX_STATUS_FORMAT || rlx_last_error()[0] == 0) abort();   /* invalid input must say FORMAT, why */
}

static uint64_t walk(const json_value *v, int depth) {
    if (depth > JSON_DEFAULT_MAX_DEPTH) abort();   /* the parser bounds nesting */
    uint64_t acc = v->type + v->offset;
    if (v->type == JSON_STRING) {
        if (v->u.str.s[v->u.str.len] != 0 || !json_utf8_valid(v->u.str.s, v->u.str.len, NULL)) abort();
        acc += v->u.str.len;
    } else if (v->type == JSON_NUMBER) {
        if (v->u.num.is_int) acc += (uint64_t)v->u.num.i;
    } else if (v->type == JSON_ARRAY) {
        for (size_t i = 0; i < v->u.arr.n; i++) acc += walk(json_at(v, i), depth + 1);
    } else if (v->type == JSON_OBJECT) {
        for (size_t i = 0; i < v->u.obj.n; i++) {
            const json_member *m = json_member_at(v, i);
            if (m->key[m->key_len] != 0) abort();
            acc += m->key_len + walk(&m->value, depth + 1);
        }
    }
    return acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint64_t acc = 0;
    sft_file *f;
    rlx_status st = sft_open_memory(data, size, &f);
    if (st != RLX_OK) {
        must_be_format(st);
    } else {
        for (int64_t i = 0; i < sft_tensor_count(f); i++) {
            const sft_tensor *t = sft_tensor_at(f, i);
            const uint8_t *p = t->data;
            if (sft_find(f, t->name) != t) abort();
            if (p < data || t->size > size || p + t->size > data + size) abort();
            for (uint64_t k = 0; k < t->size; k++) acc += p[k];
            for (int d = 0; d < t->n_dims; d++) acc += (uint64_t)t->dims[d];
            rlx_dtype dt;
            st = sft_get(f, t->name, NULL, &dt);
            if (st != RLX_OK && st != RLX_STATUS_UNSUPPORTED) abort();
        }
        for (int64_t i = 0; i < sft_metadata_count(f); i++)
            if (sft_metadata_get(f, sft_metadata_key(f, i)) == NULL) abort();
        sft_close(f);
    }
    if (size > 8) {
        json_doc *d;
        st = json_parse((const char *)data + 8, size - 8, NULL, &d);
        if (st != RLX_OK) {
            must_be_format(st);
        } else {
            acc += walk(json_root(d), 0);
            json_free(d);
        }
    }
    sink = acc;
    return 0;
}
