/*
 * specialize.c — binds symbolic dims to values: every dim is evaluated, then
 * every shape rule runs again on static shapes so that checks accepted
 * provisionally at build time (a symbol against a size) are decided exactly.
 */
#include "passes/passes.h"

rlx_status pass_specialize(const ir_graph *src, const int64_t *sym_values, ir_graph *dst) {
    rlx_status st = ir_graph_clone(src, dst);
    if (st != RLX_OK) return st;
    for (int32_t i = 0; i < dst->n_nodes; i++) {
        ir_shape *s = &dst->nodes[i].shape;
        for (int d = 0; d < s->rank; d++) {
            int64_t v = 0;
            bool fits = ir_dim_eval_checked(s->d[d], sym_values, &v);
            if (!fits || v < 0) {
                char lbl[128];
                ir_graph_clear(dst);
                if (!fits)
                    return rlx_fail(RLX_STATUS_SHAPE, "%s: dim %d overflows int64 for this binding",
                                    ir_node_label(src, i, lbl, sizeof lbl), d);
                return rlx_fail(RLX_STATUS_SHAPE, "%s: dim %d evaluates to %lld for this binding",
                                ir_node_label(src, i, lbl, sizeof lbl), d, (long long)v);
            }
            s->d[d] = ir_dim_const(v);
        }
    }
    st = ir_graph_infer_shapes(dst);
    if (st != RLX_OK) ir_graph_clear(dst);
    return st;
}
