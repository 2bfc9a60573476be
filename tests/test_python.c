/*
 * test_python.c — runs the Python package's pytest suite (python/tests) in
 * the venv `make test` installs it into (RLX_PYTHON), and adds its counts
 * to the summary line, so one `make test` line covers both languages. The
 * suite's own output is printed when it fails. Without RLX_PYTHON (a direct
 * run of the binary, or the sanitizer build, whose library Python cannot
 * load) it is skipped.
 */
#include "harness.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_before(const char *line, const char *word) {
    const char *p = strstr(line, word);
    if (!p) return 0;
    while (p > line && p[-1] == ' ') p--;
    while (p > line && p[-1] >= '0' && p[-1] <= '9') p--;
    return atoi(p);
}

TEST(python_package_suite) {
    const char *py = getenv("RLX_PYTHON");
    if (!py || !*py) SKIP("RLX_PYTHON is not set (make test installs the package into a venv and sets it)");
    static char out[1 << 20];
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd python/tests && '%s' -m pytest -q -p no:cacheprovider . 2>&1", py);
    int rc = test_run_command(cmd, out, sizeof out);
    /* pytest's last line: "140 passed, 2 skipped in 3.1s" or "1 failed, 139 passed in ..." */
    char *end = out + strlen(out);
    while (end > out && (end[-1] == '\n' || end[-1] == ' ')) *--end = '\0';
    char *last = strrchr(out, '\n');
    last = last ? last + 1 : out;
    int passed = count_before(last, " passed"), failed = count_before(last, " failed") + count_before(last, " error");
    int skipped = count_before(last, " skipped");
    printf("     python: %s\n", last);
    if (rc != 0 || failed > 0 || passed == 0) printf("%s\n", out);
    CHECK_MSG(rc == 0 && failed == 0 && passed > 0, "the Python suite failed (exit %d): %s", rc, last);
    harness_add_counts(passed, failed, skipped);
}
