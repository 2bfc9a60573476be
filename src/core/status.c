/*
 * status.c — the per-thread error message behind rlx_last_error(), and the
 * names of status codes. rlx_fail() both sets the message and returns the
 * status so that error paths stay one line.
 */
#include "core/core.h"
#include <stdio.h>
#include <string.h>

#define RLX_ERROR_CAP 1024

static _Thread_local char last_error[RLX_ERROR_CAP];

rlx_status rlx_fail(rlx_status status, const char *fmt, ...) {
    /* formatted aside first: callers may pass rlx_last_error() itself as an
     * argument (wrapping an inner error), and vsnprintf into its own source
     * is undefined */
    char msg[RLX_ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
    rlx_log_msg(RLX_LOG_DEBUG, "%s: %s", rlx_status_name(status), last_error);
    return status;
}

void rlx_clear_error(void) { last_error[0] = 0; }

const char *rlx_last_error(void) { return last_error; }

const char *rlx_status_name(rlx_status status) {
    switch (status) {
    case RLX_OK:                      return "RLX_OK";
    case RLX_STATUS_INVALID_ARGUMENT: return "RLX_STATUS_INVALID_ARGUMENT";
    case RLX_STATUS_SHAPE:            return "RLX_STATUS_SHAPE";
    case RLX_STATUS_UNSUPPORTED:      return "RLX_STATUS_UNSUPPORTED";
    case RLX_STATUS_OUT_OF_MEMORY:    return "RLX_STATUS_OUT_OF_MEMORY";
    case RLX_STATUS_DEVICE:           return "RLX_STATUS_DEVICE";
    case RLX_STATUS_IO:               return "RLX_STATUS_IO";
    case RLX_STATUS_FORMAT:           return "RLX_STATUS_FORMAT";
    case RLX_STATUS_NOT_FOUND:        return "RLX_STATUS_NOT_FOUND";
    case RLX_STATUS_INTERNAL:         return "RLX_STATUS_INTERNAL";
    }
    return "RLX_STATUS_UNKNOWN";
}

const char *rlx_version(void) { return "0.1.0"; }
