/*
 * dump.c — a readable text form of a graph, one node per line:
 *   %3 = matmul(%1, %2) 'q' f32[seq,64] {transpose_b=1}
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

static void dump_attrs(text_buf *b, const ir_node *n) {
    switch (n->op) {
    case IR_OP_MATMUL: case IR_OP_MATMUL_BIAS_ACT:
        append_text(b, " {transpose_b=%lld act=%lld bias=%lld}", (long long)n->ia[0], (long long)n->ia[1], (long long)n->ia[2]);
        break;
    case IR_OP_REDUCE_SUM: case IR_OP_REDUCE_MEAN: case IR_OP_REDUCE_MAX: case IR_OP_REDUCE_MIN: case IR_OP_REDUCE_PROD:
        append_text(b, " {axes=0x%llx keepdim=%lld}", (unsigned long long)n->ia[0], (long long)n->ia[1]);
        break;
    case IR_OP_ARGMAX: case IR_OP_ARGMIN:
        append_text(b, " {axis=%lld keepdim=%lld}", (long long)n->ia[0], (long long)n->ia[1]);
        break;
    case IR_OP_SOFTMAX: case IR_OP_LOG_SOFTMAX: case IR_OP_CUMSUM: case IR_OP_CONCAT: case IR_OP_GATHER:
        append_text(b, " {axis=%lld}", (long long)n->ia[0]);
        break;
    case IR_OP_LAYER_NORM: case IR_OP_RMS_NORM: case IR_OP_ADD_LAYER_NORM: case IR_OP_ADD_RMS_NORM:
    case IR_OP_RMS_DEQUANT_MATMUL: case IR_OP_RMS_DEQUANT_SWIGLU:
        append_text(b, " {eps=%g}", n->fa[0]);
        break;
    case IR_OP_CLAMP:
        append_text(b, " {lo=%g hi=%g}", n->fa[0], n->fa[1]);
        break;
    case IR_OP_SLICE:
        if (n->ia[3] > 0)   /* the start is resolved once the axis is static (specialized graphs) */
            append_text(b, " {axis=%lld last=%lld start=%lld}", (long long)n->ia[0], (long long)n->ia[3], (long long)n->ia[1]);
        else append_text(b, " {axis=%lld start=%lld step=%lld}", (long long)n->ia[0], (long long)n->ia[1], (long long)n->ia[2]);
        break;
    case IR_OP_TRANSPOSE:
        append_text(b, " {perm=");
        for (int i = 0; i < n->shape.rank; i++) append_text(b, "%s%lld", i ? "," : "", (long long)n->ia[i]);
        append_text(b, "}");
        break;
    case IR_OP_TOPK_VALUES: case IR_OP_TOPK_INDICES:
        append_text(b, " {k=%lld}", (long long)n->ia[0]);
        break;
    case IR_OP_ATTENTION:
        append_text(b, " {mask=%lld scale=%g}", (long long)n->ia[0], n->fa[0]);
        break;
    case IR_OP_ROPE: case IR_OP_ROPE_KV_WRITE:
        append_text(b, " {style=%s dims=%lld theta=%g}", n->ia[0] ? "gptj" : "neox", (long long)n->ia[1], n->fa[0]);
        break;
    case IR_OP_ATTENTION_DEQUANT:
        append_text(b, " {%s mask=%lld scale=%g M=%lld}", ir_op_info_get((ir_op)n->ia[4])->name, (long long)n->ia[0], n->fa[0],
                    (long long)n->ia[6]);
        break;
    case IR_OP_DEQUANT_ROPE_KV:
        append_text(b, " {%s", ir_op_info_get((ir_op)n->ia[4])->name);
        if (n->ia[4] != IR_OP_KV_WRITE)
            append_text(b, " style=%s dims=%lld theta=%g", n->ia[0] ? "gptj" : "neox", (long long)n->ia[1], n->fa[0]);
        if (n->ia[5]) append_text(b, " eps=%g", n->fa[1]);
        append_text(b, " view=[%lld,%lld,%lld,%lld]}", (long long)n->ia[6], (long long)n->ia[7], (long long)n->ia[8],
                    (long long)n->ia[9]);
        break;
    default:
        break;
    }
    bool image_op = n->op == IR_OP_DEQUANT_MATMUL || n->op == IR_OP_DEQUANT_MATMUL_ADD || n->op == IR_OP_DEQUANT_SWIGLU ||
                    n->op == IR_OP_RMS_DEQUANT_MATMUL || n->op == IR_OP_RMS_DEQUANT_SWIGLU ||
                    n->op == IR_OP_DEQUANT_ROPE_KV || n->op == IR_OP_ATTENTION_DEQUANT;
    if (image_op && n->ia[IR_XIMAGE_OUT] > 0) append_text(b, " {x image out: slot %lld}", (long long)n->ia[IR_XIMAGE_OUT] - 1);
    if (image_op && n->ia[IR_XIMAGE_FROM] > 0) append_text(b, " {x from the image of %%%lld}", (long long)n->ia[IR_XIMAGE_FROM] - 1);
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
