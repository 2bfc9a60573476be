/*
 * dequant_matmul.c — DEQUANT_MATMUL on the CPU: out[M,N] = x[M,K] · w[N,K]ᵀ
 * with w in its storage type (f32, f16, bf16 or a GGUF block type).
 *
 * Fast path (qdot.h), for Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K
 * weights on a CPU with AVX2 (AVX-512 VNNI kernels where it has them): every
 * x row is quantized once per call to 8-bit blocks, then the weights are used
 * straight from their blocks with integer products, never expanded to f32:
 *   - M = 1 (decode): one dot per weight row;
 *   - M > 1: the gemm kernels (qdot_gemm). Workers split N. Below
 *     packed_min_rows rows (5 or 10, by type), row tiles that unpack each weight block once
 *     for 4 x rows, over weight rows in L2-sized chunks; from there on (with
 *     AVX-512 VNNI) 16-row panels repacked into each worker's scratch, every
 *     x row of the block (DQ_MBLOCK at a time) streaming past each panel.
 * That rounds the activations to 8 bits: ~1e-3..4e-3 relative error against
 * the exact f32 result (see qdot.h). rlx_compile_options.exact_quant (the
 * kernel context's exact_quant) forces the exact path below; x
 * holding Inf/NaN in any row also takes it for the whole call.
 *
 * Exact path: decode-shaped calls (M <= 4) decode one weight row at a time
 * into an L1-sized buffer and dot it with every x row in f32; larger M
 * decodes 64-row tiles of w and hands them to the f32 GEMM. Block decoding
 * uses the reference codecs in io/quant.c; the CPU backend depends on that
 * codec, not on the GGUF reader. Types without fast kernels (Q8_K, the IQ
 * types, f16, bf16, f32) always take it.
 */
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/gemm.h"
#include "cpu/kernels/qdot.h"
#include "quant/quant.h"
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define DQ_TILE 64      /* weight rows per GEMM tile (exact path) */
#define DQ_SMALL_M 4    /* exact path: up to this many x rows, row-by-row dot products */
#define DQ_MBLOCK 256   /* fast path: x rows quantized and swept at a time (bounds the buffer) */
#define DQ_CHUNK_BYTES (192 << 10)   /* fast path: weight bytes per chunk, kept in L2 over all x rows */

typedef struct dq_ctx {
    const float   *x;
    const uint8_t *w;
    float         *out;
    int64_t        M, N, K;
    size_t         row_bytes;
    uint32_t       qtype;
    float         *scratch;     /* per worker */
    qdot_kernel    fast;        /* fast path: its kernels and the quantized x rows */
    const uint8_t *xq;
    size_t         xq_bytes;
    int64_t        m0, xrows;   /* the block of x rows in xq: first row, count */
    int64_t        nchunk;      /* weight rows per gemm call */
    uint8_t       *gscratch;    /* packed-gemm panel per worker, gscratch_bytes each */
    size_t         gscratch_bytes;
    _Atomic int    nonfinite;
    size_t         scratch_floats;
    rlx_status     status;      /* first failure (set under no lock: any failure value will do) */
} dq_ctx;

static rlx_status decode_row(const dq_ctx *c, int64_t n, float *dst) {
    return quant_dequantize_row(c->qtype, c->w + (size_t)n * c->row_bytes, dst, c->K);
}

static float dot(const float *a, const float *b, int64_t k) {
    float acc[16] = {0};
    int64_t i = 0;
    for (; i + 16 <= k; i += 16)
        for (int l = 0; l < 16; l++) acc[l] += a[i + l] * b[i + l];
    float s = 0;
    for (; i < k; i++) s += a[i] * b[i];
    for (int l = 0; l < 16; l++) s += acc[l];
    return s;
}

static void rows_range(void *p, int64_t begin, int64_t end, int worker) {
    dq_ctx *c = p;
    float *row = c->scratch + (size_t)worker * c->scratch_floats;
    for (int64_t n = begin; n < end; n++) {
        rlx_status st = decode_row(c, n, row);
        if (st != RLX_OK) { c->status = st; return; }
        for (int64_t m = 0; m < c->M; m++) c->out[m * c->N + n] = dot(c->x + m * c->K, row, c->K);
    }
}

/* M == 1: one dot per weight row. */
static void fast_range(void *p, int64_t begin, int64_t end, int worker) {
    dq_ctx *c = p;
    (void)worker;
    for (int64_t n = begin; n < end; n++) c->out[n] = c->fast.dot(c->K, c->w + (size_t)n * c->row_bytes, c->xq);
}

/* M > 1: chunks [begin, end) of nchunk weight rows, each against all xrows
 * rows of the block (the packed gemm uses the worker's panel scratch). */
static void gemm_range(void *p, int64_t begin, int64_t end, int worker) {
    dq_ctx *c = p;
    uint8_t *scratch = c->gscratch ? c->gscratch + (size_t)worker * c->gscratch_bytes : NULL;
    for (int64_t i = begin; i < end; i++) {
        int64_t n0 = i * c->nchunk, nw = RLX_MIN(c->nchunk, c->N - n0);
        qdot_gemm(&c->fast, c->K, c->w + (size_t)n0 * c->row_bytes, c->row_bytes, nw, c->xq, c->xq_bytes, c->xrows,
                  c->out + n0, c->N, scratch);
    }
}

static void quant_range(void *p, int64_t begin, int64_t end, int worker) {
    dq_ctx *c = p;
    (void)worker;
    for (int64_t m = begin; m < end; m++) {
        uint8_t *dst = (uint8_t *)(uintptr_t)c->xq + (size_t)m * c->xq_bytes;
        if (!c->fast.quantize(c->x + (c->m0 + m) * c->K, c->K, dst)) atomic_store(&c->nonfinite, 1);
    }
}

/* The 8-bit-activation path; false when it does not apply (the exact path then
 * writes every output, also over what a block before an Inf / NaN wrote). */
static bool try_fast(dq_ctx *c, rlx_threadpool *pool) {
    if (!qdot_find(c->qtype, &c->fast)) return false;
    c->xq_bytes = qdot_act_bytes(c->fast.act, c->K);
    int64_t mb = RLX_MIN(c->M, (int64_t)DQ_MBLOCK);
    uint8_t *xq = rlx_aligned_alloc(c->xq_bytes * (size_t)mb);
    if (!xq) return false;   /* the exact path needs less memory than this anyway; let it report */
    c->xq = xq;
    if (c->M == 1) {
        bool finite = c->fast.quantize(c->x, c->K, xq);
        if (finite) rlx_parallel_for(pool, c->N, 16, fast_range, c);
        rlx_aligned_free(xq);
        return finite;
    }
    int workers = rlx_threadpool_size(pool);
    int64_t nc;
    if (c->fast.gemm_packed && c->M >= c->fast.packed_min_rows) {
        /* one 16-row panel per call; each worker has its panel buffer */
        nc = 16;
        c->gscratch_bytes = (qdot_gemm_scratch_bytes(c->K) + 63) & ~(size_t)63;
        c->gscratch = rlx_aligned_alloc(c->gscratch_bytes * (size_t)workers);
        if (!c->gscratch) { rlx_aligned_free(xq); return false; }
    } else {
        /* weight rows that stay in L2 while all x rows sweep them */
        nc = RLX_MAX((int64_t)4, RLX_MIN((int64_t)128, (int64_t)(DQ_CHUNK_BYTES / c->row_bytes)));
        /* enough chunks for the dynamic schedule to balance the workers */
        while (nc > 4 && c->N < nc * 4 * workers) nc /= 2;
    }
    c->nchunk = nc;
    float *out_all = c->out;
    for (int64_t m0 = 0; m0 < c->M; m0 += mb) {
        int64_t rows = RLX_MIN(mb, c->M - m0);
        c->m0 = m0;
        c->xrows = rows;
        rlx_parallel_for(pool, rows, 8, quant_range, c);
        /* Inf or NaN in x: the exact path redoes the whole call (it writes every output) */
        if (atomic_load(&c->nonfinite)) break;
        c->out = out_all + m0 * c->N;
        rlx_parallel_for(pool, (c->N + nc - 1) / nc, 1, gemm_range, c);
    }
    c->out = out_all;
    rlx_aligned_free(c->gscratch);
    rlx_aligned_free(xq);
    return !atomic_load(&c->nonfinite);
}

static void tiles_range(void *p, int64_t begin, int64_t end, int worker) {
    dq_ctx *c = p;
    float *tile = c->scratch + (size_t)worker * c->scratch_floats;
    for (int64_t t = begin; t < end; t++) {
        int64_t n0 = t * DQ_TILE, nt = RLX_MIN((int64_t)DQ_TILE, c->N - n0);
        for (int64_t r = 0; r < nt; r++) {
            rlx_status st = decode_row(c, n0 + r, tile + r * c->K);
            if (st != RLX_OK) { c->status = st; return; }
        }
        gemm_epilogue epi = {0};
        if (rlx_sgemm(NULL, c->M, nt, c->K, c->x, c->K, tile, c->K, 1, c->out + n0, c->N, &epi) != 0) {
            c->status = RLX_STATUS_OUT_OF_MEMORY;
            return;
        }
    }
}

rlx_status cpu_dequant_matmul(const cpu_kernel_ctx *k) {
    const cpu_tensor *x = &k->in[0], *w = &k->in[1];
    const char *name = k->node->name ? k->node->name : "";
    dq_ctx c;
    memset(&c, 0, sizeof c);
    c.K = w->dims[1];
    c.N = w->dims[0];
    c.M = c.N ? k->out.numel / c.N : 0;   /* from out: with K = 0, x has no elements to count rows by */
    c.x = x->data;
    c.w = w->data;
    c.out = k->out.data;
    c.qtype = quant_type_of_dtype(w->dtype);
    c.row_bytes = rlx_tensor_bytes(w->dtype, 1, &c.K);
    if (c.qtype == QTYPE_ID_LIMIT || (c.K && !c.row_bytes))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "dequant_matmul '%s': weights of type %s cannot be decoded", name,
                        rlx_dtype_name(w->dtype));
    if (c.M == 0 || c.N == 0) return RLX_OK;
    if (c.K == 0) {
        memset(c.out, 0, sizeof(float) * (size_t)(c.M * c.N));
        return RLX_OK;
    }
    if (!k->exact_quant && try_fast(&c, k->pool)) return RLX_OK;
    bool small = c.M <= DQ_SMALL_M;
    c.scratch_floats = (size_t)c.K * (small ? 1 : DQ_TILE);
    c.scratch_floats = (c.scratch_floats + 15) & ~(size_t)15;
    int workers = rlx_threadpool_size(k->pool);
    c.scratch = rlx_aligned_alloc(c.scratch_floats * sizeof(float) * (size_t)workers);
    if (!c.scratch) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "dequant_matmul '%s': no scratch memory", name);
    if (small) rlx_parallel_for(k->pool, c.N, 16, rows_range, &c);
    else rlx_parallel_for(k->pool, (c.N + DQ_TILE - 1) / DQ_TILE, 1, tiles_range, &c);
    rlx_aligned_free(c.scratch);
    if (c.status != RLX_OK)
        return rlx_fail(c.status, "dequant_matmul '%s': decoding %s weights failed", name, rlx_dtype_name(w->dtype));
    return RLX_OK;
}
