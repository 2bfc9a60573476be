/*
 * cpu_kernel.h — the contract between the CPU executable and its kernels.
 *
 * A kernel gets one node of a specialized graph (all shapes static), its input
 * tensors and its output tensor, all dense row-major, and computes the output.
 * Kernels read attributes through ir/op_attrs.h (meanings in ir/op_attrs.def).
 * A kernel returns RLX_OK, or an error via rlx_fail() (e.g. an unsupported
 * dtype or an out-of-range id); it never aborts.
 */
#ifndef RLX_CPU_KERNEL_H
#define RLX_CPU_KERNEL_H

#include "core/threadpool.h"
#include "ir/ir.h"

typedef struct cpu_tensor {
    void     *data;
    rlx_dtype dtype;
    int       rank;
    int64_t   dims[IR_MAX_RANK];
    int64_t   numel;
} cpu_tensor;

typedef struct cpu_kernel_ctx {
    const ir_node  *node;
    int             n_in;
    cpu_tensor      in[IR_MAX_INPUTS];
    cpu_tensor      out;
    rlx_threadpool *pool;      /* may be NULL: run inline */
    /* rlx_compile_options.exact_quant: block-quantized products decode the
     * weights to f32 (dequant_matmul.c) instead of rounding x to 8 bits */
    bool            exact_quant;
} cpu_kernel_ctx;

typedef rlx_status (*cpu_kernel_fn)(const cpu_kernel_ctx *k);

/* The kernel for an op, or NULL when the CPU has none (INPUT/PARAM/CONST need none). */
cpu_kernel_fn cpu_kernel_for(ir_op op);

/* Kernel entry points, by family (src/cpu/kernels/<family>.c). */
rlx_status cpu_binary(const cpu_kernel_ctx *k);     /* ADD..POW        */
rlx_status cpu_unary(const cpu_kernel_ctx *k);      /* RELU..ATAN, CLAMP */
rlx_status cpu_compare(const cpu_kernel_ctx *k);    /* EQ..GE          */
rlx_status cpu_where(const cpu_kernel_ctx *k);
rlx_status cpu_fma(const cpu_kernel_ctx *k);
rlx_status cpu_cast(const cpu_kernel_ctx *k);
rlx_status cpu_matmul(const cpu_kernel_ctx *k);     /* MATMUL, MATMUL_BIAS_ACT */
rlx_status cpu_reduce(const cpu_kernel_ctx *k);     /* REDUCE_*        */
rlx_status cpu_argreduce(const cpu_kernel_ctx *k);  /* ARGMAX, ARGMIN  */
rlx_status cpu_softmax(const cpu_kernel_ctx *k);    /* SOFTMAX, LOG_SOFTMAX */
rlx_status cpu_norm(const cpu_kernel_ctx *k);       /* LAYER_NORM, RMS_NORM, ADD_*_NORM */
rlx_status cpu_reshape(const cpu_kernel_ctx *k);    /* copy when not aliased */
rlx_status cpu_transpose(const cpu_kernel_ctx *k);
rlx_status cpu_slice(const cpu_kernel_ctx *k);
rlx_status cpu_concat(const cpu_kernel_ctx *k);
rlx_status cpu_expand(const cpu_kernel_ctx *k);
rlx_status cpu_assign(const cpu_kernel_ctx *k);     /* ASSIGN: in place on the param */
rlx_status cpu_gather_rows(const cpu_kernel_ctx *k);
rlx_status cpu_gather(const cpu_kernel_ctx *k);
rlx_status cpu_scatter_add_rows(const cpu_kernel_ctx *k);
rlx_status cpu_scatter_add(const cpu_kernel_ctx *k);
rlx_status cpu_conv(const cpu_kernel_ctx *k);
rlx_status cpu_conv_residual(const cpu_kernel_ctx *k);   /* conv_residual.c: cpu_conv with has_residual */
rlx_status cpu_conv_transpose(const cpu_kernel_ctx *k);
rlx_status cpu_conv_weight_grad(const cpu_kernel_ctx *k);
rlx_status cpu_pool(const cpu_kernel_ctx *k);
rlx_status cpu_pool_grad(const cpu_kernel_ctx *k);
rlx_status cpu_resize(const cpu_kernel_ctx *k);
rlx_status cpu_resize_grad(const cpu_kernel_ctx *k);
rlx_status cpu_rearrange(const cpu_kernel_ctx *k);    /* FLIP, DEPTH_TO_SPACE, SPACE_TO_DEPTH */
rlx_status cpu_adaptive_pool(const cpu_kernel_ctx *k);
rlx_status cpu_adaptive_pool_grad(const cpu_kernel_ctx *k);
rlx_status cpu_chan_norm(const cpu_kernel_ctx *k);  /* BATCH_NORM, GROUP_NORM */
rlx_status cpu_cumsum(const cpu_kernel_ctx *k);
rlx_status cpu_topk(const cpu_kernel_ctx *k);       /* TOPK_VALUES, TOPK_INDICES */
rlx_status cpu_attention(const cpu_kernel_ctx *k);
rlx_status cpu_rope(const cpu_kernel_ctx *k);         /* ROPE, ROPE_KV_WRITE */
rlx_status cpu_softmax_ce(const cpu_kernel_ctx *k); /* SOFTMAX_CE, SOFTMAX_CE_GRAD */
rlx_status cpu_kv_write(const cpu_kernel_ctx *k);
/* KV_WRITE's prologue (in[0] cache, in[2] pos; S rows per head): the context-limit
 * check, and the cache copied to out when out is a separate buffer. */
rlx_status cpu_kv_begin(const cpu_kernel_ctx *k, int64_t S, int64_t *pos);
rlx_status cpu_dequant_matmul(const cpu_kernel_ctx *k);
rlx_status cpu_dequant_fused(const cpu_kernel_ctx *k); /* DEQUANT_MATMUL_ADD, DEQUANT_SWIGLU */
rlx_status cpu_rms_dequant(const cpu_kernel_ctx *k);   /* RMS_DEQUANT_MATMUL, RMS_DEQUANT_SWIGLU */
rlx_status cpu_dequant_rope_kv(const cpu_kernel_ctx *k); /* DEQUANT_ROPE_KV */
rlx_status cpu_attention_dequant(const cpu_kernel_ctx *k); /* ATTENTION_DEQUANT */
/* RMS_NORM's f32 path (norm.c): out = x / sqrt(mean(x^2) + eps) * gamma per row of d. */
void cpu_rms_norm_f32(rlx_threadpool *pool, const float *x, const float *gamma, float *out, int64_t rows, int64_t d,
                      double eps);

/* Shared helpers for kernels (cpu/kernels/kernel_util.c). */
/* Element strides of a dense shape. */
void cpu_dense_strides(int rank, const int64_t *dims, int64_t *strides);
/* Strides of `in` broadcast to out's rank/dims (0 on broadcast dims). */
void cpu_broadcast_strides(const cpu_tensor *in, const cpu_tensor *out, int64_t *strides);
/* "op 'name'" (or "op") for error messages. */
const char *cpu_node_label(const ir_node *n, char *buf, size_t len);
/* Applies an activation (rlx_activation) to v. */
float cpu_activate(float v, int act);
/* This thread's cached 64-byte aligned buffer of at least `floats` for one
 * purpose (cpu/kernels/thread_scratch.c); NULL when out of memory. */
typedef enum { CPU_SCRATCH_GEMM_PACK, CPU_SCRATCH_IM2COL, CPU_SCRATCH_CONV_W, CPU_SCRATCH_IM2COL_ROW, CPU_SCRATCH_SLOTS } cpu_scratch_slot;
float *cpu_thread_scratch(cpu_scratch_slot slot, size_t floats);

#endif
