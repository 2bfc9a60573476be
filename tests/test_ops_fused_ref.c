/*
 * test_ops_fused_ref.c — float64 reference checks of fused ops that other
 * tests only compare fused against unfused:
 *   rope_kv_write (the CPU's fused kernel, over random shapes, both rope
 *   styles, partial rotation, the rope offset at the kv position as llama
 *   builds it) against ref_rope written into the cache rows [pos, pos + S),
 *   every other row left as it was;
 *   dequant_rope_kv and attention_dequant_matmul, the decode folds a GPU
 *   backend makes per specialization (passes/fold_decode.c), applied here to
 *   the graph itself and run by the CPU's kernels: against the composed
 *   float64 references (the product on the weights' decoded values, the
 *   optional rms norm, rope and / or the cache write; attention, then the
 *   product and the optional residual).
 */
#include "harness.h"
#include "ops_common.h"
#include "ref64.h"
#include "ir/ir.h"
#include "passes/passes.h"
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

/* plain with the CPU's fusions (rope_kv_write, dequant_matmul_add) and then
 * the decode fold a GPU backend makes per specialization (epilogue: a
 * folded norm and dequant_rope_kv; else attention_dequant_matmul), every
 * candidate accepted; NULL on failure. */
static rlx_graph *decode_folded(const rlx_graph *plain, bool epilogue) {
    rlx_graph *f = rlx_graph_new();
    if (!f) return NULL;
    ir_graph_clear(&f->g);
    fuse_claims claims = {.dequant_epilogue = true, .rope_kv_write = true};
    int n = 0;
    rlx_status st = pass_fuse(&plain->g, &claims, &f->g, &n);
    if (st == RLX_OK && epilogue) st = pass_fold_norm_inplace(&f->g, 64, NULL, NULL, &n);
    if (st == RLX_OK) st = epilogue ? pass_fold_epilogue_inplace(&f->g, NULL, NULL, &n) : pass_fold_combine_inplace(&f->g, NULL, NULL, &n);
    if (st != RLX_OK) {
        printf("    fold: %s\n", rlx_last_error());
        rlx_graph_free(f);
        return NULL;
    }
    return f;
}

/* The one node of op in g, or NULL (none, or more than one). */
static const ir_node *only_node(const rlx_graph *g, ir_op op) {
    const ir_node *found = NULL;
    for (int32_t i = 0; i < g->g.n_nodes; i++)
        if (g->g.nodes[i].op == op) {
            if (found) return NULL;
            found = &g->g.nodes[i];
        }
    return found;
}

/* Compiled for the CPU with nothing else changing the graph and the exact
 * products (block-quantized weights on their decoded values, x unrounded). */
static rlx_exec *compile_exact_cpu(const rlx_graph *g) {
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.fuse = 0;
    o.exact_quant = 1;
    rlx_exec *e = NULL;
    if (rlx_compile(g, &o, &e) != RLX_OK) printf("    compile: %s\n", rlx_last_error());
    return e;
}

/* Weight types the fused products take; K a multiple of each one's block. */
static const rlx_dtype fused_weight_types[4] = {RLX_F32, RLX_Q8_0, RLX_Q4_K, RLX_F16};
static int64_t weight_block(rlx_dtype dt) { return dt == RLX_Q4_K ? 256 : dt == RLX_Q8_0 ? 32 : 1; }

/*
 * dequant_rope_kv: consumer(view(p)), p = [rms_]dequant_matmul(x, w), the
 * view [1, H, S, D] being the decoder's split into heads (reshape, then an
 * order-keeping transpose), the consumer rope, rope_kv_write or kv_write:
 * every consumer with every weight type, with and without a folded norm,
 * both rope styles, partial rotation, frequency factors; S > 1 with one head.
 */
TEST(ops_dequant_rope_kv_float64) {
    static const ir_op consumers[3] = {IR_OP_ROPE, IR_OP_ROPE_KV_WRITE, IR_OP_KV_WRITE};
    for (int c = 0; c < 24; c++) {
        const int cons = c % 3;
        const rlx_dtype dt = fused_weight_types[c % 4];
        const bool norm = (c / 12) % 2, ff = c % 5 == 1;
        const int64_t blk = weight_block(dt);
        const int64_t K = blk > 1 ? blk * test_rand_int(1, 2) : test_rand_int(3, 80);
        const int64_t S = c % 4 == 3 ? test_rand_int(2, 3) : 1, H = S > 1 ? 1 : test_rand_int(1, 4), D = 2 * test_rand_int(2, 8);
        const int64_t N = H * D, C = S + test_rand_int(0, 5), nv = H * S * D, nc = H * C * D;
        const int R = c % 7 == 2 ? 2 * (int)test_rand_int(1, D / 2) : 0;   /* partial rotation on some cases (0: all of D) */
        const int Rr = R ? R : (int)D;
        const rlx_rope_style style = (c / 3) % 2 ? RLX_ROPE_GPTJ : RLX_ROPE_NEOX;
        const double theta = c % 2 ? 10000.0 : 500000.0;
        const float eps = 1e-5f;
        int32_t pos = (int32_t)test_rand_int(0, C - S);
        double *wd;
        size_t wbytes;
        void *w = ops_quantized_weights(dt, N, K, &wd, &wbytes);
        float *x = ops_rand_f32(S * K, -1, 1), *gamma = ops_rand_f32(K, 0.5, 1.5), *fac = ops_rand_f32(Rr / 2, 1, 8);
        float *cache0 = ops_rand_f32(nc, -1, 1);

        /* the reference */
        ref_shape sx = ref_shape_make(2, (int64_t[]){S, K});
        double *h = ops_f32_to_f64(x, S * K), *p = ops_f64(S * N), *v = ops_f64(nv), *r = ops_f64(nv);
        if (norm) ref_norm(1, h, sx, ops_f32_to_f64(gamma, K), NULL, eps, h);
        ref_dense(h, S, K, wd, N, NULL, p);
        ref_split_heads(p, S, H, D, v);
        if (cons != 2) ref_rope_ff(v, 1, H, S, D, pos, style, theta, R, ff ? ops_f32_to_f64(fac, Rr / 2) : NULL, r);
        else memcpy(r, v, sizeof(double) * (size_t)nv);
        const int64_t nout = cons == 0 ? nv : nc;
        double *want = ops_f64(nout);
        if (cons == 0) memcpy(want, r, sizeof(double) * (size_t)nv);
        for (int64_t i = 0; cons != 0 && i < nc; i++) want[i] = cache0[i];
        for (int64_t hh = 0; cons != 0 && hh < H; hh++)
            for (int64_t s = 0; s < S; s++)
                for (int64_t d = 0; d < D; d++) want[(hh * C + pos + s) * D + d] = r[(hh * S + s) * D + d];

        /* the graph, folded */
        rlx_graph *g = rlx_graph_new();
        int64_t xd[2] = {S, K}, wdims[2] = {N, K}, gd[1] = {K}, fd[1] = {Rr / 2}, cd[4] = {1, H, C, D}, one[1] = {1},
                d4[4] = {1, S, H, D};
        static const int perm[4] = {0, 2, 1, 3};
        rlx_node xn = rlx_input(g, "x", RLX_F32, 2, xd), pn = rlx_input(g, "pos", RLX_I32, 1, one);
        rlx_node hn = norm ? rlx_rms_norm(g, xn, rlx_constant(g, RLX_F32, 1, gd, gamma), RLX_NO_NODE, eps) : xn;
        rlx_node view = rlx_transpose(g, rlx_reshape(g, rlx_dequant_matmul(g, hn, rlx_constant(g, dt, 2, wdims, w)), 4, d4), perm);
        rlx_node rn = cons == 2 ? view
                      : ff      ? rlx_rope_scaled(g, view, pn, style, (float)theta, R, rlx_constant(g, RLX_F32, 1, fd, fac))
                                : rlx_rope(g, view, pn, style, (float)theta, R);
        rlx_output(g, "y", cons == 0 ? rn : rlx_kv_write(g, rlx_param(g, "cache", RLX_F32, 4, cd), rn, pn));
        rlx_graph *f = decode_folded(g, true);
        const ir_node *fn = f ? only_node(f, IR_OP_DEQUANT_ROPE_KV) : NULL;
        char what[160];
        snprintf(what, sizeof what, "dequant_rope_kv %s %s norm %d S%lld H%lld D%lld K%lld C%lld R%d ff %d pos %d",
                 ir_op_info_get(consumers[cons])->name, rlx_dtype_name(dt), norm, (long long)S, (long long)H, (long long)D,
                 (long long)K, (long long)C, R, ff, pos);
        bool ok = fn && ir_attr_dequant_rope_kv_consumer_op(fn) == consumers[cons] &&
                  ir_attr_dequant_rope_kv_has_gamma(fn) == norm && (!norm || !only_node(f, IR_OP_RMS_NORM));
        if (!ok) {
            char *dump = f ? rlx_graph_dump(f) : NULL;
            printf("    %s: not one fused node of the expected form:\n%s", what, dump ? dump : "");
            free(dump);
        }
        rlx_exec *e = ok ? compile_exact_cpu(f) : NULL;
        float *y = ops_f32(nout);
        rlx_tensor in[2] = {
            {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {S, K}, .data = x, .bytes = sizeof(float) * (size_t)(S * K)},
            {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        };
        ok = e && (cons == 0 || rlx_exec_set_param_f32(e, "cache", cache0, (size_t)nc) == RLX_OK) && rlx_exec_run(e, in, 2) == RLX_OK &&
             rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)nout) == RLX_OK;
        if (e && !ok) printf("    %s: %s\n", what, rlx_last_error());
        ok = ok && test_close_f32_f64(what, y, want, nout, 1e-5);
        rlx_exec_free(e);
        rlx_graph_free(f);
        rlx_graph_free(g);
        free(w);
        free(wd);
        CHECK(ok);
    }
    ops_free_all();
}

/*
 * attention_dequant_matmul: dequant_matmul[_add](view(attention(q, k, v
 * [, mask][, kv_len])), w[, r]), the view x [Sq, H * D] being the decoder's
 * merge of the heads: every mask kind with every weight type, with and
 * without the active extent and the residual, grouped heads; Sq > 1 with
 * one head.
 */
TEST(ops_attention_dequant_float64) {
    static const rlx_mask masks[3] = {RLX_MASK_NONE, RLX_MASK_CAUSAL, RLX_MASK_ADDITIVE};
    for (int c = 0; c < 24; c++) {
        const rlx_dtype dt = fused_weight_types[(c / 3) % 4];
        const rlx_mask mk = masks[c % 3];
        const bool add = c % 2, has_len = c % 4 >= 2;
        int64_t H, D;
        if (dt == RLX_Q4_K) {
            static const int64_t hd[3][2] = {{4, 64}, {8, 32}, {2, 128}};
            int k = (int)test_rand_int(0, 2);
            H = hd[k][0];
            D = hd[k][1];
        } else if (dt == RLX_Q8_0) {
            H = 2 * test_rand_int(1, 2);
            D = 16 * test_rand_int(1, 3);
        } else {
            H = c % 8 == 6 ? 1 : test_rand_int(1, 4);
            D = test_rand_int(2, 24);
        }
        const int64_t Hkv = H % 2 == 0 && c % 5 < 2 ? H / 2 : H;
        const int64_t Sq = H == 1 ? test_rand_int(2, 3) : 1, Skv = Sq + test_rand_int(0, 30);
        const int64_t L = has_len ? test_rand_int(Sq, Skv) : Skv;   /* the active keys */
        const int64_t K = H * D, N = test_rand_int(1, 40), nq = H * Sq * D, nk = Hkv * Skv * D;
        const double scale = 0.05 + 0.3 * (double)test_rand_int(0, 10) / 10;
        double *wd;
        size_t wbytes;
        void *w = ops_quantized_weights(dt, N, K, &wd, &wbytes);
        float *q = ops_rand_f32(nq, -1, 1), *k = ops_rand_f32(nk, -1, 1), *v = ops_rand_f32(nk, -1, 1);
        float *mask = ops_rand_f32(Sq * Skv, -2, 0), *r = ops_rand_f32(Sq * N, -1, 1);
        int32_t len = (int32_t)L;

        /* the reference: attention over the first L keys, heads merged, the product (+ r) */
        double *kl = ops_f64(Hkv * L * D), *vl = ops_f64(Hkv * L * D), *ml = ops_f64(Sq * L);
        for (int64_t hh = 0; hh < Hkv; hh++)
            for (int64_t j = 0; j < L * D; j++) {
                kl[hh * L * D + j] = k[hh * Skv * D + j];
                vl[hh * L * D + j] = v[hh * Skv * D + j];
            }
        for (int64_t i = 0; i < Sq; i++)
            for (int64_t j = 0; j < L; j++) ml[i * L + j] = mask[i * Skv + j];
        double *a = ops_f64(nq), *xm = ops_f64(Sq * K), *want = ops_f64(Sq * N);
        ref_attention(ops_f32_to_f64(q, nq), kl, vl, 1, H, Hkv, Sq, L, D, mk, mk == RLX_MASK_ADDITIVE ? ml : NULL,
                      ref_shape_make(4, (int64_t[]){1, 1, Sq, L}), scale, a);
        ref_merge_heads(a, Sq, H, D, xm);
        ref_dense(xm, Sq, K, wd, N, NULL, want);
        for (int64_t i = 0; add && i < Sq * N; i++) want[i] += r[i];

        /* the graph, folded */
        rlx_graph *g = rlx_graph_new();
        int64_t qd[4] = {1, H, Sq, D}, kd[4] = {1, Hkv, Skv, D}, md[4] = {1, 1, Sq, Skv}, one[1] = {1}, xd[2] = {Sq, K},
                wdims[2] = {N, K}, rd[2] = {Sq, N};
        static const int perm[4] = {0, 2, 1, 3};
        rlx_node qn = rlx_input(g, "q", RLX_F32, 4, qd), kn = rlx_input(g, "k", RLX_F32, 4, kd), vn = rlx_input(g, "v", RLX_F32, 4, kd);
        rlx_node mn = mk == RLX_MASK_ADDITIVE ? rlx_input(g, "mask", RLX_F32, 4, md) : RLX_NO_NODE;
        rlx_node an = has_len ? rlx_attention_kv(g, qn, kn, vn, mk, mn, (float)scale, rlx_input(g, "kv_len", RLX_I32, 1, one))
                              : rlx_attention(g, qn, kn, vn, mk, mn, (float)scale);
        rlx_node yn = rlx_dequant_matmul(g, rlx_reshape(g, rlx_transpose(g, an, perm), 2, xd), rlx_constant(g, dt, 2, wdims, w));
        rlx_output(g, "y", add ? rlx_add(g, yn, rlx_input(g, "r", RLX_F32, 2, rd)) : yn);
        rlx_graph *f = decode_folded(g, false);
        const ir_node *fn = f ? only_node(f, IR_OP_ATTENTION_DEQUANT) : NULL;
        char what[160];
        snprintf(what, sizeof what, "attention_dequant_matmul %s mask %d kv_len %d add %d H%lld/%lld Sq%lld Skv%lld L%lld D%lld N%lld",
                 rlx_dtype_name(dt), (int)mk, has_len, add, (long long)H, (long long)Hkv, (long long)Sq, (long long)Skv,
                 (long long)L, (long long)D, (long long)N);
        bool ok = fn && ir_attr_attention_dequant_product_op(fn) == (add ? IR_OP_DEQUANT_MATMUL_ADD : IR_OP_DEQUANT_MATMUL) &&
                  ir_attr_attention_dequant_mask(fn) == mk && ir_attr_attention_dequant_rows(fn) == Sq && !only_node(f, IR_OP_ATTENTION);
        if (!ok) {
            char *dump = f ? rlx_graph_dump(f) : NULL;
            printf("    %s: not one fused node of the expected form:\n%s", what, dump ? dump : "");
            free(dump);
        }
        rlx_exec *e = ok ? compile_exact_cpu(f) : NULL;
        float *y = ops_f32(Sq * N);
        rlx_tensor in[6] = {
            {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, H, Sq, D}, .data = q, .bytes = sizeof(float) * (size_t)nq},
            {.name = "k", .dtype = RLX_F32, .rank = 4, .dims = {1, Hkv, Skv, D}, .data = k, .bytes = sizeof(float) * (size_t)nk},
            {.name = "v", .dtype = RLX_F32, .rank = 4, .dims = {1, Hkv, Skv, D}, .data = v, .bytes = sizeof(float) * (size_t)nk},
        };
        int n_in = 3;
        if (mk == RLX_MASK_ADDITIVE)
            in[n_in++] = (rlx_tensor){.name = "mask", .dtype = RLX_F32, .rank = 4, .dims = {1, 1, Sq, Skv}, .data = mask,
                                      .bytes = sizeof(float) * (size_t)(Sq * Skv)};
        if (has_len) in[n_in++] = (rlx_tensor){.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4};
        if (add)
            in[n_in++] = (rlx_tensor){.name = "r", .dtype = RLX_F32, .rank = 2, .dims = {Sq, N}, .data = r,
                                      .bytes = sizeof(float) * (size_t)(Sq * N)};
        ok = e && rlx_exec_run(e, in, n_in) == RLX_OK && rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)(Sq * N)) == RLX_OK;
        if (e && !ok) printf("    %s: %s\n", what, rlx_last_error());
        ok = ok && test_close_f32_f64(what, y, want, Sq * N, 1e-5);
        rlx_exec_free(e);
        rlx_graph_free(f);
        rlx_graph_free(g);
        free(w);
        free(wd);
        CHECK(ok);
    }
    ops_free_all();
}
