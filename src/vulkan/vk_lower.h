/*
 * vk_lower.h — the contract between the Vulkan backend's core (device,
 * memory, recording, run) and its op lowerings (src/vulkan/lower/).
 *
 * A lowering turns one node of a specialized graph (static shapes) into one
 * or more compute dispatches. Every tensor is addressed by its 64-bit buffer
 * device address (DESIGN.md 6.2): shaders receive addresses in push
 * constants and declare GL_EXT_buffer_reference types, so no descriptor sets
 * exist and no tensor is ever re-windowed because of its offset.
 *
 * A lowering returns RLX_OK with dispatches, or RLX_STATUS_UNSUPPORTED (with
 * a reason via rlx_fail) for cases it does not cover; the core then runs the
 * node as an explicit host step and reports it. Any other status is an error.
 *
 * Lowerings are pure: the core calls them twice, once with
 * ctx->scratch_addr == 0 to learn ctx->scratch_bytes, then again with the
 * real scratch address to emit. They must emit the same dispatches both times.
 */
#ifndef RLX_VK_LOWER_H
#define RLX_VK_LOWER_H

#include "ir/ir.h"

#define VK_MAX_SPEC       16
#define VK_MAX_PUSH       128   /* the Vulkan minimum of maxPushConstantsSize */
#define VK_MAX_DISPATCHES 8     /* per node */
/* Most split-key attention partials the i8 matvec combines as it reads x
 * (attention's combine fold; dequant_matmul.c, attention.c) */
#define VK_COMB_MAX_SPLITS 8

/* The device's tuning numbers and their overrides (vk_tuning.h). */
typedef struct vk_tuning vk_tuning;

/* Device features a lowering may choose from (probed once per device). */
typedef struct vk_caps {
    uint32_t subgroup_size;
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_count[3];
    uint32_t max_shared_memory;
    bool     shader_float16;       /* f16 arithmetic in shaders */
    bool     storage_16bit;        /* f16/bf16 loads and stores in storage buffers */
    bool     shader_int64;
    bool     coopmat_nv;           /* VK_NV_cooperative_matrix usable: f16 x f16 -> f32, 16x16x16 (probed) */
    bool     coopmat_khr;          /* VK_KHR_cooperative_matrix present (reported; no shaders yet) */
    bool     int_dot;              /* packed 4x8-bit integer dot products (OpSDot) and subgroup shuffles */
    bool     is_software;          /* lavapipe and other CPU devices */
    uint32_t compute_units;        /* SMs (VK_NV_shader_sm_builtins); 0: unknown */
    uint32_t lanes_per_unit;       /* lanes resident on one SM at full occupancy; 0: unknown */
} vk_caps;

/* A tensor as a lowering sees it: address + dense row-major shape. */
typedef struct vk_tensor {
    uint64_t  addr;
    rlx_dtype dtype;
    int       rank;
    int64_t   dims[IR_MAX_RANK];
    int64_t   numel;
} vk_tensor;

typedef struct vk_dispatch {
    const char *shader;                 /* base name of src/vulkan/shaders/<name>.comp */
    uint32_t    spec[VK_MAX_SPEC];      /* specialization constants, constant_id 0..n_spec-1 */
    int         n_spec;
    uint8_t     push[VK_MAX_PUSH];      /* push-constant bytes (std430 layout of the shader's block) */
    uint32_t    push_bytes;
    uint32_t    groups[3];              /* workgroup counts; each <= caps.max_workgroup_count */
    bool        uses_scratch;           /* reads or writes the scratch buffer */
} vk_dispatch;

typedef enum vk_precision {
    VK_PRECISION_F32  = 0,   /* f32 semantics */
    VK_PRECISION_FAST = 1,   /* f16/bf16 operands with f32 accumulation allowed */
} vk_precision;

/* Where split-key attention leaves its partials (attention.c; decode: one
 * batch, one query row): unnormalized accumulators acc[(s * H + h) * D + d]
 * and (m, l) pairs ml[2 * (s * H + h)] (log2 domain) for split s < nsplit,
 * head h < H. nsplit 0: none. */
typedef struct vk_att_partials {
    uint64_t acc, ml;
    uint32_t nsplit, D, H;
} vk_att_partials;

/* The rounded-x image one decode matvec hands the next (shaders/x_image.glsl;
 * planned by vk_program.c, plan_images). family: the consumer's weight
 * layout, 1 Q4_K / Q5_K, 2 Q6_K. addr: the image (0 while measuring);
 * gamma: the consumer's folded RMS-norm gamma, 0 for none; counters: the
 * byte offset from addr of the producer's block counters (a region of the
 * slot that no image overlaps: producers of different N share a slot). */
typedef struct vk_x_image {
    bool     want;
    uint32_t family, counters;
    uint64_t addr, gamma;
} vk_x_image;

/* The image size for x of K values (K % 256 == 0), as x_image.glsl lays it out. */
static inline uint64_t vk_x_image_bytes(int64_t K) { return (uint64_t)K + (uint64_t)K / 2 + (uint64_t)K / 16; }

typedef struct vk_lower_ctx {
    /* in */
    const ir_graph *g;
    const ir_node  *node;
    int             n_in;
    vk_tensor       in[IR_MAX_INPUTS];
    vk_tensor       out;
    const vk_caps  *caps;
    const vk_tuning *tuning;            /* filled once per device (vk_tuning.c) */
    vk_precision    precision;
    /* rlx_compile_options.exact_quant: quantized products keep x in f32
     * (no i8 matvec; dequant_matmul.c) */
    bool            exact_quant;
    uint64_t        scratch_addr;       /* 0 while measuring */
    /* 32-bit words of device memory that keep their values between runs,
     * zero at first, for a node whose workgroups count what they finished
     * (the last one leaves them zero again): the lowering asks for
     * counter_words, and gets them at counters_addr (0 while measuring) */
    uint64_t        counters_addr;
    /* A 32-bit device word for input errors a shader finds (an id out of
     * range): the shader stores status_code there, and the run then fails
     * with RLX_STATUS_INVALID_ARGUMENT naming this node. 0 while measuring. */
    uint64_t        status_addr;
    uint32_t        status_code;
    /* Within ATTENTION_DEQUANT's lowering (attention_dequant.c), attention's
     * combine pass done by the decode matvec as it reads x: skip_combine
     * asks the attention lowering to leave it out (it then describes its
     * partials in comb); comb_in offers the matvec those partials as x. */
    bool            skip_combine;
    vk_att_partials comb_in;
    /* A decode matvec may also round its output into an image for the next
     * matvec (xim_out) and read its x from one (xim_in); *_done says it did. */
    vk_x_image      xim_out, xim_in;
    /* out */
    vk_att_partials comb;               /* attention: its partials, when it left the combine out */
    bool            comb_taken;         /* matvec: it combines comb_in into x */
    bool            xim_out_done, xim_in_done;
    vk_dispatch     d[VK_MAX_DISPATCHES];
    int             n_d;
    uint64_t        scratch_bytes;      /* scratch this node needs (dispatches run in order) */
    uint32_t        counter_words;      /* counters this node needs (counters_addr) */
    const char     *tier;               /* for the report: "tiled-f32", "coopmat-f16", "matvec", ... */
} vk_lower_ctx;

typedef rlx_status (*vk_lower_fn)(vk_lower_ctx *c);

/* The lowering for an op, or NULL (host step). Table in vk_lower_table.c. */
vk_lower_fn vk_lowering_for(ir_op op);

/* ---- helpers for lowerings (vk_lower_util.c) ---- */

/* Appends a dispatch for shader with the given push constants; returns it so
 * the caller may set spec constants / groups, or NULL if full (error set). */
vk_dispatch *vk_emit(vk_lower_ctx *c, const char *shader, const void *push, uint32_t push_bytes);
/* Workgroup counts covering n invocations with local size `local`, spread
 * over x and y so that no count exceeds the device limit. Shaders recover
 * the linear id as (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * local + lid. */
void vk_grid_1d(const vk_caps *caps, uint64_t n, uint32_t local, uint32_t groups[3]);
/* Collapses a broadcast pair of shapes to at most max_rank dims by merging
 * neighbouring dims that broadcast alike. Outputs dims and element strides
 * (0 on broadcast dims) for out and up to 3 operands. Returns the new rank,
 * or -1 if it cannot fit in max_rank. */
int vk_collapse_broadcast(const vk_tensor *out, const vk_tensor *const *ins, int n_ins, int max_rank,
                          int64_t *dims, int64_t strides[][IR_MAX_RANK]);
/* Bytes per block of a block dtype (rows are whole blocks), 0 for other dtypes. */
uint32_t vk_block_bytes(rlx_dtype dt);
/* Whether the block decoders (quant_blocks.glsl, its a4) may read the
 * block-quantized rows of row_bytes at addr as aligned 32-bit words: the
 * blocks are (planar rows, vk_weight_layout.h: the rows are) 4-byte aligned. */
bool vk_blocks_a4(rlx_dtype dt, uint64_t row_bytes, uint64_t addr);
/* The device's workgroup-count limit on an axis (65535, the Vulkan minimum, if unknown). */
uint32_t vk_max_groups(const vk_caps *caps, int axis);
/* v as a float pair hi + lo (hi = (float)v), for double-float math in shaders. */
void vk_split_df(double v, float *hi, float *lo);
/* "op 'name'" of the node being lowered, for error messages. */
const char *vk_node_label(const vk_lower_ctx *c, char *buf, size_t n);
/* Shader-side dtype code of a storage dtype (matches common.glsl). */
uint32_t vk_dtype_code(rlx_dtype dt);
/* out[M, N] = a[M, K] · b[N, K]ᵀ, all f32, as one tiled-f32 dispatch (matmul.c). */
rlx_status vk_emit_matmul_f32_nt(vk_lower_ctx *c, uint64_t a, uint64_t b, uint64_t out, int64_t M, int64_t N,
                                 int64_t K, bool uses_scratch);
/* Whether the decode matvec folds an RMS norm of M rows of K into its x
 * rounding for weights of type dt on this device (dequant_matmul.c): the
 * Vulkan backend folds norms only where this holds. */
bool vk_i8_folds_norm(const vk_caps *caps, const vk_tuning *t, bool exact_quant, rlx_dtype dt, int64_t M, int64_t K);
/* The x-image layout a consumer with weights dt reads (1 Q4_K / Q5_K, 2 Q6_K; 0: none) */
uint32_t vk_x_image_family(rlx_dtype dt);
/* DEQUANT_MATMUL for M > 8 (prefill), w (c->in[1]) of K >= 0 elements per row
 * (dequant_gemm.c), with a tail: 0 none, 1 + res, 2 SwiGLU (silu(x·wᵀ) ·
 * (x·w2ᵀ)). Where the grid has few tiles the product is split over K into
 * partials in scratch that one epilogue.comp pass sums with the tail. */
rlx_status vk_lower_dequant_gemm(vk_lower_ctx *c, int64_t M, int64_t N, int64_t K, uint64_t row_bytes, int tail,
                                 uint64_t res, const vk_tensor *w2);

/* The cooperative-matrix GEMM (coop_gemm.c, shaders/matmul_coopmat.comp). */
typedef struct vk_coop_plan {
    uint32_t wm, wn, bk;      /* accumulator fragments per subgroup along M and N, K depth per step */
    uint32_t wgm, wgn, nbuf;  /* subgroups along M and N, shared buffers (2: one barrier a step) */
    uint32_t bm, bn;          /* the tile */
    uint32_t splits, kc;      /* K splits (1: none) of kc elements each */
} vk_coop_plan;
struct mm_push;
/* The tiled-f32 tier's tile BM x BN x BK for C [M, N] over nb batch entries (matmul.c). */
struct ir_conv_geom;
/* CONV as an implicit GEMM where it applies (conv_gemm.c); *taken false: nothing emitted. */
rlx_status vk_lower_conv_gemm(vk_lower_ctx *c, const struct ir_conv_geom *g, bool *taken);
void vk_mm_tiled_tile(const vk_lower_ctx *c, int64_t M, int64_t N, int64_t nb, uint32_t t[3]);
/* Its K splits for that tile (1: none; else *kc elements of K each). */
uint32_t vk_mm_tiled_splits(const vk_lower_ctx *c, int64_t M, int64_t N, int64_t K, int64_t nb, const uint32_t t[3],
                            uint32_t *kc);
/* The device has the tier: NV cooperative matrix, f16 arithmetic and storage, subgroups of 32. */
bool vk_coop_available(const vk_lower_ctx *c);
/* The plan for C [M, N] over K with nb batch entries; may_split allows K
 * splits (nb == 1 only). false: no plan fits the device. */
bool vk_coop_plan_make(const vk_lower_ctx *c, int64_t M, int64_t N, int64_t K, int64_t nb, bool ta, bool tb,
                       bool may_split, vk_coop_plan *pl);
/* One matmul_coopmat dispatch for p (addresses, sizes, batch strides set;
 * tiles and pad0 are set here). Split plans write f32 partial slices at p->c,
 * with no bias or activation: vk_emit_splitk_reduce finishes them. */
rlx_status vk_emit_coop(vk_lower_ctx *c, const struct mm_push *p, const vk_coop_plan *pl, rlx_dtype dta, rlx_dtype dtc,
                        bool ta, bool tb, int act, bool has_bias, bool uses_scratch);
/* out (dtc) = act(sum of the split slices [M, N] at partials + bias [+ res]). conv_ovol 0: a matmul's out
 * [M, N] with a bias per column; conv_ovol > 0: a convolution's NCHW out [N / conv_ovol, M, conv_ovol] (column
 * j is image j / conv_ovol, position j % conv_ovol) with a bias per row (output channel). res (0: none) is a
 * residual in out's layout, added before the activation. */
rlx_status vk_emit_splitk_reduce(vk_lower_ctx *c, uint64_t partials, uint32_t splits, uint64_t bias, uint64_t out,
                                 uint64_t res, int64_t M, int64_t N, rlx_dtype dtc, int act, int64_t conv_ovol);
/* rows x cols of src (dt: a block type with row_bytes per row, or a float
 * type) decoded to dense f16 at dst (scratch). */
rlx_status vk_emit_decode_f16(vk_lower_ctx *c, uint64_t src, rlx_dtype dt, int64_t rows, int64_t cols,
                              uint64_t row_bytes, uint64_t dst);

/* ---- lowering entry points by family (src/vulkan/lower/<family>.c) ---- */
rlx_status vk_lower_binary(vk_lower_ctx *c);     /* ADD..POW, EQ..GE */
rlx_status vk_lower_unary(vk_lower_ctx *c);      /* RELU..ATAN, CLAMP, CAST */
rlx_status vk_lower_ternary(vk_lower_ctx *c);    /* WHERE, FMA */
rlx_status vk_lower_reduce(vk_lower_ctx *c);     /* REDUCE_*, ARGMAX, ARGMIN */
rlx_status vk_lower_softmax(vk_lower_ctx *c);    /* SOFTMAX, LOG_SOFTMAX */
rlx_status vk_lower_norm(vk_lower_ctx *c);       /* LAYER_NORM, RMS_NORM, ADD_*_NORM */
rlx_status vk_lower_cumsum(vk_lower_ctx *c);
rlx_status vk_lower_conv(vk_lower_ctx *c);
rlx_status vk_lower_conv_grad(vk_lower_ctx *c);
rlx_status vk_lower_pool(vk_lower_ctx *c);
rlx_status vk_lower_pool_grad(vk_lower_ctx *c);
rlx_status vk_lower_resize(vk_lower_ctx *c);        /* RESIZE, RESIZE_GRAD */
rlx_status vk_lower_adaptive_pool(vk_lower_ctx *c); /* ADAPTIVE_POOL, ADAPTIVE_POOL_GRAD */
rlx_status vk_lower_chan_norm(vk_lower_ctx *c);   /* BATCH_NORM, GROUP_NORM */
rlx_status vk_lower_matmul(vk_lower_ctx *c);     /* MATMUL, MATMUL_BIAS_ACT */
rlx_status vk_lower_attention(vk_lower_ctx *c);
rlx_status vk_lower_rope(vk_lower_ctx *c);       /* ROPE, ROPE_KV_WRITE */
rlx_status vk_lower_movement(vk_lower_ctx *c);   /* RESHAPE (copy), TRANSPOSE, SLICE, CONCAT, EXPAND */
rlx_status vk_lower_gather(vk_lower_ctx *c);     /* GATHER_ROWS, GATHER */
rlx_status vk_lower_scatter(vk_lower_ctx *c);    /* SCATTER_ADD_ROWS, SCATTER_ADD */
rlx_status vk_lower_topk(vk_lower_ctx *c);       /* TOPK_VALUES, TOPK_INDICES */
rlx_status vk_lower_loss(vk_lower_ctx *c);       /* SOFTMAX_CE, SOFTMAX_CE_GRAD */
rlx_status vk_lower_kv_write(vk_lower_ctx *c);   /* KV_WRITE */
rlx_status vk_lower_assign(vk_lower_ctx *c);     /* ASSIGN (movement.c: expand's copy into the param) */
rlx_status vk_lower_dequant_matmul(vk_lower_ctx *c); /* DEQUANT_MATMUL */
rlx_status vk_lower_dequant_fused(vk_lower_ctx *c);  /* DEQUANT_MATMUL_ADD, DEQUANT_SWIGLU */
rlx_status vk_lower_rms_dequant(vk_lower_ctx *c);    /* RMS_DEQUANT_MATMUL, RMS_DEQUANT_SWIGLU */
rlx_status vk_lower_dequant_rope_kv(vk_lower_ctx *c); /* DEQUANT_ROPE_KV */
rlx_status vk_lower_attention_dequant(vk_lower_ctx *c); /* ATTENTION_DEQUANT (attention_dequant.c) */
/* The (rms_)dequant_matmul of c with the work of its consumer (rope,
 * rope_kv_write or kv_write; cons its lowering context) in its epilogue:
 * RLX_STATUS_UNSUPPORTED, nothing emitted and no error set, where the i8
 * matvec cannot (dequant_matmul.c). */
rlx_status vk_dequant_epilogue(vk_lower_ctx *c, const vk_lower_ctx *cons);
rlx_status vk_lower_dequant_rows(vk_lower_ctx *c);   /* GATHER_ROWS of a block-quantized table (from gather.c) */

#endif
