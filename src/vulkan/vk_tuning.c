/*
 * vk_tuning.c — fills vk_tuning (vk_tuning.h) for a device: each derived
 * value from the capabilities, with how it is derived and the H200 value it
 * gives (132 SMs of 2048 lanes, 227 KiB of shared memory, subgroups of 32),
 * which is what the measurements behind each rule used; then the
 * environment's overrides, the only reads of RLX_VK_* tuning variables.
 */
#include "vulkan/vk_tuning.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest power of two <= n (n >= 1). */
static uint32_t pow2_floor(uint32_t n) {
    uint32_t p = 1;
    while (p <= n / 2) p *= 2;
    return p;
}

static void fill_derived(vk_tuning *t, const vk_caps *cp) {
    t->units = cp->compute_units ? cp->compute_units : VK_TUNING_FALLBACK_UNITS;
    /* about one tile per unit: each workgroup of a grid this small walks all
     * of K alone while units idle (H200: 132) */
    t->split_below = t->units;
    /* Q8_0's planar rows made its unsplit GEMMs slower and split ones faster:
     * measured best at 300 tiles on the H200 (llm_bench, bench/HISTORY.md, 2026-11-30, 8B Q8_0
     * SwiGLU GEMMs of 224 tiles at 128 tokens), scaled by units: 300 / 132
     * tiles a unit (H200: 300) */
    t->split_below_q8_0 = (uint32_t)((uint64_t)t->units * 300 / 132);
    t->split_target = 2 * t->units;   /* two workgroups a unit (H200: 264) */
    if (cp->is_software) t->split_below = t->split_below_q8_0 = 0;   /* a few CPU cores gain nothing */
    t->mm_full_wave = 2 * t->units;   /* H200: 264 */
    /* two (four for long rows) workgroups a unit, rounded down to a power of
     * two: the tile counts compared with it are N over powers of two
     * (H200: 256 and 512) */
    t->matvec_min_tiles = pow2_floor(2 * t->units);
    t->matvec_min_tiles_long = pow2_floor(4 * t->units);
    /* attention alike: two (four) workgroups a unit, rounded down to a power
     * of two (H200: 256 and 512) */
    t->att_target_wgs = pow2_floor(2 * t->units);
    t->att_full_grid = pow2_floor(4 * t->units);
    /* one wave of 256-lane workgroups at full occupancy, where the device
     * says how many lanes a unit holds (H200: 132 x 8 = 1056); else no cap */
    t->i8_grid_q8_0 = cp->compute_units && cp->lanes_per_unit >= 256 ? cp->compute_units * (cp->lanes_per_unit / 256)
                                                                      : UINT32_MAX;
    /* a reduction's split aims at one wave of 256-lane workgroups at full
     * occupancy where the device says how many lanes a unit holds (H200:
     * 132 x 8 = 1056), else 8 a unit (2048 lanes, as today's large GPUs:
     * 1024 at the fallback units). None on software devices: lavapipe runs
     * one workgroup per core, and on a few cores the split's second pass and
     * per-workgroup barriers cost more than the cores it spreads over gain
     * (a full 38M-element sum took 2x longer split on 2 cores). */
    t->red_split_wgs = cp->compute_units && cp->lanes_per_unit >= 256 ? cp->compute_units * (cp->lanes_per_unit / 256)
                                                                       : 8 * t->units;
    if (cp->is_software) t->red_split_wgs = 0;
    t->shared_bytes = cp->max_shared_memory;
    /* a software device runs on the cores a poll would take */
    t->spin_us = cp->is_software ? 0 : 20000;
}

/* An integer variable in [lo, hi]; false (and a warning for a malformed
 * one) when unset or not such an integer. */
static bool env_long(const char *name, long lo, long hi, long *out) {
    const char *v = getenv(name);
    if (!v || !*v) return false;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < lo || n > hi) {
        rlx_log_msg(RLX_LOG_WARN, "ignoring %s='%s': not an integer in [%ld, %ld]", name, v, lo, hi);
        return false;
    }
    *out = n;
    return true;
}

static void env_u32(const char *name, uint32_t lo, uint32_t hi, uint32_t *field) {
    long n;
    if (env_long(name, (long)lo, (long)hi, &n)) *field = (uint32_t)n;
}

static void env_i32(const char *name, int32_t lo, int32_t hi, int32_t *field) {
    long n;
    if (env_long(name, lo, hi, &n)) *field = (int32_t)n;
}

/* "0": no type, "1": every type, else a list of type names (rlx_dtype_name:
 * "q8_0,q4_K"): those on, the others off; unset: the rule. */
static void env_types(const char *name, int8_t *field) {
    const char *v = getenv(name);
    for (int d = 0; d < RLX_DTYPE_COUNT; d++) field[d] = VK_TUNE_RULE;
    if (!v || !*v) return;
    for (int d = 0; d < RLX_DTYPE_COUNT; d++)
        field[d] = strcmp(v, "0") == 0 ? VK_TUNE_OFF
                 : strcmp(v, "1") == 0 ? VK_TUNE_ON
                 : rlx_list_has(v, rlx_dtype_name((rlx_dtype)d)) ? VK_TUNE_ON : VK_TUNE_OFF;
}

/* "AxBxC" with A and B in {a0, a1}, C in {c0, c1}. */
static void env_shape(const char *name, uint32_t a0, uint32_t a1, uint32_t c0, uint32_t c1, uint32_t *field) {
    const char *v = getenv(name);
    unsigned a, b, c;
    char tail;
    if (!v || !*v) return;
    if (sscanf(v, "%ux%ux%u%c", &a, &b, &c, &tail) == 3 && (a == a0 || a == a1) && (b == a0 || b == a1) &&
        (c == c0 || c == c1)) {
        field[0] = a, field[1] = b, field[2] = c;
        return;
    }
    rlx_log_msg(RLX_LOG_WARN, "ignoring %s='%s': not AxBxC with A, B in {%u, %u} and C in {%u, %u}", name, v, a0, a1,
                c0, c1);
}

/* RLX_VK_MM_COOP: "WMxWNxBK" or "WMxWNxBKxWGMxWGNxNBUF", WM, WN in 1..4, BK
 * in {32, 64}, WGM, WGN in 1..4, NBUF in {1, 2}. */
static void env_coop_plan(uint32_t *field) {
    const char *v = getenv("RLX_VK_MM_COOP");
    unsigned f[6] = {0, 0, 0, 0, 0, 0};
    char tail;
    if (!v || !*v) return;
    int n = sscanf(v, "%ux%ux%ux%ux%ux%u%c", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &tail);
    bool ok = (n == 3 || n == 6) && f[0] >= 1 && f[0] <= 4 && f[1] >= 1 && f[1] <= 4 && (f[2] == 32 || f[2] == 64);
    if (ok && n == 6) ok = f[3] >= 1 && f[3] <= 4 && f[4] >= 1 && f[4] <= 4 && (f[5] == 1 || f[5] == 2);
    if (!ok) {
        rlx_log_msg(RLX_LOG_WARN, "ignoring RLX_VK_MM_COOP='%s': not WMxWNxBK[xWGMxWGNxNBUF] (1-4, 1-4, 32|64, 1-4, 1-4, 1|2)", v);
        return;
    }
    for (int i = 0; i < 6; i++) field[i] = f[i];
}

/* "1": every op; "0" or unset: none; else a comma-separated list of op names. */
static void env_force_host(vk_tuning *t) {
    const char *v = getenv("RLX_VK_FORCE_HOST");
    if (!v || !*v || strcmp(v, "0") == 0) return;
    if (strcmp(v, "1") == 0) {
        t->force_host_all = true;
        return;
    }
    for (int op = 0; op < IR_OP_COUNT; op++) t->force_host[op] = rlx_list_has(v, ir_op_info_get((ir_op)op)->name);
}

static void fill_overrides(vk_tuning *t) {
    env_u32("RLX_VK_DQ_T", 1, 256, &t->dq_t);
    env_u32("RLX_VK_DQ_NR", 1, 4, &t->dq_nr);
    env_u32("RLX_VK_DQ_SWIGLU_NR", 1, 2, &t->dq_swiglu_nr);
    t->dq_u = 1;
    env_u32("RLX_VK_DQ_U", 1, 4, &t->dq_u);
    t->dq_xrot = -1;
    env_i32("RLX_VK_DQ_XROT", 0, 4096, &t->dq_xrot);
    env_u32("RLX_VK_DQ_I8_GRID", 1, 0x7fffffff, &t->dq_i8_grid);
    int32_t run16 = 1;
    env_i32("RLX_VK_DQ_RUN16", 0, 1, &run16);
    t->dq_run16 = run16 != 0;
    env_types("RLX_VK_DQ_RUN", t->dq_run);
    env_types("RLX_VK_DQ_I8", t->dq_i8);
    env_types("RLX_VK_DQ_PAIR", t->dq_pair);
    env_shape("RLX_VK_DQ_MM", 2, 4, 32, 64, t->dq_mm);
    env_i32("RLX_VK_DQ_SPLITK", -1000000, 1000000, &t->dq_splitk);   /* < 1: the rule */
    t->dq_split_tiles = -1;
    env_i32("RLX_VK_DQ_SPLIT_TILES", -1000000, 1000000, &t->dq_split_tiles);
    if (t->dq_split_tiles < -1) t->dq_split_tiles = 0;   /* below no grid: never split */
    env_u32("RLX_VK_DQ_F16_M", 1, 0x7fffffff, &t->dq_f16_min_m);
    long shared;
    if (env_long("RLX_VK_DQ_MM_SHARED", 1, 0x7fffffff, &shared) && (uint64_t)shared < t->shared_bytes)
        t->shared_bytes = (uint64_t)shared;
    /* tiled tier: BM, BN in {64, 128}, BK in {8, 16} */
    const char *tile = getenv("RLX_VK_MM_TILE");
    unsigned bm, bn, bk;
    char tail;
    if (tile && *tile) {
        if (sscanf(tile, "%ux%ux%u%c", &bm, &bn, &bk, &tail) == 3 && (bm == 64 || bm == 128) && (bn == 64 || bn == 128) &&
            (bk == 8 || bk == 16))
            t->mm_tile[0] = bm, t->mm_tile[1] = bn, t->mm_tile[2] = bk;
        else
            rlx_log_msg(RLX_LOG_WARN, "ignoring RLX_VK_MM_TILE='%s': not BMxBNxBK in {64,128}x{64,128}x{8,16}", tile);
    }
    env_coop_plan(t->mm_coop);
    env_i32("RLX_VK_MM_SPLITK", -1000000, 1000000, &t->mm_splitk);   /* < 1: the rule */
    env_u32("RLX_VK_RED_SPLIT_WGS", 0, 1u << 24, &t->red_split_wgs);
    env_u32("RLX_VK_CONV_TIER", 0, 2, &t->conv_tier);
    long spin;
    if (env_long("RLX_VK_SPIN_US", -1000000, 1000000, &spin)) t->spin_us = spin > 0 ? (uint32_t)spin : 0;
    long xim;
    if (env_long("RLX_VK_XIMAGE", 0, 2, &xim)) t->ximage_mode = (uint32_t)xim;
    env_force_host(t);
}

void vk_tuning_fill(vk_tuning *t, const vk_caps *caps) {
    memset(t, 0, sizeof *t);
    fill_derived(t, caps);
    t->ximage_mode = 1;
    fill_overrides(t);
}

vk_open_overrides vk_open_overrides_read(void) {
    return (vk_open_overrides){.no_int_dot = rlx_env_int("RLX_VK_NO_INT_DOT", 0) != 0,
                               .no_coopmat = rlx_env_int("RLX_VK_NO_COOPMAT", 0) != 0,
                               .pipeline_stats = rlx_env_int("RLX_VK_PIPELINE_STATS", 0) != 0};
}
