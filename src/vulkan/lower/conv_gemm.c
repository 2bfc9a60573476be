/*
 * conv_gemm.c — CONV as an implicit GEMM on the matmul tiers:
 * matmul_tiled.comp built with -DRLX_CONV (conv_gemm_tiled.spv, f32) and,
 * under the fast precision policy on a device with cooperative matrices,
 * matmul_coopmat.comp built so (conv_gemm_coopmat.spv: f16 operands, f32
 * accumulation, the same tile plans as matmul's). Per channel
 * group g the product is C[Og, N * prod(S')] = W_g[Og, Cg * prod(K)] x
 * im2col(x_g), the im2col matrix gathered from the image tile by tile and
 * never stored; C is scattered to NCHW with the bias, the residual
 * (has_residual) and the activation fused.
 * The batch folds into the GEMM's columns, so a late 7x7 layer at batch 32
 * is one wide GEMM rather than 32 narrow ones.
 *
 * Taken where the GEMM has rows to fill a tile: Og >= CONV_GEMM_MIN_OG and
 * K >= CONV_GEMM_MIN_K. Depthwise and thin-group convolutions (Og or K
 * small: a GEMM of one row wastes the tile) stay on the direct kernel.
 * RLX_VK_CONV_TIER (vk_tuning.h) forces one or the other.
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"
#include "ir/conv_geom.h"
#include <string.h>

#define CONV_GEMM_MIN_OG 16
#define CONV_GEMM_MIN_K  16

/* Mirrors ConvGemmPush in shaders/matmul_common.glsl (std430). */
typedef struct conv_gemm_push {
    uint64_t a, b, bias, c;
    uint32_t M, N, K, nbatch;
    uint32_t tiles_m, pad0, C, O;
    uint32_t ovol, o1, o2, kvol;
    uint32_t k1, k2, in0, in1;
    uint32_t in2, sdp[3];
    uint64_t res;
} conv_gemm_push;
_Static_assert(sizeof(conv_gemm_push) == 120, "conv_gemm_push must match ConvGemmPush");
_Static_assert(sizeof(conv_gemm_push) <= VK_MAX_PUSH, "conv_gemm_push exceeds the push-constant budget");

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Stride, dilation and leading pad of one dim in the shader's packing, or false out of its range. */
static bool pack_sdp(int64_t s, int64_t d, int64_t pad, uint32_t *out) {
    if (s < 1 || s > 255 || d < 1 || d > 255 || pad < 0 || pad > 32767) return false;
    *out = (uint32_t)s | (uint32_t)d << 8 | (uint32_t)pad << 16;
    return true;
}

/* Split-K for the tiled tier over several images: each split at least this
 * deep (shallower slices spend more on the partials than they gain). */
#define CONV_SPLIT_MIN_K 256

/* Tiles (t: BM, BN, BK) and K splits (the return; *kc each split's depth) of
 * the tiled tier for C [Og, N] over K in `groups` groups. The matmul rule
 * shrinks tiles until the grid fills the device twice, and splits K for one
 * image. A convolution has few rows (Og 64 in resnet's first stage: 128-row
 * tiles would be half empty) and deep K (Cg * prod(kernel), to 4608), so over
 * several images it keeps 64- or 128-row tiles of 128 columns, whose inner
 * loop reads shared memory least per FMA, and splits K until the grid makes
 * two workgroups a unit (resnet50's last stage at batch 32: 512 x 1568 x
 * 4608, 52 tiles of 128 x 128). RLX_VK_MM_TILE / RLX_VK_MM_SPLITK override. */
static uint32_t conv_tiled_plan(const vk_lower_ctx *c, int64_t Og, int64_t N, int64_t K, int64_t groups,
                                bool may_split, bool images, uint32_t t[3], uint32_t *kc) {
    const vk_tuning *tu = c->tuning;
    bool overridden = tu->mm_tile[0] || tu->mm_splitk > 0 || tu->split_below == 0;
    if (may_split && images && !overridden) {
        t[0] = Og <= 64 ? 64 : 128, t[1] = 128, t[2] = 8;
        int64_t tiles = cdiv(Og, t[0]) * cdiv(N, t[1]);
        if (tiles >= (int64_t)tu->mm_full_wave) return 1;
        int64_t want = RLX_MIN(cdiv(tu->split_target, tiles), K / CONV_SPLIT_MIN_K);
        want = RLX_MIN(want, (int64_t)16);
        want = RLX_MIN(want, (int64_t)((uint64_t)256 << 20) / (Og * N * 4));
        want = RLX_MIN(want, (int64_t)vk_max_groups(c->caps, 2));
        if (want > 1) {
            int64_t per = cdiv(cdiv(K, want), t[2]) * t[2];
            *kc = (uint32_t)per;
            return (uint32_t)cdiv(K, per);
        }
        vk_mm_tiled_tile(c, Og, N, groups, t);   /* too shallow to split: the matmul rule's smaller tiles */
        return 1;
    }
    vk_mm_tiled_tile(c, Og, N, groups, t);
    return may_split ? vk_mm_tiled_splits(c, Og, N, K, 1, t, kc) : 1;
}

/* Emits the implicit GEMM for c's conv; *taken false (and nothing emitted)
 * where the direct kernel is the better or the only choice. */
rlx_status vk_lower_conv_gemm(vk_lower_ctx *c, const ir_conv_geom *g, bool *taken) {
    *taken = false;
    const vk_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out;
    int64_t Og = w->dims[0] / g->groups, Cg = w->dims[1], kvol = 1;
    for (int i = 0; i < g->dims; i++) kvol *= w->dims[2 + i];
    int64_t K = Cg * kvol, ovol = 1;
    for (int i = 0; i < g->dims; i++) ovol *= o->dims[2 + i];
    int64_t N = o->dims[0] * ovol;
    uint32_t tier = c->tuning->conv_tier;
    if (tier == 1 || (tier == 0 && (Og < CONV_GEMM_MIN_OG || K < CONV_GEMM_MIN_K))) return RLX_OK;
    conv_gemm_push p;
    memset(&p, 0, sizeof p);
    int off = 3 - g->dims;
    uint32_t in[3] = {1, 1, 1}, kd[3] = {1, 1, 1}, od[3] = {1, 1, 1};
    for (int i = 0; i < 3; i++) p.sdp[i] = 1u | 1u << 8;
    for (int i = 0; i < g->dims; i++) {
        in[off + i] = (uint32_t)x->dims[2 + i], kd[off + i] = (uint32_t)w->dims[2 + i], od[off + i] = (uint32_t)o->dims[2 + i];
        if (!pack_sdp(g->stride[i], g->dilation[i], g->pad_begin[i], &p.sdp[off + i])) return RLX_OK;
    }
    p.a = w->addr, p.b = x->addr, p.bias = g->has_bias ? c->in[2].addr : 0, p.c = o->addr;
    p.res = g->has_residual ? c->in[c->n_in - 1].addr : 0;
    uint32_t bias_res = (g->has_bias ? 1u : 0u) | (g->has_residual ? 2u : 0u);   /* HAS_BIAS bits */
    p.M = (uint32_t)Og, p.N = (uint32_t)N, p.K = (uint32_t)K, p.nbatch = (uint32_t)g->groups;
    p.C = (uint32_t)x->dims[1], p.O = (uint32_t)o->dims[1];
    p.ovol = (uint32_t)ovol, p.o1 = od[1], p.o2 = od[2], p.kvol = (uint32_t)kvol;
    p.k1 = kd[1], p.k2 = kd[2], p.in0 = in[0], p.in1 = in[1], p.in2 = in[2];

    /* 1x1, stride 1, no padding: im2col's rows are x's channels, loaded as
     * vectors of `unit` adjacent positions where every image's run of them
     * (and each group's channel block) stays aligned */
    bool pointwise = kvol == 1;
    for (int i = 0; i < g->dims; i++)
        pointwise = pointwise && g->stride[i] == 1 && g->pad_begin[i] == 0 && g->pad_end[i] == 0;
    bool pw4 = pointwise && ovol % 4 == 0 && x->addr % 16 == 0, pw8 = pw4 && ovol % 8 == 0;

    /* K splits where the grid is small (late layers): one group only;
     * matmul_splitk.comp sums the [Og, N] slices and scatters them to NCHW
     * with the bias per row */
    bool may_split = g->groups == 1;
    uint64_t partials = c->scratch_addr;
    rlx_status st;

    /* tensor cores: operands rounded to f16, so only under the fast precision
     * policy, and only for grids of 128 x 128 tiles that fill the device (a
     * small grid runs faster on the tiled tier's smaller, split tiles:
     * resnet50 at batch 1 on the H200, bench/HISTORY.md) */
    vk_coop_plan pl;
    if (c->precision == VK_PRECISION_FAST && vk_coop_available(c) && Og >= 16 && N >= 16 && K >= 16 &&
        cdiv(Og, 128) * cdiv(N, 128) * g->groups >= (int64_t)c->tuning->units &&
        vk_coop_plan_make(c, Og, N, K, g->groups, false, false, may_split && o->dims[0] == 1, &pl) && cdiv(N, pl.bn) <= vk_max_groups(c->caps, 0)) {
        bool split = pl.splits > 1;
        int64_t tiles_m = cdiv(Og, pl.bm);
        p.tiles_m = (uint32_t)tiles_m;
        if (split) {
            c->scratch_bytes = (uint64_t)pl.splits * (uint64_t)Og * (uint64_t)N * 4;
            p.c = partials;
            p.pad0 = pl.kc;
        }
        vk_dispatch *d = vk_emit(c, "conv_gemm_coopmat", &p, sizeof p);
        if (!d) return RLX_STATUS_INTERNAL;
        d->spec[0] = vk_dtype_code(RLX_F32);   /* a, b */
        d->spec[1] = 0;
        d->spec[2] = split ? RLX_ACT_NONE : (uint32_t)g->act;
        d->spec[3] = split ? 0u : bias_res;
        d->spec[4] = (K % 8 == 0 && w->addr % 16 == 0 ? 1u : 0u) | (pw8 ? 2u : 0u);   /* A rows: 8-element loads; B: pointwise */
        d->spec[5] = pl.wm;
        d->spec[6] = pl.wn;
        d->spec[7] = pl.bk;
        d->spec[8] = 0;
        d->spec[9] = pl.wgm;
        d->spec[10] = pl.wgn;
        d->spec[11] = pl.nbuf;
        d->spec[12] = 32 * pl.wgm * pl.wgn;   /* the local size */
        d->spec[13] = vk_dtype_code(RLX_F32);   /* bias, c (split: the f32 partials) */
        d->spec[14] = split;
        d->n_spec = 15;
        d->groups[0] = (uint32_t)cdiv(N, pl.bn);
        d->groups[1] = (uint32_t)RLX_MIN(tiles_m, (int64_t)vk_max_groups(c->caps, 1));
        d->groups[2] = split ? pl.splits : (uint32_t)RLX_MIN(g->groups, (int64_t)vk_max_groups(c->caps, 2));
        d->uses_scratch = split;
        c->tier = split ? "conv-gemm-coopmat-splitk" : "conv-gemm-coopmat";
        *taken = true;
        if (split && (st = vk_emit_splitk_reduce(c, partials, pl.splits, p.bias, o->addr, p.res, Og, N, RLX_F32,
                                                 (int)g->act, ovol)) != RLX_OK)
            return st;
        return RLX_OK;
    }

    uint32_t t[3], kc = 0, splits = conv_tiled_plan(c, Og, N, K, g->groups, may_split, o->dims[0] > 1, t, &kc);
    if (cdiv(N, t[1]) > vk_max_groups(c->caps, 0)) return RLX_OK;
    int64_t tiles_m = cdiv(Og, t[0]);
    p.tiles_m = (uint32_t)tiles_m;
    if (splits > 1) {
        c->scratch_bytes = (uint64_t)splits * (uint64_t)Og * (uint64_t)N * 4;
        p.c = partials;
        p.pad0 = kc;
    }
    vk_dispatch *d = vk_emit(c, "conv_gemm_tiled", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = t[0];
    d->spec[1] = t[1];
    d->spec[2] = t[2];
    d->spec[3] = vk_dtype_code(RLX_F32);
    d->spec[4] = 0;   /* B [K, N] */
    d->spec[5] = splits > 1 ? RLX_ACT_NONE : (uint32_t)g->act;
    d->spec[6] = splits == 1 ? bias_res : 0u;
    d->spec[7] = (K % 4 == 0 && w->addr % 16 == 0 ? 1u : 0u) | (pw4 ? 2u : 0u);   /* A rows: 16-byte loads; B: pointwise */
    d->spec[8] = 0;
    d->spec[9] = splits > 1;
    d->n_spec = 10;
    d->groups[0] = (uint32_t)cdiv(N, t[1]);
    d->groups[1] = (uint32_t)RLX_MIN(tiles_m, (int64_t)vk_max_groups(c->caps, 1));
    d->groups[2] = splits > 1 ? splits : (uint32_t)RLX_MIN(g->groups, (int64_t)vk_max_groups(c->caps, 2));
    *taken = true;
    if (splits > 1) {
        d->uses_scratch = true;
        c->tier = "conv-gemm-tiled-splitk";
        return vk_emit_splitk_reduce(c, partials, splits, p.bias, o->addr, p.res, Og, N, RLX_F32, (int)g->act, ovol);
    }
    c->tier = "conv-gemm-tiled";
    return RLX_OK;
}
