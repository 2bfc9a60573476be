/*
 * test_fault_paths.c — error paths that real hosts and devices rarely take,
 * forced with rlx_fault_set (src/core/util.c rlx_fault): a Vulkan upload whose
 * submit fails, Vulkan buffers that cannot be created while compiling, a CPU
 * param that cannot be allocated when rlx_exec_set_param takes a borrowed
 * param back. Each must return its status with a message, leave the exec as
 * it was (the next call succeeds, results right), and leak nothing (the
 * sanitizer build runs these too).
 */
#include "ops_common.h"
#include "core/core.h"
#include "ref64.h"
#include "vk_parity.h"
#include <stdlib.h>
#include <string.h>

enum { M = 2, K = 64, N = 7 };

/* y = x @ W^T, W a param of dtype dt [N, k] (f32 through matmul, blocks through dequant_matmul). */
static rlx_graph *product_graph(rlx_dtype dt, int64_t k) {
    rlx_graph *g = ops_graph();
    int64_t xd[2] = {M, k}, wd[2] = {N, k};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), w = rlx_param(g, "W", dt, 2, wd);
    rlx_output(g, "y", dt == RLX_F32 ? rlx_matmul(g, x, w, 1) : rlx_dequant_matmul(g, x, w));
    return g;
}

static rlx_status run_product(rlx_exec *e, const float *x, float *y, int64_t k) {
    int64_t xd[2] = {M, k};
    rlx_tensor in = ops_tensor("x", RLX_F32, ref_shape_make(2, xd), (void *)x);
    rlx_status st = rlx_exec_run(e, &in, 1);
    return st == RLX_OK ? rlx_exec_read_output(e, "y", y, sizeof(float) * M * N) : st;
}

static bool product_matches(const float *x, const float *w, const float *y, double tol) {
    int64_t xd[2] = {M, K}, wd[2] = {N, K};
    double want[M * N];
    ref_matmul(ops_f32_to_f64(x, M * K), ref_shape_make(2, xd), ops_f32_to_f64(w, N * K), ref_shape_make(2, wd), 1, NULL,
               RLX_ACT_NONE, want, NULL);
    return test_close_f32_f64("fault path product", y, want, M * N, tol);
}

static bool error_mentions(const char *what) {
    const char *msg = rlx_last_error();
    bool ok = msg && strstr(msg, what);
    if (!ok) printf("    error \"%s\" does not mention \"%s\"\n", msg ? msg : "(none)", what);
    return ok;
}

TEST(fault_vulkan_upload_submit) {
    VKP_REQUIRE();
    rlx_graph *g = product_graph(RLX_Q8_0, K);
    float *x = ops_rand_f32(M * K, -1, 1), y[M * N];
    size_t wbytes;
    double *wd = NULL;
    void *wq = ops_quantized_weights(RLX_Q8_0, N, K, &wd, &wbytes);
    float *wdec = malloc(sizeof(float) * N * K);
    for (int i = 0; i < N * K; i++) wdec[i] = (float)wd[i];
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, &o, &e));
    rlx_fault_set("vk_upload_submit");
    rlx_status st = rlx_exec_set_param(e, "W", RLX_Q8_0, wq, wbytes);
    rlx_fault_set("");
    CHECK(st == RLX_STATUS_DEVICE && error_mentions("vkQueueSubmit (upload)"));
    /* the uploads' command buffers and staging are reusable: the same call now succeeds */
    CHECK_OK(rlx_exec_set_param(e, "W", RLX_Q8_0, wq, wbytes));
    CHECK_OK(run_product(e, x, y, K));
    CHECK(product_matches(x, wdec, y, 2e-2));   /* the i8 kernels round x to 8 bits */
    rlx_exec_free(e);
    free(wq), free(wd), free(wdec);   /* x and the graph are the ops_common scratch */
}

/* Every Vulkan buffer a compile and first run make fails in turn (the
 * params, the arena, constants, staging, scratch...): each failure is
 * OUT_OF_MEMORY with nothing half-made (the sanitizer build checks for leaks
 * and double frees), until the n past the last buffer succeeds. */
TEST(fault_vulkan_buffers_at_compile) {
    VKP_REQUIRE();
    rlx_graph *g = product_graph(RLX_Q6_K, 4 * K);
    rlx_compile_options o;
    vkp_options(&o);
    float *x = ops_rand_f32(M * K * 4, -1, 1), y[M * N];
    size_t wbytes;
    double *wd = NULL;
    void *wq = ops_quantized_weights(RLX_Q6_K, N, K * 4, &wd, &wbytes);
    int failed = 0;
    bool done = false;
    for (int nth = 1; nth <= 64 && !done; nth++) {
        char fault[32];
        snprintf(fault, sizeof fault, "vk_buf@%d", nth);
        rlx_fault_set(fault);
        rlx_exec *e = NULL;
        rlx_status st = rlx_compile(g, &o, &e);
        if (st == RLX_OK) st = rlx_exec_set_param(e, "W", RLX_Q6_K, wq, wbytes);
        if (st == RLX_OK) st = run_product(e, x, y, 4 * K);
        rlx_fault_set("");
        rlx_exec_free(e);
        if (st == RLX_OK) done = true;
        else if (st == RLX_STATUS_OUT_OF_MEMORY && error_mentions("cannot create")) failed++;
        else CHECK(!"a buffer failure gave another status");
    }
    CHECK(done && failed >= 2);
    free(wq), free(wd);
    /* a compile now works and runs */
    rlx_exec *e = NULL;
    g = product_graph(RLX_F32, K);
    float *w = ops_rand_f32(N * K, -1, 1);
    CHECK_OK(rlx_compile(g, &o, &e));
    CHECK_OK(rlx_exec_set_param(e, "W", RLX_F32, w, sizeof(float) * N * K));
    CHECK_OK(run_product(e, x, y, K));
    CHECK(product_matches(x, w, y, 1e-5));
    rlx_exec_free(e);
}

/* A borrowed param (rlx_exec_use_param_memory) taken back by set_param while
 * no memory can be had: the param stays the caller's, and the exec works. */
TEST(fault_cpu_param_alloc_taking_back) {
    rlx_graph *g = product_graph(RLX_F32, K);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, &o, &e));
    float *x = ops_rand_f32(M * K, -1, 1), *w1 = ops_rand_f32(N * K, -1, 1), y[M * N];
    float *w0 = NULL;
    CHECK(posix_memalign((void **)&w0, 64, sizeof(float) * N * K) == 0);
    float *r = ops_rand_f32(N * K, -1, 1);
    memcpy(w0, r, sizeof(float) * N * K);
    CHECK_OK(rlx_exec_use_param_memory(e, "W", RLX_F32, w0, sizeof(float) * N * K));
    rlx_fault_set("cpu_param_alloc");
    rlx_status st = rlx_exec_set_param(e, "W", RLX_F32, w1, sizeof(float) * N * K);
    rlx_fault_set("");
    CHECK(st == RLX_STATUS_OUT_OF_MEMORY && error_mentions("cannot allocate"));
    CHECK_OK(run_product(e, x, y, K));
    CHECK(product_matches(x, w0, y, 1e-5));   /* still the caller's memory */
    CHECK_OK(rlx_exec_set_param(e, "W", RLX_F32, w1, sizeof(float) * N * K));
    w0[0] += 1.0f;   /* no longer read */
    CHECK_OK(run_product(e, x, y, K));
    CHECK(product_matches(x, w1, y, 1e-5));
    /* a compile whose params cannot be allocated fails cleanly */
    rlx_exec *e2 = NULL;
    rlx_fault_set("vk_buf,cpu_param_alloc");
    st = rlx_compile(g, &o, &e2);
    rlx_fault_set("");
    CHECK(st == RLX_STATUS_OUT_OF_MEMORY && e2 == NULL);
    rlx_exec_free(e);
    free(w0);
}

/* A quantized param that is also an output leaves the device in its planar
 * layout (vk_weight_layout.h) and is converted back in host memory; when
 * that conversion's row buffer cannot be allocated, the run returns
 * OUT_OF_MEMORY naming the type, and the next run gives the bytes set. */
TEST(fault_vulkan_planar_output_conversion) {
    VKP_REQUIRE();
    rlx_graph *g = ops_graph();
    int64_t xd[2] = {M, K}, wd[2] = {N, K};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), w = rlx_param(g, "W", RLX_Q8_0, 2, wd);
    rlx_output(g, "y", rlx_dequant_matmul(g, x, w));
    rlx_output(g, "W_out", w);
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, &o, &e));
    size_t wbytes;
    double *wd64 = NULL;
    void *wq = ops_quantized_weights(RLX_Q8_0, N, K, &wd64, &wbytes);
    CHECK_OK(rlx_exec_set_param(e, "W", RLX_Q8_0, wq, wbytes));
    float *xv = ops_rand_f32(M * K, -1, 1), y[M * N];
    rlx_fault_set("vk_layout_tmp");
    rlx_status st = run_product(e, xv, y, K);
    rlx_fault_set("");
    CHECK(st == RLX_STATUS_OUT_OF_MEMORY && error_mentions("converting q8_0 rows"));
    CHECK_OK(run_product(e, xv, y, K));
    rlx_tensor out;
    CHECK_OK(rlx_exec_output(e, "W_out", &out));
    CHECK(out.bytes == wbytes && memcmp(out.data, wq, wbytes) == 0);
    rlx_exec_free(e);
    free(wq), free(wd64);
}
