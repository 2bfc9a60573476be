/*
 * kernel_table.c — maps each op of ops.def to its CPU kernel.
 *
 * Designated initializers keep the table readable and make a missing entry a
 * NULL (caught by the lowering as "no CPU kernel") rather than a wrong kernel.
 * Sources (INPUT/PARAM/CONST) need no kernel: their data is already in place.
 */
#include "cpu/cpu_kernel.h"
#include "cpu/cpu_backend.h"

static const cpu_kernel_fn kernel_table[IR_OP_COUNT] = {
    [IR_OP_INPUT] = NULL,
    [IR_OP_PARAM] = NULL,
    [IR_OP_CONST] = NULL,

    [IR_OP_ADD] = cpu_binary,
    [IR_OP_SUB] = cpu_binary,
    [IR_OP_MUL] = cpu_binary,
    [IR_OP_DIV] = cpu_binary,
    [IR_OP_MAX] = cpu_binary,
    [IR_OP_MIN] = cpu_binary,
    [IR_OP_POW] = cpu_binary,
    [IR_OP_GELU_GRAD] = cpu_binary,
    [IR_OP_GELU_TANH_GRAD] = cpu_binary,

    [IR_OP_RELU]      = cpu_unary,
    [IR_OP_SIGMOID]   = cpu_unary,
    [IR_OP_TANH]      = cpu_unary,
    [IR_OP_EXP]       = cpu_unary,
    [IR_OP_LOG]       = cpu_unary,
    [IR_OP_SQRT]      = cpu_unary,
    [IR_OP_RSQRT]     = cpu_unary,
    [IR_OP_NEG]       = cpu_unary,
    [IR_OP_ABS]       = cpu_unary,
    [IR_OP_GELU]      = cpu_unary,
    [IR_OP_GELU_TANH] = cpu_unary,
    [IR_OP_SILU]      = cpu_unary,
    [IR_OP_ROUND]     = cpu_unary,
    [IR_OP_SIN]       = cpu_unary,
    [IR_OP_COS]       = cpu_unary,
    [IR_OP_TAN]       = cpu_unary,
    [IR_OP_ATAN]      = cpu_unary,
    [IR_OP_ERF]       = cpu_unary,
    [IR_OP_CLAMP]     = cpu_unary,

    [IR_OP_EQ] = cpu_compare,
    [IR_OP_NE] = cpu_compare,
    [IR_OP_LT] = cpu_compare,
    [IR_OP_LE] = cpu_compare,
    [IR_OP_GT] = cpu_compare,
    [IR_OP_GE] = cpu_compare,

    [IR_OP_WHERE] = cpu_where,
    [IR_OP_FMA]   = cpu_fma,
    [IR_OP_CAST]  = cpu_cast,

    [IR_OP_MATMUL]          = cpu_matmul,
    [IR_OP_MATMUL_BIAS_ACT] = cpu_matmul,

    [IR_OP_REDUCE_SUM]  = cpu_reduce,
    [IR_OP_REDUCE_MEAN] = cpu_reduce,
    [IR_OP_REDUCE_MAX]  = cpu_reduce,
    [IR_OP_REDUCE_MIN]  = cpu_reduce,
    [IR_OP_REDUCE_PROD] = cpu_reduce,
    [IR_OP_ARGMAX]      = cpu_argreduce,
    [IR_OP_ARGMIN]      = cpu_argreduce,

    [IR_OP_SOFTMAX]        = cpu_softmax,
    [IR_OP_LOG_SOFTMAX]    = cpu_softmax,
    [IR_OP_LAYER_NORM]     = cpu_norm,
    [IR_OP_RMS_NORM]       = cpu_norm,
    [IR_OP_ADD_LAYER_NORM] = cpu_norm,
    [IR_OP_ADD_RMS_NORM]   = cpu_norm,

    [IR_OP_RESHAPE]   = cpu_reshape,
    [IR_OP_TRANSPOSE] = cpu_transpose,
    [IR_OP_SLICE]     = cpu_slice,
    [IR_OP_CONCAT]    = cpu_concat,
    [IR_OP_EXPAND]    = cpu_expand,

    [IR_OP_GATHER_ROWS]  = cpu_gather_rows,
    [IR_OP_GATHER]       = cpu_gather,
    [IR_OP_SCATTER_ADD_ROWS] = cpu_scatter_add_rows,
    [IR_OP_SCATTER_ADD]  = cpu_scatter_add,
    [IR_OP_CONV]         = cpu_conv,
    [IR_OP_CONV_TRANSPOSE] = cpu_conv_transpose,
    [IR_OP_CONV_WEIGHT_GRAD] = cpu_conv_weight_grad,
    [IR_OP_POOL]         = cpu_pool,
    [IR_OP_POOL_GRAD]    = cpu_pool_grad,
    [IR_OP_RESIZE]       = cpu_resize,
    [IR_OP_RESIZE_GRAD]  = cpu_resize_grad,
    [IR_OP_FLIP]         = cpu_rearrange,
    [IR_OP_DEPTH_TO_SPACE] = cpu_rearrange,
    [IR_OP_SPACE_TO_DEPTH] = cpu_rearrange,
    [IR_OP_ADAPTIVE_POOL] = cpu_adaptive_pool,
    [IR_OP_ADAPTIVE_POOL_GRAD] = cpu_adaptive_pool_grad,
    [IR_OP_CUMSUM]       = cpu_cumsum,
    [IR_OP_TOPK_VALUES]  = cpu_topk,
    [IR_OP_TOPK_INDICES] = cpu_topk,

    [IR_OP_ATTENTION]       = cpu_attention,
    [IR_OP_ROPE]            = cpu_rope,
    [IR_OP_SOFTMAX_CE]      = cpu_softmax_ce,
    [IR_OP_SOFTMAX_CE_GRAD] = cpu_softmax_ce,
    [IR_OP_KV_WRITE]        = cpu_kv_write,
    [IR_OP_ASSIGN]          = cpu_assign,
    [IR_OP_ROPE_KV_WRITE]   = cpu_rope,
    [IR_OP_DEQUANT_MATMUL]  = cpu_dequant_matmul,
    [IR_OP_DEQUANT_MATMUL_ADD] = cpu_dequant_fused,
    [IR_OP_DEQUANT_SWIGLU]  = cpu_dequant_fused,
    [IR_OP_RMS_DEQUANT_MATMUL] = cpu_rms_dequant,
    [IR_OP_RMS_DEQUANT_SWIGLU] = cpu_rms_dequant,
    [IR_OP_DEQUANT_ROPE_KV]    = cpu_dequant_rope_kv,
    [IR_OP_ATTENTION_DEQUANT]  = cpu_attention_dequant,
    /* the channel norms */
    [IR_OP_BATCH_NORM]         = cpu_chan_norm,
    [IR_OP_GROUP_NORM]         = cpu_chan_norm,
};

cpu_kernel_fn cpu_kernel_for(ir_op op)
{
    if ((int)op < 0 || op >= IR_OP_COUNT)
        return NULL;
    return kernel_table[op];
}

bool cpu_backend_has_kernel(ir_op op) { return cpu_kernel_for(op) != NULL; }
