/*
 * test_optim.c — in-place param updates and optimizer steps: rlx_assign
 * (state kept across runs, broadcast values, kept with no output reading
 * it), rlx_exec_read_param, and rlx_optimizer_step (SGD with momentum and
 * Nesterov and weight decay, AdamW, global-norm clipping) over 20 steps
 * against a float64 transcription of torch.optim's update rules, with the
 * gradients fed as inputs; gradient accumulation and dynamic loss scaling
 * (skipped updates, the scale's halving and doubling) against the same
 * rules applied to each window's mean; on the CPU and on Vulkan.
 */
#include "ops_common.h"
#include "vk_parity.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

static rlx_exec *compile_on(const rlx_graph *g, bool vulkan) {
    if (vulkan) return vkp_compile(g, true);
    rlx_exec *e = NULL;
    if (rlx_compile(g, NULL, &e) != RLX_OK) return NULL;
    return e;
}

static void assign_case(bool vulkan) {
    rlx_graph *g = ops_graph();
    int64_t d[2] = {3, 4};
    rlx_node p = rlx_param(g, "p", RLX_F32, 2, d), acc = rlx_param(g, "acc", RLX_F32, 2, d);
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, d);
    rlx_node np = rlx_assign(g, p, rlx_add(g, p, x));              /* p += x */
    rlx_assign(g, acc, rlx_add(g, acc, rlx_mul(g, np, x)));         /* reads the new p */
    rlx_output(g, "sum_x", rlx_reduce_sum(g, x, 0, 0));              /* no output reads p or acc */
    CHECK_OK(rlx_graph_status(g));
    rlx_exec *e = compile_on(g, vulkan);
    CHECK(e);
    float p0[12], x0[12], got[12], acc_got[12];
    test_fill_uniform_f32(p0, 12, -1, 1);
    test_fill_uniform_f32(x0, 12, -1, 1);
    CHECK_OK(rlx_exec_set_param(e, "p", RLX_F32, p0, sizeof p0));
    rlx_tensor in = {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {3, 4}, .data = x0, .bytes = sizeof x0};
    for (int r = 0; r < 3; r++) CHECK_OK(rlx_exec_run(e, &in, 1));
    CHECK_OK(rlx_exec_read_param(e, "p", RLX_F32, got, sizeof got));
    CHECK_OK(rlx_exec_read_param(e, "acc", RLX_F32, acc_got, sizeof acc_got));
    for (int i = 0; i < 12; i++) {
        double pv = p0[i], a = 0;
        for (int r = 0; r < 3; r++) pv = (double)(float)(pv + x0[i]), a = (double)(float)(a + (float)pv * x0[i]);
        CHECK_MSG(fabs(got[i] - pv) < 1e-6 && fabs(acc_got[i] - a) < 1e-5, "[%d] p %g want %g, acc %g want %g", i,
                  (double)got[i], pv, (double)acc_got[i], a);
    }
    /* errors: a computed target, a misshapen value; reading with the wrong size */
    CHECK(rlx_assign(g, x, x) == RLX_NO_NODE);
    CHECK_STATUS(rlx_exec_read_param(e, "p", RLX_F32, got, 8), RLX_STATUS_SHAPE);
    CHECK_STATUS(rlx_exec_read_param(e, "nope", RLX_F32, got, sizeof got), RLX_STATUS_NOT_FOUND);
    rlx_exec_free(e);
    rlx_graph *h = ops_graph();
    int64_t d5[1] = {5};
    rlx_node q = rlx_param(h, "q", RLX_F32, 2, d);
    CHECK(rlx_assign(h, q, rlx_input(h, "v", RLX_F32, 1, d5)) == RLX_NO_NODE && rlx_graph_status(h) == RLX_STATUS_SHAPE);
    ops_free_all();
}

TEST(ops_assign) { assign_case(false); }
TEST(vk_ops_assign) { VKP_REQUIRE(); assign_case(true); }

/* --------------------------------------------------------- optimizers */

typedef struct ref_opt {
    rlx_optimizer_options o;
    int    n;
    double p[64], m[64], v[64], buf[64];
    int    t;
} ref_opt;

/* One step of torch.optim's single-tensor update in float64 on the
 * concatenation of all params (clipping sees them all). */
static void ref_step(ref_opt *r, const double *grad, double lr) {
    double g[64];
    memcpy(g, grad, sizeof(double) * (size_t)r->n);
    if (r->o.clip_norm > 0) {
        double s = 0;
        for (int i = 0; i < r->n; i++) s += g[i] * g[i];
        double c = r->o.clip_norm / (sqrt(s) + 1e-6);
        if (c < 1) for (int i = 0; i < r->n; i++) g[i] *= c;
    }
    r->t++;
    for (int i = 0; i < r->n; i++) {
        if (r->o.kind == RLX_OPT_SGD) {
            double d = g[i] + r->o.weight_decay * r->p[i];
            if (r->o.momentum > 0) {
                r->buf[i] = r->o.momentum * r->buf[i] + d;   /* buf starts at 0: the first step gives d, as torch */
                d = r->o.nesterov ? d + r->o.momentum * r->buf[i] : r->buf[i];
            }
            r->p[i] -= lr * d;
        } else {
            r->p[i] *= 1 - lr * r->o.weight_decay;
            r->m[i] = r->o.beta1 * r->m[i] + (1 - r->o.beta1) * g[i];
            r->v[i] = r->o.beta2 * r->v[i] + (1 - r->o.beta2) * g[i] * g[i];
            double bc1 = 1 - pow(r->o.beta1, r->t), bc2 = 1 - pow(r->o.beta2, r->t);
            r->p[i] -= lr / bc1 * r->m[i] / (sqrt(r->v[i]) / sqrt(bc2) + r->o.eps);
        }
    }
}

static void optimizer_case(const rlx_optimizer_options *o, bool vulkan, const char *what) {
    rlx_graph *g = ops_graph();
    int64_t da[2] = {3, 5}, db[1] = {7};   /* two params, 22 elements */
    rlx_node pa = rlx_param(g, "a", RLX_F32, 2, da), pb = rlx_param(g, "b", RLX_F32, 1, db);
    rlx_node ga = rlx_input(g, "ga", RLX_F32, 2, da), gb = rlx_input(g, "gb", RLX_F32, 1, db);
    int64_t d1[1] = {1};
    rlx_node lr = rlx_input(g, "lr", RLX_F32, 1, d1), norm;
    rlx_node ps[2] = {pa, pb}, gs[2] = {ga, gb};
    CHECK_OK(rlx_optimizer_step(g, o, 2, ps, gs, lr, &norm));
    CHECK_OK(rlx_output(g, "norm", norm));
    rlx_exec *e = compile_on(g, vulkan);
    CHECK(e);
    ref_opt r = {.o = *o, .n = 22};
    float a0[15], b0[7];
    test_fill_uniform_f32(a0, 15, -1, 1);
    test_fill_uniform_f32(b0, 7, -1, 1);
    for (int i = 0; i < 15; i++) r.p[i] = a0[i];
    for (int i = 0; i < 7; i++) r.p[15 + i] = b0[i];
    CHECK_OK(rlx_exec_set_param(e, "a", RLX_F32, a0, sizeof a0));
    CHECK_OK(rlx_exec_set_param(e, "b", RLX_F32, b0, sizeof b0));
    for (int step = 0; step < 20; step++) {
        float gav[15], gbv[7], lrv = (float)(0.05 * (1 + step % 3) / 3);   /* a schedule, no recompile */
        double gd[22];
        test_fill_uniform_f32(gav, 15, -2, 2);
        test_fill_uniform_f32(gbv, 7, -2, 2);
        for (int i = 0; i < 15; i++) gd[i] = gav[i];
        for (int i = 0; i < 7; i++) gd[15 + i] = gbv[i];
        double want_norm = 0;
        for (int i = 0; i < 22; i++) want_norm += gd[i] * gd[i];
        want_norm = sqrt(want_norm);
        ref_step(&r, gd, lrv);
        rlx_tensor in[3] = {
            {.name = "ga", .dtype = RLX_F32, .rank = 2, .dims = {3, 5}, .data = gav, .bytes = sizeof gav},
            {.name = "gb", .dtype = RLX_F32, .rank = 1, .dims = {7}, .data = gbv, .bytes = sizeof gbv},
            {.name = "lr", .dtype = RLX_F32, .rank = 1, .dims = {1}, .data = &lrv, .bytes = sizeof lrv},
        };
        CHECK_OK(rlx_exec_run(e, in, 3));
        float nv;
        CHECK_OK(rlx_exec_read_output(e, "norm", &nv, sizeof nv));
        CHECK_MSG(fabs(nv - want_norm) <= 1e-5 * want_norm, "%s: norm %g want %g", what, (double)nv, want_norm);
    }
    float a[15], b[7];
    CHECK_OK(rlx_exec_read_param(e, "a", RLX_F32, a, sizeof a));
    CHECK_OK(rlx_exec_read_param(e, "b", RLX_F32, b, sizeof b));
    CHECK_MSG(test_close_f32_f64(what, a, r.p, 15, 1e-5) && test_close_f32_f64(what, b, r.p + 15, 7, 1e-5),
              "%s%s: params after 20 steps", what, vulkan ? " (Vulkan)" : "");
    if (o->kind == RLX_OPT_ADAMW) {
        float st;
        CHECK_OK(rlx_exec_read_param(e, "optimizer.step", RLX_F32, &st, sizeof st));
        CHECK(st == 20.0f);
        float m[15];
        CHECK_OK(rlx_exec_read_param(e, "a.adam_m", RLX_F32, m, sizeof m));
        CHECK_MSG(test_close_f32_f64("adam_m", m, r.m, 15, 1e-5), "AdamW first moment");
    }
    rlx_exec_free(e);
    ops_free_all();
}

static void optimizers(bool vulkan) {
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_SGD));
    optimizer_case(&o, vulkan, "sgd");
    o.momentum = 0.9, o.weight_decay = 0.01;
    optimizer_case(&o, vulkan, "sgd momentum");
    o.nesterov = 1, o.clip_norm = 1.5;
    optimizer_case(&o, vulkan, "sgd nesterov clipped");
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    optimizer_case(&o, vulkan, "adamw");
    o.clip_norm = 2.0, o.weight_decay = 0.1, o.beta1 = 0.8;
    optimizer_case(&o, vulkan, "adamw clipped");
}

TEST(optim_steps_match_torch_rules) { optimizers(false); }
TEST(vk_optim_steps_match_torch_rules) { VKP_REQUIRE(); optimizers(true); }

/* ------------------------------------- accumulation and loss scaling */

typedef struct cond_case {
    int    accumulate;      /* runs per update */
    double loss_scale;      /* initial scale (0: off) */
    int    interval;        /* good updates before the scale doubles */
    int    runs;
    int    bad_run[2];      /* runs whose gradient holds an Inf / a NaN (-1: none) */
} cond_case;

/* Runs an optimizer with accumulation and/or dynamic loss scaling for
 * cc->runs runs of random gradients (scaled by the current scale, as a
 * scaled loss's would be) against ref_step applied to each window's mean,
 * with GradScaler's rule for the scale; checks that runs which do not apply
 * leave the params bit for bit. */
static void conditional_case(const rlx_optimizer_options *base, const cond_case *cc, bool vulkan, const char *what) {
    rlx_optimizer_options o = *base;
    o.accumulate = cc->accumulate, o.loss_scale = cc->loss_scale, o.loss_scale_interval = cc->interval;
    rlx_graph *g = ops_graph();
    int64_t da[2] = {3, 5}, db[1] = {7}, d1[1] = {1};
    rlx_node pa = rlx_param(g, "a", RLX_F32, 2, da), pb = rlx_param(g, "b", RLX_F32, 1, db);
    rlx_node ga = rlx_input(g, "ga", RLX_F32, 2, da), gb = rlx_input(g, "gb", RLX_F32, 1, db);
    rlx_node lr = rlx_input(g, "lr", RLX_F32, 1, d1), norm;
    if (o.loss_scale > 0) CHECK(rlx_scale_loss(g, rlx_reduce_sum(g, ga, 0, 0), &o) != RLX_NO_NODE);
    rlx_node ps[2] = {pa, pb}, gs[2] = {ga, gb};
    CHECK_OK(rlx_optimizer_step(g, &o, 2, ps, gs, lr, &norm));
    CHECK_OK(rlx_output(g, "norm", norm));
    rlx_exec *e = compile_on(g, vulkan);
    CHECK(e);
    ref_opt r = {.o = *base, .n = 22};
    float a0[15], b0[7];
    test_fill_uniform_f32(a0, 15, -1, 1);
    test_fill_uniform_f32(b0, 7, -1, 1);
    for (int i = 0; i < 15; i++) r.p[i] = a0[i];
    for (int i = 0; i < 7; i++) r.p[15 + i] = b0[i];
    CHECK_OK(rlx_exec_set_param(e, "a", RLX_F32, a0, sizeof a0));
    CHECK_OK(rlx_exec_set_param(e, "b", RLX_F32, b0, sizeof b0));
    int k = cc->accumulate > 1 ? cc->accumulate : 1, micro = 0, e_ref = 0, good = 0, applied = 0;
    double sum[22] = {0};
    bool window_bad = false;
    for (int run = 0; run < cc->runs; run++) {
        double S = o.loss_scale > 0 ? o.loss_scale * ldexp(1.0, e_ref) : 1.0;
        float gav[15], gbv[7], lrv = (float)(0.05 * (1 + run % 3) / 3), before[15], after[15];
        test_fill_uniform_f32(gav, 15, -2, 2);
        test_fill_uniform_f32(gbv, 7, -2, 2);
        for (int i = 0; i < 15; i++) gav[i] = (float)(gav[i] * S);
        for (int i = 0; i < 7; i++) gbv[i] = (float)(gbv[i] * S);
        if (run == cc->bad_run[0]) gav[3] = INFINITY, window_bad = true;
        if (run == cc->bad_run[1]) gbv[5] = NAN, window_bad = true;
        for (int i = 0; i < 15; i++) sum[i] += gav[i];
        for (int i = 0; i < 7; i++) sum[15 + i] += gbv[i];
        CHECK_OK(rlx_exec_read_param(e, "a", RLX_F32, before, sizeof before));
        rlx_tensor in[3] = {
            {.name = "ga", .dtype = RLX_F32, .rank = 2, .dims = {3, 5}, .data = gav, .bytes = sizeof gav},
            {.name = "gb", .dtype = RLX_F32, .rank = 1, .dims = {7}, .data = gbv, .bytes = sizeof gbv},
            {.name = "lr", .dtype = RLX_F32, .rank = 1, .dims = {1}, .data = &lrv, .bytes = sizeof lrv},
        };
        CHECK_OK(rlx_exec_run(e, in, 3));
        CHECK_OK(rlx_exec_read_param(e, "a", RLX_F32, after, sizeof after));
        bool applies = false;
        if (++micro == k) {
            micro = 0;
            if (!window_bad) {
                double mean[22], nn = 0;
                for (int i = 0; i < 22; i++) mean[i] = sum[i] / k / S, nn += mean[i] * mean[i];
                ref_step(&r, mean, lrv);
                applied++, applies = true;
                float nv;
                CHECK_OK(rlx_exec_read_output(e, "norm", &nv, sizeof nv));
                CHECK_MSG(fabs(nv - sqrt(nn)) <= 1e-5 * sqrt(nn), "%s run %d: norm %g want %g", what, run, (double)nv, sqrt(nn));
                if (o.loss_scale > 0 && ++good == (cc->interval > 0 ? cc->interval : 2000)) e_ref++, good = 0;
            } else if (o.loss_scale > 0) {
                e_ref--, good = 0;
            }
            memset(sum, 0, sizeof sum);
            window_bad = false;
        }
        if (!applies) CHECK_MSG(memcmp(before, after, sizeof after) == 0, "%s run %d: a run that does not apply changed a", what, run);
    }
    float a[15], b[7], st = -1, el2 = -1, gd = -1;
    CHECK_OK(rlx_exec_read_param(e, "a", RLX_F32, a, sizeof a));
    CHECK_OK(rlx_exec_read_param(e, "b", RLX_F32, b, sizeof b));
    CHECK_MSG(test_close_f32_f64(what, a, r.p, 15, 1e-5) && test_close_f32_f64(what, b, r.p + 15, 7, 1e-5),
              "%s%s: params after %d runs", what, vulkan ? " (Vulkan)" : "", cc->runs);
    if (o.kind == RLX_OPT_ADAMW) {
        CHECK_OK(rlx_exec_read_param(e, "optimizer.step", RLX_F32, &st, sizeof st));
        CHECK_MSG(st == (float)applied, "%s: step counter %g, %d updates applied", what, (double)st, applied);
    }
    if (o.loss_scale > 0) {
        CHECK_OK(rlx_exec_read_param(e, "optimizer.loss_scale_log2", RLX_F32, &el2, sizeof el2));
        CHECK_OK(rlx_exec_read_param(e, "optimizer.loss_scale_good", RLX_F32, &gd, sizeof gd));
        CHECK_MSG(el2 == (float)e_ref && gd == (float)good, "%s: scale exponent %g good %g, want %d %d", what, (double)el2,
                  (double)gd, e_ref, good);
    }
    if (k > 1) {
        float m = -1;
        CHECK_OK(rlx_exec_read_param(e, "optimizer.micro", RLX_F32, &m, sizeof m));
        CHECK(m == (float)micro);
    }
    rlx_exec_free(e);
    ops_free_all();
}

static void conditional_updates(bool vulkan) {
    rlx_optimizer_options sgd, adam;
    CHECK_OK(rlx_optimizer_options_init(&sgd, RLX_OPT_SGD));
    sgd.momentum = 0.9, sgd.clip_norm = 1.0;
    CHECK_OK(rlx_optimizer_options_init(&adam, RLX_OPT_ADAMW));
    adam.clip_norm = 2.0;
    cond_case acc = {.accumulate = 3, .runs = 13, .bad_run = {-1, -1}};
    conditional_case(&sgd, &acc, vulkan, "sgd accumulate 3");
    conditional_case(&adam, &acc, vulkan, "adamw accumulate 3");
    cond_case scaled = {.loss_scale = 1024, .interval = 3, .runs = 14, .bad_run = {4, 9}};
    conditional_case(&adam, &scaled, vulkan, "adamw loss scale");
    conditional_case(&sgd, &scaled, vulkan, "sgd loss scale");
    cond_case both = {.accumulate = 2, .loss_scale = 65536, .interval = 2, .runs = 16, .bad_run = {5, -1}};
    conditional_case(&adam, &both, vulkan, "adamw accumulate 2, loss scale");
}

TEST(optim_accumulation_and_loss_scaling) { conditional_updates(false); }
TEST(vk_optim_accumulation_and_loss_scaling) { VKP_REQUIRE(); conditional_updates(true); }

TEST(optim_errors) {
    rlx_graph *g = ops_graph();
    int64_t d[1] = {4}, d1[1] = {1};
    rlx_node p = rlx_param(g, "w", RLX_F32, 1, d), x = rlx_input(g, "x", RLX_F32, 1, d);
    rlx_node lr = rlx_input(g, "lr", RLX_F32, 1, d1);
    rlx_optimizer_options o;
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    CHECK_STATUS(rlx_optimizer_step(g, &o, 1, &x, &x, lr, NULL), RLX_STATUS_INVALID_ARGUMENT);   /* not a param */
    CHECK_STATUS(rlx_optimizer_step(g, &o, 1, &p, &x, x, NULL), RLX_STATUS_INVALID_ARGUMENT);    /* lr of 4 elements */
    o.beta1 = 1.0;
    CHECK_STATUS(rlx_optimizer_step(g, &o, 1, &p, &x, lr, NULL), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_STATUS(rlx_optimizer_options_init(&o, (rlx_optimizer)7), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_SGD));
    o.nesterov = 1;
    CHECK_STATUS(rlx_optimizer_step(g, &o, 1, &p, &x, lr, NULL), RLX_STATUS_INVALID_ARGUMENT);
    CHECK_OK(rlx_optimizer_options_init(&o, RLX_OPT_ADAMW));
    o.accumulate = -1;
    CHECK_STATUS(rlx_optimizer_step(g, &o, 1, &p, &x, lr, NULL), RLX_STATUS_INVALID_ARGUMENT);
    o.accumulate = 0, o.loss_scale = 1024;   /* scaling, but no scaled loss */
    CHECK_STATUS(rlx_optimizer_step(g, &o, 1, &p, &x, lr, NULL), RLX_STATUS_INVALID_ARGUMENT);
    o.loss_scale = 0;
    CHECK(rlx_scale_loss(g, x, &o) == x);   /* off: the loss itself */
    CHECK_OK(rlx_optimizer_step(g, &o, 1, &p, &x, lr, NULL));
    CHECK(rlx_optimizer_step(g, &o, 1, &p, &x, lr, NULL) != RLX_OK);   /* its state names are taken */
    rlx_graph *h = ops_graph();
    rlx_node y = rlx_input(h, "y", RLX_F32, 1, d1);
    o.loss_scale = 8;
    CHECK(rlx_scale_loss(h, y, &o) != RLX_NO_NODE);
    CHECK(rlx_scale_loss(h, y, &o) == RLX_NO_NODE && rlx_graph_status(h) == RLX_STATUS_INVALID_ARGUMENT);   /* twice */
    ops_free_all();
}

/* The README's training example, compiled by `make test`: AdamW fits the
 * linear map it made its data with. */
TEST(optim_readme_example_runs) {
    const char *exe = test_program("RLX_README_TRAIN_EXAMPLE", "build/readme_train_example");
    if (access(exe, X_OK) != 0) SKIP("%s not built (make test builds it)", exe);
    char cmd[512], out[512];
    snprintf(cmd, sizeof cmd, "RLX_DEVICE=cpu %s 2>&1", exe);
    int code = test_run_command(cmd, out, sizeof out);
    float l = 1, w0 = 0, w1 = 0, w2 = 0;
    CHECK_MSG(code == 0 && sscanf(out, "loss %f, w = [%f %f %f]", &l, &w0, &w1, &w2) == 4, "exit %d: %s", code, out);
    CHECK_MSG(l < 1e-3 && fabsf(w0 - 1.5f) < 0.05f && fabsf(w1 + 2.0f) < 0.05f && fabsf(w2 - 0.5f) < 0.05f, "%s", out);
    unlink("/tmp/rlx_readme_train.safetensors");
}
