/*
 * test_vk_epilogue.c — dequant_rope_kv: a projection with its rope,
 * rope_kv_write or kv_write consumer as one fused node
 * (passes/fold_decode.c), which Vulkan lowers as one i8 matvec storing its
 * rows rotated and / or into the cache (vk_lower_dequant_rope_kv): q's rope,
 * k's rope + cache write and v's cache write. On the CPU the fused graph
 * equals the unfused one bit for bit and shows the op in its dump; on
 * Vulkan, against the CPU and against Vulkan unfused (fuse = 0) at several
 * positions, both rope styles, frequency factors, with and without a folded
 * norm; and the cases that must stay separate (partial rotary dims, prefill,
 * an extra use).
 */
#include "harness.h"
#include "ops_common.h"
#include "vk_parity.h"
#include "ir/ir.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

enum { EK = 256, EH = 4, EHKV = 2, ED = 16, EC = 8 };

typedef struct ecase {
    rlx_dtype      dt;
    bool           norm;        /* rms_norm before the projections (folded into the i8 matvec) */
    rlx_rope_style style;
    bool           ff;          /* frequency factors */
    int            rot;         /* rotary dims (0: the whole head) */
    int64_t        M;           /* tokens: 1 decode */
    bool           q_extra_use; /* q's product is also an output (no epilogue for q) */
} ecase;

typedef struct ebufs { void *w[3]; double *wd[3]; float gamma[EK], ff[ED / 2]; } ebufs;

static rlx_node heads(rlx_graph *g, rlx_node y, int64_t M, int64_t H) {
    int64_t d4[4] = {1, M, H, ED};
    static const int perm[4] = {0, 2, 1, 3};
    return rlx_transpose(g, rlx_reshape(g, y, 4, d4), perm);
}

static rlx_graph *build(const ecase *c, ebufs *b) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {c->M, EK}, one[1] = {1}, gd[1] = {EK}, fd[1] = {ED / 2}, cd[4] = {1, EHKV, EC, ED};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node h = c->norm ? rlx_rms_norm(g, x, rlx_constant(g, RLX_F32, 1, gd, b->gamma), RLX_NO_NODE, 1e-5f) : x;
    static const int64_t Ns[3] = {EH * ED, EHKV * ED, EHKV * ED};
    rlx_node y[3];
    for (int i = 0; i < 3; i++) {
        int64_t wd[2] = {Ns[i], EK};
        y[i] = rlx_dequant_matmul(g, h, rlx_constant(g, c->dt, 2, wd, b->w[i]));
    }
    rlx_node ff = c->ff ? rlx_constant(g, RLX_F32, 1, fd, b->ff) : RLX_NO_NODE;
    int rot = c->rot ? c->rot : ED;
#define ROPE(t) (c->ff ? rlx_rope_scaled(g, t, pos, c->style, 10000.0f, rot, ff) : rlx_rope(g, t, pos, c->style, 10000.0f, rot))
    rlx_output(g, "q", ROPE(heads(g, y[0], c->M, EH)));
    if (c->q_extra_use) rlx_output(g, "q_raw", y[0]);
    rlx_output(g, "kc", rlx_kv_write(g, rlx_param(g, "k_cache", RLX_F32, 4, cd), ROPE(heads(g, y[1], c->M, EHKV)), pos));
    rlx_output(g, "vc", rlx_kv_write(g, rlx_param(g, "v_cache", RLX_F32, 4, cd), heads(g, y[2], c->M, EHKV), pos));
#undef ROPE
    return g;
}

/* dequant_rope_kv nodes the Vulkan report shows for this graph (fuse: the option). */
static int count_epilogues_opt(const rlx_graph *g, const rlx_tensor *in, bool fuse) {
    rlx_compile_options o;
    vkp_options(&o);
    o.fuse = fuse;
    rlx_exec *e = NULL;
    char *rep = NULL;
    int n = -1;
    if (rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_run(e, in, 2) == RLX_OK && (rep = rlx_exec_report(e))) {
        n = test_count(rep, "gpu    dequant_rope_kv ");
        if (getenv("RLX_TEST_SHOW_REPORT")) printf("%s", rep);
    }
    free(rep);
    rlx_exec_free(e);
    return n;
}
static int count_epilogues(const rlx_graph *g, const rlx_tensor *in) { return count_epilogues_opt(g, in, true); }

/* Vulkan fused (the default) against Vulkan with fuse = 0, every output. */
static bool fused_vs_unfused(const rlx_graph *g, const rlx_tensor *in, double tol) {
    static const char *const names[3] = {"q", "kc", "vc"};
    rlx_exec *e[2] = {NULL, NULL};
    bool ok = true;
    for (int f = 0; f < 2 && ok; f++) {
        rlx_compile_options o;
        vkp_options(&o);
        o.fuse = f == 0;
        ok = rlx_compile(g, &o, &e[f]) == RLX_OK && rlx_exec_run(e[f], in, 2) == RLX_OK;
        if (!ok) printf("    vulkan (fuse %d): %s\n", f == 0, rlx_last_error());
    }
    for (int i = 0; i < 3 && ok; i++) {
        rlx_tensor a, b;
        ok = rlx_exec_output(e[0], names[i], &a) == RLX_OK && rlx_exec_output(e[1], names[i], &b) == RLX_OK &&
             a.bytes == b.bytes;
        size_t n = b.bytes / sizeof(float);
        double *ref = ok ? malloc(sizeof(double) * n) : NULL;
        for (size_t j = 0; ok && j < n; j++) ref[j] = ((const float *)b.data)[j];
        char what[64];
        snprintf(what, sizeof what, "%s fused vs unfused", names[i]);
        ok = ok && test_close_f32_f64(what, a.data, ref, n, tol);
        free(ref);
    }
    rlx_exec_free(e[0]);
    rlx_exec_free(e[1]);
    return ok;
}

/* Runs case c at a few positions, CPU against Vulkan (caches included), and
 * checks how many consumers went into an epilogue. */
static bool run_case(const ecase *c, int want_epilogues) {
    ebufs b;
    size_t bytes;
    static const int64_t Ns[3] = {EH * ED, EHKV * ED, EHKV * ED};
    for (int i = 0; i < 3; i++) b.w[i] = ops_quantized_weights(c->dt, Ns[i], EK, &b.wd[i], &bytes);
    test_fill_uniform_f32(b.gamma, EK, 0.5f, 1.5f);
    test_fill_uniform_f32(b.ff, ED / 2, 1.0f, 8.0f);
    rlx_graph *g = build(c, &b);
    float *x = malloc(sizeof(float) * (size_t)(c->M * EK));
    bool ok = true;
    static const int32_t positions[3] = {0, 5, EC - 1};
    for (int k = 0; k < 3 && ok; k++) {
        int32_t pos = positions[k] + 1 - (int32_t)c->M > 0 ? positions[k] + 1 - (int32_t)c->M : 0;
        test_fill_uniform_f32(x, c->M * EK, -2, 2);
        rlx_tensor in[2] = {
            {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {c->M, EK}, .data = x, .bytes = sizeof(float) * (size_t)(c->M * EK)},
            {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        };
        /* the i8 matvec rounds x as the CPU fast path does (~1e-6 apart); a plain
         * Q8_0 product runs Vulkan's exact kernel against that fast path (~4e-3) */
        ok = vkp_compare(g, in, 2, c->dt == RLX_Q8_0 && !c->norm ? 1e-2 : 2e-4, true);
        /* unfused, a plain Q8_0 product takes Vulkan's exact kernel (~4e-3 from the i8 one) */
        if (ok && k == 0) ok = fused_vs_unfused(g, in, c->dt == RLX_Q8_0 ? 1e-2 : 2e-4);
        if (ok && k == 0) {
            int n = count_epilogues(g, in);
            if (n != want_epilogues) {
                printf("    %s norm %d style %d ff %d rot %d M %lld: %d epilogues, want %d\n", rlx_dtype_name(c->dt), c->norm,
                       c->style, c->ff, c->rot, (long long)c->M, n, want_epilogues);
                ok = false;
            }
        }
        if (!ok) printf("    %s norm %d style %d ff %d pos %d\n", rlx_dtype_name(c->dt), c->norm, c->style, c->ff, pos);
    }
    free(x);
    rlx_graph_free(g);
    for (int i = 0; i < 3; i++) {
        free(b.w[i]);
        free(b.wd[i]);
    }
    return ok;
}

/* i8 products (Q4_K, Q5_K, Q6_K; Q8_0 with a folded norm) absorb all three consumers. */
TEST(vk_epilogue_rope_and_kv_writes) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    static const rlx_dtype dts[] = {RLX_Q4_K, RLX_Q5_K, RLX_Q6_K, RLX_Q8_0};
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++)
        for (int norm = 0; norm < 2; norm++)
            for (int st = 0; st < 2; st++)
                for (int ff = 0; ff < 2; ff++) {
                    ecase c = {dts[t], norm, st ? RLX_ROPE_GPTJ : RLX_ROPE_NEOX, ff, 0, 1, false};
                    /* a plain Q8_0 product stays on the exact run kernel: nothing to absorb */
                    int want = dts[t] == RLX_Q8_0 && !norm ? 0 : 3;
                    CHECK(run_case(&c, want));
                }
}

/* Partial rotary dims keep rope.comp (v's write still goes in); prefill
 * shapes keep every consumer; a product with another use keeps its rope. */
TEST(vk_epilogue_left_alone) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    ecase partial = {RLX_Q4_K, true, RLX_ROPE_GPTJ, false, ED / 2, 1, false};
    CHECK(run_case(&partial, 1));
    ecase prefill = {RLX_Q4_K, true, RLX_ROPE_GPTJ, false, 0, 3, false};
    CHECK(run_case(&prefill, 0));
    ecase extra = {RLX_Q6_K, false, RLX_ROPE_NEOX, true, 0, 1, true};
    CHECK(run_case(&extra, 2));
}

/* fuse = 0 compiles the graph unfused: no dequant_rope_kv node. */
TEST(vk_epilogue_option_off) {
    VKP_REQUIRE();
    if (!vkp_require_int_dot()) return;
    ecase c = {RLX_Q4_K, true, RLX_ROPE_GPTJ, true, 0, 1, false};
    ebufs b;
    size_t bytes;
    static const int64_t Ns[3] = {EH * ED, EHKV * ED, EHKV * ED};
    for (int i = 0; i < 3; i++) b.w[i] = ops_quantized_weights(c.dt, Ns[i], EK, &b.wd[i], &bytes);
    test_fill_uniform_f32(b.gamma, EK, 0.5f, 1.5f);
    test_fill_uniform_f32(b.ff, ED / 2, 1.0f, 8.0f);
    rlx_graph *g = build(&c, &b);
    float x[EK];
    int32_t pos = 3;
    test_fill_uniform_f32(x, EK, -2, 2);
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, EK}, .data = x, .bytes = sizeof x},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
    };
    CHECK(count_epilogues_opt(g, in, false) == 0 && count_epilogues_opt(g, in, true) == 3);
    rlx_graph_free(g);
    for (int i = 0; i < 3; i++) {
        free(b.w[i]);
        free(b.wd[i]);
    }
}

/* On the CPU (the reference): the fold applied to the graph itself
 * (pass_fold_norm_inplace, then pass_fold_epilogue_inplace accepting every
 * candidate) gives three dequant_rope_kv nodes, which rlx_graph_dump shows,
 * and the same outputs as the unfused graph bit for bit: rope, rope_kv_write
 * and kv_write, with and without a folded norm, both rope styles. */
static bool cpu_case(const ecase *c) {
    ebufs b;
    size_t bytes;
    static const int64_t Ns[3] = {EH * ED, EHKV * ED, EHKV * ED};
    for (int i = 0; i < 3; i++) b.w[i] = ops_quantized_weights(c->dt, Ns[i], EK, &b.wd[i], &bytes);
    test_fill_uniform_f32(b.gamma, EK, 0.5f, 1.5f);
    test_fill_uniform_f32(b.ff, ED / 2, 1.0f, 8.0f);
    rlx_graph *plain = build(c, &b), *fused = build(c, &b);
    int n_norm = 0, n_epi = 0;
    bool ok = pass_fold_norm_inplace(&fused->g, 8, NULL, NULL, &n_norm) == RLX_OK &&
              pass_fold_epilogue_inplace(&fused->g, NULL, NULL, &n_epi) == RLX_OK;
    char *dump = rlx_graph_dump(fused);
    int want = c->q_extra_use ? 2 : 3;
    if (!ok || n_epi != want || test_count(dump, "dequant_rope_kv") != want || n_norm != (c->norm ? 3 : 0)) {
        printf("    fold: %d epilogues, %d norms (%s)\n%s", n_epi, n_norm, rlx_last_error(), dump ? dump : "");
        ok = false;
    }
    free(dump);
    rlx_compile_options o;
    rlx_compile_options_init(&o);
    o.backend = RLX_BACKEND_CPU;
    o.fuse = 0;   /* nothing else changes either graph */
    rlx_exec *ep = NULL, *ef = NULL;
    if (ok && (rlx_compile(plain, &o, &ep) != RLX_OK || rlx_compile(fused, &o, &ef) != RLX_OK)) {
        printf("    compile: %s\n", rlx_last_error());
        ok = false;
    }
    float x[EK];
    for (int32_t pos = 0; ok && pos < EC; pos += 3) {
        test_fill_uniform_f32(x, EK, -2, 2);
        rlx_tensor in[2] = {
            {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, EK}, .data = x, .bytes = sizeof x},
            {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        };
        if (rlx_exec_run(ep, in, 2) != RLX_OK || rlx_exec_run(ef, in, 2) != RLX_OK) {
            printf("    run: %s\n", rlx_last_error());
            ok = false;
            break;
        }
        static const char *const names[3] = {"q", "kc", "vc"};
        for (int i = 0; i < 3 && ok; i++) {
            rlx_tensor a, t;
            ok = rlx_exec_output(ep, names[i], &a) == RLX_OK && rlx_exec_output(ef, names[i], &t) == RLX_OK &&
                 a.bytes == t.bytes && memcmp(a.data, t.data, a.bytes) == 0;
            if (!ok) printf("    %s differs at pos %d (%s norm %d)\n", names[i], pos, rlx_dtype_name(c->dt), c->norm);
        }
    }
    rlx_exec_free(ep);
    rlx_exec_free(ef);
    rlx_graph_free(plain);
    rlx_graph_free(fused);
    for (int i = 0; i < 3; i++) {
        free(b.w[i]);
        free(b.wd[i]);
    }
    return ok;
}

TEST(dequant_rope_kv_cpu_fused_equals_unfused) {
    for (int norm = 0; norm < 2; norm++)
        for (int st = 0; st < 2; st++) {
            ecase c = {RLX_Q4_K, norm, st ? RLX_ROPE_GPTJ : RLX_ROPE_NEOX, st == 1, 0, 1, false};
            CHECK(cpu_case(&c));
        }
    ecase extra = {RLX_Q8_0, true, RLX_ROPE_NEOX, false, 0, 1, true};
    CHECK(cpu_case(&extra));
}

/* Schedules where doing the consumer's work at the matvec's place would be
 * wrong (epilogue_safe): the memory plan may give rope(q)'s bytes to the
 * unfolded norm output that k and v still read (mode 0: v's type, Q5_0, is
 * not an i8 one, so the norm stays a node; mode 2: fusion off), or to the x of the
 * last projection itself (mode 1: v, k, q order); an offset made by a step
 * after the matvec (mode 3). Attention consumes the rope and the caches, as
 * in a decoder layer, so none of them is a graph output pinned for the run.
 * Mode 4 is the decoder layer as rlx builds it (norm folded, all Q4_K): all
 * three consumers must still go into epilogues there. */
enum { SH = 16, SN = SH * ED, SNKV = EHKV * ED };

static rlx_graph *schedule_graph(int mode, void *const *w, const float *gamma) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {1, EK}, one[1] = {1}, gd[1] = {EK}, cd[4] = {1, EHKV, EC, ED};
    int64_t wq[2] = {SN, EK}, wk[2] = {SNKV, EK};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node h = rlx_rms_norm(g, x, rlx_constant(g, RLX_F32, 1, gd, gamma), RLX_NO_NODE, 1e-5f);
    rlx_dtype vt = mode == 0 || mode == 1 ? RLX_Q5_0 : RLX_Q4_K;
    rlx_node q, k, v;
    if (mode == 1) {
        v = rlx_dequant_matmul(g, h, rlx_constant(g, vt, 2, wk, w[2]));
        k = rlx_dequant_matmul(g, h, rlx_constant(g, RLX_Q4_K, 2, wk, w[1]));
        q = rlx_dequant_matmul(g, h, rlx_constant(g, RLX_Q4_K, 2, wq, w[0]));
    } else {
        q = rlx_dequant_matmul(g, h, rlx_constant(g, RLX_Q4_K, 2, wq, w[0]));
        k = rlx_dequant_matmul(g, h, rlx_constant(g, RLX_Q4_K, 2, wk, w[1]));
        v = rlx_dequant_matmul(g, h, rlx_constant(g, vt, 2, wk, w[2]));
    }
    rlx_node off = pos;
    if (mode == 3) {
        static const int32_t three = 3;
        off = rlx_add(g, pos, rlx_constant(g, RLX_I32, 1, one, &three));
    }
    int64_t d4q[4] = {1, 1, SH, ED}, d4k[4] = {1, 1, EHKV, ED};
    static const int perm[4] = {0, 2, 1, 3};
    rlx_node qr = rlx_rope(g, rlx_transpose(g, rlx_reshape(g, q, 4, d4q), perm), off, RLX_ROPE_NEOX, 10000.0f, ED);
    rlx_node kr = rlx_rope(g, rlx_transpose(g, rlx_reshape(g, k, 4, d4k), perm), off, RLX_ROPE_NEOX, 10000.0f, ED);
    rlx_node kc = rlx_kv_write(g, rlx_param(g, "k_cache", RLX_F32, 4, cd), kr, pos);
    rlx_node vc = rlx_kv_write(g, rlx_param(g, "v_cache", RLX_F32, 4, cd), rlx_transpose(g, rlx_reshape(g, v, 4, d4k), perm), pos);
    rlx_output(g, "a", rlx_attention_kv(g, qr, kc, vc, RLX_MASK_CAUSAL, RLX_NO_NODE, 0.25f, RLX_NO_NODE));
    return g;
}

TEST(vk_epilogue_schedule_hazards) {
    VKP_REQUIRE();
    bool int_dot = vkp_devices_int_dot() == 1;
    for (int mode = 0; mode < 5; mode++) {
        void *w[3];
        double *wd[3];
        size_t bytes;
        rlx_dtype vt = mode == 0 || mode == 1 ? RLX_Q5_0 : RLX_Q4_K;
        w[0] = ops_quantized_weights(RLX_Q4_K, SN, EK, &wd[0], &bytes);
        w[1] = ops_quantized_weights(RLX_Q4_K, SNKV, EK, &wd[1], &bytes);
        w[2] = ops_quantized_weights(vt, SNKV, EK, &wd[2], &bytes);
        float gamma[EK], x[EK];
        test_fill_uniform_f32(gamma, EK, 0.5f, 1.5f);
        rlx_graph *g = schedule_graph(mode, w, gamma);
        char *no_fuse = getenv("RLX_NO_FUSE") ? strdup(getenv("RLX_NO_FUSE")) : NULL;
        if (mode == 2) setenv("RLX_NO_FUSE", "1", 1);
        for (int32_t pos = 0; pos < EC - 3; pos += 2) {
            test_fill_uniform_f32(x, EK, -2, 2);
            rlx_tensor in[2] = {
                {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, EK}, .data = x, .bytes = sizeof x},
                {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
            };
            /* exact Vulkan kernels (Q5_0, unfolded) against the CPU fast path: ~1e-3 */
            bool ok = vkp_compare(g, in, 2, 2e-2, false);
            if (!ok) printf("    mode %d pos %d\n", mode, pos);
            CHECK(ok);
            if (mode == 4 && pos == 0 && int_dot) CHECK_MSG(count_epilogues(g, in) == 3, "decoder layer: %d epilogues",
                                                            count_epilogues(g, in));
        }
        if (no_fuse) setenv("RLX_NO_FUSE", no_fuse, 1);
        else unsetenv("RLX_NO_FUSE");
        free(no_fuse);
        rlx_graph_free(g);
        for (int i = 0; i < 3; i++) {
            free(w[i]);
            free(wd[i]);
        }
    }
}

/* A consumer with no rows (zero kv heads) compiles and runs: the epilogue
 * declines it like the plain lowering does. */
TEST(vk_epilogue_empty_consumer) {
    VKP_REQUIRE();
    rlx_graph *g = rlx_graph_new();
    int64_t xd[2] = {1, EK}, one[1] = {1}, wdims[2] = {0, EK}, d4[4] = {1, 1, 0, ED}, cd[4] = {1, 0, EC, ED};
    static const int perm[4] = {0, 2, 1, 3};
    rlx_node x = rlx_input(g, "x", RLX_F32, 2, xd), pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node k = rlx_dequant_matmul(g, x, rlx_param(g, "w", RLX_Q4_K, 2, wdims));
    rlx_output(g, "kc", rlx_kv_write(g, rlx_param(g, "kcache", RLX_F32, 4, cd),
                                     rlx_transpose(g, rlx_reshape(g, k, 4, d4), perm), pos));
    float xv[EK];
    test_fill_uniform_f32(xv, EK, -1, 1);
    int32_t p = 1;
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 2, .dims = {1, EK}, .data = xv, .bytes = sizeof xv},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &p, .bytes = 4},
    };
    rlx_compile_options o;
    vkp_options(&o);
    rlx_exec *e = NULL;
    CHECK_OK(rlx_compile(g, &o, &e));
    CHECK_OK(rlx_exec_run(e, in, 2));
    rlx_exec_free(e);
    rlx_graph_free(g);
}
