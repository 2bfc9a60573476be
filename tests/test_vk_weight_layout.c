/*
 * test_vk_weight_layout.c — the Vulkan backend keeps Q8_0 and Q6_K rows
 * planar on the device (src/vulkan/vk_weight_layout.c). Checks the
 * conversion itself (field placement, round trips, odd row counts), and the
 * places where planar bytes leave the device: a host step reading a planar
 * weight (RLX_VK_FORCE_HOST), a param that is also a graph output, and a
 * quantized constant, each against the CPU backend (both decoding exactly:
 * exact_quant).
 */
#include "vk_parity.h"
#ifdef RLX_HAVE_VULKAN   /* src/vulkan is built only then */
#include "quant/quant.h"
#include "vulkan/vk_weight_layout.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *quantized(rlx_dtype dt, int64_t N, int64_t K, size_t *bytes) {
    int64_t dims[2] = {N, K};
    *bytes = rlx_tensor_bytes(dt, 2, dims);
    float *f = malloc(sizeof(float) * (size_t)(N * K));
    test_fill_uniform_f32(f, N * K, -1, 1);
    void *q = malloc(*bytes);
    quant_quantize_row(quant_type_of_dtype(dt), f, q, N * K);
    free(f);
    return q;
}

TEST(vk_weight_layout_conversion) {
    /* Q8_0: a row is [qs of every block][d of every block] */
    const int64_t K = 96, N = 3;   /* 3 blocks a row, 34 bytes each */
    size_t bytes;
    uint8_t *blocks = quantized(RLX_Q8_0, N, K, &bytes);
    uint8_t *pl = malloc(bytes), *back = malloc(bytes);
    CHECK(vk_layout_is_planar(RLX_Q8_0) && vk_layout_is_planar(RLX_Q6_K) && !vk_layout_is_planar(RLX_Q4_K));
    CHECK(vk_layout_row_bytes(RLX_Q8_0, K) == 102 && vk_layout_row_bytes(RLX_Q4_K, 256) == 0);
    vk_layout_to_planar(RLX_Q8_0, K, blocks, pl, bytes);
    for (int r = 0; r < N; r++)
        for (int b = 0; b < 3; b++) {
            const uint8_t *blk = blocks + 102 * r + 34 * b, *row = pl + 102 * r;
            CHECK(memcmp(row + 32 * b, blk + 2, 32) == 0);   /* quants */
            CHECK(memcmp(row + K + 2 * b, blk, 2) == 0);     /* scale */
        }
    memcpy(back, pl, bytes);
    CHECK(vk_layout_from_planar_in_place(RLX_Q8_0, K, back, bytes) == RLX_OK);
    CHECK(memcmp(back, blocks, bytes) == 0);
    free(blocks), free(pl), free(back);

    /* Q6_K: [ql][qh][scales][d]; two blocks a row */
    const int64_t K6 = 512, N6 = 2;
    blocks = quantized(RLX_Q6_K, N6, K6, &bytes);
    pl = malloc(bytes), back = malloc(bytes);
    CHECK(bytes == 2 * 420 && vk_layout_row_bytes(RLX_Q6_K, K6) == 420);
    vk_layout_to_planar(RLX_Q6_K, K6, blocks, pl, bytes);
    for (int r = 0; r < N6; r++)
        for (int b = 0; b < 2; b++) {
            const uint8_t *blk = blocks + 420 * r + 210 * b, *row = pl + 420 * r;
            CHECK(memcmp(row + 128 * b, blk, 128) == 0);
            CHECK(memcmp(row + K6 / 2 + 64 * b, blk + 128, 64) == 0);
            CHECK(memcmp(row + 3 * K6 / 4 + 16 * b, blk + 192, 16) == 0);
            CHECK(memcmp(row + 13 * K6 / 16 + 2 * b, blk + 208, 2) == 0);
        }
    memcpy(back, pl, bytes);
    CHECK(vk_layout_from_planar_in_place(RLX_Q6_K, K6, back, bytes) == RLX_OK);
    CHECK(memcmp(back, blocks, bytes) == 0);
    free(blocks), free(pl), free(back);

    /* other types are left alone */
    uint8_t a[16] = {1, 2, 3}, b[16] = {0};
    vk_layout_to_planar(RLX_Q4_K, 256, a, b, sizeof a);
    CHECK(b[0] == 0);
    CHECK(vk_layout_from_planar_in_place(RLX_F32, 4, a, sizeof a) == RLX_OK && a[0] == 1);
}

/* y = x · wᵀ and e = gather_rows(w, ids), with w a param or a constant (also
 * an output, under two names), on the CPU and on Vulkan; with force_host the
 * two ops run as host steps of the Vulkan program. */
static bool layout_case(rlx_dtype dt, int64_t N, int64_t K, bool as_const, bool force_host) {
    size_t bytes;
    void *w = quantized(dt, N, K, &bytes);
    float *x = malloc(sizeof(float) * (size_t)(2 * K));
    test_fill_uniform_f32(x, 2 * K, -1, 1);
    int32_t ids[3] = {(int32_t)N - 1, 0, (int32_t)(N / 2)};
    int64_t wd[2] = {N, K}, xd[2] = {2, K}, idd[1] = {3};
    rlx_graph *g = rlx_graph_new();
    rlx_node wn = as_const ? rlx_constant(g, dt, 2, wd, w) : rlx_param(g, "w", dt, 2, wd);
    rlx_node xn = rlx_input(g, "x", RLX_F32, 2, xd), in = rlx_input(g, "ids", RLX_I32, 1, idd);
    rlx_output(g, "y", rlx_dequant_matmul(g, xn, wn));
    rlx_output(g, "e", rlx_gather_rows(g, wn, in));
    rlx_output(g, "w_out", wn);
    rlx_output(g, "w_again", wn);   /* one node, two outputs: converted back once */
    rlx_tensor inputs[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {2, K}, .data = x, .bytes = sizeof(float) * (size_t)(2 * K)},
        {.name = "ids", .dtype = RLX_I32, .rank = 1, .dims = {3}, .data = ids, .bytes = sizeof ids}};
    char *host = test_env_swap("RLX_VK_FORCE_HOST", force_host ? "dequant_matmul,gather_rows" : NULL);
    rlx_exec *ec = vkp_compile_quant(g, false, 1), *ev = vkp_compile_quant(g, true, 1);
    bool ok = ec && ev && rlx_graph_status(g) == RLX_OK;
    for (int k = 0; ok && k < 2; k++) {
        rlx_exec *e = k ? ev : ec;
        ok = (as_const || rlx_exec_set_param(e, "w", dt, w, bytes) == RLX_OK) && rlx_exec_run(e, inputs, 2) == RLX_OK;
    }
    rlx_exec_stats st = {0};
    if (ok && force_host) ok = rlx_exec_get_stats(ev, &st) == RLX_OK && st.host_steps == 2;
    const char *outs[4] = {"y", "e", "w_out", "w_again"};
    for (int o = 0; ok && o < 4; o++) {
        rlx_tensor a, b;
        ok = rlx_exec_output(ec, outs[o], &a) == RLX_OK && rlx_exec_output(ev, outs[o], &b) == RLX_OK && a.bytes == b.bytes;
        if (!ok) break;
        if (o >= 2) {   /* the param or constant itself: the bytes given */
            ok = b.bytes == bytes && memcmp(b.data, w, bytes) == 0;
        } else {
            const float *fa = a.data, *fb = b.data;
            double amax = 0, dmax = 0;
            for (size_t i = 0; i < a.bytes / sizeof(float); i++) {
                amax = fmax(amax, fabs(fa[i]));
                dmax = fmax(dmax, fabs((double)fa[i] - fb[i]));
            }
            ok = dmax <= 2e-5 * amax;
        }
        if (!ok) printf("    %s N=%lld K=%lld%s%s: output %s differs\n", rlx_dtype_name(dt), (long long)N, (long long)K,
                        as_const ? " const" : "", force_host ? " host" : "", outs[o]);
    }
    if (!ok) printf("    %s\n", rlx_last_error());
    test_env_restore("RLX_VK_FORCE_HOST", host);
    rlx_exec_free(ec);
    rlx_exec_free(ev);
    rlx_graph_free(g);
    free(x);
    free(w);
    return ok;
}

TEST(vk_weight_layout_leaves_the_device) {
    VKP_REQUIRE();
    const rlx_dtype types[2] = {RLX_Q8_0, RLX_Q6_K};
    for (int t = 0; t < 2; t++) {
        int64_t K = types[t] == RLX_Q8_0 ? 96 : 512;   /* Q8_0 rows of 102 bytes: only 2-byte aligned */
        for (int c = 0; c < 4; c++) CHECK(layout_case(types[t], 5, K, c & 1, c & 2));
    }
}
#endif
