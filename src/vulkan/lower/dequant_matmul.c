/*
 * dequant_matmul.c — Vulkan lowering of DEQUANT_MATMUL (out[M, N] = x[M, K] ·
 * w[N, K]ᵀ with w in its storage type: f32, f16, bf16 or a GGUF block type)
 * and of GATHER_ROWS over a block-quantized table (called from gather.c).
 * The block decoders are shaders/quant_blocks.glsl, the GLSL twin of
 * src/io/quant.c and quant_k.c (dequant_matvec_run.comp and
 * dequant_matvec_i8.comp have their own for Q8_0, Q4_K, Q6_K and (i8) Q5_K). Also the
 * fused DEQUANT_MATMUL_ADD / DEQUANT_SWIGLU.
 *
 * Two regimes, chosen by M (rows of x):
 *  - M <= DQ_MATVEC_MAX_M (decode): one dispatch, memory-bound: every weight
 *    byte is read once, decoded in registers and multiplied with all M rows
 *    of x; no scratch. Q4_K/Q5_K/Q6_K (Q8_0 with a folded norm) on a device
 *    with integer dot products: "dequant-i8-<type>" (dequant_matvec_i8.comp,
 *    x rounded to 8-bit blocks like the CPU fast path; the exact_quant
 *    option keeps the exact kernels), else for Q8_0/Q4_K/Q6_K
 *    "dequant-run-<type>" (dequant_matvec_run.comp, 8-weight runs per
 *    lane); other types: "dequant-matvec-<type>" (dequant_matvec.comp,
 *    32-weight parts per lane). Fused forms add "-add" / "-swiglu" to the tier.
 *  - larger M (prefill): dequant_gemm.c, one dispatch: each workgroup
 *    decodes the weight tile it needs into shared memory and multiplies it
 *    there, on tensor cores ("dequant-mm-coopmat-<type>") or in f32
 *    ("dequant-mm-<type>"); f32 weights take matmul.c's tiled GEMM directly
 *    ("dequant-tiled-f32"). Where the grid would have too few tiles for the
 *    GPU, K is split over workgroups into partials in scratch and a second
 *    pass sums them ("-splitk" tiers; RLX_VK_DQ_SPLITK).
 *
 * Sizes and thresholds come from the device's vk_tuning (c->tuning), with
 * their overrides (RLX_VK_DQ_RUN, _RUN16, _T, _NR, _SWIGLU_NR, _U, _PAIR,
 * _I8, _I8_GRID, _XROT; vk_tuning.h).
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_tuning.h"
#include <stdlib.h>
#include <math.h>
#include <string.h>

#define DQ_MATVEC_MAX_M 8
#define DQ_INDEX_LIMIT  ((int64_t)1 << 31)   /* shader element indices are 32-bit */
#define DQ_WIDE_GRID    64                   /* workgroups before NR = 2 pays */

/* Mirrors the push block of shaders/dequant_matvec.comp (std430). */
typedef struct dq_mv_push {
    uint64_t x, w, w2, res, out;
    uint32_t M, N, K, row_bytes, tiles, pad0, pad1, pad2;
} dq_mv_push;
_Static_assert(sizeof(dq_mv_push) == 72, "dq_mv_push must match dequant_matvec.comp");
_Static_assert(sizeof(dq_mv_push) <= VK_MAX_PUSH, "dq_mv_push exceeds the push-constant budget");

/* The push block of shaders/dequant_matvec_i8.comp: dq_mv_push, then the
 * fields of a rope / KV-cache epilogue (spec constant RKV). */
typedef struct dq_i8_push {
    dq_mv_push mv;
    uint64_t   pos, off, ff;
    float      q_hi, q_lo, f0_hi, f0_lo;
    uint32_t   C, D;
} dq_i8_push;
_Static_assert(sizeof(dq_i8_push) == 120, "dq_i8_push must match dequant_matvec_i8.comp");
_Static_assert(sizeof(dq_i8_push) <= VK_MAX_PUSH, "dq_i8_push exceeds the push-constant budget");

/* A consumer whose work the i8 matvec does in its epilogue (M = 1, plain
 * product): rope pairs of one head (rope 1 GPTJ, 2 NEOX; the rotary dims are
 * the whole head), and / or a store into a KV cache [Hkv, C, D] at the row
 * the i32 at pos names. out is the consumer's output. */
typedef struct dq_epi {
    int      rope;
    bool     kv;
    uint64_t out, pos, off, ff;   /* off, ff: 0 when absent */
    uint32_t C, D;
    double   theta;
} dq_epi;

/* Mirrors the push block of shaders/dequant_rows.comp (std430). */
typedef struct dq_rows_push {
    uint64_t src, ids, dst;
    uint32_t n, K, row_bytes, limit;
    uint64_t status;   /* word set to code when an id is out of range */
    uint32_t code, pad;
} dq_rows_push;
_Static_assert(sizeof(dq_rows_push) == 56, "dq_rows_push must match dequant_rows.comp");
_Static_assert(sizeof(dq_rows_push) <= VK_MAX_PUSH, "dq_rows_push exceeds the push-constant budget");

/* Report tiers by weight type: [epi] for the matvecs, i8_norm with an RMS
 * norm folded in (epi 0 or 2). */
typedef struct dq_names { const char *matvec[3], *run[3], *i8[3], *i8_norm[3], *tiled, *rows; } dq_names;

#define DQ_NAMES(t)                                                                                          \
    {{"dequant-matvec-" t, "dequant-matvec-add-" t, "dequant-matvec-swiglu-" t},                              \
     {"dequant-run-" t, "dequant-run-add-" t, "dequant-run-swiglu-" t},                                       \
     {"dequant-i8-" t, "dequant-i8-add-" t, "dequant-i8-swiglu-" t},                                          \
     {"dequant-i8-norm-" t, "", "dequant-i8-norm-swiglu-" t}, "dequant-tiled-" t, "dequant-rows-" t}
static const dq_names NAMES[RLX_DTYPE_COUNT] = {
    [RLX_F32] = DQ_NAMES("f32"),   [RLX_F16] = DQ_NAMES("f16"),   [RLX_BF16] = DQ_NAMES("bf16"),
    [RLX_Q4_0] = DQ_NAMES("q4_0"), [RLX_Q4_1] = DQ_NAMES("q4_1"), [RLX_Q5_0] = DQ_NAMES("q5_0"),
    [RLX_Q5_1] = DQ_NAMES("q5_1"), [RLX_Q8_0] = DQ_NAMES("q8_0"), [RLX_Q2_K] = DQ_NAMES("q2_K"),
    [RLX_Q3_K] = DQ_NAMES("q3_K"), [RLX_Q4_K] = DQ_NAMES("q4_K"), [RLX_Q5_K] = DQ_NAMES("q5_K"),
    [RLX_Q6_K] = DQ_NAMES("q6_K"), [RLX_Q8_K] = DQ_NAMES("q8_K"),
};

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* Gives d n spec constants: the ids past its present count take their
 * shaders' defaults (0 for every optional id of the i8 matvec). */
static void spec_extend(vk_dispatch *d, int n) {
    for (int i = d->n_spec; i < n; i++) d->spec[i] = 0;
    if (n > d->n_spec) d->n_spec = n;
}

/* Whether the shaders can read w: a dtype with a decoder, its loads aligned. */
static rlx_status check_weights(const vk_lower_ctx *c, const vk_tensor *w, const char *what) {
    char lb[160];
    rlx_dtype dt = w->dtype;
    bool known = dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16 ||
                 ((unsigned)dt < RLX_DTYPE_COUNT && NAMES[dt].rows && rlx_dtype_is_quantized(dt));
    if (!known)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: no GPU decoder for %s %s", vk_node_label(c, lb, sizeof lb), what,
                        rlx_dtype_name(dt));
    if (dt != RLX_F32 && !c->caps->storage_16bit)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s %s needs 16-bit storage buffers", vk_node_label(c, lb, sizeof lb), what,
                        rlx_dtype_name(dt));
    if (w->addr % (dt == RLX_F32 ? 4 : 2))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s is not aligned for the GPU decoder", vk_node_label(c, lb, sizeof lb), what);
    return RLX_OK;
}

/* Emits dequant_rows.comp decoding the rows ids picks from a block-quantized
 * table (row_bytes, K elements each) to f32 at dst. */
static rlx_status emit_rows(vk_lower_ctx *c, const vk_tensor *table, const vk_tensor *ids, uint64_t dst,
                            uint64_t n_rows, int64_t K, uint64_t row_bytes) {
    char lb[160];
    rlx_dtype dt = table->dtype;
    uint64_t n = n_rows * (uint64_t)(K / 32);
    if (n >= ((uint64_t)1 << 32) || n_rows * (uint64_t)K >= ((uint64_t)1 << 32) || row_bytes >= ((uint64_t)1 << 32) ||
        (uint64_t)table->dims[0] >= ((uint64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: 2^32 or more elements to decode", vk_node_label(c, lb, sizeof lb));
    dq_rows_push p;
    memset(&p, 0, sizeof p);
    p.src = table->addr;
    p.ids = ids->addr;
    p.dst = dst;
    p.n = (uint32_t)n;
    p.K = (uint32_t)K;
    p.row_bytes = (uint32_t)row_bytes;
    p.limit = (uint32_t)table->dims[0];
    p.status = c->status_addr;
    p.code = c->status_code;
    vk_dispatch *d = vk_emit(c, "dequant_rows", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)dt;
    d->spec[1] = ids->dtype == RLX_I64 ? 2 : 1;
    d->spec[2] = vk_blocks_a4(dt, row_bytes, table->addr);
    d->spec[3] = dst % 16 == 0;
    d->n_spec = 4;
    vk_grid_1d(c->caps, n, 256, d->groups);
    return RLX_OK;
}

/* The push block both matvec shaders share (checked sizes: the caller's). */
static dq_mv_push mv_push(uint64_t x, uint64_t w, uint64_t w2, uint64_t res, uint64_t out, int64_t M, int64_t N, int64_t K,
                          uint64_t row_bytes, int64_t tiles) {
    dq_mv_push p;
    memset(&p, 0, sizeof p);
    p.x = x;
    p.w = w;
    p.w2 = w2;
    p.res = res;
    p.out = out;
    p.M = (uint32_t)M;
    p.N = (uint32_t)N;
    p.K = (uint32_t)K;
    p.row_bytes = (uint32_t)row_bytes;
    p.tiles = (uint32_t)tiles;
    return p;
}

/* A per-type choice of vk_tuning: its override, or the rule's dflt. */
static bool tuned_type(const int8_t *choice, rlx_dtype dt, bool dflt) {
    int8_t v = (unsigned)dt < RLX_DTYPE_COUNT ? choice[dt] : VK_TUNE_RULE;
    return v == VK_TUNE_RULE ? dflt : v == VK_TUNE_ON;
}

/* An override of vk_tuning (0: unset), or the rule's value. */
static uint32_t tuned_u32(uint32_t override, uint32_t rule) { return override ? override : rule; }

/* Groups of the run and i8 matvecs, for rows of `units` units of work: T
 * threads per group, about a quarter of the units (each thread takes ~4),
 * between the subgroup size and t_max (<= 256); NR rows per group (EPI 2:
 * 1), nr_max (4 or 2), 2 or 1, the most that keeps >= min_tiles workgroups
 * (x loads serve NR rows). tuning dq_t / dq_nr override them. Returns the tiles
 * (workgroups of 256 / T groups). */
static int64_t group_shape(const vk_tuning *tu, uint32_t sgs, uint32_t units, int64_t N, int epi, uint32_t t_max,
                           int64_t min_tiles, uint32_t nr_max, uint32_t *T_out, uint32_t *nr_out) {
    uint32_t T = t_max;
    while (T > sgs && T * 4 > units) T /= 2;
    T = tuned_u32(tu->dq_t, T);
    if (T < sgs || 256 % T) T = sgs;
    uint32_t G = 256 / T;
    uint32_t nr = nr_max;
    while (nr > 1 && cdiv(N, (int64_t)G * nr) < min_tiles) nr /= 2;
    nr = epi == 2 ? 1 : tuned_u32(tu->dq_nr, nr);
    if (nr == 3) nr = 2;
    *T_out = T;
    *nr_out = nr;
    return cdiv(N, (int64_t)G * nr);
}

/* One dispatch of the run or the i8 matvec, which share the push block and
 * specialization constants 0-6 (type, M = p->M, T, NR, x aligned, epilogue,
 * weight alignment); NULL if the node is full (error set). */
static vk_dispatch *emit_run_like(vk_lower_ctx *c, const char *shader, const dq_mv_push *p, rlx_dtype dt, uint32_t T,
                                  uint32_t nr, uint64_t x, int epi, bool a4, bool a16) {
    vk_dispatch *d = vk_emit(c, shader, p, sizeof *p);
    if (!d) return NULL;
    d->spec[0] = (uint32_t)dt;
    d->spec[1] = p->M;
    d->spec[2] = T;
    d->spec[3] = nr;
    d->spec[4] = x % 16 == 0;
    d->spec[5] = (uint32_t)epi;
    d->spec[6] = (a4 ? 1u : 0u) | (a4 && a16 ? 2u : 0u);
    d->n_spec = 7;
    return d;
}

/*
 * dequant_matvec_run.comp (see its header) for Q8_0, Q4_K and Q6_K: groups of
 * T lanes walk a row's 8-weight runs, so adjacent lanes read adjacent x; T
 * and NR from group_shape. Returns false (nothing emitted) when it does not
 * apply: another type, misaligned Q4_K rows, or RLX_VK_DQ_RUN=0 (or a list of
 * type names without this one).
 */
static bool emit_matvec_run(vk_lower_ctx *c, rlx_dtype dt, uint64_t x, uint64_t w, uint64_t w2, uint64_t res,
                            uint64_t out, int64_t M, int64_t N, int64_t K, uint64_t row_bytes, int epi,
                            rlx_status *st) {
    const vk_caps *cp = c->caps;
    uint32_t sgs = cp->subgroup_size;
    if (dt != RLX_Q8_0 && dt != RLX_Q4_K && dt != RLX_Q6_K) return false;
    if (!tuned_type(c->tuning->dq_run, dt, true)) return false;   /* RLX_VK_DQ_RUN "0": never; a list: only those */
    if (sgs < 4 || sgs > 256 || 256 % sgs) return false;
    bool a4 = w % 4 == 0 && row_bytes % 4 == 0 && (epi != 2 || w2 % 4 == 0);
    bool a16 = w % 16 == 0 && row_bytes % 16 == 0 && (epi != 2 || w2 % 16 == 0);
    if (dt == RLX_Q4_K && !a4) return false;
    uint32_t T, nr;
    /* Q8_0 on 16-byte-aligned rows (planar quants: K % 256 == 0) and x, at
     * most 2 x rows (x takes 16 registers a row): runs of 16 weights, one
     * 16-byte load, and groups of the largest power of two of lanes (<= 256)
     * that divides the run count, so every lane takes the same number.
     * Measured on the H200 (bench/HISTORY.md, 2026-11-30, Q8_0 i8 grids): decode 8B
     * Q8_0 -0.9% (down projection K = 14336: 896 runs, 128 lanes), 1B -0.7%
     * (K = 8192: 512 runs, 256 lanes); lanes from K / 8 instead (256 at K =
     * 14336, 3.5 runs each) was 4.3% slower on the 8B. RLX_VK_DQ_RUN16=0: off. */
    bool wide = dt == RLX_Q8_0 && a16 && x % 16 == 0 && K % 16 == 0 && M <= 2 && c->tuning->dq_run16;
    uint32_t t_max = 256;
    if (wide)
        while (t_max > sgs && (K / 16) % t_max) t_max /= 2;
    int64_t tiles = group_shape(c->tuning, sgs, (uint32_t)(K / 8), N, epi, t_max, c->tuning->matvec_min_tiles, 4, &T, &nr);
    dq_mv_push p = mv_push(x, w, w2, res, out, M, N, K, row_bytes, tiles);
    c->tier = NAMES[dt].run[epi];
    vk_dispatch *d = emit_run_like(c, "dequant_matvec_run", &p, dt, T, nr, x, epi, a4, a16);
    if (!d) {
        *st = RLX_STATUS_INTERNAL;
        return true;
    }
    d->spec[7] = wide;
    d->n_spec = 8;
    d->groups[0] = (uint32_t)RLX_MIN(tiles, (int64_t)vk_max_groups(cp, 0));
    d->groups[1] = 1;
    d->groups[2] = 1;
    *st = RLX_OK;
    return true;
}

/*
 * dequant_matvec_i8.comp (see its header) for Q8_0, Q4_K, Q5_K and Q6_K on a device
 * with integer dot products: each workgroup rounds x to 8-bit blocks in
 * shared memory (the CPU fast path's rounding), then groups of T lanes walk
 * units of 16 (Q8_0) or 32 (K-quants) weights of NR rows with packed 4x8-bit
 * dot products; T and NR from group_shape (SwiGLU: NR from
 * RLX_VK_DQ_SWIGLU_NR, default 1). Returns false (nothing emitted)
 * when it does not apply: a type i8_takes refuses, no int_dot, exact_quant,
 * misaligned Q4_K rows, or x that does not fit in shared memory. Knobs:
 * RLX_VK_DQ_U (units per lane per step), RLX_VK_DQ_I8_GRID (most workgroups;
 * each then loops over several tiles, so x is rounded fewer times).
 */
/* The types the i8 matvec takes: RLX_VK_DQ_I8 = "0" (none), "1" (all) or a list of type
 * names; by default Q4_K, Q5_K and Q6_K (Q5_K otherwise has only the generic
 * part-per-lane kernel), and Q8_0 where an RMS norm is folded into
 * x (rms_dequant_*). A plain Q8_0 product stays on the exact run kernel: on
 * the H200 the i8 kernel is no faster for it (8B Q8_0 decode 233 vs 242
 * tok/s, 1B 894 vs 900; bench/HISTORY.md, 2026-11-29, 8-bit x), and the exact kernel does not
 * round x; with a norm to fold, the i8 kernel saves the norm's dispatch, and
 * with attention partials to combine (comb_in, attention_dequant.c) the
 * combine pass's. */
static bool i8_takes(const vk_tuning *tu, rlx_dtype dt, bool saves_dispatch) {
    if (dt != RLX_Q8_0 && dt != RLX_Q4_K && dt != RLX_Q5_K && dt != RLX_Q6_K) return false;
    return tuned_type(tu->dq_i8, dt, dt != RLX_Q8_0 || saves_dispatch);
}

/* Spec ids of dequant_matvec_i8.comp (run: 0-6 the same, 7 RUN16). */
enum { I8_QT, I8_NM, I8_T, I8_NR, I8_VEC, I8_EPI, I8_A4, I8_U, I8_XK, I8_NORM, I8_RKV, I8_XCOMB, I8_XROT, I8_PAIR = 15 };

/* The image layout (x_image.glsl) a K-quant consumer reads: 1 for Q4_K and
 * Q5_K, 2 for Q6_K, 0 for other types. */
uint32_t vk_x_image_family(rlx_dtype dt) {
    return dt == RLX_Q4_K || dt == RLX_Q5_K ? 1u : dt == RLX_Q6_K ? 2u : 0u;
}

/* Shared memory a producer of an x image adds (xo_* in x_image.glsl). */
#define XOUT_SHARED_BYTES (32 * (4 + 4 + 8))

/* Shared memory of dequant_matvec_i8.comp for M rows of K, summed from its
 * declarations (the arrays a type does not use still take one element), plus
 * slack for the compiler's alignment; a producer of an x image adds
 * XOUT_SHARED_BYTES. */
static int64_t i8_shared_bytes(rlx_dtype dt, int64_t M, int64_t K) {
    bool kq = dt != RLX_Q8_0;
    int64_t xb = kq ? 256 : 32, n = M * K;
    int64_t bytes = 8 * (kq ? 1 : n / 8)      /* xq2 */
                  + 16 * (kq ? n / 16 : 1)    /* xq4 */
                  + 16 * (kq ? n / 32 : 1)    /* xs4 */
                  + 4 * (n / xb)              /* xd */
                  + 4 * M                     /* xbad */
                  + 4 * (kq ? n / xb : 1)     /* xa */
                  + 4 * M                     /* xinv */
                  + 4 * 512;                  /* red (dequant_matvec_common.glsl) */
    return bytes + 128;
}

/* Whether the i8 matvec can take M rows of K (shape, device, shared memory). */
static bool i8_fits(const vk_caps *cp, rlx_dtype dt, int64_t M, int64_t K) {
    uint32_t sgs = cp->subgroup_size;
    int64_t uw = dt != RLX_Q8_0 ? 32 : 16;
    return cp->int_dot && sgs >= 4 && sgs <= 256 && 256 % sgs == 0 && M >= 1 && M <= DQ_MATVEC_MAX_M && K > 0 &&
           K % uw == 0 && i8_shared_bytes(dt, M, K) <= (int64_t)cp->max_shared_memory;
}

bool vk_i8_folds_norm(const vk_caps *cp, const vk_tuning *tu, bool exact_quant, rlx_dtype dt, int64_t M, int64_t K) {
    return !exact_quant && i8_takes(tu, dt, true) && K % 8 == 0 && i8_fits(cp, dt, M, K);
}

typedef struct dq_norm { uint64_t gamma; float eps; } dq_norm;   /* an RMS norm folded into x (gamma 0: none) */

/* The i8 matvec's default grid cap (vk_tuning.i8_grid_q8_0). Each workgroup rounds all of x before
 * its tiles, so a grid of exactly one wave at full occupancy (every SM's
 * resident workgroups, when the device reports its SMs) rounds x the fewest
 * times without a second, partial wave. Measured on the H200 (bench/HISTORY.md,
 * 2026-11-30, Q8_0 i8 grids): Q8_0 decode 8B -4.4% and 1B -5.4% device time at 1056
 * workgroups (132 SMs x 8); 528 and 792 gained less, 1320 and 1584 (a partial
 * second wave) lost. The K-quants lost at every cap tried (8B q4_k_m +0.1% at
 * 2112 to +8.5% at 528: their x mostly arrives as an image, a copy, so there
 * is little rounding to save), so they keep one workgroup per tile. */
static uint32_t i8_default_grid(const vk_tuning *tu, rlx_dtype dt) {
    return dt == RLX_Q8_0 ? tu->i8_grid_q8_0 : UINT32_MAX;
}

static bool emit_matvec_i8(vk_lower_ctx *c, rlx_dtype dt, uint64_t x, uint64_t w, uint64_t w2, uint64_t res,
                           uint64_t out, int64_t M, int64_t N, int64_t K, uint64_t row_bytes, int epi,
                           dq_norm norm, const dq_epi *ep, rlx_status *st) {
    const vk_caps *cp = c->caps;
    uint32_t sgs = cp->subgroup_size;
    /* x as attention's partials, combined here (M = 1, a plain x of H heads of
     * D). Every workgroup reads all splits' partials (nsplit * K floats), so
     * only a few splits pay: at 6 the fold saved ~3.4 us of combine stage for
     * ~1 us more here (H200); at 32 each workgroup would read 512 KB, so a
     * folding attention splits at most VK_COMB_MAX_SPLITS ways (attention.c),
     * and above it the separate combine pass stays. */
    const vk_att_partials *cb = &c->comb_in;
    bool comb = cb->nsplit > 1 && cb->nsplit <= VK_COMB_MAX_SPLITS && M == 1 && !ep && !norm.gamma &&
                cb->D % 8 == 0 && (int64_t)cb->H * cb->D == K && cb->acc % 16 == 0 && cb->ml % 8 == 0;
    /* x offered as an image for this type: the i8 kernel copies it, so it
     * also takes a plain Q8_0 product (whose x it would otherwise round) */
    const vk_x_image *xi = &c->xim_in, *xo = &c->xim_out;
    bool xin = xi->want && M == 1 && !comb && K % 256 == 0 && xi->family == vk_x_image_family(dt);
    const vk_tuning *tu = c->tuning;
    if (c->exact_quant || !i8_takes(tu, dt, norm.gamma != 0 || comb || xin) || !i8_fits(cp, dt, M, K))
        return false;
    bool a4 = w % 4 == 0 && row_bytes % 4 == 0 && (epi != 2 || w2 % 4 == 0);
    bool a16 = w % 16 == 0 && row_bytes % 16 == 0 && (epi != 2 || w2 % 16 == 0);
    if ((dt == RLX_Q4_K || dt == RLX_Q5_K) && !a4) return false;
    if (norm.gamma && (epi == 1 || norm.gamma % 16 || K % 8)) return false;   /* gamma rides in res, read as vec4 */
    if (ep && (M != 1 || epi != 0 || (ep->rope && (N % 2 || ep->D % 2)))) return false;
    int64_t uw = dt != RLX_Q8_0 ? 32 : 16;
    uint32_t T, nr;
    /* Q8_0 groups are sized from K / 8 (8-weight steps), so K = 4096 would
     * get 128 threads a row; 64 measured faster on the H200 (SwiGLU 14336 x 4096: 42.5 vs 45.7 us,
     * lm head 139.5 vs 144.6; q 9.9 vs 9.7) */
    /* long rows (K >= 8192: the down projections) keep >= 512 workgroups:
     * their x takes more shared memory, so fewer workgroups fit on an SM,
     * and each lane's share of a tile is longer. Measured on the H200 with x
     * images (bench/HISTORY.md, 2026-11-30, x images where they pay): the 8B Q6_K down
     * projection at 2 rows a group instead of 4, and the 1B one at 1 instead
     * of 2: decode device time -0.8% (8B Q4_K_M) and -1.6% (1B); fewer rows
     * everywhere (NR 1) was 3.6% slower on the 8B. Vocabulary-sized
     * K-quant products (the lm head) take at most 2 rows a group: decode
     * -0.4% (8B Q4_K_M) and -0.6% (1B); Q8_0 heads keep 4 (at 2 its decode
     * was 0.7% / 2.1% slower) */
    int64_t min_tiles = K >= 8192 ? tu->matvec_min_tiles_long : tu->matvec_min_tiles;
    uint32_t nr_max = N >= 32768 && dt != RLX_Q8_0 ? 2 : 4;
    /* Q8_0's group size is chosen from K / 8, the count it was measured with (vk_matvec, 2026-11-29) */
    int64_t tiles = group_shape(tu, sgs, (uint32_t)(K / (dt == RLX_Q8_0 ? 8 : uw)), N, epi, dt == RLX_Q8_0 ? 64 : 256,
                                min_tiles, nr_max, &T, &nr);
    /* SwiGLU: NR gate rows and NR up rows a group, so a workgroup's x (its
     * rounding or image copy) serves 2 NR rows. On the H200 (bench/HISTORY.md,
     * 2026-11-30, Q8_0 i8 grids) 2 rows took the 1B Q4_K_M decode (K = 2048) from
     * 745.6 to 708.2 us a token (-5.0%), but cost the 8B (K = 4096, twice the
     * row work per copy of x) +0.9%, and Q8_0, whose grid is capped so x is
     * rounded once a workgroup anyway, +1.9% (8B) and +2.3% (1B) */
    if (epi == 2) {
        nr = tuned_u32(tu->dq_swiglu_nr, dt != RLX_Q8_0 && K <= 2048 ? 2 : 1);
        tiles = cdiv(N, (int64_t)(256 / T) * nr);
    }
    if (ep && ep->rope) {   /* a group's two slots are one pair of rows */
        nr = 2;
        tiles = cdiv(N / 2, 256 / T);
    }
    /* a capped grid still gives every workgroup the same number of tiles (+-1) */
    int64_t cap = RLX_MIN((int64_t)tuned_u32(tu->dq_i8_grid, i8_default_grid(tu, dt)), (int64_t)vk_max_groups(cp, 0));
    int64_t groups = cdiv(tiles, cdiv(tiles, cap));
    dq_mv_push p = mv_push(x, w, w2, norm.gamma ? norm.gamma : res, out, M, N, K, row_bytes, tiles);
    if (norm.gamma) memcpy(&p.pad0, &norm.eps, sizeof p.pad0);
    c->tier = norm.gamma ? NAMES[dt].i8_norm[epi] : NAMES[dt].i8[epi];
    vk_dispatch *d = emit_run_like(c, "dequant_matvec_i8", &p, dt, T, nr, x, epi, a4, a16);
    if (!d) {
        *st = RLX_STATUS_INTERNAL;
        return true;
    }
    /* one unit a step: Q8_0's units are 16 weights (one aligned 16-byte load
     * in planar rows), the K-quants' 32. On the H200 (bench/HISTORY.md,
     * 2026-11-30, planar rows) 8B Q8_0 decode took 3310 us a token this way, 3347
     * with 8-weight units two a step, 3592 / 3727 at two / three 16-weight
     * units a step; the K-quants lost at 2 (2026-11-30, x images where they pay) */
    d->spec[7] = tu->dq_u;
    d->spec[8] = (uint32_t)K;
    d->spec[9] = norm.gamma != 0;
    d->spec[10] = 0;
    d->spec[11] = comb ? cb->nsplit : 0u;   /* a constant: the shader issues every partial's loads at once */
    /* workgroup w rounds x starting 256 w chunks in (mod the chunks), so a
     * grid does not read the same lines of x at once; measured on the H200:
     * K-quant down projections 2-7% faster (8B q4_k_m decode +2%), Q8_0
     * decode 1.5% slower, so K-quants only (RLX_VK_DQ_XROT=0 turns it off) */
    d->spec[12] = (uint32_t)(tu->dq_xrot >= 0 ? tu->dq_xrot : dt == RLX_Q8_0 ? 0 : 256) / 32 * 32;
    /* the rounded-x image (x_image.glsl): x read from the previous matvec's
     * image, and this output rounded into one for the next matvec. A tile's
     * rows must lie in one 256-block of the output (rope pairs do not). */
    int64_t tile_rows = (int64_t)(256 / T) * nr;
    bool xout = xo->want && M == 1 && !ep && xo->family != 0 && N % 256 == 0 &&
                256 % tile_rows == 0 && (xo->gamma == 0 || xo->gamma % 16 == 0) &&
                i8_shared_bytes(dt, M, K) + XOUT_SHARED_BYTES <= (int64_t)cp->max_shared_memory;
    if (xin || xout) {   /* the shader's build with the image code (Makefile) */
        d->shader = "dequant_matvec_i8_xim";
        d->spec[13] = xin;
        d->spec[14] = xout ? xo->family : 0u;
        d->n_spec = 15;
    } else {
        d->n_spec = 13;
    }
    /* a lane takes two adjacent units (Q4_K / Q5_K: one header decode for
     * 64 weights; Q6_K: shared scales and d, 16-byte quant loads; Q8_0: a
     * whole block, one scale load). On the H200 (bench/HISTORY.md,
     * 2026-11-30, Q4_K unit pairs) Q4_K pairs took 8B Q4_K_M decode from 2535 to 2500
     * us a token (K = 4096: two pairs a lane) and the 1B from 710 to 726 (K
     * = 2048: one pair a lane, half the loads in flight); Q6_K pairs +5% on
     * the 8B, Q8_0 +8 to +13%. So by default Q4_K rows where every lane
     * gets at least two pairs; RLX_VK_DQ_PAIR=0 / 1 / a list of type names
     * overrides. Ids 13-14 are ignored by the build without images. */
    bool pair_default = dt == RLX_Q4_K && K / 64 >= 2 * (int64_t)T;
    if (tuned_type(tu->dq_pair, dt, pair_default)) {
        spec_extend(d, 16);
        d->spec[15] = 1;
    }
    d->uses_scratch = comb;   /* the partials are in scratch */
    /* the whole block always (the shader's block names the epilogue fields) */
    dq_i8_push ip;
    memset(&ip, 0, sizeof ip);
    ip.mv = p;
    if (ep) {
        ip.mv.out = ep->out;
        ip.pos = ep->pos;
        ip.off = ep->off;
        ip.ff = ep->ff;
        vk_split_df(pow(ep->theta, -2.0 / (double)ep->D), &ip.q_hi, &ip.q_lo);
        vk_split_df(1.0 / (2.0 * 3.14159265358979323846), &ip.f0_hi, &ip.f0_lo);
        ip.C = ep->C;
        ip.D = ep->D;
        d->spec[10] = (uint32_t)ep->rope | (ep->kv ? 4u : 0u) | (ep->ff ? 8u : 0u) | (ep->off ? 16u : 0u);
    }
    if (xin) ip.mv.x = xi->addr;
    if (xout) {   /* no rope / KV epilogue: its fields are free */
        ip.pos = xo->addr;
        ip.ff = xo->gamma;
        ip.C = xo->counters;
    }
    c->xim_in_done = xin;
    c->xim_out_done = xout;
    if (comb) {   /* the partials ride in x and the (unused) epilogue fields */
        ip.mv.x = cb->acc;
        ip.off = cb->ml;
        ip.D = cb->D;
    }
    c->comb_taken = comb;
    memcpy(d->push, &ip, sizeof ip);
    d->push_bytes = sizeof ip;
    d->groups[0] = (uint32_t)groups;
    d->groups[1] = 1;
    d->groups[2] = 1;
    *st = RLX_OK;
    return true;
}

static bool matvec_ok(const vk_caps *cp) {
    uint32_t sgs = cp->subgroup_size;
    return sgs >= 4 && sgs <= 256 && 256 % sgs == 0;
}

/* One dequant_matvec.comp dispatch: out[M, N] = x · wᵀ (epi 0), + res (epi 1),
 * or silu(x · wᵀ) * (x · w2ᵀ) (epi 2: a subgroup per output row, its two
 * weight rows the gate and the up row). */
static rlx_status emit_matvec(vk_lower_ctx *c, rlx_dtype dt, uint64_t x, uint64_t w, uint64_t w2, uint64_t res,
                              uint64_t out, int64_t M, int64_t N, int64_t K, uint64_t row_bytes, int epi) {
    const vk_caps *cp = c->caps;
    rlx_status rst;
    if (emit_matvec_i8(c, dt, x, w, w2, res, out, M, N, K, row_bytes, epi, (dq_norm){0, 0}, NULL, &rst)) return rst;
    if (emit_matvec_run(c, dt, x, w, w2, res, out, M, N, K, row_bytes, epi, &rst)) return rst;
    uint32_t nsg = 256 / cp->subgroup_size;
    uint32_t nr = cdiv(N, 2 * nsg) >= DQ_WIDE_GRID ? 2 : 1;
    nr = tuned_u32(c->tuning->dq_nr, nr);
    if (epi == 2) nr = 2;   /* the gate row and the up row */
    int64_t tiles = cdiv(N, (int64_t)nsg * (epi == 2 ? 1 : nr));
    dq_mv_push p = mv_push(x, w, w2, res, out, M, N, K, row_bytes, tiles);
    uint32_t bb = vk_block_bytes(dt), vec = 0;
    uint64_t es = rlx_dtype_size(dt);
    bool w_aligned = !bb && es && w % (4 * es) == 0 && (epi != 2 || w2 % (4 * es) == 0);   /* float weights */
    if (K % 4 == 0 && x % 16 == 0) vec |= 1;
    if (!bb && K % 4 == 0 && w_aligned) vec |= 2;
    c->tier = NAMES[dt].matvec[epi];
    vk_dispatch *d = vk_emit(c, "dequant_matvec", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)dt;
    d->spec[1] = (uint32_t)M;
    d->spec[2] = nr;
    d->spec[3] = vk_blocks_a4(dt, row_bytes, w) && (epi != 2 || w2 % 4 == 0);
    d->spec[4] = vec;
    d->spec[5] = (uint32_t)epi;
    d->n_spec = 6;
    d->groups[0] = (uint32_t)RLX_MIN(tiles, (int64_t)vk_max_groups(cp, 0));
    d->groups[1] = 1;
    d->groups[2] = 1;
    return RLX_OK;
}

/* A DEQUANT_MATMUL's operands, checked: x [M, K] f32, w [N, K] decodable, out
 * [M, N] f32, indices within 32 bits (row_bytes is 0 for an empty output). */
typedef struct dq_dims { int64_t M, N, K; uint64_t row_bytes; } dq_dims;

static rlx_status check_operands(vk_lower_ctx *c, dq_dims *d) {
    char lb[160];
    if (c->n_in < 2) return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d inputs", vk_node_label(c, lb, sizeof lb), c->n_in);
    const vk_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out;
    rlx_dtype dt = w->dtype;
    if (x->dtype != RLX_F32 || o->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: x and out must be f32, got %s and %s", vk_node_label(c, lb, sizeof lb),
                        rlx_dtype_name(x->dtype), rlx_dtype_name(o->dtype));
    if (w->rank != 2) return rlx_fail(RLX_STATUS_SHAPE, "%s: w needs rank 2, got %d", vk_node_label(c, lb, sizeof lb), w->rank);
    rlx_status st = check_weights(c, w, "weights");
    if (st) return st;
    int64_t N = w->dims[0], K = w->dims[1];
    int64_t M = K ? x->numel / K : (N ? o->numel / N : 0);
    if (M * K != x->numel || M * N != o->numel)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: x %lld, w [%lld, %lld], out %lld elements disagree",
                        vk_node_label(c, lb, sizeof lb), (long long)x->numel, (long long)N, (long long)K, (long long)o->numel);
    *d = (dq_dims){M, N, K, 0};
    if (o->numel == 0) return RLX_OK;
    uint64_t row_bytes = rlx_tensor_bytes(dt, 1, &K);
    if (K && !row_bytes) return rlx_fail(RLX_STATUS_SHAPE, "%s: K = %lld is not whole blocks", vk_node_label(c, lb, sizeof lb), (long long)K);
    if (M * K >= DQ_INDEX_LIMIT || M * N >= DQ_INDEX_LIMIT || row_bytes >= ((uint64_t)1 << 32) || N >= DQ_INDEX_LIMIT)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: 2^31 or more elements", vk_node_label(c, lb, sizeof lb));
    d->row_bytes = row_bytes;
    return RLX_OK;
}

/* Decode shapes take one matvec dispatch (which may carry a fused epilogue). */
static bool takes_matvec(const vk_lower_ctx *c, const dq_dims *d) {
    return d->K > 0 && d->M <= DQ_MATVEC_MAX_M && matvec_ok(c->caps);
}

rlx_status vk_lower_dequant_matmul(vk_lower_ctx *c) {
    dq_dims d;
    rlx_status st = check_operands(c, &d);
    if (st != RLX_OK) return st;
    const vk_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out;
    int64_t M = d.M, N = d.N, K = d.K;
    if (o->numel == 0) {
        c->tier = "empty";
        return RLX_OK;
    }
    /* ---- decode shapes: a matvec ---- */
    if (takes_matvec(c, &d)) return emit_matvec(c, w->dtype, x->addr, w->addr, 0, 0, o->addr, M, N, K, d.row_bytes, 0);

    /* ---- prefill, and K = 0 (zeros): weight tiles decoded into shared memory (dequant_gemm.c) ---- */
    return vk_lower_dequant_gemm(c, M, N, K, d.row_bytes, 0, 0, NULL);
}

rlx_status vk_lower_dequant_rows(vk_lower_ctx *c) {
    char lb[160];
    if (c->n_in < 2) return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d inputs", vk_node_label(c, lb, sizeof lb), c->n_in);
    const vk_tensor *t = &c->in[0], *ids = &c->in[1], *o = &c->out;
    if (ids->dtype != RLX_I32 && ids->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: ids must be i32 or i64, got %s", vk_node_label(c, lb, sizeof lb),
                        rlx_dtype_name(ids->dtype));
    if (!rlx_dtype_is_quantized(t->dtype) || o->dtype != RLX_F32 || t->rank < 2)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: expects a block-quantized table [V, ...] and f32 rows",
                        vk_node_label(c, lb, sizeof lb));
    rlx_status st = check_weights(c, t, "table");
    if (st) return st;
    if (ids->dtype == RLX_I64 && ids->addr % 8)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: i64 ids are not 8-byte aligned", vk_node_label(c, lb, sizeof lb));
    int64_t V = t->dims[0], K = V ? t->numel / V : 0;
    if (K == 0 || t->dims[0] == 0) {   /* nothing to decode from; the CPU decides what an empty table means */
        if (o->numel) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: empty table", vk_node_label(c, lb, sizeof lb));
    }
    c->tier = NAMES[t->dtype].rows;
    if (o->numel == 0) return RLX_OK;
    if (o->numel != ids->numel * K)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: output has %lld elements, expected %lld", vk_node_label(c, lb, sizeof lb),
                        (long long)o->numel, (long long)(ids->numel * K));
    uint64_t row_bytes = rlx_tensor_bytes(t->dtype, t->rank - 1, t->dims + 1);
    if (!row_bytes || K % 32) return rlx_fail(RLX_STATUS_SHAPE, "%s: rows are not whole blocks", vk_node_label(c, lb, sizeof lb));
    return emit_rows(c, t, ids, o->addr, (uint64_t)ids->numel, K, row_bytes);
}

/* Lowers the unfused DEQUANT_MATMUL of x = c->in[0] and w into out through
 * a sub-context, appending its dispatches to c (marked as scratch users when
 * out is in scratch); *scratch_need gets the scratch it used itself. */
/*
 * DEQUANT_MATMUL_ADD (x, w, r) and DEQUANT_SWIGLU (x, wg, wu), made by
 * passes/fuse.c. Decode shapes: one matvec dispatch with the
 * epilogue, so a decoder's residual adds and SwiGLU cost no dispatches of
 * their own. Other shapes: the prefill GEMM makes the products (into out, or
 * into scratch for the two SwiGLU products or split-K partials), then
 * epilogue.comp (vk_lower_dequant_gemm).
 */
rlx_status vk_lower_dequant_fused(vk_lower_ctx *c) {
    char lb[160];
    if (c->n_in != 3) return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d inputs", vk_node_label(c, lb, sizeof lb), c->n_in);
    bool swiglu = c->node->op == IR_OP_DEQUANT_SWIGLU;
    const vk_tensor *x = &c->in[0], *w = &c->in[1], *third = &c->in[2], *o = &c->out;
    rlx_dtype dt = w->dtype;
    if (swiglu) {
        rlx_status st = check_weights(c, third, "up weights");
        if (st) return st;
        if (third->dtype != dt || third->rank != 2 || third->dims[0] != w->dims[0] || third->dims[1] != w->dims[1])
            return rlx_fail(RLX_STATUS_SHAPE, "%s: gate and up weights differ", vk_node_label(c, lb, sizeof lb));
    } else if (third->dtype != RLX_F32 || third->numel != o->numel) {
        return rlx_fail(RLX_STATUS_SHAPE, "%s: the residual must be f32 shaped like the output", vk_node_label(c, lb, sizeof lb));
    }
    dq_dims d;
    rlx_status st = check_operands(c, &d);
    if (st != RLX_OK) return st;
    if (o->numel == 0) {
        c->tier = "empty";
        return RLX_OK;
    }
    if (takes_matvec(c, &d))
        return emit_matvec(c, dt, x->addr, w->addr, swiglu ? third->addr : 0, swiglu ? 0 : third->addr, o->addr, d.M, d.N,
                           d.K, d.row_bytes, swiglu ? 2 : 1);
    /* prefill: the GEMM (split-K or not) and an epilogue pass that adds r or applies SwiGLU */
    return vk_lower_dequant_gemm(c, d.M, d.N, d.K, d.row_bytes, swiglu ? 2 : 1, swiglu ? 0 : third->addr, swiglu ? third : NULL);
}

/*
 * RMS_DEQUANT_MATMUL (x, w, gamma) and RMS_DEQUANT_SWIGLU (x, wg, wu, gamma),
 * which the runtime folds per specialization where vk_i8_folds_norm holds:
 * one i8 matvec dispatch that normalizes x while it rounds it into shared
 * memory (tiers "dequant-i8-norm-..."), so a decoder layer's two norms cost
 * no dispatches (nor dependent stages) of their own.
 */
rlx_status vk_lower_rms_dequant(vk_lower_ctx *c) {
    char lb[160];
    bool swiglu = c->node->op == IR_OP_RMS_DEQUANT_SWIGLU;
    int nw = swiglu ? 3 : 2;   /* inputs before gamma */
    if (c->n_in != nw + 1) return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d inputs", vk_node_label(c, lb, sizeof lb), c->n_in);
    const vk_tensor *x = &c->in[0], *w = &c->in[1], *gamma = &c->in[nw], *o = &c->out;
    vk_lower_ctx s = *c;   /* the product's view: x, w (, wu) */
    s.n_in = nw;
    dq_dims d;
    rlx_status st = check_operands(&s, &d);
    if (st != RLX_OK) return st;
    if (gamma->dtype != RLX_F32 || gamma->numel != d.K)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: gamma must be f32 with K = %lld elements", vk_node_label(c, lb, sizeof lb),
                        (long long)d.K);
    if (o->numel == 0) {
        c->tier = "empty";
        return RLX_OK;
    }
    float eps = (float)ir_attr_rms_dequant_eps(c->node);
    /* wg and wu alike: checked by the shape rule (shape_rms_dequant) */
    if (takes_matvec(c, &d) && emit_matvec_i8(c, w->dtype, x->addr, w->addr, swiglu ? c->in[2].addr : 0, 0, o->addr, d.M,
                                              d.N, d.K, d.row_bytes, swiglu ? 2 : 0, (dq_norm){gamma->addr, eps}, NULL, &st))
        return st;
    /* The runtime folds a norm only where vk_i8_folds_norm holds, and params
     * and constants (gamma) are aligned, so the i8 kernel always takes it;
     * anything else is a host step (the CPU kernel), named in the report. */
    return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: the i8 matvec does not take this folded norm", vk_node_label(c, lb, sizeof lb));
}

/*
 * A rope / rope_kv_write / kv_write consumer (cons) of the product c (a
 * DEQUANT_MATMUL or RMS_DEQUANT_MATMUL) done in the i8 matvec's epilogue: it
 * stores its rows rotated and / or into the KV cache itself, so a decoder
 * layer loses the dependent stage between its q/k/v projections and
 * attention. Applies at M = 1 where the i8 matvec takes the product, x
 * [1, H, 1, D] with the rotary dims the whole head; anything else returns
 * RLX_STATUS_UNSUPPORTED with nothing emitted and no error set. The
 * DEQUANT_ROPE_KV lowering (below) and the fold's decision
 * (vk_backend_folds_epilogue) both go through here.
 */
rlx_status vk_dequant_epilogue(vk_lower_ctx *c, const vk_lower_ctx *cons) {
    const ir_node *cn = cons->node;
    const bool norm = c->node->op == IR_OP_RMS_DEQUANT_MATMUL;
    if ((c->node->op != IR_OP_DEQUANT_MATMUL && !norm) || c->n_in != (norm ? 3 : 2)) return RLX_STATUS_UNSUPPORTED;
    const bool rope = cn->op == IR_OP_ROPE || cn->op == IR_OP_ROPE_KV_WRITE;
    const bool kv = cn->op == IR_OP_KV_WRITE || cn->op == IR_OP_ROPE_KV_WRITE;
    if (!rope && !kv) return RLX_STATUS_UNSUPPORTED;
    const vk_tensor *xs = &cons->in[kv ? 1 : 0], *o = &cons->out;
    vk_lower_ctx s = *c;   /* the product's view: x, w */
    s.n_in = 2;
    dq_dims d;
    if (check_operands(&s, &d) != RLX_OK) {
        rlx_clear_error();
        return RLX_STATUS_UNSUPPORTED;
    }
    if (d.M != 1 || d.N == 0 || d.K == 0 || xs->dtype != RLX_F32 || xs->rank != 4 || xs->dims[0] != 1 ||
        xs->dims[2] != 1 || xs->numel != d.N || o->dtype != RLX_F32 || o->numel == 0 || !takes_matvec(c, &d))
        return RLX_STATUS_UNSUPPORTED;
    dq_epi ep;
    memset(&ep, 0, sizeof ep);
    ep.out = o->addr;
    ep.D = (uint32_t)xs->dims[3];
    if (rope) {
        const int style = (int)ir_attr_rope_style(cn);
        if ((ir_attr_rope_rotary_dims(cn) > 0 && ir_attr_rope_rotary_dims(cn) != xs->dims[3]) || (style != RLX_ROPE_GPTJ && style != RLX_ROPE_NEOX))
            return RLX_STATUS_UNSUPPORTED;   /* partial rotary dims stay with rope.comp */
        ep.rope = style == RLX_ROPE_GPTJ ? 1 : 2;
        ep.theta = ir_attr_rope_theta(cn);
        if (ir_attr_rope_has_offset(cn)) {
            const vk_tensor *off = &cons->in[kv ? 3 : 1];
            if (off->dtype != RLX_I32 || off->numel != 1) return RLX_STATUS_UNSUPPORTED;
            ep.off = off->addr;
        }
        if (ir_attr_rope_has_freq_factors(cn)) ep.ff = cons->in[cons->n_in - 1].addr;
        if (ep.ff && cons->in[cons->n_in - 1].dtype != RLX_F32) return RLX_STATUS_UNSUPPORTED;
    }
    if (kv) {
        const vk_tensor *cache = &cons->in[0], *pos = &cons->in[2];
        if (cache->dtype != RLX_F32 || cache->rank != 4 || cache->dims[0] != 1 || cache->dims[1] != xs->dims[1] ||
            cache->dims[3] != xs->dims[3] || pos->dtype != RLX_I32 || pos->numel != 1 || o->addr != cache->addr ||
            (uint64_t)cache->numel >= ((uint64_t)1 << 32))
            return RLX_STATUS_UNSUPPORTED;
        ep.kv = true;
        ep.pos = pos->addr;
        ep.C = (uint32_t)cache->dims[2];
    } else if (o->numel != d.N) {
        return RLX_STATUS_UNSUPPORTED;
    }
    const vk_tensor *x = &c->in[0], *w = &c->in[1];
    dq_norm nm = {0, 0};
    if (norm) {
        if (c->in[2].dtype != RLX_F32 || c->in[2].numel != d.K) return RLX_STATUS_UNSUPPORTED;
        nm = (dq_norm){c->in[2].addr, (float)ir_attr_rms_dequant_eps(c->node)};
    }
    rlx_status st = RLX_OK;
    if (!emit_matvec_i8(c, w->dtype, x->addr, w->addr, 0, 0, o->addr, 1, d.N, d.K, d.row_bytes, 0, nm, &ep, &st))
        return RLX_STATUS_UNSUPPORTED;
    static const char *const tiers[2][3] = {{"dequant-i8-rope", "dequant-i8-rope-kv", "dequant-i8-kv"},
                                            {"dequant-i8-norm-rope", "dequant-i8-norm-rope-kv", "dequant-i8-norm-kv"}};
    if (st == RLX_OK) c->tier = tiers[norm][rope ? (kv ? 1 : 0) : 2];
    return st;
}

/* DEQUANT_ROPE_KV (passes/fold_decode.c, where vk_backend_folds_epilogue
 * accepted it): the product and its consumer rebuilt as the two nodes they
 * were, lowered as one i8 matvec with the consumer in its epilogue. */
rlx_status vk_lower_dequant_rope_kv(vk_lower_ctx *c) {
    const ir_node *n = c->node;
    const bool norm = ir_attr_dequant_rope_kv_has_gamma(n) != 0;
    const int xi = ir_dequant_rope_kv_x(n), wi = ir_dequant_rope_kv_w(n);
    ir_node pn, cn;
    ir_dequant_rope_kv_product(n, &pn);
    ir_dequant_rope_kv_consumer(n, &cn);
    vk_lower_ctx cons = *c;
    cons.node = &cn;
    cons.n_in = wi;
    vk_tensor *v = &cons.in[xi];   /* the product's result as the consumer saw it */
    v->addr = 0;
    v->dtype = RLX_F32;
    v->rank = 4;
    v->dims[0] = ir_attr_dequant_rope_kv_view_b(n);
    v->dims[1] = ir_attr_dequant_rope_kv_view_h(n);
    v->dims[2] = ir_attr_dequant_rope_kv_view_s(n);
    v->dims[3] = ir_attr_dequant_rope_kv_view_d(n);
    v->numel = v->dims[0] * v->dims[1] * v->dims[2] * v->dims[3];
    vk_lower_ctx p = *c;
    p.node = &pn;
    p.n_in = pn.n_in;
    p.in[0] = c->in[xi];
    p.in[1] = c->in[wi];
    if (norm) p.in[2] = c->in[wi + 1];
    p.out = p.in[0];   /* the product's own result [.., N] (never stored: the consumer's is) */
    p.out.addr = 0;
    p.out.dims[p.out.rank - 1] = p.in[1].dims[0];
    p.out.numel = p.in[1].dims[1] ? p.in[0].numel / p.in[1].dims[1] * p.in[1].dims[0] : 0;
    rlx_status st = vk_dequant_epilogue(&p, &cons);
    /* the emitted work is this node's; its inputs and node stay as they were */
    const vk_lower_ctx self = *c;
    *c = p;
    c->node = self.node;
    c->n_in = self.n_in;
    memcpy(c->in, self.in, sizeof c->in);
    c->out = self.out;
    if (st == RLX_STATUS_UNSUPPORTED) {
        char lb[96];
        return rlx_fail(st, "%s: the i8 matvec does not take this product with its %s", vk_node_label(c, lb, sizeof lb),
                        ir_op_info_get(cn.op)->name);
    }
    return st;
}
