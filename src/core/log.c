/*
 * log.c — library logging through one user-settable callback. The default
 * sink prints warnings and errors to stderr; the library prints nothing else.
 * The callback is process-wide configuration, set before use (not a hot path).
 */
#include "core/core.h"
#include <stdio.h>

static rlx_log_fn    log_fn;
static void         *log_user;
static rlx_log_level log_min = RLX_LOG_WARN;

static const char *level_name(rlx_log_level level) {
    switch (level) {
    case RLX_LOG_DEBUG: return "debug";
    case RLX_LOG_INFO:  return "info";
    case RLX_LOG_WARN:  return "warning";
    case RLX_LOG_ERROR: return "error";
    default:            return "log";
    }
}

void rlx_set_log_callback(rlx_log_fn fn, void *user, rlx_log_level min_level) {
    log_fn = fn;
    log_user = user;
    log_min = fn ? min_level : RLX_LOG_WARN;
}

void rlx_log_msg(rlx_log_level level, const char *fmt, ...) {
    if (level < log_min || level >= RLX_LOG_OFF) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (log_fn) log_fn(level, msg, log_user);
    else fprintf(stderr, "rlx %s: %s\n", level_name(level), msg);
}
