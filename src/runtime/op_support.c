/*
 * op_support.c — the op x backend x dtype support matrix (op_support.h).
 *
 * Backends: read from their own tables (cpu_backend_has_kernel,
 * vk_backend_has_lowering). Dtypes: found by asking each op's shape rule,
 * which is what accepts or refuses a dtype at build time for every backend:
 * one small node per op and dtype (the recipe below, by shape rule), with
 * the other inputs (indices, labels, conditions, positions) fixed. An op
 * whose rule has no recipe shows "?", which tests/test_op_table.c refuses.
 */
#include "runtime/op_support.h"
#include "cpu/cpu_backend.h"
#include "ir/shape_rules.h"
#ifdef RLX_HAVE_VULKAN
#include "vulkan/vk_backend.h"
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rt_support_backend_name(rt_support_backend b) {
    return b == RT_SUPPORT_CPU ? "cpu" : b == RT_SUPPORT_VULKAN ? "vulkan" : "?";
}

bool rt_support_backend_built(rt_support_backend b) {
#ifdef RLX_HAVE_VULKAN
    if (b == RT_SUPPORT_VULKAN) return true;
#endif
    return b == RT_SUPPORT_CPU;
}

bool rt_support_has(rt_support_backend b, ir_op op) {
    if ((unsigned)op >= IR_OP_COUNT) return false;
    if (b == RT_SUPPORT_CPU) return cpu_backend_has_kernel(op);
#ifdef RLX_HAVE_VULKAN
    if (b == RT_SUPPORT_VULKAN) return vk_backend_has_lowering(op);
#endif
    return false;
}

/* ------------------------------------------------------------ dtype probe */

#define PROBE_K 256   /* a row of every block type */

static int32_t probe_source(ir_graph *g, rlx_dtype dt, int rank, const int64_t *dims) {
    ir_node n;
    memset(&n, 0, sizeof n);
    /* block-quantized data and kv caches are params; the rest inputs */
    n.op = rlx_dtype_is_quantized(dt) ? IR_OP_PARAM : IR_OP_INPUT;
    n.dtype = dt;
    n.shape.rank = rank;
    for (int i = 0; i < rank; i++) n.shape.d[i] = ir_dim_const(dims[i]);
    int32_t id;
    return ir_graph_append(g, &n, &id) == RLX_OK ? id : -1;
}

/* A KV cache [1, 1, 4, 4] of dt: a param, since the cache ops write it in place. */
static int32_t probe_cache(ir_graph *g, rlx_dtype dt) {
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = IR_OP_PARAM;
    n.dtype = dt;
    n.shape.rank = 4;
    for (int i = 0; i < 4; i++) n.shape.d[i] = ir_dim_const(i >= 2 ? 4 : 1);
    int32_t id;
    return ir_graph_append(g, &n, &id) == RLX_OK ? id : -1;
}

static void probe_inputs(ir_node *n, int count, ...) {
    va_list ap;
    va_start(ap, count);
    for (int i = 0; i < count; i++) n->in[i] = va_arg(ap, int32_t);
    va_end(ap);
    n->n_in = count;
}

static void probe_shape(ir_node *n, int rank, int64_t d0, int64_t d1) {
    n->shape.rank = rank;
    n->shape.d[0] = ir_dim_const(d0);
    if (rank > 1) n->shape.d[1] = ir_dim_const(d1);
}

/* Whether op's shape rule accepts dt as the dtype of its data inputs; -1
 * when there is no recipe for the op's rule. */
static int probe_dtype(ir_op op, rlx_dtype dt) {
    ir_shape_rule rule = ir_op_info_get(op)->rule;
    ir_graph g;
    ir_graph_init(&g);
    ir_node n;
    memset(&n, 0, sizeof n);
    n.op = op;
    n.dtype = dt;
/* SRC(dtype, dims...): a source node of those static dims */
#define SRC(dt_, ...) probe_source(&g, dt_, (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (int64_t[]){__VA_ARGS__})
    int64_t K = PROBE_K;
    if (rule == shape_binary || rule == shape_compare) {
        probe_inputs(&n, 2, SRC(dt, 2, 4), SRC(dt, 2, 4));
    } else if (rule == shape_unary || rule == shape_cast) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
        if (rule == shape_cast) n.dtype = RLX_F32;   /* from dt */
    } else if (rule == shape_where) {
        probe_inputs(&n, 3, SRC(RLX_BOOL, 2, 4), SRC(dt, 2, 4), SRC(dt, 2, 4));
    } else if (rule == shape_ternary) {
        probe_inputs(&n, 3, SRC(dt, 2, 4), SRC(dt, 2, 4), SRC(dt, 2, 4));
    } else if (rule == shape_matmul) {
        probe_inputs(&n, 2, SRC(dt, 2, 4), SRC(dt, 4, 3));
    } else if (rule == shape_dequant_matmul) {
        probe_inputs(&n, 2, SRC(RLX_F32, 2, K), SRC(dt, 3, K));
    } else if (rule == shape_dequant_fused || rule == shape_rms_dequant) {
        bool swiglu = op == IR_OP_DEQUANT_SWIGLU || op == IR_OP_RMS_DEQUANT_SWIGLU;
        int32_t x = SRC(RLX_F32, 2, K), w = SRC(dt, 3, K);
        int32_t third = swiglu ? SRC(dt, 3, K) : SRC(RLX_F32, 2, 3);
        if (rule == shape_dequant_fused) probe_inputs(&n, 3, x, w, third);
        else if (swiglu) probe_inputs(&n, 4, x, w, third, SRC(RLX_F32, K));
        else probe_inputs(&n, 3, x, w, SRC(RLX_F32, K));
    } else if (rule == shape_reduce) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
        ir_attr_set_reduce_axes(&n, 1);
    } else if (rule == shape_argreduce || rule == shape_axis_op) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
    } else if (rule == shape_norm) {
        probe_inputs(&n, 2, SRC(dt, 2, 4), SRC(dt, 4));
    } else if (rule == shape_add_norm) {
        probe_inputs(&n, 3, SRC(dt, 2, 4), SRC(dt, 2, 4), SRC(dt, 4));
    } else if (rule == shape_reshape) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
        probe_shape(&n, 1, 8, 0);
    } else if (rule == shape_transpose) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
        probe_shape(&n, 2, 4, 2);
        ir_attr_set_transpose_perm(&n, 0, 1);
        ir_attr_set_transpose_perm(&n, 1, 0);
    } else if (rule == shape_slice) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
        probe_shape(&n, 2, 1, 4);
        ir_attr_set_slice_step(&n, 1);
    } else if (rule == shape_concat) {
        probe_inputs(&n, 2, SRC(dt, 2, 4), SRC(dt, 2, 4));
    } else if (rule == shape_expand) {
        probe_inputs(&n, 1, SRC(dt, 1, 4));
        probe_shape(&n, 2, 3, 4);
    } else if (rule == shape_gather_rows) {
        probe_inputs(&n, 2, SRC(dt, 3, K), SRC(RLX_I32, 2));
    } else if (rule == shape_gather) {
        probe_inputs(&n, 2, SRC(dt, 2, 4), SRC(RLX_I32, 2, 4));
    } else if (rule == shape_scatter_add_rows) {
        probe_inputs(&n, 3, SRC(dt, 3, 4), SRC(RLX_I32, 2), SRC(dt, 2, 4));
    } else if (rule == shape_scatter_add) {
        probe_inputs(&n, 3, SRC(dt, 2, 4), SRC(RLX_I32, 2, 4), SRC(dt, 2, 4));
    } else if (rule == shape_conv) {
        probe_inputs(&n, 2, SRC(dt, 1, 2, 4, 4), SRC(dt, 3, 2, 3, 3));
        ir_attr_set_conv_dims(&n, 2);
        ir_attr_set_conv_groups(&n, 1);
        ir_attr_set_conv_stride0(&n, 1), ir_attr_set_conv_stride1(&n, 1), ir_attr_set_conv_stride2(&n, 1);
        ir_attr_set_conv_dilation0(&n, 1), ir_attr_set_conv_dilation1(&n, 1), ir_attr_set_conv_dilation2(&n, 1);
    } else if (rule == shape_conv_transpose || rule == shape_conv_weight_grad) {
        if (rule == shape_conv_transpose) probe_inputs(&n, 2, SRC(dt, 1, 2, 4, 4), SRC(dt, 2, 3, 3, 3));
        else probe_inputs(&n, 3, SRC(dt, 1, 2, 4, 4), SRC(dt, 1, 3, 2, 2), SRC(dt, 3, 2, 3, 3));
        ir_attr_set_conv_dims(&n, 2);
        ir_attr_set_conv_groups(&n, 1);
        ir_attr_set_conv_stride0(&n, 1), ir_attr_set_conv_stride1(&n, 1), ir_attr_set_conv_stride2(&n, 1);
        ir_attr_set_conv_dilation0(&n, 1), ir_attr_set_conv_dilation1(&n, 1), ir_attr_set_conv_dilation2(&n, 1);
    } else if (rule == shape_resize || rule == shape_resize_grad) {
        bool grad = rule == shape_resize_grad;
        probe_inputs(&n, 1, grad ? SRC(dt, 1, 2, 6, 6) : SRC(dt, 1, 2, 3, 3));
        ir_attr_set_resize_dims(&n, 2), ir_attr_set_resize_mode(&n, 1);
        ir_attr_set_resize_in0(&n, 3), ir_attr_set_resize_in1(&n, 3), ir_attr_set_resize_in2(&n, 1);
        ir_attr_set_resize_out0(&n, 6), ir_attr_set_resize_out1(&n, 6), ir_attr_set_resize_out2(&n, 1);
        ir_attr_set_resize_scale0(&n, 2), ir_attr_set_resize_scale1(&n, 2), ir_attr_set_resize_scale2(&n, 1);
    } else if (rule == shape_flip) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
        ir_attr_set_flip_axes(&n, 2);
    } else if (rule == shape_depth_space) {
        probe_inputs(&n, 1, SRC(dt, 1, 4, 2, 2));
        ir_attr_set_depth_space_blocksize(&n, 2);
    } else if (rule == shape_adaptive_pool || rule == shape_adaptive_pool_grad) {
        if (rule == shape_adaptive_pool) probe_inputs(&n, 1, SRC(dt, 1, 2, 5, 5));
        else probe_inputs(&n, 2, SRC(dt, 1, 2, 5, 5), SRC(dt, 1, 2, 3, 3));
        ir_attr_set_adaptive_pool_dims(&n, 2), ir_attr_set_adaptive_pool_kind(&n, 1);
        ir_attr_set_adaptive_pool_out0(&n, 3), ir_attr_set_adaptive_pool_out1(&n, 3);
    } else if (rule == shape_pool_grad) {
        probe_inputs(&n, 2, SRC(dt, 1, 2, 4, 4), SRC(dt, 1, 2, 2, 2));
        ir_attr_set_pool_dims(&n, 2);
        ir_attr_set_pool_kernel0(&n, 2), ir_attr_set_pool_kernel1(&n, 2), ir_attr_set_pool_kernel2(&n, 1);
        ir_attr_set_pool_stride0(&n, 2), ir_attr_set_pool_stride1(&n, 2), ir_attr_set_pool_stride2(&n, 1);
    } else if (rule == shape_pool) {
        probe_inputs(&n, 1, SRC(dt, 1, 2, 4, 4));
        ir_attr_set_pool_dims(&n, 2);
        ir_attr_set_pool_kernel0(&n, 2), ir_attr_set_pool_kernel1(&n, 2), ir_attr_set_pool_kernel2(&n, 1);
        ir_attr_set_pool_stride0(&n, 2), ir_attr_set_pool_stride1(&n, 2), ir_attr_set_pool_stride2(&n, 1);
    } else if (rule == shape_chan_norm) {
        if (op == IR_OP_BATCH_NORM)
            probe_inputs(&n, 5, SRC(dt, 1, 2, 3, 3), SRC(dt, 2), SRC(dt, 2), SRC(dt, 2), SRC(dt, 2));
        else
            probe_inputs(&n, 3, SRC(dt, 1, 2, 3, 3), SRC(dt, 2), SRC(dt, 2));
        ir_attr_set_chan_norm_groups(&n, op == IR_OP_GROUP_NORM ? 2 : 0);
    } else if (rule == shape_topk) {
        probe_inputs(&n, 1, SRC(dt, 2, 4));
        ir_attr_set_topk_k(&n, 1);
    } else if (rule == shape_attention) {
        probe_inputs(&n, 3, SRC(dt, 1, 1, 2, 4), SRC(dt, 1, 1, 2, 4), SRC(dt, 1, 1, 2, 4));
        ir_attr_set_attention_mask(&n, RLX_MASK_NONE);
        ir_attr_set_attention_scale(&n, 1.0);
    } else if (rule == shape_rope || rule == shape_rope_kv_write) {
        int32_t x = SRC(dt, 1, 1, 2, 4);
        if (rule == shape_rope) {
            probe_inputs(&n, 1, x);
        } else {
            probe_inputs(&n, 3, probe_cache(&g, dt), x, SRC(RLX_I32, 1));
        }
        ir_attr_set_rope_style(&n, RLX_ROPE_NEOX);
        ir_attr_set_rope_rotary_dims(&n, 4);
        ir_attr_set_rope_theta(&n, 10000.0);
    } else if (rule == shape_assign) {
        probe_inputs(&n, 2, probe_cache(&g, dt), SRC(dt, 4));
    } else if (rule == shape_kv_write) {
        probe_inputs(&n, 3, probe_cache(&g, dt), SRC(dt, 1, 1, 1, 4), SRC(RLX_I32, 1));
    } else if (rule == shape_dequant_rope_kv) {
        /* dt is w's: x f32 [1, K] x w [8, K], the product as [1, 2, 1, 4], roped */
        probe_inputs(&n, 2, SRC(RLX_F32, 1, K), SRC(dt, 8, K));
        ir_attr_set_dequant_rope_kv_consumer_op(&n, IR_OP_ROPE);
        ir_attr_set_dequant_rope_kv_style(&n, RLX_ROPE_NEOX);
        ir_attr_set_dequant_rope_kv_rotary_dims(&n, 4);
        ir_attr_set_dequant_rope_kv_theta(&n, 10000.0);
        ir_attr_set_dequant_rope_kv_view_b(&n, 1);
        ir_attr_set_dequant_rope_kv_view_h(&n, 2);
        ir_attr_set_dequant_rope_kv_view_s(&n, 1);
        ir_attr_set_dequant_rope_kv_view_d(&n, 4);
    } else if (rule == shape_attention_dequant) {
        /* dt is w's: f32 attention [1, 1, 1, K] over 2 keys as x [1, K], x w [3, K] */
        probe_inputs(&n, 4, SRC(RLX_F32, 1, 1, 1, K), SRC(RLX_F32, 1, 1, 2, K), SRC(RLX_F32, 1, 1, 2, K), SRC(dt, 3, K));
        ir_attr_set_attention_dequant_mask(&n, RLX_MASK_NONE);
        ir_attr_set_attention_dequant_scale(&n, 1.0);
        ir_attr_set_attention_dequant_product_op(&n, IR_OP_DEQUANT_MATMUL);
        ir_attr_set_attention_dequant_attention_inputs(&n, 3);
        ir_attr_set_attention_dequant_rows(&n, 1);
    } else if (rule == shape_ce_loss || rule == shape_ce_grad) {
        probe_inputs(&n, 2, SRC(dt, 2, 3), SRC(RLX_I32, 2));
    } else {
        ir_graph_clear(&g);
        return -1;
    }
#undef SRC
    bool ok = true;
    for (int i = 0; i < n.n_in; i++) ok = ok && n.in[i] >= 0;
    int32_t id;
    ok = ok && ir_graph_append(&g, &n, &id) == RLX_OK;
    ir_graph_clear(&g);
    return ok;
}

/* ----------------------------------------------------------------- table */

typedef struct md_buf {
    char  *s;
    size_t len, cap;
    bool   failed;
} md_buf;

static void md(md_buf *b, const char *fmt, ...) RLX_PRINTF(2, 3);

static void md(md_buf *b, const char *fmt, ...) {
    if (b->failed) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (w < 0) { b->failed = true; return; }
    if (b->len + (size_t)w + 1 > b->cap) {
        size_t cap = (b->cap + (size_t)w + 1) * 2;
        char *s = realloc(b->s, cap);
        if (!s) { b->failed = true; return; }
        b->s = s;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)w;
}

static void md_dtypes(md_buf *b, ir_op op) {
    const char *sep = "";
    int quant = 0, n_quant = 0;
    for (int dt = 0; dt < RLX_DTYPE_COUNT; dt++) {
        int ok = probe_dtype(op, (rlx_dtype)dt);
        if (ok < 0) { md(b, "?"); return; }
        if (rlx_dtype_is_quantized((rlx_dtype)dt)) { n_quant++; quant += ok; continue; }
        if (ok) { md(b, "%s%s", sep, rlx_dtype_name((rlx_dtype)dt)); sep = " "; }
    }
    if (quant == n_quant) md(b, "%sblock types", sep);
    else if (quant) md(b, "%s%d of %d block types", sep, quant, n_quant);
}

char *rt_op_matrix_markdown(void) {
    md_buf b = {0};
    md(&b, "| op | inputs | attributes | cpu | vulkan | dtypes the shape rule accepts |\n");
    md(&b, "| --- | --- | --- | --- | --- | --- |\n");
    int n_attrs;
    const ir_attr_desc *attrs = ir_attr_table(&n_attrs);
    for (int i = 0; i < IR_OP_COUNT; i++) {
        ir_op op = (ir_op)i;
        const ir_op_info *info = ir_op_info_get(op);
        bool source = info->rule == shape_source;
        md(&b, "| `%s` | ", info->name);
        if (info->arity < 0) md(&b, "var");
        else md(&b, "%d", info->arity);
        md(&b, " | ");
        ir_attr_family fam = ir_op_attr_family(op);
        const char *sep = "";
        for (int a = 0; fam != IR_ATTR_FAMILY_NONE && a < n_attrs; a++)
            if (attrs[a].family == fam) { md(&b, "%s%s", sep, attrs[a].name); sep = " "; }
        md(&b, " |");
        for (int be = 0; be < RT_SUPPORT_BACKENDS; be++) {
            /* a node Vulkan has no lowering for runs on the CPU kernel (a host step) */
            const char *missing = be == RT_SUPPORT_CPU ? "no" : "host step";
            const char *cell = source ? "source" : !rt_support_backend_built((rt_support_backend)be) ? "?"
                             : rt_support_has((rt_support_backend)be, op) ? "yes" : missing;
            md(&b, " %s |", cell);
        }
        md(&b, " ");
        if (source) md(&b, "all");
        else md_dtypes(&b, op);
        md(&b, " |\n");
    }
    if (b.failed) { free(b.s); return NULL; }
    return b.s;
}
