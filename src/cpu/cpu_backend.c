/*
 * cpu_backend.c — CPU device, params and programs.
 *
 * A program resolves every tensor to a host pointer once (arena + offset,
 * param buffer, constant data) and keeps one prepared cpu_kernel_ctx per
 * step, so a run is: copy inputs into the arena, call each kernel in order.
 * With RLX_PROFILE=1 (read when the program is built) each step is timed
 * (wall clock) and the report shows the mean per step and per op. With a
 * trace (cpu_device_set_trace) each run's input copies and steps are
 * recorded as trace events from the same clock readings.
 */
#include "cpu/cpu_backend.h"
#include "cpu/cpu_kernel.h"
#include "core/profile.h"
#include "core/trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cpu_device {
    rlx_threadpool *pool;
    int             threads;
    rlx_trace      *trace;       /* borrowed from the exec; NULL: off */
    int             trace_tid;
    bool            exact_quant;   /* rlx_compile_options.exact_quant, given to every kernel */
    bool            poison;        /* NaN bytes in the arena before every run */
};

typedef struct cpu_step {
    cpu_kernel_fn  fn;
    cpu_kernel_ctx ctx;
    int32_t        node;
} cpu_step;

struct cpu_program {
    cpu_device     *dev;
    const ir_graph *g;
    const mem_plan *plan;
    uint8_t        *arena;
    void          **ptr;       /* per node */
    cpu_step       *steps;
    int             n_steps;
    bool            poison;
    double         *prof_us;   /* RLX_PROFILE: wall microseconds summed per step over successful runs */
    double         *prof_run;  /* this run's, added to prof_us when the run succeeds */
    int             prof_runs;
};

rlx_status cpu_device_new(int threads, bool exact_quant, bool poison, cpu_device **out) {
    *out = NULL;
    cpu_device *d = calloc(1, sizeof *d);
    if (!d) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
    d->threads = threads > 0 ? threads : rlx_cpu_count();
    d->exact_quant = exact_quant;
    d->poison = poison;
    if (d->threads > 1) {
        d->pool = rlx_threadpool_new(d->threads);
        if (!d->pool) {
            rlx_log_msg(RLX_LOG_WARN, "cpu: could not start %d threads; running single-threaded", d->threads);
            d->threads = 1;
        }
    }
    *out = d;
    return RLX_OK;
}

void cpu_device_free(cpu_device *dev) {
    if (!dev) return;
    rlx_threadpool_free(dev->pool);
    free(dev);
}

int cpu_device_threads(const cpu_device *dev) { return dev->threads; }

void cpu_device_set_trace(cpu_device *dev, rlx_trace *t, int tid) {
    dev->trace = t;
    dev->trace_tid = tid;
}

rlx_status cpu_param_alloc(cpu_device *dev, size_t bytes, void **handle) {
    (void)dev;   /* host memory needs no device; the signature matches other backends */
    /* zero without a pass over it: most params are written next, or replaced
     * by the caller's memory, and a KV cache is filled a row at a time */
    void *p = rlx_fault("cpu_param_alloc") ? NULL : rlx_zeroed_alloc(bytes ? bytes : 1);
    if (!p) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "cpu: cannot allocate %zu bytes for a param", bytes);
    *handle = p;
    return RLX_OK;
}

rlx_status cpu_param_write(cpu_device *dev, void *handle, const void *data, size_t bytes) {
    (void)dev;
    if (bytes) memcpy(handle, data, bytes);   /* an empty param may come with no data pointer */
    return RLX_OK;
}

void cpu_param_free(cpu_device *dev, void *handle) {
    (void)dev;
    rlx_zeroed_free(handle);
}

bool cpu_program_holds(const cpu_program *p, const void *ptr, size_t bytes) {
    uintptr_t a = (uintptr_t)p->arena, n = (uintptr_t)p->plan->arena_bytes, q = (uintptr_t)ptr;
    return q < a + n && a < q + (bytes ? bytes : 1);
}

static void fill_tensor(cpu_tensor *t, void *data, const ir_node *n) {
    t->data = data;
    t->dtype = n->dtype;
    t->rank = n->shape.rank;
    ir_shape_dims(&n->shape, t->dims);
    t->numel = ir_shape_numel(&n->shape);
}

rlx_status cpu_program_new(cpu_device *dev, const ir_graph *g, const mem_plan *plan, void *const *param_handles,
                           cpu_program **out) {
    *out = NULL;
    cpu_program *p = calloc(1, sizeof *p);
    if (!p) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
    p->dev = dev;
    p->g = g;
    p->plan = plan;
    p->poison = dev->poison;
    p->arena = rlx_aligned_alloc(plan->arena_bytes ? plan->arena_bytes : 1);
    p->ptr = calloc((size_t)RLX_MAX(g->n_nodes, 1), sizeof *p->ptr);
    p->steps = calloc((size_t)RLX_MAX(g->n_nodes, 1), sizeof *p->steps);
    if (!p->arena || !p->ptr || !p->steps) {
        cpu_program_free(p);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "cpu: cannot allocate an arena of %zu bytes", plan->arena_bytes);
    }
    /* NaN bytes, so that an element no kernel wrote shows up in tests */
    memset(p->arena, 0xff, plan->arena_bytes);
    if (rlx_profile_enabled() && (!(p->prof_us = calloc((size_t)RLX_MAX(g->n_nodes, 1), sizeof *p->prof_us)) ||
                                  !(p->prof_run = calloc((size_t)RLX_MAX(g->n_nodes, 1), sizeof *p->prof_run)))) {
        cpu_program_free(p);
        return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "cpu: out of memory");
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const plan_entry *e = &plan->entries[i];
        switch (e->storage) {
        case PLAN_ARENA: p->ptr[i] = p->arena + e->offset; break;
        case PLAN_PARAM: p->ptr[i] = (uint8_t *)param_handles[e->base] + e->offset; break;
        case PLAN_CONST: p->ptr[i] = (uint8_t *)g->nodes[e->base].data + e->offset; break;
        }
    }
    for (int32_t i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (n->op == IR_OP_INPUT || n->op == IR_OP_PARAM || n->op == IR_OP_CONST || plan->entries[i].is_view) continue;
        cpu_kernel_fn fn = cpu_kernel_for(n->op);
        if (!fn) {
            char lbl[128];
            cpu_program_free(p);
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "cpu: %s has no CPU kernel", ir_node_label(g, i, lbl, sizeof lbl));
        }
        cpu_step *s = &p->steps[p->n_steps++];
        s->fn = fn;
        s->node = i;
        s->ctx.node = n;
        s->ctx.n_in = n->n_in;
        s->ctx.pool = dev->pool;
        s->ctx.exact_quant = dev->exact_quant;
        for (int j = 0; j < n->n_in; j++) fill_tensor(&s->ctx.in[j], p->ptr[n->in[j]], &g->nodes[n->in[j]]);
        fill_tensor(&s->ctx.out, p->ptr[i], n);
    }
    *out = p;
    return RLX_OK;
}

void cpu_program_free(cpu_program *p) {
    if (!p) return;
    rlx_aligned_free(p->arena);
    free(p->ptr);
    free(p->steps);
    free(p->prof_us);
    free(p->prof_run);
    free(p);
}

/* A step's trace event: its op, with the node's index and name. */
static void trace_step(const cpu_program *p, int32_t node, double t0, double t1) {
    const ir_node *n = &p->g->nodes[node];
    const ir_op_info *info = ir_op_info_get(n->op);
    char esc[160];
    rlx_trace_event(p->dev->trace, p->dev->trace_tid, "cpu", info ? info->name : "?", t0, t1,
                    "\"node\":%d,\"name\":\"%s\"", (int)node, rlx_json_escape(n->name, esc, sizeof esc));
}

rlx_status cpu_program_run(cpu_program *p, const void *const *inputs) {
    rlx_trace *trace = p->dev->trace;
    if (p->poison) memset(p->arena, 0xff, p->plan->arena_bytes);
    double t_in = trace ? rlx_now_seconds() : 0;
    size_t in_bytes = 0;
    for (int32_t i = 0; i < p->g->n_nodes; i++) {
        if (p->g->nodes[i].op != IR_OP_INPUT || !inputs[i]) continue;
        memcpy(p->ptr[i], inputs[i], (size_t)p->plan->entries[i].bytes);
        in_bytes += (size_t)p->plan->entries[i].bytes;
    }
    if (trace)
        rlx_trace_event(trace, p->dev->trace_tid, "upload", "copy inputs", t_in, rlx_now_seconds(), "\"bytes\":%zu", in_bytes);
    bool timed = p->prof_us || trace;
    for (int s = 0; s < p->n_steps; s++) {
        double t0 = timed ? rlx_now_seconds() : 0;
        rlx_status st = p->steps[s].fn(&p->steps[s].ctx);
        if (st != RLX_OK) return st;
        if (!timed) continue;
        double t1 = rlx_now_seconds();
        if (p->prof_us) p->prof_run[s] = (t1 - t0) * 1e6;
        if (trace) trace_step(p, p->steps[s].node, t0, t1);
    }
    if (p->prof_us) {
        for (int s = 0; s < p->n_steps; s++) p->prof_us[s] += p->prof_run[s];
        p->prof_runs++;
    }
    return RLX_OK;
}

void *cpu_program_result(cpu_program *p, int32_t node) { return p->ptr[node]; }

int cpu_program_steps(const cpu_program *p) { return p->n_steps; }

char *cpu_program_report(const cpu_program *p) {
    bool prof = p->prof_us && p->prof_runs > 0;
    size_t cap = 256 + (size_t)p->g->n_nodes * (prof ? 300 : 200), len = 0;
    char *out = malloc(cap);
    if (!out) return NULL;
    out[0] = 0;
    double *node_us = prof ? calloc((size_t)RLX_MAX(p->g->n_nodes, 1), sizeof *node_us) : NULL;
    for (int s = 0; node_us && s < p->n_steps; s++) node_us[p->steps[s].node] = p->prof_us[s] / p->prof_runs;
    for (int32_t i = 0; i < p->g->n_nodes; i++) {
        const ir_node *n = &p->g->nodes[i];
        const plan_entry *e = &p->plan->entries[i];
        bool kernel = !(n->op == IR_OP_INPUT || n->op == IR_OP_PARAM || n->op == IR_OP_CONST || e->is_view);
        const char *path = n->op == IR_OP_INPUT || n->op == IR_OP_PARAM || n->op == IR_OP_CONST ? "source"
                         : e->is_view ? "view" : "cpu-kernel";
        char shape[160], lbl[128], us[32] = "";
        ir_shape_format(&n->shape, p->g, shape, sizeof shape);
        if (node_us && kernel) snprintf(us, sizeof us, "  %10.2f us", node_us[i]);
        if (!rlx_report_add(out, cap, &len, "%4d  %-11s %-40s %s%-20s%s\n", i, path, ir_node_label(p->g, i, lbl, sizeof lbl),
                            rlx_dtype_name(n->dtype), shape, us))
            break;
    }
    if (prof) {   /* per op: the step's op name is its kind */
        const char **kind = malloc(sizeof(char *) * (size_t)RLX_MAX(p->n_steps, 1));
        double *us = malloc(sizeof(double) * (size_t)RLX_MAX(p->n_steps, 1));
        if (kind && us) {
            for (int s = 0; s < p->n_steps; s++) {
                const ir_op_info *info = ir_op_info_get(p->g->nodes[p->steps[s].node].op);
                kind[s] = info ? info->name : "?";
                us[s] = p->prof_us[s] / p->prof_runs;
            }
            rlx_profile_summary(out, cap, &len, kind, us, p->n_steps, "wall", p->prof_runs);
        }
        free(kind);
        free(us);
    }
    free(node_us);
    return out;
}

rlx_status cpu_run_node(const ir_graph *g, int32_t node, void *const *inputs, void *output, bool exact_quant) {
    const ir_node *n = &g->nodes[node];
    cpu_kernel_fn fn = cpu_kernel_for(n->op);
    char lbl[128];
    if (!fn) return rlx_fail(RLX_STATUS_UNSUPPORTED, "cpu: %s has no CPU kernel", ir_node_label(g, node, lbl, sizeof lbl));
    cpu_kernel_ctx k;
    memset(&k, 0, sizeof k);
    k.node = n;
    k.n_in = n->n_in;
    k.exact_quant = exact_quant;
    for (int j = 0; j < n->n_in; j++) fill_tensor(&k.in[j], inputs[j], &g->nodes[n->in[j]]);
    fill_tensor(&k.out, output, n);
    return fn(&k);
}
