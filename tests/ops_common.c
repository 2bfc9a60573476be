/*
 * ops_common.c — see ops_common.h: run-under-each-configuration, random shapes,
 * tracked scratch allocations for the op tests.
 */
#include "ops_common.h"
#include "quant/quant.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ops_config_name(int cfg) {
    static const char *names[OPS_NCONFIG] = {"default", "optimize=0", "threads=1", "threads=2"};
    return cfg >= 0 && cfg < OPS_NCONFIG ? names[cfg] : "?";
}

void ops_config_options(int cfg, rlx_compile_options *o) {
    rlx_compile_options_init(o);
    if (cfg == 1) o->optimize = 0;
    if (cfg == 2) o->threads = 1;
    if (cfg == 3) o->threads = 2;
}

/* ---- tracked allocations */

#define OPS_MAX_ALLOCS 4096
static void *allocs[OPS_MAX_ALLOCS];
static int n_allocs;
static rlx_graph *graphs[256];
static int n_graphs;
static int atexit_done;

void ops_free_all(void) {
    for (int i = 0; i < n_allocs; i++) free(allocs[i]);
    n_allocs = 0;
    for (int i = 0; i < n_graphs; i++) rlx_graph_free(graphs[i]);
    n_graphs = 0;
}

static void ops_register_exit(void) {
    if (!atexit_done) { atexit(ops_free_all); atexit_done = 1; }
}

void *ops_alloc(size_t bytes) {
    ops_register_exit();
    if (n_allocs == OPS_MAX_ALLOCS) ops_free_all();   /* a test that never frees: should not happen */
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p) { fprintf(stderr, "ops_alloc: out of memory\n"); abort(); }
    allocs[n_allocs++] = p;
    return p;
}

rlx_graph *ops_graph(void) {
    ops_register_exit();
    rlx_graph *g = rlx_graph_new();
    if (!g) { fprintf(stderr, "rlx_graph_new failed\n"); abort(); }
    if (n_graphs == (int)(sizeof graphs / sizeof graphs[0])) ops_free_all();
    graphs[n_graphs++] = g;
    return g;
}

float *ops_rand_f32(int64_t n, double lo, double hi) {
    float *x = ops_alloc((size_t)n * sizeof(float));
    test_fill_uniform_f32(x, n, lo, hi);
    return x;
}

double *ops_f32_to_f64(const float *x, int64_t n) {
    double *y = ops_alloc((size_t)n * sizeof(double));
    for (int64_t i = 0; i < n; i++) y[i] = x[i];
    return y;
}

double *ops_f64(int64_t n) { return ops_alloc((size_t)n * sizeof(double)); }

float *ops_f32(int64_t n) {
    float *x = ops_alloc((size_t)n * sizeof(float));
    for (int64_t i = 0; i < n; i++) x[i] = NAN;
    return x;
}

/* ---- shapes */

ref_shape ops_rand_shape(int rank, int64_t max_numel) {
    static const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 33};
    ref_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    int64_t total = 1;
    for (int i = 0; i < rank; i++) {
        int64_t d = sizes[test_rand_int(0, (int64_t)(sizeof sizes / sizeof sizes[0]) - 1)];
        while (d > 1 && total * d > max_numel) d = d / 2;
        s.d[i] = d;
        total *= d;
    }
    return s;
}

void ops_rand_bcast_pair(ref_shape *a, ref_shape *b) {
    int rank = (int)test_rand_int(0, 4);
    ref_shape o = ops_rand_shape(rank, 2048);
    ref_shape *sh[2] = {a, b};
    int full = (int)test_rand_int(0, 1);     /* one operand keeps the full rank */
    for (int t = 0; t < 2; t++) {
        int r = t == full ? rank : (int)test_rand_int(0, rank);
        ref_shape s;
        memset(&s, 0, sizeof s);
        s.rank = r;
        for (int i = 0; i < r; i++) {
            int64_t d = o.d[rank - r + i];
            s.d[i] = test_rand_int(0, 3) == 0 ? 1 : d;
        }
        *sh[t] = s;
    }
}

rlx_tensor ops_tensor(const char *name, rlx_dtype dt, ref_shape s, void *data) {
    rlx_tensor t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.dtype = dt;
    t.rank = s.rank;
    for (int i = 0; i < s.rank; i++) t.dims[i] = s.d[i];
    t.data = data;
    t.bytes = (size_t)ref_numel(&s) * rlx_dtype_size(dt);
    return t;
}

rlx_node ops_input(rlx_graph *g, const char *name, rlx_dtype dt, ref_shape s) {
    return rlx_input(g, name, dt, s.rank, s.d);
}

/* ---- running */

static void format_dims(char *buf, size_t n, int rank, const int64_t *dims) {
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < rank && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, i ? ",%lld" : "%lld", (long long)dims[i]);
    if (k < n) snprintf(buf + k, n - k, "]");
}

bool ops_run_opts(const rlx_graph *g, const rlx_compile_options *o, const char *what,
                  const rlx_tensor *in, int n_in, rlx_tensor *outs, int n_out) {
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(g, o, &e);
    if (st != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "[%s] rlx_compile -> %s: %s", what, rlx_status_name(st), rlx_last_error());
        return false;
    }
    bool ok = false;
    st = rlx_exec_run(e, in, n_in);
    if (st != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "[%s] rlx_exec_run -> %s: %s", what, rlx_status_name(st), rlx_last_error());
        goto done;
    }
    for (int i = 0; i < n_out; i++) {
        rlx_tensor t;
        memset(&t, 0, sizeof t);
        st = rlx_exec_output(e, outs[i].name, &t);
        if (st != RLX_OK) {
            harness_fail(__FILE__, __LINE__, "[%s] rlx_exec_output('%s') -> %s: %s", what, outs[i].name,
                         rlx_status_name(st), rlx_last_error());
            goto done;
        }
        bool same = t.dtype == outs[i].dtype && t.rank == outs[i].rank && t.bytes == outs[i].bytes && t.data;
        for (int d = 0; same && d < t.rank; d++) same = t.dims[d] == outs[i].dims[d];
        if (!same) {
            char got[128], want[128];
            format_dims(got, sizeof got, t.rank, t.dims);
            format_dims(want, sizeof want, outs[i].rank, outs[i].dims);
            harness_fail(__FILE__, __LINE__, "[%s] output '%s': got %s %s (%zu bytes), want %s %s (%zu bytes)",
                         what, outs[i].name, rlx_dtype_name(t.dtype), got, t.bytes,
                         rlx_dtype_name(outs[i].dtype), want, outs[i].bytes);
            goto done;
        }
        memset(outs[i].data, 0xff, outs[i].bytes);   /* poison: read_output must overwrite */
        st = rlx_exec_read_output(e, outs[i].name, outs[i].data, outs[i].bytes);
        if (st != RLX_OK) {
            harness_fail(__FILE__, __LINE__, "[%s] rlx_exec_read_output('%s') -> %s: %s", what, outs[i].name,
                         rlx_status_name(st), rlx_last_error());
            goto done;
        }
        if (outs[i].bytes && memcmp(outs[i].data, t.data, outs[i].bytes) != 0) {
            harness_fail(__FILE__, __LINE__, "[%s] output '%s': read_output differs from exec_output data",
                         what, outs[i].name);
            goto done;
        }
    }
    ok = true;
done:
    rlx_exec_free(e);
    return ok;
}

bool ops_run(const rlx_graph *g, int cfg, const rlx_tensor *in, int n_in, rlx_tensor *outs, int n_out) {
    rlx_compile_options o;
    ops_config_options(cfg, &o);
    /* config 0 is the library's defaults, reached through opts == NULL */
    return ops_run_opts(g, cfg == 0 ? NULL : &o, ops_config_name(cfg), in, n_in, outs, n_out);
}

rlx_node ops_add_input(rlx_graph *g, ops_inputs *in, rlx_dtype dt, ref_shape s, void *data) {
    if (in->n == OPS_MAX_INPUTS) return RLX_NO_NODE;
    int k = in->n++;
    snprintf(in->names[k], sizeof in->names[k], "in%d", k);
    in->t[k] = ops_tensor(in->names[k], dt, s, data);
    return ops_input(g, in->names[k], dt, s);
}

void *ops_quantized_weights(rlx_dtype dt, int64_t N, int64_t K, double **decoded, size_t *bytes) {
    int64_t dims[2] = {N, K};
    *bytes = rlx_tensor_bytes(dt, 2, dims);
    float *f = malloc(sizeof(float) * (size_t)(N * K)), *back = malloc(sizeof(float) * (size_t)(N * K));
    test_fill_uniform_f32(f, N * K, -1, 1);
    void *q = malloc(*bytes);
    uint32_t qt = quant_type_of_dtype(dt);
    quant_quantize_row(qt, f, q, N * K);
    quant_dequantize_row(qt, q, back, N * K);
    *decoded = malloc(sizeof(double) * (size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++) (*decoded)[i] = back[i];
    free(f);
    free(back);
    return q;
}

rlx_graph *ops_dequant_graph(rlx_dtype dt, int64_t M, int64_t N, int64_t K) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wdims[2] = {N, K};
    rlx_output(g, "y", rlx_dequant_matmul(g, rlx_input(g, "x", RLX_F32, 2, xd), rlx_param(g, "w", dt, 2, wdims)));
    return g;
}

bool ops_run_dequant(rlx_graph *g, const rlx_compile_options *o, rlx_exec **e, rlx_dtype dt, const void *w, size_t wbytes,
                     const rlx_tensor *in, float *y, size_t ybytes, bool exact) {
    rlx_compile_options oq;
    if (o) oq = *o;
    else rlx_compile_options_init(&oq);
    oq.exact_quant = exact;
    return (*e || rlx_compile(g, &oq, e) == RLX_OK) && rlx_exec_set_param(*e, "w", dt, w, wbytes) == RLX_OK &&
           rlx_exec_run(*e, in, 1) == RLX_OK && rlx_exec_read_output(*e, "y", y, ybytes) == RLX_OK;
}
