/*
 * test_ops_movement.c — data movement ops against the float64 reference:
 * reshape (with an inferred dim), transpose (random permutations), narrow,
 * slice with steps, concat of 1..8 tensors, expand, gather_rows (i32/i64 ids),
 * gather (torch.gather), topk (values + indices, ties to the lower index),
 * and views feeding other ops; under every test configuration.
 */
#include "ops_common.h"
#include "vk_parity.h"
#include <string.h>

/* Runs a one-input one-output f32 graph and compares exactly (movement ops copy). */
static bool run_exact(rlx_graph *g, ref_shape sx, const float *x, ref_shape so, const double *want, const char *what) {
    int64_t no = ref_numel(&so);
    rlx_tensor in = ops_tensor("x", RLX_F32, sx, (void *)x);
    float *got = ops_f32(no);
    rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        if (!ops_run(g, cfg, &in, 1, &out, 1)) return false;
        for (int64_t i = 0; i < no; i++)
            if ((double)got[i] != want[i]) {
                harness_fail(__FILE__, __LINE__, "%s [%lld]: got %g want %g (config %s)", what, (long long)i,
                             (double)got[i], want[i], ops_config_name(cfg));
                return false;
            }
    }
    return true;
}

TEST(ops_reshape) {
    for (int c = 0; c < 5; c++) {
        ref_shape sx = ops_rand_shape((int)test_rand_int(1, 4), 2000);
        int64_t n = ref_numel(&sx);
        /* target: split n into a random factorization */
        int64_t dims[4], rest = n;
        int rank = 0;
        while (rank < 3 && rest > 1) {
            int64_t f = 1;
            for (int64_t t = 2; t <= rest && t < 40; t++) if (rest % t == 0 && test_rand_int(0, 2) == 0) { f = t; break; }
            if (f == 1) break;
            dims[rank++] = f;
            rest /= f;
        }
        dims[rank++] = rest;
        ref_shape so = ref_shape_make(rank, dims);
        int64_t api[4];
        memcpy(api, dims, sizeof api);
        if (c % 2) api[test_rand_int(0, rank - 1)] = RLX_DIM_INFER;
        float *x = ops_rand_f32(n, -1, 1);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_reshape(g, ops_input(g, "x", RLX_F32, sx), rank, api)));
        CHECK(run_exact(g, sx, x, so, ops_f32_to_f64(x, n), "reshape"));
    }
    ops_free_all();
}

/* A view (reshape) feeding a compute op and also being an output, next to its source. */
TEST(ops_reshape_view_consumers) {
    int64_t dx[3] = {2, 3, 8}, dr[2] = {6, 8};
    ref_shape sx = ref_shape_make(3, dx), sr = ref_shape_make(2, dr);
    int64_t n = 48;
    float *x = ops_rand_f32(n, -1, 1);
    double *dxx = ops_f32_to_f64(x, n), *wexp = ops_f64(n), *wsm = ops_f64(n);
    ref_unary(REF_EXP, dxx, n, wexp);
    ref_softmax(dxx, sr, 1, 0, wsm);
    rlx_graph *g = ops_graph();
    rlx_node xi = ops_input(g, "x", RLX_F32, sx);
    rlx_node e = rlx_exp(g, xi);
    rlx_node r = rlx_reshape(g, e, 2, dr);
    CHECK_OK(rlx_output(g, "e", e));
    CHECK_OK(rlx_output(g, "r", r));
    CHECK_OK(rlx_output(g, "s", rlx_softmax(g, rlx_reshape(g, xi, 2, dr), 1)));
    CHECK_OK(rlx_output(g, "x_again", rlx_reshape(g, xi, 2, dr)));
    rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
    float *ge = ops_f32(n), *gr = ops_f32(n), *gs = ops_f32(n), *gx = ops_f32(n);
    rlx_tensor out[4] = {ops_tensor("e", RLX_F32, sx, ge), ops_tensor("r", RLX_F32, sr, gr),
                         ops_tensor("s", RLX_F32, sr, gs), ops_tensor("x_again", RLX_F32, sr, gx)};
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, &in, 1, out, 4));
        CHECK_CLOSE("exp", ge, wexp, n, 1e-6);
        CHECK_CLOSE("reshape(exp)", gr, wexp, n, 1e-6);
        CHECK_CLOSE("softmax(reshape)", gs, wsm, n, 1e-5);
        CHECK_CLOSE("reshape(input)", gx, dxx, n, 0);
    }
    ops_free_all();
}

TEST(ops_transpose) {
    for (int c = 0; c < 8; c++) {
        int rank = (int)test_rand_int(1, 5);
        ref_shape sx = ops_rand_shape(rank, 3000);
        int perm[RLX_MAX_RANK];
        for (int i = 0; i < rank; i++) perm[i] = i;
        for (int i = rank - 1; i > 0; i--) {
            int j = (int)test_rand_int(0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -1, 1);
        double *want = ops_f64(n);
        ref_shape so = ref_transpose(ops_f32_to_f64(x, n), sx, perm, want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_transpose(g, ops_input(g, "x", RLX_F32, sx), perm)));
        CHECK(run_exact(g, sx, x, so, want, "transpose"));
    }
    ops_free_all();
}

TEST(ops_narrow_slice) {
    for (int c = 0; c < 10; c++) {
        int rank = (int)test_rand_int(1, 4);
        ref_shape sx = ops_rand_shape(rank, 3000);
        int axis = (int)test_rand_int(0, rank - 1);
        int64_t dim = sx.d[axis];
        int64_t start = test_rand_int(0, dim - 1), end = test_rand_int(start + 1, dim);
        int64_t step = c < 4 ? 1 : test_rand_int(1, 3);
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -1, 1);
        double *want = ops_f64(n);
        ref_shape so = ref_slice(ops_f32_to_f64(x, n), sx, axis, start, end, step, want);
        rlx_graph *g = ops_graph();
        rlx_node xi = ops_input(g, "x", RLX_F32, sx);
        rlx_node y = c % 2 == 0 && step == 1 ? rlx_narrow(g, xi, axis, start, end - start)
                                             : rlx_slice(g, xi, axis, start, end, step);
        CHECK_OK(rlx_output(g, "y", y));
        CHECK(run_exact(g, sx, x, so, want, step == 1 ? "narrow/slice" : "slice step"));
    }
    ops_free_all();
}

TEST(ops_concat) {
    for (int c = 0; c < 8; c++) {
        int rank = (int)test_rand_int(1, 4);
        ref_shape base = ops_rand_shape(rank, 500);
        int axis = (int)test_rand_int(0, rank - 1);
        int n = c == 0 ? 8 : c == 1 ? 1 : (int)test_rand_int(2, 5);
        ref_shape ss[8];
        float *xs[8];
        const double *dxs[8];
        int64_t total = 0;
        static const char *names[8] = {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"};
        rlx_tensor in[8];
        rlx_graph *g = ops_graph();
        rlx_node nodes[8];
        for (int i = 0; i < n; i++) {
            ss[i] = base;
            ss[i].d[axis] = test_rand_int(1, 5);
            int64_t k = ref_numel(&ss[i]);
            total += k;
            xs[i] = ops_rand_f32(k, -1, 1);
            dxs[i] = ops_f32_to_f64(xs[i], k);
            in[i] = ops_tensor(names[i], RLX_F32, ss[i], xs[i]);
            nodes[i] = ops_input(g, names[i], RLX_F32, ss[i]);
        }
        double *want = ops_f64(total);
        ref_shape so = ref_concat(dxs, ss, n, axis, want);
        CHECK_OK(rlx_output(g, "y", rlx_concat(g, nodes, n, axis)));
        float *got = ops_f32(total);
        rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, n, &out, 1));
            CHECK_CLOSE("concat", got, want, total, 0);
        }
    }
    ops_free_all();
}

TEST(ops_expand) {
    for (int c = 0; c < 6; c++) {
        ref_shape so = ops_rand_shape((int)test_rand_int(1, 4), 3000), sx;
        memset(&sx, 0, sizeof sx);
        sx.rank = (int)test_rand_int(0, so.rank);
        for (int i = 0; i < sx.rank; i++) sx.d[i] = test_rand_int(0, 1) ? so.d[so.rank - sx.rank + i] : 1;
        int64_t n = ref_numel(&sx), no = ref_numel(&so);
        float *x = ops_rand_f32(n, -1, 1);
        double *want = ops_f64(no);
        ref_expand(ops_f32_to_f64(x, n), sx, so, want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_expand(g, ops_input(g, "x", RLX_F32, sx), so.rank, so.d)));
        CHECK(run_exact(g, sx, x, so, want, "expand"));
    }
    ops_free_all();
}

TEST(ops_gather_rows) {
    for (int c = 0; c < 6; c++) {
        rlx_dtype idt = c % 2 ? RLX_I64 : RLX_I32;
        int trank = (int)test_rand_int(1, 3);
        ref_shape st = ops_rand_shape(trank, 2000);
        if (st.d[0] < 3) st.d[0] = 7;
        int irank = (int)test_rand_int(0, 2);
        ref_shape si = ops_rand_shape(irank, 40);
        int64_t nt = ref_numel(&st), ni = ref_numel(&si), row = nt / st.d[0];
        float *t = ops_rand_f32(nt, -1, 1);
        void *ids = ops_alloc((size_t)ni * 8);
        int64_t *ids64 = ops_alloc((size_t)ni * 8);
        for (int64_t i = 0; i < ni; i++) {
            ids64[i] = test_rand_int(0, st.d[0] - 1);
            ref_store(ids, idt, i, (double)ids64[i]);
        }
        ref_shape so = si;
        for (int i = 1; i < st.rank; i++) so.d[so.rank++] = st.d[i];
        double *want = ops_f64(ni * row);
        ref_gather_rows(ops_f32_to_f64(t, nt), st, ids64, ni, want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_gather_rows(g, ops_input(g, "t", RLX_F32, st), ops_input(g, "ids", idt, si))));
        rlx_tensor in[2] = {ops_tensor("t", RLX_F32, st, t), ops_tensor("ids", idt, si, ids)};
        float *got = ops_f32(ni * row);
        rlx_tensor out = ops_tensor("y", RLX_F32, so, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 2, &out, 1));
            CHECK_CLOSE("gather_rows", got, want, ni * row, 0);
        }
    }
    ops_free_all();
}

TEST(ops_gather) {
    for (int c = 0; c < 6; c++) {
        int rank = (int)test_rand_int(1, 3);
        ref_shape sx = ops_rand_shape(rank, 1000);
        int axis = (int)test_rand_int(0, rank - 1);
        ref_shape si = sx;   /* index: same rank; along axis any length, other dims <= x's */
        for (int i = 0; i < rank; i++) si.d[i] = i == axis ? test_rand_int(1, 6) : test_rand_int(1, sx.d[i]);
        int64_t nx = ref_numel(&sx), ni = ref_numel(&si);
        float *x = ops_rand_f32(nx, -1, 1);
        int32_t *idx = ops_alloc((size_t)ni * 4);
        int64_t *idx64 = ops_alloc((size_t)ni * 8);
        for (int64_t i = 0; i < ni; i++) idx[i] = (int32_t)(idx64[i] = test_rand_int(0, sx.d[axis] - 1));
        double *want = ops_f64(ni);
        ref_gather(ops_f32_to_f64(x, nx), sx, idx64, si, axis, want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_gather(g, ops_input(g, "x", RLX_F32, sx), ops_input(g, "i", RLX_I32, si), axis)));
        rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("i", RLX_I32, si, idx)};
        float *got = ops_f32(ni);
        rlx_tensor out = ops_tensor("y", RLX_F32, si, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, in, 2, &out, 1));
            CHECK_CLOSE("gather", got, want, ni, 0);
        }
    }
    ops_free_all();
}

TEST(ops_topk) {
    for (int c = 0; c < 8; c++) {
        int rank = (int)test_rand_int(1, 3);
        ref_shape sx = ops_rand_shape(rank, 2000);
        int64_t last = sx.d[rank - 1];
        int k = c == 0 ? (int)last : (int)test_rand_int(1, last);
        int64_t n = ref_numel(&sx), rows = n / last;
        float *x = ops_alloc((size_t)n * 4);
        for (int64_t i = 0; i < n; i++)   /* ties half the time */
            x[i] = c % 2 ? (float)test_rand_int(-3, 3) : (float)test_rand_uniform(-1, 1);
        ref_shape so = sx;
        so.d[rank - 1] = k;
        double *wv = ops_f64(rows * k);
        int32_t *wi = ops_alloc((size_t)(rows * k) * 4), *gi = ops_alloc((size_t)(rows * k) * 4);
        ref_topk(ops_f32_to_f64(x, n), sx, k, wv, wi);
        rlx_graph *g = ops_graph();
        rlx_node vals = RLX_NO_NODE, idx = RLX_NO_NODE;
        CHECK_OK(rlx_topk(g, ops_input(g, "x", RLX_F32, sx), k, &vals, &idx));
        CHECK_OK(rlx_output(g, "v", vals));
        CHECK_OK(rlx_output(g, "i", idx));
        rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
        float *gv = ops_f32(rows * k);
        rlx_tensor out[2] = {ops_tensor("v", RLX_F32, so, gv), ops_tensor("i", RLX_I32, so, gi)};
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            CHECK(ops_run(g, cfg, &in, 1, out, 2));
            CHECK_CLOSE("topk values", gv, wv, rows * k, 0);
            for (int64_t i = 0; i < rows * k; i++)
                CHECK_MSG(gi[i] == wi[i], "topk k=%d index [%lld]: got %d want %d (config %s)", k, (long long)i,
                          gi[i], wi[i], ops_config_name(cfg));
        }
    }
    ops_free_all();
}

/* topk with only one of the two outputs requested. */
TEST(ops_topk_single_output) {
    int64_t d[2] = {3, 10};
    ref_shape sx = ref_shape_make(2, d), so;
    float *x = ops_rand_f32(30, -1, 1);
    double wv[9];
    int32_t wi[9], gi[9];
    ref_topk(ops_f32_to_f64(x, 30), sx, 3, wv, wi);
    so = sx;
    so.d[1] = 3;
    rlx_graph *g = ops_graph();
    rlx_node idx = RLX_NO_NODE;
    CHECK_OK(rlx_topk(g, ops_input(g, "x", RLX_F32, sx), 3, NULL, &idx));
    CHECK_OK(rlx_output(g, "i", idx));
    rlx_tensor in = ops_tensor("x", RLX_F32, sx, x), out = ops_tensor("i", RLX_I32, so, gi);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, &in, 1, &out, 1));
        CHECK(memcmp(gi, wi, sizeof wi) == 0);
    }
    ops_free_all();
}

/* Transposes and slices feeding compute, so non-contiguous producers meet kernels. */
TEST(ops_movement_chain) {
    int64_t dx[3] = {4, 6, 5};
    ref_shape sx = ref_shape_make(3, dx);
    int64_t n = ref_numel(&sx);
    float *x = ops_rand_f32(n, -1, 1);
    int perm[3] = {2, 0, 1};
    double *t = ops_f64(n), *s = ops_f64(n), *want = ops_f64(n);
    ref_shape st = ref_transpose(ops_f32_to_f64(x, n), sx, perm, t);          /* [5,4,6] */
    ref_shape ss = ref_slice(t, st, 2, 1, 6, 2, s);                           /* [5,4,3] */
    int64_t ns = ref_numel(&ss);
    ref_unary(REF_EXP, s, ns, want);
    rlx_graph *g = ops_graph();
    rlx_node y = rlx_exp(g, rlx_slice(g, rlx_transpose(g, ops_input(g, "x", RLX_F32, sx), perm), 2, 1, 6, 2));
    CHECK_OK(rlx_output(g, "y", y));
    rlx_tensor in = ops_tensor("x", RLX_F32, sx, x);
    float *got = ops_f32(ns);
    rlx_tensor out = ops_tensor("y", RLX_F32, ss, got);
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        CHECK(ops_run(g, cfg, &in, 1, &out, 1));
        CHECK_CLOSE("exp(slice(transpose))", got, want, ns, 1e-6);
    }
    ops_free_all();
}

/* slice_last: the last rows of a static axis, and of a symbolic one whose
 * start moves with each binding (the llama graph's last prompt row). */
TEST(ops_slice_last) {
    for (int c = 0; c < 6; c++) {
        int rank = (int)test_rand_int(1, 4);
        ref_shape sx = ops_rand_shape(rank, 3000);
        int axis = (int)test_rand_int(0, rank - 1);
        int64_t dim = sx.d[axis], len = test_rand_int(1, dim);
        int64_t n = ref_numel(&sx);
        float *x = ops_rand_f32(n, -1, 1);
        double *want = ops_f64(n);
        ref_shape so = ref_slice(ops_f32_to_f64(x, n), sx, axis, dim - len, dim, 1, want);
        rlx_graph *g = ops_graph();
        CHECK_OK(rlx_output(g, "y", rlx_slice_last(g, ops_input(g, "x", RLX_F32, sx), axis, len)));
        CHECK(run_exact(g, sx, x, so, want, "slice_last"));
    }
    ops_free_all();

    /* symbolic: x [seq, 3], y = the last 2 rows, for seq = 5, 2, 9; seq = 1 is
     * a SHAPE error; on the CPU, and on Vulkan where a device is (the start is
     * resolved per specialization, so each backend's rebinding is checked) */
    rlx_graph *g = rlx_graph_new();
    int64_t seq = rlx_symbol(g, "seq"), xd[2] = {seq, 3};
    CHECK_OK(rlx_output(g, "y", rlx_slice_last(g, rlx_input(g, "x", RLX_F32, 2, xd), 0, 2)));
    CHECK(rlx_graph_status(g) == RLX_OK);
    for (int b = 0; b < 2; b++) {
        rlx_compile_options o;
        if (b == 1) {
            if (!vkp_available()) break;
            vkp_options(&o);
        } else {
            rlx_compile_options_init(&o);
            o.backend = RLX_BACKEND_CPU;
        }
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, &o, &e));
        float xs[27], y[6];
        for (int i = 0; i < 27; i++) xs[i] = (float)i;
        static const int64_t seqs[] = {5, 2, 9};
        for (int s = 0; s < 3 && e; s++) {
            rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {seqs[s], 3}, .data = xs,
                             .bytes = sizeof(float) * 3 * (size_t)seqs[s]};
            CHECK_OK(rlx_exec_run(e, &in, 1));
            CHECK_OK(rlx_exec_read_output(e, "y", y, sizeof y));
            for (int i = 0; i < 6; i++)
                CHECK_MSG(y[i] == (float)(3 * (seqs[s] - 2) + i), "backend %d seq %lld y[%d] = %g", b, (long long)seqs[s], i, y[i]);
        }
        rlx_tensor one = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, 3}, .data = xs, .bytes = sizeof(float) * 3};
        CHECK_STATUS(e ? rlx_exec_run(e, &one, 1) : RLX_STATUS_SHAPE, RLX_STATUS_SHAPE);
        CHECK_MSG(strstr(rlx_last_error(), "last 2 entries") != NULL, "%s", rlx_last_error());
        rlx_exec_free(e);
    }
    rlx_graph_free(g);

    /* builder errors */
    g = rlx_graph_new();
    int64_t d3[1] = {3};
    rlx_node x3 = rlx_input(g, "x", RLX_F32, 1, d3);
    CHECK(rlx_slice_last(g, x3, 0, 0) == RLX_NO_NODE);
    CHECK_STATUS(rlx_graph_status(g), RLX_STATUS_INVALID_ARGUMENT);
    rlx_graph_free(g);
    g = rlx_graph_new();
    x3 = rlx_input(g, "x", RLX_F32, 1, d3);
    CHECK(rlx_slice_last(g, x3, 0, 4) == RLX_NO_NODE);
    CHECK_STATUS(rlx_graph_status(g), RLX_STATUS_SHAPE);
    rlx_graph_free(g);
}
