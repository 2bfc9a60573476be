/*
 * conv_dw.h — the direct depthwise convolution (groups == C == O, NCHW, up
 * to 2 spatial dims) that conv.c uses instead of a GEMM of one row per group.
 */
#ifndef RLX_CPU_CONV_DW_H
#define RLX_CPU_CONV_DW_H

#include "core/threadpool.h"
#include <stdint.h>

typedef struct cpu_conv_dw_args {
    const float *x, *w, *b;   /* x [planes, ih, iw], w [C, kh, kw], b [C] or NULL */
    float       *y;           /* [planes, oh, ow] */
    int64_t      planes, C;   /* planes = N * C; plane p is channel p % C */
    int64_t      ih, iw, kh, kw, oh, ow;
    int64_t      sh, sw, dh, dw, ph, pw;   /* stride, dilation, padding at the start */
    int          act;         /* rlx_activation */
} cpu_conv_dw_args;

/* y = act(b + depthwise conv of x), planes split over the pool's threads. */
void cpu_conv_depthwise(rlx_threadpool *pool, const cpu_conv_dw_args *a);

/* Forces the kernel's ISA (for tests): "avx512", "avx2", "base", or NULL for
 * the automatic choice. Returns 0, or -1 if this CPU lacks it. */
int cpu_conv_dw_force(const char *isa);

/* The ISA the kernel uses now. */
const char *cpu_conv_dw_isa(void);

#endif
