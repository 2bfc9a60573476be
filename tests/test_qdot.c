/*
 * test_qdot.c — the 8-bit-activation kernels of cpu/kernels/qdot.h (dot and
 * gemm for Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q2_K Q3_K Q4_K Q5_K Q6_K), for every ISA
 * this CPU has plus the portable reference, and their use by DEQUANT_MATMUL
 * (decode M = 1, small M and prefill-sized M, several thread counts).
 *
 * Two references per result, both float64 over the decoded weights:
 *   - with the decoded *quantized* activations (d * qs): the integer part is
 *     exact, so only f32 scale products, the offset / min terms and the
 *     accumulation order differ: 1e-5 (norm-relative over the outputs);
 *   - with the original f32 activations: the 8-bit rounding of x adds
 *     ~1/254 * (absmax/rms per block)/sqrt(3) relative error; for uniform x
 *     that is ~3.5e-3 (printed per type by qdot_kernels_every_isa), checked
 *     at 1e-2.
 * Weights come both from quant_quantize_row and as random block bytes (every
 * code, including Q8_0's -128 and Q6_K's scale -128, must not saturate; those
 * are checked against the decoded activations only).
 */
#include "harness.h"
#include "ops_common.h"
#include "cpu/kernels/qdot.h"
#include "cpu/kernels/qdot_internal.h"   /* the ISA tables: which dot the dispatch picked */
#include "quant/quant.h"
#include "core/core.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const uint32_t fast_types[] = {QTYPE_Q8_0, QTYPE_Q4_0, QTYPE_Q4_1, QTYPE_Q5_0, QTYPE_Q5_1,
                                      QTYPE_Q2_K, QTYPE_Q3_K, QTYPE_Q4_K, QTYPE_Q5_K, QTYPE_Q6_K};
#define N_FAST (sizeof fast_types / sizeof fast_types[0])
static const char *isas[] = {"portable", "avx2", "avx512"};
#define N_ISAS (sizeof isas / sizeof isas[0])

/* f16 fields of each type's block (byte offsets), for random block bytes. */
static void f16_fields(uint32_t qt, int *off, int *n) {
    *n = 1;
    off[0] = 0;
    if (qt == QTYPE_Q4_K || qt == QTYPE_Q5_K || qt == QTYPE_Q4_1 || qt == QTYPE_Q5_1) { *n = 2; off[1] = 2; }
    if (qt == QTYPE_Q2_K) { *n = 2; off[0] = 80; off[1] = 82; }
    if (qt == QTYPE_Q3_K) off[0] = 108;
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

/* Decodes a quantized activation row (layout of qdot.h) and checks every
 * derived field (sums, scaled sums, the per-lane scale copies). */
static bool decode_act(qdot_act act, const void *xq, int64_t K, double *xhat) {
    const int8_t *qs = xq;
    const float *d = (const float *)((const char *)xq + K);
    int bs = act == QDOT_ACT_Q8_32 ? 32 : 256;
    for (int64_t i = 0; i < K; i++) {
        xhat[i] = (double)d[i / bs] * qs[i];
        if (qs[i] < -127) { printf("    qs[%lld] = -128\n", (long long)i); return false; }
    }
    if (act == QDOT_ACT_Q8_32) {
        const float *s = d + K / 32, *de = d + K / 16;
        for (int64_t b = 0; b < K / 32; b++) {
            int sum = 0;
            for (int l = 0; l < 32; l++) sum += qs[32 * b + l];
            if (s[b] != d[b] * (float)sum) { printf("    s[%lld] = %g, want %g\n", (long long)b, s[b], d[b] * (float)sum); return false; }
            for (int l = 0; l < 8; l++)
                if (de[8 * b + l] != d[b]) { printf("    de[%lld] != d[%lld]\n", (long long)(8 * b + l), (long long)b); return false; }
        }
    } else {
        const int16_t *sums = (const int16_t *)((const char *)xq + K + 4 * (K / 256));
        const float *gs = (const float *)(sums + K / 16);
        for (int64_t g = 0; g < K / 16; g++) {
            int s = 0;
            for (int l = 0; l < 16; l++) s += qs[16 * g + l];
            if (s != sums[g]) { printf("    bsums[%lld] = %d, want %d\n", (long long)g, sums[g], s); return false; }
            if (gs[g] != d[g / 16] * (float)s) { printf("    gs[%lld] = %g, want %g\n", (long long)g, gs[g], d[g / 16] * (float)s); return false; }
        }
        const float *gs32 = gs + K / 16;
        for (int64_t t = 0; t < K / 32; t++)
            if (gs32[t] != d[t / 8] * (float)(sums[2 * t] + sums[2 * t + 1])) { printf("    gs32[%lld] wrong\n", (long long)t); return false; }
    }
    return true;
}

/* The range of the random activations of check_type. */
static float x_lo = -1, x_hi = 1;

/* One type, one ISA: M x rows against N weight rows, through the dot
 * (use_gemm false) or qdot_gemm with an output row stride past N (the
 * padding must stay untouched). */
static bool check_type(uint32_t qt, const char *isa, int64_t M, int64_t N, int64_t K, bool random_bytes, bool use_gemm,
                       double *worst) {
    qdot_kernel k;
    if (!qdot_find(qt, &k)) { printf("    no kernel for %s on %s\n", qtype_name(qt), isa); return false; }
    double *wd;
    size_t rb;
    uint8_t *w = make_w(qt, N, K, random_bytes, &wd, &rb);
    const int64_t ldo = N + 3;
    size_t ab = qdot_act_bytes(k.act, K);
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *got = malloc(sizeof(float) * (size_t)(M * ldo));
    double *xhat = malloc(sizeof(double) * (size_t)K), *want_q = malloc(sizeof(double) * (size_t)(M * N)),
           *want = malloc(sizeof(double) * (size_t)(M * N));
    uint8_t *xq = rlx_aligned_alloc(ab * (size_t)M);
    bool ok = ab % 64 == 0 && ab >= (size_t)K;
    test_fill_uniform_f32(x, M * K, x_lo, x_hi);
    if (M > 1) x[K + K / 2] = 9.0f;   /* an outlier in row 1: its block's other elements lose precision */
    for (int64_t i = 0; i < M * ldo; i++) got[i] = -777.0f;
    for (int64_t m = 0; ok && m < M; m++) {
        ok = k.quantize(x + m * K, K, xq + (size_t)m * ab) && decode_act(k.act, xq + (size_t)m * ab, K, xhat);
        for (int64_t n = 0; ok && n < N; n++) {
            double a = 0, b = 0;
            for (int64_t i = 0; i < K; i++) {
                a += wd[n * K + i] * xhat[i];
                b += wd[n * K + i] * x[m * K + i];
            }
            want_q[m * N + n] = a;
            want[m * N + n] = b;
            if (!use_gemm) got[m * ldo + n] = k.dot(K, w + (size_t)n * rb, xq + (size_t)m * ab);
        }
    }
    if (ok && use_gemm) {
        void *scratch = rlx_aligned_alloc(qdot_gemm_scratch_bytes(K));
        qdot_gemm(&k, K, w, rb, N, xq, ab, M, got, ldo, scratch);
        rlx_aligned_free(scratch);
    }
    for (int64_t m = 0; ok && m < M; m++)
        for (int64_t n = N; n < ldo; n++)
            if (got[m * ldo + n] != -777.0f) { printf("    %s: wrote past nw at m=%lld\n", isa, (long long)m); ok = false; }
    /* per row against the decoded x; against f32 x over all rows but the outlier
     * row (a norm over few outputs is noisy), that one on its own */
    float *g = malloc(sizeof(float) * (size_t)(M * N));
    double *wf = malloc(sizeof(double) * (size_t)(M * N));
    int64_t nf = 0;
    for (int64_t m = 0; ok && m < M; m++) {
        memcpy(g + m * N, got + m * ldo, sizeof(float) * (size_t)N);
        char what[128];
        snprintf(what, sizeof what, "%s %s %s%s M=%lld m=%lld vs decoded x", qtype_name(qt), isa, use_gemm ? "gemm" : "dot",
                 random_bytes ? " random-bytes" : "", (long long)M, (long long)m);
        ok = test_close_f32_f64(what, g + m * N, want_q + m * N, N, 1e-5);
        if (m == 1 && ok && !random_bytes) {
            snprintf(what, sizeof what, "%s %s %s M=%lld outlier row vs f32 x", qtype_name(qt), isa, use_gemm ? "gemm" : "dot", (long long)M);
            ok = test_close_f32_f64(what, g + N, want + N, N, N >= 32 ? 5e-2 : 1e-1);   /* few outputs: noisier */
        }
    }
    /* Against f32 x only for realistic weights (random block bytes carry large
     * correlated offsets); the outlier row (m == 1) rounds its block 9x coarser. */
    for (int64_t m = 0; m < M; m++)
        if (m != 1)
            for (int64_t n = 0; n < N; n++) { g[nf] = got[m * ldo + n]; wf[nf++] = want[m * N + n]; }
    if (ok && !random_bytes) {
        char what[128];
        snprintf(what, sizeof what, "%s %s %s M=%lld vs f32 x", qtype_name(qt), isa, use_gemm ? "gemm" : "dot", (long long)M);
        ok = test_close_f32_f64(what, g, wf, nf, 1e-2);
        double e = test_rel_error_f32_f64(g, wf, nf);
        if (e > *worst) *worst = e;
    }
    free(wf);
    rlx_aligned_free(xq);
    free(g); free(w); free(wd); free(x); free(got); free(xhat); free(want_q); free(want);
    return ok;
}

static int64_t test_K(uint32_t qt, int blocks) { return qtype_get(qt)->block_size * blocks; }

TEST(qdot_kernels_every_isa) {
    printf("    qdot auto ISA: %s\n", qdot_isa_name());
    for (size_t i = 0; i < N_ISAS; i++) {
        if (qdot_force_isa(isas[i]) != 0) { printf("    %s: not available (CPU or build), skipped\n", isas[i]); continue; }
        for (size_t t = 0; t < N_FAST; t++) {
            int64_t K = test_K(fast_types[t], qtype_get(fast_types[t])->block_size == 32 ? 7 : 3);
            double worst = 0;
            bool ok = check_type(fast_types[t], isas[i], 4, 37, K, false, false, &worst) &&
                      check_type(fast_types[t], isas[i], 2, 37, K, true, false, &worst);
            if (ok && i == 0) printf("    %s: rel error vs exact f32 x (uniform rows) up to %.2g\n", qtype_name(fast_types[t]), worst);
            if (!ok) qdot_force_isa(NULL);
            CHECK_MSG(ok, "%s %s", qtype_name(fast_types[t]), isas[i]);
        }
    }
    qdot_force_isa(NULL);
}

/* Activations of one sign (block sums near 127 * block size): the AVX-512
 * Q8_0 / Q4_0 dots (and the AVX2 Q4_0 one) take the offset terms (128 * x,
 * 8 * x) in float from the activation's block sums instead of exactly in
 * int32, and the K-quants the
 * mins terms, so their float rounding is largest here. Block counts hit the
 * 4-block loops and both tails (15 = 3 * 4 + 2 + 1; 3 K-quant blocks = one
 * pair and the odd block of Q4_K). Checked against the decoded x at 1e-5. */
TEST(qdot_offset_terms_with_positive_activations) {
    x_lo = 0.5f;
    x_hi = 2.0f;
    for (size_t i = 0; i < N_ISAS; i++) {
        if (qdot_force_isa(isas[i]) != 0) continue;
        for (size_t t = 0; t < N_FAST; t++) {
            int64_t K = test_K(fast_types[t], qtype_get(fast_types[t])->block_size == 32 ? 15 : 3);
            double worst = 0;
            bool ok = check_type(fast_types[t], isas[i], 3, 29, K, false, false, &worst) &&
                      check_type(fast_types[t], isas[i], 2, 29, K, true, false, &worst);
            if (!ok) qdot_force_isa(NULL);
            CHECK_MSG(ok, "%s %s", qtype_name(fast_types[t]), isas[i]);
        }
    }
    x_lo = -1;
    x_hi = 1;
    qdot_force_isa(NULL);
}

/* The gemm kernels for M in {1, 2, 5, 8, 33} (full 4-row tiles and every
 * 1..3-row tail) and odd N, with block counts that hit the AVX-512 legacy
 * kernel's 16-block groups and odd tails. */
TEST(qdot_gemm_every_isa) {
    static const int64_t Ms[] = {1, 2, 5, 8, 33};
    for (size_t i = 0; i < N_ISAS; i++) {
        if (qdot_force_isa(isas[i]) != 0) continue;
        for (size_t t = 0; t < N_FAST; t++) {
            bool legacy = qtype_get(fast_types[t])->block_size == 32;
            for (size_t c = 0; c < sizeof Ms / sizeof Ms[0]; c++) {
                int64_t K = test_K(fast_types[t], legacy ? (c % 2 ? 19 : 33) : (c % 2 ? 1 : 2)), N = c % 2 ? 13 : 7;
                double worst = 0;
                bool ok = check_type(fast_types[t], isas[i], Ms[c], N, K, false, true, &worst) &&
                          check_type(fast_types[t], isas[i], Ms[c], N, K, true, true, &worst);
                if (!ok) qdot_force_isa(NULL);
                CHECK_MSG(ok, "%s %s gemm M=%lld", qtype_name(fast_types[t]), isas[i], (long long)Ms[c]);
            }
            qdot_kernel k;
            CHECK(qdot_find(fast_types[t], &k));
            /* every type has a gemm kernel of its own on the SIMD ISAs */
            CHECK_MSG(i == 0 ? strcmp(k.gemm_isa, "dots") == 0 : strcmp(k.gemm_isa, isas[i]) == 0, "%s on %s: gemm %s",
                      qtype_name(fast_types[t]), isas[i], k.gemm_isa);
        }
    }
    qdot_force_isa(NULL);
}

/* Every ISA against the portable reference on the same quantized x, over
 * block counts that hit each unrolled loop and tail (Q4_0's AVX-512 dot
 * takes 4, then 2 blocks, then 1): the integer sums are exact everywhere, so
 * only the order of the f32 scale additions differs (1e-5). Dots, row-tile
 * gemm and packed gemm. Also which ISA each type's dot reports. */
TEST(qdot_isas_agree_with_portable) {
    static const int nblocks[] = {1, 2, 3, 5, 8, 13, 17, 64};
    for (size_t t = 0; t < N_FAST; t++) {
        uint32_t qt = fast_types[t];
        int64_t bsz = qtype_get(qt)->block_size;
        for (size_t c = 0; c < sizeof nblocks / sizeof nblocks[0]; c++) {
            int64_t K = bsz * nblocks[c], N = 19, M = 15;
            if (bsz == 256 && nblocks[c] > 13) continue;
            double *wd;
            size_t rb;
            uint8_t *w = make_w(qt, N, K, c % 2 == 1, &wd, &rb);
            float *x = malloc(sizeof(float) * (size_t)(M * K)), *got = malloc(sizeof(float) * (size_t)(M * N));
            double *ref = malloc(sizeof(double) * (size_t)(M * N));
            void *scratch = rlx_aligned_alloc(qdot_gemm_scratch_bytes(K));
            test_fill_uniform_f32(x, M * K, -2, 2);
            qdot_kernel k;
            CHECK(qdot_force_isa("portable") == 0 && qdot_find(qt, &k));
            CHECK(!k.gemm && !k.gemm_packed);   /* the reference loops over its dot */
            size_t ab = qdot_act_bytes(k.act, K);
            uint8_t *xq = rlx_aligned_alloc(ab * (size_t)M);
            for (int64_t m = 0; m < M; m++) CHECK(k.quantize(x + m * K, K, xq + (size_t)m * ab));
            for (int64_t m = 0; m < M; m++)
                for (int64_t n = 0; n < N; n++) ref[m * N + n] = k.dot(K, w + (size_t)n * rb, xq + (size_t)m * ab);
            for (size_t i = 1; i < N_ISAS; i++) {
                if (qdot_force_isa(isas[i]) != 0) continue;
                CHECK(qdot_find(qt, &k));
                /* AVX-512 has hand-written dots for some types, gemm-made ones for the rest */
                CHECK_MSG(strcmp(k.isa, isas[i]) == 0, "%s on %s reports %s", qtype_name(qt), isas[i], k.isa);
                CHECK_MSG(k.gemm && (k.gemm_packed != NULL) == (strcmp(isas[i], "avx512") == 0), "%s on %s: kernels",
                          qtype_name(qt), isas[i]);
                for (int64_t n = 0; n < N; n++) got[n] = k.dot(K, w + (size_t)n * rb, xq);
                char what[96];
                snprintf(what, sizeof what, "%s %s K=%lld dot vs portable", qtype_name(qt), isas[i], (long long)K);
                bool ok = test_close_f32_f64(what, got, ref, N, 1e-5);
                /* row tiles (4 rows) and packed panels (8 rows): every tail 1..7 */
                static const int64_t mms[] = {15, 9, 6, 5, 4, 3, 2};
                for (int kind = 0; kind < 2 && ok; kind++) {
                    if (kind == 1 && !k.gemm_packed) break;
                    for (size_t im = 0; im < sizeof mms / sizeof mms[0] && ok; im++) {
                        int64_t mm = mms[im];
                        if (kind == 0) k.gemm(K, w, rb, N, xq, ab, mm, got, N);
                        else k.gemm_packed(K, w, rb, N, xq, ab, mm, got, N, scratch);
                        snprintf(what, sizeof what, "%s %s K=%lld %s M=%lld vs portable", qtype_name(qt), isas[i],
                                 (long long)K, kind ? "packed" : "gemm", (long long)mm);
                        ok = test_close_f32_f64(what, got, ref, mm * N, 1e-5);
                    }
                }
                if (!ok) qdot_force_isa(NULL);
                CHECK_MSG(ok, "%s", what);
            }
            rlx_aligned_free(scratch);
            rlx_aligned_free(xq);
            free(w); free(wd); free(x); free(got); free(ref);
        }
    }
    qdot_force_isa(NULL);
}

/* The hand-written AVX-512 Q5_K dot (decode of Q5_K_M models): the dispatch
 * picks it on AVX-512 (not the one-row gemm tile, not the AVX2 dot); against
 * float64 over one block (K = 256), the 2-block loop and the odd last block,
 * odd N, realistic and random-byte weights; and against the AVX2 dot on the
 * same quantized x (both ISAs share the AVX2 quantizer), mixed-sign and
 * one-signed x (largest mins terms), to 1e-5: only float order differs. */
TEST(qdot_q5_K_avx512_dot) {
#if defined(RLX_QDOT_HAVE_AVX512)
    if (qdot_force_isa("avx512") != 0) SKIP("no AVX-512 VNNI on this CPU");
    qdot_kernel k;
    CHECK(qdot_find(QTYPE_Q5_K, &k) && strcmp(k.isa, "avx512") == 0);
    CHECK(k.dot == rlx_qdot_avx512.dot[QD_Q5_K] && k.dot != rlx_qgemm_avx512_dots[QD_Q5_K] &&
          k.dot != rlx_qdot_avx2.dot[QD_Q5_K]);
    qdot_force_isa(NULL);   /* the automatic choice on this CPU is the same */
    CHECK(strcmp(qdot_isa_name(), "avx512") == 0 && qdot_find(QTYPE_Q5_K, &k) && k.dot == rlx_qdot_avx512.dot[QD_Q5_K]);
    CHECK(qdot_force_isa("avx512") == 0);
    static const int nblocks[] = {1, 2, 3, 4, 5, 8};
    static const int64_t Ns[] = {7, 13, 37};
    for (size_t c = 0; c < sizeof nblocks / sizeof nblocks[0]; c++) {
        int64_t K = 256 * nblocks[c], N = Ns[c % 3];
        double worst = 0;
        bool ok = check_type(QTYPE_Q5_K, "avx512", 1, N, K, false, false, &worst) &&
                  check_type(QTYPE_Q5_K, "avx512", 3, N, K, true, false, &worst);
        CHECK_MSG(ok, "Q5_K avx512 dot K=%lld N=%lld vs float64", (long long)K, (long long)N);
    }
    qdot_force_isa(NULL);
    if (qdot_force_isa("avx2") != 0) return;
    for (size_t c = 0; c < sizeof nblocks / sizeof nblocks[0]; c++) {
        int64_t K = 256 * nblocks[c], N = 2 * Ns[c % 3] + 1;
        for (int variant = 0; variant < 2; variant++) {
            double *wd;
            size_t rb;
            uint8_t *w = make_w(QTYPE_Q5_K, N, K, variant == 1, &wd, &rb);
            float *x = malloc(sizeof(float) * (size_t)K), *got = malloc(sizeof(float) * (size_t)N);
            double *ref = malloc(sizeof(double) * (size_t)N);
            test_fill_uniform_f32(x, K, variant ? 0.5f : -2.0f, 2.0f);
            qdot_kernel k2, k5;
            CHECK(qdot_force_isa("avx2") == 0 && qdot_find(QTYPE_Q5_K, &k2) && strcmp(k2.isa, "avx2") == 0);
            CHECK(qdot_force_isa("avx512") == 0 && qdot_find(QTYPE_Q5_K, &k5));
            uint8_t *xq = rlx_aligned_alloc(qdot_act_bytes(k2.act, K));
            CHECK(k2.quantize(x, K, xq));
            for (int64_t n = 0; n < N; n++) {
                ref[n] = k2.dot(K, w + (size_t)n * rb, xq);
                got[n] = k5.dot(K, w + (size_t)n * rb, xq);
            }
            char what[96];
            snprintf(what, sizeof what, "Q5_K avx512 vs avx2 dot K=%lld N=%lld%s", (long long)K, (long long)N,
                     variant ? " one-signed x, random bytes" : "");
            bool ok = test_close_f32_f64(what, got, ref, N, 1e-5);
            rlx_aligned_free(xq);
            free(w); free(wd); free(x); free(got); free(ref);
            if (!ok) qdot_force_isa(NULL);
            CHECK_MSG(ok, "%s", what);
        }
    }
    qdot_force_isa(NULL);
#else
    SKIP("not an x86-64 build");
#endif
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
        double *xhat = malloc(sizeof(double) * (size_t)K);
        qdot_kernel k;
        CHECK(qdot_force_isa("portable") == 0 && qdot_find(qt, &k) && k.quantize(x, K, ref));
        CHECK(decode_act((qdot_act)a, ref, K, xhat));
        free(xhat);
        for (size_t i = 1; i < N_ISAS; i++) {
            if (qdot_force_isa(isas[i]) != 0) continue;
            memset(got, 0, ab);
            CHECK(qdot_find(qt, &k) && k.quantize(x, K, got));
            bool same = memcmp(ref, got, ab) == 0;
            if (!same) qdot_force_isa(NULL);
            CHECK_MSG(same, "%s act %d differs from portable", isas[i], a);
        }
        /* Inf or NaN anywhere: the quantizer says so (the caller takes the exact path) */
        float keep = x[700];
        for (size_t i = 0; i < N_ISAS; i++) {
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
    CHECK(!qdot_find(QTYPE_F32, &k) && !qdot_find(QTYPE_Q8_K, &k) && !qdot_find(QTYPE_IQ4_NL, &k));
    CHECK(qdot_act_bytes(QDOT_ACT_Q8_32, 64) == 192);   /* 64 + 8 + 8 + 64 */
    CHECK(qdot_act_bytes(QDOT_ACT_Q8_256, 256) == 448); /* 256 + 4 + 32 + 64 + 32 */
    CHECK(qdot_force_isa("no-such-isa") != 0);
    CHECK(qdot_force_isa("portable") == 0 && strcmp(qdot_isa_name(), "portable") == 0);
    for (size_t t = 0; t < N_FAST; t++) CHECK(qdot_find(fast_types[t], &k) && k.dot && k.quantize);
    qdot_force_isa(NULL);
}

/* DEQUANT_MATMUL on the CPU: the fast path (when this CPU has one) within
 * the 8-bit tolerance, exact_quant exact, and NaN in x propagating
 * (that call takes the exact path for every row). */
static bool graph_case(uint32_t qt, int64_t M, int64_t N, int64_t K, int threads, bool exact, bool nan) {
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
    rlx_graph *g = ops_dequant_graph(dt, M, N, K);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.threads = threads;
    rlx_exec *e = NULL;
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x, .bytes = sizeof(float) * (size_t)(M * K)};
    bool ok = ops_run_dequant(g, &o, &e, dt, w, rb * (size_t)N, &in, y, sizeof(float) * (size_t)(M * N), exact);
    if (!ok) printf("    %s: %s\n", qtype_name(qt), rlx_last_error());
    char what[96];
    snprintf(what, sizeof what, "dequant_matmul %s M=%lld threads=%d%s", qtype_name(qt), (long long)M, threads, exact ? " exact" : "");
    if (ok && nan) {
        for (int64_t n = 0; n < N; n++) ok = ok && isnan(y[(M - 1) * N + n]);
        ok = ok && test_close_f32_f64(what, y, want, (M - 1) * N, 2e-5);   /* the rows before are exact too */
        if (!ok) printf("    %s: NaN in x did not give the exact path's result\n", what);
    } else if (ok) {
        ok = test_close_f32_f64(what, y, want, M * N, exact ? 2e-5 : 1e-2);
        /* the fast path really ran: its 8-bit activations are visible (>= 1e-4 off) */
        qdot_kernel k;
        if (ok && !exact && qdot_find(qt, &k) && test_rel_error_f32_f64(y, want, M * N) < 1e-4) {
            printf("    %s: exact result, the fast path did not run\n", what);
            ok = false;
        }
    }
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(w); free(wd); free(x); free(y); free(want);
    return ok;
}

TEST(qdot_dequant_matmul_decode_path) {
    for (size_t t = 0; t < N_FAST; t++) {
        int64_t K = test_K(fast_types[t], qtype_get(fast_types[t])->block_size == 32 ? 9 : 2);
        for (int64_t M = 1; M <= 4; M++) {
            CHECK(graph_case(fast_types[t], M, 53, K, 2, false, false));
            CHECK(graph_case(fast_types[t], M, 53, K, 2, true, false));
        }
        CHECK(graph_case(fast_types[t], 2, 53, K, 2, false, true));
    }
}

/* exact_quant's environment override: RLX_EXACT_QUANT=1 makes an exec
 * compiled with exact_quant = 0 decode exactly; a value other than 0 or 1 in
 * the option is refused, naming it. */
TEST(qdot_exact_quant_env_override_and_bad_value) {
    const uint32_t qt = QTYPE_Q8_0;
    const int64_t M = 1, N = 53, K = test_K(qt, 9);
    rlx_dtype dt = (rlx_dtype)quant_dtype_of_type(qt);
    double *wd;
    size_t rb;
    uint8_t *w = make_w(qt, N, K, false, &wd, &rb);
    float *x = malloc(sizeof(float) * (size_t)(M * K)), *y = malloc(sizeof(float) * (size_t)(M * N));
    double *want = calloc((size_t)(M * N), sizeof(double));
    test_fill_uniform_f32(x, M * K, -1, 1);
    for (int64_t n = 0; n < N; n++)
        for (int64_t i = 0; i < K; i++) want[n] += (double)x[i] * wd[n * K + i];
    rlx_graph *g = ops_dequant_graph(dt, M, N, K);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {M, K}, .data = x, .bytes = sizeof(float) * (size_t)(M * K)};
    char *saved = test_env_swap("RLX_EXACT_QUANT", "1");
    rlx_exec *e = NULL;
    bool ok = ops_run_dequant(g, &o, &e, dt, w, rb * (size_t)N, &in, y, sizeof(float) * (size_t)(M * N), false);
    test_env_restore("RLX_EXACT_QUANT", saved);
    rlx_exec_free(e);
    CHECK_MSG(ok, "%s", rlx_last_error());
    CHECK(ok && test_close_f32_f64("RLX_EXACT_QUANT=1", y, want, M * N, 2e-5));
    e = NULL;   /* and without it the fast path runs, where this CPU has one */
    ok = ops_run_dequant(g, &o, &e, dt, w, rb * (size_t)N, &in, y, sizeof(float) * (size_t)(M * N), false);
    rlx_exec_free(e);
    CHECK(ok);
    if (ok && qdot_find(qt, &(qdot_kernel){0}))
        CHECK_MSG(test_rel_error_f32_f64(y, want, M * N) >= 1e-4, "the default computed exactly: %.3g",
                  test_rel_error_f32_f64(y, want, M * N));
    o.exact_quant = 2;
    e = NULL;
    rlx_status st = rlx_compile(g, &o, &e);
    CHECK_MSG(st == RLX_STATUS_INVALID_ARGUMENT && strstr(rlx_last_error(), "exact_quant"), "exact_quant = 2: %s, '%s'",
              rlx_status_name(st), rlx_last_error());
    rlx_exec_free(e);
    rlx_graph_free(g);
    free(w); free(wd); free(x); free(y); free(want);
}

/* Prefill-sized M: the gemm paths (row tiles below packed_min_rows, packed
 * panels from there on with AVX-512), with 1, 2 and 3 threads, for every ISA
 * (the portable one loops over its dot), and N large enough for several
 * weight-row chunks per worker; NaN in the last row of a 40-row call sends
 * all of it to the exact path. */
TEST(qdot_dequant_matmul_prefill_path) {
    static const int64_t Ms[] = {5, 8, 33};
    for (size_t i = 0; i < N_ISAS; i++) {
        if (qdot_force_isa(isas[i]) != 0) continue;
        for (size_t t = 0; t < N_FAST; t++) {
            int64_t K = test_K(fast_types[t], qtype_get(fast_types[t])->block_size == 32 ? 24 : 3);
            bool ok = true;
            for (size_t c = 0; c < sizeof Ms / sizeof Ms[0] && ok; c++) ok = graph_case(fast_types[t], Ms[c], 301, K, 1 + (int)c, false, false);
            ok = ok && graph_case(fast_types[t], 33, 301, K, 2, true, false) && graph_case(fast_types[t], 40, 77, K, 2, false, true);
            if (!ok) qdot_force_isa(NULL);
            CHECK_MSG(ok, "%s on %s", qtype_name(fast_types[t]), isas[i]);
        }
    }
    qdot_force_isa(NULL);
}

/* Prefill against decode on the fast path: every x row is quantized on its
 * own, so row m of an M-row call (gemm kernels) must match the same row run
 * alone (M = 1, the dot kernels) up to f32 summation order. */
TEST(qdot_prefill_rows_equal_decode_rows) {
    if (!qdot_find(QTYPE_Q8_0, &(qdot_kernel){0})) SKIP("no fast 8-bit path on this CPU");
    const int64_t M = 11, N = 67;
    for (size_t t = 0; t < N_FAST; t++) {
        uint32_t qt = fast_types[t];
        int64_t K = test_K(qt, qtype_get(qt)->block_size == 32 ? 24 : 3);
        rlx_dtype dt = (rlx_dtype)quant_dtype_of_type(qt);
        double *wd;
        size_t rb;
        uint8_t *w = make_w(qt, N, K, false, &wd, &rb);
        float *x = malloc(sizeof(float) * (size_t)(M * K)), *y = malloc(sizeof(float) * (size_t)(M * N));
        float *y1 = malloc(sizeof(float) * (size_t)N);
        double *ref = malloc(sizeof(double) * (size_t)(M * N));
        test_fill_uniform_f32(x, M * K, -1, 1);
        bool ok = true;
        for (int pass = 0; pass < 2 && ok; pass++) {
            int64_t rows = pass == 0 ? M : 1;
            rlx_graph *g = ops_dequant_graph(dt, rows, N, K);
            rlx_compile_options o;
            rlx_compile_options_init(&o);
            o.backend = RLX_BACKEND_CPU;
            o.threads = 2;
            rlx_exec *e = NULL;
            for (int64_t m = 0; ok && m < (pass == 0 ? 1 : M); m++) {
                rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {rows, K}, .data = x + m * K,
                                 .bytes = sizeof(float) * (size_t)(rows * K)};
                ok = ops_run_dequant(g, &o, &e, dt, w, rb * (size_t)N, &in, pass == 0 ? y : y1, sizeof(float) * (size_t)(rows * N), false);
                if (pass == 1)
                    for (int64_t n = 0; n < N; n++) ref[m * N + n] = y1[n];
            }
            if (!ok) printf("    %s: %s\n", qtype_name(qt), rlx_last_error());
            rlx_exec_free(e);
            rlx_graph_free(g);
        }
        char what[64];
        snprintf(what, sizeof what, "%s prefill rows vs decode rows", qtype_name(qt));
        ok = ok && test_close_f32_f64(what, y, ref, M * N, 1e-6);
        free(w); free(wd); free(x); free(y); free(y1); free(ref);
        CHECK_MSG(ok, "%s", what);
    }
}
