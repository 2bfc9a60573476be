/*
 * test_kv_cache.c — a KV cache kept in params across runs: prefill of T
 * tokens at once equals T single-token decode steps, decode steps reuse one
 * specialization (the active extent is a run-time input, not a shape), the
 * context limit is a clean error, and the Vulkan backend agrees with the CPU.
 */
#include "vk_parity.h"
#include "ref64.h"
#include <stdlib.h>
#include <string.h>

enum { H = 4, HKV = 2, D = 8, CAP = 16, T = 7 };

static rlx_graph *cached_attention_graph(void) {
    rlx_graph *g = rlx_graph_new();
    int64_t seq = rlx_symbol(g, "seq");
    int64_t qd[4] = {1, H, seq, D}, kd[4] = {1, HKV, seq, D}, cd[4] = {1, HKV, CAP, D}, one[1] = {1};
    rlx_node q = rlx_input(g, "q", RLX_F32, 4, qd);
    rlx_node k = rlx_input(g, "k", RLX_F32, 4, kd);
    rlx_node v = rlx_input(g, "v", RLX_F32, 4, kd);
    rlx_node pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node len = rlx_input(g, "kv_len", RLX_I32, 1, one);
    rlx_node kc = rlx_kv_write(g, rlx_param(g, "k_cache", RLX_F32, 4, cd), k, pos);
    rlx_node vc = rlx_kv_write(g, rlx_param(g, "v_cache", RLX_F32, 4, cd), v, pos);
    rlx_set_name(g, kc, "k_write");   /* errors name the write */
    rlx_set_name(g, vc, "v_write");
    rlx_output(g, "out", rlx_attention_kv(g, q, kc, vc, RLX_MASK_CAUSAL, RLX_NO_NODE, 0, len));
    return g;
}

/* Runs rows [t0, t0+n) of q/k/v ([1,heads,T,D] layout) at cache position pos. */
static rlx_status run_at(rlx_exec *e, const float *q, const float *k, const float *v, int t0, int n, int pos_in, float *out) {
    float qs[H * T * D], ks[HKV * T * D], vs[HKV * T * D];
    for (int h = 0; h < H; h++) memcpy(qs + h * n * D, q + (h * T + t0) * D, sizeof(float) * (size_t)(n * D));
    for (int h = 0; h < HKV; h++) {
        memcpy(ks + h * n * D, k + (h * T + t0) * D, sizeof(float) * (size_t)(n * D));
        memcpy(vs + h * n * D, v + (h * T + t0) * D, sizeof(float) * (size_t)(n * D));
    }
    int32_t pos = pos_in, len = pos_in + n;
    rlx_tensor in[5] = {
        {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, H, n, D}, .data = qs, .bytes = sizeof(float) * H * n * D},
        {.name = "k", .dtype = RLX_F32, .rank = 4, .dims = {1, HKV, n, D}, .data = ks, .bytes = sizeof(float) * HKV * n * D},
        {.name = "v", .dtype = RLX_F32, .rank = 4, .dims = {1, HKV, n, D}, .data = vs, .bytes = sizeof(float) * HKV * n * D},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, 5);
    if (st != RLX_OK) return st;
    rlx_tensor o;
    if ((st = rlx_exec_output(e, "out", &o)) != RLX_OK) return st;
    /* scatter [1,H,n,D] back into [1,H,T,D] at t0 */
    for (int h = 0; h < H; h++) memcpy(out + (h * T + t0) * D, (float *)o.data + h * n * D, sizeof(float) * (size_t)(n * D));
    return RLX_OK;
}

static rlx_status run_chunk(rlx_exec *e, const float *q, const float *k, const float *v, int t0, int n, float *out) {
    return run_at(e, q, k, v, t0, n, t0, out);
}

/* limit_msg (256 bytes): the context-limit error, so backends can be compared */
static void check_prefill_equals_decode(rlx_backend backend, char *limit_msg) {
    float q[H * T * D], k[HKV * T * D], v[HKV * T * D];
    test_fill_uniform_f32(q, H * T * D, -1, 1);
    test_fill_uniform_f32(k, HKV * T * D, -1, 1);
    test_fill_uniform_f32(v, HKV * T * D, -1, 1);
    double q64[H * T * D], k64[HKV * T * D], v64[HKV * T * D], want[H * T * D];
    for (int i = 0; i < H * T * D; i++) q64[i] = q[i];
    for (int i = 0; i < HKV * T * D; i++) { k64[i] = k[i]; v64[i] = v[i]; }
    ref_attention(q64, k64, v64, 1, H, HKV, T, T, D, RLX_MASK_CAUSAL, NULL, ref_shape_make(0, NULL), 0, want);

    rlx_graph *g = cached_attention_graph();
    rlx_compile_options o;
    if (backend == RLX_BACKEND_VULKAN) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
    rlx_exec *e;
    CHECK_OK(rlx_compile(g, &o, &e));
    float prefill[H * T * D], decode[H * T * D], mixed[H * T * D];
    CHECK_OK(run_chunk(e, q, k, v, 0, T, prefill));               /* all T at once */
    for (int t = 0; t < T; t++) CHECK_OK(run_chunk(e, q, k, v, t, 1, decode));   /* one by one */
    CHECK_OK(run_chunk(e, q, k, v, 0, 3, mixed));                 /* a prompt of 3, then decode */
    for (int t = 3; t < T; t++) CHECK_OK(run_chunk(e, q, k, v, t, 1, mixed));
    rlx_exec_stats s;
    CHECK_OK(rlx_exec_get_stats(e, &s));
    CHECK_MSG(s.specializations == 3, "specializations %d (want 3: seq 7, 1, 3)", s.specializations);
    CHECK(test_close_f32_f64("prefill", prefill, want, H * T * D, 1e-5));
    CHECK(test_close_f32_f64("decode", decode, want, H * T * D, 1e-5));
    CHECK(test_close_f32_f64("prompt+decode", mixed, want, H * T * D, 1e-5));
    /* the context limit: writing past the capacity is a clean error */
    CHECK_STATUS(run_at(e, q, k, v, 0, 3, CAP - 2, decode), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(strstr(rlx_last_error(), "context limit") != NULL && strstr(rlx_last_error(), "kv_write 'k_write'") != NULL,
              "%s", rlx_last_error());
    snprintf(limit_msg, 256, "%s", rlx_last_error());
    /* a negative position says so (not "positions [-1, 2) exceed the capacity") */
    CHECK_STATUS(run_at(e, q, k, v, 0, 3, -1, decode), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(strstr(rlx_last_error(), "position -1 is negative") != NULL, "%s", rlx_last_error());
    rlx_exec_free(e);
    rlx_graph_free(g);
}

TEST(kv_cache_prefill_equals_decode_cpu) {
    char msg[256];
    check_prefill_equals_decode(RLX_BACKEND_CPU, msg);
}

TEST(kv_cache_prefill_equals_decode_vulkan) {
    VKP_REQUIRE();
    char cpu_msg[256] = "", vk_msg[256] = "";
    check_prefill_equals_decode(RLX_BACKEND_CPU, cpu_msg);
    check_prefill_equals_decode(RLX_BACKEND_VULKAN, vk_msg);
    /* a full cache reads the same on both backends (one shared check in ir) */
    CHECK_MSG(strcmp(cpu_msg, vk_msg) == 0, "cpu: %s | vulkan: %s", cpu_msg, vk_msg);
}

TEST(kv_cache_needs_a_param) {
    rlx_graph *g = rlx_graph_new();
    int64_t cd[4] = {1, 1, 4, 2}, rd[4] = {1, 1, 1, 2}, one[1] = {1};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, cd);
    rlx_node r = rlx_input(g, "r", RLX_F32, 4, rd);
    rlx_node p = rlx_input(g, "p", RLX_I32, 1, one);
    CHECK(rlx_kv_write(g, rlx_exp(g, x), r, p) == RLX_NO_NODE);
    CHECK(rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "param"));
    rlx_graph_free(g);
}
