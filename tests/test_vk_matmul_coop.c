/*
 * test_vk_matmul_coop.c — the cooperative-matrix matmul tier (coop_gemm.c,
 * matmul_coopmat.comp): plans of 4 and 8 subgroups (128 x 128, 64 x 64 and
 * 128 x 256 tiles), one or two shared buffers, depth 32 or 64, split-K with
 * its reduction pass, f16 operands and f32 / bf16 ones under the fast
 * precision policy (converted to f16 first, or in the kernel), both layouts
 * of b, edges in every dim, batches, bias and activation. Each case is
 * checked against a float64 product of the operands rounded as the tier
 * rounds them (f16), so the tolerance is the f32 accumulation's. On a device
 * with the tier (an NVIDIA GPU: run with RLX_TEST_VK_DEVICE=H200 there) the
 * report must name it; elsewhere (lavapipe) the same graphs run on the
 * tiled tier and are checked the same way.
 */
#include "harness.h"
#include "vk_parity.h"
#include "core/core.h"
#include "rlx.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static float urand(void) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / 16777216.0 * 2 - 1);
}

/* v rounded to f16 and back (round to nearest even; inputs are in range). */
static double via_f16(float v) { return rlx_f16_to_f32(rlx_f32_to_f16(v)); }

typedef struct coop_case {
    int64_t batch, M, K, N;
    int tb, bias;
    rlx_activation act;
    rlx_dtype dt;
    const char *plan, *splitk;   /* RLX_VK_MM_COOP, RLX_VK_MM_SPLITK or NULL */
    const char *tier_has;        /* on a coopmat device, the tier must contain this */
    int ta;                      /* a stored [batch, K, M] (RLX_MATMUL_TRANSPOSE_A) */
} coop_case;

static double act_ref(double v, rlx_activation a) {
    switch (a) {
    case RLX_ACT_RELU: return v < 0 ? 0 : v;
    case RLX_ACT_GELU: return 0.5 * v * erfc(-v / sqrt(2.0));
    case RLX_ACT_SILU: return v / (1 + exp(-v));
    case RLX_ACT_TANH: return tanh(v);
    default: return v;
    }
}

static void store(void *dst, rlx_dtype dt, size_t i, float v) {
    if (dt == RLX_F32) ((float *)dst)[i] = v;
    else if (dt == RLX_F16) ((uint16_t *)dst)[i] = rlx_f32_to_f16(v);
    else ((uint16_t *)dst)[i] = rlx_f32_to_bf16(v);
}
static float stored(rlx_dtype dt, float v) {
    return dt == RLX_F32 ? v : dt == RLX_F16 ? rlx_f16_to_f32(rlx_f32_to_f16(v)) : rlx_bf16_to_f32(rlx_f32_to_bf16(v));
}

static bool run_coop(const coop_case *k) {
    char *s1 = test_env_swap("RLX_VK_MM_COOP", k->plan), *s2 = test_env_swap("RLX_VK_MM_SPLITK", k->splitk);
    int64_t B = k->batch, M = k->M, K = k->K, N = k->N;
    int64_t ad[3] = {B, k->ta ? K : M, k->ta ? M : K}, bd[3] = {B, k->tb ? N : K, k->tb ? K : N};
    size_t na = (size_t)(B * M * K), nb = (size_t)(B * K * N);
    size_t es = rlx_dtype_size(k->dt);
    float *af = malloc(na * 4), *bf = malloc(nb * 4), *cf = malloc((size_t)N * 4);
    void *a = malloc(na * es), *b = malloc(nb * es), *bias = malloc((size_t)N * es);
    for (size_t i = 0; i < na; i++) store(a, k->dt, i, af[i] = stored(k->dt, urand()));
    for (size_t i = 0; i < nb; i++) store(b, k->dt, i, bf[i] = stored(k->dt, urand()));
    for (int64_t i = 0; i < N; i++) store(bias, k->dt, (size_t)i, cf[i] = stored(k->dt, urand()));

    rlx_graph *g = rlx_graph_new();
    rlx_node xa = rlx_input(g, "a", k->dt, 3, ad), xb = rlx_input(g, "b", k->dt, 3, bd);
    rlx_node xc = k->bias ? rlx_input(g, "bias", k->dt, 1, &N) : RLX_NO_NODE;
    unsigned flags = (k->ta ? RLX_MATMUL_TRANSPOSE_A : 0) | (k->tb ? RLX_MATMUL_TRANSPOSE_B : 0);
    rlx_node y = rlx_matmul_ex(g, xa, xb, flags, xc, k->act);
    if (k->dt != RLX_F32) y = rlx_cast(g, y, RLX_F32);
    rlx_output(g, "y", y);
    rlx_compile_options o;
    vkp_options(&o);
    o.precision = k->dt == RLX_F16 ? RLX_PRECISION_F32 : RLX_PRECISION_FAST;
    rlx_exec *e = NULL;
    bool ok = rlx_graph_status(g) == RLX_OK && rlx_compile(g, &o, &e) == RLX_OK;
    if (!ok) printf("    compile: %s\n", rlx_last_error());
    rlx_tensor in[3];
    memset(in, 0, sizeof in);
    in[0] = (rlx_tensor){.name = "a", .dtype = k->dt, .rank = 3, .data = a, .bytes = na * es};
    in[1] = (rlx_tensor){.name = "b", .dtype = k->dt, .rank = 3, .data = b, .bytes = nb * es};
    in[2] = (rlx_tensor){.name = "bias", .dtype = k->dt, .rank = 1, .data = bias, .bytes = (size_t)N * es};
    memcpy(in[0].dims, ad, sizeof ad);
    memcpy(in[1].dims, bd, sizeof bd);
    in[2].dims[0] = N;
    if (ok && rlx_exec_run(e, in, k->bias ? 3 : 2) != RLX_OK) {
        printf("    run: %s\n", rlx_last_error());
        ok = false;
    }
    rlx_tensor out;
    if (ok && rlx_exec_output(e, "y", &out) != RLX_OK) ok = false;
    if (ok) {
        /* the tier rounds operands to f16: the reference does too */
        double num = 0, den = 0;
        for (int64_t z = 0; z < B && ok; z++)
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < N; j++) {
                    double s = 0;
                    for (int64_t t = 0; t < K; t++) {
                        float av = k->ta ? af[(z * K + t) * M + i] : af[(z * M + i) * K + t];
                        float bv = k->tb ? bf[(z * N + j) * K + t] : bf[(z * K + t) * N + j];
                        s += via_f16(av) * via_f16(bv);
                    }
                    if (k->bias) s += cf[j];
                    double r = act_ref(s, k->act), v = ((const float *)out.data)[(z * M + i) * N + j];
                    if (isnan(v)) { ok = false; break; }
                    num += (r - v) * (r - v);
                    den += r * r;
                }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        double tol = k->dt == RLX_F16 || k->dt == RLX_F32 ? 2e-3 : 1e-2;   /* f16 rounding: of the f16 output, or where the device computes in f32 (no tier) of the operands */
        if (!ok || rel > tol) {
            printf("    rel error %.3g (tol %.3g)\n", rel, tol);
            ok = false;
        }
    }
    char *rep = e ? rlx_exec_report(e) : NULL;
    if (ok && vkp_device_has_coopmat() == 1 && (!rep || !strstr(rep, "coopmat-f16") || (k->tier_has && !strstr(rep, k->tier_has)))) {
        printf("    expected a coopmat tier%s%s, report:\n%s", k->tier_has ? " with " : "", k->tier_has ? k->tier_has : "",
               rep ? rep : "");
        ok = false;
    }
    if (!ok)
        printf("    case: [%lld] %lld x %lld x %lld ta %d tb %d bias %d act %d %s plan %s splitk %s\n", (long long)B,
               (long long)M, (long long)K, (long long)N, k->ta, k->tb, k->bias, (int)k->act, rlx_dtype_name(k->dt),
               k->plan ? k->plan : "rule", k->splitk ? k->splitk : "rule");
    free(rep);
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(af), free(bf), free(cf), free(a), free(b), free(bias);
    test_env_restore("RLX_VK_MM_COOP", s1);
    test_env_restore("RLX_VK_MM_SPLITK", s2);
    return ok;
}

TEST(vk_matmul_coop_plans) {
    VKP_REQUIRE();
    static const char *plans[] = {NULL, "4x4x32x2x2x2", "2x2x32x2x2x2", "4x4x32x2x4x2", "4x4x64x2x2x1", "2x2x32x2x2x1",
                                  "4x2x64x2x4x2", "2x4x64x4x2x2"};
    for (size_t p = 0; p < sizeof plans / sizeof plans[0]; p++)
        for (int tb = 0; tb < 2; tb++) {
            coop_case k = {1, 200, 152, 136, tb, 1, RLX_ACT_GELU, RLX_F16, plans[p], "1", NULL, 0};
            CHECK_MSG(run_coop(&k), "plan %s tb %d", plans[p] ? plans[p] : "rule", tb);
        }
}

TEST(vk_matmul_coop_splitk) {
    VKP_REQUIRE();
    for (int tb = 0; tb < 2; tb++) {
        coop_case k1 = {1, 128, 768, 200, tb, 1, RLX_ACT_SILU, RLX_F16, NULL, NULL, "splitk", 0};   /* the rule splits */
        CHECK(run_coop(&k1));
        coop_case k2 = {1, 40, 1000, 72, tb, 0, RLX_ACT_NONE, RLX_F16, NULL, "3", "splitk", 0};    /* ragged last split */
        CHECK(run_coop(&k2));
        coop_case k3 = {1, 70, 520, 33, tb, 1, RLX_ACT_RELU, RLX_F32, "2x2x32x2x2x2", "2", "splitk", 0};
        CHECK(run_coop(&k3));
    }
}

TEST(vk_matmul_coop_fast_dtypes) {
    VKP_REQUIRE();
    for (int tb = 0; tb < 2; tb++) {
        /* many tiles each way: operands converted to f16 first */
        coop_case k1 = {1, 520, 264, 520, tb, 1, RLX_ACT_TANH, RLX_F32, NULL, "1", "convert", 0};
        CHECK(run_coop(&k1));
        coop_case k2 = {1, 300, 136, 304, tb, 0, RLX_ACT_NONE, RLX_BF16, "2x2x32x2x2x2", "1", "convert", 0};
        CHECK(run_coop(&k2));
        /* rows that are not whole octets: converted in the kernel */
        coop_case k3 = {1, 90, 61, 77, tb, 1, RLX_ACT_NONE, RLX_F32, NULL, "1", NULL, 0};
        CHECK(run_coop(&k3));
        /* a batch (z walks it) */
        coop_case k4 = {3, 48, 64, 40, tb, 1, RLX_ACT_RELU, RLX_F16, NULL, NULL, NULL, 0};
        CHECK(run_coop(&k4));
    }
}

/* a stored [K, M] (a weight gradient's Xᵀ · dY): the kernel loads a's tile
 * k-major (TRANS_A); f16 operands, f32 ones converted first (fast policy) or
 * in the kernel (M % 8 != 0), split-K, a batch, both layouts of b. */
TEST(vk_matmul_coop_transpose_a) {
    VKP_REQUIRE();
    for (int tb = 0; tb < 2; tb++) {
        coop_case k1 = {1, 200, 152, 136, tb, 1, RLX_ACT_GELU, RLX_F16, NULL, "1", NULL, 1};
        CHECK(run_coop(&k1));
        coop_case k2 = {1, 520, 264, 520, tb, 0, RLX_ACT_NONE, RLX_F32, NULL, "1", "convert", 1};
        CHECK(run_coop(&k2));
        coop_case k3 = {1, 90, 61, 77, tb, 1, RLX_ACT_RELU, RLX_F32, NULL, "1", NULL, 1};
        CHECK(run_coop(&k3));
        coop_case k4 = {1, 96, 2048, 64, tb, 0, RLX_ACT_NONE, RLX_F16, NULL, "4", "splitk", 1};
        CHECK(run_coop(&k4));
        coop_case k5 = {3, 48, 64, 40, tb, 1, RLX_ACT_NONE, RLX_BF16, "2x2x32x2x2x2", NULL, NULL, 1};
        CHECK(run_coop(&k5));
        coop_case k6 = {1, 136, 200, 152, tb, 0, RLX_ACT_NONE, RLX_F16, "4x4x32x2x2x2", "1", NULL, 1};   /* double-buffered */
        CHECK(run_coop(&k6));
    }
}
