/*
 * conv_grad.c — CPU kernels for CONV_TRANSPOSE (conv's input gradient, ONNX
 * ConvTranspose) and CONV_WEIGHT_GRAD (conv's weight gradient), direct
 * gathers: each output element sums its contributions in a fixed order, so
 * results do not depend on the thread count. Output channels are split over
 * threads. f32, double accumulation.
 */
#include "cpu/cpu_kernel.h"
#include "ir/conv_geom.h"

typedef struct cg_job {
    const float *x, *w, *dy, *b;
    float *out;
    ir_conv_geom g;
    int64_t N, C, O, Cg, Og;
    int64_t in[3], k[3], o[3], st[3], dl[3], pb[3];
} cg_job;

static void pad3(cg_job *j, const ir_conv_geom *g, const int64_t *xd, const int64_t *kd, const int64_t *od) {
    int off = 3 - g->dims;
    for (int d = 0; d < 3; d++) j->in[d] = j->k[d] = j->o[d] = j->st[d] = j->dl[d] = 1, j->pb[d] = 0;
    for (int i = 0; i < g->dims; i++)
        j->in[off + i] = xd[i], j->k[off + i] = kd[i], j->o[off + i] = od[i], j->st[off + i] = g->stride[i],
        j->dl[off + i] = g->dilation[i], j->pb[off + i] = g->pad_begin[i];
}

/* conv_transpose: out[n, oc, y] = b[oc] + sum_{ic in oc's group, k} x[n, ic, i] w[ic, oc % Og, k], y = i s - pb + k d */
static void transpose_channels(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const cg_job *j = arg;
    int64_t iv = j->in[0] * j->in[1] * j->in[2], kv = j->k[0] * j->k[1] * j->k[2], ov = j->o[0] * j->o[1] * j->o[2];
    for (int64_t oc = begin; oc < end; oc++) {
        int64_t gi = oc / j->Og, ocg = oc % j->Og;
        for (int64_t n = 0; n < j->N; n++)
            for (int64_t y = 0; y < ov; y++) {
                int64_t yy[3] = {y / (j->o[1] * j->o[2]), y / j->o[2] % j->o[1], y % j->o[2]};
                double acc = j->b ? j->b[oc] : 0;
                for (int64_t ic = gi * j->Cg; ic < (gi + 1) * j->Cg; ic++)
                    for (int64_t k = 0; k < kv; k++) {
                        int64_t kk[3] = {k / (j->k[1] * j->k[2]), k / j->k[2] % j->k[1], k % j->k[2]}, idx = 0;
                        bool ok = true;
                        for (int d = 0; d < 3 && ok; d++) {
                            int64_t t = yy[d] + j->pb[d] - kk[d] * j->dl[d];
                            ok = t >= 0 && t % j->st[d] == 0 && t / j->st[d] < j->in[d];
                            idx = idx * j->in[d] + (ok ? t / j->st[d] : 0);
                        }
                        if (ok) acc += (double)j->x[(n * j->C + ic) * iv + idx] * j->w[(ic * j->Og + ocg) * kv + k];
                    }
                j->out[(n * j->O + oc) * ov + y] = (float)acc;
            }
    }
}

rlx_status cpu_conv_transpose(const cpu_kernel_ctx *k) {
    cg_job j = {.x = k->in[0].data, .w = k->in[1].data, .out = k->out.data};
    ir_conv_geom_of(k->node, &j.g);
    j.b = j.g.has_bias ? k->in[2].data : NULL;
    j.N = k->in[0].dims[0], j.C = k->in[0].dims[1], j.O = k->out.dims[1];
    j.Cg = j.C / j.g.groups, j.Og = j.O / j.g.groups;
    pad3(&j, &j.g, k->in[0].dims + 2, k->in[1].dims + 2, k->out.dims + 2);
    rlx_parallel_for(k->pool, j.O, 1, transpose_channels, &j);
    return RLX_OK;
}

/* conv_weight_grad: dw[o, c, k] = sum_{n, y} dy[n, o, y] x[n, g Cg + c, y s - pb + k d] */
static void weight_channels(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    const cg_job *j = arg;
    int64_t iv = j->in[0] * j->in[1] * j->in[2], kv = j->k[0] * j->k[1] * j->k[2], ov = j->o[0] * j->o[1] * j->o[2];
    for (int64_t o = begin; o < end; o++) {
        int64_t gi = o / j->Og;
        for (int64_t c = 0; c < j->Cg; c++)
            for (int64_t k = 0; k < kv; k++) {
                int64_t kk[3] = {k / (j->k[1] * j->k[2]), k / j->k[2] % j->k[1], k % j->k[2]};
                double acc = 0;
                for (int64_t n = 0; n < j->N; n++)
                    for (int64_t y = 0; y < ov; y++) {
                        int64_t yy[3] = {y / (j->o[1] * j->o[2]), y / j->o[2] % j->o[1], y % j->o[2]}, idx = 0;
                        bool ok = true;
                        for (int d = 0; d < 3 && ok; d++) {
                            int64_t i = yy[d] * j->st[d] - j->pb[d] + kk[d] * j->dl[d];
                            ok = i >= 0 && i < j->in[d];
                            idx = idx * j->in[d] + (ok ? i : 0);
                        }
                        if (ok) acc += (double)j->dy[(n * j->O + o) * ov + y] * j->x[(n * j->C + gi * j->Cg + c) * iv + idx];
                    }
                j->out[(o * j->Cg + c) * kv + k] = (float)acc;
            }
    }
}

rlx_status cpu_conv_weight_grad(const cpu_kernel_ctx *k) {
    cg_job j = {.x = k->in[0].data, .dy = k->in[1].data, .out = k->out.data};
    ir_conv_geom_of(k->node, &j.g);
    j.N = k->in[0].dims[0], j.C = k->in[0].dims[1], j.O = k->in[1].dims[1];
    j.Cg = j.C / j.g.groups, j.Og = j.O / j.g.groups;
    pad3(&j, &j.g, k->in[0].dims + 2, k->in[2].dims + 2, k->in[1].dims + 2);
    rlx_parallel_for(k->pool, j.O, 1, weight_channels, &j);
    return RLX_OK;
}
