/*
 * vk_weight_layout.c — the device layout of Q8_0 and Q6_K rows ("planar").
 *
 * Why: GGUF's Q8_0 blocks are 34 bytes and Q6_K's 210, so every other block
 * starts 2 bytes off a 4-byte boundary, and a shader lane reading 8 quant
 * bytes there needs three 32-bit loads and a funnel shift instead of one
 * 8-byte load. On the device each row of K elements instead holds each block
 * field for all of the row's blocks together, the largest field first:
 *   Q8_0: [qs: K bytes][d: K/32 f16]
 *   Q6_K: [ql: K/2][qh: K/4][scales: K/16][d: K/256 f16]
 * The row's size and stride are unchanged (row views and the gather of rows
 * address rows as before), and every field of a block sits at a multiple of
 * its own size from the row's start. The shaders compute the same offsets
 * (shaders/planar.glsl pl_field); this file converts on the way in (params and
 * constants) and out (host steps, outputs).
 */
#include "vulkan/vk_weight_layout.h"
#include "core/core.h"
#include <stdlib.h>
#include <string.h>

typedef struct field { uint16_t off, size; } field;
typedef struct planar_type { int n; field f[4]; } planar_type;   /* a block's bytes: the fields' sizes summed */

/* Fields in their planar order. */
static const planar_type Q8_0_PLANAR = {2, {{2, 32}, {0, 2}}};
static const planar_type Q6_K_PLANAR = {4, {{0, 128}, {128, 64}, {192, 16}, {208, 2}}};

static const planar_type *planar_of(rlx_dtype dt) {
    return dt == RLX_Q8_0 ? &Q8_0_PLANAR : dt == RLX_Q6_K ? &Q6_K_PLANAR : NULL;
}

bool vk_layout_is_planar(rlx_dtype dt) { return planar_of(dt) != NULL; }

size_t vk_layout_row_bytes(rlx_dtype dt, int64_t row_elems) {
    return planar_of(dt) ? rlx_tensor_bytes(dt, 1, &row_elems) : 0;
}

/* n bytes, n one of the field sizes: a constant size per case, so the copy
 * is a few moves instead of a memcpy call per field of every block (Q8_0
 * rows: ~5 GB/s with calls, ~10 this way, the upload's plain memcpy ~16; this VM). */
static inline void copy_field(uint8_t *dst, const uint8_t *src, size_t n) {
    switch (n) {
    case 2: memcpy(dst, src, 2); break;
    case 16: memcpy(dst, src, 16); break;
    case 32: memcpy(dst, src, 32); break;
    case 64: memcpy(dst, src, 64); break;
    case 128: memcpy(dst, src, 128); break;
    default: memcpy(dst, src, n); break;
    }
}

static size_t block_bytes(const planar_type *t) {
    size_t n = 0;
    for (int i = 0; i < t->n; i++) n += t->f[i].size;
    return n;
}

/* One row of rb bytes either way: planar field bytes at pl, blocks at bl. */
static void convert_row(const planar_type *t, size_t rb, uint8_t *bl, uint8_t *pl, bool to_planar) {
    size_t bb = block_bytes(t), nb = rb / bb, at = 0;
    for (int i = 0; i < t->n; i++) {
        const field f = t->f[i];
        for (size_t b = 0; b < nb; b++) {
            uint8_t *blk = bl + b * bb + f.off, *pln = pl + at + b * f.size;
            if (to_planar) copy_field(pln, blk, f.size);
            else copy_field(blk, pln, f.size);
        }
        at += nb * f.size;
    }
}

void vk_layout_to_planar(rlx_dtype dt, int64_t row_elems, const void *blocks, void *planar, size_t bytes) {
    const planar_type *t = planar_of(dt);
    size_t rb = vk_layout_row_bytes(dt, row_elems);
    if (!t || rb == 0) return;
    for (size_t r = 0; r + rb <= bytes; r += rb)
        convert_row(t, rb, (uint8_t *)blocks + r, (uint8_t *)planar + r, true);   /* blocks are only read */
}

rlx_status vk_layout_from_planar_in_place(rlx_dtype dt, int64_t row_elems, void *data, size_t bytes) {
    const planar_type *t = planar_of(dt);
    size_t rb = vk_layout_row_bytes(dt, row_elems);
    if (!t || rb == 0 || bytes < rb) return RLX_OK;
    uint8_t *tmp = rlx_fault("vk_layout_tmp") ? NULL : malloc(rb);
    if (!tmp) return rlx_fail(RLX_STATUS_OUT_OF_MEMORY, "vulkan: out of memory converting %s rows", rlx_dtype_name(dt));
    for (size_t r = 0; r + rb <= bytes; r += rb) {
        memcpy(tmp, (uint8_t *)data + r, rb);
        convert_row(t, rb, (uint8_t *)data + r, tmp, false);
    }
    free(tmp);
    return RLX_OK;
}
