/*
 * test_vk_matmul.c — CPU <-> Vulkan parity of MATMUL and MATMUL_BIAS_ACT:
 * edge shapes (1x1x1, odd sizes, tile tails, a BERT-like 128x768x768),
 * matvec (M == 1, both weight layouts, aligned and ragged K), broadcast
 * batch dims, bias with every activation, f16/bf16 operands (weights as
 * inputs and as f16 params), K = 0, f64 falling back to a host step, and
 * transpose_a (rlx_matmul_ex: the tiled tier's TRANS_A, matvec at M == 1,
 * the cooperative-matrix tier's TRANS_A under the fast policy).
 * Sizes stay modest: lavapipe is a slow software GPU.
 */
#include "vk_parity.h"
#include "core/core.h"
#include <stdlib.h>
#include <string.h>

typedef struct mm_case {
    int     ar, br;
    int64_t ad[4], bd[4];
    int     tb;
    int     bias;
    int     ta;     /* a is [..., K, M] (rlx_matmul_ex) */
    rlx_activation act;
    rlx_dtype dt;
} mm_case;

static void fill(void *dst, rlx_dtype dt, int64_t n, double lo, double hi) {
    for (int64_t i = 0; i < n; i++) {
        float v = (float)test_rand_uniform(lo, hi);
        if (dt == RLX_F32) ((float *)dst)[i] = v;
        else if (dt == RLX_F16) ((uint16_t *)dst)[i] = rlx_f32_to_f16(v);
        else if (dt == RLX_BF16) ((uint16_t *)dst)[i] = rlx_f32_to_bf16(v);
        else ((double *)dst)[i] = v;
    }
}

static int64_t numel(int r, const int64_t *d) {
    int64_t n = 1;
    for (int i = 0; i < r; i++) n *= d[i];
    return n;
}

static rlx_tensor mk_tensor(const char *name, rlx_dtype dt, int r, const int64_t *d) {
    rlx_tensor t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.dtype = dt;
    t.rank = r;
    memcpy(t.dims, d, sizeof(int64_t) * (size_t)r);
    t.bytes = (size_t)numel(r, d) * rlx_dtype_size(dt);
    t.data = malloc(t.bytes ? t.bytes : 1);
    fill(t.data, dt, numel(r, d), -1, 1);
    return t;
}

/* Builds y = [cast f32](matmul_bias_act(a, b, bias)) with a, b, bias as inputs and compares. */
static bool run_case(const mm_case *k, double tol) {
    int64_t N = k->tb ? k->bd[k->br - 2] : k->bd[k->br - 1];
    rlx_graph *g = rlx_graph_new();
    rlx_node a = rlx_input(g, "a", k->dt, k->ar, k->ad);
    rlx_node b = rlx_input(g, "b", k->dt, k->br, k->bd);
    rlx_node bias = k->bias ? rlx_input(g, "bias", k->dt, 1, &N) : RLX_NO_NODE;
    rlx_node y = k->ta ? rlx_matmul_ex(g, a, b, RLX_MATMUL_TRANSPOSE_A | (k->tb ? RLX_MATMUL_TRANSPOSE_B : 0u), bias, k->act)
                 : (k->bias || k->act != RLX_ACT_NONE) ? rlx_matmul_bias_act(g, a, b, k->tb, bias, k->act)
                                                       : rlx_matmul(g, a, b, k->tb);
    /* f16/bf16 outputs would be compared bitwise: compare them as f32 */
    if (k->dt == RLX_F16 || k->dt == RLX_BF16) y = rlx_cast(g, y, RLX_F32);
    rlx_output(g, "y", y);
    rlx_tensor in[3];
    in[0] = mk_tensor("a", k->dt, k->ar, k->ad);
    in[1] = mk_tensor("b", k->dt, k->br, k->bd);
    in[2] = mk_tensor("bias", k->dt, 1, &N);
    bool ok = rlx_graph_status(g) == RLX_OK;
    if (!ok) printf("    graph: %s\n", rlx_last_error());
    if (ok) ok = vkp_compare(g, in, k->bias ? 3 : 2, tol, true);
    if (!ok) {
        printf("    case: a [");
        for (int i = 0; i < k->ar; i++) printf("%s%lld", i ? "," : "", (long long)k->ad[i]);
        printf("] b [");
        for (int i = 0; i < k->br; i++) printf("%s%lld", i ? "," : "", (long long)k->bd[i]);
        printf("] transpose_a %d transpose_b %d bias %d act %d dtype %s\n", k->ta, k->tb, k->bias, (int)k->act,
               rlx_dtype_name(k->dt));
    }
    for (int i = 0; i < 3; i++) free(in[i].data);
    rlx_graph_free(g);
    return ok;
}

static bool run_2d_ta(int64_t M, int64_t K, int64_t N, int tb, int bias, rlx_activation act, rlx_dtype dt, double tol);

/* 2-D case a [M,K] x b [K,N] (or [N,K]). */
static bool run_2d(int64_t M, int64_t K, int64_t N, int tb, int bias, rlx_activation act, rlx_dtype dt, double tol) {
    mm_case k = {.ar = 2, .br = 2, .ad = {M, K}, .tb = tb, .bias = bias, .act = act, .dt = dt};
    k.bd[0] = tb ? N : K;
    k.bd[1] = tb ? K : N;
    return run_case(&k, tol);
}

TEST(vk_matmul_edge_shapes) {
    VKP_REQUIRE();
    static const int64_t s[][3] = {
        {1, 1, 1}, {2, 1, 3}, {3, 7, 5}, {17, 33, 65}, {16, 16, 16}, {64, 64, 64},
        {65, 17, 129}, {130, 9, 66}, {7, 64, 4}, {33, 130, 31},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (int tb = 0; tb < 2; tb++)
            CHECK_MSG(run_2d(s[i][0], s[i][1], s[i][2], tb, 0, RLX_ACT_NONE, RLX_F32, 1e-5), "M %lld K %lld N %lld tb %d",
                      (long long)s[i][0], (long long)s[i][1], (long long)s[i][2], tb);
}

TEST(vk_matmul_bert_like) {
    VKP_REQUIRE();
    /* the linear layers of a BERT-base block at sequence length 128 */
    CHECK(run_2d(128, 768, 768, 1, 1, RLX_ACT_NONE, RLX_F32, 2e-5));
    CHECK(run_2d(128, 768, 256, 0, 1, RLX_ACT_GELU, RLX_F32, 2e-5));
}

TEST(vk_matmul_matvec) {
    VKP_REQUIRE();
    static const int64_t s[][2] = {{1, 1}, {37, 19}, {256, 300}, {64, 129}, {768, 96}, {5, 200}};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (int tb = 0; tb < 2; tb++)
            CHECK_MSG(run_2d(1, s[i][0], s[i][1], tb, 0, RLX_ACT_NONE, RLX_F32, 1e-5), "K %lld N %lld tb %d",
                      (long long)s[i][0], (long long)s[i][1], tb);
    CHECK(run_2d(1, 64, 50, 1, 1, RLX_ACT_SILU, RLX_F32, 1e-5));
    CHECK(run_2d(1, 63, 50, 0, 1, RLX_ACT_GELU, RLX_F32, 1e-5));
}

TEST(vk_matmul_batch_broadcast) {
    VKP_REQUIRE();
    for (int tb = 0; tb < 2; tb++) {
        /* [2,3,M,K] x [K,N]: folds into one taller GEMM */
        mm_case k1 = {.ar = 4, .br = 2, .ad = {2, 3, 5, 7}, .bd = {7, 9}, .tb = tb, .dt = RLX_F32};
        if (tb) k1.bd[0] = 9, k1.bd[1] = 7;
        CHECK(run_case(&k1, 1e-5));
        /* [3,1,M,K] x [1,4,K,N]: both broadcast */
        mm_case k2 = {.ar = 4, .br = 4, .ad = {3, 1, 6, 10}, .bd = {1, 4, 10, 11}, .tb = tb, .dt = RLX_F32};
        if (tb) k2.bd[2] = 11, k2.bd[3] = 10;
        CHECK(run_case(&k2, 1e-5));
        /* [M,K] x [4,K,N]: a broadcast over b's batch, ranks differ */
        mm_case k3 = {.ar = 2, .br = 3, .ad = {5, 12}, .bd = {4, 12, 8}, .tb = tb, .dt = RLX_F32};
        if (tb) k3.bd[1] = 8, k3.bd[2] = 12;
        CHECK(run_case(&k3, 1e-5));
        /* [2,3,4,M,K] x [3,1,K,N]: three batch dims */
        mm_case k4 = {.ar = 4, .br = 4, .ad = {2, 3, 4, 9}, .bd = {2, 3, 9, 5}, .tb = tb, .dt = RLX_F32};
        if (tb) k4.bd[2] = 5, k4.bd[3] = 9;
        CHECK(run_case(&k4, 1e-5));
        /* batched matvec: [4,1,K] x [4,K,N] (attention-score shape) */
        mm_case k5 = {.ar = 3, .br = 3, .ad = {4, 1, 32}, .bd = {4, 32, 20}, .tb = tb, .dt = RLX_F32};
        if (tb) k5.bd[1] = 20, k5.bd[2] = 32;
        CHECK(run_case(&k5, 1e-5));
        /* [2,1,K] x [K,N]: a dense batch of single rows folds to M = 2 */
        mm_case k6 = {.ar = 3, .br = 2, .ad = {2, 1, 16}, .bd = {16, 24}, .tb = tb, .dt = RLX_F32};
        if (tb) k6.bd[0] = 24, k6.bd[1] = 16;
        CHECK(run_case(&k6, 1e-5));
    }
    /* [2,1,M,K] x [1,5,K,N]: outer product of batches */
    mm_case k7 = {.ar = 4, .br = 4, .ad = {2, 1, 3, 4}, .bd = {1, 5, 4, 6}, .tb = 0, .dt = RLX_F32};
    CHECK(run_case(&k7, 1e-5));
}

TEST(vk_matmul_bias_activations) {
    VKP_REQUIRE();
    for (int act = RLX_ACT_NONE; act <= RLX_ACT_TANH; act++) {
        CHECK_MSG(run_2d(33, 40, 29, act % 2, 1, (rlx_activation)act, RLX_F32, 1e-5), "act %d", act);
        CHECK_MSG(run_2d(20, 16, 36, 1, 0, (rlx_activation)act, RLX_F32, 1e-5), "act %d no bias", act);
    }
    /* activations over a wide range: large magnitudes saturate tanh/sigmoid/gelu */
    mm_case k = {.ar = 2, .br = 2, .ad = {9, 64}, .bd = {64, 12}, .tb = 0, .bias = 1, .act = RLX_ACT_GELU,
                 .dt = RLX_F32};
    CHECK(run_case(&k, 1e-5));
}

TEST(vk_matmul_f16_bf16) {
    VKP_REQUIRE();
    for (int tb = 0; tb < 2; tb++) {
        CHECK(run_2d(17, 33, 65, tb, 1, RLX_ACT_RELU, RLX_F16, 2e-3));
        CHECK(run_2d(64, 128, 64, tb, 0, RLX_ACT_NONE, RLX_F16, 2e-3));
        CHECK(run_2d(1, 96, 70, tb, 1, RLX_ACT_NONE, RLX_F16, 2e-3));
        CHECK(run_2d(1, 37, 11, tb, 0, RLX_ACT_NONE, RLX_F16, 2e-3));
        CHECK(run_2d(31, 40, 24, tb, 1, RLX_ACT_SILU, RLX_BF16, 1e-2));
        CHECK(run_2d(1, 64, 40, tb, 0, RLX_ACT_NONE, RLX_BF16, 1e-2));
    }
}

/* f16 weights as a param (the linear layer of an f16 model), f32 in and out. */
TEST(vk_matmul_f16_param) {
    VKP_REQUIRE();
    static const int64_t rows[] = {1, 24};
    for (int r = 0; r < 2; r++) {
        rlx_graph *g = rlx_graph_new();
        int64_t xd[2] = {rows[r], 64}, wd[2] = {48, 64}, bd[1] = {48};
        rlx_node x = rlx_cast(g, rlx_input(g, "x", RLX_F32, 2, xd), RLX_F16);
        rlx_node w = rlx_param(g, "w", RLX_F16, 2, wd);
        rlx_node b = rlx_param(g, "b", RLX_F16, 1, bd);
        rlx_node y = rlx_cast(g, rlx_matmul_bias_act(g, x, w, 1, b, RLX_ACT_GELU_TANH), RLX_F32);
        rlx_output(g, "y", y);
        rlx_tensor in = mk_tensor("x", RLX_F32, 2, xd);
        bool ok = vkp_compare(g, &in, 1, 2e-3, true);
        free(in.data);
        rlx_graph_free(g);
        CHECK_MSG(ok, "rows %lld", (long long)rows[r]);
    }
}

TEST(vk_matmul_k_zero) {
    VKP_REQUIRE();
    CHECK(run_2d(3, 0, 5, 0, 1, RLX_ACT_SIGMOID, RLX_F32, 1e-6));
    CHECK(run_2d(1, 0, 5, 1, 1, RLX_ACT_NONE, RLX_F32, 1e-6));
}

/* Split-K on the tiled tier (automatic on hardware devices for grids of
 * fewer tiles than units; RLX_VK_MM_SPLITK forces it anywhere): f32 partial
 * slices, then matmul_splitk.comp with bias, activation and the output dtype.
 * Splits that divide K unevenly, one split per K step, both layouts of b, a
 * transposed a, f16 storage, and K = 0. */
TEST(vk_matmul_tiled_splitk) {
    VKP_REQUIRE();
    static const char *const splits[] = {"2", "3", "7"};
    bool ok = true;
    for (size_t s = 0; s < 3 && ok; s++) {
        char *saved = test_env_swap("RLX_VK_MM_SPLITK", splits[s]);
        for (int tb = 0; tb < 2 && ok; tb++) {
            ok = run_2d(70, 200, 90, tb, 1, RLX_ACT_GELU, RLX_F32, 1e-5) &&
                 run_2d(128, 768, 96, tb, 0, RLX_ACT_NONE, RLX_F32, 1e-5) &&
                 run_2d(9, 20, 13, tb, 1, RLX_ACT_SILU, RLX_F32, 1e-5) &&    /* K < 7 steps: fewer splits */
                 run_2d_ta(33, 120, 40, tb, 1, RLX_ACT_RELU, RLX_F32, 1e-5);
            /* f16 storage takes the coopmat tier where there is one (it splits by the same knob) */
            ok = ok && run_2d(40, 96, 24, tb, 1, RLX_ACT_NONE, RLX_F16, 2e-3);
            if (!ok) printf("    RLX_VK_MM_SPLITK=%s tb %d\n", splits[s], tb);
        }
        /* the report names the tier */
        rlx_graph *g = rlx_graph_new();
        int64_t ad[2] = {64, 256}, bd[2] = {256, 48};
        rlx_output(g, "y", rlx_matmul(g, rlx_input(g, "a", RLX_F32, 2, ad), rlx_input(g, "b", RLX_F32, 2, bd), 0));
        rlx_tensor in[2] = {mk_tensor("a", RLX_F32, 2, ad), mk_tensor("b", RLX_F32, 2, bd)};
        rlx_compile_options o;
        vkp_options(&o);
        rlx_exec *e = NULL;
        char *rep = NULL;
        if (rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, in, 2) == RLX_OK) rep = rlx_exec_report(e);
        if (ok && (!rep || !strstr(rep, "tiled-f32-splitk"))) {
            printf("    RLX_VK_MM_SPLITK=%s: report\n%s", splits[s], rep ? rep : rlx_last_error());
            ok = false;
        }
        free(rep);
        rlx_exec_free(e);
        free(in[0].data);
        free(in[1].data);
        rlx_graph_free(g);
        test_env_restore("RLX_VK_MM_SPLITK", saved);
    }
    CHECK(ok);
    char *saved = test_env_swap("RLX_VK_MM_SPLITK", "4");
    CHECK(run_2d(3, 0, 5, 0, 1, RLX_ACT_SIGMOID, RLX_F32, 1e-6));   /* K = 0: no split, zeros + bias */
    test_env_restore("RLX_VK_MM_SPLITK", saved);
}

TEST(vk_matmul_f64_host_step) {
    VKP_REQUIRE();
    rlx_graph *g = rlx_graph_new();
    int64_t ad[2] = {4, 6}, bd[2] = {6, 3};
    rlx_output(g, "y", rlx_matmul(g, rlx_input(g, "a", RLX_F64, 2, ad), rlx_input(g, "b", RLX_F64, 2, bd), 0));
    rlx_tensor in[2] = {mk_tensor("a", RLX_F64, 2, ad), mk_tensor("b", RLX_F64, 2, bd)};
    bool ok = vkp_compare(g, in, 2, 1e-12, false);
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    rlx_exec_stats st;
    memset(&st, 0, sizeof st);
    if (ok && rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, in, 2) == RLX_OK) rlx_exec_get_stats(e, &st);
    rlx_exec_free(e);
    free(in[0].data);
    free(in[1].data);
    rlx_graph_free(g);
    CHECK(ok);
    CHECK_MSG(st.host_steps == 1, "host steps %d", st.host_steps);
}

/* 2-D case with a stored [K, M]. */
static bool run_2d_ta(int64_t M, int64_t K, int64_t N, int tb, int bias, rlx_activation act, rlx_dtype dt, double tol) {
    mm_case k = {.ar = 2, .br = 2, .ad = {K, M}, .tb = tb, .bias = bias, .act = act, .dt = dt, .ta = 1};
    k.bd[0] = tb ? N : K;
    k.bd[1] = tb ? K : N;
    return run_case(&k, tol);
}

TEST(vk_matmul_transpose_a) {
    VKP_REQUIRE();
    /* tile tails, M % 4 != 0 (no vector loads of a) and == 0, both b layouts */
    static const int64_t s[][3] = {
        {1, 1, 1}, {2, 1, 3}, {3, 7, 5}, {17, 33, 65}, {16, 16, 16}, {64, 64, 64},
        {65, 17, 129}, {130, 9, 66}, {4, 64, 7}, {132, 40, 20},
    };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        for (int tb = 0; tb < 2; tb++)
            CHECK_MSG(run_2d_ta(s[i][0], s[i][1], s[i][2], tb, 0, RLX_ACT_NONE, RLX_F32, 1e-5), "M %lld K %lld N %lld tb %d",
                      (long long)s[i][0], (long long)s[i][1], (long long)s[i][2], tb);
    /* M == 1 (matvec: a [K, 1] is one row in memory) */
    CHECK(run_2d_ta(1, 37, 19, 0, 0, RLX_ACT_NONE, RLX_F32, 1e-5));
    CHECK(run_2d_ta(1, 64, 50, 1, 1, RLX_ACT_SILU, RLX_F32, 1e-5));
    /* bias + activations */
    for (int act = RLX_ACT_NONE; act <= RLX_ACT_TANH; act++)
        CHECK_MSG(run_2d_ta(33, 40, 29, act % 2, 1, (rlx_activation)act, RLX_F32, 1e-5), "act %d", act);
    /* a weight gradient: X [T, Din] as a, dY [T, Dout] -> dW [Din, Dout] */
    CHECK(run_2d_ta(96, 128, 64, 0, 0, RLX_ACT_NONE, RLX_F32, 2e-5));
    /* batches: [3, K, M] x [K, N] (not folded into M), [2, 1, K, M] x [1, 3, N, K], batched M == 1 */
    mm_case k1 = {.ar = 3, .br = 2, .ad = {3, 7, 5}, .bd = {7, 9}, .dt = RLX_F32, .ta = 1};
    CHECK(run_case(&k1, 1e-5));
    mm_case k2 = {.ar = 4, .br = 4, .ad = {2, 1, 10, 6}, .bd = {1, 3, 11, 10}, .tb = 1, .dt = RLX_F32, .ta = 1};
    CHECK(run_case(&k2, 1e-5));
    mm_case k3 = {.ar = 3, .br = 3, .ad = {4, 32, 1}, .bd = {4, 32, 20}, .dt = RLX_F32, .ta = 1};
    CHECK(run_case(&k3, 1e-5));
    /* f16 / bf16 operands */
    for (int tb = 0; tb < 2; tb++) {
        CHECK(run_2d_ta(17, 33, 65, tb, 1, RLX_ACT_RELU, RLX_F16, 2e-3));
        CHECK(run_2d_ta(64, 128, 64, tb, 0, RLX_ACT_NONE, RLX_F16, 2e-3));
        CHECK(run_2d_ta(31, 40, 24, tb, 1, RLX_ACT_SILU, RLX_BF16, 1e-2));
    }
}

/* Under the fast precision a transposed a takes the cooperative-matrix tier
 * where the device has it (f16 operands: a looser bound), else the tiled f32
 * tier exactly (f32 tolerance). */
TEST(vk_matmul_transpose_a_fast_precision) {
    VKP_REQUIRE();
    rlx_graph *g = rlx_graph_new();
    int64_t ad[2] = {96, 80}, bd[2] = {96, 72};   /* a [K, M], b [K, N] */
    rlx_node y = rlx_matmul_ex(g, rlx_input(g, "a", RLX_F32, 2, ad), rlx_input(g, "b", RLX_F32, 2, bd),
                               RLX_MATMUL_TRANSPOSE_A, RLX_NO_NODE, RLX_ACT_NONE);
    rlx_output(g, "y", y);
    rlx_tensor in[2] = {mk_tensor("a", RLX_F32, 2, ad), mk_tensor("b", RLX_F32, 2, bd)};
    rlx_compile_options o;
    vkp_options(&o);
    o.precision = RLX_PRECISION_FAST;
    rlx_exec *e = NULL;
    char *rep = NULL;
    rlx_status st = rlx_compile(g, &o, &e);
    if (st == RLX_OK) st = rlx_exec_run(e, in, 2);
    if (st == RLX_OK) rep = rlx_exec_report(e);
    CHECK_MSG(st == RLX_OK, "%s", rlx_last_error());
    bool coop = vkp_device_has_coopmat() == 1;
    CHECK_MSG(rep && (coop ? strstr(rep, "coopmat-f16") != NULL : strstr(rep, "tiled-f32") && !strstr(rep, "coopmat")),
              "report:\n%s", rep ? rep : "(null)");
    free(rep);
    rlx_exec_free(e);
    CHECK(vkp_compare(g, in, 2, 1e-5, true));   /* f32 policy: the tiled tier */
    free(in[0].data);
    free(in[1].data);
    rlx_graph_free(g);
}
