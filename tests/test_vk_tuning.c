/*
 * test_vk_tuning.c — the Vulkan tuning numbers (src/vulkan/vk_tuning.c):
 * derived from an H200's capabilities they are the values the decode and
 * prefill rules were measured with (132 SMs: split-K below 132 tiles, 300
 * for Q8_0, 264 workgroups; matvec groups kept at 256 / 512 workgroups; the
 * Q8_0 i8 grid one wave of 1056; attention splits aiming at 256; reduction
 * splits aiming at 1056), they follow the unit count on another
 * device, fall back when it is unknown, and a software device neither
 * splits nor polls; the environment's overrides parse, and a malformed one
 * is ignored.
 */
#include "harness.h"
#ifdef RLX_HAVE_VULKAN   /* src/vulkan is built only then */
#include "vulkan/vk_tuning.h"
#include <stdlib.h>
#include <string.h>

/* The overrides vk_tuning_fill reads that would change what these tests check. */
static const char *const knobs[] = {"RLX_VK_SPIN_US", "RLX_VK_DQ_MM_SHARED", "RLX_VK_DQ_RUN", "RLX_VK_DQ_T",
                                    "RLX_VK_FORCE_HOST", "RLX_VK_DQ_SPLIT_TILES", "RLX_VK_DQ_XROT",
                                    "RLX_VK_MM_COOP", "RLX_VK_MM_SPLITK", "RLX_VK_DQ_F16_M",
                                    "RLX_VK_RED_SPLIT_WGS"};
#define N_KNOBS (sizeof knobs / sizeof knobs[0])

static void knobs_clear(char **saved) {
    for (size_t i = 0; i < N_KNOBS; i++) saved[i] = test_env_swap(knobs[i], NULL);
}
static void knobs_restore(char **saved) {
    for (size_t i = 0; i < N_KNOBS; i++) test_env_restore(knobs[i], saved[i]);
}

static vk_caps h200_caps(void) {
    vk_caps c;
    memset(&c, 0, sizeof c);
    c.subgroup_size = 32;
    c.max_shared_memory = 232448;   /* 227 KiB */
    c.compute_units = 132;
    c.lanes_per_unit = 2048;        /* 64 warps */
    c.int_dot = c.coopmat_nv = c.shader_float16 = c.storage_16bit = true;
    return c;
}

TEST(vk_tuning_h200_values) {
    char *saved[N_KNOBS];
    knobs_clear(saved);
    vk_caps c = h200_caps();
    vk_tuning t;
    vk_tuning_fill(&t, &c);
    CHECK(t.units == 132);
    CHECK(t.split_below == 132 && t.split_below_q8_0 == 300 && t.split_target == 264);
    CHECK(t.mm_full_wave == 264);
    CHECK(t.matvec_min_tiles == 256 && t.matvec_min_tiles_long == 512);
    CHECK(t.att_target_wgs == 256 && t.att_full_grid == 512);
    CHECK(t.i8_grid_q8_0 == 1056);
    CHECK(t.shared_bytes == 232448 && t.spin_us == 20000);
    CHECK(t.red_split_wgs == 1056);   /* one wave of 256-lane workgroups: 132 x 8 */
    /* no override set: every rule applies */
    CHECK(t.dq_t == 0 && t.dq_nr == 0 && t.dq_u == 1 && t.dq_xrot == -1 && t.dq_run16 && t.dq_splitk == 0 &&
          t.dq_split_tiles == -1 && t.mm_tile[0] == 0 && !t.force_host_all);
    CHECK(t.dq_run[RLX_Q8_0] == VK_TUNE_RULE && t.dq_i8[RLX_Q4_K] == VK_TUNE_RULE);
    knobs_restore(saved);
}

TEST(vk_tuning_follows_the_device) {
    char *saved[N_KNOBS];
    knobs_clear(saved);
    vk_caps c = h200_caps();
    vk_tuning t;
    c.compute_units = 40;   /* a smaller GPU */
    c.lanes_per_unit = 1536;
    vk_tuning_fill(&t, &c);
    CHECK(t.split_below == 40 && t.split_target == 80 && t.split_below_q8_0 == 40 * 300 / 132);
    CHECK(t.matvec_min_tiles == 64 && t.matvec_min_tiles_long == 128 && t.i8_grid_q8_0 == 40 * 6);
    CHECK(t.red_split_wgs == 40 * 6);
    c.compute_units = 0;   /* not reported */
    c.lanes_per_unit = 0;
    vk_tuning_fill(&t, &c);
    CHECK(t.units == VK_TUNING_FALLBACK_UNITS && t.split_below == VK_TUNING_FALLBACK_UNITS);
    CHECK(t.i8_grid_q8_0 == UINT32_MAX);   /* no cap without the lanes per unit */
    CHECK(t.red_split_wgs == 8 * VK_TUNING_FALLBACK_UNITS);   /* 2048 lanes a unit assumed */
    c = h200_caps();
    c.is_software = true;
    vk_tuning_fill(&t, &c);
    CHECK(t.split_below == 0 && t.split_below_q8_0 == 0 && t.spin_us == 0 && t.red_split_wgs == 0);
    knobs_restore(saved);
}

TEST(vk_tuning_overrides_parse) {
    char *saved[N_KNOBS];
    knobs_clear(saved);
    vk_caps c = h200_caps();
    vk_tuning t;
    free(test_env_swap("RLX_VK_DQ_RUN", "q8_0,q6_K"));
    free(test_env_swap("RLX_VK_DQ_T", "not a number"));   /* logged and ignored */
    free(test_env_swap("RLX_VK_FORCE_HOST", "attention,rms_norm"));
    free(test_env_swap("RLX_VK_DQ_MM_SHARED", "16384"));
    free(test_env_swap("RLX_VK_SPIN_US", "0"));
    free(test_env_swap("RLX_VK_DQ_SPLIT_TILES", "7"));
    free(test_env_swap("RLX_VK_DQ_XROT", "64"));
    free(test_env_swap("RLX_VK_RED_SPLIT_WGS", "0"));   /* never split */
    vk_tuning_fill(&t, &c);
    CHECK(t.dq_run[RLX_Q8_0] == VK_TUNE_ON && t.dq_run[RLX_Q6_K] == VK_TUNE_ON && t.dq_run[RLX_Q4_K] == VK_TUNE_OFF);
    CHECK(t.dq_t == 0);
    CHECK(t.force_host[IR_OP_ATTENTION] && t.force_host[IR_OP_RMS_NORM] && !t.force_host[IR_OP_MATMUL] && !t.force_host_all);
    CHECK(t.shared_bytes == 16384 && t.spin_us == 0 && t.dq_split_tiles == 7 && t.dq_xrot == 64);
    CHECK(t.red_split_wgs == 0);
    knobs_restore(saved);   /* restores the values knobs_clear saved, not those set here */
}
/* The coopmat matmul plan: three or six fields, each in range, else ignored. */
TEST(vk_tuning_coop_plan_override) {
    char *saved[N_KNOBS];
    knobs_clear(saved);
    vk_caps c = h200_caps();
    vk_tuning t;
    vk_tuning_fill(&t, &c);
    CHECK(t.mm_coop[0] == 0 && t.mm_splitk == 0 && t.dq_f16_min_m == 0);   /* unset: the rule */
    free(test_env_swap("RLX_VK_DQ_F16_M", "16"));
    vk_tuning_fill(&t, &c);
    CHECK(t.dq_f16_min_m == 16);
    free(test_env_swap("RLX_VK_DQ_F16_M", "0"));   /* below the range: logged and ignored */
    vk_tuning_fill(&t, &c);
    CHECK(t.dq_f16_min_m == 0);
    free(test_env_swap("RLX_VK_MM_COOP", "4x2x64x2x4x1"));
    free(test_env_swap("RLX_VK_MM_SPLITK", "3"));
    vk_tuning_fill(&t, &c);
    CHECK(t.mm_coop[0] == 4 && t.mm_coop[1] == 2 && t.mm_coop[2] == 64 && t.mm_coop[3] == 2 && t.mm_coop[4] == 4 &&
          t.mm_coop[5] == 1 && t.mm_splitk == 3);
    free(test_env_swap("RLX_VK_MM_COOP", "2x4x32"));   /* the short form leaves the subgroup grid to the rule */
    vk_tuning_fill(&t, &c);
    CHECK(t.mm_coop[0] == 2 && t.mm_coop[1] == 4 && t.mm_coop[2] == 32 && t.mm_coop[3] == 0 && t.mm_coop[5] == 0);
    static const char *bad[] = {"4x2x48", "5x2x64", "4x2x64x2x4", "4x2x64x2x4x3", "4x2x64x0x4x1", "4x2x64x2x4x1x", "x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        free(test_env_swap("RLX_VK_MM_COOP", bad[i]));   /* logged and ignored */
        vk_tuning_fill(&t, &c);
        CHECK_MSG(t.mm_coop[0] == 0 && t.mm_coop[5] == 0, "RLX_VK_MM_COOP=%s", bad[i]);
    }
    knobs_restore(saved);
}
#endif
