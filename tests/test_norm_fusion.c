/*
 * test_norm_fusion.c — rms_norm fused into the quantized projections that
 * consume it (passes/fuse.c: rms_dequant_matmul, rms_dequant_swiglu), over
 * the three Llama patterns: one norm feeding the q, k, v projections (GQA
 * sizes), one feeding the SwiGLU gate/up pair, one feeding a single
 * projection (the lm head); plus all of them off one norm.
 *   - CPU fused == unfused (fuse = 0) bit for bit for Q8_0, Q4_K, Q6_K,
 *     F16 and F32 weights, M = 1, 3 and 20, with the 8-bit-x fast path and
 *     with exact_quant = 1;
 *   - against a float64 reference (norm, then the products, in double) within
 *     the documented bounds (docs/ops.md: exact paths to f32 rounding, the
 *     8-bit-x fast path about 4e-3, a SwiGLU compounding two products);
 *   - the pass fires (the report names the fused ops and no rms_norm) and
 *     leaves alone a norm that is also an output, also feeds an add or a
 *     dequant_matmul_add, a layer_norm, an rms_norm with beta, and the
 *     add_rms_norm form;
 *   - Vulkan against the CPU through vkp_compare at M = 1 and 20, fused
 *     with no host steps; Vulkan folds the norm per specialization only where
 *     its i8 matvec takes it in (decode sizes, Q8_0/Q4_K/Q6_K, a device with
 *     integer dot products: tiers dequant-i8-norm-*) and keeps it elsewhere;
 *   - the folded i8 kernel at M = 2..8 with rows whose 8-element chunks an
 *     invocation takes across row boundaries, q/k/v and a SwiGLU pair.
 */
#include "vk_parity.h"
#include "ops_common.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-5f

typedef enum pattern { P_QKV, P_SWIGLU, P_HEAD, P_ALL, N_PATTERNS } pattern;
static const char *const pattern_name[N_PATTERNS] = {"qkv", "swiglu", "head", "all"};

/* How the graph departs from the fusable pattern (P_QKV only, but T_NONE). */
typedef enum twist {
    T_NONE,
    T_OUTPUT,    /* the norm is also a graph output */
    T_ADD,       /* the norm also feeds an add */
    T_MM_ADD,    /* q's product gets a residual add: a dequant_matmul_add takes the norm */
    T_LAYER,     /* layer_norm instead of rms_norm */
    T_BETA,      /* rms_norm with beta */
    T_ADD_NORM,  /* rms_norm(x + tanh(x)), the add's one use: fused into add_rms_norm instead */
} twist;

/* The projections: q, k, v (GQA: 8 heads of 32, 2 kv heads), gate, up, head. */
enum { W_Q, W_K, W_V, W_G, W_U, W_O, N_W };
static const char *const wname[N_W] = {"wq", "wk", "wv", "wg", "wu", "wo"};
static const int64_t wrows[N_W] = {256, 64, 64, 160, 160, 300};

typedef struct weights {
    rlx_dtype dt;
    int64_t   K;
    void     *w[N_W];
    double   *wd[N_W];   /* decoded */
    size_t    bytes[N_W];
} weights;

static bool is_kquant(rlx_dtype dt) { return dt == RLX_Q4_K || dt == RLX_Q6_K; }

static void weights_make(weights *w, rlx_dtype dt) {
    w->dt = dt;
    w->K = is_kquant(dt) ? 256 : 288;   /* Q8_0 and the float types: K no multiple of 256 */
    for (int i = 0; i < N_W; i++) w->w[i] = ops_quantized_weights(dt, wrows[i], w->K, &w->wd[i], &w->bytes[i]);
}

static void weights_free(weights *w) {
    for (int i = 0; i < N_W; i++) {
        free(w->w[i]);
        free(w->wd[i]);
    }
}

static bool uses(pattern p, int i) {
    switch (p) {
    case P_QKV:    return i <= W_V;
    case P_SWIGLU: return i == W_G || i == W_U;
    case P_HEAD:   return i == W_O;
    default:       return true;
    }
}

/* The outputs of pattern p, in order: q, k, v / y (the SwiGLU) / logits. */
static int outputs_of(pattern p, const char **names) {
    static const char *const all[] = {"q", "k", "v", "y", "logits"};
    int n = 0;
    for (int i = 0; i < 5; i++)
        if ((p == P_QKV && i < 3) || (p == P_SWIGLU && i == 3) || (p == P_HEAD && i == 4) || p == P_ALL) names[n++] = all[i];
    return n;
}

static int64_t out_cols(const char *name) {
    switch (name[0]) {
    case 'q': return wrows[W_Q];
    case 'k': case 'v': return wrows[W_K];
    case 'y': return wrows[W_G];
    default:  return wrows[W_O];
    }
}

/* Pattern p over x [M, K]; weights are params (const_w: constants holding
 * w's data), gamma (and beta) params. */
static rlx_graph *build(pattern p, twist t, int64_t M, const weights *w, bool const_w) {
    rlx_graph *g = rlx_graph_new();
    int64_t K = w->K, xd[2] = {M, K}, gd[1] = {K};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), gamma = rlx_param(g, "gamma", RLX_F32, 1, gd);
    rlx_node beta = t == T_BETA ? rlx_param(g, "beta", RLX_F32, 1, gd) : RLX_NO_NODE;
    rlx_node xs = t == T_ADD_NORM ? rlx_add(g, x, rlx_tanh(g, x)) : x;
    rlx_node h = t == T_LAYER ? rlx_layer_norm(g, x, gamma, RLX_NO_NODE, EPS) : rlx_rms_norm(g, xs, gamma, beta, EPS);
    rlx_node wn[N_W];
    for (int i = 0; i < N_W; i++) {
        if (!uses(p, i)) continue;
        int64_t wdims[2] = {wrows[i], K};
        wn[i] = const_w ? rlx_constant(g, w->dt, 2, wdims, w->w[i]) : rlx_param(g, wname[i], w->dt, 2, wdims);
    }
    if (uses(p, W_Q)) {
        rlx_node q = rlx_dequant_matmul(g, h, wn[W_Q]);
        if (t == T_MM_ADD) q = rlx_add(g, q, rlx_input(g, "r", RLX_F32, 2, (int64_t[]){M, wrows[W_Q]}));
        rlx_output(g, "q", q);
        rlx_output(g, "k", rlx_dequant_matmul(g, h, wn[W_K]));
        rlx_output(g, "v", rlx_dequant_matmul(g, h, wn[W_V]));
    }
    if (uses(p, W_G))
        rlx_output(g, "y", rlx_mul(g, rlx_silu(g, rlx_dequant_matmul(g, h, wn[W_G])), rlx_dequant_matmul(g, h, wn[W_U])));
    if (uses(p, W_O)) rlx_output(g, "logits", rlx_dequant_matmul(g, h, wn[W_O]));
    if (t == T_OUTPUT) rlx_output(g, "h", h);
    if (t == T_ADD) rlx_output(g, "hx", rlx_add(g, h, x));
    return g;
}

/* Inputs of one run: x [M, K], and r for T_MM_ADD; gamma, beta the params. */
typedef struct run_data {
    int64_t M;
    float  *x, *r, *gamma, *beta;
} run_data;

static void data_make(run_data *d, int64_t M, int64_t K) {
    d->M = M;
    d->x = malloc(sizeof(float) * (size_t)(M * K));
    d->r = malloc(sizeof(float) * (size_t)(M * wrows[W_Q]));
    d->gamma = malloc(sizeof(float) * (size_t)K);
    d->beta = malloc(sizeof(float) * (size_t)K);
    test_fill_uniform_f32(d->x, M * K, -2, 3);   /* off-centre, as activations after a residual are */
    test_fill_uniform_f32(d->r, M * wrows[W_Q], -1, 1);
    test_fill_uniform_f32(d->gamma, K, 0.2, 1.8);
    test_fill_uniform_f32(d->beta, K, -0.5, 0.5);
}

static void data_free(run_data *d) {
    free(d->x);
    free(d->r);
    free(d->gamma);
    free(d->beta);
}

/* Result of one compile + run: outputs back to back, report, stats. */
typedef struct result {
    float         *out;
    int64_t        n;
    char          *report;
    rlx_exec_stats st;
} result;

static void result_free(result *r) {
    free(r->out);
    free(r->report);
    memset(r, 0, sizeof *r);
}

/* Compiles g for the CPU (fuse on or off, exact_quant = exact) and runs it once. */
static bool run_cpu(const rlx_graph *g, pattern p, twist t, const weights *w, const run_data *d, bool fuse, bool exact,
                    result *res) {
    memset(res, 0, sizeof *res);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.fuse = fuse;
    o.exact_quant = exact;
    rlx_exec *e = NULL;
    int64_t K = w->K;
    bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param_f32(e, "gamma", d->gamma, (size_t)K) == RLX_OK &&
              (t != T_BETA || rlx_exec_set_param_f32(e, "beta", d->beta, (size_t)K) == RLX_OK);
    for (int i = 0; i < N_W && ok; i++)
        if (uses(p, i)) ok = rlx_exec_set_param(e, wname[i], w->dt, w->w[i], w->bytes[i]) == RLX_OK;
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {d->M, K}, .data = d->x, .bytes = sizeof(float) * (size_t)(d->M * K)},
        {.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {d->M, wrows[W_Q]}, .data = d->r,
         .bytes = sizeof(float) * (size_t)(d->M * wrows[W_Q])},
    };
    ok = ok && rlx_exec_run(e, in, t == T_MM_ADD ? 2 : 1) == RLX_OK && rlx_exec_get_stats(e, &res->st) == RLX_OK;
    const char *names[5];
    int n_out = outputs_of(p, names);
    for (int i = 0; i < n_out; i++) res->n += d->M * out_cols(names[i]);
    res->out = malloc(sizeof(float) * (size_t)res->n);
    for (int i = 0, at = 0; i < n_out && ok; i++) {
        size_t b = sizeof(float) * (size_t)(d->M * out_cols(names[i]));
        ok = rlx_exec_read_output(e, names[i], res->out + at, b) == RLX_OK;
        at += (int)(d->M * out_cols(names[i]));
    }
    if (ok) res->report = rlx_exec_report(e);
    if (!ok) printf("    %s %s M %lld fuse %d exact %d: %s\n", pattern_name[p], rlx_dtype_name(w->dt), (long long)d->M, fuse,
                    exact, rlx_last_error());
    rlx_exec_free(e);
    return ok && res->report;
}

/* The float64 reference of pattern p's outputs (no twist), back to back. */
static double *reference(pattern p, const weights *w, const run_data *d, int64_t n_total) {
    int64_t M = d->M, K = w->K;
    double *x = malloc(sizeof(double) * (size_t)(M * K)), *gm = malloc(sizeof(double) * (size_t)K);
    double *h = malloc(sizeof(double) * (size_t)(M * K));
    for (int64_t i = 0; i < M * K; i++) x[i] = d->x[i];
    for (int64_t i = 0; i < K; i++) gm[i] = d->gamma[i];
    int64_t xd[2] = {M, K};
    ref_norm(1, x, ref_shape_make(2, xd), gm, NULL, EPS, h);
    double *want = malloc(sizeof(double) * (size_t)n_total), *at = want;
    /* h [M, K] times w [N, K] transposed */
    #define PRODUCT(dst, wi) do {                                                           \
        for (int64_t m_ = 0; m_ < M; m_++)                                                  \
            for (int64_t n_ = 0; n_ < wrows[wi]; n_++) {                                    \
                double s_ = 0;                                                              \
                for (int64_t k_ = 0; k_ < K; k_++) s_ += h[m_ * K + k_] * w->wd[wi][n_ * K + k_]; \
                (dst)[m_ * wrows[wi] + n_] = s_;                                            \
            }                                                                               \
    } while (0)
    if (uses(p, W_Q))
        for (int i = W_Q; i <= W_V; i++) {
            PRODUCT(at, i);
            at += M * wrows[i];
        }
    if (uses(p, W_G)) {
        double *u = malloc(sizeof(double) * (size_t)(M * wrows[W_U]));
        PRODUCT(at, W_G);
        PRODUCT(u, W_U);
        for (int64_t i = 0; i < M * wrows[W_G]; i++) at[i] = at[i] / (1 + exp(-at[i])) * u[i];
        at += M * wrows[W_G];
        free(u);
    }
    if (uses(p, W_O)) PRODUCT(at, W_O);
    #undef PRODUCT
    free(x);
    free(gm);
    free(h);
    return want;
}

/* Fused nodes pattern p makes: one per projection, the SwiGLU pair one. */
static int want_fused(pattern p) { return p == P_QKV ? 3 : p == P_SWIGLU ? 1 : p == P_HEAD ? 1 : 5; }

/* The report of a fused run names the fused ops and no rms_norm. */
static bool fired(pattern p, const result *r) {
    bool mm = strstr(r->report, "rms_dequant_matmul") != NULL, sw = strstr(r->report, "rms_dequant_swiglu") != NULL;
    return !strstr(r->report, "rms_norm") && mm == (p != P_SWIGLU) && sw == (p == P_SWIGLU || p == P_ALL) &&
           r->st.fused_nodes == want_fused(p);
}

/* One pattern, dtype, M and mode: fused == unfused bit for bit, the pass
 * fired, and both close to the float64 reference. */
static bool check_cpu(pattern p, const weights *w, int64_t M, bool exact) {
    run_data d;
    data_make(&d, M, w->K);
    rlx_graph *g = build(p, T_NONE, M, w, false);
    result on = {0}, off = {0};
    bool ok = rlx_graph_status(g) == RLX_OK && run_cpu(g, p, T_NONE, w, &d, true, exact, &on);
    ok = ok && run_cpu(g, p, T_NONE, w, &d, false, exact, &off);
    char what[96];
    snprintf(what, sizeof what, "%s %s M %lld%s", pattern_name[p], rlx_dtype_name(w->dt), (long long)M,
             exact ? " exact" : "");
    if (ok && memcmp(on.out, off.out, sizeof(float) * (size_t)on.n) != 0) {
        for (int64_t i = 0; i < on.n; i++)
            if (memcmp(&on.out[i], &off.out[i], 4)) {
                printf("    %s: fused [%lld] %.9g, unfused %.9g\n", what, (long long)i, on.out[i], off.out[i]);
                break;
            }
        ok = false;
    }
    if (ok && (!fired(p, &on) || off.st.fused_nodes != 0 || !strstr(off.report, "rms_norm"))) {
        printf("    %s: fused_nodes %d (unfused %d); fused report:\n%s", what, on.st.fused_nodes, off.st.fused_nodes, on.report);
        ok = false;
    }
    if (ok) {
        /* docs/ops.md: exact paths to f32 rounding; 8-bit x about 4e-3 for a
         * product (test_vk_matvec_i8.c's bounds: 8e-3, a SwiGLU 2e-2) */
        bool fast = !exact && w->dt != RLX_F16 && w->dt != RLX_F32;
        double tol = fast ? (uses(p, W_G) ? 2e-2 : 8e-3) : 2e-5;
        double *want = reference(p, w, &d, on.n);
        ok = test_close_f32_f64(what, on.out, want, on.n, tol);
        free(want);
    }
    result_free(&on);
    result_free(&off);
    rlx_graph_free(g);
    data_free(&d);
    return ok;
}

static const rlx_dtype dtypes[] = {RLX_Q8_0, RLX_Q4_K, RLX_Q6_K, RLX_F16, RLX_F32};

TEST(norm_fusion_cpu_bit_exact_and_reference) {
    static const int64_t Ms[] = {1, 3, 20};
    for (size_t t = 0; t < sizeof dtypes / sizeof dtypes[0]; t++) {
        weights w;
        weights_make(&w, dtypes[t]);
        for (int p = 0; p < N_PATTERNS; p++)
            for (size_t m = 0; m < sizeof Ms / sizeof Ms[0]; m++)
                for (int exact = 0; exact < 2; exact++)
                    CHECK_MSG(check_cpu((pattern)p, &w, Ms[m], exact), "%s %s M %lld exact %d", pattern_name[p],
                              rlx_dtype_name(dtypes[t]), (long long)Ms[m], exact);
        weights_free(&w);
    }
}

/* A norm with a use the fused ops cannot take stays a norm; the graph still
 * computes the same as unfused. */
TEST(norm_fusion_left_alone) {
    static const twist twists[] = {T_OUTPUT, T_ADD, T_MM_ADD, T_LAYER, T_BETA, T_ADD_NORM};
    static const char *const tname[] = {"output", "add", "dequant_matmul_add", "layer_norm", "beta", "add_rms_norm"};
    weights w;
    weights_make(&w, RLX_Q4_K);
    for (size_t i = 0; i < sizeof twists / sizeof twists[0]; i++) {
        run_data d;
        data_make(&d, 3, w.K);
        rlx_graph *g = build(P_QKV, twists[i], 3, &w, false);
        result on = {0}, off = {0};
        bool ok = rlx_graph_status(g) == RLX_OK && run_cpu(g, P_QKV, twists[i], &w, &d, true, false, &on) &&
                  run_cpu(g, P_QKV, twists[i], &w, &d, false, false, &off);
        CHECK_MSG(ok, "%s", tname[i]);
        if (ok) {
            const char *norm = twists[i] == T_LAYER ? "layer_norm" : twists[i] == T_ADD_NORM ? "add_rms_norm" : "rms_norm";
            CHECK_MSG(!strstr(on.report, "rms_dequant") && strstr(on.report, norm) &&
                      on.st.fused_nodes == (twists[i] == T_MM_ADD || twists[i] == T_ADD_NORM),
                      "%s: fused %d nodes:\n%s", tname[i], on.st.fused_nodes, on.report);
            CHECK_MSG(memcmp(on.out, off.out, sizeof(float) * (size_t)on.n) == 0, "%s: fused != unfused", tname[i]);
        }
        result_free(&on);
        result_free(&off);
        rlx_graph_free(g);
        data_free(&d);
    }
    weights_free(&w);
}

/* fuse = 0 in the options turns it off as RLX_NO_FUSE does. */
TEST(norm_fusion_option_off) {
    weights w;
    weights_make(&w, RLX_Q8_0);
    rlx_graph *g = build(P_HEAD, T_NONE, 1, &w, false);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.fuse = 0;
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, &o, &e));
    char *rep = rlx_exec_report(e);
    CHECK(rep && strstr(rep, "rms_norm") && !strstr(rep, "rms_dequant"));
    free(rep);
    rlx_exec_free(e);
    rlx_graph_free(g);
    weights_free(&w);
}

/* CPU <-> Vulkan on the patterns (weights as constants, so both backends see
 * the same blocks; vkp_compare sets gamma). Float weights compare tightly;
 * block-quantized ones within the 8-bit-x bound, since the two backends
 * may round x differently (one fast path, one exact), and tightly again with
 * both on their exact kernels at M = 1. */
/* One pattern, weight set and M on both backends; false (printed) on a mismatch. */
/* Whether Vulkan folds the norm: decode sizes (M <= 8), the i8 matvec's types
 * (Q8_0, Q4_K, Q6_K), a device with integer dot products, default settings
 * (the environment may override exact_quant and the i8 types). */
static bool vk_folds(rlx_dtype dt, int64_t M) {
    const char *exact = getenv("RLX_EXACT_QUANT");
    bool i8_default = !(exact && *exact && strcmp(exact, "0")) && !getenv("RLX_VK_DQ_I8");
    return M <= 8 && (dt == RLX_Q8_0 || dt == RLX_Q4_K || dt == RLX_Q5_K || dt == RLX_Q6_K) && vkp_devices_int_dot() == 1 &&
           i8_default;
}

static bool vk_case(pattern p, const weights *w, int64_t M, bool require_gpu) {
    run_data d;
    data_make(&d, M, w->K);
    rlx_graph *g = build(p, T_NONE, M, w, true);
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, w->K}, .data = d.x,
                     .bytes = sizeof(float) * (size_t)(M * w->K)};
    /* measured on lavapipe: f32 under 5e-7; block types 2.5e-7 at M = 1 (both
     * round x to 8 bits), up to 1.1e-2 at M = 20 (the GPU's exact kernel
     * against the CPU's 8-bit-x fast path) */
    double tol = w->dt == RLX_F32 ? 2e-5 : 2e-2;
    bool ok = vkp_compare(g, &in, 1, tol, require_gpu);
    if (ok && w->dt != RLX_F32 && M == 1) {   /* both exact: the normalization checked tightly */
        ok = vkp_compare_quant(g, &in, 1, 2e-5, require_gpu, 1);
        if (!ok) printf("    (both backends exact)\n");
    }
    /* Vulkan folds the norm per specialization where its i8 matvec takes it in
     * (vk_folds): decode sizes of the i8 types; elsewhere (f32 weights, M = 20:
     * a folded norm would be recomputed by each prefill projection) it stays */
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    rlx_exec_stats st = {0};
    char *rep = NULL;
    if (ok && (rlx_compile(g, &o, &e) != RLX_OK || rlx_exec_run(e, &in, 1) != RLX_OK || rlx_exec_get_stats(e, &st) != RLX_OK ||
               !(rep = rlx_exec_report(e)))) {
        printf("    vulkan: %s\n", rlx_last_error());
        ok = false;
    }
    bool folded = rep && strstr(rep, "rms_dequant") && !strstr(rep, "rms_norm");
    bool kept = rep && strstr(rep, "rms_norm") && !strstr(rep, "rms_dequant");
    bool want = vk_folds(w->dt, M);
    if (ok && (want ? !folded || st.fused_nodes < want_fused(p) : !kept)) {
        printf("    vulkan M %lld: want the norm %s (fused %d):\n%s\n", (long long)M, want ? "folded" : "kept",
               st.fused_nodes, rep);
        ok = false;
    }
    if (ok && want && (!strstr(rep, "dequant-i8-norm-") || strstr(rep, " norm\n"))) {
        printf("    vulkan: want the dequant-i8-norm tiers and no norm step:\n%s\n", rep);
        ok = false;
    }
    free(rep);
    if (!ok) printf("    %s %s M %lld\n", pattern_name[p], rlx_dtype_name(w->dt), (long long)M);
    rlx_exec_free(e);
    rlx_graph_free(g);
    data_free(&d);
    return ok;
}

TEST(norm_fusion_vk_parity) {
    VKP_REQUIRE();
    bool require_gpu = true, ok = true;   /* the fused ops run on the GPU: no host steps */
    static const rlx_dtype vdt[] = {RLX_F32, RLX_Q4_K, RLX_Q8_0};
    static const int64_t Ms[] = {1, 20};
    for (size_t t = 0; t < sizeof vdt / sizeof vdt[0] && ok; t++) {
        weights w;
        weights_make(&w, vdt[t]);
        for (int p = 0; p < N_PATTERNS && ok; p++)
            for (size_t m = 0; m < sizeof Ms / sizeof Ms[0] && ok; m++) ok = vk_case((pattern)p, &w, Ms[m], require_gpu);
        weights_free(&w);
    }
    CHECK(ok);
}

/* The folded i8 kernel with several x rows (M up to 8, per-row statistics)
 * and K large enough that one invocation's chunks span rows; Vulkan against
 * the CPU, and the folded tiers chosen. */
TEST(norm_fusion_vk_multirow) {
    VKP_REQUIRE();
    static const rlx_dtype dts[] = {RLX_Q4_K, RLX_Q6_K, RLX_Q8_0};
    static const int64_t Ms[] = {2, 3, 5, 8};
    bool ok = true;
    for (size_t t = 0; t < sizeof dts / sizeof dts[0] && ok; t++)
        for (size_t m = 0; m < sizeof Ms / sizeof Ms[0] && ok; m++) {
            rlx_dtype dt = dts[t];
            int64_t M = Ms[m], K = dt == RLX_Q8_0 ? 2080 : 2304;
            rlx_graph *g = rlx_graph_new();
            int64_t xd[2] = {M, K}, gd[1] = {K};
            rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd);
            float *gv = malloc(sizeof(float) * (size_t)K);
            test_fill_uniform_f32(gv, K, 0.5f, 1.5f);
            rlx_node h = rlx_rms_norm(g, x, rlx_constant(g, RLX_F32, 1, gd, gv), RLX_NO_NODE, 1e-5f);
            static const int64_t Ns[5] = {96, 32, 32, 64, 64};
            void *wb[5];
            double *wd[5];
            size_t wbytes;
            rlx_node wn[5];
            for (int i = 0; i < 5; i++) {
                wb[i] = ops_quantized_weights(dt, Ns[i], K, &wd[i], &wbytes);
                int64_t wdims[2] = {Ns[i], K};
                wn[i] = rlx_constant(g, dt, 2, wdims, wb[i]);
            }
            rlx_output(g, "q", rlx_dequant_matmul(g, h, wn[0]));
            rlx_output(g, "k", rlx_dequant_matmul(g, h, wn[1]));
            rlx_output(g, "v", rlx_dequant_matmul(g, h, wn[2]));
            rlx_output(g, "y", rlx_mul(g, rlx_silu(g, rlx_dequant_matmul(g, h, wn[3])), rlx_dequant_matmul(g, h, wn[4])));
            float *xv = malloc(sizeof(float) * (size_t)(M * K));
            test_fill_uniform_f32(xv, M * K, -2, 3);
            rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = xv,
                             .bytes = sizeof(float) * (size_t)(M * K)};
            ok = vkp_compare(g, &in, 1, 2e-2, true);
            rlx_compile_options o;
            vkp_options(&o);
            rlx_exec *e = NULL;
            char *rep = NULL;
            if (ok && vk_folds(dt, M) &&
                (rlx_compile(g, &o, &e) != RLX_OK || rlx_exec_run(e, &in, 1) != RLX_OK || !(rep = rlx_exec_report(e)) ||
                 !strstr(rep, "dequant-i8-norm-swiglu-") || strstr(rep, "rms_norm"))) {
                printf("    want the folded tiers:\n%s\n", rep ? rep : rlx_last_error());
                ok = false;
            }
            if (!ok) printf("    %s M %lld K %lld\n", rlx_dtype_name(dt), (long long)M, (long long)K);
            free(rep);
            rlx_exec_free(e);
            rlx_graph_free(g);
            for (int i = 0; i < 5; i++) {
                free(wb[i]);
                free(wd[i]);
            }
            free(gv);
            free(xv);
        }
    CHECK(ok);
}

/* A folded product the GPU does not lower runs as a host step (the CPU
 * kernel through the backend's callback), named HOST in the report, with the
 * CPU's results. RLX_VK_FORCE_HOST puts the folded ops there. */
TEST(norm_fusion_vk_folded_host_step) {
    VKP_REQUIRE();
    if (!vk_folds(RLX_Q4_K, 1)) return;   /* nothing is folded here: no folded op to run */
    weights w;
    weights_make(&w, RLX_Q4_K);
    run_data d;
    data_make(&d, 1, w.K);
    rlx_graph *g = build(P_ALL, T_NONE, 1, &w, true);
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, w.K}, .data = d.x, .bytes = sizeof(float) * (size_t)w.K};
    char *host = test_env_swap("RLX_VK_FORCE_HOST", "rms_dequant_matmul,rms_dequant_swiglu");
    bool ok = vkp_compare(g, &in, 1, 2e-2, false);
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    rlx_exec_stats st = {0};
    char *rep = NULL;
    ok = ok && rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_get_stats(e, &st) == RLX_OK &&
         (rep = rlx_exec_report(e)) != NULL && st.host_steps == want_fused(P_ALL) && strstr(rep, "rms_dequant");
    if (!ok) printf("    host steps %d, want %d:\n%s\n", st.host_steps, want_fused(P_ALL), rep ? rep : rlx_last_error());
    test_env_restore("RLX_VK_FORCE_HOST", host);
    free(rep);
    rlx_exec_free(e);
    rlx_graph_free(g);
    data_free(&d);
    weights_free(&w);
    CHECK(ok);
}
