/*
 * dequant_matmul.c — Vulkan lowering of DEQUANT_MATMUL (out[M, N] = x[M, K] ·
 * w[N, K]ᵀ with w in its storage type: f32, f16, bf16 or a GGUF block type)
 * and of GATHER_ROWS over a block-quantized table (called from gather.c).
 * The block decoders are shaders/quant_blocks.glsl, the GLSL twin of
 * src/io/quant.c and quant_k.c.
 *
 * Two regimes, chosen by M (rows of x):
 *  - M <= DQ_MATVEC_MAX_M (decode): "dequant-matvec-<type>", one dispatch of
 *    dequant_matvec.comp. Memory-bound: every weight byte is read once,
 *    decoded in registers and multiplied with all M rows of x; no scratch.
 *  - larger M (prefill): "dequant-tiled-<type>", two dispatches: decode all of
 *    w to f32 in the scratch buffer (dequant_rows.comp), then matmul.c's tiled
 *    f32 GEMM on it. Costs N*K*4 bytes of scratch (e.g. 64 MiB for a 4096 x
 *    4096 layer, 2.3 GiB for a 151936 x 4096 vocabulary projection) and one
 *    extra write + read of the decoded matrix, which is small next to the
 *    GEMM's O(M) re-reads at prefill sizes. f32 weights skip the decode.
 *
 * Tuning knob: RLX_VK_DQ_NR=1..4 sets the weight rows per subgroup of the
 * matvec (default 2 when there are enough rows to fill a large GPU, else 1).
 */
#include "vulkan/vk_lower.h"
#include <stdlib.h>
#include <string.h>

#define DQ_MATVEC_MAX_M 8
#define DQ_INDEX_LIMIT  ((int64_t)1 << 31)   /* shader element indices are 32-bit */
#define DQ_WIDE_GRID    64                   /* workgroups before NR = 2 pays */

/* Mirrors the push block of shaders/dequant_matvec.comp (std430). */
typedef struct dq_mv_push {
    uint64_t x, w, out;
    uint32_t M, N, K, row_bytes, tiles, pad0, pad1, pad2;
} dq_mv_push;
_Static_assert(sizeof(dq_mv_push) == 56, "dq_mv_push must match dequant_matvec.comp");
_Static_assert(sizeof(dq_mv_push) <= VK_MAX_PUSH, "dq_mv_push exceeds the push-constant budget");

/* Mirrors the push block of shaders/dequant_rows.comp (std430). */
typedef struct dq_rows_push {
    uint64_t src, ids, dst;
    uint32_t n, K, row_bytes, limit;
    uint64_t status;   /* word set to code when an id is out of range */
    uint32_t code, pad;
} dq_rows_push;
_Static_assert(sizeof(dq_rows_push) == 56, "dq_rows_push must match dequant_rows.comp");
_Static_assert(sizeof(dq_rows_push) <= VK_MAX_PUSH, "dq_rows_push exceeds the push-constant budget");

typedef struct dq_names { const char *matvec, *tiled, *rows; } dq_names;

#define DQ_NAMES(t) {"dequant-matvec-" t, "dequant-tiled-" t, "dequant-rows-" t}
static const dq_names NAMES[RLX_DTYPE_COUNT] = {
    [RLX_F32] = DQ_NAMES("f32"),   [RLX_F16] = DQ_NAMES("f16"),   [RLX_BF16] = DQ_NAMES("bf16"),
    [RLX_Q4_0] = DQ_NAMES("q4_0"), [RLX_Q4_1] = DQ_NAMES("q4_1"), [RLX_Q5_0] = DQ_NAMES("q5_0"),
    [RLX_Q5_1] = DQ_NAMES("q5_1"), [RLX_Q8_0] = DQ_NAMES("q8_0"), [RLX_Q2_K] = DQ_NAMES("q2_K"),
    [RLX_Q3_K] = DQ_NAMES("q3_K"), [RLX_Q4_K] = DQ_NAMES("q4_K"), [RLX_Q5_K] = DQ_NAMES("q5_K"),
    [RLX_Q6_K] = DQ_NAMES("q6_K"), [RLX_Q8_K] = DQ_NAMES("q8_K"),
};

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static const char *label(const vk_lower_ctx *c, char *buf, size_t n) {
    return ir_node_label(c->g, (int32_t)(c->node - c->g->nodes), buf, n);
}

static uint32_t max_groups(const vk_caps *caps, int axis) {
    uint32_t m = caps->max_workgroup_count[axis];
    return m ? m : 65535u;
}

/* Bytes per block of a block dtype (rows are whole blocks), 0 for other dtypes. */
static uint32_t block_bytes(rlx_dtype dt) {
    if (!rlx_dtype_is_quantized(dt)) return 0;
    int64_t be = dt >= RLX_Q2_K ? 256 : 32;
    return (uint32_t)rlx_tensor_bytes(dt, 1, &be);
}

/* Whether the shaders can read w: a dtype with a decoder, its loads aligned. */
static rlx_status check_weights(const vk_lower_ctx *c, const vk_tensor *w, const char *what) {
    char lb[160];
    rlx_dtype dt = w->dtype;
    bool known = dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16 ||
                 ((unsigned)dt < RLX_DTYPE_COUNT && NAMES[dt].matvec && rlx_dtype_is_quantized(dt));
    if (!known)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: no GPU decoder for %s %s", label(c, lb, sizeof lb), what,
                        rlx_dtype_name(dt));
    if (dt != RLX_F32 && !c->caps->storage_16bit)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s %s needs 16-bit storage buffers", label(c, lb, sizeof lb), what,
                        rlx_dtype_name(dt));
    if (w->addr % (dt == RLX_F32 ? 4 : 2))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %s is not aligned for the GPU decoder", label(c, lb, sizeof lb), what);
    return RLX_OK;
}

/* Emits dequant_rows.comp decoding rows of table (row_bytes, K elements each) to f32 at dst. */
static rlx_status emit_rows(vk_lower_ctx *c, const vk_tensor *table, const vk_tensor *ids, uint64_t dst,
                            uint64_t n_rows, int64_t K, uint64_t row_bytes, bool uses_scratch) {
    char lb[160];
    rlx_dtype dt = table->dtype;
    uint32_t bb = block_bytes(dt);
    uint64_t n = bb ? n_rows * (uint64_t)(K / 32) : n_rows * (uint64_t)K;
    if (n >= ((uint64_t)1 << 32) || n_rows * (uint64_t)K >= ((uint64_t)1 << 32) || row_bytes >= ((uint64_t)1 << 32) ||
        (uint64_t)table->dims[0] >= ((uint64_t)1 << 32))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: 2^32 or more elements to decode", label(c, lb, sizeof lb));
    dq_rows_push p;
    memset(&p, 0, sizeof p);
    p.src = table->addr;
    p.ids = ids ? ids->addr : 0;
    p.dst = dst;
    p.n = (uint32_t)n;
    p.K = (uint32_t)K;
    p.row_bytes = (uint32_t)row_bytes;
    p.limit = (uint32_t)table->dims[0];
    p.status = ids ? c->status_addr : 0;
    p.code = c->status_code;
    vk_dispatch *d = vk_emit(c, "dequant_rows", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)dt;
    d->spec[1] = !ids ? 0 : ids->dtype == RLX_I64 ? 2 : 1;
    d->spec[2] = bb % 4 == 0 && table->addr % 4 == 0;
    d->spec[3] = dst % 16 == 0;
    d->n_spec = 4;
    d->uses_scratch = uses_scratch;
    vk_grid_1d(c->caps, n, 256, d->groups);
    return RLX_OK;
}

rlx_status vk_lower_dequant_matmul(vk_lower_ctx *c) {
    char lb[160];
    if (c->n_in < 2) return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d inputs", label(c, lb, sizeof lb), c->n_in);
    const vk_tensor *x = &c->in[0], *w = &c->in[1], *o = &c->out;
    const vk_caps *cp = c->caps;
    rlx_dtype dt = w->dtype;
    if (x->dtype != RLX_F32 || o->dtype != RLX_F32)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: x and out must be f32, got %s and %s", label(c, lb, sizeof lb),
                        rlx_dtype_name(x->dtype), rlx_dtype_name(o->dtype));
    if (w->rank != 2) return rlx_fail(RLX_STATUS_SHAPE, "%s: w needs rank 2, got %d", label(c, lb, sizeof lb), w->rank);
    rlx_status st = check_weights(c, w, "weights");
    if (st) return st;
    int64_t N = w->dims[0], K = w->dims[1];
    int64_t M = K ? x->numel / K : (N ? o->numel / N : 0);
    if (M * K != x->numel || M * N != o->numel)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: x %lld, w [%lld, %lld], out %lld elements disagree",
                        label(c, lb, sizeof lb), (long long)x->numel, (long long)N, (long long)K, (long long)o->numel);
    if (o->numel == 0) {
        c->tier = "empty";
        return RLX_OK;
    }
    uint64_t row_bytes = rlx_tensor_bytes(dt, 1, &K);
    if (K && !row_bytes) return rlx_fail(RLX_STATUS_SHAPE, "%s: K = %lld is not whole blocks", label(c, lb, sizeof lb), (long long)K);
    if (M * K >= DQ_INDEX_LIMIT || M * N >= DQ_INDEX_LIMIT || row_bytes >= ((uint64_t)1 << 32) || N >= DQ_INDEX_LIMIT)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: 2^31 or more elements", label(c, lb, sizeof lb));
    if (K == 0) {   /* zeros: the GEMM's K = 0 path (w is never read) */
        c->tier = "dequant-empty-k";
        return vk_emit_matmul_f32_nt(c, x->addr, w->addr, o->addr, M, N, 0, false);
    }

    /* ---- decode shapes: dequant_matvec.comp ---- */
    uint32_t sgs = cp->subgroup_size;
    if (M <= DQ_MATVEC_MAX_M && sgs >= 4 && sgs <= 256 && 256 % sgs == 0) {
        uint32_t nsg = 256 / sgs;
        uint32_t nr = cdiv(N, 2 * nsg) >= DQ_WIDE_GRID ? 2 : 1;
        const char *env = getenv("RLX_VK_DQ_NR");
        if (env && env[0] >= '1' && env[0] <= '4' && env[1] == 0) nr = (uint32_t)(env[0] - '0');
        int64_t tiles = cdiv(N, (int64_t)nsg * nr);
        dq_mv_push p;
        memset(&p, 0, sizeof p);
        p.x = x->addr;
        p.w = w->addr;
        p.out = o->addr;
        p.M = (uint32_t)M;
        p.N = (uint32_t)N;
        p.K = (uint32_t)K;
        p.row_bytes = (uint32_t)row_bytes;
        p.tiles = (uint32_t)tiles;
        uint32_t bb = block_bytes(dt), vec = 0;
        uint64_t es = rlx_dtype_size(dt);
        if (K % 4 == 0 && x->addr % 16 == 0) vec |= 1;
        if (!bb && K % 4 == 0 && w->addr % (4 * es) == 0) vec |= 2;
        vk_dispatch *d = vk_emit(c, "dequant_matvec", &p, sizeof p);
        if (!d) return RLX_STATUS_INTERNAL;
        d->spec[0] = (uint32_t)dt;
        d->spec[1] = (uint32_t)M;
        d->spec[2] = nr;
        d->spec[3] = bb && bb % 4 == 0 && w->addr % 4 == 0;
        d->spec[4] = vec;
        d->n_spec = 5;
        d->groups[0] = (uint32_t)RLX_MIN(tiles, (int64_t)max_groups(cp, 0));
        d->groups[1] = 1;
        d->groups[2] = 1;
        c->tier = NAMES[dt].matvec;
        return RLX_OK;
    }

    /* ---- prefill: decode to f32 scratch, then the tiled f32 GEMM ---- */
    c->tier = NAMES[dt].tiled;
    if (dt == RLX_F32) return vk_emit_matmul_f32_nt(c, x->addr, w->addr, o->addr, M, N, K, false);
    if (N * K >= DQ_INDEX_LIMIT)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: decoded weights of 2^31 or more elements", label(c, lb, sizeof lb));
    c->scratch_bytes = ((uint64_t)N * (uint64_t)K * 4 + 255) & ~(uint64_t)255;
    st = emit_rows(c, w, NULL, c->scratch_addr, (uint64_t)N, K, row_bytes, true);
    if (st) return st;
    return vk_emit_matmul_f32_nt(c, x->addr, c->scratch_addr, o->addr, M, N, K, true);
}

rlx_status vk_lower_dequant_rows(vk_lower_ctx *c) {
    char lb[160];
    if (c->n_in < 2) return rlx_fail(RLX_STATUS_INTERNAL, "%s: %d inputs", label(c, lb, sizeof lb), c->n_in);
    const vk_tensor *t = &c->in[0], *ids = &c->in[1], *o = &c->out;
    if (ids->dtype != RLX_I32 && ids->dtype != RLX_I64)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: ids must be i32 or i64, got %s", label(c, lb, sizeof lb),
                        rlx_dtype_name(ids->dtype));
    if (!rlx_dtype_is_quantized(t->dtype) || o->dtype != RLX_F32 || t->rank < 2)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: expects a block-quantized table [V, ...] and f32 rows",
                        label(c, lb, sizeof lb));
    rlx_status st = check_weights(c, t, "table");
    if (st) return st;
    if (ids->dtype == RLX_I64 && ids->addr % 8)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: i64 ids are not 8-byte aligned", label(c, lb, sizeof lb));
    int64_t V = t->dims[0], K = V ? t->numel / V : 0;
    if (K == 0 || t->dims[0] == 0) {   /* nothing to decode from; the CPU decides what an empty table means */
        if (o->numel) return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: empty table", label(c, lb, sizeof lb));
    }
    c->tier = NAMES[t->dtype].rows;
    if (o->numel == 0) return RLX_OK;
    if (o->numel != ids->numel * K)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: output has %lld elements, expected %lld", label(c, lb, sizeof lb),
                        (long long)o->numel, (long long)(ids->numel * K));
    uint64_t row_bytes = rlx_tensor_bytes(t->dtype, t->rank - 1, t->dims + 1);
    if (!row_bytes || K % 32) return rlx_fail(RLX_STATUS_SHAPE, "%s: rows are not whole blocks", label(c, lb, sizeof lb));
    return emit_rows(c, t, ids, o->addr, (uint64_t)ids->numel, K, row_bytes, false);
}
