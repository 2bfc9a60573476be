/*
 * vk_chain.c — persistent decode chains. While a program records, runs of
 * consecutive decode matvec dispatches that the chain kernel can take
 * (vk_dq_chain_stage: Q8_0, one row of x; the run kernel's plain and
 * residual products, the i8 kernel's with a folded norm or SwiGLU) are
 * gathered as the stages of one dispatch of decode_chain.comp. Its
 * workgroups (one wave: one wide workgroup per SM, all resident) meet at a
 * grid barrier, a device counter, wherever the per-dispatch recording would
 * have put a pipeline barrier, and run on without one where it would not.
 *
 * Why: on the H200 a decode step's kernel boundaries, not its weight reads,
 * are what stands between the per-dispatch path and the bandwidth floor
 * (docs/gpu.md, "Where the next gain is"); a barrier inside one dispatch
 * costs a counter round trip instead of a drain, a launch and a ramp, and
 * the next stage's first weights are already in flight through it.
 *
 * Hazards: a stage's accesses are checked against the stages since the
 * chain's last wait (a conflict: the stage waits) and against what was
 * recorded before the chain (a conflict: a pipeline barrier goes before the
 * chain's dispatch). The recorder keeps every stage's accesses until its
 * next barrier, so the work after the chain is ordered against all of it.
 *
 * Residency: the grid barrier needs every workgroup resident. The grid is
 * one workgroup of 512 lanes per SM on a device that reports its SMs (the
 * lesson of the i8-kernel chain, docs/gpu.md: several narrow workgroups an
 * SM were not all resident even where registers allowed), and one
 * workgroup on a software device. A wait that spins too long
 * (RLX_VK_CHAIN_SPIN polls) stores a code in the status word, and the run
 * fails naming the chain instead of hanging.
 *
 * RLX_VK_CHAIN=1 turns chains on (default off: on the H200 still slower
 * than the per-dispatch path; bench/RESULTS.md, seventeenth session), also
 * on software devices (the tests). While profiling only when asked for;
 * RLX_VK_CHAIN_MAX=1 then makes each stage a chain of its own, which times
 * the chain kernel per stage. RLX_VK_CHAIN_U: units a lane a step, 4 or 2.
 * RLX_VK_CHAIN_ABL: timing ablations (decode_chain.comp's ABL; wrong
 * results), which measured where the chain's time goes (docs/gpu.md).
 */
#include "vulkan/vk_program_priv.h"
#include <stdlib.h>
#include <string.h>

#define CHAIN_SYNC_BYTES 64   /* a chain's counters (count, done), a cache line of their own */

/* Mirrors the push block of decode_chain.comp (std430). */
typedef struct chain_push {
    uint64_t stages, sync, status;
    uint32_t first, count, spin_limit, code;
} chain_push;
_Static_assert(sizeof(chain_push) == 40, "chain_push must match decode_chain.comp");
_Static_assert(sizeof(chain_push) <= VK_MAX_PUSH, "chain_push exceeds the push-constant budget");

static bool chain_wanted(const vk_program *p) {
    return p->ctx->caps.int_dot && rlx_env_int("RLX_VK_CHAIN", 0) != 0;
}

rlx_status vk_chain_setup(vk_program *p) {
    vk_chain_set *cs = &p->chain;
    memset(cs, 0, sizeof *cs);
    if (!chain_wanted(p)) return RLX_OK;
    const vk_caps *cp = &p->ctx->caps;
    bool hw = cp->compute_units != 0 && !cp->is_software;
    /* 512 lanes: the kernel takes 128 registers a lane on the H200, so one
     * workgroup fills an SM's register file (1024 lanes were not resident) */
    uint32_t lanes = 512;
    while (lanes > 64 && (lanes > cp->max_workgroup_invocations || lanes % cp->subgroup_size)) lanes /= 2;
    if (cp->subgroup_size < 4 || lanes % cp->subgroup_size) return RLX_OK;
    cs->lanes = lanes;
    /* software devices: one workgroup (lavapipe counts a loop's iterations
     * toward a limit, and ran two-workgroup chains wrong now and then;
     * bench/RESULTS.md, ninth session) */
    cs->groups = hw ? cp->compute_units : 1;
    /* a test hook: a grid that cannot all be resident reaches the timeout */
    int forced = rlx_env_int("RLX_VK_CHAIN_GROUPS", 0);
    if (forced > 0 && (uint32_t)forced <= cp->max_workgroup_count[0]) cs->groups = (uint32_t)forced;
    cs->U = rlx_env_int("RLX_VK_CHAIN_U", 4) == 2 ? 2u : 4u;
    cs->abl = (uint32_t)RLX_MAX(rlx_env_int("RLX_VK_CHAIN_ABL", 0), 0) & 31u;
    cs->max_stages = RLX_MAX(rlx_env_int("RLX_VK_CHAIN_MAX", 1 << 20), 1);
    /* polls before a wait gives up: seconds on a GPU, far past any stage */
    cs->spin_limit = (uint32_t)RLX_MAX(rlx_env_int("RLX_VK_CHAIN_SPIN", 1 << 22), 1);
    int n = RLX_MAX(p->g->n_nodes, 1);
    cs->cap_stages = n;   /* a stage a node at most, so a chain a node at most too */
    cs->stage_off = (VkDeviceSize)n * CHAIN_SYNC_BYTES;
    cs->stages = calloc((size_t)n, sizeof *cs->stages);
    if (!cs->stages) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
    rlx_status st = vk_buf_create(p->ctx, cs->stage_off + (VkDeviceSize)n * sizeof(vk_chain_stage), false,
                                  "decode chain stages", &cs->buf);
    if (st == RLX_OK) st = vk_fill_zero(p->ctx, &cs->buf);
    if (st == RLX_OK) cs->enabled = true;
    return st;
}

rlx_status vk_chain_offer(vk_program *p, recorder *r, int32_t node, const vk_dispatch *d, const vk_range *rd, int n_rd,
                          const vk_range *wr, int n_wr, bool *taken) {
    vk_chain_set *cs = &p->chain;
    *taken = false;
    if (!cs->enabled) return RLX_OK;
    vk_chain_stage st;
    if (!vk_dq_chain_stage(d, &st)) return RLX_OK;
    /* x must fit the chain kernel's shared memory (16 bytes a 16 values, 4 a 32) */
    if ((uint64_t)st.K + st.K / 8 + 1024 + 64 > p->ctx->caps.max_shared_memory) return RLX_OK;
    rlx_status s;
    if (cs->n_stages >= cs->cap_stages) return RLX_OK;
    if (cs->n == 0) {
        cs->first = cs->n_stages;
        cs->max_k = 0;
        cs->first_node = node;
        cs->lone = *d;
        cs->barrier_before = false;
        cs->mark_reads = r->n_reads;
        cs->mark_writes = r->n_writes;
        cs->n_rd = cs->n_wr = 0;
    }
    if (vk_ranges_conflict(r->reads, cs->mark_reads, r->writes, cs->mark_writes, rd, n_rd, wr, n_wr))
        cs->barrier_before = true;
    if (cs->n > 0 && vk_ranges_conflict(cs->rd, cs->n_rd, cs->wr, cs->n_wr, rd, n_rd, wr, n_wr)) {
        st.wait = 1;
        cs->n_waits++;
        cs->n_rd = cs->n_wr = 0;
    }
    if ((s = vk_push_ranges(&cs->rd, &cs->n_rd, &cs->cap_rd, rd, n_rd)) != RLX_OK ||
        (s = vk_push_ranges(&cs->wr, &cs->n_wr, &cs->cap_wr, wr, n_wr)) != RLX_OK ||
        (s = vk_rec_note(r, rd, n_rd, wr, n_wr)) != RLX_OK)
        return s;
    cs->stages[cs->n_stages++] = st;
    cs->n++;
    cs->max_k = RLX_MAX(cs->max_k, st.K);
    *taken = true;
    return cs->n >= cs->max_stages ? vk_chain_flush(p, r) : RLX_OK;
}

/* A pipeline barrier before the chain: what the recorder noted of the
 * chain's stages stays noted (the barrier orders only what came before the
 * chain), moved to the front of the emptied lists. */
static void barrier_keeping_chain(recorder *r, const vk_chain_set *cs) {
    int n_rd = r->n_reads - cs->mark_reads, n_wr = r->n_writes - cs->mark_writes;
    vk_rec_barrier(r);
    memmove(r->reads, r->reads + cs->mark_reads, sizeof *r->reads * (size_t)n_rd);
    memmove(r->writes, r->writes + cs->mark_writes, sizeof *r->writes * (size_t)n_wr);
    r->n_reads = n_rd;
    r->n_writes = n_wr;
    r->dirty = true;
}

rlx_status vk_chain_flush(vk_program *p, recorder *r) {
    vk_chain_set *cs = &p->chain;
    if (cs->n == 0) return RLX_OK;
    int n = cs->n;
    cs->n = 0;
    if (cs->barrier_before) barrier_keeping_chain(r, cs);
    if (n == 1 && cs->max_stages > 1) {   /* nothing to chain with: the dispatch as the lowering made it */
        cs->n_stages--;
        return vk_rec_dispatch(p, r, &cs->lone);
    }
    vk_dispatch d;
    memset(&d, 0, sizeof d);
    d.shader = "decode_chain";
    d.spec[0] = cs->lanes;
    d.spec[1] = cs->max_k;
    d.spec[2] = cs->U;
    d.spec[3] = cs->abl;
    d.n_spec = 4;
    chain_push pc = {.stages = cs->buf.addr + cs->stage_off + (uint64_t)cs->first * sizeof(vk_chain_stage),
                     .sync = cs->buf.addr + (uint64_t)cs->n_chains * CHAIN_SYNC_BYTES,
                     .status = p->io.addr + p->status_off,
                     .first = 0,
                     .count = (uint32_t)n,
                     .spin_limit = cs->spin_limit,
                     .code = VK_CHAIN_TIMEOUT_BIT | (uint32_t)(cs->first_node + 1)};
    memcpy(d.push, &pc, sizeof pc);
    d.push_bytes = sizeof pc;
    d.groups[0] = cs->groups;
    d.groups[1] = d.groups[2] = 1;
    cs->n_chains++;
    cs->n_replaced += n;
    return vk_rec_dispatch(p, r, &d);
}

rlx_status vk_chain_upload(vk_program *p) {
    vk_chain_set *cs = &p->chain;
    if (!cs->enabled || cs->n_stages == 0) return RLX_OK;
    return vk_upload(p->ctx, &cs->buf, cs->stage_off, cs->stages, (size_t)cs->n_stages * sizeof(vk_chain_stage));
}

void vk_chain_free(vk_program *p) {
    vk_chain_set *cs = &p->chain;
    vk_buf_destroy(p->ctx, &cs->buf);
    free(cs->stages);
    free(cs->rd);
    free(cs->wr);
    memset(cs, 0, sizeof *cs);
}
