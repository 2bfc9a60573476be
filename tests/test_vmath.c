/*
 * test_vmath.c — the vectorized f32 exp, gelu_tanh and gelu_tanh gradient of
 * cpu/kernels/vmath.h against float64 on every available ISA: elementwise
 * relative error over the range that matters, every tail length, the special
 * values (NaN, +-inf, overflow and underflow), and the array loops equal to
 * the element functions bit for bit (what fused epilogues and broadcast rows
 * rely on).
 */
#include "harness.h"
#include "cpu/kernels/vmath.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const isas[] = {"avx512", "avx2", "base"};

static double ref_gelu_tanh(double x) {
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

static double ref_gelu_tanh_grad(double x, double dy) {
    double u = sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x), t = tanh(u);
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * sqrt(2.0 / M_PI) * (1.0 + 3 * 0.044715 * x * x));
}

/* |got - want| within rel * |want| + abs. */
static bool close(float got, double want, double rel, double abs) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    return fabs((double)got - want) <= rel * fabs(want) + abs;
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Every ISA this CPU has: random x over [lo, hi], lengths 0..70 and one long. */
static void check_range(double lo, double hi) {
    enum { N = 4099 };
    float *x = malloc(sizeof(float) * N), *dy = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * (N + 1));
    CHECK(x && dy && y);
    test_fill_uniform_f32(x, N, lo, hi);
    test_fill_uniform_f32(dy, N, -2, 2);
    int ran = 0;
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
        if (cpu_vmath_force(isas[k]) != 0) continue;
        ran++;
        for (int64_t n = 0; n <= N; n = n < 70 ? n + 1 : (n == N ? N + 1 : N)) {
            y[n] = 12345.0f;   /* a write past n shows */
            for (int64_t i = 0; i < n; i++) y[i] = NAN;
            cpu_vexp(y, x, n);
            for (int64_t i = 0; i < n; i++)
                CHECK_MSG(close(y[i], exp((double)x[i]), 4e-7, 1e-37) && same_bits(y[i], vm_exp(x[i])),
                          "%s exp(%.9g) = %.9g, want %.9g (n %lld)", isas[k], x[i], y[i], exp((double)x[i]), (long long)n);
            cpu_vgelu_tanh(y, x, n);
            for (int64_t i = 0; i < n; i++)
                CHECK_MSG(close(y[i], ref_gelu_tanh(x[i]), 2e-6, 1e-7) && same_bits(y[i], vm_gelu_tanh(x[i])),
                          "%s gelu_tanh(%.9g) = %.9g, want %.9g", isas[k], x[i], y[i], ref_gelu_tanh(x[i]));
            cpu_vgelu_tanh_grad(y, x, dy, n);
            for (int64_t i = 0; i < n; i++)
                CHECK_MSG(close(y[i], ref_gelu_tanh_grad(x[i], dy[i]), 2e-6, 1e-7) &&
                          same_bits(y[i], vm_gelu_tanh_grad(x[i], dy[i])),
                          "%s gelu_tanh_grad(%.9g, %.9g) = %.9g, want %.9g", isas[k], x[i], dy[i], y[i],
                          ref_gelu_tanh_grad(x[i], dy[i]));
            CHECK_MSG(y[n] == 12345.0f, "%s wrote past %lld elements", isas[k], (long long)n);
        }
        /* in place */
        memcpy(y, x, sizeof(float) * N);
        cpu_vgelu_tanh(y, y, N);
        for (int64_t i = 0; i < N; i++) CHECK(same_bits(y[i], vm_gelu_tanh(x[i])));
    }
    cpu_vmath_force(NULL);
    CHECK(ran >= 1);
    free(x), free(dy), free(y);
}

TEST(vmath_exp_gelu_tanh_small_range) { check_range(-8, 8); }
TEST(vmath_exp_gelu_tanh_wide_range) { check_range(-80, 80); }

TEST(vmath_special_values) {
    const float v[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 88.0f, 88.5f, 89.0f, -87.0f, -88.0f, -104.0f,
                       1e-30f, -1e-30f, 1e30f, -1e30f, 3.0e38f, -3.0e38f};
    enum { NV = sizeof v / sizeof v[0] };
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++) {
        if (cpu_vmath_force(isas[k]) != 0) continue;
        float y[NV], g[NV], e[NV], ones[NV];
        for (int i = 0; i < NV; i++) ones[i] = 1.0f;
        cpu_vexp(e, v, NV);
        cpu_vgelu_tanh(y, v, NV);
        cpu_vgelu_tanh_grad(g, v, ones, NV);
        for (int i = 0; i < NV; i++) {
            double x = v[i], want_e = exp(x);
            if (x < -87.3) want_e = 0;   /* documented: no subnormal results */
            if (want_e > 3.4028234663852886e38) want_e = INFINITY;
            if (x > 88.3 && x < 88.72284) continue;   /* near overflow: only finite and large */
            CHECK_MSG(close(e[i], want_e, 4e-7, 0), "%s exp(%g) = %g", isas[k], x, e[i]);
        }
        CHECK(isnan(y[0]) && isnan(g[0]));
        CHECK(y[1] == INFINITY);   /* (the gradient there is inf * 0: NaN, as before) */
        CHECK(isnan(y[2]));   /* -inf * 0, as x / (1 + e^inf) gives */
        CHECK(y[3] == 0.0f && fabsf(g[3] - 0.5f) < 1e-7f);
        for (int i = 5; i < NV; i++)
            if (isfinite(v[i]))
                CHECK_MSG(close(y[i], ref_gelu_tanh(v[i]), 2e-6, 1e-30), "%s gelu_tanh(%g) = %g", isas[k], v[i], y[i]);
        CHECK(e[7] == INFINITY);
        CHECK(e[10] == 0.0f);
    }
    cpu_vmath_force(NULL);
}

TEST(vmath_force_unknown_isa) {
    CHECK(cpu_vmath_force("sse9") == -1);
    CHECK(cpu_vmath_force("base") == 0);
    CHECK(cpu_vmath_force(NULL) == 0);
}
