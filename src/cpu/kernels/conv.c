/*
 * conv.c — CPU kernel for CONV (1 to 3 spatial dims, NCHW): per image and
 * channel group, im2col into a [C/groups * prod(K), prod(S')] matrix, then
 * one packed GEMM (rlx_sgemm, threaded) with the group's weights [O/groups,
 * C/groups * prod(K)], then bias and activation. Padding is zeros written by
 * im2col. f32.
 *
 * NCHW is rlx's layout for images because it is ONNX's and PyTorch's: an
 * imported model's tensors need no transposes at the graph's edges, and a
 * 1x1 convolution is a plain GEMM over the spatial positions.
 */
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/gemm.h"
#include "ir/conv_geom.h"

#include <stdlib.h>
#include <string.h>

typedef struct conv_shape {
    int     dims;
    int64_t in[3], k[3], out[3];   /* padded to 3 dims with 1 */
    int64_t in_vol, k_vol, out_vol;
} conv_shape;

/* cols[(c * k_vol + kk) * out_vol + o] = x[c] at output o's tap kk, or 0 outside */
static void im2col(const float *x, int64_t Cg, const conv_shape *s, const ir_conv_geom *g, float *cols) {
    int64_t st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
    int off = 3 - s->dims;   /* dims right-aligned into [3] */
    for (int i = 0; i < s->dims; i++) st[off + i] = g->stride[i], dl[off + i] = g->dilation[i], pb[off + i] = g->pad_begin[i];
    for (int64_t c = 0; c < Cg; c++) {
        const float *xc = x + c * s->in_vol;
        for (int64_t k0 = 0; k0 < s->k[0]; k0++)
            for (int64_t k1 = 0; k1 < s->k[1]; k1++)
                for (int64_t k2 = 0; k2 < s->k[2]; k2++) {
                    float *row = cols + ((c * s->k[0] + k0) * s->k[1] * s->k[2] + k1 * s->k[2] + k2) * s->out_vol;
                    for (int64_t o0 = 0; o0 < s->out[0]; o0++) {
                        int64_t i0 = o0 * st[0] - pb[0] + k0 * dl[0];
                        for (int64_t o1 = 0; o1 < s->out[1]; o1++) {
                            int64_t i1 = o1 * st[1] - pb[1] + k1 * dl[1];
                            float *dst = row + (o0 * s->out[1] + o1) * s->out[2];
                            if (i0 < 0 || i0 >= s->in[0] || i1 < 0 || i1 >= s->in[1]) {
                                memset(dst, 0, sizeof *dst * (size_t)s->out[2]);
                                continue;
                            }
                            const float *src = xc + (i0 * s->in[1] + i1) * s->in[2];
                            for (int64_t o2 = 0; o2 < s->out[2]; o2++) {
                                int64_t i2 = o2 * st[2] - pb[2] + k2 * dl[2];
                                dst[o2] = i2 >= 0 && i2 < s->in[2] ? src[i2] : 0.0f;
                            }
                        }
                    }
                }
    }
}

rlx_status cpu_conv(const cpu_kernel_ctx *k) {
    ir_conv_geom g;
    ir_conv_geom_of(k->node, &g);
    const cpu_tensor *x = &k->in[0], *w = &k->in[1], *b = g.has_bias ? &k->in[2] : NULL;
    char lb[160];
    if (x->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the CPU convolution is f32 (got %s)", cpu_node_label(k->node, lb, sizeof lb),
                        rlx_dtype_name(x->dtype));
    conv_shape s = {.dims = g.dims, .in = {1, 1, 1}, .k = {1, 1, 1}, .out = {1, 1, 1}};
    int off = 3 - g.dims;
    for (int i = 0; i < g.dims; i++)
        s.in[off + i] = x->dims[2 + i], s.k[off + i] = w->dims[2 + i], s.out[off + i] = k->out.dims[2 + i];
    s.in_vol = s.in[0] * s.in[1] * s.in[2], s.k_vol = s.k[0] * s.k[1] * s.k[2], s.out_vol = s.out[0] * s.out[1] * s.out[2];
    int64_t N = x->dims[0], C = x->dims[1], O = w->dims[0], Cg = C / g.groups, Og = O / g.groups, K = Cg * s.k_vol;
    size_t n_cols = (size_t)(K * s.out_vol);
    float *cols = malloc(sizeof *cols * (n_cols ? n_cols : 1));
    if (!cols)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for a %lld x %lld im2col matrix",
                        cpu_node_label(k->node, lb, sizeof lb), (long long)K, (long long)s.out_vol);
    const float *xs = x->data, *ws = w->data, *bs = b ? b->data : NULL;
    float *ys = k->out.data;
    gemm_epilogue epi = {.bias = NULL, .act = RLX_ACT_NONE, .accumulate = 0};
    for (int64_t n = 0; n < N; n++)
        for (int64_t gi = 0; gi < g.groups; gi++) {
            const float *xg = xs + (n * C + gi * Cg) * s.in_vol;
            float *yg = ys + (n * O + gi * Og) * s.out_vol;
            im2col(xg, Cg, &s, &g, cols);
            if (rlx_sgemm(k->pool, Og, s.out_vol, K, ws + gi * Og * K, K, cols, s.out_vol, 0, yg, s.out_vol, &epi) != 0) {
                free(cols);
                return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: GEMM scratch", cpu_node_label(k->node, lb, sizeof lb));
            }
            for (int64_t o = 0; o < Og; o++) {
                float bias = bs ? bs[gi * Og + o] : 0.0f, *row = yg + o * s.out_vol;
                if (bs || g.act != RLX_ACT_NONE)
                    for (int64_t i = 0; i < s.out_vol; i++) row[i] = cpu_activate(row[i] + bias, (int)g.act);
            }
        }
    free(cols);
    return RLX_OK;
}
