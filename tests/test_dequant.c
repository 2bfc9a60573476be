/*
 * test_dequant.c — weights kept in their storage type: dequant_matmul and a
 * quantized gather_rows for every block type (and f16/bf16/f32) against a
 * float64 reference over the decoded weights, on the CPU (decode-shaped and
 * tiled paths) and on Vulkan; and the rules that keep block types out of ops
 * that cannot decode them.
 */
#include "vk_parity.h"
#include "ops_common.h"
#include "quant/quant.h"
#include <stdlib.h>
#include <string.h>

static const rlx_dtype wtypes[] = {RLX_F32, RLX_F16, RLX_BF16, RLX_Q4_0, RLX_Q4_1, RLX_Q5_0, RLX_Q5_1,
                                   RLX_Q8_0, RLX_Q2_K, RLX_Q3_K, RLX_Q4_K, RLX_Q5_K, RLX_Q6_K, RLX_Q8_K};


static bool run_case(rlx_dtype dt, int64_t M, int64_t N, int64_t K, bool vulkan) {
    double *wd;
    size_t wbytes;
    void *w = ops_quantized_weights(dt, N, K, &wd, &wbytes);
    float *x = malloc(sizeof(float) * (size_t)(M * K));
    test_fill_uniform_f32(x, M * K, -1, 1);
    double *want = calloc((size_t)(M * N), sizeof(double));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t k = 0; k < K; k++) want[m * N + n] += (double)x[m * K + k] * wd[n * K + k];
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wdims[2] = {N, K}, ids_d[1] = {3};
    rlx_node xn = rlx_input(g, "x", RLX_F32, 2, xd);
    rlx_node wn = rlx_param(g, "w", dt, 2, wdims);
    rlx_output(g, "y", rlx_dequant_matmul(g, xn, wn));
    int32_t ids[3] = {0, (int32_t)N - 1, (int32_t)N / 2};
    rlx_node idn = rlx_constant(g, RLX_I32, 1, ids_d, ids);
    /* f16/bf16 tables keep their dtype in gather_rows; decoded (f32) rows are checked for the others */
    bool rows_f32 = dt == RLX_F32 || rlx_dtype_is_quantized(dt);
    rlx_output(g, "rows", rows_f32 ? rlx_gather_rows(g, wn, idn) : rlx_gather_rows(g, rlx_param(g, "t", RLX_F32, 2, wdims), idn));
    rlx_compile_options o;
    if (vulkan) vkp_options(&o); else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
    rlx_exec *e = NULL;
    /* the exact decode kernels (the 8-bit-x ones: test_vk_matvec_i8.c,
     * test_qdot.c): 2e-5 holds for the exact paths only, on the CPU and in
     * host steps of a Vulkan run too */
    o.exact_quant = 1;
    bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param(e, "w", dt, w, wbytes) == RLX_OK;
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x, .bytes = sizeof(float) * (size_t)(M * K)};
    float *y = malloc(sizeof(float) * (size_t)(M * N)), rows[3 * 512];
    ok = ok && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)(M * N)) == RLX_OK &&
         rlx_exec_read_output(e, "rows", rows, sizeof(float) * 3 * (size_t)K) == RLX_OK;
    if (!ok) printf("    %s M %lld: %s\n", rlx_dtype_name(dt), (long long)M, rlx_last_error());
    if (ok && vulkan) {   /* both nodes must run as GPU kernels, not host steps */
        rlx_exec_stats st;
        ok = rlx_exec_get_stats(e, &st) == RLX_OK && st.host_steps == 0;
        if (!ok) {
            char *rep = rlx_exec_report(e);
            printf("    %s M %lld: %d host steps where none were expected:\n%s", rlx_dtype_name(dt), (long long)M,
                   st.host_steps, rep ? rep : "");
            free(rep);
        }
    }
    double tol = 2e-5;
    if (ok && vulkan) {   /* the prefill coopmat tier rounds x and w to f16 (test_vk_dequant_gemm.c) */
        char *rep = rlx_exec_report(e);
        if (rep && strstr(rep, "dequant-mm-coopmat-")) tol = 3e-3;
        free(rep);
    }
    if (ok) {
        char what[64];
        snprintf(what, sizeof what, "%s y M=%lld N=%lld K=%lld%s", rlx_dtype_name(dt), (long long)M, (long long)N,
                 (long long)K, vulkan ? " vulkan" : "");
        ok = test_close_f32_f64(what, y, want, M * N, tol);
        double rw[3 * 512];
        for (int r = 0; r < 3; r++)
            for (int64_t k = 0; k < K; k++) rw[r * K + k] = wd[ids[r] * K + k];
        snprintf(what, sizeof what, "%s gather_rows%s", rlx_dtype_name(dt), vulkan ? " vulkan" : "");
        ok = ok && (!rows_f32 || test_close_f32_f64(what, rows, rw, 3 * K, 1e-7));
    }
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(w);
    free(wd);
    free(x);
    free(want);
    free(y);
    return ok;
}

TEST(dequant_matmul_every_type_cpu) {
    for (size_t t = 0; t < sizeof wtypes / sizeof wtypes[0]; t++) {
        int64_t K = rlx_tensor_bytes(wtypes[t], 1, (int64_t[]){32}) ? 96 : 512;   /* K-quants need 256-multiples */
        CHECK(run_case(wtypes[t], 1, 70, K, false));   /* decode: row by row */
        CHECK(run_case(wtypes[t], 9, 70, K, false));   /* prefill: decoded tiles + GEMM */
    }
}

/* GPU kernels only (host steps fail the case): M 1..8 take the matvec tier,
 * 9 and 33 the fused prefill tiers (more in test_vk_dequant_gemm.c); N is no
 * multiple of any tile or rows-per-workgroup count. */
TEST(dequant_matmul_every_type_vulkan) {
    VKP_REQUIRE();
    static const int64_t Ms[] = {1, 2, 8, 9, 33};
    for (size_t t = 0; t < sizeof wtypes / sizeof wtypes[0]; t++) {
        int64_t K = rlx_tensor_bytes(wtypes[t], 1, (int64_t[]){32}) ? 96 : 512;
        for (size_t i = 0; i < sizeof Ms / sizeof Ms[0]; i++) CHECK(run_case(wtypes[t], Ms[i], i % 2 ? 133 : 70, K, true));
    }
    /* float weights with K not a multiple of 4 (guarded loads) */
    CHECK(run_case(RLX_F16, 3, 37, 23, true));
    CHECK(run_case(RLX_F32, 1, 37, 23, true));
}

/* The matvec's weight rows per subgroup (RLX_VK_DQ_NR), which decides how
 * rows past N are clamped, on a few layouts. */
TEST(dequant_matmul_vulkan_rows_per_subgroup) {
    VKP_REQUIRE();
    static const rlx_dtype ts[] = {RLX_Q4_0, RLX_Q5_1, RLX_Q3_K, RLX_Q6_K, RLX_BF16};
    for (int nr = 2; nr <= 4; nr++) {
        char v[2] = {(char)('0' + nr), 0};
        setenv("RLX_VK_DQ_NR", v, 1);
        for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
            int64_t K = rlx_tensor_bytes(ts[t], 1, (int64_t[]){32}) ? 64 : 256;
            bool ok = run_case(ts[t], nr == 3 ? 5 : 1, 61, K, true);
            if (!ok) unsetenv("RLX_VK_DQ_NR");
            CHECK(ok);
        }
    }
    unsetenv("RLX_VK_DQ_NR");
}

/* Quantized gather_rows on the GPU: an id outside [0, V) (negative included)
 * yields a row of zeros (the CPU rejects it), in-range rows decode exactly. */
TEST(dequant_gather_rows_vulkan_out_of_range) {
    VKP_REQUIRE();
    static const rlx_dtype ts[] = {RLX_Q8_0, RLX_Q4_K};
    for (size_t t = 0; t < sizeof ts / sizeof ts[0]; t++) {
        for (int i64 = 0; i64 < 2; i64++) {
            int64_t V = 5, K = 256, wdims[2] = {V, K}, nd[1] = {4};
            double *wd;
            size_t wbytes;
            void *w = ops_quantized_weights(ts[t], V, K, &wd, &wbytes);
            rlx_graph *g = rlx_graph_new();
            rlx_node wn = rlx_param(g, "w", ts[t], 2, wdims);
            rlx_node idn = rlx_input(g, "ids", i64 ? RLX_I64 : RLX_I32, 1, nd);
            rlx_output(g, "rows", rlx_gather_rows(g, wn, idn));
            int32_t id32[4] = {4, -1, 5, 1};
            int64_t id64[4] = {4, -1, 5, (int64_t)1 << 32 | 1};   /* the last is out of range in its high word */
            rlx_tensor in = {.name = "ids", .dtype = i64 ? RLX_I64 : RLX_I32, .rank = 1, .dims = {4},
                             .data = i64 ? (void *)id64 : (void *)id32, .bytes = i64 ? sizeof id64 : sizeof id32};
            rlx_compile_options o;
            vkp_options(&o);
            rlx_exec *e = NULL;
            float got[4 * 256];
            for (int i = 0; i < 4 * 256; i++) got[i] = 12345.0f;
            /* out-of-range ids fail the run (as on the CPU); a valid run then works */
            bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param(e, "w", ts[t], w, wbytes) == RLX_OK;
            rlx_status bad = ok ? rlx_exec_run(e, &in, 1) : RLX_STATUS_INTERNAL;
            int32_t ok32[4] = {4, 0, 2, 1};
            int64_t ok64[4] = {4, 0, 2, 1};
            in.data = i64 ? (void *)ok64 : (void *)ok32;
            rlx_exec_stats st = {0};
            ok = ok && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_read_output(e, "rows", got, sizeof got) == RLX_OK &&
                 rlx_exec_get_stats(e, &st) == RLX_OK;
            if (!ok) printf("    %s: %s\n", rlx_dtype_name(ts[t]), rlx_last_error());
            double want[4 * 256];
            for (int64_t k = 0; k < K; k++) {
                want[k] = wd[4 * K + k];
                want[K + k] = wd[k];
                want[2 * K + k] = wd[2 * K + k];
                want[3 * K + k] = wd[K + k];
            }
            bool good = ok && bad == RLX_STATUS_INVALID_ARGUMENT && st.host_steps == 0 &&
                        test_close_f32_f64("gather_rows after an out-of-range run", got, want, 4 * K, 1e-7);
            rlx_exec_free(e);
            rlx_graph_free(g);
            free(w);
            free(wd);
            CHECK_MSG(good, "%s %s ids: out-of-range run gave %s", rlx_dtype_name(ts[t]), i64 ? "i64" : "i32",
                      rlx_status_name(bad));
        }
    }
}

TEST(dequant_quantized_dtype_rules) {
    rlx_graph *g = rlx_graph_new();
    int64_t wd[2] = {4, 64}, bad[2] = {4, 48};
    rlx_node w = rlx_param(g, "w", RLX_Q8_0, 2, wd);
    CHECK(w >= 0);
    CHECK(rlx_add(g, w, w) == RLX_NO_NODE);   /* arithmetic cannot decode blocks */
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE && strstr(rlx_last_error(), "q8_0"));
    rlx_graph_free(g);
    g = rlx_graph_new();
    CHECK(rlx_param(g, "w", RLX_Q4_K, 2, bad) == RLX_NO_NODE);   /* 48 is not whole 256-blocks */
    CHECK(rlx_graph_status(g) == RLX_STATUS_SHAPE);
    CHECK(rlx_input(g, "x", RLX_Q8_0, 2, wd) == RLX_NO_NODE);
    rlx_graph_free(g);
    CHECK(rlx_tensor_bytes(RLX_Q8_0, 2, wd) == 4 * 2 * 34);
    CHECK(rlx_tensor_bytes(RLX_Q4_K, 2, bad) == 0);
    CHECK(rlx_dtype_is_quantized(RLX_Q6_K) && !rlx_dtype_is_quantized(RLX_F16));
}
