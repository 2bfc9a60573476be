/*
 * kernel_util.c — small helpers shared by the CPU kernels: dense and broadcast
 * strides, and the scalar activation used by fused epilogues.
 */
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/vmath.h"
#include <stdio.h>
#include <math.h>

void cpu_dense_strides(int rank, const int64_t *dims, int64_t *strides)
{
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

void cpu_broadcast_strides(const cpu_tensor *in, const cpu_tensor *out, int64_t *strides)
{
    int64_t dense[IR_MAX_RANK];
    cpu_dense_strides(in->rank, in->dims, dense);
    int lead = out->rank - in->rank;   /* numpy: shapes are right-aligned */
    for (int i = 0; i < out->rank; i++) {
        int j = i - lead;
        /* A size-1 dim gets stride 0 even where out's dim is also 1: its index
         * is always 0 then, and a zero lets callers merge it with neighbours. */
        strides[i] = (j < 0 || in->dims[j] == 1) ? 0 : dense[j];
    }
}

/* The formulas match cpu_unary's (elementwise.c), so a fused matmul+act and the
 * unfused pair agree. GELU uses erfc and GELU_TANH the sigmoid form of
 * 0.5(1 + tanh(u)) = 1 / (1 + exp(-2u)) (vmath.h, whose array loop the GEMM
 * epilogue and the unary op run): both stay accurate in the negative tail,
 * where 1 + erf(..) and 1 + tanh(..) cancel. */
float cpu_activate(float v, int act)
{
    switch (act) {
    case RLX_ACT_RELU:      return v < 0.0f ? 0.0f : v;   /* NaN passes through */
    case RLX_ACT_GELU:      return 0.5f * v * erfcf(v * -0.70710678118654752f);
    case RLX_ACT_GELU_TANH: return vm_gelu_tanh(v);
    case RLX_ACT_SILU:      return v / (1.0f + expf(-v));
    case RLX_ACT_SIGMOID:   return 1.0f / (1.0f + expf(-v));
    case RLX_ACT_TANH:      return tanhf(v);
    default:                return v;
    }
}

const char *cpu_node_label(const ir_node *n, char *buf, size_t len) {
    const char *op = ir_op_info_get(n->op)->name;
    if (n->name) snprintf(buf, len, "%s '%s'", op, n->name);
    else snprintf(buf, len, "%s", op);
    return buf;
}
