/*
 * fuzz_onnx_import.c — libFuzzer target for the ONNX importer
 * (rlx_onnx_load: the reader, then every operator's import, shape arithmetic
 * folded at import, external-data checks). Each input is written to a file in
 * a private temporary folder and loaded; a model that imports is freed, a
 * rejected one must come with a status other than OK and a message. Nothing
 * may crash or leak under ASan / UBSan.
 *
 *   make fuzz                              builds build/fuzz/fuzz_onnx_import (clang)
 *   build/fuzz/fuzz_onnx_import -max_total_time=45 build/fuzz/corpus_onnx
 *
 * It lives in tests/fuzz/, outside the tests/ wildcard, so rlx_tests does not link it.
 */
#include "rlx.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[256];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        char dir[] = "/tmp/rlx_fuzz_onnx_XXXXXX";
        if (!mkdtemp(dir)) abort();
        snprintf(path, sizeof path, "%s/model.onnx", dir);
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    rlx_onnx *m = NULL;
    rlx_status st = rlx_onnx_load(path, &m);
    if (st == RLX_OK) {
        if (!m || !rlx_onnx_graph(m)) abort();
        rlx_onnx_free(m);
    } else if (m || !rlx_last_error() || !rlx_last_error()[0]) {
        abort();   /* a failure leaves no model and says why */
    }
    return 0;
}
