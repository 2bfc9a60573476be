/*
 * attention_o.c — decode attention and the o projection that reads it as one
 * dispatch of shaders/attention_o.comp (its header has the layout and the
 * why). vk_program.c's plan_absorptions offers the pair (the attention's
 * epilogue is the DEQUANT_MATMUL_ADD after it); this lowering takes it where
 * the shapes fit and returns RLX_STATUS_UNSUPPORTED otherwise, and the two
 * nodes then lower alone.
 *
 * Fits: one query row (B = Sq = 1), f32 q / k / v, no mask or a causal one
 * (one row sees every key in use), D % 4 == 0 and <= 256, a kv head's group
 * of columns whole Q8_0 blocks; W Q8_0 [N, H * D] (planar rows, 8-byte
 * aligned), res and out f32 [N].
 */
#include "vulkan/vk_lower.h"

#include "core/core.h"   /* rlx_env_int */

#include <string.h>

typedef struct att_o_push {
    uint64_t q, k, v, kvlen, w, res, out, part, counters;
    uint32_t Skv, N, K, row_bytes;
    uint32_t rows;
    float    scale_log2;
    uint32_t pad0, pad1;
} att_o_push;
_Static_assert(sizeof(att_o_push) == 104, "att_o_push must match attention_o.comp");
_Static_assert(sizeof(att_o_push) <= VK_MAX_PUSH, "att_o_push exceeds the push-constant budget");

#define ATT_O_MAX_D      256
#define ATT_O_MAX_WALK   16   /* subgroups that walk the keys */
#define ATT_O_WG_UNITS   128  /* workgroups to aim for where the device does not report its SMs */

static uint64_t att_o_shared(uint64_t na, uint64_t gh, uint64_t D) {
    return na * gh * D * 4 + na * gh * 8 + gh * D * 4 + 16;
}

rlx_status vk_lower_attention_o(vk_lower_ctx *c, const vk_lower_ctx *o) {
    const vk_caps *cp = c->caps;
    const ir_node *an = c->node;
    if (o->node->op != IR_OP_DEQUANT_MATMUL_ADD || o->n_in < 3 || c->n_in < 3 || !cp->int_dot) return RLX_STATUS_UNSUPPORTED;
    const vk_tensor *q = &c->in[0], *k = &c->in[1], *v = &c->in[2];
    const vk_tensor *w = &o->in[1], *res = &o->in[2], *out = &o->out;
    const int kind = (int)an->ia[0];
    if (kind != RLX_MASK_NONE && kind != RLX_MASK_CAUSAL) return RLX_STATUS_UNSUPPORTED;
    if (q->dtype != RLX_F32 || k->dtype != RLX_F32 || v->dtype != RLX_F32 || q->rank != 4 || k->rank != 4 ||
        v->rank != 4 || memcmp(k->dims, v->dims, sizeof k->dims) != 0)
        return RLX_STATUS_UNSUPPORTED;
    const int64_t H = q->dims[1], D = q->dims[3], Hkv = k->dims[1], Skv = k->dims[2];
    if (q->dims[0] != 1 || q->dims[2] != 1 || k->dims[0] != 1 || k->dims[3] != D || Hkv <= 0 || H % Hkv != 0 ||
        D % 4 != 0 || D > ATT_O_MAX_D || Skv <= 0)
        return RLX_STATUS_UNSUPPORTED;
    const int64_t GH = H / Hkv, KS = GH * D, K = H * D;
    if (KS % 32 != 0 || w->dtype != RLX_Q8_0 || w->rank != 2 || w->dims[1] != K) return RLX_STATUS_UNSUPPORTED;
    const int64_t N = w->dims[0];
    if (N <= 0 || res->dtype != RLX_F32 || res->numel != N || out->dtype != RLX_F32 || out->numel != N ||
        c->out.numel != K)
        return RLX_STATUS_UNSUPPORTED;
    const uint64_t row_bytes = (uint64_t)K / 32 * 34;
    if (row_bytes % 8 != 0 || w->addr % 8 != 0 || q->addr % 16 != 0 || k->addr % 16 != 0 || v->addr % 16 != 0 ||
        k->numel >= ((int64_t)1 << 31) || N * Hkv >= ((int64_t)1 << 31) || N * (int64_t)row_bytes >= ((int64_t)1 << 40))
        return RLX_STATUS_UNSUPPORTED;

    const uint32_t S = cp->subgroup_size;
    if (S < 4 || S > 128) return RLX_STATUS_UNSUPPORTED;
    uint32_t lanes = cp->compute_units && !cp->is_software ? 512 : 256;
    int forced_lanes = rlx_env_int("RLX_VK_ATT_O_LANES", 0);
    if (forced_lanes >= 32 && forced_lanes <= 1024) lanes = (uint32_t)forced_lanes;
    while (lanes > S && (lanes > cp->max_workgroup_invocations || lanes % S != 0)) lanes /= 2;
    if (lanes % S != 0 || lanes < S) return RLX_STATUS_UNSUPPORTED;
    const uint32_t nsg = lanes / S;
    const uint64_t smax = cp->max_shared_memory ? cp->max_shared_memory : 16384;
    uint32_t na = RLX_MIN(nsg, ATT_O_MAX_WALK);
    while (na > 1 && att_o_shared(na, (uint64_t)GH, (uint64_t)D) > smax) na--;
    if (att_o_shared(na, (uint64_t)GH, (uint64_t)D) > smax) return RLX_STATUS_UNSUPPORTED;
    const uint32_t sl = (uint32_t)((D / 4 + S - 1) / S), ut = (uint32_t)((KS / 8 + S - 1) / S);
    if (sl > 8 || ut > 16) return RLX_STATUS_UNSUPPORTED;   /* registers: a lane's slots of a head, of a row */
    uint32_t pf = RLX_MAX(1u, RLX_MIN(8u, 16u / ut));
    int forced_pf = rlx_env_int("RLX_VK_ATT_O_PF", 0);
    if (forced_pf >= 1 && forced_pf <= 16) pf = (uint32_t)forced_pf;
    int kb = rlx_env_int("RLX_VK_ATT_O_KB", 2);
    if (kb < 1 || kb > 8) kb = 2;

    /* chunks of o's rows: about one workgroup per SM in all */
    int64_t chunks = (cp->compute_units ? cp->compute_units : ATT_O_WG_UNITS) * RLX_MAX(rlx_env_int("RLX_VK_ATT_O_WAVES", 1), 1) / Hkv;
    if (chunks < 1) chunks = 1;
    if (chunks > N) chunks = N;
    const int64_t rows = (N + chunks - 1) / chunks;
    chunks = (N + rows - 1) / rows;
    if ((uint64_t)chunks > vk_max_groups(cp, 0) || (uint64_t)Hkv > vk_max_groups(cp, 1)) return RLX_STATUS_UNSUPPORTED;

    c->tier = "attention-o-q8_0";
    c->scratch_bytes = (uint64_t)Hkv * (uint64_t)N * sizeof(float);
    c->counter_words = (uint32_t)chunks;
    att_o_push pc;
    memset(&pc, 0, sizeof pc);
    pc.q = q->addr;
    pc.k = k->addr;
    pc.v = v->addr;
    if (an->ia[1]) pc.kvlen = c->in[c->n_in - 1].addr;   /* active extent, read on the device */
    pc.w = w->addr;
    pc.res = res->addr;
    pc.out = out->addr;
    pc.part = c->scratch_addr;
    pc.counters = c->counters_addr;
    pc.Skv = (uint32_t)Skv;
    pc.N = (uint32_t)N;
    pc.K = (uint32_t)K;
    pc.row_bytes = (uint32_t)row_bytes;
    pc.rows = (uint32_t)rows;
    pc.scale_log2 = (float)(an->fa[0] * 1.4426950408889634);
    vk_dispatch *d = vk_emit(c, "attention_o", &pc, sizeof pc);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = lanes;
    d->spec[1] = (uint32_t)D;
    d->spec[2] = (uint32_t)GH;
    d->spec[3] = sl;
    d->spec[4] = na;
    d->spec[5] = ut;
    d->spec[6] = pf;
    d->spec[7] = (uint32_t)kb;   /* keys a walker loads together */
    d->spec[8] = (uint32_t)RLX_MAX(rlx_env_int("RLX_VK_ATT_O_ABL", 0), 0) & 7u;   /* timing ablations: wrong results */
    d->n_spec = 9;
    d->groups[0] = (uint32_t)chunks;
    d->groups[1] = (uint32_t)Hkv;
    d->groups[2] = 1;
    d->uses_scratch = true;
    return RLX_OK;
}
