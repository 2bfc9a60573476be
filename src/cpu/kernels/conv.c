/*
 * conv.c — CPU kernel for CONV (1 to 3 spatial dims, NCHW), f32.
 *
 * Three paths:
 * - depthwise (groups == C == O, at most 2 spatial dims): a direct kernel
 *   (conv_dw.c), vectorized over output columns, threaded over (n, c) planes;
 * - 1x1, stride 1, no padding: the GEMM reads x itself as its [C/groups,
 *   H*W] operand, no im2col;
 * - otherwise im2col + packed GEMM, in column chunks: each task builds the
 *   [C/groups * prod(K), chunk] matrix of one chunk of output positions of
 *   one image and group, written straight in the GEMM's packed panel layout
 *   (each row gathered into an L1 buffer, then copied into its panels), so
 *   the GEMM packs nothing of it, then runs one GEMM [O/groups, chunk] on it.
 * The weights are packed into the GEMM's panels once per call (not once per
 * chunk) and every chunk's GEMM reads those panels (rlx_sgemm_packed).
 * The per-output-channel bias and the activation run in the GEMM's epilogue
 * (gemm_epilogue.row_bias) while the tile is in L1. Tasks (image, group,
 * chunk) run in parallel with one-thread GEMMs when there are enough of them;
 * otherwise (late ResNet stages at batch 1: 7x7 or 14x14 outputs) the tasks
 * run one after another, each with its im2col split over the threads by rows
 * and a threaded GEMM.
 * At batch > 1, images with fewer positions than a chunk share chunks (the
 * positions of all images are one axis), computed transposed (positions x
 * channels) and scattered into NCHW, so each packed weight panel serves
 * several images.
 *
 * NCHW is rlx's layout for images because it is ONNX's and PyTorch's: an
 * imported model's tensors need no transposes at the graph's edges, and a
 * 1x1 convolution is a plain GEMM over the spatial positions.
 */
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/conv_dw.h"
#include "cpu/kernels/gemm.h"
#include "ir/conv_geom.h"
#include "core/core.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* im2col chunk: about this many floats (512 KiB), and at least this many
 * columns, so the micro-kernel sweeps enough columns per weight panel. */
#define CONV_CHUNK_FLOATS (128 * 1024)
#define CONV_CHUNK_MIN_COLS 256

typedef struct conv_shape {
    int     dims;
    int64_t in[3], k[3], out[3];   /* padded to 3 dims with 1 in front */
    int64_t st[3], dl[3], pb[3];
    int64_t in_vol, k_vol, out_vol;
} conv_shape;

typedef struct conv_job {
    conv_shape s;
    const float *x, *w, *b;
    float *y;
    int64_t C, O, groups, Cg, Og, K;
    int64_t chunk, n_chunks;
    int64_t P, images;           /* positions a task's chunks cover (out_vol, or N * out_vol when
                                  * folded) and the images its tasks iterate (N, or 1) */
    int fold;                    /* images folded into the positions (always computed transposed) */
    int direct;                  /* 1x1, stride 1, no padding: B is x */
    int transposed;              /* chunks computed as Y^T = cols^T W^T */
    const float *wpack;          /* the weights packed once per call: per group, the GEMM's A panels
                                  * (or B panels when transposed), wpack_group floats apart */
    size_t wpack_group;
    int64_t pw, kcs;             /* im2col's panels: width, K block (panel_out) */
    size_t cols_floats;          /* a worker's packed im2col matrix */
    int act;
    int mr, nr;                  /* the GEMM's tile */
    float *scratch;              /* per worker: K * chunk + chunk * Og floats */
    size_t scratch_per_worker;
    rlx_threadpool *pool;        /* the sequential path's: im2col rows and GEMM threads */
    /* the sequential path's current task, for im2col_task */
    const float *xg;
    int64_t p0, p1;
    float *cols;
    _Atomic int failed;
} conv_job;

/* d[t] = s[2 * t], t < n; reads no further than s[2 * (n - 1)]. */
static inline void copy_stride2(float *d, const float *s, int64_t n) {
    int64_t t = 0;
#if defined(__SSE2__)
    for (; t + 4 < n; t += 4) {
        __m128 a = _mm_loadu_ps(s + 2 * t), b = _mm_loadu_ps(s + 2 * t + 4);
        _mm_storeu_ps(d + t, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
    }
#endif
    for (; t < n; t++) d[t] = s[2 * t];
}

/* dst[t] = src[(o0 + t) * st + off] where that index is in [0, n), else 0; t < len. */
static void gather_line(float *dst, const float *src, int64_t o0, int64_t len, int64_t st, int64_t off, int64_t n) {
    /* valid o: 0 <= o*st + off <= n - 1 */
    int64_t lo = off >= 0 ? 0 : (-off + st - 1) / st;
    int64_t hi = n - 1 - off < 0 ? 0 : (n - 1 - off) / st + 1;
    lo = RLX_MAX(lo, o0), hi = RLX_MIN(hi, o0 + len);
    if (hi <= lo) {
        memset(dst, 0, sizeof *dst * (size_t)len);
        return;
    }
    memset(dst, 0, sizeof *dst * (size_t)(lo - o0));
    const float *s = src + lo * st + off;
    float *d = dst + (lo - o0);
    if (st == 1) memcpy(d, s, sizeof *d * (size_t)(hi - lo));
    else if (st == 2) copy_stride2(d, s, hi - lo);
    else for (int64_t t = 0; t < hi - lo; t++) d[t] = s[t * st];
    memset(dst + (hi - o0), 0, sizeof *dst * (size_t)(o0 + len - hi));
}

/* Where im2col writes: straight into the GEMM's packed panels (gemm.h's
 * layout) of the operand it is, so the matrix is never written row-major and
 * packed again: w-wide panels over the positions (the GEMM's nr when it is B,
 * mr when it is the transposed product's A), K in blocks of kcs. */
typedef struct panel_out {
    int64_t w, kcs, K, pad;
} panel_out;

/* Copies one im2col row (np positions, in L1) into its panels, zero past np. */
static void scatter_row(float *dst, const float *row, int64_t np, const panel_out *po, int64_t r) {
    int64_t w = po->w, pc = r / po->kcs * po->kcs, kc = RLX_MIN(po->kcs, po->K - pc);
    float *base = dst + pc * po->pad + (r - pc) * w;
    int64_t q = 0;
    if (w == 16) for (; q + 16 <= np; q += 16) memcpy(base + q * kc, row + q, 16 * sizeof *row);
    else if (w == 6) for (; q + 6 <= np; q += 6) memcpy(base + q * kc, row + q, 6 * sizeof *row);
    else for (; q + w <= np; q += w) memcpy(base + q * kc, row + q, (size_t)w * sizeof *row);
    if (q < np) {
        memcpy(base + q * kc, row + q, (size_t)(np - q) * sizeof *row);
        memset(base + q * kc + (np - q), 0, (size_t)(w - (np - q)) * sizeof *row);
    }
}

/* Rows [r0, r1) of the im2col matrix for output positions [p0, p1) of one
 * image and group (xg: its Cg channels): row r, position p = x[c] at p's tap
 * kk (r = c * k_vol + kk), or 0 in the padding; written as panels (po).
 * Returns -1 without memory for the row buffer. */
static int im2col_rows(const conv_shape *s, const float *xg, int64_t img_stride, int64_t r0, int64_t r1, int64_t p0, int64_t p1,
                       float *cols, const panel_out *po) {
    int64_t np = p1 - p0, k12 = s->k[1] * s->k[2], lines = s->out[0] * s->out[1];
    float *d = cpu_thread_scratch(CPU_SCRATCH_IM2COL_ROW, (size_t)np);
    if (!d) return -1;
    for (int64_t r = r0; r < r1; r++) {
        int64_t c = r / s->k_vol, kk = r % s->k_vol;
        int64_t k0 = kk / k12, k1 = (kk / s->k[2]) % s->k[1], k2 = kk % s->k[2];
        const float *xc = xg + c * s->in_vol;
        /* A full output line's valid columns [flo, fhi) (the same for every line of this row). */
        int64_t W = s->out[2], st2 = s->st[2], off2 = k2 * s->dl[2] - s->pb[2], n2 = s->in[2];
        int64_t flo = off2 >= 0 ? 0 : (-off2 + st2 - 1) / st2;
        int64_t fhi = n2 - 1 - off2 < 0 ? 0 : (n2 - 1 - off2) / st2 + 1;
        flo = RLX_MIN(flo, W), fhi = RLX_MAX(flo, RLX_MIN(fhi, W));
        int64_t p = p0, o2 = p0 % W, o01 = p0 / W;
        int64_t o1 = o01 % s->out[1], o0 = (o01 / s->out[1]) % s->out[0], img = o01 / lines;
        while (p < p1) {
            int64_t len = RLX_MIN(W - o2, p1 - p);
            int64_t i0 = o0 * s->st[0] - s->pb[0] + k0 * s->dl[0];
            int64_t i1 = o1 * s->st[1] - s->pb[1] + k1 * s->dl[1];
            float *dd = d + (p - p0);
            if (i0 < 0 || i0 >= s->in[0] || i1 < 0 || i1 >= s->in[1]) memset(dd, 0, sizeof *dd * (size_t)len);
            else if (len == W) {
                const float *src = xc + img * img_stride + (i0 * s->in[1] + i1) * n2 + off2;
                for (int64_t t = 0; t < flo; t++) dd[t] = 0.0f;
                if (st2 == 1) memcpy(dd + flo, src + flo, sizeof *dd * (size_t)(fhi - flo));
                else if (st2 == 2) copy_stride2(dd + flo, src + 2 * flo, fhi - flo);
                else for (int64_t t = flo; t < fhi; t++) dd[t] = src[t * st2];
                for (int64_t t = fhi; t < W; t++) dd[t] = 0.0f;
            } else gather_line(dd, xc + img * img_stride + (i0 * s->in[1] + i1) * n2, o2, len, st2, off2, n2);
            p += len, o2 = 0;
            if (++o1 == s->out[1]) {
                o1 = 0;
                if (++o0 == s->out[0]) o0 = 0, img++;
            }
        }
        scatter_row(cols, d, np, po, r);
    }
    return 0;
}

/* Share of an m x n product's tiles that is real work. */
static double tile_use(int64_t m, int64_t n, int mr, int nr) {
    return (double)m / (double)((m + mr - 1) / mr * mr) * (double)n / (double)((n + nr - 1) / nr * nr);
}

/* One (image, group, chunk) task: im2col (unless direct) then the chunk's GEMM.
 * pool: the GEMM's threads (NULL inside a parallel task). A chunk of few
 * positions (7x7 outputs: 49 columns, a 16-wide tile's 77%) is computed
 * transposed, Y^T [positions, O/groups] = cols^T W^T with the bias as the
 * GEMM's column bias, into scratch, then transposed into y. */
static int conv_task_run(conv_job *j, int64_t t, float *cols, rlx_threadpool *pool, int cols_done) {
    int64_t ch = t % j->n_chunks, ng = t / j->n_chunks, gi = ng % j->groups, n = ng / j->groups;
    int64_t p0 = ch * j->chunk, p1 = RLX_MIN(j->P, p0 + j->chunk), np = p1 - p0;
    const float *xg = j->x + (n * j->C + gi * j->Cg) * j->s.in_vol;
    const float *B = NULL, *packed = NULL;
    int64_t ldb = 0;
    if (j->direct) B = xg + p0, ldb = j->s.in_vol;
    else {
        panel_out po = {.w = j->pw, .kcs = j->kcs, .K = j->K, .pad = (np + j->pw - 1) / j->pw * j->pw};
        if (!cols_done && im2col_rows(&j->s, xg, j->C * j->s.in_vol, 0, j->K, p0, p1, cols, &po) != 0) return -1;
        packed = cols;
    }
    const float *wg = j->w + gi * j->Og * j->K, *bg = j->b ? j->b + gi * j->Og : NULL;
    float *yg = j->y + (n * j->O + gi * j->Og) * j->s.out_vol + p0;
    const float *wp = j->wpack ? j->wpack + (size_t)gi * j->wpack_group : NULL;
    if (j->transposed) {
        float *yt = cols + j->cols_floats;
        gemm_epilogue epi = {.act = j->act, .bias = bg};
        if (rlx_sgemm_packed(pool, np, j->Og, j->K, B, ldb, 1, packed, wg, j->K, 1, wp, yt, j->Og, &epi) != 0) return -1;
        if (!j->fold) {
            for (int64_t o = 0; o < j->Og; o++)
                for (int64_t q = 0; q < np; q++) yg[o * j->s.out_vol + q] = yt[q * j->Og + o];
            return 0;
        }
        for (int64_t q = 0; q < np; q++) {   /* position p0 + q is image i's position pp */
            int64_t i = (p0 + q) / j->s.out_vol, pp = (p0 + q) % j->s.out_vol;
            float *yq = j->y + (i * j->O + gi * j->Og) * j->s.out_vol + pp;
            for (int64_t o = 0; o < j->Og; o++) yq[o * j->s.out_vol] = yt[q * j->Og + o];
        }
        return 0;
    }
    gemm_epilogue epi = {.act = j->act, .row_bias = bg};
    return rlx_sgemm_packed(pool, j->Og, np, j->K, wg, j->K, 0, wp, B, ldb, 0, packed, yg, j->s.out_vol, &epi);
}

static void conv_tasks(void *arg, int64_t begin, int64_t end, int worker) {
    conv_job *j = arg;
    float *cols = j->scratch + (size_t)worker * j->scratch_per_worker;
    for (int64_t t = begin; t < end; t++)
        if (conv_task_run(j, t, cols, NULL, 0) != 0) atomic_store(&j->failed, 1);
}

static void im2col_task(void *arg, int64_t begin, int64_t end, int worker) {
    (void)worker;
    conv_job *j = arg;
    int64_t np = j->p1 - j->p0;
    panel_out po = {.w = j->pw, .kcs = j->kcs, .K = j->K, .pad = (np + j->pw - 1) / j->pw * j->pw};
    if (im2col_rows(&j->s, j->xg, j->C * j->s.in_vol, begin, end, j->p0, j->p1, j->cols, &po) != 0) atomic_store(&j->failed, 1);
}


rlx_status cpu_conv(const cpu_kernel_ctx *k) {
    ir_conv_geom g;
    ir_conv_geom_of(k->node, &g);
    if (g.has_residual) return cpu_conv_residual(k);
    const cpu_tensor *x = &k->in[0], *w = &k->in[1], *b = g.has_bias ? &k->in[2] : NULL;
    char lb[160];
    if (x->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the CPU convolution is f32 (got %s)", cpu_node_label(k->node, lb, sizeof lb),
                        rlx_dtype_name(x->dtype));
    conv_job j = {.s = {.dims = g.dims, .in = {1, 1, 1}, .k = {1, 1, 1}, .out = {1, 1, 1}, .st = {1, 1, 1}, .dl = {1, 1, 1}},
                  .x = x->data, .w = w->data, .b = b ? b->data : NULL, .y = k->out.data, .act = (int)g.act};
    conv_shape *s = &j.s;
    int off = 3 - g.dims;
    for (int i = 0; i < g.dims; i++) {
        s->in[off + i] = x->dims[2 + i], s->k[off + i] = w->dims[2 + i], s->out[off + i] = k->out.dims[2 + i];
        s->st[off + i] = g.stride[i], s->dl[off + i] = g.dilation[i], s->pb[off + i] = g.pad_begin[i];
    }
    s->in_vol = s->in[0] * s->in[1] * s->in[2], s->k_vol = s->k[0] * s->k[1] * s->k[2];
    s->out_vol = s->out[0] * s->out[1] * s->out[2];
    int64_t N = x->dims[0];
    j.C = x->dims[1], j.O = w->dims[0], j.groups = g.groups, j.Cg = j.C / g.groups, j.Og = j.O / g.groups;
    j.K = j.Cg * s->k_vol;
    if (N == 0 || j.O == 0 || s->out_vol == 0) return RLX_OK;

    if (j.Cg == 1 && j.Og == 1 && s->in[0] == 1 && s->k[0] == 1) {
        cpu_conv_dw_args a = {.x = j.x, .w = j.w, .b = j.b, .y = j.y, .planes = N * j.C, .C = j.C,
                              .ih = s->in[1], .iw = s->in[2], .kh = s->k[1], .kw = s->k[2], .oh = s->out[1], .ow = s->out[2],
                              .sh = s->st[1], .sw = s->st[2], .dh = s->dl[1], .dw = s->dl[2], .ph = s->pb[1], .pw = s->pb[2],
                              .act = j.act};
        cpu_conv_depthwise(k->pool, &a);
        return RLX_OK;
    }

    bool unit = true;
    for (int i = 0; i < 3; i++) unit = unit && s->k[i] == 1 && s->st[i] == 1 && s->pb[i] == 0;
    int64_t want = RLX_MAX(CONV_CHUNK_MIN_COLS, CONV_CHUNK_FLOATS / RLX_MAX(j.K, 1));
    /* Images smaller than a chunk (late stages) share chunks, so each packed weight panel
     * serves several images' positions. */
    j.fold = N > 1 && s->out_vol < want;
    j.direct = !j.fold && unit && s->in_vol == s->out_vol;   /* pad_end is 0 too then */
    j.P = j.fold ? N * s->out_vol : s->out_vol, j.images = j.fold ? 1 : N;
    j.n_chunks = (j.P + want - 1) / want;
    j.chunk = (j.P + j.n_chunks - 1) / j.n_chunks;
    j.chunk = RLX_MIN(j.P, (j.chunk + 15) / 16 * 16);
    j.n_chunks = (j.P + j.chunk - 1) / j.chunk;
    int64_t tasks = j.images * g.groups * j.n_chunks;
    int threads = rlx_threadpool_size(k->pool);
    bool parallel_tasks = threads == 1 || tasks >= 2 * threads;
    atomic_init(&j.failed, 0);
    rlx_sgemm_tile(&j.mr, &j.nr);
    j.transposed = j.fold || tile_use(j.chunk, j.Og, j.mr, j.nr) > 1.1 * tile_use(j.Og, j.chunk, j.mr, j.nr);
    /* The weights are packed once here instead of in every chunk's GEMM, when
     * more than one chunk uses them. */
    if (tasks > g.groups) {
        j.wpack_group = (rlx_sgemm_packed_floats(j.Og, j.K, j.transposed) + 15) / 16 * 16;
        float *wp = cpu_thread_scratch(CPU_SCRATCH_CONV_W, j.wpack_group * (size_t)g.groups);
        if (!wp)
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for the packed weights", cpu_node_label(k->node, lb, sizeof lb));
        for (int64_t gi = 0; gi < g.groups; gi++) {
            const float *wg = j.w + gi * j.Og * j.K;
            if (j.transposed) rlx_sgemm_pack_b(wp + gi * j.wpack_group, j.Og, j.K, wg, j.K, 1);
            else rlx_sgemm_pack_a(wp + gi * j.wpack_group, j.Og, j.K, wg, j.K, 0);
        }
        j.wpack = wp;
    }
    j.pw = j.transposed ? j.mr : j.nr, j.kcs = rlx_sgemm_kc_step(j.K);
    j.cols_floats = (size_t)(j.K * ((j.chunk + j.pw - 1) / j.pw * j.pw) + 15) / 16 * 16;
    j.scratch_per_worker = (j.cols_floats + (size_t)(j.chunk * j.Og) + 15) / 16 * 16;
    {
        j.scratch = cpu_thread_scratch(CPU_SCRATCH_IM2COL, (size_t)(parallel_tasks ? threads : 1) * j.scratch_per_worker);
        if (!j.scratch)
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for a %lld x %lld im2col matrix",
                            cpu_node_label(k->node, lb, sizeof lb), (long long)j.K, (long long)j.chunk);
    }
    if (parallel_tasks) {
        if (tasks == 1 || threads == 1) conv_tasks(&j, 0, tasks, 0);
        else rlx_parallel_for(k->pool, tasks, 1, conv_tasks, &j);
    } else {
        for (int64_t t = 0; t < tasks && !atomic_load(&j.failed); t++) {
            int64_t ch = t % j.n_chunks, ng = t / j.n_chunks, gi = ng % j.groups, n = ng / j.groups;
            if (!j.direct) {
                j.xg = j.x + (n * j.C + gi * j.Cg) * s->in_vol;
                j.p0 = ch * j.chunk, j.p1 = RLX_MIN(j.P, j.p0 + j.chunk), j.cols = j.scratch;
                rlx_parallel_for(k->pool, j.K, RLX_MAX(1, j.K / (4 * threads)), im2col_task, &j);
            }
            if (conv_task_run(&j, t, j.scratch, k->pool, 1) != 0) atomic_store(&j.failed, 1);
        }
    }
    if (atomic_load(&j.failed))
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: GEMM scratch", cpu_node_label(k->node, lb, sizeof lb));
    return RLX_OK;
}
