/*
 * fuzz_npy.c — libFuzzer target for the NPY reader (rlx_npy_load_memory). A
 * file that loads must have exactly the bytes its dtype and dims say, all
 * readable; a rejected one must say FORMAT or UNSUPPORTED, with a message.
 *
 *   make fuzz                             builds build/fuzz/fuzz_npy (clang)
 *   build/fuzz/fuzz_npy -max_total_time=30 build/fuzz/corpus_npy
 *
 * It lives in tests/fuzz/, outside the tests/ wildcard, so rlx_tests does not link it.
 */
#include "rlx.h"
#include <stdint.h>
#include <stdlib.h>

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rlx_tensor t;
    rlx_status st = rlx_npy_load_memory(data, size, &t);
    if (st != RLX_OK) {
        if ((st != RLX_STATUS_FORMAT && st != RLX_STATUS_UNSUPPORTED) || rlx_last_error()[0] == 0) abort();
        return 0;
    }
    size_t count = 1;
    for (int d = 0; d < t.rank; d++) count *= (size_t)t.dims[d];
    if (t.rank < 0 || t.rank > RLX_MAX_RANK || count * rlx_dtype_size(t.dtype) != t.bytes) abort();
    uint64_t acc = 0;
    for (size_t i = 0; i < t.bytes; i++) acc += ((const uint8_t *)t.data)[i];
    sink = acc;
    free(t.data);
    return 0;
}
