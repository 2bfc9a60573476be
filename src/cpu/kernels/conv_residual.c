/*
 * conv_residual.c — the CPU's conv with a residual input (has_residual, made
 * by fuse.c from act(add(conv(x, w[, b]), r))): the plain convolution into
 * the output, then one parallel pass y = act(y + r). That is one pass over
 * the output where the unfused add and activation took two, and the add's
 * result needs no arena space of its own.
 */
#include "cpu/cpu_kernel.h"
#include "core/threadpool.h"
#include "ir/op_attrs.h"

typedef struct residual_job {
    float *y;
    const float *r;
    int act;
} residual_job;

static void residual_range(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const residual_job *j = arg;
    if (j->act == RLX_ACT_NONE) {
        for (int64_t i = begin; i < end; i++) j->y[i] += j->r[i];
    } else if (j->act == RLX_ACT_RELU) {
        for (int64_t i = begin; i < end; i++) {
            float v = j->y[i] + j->r[i];
            j->y[i] = v < 0.0f ? 0.0f : v;   /* NaN passes through, as cpu_activate */
        }
    } else {
        for (int64_t i = begin; i < end; i++) j->y[i] = cpu_activate(j->y[i] + j->r[i], j->act);
    }
}

rlx_status cpu_conv_residual(const cpu_kernel_ctx *k) {
    ir_node plain = *k->node;   /* the same conv without the residual and activation */
    ir_attr_set_conv_has_residual(&plain, 0);
    ir_attr_set_conv_act(&plain, RLX_ACT_NONE);
    plain.n_in = k->node->n_in - 1;
    cpu_kernel_ctx ck = *k;
    ck.node = &plain;
    ck.n_in = k->n_in - 1;
    rlx_status st = cpu_conv(&ck);
    if (st != RLX_OK) return st;
    int64_t n = 1;
    for (int i = 0; i < k->out.rank; i++) n *= k->out.dims[i];
    residual_job j = {.y = k->out.data, .r = k->in[k->n_in - 1].data, .act = (int)ir_attr_conv_act(k->node)};
    rlx_parallel_for(k->pool, n, 1 << 14, residual_range, &j);
    return RLX_OK;
}
