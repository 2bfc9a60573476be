/*
 * test_op_table.c — walks every op of ops.def so that adding one cannot skip
 * a step: each non-source op has a CPU kernel and a float64 reference test
 * (the registry below, whose tests must exist in the harness), each op of the
 * GPU list has a Vulkan lowering (and each lowered op is in the list); the
 * attribute table (op_attrs.def) is consistent and `rlx dump` prints
 * attributes by name; and docs/ops.md's support matrix is what
 * `rlx ops --matrix` prints today.
 */
#include "harness.h"
#include "ir/shape_rules.h"
#include "runtime/op_support.h"
#include <stdlib.h>
#include <string.h>

/* The float64 reference tests of each op (space-separated harness names),
 * and whether the Vulkan backend must lower it (the GPU list: false means
 * every such node runs as a host step). Sources need neither. A new op gets
 * a line here, naming a test that checks it against tests/ref64.c. */
static const struct { const char *ref_tests; bool gpu; } op_registry[IR_OP_COUNT] = {
    [IR_OP_ADD] = {"ops_binary_f32_broadcast", true},
    [IR_OP_SUB] = {"ops_binary_f32_broadcast", true},
    [IR_OP_MUL] = {"ops_binary_f32_broadcast", true},
    [IR_OP_DIV] = {"ops_binary_f32_broadcast", true},
    [IR_OP_MAX] = {"ops_binary_f32_broadcast", true},
    [IR_OP_MIN] = {"ops_binary_f32_broadcast", true},
    [IR_OP_POW] = {"ops_binary_f32_broadcast", true},
    [IR_OP_ASSIGN] = {"ops_assign optim_steps_match_torch_rules", true},
    [IR_OP_GELU_GRAD] = {"ops_gelu_grad autodiff_unary", true},
    [IR_OP_GELU_TANH_GRAD] = {"ops_gelu_grad autodiff_unary", true},

    [IR_OP_RELU]      = {"ops_unary_f32", true},
    [IR_OP_SIGMOID]   = {"ops_unary_f32", true},
    [IR_OP_TANH]      = {"ops_unary_f32", true},
    [IR_OP_EXP]       = {"ops_unary_f32", true},
    [IR_OP_LOG]       = {"ops_unary_f32", true},
    [IR_OP_SQRT]      = {"ops_unary_f32", true},
    [IR_OP_RSQRT]     = {"ops_unary_f32", true},
    [IR_OP_NEG]       = {"ops_unary_f32 ops_unary_i32_neg_abs", true},
    [IR_OP_ABS]       = {"ops_unary_f32 ops_unary_i32_neg_abs", true},
    [IR_OP_GELU]      = {"ops_unary_f32", true},
    [IR_OP_GELU_TANH] = {"ops_unary_f32", true},
    [IR_OP_SILU]      = {"ops_unary_f32", true},
    [IR_OP_ROUND]     = {"ops_unary_f32", true},
    [IR_OP_SIN]       = {"ops_unary_f32", true},
    [IR_OP_COS]       = {"ops_unary_f32", true},
    [IR_OP_TAN]       = {"ops_unary_f32", true},
    [IR_OP_ATAN]      = {"ops_unary_f32", true},
    [IR_OP_ERF]       = {"ops_unary_f32", true},

    [IR_OP_EQ] = {"ops_compare", true},
    [IR_OP_NE] = {"ops_compare", true},
    [IR_OP_LT] = {"ops_compare", true},
    [IR_OP_LE] = {"ops_compare", true},
    [IR_OP_GT] = {"ops_compare", true},
    [IR_OP_GE] = {"ops_compare", true},

    [IR_OP_WHERE] = {"ops_where_three_way_broadcast", true},
    [IR_OP_FMA]   = {"ops_fma_broadcast edge_fma_single_rounding", true},
    [IR_OP_CLAMP] = {"ops_clamp", true},
    [IR_OP_CAST]  = {"ops_cast", true},

    [IR_OP_MATMUL]             = {"ops_matmul_2d ops_matmul_batched_broadcast", true},
    [IR_OP_MATMUL_BIAS_ACT]    = {"ops_matmul_bias_act", true},
    [IR_OP_DEQUANT_MATMUL]     = {"dequant_matmul_every_type_cpu", true},
    [IR_OP_DEQUANT_MATMUL_ADD] = {"dequant_fused_add_and_swiglu", true},
    [IR_OP_DEQUANT_SWIGLU]     = {"dequant_fused_add_and_swiglu", true},
    [IR_OP_RMS_DEQUANT_MATMUL] = {"norm_fusion_cpu_bit_exact_and_reference", true},
    [IR_OP_RMS_DEQUANT_SWIGLU] = {"norm_fusion_cpu_bit_exact_and_reference", true},
    [IR_OP_ATTENTION_DEQUANT]  = {"ops_attention_dequant_float64", true},
    [IR_OP_DEQUANT_ROPE_KV]    = {"ops_dequant_rope_kv_float64", true},

    [IR_OP_REDUCE_SUM]  = {"ops_reduce", true},
    [IR_OP_REDUCE_MEAN] = {"ops_reduce", true},
    [IR_OP_REDUCE_MAX]  = {"ops_reduce", true},
    [IR_OP_REDUCE_MIN]  = {"ops_reduce", true},
    [IR_OP_REDUCE_PROD] = {"ops_reduce", true},
    [IR_OP_ARGMAX]      = {"ops_argmax_argmin", true},
    [IR_OP_ARGMIN]      = {"ops_argmax_argmin", true},

    [IR_OP_SOFTMAX]        = {"ops_softmax_log_softmax", true},
    [IR_OP_LOG_SOFTMAX]    = {"ops_softmax_log_softmax", true},
    [IR_OP_LAYER_NORM]     = {"ops_layer_norm_rms_norm", true},
    [IR_OP_RMS_NORM]       = {"ops_layer_norm_rms_norm", true},
    [IR_OP_ADD_LAYER_NORM] = {"ops_residual_add_norm", true},
    [IR_OP_ADD_RMS_NORM]   = {"ops_residual_add_norm", true},

    [IR_OP_RESHAPE]   = {"ops_reshape", true},
    [IR_OP_TRANSPOSE] = {"ops_transpose", true},
    [IR_OP_SLICE]     = {"ops_narrow_slice ops_slice_last", true},
    [IR_OP_CONCAT]    = {"ops_concat", true},
    [IR_OP_EXPAND]    = {"ops_expand", true},

    [IR_OP_GATHER_ROWS]  = {"ops_gather_rows", true},
    [IR_OP_GATHER]       = {"ops_gather", true},
    [IR_OP_SCATTER_ADD_ROWS] = {"ops_scatter_add_rows autodiff_gather_rows_and_gather", true},
    [IR_OP_SCATTER_ADD]  = {"ops_scatter_add autodiff_gather_rows_and_gather", true},
    [IR_OP_CONV]         = {"ops_conv_f32 autodiff_conv", true},
    [IR_OP_CONV_TRANSPOSE] = {"ops_conv_transpose_f32 autodiff_conv", true},
    [IR_OP_CONV_WEIGHT_GRAD] = {"autodiff_conv", true},
    [IR_OP_POOL]         = {"ops_pool_f32 autodiff_pool", true},
    [IR_OP_POOL_GRAD]    = {"autodiff_pool", true},
    [IR_OP_RESIZE]       = {"ops_resize_f32 autodiff_resize", true},
    [IR_OP_RESIZE_GRAD]  = {"autodiff_resize", true},
    [IR_OP_FLIP]         = {"ops_flip autodiff_flip", true},
    [IR_OP_DEPTH_TO_SPACE] = {"ops_depth_space autodiff_depth_space", true},
    [IR_OP_SPACE_TO_DEPTH] = {"ops_depth_space autodiff_depth_space", true},
    [IR_OP_ADAPTIVE_POOL] = {"ops_adaptive_pool_f32 autodiff_adaptive_pool", true},
    [IR_OP_ADAPTIVE_POOL_GRAD] = {"autodiff_adaptive_pool", true},
    [IR_OP_CUMSUM]       = {"ops_cumsum", true},
    [IR_OP_TOPK_VALUES]  = {"ops_topk", true},
    [IR_OP_TOPK_INDICES] = {"ops_topk", true},

    [IR_OP_ATTENTION]       = {"ops_attention", true},
    [IR_OP_ROPE]            = {"ops_rope", true},
    [IR_OP_SOFTMAX_CE]      = {"ops_softmax_cross_entropy", true},
    [IR_OP_SOFTMAX_CE_GRAD] = {"ops_softmax_cross_entropy", true},
    [IR_OP_KV_WRITE]        = {"kv_cache_prefill_equals_decode_cpu", true},
    [IR_OP_ROPE_KV_WRITE]   = {"ops_rope_kv_write_float64", true},
    /* the channel norms */
    [IR_OP_BATCH_NORM]      = {"ops_chan_norm_f32 autodiff_chan_norms", true},
    [IR_OP_GROUP_NORM]      = {"ops_chan_norm_f32 autodiff_chan_norms", true},
};

static bool is_source(ir_op op) { return ir_op_info_get(op)->rule == shape_source; }

TEST(op_table_every_op_has_kernel_reference_and_gpu_entry) {
    int problems = 0;
    for (int i = 0; i < IR_OP_COUNT; i++) {
        ir_op op = (ir_op)i;
        const char *name = ir_op_info_get(op)->name;
        if (is_source(op)) {
            if (rt_support_has(RT_SUPPORT_CPU, op) || op_registry[op].ref_tests) {
                printf("    %s: a source op has a CPU kernel or a registry entry\n", name);
                problems++;
            }
            continue;
        }
        if (!rt_support_has(RT_SUPPORT_CPU, op)) {
            printf("    %s: no CPU kernel (src/cpu/kernel_table.c)\n", name);
            problems++;
        }
        const char *tests = op_registry[op].ref_tests;
        if (!tests || !*tests) {
            printf("    %s: no float64 reference test in tests/test_op_table.c's registry\n", name);
            problems++;
        } else {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", tests);
            for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
                if (!harness_has_test(t)) {
                    printf("    %s: registry names test '%s', which does not exist\n", name, t);
                    problems++;
                }
        }
        if (rt_support_backend_built(RT_SUPPORT_VULKAN) && op_registry[op].gpu != rt_support_has(RT_SUPPORT_VULKAN, op)) {
            printf("    %s: %s\n", name, op_registry[op].gpu ? "in the GPU list but has no Vulkan lowering (src/vulkan/vk_lower_table.c)"
                                                           : "has a Vulkan lowering but is not in the GPU list");
            problems++;
        }
    }
    CHECK_MSG(problems == 0, "%d op table problems", problems);
}

TEST(op_table_attributes_consistent) {
    int count;
    const ir_attr_desc *t = ir_attr_table(&count);
    CHECK(count > 0);
    bool used[IR_ATTR_FAMILY_COUNT] = {0}, has_attr[IR_ATTR_FAMILY_COUNT] = {0};
    for (int i = 0; i < IR_OP_COUNT; i++) used[ir_op_attr_family((ir_op)i)] = true;
    for (int i = 0; i < count; i++) {
        CHECK(t[i].family > IR_ATTR_FAMILY_NONE && t[i].family < IR_ATTR_FAMILY_COUNT);
        has_attr[t[i].family] = true;
        CHECK_MSG(t[i].name && *t[i].name && t[i].doc && *t[i].doc, "attribute %d has no name or meaning", i);
        int lo = t[i].slot, hi = t[i].kind == IR_ATTR_INT_DIMS ? t[i].slot + IR_MAX_RANK : t[i].slot + 1;
        CHECK(lo >= 0 && hi <= (t[i].kind == IR_ATTR_FLOAT ? IR_MAX_FATTR : IR_MAX_IATTR));
        for (int j = 0; j < i; j++) {
            if (t[j].family != t[i].family) continue;
            CHECK_MSG(strcmp(t[j].name, t[i].name) != 0, "%s.%s named twice", ir_attr_family_name(t[i].family), t[i].name);
            if ((t[j].kind == IR_ATTR_FLOAT) != (t[i].kind == IR_ATTR_FLOAT)) continue;
            int jlo = t[j].slot, jhi = t[j].kind == IR_ATTR_INT_DIMS ? t[j].slot + IR_MAX_RANK : t[j].slot + 1;
            CHECK_MSG(hi <= jlo || jhi <= lo, "%s.%s and .%s share a slot", ir_attr_family_name(t[i].family), t[i].name,
                      t[j].name);
        }
    }
    for (int f = IR_ATTR_FAMILY_NONE + 1; f < IR_ATTR_FAMILY_COUNT; f++)
        CHECK_MSG(used[f] && has_attr[f], "attribute family %s has no op or no attribute", ir_attr_family_name((ir_attr_family)f));
}

TEST(op_table_dump_names_attributes) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {3, 4}, wd[2] = {5, 4};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node y = rlx_matmul(g, x, rlx_param(g, "w", RLX_F32, 2, wd), 1);
    CHECK_OK(rlx_output(g, "y", rlx_softmax(g, rlx_clamp(g, y, -2.5f, 3.0f), -1)));
    char *d = rlx_graph_dump(g);
    bool ok = d && strstr(d, "{transpose_b=1 act=0 has_bias=0 transpose_a=0}") && strstr(d, "{lo=-2.5 hi=3}") && strstr(d, "{axis=1}");
    if (!ok) printf("%s", d ? d : "(no dump)\n");
    free(d);
    rlx_graph_free(g);
    CHECK(ok);
}

#define MATRIX_BEGIN "<!-- rlx ops --matrix: begin (generated; `make ops-doc` rewrites it) -->\n"
#define MATRIX_END   "<!-- rlx ops --matrix: end -->"

TEST(op_table_docs_matrix_is_current) {
    if (!rt_support_backend_built(RT_SUPPORT_VULKAN)) {
        printf("    built without Vulkan: the matrix's Vulkan column cannot be checked here\n");
        return;
    }
    char *want = rt_op_matrix_markdown();
    CHECK(want);
    if (strstr(want, "?")) {   /* an op whose shape rule has no dtype probe (runtime/op_support.c) */
        printf("%s", want);
        free(want);
        CHECK_MSG(false, "the matrix has a '?' cell: add the rule's probe recipe to src/runtime/op_support.c");
    }
    void *doc = NULL;
    size_t n = 0;
    bool read = test_read_file("docs/ops.md", &doc, &n);
    char *text = read ? realloc(doc, n + 1) : NULL;
    if (text) text[n] = 0;
    char *a = text ? strstr(text, MATRIX_BEGIN) : NULL, *b = a ? strstr(a, MATRIX_END) : NULL;
    bool ok = a && b && (size_t)(b - a) == strlen(MATRIX_BEGIN) + strlen(want) &&
              memcmp(a + strlen(MATRIX_BEGIN), want, strlen(want)) == 0;
    if (!ok) printf("    docs/ops.md's matrix (between its marker comments) is not `rlx ops --matrix`'s output: run `make ops-doc`\n");
    free(text ? text : doc);
    free(want);
    CHECK(read && ok);
}
