/*
 * matmul.c — Vulkan lowering of MATMUL and MATMUL_BIAS_ACT (DESIGN.md 6.6).
 *
 * a [..., M, K] x b [..., K, N] (a [..., K, M] with transpose_a, b [..., N,
 * K] with transpose_b), batch dims broadcast, then act(. + bias[N]) fused
 * into the epilogue. transpose_a runs on matvec (M == 1: a [K, 1] is a
 * [1, K] row in memory), coopmat or the tiled tier (TRANS_A in both). One
 * dispatch per node, in one of three tiers chosen from shapes, dtypes and
 * device caps:
 *  - "matvec"      M == 1: memory-bound decode shape (matvec.comp);
 *  - "coopmat-f16" tensor cores through VK_NV_cooperative_matrix, for f16
 *                  operands, or f32/bf16 ones under the fast precision policy
 *                  (coop_gemm.c, matmul_coopmat.comp); "-convert": the
 *                  operands were converted to f16 first, "-splitk": K was
 *                  split over workgroups and a second pass sums the slices;
 *  - "tiled-f32"   shared-memory tiled GEMM with register blocking, any
 *                  device, the default (matmul_tiled.comp); "-splitk": K
 *                  split where the grid is small (tiled_splits below).
 * Batch dims are collapsed to at most 3, with per-operand element strides
 * (0 where broadcast); a dense batch of a against a single b matrix folds into
 * M. Shaders loop over the batch and row tiles when the grid would exceed the
 * device's workgroup-count limits. Storage f32, f16 and bf16 (converted on
 * load, f32 accumulation, stored in the operands' dtype); f64 and integer
 * dtypes return UNSUPPORTED and run as host steps.
 *
 * Tuning overrides (vk_tuning.h): RLX_VK_MM_TILE=BMxBNxBK (e.g. 128x128x16)
 * overrides the tiled tier's tile; coop_gemm.c lists the cooperative-matrix
 * tier's.
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"
#include "vulkan/lower/matmul_push.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MM_MAX_BATCH_DIMS 3

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static bool aligned(uint64_t addr, uint64_t bytes) { return addr % bytes == 0; }

/* Tiled tier's tile: BM x BN x BK. */
void vk_mm_tiled_tile(const vk_lower_ctx *c, int64_t M, int64_t N, int64_t nb, uint32_t t[3]) {
    const vk_caps *cp = c->caps;
    const vk_tuning *tu = c->tuning;
    int64_t full = tu->mm_full_wave;   /* tiles that fill the device twice */
    if (cdiv(M, 128) * cdiv(N, 128) * nb >= full) {
        t[0] = 128, t[1] = 128;
    } else if (cdiv(M, 64) * cdiv(N, 128) * nb >= full) {
        t[0] = 64, t[1] = 128;
    } else {
        t[0] = 64, t[1] = 64;
    }
    t[2] = 8;
    if (tu->mm_tile[0]) t[0] = tu->mm_tile[0], t[1] = tu->mm_tile[1], t[2] = tu->mm_tile[2];   /* RLX_VK_MM_TILE */
    /* shared memory: two buffers of BK x (BM + 4) and BK x (BN + 4) floats */
    if (t[2] == 16 && (uint64_t)2 * 16 * (t[0] + 4 + t[1] + 4) * 4 > cp->max_shared_memory) t[2] = 8;
}

/*
 * Split-K for the tiled tier: a grid of fewer tiles than the device has units
 * (a BERT-base projection at batch 1, M = 128, N = 768: 24 tiles of 64 x 64
 * on a GPU of 132 units) leaves most of the GPU idle while each workgroup
 * walks all of K. K is then split over the z grid into f32 partial slices
 * (enough splits for about split_target workgroups, each at least
 * TILED_SPLIT_MIN_K deep, at most TILED_SPLIT_MAX), summed in a fixed order
 * by matmul_splitk.comp with the bias, activation and output dtype. Hardware
 * devices only (software ones gain nothing: split_below is 0 there), one
 * matrix (no batch), partials within TILED_SPLIT_MAX_BYTES. RLX_VK_MM_SPLITK
 * forces n splits (1: never), as for the coopmat tier.
 */
#define TILED_SPLIT_MIN_K     128
#define TILED_SPLIT_MAX       16
#define TILED_SPLIT_MAX_BYTES ((uint64_t)256 << 20)

uint32_t vk_mm_tiled_splits(const vk_lower_ctx *c, int64_t M, int64_t N, int64_t K, int64_t nb, const uint32_t t[3],
                             uint32_t *kc) {
    const vk_tuning *tu = c->tuning;
    if (nb != 1 || tu->mm_splitk == 1 || K < 2 * (int64_t)t[2]) return 1;
    int64_t tiles = cdiv(M, t[0]) * cdiv(N, t[1]), want;
    if (tu->mm_splitk > 1) want = tu->mm_splitk;
    else if (tu->split_below > 0 && tiles < (int64_t)tu->units) want = RLX_MIN(cdiv(tu->split_target, tiles), K / TILED_SPLIT_MIN_K);
    else return 1;
    want = RLX_MIN(want, (int64_t)TILED_SPLIT_MAX);
    want = RLX_MIN(want, (int64_t)(TILED_SPLIT_MAX_BYTES / ((uint64_t)M * (uint64_t)N * 4)));
    want = RLX_MIN(want, (int64_t)vk_max_groups(c->caps, 2));
    want = RLX_MIN(want, cdiv(K, t[2]));
    if (want <= 1) return 1;
    int64_t per = cdiv(cdiv(K, want), t[2]) * t[2];   /* whole K steps per split, none empty */
    *kc = (uint32_t)per;
    return (uint32_t)cdiv(K, per);
}

/* The cooperative-matrix tier (coop_gemm.c): f32 and bf16 operands (the fast
 * policy) are converted to f16 into scratch first where the kernel would
 * convert every tile of them again for each tile of the other operand (four
 * or more along either side) and their rows allow 16-byte f16 stores; split-K
 * partials follow them in scratch. */
static rlx_status lower_coop(vk_lower_ctx *c, mm_push *p, const vk_coop_plan *pl, const vk_tensor *a, const vk_tensor *b,
                             const vk_tensor *o, const vk_tensor *bias, bool ta, bool tb, int act) {
    rlx_dtype dt = a->dtype, dta = dt;
    uint64_t base = c->scratch_addr, off = 0;
    int64_t ca = a->dims[a->rank - 1], cb = b->dims[b->rank - 1];
    bool convert = dt != RLX_F16 && ca % 8 == 0 && cb % 8 == 0 &&
                   (cdiv(p->N, pl->bn) >= 4 || cdiv(p->M, pl->bm) >= 4);
    rlx_status st;
    if (convert) {
        uint64_t a16 = base, b16 = base + (((uint64_t)a->numel * 2 + 255) & ~(uint64_t)255);
        off = b16 - base + (((uint64_t)b->numel * 2 + 255) & ~(uint64_t)255);
        if ((st = vk_emit_decode_f16(c, a->addr, dt, a->numel / ca, ca, (uint64_t)ca * rlx_dtype_size(dt), a16)) != RLX_OK ||
            (st = vk_emit_decode_f16(c, b->addr, dt, b->numel / cb, cb, (uint64_t)cb * rlx_dtype_size(dt), b16)) != RLX_OK)
            return st;
        p->a = a16;
        p->b = b16;
        dta = RLX_F16;
    }
    bool split = pl->splits > 1;
    uint64_t partials = base + off;
    if (split) off += (uint64_t)pl->splits * p->M * p->N * 4;
    c->scratch_bytes = off;
    if (split) p->c = partials;
    if ((st = vk_emit_coop(c, p, pl, dta, dt, ta, tb, act, bias != NULL, convert || split)) != RLX_OK) return st;
    if (split && (st = vk_emit_splitk_reduce(c, partials, pl->splits, bias ? bias->addr : 0, o->addr, 0, p->M, p->N, dt,
                                             act, 0)) != RLX_OK)
        return st;
    c->tier = split ? (convert ? "coopmat-f16-convert-splitk" : "coopmat-f16-splitk")
                    : (convert ? "coopmat-f16-convert" : "coopmat-f16");
    return RLX_OK;
}

rlx_status vk_lower_matmul(vk_lower_ctx *c) {
    const ir_node *n = c->node;
    const vk_caps *cp = c->caps;
    char lb[160];
    if (c->n_in < 2) return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d inputs", vk_node_label(c, lb, sizeof lb), c->n_in);
    const vk_tensor *a = &c->in[0], *b = &c->in[1], *o = &c->out;
    const vk_tensor *bias = ir_attr_matmul_has_bias(n) && c->n_in > 2 ? &c->in[2] : NULL;
    rlx_dtype dt = a->dtype;

    if (dt == RLX_F64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: f64 matmul has no GPU kernel", vk_node_label(c, lb, sizeof lb));
    if ((dt != RLX_F32 && dt != RLX_F16 && dt != RLX_BF16) || b->dtype != dt || o->dtype != dt ||
        (bias && bias->dtype != dt))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: needs one of f32/f16/bf16 for every operand, got %s x %s",
                        vk_node_label(c, lb, sizeof lb), rlx_dtype_name(a->dtype), rlx_dtype_name(b->dtype));
    if (dt != RLX_F32 && !cp->storage_16bit)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s storage needs 16-bit storage buffers", vk_node_label(c, lb, sizeof lb),
                        rlx_dtype_name(dt));
    if (a->rank < 2 || b->rank < 2 || o->rank < 2)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: operands need rank >= 2, got %d and %d", vk_node_label(c, lb, sizeof lb),
                        a->rank, b->rank);

    int tb = ir_attr_matmul_transpose_b(n) != 0, ta = ir_attr_matmul_transpose_a(n) != 0;
    int64_t act = n->op == IR_OP_MATMUL_BIAS_ACT ? ir_attr_matmul_act(n) : RLX_ACT_NONE;
    if (act < RLX_ACT_NONE || act > RLX_ACT_TANH)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: unknown activation %lld", vk_node_label(c, lb, sizeof lb), (long long)act);
    int64_t M = a->dims[a->rank - (ta ? 1 : 2)], K = a->dims[a->rank - (ta ? 2 : 1)];
    int64_t N = tb ? b->dims[b->rank - 2] : b->dims[b->rank - 1];
    int64_t kb = tb ? b->dims[b->rank - 1] : b->dims[b->rank - 2];
    if (kb != K || o->dims[o->rank - 2] != M || o->dims[o->rank - 1] != N)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: inner dims differ: K %lld vs %lld", vk_node_label(c, lb, sizeof lb),
                        (long long)K, (long long)kb);
    if (bias && bias->numel != N)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: bias has %lld elements, N is %lld", vk_node_label(c, lb, sizeof lb),
                        (long long)bias->numel, (long long)N);
    if (o->numel == 0) {   /* nothing to write */
        c->tier = "empty";
        return RLX_OK;
    }

    /* Batch dims: collapse, then pad to exactly 3 (outermost first). */
    vk_tensor ob, ab, bb;
    memset(&ob, 0, sizeof ob);
    memset(&ab, 0, sizeof ab);
    memset(&bb, 0, sizeof bb);
    ob.rank = o->rank - 2;
    ab.rank = a->rank - 2;
    bb.rank = b->rank - 2;
    int64_t nb = 1, a_nb = 1, b_nb = 1;
    for (int i = 0; i < ob.rank; i++) nb *= (ob.dims[i] = o->dims[i]);
    for (int i = 0; i < ab.rank; i++) a_nb *= (ab.dims[i] = a->dims[i]);
    for (int i = 0; i < bb.rank; i++) b_nb *= (bb.dims[i] = b->dims[i]);
    ob.numel = nb, ab.numel = a_nb, bb.numel = b_nb;
    const vk_tensor *ops[2] = {&ab, &bb};
    int64_t cd[IR_MAX_RANK], cs[2][IR_MAX_RANK];
    int br = vk_collapse_broadcast(&ob, ops, 2, MM_MAX_BATCH_DIMS, cd, cs);
    if (br < 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: more than %d independent batch dims", vk_node_label(c, lb, sizeof lb),
                        MM_MAX_BATCH_DIMS);
    int64_t bd[3] = {1, 1, 1}, sa[3] = {0, 0, 0}, sb[3] = {0, 0, 0};
    for (int i = 0; i < br; i++) {
        int j = 3 - br + i;
        bd[j] = cd[i];
        sa[j] = cs[0][i];
        sb[j] = cs[1][i];
    }

    /* A dense batch of a against one b matrix is a single taller GEMM (not
     * for a transposed a, whose matrices' rows are not the product's). */
    int64_t Me = M;
    if (!ta && nb > 1 && b_nb == 1 && a_nb == nb && nb * M * K < MM_INDEX_LIMIT && nb * M * N < MM_INDEX_LIMIT) {
        Me = nb * M;
        nb = 1;
        bd[0] = bd[1] = bd[2] = 1;
        sa[0] = sa[1] = sa[2] = sb[0] = sb[1] = sb[2] = 0;
    }
    if (Me * K >= MM_INDEX_LIMIT || K * N >= MM_INDEX_LIMIT || Me * N >= MM_INDEX_LIMIT || nb > UINT32_MAX)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: a matrix with 2^31 or more elements", vk_node_label(c, lb, sizeof lb));

    mm_push p;
    memset(&p, 0, sizeof p);
    p.a = a->addr;
    p.b = b->addr;
    p.bias = bias ? bias->addr : 0;
    p.c = o->addr;
    p.M = (uint32_t)Me;
    p.N = (uint32_t)N;
    p.K = (uint32_t)K;
    p.nbatch = (uint32_t)nb;
    p.bd1 = (uint32_t)bd[1];
    p.bd2 = (uint32_t)bd[2];
    for (int i = 0; i < 3; i++) {
        p.sa[i] = (uint64_t)(sa[i] * M * K);
        p.sb[i] = (uint64_t)(sb[i] * K * N);
    }

    uint32_t dtc = vk_dtype_code(dt);
    uint64_t es = dt == RLX_F32 ? 4 : 2;
    bool fast = c->precision == VK_PRECISION_FAST;
    uint32_t gz = (uint32_t)RLX_MIN(nb, (int64_t)vk_max_groups(cp, 2));
    vk_dispatch *d;

    /* ---- matvec: one row of a per batch entry ---- */
    uint32_t sgs = cp->subgroup_size;
    if (Me == 1 && (!tb || (sgs >= 4 && sgs <= 256 && 256 % sgs == 0))) {
        uint32_t vec = tb ? (K % 4 == 0 && aligned(a->addr, 4 * es) && aligned(b->addr, 4 * es))
                          : (N % 4 == 0 && aligned(b->addr, 4 * es));
        uint32_t cols = tb ? 256 / sgs : 64;   /* columns per workgroup (matvec.comp) */
        int64_t tiles = cdiv(N, cols);
        p.tiles = (uint32_t)tiles;
        p.pad0 = cols;
        if (!(d = vk_emit(c, "matvec", &p, sizeof p))) return RLX_STATUS_INTERNAL;
        d->spec[0] = dtc;
        d->spec[1] = (uint32_t)tb;
        d->spec[2] = (uint32_t)act;
        d->spec[3] = bias != NULL;
        d->spec[4] = vec;
        d->n_spec = 5;
        d->groups[0] = (uint32_t)RLX_MIN(tiles, (int64_t)vk_max_groups(cp, 0));
        d->groups[1] = 1;
        d->groups[2] = gz;
        c->tier = "matvec";
        return RLX_OK;
    }

    /* ---- cooperative matrix (tensor cores) ---- */
    bool coop_dtype = dt == RLX_F16 || fast;
    vk_coop_plan pl;
    if (vk_coop_available(c) && coop_dtype && Me >= 16 && N >= 16 && K >= 16 &&
        vk_coop_plan_make(c, Me, N, K, nb, ta, tb, true, &pl))
        return lower_coop(c, &p, &pl, a, b, o, bias, ta, tb, (int)act);

    /* ---- tiled f32 ---- */
    uint32_t t[3];
    vk_mm_tiled_tile(c, Me, N, nb, t);
    if (cdiv(N, t[1]) > vk_max_groups(cp, 0))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: N = %lld needs more workgroups than the device allows",
                        vk_node_label(c, lb, sizeof lb), (long long)N);
    uint32_t vec = 0;
    if ((ta ? M % 4 == 0 : K % 4 == 0) && aligned(a->addr, 4 * es)) vec |= 1;
    if ((tb ? K % 4 == 0 : N % 4 == 0) && aligned(b->addr, 4 * es)) vec |= 2;
    if (N % 4 == 0 && aligned(o->addr, 4 * es)) vec |= 4;
    int64_t tiles_m = cdiv(Me, t[0]);
    p.tiles = (uint32_t)tiles_m;
    uint32_t kc = 0, splits = vk_mm_tiled_splits(c, Me, N, K, nb, t, &kc);
    uint64_t partials = c->scratch_addr;
    if (splits > 1) {
        c->scratch_bytes = (uint64_t)splits * (uint64_t)Me * (uint64_t)N * 4;
        p.c = partials;
        p.pad0 = kc;
        vec = (vec & 3u) | (N % 4 == 0 ? 4u : 0u);   /* f32 slices, 256-byte aligned scratch */
    }
    if (!(d = vk_emit(c, "matmul_tiled", &p, sizeof p))) return RLX_STATUS_INTERNAL;
    d->spec[0] = t[0];
    d->spec[1] = t[1];
    d->spec[2] = t[2];
    d->spec[3] = dtc;
    d->spec[4] = (uint32_t)tb;
    d->spec[5] = (uint32_t)act;
    d->spec[6] = bias != NULL;
    d->spec[7] = vec;
    d->spec[8] = (uint32_t)ta;
    d->spec[9] = splits > 1;
    d->n_spec = 10;
    d->groups[0] = (uint32_t)cdiv(N, t[1]);
    d->groups[1] = (uint32_t)RLX_MIN(tiles_m, (int64_t)vk_max_groups(cp, 1));
    d->groups[2] = splits > 1 ? splits : gz;
    c->tier = "tiled-f32";
    if (splits == 1) return RLX_OK;
    d->uses_scratch = true;
    c->tier = "tiled-f32-splitk";
    return vk_emit_splitk_reduce(c, partials, splits, bias ? bias->addr : 0, o->addr, 0, Me, N, dt, (int)act, 0);
}

/* out[M, N] = a[M, K] · b[N, K]ᵀ in f32 through the tiled tier, no bias or
 * activation: dequant_matmul's prefill path over decoded weights. */
rlx_status vk_emit_matmul_f32_nt(vk_lower_ctx *c, uint64_t a, uint64_t b, uint64_t out, int64_t M, int64_t N,
                                 int64_t K, bool uses_scratch) {
    char lb[160];
    if (M * K >= MM_INDEX_LIMIT || K * N >= MM_INDEX_LIMIT || M * N >= MM_INDEX_LIMIT)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: a matrix with 2^31 or more elements", vk_node_label(c, lb, sizeof lb));
    uint32_t t[3];
    vk_mm_tiled_tile(c, M, N, 1, t);
    if (cdiv(N, t[1]) > vk_max_groups(c->caps, 0))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: N = %lld needs more workgroups than the device allows",
                        vk_node_label(c, lb, sizeof lb), (long long)N);
    mm_push p;
    memset(&p, 0, sizeof p);
    p.a = a;
    p.b = b;
    p.c = out;
    p.M = (uint32_t)M;
    p.N = (uint32_t)N;
    p.K = (uint32_t)K;
    p.nbatch = 1;
    p.bd1 = p.bd2 = 1;
    int64_t tiles_m = cdiv(M, t[0]);
    p.tiles = (uint32_t)tiles_m;
    uint32_t vec = 0;
    if (K % 4 == 0 && aligned(a, 16)) vec |= 1;
    if (K % 4 == 0 && aligned(b, 16)) vec |= 2;
    if (N % 4 == 0 && aligned(out, 16)) vec |= 4;
    vk_dispatch *d = vk_emit(c, "matmul_tiled", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = t[0];
    d->spec[1] = t[1];
    d->spec[2] = t[2];
    d->spec[3] = vk_dtype_code(RLX_F32);
    d->spec[4] = 1;   /* b is [N, K] */
    d->spec[5] = RLX_ACT_NONE;
    d->spec[6] = 0;
    d->spec[7] = vec;
    d->n_spec = 8;
    d->groups[0] = (uint32_t)cdiv(N, t[1]);
    d->groups[1] = (uint32_t)RLX_MIN(tiles_m, (int64_t)vk_max_groups(c->caps, 1));
    d->groups[2] = 1;
    d->uses_scratch = uses_scratch;
    return RLX_OK;
}
