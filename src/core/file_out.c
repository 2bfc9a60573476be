/*
 * file_out.c — the temporary-file-and-rename write of file_out.h.
 *
 * Renaming over the target means a failed write leaves the old file as it
 * was, nobody sees half a file, and a writer whose tensors borrow memory
 * mapped from that same file keeps valid data (the old file lives until
 * unmapped).
 */
#include "core/file_out.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

rlx_status rlx_file_out_open(rlx_file_out *o, const char *path, const char *who) {
    memset(o, 0, sizeof *o);
    struct stat old;
    bool exists = lstat(path, &old) == 0;
    o->resolved = exists && S_ISLNK(old.st_mode) ? realpath(path, NULL) : NULL;
    o->target = path;
    if (o->resolved && stat(o->resolved, &old) == 0 && S_ISREG(old.st_mode)) o->target = o->resolved;
    bool replace = !exists || S_ISREG(old.st_mode);
    if (replace) {
        size_t tlen = strlen(o->target) + 48;
        if (!(o->tmp = malloc(tlen))) {
            free(o->resolved);
            return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "%s: out of memory", who);
        }
        static unsigned counter;   /* distinct names for concurrent writers of one process */
        snprintf(o->tmp, tlen, "%s.tmp.%ld.%u", o->target, (long)getpid(),
                 __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0 && exists && fchmod(fd, old.st_mode & 07777) != 0) { close(fd); unlink(o->tmp); fd = -1; }
        if (fd >= 0 && !(o->fp = fdopen(fd, "wb"))) { close(fd); unlink(o->tmp); }
    } else {
        o->fp = fopen(path, "wb");
    }
    if (!o->fp) {
        int e = errno;
        free(o->tmp);
        free(o->resolved);
        memset(o, 0, sizeof *o);
        return rlx_fail(RLX_STATUS_IO, "%s: cannot create '%s': %s", who, path, strerror(e));
    }
    return RLX_OK;
}

rlx_status rlx_file_out_finish(rlx_file_out *o, rlx_status st, const char *path, const char *who) {
    if (!st && o->tmp && rename(o->tmp, o->target) != 0) {
        int e = errno;
        st = rlx_fail(RLX_STATUS_IO, "%s: writing '%s' failed: %s", who, path, strerror(e));
    }
    if (st && o->tmp) unlink(o->tmp);
    free(o->tmp);
    free(o->resolved);
    memset(o, 0, sizeof *o);
    return st;
}
