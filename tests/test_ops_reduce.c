/*
 * test_ops_reduce.c — reductions (sum/mean/max/min/prod over axis masks, with
 * and without keepdim, mask 0 = all axes), argmax/argmin (first index on ties,
 * negative axes), softmax/log_softmax on any axis, and cumsum, against the
 * float64 reference under every test configuration.
 */
#include "ops_common.h"
#include <math.h>
#include <string.h>

typedef rlx_node (*red_fn)(rlx_graph *, rlx_node, uint32_t, int);

static const struct { const char *name; red_fn fn; ref_redop op; double lo, hi; } redops[] = {
    {"reduce_sum",  rlx_reduce_sum,  REF_RSUM,  -1, 1},
    {"reduce_mean", rlx_reduce_mean, REF_RMEAN, -1, 1},
    {"reduce_max",  rlx_reduce_max,  REF_RMAX,  -1, 1},
    {"reduce_min",  rlx_reduce_min,  REF_RMIN,  -1, 1},
    {"reduce_prod", rlx_reduce_prod, REF_RPROD, 0.8, 1.25},
};

TEST(ops_reduce) {
    for (size_t op = 0; op < sizeof redops / sizeof redops[0]; op++) {
        for (int c = 0; c < 6; c++) {
            int rank = (int)test_rand_int(1, 4);
            ref_shape sx = ops_rand_shape(rank, redops[op].op == REF_RPROD ? 300 : 3000);
            uint32_t mask = (uint32_t)test_rand_int(0, (1 << rank) - 1);
            if (c == 0) mask = 0;                      /* all axes */
            if (c == 1) mask = 1u << (rank - 1);       /* last axis */
            if (c == 2) mask = 1u;                     /* first axis */
            int keepdim = (int)test_rand_int(0, 1);
            ref_shape so = ref_reduce_shape(sx, mask, keepdim);
            int64_t n = ref_numel(&sx), no = ref_numel(&so);
            float *x = ops_rand_f32(n, redops[op].lo, redops[op].hi);
            double *want = ops_f64(no);
            ref_reduce(redops[op].op, ops_f32_to_f64(x, n), sx, mask, want);

            rlx_graph *g = ops_graph();
            CHECK_OK(rlx_output(g, "y", redops[op].fn(g, ops_input(g, "x", RLX_F32, sx), mask, keepdim)));
            rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
            float *got = ops_f32(no);
            rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                CHECK(ops_run(g, cfg, &in, 1, &out, 1));
                CHECK_CLOSE(redops[op].name, got, want, no, 1e-5);
            }
        }
        ops_free_all();
    }
}

/* A long reduction: f32 accumulation must stay accurate (pairwise/blocked sums). */
TEST(ops_reduce_sum_long) {
    int64_t d[2] = {3, 20000};
    ref_shape sx = ref_shape_make(2, d);
    int64_t n = ref_numel(&sx);
    float *x = ops_rand_f32(n, 0, 1);   /* all positive: no cancellation */
    ref_shape so = ref_reduce_shape(sx, 2, 0);
    double want[3];
    ref_reduce(REF_RSUM, ops_f32_to_f64(x, n), sx, 2, want);
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_reduce_sum(g, ops_input(g, "x", RLX_F32, sx), 2, 0)));
    rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
    float got[3];
    rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, &in, 1, &out, 1));
        CHECK_CLOSE("reduce_sum 20000", got, want, 3, 1e-5);
    }
    ops_free_all();
}

TEST(ops_argmax_argmin) {
    for (int c = 0; c < 8; c++) {
        int rank = (int)test_rand_int(1, 4);
        ref_shape sx = ops_rand_shape(rank, 3000);
        int axis = (int)test_rand_int(-rank, rank - 1);
        int ax = axis < 0 ? axis + rank : axis;
        int keepdim = (int)test_rand_int(0, 1);
        int64_t n = ref_numel(&sx);
        float *x = ops_alloc((size_t)n * 4);
        /* small integers: many ties, which must resolve to the first index */
        for (int64_t i = 0; i < n; i++) x[i] = (float)test_rand_int(-3, 3);
        if (c % 2) test_fill_uniform_f32(x, n, -1, 1);
        ref_shape so = ref_reduce_shape(sx, 1u << ax, keepdim);
        int64_t no = ref_numel(&so);
        int32_t *wmax = ops_alloc((size_t)no * 4), *wmin = ops_alloc((size_t)no * 4);
        int32_t *gmax = ops_alloc((size_t)no * 4), *gmin = ops_alloc((size_t)no * 4);
        double *dx = ops_f32_to_f64(x, n);
        ref_argreduce(1, dx, sx, ax, wmax);
        ref_argreduce(0, dx, sx, ax, wmin);
        rlx_graph *g = ops_graph();
        rlx_node xi = ops_input(g, "x", RLX_F32, sx);
        CHECK_OK(rlx_output(g, "amax", rlx_argmax(g, xi, axis, keepdim)));
        CHECK_OK(rlx_output(g, "amin", rlx_argmin(g, xi, axis, keepdim)));
        rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
        rlx_tensor out[2] = {ops_tensor("amax", RLX_I32, so, gmax), ops_tensor("amin", RLX_I32, so, gmin)};
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, &in, 1, out, 2));
            for (int64_t i = 0; i < no; i++)
                CHECK_MSG(gmax[i] == wmax[i] && gmin[i] == wmin[i],
                          "axis %d [%lld]: argmax %d (want %d) argmin %d (want %d) (config %s)", axis,
                          (long long)i, gmax[i], wmax[i], gmin[i], wmin[i], ops_config_name(cfg));
        }
    }
    ops_free_all();
}

TEST(ops_softmax_log_softmax) {
    for (int c = 0; c < 8; c++) {
        int rank = (int)test_rand_int(1, 4);
        ref_shape sx = ops_rand_shape(rank, 3000);
        int axis = c == 0 ? rank - 1 : (int)test_rand_int(0, rank - 1);
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -10, 10);
        if (c == 1) for (int64_t i = 0; i < n; i++) x[i] += 80.0f;   /* overflows without max-subtraction */
        double *dx = ops_f32_to_f64(x, n), *ws = ops_f64(n), *wl = ops_f64(n);
        ref_softmax(dx, sx, axis, 0, ws);
        ref_softmax(dx, sx, axis, 1, wl);
        rlx_graph *g = ops_graph();
        rlx_node xi = ops_input(g, "x", RLX_F32, sx);
        int api_axis = c == 2 ? axis - rank : axis;   /* one case with a negative axis */
        CHECK_OK(rlx_output(g, "s", rlx_softmax(g, xi, api_axis)));
        CHECK_OK(rlx_output(g, "l", rlx_log_softmax(g, xi, api_axis)));
        rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
        float *gs = ops_f32(n), *gl = ops_f32(n);
        rlx_tensor out[2] = {ops_tensor("s", RLX_F32, sx, gs), ops_tensor("l", RLX_F32, sx, gl)};
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, &in, 1, out, 2));
            CHECK_CLOSE("softmax", gs, ws, n, 1e-5);
            CHECK_CLOSE("log_softmax", gl, wl, n, 1e-5);
        }
    }
    ops_free_all();
}

TEST(ops_cumsum) {
    for (int c = 0; c < 6; c++) {
        int rank = (int)test_rand_int(1, 4);
        ref_shape sx = ops_rand_shape(rank, 3000);
        int axis = (int)test_rand_int(0, rank - 1);
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -1, 1);
        double *want = ops_f64(n);
        ref_cumsum(ops_f32_to_f64(x, n), sx, axis, want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_cumsum(g, ops_input(g, "x", RLX_F32, sx), axis)));
        rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
        float *got = ops_f32(n);
        rlx_tensor out = ops_tensor("y", RLX_F32, sx, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, &in, 1, &out, 1));
            CHECK_CLOSE("cumsum", got, want, n, 1e-5);
        }
    }
    ops_free_all();
}
