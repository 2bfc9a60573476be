/*
 * test_qdot.c — the 8-bit-activation dot kernels of cpu/kernels/qdot.h
 * (Q8_0 Q4_0 Q4_K Q5_K Q6_K), for every ISA this CPU has plus the portable
 * reference, and their use by DEQUANT_MATMUL's decode path.
 *
 * Two references per dot, both float64 over the decoded weights:
 *   - with the decoded *quantized* activations (d * qs): the integer part is
 *     exact, so only f32 scale products and accumulation differ: 1e-5;
 *   - with the original f32 activations: the 8-bit rounding of x adds
 *     ~1/254 * (absmax/rms per block)/sqrt(3) relative error; for uniform x
 *     that is ~3.5e-3 (measured 2.7e-3..3.6e-3 here), checked at 1e-2.
 * Weights come both from quant_quantize_row and as random block bytes (every
 * code, including Q8_0's -128 and Q6_K's scale -128, must not saturate; those
 * are checked against the decoded activations only).
 */
#include "harness.h"
#include "cpu/kernels/qdot.h"
#include "io/quant.h"
#include "core/core.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t fast_types[] = {QTYPE_Q8_0, QTYPE_Q4_0, QTYPE_Q4_K, QTYPE_Q5_K, QTYPE_Q6_K};
#define N_FAST (sizeof fast_types / sizeof fast_types[0])

/* f16 fields of each type's block (byte offsets), for random block bytes. */
static void f16_fields(uint32_t qt, int *off, int *n) {
    *n = 1;
    off[0] = 0;
    if (qt == QTYPE_Q4_K || qt == QTYPE_Q5_K) { *n = 2; off[1] = 2; }
    if (qt == QTYPE_Q6_K) off[0] = 208;
}

/* Weights [N, K] of qt, from f32 (random_bytes false) or random block bytes;
 * *wd gets the decoded values. */
static uint8_t *make_w(uint32_t qt, int64_t N, int64_t K, bool random_bytes, double **wd, size_t *row_bytes) {
    const qtype_info *ti = qtype_get(qt);
    *row_bytes = (size_t)(K / ti->block_size) * ti->type_size;
    uint8_t *w = malloc(*row_bytes * (size_t)N);
    float *f = malloc(sizeof(float) * (size_t)(N * K));
    if (random_bytes) {
        for (size_t i = 0; i < *row_bytes * (size_t)N; i++) w[i] = (uint8_t)test_rand_u64();
        int off[2], nf;
        f16_fields(qt, off, &nf);
        for (int64_t b = 0; b < N * K / ti->block_size; b++)
            for (int j = 0; j < nf; j++) {
                uint16_t h = rlx_f32_to_f16((float)test_rand_uniform(-0.05, 0.05));
                memcpy(w + b * ti->type_size + off[j], &h, 2);
            }
    } else {
        test_fill_uniform_f32(f, N * K, -1, 1);
        quant_quantize_row(qt, f, w, N * K);
    }
    quant_dequantize_row(qt, w, f, N * K);
    *wd = malloc(sizeof(double) * (size_t)(N * K));
    for (int64_t i = 0; i < N * K; i++) (*wd)[i] = f[i];
    free(f);
    return w;
}

/* Decodes a quantized activation row (layout of qdot.h) and checks bsums. */
static bool decode_act(qdot_act act, const void *xq, int64_t K, double *xhat) {
    const int8_t *qs = xq;
    const float *d = (const float *)((const char *)xq + K);
    int bs = act == QDOT_ACT_Q8_32 ? 32 : 256;
    for (int64_t i = 0; i < K; i++) xhat[i] = (double)d[i / bs] * qs[i];
    if (act == QDOT_ACT_Q8_256) {
        const int16_t *sums = (const int16_t *)((const char *)xq + K + 4 * (K / 256));
        for (int64_t g = 0; g < K / 16; g++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += qs[16 * g + l];
            if (s != sums[g]) { printf("    bsums[%lld] = %d, want %d\n", (long long)g, sums[g], s); return false; }
        }
    }
    for (int64_t i = 0; i < K; i++)
        if (qs[i] < -127) { printf("    qs[%lld] = -128\n", (long long)i); return false; }
    return true;
}

/* One type, one ISA: M x rows against N weight rows. */
static bool check_type(uint32_t qt, const char *isa, int64_t M, int64_t N, int64_t K, bool random_bytes, double *worst) {
    qdot_kernel k;
    if (!qdot_find(qt, &k)) { printf("    no kernel for %s on %s\n", qtype_name(qt), isa); return false; }
    double *wd;
    size_t rb;
    uint8_t *w = make_w(qt, N, K, random_bytes, &wd, &rb);
    float *x = malloc(sizeof(float) * (size_t)K), *got = malloc(sizeof(float) * (size_t)N);
    double *xhat = malloc(sizeof(double) * (size_t)K), *want_q = malloc(sizeof(double) * (size_t)N),
           *want = malloc(sizeof(double) * (size_t)N);
    size_t ab = qdot_act_bytes(k.act, K);
    void *xq = rlx_aligned_alloc(ab);
    bool ok = ab % 64 == 0 && ab >= (size_t)K;
    for (int64_t m = 0; ok && m < M; m++) {
        test_fill_uniform_f32(x, K, -1, 1);
        if (m == 1) x[K / 2] = 9.0f;   /* an outlier: its block's other elements lose precision */
        ok = k.quantize(x, K, xq) && decode_act(k.act, xq, K, xhat);
        for (int64_t n = 0; ok && n < N; n++) {
            double a = 0, b = 0;
            for (int64_t i = 0; i < K; i++) {
                a += wd[n * K + i] * xhat[i];
                b += wd[n * K + i] * x[i];
            }
            want_q[n] = a;
            want[n] = b;
            got[n] = k.dot(K, w + (size_t)n * rb, xq);
        }
        char what[96];
        snprintf(what, sizeof what, "%s %s%s m=%lld vs decoded x", qtype_name(qt), isa, random_bytes ? " random-bytes" : "", (long long)m);
        ok = ok && test_close_f32_f64(what, got, want_q, N, 1e-5);
        snprintf(what, sizeof what, "%s %s%s m=%lld vs f32 x", qtype_name(qt), isa, random_bytes ? " random-bytes" : "", (long long)m);
        /* Against f32 x only for realistic weights (random block bytes carry large
         * correlated offsets); the outlier row (m == 1) rounds its block 9x coarser. */
        if (random_bytes) continue;
        ok = ok && test_close_f32_f64(what, got, want, N, m == 1 ? 5e-2 : 1e-2);
        double e = test_rel_error_f32_f64(got, want, N);
        if (m != 1 && e > *worst) *worst = e;
    }
    rlx_aligned_free(xq);
    free(w); free(wd); free(x); free(got); free(xhat); free(want_q); free(want);
    return ok;
}

static const char *isas[] = {"portable", "avx2", "avx512"};

TEST(qdot_kernels_every_isa) {
    printf("    qdot auto ISA: %s\n", qdot_isa_name());
    for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
        if (qdot_force_isa(isas[i]) != 0) { printf("    %s: not available (CPU or build), skipped\n", isas[i]); continue; }
        for (size_t t = 0; t < N_FAST; t++) {
            int64_t K = qtype_get(fast_types[t])->block_size == 32 ? 32 * 7 : 256 * 3;
            double worst = 0;
            bool ok = check_type(fast_types[t], isas[i], 4, 37, K, false, &worst) &&
                      check_type(fast_types[t], isas[i], 2, 37, K, true, &worst);
            if (ok && i == 0) printf("    %s: rel error vs exact f32 x (uniform rows) up to %.2g\n", qtype_name(fast_types[t]), worst);
            if (!ok) qdot_force_isa(NULL);
            CHECK_MSG(ok, "%s %s", qtype_name(fast_types[t]), isas[i]);
        }
    }
    qdot_force_isa(NULL);
}

/* Every ISA against the portable reference on the same quantized x, over
 * block counts that hit each unrolled loop and tail (Q4_0's AVX-512 kernel
 * takes 4, then 2 blocks, then 1): the integer sums are exact everywhere, so
 * only the order of the f32 scale additions differs (1e-5). Also which ISA
 * each type's kernel reports: AVX-512 lacks some types and keeps AVX2's. */
TEST(qdot_isas_agree_with_portable) {
    static const int nblocks[] = {1, 2, 3, 5, 8, 13, 64};
    for (size_t t = 0; t < N_FAST; t++) {
        uint32_t qt = fast_types[t];
        int64_t bsz = qtype_get(qt)->block_size;
        for (size_t c = 0; c < sizeof nblocks / sizeof nblocks[0]; c++) {
            int64_t K = bsz * nblocks[c], N = 19;
            if (bsz == 256 && nblocks[c] > 13) continue;
            double *wd;
            size_t rb;
            uint8_t *w = make_w(qt, N, K, c % 2 == 1, &wd, &rb);
            float *x = malloc(sizeof(float) * (size_t)K), *got = malloc(sizeof(float) * (size_t)N);
            double *ref = malloc(sizeof(double) * (size_t)N);
            test_fill_uniform_f32(x, K, -2, 2);
            qdot_kernel k;
            CHECK(qdot_force_isa("portable") == 0 && qdot_find(qt, &k));
            void *xq = rlx_aligned_alloc(qdot_act_bytes(k.act, K));
            CHECK(k.quantize(x, K, xq));
            for (int64_t n = 0; n < N; n++) ref[n] = k.dot(K, w + (size_t)n * rb, xq);
            for (size_t i = 1; i < sizeof isas / sizeof isas[0]; i++) {
                if (qdot_force_isa(isas[i]) != 0) continue;
                CHECK(qdot_find(qt, &k));
                bool own = strcmp(isas[i], "avx512") != 0 || qt == QTYPE_Q8_0 || qt == QTYPE_Q4_0 || qt == QTYPE_Q4_K || qt == QTYPE_Q6_K;
                CHECK_MSG(strcmp(k.isa, own ? isas[i] : "avx2") == 0, "%s on %s reports %s", qtype_name(qt), isas[i], k.isa);
                for (int64_t n = 0; n < N; n++) got[n] = k.dot(K, w + (size_t)n * rb, xq);
                char what[96];
                snprintf(what, sizeof what, "%s %s K=%lld vs portable", qtype_name(qt), isas[i], (long long)K);
                bool ok = test_close_f32_f64(what, got, ref, N, 1e-5);
                if (!ok) qdot_force_isa(NULL);
                CHECK_MSG(ok, "%s", what);
            }
            rlx_aligned_free(xq);
            free(w); free(wd); free(x); free(got); free(ref);
        }
    }
    qdot_force_isa(NULL);
}

/* The SIMD quantizers write exactly what the portable one does. */
TEST(qdot_activation_quantizers_agree) {
    int64_t K = 1024;
    float x[1024];
    test_fill_uniform_f32(x, K, -3, 3);
    x[5] = 0; x[300] = 1e-30f; x[301] = -40.0f;
    for (int64_t i = 512; i < 544; i++) x[i] = 0;   /* an all-zero block */
    for (int a = QDOT_ACT_Q8_32; a <= QDOT_ACT_Q8_256; a++) {
        uint32_t qt = a == QDOT_ACT_Q8_32 ? QTYPE_Q8_0 : QTYPE_Q4_K;
        size_t ab = qdot_act_bytes((qdot_act)a, K);
        uint8_t *ref = calloc(1, ab), *got = calloc(1, ab);
        qdot_kernel k;
        CHECK(qdot_force_isa("portable") == 0 && qdot_find(qt, &k) && k.quantize(x, K, ref));
        for (size_t i = 1; i < sizeof isas / sizeof isas[0]; i++) {
            if (qdot_force_isa(isas[i]) != 0) continue;
            memset(got, 0, ab);
            CHECK(qdot_find(qt, &k) && k.quantize(x, K, got));
            bool same = memcmp(ref, got, ab) == 0;
            if (!same) qdot_force_isa(NULL);
            CHECK_MSG(same, "%s act %d differs from portable", isas[i], a);
        }
        /* Inf or NaN anywhere: the quantizer says so (the caller takes the exact path) */
        float keep = x[700];
        for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++) {
            if (qdot_force_isa(isas[i]) != 0) continue;
            CHECK(qdot_find(qt, &k));
            x[700] = NAN;
            bool nan_ok = !k.quantize(x, K, got);
            x[700] = -INFINITY;
            bool inf_ok = !k.quantize(x, K, got);
            x[700] = keep;
            if (!nan_ok || !inf_ok) qdot_force_isa(NULL);
            CHECK_MSG(nan_ok && inf_ok, "%s: non-finite x not reported", isas[i]);
        }
        free(ref);
        free(got);
    }
    qdot_force_isa(NULL);
}

/* Types without a fast kernel report none; act sizes are whole cache lines. */
TEST(qdot_find_rules) {
    qdot_kernel k;
    CHECK(!qdot_find(QTYPE_F32, &k) && !qdot_find(QTYPE_Q2_K, &k) && !qdot_find(QTYPE_Q4_1, &k));
    CHECK(qdot_act_bytes(QDOT_ACT_Q8_32, 64) == 128);   /* 64 + 8 */
    CHECK(qdot_act_bytes(QDOT_ACT_Q8_256, 256) == 320); /* 256 + 4 + 32 */
    CHECK(qdot_force_isa("no-such-isa") != 0);
    CHECK(qdot_force_isa("portable") == 0 && strcmp(qdot_isa_name(), "portable") == 0);
    qdot_force_isa(NULL);
}

/* DEQUANT_MATMUL on the CPU for M = 1..4: the fast path (when this CPU has
 * one) within the 8-bit tolerance, RLX_CPU_EXACT_QUANT=1 exact, and NaN in x
 * propagating (that call takes the exact path). */
static bool graph_case(uint32_t qt, int64_t M, int64_t N, int64_t K, bool exact, bool nan) {
    rlx_dtype dt = (rlx_dtype)quant_dtype_of_type(qt);
    double *wd;
    size_t rb;
    uint8_t *w = make_w(qt, N, K, false, &wd, &rb);
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *y = malloc(sizeof(float) * (size_t)(M * N));
    test_fill_uniform_f32(x, M * K, -1, 1);
    if (nan) x[(M - 1) * K + 3] = NAN;
    double *want = calloc((size_t)(M * N), sizeof(double));
    for (int64_t m = 0; m < M; m++)
        for (int64_t n = 0; n < N; n++)
            for (int64_t i = 0; i < K; i++) want[m * N + n] += (double)x[m * K + i] * wd[n * K + i];
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {M, K}, wdims[2] = {N, K};
    rlx_output(g, "y", rlx_dequant_matmul(g, rlx_input(g, "x", RLX_F32, 2, xd), rlx_param(g, "w", dt, 2, wdims)));
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.threads = 2;
    rlx_exec *e = NULL;
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x, .bytes = sizeof(float) * (size_t)(M * K)};
    if (exact) setenv("RLX_CPU_EXACT_QUANT", "1", 1);
    bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param(e, "w", dt, w, rb * (size_t)N) == RLX_OK &&
              rlx_exec_run(e, &in, 1) == RLX_OK && rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)(M * N)) == RLX_OK;
    unsetenv("RLX_CPU_EXACT_QUANT");
    if (!ok) printf("    %s: %s\n", qtype_name(qt), rlx_last_error());
    char what[96];
    snprintf(what, sizeof what, "dequant_matmul %s M=%lld%s", qtype_name(qt), (long long)M, exact ? " exact" : "");
    if (ok && nan) {
        for (int64_t n = 0; n < N; n++) ok = ok && isnan(y[(M - 1) * N + n]);
        ok = ok && test_close_f32_f64(what, y, want, (M - 1) * N, 2e-5);   /* the rows before are exact too */
        if (!ok) printf("    %s: NaN in x did not give the exact path's result\n", what);
    } else if (ok) {
        ok = test_close_f32_f64(what, y, want, M * N, exact ? 2e-5 : 1e-2);
    }
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(w); free(wd); free(x); free(y); free(want);
    return ok;
}

TEST(qdot_dequant_matmul_decode_path) {
    for (size_t t = 0; t < N_FAST; t++) {
        int64_t K = qtype_get(fast_types[t])->block_size == 32 ? 32 * 9 : 256 * 2;
        for (int64_t M = 1; M <= 4; M++) {
            CHECK(graph_case(fast_types[t], M, 53, K, false, false));
            CHECK(graph_case(fast_types[t], M, 53, K, true, false));
        }
        CHECK(graph_case(fast_types[t], 2, 53, K, false, true));
    }
}
