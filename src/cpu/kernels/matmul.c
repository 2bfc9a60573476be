/*
 * matmul.c — CPU kernel for MATMUL and MATMUL_BIAS_ACT on top of rlx_sgemm.
 *
 * a [..., M, K] x b [..., K, N] (a [..., K, M] with transpose_a, b [..., N,
 * K] with transpose_b), batch dims broadcast numpy-style, then optionally
 * act(. + bias[N]) fused into the GEMM epilogue. The batch is handled in one
 * of three ways:
 *  - folded into M, one big GEMM, when b is a single matrix and a's batch is
 *    dense and a is not transposed (the [B,S,K] x [K,N] linear layer case);
 *  - many small GEMMs run in parallel over the batch, each single-threaded,
 *    when a per-matrix GEMM is too small to split well (attention-like shapes);
 *  - otherwise one GEMM after another, each using the whole pool.
 * f32 is the fast path; f16, bf16 and f64 are converted to f32 temporaries
 * (so they carry f32 accumulation), other dtypes are UNSUPPORTED.
 */
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/gemm.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this many multiply-adds per matrix, parallelize over the batch. */
#define MATMUL_SMALL_FLOPS ((int64_t)1 << 18)

typedef struct mm_ctx {
    int64_t        M, N, K;
    int            ta, tb;
    const float   *A, *B;
    float         *C;
    int64_t        a_mat, b_mat;          /* elements per matrix */
    int            brank;                 /* batch rank of the output */
    int64_t        bdims[IR_MAX_RANK];
    int64_t        astr[IR_MAX_RANK];     /* batch strides, in matrices */
    int64_t        bstr[IR_MAX_RANK];
    gemm_epilogue  epi;
    atomic_int     failed;
} mm_ctx;

static void batch_offsets(const mm_ctx *c, int64_t t, int64_t *aoff, int64_t *boff)
{
    int64_t ao = 0, bo = 0;
    for (int d = c->brank - 1; d >= 0; d--) {
        int64_t i = t % c->bdims[d];
        t /= c->bdims[d];
        ao += i * c->astr[d];
        bo += i * c->bstr[d];
    }
    *aoff = ao * c->a_mat;
    *boff = bo * c->b_mat;
}

static int run_one(const mm_ctx *c, rlx_threadpool *pool, int64_t t)
{
    int64_t aoff, boff;
    batch_offsets(c, t, &aoff, &boff);
    return rlx_sgemm_ex(pool, c->M, c->N, c->K, c->A + aoff, c->ta ? c->M : c->K, c->ta, c->B + boff,
                        c->tb ? c->K : c->N, c->tb, c->C + t * c->M * c->N, c->N, &c->epi);
}

static void batch_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    mm_ctx *c = ctx;
    for (int64_t t = begin; t < end; t++)
        if (run_one(c, NULL, t) != 0)
            atomic_store(&c->failed, 1);
}

/* K == 0: the product is all zeros; the epilogue still applies. */
static void empty_product(const mm_ctx *c, int64_t rows)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c->N; j++)
            c->C[r * c->N + j] = cpu_activate(c->epi.bias ? c->epi.bias[j] : 0.0f, c->epi.act);
}

/* Converts n elements of a float dtype to/from f32. */
static void to_f32(float *dst, const void *src, rlx_dtype dt, int64_t n)
{
    if (dt == RLX_F32) {
        memcpy(dst, src, (size_t)n * sizeof(float));
    } else if (dt == RLX_F16) {
        for (int64_t i = 0; i < n; i++)
            dst[i] = rlx_f16_to_f32(((const uint16_t *)src)[i]);
    } else if (dt == RLX_BF16) {
        for (int64_t i = 0; i < n; i++)
            dst[i] = rlx_bf16_to_f32(((const uint16_t *)src)[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            dst[i] = (float)rlx_load_as_f64(src, dt, i);
    }
}

static void from_f32(void *dst, rlx_dtype dt, const float *src, int64_t n)
{
    if (dt == RLX_F16) {
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = rlx_f32_to_f16(src[i]);
    } else if (dt == RLX_BF16) {
        for (int64_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = rlx_f32_to_bf16(src[i]);
    } else {
        for (int64_t i = 0; i < n; i++)
            rlx_store_from_f64(dst, dt, i, src[i]);
    }
}

static rlx_status matmul_f32(const cpu_kernel_ctx *k, mm_ctx *c, const cpu_tensor *a,
                             const cpu_tensor *b)
{
    char lb[160];
    const cpu_tensor *out = &k->out;

    /* Batch strides, in matrices: a fake tensor of just the batch dims of
     * each operand, broadcast to the output's batch dims. */
    cpu_tensor ab, bb, ob;
    memset(&ab, 0, sizeof ab);
    memset(&bb, 0, sizeof bb);
    memset(&ob, 0, sizeof ob);
    ab.rank = a->rank - 2;
    bb.rank = b->rank - 2;
    ob.rank = out->rank - 2;
    memcpy(ab.dims, a->dims, sizeof(int64_t) * (size_t)ab.rank);
    memcpy(bb.dims, b->dims, sizeof(int64_t) * (size_t)bb.rank);
    memcpy(ob.dims, out->dims, sizeof(int64_t) * (size_t)ob.rank);
    int64_t nb = 1, a_nb = 1, b_nb = 1;
    for (int d = 0; d < ob.rank; d++)
        nb *= ob.dims[d];
    for (int d = 0; d < ab.rank; d++)
        a_nb *= ab.dims[d];
    for (int d = 0; d < bb.rank; d++)
        b_nb *= bb.dims[d];
    ab.numel = a_nb;
    bb.numel = b_nb;
    ob.numel = nb;
    c->brank = ob.rank;
    memcpy(c->bdims, ob.dims, sizeof c->bdims);
    cpu_broadcast_strides(&ab, &ob, c->astr);
    cpu_broadcast_strides(&bb, &ob, c->bstr);
    c->a_mat = c->M * c->K;
    c->b_mat = c->K * c->N;
    atomic_init(&c->failed, 0);

    if (c->K == 0) {
        empty_product(c, nb * c->M);
        return RLX_OK;
    }
    int ok = 1;
    if (nb == 1 || (b_nb == 1 && a_nb == nb && !c->ta)) {   /* a^T's rows are not a's: no folding */
        ok = rlx_sgemm_ex(k->pool, nb * c->M, c->N, c->K, c->A, c->ta ? c->M : c->K, c->ta, c->B,
                          c->tb ? c->K : c->N, c->tb, c->C, c->N, &c->epi) == 0;
    } else if (c->M * c->N * c->K < MATMUL_SMALL_FLOPS && rlx_threadpool_size(k->pool) > 1) {
        int64_t grain = RLX_MAX((int64_t)1, MATMUL_SMALL_FLOPS / RLX_MAX(c->M * c->N * c->K, (int64_t)1) / 4);
        rlx_parallel_for(k->pool, nb, grain, batch_range, c);
        ok = !atomic_load(&c->failed);
    } else {
        for (int64_t t = 0; t < nb && ok; t++)
            ok = run_one(c, k->pool, t) == 0;
    }
    if (!ok)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for GEMM scratch",
                        cpu_node_label(k->node, lb, sizeof lb));
    return RLX_OK;
}

rlx_status cpu_matmul(const cpu_kernel_ctx *k)
{
    const ir_node *n = k->node;
    const cpu_tensor *a = &k->in[0], *b = &k->in[1];
    const cpu_tensor *bias = ir_attr_matmul_has_bias(n) && k->n_in > 2 ? &k->in[2] : NULL;
    char lb[160];
    rlx_dtype dt = a->dtype;

    if (!ir_dtype_is_float(dt) || b->dtype != dt || (bias && bias->dtype != dt))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: needs one float dtype, got %s x %s",
                        cpu_node_label(n, lb, sizeof lb), rlx_dtype_name(a->dtype),
                        rlx_dtype_name(b->dtype));
    if (a->rank < 2 || b->rank < 2 || k->out.rank < 2)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: operands need rank >= 2, got %d and %d",
                        cpu_node_label(n, lb, sizeof lb), a->rank, b->rank);

    mm_ctx c;
    memset(&c, 0, sizeof c);
    c.tb = ir_attr_matmul_transpose_b(n) != 0;
    c.ta = ir_attr_matmul_transpose_a(n) != 0;
    c.M = a->dims[a->rank - (c.ta ? 1 : 2)];
    c.K = a->dims[a->rank - (c.ta ? 2 : 1)];
    c.N = c.tb ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    int64_t kb = c.tb ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    if (kb != c.K || k->out.dims[k->out.rank - 2] != c.M || k->out.dims[k->out.rank - 1] != c.N)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: inner dims differ: K %lld vs %lld",
                        cpu_node_label(n, lb, sizeof lb), (long long)c.K, (long long)kb);
    if (bias && bias->numel != c.N)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: bias has %lld elements, N is %lld",
                        cpu_node_label(n, lb, sizeof lb), (long long)bias->numel, (long long)c.N);
    c.epi.act = n->op == IR_OP_MATMUL_BIAS_ACT ? (int)ir_attr_matmul_act(n) : RLX_ACT_NONE;
    c.epi.accumulate = 0;
    if (k->out.numel == 0)
        return RLX_OK;

    if (dt == RLX_F32) {
        c.A = a->data;
        c.B = b->data;
        c.C = k->out.data;
        c.epi.bias = bias ? bias->data : NULL;
        return matmul_f32(k, &c, a, b);
    }

    /* Other float dtypes: one f32 block holding a, b, bias and the result. */
    int64_t na = a->numel, nbe = b->numel, nbias = bias ? bias->numel : 0, nc = k->out.numel;
    float *tmp = malloc((size_t)(na + nbe + nbias + nc) * sizeof(float));
    if (!tmp)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for f32 temporaries",
                        cpu_node_label(n, lb, sizeof lb));
    float *ta = tmp, *tbuf = tmp + na, *tbias = tbuf + nbe, *tc = tbias + nbias;
    to_f32(ta, a->data, dt, na);
    to_f32(tbuf, b->data, dt, nbe);
    if (bias)
        to_f32(tbias, bias->data, dt, nbias);
    c.A = ta;
    c.B = tbuf;
    c.C = tc;
    c.epi.bias = bias ? tbias : NULL;
    rlx_status st = matmul_f32(k, &c, a, b);
    if (st == RLX_OK)
        from_f32(k->out.data, dt, tc, nc);
    free(tmp);
    return st;
}
