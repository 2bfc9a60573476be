/*
 * vk_lower_util.c — small helpers shared by the op lowerings: appending a
 * dispatch, laying out large 1-D grids, collapsing broadcast shapes so their
 * strides fit in push constants.
 */
#include "vulkan/vk_lower.h"
#include "vulkan/vk_weight_layout.h"
#include <string.h>

vk_dispatch *vk_emit(vk_lower_ctx *c, const char *shader, const void *push, uint32_t push_bytes) {
    if (c->n_d == VK_MAX_DISPATCHES) {
        rlx_fail(RLX_STATUS_INTERNAL, "vulkan lowering: more than %d dispatches for one node", VK_MAX_DISPATCHES);
        return NULL;
    }
    if (push_bytes > VK_MAX_PUSH) {
        rlx_fail(RLX_STATUS_INTERNAL, "vulkan lowering: %u push-constant bytes for %s exceed %d", push_bytes, shader,
                 VK_MAX_PUSH);
        return NULL;
    }
    vk_dispatch *d = &c->d[c->n_d++];
    memset(d, 0, sizeof *d);
    d->shader = shader;
    if (push_bytes) memcpy(d->push, push, push_bytes);
    d->push_bytes = push_bytes;
    d->groups[0] = d->groups[1] = d->groups[2] = 1;
    return d;
}

void vk_grid_1d(const vk_caps *caps, uint64_t n, uint32_t local, uint32_t groups[3]) {
    uint64_t wg = (n + local - 1) / local;
    uint64_t max_x = caps->max_workgroup_count[0] ? caps->max_workgroup_count[0] : 65535;
    if (wg == 0) wg = 1;
    if (wg <= max_x) {
        groups[0] = (uint32_t)wg;
        groups[1] = 1;
    } else {
        groups[0] = (uint32_t)max_x;
        groups[1] = (uint32_t)((wg + max_x - 1) / max_x);
    }
    groups[2] = 1;
}

int vk_collapse_broadcast(const vk_tensor *out, const vk_tensor *const *ins, int n_ins, int max_rank, int64_t *dims,
                          int64_t strides[][IR_MAX_RANK]) {
    int rank = out->rank;
    int64_t st[4][IR_MAX_RANK];
    /* element strides of each operand right-aligned to out, 0 where broadcast */
    for (int k = 0; k < n_ins; k++) {
        const vk_tensor *t = ins[k];
        int64_t s = 1;
        for (int i = rank - 1; i >= 0; i--) {
            int ti = t->rank - rank + i;
            int64_t d = ti >= 0 ? t->dims[ti] : 1;
            st[k][i] = (d == 1 && out->dims[i] != 1) ? 0 : s;
            s *= d;
        }
    }
    /* merge dim i into i+1 (inner) when every operand is contiguous across them */
    int64_t cd[IR_MAX_RANK], cs[4][IR_MAX_RANK];
    int r = 0;
    for (int i = 0; i < rank; i++) {
        if (out->dims[i] == 1) continue;   /* size-1 dims carry nothing */
        bool merge = r > 0;
        for (int k = 0; k < n_ins && merge; k++)
            if (cs[k][r - 1] != st[k][i] * out->dims[i]) merge = false;
        if (merge) {
            cd[r - 1] *= out->dims[i];
            for (int k = 0; k < n_ins; k++) cs[k][r - 1] = st[k][i];
        } else {
            cd[r] = out->dims[i];
            for (int k = 0; k < n_ins; k++) cs[k][r] = st[k][i];
            r++;
        }
    }
    if (r == 0) {   /* a scalar or all-ones shape */
        cd[0] = 1;
        for (int k = 0; k < n_ins; k++) cs[k][0] = 0;
        r = 1;
    }
    if (r > max_rank) return -1;
    for (int i = 0; i < r; i++) {
        dims[i] = cd[i];
        for (int k = 0; k < n_ins; k++) strides[k][i] = cs[k][i];
    }
    return r;
}

uint32_t vk_dtype_code(rlx_dtype dt) { return (uint32_t)dt; }

uint32_t vk_block_bytes(rlx_dtype dt) {
    if (!rlx_dtype_is_quantized(dt)) return 0;
    int64_t be = dt >= RLX_Q2_K ? 256 : 32;
    return (uint32_t)rlx_tensor_bytes(dt, 1, &be);
}

bool vk_blocks_a4(rlx_dtype dt, uint64_t row_bytes, uint64_t addr) {
    if (!rlx_dtype_is_quantized(dt) || addr % 4) return false;
    return vk_layout_is_planar(dt) ? row_bytes % 4 == 0 : vk_block_bytes(dt) % 4 == 0;
}

uint32_t vk_max_groups(const vk_caps *caps, int axis) {
    uint32_t m = caps->max_workgroup_count[axis];
    return m ? m : 65535u;
}

const char *vk_node_label(const vk_lower_ctx *c, char *buf, size_t n) {
    return ir_node_label(c->g, (int32_t)(c->node - c->g->nodes), buf, n);
}

void vk_split_df(double v, float *hi, float *lo) {
    *hi = (float)v;
    *lo = (float)(v - (double)*hi);
}
