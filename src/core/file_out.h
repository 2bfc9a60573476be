/*
 * file_out.h — writing a file so that a crash or a failed write never leaves
 * a corrupt one: the bytes go to a temporary file next to the target, which
 * is renamed over it only once everything was written. The model writers
 * (GGUF, safetensors) use it.
 */
#ifndef RLX_CORE_FILE_OUT_H
#define RLX_CORE_FILE_OUT_H

#include "core/core.h"
#include <stdio.h>

typedef struct rlx_file_out {
    FILE *fp;              /* write here, then fclose it and call rlx_file_out_finish */
    char *tmp;             /* the temporary file; NULL when writing in place */
    char *resolved;        /* the file a symbolic link names, or NULL */
    const char *target;    /* what tmp is renamed to */
} rlx_file_out;

/* Opens o->fp for path. A new path or a regular file is written to a
 * temporary next to it (same directory, so same file system) with the old
 * file's permissions; a symbolic link to a regular file replaces the file it
 * names (the link stays); anything else (a device such as /dev/full, a FIFO,
 * a link to one) is written in place. RLX_STATUS_IO "WHO: cannot create
 * 'PATH': why" when it cannot be opened. */
rlx_status rlx_file_out_open(rlx_file_out *o, const char *path, const char *who);

/* After the caller closed o->fp: st is how the writing went. On RLX_OK the
 * temporary is renamed over the target (a failing rename is RLX_STATUS_IO
 * "WHO: writing 'PATH' failed: why"); otherwise it is removed, so the old
 * file is left as it was. Frees what open allocated; returns the status. */
rlx_status rlx_file_out_finish(rlx_file_out *o, rlx_status st, const char *path, const char *who);

#endif
