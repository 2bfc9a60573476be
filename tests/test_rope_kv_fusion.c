/*
 * test_rope_kv_fusion.c — kv_write(cache, rope(x, ...), pos) fused into
 * rope_kv_write (passes/fuse.c): on the CPU the fused graph equals the
 * unfused one (fuse = 0) bit for bit, over random shapes, both rope
 * styles, with and without frequency factors and offsets, at the first, a
 * middle and the last cache slot; the fused node really appears, and its
 * Vulkan lowering is the one-dispatch "rope-kv-write" tier, which matches
 * the CPU; a position past the cache is the same "context limit" error as
 * before; a rope result with another use stays unfused; a GQA decoder
 * attention block (prefill, then decode) is unchanged by the fusion; and an
 * f64 cache takes the CPU's generic path (a Vulkan host step).
 */
#include "vk_parity.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct kcase {
    int64_t B, H, S, D, C;
    int     R;                /* rotary dims (0: D) */
    rlx_rope_style style;
    float   theta;
    bool    ff;               /* frequency factors */
    int     off;              /* rope offset: 0 none, 1 the kv position (as llama), 2 its own input */
} kcase;

enum { V_CPU_FUSED, V_CPU_UNFUSED, V_VK, N_VARIANTS };

static int64_t cache_numel(const kcase *k) { return k->B * k->H * k->C * k->D; }
static int64_t x_numel(const kcase *k) { return k->B * k->H * k->S * k->D; }

/* y = kv_write(cache, rope(x, off, ff), pos); with extra_use, rope's result
 * is a second output "r" (so it must stay unfused). */
static rlx_graph *build(const kcase *k, const float *ff, bool extra_use) {
    rlx_graph *g = rlx_graph_new();
    int64_t xd[4] = {k->B, k->H, k->S, k->D}, cd[4] = {k->B, k->H, k->C, k->D}, one[1] = {1};
    int64_t half = (k->R ? k->R : k->D) / 2;
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd), pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node off = k->off == 0 ? RLX_NO_NODE : k->off == 1 ? pos : rlx_input(g, "off", RLX_I32, 1, one);
    rlx_node f = k->ff ? rlx_constant(g, RLX_F32, 1, &half, ff) : RLX_NO_NODE;
    rlx_node r = rlx_rope_scaled(g, x, off, k->style, k->theta, k->R, f);
    rlx_output(g, "y", rlx_kv_write(g, rlx_param(g, "cache", RLX_F32, 4, cd), r, pos));
    if (extra_use) rlx_output(g, "r", r);
    return g;
}

/* Whether e's report names `what`. */
static bool report_has(rlx_exec *e, const char *what) {
    char *rep = rlx_exec_report(e);
    bool has = rep && strstr(rep, what);
    free(rep);
    return has;
}

/* Compiles variant v of g with param `cache` set to cache0; NULL (message
 * printed) on failure, or when v is Vulkan and there is no device. */
static rlx_exec *compile_variant(const rlx_graph *g, int v, const char *cache, const float *cache0, int64_t n_cache) {
    rlx_compile_options o;
    if (v == V_VK) vkp_options(&o);
    else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; }
    o.fuse = v != V_CPU_UNFUSED;
    rlx_exec *e = NULL;
    rlx_status st = rlx_compile(g, &o, &e);
    if (st == RLX_OK) st = rlx_exec_set_param_f32(e, cache, cache0, (size_t)n_cache);
    if (st != RLX_OK) {
        printf("    variant %d: %s\n", v, rlx_last_error());
        rlx_exec_free(e);
        return NULL;
    }
    return e;
}

static rlx_status run_at(rlx_exec *e, const kcase *k, const float *x, int32_t pos, int32_t off, float *y) {
    rlx_tensor in[3] = {
        {.name = "x", .dtype = RLX_F32, .rank = 4, .dims = {k->B, k->H, k->S, k->D}, .data = (void *)x,
         .bytes = sizeof(float) * (size_t)x_numel(k)},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        {.name = "off", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &off, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, k->off == 2 ? 3 : 2);
    if (st != RLX_OK || !y) return st;
    return rlx_exec_read_output(e, "y", y, sizeof(float) * (size_t)cache_numel(k));
}

/* Vulkan against the CPU: slots never written (written[slot] false) are
 * untouched (bit equal), written ones agree to rope's GPU accuracy. */
static bool vk_close(const kcase *k, const float *cpu, const float *vk, const bool *written_slots) {
    for (int64_t i = 0; i < cache_numel(k); i++) {
        int64_t slot = i / k->D % k->C;
        bool written = written_slots[slot];
        if (written ? !(fabsf(cpu[i] - vk[i]) <= 1e-5f * (1 + fabsf(cpu[i]))) : memcmp(&cpu[i], &vk[i], 4) != 0) {
            printf("    vulkan [%lld] (slot %lld, %s) cpu %.9g vulkan %.9g\n", (long long)i, (long long)slot,
                   written ? "written" : "untouched", cpu[i], vk[i]);
            return false;
        }
    }
    return true;
}

/* One case on every variant: three steps (pos 0, middle, last slot) then
 * the context limit both ways, then one more good step. */
static bool check_case(const kcase *k, int idx) {
    int64_t nc = cache_numel(k), nx = x_numel(k), half = (k->R ? k->R : k->D) / 2;
    float *cache0 = malloc(sizeof(float) * (size_t)nc), *x = malloc(sizeof(float) * (size_t)nx);
    float *ff = malloc(sizeof(float) * (size_t)half), *y[N_VARIANTS];
    bool *written = calloc((size_t)k->C, sizeof *written);
    for (int v = 0; v < N_VARIANTS; v++) y[v] = malloc(sizeof(float) * (size_t)nc);
    test_fill_uniform_f32(cache0, nc, -1, 1);
    test_fill_uniform_f32(ff, half, 0.5, 8);
    rlx_graph *g = build(k, ff, false);
    rlx_exec *e[N_VARIANTS] = {0};
    bool ok = rlx_graph_status(g) == RLX_OK, have_vk = vkp_available();
    for (int v = 0; v < N_VARIANTS && ok; v++)
        if (v != V_VK || have_vk) ok = (e[v] = compile_variant(g, v, "cache", cache0, nc)) != NULL;
    int32_t steps[4] = {0, (int32_t)((k->C - k->S) / 2), (int32_t)(k->C - k->S), (int32_t)(k->C - k->S) / 3};
    for (int s = 0; s < 4 && ok; s++) {
        test_fill_uniform_f32(x, nx, -2, 2);
        int32_t off = (int32_t)test_rand_int(-50, 70000);
        for (int v = 0; v < N_VARIANTS && ok; v++) {
            if (!e[v]) continue;
            rlx_status st = run_at(e[v], k, x, steps[s], off, y[v]);
            if (st != RLX_OK) { printf("    variant %d pos %d: %s\n", v, steps[s], rlx_last_error()); ok = false; }
        }
        if (ok && memcmp(y[V_CPU_FUSED], y[V_CPU_UNFUSED], sizeof(float) * (size_t)nc) != 0) {
            printf("    fused and unfused CPU caches differ at pos %d\n", steps[s]);
            ok = false;
        }
        for (int64_t j = 0; j < k->S; j++) written[steps[s] + j] = true;
        if (ok && e[V_VK]) ok = vk_close(k, y[V_CPU_UNFUSED], y[V_VK], written);
        if (s == 2) {   /* past the end (the context limit), and negative */
            int32_t bad[2] = {(int32_t)(k->C - k->S + 1), -1};
            for (int b = 0; b < 2 && ok; b++) {
                char want[512] = "";
                for (int v = 0; v < N_VARIANTS && ok; v++) {
                    if (!e[v]) continue;
                    rlx_status st = run_at(e[v], k, x, bad[b], off, NULL);
                    ok = st == RLX_STATUS_INVALID_ARGUMENT &&
                         strstr(rlx_last_error(), b == 0 ? "context limit" : "position -1 is negative");
                    if (ok && v == V_CPU_FUSED) snprintf(want, sizeof want, "%s", rlx_last_error());
                    else if (ok && v == V_CPU_UNFUSED) ok = strcmp(want, rlx_last_error()) == 0;
                    if (!ok) printf("    variant %d pos %d: %s: '%s' (fused CPU said '%s')\n", v, bad[b],
                                    rlx_status_name(st), rlx_last_error(), want);
                }
            }
        }
    }
    /* the fused node exists exactly when fusion is on, and Vulkan runs it as one kernel */
    rlx_exec_stats st[N_VARIANTS];
    for (int v = 0; v < N_VARIANTS && ok; v++) {
        if (!e[v]) continue;
        ok = rlx_exec_get_stats(e[v], &st[v]) == RLX_OK;
        bool fused = report_has(e[v], "rope_kv_write");
        if (ok && (fused != (v != V_CPU_UNFUSED) || st[v].fused_nodes != (v != V_CPU_UNFUSED))) {
            printf("    variant %d: fused_nodes %d, rope_kv_write %s in the report\n", v, st[v].fused_nodes,
                   fused ? "present" : "absent");
            ok = false;
        }
    }
    if (ok && e[V_VK] && (st[V_VK].host_steps != 0 || !report_has(e[V_VK], "rope-kv-write"))) {
        char *rep = rlx_exec_report(e[V_VK]);
        printf("    vulkan: %d host steps, want the rope-kv-write tier:\n%s", st[V_VK].host_steps, rep ? rep : "");
        free(rep);
        ok = false;
    }
    if (ok && e[V_VK] && st[V_VK].steps != st[V_CPU_UNFUSED].steps - 1) {
        printf("    vulkan runs %d steps, unfused CPU %d: want one fewer\n", st[V_VK].steps, st[V_CPU_UNFUSED].steps);
        ok = false;
    }
    if (!ok)
        printf("    case %d: B %lld H %lld S %lld D %lld C %lld R %d %s ff %d off %d\n", idx, (long long)k->B,
               (long long)k->H, (long long)k->S, (long long)k->D, (long long)k->C, k->R,
               k->style == RLX_ROPE_GPTJ ? "gptj" : "neox", k->ff, k->off);
    for (int v = 0; v < N_VARIANTS; v++) {
        rlx_exec_free(e[v]);
        free(y[v]);
    }
    rlx_graph_free(g);
    free(cache0);
    free(x);
    free(ff);
    free(written);
    return ok;
}

TEST(rope_kv_fusion_fixed_cases) {
    static const kcase cases[] = {
        {1, 8, 1, 64, 32, 0, RLX_ROPE_NEOX, 10000.0f, false, 1},    /* a decode step, llama-like */
        {1, 8, 1, 64, 32, 0, RLX_ROPE_GPTJ, 500000.0f, true, 1},
        {1, 2, 5, 16, 5, 0, RLX_ROPE_NEOX, 10000.0f, true, 2},      /* S == C: only pos 0 fits */
        {2, 3, 3, 12, 9, 4, RLX_ROPE_GPTJ, 10000.0f, false, 0},     /* partial rotary, batch 2 */
        {2, 1, 4, 6, 11, 6, RLX_ROPE_NEOX, 100.0f, true, 0},
        {1, 4, 7, 128, 40, 64, RLX_ROPE_NEOX, 1000000.0f, true, 2},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) CHECK_MSG(check_case(&cases[c], (int)c), "case %zu", c);
}

TEST(rope_kv_fusion_random_shapes) {
    for (int c = 0; c < 12; c++) {
        kcase k;
        k.B = test_rand_int(1, 2);
        k.H = test_rand_int(1, 4);
        k.S = test_rand_int(1, 6);
        k.D = 2 * test_rand_int(1, 40);
        k.C = k.S + test_rand_int(0, 20);
        k.R = test_rand_int(0, 1) ? 0 : 2 * (int)test_rand_int(1, k.D / 2);
        k.style = test_rand_int(0, 1) ? RLX_ROPE_GPTJ : RLX_ROPE_NEOX;
        k.theta = test_rand_int(0, 1) ? 10000.0f : 500000.0f;
        k.ff = test_rand_int(0, 1);
        k.off = (int)test_rand_int(0, 2);
        CHECK_MSG(check_case(&k, 100 + c), "random case %d", c);
    }
}

/* The whole-output CPU <-> Vulkan parity helper on one fused graph. */
TEST(rope_kv_fusion_vk_parity) {
    VKP_REQUIRE();
    kcase k = {1, 4, 3, 32, 12, 0, RLX_ROPE_NEOX, 10000.0f, true, 1};
    float ff[16], x[4 * 3 * 32];
    test_fill_uniform_f32(ff, 16, 0.5, 4);
    test_fill_uniform_f32(x, 4 * 3 * 32, -1, 1);
    rlx_graph *g = build(&k, ff, false);
    int32_t pos = 5;
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F32, .rank = 4, .dims = {1, 4, 3, 32}, .data = x, .bytes = sizeof x},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
    };
    CHECK(vkp_compare(g, in, 2, 2e-6, true));
    rlx_graph_free(g);
}

/* A rope result that is also an output must be kept, so nothing fuses; both
 * outputs are still right. */
TEST(rope_kv_fusion_needs_the_sole_use) {
    kcase k = {1, 2, 2, 8, 6, 0, RLX_ROPE_NEOX, 10000.0f, false, 1};
    float cache0[2 * 6 * 8], x[2 * 2 * 8], y[2 * 6 * 8], r[2 * 2 * 8];
    test_fill_uniform_f32(cache0, 2 * 6 * 8, -1, 1);
    test_fill_uniform_f32(x, 2 * 2 * 8, -1, 1);
    rlx_graph *g = build(&k, NULL, true);
    rlx_exec *e = compile_variant(g, V_CPU_FUSED, "cache", cache0, 2 * 6 * 8);
    rlx_graph_free(g);
    CHECK(e);
    rlx_exec_stats s;
    CHECK_OK(rlx_exec_get_stats(e, &s));
    CHECK_MSG(s.fused_nodes == 0 && !report_has(e, "rope_kv_write"), "fused %d nodes", s.fused_nodes);
    CHECK_OK(run_at(e, &k, x, 3, 0, y));
    CHECK_OK(rlx_exec_read_output(e, "r", r, sizeof r));
    rlx_exec_free(e);
    for (int bh = 0; bh < 2; bh++)
        for (int s = 0; s < 6; s++)
            for (int d = 0; d < 8; d++) {
                float want = s >= 3 && s < 5 ? r[(bh * 2 + s - 3) * 8 + d] : cache0[(bh * 6 + s) * 8 + d];
                CHECK_MSG(y[(bh * 6 + s) * 8 + d] == want, "cache [%d,%d,%d]", bh, s, d);
            }
    /* rotated: position 3 + 0 moves element 0 of the first row */
    CHECK(r[0] != x[0] || r[4] != x[4]);
}

/* A GQA decoder attention block, q and k roped, over a KV cache: prefill then
 * decode steps, fused vs unfused CPU bit for bit, Vulkan close, and k's
 * write fused on both backends. */
enum { AH = 4, AHKV = 2, AD = 16, ACAP = 12, AT = 6 };

static rlx_graph *attention_graph(void) {
    rlx_graph *g = rlx_graph_new();
    int64_t seq = rlx_symbol(g, "seq");
    int64_t qd[4] = {1, AH, seq, AD}, kd[4] = {1, AHKV, seq, AD}, cd[4] = {1, AHKV, ACAP, AD}, one[1] = {1};
    rlx_node pos = rlx_input(g, "pos", RLX_I32, 1, one), len = rlx_input(g, "kv_len", RLX_I32, 1, one);
    rlx_node q = rlx_rope(g, rlx_input(g, "q", RLX_F32, 4, qd), pos, RLX_ROPE_NEOX, 10000.0f, 0);
    rlx_node k = rlx_rope(g, rlx_input(g, "k", RLX_F32, 4, kd), pos, RLX_ROPE_NEOX, 10000.0f, 0);
    rlx_node kc = rlx_kv_write(g, rlx_param(g, "k_cache", RLX_F32, 4, cd), k, pos);
    rlx_node vc = rlx_kv_write(g, rlx_param(g, "v_cache", RLX_F32, 4, cd), rlx_input(g, "v", RLX_F32, 4, kd), pos);
    rlx_output(g, "out", rlx_attention_kv(g, q, kc, vc, RLX_MASK_CAUSAL, RLX_NO_NODE, 0, len));
    return g;
}

/* One step of n tokens at position t0. The step's q, k, v ([1, heads, n, D])
 * start at t0 * heads * D of q, k, v: the steps' tensors back to back. */
static rlx_status attention_step(rlx_exec *e, const float *q, const float *k, const float *v, int t0, int n, float *out) {
    int32_t pos = t0, len = t0 + n;
    size_t qb = sizeof(float) * AH * (size_t)n * AD, kb = sizeof(float) * AHKV * (size_t)n * AD;
    rlx_tensor in[5] = {
        {.name = "q", .dtype = RLX_F32, .rank = 4, .dims = {1, AH, n, AD}, .data = (void *)(q + t0 * AH * AD), .bytes = qb},
        {.name = "k", .dtype = RLX_F32, .rank = 4, .dims = {1, AHKV, n, AD}, .data = (void *)(k + t0 * AHKV * AD), .bytes = kb},
        {.name = "v", .dtype = RLX_F32, .rank = 4, .dims = {1, AHKV, n, AD}, .data = (void *)(v + t0 * AHKV * AD), .bytes = kb},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &pos, .bytes = 4},
        {.name = "kv_len", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &len, .bytes = 4},
    };
    rlx_status st = rlx_exec_run(e, in, 5);
    return st != RLX_OK ? st : rlx_exec_read_output(e, "out", out + t0 * AH * AD, qb);
}

TEST(rope_kv_fusion_gqa_attention_block) {
    float q[AH * AT * AD], k[AHKV * AT * AD], v[AHKV * AT * AD], zero[AHKV * ACAP * AD] = {0};
    test_fill_uniform_f32(q, AH * AT * AD, -1, 1);
    test_fill_uniform_f32(k, AHKV * AT * AD, -1, 1);
    test_fill_uniform_f32(v, AHKV * AT * AD, -1, 1);
    rlx_graph *g = attention_graph();
    bool have_vk = vkp_available();
    static float out[N_VARIANTS][AH * AD * AT];
    for (int var = 0; var < N_VARIANTS; var++) {
        if (var == V_VK && !have_vk) break;
        rlx_exec *e = compile_variant(g, var, "k_cache", zero, AHKV * ACAP * AD);
        CHECK(e && rlx_exec_set_param_f32(e, "v_cache", zero, AHKV * ACAP * AD) == RLX_OK);
        bool ok = attention_step(e, q, k, v, 0, 3, out[var]) == RLX_OK;   /* prefill 3, then decode */
        for (int t = 3; t < AT && ok; t++) ok = attention_step(e, q, k, v, t, 1, out[var]) == RLX_OK;
        if (!ok) printf("    variant %d: %s\n", var, rlx_last_error());
        rlx_exec_stats s;
        ok = ok && rlx_exec_get_stats(e, &s) == RLX_OK;
        /* k's rope + write fuse (q's rope and v's write stay), so one fused node */
        if (ok && (s.fused_nodes != (var != V_CPU_UNFUSED) || (var == V_VK && !report_has(e, "rope-kv-write")))) {
            printf("    variant %d: fused_nodes %d\n", var, s.fused_nodes);
            ok = false;
        }
        rlx_exec_free(e);
        CHECK(ok);
    }
    rlx_graph_free(g);
    CHECK(memcmp(out[V_CPU_FUSED], out[V_CPU_UNFUSED], sizeof out[0]) == 0);
    if (have_vk)
        for (size_t i = 0; i < sizeof out[0] / sizeof(float); i++)
            CHECK_MSG(fabsf(out[V_VK][i] - out[V_CPU_FUSED][i]) <= 1e-5f * (1 + fabsf(out[V_CPU_FUSED][i])), "out[%zu]", i);
}

/* A non-f32 cache (f64): the CPU's generic path stores into the cache rows
 * too, and on Vulkan (no f64 rope kernel) the fused node is a host step
 * whose output is a copy of the cache with the rows written. */
TEST(rope_kv_fusion_f64_and_host_step) {
    enum { H2 = 3, S2 = 2, D2 = 10, C2 = 7 };
    double cache0[H2 * C2 * D2], x[H2 * S2 * D2], y[N_VARIANTS][H2 * C2 * D2];
    for (int i = 0; i < H2 * C2 * D2; i++) cache0[i] = test_rand_uniform(-1, 1);
    for (int i = 0; i < H2 * S2 * D2; i++) x[i] = test_rand_uniform(-1, 1);
    rlx_graph *g = rlx_graph_new();
    int64_t xd[4] = {1, H2, S2, D2}, cd[4] = {1, H2, C2, D2}, one[1] = {1};
    rlx_node pos = rlx_input(g, "pos", RLX_I32, 1, one);
    rlx_node r = rlx_rope(g, rlx_input(g, "x", RLX_F64, 4, xd), pos, RLX_ROPE_GPTJ, 10000.0f, 8);
    rlx_output(g, "y", rlx_kv_write(g, rlx_param(g, "cache", RLX_F64, 4, cd), r, pos));
    bool have_vk = vkp_available();
    int32_t p = 4;
    rlx_tensor in[2] = {
        {.name = "x", .dtype = RLX_F64, .rank = 4, .dims = {1, H2, S2, D2}, .data = x, .bytes = sizeof x},
        {.name = "pos", .dtype = RLX_I32, .rank = 1, .dims = {1}, .data = &p, .bytes = 4},
    };
    for (int v = 0; v < N_VARIANTS; v++) {
        if (v == V_VK && !have_vk) break;
        rlx_compile_options o;
        if (v == V_VK) vkp_options(&o);
        else { rlx_compile_options_init(&o); o.backend = RLX_BACKEND_CPU; o.fuse = v == V_CPU_FUSED; }
        rlx_exec *e = NULL;
        rlx_exec_stats s;
        bool ok = rlx_compile(g, &o, &e) == RLX_OK && rlx_exec_set_param(e, "cache", RLX_F64, cache0, sizeof cache0) == RLX_OK &&
                  rlx_exec_run(e, in, 2) == RLX_OK && rlx_exec_read_output(e, "y", y[v], sizeof y[v]) == RLX_OK &&
                  rlx_exec_get_stats(e, &s) == RLX_OK;
        if (!ok) printf("    variant %d: %s\n", v, rlx_last_error());
        ok = ok && s.fused_nodes == (v != V_CPU_UNFUSED) && (v != V_VK || (s.host_steps == 1 && report_has(e, "rope_kv_write")));
        rlx_exec_free(e);
        CHECK_MSG(ok, "variant %d", v);
    }
    rlx_graph_free(g);
    CHECK(memcmp(y[V_CPU_FUSED], y[V_CPU_UNFUSED], sizeof y[0]) == 0);
    if (have_vk) CHECK(memcmp(y[V_VK], y[V_CPU_FUSED], sizeof y[0]) == 0);
    CHECK(memcmp(y[V_CPU_FUSED], cache0, sizeof cache0) != 0);
    CHECK(memcmp(y[V_CPU_FUSED], cache0, sizeof(double) * 4 * D2) == 0);   /* slots before pos untouched */
}
