/*
 * test_vk_movement.c — CPU <-> Vulkan parity of the data-movement lowerings
 * (src/vulkan/lower/{movement,gather}.c): reshape copies, transpose, slice
 * with steps, concat of 1..4 inputs along every axis, expand, gather_rows
 * with i32 and i64 ids, and gather along each axis; over f32, a 1-byte (u8),
 * a 2-byte (f16 bits) and an 8-byte (i64) dtype, odd sizes, and sizes that
 * exercise the widened (16-byte) copy path. Out-of-range ids on the GPU give
 * zeros (the CPU errors), checked separately. Everything compares bit-exact.
 */
#include "ops_common.h"
#include "vk_parity.h"
#include <math.h>
#include <string.h>

static const rlx_dtype move_dtypes[] = {RLX_F32, RLX_U8, RLX_F16, RLX_I64};
#define N_MOVE_DT 4

/* Random bytes for integer dtypes, finite random values for f32/f16. */
static void *rand_bytes(rlx_dtype dt, int64_t n) {
    size_t es = rlx_dtype_size(dt);
    unsigned char *p = ops_alloc((size_t)(n ? n : 1) * es);
    for (int64_t i = 0; i < n; i++) {
        if (dt == RLX_F32) ((float *)(void *)p)[i] = (float)test_rand_uniform(-100, 100);
        else if (dt == RLX_F16) ref_store(p, dt, i, test_rand_uniform(-100, 100));
        else for (size_t b = 0; b < es; b++) p[(size_t)i * es + b] = (unsigned char)test_rand_u64();
    }
    return p;
}

static ref_shape rshape(int rank, int64_t max_numel) {
    ref_shape s = ops_rand_shape(rank, max_numel);
    return s;
}

TEST(vk_move_transpose) {
    VKP_REQUIRE();
    for (int c = 0; c < 16; c++) {
        rlx_dtype dt = move_dtypes[c % N_MOVE_DT];
        int rank = 2 + c % 4;
        ref_shape s = rshape(rank, 3000);
        int perm[RLX_MAX_RANK];
        for (int i = 0; i < rank; i++) perm[i] = i;
        for (int i = rank - 1; i > 0; i--) {
            int j = (int)test_rand_int(0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        if (c == 0) { perm[0] = 1; perm[1] = 0; }
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        rlx_node x = ops_add_input(g, &in, dt, s, rand_bytes(dt, ref_numel(&s)));
        CHECK_OK(rlx_output(g, "y", rlx_transpose(g, x, perm)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, true), "transpose case %d (%s rank %d)", c, rlx_dtype_name(dt), rank);
        ops_free_all();
    }
    /* a large 2-D transpose: many workgroups */
    int64_t d[2] = {301, 517};
    ref_shape s = ref_shape_make(2, d);
    ops_inputs in = {0};
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_transpose(g, ops_add_input(g, &in, RLX_F32, s, rand_bytes(RLX_F32, 301 * 517)),
                                              (int[]){1, 0})));
    CHECK(vkp_compare(g, in.t, in.n, 0, true));
    ops_free_all();
}

/* Cases 16..23 are slice_last: the start the shape rule resolves, as a slice to the end. */
TEST(vk_move_slice) {
    VKP_REQUIRE();
    for (int c = 0; c < 24; c++) {
        rlx_dtype dt = move_dtypes[c % N_MOVE_DT];
        int rank = 1 + c % 4;
        ref_shape s = rshape(rank, 4000);
        int axis = (int)test_rand_int(0, rank - 1);
        if (s.d[axis] < 2) s.d[axis] = 9;
        bool last = c >= 16;
        int64_t start = test_rand_int(0, s.d[axis] - 1), end = last ? s.d[axis] : test_rand_int(start + 1, s.d[axis]);
        int64_t step = c < 8 || last ? 1 : test_rand_int(1, 3);
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        rlx_node x = ops_add_input(g, &in, dt, s, rand_bytes(dt, ref_numel(&s)));
        CHECK_OK(rlx_output(g, "y", last ? rlx_slice_last(g, x, axis, end - start) : rlx_slice(g, x, axis, start, end, step)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, true), "%s case %d (%s axis %d %lld:%lld:%lld)", last ? "slice_last" : "slice",
                  c, rlx_dtype_name(dt), axis, (long long)start, (long long)end, (long long)step);
        ops_free_all();
    }
}

TEST(vk_move_concat) {
    VKP_REQUIRE();
    for (int c = 0; c < 16; c++) {
        rlx_dtype dt = move_dtypes[c % N_MOVE_DT];
        int rank = 1 + c % 4, n = 1 + (c / 4) % 4;
        ref_shape s = rshape(rank, 1500);
        int axis = (int)test_rand_int(0, rank - 1);
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        rlx_node xs[4];
        for (int i = 0; i < n; i++) {
            ref_shape si = s;
            si.d[axis] = test_rand_int(i == 1 ? 0 : 1, 9);   /* input 1 may be empty along the axis */
            xs[i] = ops_add_input(g, &in, dt, si, rand_bytes(dt, ref_numel(&si)));
        }
        CHECK_OK(rlx_output(g, "y", rlx_concat(g, xs, n, axis)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, true), "concat case %d (%s, %d inputs, axis %d)", c,
                  rlx_dtype_name(dt), n, axis);
        ops_free_all();
    }
    /* 8 inputs along the last axis of 16-byte rows: the widened path */
    ops_inputs in = {0};
    rlx_graph *g = ops_graph();
    rlx_node xs[8];
    int64_t d[2] = {37, 4};
    for (int i = 0; i < 8; i++) xs[i] = ops_add_input(g, &in, RLX_F32, ref_shape_make(2, d), rand_bytes(RLX_F32, 37 * 4));
    CHECK_OK(rlx_output(g, "y", rlx_concat(g, xs, 8, 1)));
    CHECK(vkp_compare(g, in.t, in.n, 0, true));
    ops_free_all();
}

TEST(vk_move_expand_reshape) {
    VKP_REQUIRE();
    for (int c = 0; c < 12; c++) {
        rlx_dtype dt = move_dtypes[c % N_MOVE_DT];
        int rank = 1 + c % 4, extra = c % 2;
        ref_shape so = rshape(rank + extra, 3000), sx;
        sx.rank = rank;
        for (int i = 0; i < rank; i++) sx.d[i] = test_rand_int(0, 1) ? so.d[i + extra] : 1;
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        rlx_node x = ops_add_input(g, &in, dt, sx, rand_bytes(dt, ref_numel(&sx)));
        CHECK_OK(rlx_output(g, "y", rlx_expand(g, x, so.rank, so.d)));
        /* a reshape whose result is an output next to its input: not a plain alias */
        int64_t flat = ref_numel(&sx);
        CHECK_OK(rlx_output(g, "r", rlx_reshape(g, rlx_neg(g, rlx_cast(g, x, RLX_F32)), 1, &flat)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, false), "expand case %d (%s)", c, rlx_dtype_name(dt));
        ops_free_all();
    }
    /* plain expand + reshape copy of the input itself, GPU only */
    int64_t dx[3] = {5, 1, 7}, dy[4] = {2, 5, 3, 7}, dr[2] = {7, 5};
    ops_inputs in = {0};
    rlx_graph *g = ops_graph();
    rlx_node x = ops_add_input(g, &in, RLX_I64, ref_shape_make(3, dx), rand_bytes(RLX_I64, 35));
    CHECK_OK(rlx_output(g, "y", rlx_expand(g, x, 4, dy)));
    CHECK_OK(rlx_output(g, "r", rlx_reshape(g, x, 2, dr)));
    CHECK(vkp_compare(g, in.t, in.n, 0, true));
    ops_free_all();
}

/* ---------------------------------------------------------------- gather */

TEST(vk_gather_rows) {
    VKP_REQUIRE();
    static const rlx_dtype dts[] = {RLX_F32, RLX_U8, RLX_I64, RLX_F16};
    for (int c = 0; c < 12; c++) {
        rlx_dtype dt = dts[c % 4];
        rlx_dtype it = (c / 4) % 2 ? RLX_I64 : RLX_I32;
        int trank = 1 + c % 3, irank = c % 3;
        ref_shape st = rshape(trank, 2000), si = rshape(irank, 50);
        if (st.d[0] == 0) st.d[0] = 3;
        if (c == 4) { st.rank = 2; st.d[0] = 1000; st.d[1] = 64; }   /* 16-byte copy units */
        int64_t ni = ref_numel(&si);
        void *ids = ops_alloc((size_t)(ni ? ni : 1) * 8);
        for (int64_t i = 0; i < ni; i++) ref_store(ids, it, i, (double)test_rand_int(0, st.d[0] - 1));
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        rlx_node t = ops_add_input(g, &in, dt, st, rand_bytes(dt, ref_numel(&st)));
        rlx_node id = ops_add_input(g, &in, it, si, ids);
        CHECK_OK(rlx_output(g, "y", rlx_gather_rows(g, t, id)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, true), "gather_rows case %d (%s table rank %d, %s ids rank %d)", c,
                  rlx_dtype_name(dt), trank, rlx_dtype_name(it), irank);
        ops_free_all();
    }
}

TEST(vk_gather) {
    VKP_REQUIRE();
    for (int c = 0; c < 12; c++) {
        rlx_dtype dt = move_dtypes[c % N_MOVE_DT];
        rlx_dtype it = (c / 2) % 2 ? RLX_I64 : RLX_I32;
        int rank = 1 + c % 4;
        ref_shape sx = rshape(rank, 2000), si;
        int axis = (int)test_rand_int(0, rank - 1);
        if (sx.d[axis] == 0) sx.d[axis] = 4;
        si.rank = rank;
        for (int d = 0; d < rank; d++) si.d[d] = d == axis ? test_rand_int(1, 9) : test_rand_int(sx.d[d] ? 1 : 0, sx.d[d]);
        int64_t ni = ref_numel(&si);
        void *ids = ops_alloc((size_t)(ni ? ni : 1) * 8);
        for (int64_t i = 0; i < ni; i++) ref_store(ids, it, i, (double)test_rand_int(0, sx.d[axis] - 1));
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        rlx_node x = ops_add_input(g, &in, dt, sx, rand_bytes(dt, ref_numel(&sx)));
        rlx_node id = ops_add_input(g, &in, it, si, ids);
        CHECK_OK(rlx_output(g, "y", rlx_gather(g, x, id, axis)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 0, true), "gather case %d (%s rank %d axis %d, %s ids)", c,
                  rlx_dtype_name(dt), rank, axis, rlx_dtype_name(it));
        ops_free_all();
    }
}

/* Out-of-range ids fail the run as on the CPU (INVALID_ARGUMENT naming the
 * node, reported through the program's status word); the next valid run of
 * the same exec succeeds, so the word is cleared per run. */
TEST(vk_gather_rows_out_of_range_is_an_error) {
    VKP_REQUIRE();
    int64_t dt_[2] = {4, 3}, di = 4;
    float table[12];
    for (int i = 0; i < 12; i++) table[i] = (float)(i + 1);
    int32_t bad[4] = {1, -1, 4, 3}, good[4] = {1, 0, 2, 3};
    rlx_graph *g = ops_graph();
    rlx_node y = rlx_gather_rows(g, rlx_input(g, "t", RLX_F32, 2, dt_), rlx_input(g, "i", RLX_I32, 1, &di));
    CHECK_OK(rlx_set_name(g, y, "embed"));
    CHECK_OK(rlx_output(g, "y", y));
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, &o, &e));
    rlx_tensor in[2] = {{"t", RLX_F32, 2, {4, 3}, table, sizeof table}, {"i", RLX_I32, 1, {4}, bad, sizeof bad}};
    rlx_status st = rlx_exec_run(e, in, 2);
    bool named = strstr(rlx_last_error(), "embed") != NULL;
    in[1].data = good;
    float out[12];
    rlx_status st2 = rlx_exec_run(e, in, 2);
    if (st2 == RLX_OK) st2 = rlx_exec_read_output(e, "y", out, sizeof out);
    rlx_exec_free(e);
    ops_free_all();
    CHECK_MSG(st == RLX_STATUS_INVALID_ARGUMENT, "bad ids gave %s", rlx_status_name(st));
    CHECK(named);
    CHECK_OK(st2);
    static const float want[12] = {4, 5, 6, 1, 2, 3, 7, 8, 9, 10, 11, 12};
    CHECK(memcmp(out, want, sizeof want) == 0);
}
