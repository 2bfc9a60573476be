/*
 * test_rope_yarn.c — RoPE context extension (linear and YaRN) for GGUF
 * Llama-family models:
 *   - the frequency divisors of llama_rope_scaling_plan, applied through the
 *     rope op (alone and on top of llama3 factors), against a float64 YaRN /
 *     linear rotation written here from the published definitions, random
 *     shapes, styles and positions, CPU and Vulkan;
 *   - the YaRN magnitude folded into the attention scale equals rope with
 *     mscale on cos and sin followed by plain attention (float64);
 *   - the decoder graph composes YaRN with llama3 rope_freqs and its
 *     magnitude exactly as the equivalent factors would;
 *   - tiny GGUF files with scaling keys load, change the logits, keep
 *     prefill == step-by-step decode, and agree between CPU and Vulkan;
 *     unknown scaling types and bad numbers are clean errors.
 */
#include "vk_parity.h"
#include "tiny_model.h"
#include "models/llama.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PI 3.14159265358979323846

/* ------------------------------------------------- float64 reference */

typedef struct ref_scaling {
    int    yarn;               /* 0: linear */
    double theta, factor, ext, beta_fast, beta_slow, log_mul, attn_factor;
    int    orig_ctx, R;
} ref_scaling;

/* Inverse frequency of pair i (vLLM / HF formulation of YaRN: a mask that
 * picks extrapolation for fast pairs and interpolation for slow ones). */
static double ref_inv_freq(const ref_scaling *s, int i, double freq_factor) {
    double extrap = 1.0 / pow(s->theta, 2.0 * i / s->R) / freq_factor;
    double interp = extrap / s->factor;
    if (!s->yarn && s->ext == 0) return interp;
    /* dim at which a wavelength fits b times into the original context */
    double lo = floor(s->R * log(s->orig_ctx / (s->beta_fast * 2 * PI)) / (2 * log(s->theta)));
    double hi = ceil(s->R * log(s->orig_ctx / (s->beta_slow * 2 * PI)) / (2 * log(s->theta)));
    if (lo < 0) lo = 0;
    if (hi > s->R - 1) hi = s->R - 1;
    double ramp = (i - lo) / (hi - lo > 0.001 ? hi - lo : 0.001);
    ramp = ramp < 0 ? 0 : ramp > 1 ? 1 : ramp;
    double extrap_weight = (1 - ramp) * s->ext;
    return interp * (1 - extrap_weight) + extrap * extrap_weight;
}

static double ref_mscale(const ref_scaling *s) {
    if (s->ext == 0) return s->attn_factor;
    double m = s->factor <= 1 ? 1 : 0.1 * log(s->factor) + 1;
    if (s->log_mul != 0) m /= s->factor <= 1 ? 1 : 0.1 * s->log_mul * log(s->factor) + 1;
    return m * s->attn_factor;
}

/* x [rows = BH*S][D], positions offset + s; magnitude m on cos and sin. */
static void ref_rope(const ref_scaling *s, const float *x, int BH, int S, int D, int style, int offset, const float *ff,
                     double m, double *out) {
    int R = s->R;
    for (int r = 0; r < BH * S; r++) {
        const float *row = x + (size_t)r * D;
        double *o = out + (size_t)r * D;
        for (int d = 0; d < D; d++) o[d] = row[d];
        double pos = offset + r % S;
        for (int i = 0; i < R / 2; i++) {
            double ang = pos * ref_inv_freq(s, i, ff ? ff[i] : 1.0);
            int a0 = style == RLX_ROPE_GPTJ ? 2 * i : i, a1 = style == RLX_ROPE_GPTJ ? a0 + 1 : i + R / 2;
            o[a0] = m * (row[a0] * cos(ang) - row[a1] * sin(ang));
            o[a1] = m * (row[a0] * sin(ang) + row[a1] * cos(ang));
        }
    }
}

/* hparams carrying only what llama_rope_scaling_plan reads */
static llama_hparams plan_hparams(const ref_scaling *s, int head_dim) {
    llama_hparams hp;
    memset(&hp, 0, sizeof hp);
    hp.head_dim = head_dim;
    hp.rope_theta = (float)s->theta;
    hp.rope_scaling.type = s->yarn ? LLAMA_ROPE_SCALING_YARN : LLAMA_ROPE_SCALING_LINEAR;
    hp.rope_scaling.factor = (float)s->factor;
    hp.rope_scaling.orig_ctx = s->orig_ctx;
    hp.rope_scaling.ext_factor = (float)s->ext;
    hp.rope_scaling.beta_fast = (float)s->beta_fast;
    hp.rope_scaling.beta_slow = (float)s->beta_slow;
    hp.rope_scaling.log_mul = (float)s->log_mul;
    hp.rope_scaling.attn_factor = (float)s->attn_factor;
    return hp;
}

/* Random scaling; every number is f32-representable, as GGUF stores them. */
static ref_scaling rand_scaling(int yarn, int R) {
    static const double thetas[] = {10000.0, 500000.0, 1000000.0};
    ref_scaling s;
    s.yarn = yarn;
    s.R = R;
    s.theta = thetas[test_rand_int(0, 2)];
    s.factor = (float)test_rand_uniform(1.5, 40.0);
    s.orig_ctx = (int)test_rand_int(256, 8192);
    s.ext = yarn ? (test_rand_int(0, 3) ? 1.0 : (float)test_rand_uniform(0.25, 1.0)) : 0.0;
    bool default_betas = test_rand_int(0, 1);
    s.beta_fast = default_betas ? 32.0 : (float)test_rand_uniform(8.0, 64.0);
    s.beta_slow = default_betas ? 1.0 : (float)test_rand_uniform(0.5, 2.0);
    s.log_mul = test_rand_int(0, 2) ? 0.0 : (float)test_rand_uniform(0.05, 1.0);
    s.attn_factor = test_rand_int(0, 2) ? 1.0 : (float)test_rand_uniform(0.8, 1.3);
    return s;
}

/* ------------------------------------------------ rotation vs reference */

TEST(rope_yarn_and_linear_rotation_match_reference) {
    double worst_tol = 0;
    for (int trial = 0; trial < 24; trial++) {
        int yarn = trial % 3 != 0;   /* two yarn trials per linear one */
        int style = (int)test_rand_int(0, 1);
        int D = 2 * (int)test_rand_int(2, 40), R = test_rand_int(0, 2) ? D : 2 * (int)test_rand_int(1, D / 2);
        int B = (int)test_rand_int(1, 2), H = (int)test_rand_int(1, 3), S = (int)test_rand_int(1, 7);
        bool with_ff = test_rand_int(0, 2) == 0;   /* llama3 factors as well */
        ref_scaling s = rand_scaling(yarn, R);
        llama_hparams hp = plan_hparams(&s, D);
        float div[64], ff[64];
        bool active;
        double mscale;
        float attn_scale;
        CHECK_OK(llama_rope_scaling_plan(&hp, R, div, &active, &mscale, &attn_scale));
        bool any = false;
        for (int i = 0; i < R / 2; i++) any |= div[i] != 1.0f;
        CHECK(active == any);   /* false when every pair is fast (tiny R, long original context) */
        CHECK_MSG(fabs(mscale - ref_mscale(&s)) < 1e-6 * ref_mscale(&s), "mscale %.9g, want %.9g", mscale, ref_mscale(&s));
        for (int i = 0; i < R / 2; i++) ff[i] = i < 2 ? 1.0f : (float)test_rand_uniform(1.0, 8.0);
        /* The op takes f32 factors (as GGUF's rope_freqs are): a factor that
         * is not exactly representable (ramp pairs; every pair when
         * ext_factor < 1; products with llama3 factors) is off by up to 2^-24
         * relative, twice over with the product, so the angle a of its pair
         * by 2^-23 a. Rotations keep norms, so the norm-relative error is at
         * most the largest such angle error plus the f32 rotation's own.
         * Positions go up to F * orig_ctx, capped where that bound would pass
         * 1e-4, so the tolerance stays tight enough to catch a wrong ramp. */
        double w_inexact = 0;   /* largest frequency whose factor is rounded */
        for (int i = 0; i < R / 2; i++) {
            float eff = with_ff ? ff[i] * div[i] : div[i];
            if (eff != 1.0f && !(eff == (float)s.factor && !with_ff))
                w_inexact = fmax(w_inexact, ref_inv_freq(&s, i, with_ff ? ff[i] : 1.0));
        }
        int64_t max_pos = (int64_t)(s.factor * s.orig_ctx);
        if (w_inexact > 0) max_pos = (int64_t)fmin((double)max_pos, ldexp(8e-5, 23) / w_inexact);
        int32_t off = (int32_t)test_rand_int(0, max_pos);
        double tol = 2e-5 + ldexp((off + S) * w_inexact, -23);

        rlx_graph *g = rlx_graph_new();
        int64_t xd[4] = {B, H, S, D}, one[1] = {1}, fd[1] = {R / 2};
        rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
        rlx_node o = rlx_input(g, "off", RLX_I32, 1, one);
        rlx_node f = rlx_constant(g, RLX_F32, 1, fd, div);   /* as llama_build_graph applies them */
        if (with_ff) f = rlx_mul(g, rlx_input(g, "ff", RLX_F32, 1, fd), f);
        rlx_output(g, "y", rlx_rope_scaled(g, x, o, (rlx_rope_style)style, (float)s.theta, R, f));
        CHECK_OK(rlx_graph_status(g));

        size_t n = (size_t)B * H * S * D;
        float *xv = malloc(n * sizeof *xv), *y = malloc(n * sizeof *y);
        double *want = malloc(n * sizeof *want);
        test_fill_uniform_f32(xv, (int64_t)n, -1, 1);
        rlx_tensor in[3] = {
            {.name = "x", .dtype = RLX_F32, .rank = 4, .dims = {B, H, S, D}, .data = xv, .bytes = n * sizeof *xv},
            {.name = "off", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &off, .bytes = 4},
            {.name = "ff", .dtype = RLX_F32, .rank = 1, .dims = {R / 2}, .data = ff, .bytes = sizeof(float) * (size_t)(R / 2)},
        };
        int n_in = with_ff ? 3 : 2;
        rlx_exec *e = NULL;
        rlx_status st = rlx_compile(g, NULL, &e);
        if (st == RLX_OK) st = rlx_exec_run(e, in, n_in);
        if (st == RLX_OK) st = rlx_exec_read_output(e, "y", y, n * sizeof *y);
        rlx_exec_free(e);
        ref_rope(&s, xv, B * H, S, D, style, off, with_ff ? ff : NULL, 1.0, want);
        bool ok = st == RLX_OK && test_close_f32_f64("rotation", y, want, (int64_t)n, tol);
        /* both backends round the factors the same way: no allowance for them */
        if (ok && vkp_available()) ok = vkp_compare(g, in, n_in, 2e-5, true);
        free(xv);
        free(y);
        free(want);
        rlx_graph_free(g);
        CHECK_MSG(st == RLX_OK, "run: %s", rlx_last_error());
        CHECK_MSG(ok, "trial %d: %s style %d, D %d R %d, S %d, offset %d, factor %g, orig %d, ext %g, ff %d, tol %.3g", trial,
                  yarn ? "yarn" : "linear", style, D, R, S, off, s.factor, s.orig_ctx, s.ext, with_ff, tol);
        worst_tol = fmax(worst_tol, tol);
    }
    CHECK_MSG(worst_tol < 1.2e-4, "tolerance %.3g", worst_tol);
}

/* Linear is "positions divided by the factor": rope at position p with the
 * plan's divisors equals plain rope at p / F, here with F = 2 and even p. */
TEST(rope_linear_is_position_over_factor) {
    ref_scaling s = {.yarn = 0, .theta = 10000.0, .factor = 2.0, .attn_factor = 1.0, .R = 16};
    llama_hparams hp = plan_hparams(&s, 16);
    float div[8];
    bool active;
    double m;
    float scale;
    CHECK_OK(llama_rope_scaling_plan(&hp, 16, div, &active, &m, &scale));
    for (int i = 0; i < 8; i++) CHECK(div[i] == 2.0f);
    CHECK(active && m == 1.0 && scale == 0.0f);
    float x[16 * 4];
    test_fill_uniform_f32(x, 64, -1, 1);
    float got[64], half_pos[64];
    for (int pass = 0; pass < 2; pass++) {
        rlx_graph *g = rlx_graph_new();
        int64_t xd[4] = {1, 1, 4, 16}, one[1] = {1}, fd[1] = {8};
        rlx_node xn = rlx_input(g, "x", RLX_F32, 4, xd);
        rlx_node o = rlx_input(g, "off", RLX_I32, 1, one);
        rlx_node f = pass == 0 ? rlx_constant(g, RLX_F32, 1, fd, div) : RLX_NO_NODE;
        rlx_output(g, "y", rlx_rope_scaled(g, xn, o, RLX_ROPE_NEOX, 10000.0f, 16, f));
        int32_t off = pass == 0 ? 4000 : 2000;
        rlx_tensor in[2] = {
            {.name = "x", .dtype = RLX_F32, .rank = 4, .dims = {1, 1, 4, 16}, .data = x, .bytes = sizeof x},
            {.name = "off", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &off, .bytes = 4},
        };
        rlx_exec *e;
        CHECK_OK(rlx_compile(g, NULL, &e));
        rlx_graph_free(g);
        float *dst = pass == 0 ? got : half_pos;
        CHECK_OK(rlx_exec_run(e, in, 2));
        CHECK_OK(rlx_exec_read_output(e, "y", dst, sizeof got));
        rlx_exec_free(e);
    }
    /* row s sits at off + s: row 0 is at 4000 with F = 2 and at 2000 unscaled */
    for (int d = 0; d < 16; d++) CHECK_MSG(fabsf(got[d] - half_pos[d]) < 1e-6f, "dim %d: %g vs %g", d, got[d], half_pos[d]);
}

TEST(rope_scaling_plan_edges_and_errors) {
    ref_scaling s = {.yarn = 1, .theta = 10000.0, .factor = 1.0, .ext = 1.0, .beta_fast = 32, .beta_slow = 1,
                     .attn_factor = 1.0, .orig_ctx = 4096, .R = 64};
    llama_hparams hp = plan_hparams(&s, 64);
    float div[32];
    bool active;
    double m;
    float scale;
    /* factor 1: nothing to apply */
    CHECK_OK(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale));
    CHECK(!active && m == 1.0 && scale == 0.0f);
    /* yarn factor 16: fast pairs keep their frequency, slow ones are divided by F */
    hp.rope_scaling.factor = 16.0f;
    CHECK_OK(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale));
    CHECK(active && div[0] == 1.0f && div[31] == 16.0f);
    for (int i = 1; i < 32; i++) CHECK(div[i] >= div[i - 1]);
    CHECK(fabs(m - (1 + 0.1 * log(16.0))) < 1e-12);
    CHECK(fabsf(scale - (float)(m * m / 8.0)) < 1e-7f);
    /* none ignores every other field */
    hp.rope_scaling.type = LLAMA_ROPE_SCALING_NONE;
    hp.rope_scaling.factor = -3;
    CHECK_OK(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale));
    CHECK(!active && m == 1.0 && div[5] == 1.0f);
    /* bad numbers */
    hp.rope_scaling.type = LLAMA_ROPE_SCALING_LINEAR;
    CHECK_STATUS(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale), RLX_STATUS_FORMAT);
    hp.rope_scaling.factor = NAN;
    CHECK_STATUS(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale), RLX_STATUS_FORMAT);
    hp.rope_scaling.factor = 4;
    hp.rope_scaling.attn_factor = 0;
    CHECK_STATUS(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale), RLX_STATUS_FORMAT);
    hp.rope_scaling.attn_factor = 1;
    hp.rope_scaling.type = LLAMA_ROPE_SCALING_YARN;
    hp.rope_scaling.orig_ctx = 0;
    CHECK_STATUS(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale), RLX_STATUS_FORMAT);
    hp.rope_scaling.orig_ctx = 4096;
    hp.rope_scaling.beta_slow = 0;
    CHECK_STATUS(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale), RLX_STATUS_FORMAT);
    hp.rope_scaling.beta_slow = 1;
    hp.rope_scaling.type = 7;
    CHECK_STATUS(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale), RLX_STATUS_FORMAT);
    hp.rope_scaling.type = LLAMA_ROPE_SCALING_YARN;
    /* a log multiplier so large the magnitude is not positive */
    hp.rope_scaling.log_mul = -20;
    CHECK_STATUS(llama_rope_scaling_plan(&hp, 64, div, &active, &m, &scale), RLX_STATUS_FORMAT);
}

/* --------------------------------------- magnitude folded into attention */

TEST(rope_yarn_magnitude_folds_into_attention_scale) {
    for (int trial = 0; trial < 5; trial++) {
        int D = 2 * (int)test_rand_int(4, 24), H = (int)test_rand_int(1, 3), S = (int)test_rand_int(2, 9);
        int style = (int)test_rand_int(0, 1);
        ref_scaling s = rand_scaling(1, D);
        s.factor = (float)test_rand_uniform(8.0, 40.0);   /* a magnitude worth checking */
        s.ext = 1.0;   /* llama.cpp's yarn: exact divisors at the fast pairs (see the rotation test) */
        llama_hparams hp = plan_hparams(&s, D);
        float div[48];
        bool active;
        double m;
        float scale;
        CHECK_OK(llama_rope_scaling_plan(&hp, D, div, &active, &m, &scale));
        CHECK(scale > 0);
        int32_t off = (int32_t)test_rand_int(0, 20000);

        rlx_graph *g = rlx_graph_new();
        int64_t xd[4] = {1, H, S, D}, one[1] = {1}, fd[1] = {D / 2};
        rlx_node q = rlx_input(g, "q", RLX_F32, 4, xd), k = rlx_input(g, "k", RLX_F32, 4, xd);
        rlx_node v = rlx_input(g, "v", RLX_F32, 4, xd), o = rlx_input(g, "off", RLX_I32, 1, one);
        rlx_node f = rlx_constant(g, RLX_F32, 1, fd, div);
        q = rlx_rope_scaled(g, q, o, (rlx_rope_style)style, (float)s.theta, D, f);
        k = rlx_rope_scaled(g, k, o, (rlx_rope_style)style, (float)s.theta, D, f);
        rlx_output(g, "a", rlx_attention(g, q, k, v, RLX_MASK_NONE, RLX_NO_NODE, scale));
        CHECK_OK(rlx_graph_status(g));

        size_t n = (size_t)H * S * D;
        float *qv = malloc(n * 4), *kv = malloc(n * 4), *vv = malloc(n * 4), *a = malloc(n * 4);
        double *qr = malloc(n * 8), *kr = malloc(n * 8), *want = malloc(n * 8), *plain = malloc(n * 8);
        test_fill_uniform_f32(qv, (int64_t)n, -1.5, 1.5);
        test_fill_uniform_f32(kv, (int64_t)n, -1.5, 1.5);
        test_fill_uniform_f32(vv, (int64_t)n, -1, 1);
        rlx_tensor in[4] = {
            {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, H, S, D}, .data = qv, .bytes = n * 4},
            {.name = "k", .dtype = RLX_F32, .rank = 4, .dims = {1, H, S, D}, .data = kv, .bytes = n * 4},
            {.name = "v", .dtype = RLX_F32, .rank = 4, .dims = {1, H, S, D}, .data = vv, .bytes = n * 4},
            {.name = "off", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &off, .bytes = 4},
        };
        rlx_exec *e = NULL;
        rlx_status st = rlx_compile(g, NULL, &e);
        if (st == RLX_OK) st = rlx_exec_run(e, in, 4);
        if (st == RLX_OK) st = rlx_exec_read_output(e, "a", a, n * 4);
        rlx_exec_free(e);
        /* the published definition: mscale on cos and sin, then softmax(q k^T / sqrt(D)) v;
         * and the same without mscale, which the result must NOT match */
        for (int pass = 0; pass < 2; pass++) {
            double mag = pass == 0 ? ref_mscale(&s) : 1.0;
            double *dst = pass == 0 ? want : plain;
            ref_rope(&s, qv, H, S, D, style, off, NULL, mag, qr);
            ref_rope(&s, kv, H, S, D, style, off, NULL, mag, kr);
            for (int h = 0; h < H; h++)
                for (int i = 0; i < S; i++) {
                    double sc[9], mx = -INFINITY, sum = 0;
                    for (int j = 0; j < S; j++) {
                        double dot = 0;
                        for (int d = 0; d < D; d++) dot += qr[((size_t)h * S + i) * D + d] * kr[((size_t)h * S + j) * D + d];
                        sc[j] = dot / sqrt((double)D);
                        if (sc[j] > mx) mx = sc[j];
                    }
                    for (int j = 0; j < S; j++) sum += sc[j] = exp(sc[j] - mx);
                    for (int d = 0; d < D; d++) {
                        double acc = 0;
                        for (int j = 0; j < S; j++) acc += sc[j] * vv[((size_t)h * S + j) * D + d];
                        dst[((size_t)h * S + i) * D + d] = acc / sum;
                    }
                }
        }
        bool ok = st == RLX_OK && test_close_f32_f64("attention", a, want, (int64_t)n, 5e-5);
        double err_plain = test_rel_error_f32_f64(a, plain, (int64_t)n);
        if (ok && vkp_available()) ok = vkp_compare(g, in, 4, 5e-5, true);
        free(qv); free(kv); free(vv); free(a);
        free(qr); free(kr); free(want); free(plain);
        rlx_graph_free(g);
        CHECK_MSG(st == RLX_OK, "run: %s", rlx_last_error());
        CHECK_MSG(ok, "trial %d: D %d H %d S %d factor %g mscale %g", trial, D, H, S, s.factor, m);
        CHECK_MSG(err_plain > 1e-3, "trial %d: the magnitude made no difference (%.3g)", trial, err_plain);
    }
}

/* ------------------------------------------------------ decoder graph */

static double rel_diff(const float *a, const float *b, int n) {
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i])) return INFINITY;
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += (double)b[i] * b[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}


/* Params derived from each name (the same model in every exec), except
 * rope_freqs.weight, which is given. */
static void set_weights(rlx_exec *e, const float *rope_freqs) {
    for (int i = 0; i < rlx_exec_param_count(e); i++) {
        rlx_tensor info;
        rlx_exec_param_info(e, i, &info);
        if (strncmp(info.name, "cache.", 6) == 0) continue;
        size_t n = info.bytes / 4;
        if (strcmp(info.name, "rope_freqs.weight") == 0) {
            rlx_exec_set_param_f32(e, info.name, rope_freqs, n);
            continue;
        }
        float *w = malloc(info.bytes);
        tiny_model_hash_fill(info.name, w, n, 0.5);
        rlx_exec_set_param_f32(e, info.name, w, n);
        free(w);
    }
}

enum { GT = 12, GV = 37 };

static rlx_status graph_logits(const llama_hparams *hp, const float *rope_freqs, float *logits /* [GT * GV] */) {
    rlx_graph *g;
    rlx_exec *e = NULL;
    rlx_status st = llama_build_graph(hp, 16, LLAMA_LOGITS_ALL, NULL, NULL, &g);
    if (st != RLX_OK) return st;
    st = rlx_compile(g, NULL, &e);
    rlx_graph_free(g);
    if (st != RLX_OK) return st;
    set_weights(e, rope_freqs);
    int32_t tokens[GT] = {1, 5, 36, 2, 2, 17, 9, 30, 4, 11, 23, 8}, pos = 0, len = GT;
    rlx_tensor in[3] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 1, .dims = {GT}, .data = tokens, .bytes = sizeof tokens},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
    };
    st = rlx_exec_run(e, in, 3);
    if (st == RLX_OK) st = rlx_exec_read_output(e, "logits", logits, sizeof(float) * GT * GV);
    rlx_exec_free(e);
    return st;
}

/* What llama_build_graph wires up: YaRN on top of llama3 factors ff, with
 * its magnitude, equals unscaled rope with factors ff * divisors plus a pure
 * magnitude (linear, factor 1, attn_factor = mscale). */
TEST(llama_graph_yarn_composes_with_rope_freqs_and_magnitude) {
    llama_hparams hp = {.arch = LLAMA_ARCH_LLAMA, .n_vocab = GV, .n_ctx_train = 64, .n_embd = 32, .n_layer = 2,
                        .n_head = 4, .n_head_kv = 2, .n_ff = 40, .head_dim = 8, .rms_eps = 1e-5f,
                        .rope_theta = 10000.0f, .rope_style = RLX_ROPE_GPTJ, .rope_freq_factors = true};
    /* original context 200 with head dim 8: pair 0 fast, pair 1 half way, pairs 2-3 slow */
    hp.rope_scaling = (llama_rope_scaling){.type = LLAMA_ROPE_SCALING_YARN, .factor = 6, .orig_ctx = 200,
                                           .ext_factor = 1, .beta_fast = 32, .beta_slow = 1, .attn_factor = 1};
    float ff[4] = {1.0f, 1.5f, 3.0f, 7.0f}, div[4], combined[4];
    bool active;
    double m;
    float scale;
    CHECK_OK(llama_rope_scaling_plan(&hp, 8, div, &active, &m, &scale));
    CHECK(div[0] == 1.0f && div[1] > 1.0f && div[1] < 6.0f && div[2] == 6.0f && m > 1.1);
    for (int i = 0; i < 4; i++) combined[i] = ff[i] * div[i];
    static float a[GT * GV], b[GT * GV], c[GT * GV];
    CHECK_OK(graph_logits(&hp, ff, a));
    llama_hparams eq = hp;
    eq.rope_scaling = (llama_rope_scaling){.type = LLAMA_ROPE_SCALING_LINEAR, .factor = 1, .attn_factor = (float)m};
    CHECK_OK(graph_logits(&eq, combined, b));
    double d = rel_diff(a, b, GT * GV);
    CHECK_MSG(d < 1e-5, "yarn + rope_freqs vs the equivalent factors: %.3g", d);
    /* and each part matters */
    eq.rope_scaling.attn_factor = 1;
    CHECK_OK(graph_logits(&eq, combined, c));
    CHECK_MSG(rel_diff(c, a, GT * GV) > 1e-3, "the magnitude made no difference");
    CHECK_OK(graph_logits(&hp, (const float[4]){1, 1, 1, 1}, c));
    CHECK_MSG(rel_diff(c, a, GT * GV) > 1e-3, "rope_freqs made no difference under yarn");
}

/* ---------------------------------------------------------- model level */


#define PROMPT "the cat sat on the mat and the dog is big"   /* 34 tokens */
enum { MAX_VOCAB = 512 };

/* Prefill logits of PROMPT (last token) into out; checks that step-by-step
 * decode gives the same, and returns the prompt length (0 on failure). */
static int prefill_and_decode(rlx_model *m, float *out, const char *what) {
    rlx_model_info info;
    if (rlx_model_get_info(m, &info) != RLX_OK || info.n_vocab > MAX_VOCAB) return 0;
    int32_t ids[64];
    int n = 0;
    const float *lg;
    if (rlx_model_tokenize(m, PROMPT, 1, ids, 64, &n) != RLX_OK || rlx_model_eval(m, ids, n, &lg) != RLX_OK) return 0;
    memcpy(out, lg, sizeof(float) * (size_t)info.n_vocab);
    if (rlx_model_reset(m) != RLX_OK) return 0;
    for (int i = 0; i < n; i++)
        if (rlx_model_eval(m, ids + i, 1, &lg) != RLX_OK) return 0;
    double d = rel_diff(lg, out, info.n_vocab);
    if (!(d < 1e-5)) {
        printf("    %s: prefill vs decode %.3g\n", what, d);
        return 0;
    }
    return n;
}

typedef struct scaling_case {
    const char *name, *arch, *type;
    float factor, scale_linear, attn_factor, log_mul;
    uint32_t orig_ctx;
    int rope_freqs;
    int vulkan;   /* also on Vulkan (cases that only repeat another's graph skip it: lavapipe is slow) */
} scaling_case;

static int write_case(const scaling_case *c, const char *path) {
    tiny_model_spec spec;
    tiny_model_spec_init(&spec);
    spec.arch = c->arch;
    spec.rope_freqs = c->rope_freqs;
    spec.rope_scaling_type = c->type;
    spec.rope_scaling_factor = c->factor;
    spec.rope_scale_linear = c->scale_linear;
    spec.rope_attn_factor = c->attn_factor;
    spec.yarn_log_mul = c->log_mul;
    spec.rope_orig_ctx = c->orig_ctx;
    return tiny_model_write(&spec, path);
}

TEST(model_rope_scaling_loads_changes_logits_and_backends_agree) {
    /* the prompt's positions reach 33, past a 32-token original context:
     * YaRN's ramp covers the fast pairs of head dim 16, the slow ones are
     * interpolated */
    static const scaling_case cases[] = {
        {"base", "llama", NULL, 0, 0, 0, 0, 0, 0, 0},
        {"linear", "llama", "linear", 4, 0, 0, 0, 0, 0, 0},   /* same graph shape as yarn */
        {"legacy_linear", "llama", NULL, 0, 4, 0, 0, 0, 0, 0},       /* == linear */
        {"none", "llama", "none", 4, 0, 0, 0, 0, 0, 0},               /* == base */
        {"yarn", "llama", "yarn", 4, 0, 0, 0, 32, 0, 1},
        {"yarn_mscale", "llama", "yarn", 4, 0, 1.2f, 0.5f, 32, 0, 1},
        {"yarn_freqs", "llama", "yarn", 4, 0, 0, 0, 32, 1, 1},
        {"base_freqs", "llama", NULL, 0, 0, 0, 0, 0, 1, 0},
        {"qwen2_base", "qwen2", NULL, 0, 0, 0, 0, 0, 0, 0},
        {"qwen2_yarn", "qwen2", "yarn", 8, 0, 0, 0, 16, 0, 1},
    };
    enum { N = sizeof cases / sizeof cases[0] };
    static float logits[N][MAX_VOCAB];
    int n_vocab = 0;
    for (int c = 0; c < N; c++) {
        char path[128];
        tiny_model_tmp_path(path, sizeof path, cases[c].name);
        CHECK_MSG(write_case(&cases[c], path) == 0, "write %s", cases[c].name);
        rlx_model *m = tiny_model_load(path, RLX_BACKEND_CPU);
        CHECK_MSG(m != NULL, "%s: load", cases[c].name);
        rlx_model_info info;
        rlx_model_get_info(m, &info);
        n_vocab = info.n_vocab;
        int n = prefill_and_decode(m, logits[c], cases[c].name);
        rlx_model_free(m);
        CHECK_MSG(n >= 16, "%s: prefill / decode failed (%d tokens)", cases[c].name, n);
        if (cases[c].vulkan && vkp_available()) {
            rlx_model *v = tiny_model_load(path, RLX_BACKEND_VULKAN);
            CHECK_MSG(v != NULL, "%s: vulkan load", cases[c].name);
            static float vk[MAX_VOCAB];
            int nv = prefill_and_decode(v, vk, cases[c].name);
            rlx_model_free(v);
            CHECK_MSG(nv == n, "%s: vulkan prefill / decode failed", cases[c].name);
            double d = rel_diff(vk, logits[c], n_vocab);
            CHECK_MSG(d < 1e-4, "%s: vulkan vs cpu logits %.3g", cases[c].name, d);
        }
        unlink(path);
    }
    /* same model, same logits; a scaling that applies changes them */
#define SAME(a, b) CHECK_MSG(rel_diff(logits[a], logits[b], n_vocab) == 0, "%s vs %s should be identical", cases[a].name, cases[b].name)
#define DIFF(a, b) CHECK_MSG(rel_diff(logits[a], logits[b], n_vocab) > 1e-3, "%s vs %s: %.3g, should differ", cases[a].name, \
                             cases[b].name, rel_diff(logits[a], logits[b], n_vocab))
    SAME(2, 1);   /* legacy rope.scale_linear is linear scaling */
    SAME(3, 0);   /* "none" never scales */
    DIFF(1, 0);
    DIFF(4, 0);
    DIFF(4, 1);   /* yarn is not linear */
    DIFF(5, 4);   /* attn_factor and log multiplier change the magnitude */
    DIFF(6, 4);   /* rope_freqs applies on top of yarn */
    DIFF(6, 7);
    DIFF(9, 8);
#undef SAME
#undef DIFF
}

TEST(model_rope_scaling_bad_keys) {
    static const struct { const char *type; float factor, beta_fast; rlx_status want; const char *msg; } bad[] = {
        {"longrope", 4, 0, RLX_STATUS_UNSUPPORTED, "longrope"},
        {"dynamic-ntk", 4, 0, RLX_STATUS_UNSUPPORTED, "not supported"},
        {"linear", -2, 0, RLX_STATUS_FORMAT, "factor"},
        {"yarn", 4, -1, RLX_STATUS_FORMAT, "beta"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tiny_model_spec spec;
        tiny_model_spec_init(&spec);
        spec.rope_scaling_type = bad[i].type;
        spec.rope_scaling_factor = bad[i].factor;
        spec.yarn_beta_fast = bad[i].beta_fast;
        char path[128];
        tiny_model_tmp_path(path, sizeof path, "bad");
        CHECK(tiny_model_write(&spec, path) == 0);
        rlx_model *m = NULL;
        rlx_status st = rlx_model_load(path, NULL, &m);
        unlink(path);
        CHECK_MSG(st == bad[i].want && m == NULL && strstr(rlx_last_error(), bad[i].msg),
                  "%s: got %s '%s', want %s", bad[i].type, rlx_status_name(st), rlx_last_error(), rlx_status_name(bad[i].want));
    }
}
