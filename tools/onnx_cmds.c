/*
 * onnx_cmds.c — the ONNX commands:
 *   rlx inspect MODEL.onnx   inputs, outputs, opsets, and each operator with
 *                            its node count and whether rlx imports it;
 *   rlx run MODEL.onnx --input NAME=FILE.npy ... [--device D] [--out DIR]
 *       [--runs N] [--precision f32|fast] [--threads N] [--report]
 *                            runs the model, writes each output as
 *                            DIR/NAME.npy, prints the time per run and
 *                            with --report the execution report (each
 *                            node's path and tier; RLX_PROFILE=1 adds times).
 */
#include "io_cmds.h"
#include "device_arg.h"
#include "io/onnx.h"
#include "models/onnx_import.h"
#include "core/file_map.h"
#include "rlx.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

bool is_onnx_path(const char *path) {
    size_t n = strlen(path);
    return n >= 5 && strcmp(path + n - 5, ".onnx") == 0;
}

static void print_value(const char *kind, const onnx_value_info *v) {
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)v->name.n, v->name.p);
    printf("  %-7s ", kind);
    inspect_print_name(name, 28);
    printf(" %-8s [", onnx_type_name(v->elem_type));
    for (int d = 0; d < v->rank; d++) {
        const onnx_dim *od = &v->dims[d];
        if (od->has_value) printf("%s%lld", d ? ", " : "", (long long)od->value);
        else if (od->param.n) printf("%s%.*s", d ? ", " : "", (int)od->param.n, od->param.p);
        else printf("%s?", d ? ", " : "");
    }
    printf("]%s\n", v->has_shape ? "" : " (no shape)");
}

int inspect_onnx(const char *path) {
    rlx_file_map f;
    if (rlx_file_map_open(&f, path, "rlx inspect") != RLX_OK) {
        fprintf(stderr, "rlx inspect: %s\n", rlx_last_error());
        return 1;
    }
    onnx_model m;
    if (onnx_parse(f.data, (size_t)f.size, &m) != RLX_OK) {
        fprintf(stderr, "rlx inspect: %s: %s\n", path, rlx_last_error());
        rlx_file_map_close(&f);
        return 1;
    }
    const onnx_graph *g = &m.graph;
    printf("%s: ONNX, ir_version %lld, producer %.*s %.*s\n", path, (long long)m.ir_version, (int)m.producer_name.n,
           m.producer_name.p, (int)m.producer_version.n, m.producer_version.p);
    for (int i = 0; i < m.n_opsets; i++)
        printf("  opset   %.*s %lld\n", m.opsets[i].domain.n ? (int)m.opsets[i].domain.n : 7,
               m.opsets[i].domain.n ? m.opsets[i].domain.p : "ai.onnx", (long long)m.opsets[i].version);
    int n_init_in = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        bool init = false;
        for (int k = 0; k < g->n_initializers && !init; k++)
            init = g->initializers[k].name.n == g->inputs[i].name.n &&
                   !memcmp(g->initializers[k].name.p, g->inputs[i].name.p, g->inputs[i].name.n);
        if (init) n_init_in++;
        else print_value("input", &g->inputs[i]);
    }
    for (int i = 0; i < g->n_outputs; i++) print_value("output", &g->outputs[i]);
    printf("  %d nodes, %d initializers%s\n", g->n_nodes, g->n_initializers,
           n_init_in ? " (also listed as inputs)" : "");
    int unsupported = 0;
    printf("  %-28s %6s  %s\n", "operator", "nodes", "imported");
    for (int i = 0; i < g->n_nodes; i++) {
        const onnx_node *n = &g->nodes[i];
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = g->nodes[j].op_type.n == n->op_type.n && !memcmp(g->nodes[j].op_type.p, n->op_type.p, n->op_type.n) &&
                   g->nodes[j].domain.n == n->domain.n && (!n->domain.n || !memcmp(g->nodes[j].domain.p, n->domain.p, n->domain.n));
        if (seen) continue;
        int count = 0;
        for (int j = i; j < g->n_nodes; j++)
            count += g->nodes[j].op_type.n == n->op_type.n && !memcmp(g->nodes[j].op_type.p, n->op_type.p, n->op_type.n);
        bool dflt = n->domain.n == 0 || onnx_str_eq(n->domain, "ai.onnx");
        bool ok = dflt && ox_find_op(n->op_type.p, n->op_type.n);
        char name[256];
        snprintf(name, sizeof name, "%.*s%s%.*s", (int)n->domain.n, n->domain.p ? n->domain.p : "", n->domain.n ? "::" : "",
                 (int)n->op_type.n, n->op_type.p);
        printf("  ");
        inspect_print_name(name, 28);
        printf(" %6d  %s\n", count, ok ? "yes" : "NO");
        unsupported += !ok;
    }
    printf("%s\n", unsupported ? "not importable: operators above marked NO" : "every operator is imported");
    onnx_model_free(&m);
    rlx_file_map_close(&f);
    return 0;
}

/* ------------------------------------------------------------------ run */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int run_usage(void) {
    fprintf(stderr, "usage: rlx run MODEL.onnx --input NAME=FILE.npy ... [--device D] [--out DIR] [--runs N]\n"
                    "               [--precision f32|fast] [--threads N] [--report]\n"
                    "  a model with one input takes --input FILE.npy; outputs go to DIR/NAME.npy (DIR: .)\n");
    return 2;
}

int cmd_run(int argc, char **argv) {
    if (argc < 1 || argv[0][0] == '-') return run_usage();
    const char *model = argv[0], *out = ".", *device = NULL, *precision = "f32";
    const char *in_spec[RLX_MAX_RANK * 4];
    int n_in = 0, runs = 1, threads = 0;
    bool report = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--report")) { report = true; continue; }
        if (!v) return run_usage();
        if (!strcmp(a, "--input")) {
            if (n_in == (int)(sizeof in_spec / sizeof in_spec[0])) { fprintf(stderr, "rlx run: too many inputs\n"); return 2; }
            in_spec[n_in++] = v;
        } else if (!strcmp(a, "--out")) out = v;
        else if (!strcmp(a, "--device")) device = v;
        else if (!strcmp(a, "--runs")) {
            char *end;
            long r = strtol(v, &end, 10);
            if (*end || r < 1 || r > 100000) { fprintf(stderr, "rlx run: --runs needs 1..100000\n"); return 2; }
            runs = (int)r;
        } else if (!strcmp(a, "--precision")) {
            if (strcmp(v, "f32") && strcmp(v, "fast")) { fprintf(stderr, "rlx run: --precision is f32 or fast, not '%s'\n", v); return 2; }
            precision = v;
        } else if (!strcmp(a, "--threads")) {
            char *end;
            long t = strtol(v, &end, 10);
            if (*end || t < 0 || t > 1024) { fprintf(stderr, "rlx run: --threads needs 0..1024 (0: all cores)\n"); return 2; }
            threads = (int)t;
        } else {
            fprintf(stderr, "rlx run: unknown option '%s'\n", a);
            return run_usage();
        }
        i++;
    }
    rlx_onnx *m;
    if (rlx_onnx_load(model, &m) != RLX_OK) { fprintf(stderr, "rlx run: %s\n", rlx_last_error()); return 1; }
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    tool_set_device(&o, device);
    o.precision = !strcmp(precision, "fast") ? RLX_PRECISION_FAST : RLX_PRECISION_F32;
    o.threads = threads;
    rlx_exec *e = NULL;
    rlx_tensor ins[RLX_MAX_RANK * 4];
    char *names[RLX_MAX_RANK * 4];
    memset(ins, 0, sizeof ins);
    memset(names, 0, sizeof names);
    int rc = 0;
    if (rlx_onnx_compile(m, &o, &e) != RLX_OK) { fprintf(stderr, "rlx run: %s\n", rlx_last_error()); rc = 1; }
    for (int i = 0; i < n_in && rc == 0; i++) {
        const char *eq = strchr(in_spec[i], '='), *file = eq ? eq + 1 : in_spec[i];
        if (eq) names[i] = strndup(in_spec[i], (size_t)(eq - in_spec[i]));
        else if (rlx_exec_input_count(e) == 1) {
            rlx_tensor info;
            rlx_exec_input_info(e, 0, &info);
            names[i] = strdup(info.name);
        } else {
            fprintf(stderr, "rlx run: the model has %d inputs: give --input NAME=FILE.npy\n", rlx_exec_input_count(e));
            rc = 2;
            break;
        }
        if (rlx_npy_load(file, &ins[i]) != RLX_OK) { fprintf(stderr, "rlx run: %s\n", rlx_last_error()); rc = 1; break; }
        ins[i].name = names[i];
    }
    double *t = rc == 0 ? malloc(sizeof *t * (size_t)runs) : NULL;
    for (int r = 0; r < runs && rc == 0; r++) {
        double t0 = now_s();
        if (rlx_exec_run(e, ins, n_in) != RLX_OK) { fprintf(stderr, "rlx run: %s\n", rlx_last_error()); rc = 1; break; }
        t[r] = (now_s() - t0) * 1e3;
    }
    if (rc == 0 && mkdir(out, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "rlx run: cannot create '%s': %s\n", out, strerror(errno));
        rc = 1;
    }
    for (int k = 0; rc == 0 && k < rlx_exec_output_count(e); k++) {
        rlx_tensor info, ot;
        rlx_exec_output_info(e, k, &info);
        char file[4096], safe[512];
        snprintf(safe, sizeof safe, "%s", info.name);
        for (char *p = safe; *p; p++)
            if (*p == '/' || *p == '\\' || *p == ':') *p = '_';
        snprintf(file, sizeof file, "%s/%s.npy", out, safe);
        if (rlx_exec_output(e, info.name, &ot) != RLX_OK || rlx_npy_save(file, &ot) != RLX_OK) {
            fprintf(stderr, "rlx run: output '%s': %s\n", info.name, rlx_last_error());
            rc = 1;
        } else {
            printf("%s  %s [", file, rlx_dtype_name(ot.dtype));
            for (int d = 0; d < ot.rank; d++) printf("%s%lld", d ? ", " : "", (long long)ot.dims[d]);
            printf("]\n");
        }
    }
    if (rc == 0) {
        double first = t[0];
        qsort(t, (size_t)runs, sizeof *t, cmp_d);
        printf("%d run%s: first %.3f ms (compiles the shapes), median %.3f ms\n", runs, runs > 1 ? "s" : "", first,
               t[runs / 2]);
    }
    if (rc == 0 && report) {
        char *rep = rlx_exec_report(e);
        if (rep) fputs(rep, stdout);
        free(rep);
    }
    free(t);
    for (int i = 0; i < n_in; i++) free(names[i]), free(ins[i].data);
    rlx_exec_free(e);
    rlx_onnx_free(m);
    return rc;
}
