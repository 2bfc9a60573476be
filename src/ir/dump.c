/*
 * dump.c — a readable text form of a graph, one node per line:
 *   %3 = matmul(%1, %2) 'q' f32[seq,64] {transpose_b=1 act=0 has_bias=0}
 * used by `rlx_graph_dump`, the CLI and failing tests.
 */
#include "ir/ir.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct text_buf {
    char  *data;
    size_t len, cap;
    bool   failed;
} text_buf;

static void append_text(text_buf *b, const char *fmt, ...) RLX_PRINTF(2, 3);

static void append_text(text_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (w < 0) { b->failed = true; return; }
        if ((size_t)w < b->cap - b->len) { b->len += (size_t)w; return; }
        size_t cap = b->cap * 2 + (size_t)w + 64;
        char *d = realloc(b->data, cap);
        if (!d) { b->failed = true; return; }
        b->data = d;
        b->cap = cap;
    }
}

/* " {name=value ...}" from the op's attribute family (ir/op_attrs.def). */
static void dump_attrs(text_buf *b, const ir_node *n) {
    ir_attr_family fam = ir_op_attr_family(n->op);
    if (fam == IR_ATTR_FAMILY_NONE) return;
    int count;
    const ir_attr_desc *t = ir_attr_table(&count);
    const char *sep = " {";
    for (int i = 0; i < count; i++) {
        if (t[i].family != fam) continue;
        append_text(b, "%s%s=", sep, t[i].name);
        sep = " ";
        if (t[i].kind == IR_ATTR_FLOAT) {
            append_text(b, "%g", n->fa[t[i].slot]);
        } else if (t[i].kind == IR_ATTR_INT) {
            append_text(b, "%lld", (long long)n->ia[t[i].slot]);
        } else {
            for (int d = 0; d < n->shape.rank; d++) append_text(b, "%s%lld", d ? "," : "", (long long)n->ia[t[i].slot + d]);
        }
    }
    append_text(b, "}");
}

char *ir_graph_dump(const ir_graph *g) {
    text_buf b = {0};
    b.cap = 256;
    if (!(b.data = malloc(b.cap))) return NULL;
    b.data[0] = 0;
    if (g->n_syms) {
        append_text(&b, "symbols:");
        for (int i = 0; i < g->n_syms; i++) append_text(&b, " %s", g->sym_names[i]);
        append_text(&b, "\n");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        char shape[256];
        ir_shape_format(&n->shape, g, shape, sizeof shape);
        append_text(&b, "%%%d = %s(", i, ir_op_info_get(n->op)->name);
        for (int j = 0; j < n->n_in; j++) append_text(&b, "%s%%%d", j ? ", " : "", n->in[j]);
        append_text(&b, ")");
        if (n->name) append_text(&b, " '%s'", n->name);
        append_text(&b, " %s%s", rlx_dtype_name(n->dtype), shape);
        dump_attrs(&b, n);
        append_text(&b, "\n");
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        append_text(&b, "output '%s' = %%%d\n", g->outputs[i].name, g->outputs[i].node);
    if (b.failed) { free(b.data); return NULL; }
    return b.data;
}
