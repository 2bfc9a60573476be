/*
 * file_map.h — a whole regular file mapped read-only, for the model readers
 * (GGUF, safetensors) that borrow tensor data from the mapping instead of
 * copying it.
 */
#ifndef RLX_CORE_FILE_MAP_H
#define RLX_CORE_FILE_MAP_H

#include "core/core.h"

typedef struct rlx_file_map {
    const uint8_t *data;   /* size bytes; a valid empty buffer for an empty file */
    uint64_t size;
    void *map;             /* what munmap takes; NULL for an empty file */
    size_t map_size;
} rlx_file_map;

/* Maps path. RLX_STATUS_IO "WHO: cannot open / map 'PATH': why" when it
 * cannot be opened or mapped, or is not a regular file. */
rlx_status rlx_file_map_open(rlx_file_map *m, const char *path, const char *who);
void       rlx_file_map_close(rlx_file_map *m);

#endif
