/*
 * profile.c — formatting of the RLX_PROFILE summary (see profile.h).
 */
#include "core/profile.h"
#include "core/core.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool rlx_profile_enabled(void) { return rlx_env_int("RLX_PROFILE", 0) != 0; }

bool rlx_report_add(char *out, size_t cap, size_t *len, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= cap - *len) return false;
    *len += (size_t)w;
    return true;
}

bool rlx_profile_summary(char *out, size_t cap, size_t *len, const char *const *kind, const double *us, int n,
                         const char *what, int runs) {
    int *first = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));   /* step naming each kind */
    double *tot = calloc((size_t)(n > 0 ? n : 1), sizeof *tot);
    int *cnt = calloc((size_t)(n > 0 ? n : 1), sizeof *cnt);
    bool ok = first && tot && cnt;
    double all = 0;
    int kinds = 0;
    for (int i = 0; ok && i < n; i++) {
        all += us[i];
        int k = 0;
        while (k < kinds && strcmp(kind[first[k]], kind[i]) != 0) k++;
        if (k == kinds) first[kinds++] = i;
        tot[k] += us[i];
        cnt[k]++;
    }
    ok = ok && rlx_report_add(out, cap, len, "profile: %.1f us of %s time per run (mean of %d runs)\n", all, what, runs);
    for (int r = 0; ok && r < kinds; r++) {   /* largest total first */
        int best = -1;
        for (int k = 0; k < kinds; k++)
            if (cnt[k] && (best < 0 || tot[k] > tot[best])) best = k;
        ok = rlx_report_add(out, cap, len, "  %-32s %5d steps %10.1f us %5.1f%%\n", kind[first[best]], cnt[best], tot[best],
                 all > 0 ? 100.0 * tot[best] / all : 0.0);
        cnt[best] = 0;
    }
    free(first);
    free(tot);
    free(cnt);
    return ok;
}
