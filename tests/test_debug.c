/*
 * test_debug.c — the debugging options of rlx_compile_options on the CPU and
 * on Vulkan: trace_path writes a Chrome / Perfetto trace (checked by parsing
 * it with Python's json: compile phases, one event per step per run,
 * uploads and readbacks, valid ts/dur, readable before the exec is freed),
 * and check_numerics names the first node whose result is not finite.
 */
#include "core/trace.h"
#include "quant/quant.h"
#include "tiny_model.h"
#include "vk_parity.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Checks a trace file: argv path runs cpu_steps gpu_nodes host_steps closed. */
static const char *trace_checker =
    "import json, sys, collections\n"
    "path = sys.argv[1]; runs, cpu_steps, gpu_nodes, host_steps, closed = map(int, sys.argv[2:7])\n"
    "txt = open(path).read().rstrip()\n"
    "if not closed:\n"
    "    assert not txt.endswith(']'), 'the trace of a live exec is already closed'\n"
    "    txt += ']'\n"
    "ev = json.loads(txt)\n"
    "assert isinstance(ev, list), 'not a JSON array'\n"
    "xs = [e for e in ev if e.get('ph') == 'X']\n"
    "for e in xs:\n"
    "    for k in ('name', 'cat', 'ts', 'dur', 'pid', 'tid'): assert k in e, (k, e)\n"
    "    assert isinstance(e['ts'], (int, float)) and e['ts'] >= 0 and e['dur'] >= 0, e\n"
    "tracks = [e for e in ev if e.get('ph') == 'M' and e['name'] == 'thread_name']\n"
    "assert tracks, 'no named tracks'\n"
    "n = collections.Counter((e['cat'], e['name']) for e in xs)\n"
    "cats = collections.Counter(e['cat'] for e in xs)\n"
    "for phase in ('verify', 'fuse', 'dce', 'device', 'param allocation', 'specialize', 'plan memory', 'backend program'):\n"
    "    assert n[('compile', phase)] >= 1, 'no compile phase ' + phase\n"
    "assert n[('run', 'run')] == runs, ('runs', n[('run', 'run')])\n"
    "assert cats['cpu'] == runs * cpu_steps, ('cpu step events', cats['cpu'], runs * cpu_steps)\n"
    "gpu = [e for e in xs if e['cat'] == 'gpu' and 'node' in e.get('args', {})]\n"
    "assert len(gpu) == runs * gpu_nodes, ('gpu node events', len(gpu), runs * gpu_nodes)\n"
    "assert cats['host'] == runs * host_steps, ('host steps', cats['host'])\n"
    "assert n[('upload', 'upload param')] >= 1, 'no param upload'\n"
    "assert sum(v for (c, k), v in n.items() if c == 'upload' and k.startswith('copy inputs')) == runs, 'input copies'\n"
    "assert n[('readback', 'read output')] >= 1, 'no readback'\n"
    "runs_ev = sorted((e for e in xs if e['name'] == 'run'), key=lambda e: e['ts'])\n"
    "steps = [e for e in xs if e['cat'] in ('cpu', 'gpu') and 'node' in e.get('args', {})]\n"
    "for e in steps:\n"
    "    assert any(r['ts'] - 1000 <= e['ts'] <= r['ts'] + r['dur'] + 1000 for r in runs_ev), ('step outside a run', e)\n"
    "print('ok', len(xs))\n";

static bool write_checker(char *path) {
    if (!test_temp_file(path)) return false;
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fputs(trace_checker, f);
    return fclose(f) == 0;
}

/* Lines of an exec report whose path column is `path` (e.g. "gpu"). */
static int report_paths(const char *rep, const char *path) {
    int count = 0;
    size_t n = strlen(path);
    for (const char *line = rep; line && *line;) {
        if (strlen(line) > 6 + n && strncmp(line + 6, path, n) == 0 && line[6 + n] == ' ') count++;
        line = strchr(line, '\n');
        if (line) line++;
    }
    return count;
}

static bool run_traced(bool vulkan) {
    char trace[] = "/tmp/rlx_trace_XXXXXX", checker[] = "/tmp/rlx_trace_check_XXXXXX";
    if (!test_temp_file(trace) || !write_checker(checker)) { printf("    cannot make temp files\n"); return false; }
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {4, 16}, wd[2] = {8, 16};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node w = rlx_param(g, "w", RLX_F32, 2, wd);
    rlx_node h = rlx_matmul(g, x, w, 1);
    rlx_output(g, "y", rlx_softmax(g, rlx_add(g, rlx_exp(g, h), h), 1));
    rlx_compile_options o;
    if (vulkan) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
    o.trace_path = trace;
    rlx_exec *e = NULL;
    float xv[64], wv[128], y[32];
    test_fill_uniform_f32(xv, 64, -1, 1);
    test_fill_uniform_f32(wv, 128, -1, 1);
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {4, 16}, .data = xv, .bytes = sizeof xv};
    rlx_exec_stats stats;
    bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param_f32(e, "w", wv, 128) == RLX_OK &&
              rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_run(e, &in, 1) == RLX_OK &&
              rlx_exec_read_output(e, "y", y, sizeof y) == RLX_OK && rlx_exec_get_stats(e, &stats) == RLX_OK;
    if (!ok) printf("    %s: %s\n", vulkan ? "vulkan" : "cpu", rlx_last_error());
    char *rep = ok ? rlx_exec_report(e) : NULL;
    int gpu_nodes = rep ? report_paths(rep, "gpu") : 0;
    if (ok && vulkan && gpu_nodes < 2) { printf("    report has %d gpu nodes:\n%s", gpu_nodes, rep); ok = false; }
    char cmd[512], out[4096];
    for (int closed = 0; closed < 2 && ok; closed++) {   /* before the free (flushed, unterminated), then complete */
        if (closed) { rlx_exec_free(e); e = NULL; }
        snprintf(cmd, sizeof cmd, "%s %s %s 2 %d %d %d %d 2>&1", test_program("RLX_PYTHON", "/usr/bin/python3"), checker,
                 trace, vulkan ? 0 : stats.steps, vulkan ? gpu_nodes : 0, vulkan ? stats.host_steps : 0, closed);
        int code = test_run_command(cmd, out, sizeof out);
        if (code != 0 || strncmp(out, "ok", 2) != 0) {
            printf("    trace check (%s exec) exited %d: %s\n", closed ? "freed" : "live", code, out);
            ok = false;
        }
    }
    free(rep);
    rlx_exec_free(e);
    rlx_graph_free(g);
    remove(trace);
    remove(checker);
    return ok;
}

TEST(debug_trace_cpu) { CHECK(run_traced(false)); }

TEST(debug_trace_vulkan) {
    VKP_REQUIRE();
    CHECK(run_traced(true));
}

/* RLX_TRACE names the file when the options do not. */
TEST(debug_trace_env_override) {
    char trace[] = "/tmp/rlx_trace_env_XXXXXX";
    CHECK(test_temp_file(trace));
    char *saved = test_env_swap("RLX_TRACE", trace);
    rlx_graph *g = rlx_graph_new();
    int64_t d[1] = {8};
    rlx_output(g, "y", rlx_relu(g, rlx_input(g, "x", RLX_F32, 1, d)));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(g, &o, &e);
    test_env_restore("RLX_TRACE", saved);
    rlx_exec_free(e);
    rlx_graph_free(g);
    void *data = NULL;
    size_t size = 0;
    bool read = test_read_file(trace, &data, &size);
    remove(trace);
    CHECK_OK(st);
    CHECK(read);
    bool has = size > 0 && memmem(data, size, "\"verify\"", 8) && ((char *)data)[size - 2] == ']';
    free(data);
    CHECK_MSG(has, "RLX_TRACE wrote no complete trace with a verify event (%zu bytes)", size);
}

/* ---------------------------------------------------------------- numerics */

static char logged[1024];
static void capture_log(rlx_log_level level, const char *msg, void *user) {
    (void)user;
    if (level >= RLX_LOG_WARN && strstr(msg, "numerics")) snprintf(logged, sizeof logged, "%s", msg);
}

/* x -> log ("lg") -> add ("ad") -> relu ("rl") -> y, and 0/0 ("dv") on a
 * second path when with_div; x[5] = bad makes log non-finite there. */
static rlx_graph *nan_graph(void) {
    rlx_graph *g = rlx_graph_new();
    int64_t d[2] = {2, 8};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, d);
    rlx_node lg = rlx_log(g, x);
    rlx_set_name(g, lg, "lg");
    rlx_node ad = rlx_add(g, lg, rlx_scalar(g, RLX_F32, 1.0));
    rlx_set_name(g, ad, "ad");
    rlx_node rl = rlx_relu(g, ad);
    rlx_set_name(g, rl, "rl");
    rlx_output(g, "y", rl);
    return g;
}

static bool check_numerics(bool vulkan, float bad, bool via_env, const char *want_node, const char *want_value) {
    rlx_graph *g = nan_graph();
    rlx_compile_options o;
    if (vulkan) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
    o.check_numerics = via_env ? 0 : 1;
    char *saved = via_env ? test_env_swap("RLX_CHECK_NUMERICS", "1") : NULL;
    float xv[16];
    for (int i = 0; i < 16; i++) xv[i] = 0.5f + (float)i;
    xv[5] = bad;
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {2, 8}, .data = xv, .bytes = sizeof xv};
    rlx_exec *e = NULL;
    rlx_numerics_report r;
    logged[0] = 0;
    rlx_set_log_callback(capture_log, NULL, RLX_LOG_WARN);
    bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_numerics(e, &r) == RLX_OK;
    rlx_set_log_callback(NULL, NULL, RLX_LOG_WARN);
    if (via_env) test_env_restore("RLX_CHECK_NUMERICS", saved);
    if (!ok) printf("    %s: %s\n", vulkan ? "vulkan" : "cpu", rlx_last_error());
    else if (!want_node) {
        ok = !r.found && r.node == -1 && r.message[0] == 0 && logged[0] == 0 && r.nodes_checked >= 3;
        if (!ok) printf("    clean graph reported: found %d node %d '%s' (%d checked), log '%s'\n", r.found, r.node,
                        r.message, r.nodes_checked, logged);
    } else {
        ok = r.found && strcmp(r.name, want_node) == 0 && strcmp(r.op, "log") == 0 && r.element == 5 &&
             strstr(r.message, want_value) && strstr(r.message, "'lg' (log)") && strstr(logged, "'lg' (log)") &&
             (strcmp(want_value, "NaN") == 0 ? isnan(r.value) : isinf(r.value));
        char *rep = ok ? rlx_exec_report(e) : NULL;   /* the node number is the report's */
        char line[32];
        snprintf(line, sizeof line, "%4d  ", r.node);
        const char *at = rep ? strstr(rep, line) : NULL;
        const char *eol = at ? strchr(at, '\n') : NULL;
        if (ok && (!at || !eol || !memmem(at, (size_t)(eol - at), "'lg'", 4))) ok = false;
        if (!ok) printf("    %s: found %d, node %d '%s' (%s) element %lld: '%s'; log '%s'\n%s", vulkan ? "vulkan" : "cpu",
                        r.found, r.node, r.name, r.op, (long long)r.element, r.message, logged, rep ? rep : "");
        free(rep);
    }
    rlx_exec_free(e);
    rlx_graph_free(g);
    return ok;
}

TEST(debug_numerics_cpu) {
    CHECK(check_numerics(false, -1.0f, false, "lg", "NaN"));    /* log(-1) */
    CHECK(check_numerics(false, 0.0f, false, "lg", "-Inf"));    /* log(0) */
    CHECK(check_numerics(false, 2.0f, false, NULL, NULL));      /* clean */
    CHECK(check_numerics(false, -1.0f, true, "lg", "NaN"));     /* RLX_CHECK_NUMERICS=1 */
}

TEST(debug_numerics_vulkan) {
    VKP_REQUIRE();
    CHECK(check_numerics(true, -1.0f, false, "lg", "NaN"));
    CHECK(check_numerics(true, 0.0f, false, "lg", "-Inf"));
    CHECK(check_numerics(true, 2.0f, false, NULL, NULL));
}

/* 0/0 in the middle of a chain: the division is named, not its consumers. */
TEST(debug_numerics_div_cpu_vulkan) {
    for (int vk = 0; vk < 2; vk++) {
        if (vk && !vkp_available()) return;
        rlx_graph *g = rlx_graph_new();
        int64_t d[1] = {4};
        rlx_node a = rlx_input(g, "a", RLX_F32, 1, d), b = rlx_input(g, "b", RLX_F32, 1, d);
        rlx_node dv = rlx_div(g, rlx_mul(g, a, b), b);
        rlx_set_name(g, dv, "dv");
        rlx_output(g, "y", rlx_exp(g, rlx_add(g, dv, a)));
        rlx_compile_options o;
        if (vk) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
        o.check_numerics = 1;
        float av[4] = {1, 2, 3, 4}, bv[4] = {1, 0, 2, 3};
        rlx_tensor in[2] = {{.name = "a", .dtype = RLX_F32, .rank = 1, .dims = {4}, .data = av, .bytes = sizeof av},
                            {.name = "b", .dtype = RLX_F32, .rank = 1, .dims = {4}, .data = bv, .bytes = sizeof bv}};
        rlx_exec *e = NULL;
        rlx_numerics_report r;
        rlx_set_log_callback(capture_log, NULL, RLX_LOG_WARN);
        rlx_status st = rlx_compile(g, &o, &e);
        if (st == RLX_OK) st = rlx_exec_run(e, in, 2);
        rlx_set_log_callback(NULL, NULL, RLX_LOG_WARN);
        if (st == RLX_OK) st = rlx_exec_numerics(e, &r);
        bool ok = st == RLX_OK && r.found && strcmp(r.name, "dv") == 0 && strcmp(r.op, "div") == 0 && r.element == 1;
        if (!ok) printf("    %s: %s; %s\n", vk ? "vulkan" : "cpu", rlx_last_error(), st == RLX_OK ? r.message : "");
        rlx_exec_free(e);
        rlx_graph_free(g);
        CHECK(ok);
    }
}

/* Node names reach the trace through rlx_json_escape: what it writes must be
 * JSON a strict UTF-8 reader takes, whatever bytes a name holds and wherever
 * the buffer cuts it. */
TEST(debug_trace_json_escape) {
    char out[64];
    CHECK(strcmp(rlx_json_escape("a\"b\\c\n", out, sizeof out), "a\\\"b\\\\c\\u000a") == 0);
    CHECK(strcmp(rlx_json_escape("caf\xc3\xa9 \xe2\x82\xac", out, sizeof out), "caf\xc3\xa9 \xe2\x82\xac") == 0);
    /* a stray continuation byte, a cut sequence, an overlong '/', a surrogate */
    CHECK(strcmp(rlx_json_escape("x\x80y\xe2\x82z\xc0\xaf\xed\xa0\x80", out, sizeof out),
                 "x\\ufffdy\\ufffd\\ufffdz\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd") == 0);
    /* truncation keeps whole characters: 4-byte ones into 12 bytes */
    rlx_json_escape("\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80", out, 12);
    CHECK(strcmp(out, "\xf0\x9f\x98\x80\xf0\x9f\x98\x80") == 0);
    CHECK(strcmp(rlx_json_escape(NULL, out, sizeof out), "") == 0);
}

/* Off by default: the report call says so. Bad values are refused. */
TEST(debug_numerics_off_and_bad_option) {
    rlx_graph *g = nan_graph();
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    CHECK(o.check_numerics == 0 && o.trace_path == NULL);
    rlx_exec *e = NULL;
    rlx_numerics_report r;
    rlx_status st = rlx_compile(g, &o, &e);
    if (st == RLX_OK) st = rlx_exec_numerics(e, &r) == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "check_numerics is off")
                               ? RLX_OK : RLX_STATUS_INTERNAL;
    rlx_exec_free(e);
    e = NULL;
    o.check_numerics = 2;
    rlx_status bad = rlx_compile(g, &o, &e);
    rlx_graph_free(g);
    CHECK_OK(st);
    CHECK_STATUS(bad, RLX_STATUS_INVALID_ARGUMENT);
    CHECK(strstr(rlx_last_error(), "check_numerics") != NULL);
    CHECK_STATUS(rlx_exec_numerics(NULL, &r), RLX_STATUS_INVALID_ARGUMENT);
}

/* A model through the environment: RLX_CHECK_NUMERICS finds nothing in a
 * clean decoder (on Vulkan, the nodes fused into a neighbour's kernel are
 * skipped, not read as garbage), and RLX_TRACE records its prompt and
 * decode runs in a trace Python's json reads. */
TEST(debug_model_numerics_and_trace) {
    char path[256], trace[] = "/tmp/rlx_model_trace_XXXXXX";
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    spec.weight_type = QTYPE_Q8_0;
    tiny_model_tmp_path(path, sizeof path, "debug");
    CHECK_MSG(tiny_model_write(&spec, path) == 0, "write %s", rlx_last_error());
    CHECK(test_temp_file(trace));
    for (int vk = 0; vk < 2; vk++) {
        if (vk && !vkp_available()) break;
        char *saved_check = test_env_swap("RLX_CHECK_NUMERICS", "1"), *saved_trace = test_env_swap("RLX_TRACE", trace);
        logged[0] = 0;
        rlx_set_log_callback(capture_log, NULL, RLX_LOG_WARN);
        rlx_model *m = tiny_model_load(path, vk ? RLX_BACKEND_VULKAN : RLX_BACKEND_CPU);
        int32_t ids[3] = {1, 5, 9};
        const float *logits = NULL;
        bool ok = m && rlx_model_eval(m, ids, 3, &logits) == RLX_OK && rlx_model_eval(m, ids, 1, &logits) == RLX_OK;
        if (!ok) printf("    %s: %s\n", vk ? "vulkan" : "cpu", rlx_last_error());
        rlx_model_free(m);
        rlx_set_log_callback(NULL, NULL, RLX_LOG_WARN);
        test_env_restore("RLX_TRACE", saved_trace);
        test_env_restore("RLX_CHECK_NUMERICS", saved_check);
        if (ok && logged[0]) { printf("    %s: clean model reported: %s\n", vk ? "vulkan" : "cpu", logged); ok = false; }
        char cmd[768], out[1024];
        snprintf(cmd, sizeof cmd,
                 "%s -c \"import json,sys; ev=json.load(open(sys.argv[1])); x=[e for e in ev if e.get('ph')=='X'];"
                 " n=lambda c,k=None: sum(1 for e in x if e['cat']==c and (k is None or e['name']==k));"
                 " assert n('run','run')>=2 and n('debug','numerics check')>=2 and n('cpu' if %d==0 else 'gpu')>0, x[:3];"
                 " print('ok')\" %s 2>&1",
                 test_program("RLX_PYTHON", "/usr/bin/python3"), vk, trace);
        int code = ok ? test_run_command(cmd, out, sizeof out) : -1;
        if (ok && (code != 0 || strncmp(out, "ok", 2) != 0)) { printf("    %s trace: %s\n", vk ? "vulkan" : "cpu", out); ok = false; }
        if (!ok) { remove(path); remove(trace); }
        CHECK(ok);
    }
    remove(path);
    remove(trace);
}
