/*
 * vk_tuning.h — the Vulkan backend's tuning numbers for one device, in one
 * struct: the sizes and thresholds the lowerings and the run loop choose
 * kernels by, derived from the device's capabilities (vk_caps: compute
 * units, shared memory, subgroup size, software or not), and the diagnostic
 * overrides of them.
 *
 * vk_tuning_fill runs once per backend device (vk_backend_device_new, at
 * rlx_compile); it is the only place that reads the RLX_VK_* tuning
 * variables (docs/gpu.md, "Appendix: unsupported diagnostic and tuning
 * overrides"). Lowerings read the result through vk_lower_ctx.tuning and
 * never the environment. A field that is an override holds its "unset"
 * value (0, -1 or VK_TUNE_RULE) unless a variable set it; the lowering then
 * applies its own rule, which the field's comment names.
 */
#ifndef RLX_VK_TUNING_H
#define RLX_VK_TUNING_H

#include "vulkan/vk_lower.h"

/* A per-weight-type choice: the lowering's rule, or forced off / on. */
enum { VK_TUNE_RULE = -1, VK_TUNE_OFF = 0, VK_TUNE_ON = 1 };

struct vk_tuning {
    /* ---- derived from the capabilities ---- */
    uint32_t units;               /* compute units (SMs): caps.compute_units, else VK_TUNING_FALLBACK_UNITS */
    /* Prefill GEMMs (dequant_gemm.c): grids of fewer tiles than split_below
     * split K (about one tile per unit), Q8_0 weights below split_below_q8_0;
     * a split grid aims at split_target workgroups (two per unit). Both
     * thresholds 0 on a software device: it never splits by itself. */
    uint32_t split_below, split_below_q8_0, split_target;
    uint32_t mm_full_wave;        /* matmul.c: tiles that fill the device twice (larger tiles from there) */
    /* Decode matvecs (dequant_matmul.c): the fewest workgroups their group
     * shape keeps (rows of K >= 8192: matvec_min_tiles_long) */
    uint32_t matvec_min_tiles, matvec_min_tiles_long;
    uint32_t i8_grid_q8_0;        /* i8 matvec on Q8_0: most workgroups (one full wave); UINT32_MAX: no cap */
    /* Attention (attention.c): workgroups a split-key grid aims at, and the
     * grid below which it takes 16-row query tiles instead of 32 */
    uint32_t att_target_wgs, att_full_grid;
    /* Reductions (reduce.c): a float sum/mean/max/min whose outputs make
     * fewer first-pass tiles than red_split_wgs splits its reduced range
     * into chunks until tiles x chunks reaches it (one wave of 256-lane
     * workgroups at full occupancy; H200: 1056). 0: never split (software
     * devices, or RLX_VK_RED_SPLIT_WGS=0). */
    uint32_t red_split_wgs;
    uint64_t shared_bytes;        /* shared memory the prefill tiers plan with (caps, or RLX_VK_DQ_MM_SHARED less) */
    uint32_t spin_us;             /* longest fence poll of a segment; 0 on software devices */

    /* ---- overrides (diagnostics and tuning; unset: the rule) ---- */
    uint32_t dq_t, dq_nr, dq_swiglu_nr;   /* lanes per row group / rows per group; 0: rule */
    uint32_t dq_u;                        /* i8 matvec units per lane per step (default 1) */
    int32_t  dq_xrot;                     /* i8 matvec x rotation in values; -1: rule */
    uint32_t dq_i8_grid;                  /* i8 matvec grid cap for every type; 0: rule */
    bool     dq_run16;                    /* Q8_0 run matvec: 16-weight runs (default on) */
    int8_t   dq_run[RLX_DTYPE_COUNT];     /* run matvec takes the type (VK_TUNE_*) */
    int8_t   dq_i8[RLX_DTYPE_COUNT];      /* i8 matvec takes the type */
    int8_t   dq_pair[RLX_DTYPE_COUNT];    /* i8 matvec: a lane takes two adjacent units */
    uint32_t dq_mm[3];                    /* prefill coopmat fragments WM, WN, depth BK; 0: rule */
    int32_t  dq_splitk;                   /* prefill K splits (1: none); < 1: rule */
    int32_t  dq_split_tiles;              /* split grids below this many tiles, every type; -1: rule */
    uint32_t dq_f16_min_m;                /* prefill: rows of x from which weights are decoded to f16 for matmul_coopmat; 0: rule */
    uint32_t mm_tile[3];                  /* matmul.c tiled tier BM, BN, BK; 0: rule */
    uint32_t mm_coop[6];                  /* coop_gemm.c plan WM, WN, BK[, WGM, WGN, NBUF]; 0: rule */
    int32_t  mm_splitk;                   /* coop_gemm.c K splits (1: none); < 1: rule */
    uint32_t conv_tier;                   /* conv.c: 0 rule, 1 direct (conv.comp) only, 2 implicit GEMM where it applies */
    uint32_t ximage_mode;                 /* x images between decode matvecs: 0 none, 1 where they pay (default), 2 every pair */
    bool     force_host_all;              /* every node a host step */
    bool     force_host[IR_OP_COUNT];     /* these ops host steps */
};

/* Units assumed where the device does not report them (only NVIDIA's
 * VK_NV_shader_sm_builtins does): of the order of today's large discrete
 * GPUs (96-144 units), so that prefill grids still split where they are
 * small for such a device. */
#define VK_TUNING_FALLBACK_UNITS 128

/* Fills t for a device with caps: derived values, then the overrides the
 * environment sets (a malformed value is logged and ignored). */
void vk_tuning_fill(vk_tuning *t, const vk_caps *caps);

/* Overrides that decide how a logical device is created, read when one is
 * opened (vk_device.c): RLX_VK_NO_INT_DOT, RLX_VK_NO_COOPMAT and
 * RLX_VK_PIPELINE_STATS. */
typedef struct vk_open_overrides {
    bool no_int_dot, no_coopmat, pipeline_stats;
} vk_open_overrides;
vk_open_overrides vk_open_overrides_read(void);

#endif
