/*
 * vk_lower_table.c — which lowering handles each op on the Vulkan backend.
 * An op mapped to NULL always runs as a host step.
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_backend.h"

static const vk_lower_fn table[IR_OP_COUNT] = {
    [IR_OP_ADD] = vk_lower_binary, [IR_OP_SUB] = vk_lower_binary, [IR_OP_MUL] = vk_lower_binary,
    [IR_OP_DIV] = vk_lower_binary, [IR_OP_MAX] = vk_lower_binary, [IR_OP_MIN] = vk_lower_binary,
    [IR_OP_POW] = vk_lower_binary, [IR_OP_GELU_GRAD] = vk_lower_binary, [IR_OP_GELU_TANH_GRAD] = vk_lower_binary,
    [IR_OP_EQ] = vk_lower_binary, [IR_OP_NE] = vk_lower_binary, [IR_OP_LT] = vk_lower_binary,
    [IR_OP_LE] = vk_lower_binary, [IR_OP_GT] = vk_lower_binary, [IR_OP_GE] = vk_lower_binary,
    [IR_OP_RELU] = vk_lower_unary, [IR_OP_SIGMOID] = vk_lower_unary, [IR_OP_TANH] = vk_lower_unary,
    [IR_OP_EXP] = vk_lower_unary, [IR_OP_LOG] = vk_lower_unary, [IR_OP_SQRT] = vk_lower_unary,
    [IR_OP_RSQRT] = vk_lower_unary, [IR_OP_NEG] = vk_lower_unary, [IR_OP_ABS] = vk_lower_unary,
    [IR_OP_GELU] = vk_lower_unary, [IR_OP_GELU_TANH] = vk_lower_unary, [IR_OP_SILU] = vk_lower_unary,
    [IR_OP_ROUND] = vk_lower_unary, [IR_OP_SIN] = vk_lower_unary, [IR_OP_COS] = vk_lower_unary,
    [IR_OP_TAN] = vk_lower_unary, [IR_OP_ATAN] = vk_lower_unary, [IR_OP_ERF] = vk_lower_unary, [IR_OP_CLAMP] = vk_lower_unary,
    [IR_OP_CAST] = vk_lower_unary,
    [IR_OP_WHERE] = vk_lower_ternary, [IR_OP_FMA] = vk_lower_ternary,
    [IR_OP_MATMUL] = vk_lower_matmul, [IR_OP_MATMUL_BIAS_ACT] = vk_lower_matmul,
    [IR_OP_REDUCE_SUM] = vk_lower_reduce, [IR_OP_REDUCE_MEAN] = vk_lower_reduce,
    [IR_OP_REDUCE_MAX] = vk_lower_reduce, [IR_OP_REDUCE_MIN] = vk_lower_reduce,
    [IR_OP_REDUCE_PROD] = vk_lower_reduce, [IR_OP_ARGMAX] = vk_lower_reduce, [IR_OP_ARGMIN] = vk_lower_reduce,
    [IR_OP_SOFTMAX] = vk_lower_softmax, [IR_OP_LOG_SOFTMAX] = vk_lower_softmax,
    [IR_OP_LAYER_NORM] = vk_lower_norm, [IR_OP_RMS_NORM] = vk_lower_norm,
    [IR_OP_ADD_LAYER_NORM] = vk_lower_norm, [IR_OP_ADD_RMS_NORM] = vk_lower_norm,
    [IR_OP_RESHAPE] = vk_lower_movement, [IR_OP_TRANSPOSE] = vk_lower_movement, [IR_OP_SLICE] = vk_lower_movement,
    [IR_OP_CONCAT] = vk_lower_movement, [IR_OP_EXPAND] = vk_lower_movement,
    [IR_OP_GATHER_ROWS] = vk_lower_gather, [IR_OP_GATHER] = vk_lower_gather,
    [IR_OP_SCATTER_ADD_ROWS] = vk_lower_scatter, [IR_OP_SCATTER_ADD] = vk_lower_scatter,
    [IR_OP_CUMSUM] = vk_lower_cumsum,
    [IR_OP_CONV] = vk_lower_conv,
    [IR_OP_CONV_TRANSPOSE] = vk_lower_conv_grad, [IR_OP_CONV_WEIGHT_GRAD] = vk_lower_conv_grad,
    [IR_OP_POOL] = vk_lower_pool, [IR_OP_POOL_GRAD] = vk_lower_pool_grad,
    [IR_OP_RESIZE] = vk_lower_resize, [IR_OP_RESIZE_GRAD] = vk_lower_resize,
    [IR_OP_FLIP] = vk_lower_movement, [IR_OP_DEPTH_TO_SPACE] = vk_lower_movement, [IR_OP_SPACE_TO_DEPTH] = vk_lower_movement,
    [IR_OP_ADAPTIVE_POOL] = vk_lower_adaptive_pool, [IR_OP_ADAPTIVE_POOL_GRAD] = vk_lower_adaptive_pool,
    [IR_OP_TOPK_VALUES] = vk_lower_topk, [IR_OP_TOPK_INDICES] = vk_lower_topk,
    [IR_OP_ATTENTION] = vk_lower_attention, [IR_OP_ROPE] = vk_lower_rope,
    [IR_OP_SOFTMAX_CE] = vk_lower_loss, [IR_OP_SOFTMAX_CE_GRAD] = vk_lower_loss,
    [IR_OP_ASSIGN] = vk_lower_assign, [IR_OP_KV_WRITE] = vk_lower_kv_write, [IR_OP_ROPE_KV_WRITE] = vk_lower_rope,
    [IR_OP_DEQUANT_ROPE_KV] = vk_lower_dequant_rope_kv, [IR_OP_ATTENTION_DEQUANT] = vk_lower_attention_dequant,
    [IR_OP_DEQUANT_MATMUL] = vk_lower_dequant_matmul,
    [IR_OP_DEQUANT_MATMUL_ADD] = vk_lower_dequant_fused, [IR_OP_DEQUANT_SWIGLU] = vk_lower_dequant_fused,
    [IR_OP_RMS_DEQUANT_MATMUL] = vk_lower_rms_dequant, [IR_OP_RMS_DEQUANT_SWIGLU] = vk_lower_rms_dequant,
    /* the channel norms */
    [IR_OP_BATCH_NORM] = vk_lower_chan_norm, [IR_OP_GROUP_NORM] = vk_lower_chan_norm,
};

vk_lower_fn vk_lowering_for(ir_op op) { return (unsigned)op < IR_OP_COUNT ? table[op] : NULL; }

bool vk_backend_has_lowering(ir_op op) { return vk_lowering_for(op) != NULL; }
