/*
 * coop_gemm.c — the cooperative-matrix GEMM (shaders/matmul_coopmat.comp) as
 * the matmul lowerings use it: the tile plan for a shape (subgroup grid,
 * fragments per subgroup, depth, shared buffers, K splits), the f16
 * conversion of an operand in front of it (decode_f16.comp), the GEMM
 * dispatch and the split-K reduction (matmul_splitk.comp).
 *
 * Tile plan. 128 x 128 tiles of 8 subgroups (2 x 4) with 4 x 2 fragments
 * each, K steps of 64, one shared buffer: the fastest of the plans measured
 * on an H200 (bench/HISTORY.md, 2026-12-02, coopmat plans: f16 4096^3 in
 * 0.60-0.64 ms against 0.69-0.85 for 4 subgroups of 4 x 4 fragments, double
 * buffers, or K steps of 32). Where that grid has fewer tiles than the device
 * has units, K is split over the z grid: a BERT-base projection at 512
 * tokens (M = 512, N = K = 768) has 24 tiles on a GPU of 132 units, and runs
 * in 0.017 ms split 3 ways against 0.024 ms on 96 tiles of 64 x 64 split
 * the same way. Split z stores an f32 partial product; one
 * matmul_splitk.comp pass sums the slices in order (runs repeat bit for bit)
 * and applies bias, activation and the output dtype.
 *
 * Overrides (vk_tuning.h): RLX_VK_MM_COOP=WMxWNxBK[xWGMxWGNxNBUF] fixes the
 * plan, RLX_VK_MM_SPLITK=n the splits (1: never).
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"
#include "vulkan/lower/matmul_push.h"
#include "vulkan/lower/dqmm_push.h"
#include <string.h>

#define COOP_MAX_SPLITS     32
#define COOP_MIN_SPLIT_STEPS 4   /* every split walks at least this many K steps */

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool vk_coop_available(const vk_lower_ctx *c) {
    const vk_caps *cp = c->caps;
    return cp->coopmat_nv && cp->shader_float16 && cp->storage_16bit && cp->subgroup_size == 32;
}

/* Shared memory of matmul_coopmat.comp (its A_WORDS and B_WORDS). */
static uint64_t plan_shared(const vk_coop_plan *k, bool ta, bool tb) {
    uint64_t bm = (uint64_t)k->wgm * k->wm * 16, bn = (uint64_t)k->wgn * k->wn * 16;
    uint64_t sk = (k->bk + 8) / 8, sm = (bm + 8) / 8, sn = (bn + 8) / 8;
    uint64_t aw = ta ? k->bk * sm : bm * sk, bw = tb ? bn * sk : k->bk * sn;
    if ((uint64_t)k->wgm * k->wgn * 64 > k->nbuf * aw) return UINT64_MAX;   /* the epilogue's staging must fit in As */
    return k->nbuf * (aw + bw) * 16;
}

bool vk_coop_plan_make(const vk_lower_ctx *c, int64_t M, int64_t N, int64_t K, int64_t nb, bool ta, bool tb,
                       bool may_split, vk_coop_plan *pl) {
    const vk_tuning *tu = c->tuning;
    const vk_caps *cp = c->caps;
    memset(pl, 0, sizeof *pl);
    static const vk_coop_plan rule = {.wm = 4, .wn = 2, .bk = 64, .wgm = 2, .wgn = 4, .nbuf = 1};
    *pl = rule;
    if (tu->mm_coop[0]) {   /* RLX_VK_MM_COOP */
        pl->wm = tu->mm_coop[0], pl->wn = tu->mm_coop[1], pl->bk = tu->mm_coop[2];
        pl->wgm = tu->mm_coop[3] ? tu->mm_coop[3] : rule.wgm;
        pl->wgn = tu->mm_coop[4] ? tu->mm_coop[4] : rule.wgn;
        pl->nbuf = tu->mm_coop[5] ? tu->mm_coop[5] : rule.nbuf;
    }
    /* The H200's Vulkan driver offers 48 KiB a workgroup: plans beyond it single-buffer, then step K by 32. */
    if (plan_shared(pl, ta, tb) > cp->max_shared_memory) pl->nbuf = 1;
    if (plan_shared(pl, ta, tb) > cp->max_shared_memory) pl->bk = 32;
    if (plan_shared(pl, ta, tb) > cp->max_shared_memory) return false;
    if ((uint64_t)32 * pl->wgm * pl->wgn > cp->max_workgroup_invocations) return false;
    pl->bm = pl->wgm * pl->wm * 16;
    pl->bn = pl->wgn * pl->wn * 16;
    if (cdiv(N, pl->bn) > vk_max_groups(cp, 0)) return false;
    pl->splits = 1;
    pl->kc = (uint32_t)K;
    if (!may_split || nb != 1 || tu->mm_splitk == 1) return true;
    int64_t tiles = cdiv(M, pl->bm) * cdiv(N, pl->bn);
    int64_t want = tu->mm_splitk > 1 ? tu->mm_splitk : tiles < (int64_t)tu->units ? cdiv(tu->split_target, tiles) : 1;
    want = RLX_MIN(want, K / ((int64_t)COOP_MIN_SPLIT_STEPS * pl->bk));
    want = RLX_MIN(want, (int64_t)COOP_MAX_SPLITS);
    want = RLX_MIN(want, (int64_t)vk_max_groups(cp, 2));
    if (want <= 1) return true;
    int64_t kc = cdiv(cdiv(K, want), pl->bk) * pl->bk;   /* whole K steps per split, none empty */
    pl->kc = (uint32_t)kc;
    pl->splits = (uint32_t)cdiv(K, kc);
    return true;
}

static bool aligned16(uint64_t a) { return a % 16 == 0; }

rlx_status vk_emit_coop(vk_lower_ctx *c, const mm_push *p0, const vk_coop_plan *pl, rlx_dtype dta, rlx_dtype dtc,
                        bool ta, bool tb, int act, bool has_bias, bool uses_scratch) {
    mm_push p = *p0;
    bool split = pl->splits > 1;
    int64_t tiles_m = cdiv(p.M, pl->bm);
    p.tiles = (uint32_t)tiles_m;
    p.pad0 = split ? pl->kc : 0;
    uint32_t vec = 0;
    uint32_t ca = ta ? p.M : p.K, cb = tb ? p.K : p.N;   /* each operand's contiguous dim */
    if (ca % 8 == 0 && aligned16(p.a)) vec |= 1;
    if (cb % 8 == 0 && aligned16(p.b)) vec |= 2;
    if (p.N % 4 == 0 && aligned16(p.c)) vec |= 4;
    vk_dispatch *d = vk_emit(c, "matmul_coopmat", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = vk_dtype_code(dta);
    d->spec[1] = tb;
    d->spec[2] = split ? RLX_ACT_NONE : (uint32_t)act;
    d->spec[3] = !split && has_bias;
    d->spec[4] = vec;
    d->spec[5] = pl->wm;
    d->spec[6] = pl->wn;
    d->spec[7] = pl->bk;
    d->spec[8] = ta;
    d->spec[9] = pl->wgm;
    d->spec[10] = pl->wgn;
    d->spec[11] = pl->nbuf;
    d->spec[12] = 32 * pl->wgm * pl->wgn;   /* the local size */
    d->spec[13] = vk_dtype_code(split ? RLX_F32 : dtc);
    d->spec[14] = split;
    d->n_spec = 15;
    d->groups[0] = (uint32_t)cdiv(p.N, pl->bn);
    d->groups[1] = (uint32_t)RLX_MIN(tiles_m, (int64_t)vk_max_groups(c->caps, 1));
    d->groups[2] = split ? pl->splits : (uint32_t)RLX_MIN((int64_t)p.nbatch, (int64_t)vk_max_groups(c->caps, 2));
    d->uses_scratch = uses_scratch;
    return RLX_OK;
}

rlx_status vk_emit_splitk_reduce(vk_lower_ctx *c, uint64_t partials, uint32_t splits, uint64_t bias, uint64_t out,
                                 uint64_t res, int64_t M, int64_t N, rlx_dtype dtc, int act, int64_t conv_ovol) {
    mm_push p;
    memset(&p, 0, sizeof p);
    p.a = partials;
    p.bias = bias;
    p.c = out;
    p.M = (uint32_t)M;
    p.N = (uint32_t)N;
    p.nbatch = splits;
    p.K = (uint32_t)conv_ovol;
    p.sa[0] = res;
    vk_dispatch *d = vk_emit(c, "matmul_splitk", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = vk_dtype_code(dtc);
    d->spec[1] = (uint32_t)act;
    d->spec[2] = bias != 0;
    d->spec[3] = conv_ovol > 0;
    d->spec[4] = res != 0;
    d->n_spec = 5;
    d->uses_scratch = true;
    vk_grid_1d(c->caps, (uint64_t)(M * N), 256, d->groups);
    return RLX_OK;
}

rlx_status vk_emit_decode_f16(vk_lower_ctx *c, uint64_t src, rlx_dtype dt, int64_t rows, int64_t cols,
                              uint64_t row_bytes, uint64_t dst) {
    char lb[160];
    bool block = rlx_dtype_is_quantized(dt);
    int64_t parts = cdiv(cols, 32);
    if (rows * parts >= ((int64_t)1 << 32) || rows * cols >= MM_INDEX_LIMIT || row_bytes >= ((uint64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %lld x %lld is too large to convert to f16",
                        vk_node_label(c, lb, sizeof lb), (long long)rows, (long long)cols);
    dqmm_push p;
    memset(&p, 0, sizeof p);
    p.w = src;
    p.out = dst;
    p.N = (uint32_t)rows;
    p.K = (uint32_t)cols;
    p.row_bytes = (uint32_t)row_bytes;
    p.parts = (uint32_t)parts;
    p.kparts = p.parts;
    uint32_t vec = 0;
    uint64_t es = block ? 0 : rlx_dtype_size(dt);
    if (!block && cols % 4 == 0 && src % (4 * es) == 0) vec |= 2;
    if (cols % 8 == 0 && aligned16(dst)) vec |= 16;
    vk_dispatch *d = vk_emit(c, "decode_f16", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)dt;
    d->spec[1] = block ? vk_blocks_a4(dt, row_bytes, src) : 0;
    d->spec[2] = vec;
    d->n_spec = 3;
    d->uses_scratch = true;
    vk_grid_1d(c->caps, (uint64_t)(rows * parts), 256, d->groups);
    return RLX_OK;
}
