/*
 * profile.h — the per-step profile both backends print in rlx_exec_report()
 * when RLX_PROFILE=1 (read when a program is built): a summary of device or
 * wall time per kernel kind, largest first. Each backend measures its own
 * steps; this only formats (and gives both reports their appender).
 */
#ifndef RLX_CORE_PROFILE_H
#define RLX_CORE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether RLX_PROFILE asks for per-step timing. */
bool rlx_profile_enabled(void);

/* Appends printf output to a report buffer (cap bytes, *len used); false,
 * leaving out as it was, when it does not fit. Both backends' reports use it. */
bool rlx_report_add(char *out, size_t cap, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Appends to out (cap bytes, *len used) one line with the total of us[0..n)
 * and then one line per distinct kind[i]: steps, total us, share. us[i] is
 * already a per-run mean; what names the time ("device", "wall") and runs go
 * in the header line. Returns false when out is full (what fit is kept). */
bool rlx_profile_summary(char *out, size_t cap, size_t *len, const char *const *kind, const double *us, int n,
                         const char *what, int runs);

#endif
