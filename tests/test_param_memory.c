/*
 * test_param_memory.c — rlx_exec_use_param_memory: on the CPU the exec reads
 * the caller's bytes in place (a later change to them shows in the next run),
 * other backends copy them; programs compiled before the switch are dropped
 * and compiled again, the last run's outputs staying readable until the next
 * run; rlx_exec_set_param afterwards gives the param memory of
 * its own again without writing the caller's; KV caches, misaligned data,
 * the exec's own outputs and wrong sizes are refused. The results are checked against a float64 product.
 */
#include "ops_common.h"
#include "ref64.h"
#include "vk_parity.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { M = 3, K = 24, N = 5 };

/* y = x @ W^T with x [M, K] an input and W [N, K] a param. */
static rlx_graph *product_graph(void) {
    rlx_graph *g = ops_graph();
    int64_t xd[2] = {M, K}, wd[2] = {N, K};
    rlx_output(g, "y", rlx_matmul(g, rlx_input(g, "x", RLX_F32, 2, xd), rlx_param(g, "W", RLX_F32, 2, wd), 1));
    return g;
}

/* The caller's memory: 64-byte aligned (posix_memalign), freed with free(). */
static float *aligned_floats(size_t n) {
    void *p = NULL;
    return posix_memalign(&p, 64, n * sizeof(float)) == 0 ? p : NULL;
}

static rlx_status run_product(rlx_exec *e, const float *x, float *y) {
    int64_t xd[2] = {M, K};
    rlx_tensor in = ops_tensor("x", RLX_F32, ref_shape_make(2, xd), (void *)x);
    rlx_status st = rlx_exec_run(e, &in, 1);
    return st == RLX_OK ? rlx_exec_read_output(e, "y", y, sizeof(float) * M * N) : st;
}

static int matches(const float *x, const float *w, const float *y) {
    int64_t xd[2] = {M, K}, wd[2] = {N, K};
    double want[M * N];
    ref_matmul(ops_f32_to_f64(x, M * K), ref_shape_make(2, xd), ops_f32_to_f64(w, N * K), ref_shape_make(2, wd), 1, NULL,
               RLX_ACT_NONE, want, NULL);
    return test_close_f32_f64("param memory product", y, want, M * N, 1e-5);
}

TEST(param_memory_in_place_or_copied) {
    rlx_graph *g = product_graph();
    float *x = ops_rand_f32(M * K, -1, 1), *w0 = ops_rand_f32(N * K, -1, 1), *w1 = ops_rand_f32(N * K, -1, 1);
    for (int cfg = 0; cfg <= OPS_NCONFIG; cfg++) {   /* the CPU configurations, then Vulkan where there is one */
        rlx_compile_options o;
        if (cfg == OPS_NCONFIG && !vkp_available()) continue;
        if (cfg == OPS_NCONFIG) vkp_options(&o);
        else ops_config_options(cfg, &o);
        const char *cfg_name = cfg == OPS_NCONFIG ? "vulkan" : cfg_name;
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, &o, &e));
        rlx_exec_stats es;
        CHECK_OK(rlx_exec_get_stats(e, &es));
        int on_host = strcmp(es.backend, "cpu") == 0;
        float *mine = aligned_floats(N * K);   /* the caller's memory */
        CHECK(mine != NULL);
        memcpy(mine, w0, sizeof(float) * N * K);
        float y[M * N];
        /* a run before the switch: its program holds the old param memory */
        rlx_status st = rlx_exec_set_param_f32(e, "W", w1, N * K);
        if (st == RLX_OK) st = run_product(e, x, y);
        int ok_before = st == RLX_OK && matches(x, w1, y);
        rlx_tensor kept;   /* the run's output: readable until the next run, switch or not */
        if (st == RLX_OK) st = rlx_exec_output(e, "y", &kept);
        if (st == RLX_OK) st = rlx_exec_use_param_memory(e, "W", RLX_F32, mine, sizeof(float) * N * K);
        rlx_tensor again;
        int ok_kept = st == RLX_OK && rlx_exec_output(e, "y", &again) == RLX_OK && again.data == kept.data &&
                      memcmp(kept.data, y, sizeof y) == 0;
        if (st == RLX_OK) st = run_product(e, x, y);
        int ok_borrowed = st == RLX_OK && matches(x, w0, y);
        /* the caller changes its bytes: read in place on the CPU, a copy elsewhere */
        memcpy(mine, w1, sizeof(float) * N * K);
        if (st == RLX_OK) st = run_product(e, x, y);
        int ok_changed = st == RLX_OK && matches(x, on_host ? w1 : w0, y);
        /* set_param: memory of its own again; the caller's stays as it was */
        memcpy(mine, w0, sizeof(float) * N * K);
        if (st == RLX_OK) st = rlx_exec_set_param_f32(e, "W", w1, N * K);
        int untouched = memcmp(mine, w0, sizeof(float) * N * K) == 0;
        memset(mine, 0, sizeof(float) * N * K);
        if (st == RLX_OK) st = run_product(e, x, y);
        int ok_own = st == RLX_OK && matches(x, w1, y);
        /* borrowed again, then the exec freed: the caller's memory is not freed (ASan would say) */
        if (st == RLX_OK) st = rlx_exec_use_param_memory(e, "W", RLX_F32, mine, sizeof(float) * N * K);
        rlx_exec_free(e);
        mine[0] = 1.0f;
        free(mine);
        CHECK_OK(st);
        CHECK_MSG(ok_before && ok_borrowed, "results around the switch (config %s)", cfg_name);
        CHECK_MSG(ok_kept, "the last run's output after the switch (config %s)", cfg_name);
        CHECK_MSG(ok_changed, "after the caller's bytes changed (config %s, %s)", cfg_name,
                  on_host ? "read in place" : "copied");
        CHECK_MSG(untouched, "set_param wrote the caller's memory (config %s)", cfg_name);
        CHECK_MSG(ok_own, "after set_param (config %s)", cfg_name);
    }
    ops_free_all();
}

TEST(param_memory_refusals) {
    rlx_graph *g = ops_graph();
    int64_t cd[4] = {1, 1, 4, 8}, rd[4] = {1, 1, 1, 8}, one[1] = {1};
    rlx_node rows = rlx_input(g, "rows", RLX_F32, 4, rd);
    rlx_node cache = rlx_kv_write(g, rlx_param(g, "cache", RLX_F32, 4, cd), rows, rlx_input(g, "pos", RLX_I32, 1, one));
    int64_t wd[1] = {8};
    rlx_output(g, "y", rlx_mul(g, cache, rlx_param(g, "scale", RLX_F32, 1, wd)));
    for (int vk = 0; vk < 2; vk++) {   /* the CPU, then Vulkan where there is one */
        if (vk && !vkp_available()) continue;
        rlx_compile_options o;
        rlx_compile_options_init(&o);
        o.backend = RLX_BACKEND_CPU;
        if (vk) vkp_options(&o);
        rlx_exec *e = NULL;
        CHECK_OK(rlx_compile(g, &o, &e));
        float *buf = aligned_floats(40);
        CHECK(buf != NULL);
        memset(buf, 0, sizeof(float) * 40);
        rlx_status kv = rlx_exec_use_param_memory(e, "cache", RLX_F32, buf, sizeof(float) * 32);
        char kv_msg[256];
        snprintf(kv_msg, sizeof kv_msg, "%s", rlx_last_error());
        rlx_status odd = rlx_exec_use_param_memory(e, "scale", RLX_F32, buf + 1, sizeof(float) * 8);
        rlx_status size = rlx_exec_use_param_memory(e, "scale", RLX_F32, buf, sizeof(float) * 7);
        rlx_status type = rlx_exec_use_param_memory(e, "scale", RLX_F16, buf, sizeof(float) * 8);
        rlx_status name = rlx_exec_use_param_memory(e, "nope", RLX_F32, buf, sizeof(float) * 8);
        rlx_status null = rlx_exec_use_param_memory(e, "scale", RLX_F32, NULL, sizeof(float) * 8);
        rlx_status good = rlx_exec_use_param_memory(e, "scale", RLX_F32, buf, sizeof(float) * 8);
        /* an output of the exec as a param's memory: it lasts only until the next run */
        float rows_in[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        int32_t pos = 1;
        rlx_tensor in[2] = {
            {.name = "rows", .dtype = RLX_F32, .rank = 4, .dims = {1, 1, 1, 8}, .data = rows_in, .bytes = sizeof rows_in},
            {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        };
        rlx_tensor out;
        rlx_status ran = rlx_exec_run(e, in, 2);
        if (ran == RLX_OK) ran = rlx_exec_output(e, "y", &out);
        rlx_status own = ran == RLX_OK ? rlx_exec_use_param_memory(e, "scale", RLX_F32, out.data, sizeof(float) * 8) : ran;
        char own_msg[256];
        snprintf(own_msg, sizeof own_msg, "%s", rlx_last_error());
        rlx_exec_free(e);
        free(buf);
        if (!vk) {
            CHECK_MSG(kv == RLX_STATUS_INVALID_ARGUMENT && strstr(kv_msg, "in place"), "kv cache: %s '%s'",
                      rlx_status_name(kv), kv_msg);
            CHECK(odd == RLX_STATUS_INVALID_ARGUMENT);
            CHECK_MSG(own == RLX_STATUS_INVALID_ARGUMENT && strstr(own_msg, "own memory"), "own output: %s '%s'",
                      rlx_status_name(own), own_msg);
        } else {   /* copied to the device: nothing to refuse */
            CHECK_OK(kv);
            CHECK_OK(odd);
            CHECK_OK(own);
        }
        CHECK(size == RLX_STATUS_SHAPE && type == RLX_STATUS_SHAPE);
        CHECK(name == RLX_STATUS_NOT_FOUND && null == RLX_STATUS_INVALID_ARGUMENT);
        CHECK(rlx_exec_use_param_memory(NULL, "scale", RLX_F32, NULL, 0) == RLX_STATUS_INVALID_ARGUMENT);
        CHECK_OK(good);
    }
    ops_free_all();
}
