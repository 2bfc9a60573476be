/*
 * fuzz_onnx.c — libFuzzer target for the ONNX reader (src/io/onnx.h). An
 * input that parses is walked whole (every string, dim, attribute value,
 * tensor field and nested graph), so an out-of-range pointer or count shows
 * up under ASan; a rejected input must say RLX_STATUS_FORMAT, with a message.
 *
 *   make fuzz                              builds build/fuzz/fuzz_onnx (clang)
 *   build/fuzz/fuzz_onnx -max_total_time=45 build/fuzz/corpus_onnx
 *
 * It lives in tests/fuzz/, outside the tests/ wildcard, so rlx_tests does not link it.
 */
#include "io/onnx.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t str_sum(onnx_str s) {
    uint64_t acc = s.n;
    for (size_t i = 0; i < s.n; i++) acc += (uint8_t)s.p[i];
    return acc;
}

static uint64_t tensor_sum(const onnx_tensor *t) {
    uint64_t acc = str_sum(t->name) + str_sum(t->raw_data) + str_sum(t->location) + (uint64_t)t->data_type;
    for (int i = 0; i < t->n_dims; i++) acc += (uint64_t)t->dims[i];
    for (size_t i = 0; i < t->n_float; i++) acc += (uint64_t)(t->float_data[i] == t->float_data[i]);
    for (size_t i = 0; i < t->n_int32; i++) acc += (uint64_t)t->int32_data[i];
    for (size_t i = 0; i < t->n_int64; i++) acc += (uint64_t)t->int64_data[i];
    for (size_t i = 0; i < t->n_double; i++) acc += (uint64_t)(t->double_data[i] == t->double_data[i]);
    for (size_t i = 0; i < t->n_uint64; i++) acc += t->uint64_data[i];
    return acc;
}

static uint64_t graph_sum(const onnx_graph *g, int depth) {
    if (depth > ONNX_MAX_DEPTH) abort();   /* the reader bounds nesting */
    uint64_t acc = str_sum(g->name);
    for (int i = 0; i < g->n_initializers; i++) acc += tensor_sum(&g->initializers[i]);
    const onnx_value_info *vis[3] = {g->inputs, g->outputs, g->value_info};
    int counts[3] = {g->n_inputs, g->n_outputs, g->n_value_info};
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < counts[k]; i++) {
            acc += str_sum(vis[k][i].name) + (uint64_t)vis[k][i].elem_type;
            for (int d = 0; d < vis[k][i].rank; d++) acc += (uint64_t)vis[k][i].dims[d].value + str_sum(vis[k][i].dims[d].param);
        }
    for (int i = 0; i < g->n_nodes; i++) {
        const onnx_node *n = &g->nodes[i];
        acc += str_sum(n->name) + str_sum(n->op_type) + str_sum(n->domain);
        for (int j = 0; j < n->n_inputs; j++) acc += str_sum(n->inputs[j]);
        for (int j = 0; j < n->n_outputs; j++) acc += str_sum(n->outputs[j]);
        for (int j = 0; j < n->n_attrs; j++) {
            const onnx_attr *a = &n->attrs[j];
            acc += str_sum(a->name) + str_sum(a->s) + (uint64_t)a->i + (uint64_t)a->type;
            if (a->t) acc += tensor_sum(a->t);
            if (a->g) acc += graph_sum(a->g, depth + 1);
            for (size_t k = 0; k < a->n_ints; k++) acc += (uint64_t)a->ints[k];
            for (size_t k = 0; k < a->n_floats; k++) acc += (uint64_t)(a->floats[k] == a->floats[k]);
            for (size_t k = 0; k < a->n_strings; k++) acc += str_sum(a->strings[k]);
            for (size_t k = 0; k < a->n_tensors; k++) acc += tensor_sum(&a->tensors[k]);
            for (size_t k = 0; k < a->n_graphs; k++) acc += graph_sum(&a->graphs[k], depth + 1);
        }
    }
    return acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    onnx_model m;
    rlx_status st = onnx_parse(data, size, &m);
    if (st != RLX_OK) {
        if (st != RLX_STATUS_FORMAT || rlx_last_error()[0] == 0) abort();
        return 0;
    }
    uint64_t acc = (uint64_t)m.ir_version + graph_sum(&m.graph, 0);
    for (int i = 0; i < m.n_opsets; i++) acc += str_sum(m.opsets[i].domain) + (uint64_t)m.opsets[i].version;
    sink = acc;
    onnx_model_free(&m);
    return 0;
}
