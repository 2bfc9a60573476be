/*
 * test_gpt_train.c — the GPT trainer's graph (src/models/gpt.h) against
 * PyTorch (tests/ref/gpt_torch_ref.py on Debian's python3-torch, float64):
 * the loss and every parameter's gradient of a 2-layer GPT with random
 * weights within 1e-4 relative, with learned and with rotary positions, on
 * the CPU and on Vulkan (lavapipe in CI); 20 AdamW steps (a learning-rate
 * schedule and clipping included) against torch.optim.AdamW (all params
 * within 1e-4, each tensor within 1e-3); checkpoints
 * (save, load, resume bit for bit); and learning: after 150 steps on the
 * shipped text the loss is below the text's unigram entropy.
 */
#include "harness.h"
#include "models/gpt.h"
#include "vk_parity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool torch_ready(void) {
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char cmd[600], out[256];
    if (access(py, X_OK) != 0) return false;
    snprintf(cmd, sizeof cmd, "%s -c 'import torch, numpy' 2>&1", py);
    if (test_run_command(cmd, out, sizeof out) != 0) {
        harness_fail(__FILE__, __LINE__, "python3-torch is missing (scripts/setup.sh installs it): %s", out);
        return false;
    }
    return true;
}

static void fill_batch(int32_t *tok, int32_t *tgt, int n, uint64_t *s) {
    for (int i = 0; i < n; i++) {
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        tok[i] = (int32_t)((*s >> 33) % 256);
        *s = *s * 6364136223846793005ull + 1442695040888963407ull;
        tgt[i] = (int32_t)((*s >> 33) % 256);
    }
}

/* config.json for the reference: the model, B, S and the param names in order. */
static bool write_config(const char *path, const gpt_config *c, int B, int S, const char *extra) {
    FILE *f = fopen(path, "w");
    if (!f) return false;
    fprintf(f, "{\"layers\": %d, \"d_model\": %d, \"heads\": %d, \"d_ff\": %d, \"vocab\": %d, \"max_seq\": %d, "
               "\"rope\": %s, \"B\": %d, \"S\": %d, %s\"params\": [", c->layers, c->d_model, c->heads, c->d_ff,
            c->vocab, c->max_seq, c->rope ? "true" : "false", B, S, extra ? extra : "");
    for (int i = 0; i < gpt_param_count(c); i++) {
        char name[64];
        gpt_param_name(c, i, name, sizeof name);
        fprintf(f, "%s\"%s\"", i ? ", " : "", name);
    }
    fprintf(f, "]}\n");
    return fclose(f) == 0;
}

static bool run_ref(const char *mode, const char *cfg, const char *params, const char *batch, const char *out) {
    const char *py = test_program("RLX_PYTHON", "/usr/bin/python3");
    char cmd[1200], log[2048];
    snprintf(cmd, sizeof cmd, "%s tests/ref/gpt_torch_ref.py %s %s %s %s %s 2>&1", py, mode, cfg, params, batch, out);
    int rc = test_run_command(cmd, log, sizeof log);
    if (rc != 0) printf("    gpt_torch_ref.py failed (%d): %s\n", rc, log);
    return rc == 0;
}

static rlx_exec *compile(const rlx_graph *g, bool vulkan) {
    if (vulkan) return vkp_compile(g, true);
    rlx_exec *e = NULL;
    return rlx_compile(g, NULL, &e) == RLX_OK ? e : NULL;
}

static const gpt_config small = {.vocab = 256, .layers = 2, .d_model = 32, .heads = 4, .d_ff = 64, .max_seq = 16};

static void grads_case(bool rope, bool vulkan) {
    gpt_config c = small;
    c.rope = rope;
    enum { B = 2, S = 8 };
    rlx_graph *g;
    CHECK_OK(gpt_build(&c, GPT_GRADS, B, S, NULL, &g));
    rlx_exec *e = compile(g, vulkan);
    rlx_graph_free(g);
    CHECK(e);
    CHECK_OK(gpt_init_params(&c, e, 7));
    int32_t tok[B * S], tgt[B * S], pos[S];
    uint64_t s = 11;
    fill_batch(tok, tgt, B * S, &s);
    for (int i = 0; i < S; i++) pos[i] = i;
    rlx_tensor in[3] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = tok, .bytes = sizeof tok},
        {.name = "positions", .dtype = RLX_I32, .rank = 1, .dims = {S}, .data = pos, .bytes = sizeof pos},
        {.name = "targets", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = tgt, .bytes = sizeof tgt},
    };
    CHECK_OK(rlx_exec_run(e, in, 3));
    char cfg[] = "/tmp/rlx_gpt_cfg_XXXXXX", par[] = "/tmp/rlx_gpt_par_XXXXXX", bat[] = "/tmp/rlx_gpt_bat_XXXXXX",
         out[] = "/tmp/rlx_gpt_out_XXXXXX";
    CHECK(test_temp_file(cfg) && test_temp_file(par) && test_temp_file(bat) && test_temp_file(out));
    CHECK(write_config(cfg, &c, B, S, NULL));
    CHECK_OK(rlx_exec_save_params(e, par, 0, NULL));
    FILE *f = fopen(bat, "wb");
    CHECK(f && fwrite(tok, sizeof tok, 1, f) == 1 && fwrite(tgt, sizeof tgt, 1, f) == 1 && fclose(f) == 0);
    bool ran = run_ref("grads", cfg, par, bat, out);
    double *ref = NULL;
    size_t bytes = 0;
    bool read = ran && test_read_file(out, (void **)&ref, &bytes);
    unlink(cfg), unlink(par), unlink(bat), unlink(out);
    CHECK_MSG(read, "no reference");
    size_t at = 1;
    float loss;
    CHECK_OK(rlx_exec_read_output(e, "loss", &loss, sizeof loss));
    CHECK_MSG(fabs(loss - ref[0]) <= 1e-4 * fabs(ref[0]), "loss %.7g, torch %.7g", (double)loss, ref[0]);
    for (int i = 0; i < gpt_param_count(&c); i++) {
        char name[64], on[80];
        gpt_param_name(&c, i, name, sizeof name);
        snprintf(on, sizeof on, "grad.%s", name);
        rlx_tensor t;
        CHECK_OK(rlx_exec_output(e, on, &t));
        size_t n = t.bytes / 4;
        CHECK_MSG((at + n) * 8 <= bytes, "reference too short at %s", name);
        CHECK_MSG(test_close_f32_f64(on, t.data, ref + at, (int64_t)n, 1e-4), "%s%s: gradient of %s", rope ? "rope" : "learned",
                  vulkan ? " (Vulkan)" : "", name);
        at += n;
    }
    free(ref);
    rlx_exec_free(e);
}

TEST(gpt_gradients_match_torch) {
    if (!torch_ready()) return;
    grads_case(false, false);
    grads_case(true, false);
}

TEST(vk_gpt_gradients_match_torch) {
    VKP_REQUIRE();
    if (!torch_ready()) return;
    grads_case(false, true);
}

/* One train step on exec e with the batch of step `step` (deterministic). */
static rlx_status train_step(rlx_exec *e, int B, int S, int step, float lr, float *loss) {
    int32_t tok[256], tgt[256], pos[64];
    uint64_t s = 1000 + (uint64_t)step;
    fill_batch(tok, tgt, B * S, &s);
    for (int i = 0; i < S; i++) pos[i] = i;
    rlx_tensor in[4] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = tok, .bytes = 4 * (size_t)(B * S)},
        {.name = "positions", .dtype = RLX_I32, .rank = 1, .dims = {S}, .data = pos, .bytes = 4 * (size_t)S},
        {.name = "targets", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = tgt, .bytes = 4 * (size_t)(B * S)},
        {.name = "lr", .dtype = RLX_F32, .rank = 1, .dims = {1}, .data = &lr, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, 4);
    if (st == RLX_OK && loss) st = rlx_exec_read_output(e, "loss", loss, sizeof *loss);
    return st;
}

/* warmup over 5 steps to 1e-3, then half of it: a schedule through the lr input */
static float lr_at(int step) { return step < 5 ? 1e-3f * (float)(step + 1) / 5.0f : 5e-4f; }

static void adamw_case(bool vulkan) {
    gpt_config c = small;
    enum { B = 2, S = 8, STEPS = 20 };
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    o.clip_norm = 1.0;
    rlx_graph *g;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, B, S, &o, &g));
    rlx_exec *e = compile(g, vulkan);
    rlx_graph_free(g);
    CHECK(e);
    CHECK_OK(gpt_init_params(&c, e, 3));
    char cfg[] = "/tmp/rlx_gpt_cfg_XXXXXX", par[] = "/tmp/rlx_gpt_par_XXXXXX", bat[] = "/tmp/rlx_gpt_bat_XXXXXX",
         out[] = "/tmp/rlx_gpt_out_XXXXXX";
    CHECK(test_temp_file(cfg) && test_temp_file(par) && test_temp_file(bat) && test_temp_file(out));
    CHECK_OK(rlx_exec_save_params(e, par, 0, NULL));
    char extra[1024];
    int k = snprintf(extra, sizeof extra, "\"betas\": [%g, %g], \"eps\": %g, \"weight_decay\": %g, \"clip_norm\": %g, \"lr\": [",
                     o.beta1, o.beta2, o.eps, o.weight_decay, o.clip_norm);
    for (int i = 0; i < STEPS; i++) k += snprintf(extra + k, sizeof extra - (size_t)k, "%s%.9g", i ? ", " : "", (double)lr_at(i));
    snprintf(extra + k, sizeof extra - (size_t)k, "], ");
    CHECK(write_config(cfg, &c, B, S, extra));
    FILE *f = fopen(bat, "wb");
    CHECK(f);
    for (int i = 0; i < STEPS; i++) {
        int32_t tok[B * S], tgt[B * S];
        uint64_t s = 1000 + (uint64_t)i;
        fill_batch(tok, tgt, B * S, &s);
        fwrite(tok, sizeof tok, 1, f), fwrite(tgt, sizeof tgt, 1, f);
    }
    fclose(f);
    for (int i = 0; i < STEPS; i++) CHECK_OK(train_step(e, B, S, i, lr_at(i), NULL));
    bool ran = run_ref("adamw", cfg, par, bat, out);
    double *ref = NULL;
    size_t bytes = 0;
    bool read = ran && test_read_file(out, (void **)&ref, &bytes);
    unlink(cfg), unlink(par), unlink(bat), unlink(out);
    CHECK_MSG(read, "no reference");
    size_t at = 0;
    double err2 = 0, ref2 = 0;
    for (int i = 0; i < gpt_param_count(&c); i++) {
        char name[64];
        gpt_param_name(&c, i, name, sizeof name);
        rlx_tensor info = {0};
        for (int j = 0; j < rlx_exec_param_count(e); j++) {
            CHECK_OK(rlx_exec_param_info(e, j, &info));
            if (!strcmp(info.name, name)) break;
        }
        size_t n = rlx_tensor_bytes(RLX_F32, info.rank, info.dims) / 4;
        float *p = malloc(4 * n);
        CHECK(p && (at + n) * 8 <= bytes);
        CHECK_OK(rlx_exec_read_param(e, name, RLX_F32, p, 4 * n));
        for (size_t j = 0; j < n; j++) {
            double d = p[j] - ref[at + j];
            err2 += d * d, ref2 += ref[at + j] * ref[at + j];
        }
        /* Each tensor within 1e-3: the k part of each qkv bias has a zero
         * gradient in exact arithmetic, so Adam's normalized step turns its
         * rounding noise into updates of lr's size there (torch in f32
         * differs from torch in f64 the same way). */
        bool ok = test_close_f32_f64(name, p, ref + at, (int64_t)n, 1e-3);
        free(p);
        CHECK_MSG(ok, "%s after %d AdamW steps%s", name, STEPS, vulkan ? " (Vulkan)" : "");
        at += n;
    }
    CHECK_MSG(sqrt(err2 / ref2) <= 1e-4, "all params after %d AdamW steps%s: rel error %.3g", STEPS,
              vulkan ? " (Vulkan)" : "", sqrt(err2 / ref2));
    free(ref);
    rlx_exec_free(e);
}

TEST(gpt_adamw_steps_match_torch) {
    if (!torch_ready()) return;
    adamw_case(false);
}

TEST(vk_gpt_adamw_steps_match_torch) {
    VKP_REQUIRE();
    if (!torch_ready()) return;
    adamw_case(true);
}

/* Resuming from a checkpoint gives the same next steps, bit for bit. */
TEST(gpt_checkpoint_resume_is_exact) {
    gpt_config c = small;
    enum { B = 2, S = 8 };
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    rlx_graph *g;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, B, S, &o, &g));
    rlx_exec *a, *b;
    CHECK_OK(rlx_compile(g, NULL, &a));
    CHECK_OK(rlx_compile(g, NULL, &b));
    rlx_graph_free(g);
    CHECK_OK(gpt_init_params(&c, a, 5));
    for (int i = 0; i < 3; i++) CHECK_OK(train_step(a, B, S, i, 0.01f, NULL));
    char ck[] = "/tmp/rlx_gpt_ck_XXXXXX";
    CHECK(test_temp_file(ck));
    const char *meta[2] = {"step", "3"};
    CHECK_OK(rlx_exec_save_params(a, ck, 1, meta));
    CHECK_OK(rlx_exec_load_params(b, ck, 0));
    unlink(ck);
    for (int i = 3; i < 6; i++) {
        float la, lb;
        CHECK_OK(train_step(a, B, S, i, 0.01f, &la));
        CHECK_OK(train_step(b, B, S, i, 0.01f, &lb));
        CHECK_MSG(memcmp(&la, &lb, 4) == 0, "step %d: loss %.9g vs resumed %.9g", i, (double)la, (double)lb);
    }
    float pa[256 * 32], pb[256 * 32];
    CHECK_OK(rlx_exec_read_param(a, "wte", RLX_F32, pa, sizeof pa));
    CHECK_OK(rlx_exec_read_param(b, "wte", RLX_F32, pb, sizeof pb));
    CHECK(memcmp(pa, pb, sizeof pa) == 0);
    /* a file that does not fit: nothing is set */
    char bad[] = "/tmp/rlx_gpt_bad_XXXXXX";
    CHECK(test_temp_file(bad));
    gpt_config other = c;
    other.d_model = 16;
    rlx_graph *h;
    rlx_exec *x;
    CHECK_OK(gpt_build(&other, GPT_TRAIN, B, S, &o, &h));
    CHECK_OK(rlx_compile(h, NULL, &x));
    rlx_graph_free(h);
    CHECK_OK(rlx_exec_save_params(x, bad, 0, NULL));
    rlx_exec_free(x);
    CHECK_STATUS(rlx_exec_load_params(b, bad, 0), RLX_STATUS_SHAPE);
    CHECK_STATUS(rlx_exec_load_params(b, "/nonexistent/ck.safetensors", 0), RLX_STATUS_IO);
    unlink(bad);
    CHECK_OK(rlx_exec_read_param(b, "wte", RLX_F32, pb, sizeof pb));
    CHECK(memcmp(pa, pb, sizeof pa) == 0);
    rlx_exec_free(a);
    rlx_exec_free(b);
}

/* ------------------------------------- accumulation and loss scaling */

static rlx_status run_rows(rlx_exec *e, int B, int S, const int32_t *tok, const int32_t *tgt, float lr, float *loss) {
    int32_t pos[64];
    for (int i = 0; i < S; i++) pos[i] = i;
    rlx_tensor in[4] = {
        {.name = "tokens", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = (void *)tok, .bytes = 4 * (size_t)(B * S)},
        {.name = "positions", .dtype = RLX_I32, .rank = 1, .dims = {S}, .data = pos, .bytes = 4 * (size_t)S},
        {.name = "targets", .dtype = RLX_I32, .rank = 2, .dims = {B, S}, .data = (void *)tgt, .bytes = 4 * (size_t)(B * S)},
        {.name = "lr", .dtype = RLX_F32, .rank = 1, .dims = {1}, .data = &lr, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, 4);
    if (st == RLX_OK && loss) st = rlx_exec_read_output(e, "loss", loss, sizeof *loss);
    return st;
}

/* Compares every param of a (the model's and the optimizer's) with b's of
 * the same name: exactly, or within tol of each tensor's largest magnitude. */
static void compare_params(rlx_exec *a, rlx_exec *b, double tol, const char *what) {
    static float pa[256 * 64], pb[256 * 64];
    for (int i = 0; i < rlx_exec_param_count(a); i++) {
        rlx_tensor info;
        CHECK_OK(rlx_exec_param_info(a, i, &info));
        size_t n = 1;
        for (int d = 0; d < info.rank; d++) n *= (size_t)info.dims[d];
        CHECK(n <= sizeof pa / sizeof pa[0] && info.dtype == RLX_F32);
        CHECK_OK(rlx_exec_read_param(a, info.name, RLX_F32, pa, n * 4));
        CHECK_OK(rlx_exec_read_param(b, info.name, RLX_F32, pb, n * 4));
        double big = 0, diff = 0;
        for (size_t j = 0; j < n; j++) big = fmax(big, fabs(pa[j])), diff = fmax(diff, fabs((double)pa[j] - pb[j]));
        if (tol == 0) CHECK_MSG(memcmp(pa, pb, n * 4) == 0, "%s: %s differs (max %g)", what, info.name, diff);
        else CHECK_MSG(diff <= tol * fmax(big, 1e-3), "%s: %s differs by %g (largest %g)", what, info.name, diff, big);
    }
}

/* Two micro-batches of 2 rows accumulated update as one batch of their 4 rows. */
TEST(gpt_accumulation_matches_one_big_batch) {
    gpt_config c = small;
    enum { S = 8 };
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_SGD));
    o.momentum = 0.9, o.clip_norm = 1.0;
    rlx_graph *gb, *gm;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, 4, S, &o, &gb));
    o.accumulate = 2;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, 2, S, &o, &gm));
    rlx_exec *big, *micro;
    CHECK_OK(rlx_compile(gb, NULL, &big));
    CHECK_OK(rlx_compile(gm, NULL, &micro));
    rlx_graph_free(gb), rlx_graph_free(gm);
    CHECK_OK(gpt_init_params(&c, big, 11));
    CHECK_OK(gpt_init_params(&c, micro, 11));
    for (int step = 0; step < 3; step++) {
        int32_t tok[4 * S], tgt[4 * S];
        uint64_t s = 77 + (uint64_t)step;
        fill_batch(tok, tgt, 4 * S, &s);
        float lb, l0, l1;
        CHECK_OK(run_rows(big, 4, S, tok, tgt, 0.05f, &lb));
        CHECK_OK(run_rows(micro, 2, S, tok, tgt, 0.05f, &l0));
        CHECK_OK(run_rows(micro, 2, S, tok + 2 * S, tgt + 2 * S, 0.05f, &l1));
        CHECK_MSG(fabs(lb - (l0 + l1) / 2) <= 1e-5 * lb, "step %d: loss %g, micro-batches %g %g", step, (double)lb,
                  (double)l0, (double)l1);
    }
    compare_params(big, micro, 1e-5, "accumulation");
    rlx_exec_free(big), rlx_exec_free(micro);
}

/* Scaling by a power of two and unscaling is exact in f32: with no
 * overflow, the scaled run updates bit for bit as the unscaled one. */
TEST(gpt_loss_scaling_is_exact_on_cpu) {
    gpt_config c = small;
    enum { B = 2, S = 8 };
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    o.clip_norm = 1.0;
    rlx_graph *gp, *gs;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, B, S, &o, &gp));
    o.loss_scale = 65536;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, B, S, &o, &gs));
    rlx_exec *plain, *scaled;
    CHECK_OK(rlx_compile(gp, NULL, &plain));
    CHECK_OK(rlx_compile(gs, NULL, &scaled));
    rlx_graph_free(gp), rlx_graph_free(gs);
    CHECK_OK(gpt_init_params(&c, plain, 4));
    CHECK_OK(gpt_init_params(&c, scaled, 4));
    for (int step = 0; step < 4; step++) {
        float lp, ls;
        CHECK_OK(train_step(plain, B, S, step, lr_at(step), &lp));
        CHECK_OK(train_step(scaled, B, S, step, lr_at(step), &ls));
        CHECK_MSG(memcmp(&lp, &ls, 4) == 0, "step %d: loss %.9g, scaled run %.9g", step, (double)lp, (double)ls);
    }
    compare_params(plain, scaled, 0, "loss scaling");
    float e2 = -1, good = -1;
    CHECK_OK(rlx_exec_read_param(scaled, "optimizer.loss_scale_log2", RLX_F32, &e2, sizeof e2));
    CHECK_OK(rlx_exec_read_param(scaled, "optimizer.loss_scale_good", RLX_F32, &good, sizeof good));
    CHECK(e2 == 0 && good == 4);
    rlx_exec_free(plain), rlx_exec_free(scaled);
}

/* Mixed precision on the GPU: the fast policy (f16 matmul operands where
 * the device has tensor cores; f32 on lavapipe) with dynamic loss scaling
 * follows the f32 run's first loss and learns. */
TEST(vk_gpt_fast_precision_with_loss_scaling_learns) {
    VKP_REQUIRE();
    gpt_config c = small;
    enum { B = 4, S = 16 };
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    o.clip_norm = 1.0;
    rlx_graph *g32, *gf;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, B, S, &o, &g32));
    o.loss_scale = 65536;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, B, S, &o, &gf));
    rlx_compile_options co;
    vkp_options(&co);
    co.precision = RLX_PRECISION_FAST;
    rlx_exec *e32 = vkp_compile(g32, true), *ef = NULL;
    CHECK_OK(rlx_compile(gf, &co, &ef));
    rlx_graph_free(g32), rlx_graph_free(gf);
    CHECK(e32 && ef);
    CHECK_OK(gpt_init_params(&c, e32, 9));
    CHECK_OK(gpt_init_params(&c, ef, 9));
    float first32 = 0, firstf = 0, l32 = 0, lf = 0;
    for (int step = 0; step < 12; step++) {
        int32_t tok[B * S], tgt[B * S];
        for (int i = 0; i < B * S; i++) tok[i] = (i * 7 + step) % 23, tgt[i] = (tok[i] * 3 + 1) % 23;   /* learnable */
        CHECK_OK(run_rows(e32, B, S, tok, tgt, 3e-3f, &l32));
        CHECK_OK(run_rows(ef, B, S, tok, tgt, 3e-3f, &lf));
        CHECK_MSG(isfinite(lf), "step %d: fast loss %g", step, (double)lf);
        if (step == 0) first32 = l32, firstf = lf;
    }
    CHECK_MSG(fabs(firstf - first32) <= 1e-2 * first32, "first loss: fast %g, f32 %g", (double)firstf, (double)first32);
    float e2 = 0, steps = 0;
    CHECK_OK(rlx_exec_read_param(ef, "optimizer.loss_scale_log2", RLX_F32, &e2, sizeof e2));
    CHECK_OK(rlx_exec_read_param(ef, "optimizer.step", RLX_F32, &steps, sizeof steps));
    printf("    losses %.4f -> %.4f (f32 %.4f -> %.4f), loss scale 2^16 x 2^%g, %g of 12 updates applied\n", (double)firstf,
           (double)lf, (double)first32, (double)l32, (double)e2, (double)steps);
    CHECK_MSG(lf < firstf - 0.5 && l32 < first32 - 0.5, "no learning: fast %g -> %g, f32 %g -> %g", (double)firstf,
              (double)lf, (double)first32, (double)l32);
    CHECK(steps >= 6 && e2 <= 0);
    rlx_exec_free(e32), rlx_exec_free(ef);
}

/* ------------------------------------------------------------- the CLI */

static double unigram_entropy(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NAN;
    double count[256] = {0}, n = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF) count[ch]++, n++;
    fclose(f);
    double h = 0;
    for (int i = 0; i < 256; i++)
        if (count[i] > 0) h -= count[i] / n * log(count[i] / n);
    return h;
}

/* rlx train learns: after 150 steps its loss is below the text's unigram
 * entropy (what a model that ignores context can reach). Then the folder has
 * its files, and rlx generate samples from it. */
TEST(gpt_cli_train_learns_and_generates) {
    const char *cli = test_program("RLX_CLI", "build/rlx"), *data = "data/kjv_genesis_exodus.txt";
    if (access(cli, X_OK) != 0) SKIP("%s not built", cli);
    double h = unigram_entropy(data);
    CHECK_MSG(isfinite(h) && h > 2.5, "unigram entropy of %s: %g", data, h);
    char dir[] = "/tmp/rlx_train_XXXXXX";
    CHECK(mkdtemp(dir));
    char cmd[1024], out[16384];
    snprintf(cmd, sizeof cmd, "%s train --data %s --out %s --layers 2 --d-model 64 --heads 4 --seq 32 --batch 8 "
             "--steps 150 --lr 3e-3 --log-every 50 --device cpu 2>&1", cli, data, dir);
    int rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0, "rlx train exited %d: %s", rc, out);
    const char *end = strstr(out, "-> ");
    double final = end ? atof(end + 3) : NAN;
    CHECK_MSG(final < h, "loss after 150 steps %g is not below the unigram entropy %g:\n%s", final, h, out);
    CHECK_MSG(test_count(out, "tok/s") >= 3, "no progress lines: %s", out);
    const char *files[] = {"config.json", "checkpoint.safetensors", "loss.csv", "loss.svg"};
    for (int i = 0; i < 4; i++) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        CHECK_MSG(access(p, R_OK) == 0, "%s missing", p);
    }
    char svg[512];
    snprintf(svg, sizeof svg, "%s/loss.svg", dir);
    void *text = NULL;
    size_t len = 0;
    CHECK(test_read_file(svg, &text, &len));
    bool ok = strstr(text, "<svg") && strstr(text, "<polyline");
    free(text);
    CHECK_MSG(ok, "loss.svg is not a chart");
    snprintf(cmd, sizeof cmd, "%s generate -m %s -p 'And God' -n 40 --seed 5 2>&1", cli, dir);
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0 && strlen(out) >= 40 && !strncmp(out, "And God", 7), "rlx generate -m DIR (%d): %s", rc, out);
    /* resume continues at the saved step and needs the same folder's config */
    snprintf(cmd, sizeof cmd, "%s train --data %s --out %s --steps 160 --resume --device cpu 2>&1", cli, data, dir);
    rc = test_run_command(cmd, out, sizeof out);
    CHECK_MSG(rc == 0 && strstr(out, "trained 10 steps"), "resume (%d): %s", rc, out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(test_run_command(cmd, out, sizeof out) == 0);
}

/* A NaN in a param: training stops at the first step, names the first
 * node that produced a non-finite value, and keeps the checkpoint. */
TEST(gpt_cli_nan_loss_stops_and_names_the_node) {
    const char *cli = test_program("RLX_CLI", "build/rlx"), *data = "data/kjv_genesis_exodus.txt";
    if (access(cli, X_OK) != 0) SKIP("%s not built", cli);
    char dir[] = "/tmp/rlx_nan_XXXXXX";
    CHECK(mkdtemp(dir));
    gpt_config c = {.vocab = 256, .layers = 1, .d_model = 32, .heads = 2, .d_ff = 128, .max_seq = 16};
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    rlx_graph *g;
    rlx_exec *e;
    CHECK_OK(gpt_build(&c, GPT_TRAIN, 4, 16, &o, &g));
    CHECK_OK(rlx_compile(g, NULL, &e));
    rlx_graph_free(g);
    CHECK_OK(gpt_init_params(&c, e, 1));
    float w[128];
    for (int i = 0; i < 128; i++) w[i] = i == 5 ? NAN : 0.01f;
    CHECK_OK(rlx_exec_set_param_f32(e, "h.0.mlp.fc.bias", w, 128));
    char ck[512];
    snprintf(ck, sizeof ck, "%s/checkpoint.safetensors", dir);
    CHECK_OK(rlx_exec_save_params(e, ck, 0, NULL));
    rlx_exec_free(e);
    CHECK_OK(gpt_save_config(dir, &c, NULL));
    void *before = NULL, *after = NULL;
    size_t nb = 0, na = 0;
    CHECK(test_read_file(ck, &before, &nb));
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd, "%s train --data %s --out %s --batch 4 --steps 5 --resume --device cpu 2>&1", cli, data, dir);
    int rc = test_run_command(cmd, out, sizeof out);
    bool same = test_read_file(ck, &after, &na) && na == nb && memcmp(before, after, nb) == 0;
    free(before), free(after);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    char junk[64];
    test_run_command(cmd, junk, sizeof junk);
    CHECK_MSG(rc != 0 && strstr(out, "the loss is nan") && strstr(out, "h.0.mlp.fc"),
              "rlx train with a NaN param (%d): %s", rc, out);
    CHECK_MSG(same, "the checkpoint changed after the NaN step");
}
