/*
 * dequant_gemm.c — the prefill tiers of DEQUANT_MATMUL (M > 8 rows of x),
 * called from dequant_matmul.c: out[M, N] = x[M, K] · w[N, K]ᵀ with w in its
 * storage type. Each workgroup decodes the weight tile it needs straight into
 * shared memory, so the decoded matrix never goes through device memory (the
 * former path decoded all of w to f32 scratch: N*K*4 bytes, 2.3 GiB for a
 * 151936 x 4096 vocabulary projection). The only scratch is split-K's
 * partial products, where a short prompt gives too few tiles (split_count).
 *
 * Tiers, per node:
 *  - "dequant-f16-coopmat": from 64 rows of x, w decoded to f16 in scratch
 *    once (decode_f16.comp), then coop_gemm.c's tensor-core GEMM
 *    (lower_decoded_gemm below); "-splitk", "+add" and "+swiglu" forms.
 *    Same precision rule and devices as the next tier.
 *  - "dequant-mm-coopmat-<type>": dequant_mm_coopmat.comp, tensor cores
 *    through VK_NV_cooperative_matrix; weights decoded to f16, x rounded to
 *    f16, f32 accumulation. Chosen where the device has what matmul.c's
 *    coopmat tier needs (NV cooperative matrix, f16 arithmetic, subgroups of
 *    32; RLX_VK_NO_COOPMAT=1 turns it off) and the rounding is within what
 *    the weights already cost: block types and f16 weights always (their own
 *    error is at least f16's), f32 and bf16 weights (bf16's range exceeds
 *    f16's) only under the fast precision policy.
 *  - "dequant-mm-<type>": dequant_mm.comp, f32 FMA tiles, any device.
 *  - "dequant-tiled-f32": f32 weights need no decoding and take matmul.c's
 *    tiled f32 GEMM directly.
 *
 * Overrides (vk_tuning.h, read once per device): RLX_VK_DQ_SPLITK=<n>
 * forces n K splits (1: none); RLX_VK_DQ_MM=WMxWNxBK (e.g. 4x4x32) sets the
 * coopmat tier's accumulator fragments per subgroup and depth, like
 * RLX_VK_MM_COOP for matmul_coopmat (tuning); RLX_VK_DQ_MM_SHARED=<bytes>
 * caps the shared memory these tiers assume, to test the paths of smaller
 * devices (single-buffered f32 tiles, coopmat steps of one part).
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"
#include "vulkan/lower/dqmm_push.h"
#include "vulkan/lower/matmul_push.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dequant_mm.comp: a 64 x 64 tile, K steps of 32, x and w tiles of 32 x 64 floats. */
#define DQMM_BM         64
#define DQMM_BN         64
#define DQMM_SHARED_ONE ((uint64_t)2 * 32 * 64 * 4)   /* one buffer of each: 16 KiB, the Vulkan minimum */

typedef struct dqmm_names { const char *mm, *coop, *mm_split, *coop_split; } dqmm_names;

#define DQMM_NAMES(t) {"dequant-mm-" t, "dequant-mm-coopmat-" t, "dequant-mm-" t "-splitk", "dequant-mm-coopmat-" t "-splitk"}
static const dqmm_names NAMES[RLX_DTYPE_COUNT] = {
    [RLX_F32] = DQMM_NAMES("f32"),   [RLX_F16] = DQMM_NAMES("f16"),   [RLX_BF16] = DQMM_NAMES("bf16"),
    [RLX_Q4_0] = DQMM_NAMES("q4_0"), [RLX_Q4_1] = DQMM_NAMES("q4_1"), [RLX_Q5_0] = DQMM_NAMES("q5_0"),
    [RLX_Q5_1] = DQMM_NAMES("q5_1"), [RLX_Q8_0] = DQMM_NAMES("q8_0"), [RLX_Q2_K] = DQMM_NAMES("q2_K"),
    [RLX_Q3_K] = DQMM_NAMES("q3_K"), [RLX_Q4_K] = DQMM_NAMES("q4_K"), [RLX_Q5_K] = DQMM_NAMES("q5_K"),
    [RLX_Q6_K] = DQMM_NAMES("q6_K"), [RLX_Q8_K] = DQMM_NAMES("q8_K"),
};

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Shared memory of dequant_mm_coopmat.comp: x and w tiles of BK (+ 8) halves per row, f32 staging. */
static uint64_t coop_shared(uint32_t wm, uint32_t wn, uint32_t bk) {
    uint64_t bm = 32 * wm, bn = 64 * wn, sa = (bk + 8) / 8;
    return (bm + bn) * sa * 16 + 8 * 256 * 4;
}

/* Coopmat tier's fragments per subgroup WM x WN and depth BK. */
static void coop_tile(const vk_tuning *tu, uint64_t shared, uint32_t t[3]) {
    /* 64 x 128 tiles, 36 KiB shared; one decode per invocation per step. On
     * the H200 (bench/HISTORY.md, 2026-11-30, H200 prefill, split-K) Q4_K_M prompts of 128 and
     * 512 tokens ran up to 16% faster than with 128 x 128 tiles (4x2x64), Q8_0
     * within 3% either way: twice the tiles, so fewer K splits. */
    t[0] = 2, t[1] = 2, t[2] = 64;
    if (tu->dq_mm[0]) t[0] = tu->dq_mm[0], t[1] = tu->dq_mm[1], t[2] = tu->dq_mm[2];   /* RLX_VK_DQ_MM */
    if (coop_shared(t[0], t[1], t[2]) > shared) t[2] = 32;
}

/* The tier a product of weights w takes at prefill sizes. */
typedef struct gemm_plan {
    bool     coop, tiled_f32;   /* tiled_f32: matmul.c's GEMM (no decoding, no split) */
    uint32_t ct[3];             /* coopmat fragments WM, WN and depth BK */
    uint32_t bm, bn, pps;       /* tile rows, tile cols, parts per K step */
    uint64_t shared;
} gemm_plan;

static gemm_plan plan_gemm(const vk_lower_ctx *c, rlx_dtype dt, int64_t N) {
    const vk_caps *cp = c->caps;
    gemm_plan g;
    memset(&g, 0, sizeof g);
    g.shared = c->tuning->shared_bytes;   /* the device's, or less (RLX_VK_DQ_MM_SHARED) */
    coop_tile(c->tuning, g.shared, g.ct);
    bool block = rlx_dtype_is_quantized(dt);
    bool coop_prec = block || dt == RLX_F16 || c->precision == VK_PRECISION_FAST;
    g.coop = cp->coopmat_nv && cp->shader_float16 && cp->subgroup_size == 32 && coop_prec &&
             coop_shared(g.ct[0], g.ct[1], g.ct[2]) <= g.shared && cdiv(N, 64 * g.ct[1]) <= vk_max_groups(cp, 0);
    g.tiled_f32 = dt == RLX_F32 && !g.coop;
    g.bm = g.coop ? 32 * g.ct[0] : DQMM_BM;
    g.bn = g.coop ? 64 * g.ct[1] : DQMM_BN;
    g.pps = g.coop ? g.ct[2] / 32 : 1;
    return g;
}

/*
 * Split-K: at prefill sizes the grid has one workgroup per output tile, and a
 * short prompt gives few tiles (an 8B model's 4096 x 4096 projection at M =
 * 128: 64 tiles of 64 x 128 on a 132-SM GPU), each walking all of K alone.
 * Splitting K over the z grid multiplies the workgroups; each split stores
 * its partial product and epilogue.comp sums them in a fixed order (so runs
 * repeat bit for bit) together with the node's residual add or SwiGLU.
 * Auto on hardware devices, where the grid has fewer than
 * vk_tuning.split_below tiles (about one per SM; vk_tuning.c derives it and
 * the others from the device's units): enough splits for about
 * split_target workgroups (two per SM), every split but the last at least
 * DQ_SPLIT_MIN_STEPS K steps.
 * On the H200 (bench/HISTORY.md, 2026-11-30, H200 prefill, split-K) 128-token prompts
 * prefilled 1.5-1.9x faster; 512-token prompts, whose grids are 4x larger,
 * -2% to +7%. Splitting grids of 132-263 tiles too (2 splits) was no faster:
 * 1B and 8B Q4_K_M prompts of 128 and 256 tokens ran 0-5% faster without.
 * Q8_0 weights split below split_below_q8_0 instead: with planar rows
 * (vk_weight_layout.c) the 8B Q8_0 SwiGLU GEMMs (224 tiles at 128 tokens)
 * ran slower unsplit than with GGUF's layout while split GEMMs ran faster;
 * 2 splits there: 8B Q8_0 prefill 2648 -> 2716 tok/s (bench/HISTORY.md,
 * 2026-11-30, planar rows; the same threshold cost Q4_K_M 2%).
 * RLX_VK_DQ_SPLIT_TILES=<n> moves the threshold (tuning): grids of fewer
 * than n tiles split.
 * Software devices (lavapipe: a few cores) gain nothing and do not split.
 * RLX_VK_DQ_SPLITK=<n> (n >= 1) asks for n splits whatever the grid (1:
 * never split; the tests force splits with it), within the same caps (K
 * steps, DQ_SPLIT_MAX, scratch bytes, the z grid limit); other values: auto
 * (a value that is not an integer is also logged and ignored).
 */
#define DQ_SPLIT_MIN_STEPS 4
#define DQ_SPLIT_MAX       16
#define DQ_SPLIT_MAX_BYTES ((uint64_t)256 << 20)   /* partials of one product (SwiGLU has two) */

static uint32_t split_count(const vk_lower_ctx *c, const gemm_plan *g, int64_t M, int64_t N, int64_t K,
                            uint32_t *kparts) {
    *kparts = 0;
    if (g->tiled_f32) return 1;
    int64_t tiles = cdiv(N, g->bn) * cdiv(M, g->bm);
    uint32_t steps = (uint32_t)cdiv(cdiv(K, 32), g->pps);
    const vk_tuning *tu = c->tuning;
    int64_t want = tu->dq_splitk;
    if (want < 1) {
        int64_t below = tu->dq_split_tiles >= 0 ? (int64_t)tu->dq_split_tiles
                      : (int64_t)(c->in[1].dtype == RLX_Q8_0 ? tu->split_below_q8_0 : tu->split_below);
        if (tiles >= below) return 1;   /* software devices: below 0 */
        want = RLX_MIN(cdiv(tu->split_target, tiles), (int64_t)(steps / DQ_SPLIT_MIN_STEPS));
    }
    want = RLX_MIN(want, (int64_t)DQ_SPLIT_MAX);
    want = RLX_MIN(want, (int64_t)(DQ_SPLIT_MAX_BYTES / ((uint64_t)M * (uint64_t)N * 4)));
    want = RLX_MIN(want, (int64_t)vk_max_groups(c->caps, 2));
    want = RLX_MIN(want, (int64_t)steps);
    if (want <= 1) return 1;
    /* equal splits of whole steps; none empty */
    uint32_t per = (uint32_t)cdiv(steps, want);
    *kparts = per * g->pps;
    return (uint32_t)cdiv(steps, per);
}

/* The GEMM dispatch of x (c->in[0]) and w into out (in scratch or not): one
 * product (splits 1), or the split-K partials of kparts parts each, slice z
 * at out + z * M * N floats. K == 0 gives zeros (w is never read). */
static rlx_status emit_gemm(vk_lower_ctx *c, const gemm_plan *g, const vk_tensor *w, uint64_t out, bool uses_scratch,
                            int64_t M, int64_t N, int64_t K, uint64_t row_bytes, uint32_t splits, uint32_t kparts) {
    char lb[160];
    const vk_tensor *x = &c->in[0];
    const vk_caps *cp = c->caps;
    rlx_dtype dt = w->dtype;
    bool block = rlx_dtype_is_quantized(dt);
    uint64_t es = block ? 0 : rlx_dtype_size(dt);
    if (K == 0 || g->tiled_f32) {   /* tiled_f32 never splits */
        c->tier = K == 0 ? "dequant-empty-k" : "dequant-tiled-f32";
        return vk_emit_matmul_f32_nt(c, x->addr, w->addr, out, M, N, K, uses_scratch);
    }

    dqmm_push p;
    memset(&p, 0, sizeof p);
    p.x = x->addr;
    p.w = w->addr;
    p.out = out;
    p.M = (uint32_t)M;
    p.N = (uint32_t)N;
    p.K = (uint32_t)K;
    p.row_bytes = (uint32_t)row_bytes;
    p.parts = (uint32_t)cdiv(K, 32);   /* block rows are whole blocks, so K % 32 == 0 there */
    p.kparts = splits > 1 ? kparts : p.parts;

    uint32_t vec = 0;
    if (K % 4 == 0 && x->addr % 16 == 0) vec |= 1;
    if (!block && K % 4 == 0 && w->addr % (4 * es) == 0) vec |= 2;
    uint32_t a4 = vk_blocks_a4(dt, row_bytes, w->addr);
    vk_dispatch *d;

    if (g->coop) {
        int64_t tiles_m = cdiv(M, g->bm);
        p.tiles_m = (uint32_t)tiles_m;
        if (dt == RLX_F16 && K % 8 == 0 && w->addr % 16 == 0) vec |= 8;
        if (!(d = vk_emit(c, "dequant_mm_coopmat", &p, sizeof p))) return RLX_STATUS_INTERNAL;
        d->spec[0] = (uint32_t)dt;
        d->spec[1] = a4;
        d->spec[2] = vec;
        d->spec[3] = g->ct[0];
        d->spec[4] = g->ct[1];
        d->spec[5] = g->ct[2];
        d->n_spec = 6;
        d->groups[0] = (uint32_t)cdiv(N, g->bn);
        d->groups[1] = (uint32_t)RLX_MIN(tiles_m, (int64_t)vk_max_groups(cp, 1));
        d->groups[2] = splits;
        d->uses_scratch = uses_scratch;
        c->tier = splits > 1 ? NAMES[dt].coop_split : NAMES[dt].coop;
        return RLX_OK;
    }

    if (g->shared < DQMM_SHARED_ONE)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the fused dequant GEMM needs %llu bytes of shared memory, %llu available",
                        vk_node_label(c, lb, sizeof lb), (unsigned long long)DQMM_SHARED_ONE, (unsigned long long)g->shared);
    if (cdiv(N, DQMM_BN) > vk_max_groups(cp, 0))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: N = %lld needs more workgroups than the device allows",
                        vk_node_label(c, lb, sizeof lb), (long long)N);
    int64_t tiles_m = cdiv(M, DQMM_BM);
    p.tiles_m = (uint32_t)tiles_m;
    if (N % 4 == 0 && out % 16 == 0) vec |= 4;
    if (!(d = vk_emit(c, "dequant_mm", &p, sizeof p))) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)dt;
    d->spec[1] = a4;
    d->spec[2] = vec;
    d->spec[3] = g->shared >= 2 * DQMM_SHARED_ONE;   /* double-buffered */
    d->n_spec = 4;
    d->groups[0] = (uint32_t)cdiv(N, DQMM_BN);
    d->groups[1] = (uint32_t)RLX_MIN(tiles_m, (int64_t)vk_max_groups(cp, 1));
    d->groups[2] = splits;
    d->uses_scratch = uses_scratch;
    c->tier = splits > 1 ? NAMES[dt].mm_split : NAMES[dt].mm;
    return RLX_OK;
}

/* Mirrors the push block of shaders/epilogue.comp (std430). */
typedef struct dq_epi_push {
    uint64_t a, b, out;
    uint32_t n, pad;
} dq_epi_push;
_Static_assert(sizeof(dq_epi_push) == 32, "dq_epi_push must match epilogue.comp");

/* epilogue.comp over n elements: out = A, A + b or silu(A) · B (epi 0, 1, 2),
 * where A (and B for epi 2) sums `slices` split-K partial slices of n. */
static rlx_status emit_epilogue(vk_lower_ctx *c, uint64_t a, uint64_t b, uint64_t out, int64_t n, int epi, uint32_t slices,
                                bool scratch) {
    dq_epi_push p = {a, b, out, (uint32_t)n, 0};
    vk_dispatch *d = vk_emit(c, "epilogue", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)epi;
    d->spec[1] = slices;
    d->n_spec = 2;
    d->uses_scratch = scratch;
    vk_grid_1d(c->caps, (uint64_t)n, 256, d->groups);
    return RLX_OK;
}

/*
 * Decode, then the tensor-core GEMM: from DQ_F16_MIN_M rows of x on, w (and
 * SwiGLU's w2, one after the other in the same buffer) is decoded once to
 * dense f16 rows in scratch (decode_f16.comp), x converted to f16 beside it,
 * and matmul_coopmat.comp multiplies them with coop_gemm.c's plan, split
 * over K where its grid is small. The fused coopmat tier above decodes every
 * weight tile again for each 64-row tile of x and runs on small 64 x 128
 * tiles; matmul_coopmat's 128 x 128 tiles of 8 subgroups reach far more of
 * the tensor cores, and the decode costs one pass over w plus an f16 write.
 * RLX_VK_DQ_F16_M=<rows> moves the threshold (tuning). Weights whose f16
 * copy would exceed DQ_F16_MAX_BYTES (a vocabulary projection of every
 * prompt row) keep the fused tier.
 */
#define DQ_F16_MIN_M     64
#define DQ_F16_MAX_BYTES ((uint64_t)512 << 20)

static uint64_t align256(uint64_t n) { return (n + 255) & ~(uint64_t)255; }

static bool takes_decoded_gemm(const vk_lower_ctx *c, const gemm_plan *g, int64_t M, int64_t N, int64_t K,
                               vk_coop_plan *pl) {
    uint32_t min_m = c->tuning->dq_f16_min_m ? c->tuning->dq_f16_min_m : DQ_F16_MIN_M;
    if (!g->coop || !vk_coop_available(c) || M < (int64_t)min_m || K < 16 || N < 16 || K % 8 != 0) return false;
    if (c->out.dtype != RLX_F32 || M * K >= MM_INDEX_LIMIT || N * K >= MM_INDEX_LIMIT || M * N >= MM_INDEX_LIMIT)
        return false;
    if ((uint64_t)N * (uint64_t)K * 2 > DQ_F16_MAX_BYTES) return false;
    return vk_coop_plan_make(c, M, N, K, 1, false, true, true, pl);
}

static rlx_status lower_decoded_gemm(vk_lower_ctx *c, const vk_coop_plan *pl, int64_t M, int64_t N, int64_t K,
                                     uint64_t row_bytes, int tail, uint64_t res, const vk_tensor *w2) {
    const vk_tensor *x = &c->in[0], *w = &c->in[1];
    bool split = pl->splits > 1, to_scratch = split || tail == 2;
    bool convert_x = x->dtype != RLX_F16 || x->addr % 16 != 0;
    uint64_t base = c->scratch_addr, off = 0, slices = (split ? pl->splits : 1) * (uint64_t)M * (uint64_t)N * 4;
    uint64_t x16 = convert_x ? base : x->addr;
    if (convert_x) off += align256((uint64_t)M * (uint64_t)K * 2);
    uint64_t w16 = base + off;
    off += align256((uint64_t)N * (uint64_t)K * 2);
    uint64_t prod = base + off, prod2 = prod + align256(slices);
    if (to_scratch) off += (tail == 2 ? 2 : 1) * align256(slices);
    c->scratch_bytes = off;

    rlx_status st;
    if (convert_x &&
        (st = vk_emit_decode_f16(c, x->addr, x->dtype, M, K, (uint64_t)K * rlx_dtype_size(x->dtype), x16)) != RLX_OK)
        return st;
    mm_push p;
    memset(&p, 0, sizeof p);
    p.a = x16;
    p.b = w16;
    p.M = (uint32_t)M;
    p.N = (uint32_t)N;
    p.K = (uint32_t)K;
    p.nbatch = p.bd1 = p.bd2 = 1;
    for (int i = 0; i < (tail == 2 ? 2 : 1); i++) {   /* w, then SwiGLU's w2 into the same f16 buffer */
        const vk_tensor *wi = i == 0 ? w : w2;
        p.c = !to_scratch ? c->out.addr : i == 0 ? prod : prod2;
        if ((st = vk_emit_decode_f16(c, wi->addr, wi->dtype, N, K, row_bytes, w16)) != RLX_OK ||
            (st = vk_emit_coop(c, &p, pl, RLX_F16, RLX_F32, false, true, RLX_ACT_NONE, false, true)) != RLX_OK)
            return st;
    }
    const char *names[3][2] = {{"dequant-f16-coopmat", "dequant-f16-coopmat-splitk"},
                               {"dequant-f16-coopmat+add", "dequant-f16-coopmat-splitk+add"},
                               {"dequant-f16-coopmat+swiglu", "dequant-f16-coopmat-splitk+swiglu"}};
    c->tier = names[tail][split];
    if (!to_scratch)   /* the product is in out already */
        return tail == 1 ? emit_epilogue(c, c->out.addr, res, c->out.addr, M * N, 1, 1, false) : RLX_OK;
    return emit_epilogue(c, prod, tail == 2 ? prod2 : res, c->out.addr, M * N, tail, split ? pl->splits : 1, true);
}

/* The product of x and w, split over K where the grid has few tiles, then
 * one epilogue.comp pass into c->out that sums the splits and applies the
 * tail (0 none, 1 + res, 2 SwiGLU with w2's product). Unsplit: a plain
 * product goes straight to c->out; + res is computed into c->out, then
 * added there; SwiGLU's two products go to scratch. */
rlx_status vk_lower_dequant_gemm(vk_lower_ctx *c, int64_t M, int64_t N, int64_t K, uint64_t row_bytes, int tail,
                                 uint64_t res, const vk_tensor *w2) {
    char lb[160];
    const vk_tensor *w = &c->in[1];
    gemm_plan g = plan_gemm(c, w->dtype, N);
    vk_coop_plan pl;
    if (K > 0 && takes_decoded_gemm(c, &g, M, N, K, &pl)) return lower_decoded_gemm(c, &pl, M, N, K, row_bytes, tail, res, w2);
    uint32_t kparts = 0, splits = K > 0 ? split_count(c, &g, M, N, K, &kparts) : 1;
    uint64_t slice = (uint64_t)M * (uint64_t)N * 4, part = ((uint64_t)splits * slice + 255) & ~(uint64_t)255;
    if (splits == 1 && tail < 2) {   /* the product into out */
        if (tail == 1 && c->out.addr < res + slice && res < c->out.addr + slice)   /* the planner keeps r live, so never */
            return rlx_fail(RLX_STATUS_INTERNAL, "%s: output overlaps the residual", vk_node_label(c, lb, sizeof lb));
        rlx_status st = emit_gemm(c, &g, w, c->out.addr, false, M, N, K, row_bytes, 1, 0);
        if (st != RLX_OK || tail == 0) return st;
        c->tier = "dequant-gemm+add";
        return emit_epilogue(c, c->out.addr, res, c->out.addr, M * N, 1, 1, false);
    }
    uint64_t a = c->scratch_addr, b = a + part;
    c->scratch_bytes = tail == 2 ? 2 * part : part;
    rlx_status st = emit_gemm(c, &g, w, a, true, M, N, K, row_bytes, splits, kparts);
    if (st == RLX_OK && tail == 2) st = emit_gemm(c, &g, w2, b, true, M, N, K, row_bytes, splits, kparts);
    if (st != RLX_OK) return st;
    const char *prod = c->tier;
    st = emit_epilogue(c, a, tail == 2 ? b : res, c->out.addr, M * N, tail, splits, true);
    if (splits == 1) c->tier = "dequant-gemm+swiglu";
    else if (tail) c->tier = g.coop ? (tail == 1 ? "dequant-mm-coopmat-splitk+add" : "dequant-mm-coopmat-splitk+swiglu")
                                    : (tail == 1 ? "dequant-mm-splitk+add" : "dequant-mm-splitk+swiglu");
    else c->tier = prod;
    return st;
}
