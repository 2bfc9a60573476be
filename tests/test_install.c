/*
 * test_install.c — rlx as a user gets it: programs outside the tree built
 * against an installed prefix through pkg-config (shared and static), the
 * libraries exporting exactly the functions rlx.h declares, and a program
 * with its own gguf_find_key linking with the static library without a clash.
 *
 * `make test` installs the tree first (RLX_INSTALL_PREFIX) and passes the
 * suite's compiler and sanitizer flags (RLX_TEST_CC, RLX_TEST_CFLAGS), so the
 * sanitizer build links its programs the same way.
 */
#include "harness.h"
#include "tiny_model.h"
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The installed prefix, or NULL with the test skipped (no tree outside
 * `make test`) or failed (the tree `make test` named is missing). */
static const char *installed_prefix(void) {
    const char *env = getenv("RLX_INSTALL_PREFIX");
    const char *prefix = env && *env ? env : "build/test-prefix";
    char pc[1024];
    snprintf(pc, sizeof pc, "%s/lib/pkgconfig/rlx.pc", prefix);
    static char abs_prefix[4096];
    struct stat st;
    if (stat(pc, &st) == 0 && realpath(prefix, abs_prefix)) return abs_prefix;   /* the tests cd elsewhere */
    if (env && *env) harness_fail(__FILE__, __LINE__, "RLX_INSTALL_PREFIX=%s has no lib/pkgconfig/rlx.pc", env);
    else harness_skip(__FILE__, __LINE__, "no installed tree (make test installs one into build/test-prefix)");
    return NULL;
}

static const char *test_cc(void) { return test_program("RLX_TEST_CC", "cc"); }
static const char *test_cflags(void) { return test_program("RLX_TEST_CFLAGS", ""); }

/* Writes text to dir/name; false if it could not. */
static bool write_text(const char *dir, const char *name, const char *text) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return false;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

static const char *user_program =
    "#include <rlx.h>\n"
    "#include <stdio.h>\n"
    "int main(void) {\n"
    "    rlx_graph *g = rlx_graph_new();\n"
    "    int64_t d[1] = {4};\n"
    "    rlx_node x = rlx_input(g, \"x\", RLX_F32, 1, d);\n"
    "    rlx_output(g, \"y\", rlx_add(g, x, x));\n"
    "    rlx_compile_options o;\n"
    "    rlx_compile_options_init(&o);\n"
    "    o.backend = RLX_BACKEND_CPU;\n"
    "    rlx_exec *e;\n"
    "    if (rlx_compile(g, &o, &e) != RLX_OK) { printf(\"compile: %s\\n\", rlx_last_error()); return 1; }\n"
    "    rlx_graph_free(g);\n"
    "    float X[4] = {1, 2, 3, 4};\n"
    "    rlx_tensor in = {.name = \"x\", .dtype = RLX_F32, .rank = 1, .dims = {4}, .data = X, .bytes = sizeof X};\n"
    "    rlx_tensor out;\n"
    "    if (rlx_exec_run(e, &in, 1) != RLX_OK || rlx_exec_output(e, \"y\", &out) != RLX_OK) return 1;\n"
    "    const float *y = out.data;\n"
    "    rlx_device_info dev;\n"
    "    int devices = rlx_device_count();\n"
    "    if (rlx_device_get_info(0, &dev) != RLX_OK) return 1;\n"
    "    printf(\"rlx %s y = %g %g %g %g; %d devices, 0 is %s\\n\", rlx_version(), y[0], y[1], y[2], y[3],\n"
    "           devices, dev.kind == RLX_DEVICE_CPU ? \"the cpu\" : \"not the cpu\");\n"
    "    rlx_exec_free(e);\n"
    "    return 0;\n"
    "}\n";

/* How many lines of `readelf -d prog` name librlx.so (-1: readelf failed). */
static int needs_librlx_so(const char *prog) {
    char cmd[8192], out[8192];
    snprintf(cmd, sizeof cmd, "readelf -d %s", prog);
    if (test_run_command(cmd, out, sizeof out) != 0) return -1;
    return test_count(out, "librlx.so");
}

TEST(install_pkg_config_builds_and_runs_programs) {
    const char *prefix = installed_prefix();
    if (!prefix) return;
    char dir[] = "/tmp/rlx_install_XXXXXX", cmd[4096], out[8192];
    CHECK(mkdtemp(dir) != NULL);
    CHECK(write_text(dir, "prog.c", user_program));
    char want[128];
    snprintf(want, sizeof want, "rlx %s y = 2 4 6 8; ", rlx_version());
    const char *env = "PKG_CONFIG_PATH=\"$RLX_PC\"";
    char pcdir[1024];
    snprintf(pcdir, sizeof pcdir, "%s/lib/pkgconfig", prefix);
    setenv("RLX_PC", pcdir, 1);

    snprintf(cmd, sizeof cmd, "%s pkg-config --modversion rlx 2>&1", env);
    CHECK_MSG(test_run_command(cmd, out, sizeof out) == 0 && strncmp(out, rlx_version(), strlen(rlx_version())) == 0,
              "pkg-config --modversion rlx: %s", out);

    /* Shared: -lrlx finds librlx.so; the program needs librlx.so.0 at run time. */
    snprintf(cmd, sizeof cmd, "cd %s && %s %s -o prog_shared prog.c $(%s pkg-config --cflags --libs rlx) 2>&1", dir,
             test_cc(), test_cflags(), env);
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s\n-> %d: %s", cmd, code, out);
    snprintf(cmd, sizeof cmd, "%s/prog_shared", dir);
    CHECK_MSG(needs_librlx_so(cmd) == 1, "%s does not name librlx.so.0 as NEEDED", cmd);
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s/lib %s/prog_shared 2>&1", prefix, dir);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0 && strstr(out, want) && strstr(out, "0 is the cpu"), "%s -> %d: %s", cmd, code, out);

    /* Static: --static adds Libs.private; -l:librlx.a picks the archive over the .so. */
    snprintf(cmd, sizeof cmd,
             "cd %s && %s %s -o prog_static prog.c $(%s pkg-config --cflags rlx) "
             "$(%s pkg-config --static --libs rlx | sed 's/-lrlx\\b/-l:librlx.a/') 2>&1",
             dir, test_cc(), test_cflags(), env, env);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s\n-> %d: %s", cmd, code, out);
    snprintf(cmd, sizeof cmd, "%s/prog_static", dir);
    CHECK_MSG(needs_librlx_so(cmd) == 0, "%s should not need librlx.so", cmd);
    snprintf(cmd, sizeof cmd, "%s/prog_static 2>&1", dir);
    code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0 && strstr(out, want), "%s -> %d: %s", cmd, code, out);

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
}

/* The API as the installed header declares it (scripts/api_symbols.sh's rule),
 * against the defined globals of the static and the shared library. */
TEST(install_libraries_export_only_the_api) {
    const char *prefix = installed_prefix();
    if (!prefix) return;
    char cmd[4096], api[16384], a[16384], so[16384];
    snprintf(cmd, sizeof cmd,
             "%s -E -P %s/include/rlx.h | grep -oE '\\brlx_[A-Za-z0-9_]+[[:space:]]*\\(' | sed 's/[[:space:]]*($//' | sort -u",
             test_cc(), prefix);
    CHECK_MSG(test_run_command(cmd, api, sizeof api) == 0, "%s", cmd);
    int n_api = test_count(api, "\n");
    CHECK_MSG(n_api >= 100 && strstr(api, "rlx_device_get_info\n"), "header list (%d): %s", n_api, api);
    /* nm -g --defined-only: "address type name"; the version node RLX_0 is type A. */
    snprintf(cmd, sizeof cmd, "nm -g --defined-only %s/lib/librlx.a | awk 'NF == 3 && $2 != \"A\" {print $3}' | sort -u", prefix);
    CHECK_MSG(test_run_command(cmd, a, sizeof a) == 0, "%s", cmd);
    snprintf(cmd, sizeof cmd, "nm -D --defined-only %s/lib/librlx.so.0 | awk 'NF == 3 && $2 != \"A\" {print $3}' | sed 's/@.*//' | sort -u",
             prefix);
    CHECK_MSG(test_run_command(cmd, so, sizeof so) == 0, "%s", cmd);
    CHECK_MSG(strcmp(a, api) == 0, "librlx.a exports (%d):\n%s\nrlx.h declares (%d):\n%s", test_count(a, "\n"), a, n_api, api);
    CHECK_MSG(strcmp(so, api) == 0, "librlx.so.0 exports (%d):\n%s\nrlx.h declares (%d)", test_count(so, "\n"), so, n_api);
    snprintf(cmd, sizeof cmd, "readelf -d %s/lib/librlx.so.0", prefix);
    CHECK(test_run_command(cmd, a, sizeof a) == 0);
    CHECK_MSG(strstr(a, "Library soname: [librlx.so.0]"), "soname: %s", a);
}

/* ggml and rlx both have a gguf_find_key. A program with its own links
 * against the static library, calls its own, and the library still reads a
 * GGUF model with its internal one. */
TEST(install_static_lib_no_clash_with_user_gguf_find_key) {
    const char *prefix = installed_prefix();
    if (!prefix) return;
    char dir[] = "/tmp/rlx_clash_XXXXXX", cmd[4096], out[8192], model[1024];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(model, sizeof model, "%s/tiny.gguf", dir);
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    CHECK_MSG(tiny_model_write(&spec, model) == 0, "write %s: %s", model, rlx_last_error());
    CHECK(write_text(dir, "clash.c",
                     "#include <rlx.h>\n"
                     "#include <stdio.h>\n"
                     "long gguf_find_key(const void *f, const char *key) { (void)f; (void)key; return -7; }\n"
                     "int gguf_open(void) { return -8; }\n"
                     "int qtype_get(void) { return -9; }\n"
                     "int main(int argc, char **argv) {\n"
                     "    rlx_model_options o;\n"
                     "    rlx_model_options_init(&o);\n"
                     "    o.compile.backend = RLX_BACKEND_CPU;\n"
                     "    rlx_model *m;\n"
                     "    if (argc < 2 || rlx_model_load(argv[1], &o, &m) != RLX_OK) { printf(\"load: %s\\n\", rlx_last_error()); return 1; }\n"
                     "    rlx_model_info info;\n"
                     "    rlx_model_get_info(m, &info);\n"
                     "    printf(\"mine %ld %d %d; model %s, %d layers\\n\", gguf_find_key(0, \"x\"), gguf_open(), qtype_get(),\n"
                     "           info.arch, info.n_layer);\n"
                     "    rlx_model_free(m);\n"
                     "    return 0;\n"
                     "}\n"));
    snprintf(cmd, sizeof cmd, "cd %s && %s %s -o clash clash.c -I%s/include %s/lib/librlx.a -lm -pthread -ldl 2>&1", dir,
             test_cc(), test_cflags(), prefix, prefix);
    int code = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(code == 0, "%s\n-> %d: %s", cmd, code, out);
    snprintf(cmd, sizeof cmd, "%s/clash %s 2>&1", dir, model);
    code = test_run_command(cmd, out, sizeof out);
    char want[128];
    snprintf(want, sizeof want, "mine -7 -8 -9; model %s, %d layers", spec.arch, spec.n_layer);
    CHECK_MSG(code == 0 && strstr(out, want), "%s -> %d: %s (want '%s')", cmd, code, out, want);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
}
