/*
 * gemm.c — the SGEMM driver: picks a micro-kernel, splits C among threads,
 * blocks for the caches, packs A and B into the panel layout the micro-kernel
 * reads, and applies the bias + activation epilogue.
 *
 * Structure (BLIS/GotoBLAS style, per thread task):
 *   for jc over N in NC columns
 *     for pc over K in KC steps            pack B[pc:, jc:] into NR-wide panels
 *       for ic over M in MC rows           pack A[ic:, pc:] into MR-tall panels
 *         for ir over MC in MR rows        one A panel stays in L1 ...
 *           for jr over NC in NR cols      ... while B panels stream from L2
 *             micro-kernel (C tile += A panel * B panel)
 * The epilogue runs on each tile right after its last K block, while the tile
 * is still in L1. Threads get disjoint rectangles of C and pack their own
 * panels, so they never synchronize inside a call.
 */
/* The dynamic cost model lets GCC vectorize the epilogue's and the portable
 * packers' variable-length loops at -O2 (clang does so already). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic")
#endif
#include "cpu/kernels/gemm.h"
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/gemm_internal.h"
#include "cpu/kernels/vmath.h"
#include "core/core.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Cache blocking (floats). KC x NC of packed B is the L2-resident block
 * (256 x 512 x 4 B = 512 KiB of a 1 MiB L2); an MR x KC A panel (8 KiB) stays
 * in L1 while it sweeps that block. MC bounds the packed A block. */
#ifndef GEMM_KC
#define GEMM_KC 256
#endif
#ifndef GEMM_NC
#define GEMM_NC 512
#endif
#ifndef GEMM_MC
#define GEMM_MC 256
#endif

/* Below this many multiply-adds a call runs on one thread: waking workers and
 * packing twice would cost more than it saves. */
#define GEMM_PARALLEL_MIN_MACS (64 * 64 * 64)

/* ------------------------------------------------------- portable kernel */

#define PMR 4
#define PNR 16

/* Plain C; the fixed trip counts let the compiler vectorize for the baseline ISA. */
static void ukernel_portable(int64_t kc, const float *a, const float *b, float *c, int64_t ldc,
                             int load_c) {
    float acc[PMR][PNR];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k++) {
        for (int i = 0; i < PMR; i++) {
            float ai = a[i];
            for (int j = 0; j < PNR; j++) acc[i][j] += ai * b[j];
        }
        a += PMR;
        b += PNR;
    }
    for (int i = 0; i < PMR; i++) {
        float *ci = c + i * ldc;
        if (load_c) for (int j = 0; j < PNR; j++) ci[j] += acc[i][j];
        else        for (int j = 0; j < PNR; j++) ci[j] = acc[i][j];
    }
}

static const gemm_ukernel ukernel_portable_desc = {
    "portable", PMR, PNR, ukernel_portable, NULL, NULL, NULL, NULL,
};

/* ------------------------------------------------------ kernel selection */

static const gemm_ukernel *detect_kernel(void) {
#if defined(RLX_GEMM_HAVE_X86)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"))
        return &rlx_gemm_ukernel_avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return &rlx_gemm_ukernel_avx2;
#endif
    return &ukernel_portable_desc;
}

/* The detected kernel is a pure function of the CPU, so racing first calls
 * store the same pointer; the forced one is a test/bench override. */
static _Atomic(const gemm_ukernel *) detected_kernel;
static _Atomic(const gemm_ukernel *) forced_kernel;

static const gemm_ukernel *current_kernel(void) {
    const gemm_ukernel *k = atomic_load_explicit(&forced_kernel, memory_order_acquire);
    if (k) return k;
    k = atomic_load_explicit(&detected_kernel, memory_order_acquire);
    if (!k) {
        k = detect_kernel();
        atomic_store_explicit(&detected_kernel, k, memory_order_release);
    }
    return k;
}

const char *rlx_sgemm_kernel_name(void) { return current_kernel()->name; }

void rlx_sgemm_tile(int *mr, int *nr) {
    const gemm_ukernel *k = current_kernel();
    *mr = k->mr, *nr = k->nr;
}

int rlx_sgemm_force_kernel(const char *name) {
    if (!name) {
        atomic_store(&forced_kernel, NULL);
        return 0;
    }
    const gemm_ukernel *k = NULL;
    if (strcmp(name, "portable") == 0) k = &ukernel_portable_desc;
#if defined(RLX_GEMM_HAVE_X86)
    else if (strcmp(name, "avx512") == 0 && detect_kernel() == &rlx_gemm_ukernel_avx512)
        k = &rlx_gemm_ukernel_avx512;
    else if (strcmp(name, "avx2") == 0 && __builtin_cpu_supports("avx2") &&
             __builtin_cpu_supports("fma"))
        k = &rlx_gemm_ukernel_avx2;
#endif
    if (!k) return -1;
    atomic_store(&forced_kernel, k);
    return 0;
}

/* ------------------------------------------------------------- epilogue */

/* The activations are cpu_activate's (kernel_util.c), the same arithmetic as
 * the unary ops, so a fused matmul_bias_act equals matmul + bias + act. */
/* bias (offset to the tile's first column, or NULL), row bias (offset to the
 * tile's first row, or NULL), then act over a tile. */
static void apply_epilogue(float *c, int64_t ldc, int64_t m, int64_t n, const float *bias,
                           const float *row_bias, int act) {
    for (int64_t i = 0; i < m; i++) {
        float *ci = c + i * ldc;
        if (bias) for (int64_t j = 0; j < n; j++) ci[j] += bias[j];
        if (row_bias) {
            float rb = row_bias[i];
            for (int64_t j = 0; j < n; j++) ci[j] += rb;
        }
        if (act == RLX_ACT_RELU) {
            for (int64_t j = 0; j < n; j++) ci[j] = ci[j] > 0.0f ? ci[j] : 0.0f;
        } else if (act == RLX_ACT_GELU_TANH) {
            cpu_vgelu_tanh(ci, ci, n);
        } else if (act != RLX_ACT_NONE) {
            for (int64_t j = 0; j < n; j++) ci[j] = cpu_activate(ci[j], act);
        }
    }
}

/* ------------------------------------------------------------ scratch */


/* ------------------------------------------------------------- packing */

/* dst[k*mr + i] = A[i, k] for an mr-row panel; rows past m are zero. */
static void pack_a_panel(float *dst, const float *A, int64_t lda, int64_t m, int64_t kc, int mr) {
    if (m == mr) {
        for (int64_t k = 0; k < kc; k++)
            for (int i = 0; i < mr; i++) dst[k * mr + i] = A[i * lda + k];
        return;
    }
    for (int64_t k = 0; k < kc; k++) {
        int i = 0;
        for (; i < m; i++) dst[k * mr + i] = A[i * lda + k];
        for (; i < mr; i++) dst[k * mr + i] = 0.0f;
    }
}

/* Same panel from a transposed A stored [K, M] (lda >= M): dst[k*mr + i] =
 * At[k, i], rows past m zero. */
static void pack_at_panel(float *dst, const float *At, int64_t lda, int64_t m, int64_t kc, int mr) {
    for (int64_t k = 0; k < kc; k++) {
        float *d = dst + k * mr;
        memcpy(d, At + k * lda, (size_t)m * sizeof(float));
        if (m < mr) memset(d + m, 0, (size_t)(mr - m) * sizeof(float));
    }
}

/* dst[k*nr + j] = B[k, j] (B row-major, ldb); columns past n are zero. */
static void pack_b_panel(float *dst, const float *B, int64_t ldb, int64_t n, int64_t kc, int nr) {
    for (int64_t k = 0; k < kc; k++) {
        const float *src = B + k * ldb;
        float *d = dst + k * nr;
        if (n == nr) {
            memcpy(d, src, (size_t)nr * sizeof(float));
        } else {
            memcpy(d, src, (size_t)n * sizeof(float));
            memset(d + n, 0, (size_t)(nr - n) * sizeof(float));
        }
    }
}

/* Same panel from a transposed B stored [N, K]: dst[k*nr + j] = Bt[j, k]. */
static void pack_bt_panel(float *dst, const float *Bt, int64_t ldb, int64_t n, int64_t kc, int nr) {
    for (int64_t j = 0; j < n; j++) {
        const float *src = Bt + j * ldb;
        for (int64_t k = 0; k < kc; k++) dst[k * nr + j] = src[k];
    }
    for (int64_t j = n; j < nr; j++)
        for (int64_t k = 0; k < kc; k++) dst[k * nr + j] = 0.0f;
}

/* The panel of rows [i0, i0 + m) of A (m <= mr) over K [k0, k0 + kc). */
static void pack_a_any(const gemm_ukernel *uk, float *dst, const float *A, int64_t lda, int transpose_a, int64_t k0,
                       int64_t i0, int64_t m, int64_t kc) {
    if (transpose_a) {
        const float *src = A + k0 * lda + i0;
        if (m == uk->mr && uk->pack_at) uk->pack_at(dst, src, lda, kc);
        else pack_at_panel(dst, src, lda, m, kc, uk->mr);
        return;
    }
    const float *src = A + i0 * lda + k0;
    if (m == uk->mr && uk->pack_a) uk->pack_a(dst, src, lda, kc);
    else pack_a_panel(dst, src, lda, m, kc, uk->mr);
}

/* The panel of columns [j0, j0 + n) of B (n <= nr) over K [k0, k0 + kc). */
static void pack_b_any(const gemm_ukernel *uk, float *dst, const float *B, int64_t ldb, int transpose_b, int64_t k0,
                       int64_t j0, int64_t n, int64_t kc) {
    if (transpose_b) {
        const float *src = B + j0 * ldb + k0;
        if (n == uk->nr && uk->pack_bt) uk->pack_bt(dst, src, ldb, kc);
        else pack_bt_panel(dst, src, ldb, n, kc, uk->nr);
        return;
    }
    const float *src = B + k0 * ldb + j0;
    if (n == uk->nr && uk->pack_b) uk->pack_b(dst, src, ldb, kc);
    else pack_b_panel(dst, src, ldb, n, kc, uk->nr);
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The driver's K block for K: near-equal blocks of at most GEMM_KC. */
static int64_t kc_step_of(int64_t K) { return ceil_div(K, ceil_div(K, GEMM_KC)); }

/* Pre-packed layout of `rows` rows (side 0: A, w = mr; side 1: B, w = nr): for
 * each K block [pc, pc + kc), the rows' w-wide panels one after another, at
 * pc * pad + (row / w) * w * kc, pad = rows rounded up to w. */
int64_t rlx_sgemm_kc_step(int64_t K) { return K > 0 ? kc_step_of(K) : 1; }

size_t rlx_sgemm_packed_floats(int64_t rows, int64_t K, int side) {
    const gemm_ukernel *uk = current_kernel();
    int w = side ? uk->nr : uk->mr;
    return (size_t)(ceil_div(rows, w) * w) * (size_t)K;
}

void rlx_sgemm_pack_a(float *dst, int64_t M, int64_t K, const float *A, int64_t lda, int transpose_a) {
    const gemm_ukernel *uk = current_kernel();
    int64_t kcs = kc_step_of(K), pad = ceil_div(M, uk->mr) * uk->mr;
    for (int64_t pc = 0; pc < K; pc += kcs) {
        int64_t kc = RLX_MIN(kcs, K - pc);
        for (int64_t i = 0; i < M; i += uk->mr)
            pack_a_any(uk, dst + pc * pad + i * kc, A, lda, transpose_a, pc, i, RLX_MIN(uk->mr, M - i), kc);
    }
}

void rlx_sgemm_pack_b(float *dst, int64_t N, int64_t K, const float *B, int64_t ldb, int transpose_b) {
    const gemm_ukernel *uk = current_kernel();
    int64_t kcs = kc_step_of(K), pad = ceil_div(N, uk->nr) * uk->nr;
    for (int64_t pc = 0; pc < K; pc += kcs) {
        int64_t kc = RLX_MIN(kcs, K - pc);
        for (int64_t j = 0; j < N; j += uk->nr)
            pack_b_any(uk, dst + pc * pad + j * kc, B, ldb, transpose_b, pc, j, RLX_MIN(uk->nr, N - j), kc);
    }
}


typedef struct gemm_job {
    const gemm_ukernel *uk;
    int64_t M, N, K;
    const float *A; int64_t lda; int transpose_a;
    const float *B; int64_t ldb; int transpose_b;
    float *C; int64_t ldc;
    const float *packed_a, *packed_b; /* pre-packed (or NULL): K blocks of all M (N) rows */
    int64_t mpad, npad;           /* M, N rounded up to the tile */
    const float *bias, *row_bias;
    int act, accumulate;
    int64_t kc_step;              /* K block, balanced so blocks are near equal */
    int64_t tm, tn;               /* task grid */
    int64_t rows_per_task, cols_per_task;
    _Atomic int failed;
} gemm_job;

/* One task: the serial blocked GEMM over C[m0:m1, n0:n1]. */
static void gemm_block(gemm_job *g, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const gemm_ukernel *uk = g->uk;
    const int mr = uk->mr, nr = uk->nr;
    const int64_t kcs = g->kc_step;
    int64_t nc_max = GEMM_NC / nr * nr;
    if (nc_max < nr) nc_max = nr;
    int64_t mc_max = GEMM_MC / mr * mr;
    if (mc_max < mr) mc_max = mr;
    size_t b_floats = (size_t)(kcs * nc_max);
    size_t a_floats = (size_t)(kcs * mc_max);
    /* + one MR x NR tile for partial tiles */
    float *scratch = cpu_thread_scratch(CPU_SCRATCH_GEMM_PACK, b_floats + a_floats + (size_t)(mr * nr) + 16);
    if (!scratch) {
        atomic_store(&g->failed, 1);
        return;
    }
    float *pb = scratch;
    float *pa = scratch + b_floats;
    float *tile = pa + a_floats;

    for (int64_t jc = n0; jc < n1; jc += nc_max) {
        int64_t nc = RLX_MIN(nc_max, n1 - jc);
        for (int64_t pc = 0; pc < g->K; pc += kcs) {
            int64_t kc = RLX_MIN(kcs, g->K - pc);
            int load_c = pc > 0 || g->accumulate;
            int last = pc + kc == g->K;

            const float *pbk = g->packed_b ? g->packed_b + pc * g->npad + jc * kc : pb;
            if (!g->packed_b)
                for (int64_t jr = 0; jr < nc; jr += nr)
                    pack_b_any(uk, pb + jr * kc, g->B, g->ldb, g->transpose_b, pc, jc + jr, RLX_MIN(nr, nc - jr), kc);
            for (int64_t ic = m0; ic < m1; ic += mc_max) {
                int64_t mc = RLX_MIN(mc_max, m1 - ic);
                const float *pak = g->packed_a ? g->packed_a + pc * g->mpad + ic * kc : pa;
                if (!g->packed_a)
                    for (int64_t ir = 0; ir < mc; ir += mr)
                        pack_a_any(uk, pa + ir * kc, g->A, g->lda, g->transpose_a, pc, ic + ir, RLX_MIN(mr, mc - ir), kc);
                for (int64_t ir = 0; ir < mc; ir += mr) {
                    int64_t m = RLX_MIN(mr, mc - ir);
                    const float *ap = pak + ir * kc;
                    for (int64_t jr = 0; jr < nc; jr += nr) {
                        int64_t n = RLX_MIN(nr, nc - jr);
                        float *c = g->C + (ic + ir) * g->ldc + jc + jr;
                        if (m == mr && n == nr) {
                            uk->fn(kc, ap, pbk + jr * kc, c, g->ldc, load_c);
                        } else {
                            uk->fn(kc, ap, pbk + jr * kc, tile, nr, 0);
                            for (int64_t i = 0; i < m; i++) {
                                float *ci = c + i * g->ldc;
                                const float *ti = tile + i * nr;
                                if (load_c) for (int64_t j = 0; j < n; j++) ci[j] += ti[j];
                                else        for (int64_t j = 0; j < n; j++) ci[j] = ti[j];
                            }
                        }
                        if (last && (g->bias || g->row_bias || g->act != RLX_ACT_NONE))
                            apply_epilogue(c, g->ldc, m, n, g->bias ? g->bias + jc + jr : NULL,
                                           g->row_bias ? g->row_bias + ic + ir : NULL, g->act);
                    }
                }
            }
        }
    }
}

static void gemm_task(void *ctx, int64_t begin, int64_t end, int worker) {
    (void)worker;
    gemm_job *g = ctx;
    for (int64_t t = begin; t < end; t++) {
        int64_t ti = t / g->tn, tj = t % g->tn;
        int64_t m0 = ti * g->rows_per_task, n0 = tj * g->cols_per_task;
        int64_t m1 = RLX_MIN(g->M, m0 + g->rows_per_task);
        int64_t n1 = RLX_MIN(g->N, n0 + g->cols_per_task);
        if (m0 < m1 && n0 < n1) gemm_block(g, m0, m1, n0, n1);
    }
}


/* Estimated time, in multiply-add units, of splitting C into a tm x tn grid
 * run by `threads` threads: waves of the largest task, where a task costs its
 * area plus packing its rows of A and columns of B (one packed element costs
 * about as much as 8 multiply-adds). Returns -1 if the grid does not fit. */
static double grid_cost(const gemm_job *g, int64_t tm, int64_t tn, int threads) {
    int64_t mt = ceil_div(g->M, g->uk->mr), nt = ceil_div(g->N, g->uk->nr);
    if (tm > mt || tn > nt) return -1;
    double rows = (double)RLX_MIN(g->M, ceil_div(mt, tm) * g->uk->mr);
    double cols = (double)RLX_MIN(g->N, ceil_div(nt, tn) * g->uk->nr);
    double waves = (double)ceil_div(tm * tn, threads);
    return waves * (rows * cols + 8.0 * (rows + cols));
}

/* Best tm x tn factorization of `tasks`, or cost -1 if none fits. */
static double best_grid(const gemm_job *g, int tasks, int threads, int64_t *tm_out, int64_t *tn_out) {
    double best = -1;
    for (int tm = 1; tm <= tasks; tm++) {
        if (tasks % tm) continue;
        double c = grid_cost(g, tm, tasks / tm, threads);
        if (c >= 0 && (best < 0 || c < best)) { best = c; *tm_out = tm; *tn_out = tasks / tm; }
    }
    return best;
}

/* Splits C into a grid of tile-aligned rectangles that threads claim
 * dynamically. One task per thread packs least, but when a thread is
 * descheduled (other processes on the cores) the others cannot take over its
 * half; so the finest grid of 4 or 2 tasks per thread is taken whose
 * estimated cost is within 8% of one task per thread. */
static void choose_grid(gemm_job *g, int threads) {
    int64_t tm = 1, tn = 1;
    double base = -1;
    for (int t = threads; t >= 1 && base < 0; t--) base = best_grid(g, t, threads, &tm, &tn);
    if (threads > 1 && base > 0) {
        for (int per = 4; per >= 2; per /= 2) {
            int64_t ftm, ftn;
            double c = best_grid(g, threads * per, threads, &ftm, &ftn);
            if (c > 0 && c <= 1.08 * base) { tm = ftm; tn = ftn; break; }
        }
    }
    int64_t mt = ceil_div(g->M, g->uk->mr), nt = ceil_div(g->N, g->uk->nr);
    g->tm = tm;
    g->tn = tn;
    g->rows_per_task = ceil_div(mt, tm) * g->uk->mr;
    g->cols_per_task = ceil_div(nt, tn) * g->uk->nr;
}

int rlx_sgemm(rlx_threadpool *pool, int64_t M, int64_t N, int64_t K,
              const float *A, int64_t lda,
              const float *B, int64_t ldb, int transpose_b,
              float *C, int64_t ldc, const gemm_epilogue *epi) {
    return rlx_sgemm_ex(pool, M, N, K, A, lda, 0, B, ldb, transpose_b, C, ldc, epi);
}

int rlx_sgemm_ex(rlx_threadpool *pool, int64_t M, int64_t N, int64_t K,
                 const float *A, int64_t lda, int transpose_a,
                 const float *B, int64_t ldb, int transpose_b,
                 float *C, int64_t ldc, const gemm_epilogue *epi) {
    return rlx_sgemm_packed(pool, M, N, K, A, lda, transpose_a, NULL, B, ldb, transpose_b, NULL, C, ldc, epi);
}

int rlx_sgemm_packed(rlx_threadpool *pool, int64_t M, int64_t N, int64_t K,
                     const float *A, int64_t lda, int transpose_a, const float *packed_a,
                     const float *B, int64_t ldb, int transpose_b, const float *packed_b,
                     float *C, int64_t ldc, const gemm_epilogue *epi) {
    if (M < 0 || N < 0 || K < 0) return -1;
    if (M == 0 || N == 0) return 0;
    const float *bias = epi ? epi->bias : NULL, *row_bias = epi ? epi->row_bias : NULL;
    int act = epi ? epi->act : RLX_ACT_NONE;
    int accumulate = epi ? epi->accumulate : 0;
    if (!C || ldc < N) return -1;
    if (K == 0) {
        for (int64_t i = 0; i < M; i++)
            if (!accumulate) memset(C + i * ldc, 0, (size_t)N * sizeof(float));
        if (bias || row_bias || act != RLX_ACT_NONE) apply_epilogue(C, ldc, M, N, bias, row_bias, act);
        return 0;
    }
    if (!packed_a && (!A || lda < (transpose_a ? M : K))) return -1;
    if (!packed_b && (!B || ldb < (transpose_b ? K : N))) return -1;

    gemm_job g = {
        .uk = current_kernel(), .M = M, .N = N, .K = K,
        .A = A, .lda = lda, .transpose_a = transpose_a, .B = B, .ldb = ldb, .transpose_b = transpose_b,
        .packed_a = packed_a, .packed_b = packed_b,
        .C = C, .ldc = ldc, .bias = bias, .row_bias = row_bias, .act = act, .accumulate = accumulate,
    };
    atomic_init(&g.failed, 0);
    g.kc_step = kc_step_of(K);
    g.mpad = ceil_div(M, g.uk->mr) * g.uk->mr, g.npad = ceil_div(N, g.uk->nr) * g.uk->nr;

    int threads = rlx_threadpool_size(pool);
    if ((double)M * (double)N * (double)K < GEMM_PARALLEL_MIN_MACS) threads = 1;
    choose_grid(&g, threads);
    int64_t tasks = g.tm * g.tn;
    if (tasks == 1) gemm_task(&g, 0, 1, 0);
    else rlx_parallel_for(pool, tasks, 1, gemm_task, &g);
    return atomic_load(&g.failed) ? -1 : 0;
}
