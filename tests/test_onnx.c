/*
 * test_onnx.c — the ONNX reader (src/io/onnx.h) against the onnx package:
 * tests/ref/onnx_models.py writes models (every field kind by hand, external
 * data, a small PyTorch export) and prints a summary of each as the onnx
 * package reads it; the reader must print the same summary and decode the
 * tensor values. Malformed input (every truncation, random corruption,
 * crafted wire-format errors, deep nesting) must give RLX_STATUS_FORMAT or
 * parse, never crash (the sanitizer build and the fuzz target check the rest).
 *
 * With RLX_FUZZ_SEEDS=DIR, onnx_reader_matches_the_onnx_package writes the
 * models there as seeds for tests/fuzz/fuzz_onnx.c.
 */
#include "harness.h"
#include "io/onnx.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text { char *p; size_t n, cap; } text;

static void put(text *t, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char buf[4096];
    int k = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k >= sizeof buf) k = (int)sizeof buf - 1;
    if (t->n + (size_t)k + 1 > t->cap) {
        t->cap = (t->n + (size_t)k + 1) * 2;
        t->p = realloc(t->p, t->cap);
    }
    memcpy(t->p + t->n, buf, (size_t)k + 1);
    t->n += (size_t)k;
}

#define S(x) (int)(x).n, (x).p
#define OR_DASH(x) ((x).n ? (int)(x).n : 1), ((x).n ? (x).p : "-")

static void tensor_line(text *t, const onnx_tensor *x) {
    put(t, "%.*s %d [", S(x->name), x->data_type);
    for (int i = 0; i < x->n_dims; i++) put(t, "%s%lld", i ? "," : "", (long long)x->dims[i]);
    put(t, "] raw=%zu float=%zu int32=%zu int64=%zu double=%zu uint64=%zu", x->raw_data.n, x->n_float, x->n_int32,
        x->n_int64, x->n_double, x->n_uint64);
    if (x->external)
        put(t, " ext=%.*s,%lld,%lld", S(x->location), (long long)x->ext_offset, (long long)x->ext_length);
}

static void value_line(text *t, const char *kind, const onnx_value_info *v) {
    put(t, "%s %.*s %d ", kind, S(v->name), v->elem_type);
    if (!v->has_shape) {
        put(t, "-\n");
        return;
    }
    put(t, "[");
    for (int i = 0; i < v->rank; i++) {
        const onnx_dim *d = &v->dims[i];
        if (d->has_value) put(t, "%s%lld", i ? "," : "", (long long)d->value);
        else if (d->param.n) put(t, "%s%.*s", i ? "," : "", S(d->param));
        else put(t, "%s?", i ? "," : "");
    }
    put(t, "]\n");
}

static void summary(const onnx_model *m, text *t) {
    put(t, "ir %lld\n", (long long)m->ir_version);
    for (int i = 0; i < m->n_opsets; i++) put(t, "opset %.*s %lld\n", OR_DASH(m->opsets[i].domain), (long long)m->opsets[i].version);
    const onnx_graph *g = &m->graph;
    put(t, "graph %.*s nodes %d inits %d\n", S(g->name), g->n_nodes, g->n_initializers);
    for (int i = 0; i < g->n_inputs; i++) value_line(t, "input", &g->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++) value_line(t, "output", &g->outputs[i]);
    for (int i = 0; i < g->n_initializers; i++) {
        put(t, "init ");
        tensor_line(t, &g->initializers[i]);
        put(t, "\n");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const onnx_node *n = &g->nodes[i];
        put(t, "node %.*s %.*s in=", S(n->op_type), OR_DASH(n->name));
        for (int j = 0; j < n->n_inputs; j++) put(t, "%s%.*s", j ? "," : "", S(n->inputs[j]));
        put(t, " out=");
        for (int j = 0; j < n->n_outputs; j++) put(t, "%s%.*s", j ? "," : "", S(n->outputs[j]));
        put(t, "\n");
        for (int j = 0; j < n->n_attrs; j++) {
            const onnx_attr *a = &n->attrs[j];
            put(t, "  attr %.*s:%d=", S(a->name), a->type);
            switch (a->type) {
            case ONNX_ATTR_FLOAT: put(t, "%.9g", (double)a->f); break;
            case ONNX_ATTR_INT: put(t, "%lld", (long long)a->i); break;
            case ONNX_ATTR_STRING: put(t, "%.*s", S(a->s)); break;
            case ONNX_ATTR_FLOATS:
                for (size_t k = 0; k < a->n_floats; k++) put(t, "%s%.9g", k ? "," : "", (double)a->floats[k]);
                break;
            case ONNX_ATTR_INTS:
                for (size_t k = 0; k < a->n_ints; k++) put(t, "%s%lld", k ? "," : "", (long long)a->ints[k]);
                break;
            case ONNX_ATTR_STRINGS:
                for (size_t k = 0; k < a->n_strings; k++) put(t, "%s%.*s", k ? "," : "", S(a->strings[k]));
                break;
            case ONNX_ATTR_TENSOR:
                put(t, "{");
                if (a->t) tensor_line(t, a->t);
                put(t, "}");
                break;
            case ONNX_ATTR_GRAPH:
                if (a->g) put(t, "{graph %.*s nodes %d}", S(a->g->name), a->g->n_nodes);
                break;
            default: break;
            }
            put(t, "\n");
        }
    }
}

/* The python side's section "== name" up to the next one. */
static char *section(const char *all, const char *name) {
    char head[64];
    snprintf(head, sizeof head, "== %s\n", name);
    const char *p = strstr(all, head);
    if (!p) return NULL;
    p += strlen(head);
    const char *e = strstr(p, "\n== ");
    size_t n = e ? (size_t)(e - p) + 1 : strlen(p);
    char *s = malloc(n + 1);
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static bool parse_file(const char *path, void **buf, size_t *size, onnx_model *m) {
    if (!test_read_file(path, buf, size)) return false;
    rlx_status st = onnx_parse(*buf, *size, m);
    if (st != RLX_OK) printf("    %s: %s\n", path, rlx_last_error());
    return st == RLX_OK;
}

static const onnx_tensor *init_named(const onnx_graph *g, const char *name) {
    for (int i = 0; i < g->n_initializers; i++)
        if (onnx_str_eq(g->initializers[i].name, name)) return &g->initializers[i];
    return NULL;
}

static char py_out[65536];

static bool make_models(char *dir) {
    if (!mkdtemp(dir)) return false;
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s tests/ref/onnx_models.py %s 2>&1", py, dir);
    int rc = test_run_command(cmd, py_out, sizeof py_out);
    if (rc != 0) harness_fail(__FILE__, __LINE__, "onnx_models.py failed (python3-onnx missing? scripts/setup.sh installs it): %.400s", py_out);
    return rc == 0;
}

TEST(onnx_reader_matches_the_onnx_package) {
    char dir[] = "/tmp/rlx_onnx_XXXXXX";
    if (!make_models(dir)) return;
    const char *names[3] = {"hand", "ext", "torch"};
    for (int k = 0; k < 3; k++) {
        char *want = section(py_out, names[k]);
        if (!want && k == 2) break;   /* no torch: the export is skipped */
        CHECK_MSG(want, "no section %s in the reference's output", names[k]);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.onnx", dir, names[k]);
        void *buf = NULL;
        size_t size = 0;
        onnx_model m;
        CHECK(parse_file(path, &buf, &size, &m));
        const char *seeds = getenv("RLX_FUZZ_SEEDS");
        if (seeds && *seeds) {
            char sp[600];
            snprintf(sp, sizeof sp, "%s/%s.onnx", seeds, names[k]);
            FILE *fp = fopen(sp, "wb");
            if (fp) fwrite(buf, 1, size, fp), fclose(fp);
        }
        text got = {0};
        summary(&m, &got);
        if (got.p && strcmp(got.p, want) != 0) {   /* the first line that differs */
            const char *a = got.p, *b = want;
            while (*a && *a == *b) a++, b++;
            while (a > got.p && a[-1] != '\n') a--, b--;
            harness_fail(__FILE__, __LINE__, "%s: summaries differ at\n  rlx:  %.200s\n  onnx: %.200s", names[k], a, b);
        }
        CHECK(got.p);
        if (k == 0) {
            const onnx_tensor *b = init_named(&m.graph, "conv.b"), *sh = init_named(&m.graph, "shape");
            const onnx_tensor *dd = init_named(&m.graph, "dd"), *w = init_named(&m.graph, "conv.w");
            CHECK(b && b->n_float == 4 && b->float_data[1] == -1.25f && b->float_data[3] == 1e-7f);
            CHECK(sh && sh->n_int64 == 2 && sh->int64_data[0] == -1 && sh->int64_data[1] == 64);   /* a 10-byte varint */
            CHECK(dd && dd->n_double == 2 && dd->double_data[0] == 1.5 && dd->double_data[1] == -2.0);
            CHECK(w && w->raw_data.n == 4 * 108);
            CHECK(onnx_opset_version(&m, "") == 17 && onnx_opset_version(&m, "ai.onnx") == 17);
            CHECK(onnx_opset_version(&m, "com.microsoft") == 1 && onnx_opset_version(&m, "x") == 0);
            const onnx_attr *ks = onnx_node_attr(&m.graph.nodes[0], "kernel_shape");
            CHECK(ks && ks->n_ints == 2 && ks->ints[0] == 3 && !onnx_node_attr(&m.graph.nodes[0], "nope"));
            const onnx_attr *then = onnx_node_attr(&m.graph.nodes[7], "then_branch");
            CHECK(then && then->g && then->g->n_outputs == 1 && onnx_str_eq(then->g->nodes[0].op_type, "Identity"));
        }
        free(got.p);
        free(want);
        onnx_model_free(&m);
        free(buf);
    }
    char cmd[600], out[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    test_run_command(cmd, out, sizeof out);
}

/* ------------------------------------------------------------ malformed */

static bool ok_or_format(const void *p, size_t n) {
    onnx_model m;
    rlx_status st = onnx_parse(p, n, &m);
    if (st == RLX_OK) onnx_model_free(&m);
    return st == RLX_OK || (st == RLX_STATUS_FORMAT && rlx_last_error()[0]);
}

static bool is_format(const void *p, size_t n, const char *needle) {
    onnx_model m;
    rlx_status st = onnx_parse(p, n, &m);
    if (st == RLX_OK) onnx_model_free(&m);
    if (st != RLX_STATUS_FORMAT || !strstr(rlx_last_error(), needle)) {
        printf("    status %d, message '%s', wanted FORMAT with '%s'\n", (int)st, rlx_last_error(), needle);
        return false;
    }
    return true;
}

TEST(onnx_reader_rejects_malformed_input) {
    char dir[] = "/tmp/rlx_onnx_XXXXXX";
    if (!make_models(dir)) return;
    char path[512];
    snprintf(path, sizeof path, "%s/hand.onnx", dir);
    void *buf;
    size_t size;
    CHECK(test_read_file(path, &buf, &size));
    for (size_t n = 0; n < size; n++) CHECK_MSG(ok_or_format(buf, n), "truncated at %zu", n);
    uint8_t *copy = malloc(size);
    for (int it = 0; it < 3000; it++) {
        memcpy(copy, buf, size);
        int flips = (int)test_rand_int(1, 4);
        for (int f = 0; f < flips; f++) copy[test_rand_int(0, (int64_t)size - 1)] = (uint8_t)test_rand_int(0, 255);
        CHECK_MSG(ok_or_format(copy, size), "corruption %d", it);
    }
    free(copy);
    free(buf);
    snprintf(path, sizeof path, "rm -rf %s", dir);
    char out[64];
    test_run_command(path, out, sizeof out);

    /* crafted: field 7 (graph) with a length past the end; an 11-byte varint;
     * wire type 3 (a group); field number 0; no graph at all */
    const uint8_t past_end[] = {0x3a, 0x05, 0x0a};
    const uint8_t long_varint[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    const uint8_t group[] = {0x0b, 0x0c};
    const uint8_t field0[] = {0x00, 0x01};
    const uint8_t no_graph[] = {0x08, 0x08};
    const uint8_t wrong_type[] = {0x3d, 0, 0, 0, 0};   /* graph as fixed32 */
    CHECK(is_format(past_end, sizeof past_end, "runs past the end"));
    CHECK(is_format(long_varint, sizeof long_varint, "varint"));
    CHECK(is_format(group, sizeof group, "wire type"));
    CHECK(is_format(field0, sizeof field0, "field number"));
    CHECK(is_format(no_graph, sizeof no_graph, "no graph"));
    CHECK(is_format(wrong_type, sizeof wrong_type, "wrong wire type"));
    CHECK(is_format(NULL, 0, "no graph"));

    /* graphs nested in If attributes, deeper than the reader allows */
    enum { DEPTH = ONNX_MAX_DEPTH + 2 };
    static uint8_t nest[DEPTH * 16 + 64];
    size_t len = 0;
    /* innermost: an empty graph; each level wraps it: Graph{node{attr{g = inner}}} */
    for (int d = 0; d < DEPTH; d++) {
        uint8_t tmp[sizeof nest];
        size_t k = 0;
        /* AttributeProto: g (field 6) */
        uint8_t attr[sizeof nest];
        size_t a = 0;
        attr[a++] = 0x32;
        attr[a++] = (uint8_t)len;   /* lengths stay below 128 at this depth */
        memcpy(attr + a, nest, len), a += len;
        /* NodeProto: attribute (field 5) */
        tmp[k++] = 0x2a;
        tmp[k++] = (uint8_t)a;
        memcpy(tmp + k, attr, a), k += a;
        /* GraphProto: node (field 1) */
        nest[0] = 0x0a;
        nest[1] = (uint8_t)k;
        memcpy(nest + 2, tmp, k);
        len = k + 2;
    }
    uint8_t model[sizeof nest + 4];
    model[0] = 0x3a;
    model[1] = (uint8_t)len;
    CHECK(len < 128);
    memcpy(model + 2, nest, len);
    CHECK(is_format(model, len + 2, "nest deeper"));
}
