/*
 * gradcheck.c — the finite-difference check of gradcheck.h. Central
 * differences in float64 (step 1e-6 on inputs of order 1) are accurate to
 * ~1e-10, far below the f32 gradients' rounding, so the tolerance measures
 * rlx alone.
 */
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double loss64(const gc_case *c, double *const *x, const double *w, double *out) {
    c->fwd((const double *const *)x, out, c);
    double s = 0;
    for (int64_t i = 0; i < ref_numel(&c->so); i++) s += out[i] * w[i];
    return s;
}

static gc_mode mode = GC_CPU;

void gc_set_mode(gc_mode m) { mode = m; }

gc_mode gc_get_mode(void) { return mode; }

bool gradcheck(const gc_case *c) {
    double lo = c->lo, hi = c->hi, tol = c->tol > 0 ? c->tol : 2e-3;
    if (lo == 0 && hi == 0) lo = -1, hi = 1;
    int64_t no = ref_numel(&c->so);
    float *xf[GC_MAX], *wf = ops_rand_f32(no, -1, 1);
    double *x64[GC_MAX], *w64 = ops_f32_to_f64(wf, no), *out64 = ops_f64(no > 0 ? no : 1);
    rlx_graph *g = ops_graph();
    ops_inputs in = {0};
    rlx_node nodes[GC_MAX + 1];
    for (int i = 0; i < c->n; i++) {
        int64_t n = ref_numel(&c->s[i]);
        xf[i] = ops_rand_f32(n, lo, hi);
        x64[i] = ops_f32_to_f64(xf[i], n);
        nodes[i] = ops_add_input(g, &in, RLX_F32, c->s[i], xf[i]);
    }
    if (c->has_int) nodes[c->n] = ops_add_input(g, &in, RLX_I32, c->si, c->ints);
    rlx_node out = c->build(g, nodes, c);
    rlx_node w = rlx_constant(g, RLX_F32, c->so.rank, c->so.d, wf);
    rlx_node loss = rlx_reduce_sum(g, rlx_mul(g, out, w), 0, 0);
    rlx_node grads[GC_MAX];
    rlx_status st = rlx_gradients(g, loss, c->n, nodes, grads);
    if (st != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "%s: rlx_gradients -> %s: %s", c->what, rlx_status_name(st), rlx_last_error());
        return false;
    }
    char names[GC_MAX][8];
    rlx_tensor outs[GC_MAX + 1];
    float lossv = NAN, *gf[GC_MAX];
    ref_shape s0 = ref_shape_make(0, NULL);
    if (rlx_output(g, "loss", loss) != RLX_OK) {
        harness_fail(__FILE__, __LINE__, "%s: output loss: %s", c->what, rlx_last_error());
        return false;
    }
    outs[0] = ops_tensor("loss", RLX_F32, s0, &lossv);
    for (int i = 0; i < c->n; i++) {
        snprintf(names[i], sizeof names[i], "g%d", i);
        gf[i] = ops_f32(ref_numel(&c->s[i]));
        if (rlx_output(g, names[i], grads[i]) != RLX_OK) {
            harness_fail(__FILE__, __LINE__, "%s: output %s: %s", c->what, names[i], rlx_last_error());
            return false;
        }
        outs[1 + i] = ops_tensor(names[i], RLX_F32, c->s[i], gf[i]);
    }
    if (mode == GC_VULKAN) {
        bool ok = vkp_compare(g, in.t, in.n, c->tol > 0 ? c->tol : 1e-3, true);
        if (!ok) harness_fail(__FILE__, __LINE__, "%s: Vulkan differs from the CPU", c->what);
        return ok;
    }
    /* finite differences of the float64 loss */
    double *fd[GC_MAX];
    double L = loss64(c, x64, w64, out64);
    for (int i = 0; i < c->n; i++) {
        int64_t n = ref_numel(&c->s[i]);
        fd[i] = ops_f64(n);
        for (int64_t j = 0; j < n; j++) {
            double v = x64[i][j], h = 1e-6 * (1 + fabs(v));
            x64[i][j] = v + h;
            double lp = loss64(c, x64, w64, out64);
            x64[i][j] = v - h;
            double lm = loss64(c, x64, w64, out64);
            x64[i][j] = v;
            fd[i][j] = (lp - lm) / (2 * h);
        }
    }
    for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
        if (!ops_run(g, cfg, in.t, in.n, outs, c->n + 1)) return false;
        char what[160];
        snprintf(what, sizeof what, "%s: loss (config %s)", c->what, ops_config_name(cfg));
        if (!test_close_f32_f64(what, &lossv, &L, 1, 1e-4)) {
            harness_fail(__FILE__, __LINE__, "%s", what);
            return false;
        }
        for (int i = 0; i < c->n; i++) {
            snprintf(what, sizeof what, "%s: d loss / d input %d (config %s)", c->what, i, ops_config_name(cfg));
            if (!test_close_f32_f64(what, gf[i], fd[i], ref_numel(&c->s[i]), tol)) {
                harness_fail(__FILE__, __LINE__, "%s", what);
                return false;
            }
        }
    }
    return true;
}
