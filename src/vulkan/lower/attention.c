/*
 * attention.c — Vulkan lowering of ATTENTION through the fused flash-style
 * kernel shaders/attention.comp (see its header for the tiling).
 *
 * Tile sizes are chosen here from D, the number of rows per kv head and the
 * device's shared memory: BQ rows (8/16/32) per workgroup, BK keys (32/16)
 * per tile, whether K and V get separate tiles, and (decode at a long cache)
 * whether the next tile loads while one is computed. When the launch has few
 * workgroups (decode), the keys are split over workgroups and a second
 * dispatch (attention_combine.comp) merges the partials kept in scratch.
 * Storage f32, f16 or bf16 (q, k, v, mask and out alike; f32 math), D <= 256;
 * other cases are left to a host step.
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"

#include <math.h>
#include <string.h>

typedef struct att_push {
    uint64_t q, k, v, mask, out;
    uint32_t Sq, Skv, H, Hkv;
    uint32_t rows;
    uint32_t kind;
    float    scale_log2;
    uint32_t pad0;
    uint32_t ms[4];
    uint64_t scratch;
    uint32_t chunk, ml_off;
    uint64_t kvlen;   /* 0, or the address of the i32 active key count */
    uint64_t counters;   /* LASTC: a counter per (head, block) */
    uint32_t pad1, pad2;
} att_push;

typedef struct att_combine_push {
    uint64_t scratch, out;
    uint32_t n, D, rows, Hkv, nsplit, ml_off;
} att_combine_push;

_Static_assert(sizeof(att_combine_push) == 40, "att_combine_push must match attention_combine.comp");
_Static_assert(sizeof(att_push) == 128, "att_push must match attention.comp's push block");

#define ATT_MAX_D 256
#define ATT_SPLIT_MIN_KEYS 256   /* fewest keys per split */

static uint64_t att_smem(uint64_t D, uint32_t bq, uint32_t bk, bool split, bool sg16) {
    uint64_t d4 = (D + 3) / 4;
    return 16 * (bq * d4 + (uint64_t)bk * (d4 + 1) * (split ? 2 : 1)) + 4ull * bq * bk + (sg16 ? 4 : 4ull * bq * 16);
}

/*
 * The tensor-core tier ("flash-coopmat-<dtype>", attention_coopmat.comp):
 * f16 storage, or f32 / bf16 under the fast precision policy (rounded to f16
 * on load, like the matmul's coopmat tier), on devices with the matmul's
 * cooperative-matrix tier, D % 16 == 0 and D <= 128, 16-byte aligned
 * tensors, and a prefill-shaped launch (Sq > 1, no combine fold): it has no
 * split keys. 64-row workgroups (4 subgroups), 32-row ones where 64-row
 * blocks would leave the device's units idle.
 */
static bool att_coop_takes(const vk_lower_ctx *c, rlx_dtype dt, int64_t D, int64_t Sq) {
    const vk_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
    bool prec = dt == RLX_F16 || (c->precision == VK_PRECISION_FAST && (dt == RLX_F32 || dt == RLX_BF16));
    bool al = q->addr % 16 == 0 && k->addr % 16 == 0 && v->addr % 16 == 0 && c->out.addr % 16 == 0;
    return vk_coop_available(c) && prec && al && D % 16 == 0 && D <= 128 && Sq > 1 && !c->skip_combine;
}

static uint64_t att_coop_smem(uint32_t D, uint32_t bk, uint32_t nsg) {
    uint64_t ds = (D + 8) / 8, ps = (bk + 8) / 8;
    return 16 * (2ull * bk * ds + 16ull * nsg * ps + 16ull * nsg * 16);
}

static rlx_status lower_att_coop(vk_lower_ctx *c, const att_push *pc, rlx_dtype dt, int64_t B, int64_t Hkv, int64_t rows,
                                 uint32_t D, bool *taken) {
    *taken = false;
    uint32_t bk = D <= 64 ? 64 : 32;
    uint64_t kvh = (uint64_t)(B * Hkv);
    uint32_t nsg = kvh * (uint64_t)((rows + 63) / 64) >= c->tuning->units ? 4 : 2;
    if (att_coop_smem(D, bk, nsg) > c->caps->max_shared_memory) return RLX_OK;
    uint64_t nblk = ((uint64_t)rows + 16 * nsg - 1) / (16 * nsg);
    if (nblk > vk_max_groups(c->caps, 0) || (uint64_t)Hkv > vk_max_groups(c->caps, 1) ||
        (uint64_t)B > vk_max_groups(c->caps, 2))
        return RLX_OK;
    vk_dispatch *d = vk_emit(c, "attention_coopmat", pc, sizeof *pc);   /* the shader reads the fields it uses */
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = D;
    d->spec[1] = bk;
    d->spec[2] = nsg;
    d->spec[3] = vk_dtype_code(dt);
    d->spec[4] = 32 * nsg;   /* the local size */
    d->n_spec = 5;
    d->groups[0] = (uint32_t)nblk;
    d->groups[1] = (uint32_t)Hkv;
    d->groups[2] = (uint32_t)B;
    c->tier = dt == RLX_F16 ? "flash-coopmat-f16" : dt == RLX_BF16 ? "flash-coopmat-bf16" : "flash-coopmat-f32";
    *taken = true;
    return RLX_OK;
}

rlx_status vk_lower_attention(vk_lower_ctx *c) {
    const vk_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
    const int kind = (int)ir_attr_attention_mask(c->node);
    const rlx_dtype dt = q->dtype;
    if ((dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16) || k->dtype != dt || v->dtype != dt || c->out.dtype != dt)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention: the Vulkan kernel takes f32, f16 or bf16 storage, got %s",
                        rlx_dtype_name(q->dtype));
    if (dt != RLX_F32 && (!c->caps->storage_16bit || c->skip_combine))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention: %s storage needs 16-bit storage buffers%s", rlx_dtype_name(dt),
                        c->skip_combine ? " and no combine fold" : "");
    const int ti = dt == RLX_F32 ? 0 : dt == RLX_F16 ? 1 : 2;
    static const char *const tier_names[3][3] = {
        {"flash-f32", "flash-f32-splitkv", "flash-f32-splitkv-lastcombine"},
        {"flash-f16", "flash-f16-splitkv", "flash-f16-splitkv-lastcombine"},
        {"flash-bf16", "flash-bf16-splitkv", "flash-bf16-splitkv-lastcombine"}};
    if (q->rank != 4 || k->rank != 4 || v->rank != 4)
        return rlx_fail(RLX_STATUS_SHAPE, "attention: q, k, v must be [B,H,S,D]");
    const int64_t B = q->dims[0], H = q->dims[1], Sq = q->dims[2], D = q->dims[3];
    const int64_t Hkv = k->dims[1], Skv = k->dims[2];
    if (Hkv <= 0 || H % Hkv != 0 || k->dims[0] != B || k->dims[3] != D || memcmp(k->dims, v->dims, sizeof k->dims))
        return rlx_fail(RLX_STATUS_SHAPE, "attention: k/v shapes do not fit q");
    if (kind < RLX_MASK_NONE || kind > RLX_MASK_ADDITIVE)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "attention: unknown mask kind %d", kind);
    if (D > ATT_MAX_D)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention: head dim %lld exceeds the Vulkan kernel's %d",
                        (long long)D, ATT_MAX_D);
    c->tier = tier_names[ti][0];
    if (c->out.numel == 0) return RLX_OK;

    const int64_t group = H / Hkv, rows = group * Sq;
    const vk_tensor *mk = kind == RLX_MASK_ADDITIVE ? &c->in[3] : NULL;
    if (kind == RLX_MASK_ADDITIVE && (c->n_in < 4 || mk->dtype != dt || mk->rank > 4))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention: additive mask must be %s (q's dtype) of rank <= 4",
                        rlx_dtype_name(dt));
    /* 32-bit element indexing in the shader */
    if (q->numel >= (int64_t)1 << 31 || k->numel >= (int64_t)1 << 31 || (mk && mk->numel >= (int64_t)1 << 31))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention: tensors of 2^31 elements or more");

    att_push pc;
    memset(&pc, 0, sizeof pc);
    pc.q = q->addr;
    pc.k = k->addr;
    pc.v = v->addr;
    pc.out = c->out.addr;
    pc.Sq = (uint32_t)Sq;
    pc.Skv = (uint32_t)Skv;
    pc.H = (uint32_t)H;
    pc.Hkv = (uint32_t)Hkv;
    pc.rows = (uint32_t)rows;
    pc.kind = (uint32_t)kind;
    pc.scale_log2 = (float)(ir_attr_attention_scale(c->node) * 1.4426950408889634);
    if (ir_attr_attention_has_kv_len(c->node)) pc.kvlen = c->in[c->n_in - 1].addr;   /* active extent, read on the device */
    if (mk) {
        /* element strides of the mask broadcast right-aligned to [B,H,Sq,Skv] */
        const int64_t full[4] = {B, H, Sq, Skv};
        int64_t s = 1;
        for (int i = 3; i >= 0; i--) {
            int mi = mk->rank - 4 + i;
            int64_t md = mi >= 0 ? mk->dims[mi] : 1;
            if (md != 1 && md != full[i])
                return rlx_fail(RLX_STATUS_SHAPE, "attention: mask dim %d is %lld, cannot broadcast to %lld", mi,
                                (long long)md, (long long)full[i]);
            pc.ms[i] = (md == 1) ? 0 : (uint32_t)s;
            s *= md;
        }
        pc.mask = mk->addr;
    }

    if (att_coop_takes(c, dt, D, Sq)) {
        bool taken;
        rlx_status st = lower_att_coop(c, &pc, dt, B, Hkv, rows, (uint32_t)D, &taken);
        if (st != RLX_OK || taken) return st;
    }

    /* tiles: fewer rows per workgroup when there are few rows (decode) or too
     * few workgroups to fill a large GPU */
    const uint64_t kvh = (uint64_t)(B * Hkv);
    uint32_t bq = 32;
    if (rows <= 8) bq = 8;
    else if (rows <= 16 || kvh * (uint64_t)((rows + 31) / 32) < c->tuning->att_full_grid) bq = 16;
    const bool sg16 = c->caps->subgroup_size >= 16 && c->caps->subgroup_size <= 128;
    const uint64_t smax = c->caps->max_shared_memory ? c->caps->max_shared_memory : 16384;
    /* keys per tile: 32, faster than 64 on the H200 at D = 64, 80, 128 (not in
     * bench/HISTORY.md: re-measure with vk_bench before changing it) */
    static const uint32_t bks[] = {32, 16};
    uint32_t bk = 0;
    bool split = true;
    for (; bq >= 8 && !bk; bq /= 2) {
        for (int i = 0; i < 2 && !bk; i++)
            for (int sp = 1; sp >= 0 && !bk; sp--)
                if (att_smem((uint64_t)D, bq, bks[i], sp, sg16) <= smax) {
                    bk = bks[i];
                    split = sp;
                }
        if (bk) break;
    }
    if (!bk)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention: head dim %lld does not fit %llu bytes of shared memory",
                        (long long)D, (unsigned long long)smax);

    const uint64_t nblk = ((uint64_t)rows + bq - 1) / bq;

    /* Few workgroups (decode, small batches) leave most of a GPU idle and
     * serialize the keys: split the keys over workgroups (at least
     * ATT_SPLIT_MIN_KEYS each) and merge the partials in a second pass. With
     * an active extent (a KV cache) the shader splits the keys in use at run
     * time, one tile or more each, so the split count may go down to tiles. */
    const uint64_t wgs = nblk * kvh;
    /* decode whose combine the matvec of an attention_dequant_matmul does (attention_dequant.c) */
    const bool fold = c->skip_combine && B == 1 && Sq == 1;
    const uint64_t min_keys = pc.kvlen ? bk : ATT_SPLIT_MIN_KEYS;
    uint64_t ns = 1, chunk = (uint64_t)Skv;
    const uint64_t target = c->tuning->att_target_wgs;   /* workgroups that keep the device busy */
    if (wgs < target / 2) {
        ns = target / wgs;
        /* up to one split per min_keys; with an active extent rounded up (a
         * decode cache of 168 keys gives 6 one-tile splits, not 5 that round
         * to 3 of two tiles), else down (at least ATT_SPLIT_MIN_KEYS each) */
        const uint64_t most = pc.kvlen ? ((uint64_t)Skv + min_keys - 1) / min_keys : (uint64_t)Skv / min_keys;
        if (ns > most) ns = most;
        /* folding: no more splits than the matvec combines, so a long cache
         * (rlx generate's default 4096 rows: 32 splits) keeps the fold
         * instead of a combine stage */
        if (fold && ns > VK_COMB_MAX_SPLITS) ns = VK_COMB_MAX_SPLITS;
        if (ns < 2) ns = 1;
    }
    if (ns > 1) {
        chunk = ((uint64_t)Skv + ns - 1) / ns;
        chunk = (chunk + bk - 1) / bk * bk;
        ns = ((uint64_t)Skv + chunk - 1) / chunk;
    }
    /* decode: the last split to finish merges the partials itself
     * (attention.comp, LASTC): no combine dispatch, and no stage of its own.
     * On the H200 (llm_bench, bench/HISTORY.md, 2026-12-01) faster than the combine pass for every
     * model measured, and than the o projection's fold where that is a
     * Q8_0 product of K >= 4096 (vk_backend_folds_combine declines it). */
    const bool lastc = ns > 1 && !fold && Sq == 1;
    if (ns > 1) {
        const uint64_t parts = (uint64_t)B * ns * (uint64_t)Hkv * (uint64_t)rows;
        c->scratch_bytes = parts * ((uint64_t)D + 2) * sizeof(float);
        pc.scratch = c->scratch_addr;
        pc.ml_off = (uint32_t)(parts * (uint64_t)D);
        if (parts * ((uint64_t)D + 2) >= ((uint64_t)1 << 32))
            return rlx_fail(RLX_STATUS_INTERNAL, "attention: split scratch too large");
        if (lastc) {
            c->counter_words = (uint32_t)((uint64_t)B * (uint64_t)Hkv * nblk);
            pc.counters = c->counters_addr;
        }
    }
    pc.chunk = (uint32_t)(ns > 1 ? chunk : (uint64_t)Skv);

    const uint32_t *mx = c->caps->max_workgroup_count;
    if (nblk > (mx[0] ? mx[0] : 65535) || (uint64_t)Hkv > (mx[1] ? mx[1] : 65535) ||
        (uint64_t)B * ns > (mx[2] ? mx[2] : 65535))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "attention: grid %llu x %lld x %lld exceeds the device limit",
                        (unsigned long long)nblk, (long long)Hkv, (long long)((uint64_t)B * ns));
    const uint64_t al = dt == RLX_F32 ? 16 : 8;   /* one vec4 / four 16-bit elements */
    const bool vec = D % 4 == 0 && q->addr % al == 0 && k->addr % al == 0 && v->addr % al == 0 && c->out.addr % al == 0;

    vk_dispatch *d = vk_emit(c, "attention", &pc, sizeof pc);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)D;
    d->spec[1] = bq;
    d->spec[2] = bk;
    d->spec[3] = split;
    d->spec[4] = sg16;
    d->spec[5] = vec;
    d->spec[6] = (uint32_t)ns;
    /* decode with a KV cache whose splits may hold several tiles (a long
     * cache): the next tile loads while this one is computed. Measured on
     * the H200 (bench/HISTORY.md, 2026-11-30, long caches): at 3000 cached keys 8B
     * decode -5.3%, 1B -8.3% device time, at 1000 -2 / -3%; at a cache of
     * one tile per split nothing to overlap, so it stays off there (+0.3 to
     * +0.5% when it was on). Prefill is not measured with it: off. */
    const uint64_t tiles_per_split = ((ns > 1 ? chunk : (uint64_t)Skv) + bk - 1) / bk;
    d->spec[7] = split && pc.kvlen && Sq == 1 && tiles_per_split > 1;
    d->spec[8] = vk_dtype_code(dt);
    d->spec[9] = lastc;
    d->n_spec = 10;
    d->groups[0] = (uint32_t)nblk;
    d->groups[1] = (uint32_t)Hkv;
    d->groups[2] = (uint32_t)((uint64_t)B * ns);
    if (ns == 1) return RLX_OK;
    d->uses_scratch = true;
    c->tier = tier_names[ti][lastc ? 2 : 1];
    if (lastc) return RLX_OK;
    if (fold) {   /* the next matvec combines the partials as it reads its x */
        c->comb = (vk_att_partials){c->scratch_addr, c->scratch_addr + 4ull * pc.ml_off, (uint32_t)ns, (uint32_t)D,
                                    (uint32_t)H};
        return RLX_OK;
    }

    att_combine_push cp;
    memset(&cp, 0, sizeof cp);
    cp.scratch = c->scratch_addr;
    cp.out = c->out.addr;
    cp.n = (uint32_t)c->out.numel;
    cp.D = (uint32_t)D;
    cp.rows = (uint32_t)rows;
    cp.Hkv = (uint32_t)Hkv;
    cp.nsplit = (uint32_t)ns;
    cp.ml_off = pc.ml_off;
    d = vk_emit(c, "attention_combine", &cp, sizeof cp);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = vk_dtype_code(dt);
    d->n_spec = 1;
    d->uses_scratch = true;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, 256, d->groups);
    return RLX_OK;
}
