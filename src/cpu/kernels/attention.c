/*
 * attention.c — fused scaled dot-product attention on the CPU.
 *
 *   out = softmax(q k^T * scale + mask) v
 *   q [B,H,Sq,D], k and v [B,Hkv,Skv,D], H % Hkv == 0; query head h reads kv
 *   head h / (H/Hkv) (GQA). Query i sits at position Skv - Sq + i.
 *   RLX_MASK_CAUSAL: query i sees keys j <= Skv - Sq + i.
 *   RLX_MASK_ADDITIVE: a 4th input, q's dtype, broadcastable (right aligned,
 *   rank <= 4) to [B,H,Sq,Skv], is added to the scaled scores.
 *   Storage f32, f16 or bf16: 16-bit tensors are widened to f32 copies, the
 *   f32 kernel runs on them and its result is rounded to the output's dtype
 *   (what the Vulkan kernel computes too: f32 math over 16-bit storage).
 *   A query row whose keys are all masked (every score -inf, or no visible
 *   key at all, e.g. causal with Sq > Skv) outputs zeros, not NaN.
 *
 * Flash-style: the [Sq,Skv] score matrix never exists. Work is split into
 * tasks of (b, h, block of ATT_BQ queries); a task walks the keys in blocks
 * of ATT_BK with an online softmax (running max m, running sum l, rescaled
 * accumulator O), so it touches one K/V block at a time and its scratch
 * (scores, O, a transposed K block) stays in L1/L2. Causal tasks stop at the
 * last key their last query can see.
 *
 * Scores are computed two ways: blocks with many query rows transpose the K
 * block once and accumulate scores with axpys over keys (no horizontal sums);
 * blocks with few rows (decode) take dot products straight from K. Inner
 * loops run over fixed 16-lane chunks so that compilers vectorize them at
 * -O2 without -ffast-math. On x86-64 the task body is compiled three times
 * (AVX-512, AVX2+FMA, baseline) and chosen at run time; exp is a vectorizable
 * polynomial (Cephes expf, ~1 ulp) because a libm call per score would cost
 * more than the dot products.
 */
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/vmath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATT_BQ    64   /* query rows per task */
#define ATT_BK    64   /* keys per block */
#define ATT_LANES 16   /* chunk width of the vectorized loops */
#define ATT_KT_MIN_ROWS 8  /* below this, dot products beat transposing K */

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ATT_X86_DISPATCH 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define ATT_INLINE static inline __attribute__((always_inline))
#else
#define ATT_INLINE static inline
#endif

typedef struct att_ctx {
    const float *q, *k, *v, *mask;
    float       *out;
    int64_t      B, H, Hkv, Sq, Skv, D, group, nqb;
    int64_t      Lkv;          /* active keys: Skv, or the kv_len input (a KV cache's fill) */
    int64_t      mstr[4];      /* mask element strides over [B,H,Sq,Skv] */
    float        scale;
    int          causal;
    float       *scratch;      /* per worker: scratch_floats */
    size_t       scratch_floats;
    void       (*task)(const struct att_ctx *c, int64_t t, float *scr);
} att_ctx;

/* e^x for each of the ATT_BK entries of x, in place, by vmath's branch-free
 * exp (so the loop vectorizes; -inf gives 0, NaN stays NaN). */
ATT_INLINE void att_exp_block(float *x)
{
    for (int j = 0; j < ATT_BK; j++) x[j] = vm_exp(x[j]);   /* scores minus the row max: <= 0 */
}

/* dot(a, b) over n with 16 independent partial sums. */
ATT_INLINE float att_dot(const float *a, const float *b, int64_t n)
{
    float acc[ATT_LANES] = {0};
    int64_t d = 0;
    for (; d + ATT_LANES <= n; d += ATT_LANES)
        for (int l = 0; l < ATT_LANES; l++)
            acc[l] += a[d + l] * b[d + l];
    float s = 0.0f;
    for (; d < n; d++)
        s += a[d] * b[d];
    for (int w = ATT_LANES / 2; w > 0; w /= 2)
        for (int l = 0; l < w; l++)
            acc[l] += acc[l + w];
    return acc[0] + s;
}

ATT_INLINE void att_scale_row(float *y, float a, int64_t n)
{
    int64_t d = 0;
    for (; d + ATT_LANES <= n; d += ATT_LANES)
        for (int l = 0; l < ATT_LANES; l++)
            y[d + l] *= a;
    for (; d < n; d++)
        y[d] *= a;
}

/* s[0..nk) = sum_d q[d] * Kt[d][0..nk), in whole 16-key chunks (entries past
 * nk up to the chunk's end are computed too; later ones are left alone). Each
 * chunk stays in registers across the whole d loop instead of a load and store
 * of s per d. (A single 64-wide accumulator is slower: gcc 12 spills it.) */
ATT_INLINE void att_scores_kt(float *restrict s, const float *restrict q,
                              const float *restrict Kt, int64_t D, int64_t nk)
{
    for (int j0 = 0; j0 < nk; j0 += ATT_LANES) {
        float acc[ATT_LANES] = {0};
        for (int64_t d = 0; d < D; d++) {
            const float qd = q[d], *kt = Kt + d * ATT_BK + j0;
            for (int l = 0; l < ATT_LANES; l++)
                acc[l] += qd * kt[l];
        }
        for (int l = 0; l < ATT_LANES; l++)
            s[j0 + l] = acc[l];
    }
}

/* o[0..D) += sum_j p[j] * v[j][0..D), W lanes of o in registers at a time.
 * restrict matters throughout: without it the compiler must assume o and v
 * overlap and keeps these loops scalar. */
#define ATT_PV_CHUNK(W)                                          \
    for (; d0 + (W) <= D; d0 += (W)) {                           \
        float acc[W];                                            \
        for (int l = 0; l < (W); l++)                            \
            acc[l] = o[d0 + l];                                  \
        for (int64_t j = 0; j < nk; j++) {                       \
            const float pj = p[j], *vj = v + j * D + d0;         \
            for (int l = 0; l < (W); l++)                        \
                acc[l] += pj * vj[l];                            \
        }                                                        \
        for (int l = 0; l < (W); l++)                            \
            o[d0 + l] = acc[l];                                  \
    }

ATT_INLINE void att_pv(float *restrict o, const float *restrict p, const float *restrict v,
                       int64_t nk, int64_t D)
{
    int64_t d0 = 0;
    ATT_PV_CHUNK(ATT_LANES)
    for (; d0 < D; d0++) {
        float a = o[d0];
        for (int64_t j = 0; j < nk; j++)
            a += p[j] * v[j * D + d0];
        o[d0] = a;
    }
}

ATT_INLINE float att_max_block(const float *x)
{
    float mx[ATT_LANES];
    for (int l = 0; l < ATT_LANES; l++)
        mx[l] = x[l];
    for (int j = ATT_LANES; j < ATT_BK; j += ATT_LANES)
        for (int l = 0; l < ATT_LANES; l++)
            mx[l] = x[j + l] > mx[l] ? x[j + l] : mx[l];
    float m = mx[0];
    for (int l = 1; l < ATT_LANES; l++)
        m = mx[l] > m ? mx[l] : m;
    return m;
}

ATT_INLINE float att_sum_block(const float *x)
{
    float acc[ATT_LANES] = {0};
    for (int j = 0; j < ATT_BK; j += ATT_LANES)
        for (int l = 0; l < ATT_LANES; l++)
            acc[l] += x[j + l];
    float s = 0.0f;
    for (int l = 0; l < ATT_LANES; l++)
        s += acc[l];
    return s;
}

/* One task: queries [i0, i1) of head h in batch b. Scratch layout:
 * S [ATT_BQ][ATT_BK] scores, O [ATT_BQ][D], Kt [D][ATT_BK], m and l [ATT_BQ]. */
ATT_INLINE void att_task_body(const att_ctx *c, int64_t t, float *scr)
{
    const int64_t D = c->D, Sq = c->Sq, Skv = c->Skv;
    const int64_t qb = t % c->nqb, h = (t / c->nqb) % c->H, b = t / (c->nqb * c->H);
    const int64_t hk = h / c->group;
    const int64_t i0 = qb * ATT_BQ, i1 = RLX_MIN(Sq, i0 + ATT_BQ), nr = i1 - i0;
    const int64_t offs = c->Lkv - Sq;   /* position of query 0 */
    const float *q = c->q + ((b * c->H + h) * Sq + i0) * D;
    const float *kb = c->k + (b * c->Hkv + hk) * Skv * D;
    const float *vb = c->v + (b * c->Hkv + hk) * Skv * D;
    float *S = scr, *O = S + ATT_BQ * ATT_BK, *Kt = O + ATT_BQ * D;
    float *m = Kt + D * ATT_BK, *l = m + ATT_BQ;
    const int use_kt = nr >= ATT_KT_MIN_ROWS;

    int64_t kv_end = c->Lkv;
    if (c->causal)
        kv_end = RLX_MAX((int64_t)0, RLX_MIN(c->Lkv, offs + i1));
    for (int64_t r = 0; r < nr; r++) {
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }
    memset(O, 0, sizeof(float) * (size_t)(nr * D));

    for (int64_t j0 = 0; j0 < kv_end; j0 += ATT_BK) {
        const int64_t nk = RLX_MIN((int64_t)ATT_BK, kv_end - j0);
        const float *kblk = kb + j0 * D, *vblk = vb + j0 * D;

        /* raw scores q.k for the nk keys of this block */
        if (use_kt) {
            for (int64_t j = 0; j < nk; j++)
                for (int64_t d = 0; d < D; d++)
                    Kt[d * ATT_BK + j] = kblk[j * D + d];
            for (int64_t d = 0; d < D; d++)
                for (int64_t j = nk; j < ATT_BK; j++)
                    Kt[d * ATT_BK + j] = 0.0f;
            /* A causal row needs only the keys it sees: the scores past
             * them become -inf below anyway. */
            for (int64_t r = 0; r < nr; r++) {
                int64_t need = nk;
                if (c->causal)
                    need = RLX_MAX((int64_t)0, RLX_MIN(nk, offs + i0 + r + 1 - j0));
                att_scores_kt(S + r * ATT_BK, q + r * D, Kt, D, need);
            }
        } else {
            for (int64_t r = 0; r < nr; r++)
                for (int64_t j = 0; j < nk; j++)
                    S[r * ATT_BK + j] = att_dot(q + r * D, kblk + j * D, D);
        }

        for (int64_t r = 0; r < nr; r++) {
            float *s = S + r * ATT_BK, *o = O + r * D;
            const int64_t qi = i0 + r;
            int64_t lim = nk;
            if (c->causal)
                lim = RLX_MAX((int64_t)0, RLX_MIN(nk, offs + qi + 1 - j0));
            if (lim == 0)
                continue;   /* nothing visible in this block */
            if (c->mask) {
                const float *mk = c->mask + b * c->mstr[0] + h * c->mstr[1] + qi * c->mstr[2]
                                  + j0 * c->mstr[3];
                const int64_t ms = c->mstr[3];
                for (int64_t j = 0; j < lim; j++)
                    s[j] = s[j] * c->scale + mk[j * ms];
            } else {
                for (int64_t j = 0; j < lim; j++)
                    s[j] = s[j] * c->scale;
            }
            for (int64_t j = lim; j < ATT_BK; j++)
                s[j] = -INFINITY;

            const float mb = att_max_block(s);
            const float m_new = mb > m[r] ? mb : m[r];
            if (m_new == -INFINITY)
                continue;   /* every score so far is masked */
            const float corr = expf(m[r] - m_new);
            for (int j = 0; j < ATT_BK; j++)
                s[j] -= m_new;
            att_exp_block(s);
            l[r] = l[r] * corr + att_sum_block(s);
            m[r] = m_new;
            if (corr != 1.0f)
                att_scale_row(o, corr, D);
            att_pv(o, s, vblk, lim, D);
        }
    }

    float *dst = c->out + ((b * c->H + h) * Sq + i0) * D;
    for (int64_t r = 0; r < nr; r++) {
        const float inv = l[r] > 0.0f ? 1.0f / l[r] : 0.0f;
        for (int64_t d = 0; d < D; d++)
            dst[r * D + d] = O[r * D + d] * inv;
    }
}

static void att_task_base(const att_ctx *c, int64_t t, float *scr)
{
    att_task_body(c, t, scr);
}

#ifdef ATT_X86_DISPATCH
__attribute__((target("avx2,fma")))
static void att_task_avx2(const att_ctx *c, int64_t t, float *scr)
{
    att_task_body(c, t, scr);
}

__attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))
static void att_task_avx512(const att_ctx *c, int64_t t, float *scr)
{
    att_task_body(c, t, scr);
}
#endif

static void att_range(void *ctx, int64_t begin, int64_t end, int worker)
{
    const att_ctx *c = ctx;
    float *scr = c->scratch + (size_t)worker * c->scratch_floats;
    for (int64_t t = begin; t < end; t++)
        c->task(c, t, scr);
}

static rlx_status attention_f32(const cpu_kernel_ctx *k);

/* f16 / bf16 storage: every input widened to f32, the f32 kernel, the result rounded back. */
static rlx_status attention_16bit(const cpu_kernel_ctx *k)
{
    char lb[160];
    cpu_kernel_ctx w = *k;
    float *bufs[IR_MAX_INPUTS + 1] = {0};
    rlx_status st = RLX_OK;
    for (int i = 0; i <= k->n_in && st == RLX_OK; i++) {
        const cpu_tensor *t = i < k->n_in ? &k->in[i] : &k->out;
        cpu_tensor *wt = i < k->n_in ? &w.in[i] : &w.out;
        if (t->dtype != RLX_F16 && t->dtype != RLX_BF16) continue;   /* kv_len (i32) */
        if (!(bufs[i] = malloc(sizeof(float) * (size_t)(t->numel > 0 ? t->numel : 1)))) {
            st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory to widen a %lld-element input",
                          cpu_node_label(k->node, lb, sizeof lb), (long long)t->numel);
            break;
        }
        const uint16_t *src = t->data;
        if (i < k->n_in)
            for (int64_t j = 0; j < t->numel; j++)
                bufs[i][j] = t->dtype == RLX_F16 ? rlx_f16_to_f32(src[j]) : rlx_bf16_to_f32(src[j]);
        wt->data = bufs[i];
        wt->dtype = RLX_F32;
    }
    if (st == RLX_OK) st = attention_f32(&w);
    if (st == RLX_OK) {
        uint16_t *dst = k->out.data;
        for (int64_t j = 0; j < k->out.numel; j++)
            dst[j] = k->out.dtype == RLX_F16 ? rlx_f32_to_f16(bufs[k->n_in][j]) : rlx_f32_to_bf16(bufs[k->n_in][j]);
    }
    for (int i = 0; i <= k->n_in; i++) free(bufs[i]);
    return st;
}

rlx_status cpu_attention(const cpu_kernel_ctx *k)
{
    const rlx_dtype dt = k->in[0].dtype;
    if ((dt == RLX_F16 || dt == RLX_BF16) && k->in[1].dtype == dt && k->in[2].dtype == dt && k->out.dtype == dt)
        return attention_16bit(k);
    return attention_f32(k);
}

static rlx_status attention_f32(const cpu_kernel_ctx *k)
{
    const ir_node *n = k->node;
    const cpu_tensor *q = &k->in[0], *kk = &k->in[1], *v = &k->in[2];
    char lb[160];
    int kind = (int)ir_attr_attention_mask(n);

    if (q->dtype != RLX_F32 || kk->dtype != RLX_F32 || v->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: needs f32, f16 or bf16 for q, k and v alike, got %s",
                        cpu_node_label(n, lb, sizeof lb), rlx_dtype_name(q->dtype));
    if (q->rank != 4 || kk->rank != 4 || v->rank != 4)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: q, k, v must be [B,H,S,D]",
                        cpu_node_label(n, lb, sizeof lb));
    att_ctx c;
    memset(&c, 0, sizeof c);
    c.B = q->dims[0];
    c.H = q->dims[1];
    c.Sq = q->dims[2];
    c.D = q->dims[3];
    c.Hkv = kk->dims[1];
    c.Skv = kk->dims[2];
    if (kk->dims[0] != c.B || kk->dims[3] != c.D || c.Hkv <= 0 || c.H % c.Hkv != 0 ||
        memcmp(kk->dims, v->dims, 4 * sizeof(int64_t)) != 0)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: k/v shape [%lld,%lld,%lld,%lld] does not fit q "
                        "[%lld,%lld,%lld,%lld]", cpu_node_label(n, lb, sizeof lb),
                        (long long)kk->dims[0], (long long)kk->dims[1], (long long)kk->dims[2],
                        (long long)kk->dims[3], (long long)c.B, (long long)c.H, (long long)c.Sq,
                        (long long)c.D);
    if (kind != RLX_MASK_NONE && kind != RLX_MASK_CAUSAL && kind != RLX_MASK_ADDITIVE)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: unknown mask kind %d",
                        cpu_node_label(n, lb, sizeof lb), kind);
    c.group = c.H / c.Hkv;
    c.q = q->data;
    c.k = kk->data;
    c.v = v->data;
    c.out = k->out.data;
    c.scale = (float)ir_attr_attention_scale(n);
    c.causal = kind == RLX_MASK_CAUSAL;
    if (kind == RLX_MASK_ADDITIVE) {
        const cpu_tensor *mk = &k->in[3];
        if (k->n_in < 4 || mk->dtype != RLX_F32 || mk->rank > 4)
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: additive mask must be q's dtype and of rank <= 4",
                            cpu_node_label(n, lb, sizeof lb));
        cpu_tensor full;
        memset(&full, 0, sizeof full);
        full.rank = 4;
        full.dims[0] = c.B;
        full.dims[1] = c.H;
        full.dims[2] = c.Sq;
        full.dims[3] = c.Skv;
        for (int d = 0; d < mk->rank; d++) {
            int64_t md = mk->dims[d], fd = full.dims[4 - mk->rank + d];
            if (md != 1 && md != fd)
                return rlx_fail(RLX_STATUS_SHAPE, "%s: mask dim %d is %lld, cannot broadcast to %lld",
                                cpu_node_label(n, lb, sizeof lb), d, (long long)md, (long long)fd);
        }
        cpu_broadcast_strides(mk, &full, c.mstr);
        c.mask = mk->data;
    }
    c.Lkv = c.Skv;
    if (ir_attr_attention_has_kv_len(n)) {   /* active extent: only the first kv_len keys exist */
        const cpu_tensor *lt = &k->in[kind == RLX_MASK_ADDITIVE ? 4 : 3];
        int64_t L = lt->dtype == RLX_I32 ? ((const int32_t *)lt->data)[0] : -1;
        if (L < 0 || L > c.Skv)
            return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: kv_len %lld is outside [0, %lld] (the key capacity)",
                            cpu_node_label(n, lb, sizeof lb), (long long)L, (long long)c.Skv);
        c.Lkv = L;
    }
    if (k->out.numel == 0)
        return RLX_OK;

    c.nqb = (c.Sq + ATT_BQ - 1) / ATT_BQ;
    c.scratch_floats = (size_t)(ATT_BQ * ATT_BK + ATT_BQ * c.D + c.D * ATT_BK + 2 * ATT_BQ);
    c.scratch_floats = (c.scratch_floats + 15) & ~(size_t)15;   /* keep 64-byte alignment */
    int workers = rlx_threadpool_size(k->pool);
    c.scratch = rlx_aligned_alloc(c.scratch_floats * sizeof(float) * (size_t)workers);
    if (!c.scratch)
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: no memory for %d x %zu scratch floats",
                        cpu_node_label(n, lb, sizeof lb), workers, c.scratch_floats);

    c.task = att_task_base;
#ifdef ATT_X86_DISPATCH
    if (__builtin_cpu_supports("avx512f"))
        c.task = att_task_avx512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        c.task = att_task_avx2;
#endif
    int64_t tasks = c.B * c.H * c.nqb;
    /* A task is at least nr * kv * D multiply-adds; keep tiny calls inline. */
    int64_t work = c.B * c.H * c.Sq * c.Lkv * c.D;
    rlx_parallel_for(work >= ((int64_t)1 << 16) ? k->pool : NULL, tasks, 1, att_range, &c);
    rlx_aligned_free(c.scratch);
    return RLX_OK;
}
