/*
 * test_ops_fused_ref.c — float64 reference checks of fused ops that other
 * tests only compare fused against unfused: rope_kv_write (the CPU's fused
 * kernel, over random shapes, both rope styles, partial rotation, the rope
 * offset at the kv position as llama builds it) against ref_rope written
 * into the cache rows [pos, pos + S), every other row left as it was.
 */
#include "harness.h"
#include "ref64.h"
#include <stdlib.h>
#include <string.h>

TEST(ops_rope_kv_write_float64) {
    for (int c = 0; c < 12; c++) {
        int64_t B = test_rand_int(1, 2), H = test_rand_int(1, 3), S = test_rand_int(1, 3), D = 2 * test_rand_int(2, 8);
        int64_t C = S + test_rand_int(0, 5);
        int R = c % 3 == 0 ? 2 * (int)test_rand_int(1, D / 2) : 0;   /* partial rotation on some cases (0: all of D) */
        rlx_rope_style style = c % 2 ? RLX_ROPE_GPTJ : RLX_ROPE_NEOX;
        int32_t pos = (int32_t)test_rand_int(0, C - S);
        int64_t nx = B * H * S * D, nc = B * H * C * D;
        float *x = malloc(sizeof(float) * (size_t)nx), *cache0 = malloc(sizeof(float) * (size_t)nc),
              *y = malloc(sizeof(float) * (size_t)nc);
        double *x64 = malloc(sizeof(double) * (size_t)nx), *r64 = malloc(sizeof(double) * (size_t)nx),
               *want = malloc(sizeof(double) * (size_t)nc);
        test_fill_uniform_f32(x, nx, -1, 1);
        test_fill_uniform_f32(cache0, nc, -1, 1);
        for (int64_t i = 0; i < nx; i++) x64[i] = x[i];
        ref_rope(x64, B, H, S, D, pos, style, 10000.0, R, r64);
        for (int64_t i = 0; i < nc; i++) want[i] = cache0[i];
        for (int64_t bh = 0; bh < B * H; bh++)
            for (int64_t s = 0; s < S; s++)
                for (int64_t d = 0; d < D; d++) want[(bh * C + pos + s) * D + d] = r64[(bh * S + s) * D + d];

        rlx_graph *g = rlx_graph_new();
        int64_t xd[4] = {B, H, S, D}, cd[4] = {B, H, C, D}, one[1] = {1};
        rlx_node xn = rlx_input(g, "x", RLX_F32, 4, xd), pn = rlx_input(g, "pos", RLX_I32, 1, one);
        rlx_node r = rlx_rope(g, xn, pn, style, 10000.0f, R);
        rlx_output(g, "y", rlx_kv_write(g, rlx_param(g, "cache", RLX_F32, 4, cd), r, pn));
        rlx_compile_options o;
        rlx_compile_options_init(&o);
        o.backend = RLX_BACKEND_CPU;
        rlx_exec *e = NULL;
        rlx_tensor in[2] = {
            {.name = "x", .dtype = RLX_F32, .rank = 4, .dims = {B, H, S, D}, .data = x, .bytes = sizeof(float) * (size_t)nx},
            {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        };
        bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param_f32(e, "cache", cache0, (size_t)nc) == RLX_OK &&
                  rlx_exec_run(e, in, 2) == RLX_OK && rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)nc) == RLX_OK;
        if (!ok) printf("    case %d: %s\n", c, rlx_last_error());
        char *rep = ok ? rlx_exec_report(e) : NULL;
        bool fused = rep && strstr(rep, "rope_kv_write");
        if (ok && !fused) printf("    case %d: no rope_kv_write node:\n%s", c, rep ? rep : "");
        char what[96];
        snprintf(what, sizeof what, "rope_kv_write B%lld H%lld S%lld D%lld C%lld R%d pos %d", (long long)B, (long long)H,
                 (long long)S, (long long)D, (long long)C, R, pos);
        ok = ok && fused && test_close_f32_f64(what, y, want, nc, 1e-6);
        free(rep);
        rlx_exec_free(e);
        rlx_graph_free(g);
        free(x); free(cache0); free(y); free(x64); free(r64); free(want);
        CHECK(ok);
    }
}
