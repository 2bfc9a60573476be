/*
 * vk_weight_layout.h — how block-quantized rows are laid out in device
 * memory (vk_weight_layout.c has the why): Q8_0 and Q6_K rows are "planar"
 * (each block field of a row's blocks together), other types as in GGUF.
 */
#ifndef RLX_VK_WEIGHT_LAYOUT_H
#define RLX_VK_WEIGHT_LAYOUT_H

#include "rlx.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether dt's rows are planar on the device. */
bool   vk_layout_is_planar(rlx_dtype dt);
/* Bytes of one row of row_elems elements of a planar dtype (0 otherwise). */
size_t vk_layout_row_bytes(rlx_dtype dt, int64_t row_elems);
/* Converts the whole rows in `bytes` (a multiple of the row size; a partial
 * row at the end is left alone) from GGUF blocks to the planar layout, into
 * a buffer that does not overlap. A no-op for other dtypes. */
void   vk_layout_to_planar(rlx_dtype dt, int64_t row_elems, const void *blocks, void *planar, size_t bytes);
/* Back from planar to GGUF blocks, over one buffer (a row-sized temporary:
 * OUT_OF_MEMORY if none). */
rlx_status vk_layout_from_planar_in_place(rlx_dtype dt, int64_t row_elems, void *data, size_t bytes);

#endif
