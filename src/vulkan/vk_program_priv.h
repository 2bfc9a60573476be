/*
 * vk_program_priv.h — the Vulkan program's state, shared by its build and
 * recording (vk_program.c) and its runs and reports (vk_run.c). Private to
 * the backend's core: lowerings see only vk_lower.h.
 */
#ifndef RLX_VK_PROGRAM_PRIV_H
#define RLX_VK_PROGRAM_PRIV_H

#include "vulkan/vk_backend.h"
#include "vulkan/vk_ctx.h"
#include "core/trace.h"
#include "vulkan/vk_tuning.h"

struct vk_device {
    vk_ctx           *ctx;
    vk_device_options opts;
    struct rlx_trace *trace;        /* vk_backend_device_trace: borrowed; NULL: off */
    int               trace_host, trace_gpu;   /* its tracks */
    /* filled from ctx->caps (and the environment's overrides) when the
     * device is made: per device, not per shared context, so that each
     * rlx_compile sees the overrides set when it ran */
    vk_tuning         tuning;
};

typedef struct vk_loc {
    VkBuffer buf;
    VkDeviceSize offset;
    uint64_t addr;
    bool     tracked;   /* arena or scratch: hazards matter */
} vk_loc;

typedef struct vk_range { VkBuffer buf; VkDeviceSize lo, hi; } vk_range;

typedef struct vk_node_info {
    bool         host;               /* runs as a host step */
    bool         gpu;                /* lowered to dispatches */
    char         note[160];          /* tier or host-step reason */
    int          n_dispatch;
    /* the rounded-x image (plan_images): on a producer matvec, xim_slot (its
     * image slot, -1: none), the consumers' layout and gamma node (-1: none),
     * xim_ok (its lowering can make one) and xim_used (a consumer took it);
     * on a consumer, xim_from (the producer, -1: none) and xim_taken */
    int32_t      xim_slot, xim_gamma, xim_from;
    uint32_t     xim_family;
    bool         xim_ok, xim_used, xim_taken;
    VkDeviceSize host_in_off[IR_MAX_INPUTS], host_out_off;  /* in the host-step buffer */
    uint32_t     counter_words, counter_off;   /* the node's counters in p->counters (its lowering asks) */
} vk_node_info;

typedef struct vk_segment {
    VkCommandBuffer cb;
    int32_t         host_node_after;   /* -1: last segment */
    double          last_wait_s;       /* submit to fence of the previous run: how long to poll next time */
    double          submit_s;          /* host clock at this run's submit (the trace places GPU time by it) */
} vk_segment;

struct vk_program {
    vk_device       *dev;
    vk_ctx          *ctx;
    const ir_graph  *g;
    const mem_plan  *plan;
    vk_buf           arena, consts, scratch, io, hostio;
    vk_buf           xim;              /* two x-image slots of xim_slot_bytes (plan_images), or none */
    vk_buf           counters;         /* the nodes' 32-bit counters (counter_off), zeroed once, or none */
    VkDeviceSize     xim_slot_bytes;   /* an image region of xim_image_bytes, then the block counters */
    VkDeviceSize     xim_image_bytes;
    bool             recording;        /* lowerings now emit for real (addresses known) */
    VkDeviceSize    *const_off;        /* per node */
    VkDeviceSize    *io_off;           /* per node: staging offset of inputs/outputs, or -1 */
    vk_loc          *loc;              /* per node */
    vk_node_info    *info;
    VkCommandPool    pool;
    vk_segment      *segs;
    int              n_segs;
    VkFence          fence;
    VkQueryPool      queries;
    int              n_dispatches, n_host;
    int32_t         *input_nodes;      /* so a run touches only inputs and outputs */
    int              n_input_nodes;
    int32_t         *kv_checks;        /* kv_write nodes whose pos is a graph input */
    int              n_kv_checks;
    int32_t         *planar_outputs;   /* outputs in a device layout of their own (Q8_0 / Q6_K params), each once */
    int              n_planar_outputs;
    VkDeviceSize     status_off;       /* in io: the word shaders set on bad input */
    double           last_gpu_seconds;
    double           spin_cap_s;       /* longest fence poll (spin_cap_seconds, read at build) */
    /* RLX_PROFILE=1: a timestamp pair around every node's dispatches
     * (queries 2 + 2i and 3 + 2i); device microseconds summed per node */
    bool             profile;
    double          *prof_us;
    int              prof_runs;
};

/* ---- recording (vk_program.c) */
typedef struct recorder {
    vk_program     *p;
    VkCommandBuffer cb;
    vk_range       *reads, *writes;   /* what ran since the last barrier */
    int             n_reads, n_writes, cap_reads, cap_writes;
    bool            dirty;            /* anything recorded since the last barrier */
} recorder;

bool       vk_ranges_overlap(const vk_range *set, int n, vk_range r);
/* Whether a command reading rd[] and writing wr[] conflicts with reads[] / writes[]. */
bool       vk_ranges_conflict(const vk_range *reads, int n_reads, const vk_range *writes, int n_writes, const vk_range *rd,
                              int n_rd, const vk_range *wr, int n_wr);
/* Appends v[0..count) to the growing set (*n entries of *cap). */
rlx_status vk_push_ranges(vk_range **set, int *n, int *cap, const vk_range *v, int count);
void       vk_rec_barrier(recorder *r);
/* Notes the next command's accesses (no barrier decided here). */
rlx_status vk_rec_note(recorder *r, const vk_range *rd, int n_rd, const vk_range *wr, int n_wr);
/* Binds d's pipeline and records it (its accesses already noted). */
rlx_status vk_rec_dispatch(vk_program *p, recorder *r, const vk_dispatch *d);

static inline int64_t node_bytes(const ir_node *n) { return ir_node_bytes(n); }

#endif
