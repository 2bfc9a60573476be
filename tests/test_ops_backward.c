/*
 * test_ops_backward.c — the ops that exist for backward passes, as ops in
 * their own right: gelu_grad, gelu_tanh_grad, scatter_add_rows and scatter_add against the
 * float64 reference on random shapes (repeated indices included), their
 * errors, and their Vulkan kernels against the CPU.
 */
#include "ops_common.h"
#include "vk_parity.h"

#include <math.h>
#include <string.h>

TEST(ops_gelu_grad) {
    for (int c = 0; c < 6; c++) {
        ref_shape sa, sb, so;
        ops_rand_bcast_pair(&sa, &sb);
        CHECK(ref_broadcast(&sa, &sb, &so));
        int64_t na = ref_numel(&sa), nb = ref_numel(&sb), no = ref_numel(&so);
        float *x = ops_rand_f32(na, -6, 6), *dy = ops_rand_f32(nb, -2, 2);
        double *want = ops_f64(no);
        for (int64_t i = 0; i < no; i++) {
            int64_t idx[RLX_MAX_RANK];
            ref_unravel(&so, i, idx);
            double xv = x[ref_bcast_offset(&sa, &so, idx)], dv = dy[ref_bcast_offset(&sb, &so, idx)];
            want[i] = c % 2 ? ref_gelu_tanh_grad(xv, dv) : ref_gelu_grad(xv, dv);
        }
        rlx_graph *g = ops_graph();
        rlx_node (*fn)(rlx_graph *, rlx_node, rlx_node) = c % 2 ? rlx_gelu_tanh_grad : rlx_gelu_grad;
        CHECK_OK(rlx_output(g, "y", fn(g, ops_input(g, "x", RLX_F32, sa), ops_input(g, "dy", RLX_F32, sb))));
        rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sa, x), ops_tensor("dy", RLX_F32, sb, dy)};
        float *got = ops_f32(no);
        rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 2, &out, 1));
            CHECK_CLOSE(c % 2 ? "gelu_tanh_grad" : "gelu_grad", got, want, no, 1e-6);
        }
        if (c == 0) {   /* ints are refused at build time */
            rlx_graph *h = ops_graph();
            int64_t d[1] = {3};
            rlx_node i0 = rlx_input(h, "a", RLX_I32, 1, d), i1 = rlx_input(h, "b", RLX_I32, 1, d);
            CHECK(rlx_gelu_grad(h, i0, i1) == RLX_NO_NODE);
            CHECK(rlx_graph_status(h) != RLX_OK);
        }
    }
    ops_free_all();
}

/* A scatter_add_rows graph: base [V, rest..] input, ids [n], rows input. */
static rlx_graph *rows_graph(ref_shape sb, ref_shape si, ref_shape sr, rlx_dtype dt) {
    rlx_graph *g = ops_graph();
    rlx_node y = rlx_scatter_add_rows(g, ops_input(g, "base", dt, sb), ops_input(g, "ids", RLX_I32, si),
                                      ops_input(g, "rows", dt, sr));
    rlx_output(g, "y", y);
    return g;
}

TEST(ops_scatter_add_rows) {
    for (int c = 0; c < 8; c++) {
        int64_t V = test_rand_int(1, 9), n = test_rand_int(1, 20);
        ref_shape sb = ops_rand_shape((int)test_rand_int(1, 3), 600);
        sb.d[0] = V;
        ref_shape si = {.rank = 1, .d = {n}}, sr = sb;
        sr.d[0] = n;
        int64_t nb = ref_numel(&sb), nr = ref_numel(&sr);
        float *base = ops_rand_f32(nb, -1, 1), *rows = ops_rand_f32(nr, -1, 1);
        int32_t *ids = ops_alloc((size_t)n * 4);
        int64_t *ids64 = ops_alloc((size_t)n * 8);
        for (int64_t i = 0; i < n; i++) ids[i] = (int32_t)(ids64[i] = test_rand_int(0, V - 1));   /* repeats */
        double *want = ops_f64(nb);
        ref_scatter_add_rows(ops_f32_to_f64(base, nb), sb, ids64, n, ops_f32_to_f64(rows, nr), want);
        rlx_graph *g = rows_graph(sb, si, sr, RLX_F32);
        CHECK_OK(rlx_graph_status(g));
        rlx_tensor in[3] = {ops_tensor("base", RLX_F32, sb, base), ops_tensor("ids", RLX_I32, si, ids),
                            ops_tensor("rows", RLX_F32, sr, rows)};
        float *got = ops_f32(nb);
        rlx_tensor out = ops_tensor("y", RLX_F32, sb, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 3, &out, 1));
            CHECK_CLOSE("scatter_add_rows", got, want, nb, 1e-6);
        }
        if (c == 0) {   /* an id out of range fails the run, naming the node */
            ids[0] = (int32_t)V;
            rlx_exec *e;
            CHECK_OK(rlx_compile(g, NULL, &e));
            CHECK_STATUS(rlx_exec_run(e, in, 3), RLX_STATUS_INVALID_ARGUMENT);
            CHECK_MSG(strstr(rlx_last_error(), "scatter_add_rows"), "%s", rlx_last_error());
            rlx_exec_free(e);
            ids[0] = 0;
        }
    }
    /* rows that do not fit base: a build-time SHAPE error */
    int64_t db[2] = {4, 3}, di[1] = {2}, dr[2] = {2, 4};
    rlx_graph *h = ops_graph();
    rlx_node y = rlx_scatter_add_rows(h, rlx_input(h, "b", RLX_F32, 2, db), rlx_input(h, "i", RLX_I32, 1, di),
                                      rlx_input(h, "r", RLX_F32, 2, dr));
    CHECK(y == RLX_NO_NODE && rlx_graph_status(h) == RLX_STATUS_SHAPE);
    ops_free_all();
}

TEST(ops_scatter_add) {
    for (int c = 0; c < 8; c++) {
        int rank = (int)test_rand_int(1, 3);
        ref_shape sb = ops_rand_shape(rank, 500);
        int axis = (int)test_rand_int(0, rank - 1);
        ref_shape si = sb;
        for (int i = 0; i < rank; i++) si.d[i] = i == axis ? test_rand_int(1, 6) : test_rand_int(1, sb.d[i]);
        int64_t nb = ref_numel(&sb), ni = ref_numel(&si);
        float *base = ops_rand_f32(nb, -1, 1), *src = ops_rand_f32(ni, -1, 1);
        int32_t *idx = ops_alloc((size_t)ni * 4);
        int64_t *idx64 = ops_alloc((size_t)ni * 8);
        for (int64_t i = 0; i < ni; i++) idx[i] = (int32_t)(idx64[i] = test_rand_int(0, sb.d[axis] - 1));
        double *want = ops_f64(nb);
        ref_scatter_add(ops_f32_to_f64(base, nb), sb, idx64, si, ops_f32_to_f64(src, ni), axis, want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_scatter_add(g, ops_input(g, "b", RLX_F32, sb), ops_input(g, "i", RLX_I32, si),
                                                    ops_input(g, "s", RLX_F32, si), axis)));
        rlx_tensor in[3] = {ops_tensor("b", RLX_F32, sb, base), ops_tensor("i", RLX_I32, si, idx),
                            ops_tensor("s", RLX_F32, si, src)};
        float *got = ops_f32(nb);
        rlx_tensor out = ops_tensor("y", RLX_F32, sb, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 3, &out, 1));
            CHECK_CLOSE("scatter_add", got, want, nb, 1e-6);
        }
        if (c == 0) {
            idx[ni - 1] = -1;
            rlx_exec *e;
            CHECK_OK(rlx_compile(g, NULL, &e));
            CHECK_STATUS(rlx_exec_run(e, in, 3), RLX_STATUS_INVALID_ARGUMENT);
            rlx_exec_free(e);
            idx[ni - 1] = 0;
        }
    }
    ops_free_all();
}

/* Vulkan: the same ops against the CPU, f32 and f16, ids with repeats; an id out of range fails the run. */
TEST(vk_ops_backward) {
    VKP_REQUIRE();
    for (int c = 0; c < 3; c++) {
        rlx_dtype dt = c == 2 ? RLX_F16 : RLX_F32;
        int64_t V = 7, n = 13, W = c == 1 ? 1 : 37;
        ref_shape sb = {.rank = 2, .d = {V, W}}, si = {.rank = 1, .d = {n}}, sr = {.rank = 2, .d = {n, W}};
        size_t es = rlx_dtype_size(dt);
        void *base = ops_alloc((size_t)(V * W) * es), *rows = ops_alloc((size_t)(n * W) * es);
        for (int64_t i = 0; i < V * W; i++) ref_store(base, dt, i, test_rand_uniform(-1, 1));
        for (int64_t i = 0; i < n * W; i++) ref_store(rows, dt, i, test_rand_uniform(-1, 1));
        int32_t ids[13];
        for (int i = 0; i < 13; i++) ids[i] = (int32_t)test_rand_int(0, V - 1);
        rlx_graph *g = rows_graph(sb, si, sr, dt);
        rlx_tensor in[3] = {ops_tensor("base", dt, sb, base), ops_tensor("ids", RLX_I32, si, ids),
                            ops_tensor("rows", dt, sr, rows)};
        CHECK(vkp_compare(g, in, 3, 1e-6, true));
        if (c == 0) {
            ids[3] = 99;
            rlx_exec *e = vkp_compile(g, true);
            CHECK(e);
            rlx_status st = rlx_exec_run(e, in, 3);
            rlx_exec_free(e);
            CHECK_MSG(st == RLX_STATUS_INVALID_ARGUMENT, "bad id on Vulkan: %s", rlx_status_name(st));
        }
    }
    for (int c = 0; c < 4; c++) {   /* scatter_add on every axis of a rank-3 base */
        int axis = c % 3;
        ref_shape sb = {.rank = 3, .d = {4, 5, 6}}, si = {.rank = 3, .d = {3, 4, 5}};
        si.d[axis] = 7;
        int64_t nb = ref_numel(&sb), ni = ref_numel(&si);
        float *base = ops_rand_f32(nb, -1, 1), *src = ops_rand_f32(ni, -1, 1);
        int32_t *idx = ops_alloc((size_t)ni * 4);
        for (int64_t i = 0; i < ni; i++) idx[i] = (int32_t)test_rand_int(0, sb.d[axis] - 1);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_scatter_add(g, ops_input(g, "b", RLX_F32, sb), ops_input(g, "i", RLX_I32, si),
                                                    ops_input(g, "s", RLX_F32, si), axis)));
        rlx_tensor in[3] = {ops_tensor("b", RLX_F32, sb, base), ops_tensor("i", RLX_I32, si, idx),
                            ops_tensor("s", RLX_F32, si, src)};
        CHECK(vkp_compare(g, in, 3, 1e-6, true));
    }
    for (int c = 0; c < 2; c++) {   /* gelu_grad, broadcast */
        ref_shape sa = {.rank = 2, .d = {33, 17}}, sd = {.rank = 1, .d = {17}};
        if (c) sd = sa;
        float *x = ops_rand_f32(ref_numel(&sa), -6, 6), *dy = ops_rand_f32(ref_numel(&sd), -2, 2);
        rlx_graph *g = ops_graph();
        rlx_node (*fn)(rlx_graph *, rlx_node, rlx_node) = c ? rlx_gelu_tanh_grad : rlx_gelu_grad;
        CHECK_OK(rlx_output(g, "y", fn(g, ops_input(g, "x", RLX_F32, sa), ops_input(g, "dy", RLX_F32, sd))));
        rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sa, x), ops_tensor("dy", RLX_F32, sd, dy)};
        CHECK(vkp_compare(g, in, 2, 1e-5, true));
    }
    ops_free_all();
}
