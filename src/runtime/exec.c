/*
 * exec.c — the backend-neutral executable behind rlx_compile / rlx_exec_*.
 *
 * Compile: verify, fuse (what the backend claims), dce, then keep the
 * optimized graph with its symbolic dims. Run: check the named inputs, bind
 * the symbols from their shapes, and run the specialization for that binding,
 * creating (specialize -> shape-dependent folds the backend claims -> plan ->
 * backend program) and caching it on first use. Graphs without symbols are specialized at compile time, so that
 * compile reports every error and run does no planning.
 *
 * Debugging options: trace_path records each phase, run, param upload and
 * readback here (and each step in the backend) to a Chrome / Perfetto trace
 * (core/trace.h); check_numerics plans without reuse and scans every
 * result after each run (numerics.c).
 */
#include "runtime/backend.h"
#include "runtime/numerics.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RT_MAX_SPECS 32

typedef struct rt_spec {
    int64_t     syms[IR_MAX_SYMS];
    ir_graph    g;
    mem_plan    plan;
    void       *prog;
    const void **inputs;       /* per node, filled per run */
    uint64_t    last_used;
    int         folded_nodes;  /* per-specialization folds (pass_fold_norm_inplace, pass_fold_epilogue_inplace) */
} rt_spec;

struct rlx_exec {
    const rt_backend   *be;
    void               *dev;
    rlx_compile_options opts;
    ir_graph            graph;        /* optimized, symbolic */
    int32_t            *input_nodes;
    int                 n_inputs;
    int32_t            *param_nodes;
    int                 n_params;
    void              **param_by_node; /* handle per node id (NULL when not a param) */
    bool               *borrowed;      /* per node id: the param reads the caller's memory (not freed here) */
    rt_spec            *specs[RT_MAX_SPECS];
    int                 n_specs;
    rt_spec            *current;
    /* After a param's memory changed: the program of the last run, out of the
     * cache but kept (with param memory it may alias) so that its outputs
     * stay readable until the next run or free, as rlx.h promises */
    rt_spec            *retired;
    void              **retired_params;
    int                 n_retired_params, cap_retired_params;
    uint64_t            clock;
    int                 fused_nodes;
    bool                has_run;       /* a run succeeded since the last failure */
    rlx_trace          *trace;         /* trace_path: NULL when off */
    int                 trace_tid;     /* this exec's host track (compile and runs) */
    rt_numerics         numerics;      /* check_numerics: the last run's */
    bn_fold_list        bn_folds;      /* batch_norm folds over params (passes/fold_bn.c) */
    bool                bn_folds_dirty; /* a source param changed since the folded params were written */
};

/* A trace event on the exec's host track from t0 until now. */
#define TRACE_SPAN(e, cat, name, t0, ...)                                                                  \
    do {                                                                                                  \
        if ((e)->trace) rlx_trace_event((e)->trace, (e)->trace_tid, cat, name, t0, rlx_now_seconds(), __VA_ARGS__); \
    } while (0)
static double trace_clock(const rlx_exec *e) { return e->trace ? rlx_now_seconds() : 0; }

void rlx_compile_options_init(rlx_compile_options *o) {
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = RLX_BACKEND_AUTO;
    o->threads = 0;
    o->fuse = 1;
    o->optimize = 1;
    o->device_index = -1;
    o->device_name = NULL;
    o->precision = RLX_PRECISION_F32;
    o->exact_quant = 0;
}

/* Environment variables override the documented options. */
static rlx_status apply_env(rlx_compile_options *o) {
    const char *dev = getenv("RLX_DEVICE");
    if (dev && *dev) {
        if (strcmp(dev, "cpu") == 0) o->backend = RLX_BACKEND_CPU;
        else if (strcmp(dev, "vulkan") == 0 || strcmp(dev, "gpu") == 0) o->backend = RLX_BACKEND_VULKAN;
        else if (strcmp(dev, "auto") == 0) o->backend = RLX_BACKEND_AUTO;
        else {   /* a Vulkan device index or a substring of its name */
            char *end;
            long idx = strtol(dev, &end, 10);
            o->backend = RLX_BACKEND_VULKAN;
            if (*end == 0 && idx >= 0 && idx < 64) o->device_index = (int)idx;
            else o->device_name = dev;
        }
    }
    o->threads = rlx_env_int("RLX_THREADS", o->threads);
    if (rlx_env_int("RLX_NO_FUSE", 0)) o->fuse = 0;
    const char *trace = getenv("RLX_TRACE");
    if (trace && *trace) o->trace_path = trace;
    o->check_numerics = rlx_env_int("RLX_CHECK_NUMERICS", o->check_numerics);
    if (rlx_env_int("RLX_EXACT_QUANT", 0)) o->exact_quant = 1;
    if (rlx_env_int("RLX_POISON", 0)) o->poison = 1;
    return RLX_OK;
}

static void spec_free(rlx_exec *e, rt_spec *s) {
    if (!s) return;
    if (s->prog) e->be->program_free(s->prog);
    plan_free(&s->plan);
    ir_graph_clear(&s->g);
    free(s->inputs);
    free(s);
}

/* Frees what drop_specs kept for the last run's outputs (at the next run). */
static void release_retired(rlx_exec *e) {
    if (e->retired) {
        if (e->current == e->retired) e->current = NULL;
        spec_free(e, e->retired);
        e->retired = NULL;
    }
    for (int i = 0; i < e->n_retired_params; i++) e->be->param_free(e->dev, e->retired_params[i]);
    e->n_retired_params = 0;
}

void rlx_exec_free(rlx_exec *e) {
    if (!e) return;
    release_retired(e);
    free(e->retired_params);
    for (int i = 0; i < e->n_specs; i++) spec_free(e, e->specs[i]);
    if (e->param_by_node)
        for (int i = 0; i < e->n_params; i++) {
            void *h = e->param_by_node[e->param_nodes[i]];
            if (h && !e->borrowed[e->param_nodes[i]]) e->be->param_free(e->dev, h);
        }
    if (e->dev) e->be->device_free(e->dev);
    rlx_trace_close(e->trace);
    ir_graph_clear(&e->graph);
    free(e->input_nodes);
    free(e->param_nodes);
    free(e->param_by_node);
    free(e->borrowed);
    bn_fold_list_free(&e->bn_folds);
    free(e);
}

static rlx_status make_spec(rlx_exec *e, const int64_t *syms, rt_spec **out) {
    rt_spec *s = calloc(1, sizeof *s);
    if (!s) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "compile: out of memory");
    memcpy(s->syms, syms, sizeof s->syms);
    double t = trace_clock(e);
    rlx_status st = pass_specialize(&e->graph, syms, &s->g);
    TRACE_SPAN(e, "compile", "specialize", t, "\"nodes\":%d", (int)s->g.n_nodes);
    int folded = 0;
    t = trace_clock(e);
    if (st == RLX_OK && e->opts.optimize && e->opts.fuse && e->be->claims.norm_fold_rows > 0) {
        st = pass_fold_norm_inplace(&s->g, e->be->claims.norm_fold_rows, e->be->folds_norm, e->dev, &folded);
        TRACE_SPAN(e, "compile", "fold norms", t, "\"folded\":%d", folded);
    }
    s->folded_nodes = folded;
    if (st == RLX_OK && e->opts.optimize && e->opts.fuse && e->be->claims.epilogue_fold && e->be->folds_epilogue) {
        int n = 0;
        t = trace_clock(e);
        st = pass_fold_epilogue_inplace(&s->g, e->be->folds_epilogue, e->dev, &n);
        TRACE_SPAN(e, "compile", "fold epilogues", t, "\"folded\":%d", n);
        s->folded_nodes += n;
    }
    if (st == RLX_OK && e->opts.optimize && e->opts.fuse && e->be->claims.combine_fold && e->be->folds_combine) {
        int n = 0;
        t = trace_clock(e);
        st = pass_fold_combine_inplace(&s->g, e->be->folds_combine, e->dev, &n);
        TRACE_SPAN(e, "compile", "fold combines", t, "\"folded\":%d", n);
        s->folded_nodes += n;
    }
    t = trace_clock(e);
    /* the numerics check reads every result after the run: none may reuse another's bytes */
    if (st == RLX_OK) st = e->opts.check_numerics ? plan_memory_pinned(&s->g, &s->plan) : plan_memory(&s->g, &s->plan);
    TRACE_SPAN(e, "compile", "plan memory", t, "\"arena_bytes\":%zu,\"tensor_bytes\":%zu", s->plan.arena_bytes,
               s->plan.tensor_bytes);
    if (st == RLX_OK && e->opts.optimize && e->opts.fuse && e->be->plan_x_images) {   /* attributes only: the plan holds */
        int images = 0;
        st = e->be->plan_x_images(e->dev, &s->g, &s->plan, &images);
    }
    if (st == RLX_OK && !(s->inputs = calloc((size_t)RLX_MAX(s->g.n_nodes, 1), sizeof *s->inputs)))
        st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "compile: out of memory");
    t = trace_clock(e);
    if (st == RLX_OK) {
        st = e->be->program_new(e->dev, &s->g, &s->plan, e->param_by_node, &s->prog);
        TRACE_SPAN(e, "compile", "backend program", t, "\"backend\":\"%s\"", e->be->name);
    }
    if (st != RLX_OK) { free(s->inputs); s->inputs = NULL; spec_free(e, s); return st; }
    *out = s;
    return RLX_OK;
}

/* The cached specialization for syms, created on first use (LRU eviction). */
static rlx_status get_spec(rlx_exec *e, const int64_t *syms, rt_spec **out) {
    for (int i = 0; i < e->n_specs; i++)
        if (memcmp(e->specs[i]->syms, syms, sizeof e->specs[i]->syms) == 0) {
            *out = e->specs[i];
            (*out)->last_used = ++e->clock;
            return RLX_OK;
        }
    rt_spec *s = NULL;
    rlx_status st = make_spec(e, syms, &s);
    if (st != RLX_OK) return st;
    if (e->n_specs == RT_MAX_SPECS) {
        int oldest = 0;
        for (int i = 1; i < e->n_specs; i++) if (e->specs[i]->last_used < e->specs[oldest]->last_used) oldest = i;
        if (e->current == e->specs[oldest]) e->current = NULL;
        spec_free(e, e->specs[oldest]);
        e->specs[oldest] = e->specs[--e->n_specs];
    }
    s->last_used = ++e->clock;
    e->specs[e->n_specs++] = s;
    *out = s;
    return RLX_OK;
}

static rlx_status optimize(rlx_exec *e, const ir_graph *src, const rlx_compile_options *o, const rt_backend *be,
                           ir_graph *dst, int *fused) {
    *fused = 0;
    if (!o->optimize) return ir_graph_clone(src, dst);
    ir_graph fusedg, bn_folded;
    rlx_status st = RLX_OK;
    double t = trace_clock(e);
    int n_bn = 0;
    if (o->fuse && be->claims.conv_bn_fold) {   /* first: a relu after the batch_norm joins the conv */
        st = pass_fold_batch_norm(src, &bn_folded, &e->bn_folds, &n_bn);
        TRACE_SPAN(e, "compile", "fold batch_norm", t, "\"folded\":%d", n_bn);
        if (st != RLX_OK) return st;
        src = &bn_folded;
        e->bn_folds_dirty = e->bn_folds.n > 0;
        t = trace_clock(e);
    }
    if (o->fuse) {
        st = pass_fuse(src, &be->claims, &fusedg, fused);
        *fused += n_bn;
        TRACE_SPAN(e, "compile", "fuse", t, "\"fused_nodes\":%d", *fused);
    } else {
        st = ir_graph_clone(src, &fusedg);
    }
    if (src == &bn_folded) ir_graph_clear(&bn_folded);
    if (st != RLX_OK) return st;
    t = trace_clock(e);
    st = pass_dce(&fusedg, dst);
    TRACE_SPAN(e, "compile", "dce", t, "\"nodes\":%d", st == RLX_OK ? (int)dst->n_nodes : 0);
    ir_graph_clear(&fusedg);
    return st;
}

static bool graph_has_symbols(const ir_graph *g) {
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (!ir_shape_is_static(&g->nodes[i].shape)) return true;
    return false;
}

/* Every symbol a node uses must appear in some input, or no run can bind it. */
static rlx_status check_symbols_bindable(const ir_graph *g) {
    for (int s = 0; s < g->n_syms; s++) {
        bool used = false, in_input = false;
        for (int32_t i = 0; i < g->n_nodes; i++) {
            const ir_shape *sh = &g->nodes[i].shape;
            for (int d = 0; d < sh->rank; d++) {
                if (!sh->d[d].coef[s]) continue;
                used = true;
                if (g->nodes[i].op == IR_OP_INPUT) in_input = true;
            }
        }
        if (used && !in_input)
            return rlx_fail(RLX_STATUS_SHAPE, "rlx_compile: symbol '%s' is used but appears in no input, so no run can bind it",
                            g->sym_names[s]);
    }
    return RLX_OK;
}

/* Most threads an exec may ask for: a larger count is a mistake, and trying
 * to start it ties up the machine for seconds before failing. */
#define RT_MAX_THREADS 1024

static rlx_status check_options(const rlx_compile_options *o, const char *where) {
    const char *why = NULL;
    if (o->threads < 0) why = "threads must be >= 0 (0 = one per core)";
    else if (o->threads > RT_MAX_THREADS) why = "threads must be <= 1024";
    else if ((unsigned)o->backend > RLX_BACKEND_VULKAN) why = "backend is not an rlx_backend (AUTO, CPU, VULKAN)";
    else if ((unsigned)o->precision > RLX_PRECISION_FAST) why = "precision is not an rlx_precision (F32, FAST)";
    else if (o->device_index < -1) why = "device_index must be >= 0, or -1 for the best device";
    else if (o->check_numerics != 0 && o->check_numerics != 1) why = "check_numerics must be 0 or 1";
    else if (o->fuse != 0 && o->fuse != 1) why = "fuse must be 0 or 1";
    else if (o->optimize != 0 && o->optimize != 1) why = "optimize must be 0 or 1";
    else if (o->exact_quant != 0 && o->exact_quant != 1) why = "exact_quant must be 0 or 1";
    else if (o->poison != 0 && o->poison != 1) why = "poison must be 0 or 1";
    if (why) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_compile: options%s: %s", where, why);
    return RLX_OK;
}

rlx_status rlx_compile(const rlx_graph *graph, const rlx_compile_options *opts, rlx_exec **out) {
    if (!out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_compile: out is NULL");
    *out = NULL;
    if (!graph) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_compile: graph is NULL");
    const ir_graph *g = &graph->g;
    if (g->first_error != RLX_OK)
        return rlx_fail(g->first_error, "rlx_compile: the graph has a builder error: %s", graph->first_error_msg);
    if (g->n_outputs == 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_compile: the graph has no outputs");
    double t_verify = rlx_now_seconds();
    rlx_status st = ir_graph_verify(g);
    if (st != RLX_OK) return st;
    double t_verified = rlx_now_seconds();

    rlx_exec *e = calloc(1, sizeof *e);
    if (!e) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_compile: out of memory");
    if (opts) e->opts = *opts; else rlx_compile_options_init(&e->opts);
    if ((st = check_options(&e->opts, "")) != RLX_OK) goto fail;
    if ((st = apply_env(&e->opts)) != RLX_OK) goto fail;
    if ((st = check_options(&e->opts, " (after RLX_THREADS / RLX_DEVICE / RLX_EXACT_QUANT / RLX_CHECK_NUMERICS)")) != RLX_OK) goto fail;
    if ((st = rt_backend_choose(&e->opts, &e->be)) != RLX_OK) goto fail;
    static int serial;   /* names each exec's tracks apart in a shared trace */
    int exec_id = 0;
    if (e->opts.trace_path && *e->opts.trace_path && (e->trace = rlx_trace_open(e->opts.trace_path))) {
        exec_id = __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED);
        char track[64];
        snprintf(track, sizeof track, "exec %d (%s): host", exec_id, e->be->name);
        e->trace_tid = rlx_trace_track(e->trace, track);
        rlx_trace_event(e->trace, e->trace_tid, "compile", "verify", t_verify, t_verified, "\"nodes\":%d", (int)g->n_nodes);
    }
    e->opts.trace_path = NULL;   /* not kept: the caller's string may go */
    if ((st = optimize(e, g, &e->opts, e->be, &e->graph, &e->fused_nodes)) != RLX_OK) goto fail;
    double t = trace_clock(e);
    if ((st = e->be->device_new(&e->opts, &e->dev)) != RLX_OK) goto fail;
    TRACE_SPAN(e, "compile", "device", t, "\"backend\":\"%s\"", e->be->name);
    if (e->trace && e->be->device_trace) {
        char track[64];
        snprintf(track, sizeof track, "exec %d (%s): gpu", exec_id, e->be->name);
        int gpu_tid = strcmp(e->be->name, "cpu") != 0 ? rlx_trace_track(e->trace, track) : 0;
        e->be->device_trace(e->dev, e->trace, e->trace_tid, gpu_tid);
    }
    t = trace_clock(e);

    int32_t n = e->graph.n_nodes;
    e->input_nodes = malloc((size_t)RLX_MAX(n, 1) * sizeof *e->input_nodes);
    e->param_nodes = malloc((size_t)RLX_MAX(n, 1) * sizeof *e->param_nodes);
    e->param_by_node = calloc((size_t)RLX_MAX(n, 1), sizeof *e->param_by_node);
    e->borrowed = calloc((size_t)RLX_MAX(n, 1), sizeof *e->borrowed);
    if (!e->input_nodes || !e->param_nodes || !e->param_by_node || !e->borrowed) {
        st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_compile: out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < n; i++) {
        const ir_node *node = &e->graph.nodes[i];
        if (node->op == IR_OP_INPUT) e->input_nodes[e->n_inputs++] = i;
        if (node->op != IR_OP_PARAM) continue;
        size_t bytes = (size_t)ir_node_bytes(node);
        e->param_nodes[e->n_params++] = i;
        if ((st = e->be->param_alloc(e->dev, bytes, &e->param_by_node[i])) != RLX_OK) goto fail;
    }
    TRACE_SPAN(e, "compile", "param allocation", t, "\"params\":%d", e->n_params);
    if ((st = check_symbols_bindable(&e->graph)) != RLX_OK) goto fail;
    if (!graph_has_symbols(&e->graph)) {
        int64_t none[IR_MAX_SYMS] = {0};
        if ((st = get_spec(e, none, &e->current)) != RLX_OK) goto fail;
    }
    rlx_trace_flush(e->trace);
    *out = e;
    return RLX_OK;
fail:
    rlx_exec_free(e);
    return st;
}

/* ---------------------------------------------------------------- params */

static int32_t find_param(const rlx_exec *e, const char *name) {
    for (int i = 0; i < e->n_params; i++)
        if (strcmp(e->graph.nodes[e->param_nodes[i]].name, name) == 0) return e->param_nodes[i];
    return -1;
}

/* The param `name` as a node id, after checking dtype, size and data as
 * both ways of setting a param need (where: the API function's name). */
static rlx_status find_param_checked(const rlx_exec *e, const char *where, const char *name, rlx_dtype dtype,
                                     const void *data, size_t bytes, int32_t *id_out) {
    if (!e) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: exec is NULL", where);
    if (!name) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: name is NULL", where);
    if ((unsigned)dtype >= RLX_DTYPE_COUNT)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s '%s': dtype %d is not an rlx_dtype", where, name, (int)dtype);
    int32_t id = find_param(e, name);
    if (id < 0) return rlx_fail(RLX_STATUS_NOT_FOUND, "%s: no param named '%s'", where, name);
    const ir_node *p = &e->graph.nodes[id];
    size_t want = (size_t)ir_node_bytes(p);
    if (dtype != p->dtype)
        return rlx_fail(RLX_STATUS_SHAPE, "%s '%s': dtype %s given, the param is %s", where, name, rlx_dtype_name(dtype),
                        rlx_dtype_name(p->dtype));
    if (bytes != want)
        return rlx_fail(RLX_STATUS_SHAPE, "%s '%s': %zu bytes given, the param has %zu", where, name, bytes, want);
    if (!data && bytes) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s '%s': data is NULL", where, name);
    *id_out = id;
    return RLX_OK;
}

/* Compiled programs hold params' addresses: when one changes, they go (each
 * is compiled again on its next run), except the last run's, which is kept
 * out of the cache until the next run so that its outputs stay readable. */
static void drop_specs(rlx_exec *e) {
    for (int i = 0; i < e->n_specs; i++)
        if (e->specs[i] != e->current) spec_free(e, e->specs[i]);
    e->n_specs = 0;
    if (e->current && e->current != e->retired) {
        if (e->retired) spec_free(e, e->retired);
        e->retired = e->current;
    }
}

/* A param's own memory, replaced: freed now, or with the retired program
 * when there is one (an output may be that param). */
static rlx_status retire_param_memory(rlx_exec *e, void *handle) {
    if (!e->current) {
        e->be->param_free(e->dev, handle);
        return RLX_OK;
    }
    if (e->n_retired_params == e->cap_retired_params) {
        int cap = e->cap_retired_params ? 2 * e->cap_retired_params : 8;
        void **grown = realloc(e->retired_params, (size_t)cap * sizeof *grown);
        if (!grown) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_exec: out of memory");
        e->retired_params = grown;
        e->cap_retired_params = cap;
    }
    e->retired_params[e->n_retired_params++] = handle;
    return RLX_OK;
}

/* Whether the graph writes param `id` in place (a KV cache, or assign: the
 * written input is the param itself, as their shape rules require). */
static bool param_written(const rlx_exec *e, int32_t id) {
    const ir_graph *g = &e->graph;
    for (int32_t i = 0; i < g->n_nodes; i++)
        if (ir_writes_param(&g->nodes[i]) && g->nodes[i].in[0] == id)
            return true;
    return false;
}

/* Whether param `name` is a source of a batch_norm fold (so the folded
 * params must be written again before the next run). */
static bool bn_fold_source(const rlx_exec *e, const char *name) {
    for (int i = 0; i < e->bn_folds.n; i++) {
        const bn_fold *f = &e->bn_folds.items[i];
        if (!strcmp(f->w, name) || (f->b && !strcmp(f->b, name))) return true;
        for (int k = 0; k < 4; k++) if (!strcmp(f->stat[k], name)) return true;
    }
    return false;
}

bool rt_exec_param_is_folded(const rlx_exec *e, const char *name) {
    for (int i = 0; e && name && i < e->bn_folds.n; i++)
        if (!strcmp(e->bn_folds.items[i].w_out, name) || !strcmp(e->bn_folds.items[i].b_out, name)) return true;
    return false;
}

/* Writes every fold's params from its sources' current values, on the host
 * (passes/fold_bn.c): once after the sources change, not per run. */
static rlx_status write_bn_folds(rlx_exec *e) {
    double t = trace_clock(e);
    rlx_status st = RLX_OK;
    for (int i = 0; i < e->bn_folds.n && st == RLX_OK; i++) {
        const bn_fold *f = &e->bn_folds.items[i];
        size_t nw = (size_t)(f->O * f->per_o), no = (size_t)f->O;
        float *w = malloc(sizeof(float) * RLX_MAX(nw, 1)), *wo = malloc(sizeof(float) * RLX_MAX(nw, 1));
        float *buf = malloc(sizeof(float) * RLX_MAX(6 * no, 1));
        if (!w || !wo || !buf) st = rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "rlx_exec_run: out of memory for the batch_norm fold");
        float *b = buf, *bo = buf + no, *stat[4] = {buf + 2 * no, buf + 3 * no, buf + 4 * no, buf + 5 * no};
        if (st == RLX_OK) st = rlx_exec_read_param(e, f->w, RLX_F32, w, nw * sizeof(float));
        if (st == RLX_OK && f->b) st = rlx_exec_read_param(e, f->b, RLX_F32, b, no * sizeof(float));
        for (int k = 0; k < 4 && st == RLX_OK; k++) st = rlx_exec_read_param(e, f->stat[k], RLX_F32, stat[k], no * sizeof(float));
        if (st == RLX_OK) {
            bn_fold_compute(f->O, f->per_o, f->eps, w, f->b ? b : NULL, (const float *const *)stat, wo, bo);
            st = rlx_exec_set_param(e, f->w_out, RLX_F32, wo, nw * sizeof(float));
        }
        if (st == RLX_OK) st = rlx_exec_set_param(e, f->b_out, RLX_F32, bo, no * sizeof(float));
        free(w), free(wo), free(buf);
    }
    TRACE_SPAN(e, "upload", "fold batch_norm params", t, "\"folds\":%d", e->bn_folds.n);
    if (st == RLX_OK) e->bn_folds_dirty = false;
    return st;
}

/* rlx_exec_set_param and _f32 (where: which, for messages). */
static rlx_status set_param(rlx_exec *e, const char *where, const char *name, rlx_dtype dtype, const void *data,
                            size_t bytes) {
    int32_t id;
    rlx_status st = find_param_checked(e, where, name, dtype, data, bytes, &id);
    if (st != RLX_OK) return st;
    if (bn_fold_source(e, name)) e->bn_folds_dirty = true;
    if (e->borrowed[id]) {   /* back to memory of its own: the caller's is not ours to write */
        void *own;
        if ((st = e->be->param_alloc(e->dev, bytes, &own)) != RLX_OK) return st;
        e->param_by_node[id] = own;
        e->borrowed[id] = false;
        drop_specs(e);
    }
    double t = trace_clock(e);
    st = e->be->param_write(e->dev, e->param_by_node[id], dtype, ir_shape_row_elems(&e->graph.nodes[id].shape), data,
                            bytes);   /* params have static shapes */
    if (e->trace) {
        char esc[160];
        TRACE_SPAN(e, "upload", "upload param", t, "\"param\":\"%s\",\"bytes\":%zu", rlx_json_escape(name, esc, sizeof esc),
                   bytes);
    }
    return st;
}

rlx_status rlx_exec_set_param(rlx_exec *e, const char *name, rlx_dtype dtype, const void *data, size_t bytes) {
    return set_param(e, "rlx_exec_set_param", name, dtype, data, bytes);
}

rlx_status rlx_exec_read_param(rlx_exec *e, const char *name, rlx_dtype dtype, void *data, size_t bytes) {
    int32_t id;
    rlx_status st = find_param_checked(e, "rlx_exec_read_param", name, dtype, data, bytes, &id);
    if (st != RLX_OK) return st;
    if (e->borrowed[id]) {   /* the caller's own memory, never written (param_written refuses that) */
        if (bytes) memcpy(data, e->param_by_node[id], bytes);
        return RLX_OK;
    }
    return e->be->param_read(e->dev, e->param_by_node[id], dtype, data, bytes);
}

rlx_status rlx_exec_use_param_memory(rlx_exec *e, const char *name, rlx_dtype dtype, const void *data, size_t bytes) {
    int32_t id;
    rlx_status st = find_param_checked(e, "rlx_exec_use_param_memory", name, dtype, data, bytes, &id);
    if (st != RLX_OK) return st;
    if (!e->be->params_in_host_memory) return rlx_exec_set_param(e, name, dtype, data, bytes);   /* a copy on the device */
    if (param_written(e, id))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT,
                        "rlx_exec_use_param_memory '%s': the graph writes this param in place (a KV cache or an rlx_assign target), so it "
                        "needs memory of its own; use rlx_exec_set_param", name);
    if ((uintptr_t)data % 16 != 0)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_use_param_memory '%s': data must be 16-byte aligned",
                        name);
    /* an output of this exec lives until its next run, not as long as a param */
    bool own = e->retired && e->be->program_holds && e->be->program_holds(e->retired->prog, data, bytes);
    for (int i = 0; i < e->n_specs && !own; i++)
        own = e->be->program_holds && e->be->program_holds(e->specs[i]->prog, data, bytes);
    if (own)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT,
                        "rlx_exec_use_param_memory '%s': data is this exec's own memory (an output, valid only until the "
                        "next run); copy it, or use rlx_exec_set_param", name);
    if (bn_fold_source(e, name)) e->bn_folds_dirty = true;
    if (e->param_by_node[id] == data) return RLX_OK;
    if (!e->borrowed[id] && (st = retire_param_memory(e, e->param_by_node[id])) != RLX_OK) return st;
    e->param_by_node[id] = (void *)data;   /* never written: only kv caches are, refused above */
    e->borrowed[id] = true;
    drop_specs(e);
    return RLX_OK;
}

rlx_status rlx_exec_set_param_f32(rlx_exec *e, const char *name, const float *data, size_t count) {
    if (count > SIZE_MAX / sizeof(float))
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_set_param_f32: count %zu is too large", count);
    return set_param(e, "rlx_exec_set_param_f32", name, RLX_F32, data, count * sizeof(float));
}

/* ------------------------------------------------------------------- run */

/* Checks one given input against its node and binds symbols from its dims. */
static rlx_status bind_input(const rlx_exec *e, const ir_node *node, const rlx_tensor *t, bool need_data,
                             const char *where, int64_t *syms, bool *bound) {
    const char *name = node->name;
    if ((unsigned)t->dtype >= RLX_DTYPE_COUNT)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: input '%s' dtype %d is not an rlx_dtype", where, name, (int)t->dtype);
    if (t->dtype != node->dtype)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: input '%s' is %s, the graph expects %s", where, name,
                        rlx_dtype_name(t->dtype), rlx_dtype_name(node->dtype));
    if (t->rank != node->shape.rank)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: input '%s' has rank %d, the graph expects %d", where, name, t->rank,
                        node->shape.rank);
    uint64_t numel = 1;
    for (int d = 0; d < t->rank; d++) {
        ir_dim want = node->shape.d[d];
        int64_t got = t->dims[d];
        if (got < 0) return rlx_fail(RLX_STATUS_SHAPE, "%s: input '%s' dim %d is negative", where, name, d);
        if (!rlx_mul_overflow_u64(numel, (uint64_t)got, &numel))
            return rlx_fail(RLX_STATUS_SHAPE, "%s: input '%s' is too large", where, name);
        if (ir_dim_is_static(want)) {
            if (want.k != got)
                return rlx_fail(RLX_STATUS_SHAPE, "%s: input '%s' dim %d is %lld, the graph expects %lld", where, name,
                                d, (long long)got, (long long)want.k);
            continue;
        }
        int s = 0;   /* inputs are declared with plain symbols: find which */
        while (s < IR_MAX_SYMS && !want.coef[s]) s++;
        if (bound[s] && syms[s] != got)
            return rlx_fail(RLX_STATUS_SHAPE, "%s: input '%s' dim %d is %lld, but '%s' is already %lld", where, name, d,
                            (long long)got, e->graph.sym_names[s], (long long)syms[s]);
        syms[s] = got;
        bound[s] = true;
    }
    uint64_t bytes;
    if (!rlx_mul_overflow_u64(numel, rlx_dtype_size(t->dtype), &bytes) || bytes != t->bytes)
        return rlx_fail(RLX_STATUS_SHAPE, "%s: input '%s' has bytes = %zu, its shape needs %llu", where, name,
                        t->bytes, (unsigned long long)bytes);
    if (need_data && !t->data && bytes)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: input '%s' data is NULL", where, name);
    return RLX_OK;
}

/* Checks the inputs (each graph input given once, by name) and returns the
 * specialization for their shapes, compiling it on first use. by_input gets
 * the given tensor of each graph input, in input order. */
static rlx_status bind_inputs(rlx_exec *e, const rlx_tensor *inputs, int n_inputs, bool need_data, const char *where,
                              const rlx_tensor **by_input, rt_spec **spec) {
    if (n_inputs < 0) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: n_inputs %d is negative", where, n_inputs);
    if (n_inputs > 0 && !inputs)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: inputs is NULL with n_inputs %d", where, n_inputs);
    int64_t syms[IR_MAX_SYMS] = {0};
    bool bound[IR_MAX_SYMS] = {0};
    memset(by_input, 0, (size_t)e->n_inputs * sizeof *by_input);
    rlx_status st = RLX_OK;
    for (int i = 0; i < n_inputs && st == RLX_OK; i++) {
        const rlx_tensor *t = &inputs[i];
        if (!t->name) { st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: inputs[%d].name is NULL", where, i); break; }
        int k = 0;
        while (k < e->n_inputs && strcmp(e->graph.nodes[e->input_nodes[k]].name, t->name) != 0) k++;
        if (k == e->n_inputs) { st = rlx_fail(RLX_STATUS_NOT_FOUND, "%s: the graph has no input named '%s'", where, t->name); break; }
        if (by_input[k]) { st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: input '%s' is given twice", where, t->name); break; }
        by_input[k] = t;
        st = bind_input(e, &e->graph.nodes[e->input_nodes[k]], t, need_data, where, syms, bound);
    }
    for (int k = 0; k < e->n_inputs && st == RLX_OK; k++)
        if (!by_input[k])
            st = rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: input '%s' is not given", where,
                          e->graph.nodes[e->input_nodes[k]].name);
    if (st == RLX_OK) st = get_spec(e, syms, spec);
    return st;
}

/* by_input storage: on the stack for the usual few inputs */
#define RT_STACK_INPUTS (RLX_MAX_RANK * 64)

/* rlx_exec_run (run) and rlx_exec_prepare (!run): the inputs checked, the
 * specialization for their shapes found or compiled, and with run, run.
 * Prepare leaves e->current alone, so the last run's outputs stay readable. */
static rlx_status bind_and_run(rlx_exec *e, const rlx_tensor *inputs, int n_inputs, bool run) {
    const char *where = run ? "rlx_exec_run" : "rlx_exec_prepare";
    if (!e) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: exec is NULL", where);
    const rlx_tensor *given[RT_STACK_INPUTS];
    const rlx_tensor **by_input = e->n_inputs <= RT_STACK_INPUTS ? given : calloc((size_t)e->n_inputs, sizeof *by_input);
    if (!by_input) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", where);
    if (run) {
        e->has_run = false;
        release_retired(e);   /* the outputs it kept readable are the last run's: this is the next run */
    }
    rt_spec *spec = NULL;
    double t = trace_clock(e);
    rlx_status st = run && e->bn_folds_dirty ? write_bn_folds(e) : RLX_OK;
    if (st == RLX_OK) st = bind_inputs(e, inputs, n_inputs, run, where, by_input, &spec);
    if (st == RLX_OK && !run) TRACE_SPAN(e, "compile", "prepare", t, NULL);
    if (st == RLX_OK && run) {
        e->current = spec;
        for (int k = 0; k < e->n_inputs; k++) spec->inputs[e->input_nodes[k]] = by_input[k]->data;
        t = trace_clock(e);
        st = e->be->program_run(spec->prog, (const void *const *)spec->inputs);
        TRACE_SPAN(e, "run", "run", t, "\"status\":\"%s\"", rlx_status_name(st));
        e->has_run = st == RLX_OK;
        e->numerics.ran = false;
        if (st == RLX_OK && e->opts.check_numerics) {
            t = trace_clock(e);
            st = rt_numerics_scan(e->be, spec->prog, &spec->g, &spec->plan, &e->numerics);
            TRACE_SPAN(e, "debug", "numerics check", t, "\"checked\":%d,\"found\":%d", e->numerics.checked,
                       (int)e->numerics.found);
            if (e->numerics.found) rlx_log_msg(RLX_LOG_WARN, "%s", e->numerics.message);
            if (st != RLX_OK) e->has_run = false;
        }
    }
    rlx_trace_flush(e->trace);
    if (by_input != given) free(by_input);
    return st;
}

rlx_status rlx_exec_run(rlx_exec *e, const rlx_tensor *inputs, int n_inputs) {
    return bind_and_run(e, inputs, n_inputs, true);
}

rlx_status rlx_exec_prepare(rlx_exec *e, const rlx_tensor *inputs, int n_inputs) {
    return bind_and_run(e, inputs, n_inputs, false);
}

/* --------------------------------------------------------------- outputs */

rlx_status rlx_exec_output(rlx_exec *e, const char *name, rlx_tensor *out) {
    if (!e || !name || !out)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_output: %s is NULL", !e ? "exec" : !name ? "name" : "out");
    int32_t k = ir_graph_find_output(&e->graph, name);
    if (k < 0) return rlx_fail(RLX_STATUS_NOT_FOUND, "rlx_exec_output: the graph has no output named '%s'", name);
    if (!e->has_run || !e->current)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_output '%s': no successful run to read from", name);
    int32_t node = e->graph.outputs[k].node;
    const ir_node *n = &e->current->g.nodes[node];
    memset(out, 0, sizeof *out);
    out->name = e->graph.outputs[k].name;
    out->dtype = n->dtype;
    out->rank = n->shape.rank;
    ir_shape_dims(&n->shape, out->dims);
    out->bytes = (size_t)ir_node_bytes(n);
    return e->be->program_result(e->current->prog, node, &out->data);
}

rlx_status rlx_exec_read_output(rlx_exec *e, const char *name, void *dst, size_t bytes) {
    rlx_tensor t;
    rlx_status st = rlx_exec_output(e, name, &t);
    if (st != RLX_OK) return st;
    if (!dst) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_read_output '%s': dst is NULL", name);
    if (bytes < t.bytes)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_read_output '%s': dst has %zu bytes, the output needs %zu",
                        name, bytes, t.bytes);
    double t0 = trace_clock(e);
    memcpy(dst, t.data, t.bytes);
    if (e->trace) {
        char esc[160];
        TRACE_SPAN(e, "readback", "read output", t0, "\"output\":\"%s\",\"bytes\":%zu", rlx_json_escape(name, esc, sizeof esc),
                   t.bytes);
        rlx_trace_flush(e->trace);   /* a run's last events: flushed as the caller takes its results */
    }
    return RLX_OK;
}

/* --------------------------------------------------------------- queries */

/* -1 for a NULL exec, so that it differs from an exec with no such tensors. */
static int null_exec_count(const char *fn) {
    rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: exec is NULL", fn);
    return -1;
}

int rlx_exec_input_count(const rlx_exec *e) { return e ? e->n_inputs : null_exec_count("rlx_exec_input_count"); }
int rlx_exec_output_count(const rlx_exec *e) { return e ? e->graph.n_outputs : null_exec_count("rlx_exec_output_count"); }
int rlx_exec_param_count(const rlx_exec *e) { return e ? e->n_params : null_exec_count("rlx_exec_param_count"); }

static void describe(const rlx_exec *e, int32_t node, const char *name, rlx_tensor *info) {
    const ir_node *n = &e->graph.nodes[node];
    memset(info, 0, sizeof *info);
    info->name = name;
    info->dtype = n->dtype;
    info->rank = n->shape.rank;
    bool all_static = ir_shape_is_static(&n->shape);
    for (int d = 0; d < n->shape.rank; d++) info->dims[d] = ir_dim_to_public(n->shape.d[d]);
    info->bytes = all_static ? (size_t)ir_node_bytes(n) : 0;
}

static rlx_status check_index(const rlx_exec *e, int i, int count, const char *fn, rlx_tensor *info) {
    if (!e || !info) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: %s is NULL", fn, !e ? "exec" : "info");
    if (i < 0 || i >= count) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "%s: index %d is outside [0, %d)", fn, i, count);
    return RLX_OK;
}

rlx_status rlx_exec_input_info(const rlx_exec *e, int i, rlx_tensor *info) {
    rlx_status st = check_index(e, i, rlx_exec_input_count(e), "rlx_exec_input_info", info);
    if (st == RLX_OK) describe(e, e->input_nodes[i], e->graph.nodes[e->input_nodes[i]].name, info);
    return st;
}

rlx_status rlx_exec_output_info(const rlx_exec *e, int i, rlx_tensor *info) {
    rlx_status st = check_index(e, i, rlx_exec_output_count(e), "rlx_exec_output_info", info);
    if (st == RLX_OK) describe(e, e->graph.outputs[i].node, e->graph.outputs[i].name, info);
    return st;
}

rlx_status rlx_exec_param_info(const rlx_exec *e, int i, rlx_tensor *info) {
    rlx_status st = check_index(e, i, rlx_exec_param_count(e), "rlx_exec_param_info", info);
    if (st == RLX_OK) describe(e, e->param_nodes[i], e->graph.nodes[e->param_nodes[i]].name, info);
    return st;
}

rlx_status rlx_exec_get_stats(const rlx_exec *e, rlx_exec_stats *s) {
    if (!e || !s) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_get_stats: %s is NULL", !e ? "exec" : "stats");
    memset(s, 0, sizeof *s);
    s->device_seconds = -1;
    s->backend = e->be->name;
    s->device = e->be->device_name(e->dev);
    s->fused_nodes = e->fused_nodes;
    s->specializations = e->n_specs;
    for (int i = 0; i < e->n_params; i++) {
        const ir_node *p = &e->graph.nodes[e->param_nodes[i]];
        s->param_bytes += (size_t)ir_node_bytes(p);
    }
    if (e->current) {
        s->arena_bytes = e->current->plan.arena_bytes;
        s->tensor_bytes = e->current->plan.tensor_bytes;
        s->steps = e->be->program_steps(e->current->prog);
        s->host_steps = e->be->program_host_steps(e->current->prog);
        s->device_seconds = e->has_run ? e->be->program_device_seconds(e->current->prog) : -1;
        s->fused_nodes += e->current->folded_nodes;
    }
    return RLX_OK;
}

char *rlx_exec_report(const rlx_exec *e) {
    if (!e || !e->current) {
        rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_report: %s", !e ? "exec is NULL" : "no specialization yet (run first)");
        return NULL;
    }
    return e->be->program_report(e->current->prog);
}

rlx_status rlx_exec_numerics(const rlx_exec *e, rlx_numerics_report *out) {
    if (!e || !out) return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_numerics: %s is NULL", !e ? "exec" : "out");
    memset(out, 0, sizeof *out);
    out->node = -1;
    out->name = out->op = out->message = "";
    if (!e->opts.check_numerics)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT,
                        "rlx_exec_numerics: check_numerics is off (set it in rlx_compile_options, or RLX_CHECK_NUMERICS=1)");
    if (!e->has_run || !e->numerics.ran)
        return rlx_fail(RLX_STATUS_INVALID_ARGUMENT, "rlx_exec_numerics: no successful run to report on");
    const rt_numerics *n = &e->numerics;
    out->found = n->found;
    out->nodes_checked = n->checked;
    out->nodes_skipped = n->skipped;
    if (n->found) {
        out->node = n->node;
        out->name = n->name;
        out->op = n->op;
        out->element = n->element;
        out->value = n->value;
        out->message = n->message;
    }
    return RLX_OK;
}
