/*
 * file_map.c — mapping a file read-only (file_map.h). The descriptor is
 * closed at once: the mapping keeps the file.
 */
#include "core/file_map.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

rlx_status rlx_file_map_open(rlx_file_map *m, const char *path, const char *who) {
    static const uint8_t empty[1];
    memset(m, 0, sizeof *m);
    m->data = empty;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return rlx_fail(RLX_STATUS_IO, "%s: cannot open '%s': %s", who, path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return rlx_fail(RLX_STATUS_IO, "%s: '%s' is not a regular file", who, path);
    }
    if ((uint64_t)sb.st_size > SIZE_MAX) {
        close(fd);
        return rlx_fail(RLX_STATUS_IO, "%s: '%s' is too large to map", who, path);
    }
    if (sb.st_size > 0) {
        void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            close(fd);
            return rlx_fail(RLX_STATUS_IO, "%s: cannot map '%s': %s", who, path, strerror(e));
        }
        m->map = p;
        m->map_size = (size_t)sb.st_size;
        m->data = p;
        m->size = (uint64_t)sb.st_size;
    }
    close(fd);
    return RLX_OK;
}

void rlx_file_map_close(rlx_file_map *m) {
    if (m && m->map) munmap(m->map, m->map_size);
    if (m) memset(m, 0, sizeof *m);
}
