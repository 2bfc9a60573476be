/*
 * rearrange_geom.h — flip, depth_to_space and space_to_depth as one strided
 * copy: an index space over the output (dense, row-major) with a source
 * element stride per dim (negative for a flipped axis) and a source offset.
 * The CPU kernel (cpu/kernels/rearrange.c) and the Vulkan lowering (move.comp)
 * both walk this plan, so the two cannot disagree on the layout.
 *
 * depth_to_space on [N, C, H, W] with block b, C' = C / b^2, out [N, C', H b, W b]:
 *   DCR: out[n, c, h b + i, w b + j] = x[n, (i b + j) C' + c, h, w]
 *   CRD: out[n, c, h b + i, w b + j] = x[n, c b^2 + i b + j, h, w]
 * space_to_depth is each mode's inverse (DCR is ONNX's SpaceToDepth).
 */
#ifndef RLX_IR_REARRANGE_GEOM_H
#define RLX_IR_REARRANGE_GEOM_H

#include "ir/ir.h"

typedef struct ir_rearrange {
    int     rank;
    int64_t dims[IR_MAX_RANK];     /* the output viewed with these dims (row-major) */
    int64_t stride[IR_MAX_RANK];   /* source element stride of each */
    int64_t offset;                /* source element of output element 0 */
} ir_rearrange;

enum { IR_DS_DCR = 0, IR_DS_CRD = 1 };

/* The plan of node n (FLIP, DEPTH_TO_SPACE or SPACE_TO_DEPTH) on x's static dims. */
static inline void ir_rearrange_plan(const ir_node *n, int rank, const int64_t *xd, ir_rearrange *p) {
    int64_t xs[IR_MAX_RANK], s = 1;
    for (int i = rank - 1; i >= 0; i--) xs[i] = s, s *= xd[i];
    p->offset = 0;
    if (n->op == IR_OP_FLIP) {
        int64_t axes = ir_attr_flip_axes(n);
        p->rank = rank;
        for (int i = 0; i < rank; i++) {
            bool f = (axes >> i) & 1;
            p->dims[i] = xd[i];
            p->stride[i] = f ? -xs[i] : xs[i];
            if (f && xd[i] > 0) p->offset += (xd[i] - 1) * xs[i];
        }
        return;
    }
    int64_t b = ir_attr_depth_space_blocksize(n), N = xd[0], C = xd[1], H = xd[2], W = xd[3];
    bool crd = ir_attr_depth_space_mode(n) == IR_DS_CRD;
    p->rank = 6;
    if (n->op == IR_OP_DEPTH_TO_SPACE) {
        int64_t Cp = C / (b * b), d[6] = {N, Cp, H, b, W, b};
        /* the source dims c, i, j within C */
        int64_t sc = crd ? b * b * H * W : H * W, si = crd ? b * H * W : b * Cp * H * W, sj = crd ? H * W : Cp * H * W;
        int64_t st[6] = {C * H * W, sc, W, si, 1, sj};
        for (int i = 0; i < 6; i++) p->dims[i] = d[i], p->stride[i] = st[i];
        return;
    }
    /* space_to_depth: x [N, C, H' b, W' b] read at (n, c, h b + i, w b + j) */
    int64_t Hp = H / b, Wp = W / b, sN = C * H * W, sc = H * W, sh = b * W, si = W, sw = b, sj = 1;
    if (crd) {   /* out [N, C, b, b, H', W'] */
        int64_t d[6] = {N, C, b, b, Hp, Wp}, st[6] = {sN, sc, si, sj, sh, sw};
        for (int i = 0; i < 6; i++) p->dims[i] = d[i], p->stride[i] = st[i];
    } else {     /* out [N, b, b, C, H', W'] */
        int64_t d[6] = {N, b, b, C, Hp, Wp}, st[6] = {sN, si, sj, sc, sh, sw};
        for (int i = 0; i < 6; i++) p->dims[i] = d[i], p->stride[i] = st[i];
    }
}

#endif
