/*
 * vk_program.c — a specialized, planned graph on a Vulkan device: the
 * device handle, and the program's build and recording (its runs and
 * report: vk_run.c).
 *
 * Build: resolve every tensor to (buffer, offset, device address); lower each
 * node to dispatches (or mark it a host step); allocate the arena, constants,
 * scratch, persistent I/O staging and host-step staging; record the command
 * buffers once. A command buffer ("segment") ends at each host step.
 *
 * Barriers: a global memory barrier is recorded before a dispatch only when it
 * reads or writes arena/scratch bytes that a dispatch since the last barrier
 * wrote, or writes bytes one of them read (the planner reuses memory, so
 * write-after-read matters too). Params and constants are read-only.
 *
 * Run (vk_run.c): copy inputs into staging, submit each segment and wait,
 * run host steps in between; outputs are read from staging. Host work per
 * run is O(inputs + outputs + host steps), not O(steps).
 *
 * Profiling (RLX_PROFILE=1 when the program is built): every node's
 * dispatches sit between two bottom-of-pipe timestamps, followed by a
 * barrier, so a node's time is its own launch + execution with nothing
 * overlapping it. That serializes independent nodes, so the total is an
 * upper bound on the unprofiled run; the report shows the mean per node and
 * per kernel.
 */
#include "vulkan/vk_program_priv.h"
#include "core/profile.h"
#include "vulkan/vk_weight_layout.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ device */

rlx_status vk_backend_device_new(const vk_device_options *o, vk_device **out) {
    *out = NULL;
    vk_device *d = calloc(1, sizeof *d);
    if (!d) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
    d->opts = *o;
    rlx_status st = vk_ctx_acquire(o->index, o->name, o->allow_software, &d->ctx);
    if (st != RLX_OK) { free(d); return st; }
    vk_tuning_fill(&d->tuning, &d->ctx->caps);
    *out = d;
    return RLX_OK;
}

void vk_backend_device_free(vk_device *d) {
    if (!d) return;
    vk_ctx_release(d->ctx);
    free(d);
}

const char *vk_backend_device_name(const vk_device *d) { return d->ctx->name; }

void vk_backend_device_trace(vk_device *d, rlx_trace *t, int host_tid, int gpu_tid) {
    d->trace = t;
    d->trace_host = host_tid;
    d->trace_gpu = gpu_tid;
}

bool vk_backend_folds_norm(const vk_device *d, rlx_dtype w, int64_t rows, int64_t K) {
    return vk_i8_folds_norm(&d->ctx->caps, &d->tuning, d->opts.exact_quant, w, rows, K);
}

rlx_status vk_param_alloc(vk_device *d, size_t bytes, void **handle) {
    vk_buf *b = calloc(1, sizeof *b);
    if (!b) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
    rlx_status st = vk_buf_create(d->ctx, bytes, false, "a param", b);
    if (st == RLX_OK) st = vk_fill_zero(d->ctx, b);   /* params are zero until set */
    if (st != RLX_OK) {
        vk_buf_destroy(d->ctx, b);
        free(b);
        return st;
    }
    *handle = b;
    return RLX_OK;
}

rlx_status vk_param_write(vk_device *d, void *handle, rlx_dtype dtype, int64_t row_elems, const void *data, size_t bytes) {
    return vk_upload_as(d->ctx, handle, 0, data, bytes, dtype, row_elems);
}

rlx_status vk_param_read(vk_device *d, void *handle, rlx_dtype dtype, void *data, size_t bytes) {
    if (rlx_dtype_is_quantized(dtype))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "vulkan: %s params are kept in a layout of their own and are not read back",
                        rlx_dtype_name(dtype));
    if (!bytes) return RLX_OK;
    const vk_buf *b = handle;
    return vk_download(d->ctx, b->buf, 0, data, bytes);
}

void vk_param_free(vk_device *d, void *handle) {
    if (!handle) return;
    vk_buf_destroy(d->ctx, handle);
    free(handle);
}

/* ------------------------------------------------------------ build */

static VkDeviceSize align64(VkDeviceSize v) { return (v + 63) & ~(VkDeviceSize)63; }

static void fill_vk_tensor(vk_tensor *t, const vk_loc *l, const ir_node *n) {
    t->addr = l->addr;
    t->dtype = n->dtype;
    t->rank = n->shape.rank;
    ir_shape_dims(&n->shape, t->dims);
    t->numel = ir_shape_numel(&n->shape);
}

static void lower_ctx_init(vk_program *p, int32_t i, vk_lower_ctx *c, uint64_t scratch_addr) {
    bool emitting = scratch_addr != 0 || p->scratch.buf != VK_NULL_HANDLE;
    const ir_node *n = &p->g->nodes[i];
    memset(c, 0, sizeof *c);
    c->g = p->g;
    c->node = n;
    c->n_in = n->n_in;
    for (int j = 0; j < n->n_in; j++) fill_vk_tensor(&c->in[j], &p->loc[n->in[j]], &p->g->nodes[n->in[j]]);
    fill_vk_tensor(&c->out, &p->loc[i], n);
    c->caps = &p->ctx->caps;
    c->tuning = &p->dev->tuning;
    c->precision = p->dev->opts.precision ? VK_PRECISION_FAST : VK_PRECISION_F32;
    c->exact_quant = p->dev->opts.exact_quant;
    c->scratch_addr = scratch_addr;
    c->counters_addr = emitting && p->counters.buf ? p->counters.addr + 4ull * p->info[i].counter_off : 0;
    c->status_addr = emitting ? p->io.addr + p->status_off : 0;
    c->status_code = (uint32_t)i + 1;
}

static bool is_step(const ir_graph *g, const mem_plan *plan, int32_t i) {
    ir_op op = g->nodes[i].op;
    return op != IR_OP_INPUT && op != IR_OP_PARAM && op != IR_OP_CONST && !plan->entries[i].is_view;
}

/* Whether ops of this kind run as host steps by request (RLX_VK_FORCE_HOST:
 * every node, or a list of op names; vk_tuning.h), a debugging aid. */
static bool forced_to_host(const vk_tuning *t, ir_op op) {
    return t->force_host_all || ((unsigned)op < IR_OP_COUNT && t->force_host[op]);
}

/* Longest the host polls the fence of one segment (vk_tuning.spin_us; 0:
 * block in vkWaitForFences at once). */
static double spin_cap_seconds(const vk_tuning *t) { return 1e-6 * t->spin_us; }

/* Node i's dispatches: its own lowering (offered the x images planned for it). */
static void offer_images(const vk_program *p, int32_t i, vk_lower_ctx *c);

static rlx_status lower_node(vk_program *p, int32_t i, vk_lower_ctx *c, uint64_t scratch_addr) {
    lower_ctx_init(p, i, c, scratch_addr);
    offer_images(p, i, c);
    return vk_lowering_for(p->g->nodes[i].op)(c);
}

/* A lowering context for node i of g before any program exists: tensors
 * with their shapes at one placeholder address, 64 KiB aligned (params,
 * constants and arena slots are 64-byte aligned; a lowering reads an address
 * of 0 as "none"). */
static void dry_ctx_init(const vk_device *d, const ir_graph *g, int32_t i, vk_lower_ctx *c) {
    static const vk_loc none = {.addr = (uint64_t)1 << 16};
    const ir_node *n = &g->nodes[i];
    memset(c, 0, sizeof *c);
    c->g = g;
    c->node = n;
    c->n_in = n->n_in;
    for (int j = 0; j < n->n_in; j++) fill_vk_tensor(&c->in[j], &none, &g->nodes[n->in[j]]);
    fill_vk_tensor(&c->out, &none, n);
    c->caps = &d->ctx->caps;
    c->tuning = &d->tuning;
    c->precision = d->opts.precision ? VK_PRECISION_FAST : VK_PRECISION_F32;
    c->exact_quant = d->opts.exact_quant;
}

/* The fold's decision is the lowering's: product p with consumer c in its
 * epilogue (vk_dequant_epilogue), tried on their shapes and this device;
 * not where RLX_VK_FORCE_HOST names either op. */
bool vk_backend_folds_epilogue(const vk_device *d, const ir_graph *g, int32_t p, int32_t c) {
    if (forced_to_host(&d->tuning, g->nodes[p].op) || forced_to_host(&d->tuning, g->nodes[c].op) ||
        forced_to_host(&d->tuning, IR_OP_DEQUANT_ROPE_KV))
        return false;
    vk_lower_ctx pc, cc;
    dry_ctx_init(d, g, p, &pc);
    dry_ctx_init(d, g, c, &cc);
    return vk_dequant_epilogue(&pc, &cc) == RLX_OK && pc.n_d > 0;
}

static bool prefers_last_combine(const ir_graph *g, int32_t j);

/* Likewise attention a with the matvec p reading its result: attention
 * lowered leaving its combine out must split its keys, and p's lowering
 * must take the partials as x (attention_dequant.c does the same). Not
 * where attention would rather merge its own partials (prefers_last_combine). */
bool vk_backend_folds_combine(const vk_device *d, const ir_graph *g, int32_t a, int32_t p) {
    if (forced_to_host(&d->tuning, IR_OP_ATTENTION) || forced_to_host(&d->tuning, g->nodes[p].op) ||
        forced_to_host(&d->tuning, IR_OP_ATTENTION_DEQUANT) ||
        prefers_last_combine(g, p))
        return false;
    vk_lower_ctx ac, pc;
    dry_ctx_init(d, g, a, &ac);
    ac.skip_combine = true;
    if (vk_lower_attention(&ac) != RLX_OK || ac.comb.nsplit <= 1) {
        rlx_clear_error();
        return false;
    }
    dry_ctx_init(d, g, p, &pc);
    pc.comb_in = ac.comb;
    rlx_status st = vk_lowering_for(g->nodes[p].op)(&pc);
    rlx_clear_error();
    return st == RLX_OK && pc.comb_taken && ac.n_d + pc.n_d <= VK_MAX_DISPATCHES;
}

static vk_range range_of(const vk_program *p, int32_t node);

/* ---- the rounded-x image (shaders/x_image.glsl) */

/* The matvecs that may make an image (producers) and read one (consumers;
 * dequant_rope_kv stores through its epilogue, so it only reads one;
 * attention_dequant_matmul reads attention's partials, so it only makes one). */
static bool xim_op(ir_op op) {
    return op == IR_OP_DEQUANT_MATMUL || op == IR_OP_DEQUANT_MATMUL_ADD || op == IR_OP_DEQUANT_SWIGLU ||
           op == IR_OP_RMS_DEQUANT_MATMUL || op == IR_OP_RMS_DEQUANT_SWIGLU;
}
static bool xim_producer_op(ir_op op) { return xim_op(op) || op == IR_OP_ATTENTION_DEQUANT; }
static bool xim_consumer_op(ir_op op) { return xim_op(op) || op == IR_OP_DEQUANT_ROPE_KV; }

/* An image consumer's x and weight nodes. */
static int32_t xim_x_of(const ir_node *n) {
    return n->op == IR_OP_DEQUANT_ROPE_KV ? n->in[ir_dequant_rope_kv_x(n)] : n->in[0];
}
static int32_t xim_w_of(const ir_node *n) {
    return n->op == IR_OP_DEQUANT_ROPE_KV ? n->in[ir_dequant_rope_kv_w(n)] : n->in[1];
}

/* The gamma node an image consumer folds into x, or -1. */
static int32_t xim_gamma_of(const ir_node *n) {
    if (n->op == IR_OP_RMS_DEQUANT_MATMUL) return n->in[2];
    if (n->op == IR_OP_RMS_DEQUANT_SWIGLU) return n->in[3];
    if (n->op == IR_OP_DEQUANT_ROPE_KV && ir_attr_dequant_rope_kv_has_gamma(n)) return n->in[n->n_in - 1];
    return -1;
}

/* Slot s's image: its address and byte range in p->xim. */
static uint64_t xim_addr(const vk_program *p, int32_t slot) {
    return p->xim.buf ? p->xim.addr + (uint64_t)slot * p->xim_slot_bytes : 0;
}
static vk_range xim_range(const vk_program *p, int32_t slot) {
    vk_range r = {p->xim.buf, (VkDeviceSize)slot * p->xim_slot_bytes, (VkDeviceSize)(slot + 1) * p->xim_slot_bytes};
    return r;
}

/* What node i's lowering is offered: while planning, every candidate (a
 * consumer only where its producer's lowering can make the image); when
 * recording, what planning kept. */
static void offer_images(const vk_program *p, int32_t i, vk_lower_ctx *c) {
    const vk_node_info *in = &p->info[i];
    if (in->xim_slot >= 0 && (!p->recording || in->xim_used)) {
        c->xim_out.want = true;
        c->xim_out.family = in->xim_family;
        c->xim_out.addr = xim_addr(p, in->xim_slot);
        c->xim_out.counters = (uint32_t)p->xim_image_bytes;
        c->xim_out.gamma = in->xim_gamma >= 0 ? p->loc[in->xim_gamma].addr : 0;
    }
    int32_t f = in->xim_from;
    if (f >= 0 && (p->recording ? in->xim_taken : p->info[f].xim_ok)) {
        c->xim_in.want = true;
        c->xim_in.family = p->info[f].xim_family;
        c->xim_in.addr = xim_addr(p, p->info[f].xim_slot);
    }
}

/* The last dim of node n where it is static, else 0. */
static int64_t static_last_dim(const ir_node *n) {
    if (n->shape.rank < 1 || !ir_dim_is_static(n->shape.d[n->shape.rank - 1])) return 0;
    return n->shape.d[n->shape.rank - 1].k;
}

/*
 * Whether a producer's image is worth its cost, from per-step device times
 * on the H200 (bench/HISTORY.md, 2026-11-30, x images where they pay): the workgroups that
 * complete a block add ~1.5-2 us to the producer, while each consumer
 * workgroup saves rounding K = (the producer's N) values. At K = 4096 and more (8B
 * layers) every pair gained (SwiGLU 43 -> 35 us, the lm head 184 -> 157);
 * at K = 2048 (1B layers) a projection saved 0.4-0.7 us, less than its
 * producer's cost (1B decode 2% slower), and only a vocabulary-sized
 * consumer (its many workgroups each saving; the 1B lm head 81 -> 71 us)
 * paid for one.
 */
static bool image_pays(int64_t producer_n, int64_t widest_consumer) {
    return producer_n >= 4096 || widest_consumer >= 32768;
}

/* Whether nodes a and b of plan are the same bytes (a view of all of the other's). */
static bool plan_same_bytes(const ir_graph *g, const mem_plan *plan, int32_t a, int32_t b) {
    const plan_entry *x = &plan->entries[a], *y = &plan->entries[b];
    return x->storage == y->storage && x->base == y->base && x->offset == y->offset &&
           node_bytes(&g->nodes[a]) == node_bytes(&g->nodes[b]);
}

/*
 * A decode matvec's x is usually the output of the matvec before it (the
 * residual stream into the next projections' norm, SwiGLU's output into the
 * down projection), and each of its workgroups rounds all of x again. Here
 * such a producer is planned to round its output once, into an image its
 * consumers copy (x_image.glsl). The consumers of producer i: later nodes
 * whose x is i's value (a view of all its bytes), with K-quant weights of the
 * first one's layout and the same folded gamma (others round x themselves).
 * Producers alternate between two image slots, so a consumer must run
 * before the next producer of its slot (a matvec that is both reads one
 * slot and writes the other). The decision is written into the specialized
 * graph (ir.h: ximage_out = slot + 1 on a producer, ximage_from = producer + 1
 * on a consumer; rlx_graph_dump and the report show it), after its memory plan
 * and before its program; the lowerings confirm each side (plan_lowering).
 * RLX_VK_XIMAGE (vk_tuning.ximage_mode, read at rlx_compile): 0 none, 1 (the default)
 * where image_pays, 2 every pair (tests at small shapes).
 */
rlx_status vk_backend_plan_x_images(const vk_device *d, ir_graph *g, const mem_plan *plan, int *n_images) {
    *n_images = 0;
    const int mode = (int)d->tuning.ximage_mode;
    if (mode <= 0) return RLX_OK;
    int32_t *from = malloc(sizeof *from * (size_t)RLX_MAX(g->n_nodes, 1));
    int32_t *slot = malloc(sizeof *slot * (size_t)RLX_MAX(g->n_nodes, 1));
    if (!from || !slot) {
        free(from);
        free(slot);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) from[i] = slot[i] = -1;
    int32_t n_producers = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (!is_step(g, plan, i) || !xim_producer_op(n->op) || forced_to_host(&d->tuning, n->op)) continue;
        int32_t first = -1, gamma = -1;
        uint32_t family = 0;
        int64_t widest = 0;   /* the consumers' largest output (rows) */
        for (int32_t j = i + 1; j < g->n_nodes; j++) {
            const ir_node *m = &g->nodes[j];
            if (!is_step(g, plan, j) || !xim_consumer_op(m->op) || forced_to_host(&d->tuning, m->op) || from[j] >= 0) continue;
            int32_t x = xim_x_of(m);
            if (!plan_same_bytes(g, plan, x, i)) continue;
            uint32_t fam = vk_x_image_family(g->nodes[xim_w_of(m)].dtype);
            if (!fam) continue;
            if (first < 0) {
                first = j;
                family = fam;
                gamma = xim_gamma_of(m);
            }
            int32_t gm = xim_gamma_of(m);
            if (fam == family && (gm < 0 || gamma < 0 ? gm == gamma : plan_same_bytes(g, plan, gm, gamma))) {
                from[j] = i;
                widest = RLX_MAX(widest, static_last_dim(m));
            }
        }
        if (first >= 0 && mode < 2 && !image_pays(static_last_dim(n), widest)) {
            for (int32_t j = i + 1; j < g->n_nodes; j++)
                if (from[j] == i) from[j] = -1;
            first = -1;
        }
        if (first >= 0) slot[i] = n_producers++ & 1;
    }
    /* a consumer after the next producer of its slot would read a new image */
    for (int32_t j = 0; j < g->n_nodes; j++) {
        int32_t i = from[j];
        if (i < 0) continue;
        for (int32_t k = i + 1; k <= j; k++)
            if (slot[k] == slot[i]) {
                from[j] = -1;
                break;
            }
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (slot[i] >= 0 && ir_set_ximage_out(&g->nodes[i], slot[i] + 1)) (*n_images)++;
        if (from[i] >= 0) ir_set_ximage_from(&g->nodes[i], from[i] + 1);
    }
    free(from);
    free(slot);
    return RLX_OK;
}

/* The program's image plan, from the graph (vk_backend_plan_x_images): each
 * producer's slot, and its layout and gamma from its first consumer. */
static void plan_images(vk_program *p) {
    const ir_graph *g = p->g;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        vk_node_info *in = &p->info[i];
        in->xim_slot = in->xim_gamma = in->xim_from = -1;
        in->xim_family = 0;
        in->xim_ok = in->xim_used = in->xim_taken = false;
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (xim_producer_op(n->op) && ir_ximage_out(n) > 0) p->info[i].xim_slot = (int32_t)ir_ximage_out(n) - 1;
    }
    for (int32_t j = 0; j < g->n_nodes; j++) {
        const ir_node *m = &g->nodes[j];
        if (!xim_consumer_op(m->op) || ir_ximage_from(m) <= 0) continue;
        int32_t i = (int32_t)ir_ximage_from(m) - 1;
        if (i >= j || p->info[i].xim_slot < 0) continue;
        p->info[j].xim_from = i;
        if (!p->info[i].xim_family) {
            p->info[i].xim_family = vk_x_image_family(g->nodes[xim_w_of(m)].dtype);
            p->info[i].xim_gamma = xim_gamma_of(m);
        }
    }
}

/* Whether decode attention feeding matvec j should merge its own partials
 * (attention.comp LASTC) instead of folding them into j
 * (vk_backend_folds_combine): where j is a Q8_0 product of K >= 4096.
 * Measured on the H200 (llm_bench, bench/HISTORY.md, 2026-12-01), device time per token against
 * the fold: 8B Q8_0 3124.5 -> 3097.0 (-0.9%; its o projection then takes
 * the exact run kernel), 1B Q8_0 (K = 2048) 774 -> 813, 8B / 1B Q4_K_M
 * +1.9% / +3.9% (both still faster than the separate combine pass). */
static bool prefers_last_combine(const ir_graph *g, int32_t j) {
    const ir_node *w = &g->nodes[g->nodes[j].in[1]];
    return w->dtype == RLX_Q8_0 && w->shape.rank == 2 && static_last_dim(w) >= 4096;
}

/* Lowers every node once to decide GPU vs host, which x images hold,
 * and how much scratch and host staging the program needs. */
static rlx_status plan_lowering(vk_program *p, VkDeviceSize *scratch_need, VkDeviceSize *hostio_need) {
    *scratch_need = 0;
    *hostio_need = 0;
    plan_images(p);
    for (int32_t i = 0; i < p->g->n_nodes; i++) {
        if (!is_step(p->g, p->plan, i)) continue;
        vk_node_info *info = &p->info[i];
        const ir_node *n = &p->g->nodes[i];
        vk_lower_fn fn = vk_lowering_for(n->op);
        rlx_status st = RLX_STATUS_UNSUPPORTED;
        vk_lower_ctx c;
        if (fn) {
            rlx_clear_error();
            st = lower_node(p, i, &c, 0);
        } else {
            rlx_fail(RLX_STATUS_UNSUPPORTED, "no GPU kernel for %s", ir_op_info_get(n->op)->name);
        }
        if (forced_to_host(&p->dev->tuning, n->op)) {   /* debugging aid: bisect a wrong result by op */
            st = RLX_STATUS_UNSUPPORTED;
            rlx_fail(st, "forced by RLX_VK_FORCE_HOST");
        }
        if (st == RLX_OK && c.n_d > 0) {
            info->gpu = true;
            info->n_dispatch = c.n_d;
            info->counter_words = c.counter_words;
            info->xim_ok = c.xim_out_done;
            if (c.xim_in_done) {
                info->xim_taken = true;
                p->info[info->xim_from].xim_used = true;
            }
            snprintf(info->note, sizeof info->note, "%s", c.tier ? c.tier : c.d[0].shader);
            /* no node numbers: the profile summary groups nodes by this note */
            if (n->op == IR_OP_ATTENTION_DEQUANT)
                snprintf(info->note + strlen(info->note), sizeof info->note - strlen(info->note),
                         " + split-key attention (its combine merged in)");
            if (c.xim_in_done)
                snprintf(info->note + strlen(info->note), sizeof info->note - strlen(info->note), ", x from an image");
            if (c.scratch_bytes > *scratch_need) *scratch_need = c.scratch_bytes;
        } else if (st == RLX_STATUS_UNSUPPORTED || (st == RLX_OK && c.n_d == 0)) {
            info->host = true;
            snprintf(info->note, sizeof info->note, "%s", st == RLX_OK ? "lowering emitted nothing" : rlx_last_error());
            for (int j = 0; j < n->n_in; j++) {
                info->host_in_off[j] = *hostio_need;
                *hostio_need += align64((VkDeviceSize)node_bytes(&p->g->nodes[n->in[j]]));
            }
            info->host_out_off = *hostio_need;
            *hostio_need += align64((VkDeviceSize)node_bytes(n));
        } else {
            char lbl[128];
            return rlx_fail(st, "vulkan: lowering %s: %s", ir_node_label(p->g, i, lbl, sizeof lbl), rlx_last_error());
        }
    }
    for (int32_t i = 0; i < p->g->n_nodes; i++)   /* producers learn of their takers last */
        if (p->info[i].xim_used) {
            char *note = p->info[i].note;
            snprintf(note + strlen(note), sizeof p->info[i].note - strlen(note), ", x image made");
        }
    return RLX_OK;
}

/* ---- recording with hazard tracking */

bool vk_ranges_overlap(const vk_range *set, int n, vk_range r) {
    for (int i = 0; i < n; i++)
        if (set[i].buf == r.buf && set[i].lo < r.hi && r.lo < set[i].hi) return true;
    return false;
}

/* A global memory barrier over compute and transfer (the segment's copies);
 * what ran before it is settled. Compute-only barriers between dispatches
 * measured the same on the H200 (llm_bench, bench/HISTORY.md, 2026-11-30), so there is one kind. */
void vk_rec_barrier(recorder *r) {
    VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                                           VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT};
    r->p->ctx->f.vkCmdPipelineBarrier(r->cb, stages, stages, 0, 1, &mb, 0, NULL, 0, NULL);
    r->n_reads = r->n_writes = 0;
    r->dirty = false;
}

rlx_status vk_push_ranges(vk_range **set, int *n, int *cap, const vk_range *v, int count) {
    if (*n + count > *cap) {
        int c = *cap ? *cap : 64;
        while (c < *n + count) c *= 2;
        vk_range *s = realloc(*set, (size_t)c * sizeof *s);
        if (!s) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
        *set = s;
        *cap = c;
    }
    if (count > 0) memcpy(*set + *n, v, sizeof *v * (size_t)count);
    *n += count;
    return RLX_OK;
}

/* Records that the next command reads rd[] and writes wr[]; inserts a barrier
 * first when they conflict with what ran since the last one. */
bool vk_ranges_conflict(const vk_range *reads, int n_reads, const vk_range *writes, int n_writes, const vk_range *rd,
                        int n_rd, const vk_range *wr, int n_wr) {
    for (int i = 0; i < n_rd; i++)
        if (vk_ranges_overlap(writes, n_writes, rd[i])) return true;
    for (int i = 0; i < n_wr; i++)
        if (vk_ranges_overlap(writes, n_writes, wr[i]) || vk_ranges_overlap(reads, n_reads, wr[i])) return true;
    return false;
}

rlx_status vk_rec_note(recorder *r, const vk_range *rd, int n_rd, const vk_range *wr, int n_wr) {
    rlx_status st = vk_push_ranges(&r->reads, &r->n_reads, &r->cap_reads, rd, n_rd);
    if (st == RLX_OK) st = vk_push_ranges(&r->writes, &r->n_writes, &r->cap_writes, wr, n_wr);
    r->dirty = true;
    return st;
}

static rlx_status access(recorder *r, const vk_range *rd, int n_rd, const vk_range *wr, int n_wr) {
    if (vk_ranges_conflict(r->reads, r->n_reads, r->writes, r->n_writes, rd, n_rd, wr, n_wr)) vk_rec_barrier(r);
    return vk_rec_note(r, rd, n_rd, wr, n_wr);
}

rlx_status vk_rec_dispatch(vk_program *p, recorder *r, const vk_dispatch *d) {
    VkPipeline pipe;
    rlx_status st = vk_pipeline_get(p->ctx, d->shader, d->spec, d->n_spec, &pipe);
    if (st != RLX_OK) return st;
    for (int a = 0; a < 3; a++)
        if (d->groups[a] == 0 || d->groups[a] > p->ctx->caps.max_workgroup_count[a])
            return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: %s dispatch has %u workgroups on axis %d (limit %u)", d->shader,
                            d->groups[a], a, p->ctx->caps.max_workgroup_count[a]);
    p->ctx->f.vkCmdBindPipeline(r->cb, VK_PIPELINE_BIND_POINT_COMPUTE, pipe);
    if (d->push_bytes)
        p->ctx->f.vkCmdPushConstants(r->cb, p->ctx->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, d->push_bytes, d->push);
    p->ctx->f.vkCmdDispatch(r->cb, d->groups[0], d->groups[1], d->groups[2]);
    p->n_dispatches++;
    r->dirty = true;
    return RLX_OK;
}

static vk_range range_of(const vk_program *p, int32_t node) {
    const vk_loc *l = &p->loc[node];
    vk_range v = {l->buf, l->offset, l->offset + (VkDeviceSize)node_bytes(&p->g->nodes[node])};
    return v;
}

static rlx_status begin_segment(vk_program *p, recorder *r, int32_t host_node_before) {
    vk_segment *s = &p->segs[p->n_segs];
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = p->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
    rlx_status st = vk_check(p->ctx->f.vkAllocateCommandBuffers(p->ctx->dev, &ai, &s->cb), "vkAllocateCommandBuffers");
    if (st != RLX_OK) return st;
    p->n_segs++;
    s->host_node_after = -1;
    s->last_wait_s = 0;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    if ((st = vk_check(p->ctx->f.vkBeginCommandBuffer(s->cb, &bi), "vkBeginCommandBuffer")) != RLX_OK) return st;
    r->cb = s->cb;
    r->n_reads = r->n_writes = 0;
    if (p->n_segs == 1) {
        p->ctx->f.vkCmdResetQueryPool(s->cb, p->queries, 0, p->profile ? 2u + 2u * (uint32_t)p->g->n_nodes : 2u);
        p->ctx->f.vkCmdWriteTimestamp(s->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, p->queries, 0);
        /* graph inputs: staging -> their arena slots */
        bool any = false;
        for (int32_t i = 0; i < p->g->n_nodes; i++) {
            if (p->g->nodes[i].op != IR_OP_INPUT || node_bytes(&p->g->nodes[i]) == 0) continue;
            VkBufferCopy region = {p->io_off[i], p->loc[i].offset, (VkDeviceSize)node_bytes(&p->g->nodes[i])};
            p->ctx->f.vkCmdCopyBuffer(s->cb, p->io.buf, p->loc[i].buf, 1, &region);
            any = true;
        }
        if (any) vk_rec_barrier(r);
    }
    if (host_node_before >= 0) {
        /* the host step's result: host staging -> its slot */
        const ir_node *n = &p->g->nodes[host_node_before];
        if (node_bytes(n) > 0) {
            VkBufferCopy region = {p->info[host_node_before].host_out_off, p->loc[host_node_before].offset,
                                   (VkDeviceSize)node_bytes(n)};
            p->ctx->f.vkCmdCopyBuffer(s->cb, p->hostio.buf, p->loc[host_node_before].buf, 1, &region);
            vk_rec_barrier(r);
        }
    }
    return RLX_OK;
}

static rlx_status end_segment(vk_program *p, recorder *r, bool last) {
    if (last) {
        vk_rec_barrier(r);
        /* outputs: their slots -> staging */
        for (int32_t k = 0; k < p->g->n_outputs; k++) {
            int32_t i = p->g->outputs[k].node;
            if (node_bytes(&p->g->nodes[i]) == 0) continue;
            VkBufferCopy region = {p->loc[i].offset, p->io_off[i], (VkDeviceSize)node_bytes(&p->g->nodes[i])};
            p->ctx->f.vkCmdCopyBuffer(r->cb, p->loc[i].buf, p->io.buf, 1, &region);
        }
        p->ctx->f.vkCmdWriteTimestamp(r->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->queries, 1);
    }
    VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                          .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                          .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    p->ctx->f.vkCmdPipelineBarrier(r->cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                                   VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    return vk_check(p->ctx->f.vkEndCommandBuffer(r->cb), "vkEndCommandBuffer");
}

static rlx_status record_dispatches(vk_program *p, recorder *r, int32_t i) {
    vk_lower_ctx c;
    rlx_status st = lower_node(p, i, &c, p->scratch.addr);
    if (st != RLX_OK) return st;
    if (c.n_d != p->info[i].n_dispatch || c.counter_words != p->info[i].counter_words)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: lowering is not deterministic");
    /* likewise the x image: a consumer must not read one never made */
    if (c.xim_in_done != p->info[i].xim_taken || c.xim_out_done != p->info[i].xim_used)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: the x image changed between planning and recording");
    const ir_node *n = &p->g->nodes[i];
    vk_range rd[IR_MAX_INPUTS + 1], wr[2];
    int n_rd = 0, n_wr = 0;
    for (int j = 0; j < n->n_in; j++)
        if (p->loc[n->in[j]].tracked) rd[n_rd++] = range_of(p, n->in[j]);
    wr[n_wr++] = range_of(p, i);
    if (p->info[i].xim_taken) rd[n_rd++] = xim_range(p, p->info[p->info[i].xim_from].xim_slot);
    if (p->info[i].xim_used) wr[n_wr++] = xim_range(p, p->info[i].xim_slot);
    if (p->profile)
        p->ctx->f.vkCmdWriteTimestamp(r->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->queries, 2u + 2u * (uint32_t)i);
    for (int k = 0; k < c.n_d; k++) {
        const vk_dispatch *d = &c.d[k];
        int n_rd_k = n_rd, n_wr_k = n_wr;
        vk_range rdk[IR_MAX_INPUTS + 2], wrk[3];
        memcpy(rdk, rd, sizeof(vk_range) * (size_t)n_rd);
        memcpy(wrk, wr, sizeof(vk_range) * (size_t)n_wr);
        if (d->uses_scratch) {
            vk_range s = {p->scratch.buf, 0, p->scratch.size};
            rdk[n_rd_k++] = s;
            wrk[n_wr_k++] = s;
        }
        /* dispatches of one node depend on each other (pass 1 feeds pass 2) */
        if (k > 0) vk_rec_barrier(r);
        if ((st = access(r, rdk, n_rd_k, wrk, n_wr_k)) != RLX_OK) return st;
        if ((st = vk_rec_dispatch(p, r, d)) != RLX_OK) return st;
    }
    if (p->profile) {
        p->ctx->f.vkCmdWriteTimestamp(r->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, p->queries, 3u + 2u * (uint32_t)i);
        vk_rec_barrier(r);   /* a timestamp does not hold back later work: the barrier serializes nodes */
    }
    return RLX_OK;
}

/* Ends the segment before host step i: its inputs -> host staging. */
static rlx_status record_host_step(vk_program *p, recorder *r, int32_t i) {
    const ir_node *n = &p->g->nodes[i];
    vk_rec_barrier(r);
    for (int j = 0; j < n->n_in; j++) {
        int64_t b = node_bytes(&p->g->nodes[n->in[j]]);
        if (b == 0) continue;
        VkBufferCopy region = {p->loc[n->in[j]].offset, p->info[i].host_in_off[j], (VkDeviceSize)b};
        p->ctx->f.vkCmdCopyBuffer(r->cb, p->loc[n->in[j]].buf, p->hostio.buf, 1, &region);
    }
    p->segs[p->n_segs - 1].host_node_after = i;
    p->n_host++;
    rlx_status st = end_segment(p, r, false);
    if (st == RLX_OK) st = begin_segment(p, r, i);
    return st;
}

static rlx_status resolve_locations(vk_program *p, void *const *param_handles) {
    const ir_graph *g = p->g;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const plan_entry *e = &p->plan->entries[i];
        vk_loc *l = &p->loc[i];
        switch (e->storage) {
        case PLAN_ARENA:
            *l = (vk_loc){p->arena.buf, (VkDeviceSize)e->offset, p->arena.addr + (uint64_t)e->offset, true};
            break;
        case PLAN_PARAM: {
            const vk_buf *b = param_handles[e->base];
            if (!b) return rlx_fail(RLX_STATUS_INTERNAL, "vulkan: param node %d has no buffer", e->base);
            /* tracked: kv_write changes params (a KV cache) in place */
            *l = (vk_loc){b->buf, (VkDeviceSize)e->offset, b->addr + (uint64_t)e->offset, true};
            break;
        }
        case PLAN_CONST: {
            VkDeviceSize off = p->const_off[e->base] + (VkDeviceSize)e->offset;
            *l = (vk_loc){p->consts.buf, off, p->consts.addr + off, false};
            break;
        }
        }
    }
    return RLX_OK;
}

/* Every node's counters in one buffer, zeroed once (each dispatch that
 * counts leaves its counters zero again); none when no node asked. */
static rlx_status create_counters(vk_program *p) {
    uint64_t words = 0;
    for (int32_t i = 0; i < p->g->n_nodes; i++) {
        if (!p->info[i].gpu) continue;
        p->info[i].counter_off = (uint32_t)words;
        words += p->info[i].counter_words;
    }
    if (words == 0) return RLX_OK;
    if (words > UINT32_MAX / 4) return rlx_fail(RLX_STATUS_UNSUPPORTED, "vulkan: %llu counters", (unsigned long long)words);
    rlx_status st = vk_buf_create(p->ctx, 4 * words, false, "counters", &p->counters);
    return st == RLX_OK ? vk_fill_zero(p->ctx, &p->counters) : st;
}

/* The two x-image slots the used producers need, zeroed (the counters start
 * at zero and every dispatch leaves them so); none when no consumer took one.
 * A slot: the largest image, then a counter per 256-block of the largest
 * output, apart from every image (producers of different N share slots). */
static rlx_status create_images(vk_program *p) {
    VkDeviceSize image = 0, counters = 0;
    for (int32_t i = 0; i < p->g->n_nodes; i++)
        if (p->info[i].xim_used) {
            int64_t n = ir_shape_numel(&p->g->nodes[i].shape);
            image = RLX_MAX(image, (VkDeviceSize)vk_x_image_bytes(n));
            counters = RLX_MAX(counters, (VkDeviceSize)(n / 256) * 4);
        }
    if (image == 0) return RLX_OK;
    p->xim_image_bytes = (image + 255) & ~(VkDeviceSize)255;
    if (p->xim_image_bytes > UINT32_MAX) return rlx_fail(RLX_STATUS_UNSUPPORTED, "vulkan: x image of %llu bytes", (unsigned long long)image);
    p->xim_slot_bytes = p->xim_image_bytes + ((counters + 255) & ~(VkDeviceSize)255);
    VkDeviceSize bytes = 2 * p->xim_slot_bytes;
    rlx_status st = vk_buf_create(p->ctx, bytes, false, "x images", &p->xim);
    return st == RLX_OK ? vk_fill_zero(p->ctx, &p->xim) : st;
}

rlx_status vk_program_new(vk_device *d, const ir_graph *g, const mem_plan *plan, void *const *param_handles,
                          vk_program **out) {
    *out = NULL;
    vk_program *p = calloc(1, sizeof *p);
    if (!p) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
    p->dev = d;
    p->ctx = d->ctx;
    p->g = g;
    p->plan = plan;
    size_t n = (size_t)RLX_MAX(g->n_nodes, 1);
    p->const_off = calloc(n, sizeof *p->const_off);
    p->io_off = calloc(n, sizeof *p->io_off);
    p->loc = calloc(n, sizeof *p->loc);
    p->info = calloc(n, sizeof *p->info);
    p->segs = calloc(n + 1, sizeof *p->segs);
    p->input_nodes = calloc(n, sizeof *p->input_nodes);
    p->kv_checks = calloc(n, sizeof *p->kv_checks);
    p->planar_outputs = calloc(n, sizeof *p->planar_outputs);
    recorder r = {.p = p};
    rlx_status st = RLX_OK;
    if (!p->const_off || !p->io_off || !p->loc || !p->info || !p->segs || !p->input_nodes || !p->kv_checks ||
        !p->planar_outputs) {
        st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
        goto fail;
    }
    vk_ctx *c = p->ctx;

    /* buffers: arena, constants, I/O staging */
    VkDeviceSize const_bytes = 0, io_bytes = 0;
    for (int32_t i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op == IR_OP_CONST) {
            p->const_off[i] = const_bytes;
            const_bytes += align64(g->nodes[i].data_bytes);
        }
        p->io_off[i] = (VkDeviceSize)-1;
    }
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (ir_writes_kv_cache(&g->nodes[i]) && g->nodes[g->nodes[i].in[2]].op == IR_OP_INPUT)
            p->kv_checks[p->n_kv_checks++] = i;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == IR_OP_INPUT) {
            p->io_off[i] = io_bytes;
            io_bytes += align64((VkDeviceSize)node_bytes(&g->nodes[i]));
            p->input_nodes[p->n_input_nodes++] = i;
        }
    for (int32_t k = 0; k < g->n_outputs; k++) {
        int32_t i = g->outputs[k].node;
        if (p->io_off[i] != (VkDeviceSize)-1 && g->nodes[i].op != IR_OP_INPUT) continue;
        if (g->nodes[i].op == IR_OP_INPUT) continue;   /* an input returned as output reads back its own slot */
        p->io_off[i] = io_bytes;
        io_bytes += align64((VkDeviceSize)node_bytes(&g->nodes[i]));
        if (vk_layout_is_planar(g->nodes[i].dtype)) p->planar_outputs[p->n_planar_outputs++] = i;   /* once a node */
    }
    p->status_off = io_bytes;
    io_bytes += 64;
    if ((st = vk_buf_create(c, plan->arena_bytes, false, "the activation arena", &p->arena)) != RLX_OK) goto fail;
    if (d->opts.poison_arena && (st = vk_fill_words(c, &p->arena, 0xffffffffu)) != RLX_OK) goto fail;
    if ((st = vk_buf_create(c, const_bytes, false, "constants", &p->consts)) != RLX_OK) goto fail;
    if ((st = vk_buf_create(c, io_bytes, true, "input/output staging", &p->io)) != RLX_OK) goto fail;
    for (int32_t i = 0; i < g->n_nodes && st == RLX_OK; i++)
        if (g->nodes[i].op == IR_OP_CONST)
            st = vk_upload_as(c, &p->consts, p->const_off[i], g->nodes[i].data, g->nodes[i].data_bytes, g->nodes[i].dtype,
                              ir_shape_row_elems(&g->nodes[i].shape));
    if (st != RLX_OK) goto fail;
    if ((st = resolve_locations(p, param_handles)) != RLX_OK) goto fail;
    p->profile = rlx_profile_enabled() || d->trace;   /* a trace shows each node's GPU time */

    /* lowering decisions, then scratch and host staging */
    VkDeviceSize scratch_need, hostio_need;
    double t_lower = rlx_now_seconds();
    if ((st = plan_lowering(p, &scratch_need, &hostio_need)) != RLX_OK) goto fail;
    rlx_trace_event(d->trace, d->trace_host, "compile", "vulkan: plan lowering", t_lower, rlx_now_seconds(),
                    NULL);
    if ((st = vk_buf_create(c, scratch_need, false, "scratch", &p->scratch)) != RLX_OK) goto fail;
    if ((st = vk_buf_create(c, hostio_need, true, "host-step staging", &p->hostio)) != RLX_OK) goto fail;
    if ((st = create_images(p)) != RLX_OK) goto fail;
    if ((st = create_counters(p)) != RLX_OK) goto fail;
    p->recording = true;

    VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = c->queue_family};
    VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    p->spin_cap_s = spin_cap_seconds(&p->dev->tuning);
    if (p->profile && !(p->prof_us = calloc((size_t)g->n_nodes, sizeof *p->prof_us))) {
        st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory");
        goto fail;
    }
    VkQueryPoolCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO, .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                 .queryCount = p->profile ? 2u + 2u * (uint32_t)g->n_nodes : 2u};
    if ((st = vk_check(c->f.vkCreateCommandPool(c->dev, &pci, NULL, &p->pool), "vkCreateCommandPool")) != RLX_OK ||
        (st = vk_check(c->f.vkCreateFence(c->dev, &fci, NULL, &p->fence), "vkCreateFence")) != RLX_OK ||
        (st = vk_check(c->f.vkCreateQueryPool(c->dev, &qci, NULL, &p->queries), "vkCreateQueryPool")) != RLX_OK)
        goto fail;

    /* record once */
    double t_record = rlx_now_seconds();
    if ((st = begin_segment(p, &r, -1)) != RLX_OK) goto fail;
    for (int32_t i = 0; i < g->n_nodes && st == RLX_OK; i++) {
        if (!is_step(g, plan, i)) continue;
        st = p->info[i].host ? record_host_step(p, &r, i) : record_dispatches(p, &r, i);
        if (st != RLX_OK) {
            char lbl[128];
            st = rlx_fail(st, "vulkan: recording %s: %s", ir_node_label(g, i, lbl, sizeof lbl), rlx_last_error());
        }
    }
    if (st == RLX_OK) st = end_segment(p, &r, true);
    if (st != RLX_OK) goto fail;
    rlx_trace_event(d->trace, d->trace_host, "compile", "vulkan: lower, create pipelines, record", t_record, rlx_now_seconds(),
                    "\"segments\":%d,\"dispatches\":%d", p->n_segs, p->n_dispatches);
    free(r.reads);
    free(r.writes);
    *out = p;
    return RLX_OK;
fail:
    free(r.reads);
    free(r.writes);
    vk_program_free(p);
    return st;
}

void vk_program_free(vk_program *p) {
    if (!p) return;
    vk_ctx *c = p->ctx;
    if (c) {
        if (p->queries) c->f.vkDestroyQueryPool(c->dev, p->queries, NULL);
        if (p->fence) c->f.vkDestroyFence(c->dev, p->fence, NULL);
        if (p->pool) c->f.vkDestroyCommandPool(c->dev, p->pool, NULL);   /* frees the command buffers */
        vk_buf_destroy(c, &p->arena);
        vk_buf_destroy(c, &p->consts);
        vk_buf_destroy(c, &p->scratch);
        vk_buf_destroy(c, &p->io);
        vk_buf_destroy(c, &p->hostio);
        vk_buf_destroy(c, &p->xim);
        vk_buf_destroy(c, &p->counters);
    }
    free(p->const_off);
    free(p->io_off);
    free(p->loc);
    free(p->info);
    free(p->segs);
    free(p->input_nodes);
    free(p->planar_outputs);
    free(p->kv_checks);
    free(p->prof_us);
    free(p);
}
