/*
 * test_vk_nn.c — CPU <-> Vulkan parity of the neural-network ops lowered by
 * src/vulkan/lower/{attention,rope,topk,loss}.c: fused attention (no mask,
 * causal with Skv > Sq, additive masks of several broadcast shapes with -inf
 * entries and fully masked rows, GQA/MQA, decode Sq = 1, D in {16, 17, 64,
 * 80, 200, 256}, tiles crossing, keys split over workgroups), rope (both
 * styles, partial rotary dims, offsets up to 10^6, offset changing between
 * runs of one exec), topk values and indices (ties, NaN, +-0, several dtypes,
 * rows cached in shared memory or not) and softmax cross-entropy loss and
 * gradient. require_gpu is set: a host step is a failure (except where a host
 * step is the point).
 */
#include "ops_common.h"
#include "vk_parity.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static ref_shape shp4(int rank, int64_t a, int64_t b, int64_t c, int64_t d) {
    int64_t v[4] = {a, b, c, d};
    return ref_shape_make(rank, v);
}

/* ------------------------------------------------------------ attention */

typedef struct vatt {
    int64_t B, H, Hkv, Sq, Skv, D;
    rlx_mask kind;
    int mrank, mbits;   /* additive mask: dims of [B,H,Sq,Skv] kept where mbits has the bit, else 1 */
    float scale;
    int dead_row;       /* additive: make mask row 0 all -inf (that query outputs zeros) */
    rlx_dtype dt;       /* storage of q, k, v, mask and the result (cast in the graph); 0: f32 */
} vatt;

/* Set by vk_attention_coopmat: the Vulkan side compiles with this precision
 * and, on a device with the cooperative-matrix tier, its report must name
 * att_tier_want. */
static rlx_precision att_prec = RLX_PRECISION_F32;
static const char *att_tier_want;

/* y of g on the CPU and on Vulkan (att_prec), norm-relative within tol; the tier check above. */
static bool att_compare_prec(const rlx_graph *g, const rlx_tensor *in, int n, double tol) {
    rlx_compile_options oc, ov;
    rlx_compile_options_init(&oc);
    oc.backend = RLX_BACKEND_CPU;
    vkp_options(&ov);
    ov.precision = att_prec;
    rlx_exec *ec = NULL, *ev = NULL;
    rlx_tensor a, b;
    bool ok = rlx_compile(g, &oc, &ec) == RLX_OK && rlx_compile(g, &ov, &ev) == RLX_OK && rlx_exec_run(ec, in, n) == RLX_OK &&
              rlx_exec_run(ev, in, n) == RLX_OK && rlx_exec_output(ec, "y", &a) == RLX_OK &&
              rlx_exec_output(ev, "y", &b) == RLX_OK && a.dtype == RLX_F32 && a.bytes == b.bytes;
    if (!ok) printf("    %s\n", rlx_last_error());
    double num = 0, den = 0;
    for (size_t i = 0; ok && i < a.bytes / 4; i++) {
        double x = ((const float *)a.data)[i], y = ((const float *)b.data)[i];
        if (isnan(y)) ok = false;
        num += (x - y) * (x - y), den += x * x;
    }
    double rel = den > 0 ? sqrt(num / den) : sqrt(num);
    if (ok && rel > tol) {
        printf("    rel error %.3g (tol %.3g)\n", rel, tol);
        ok = false;
    }
    char *rep = ok ? rlx_exec_report(ev) : NULL;
    if (ok && att_tier_want && vkp_device_has_coopmat() == 1 && (!rep || !strstr(rep, att_tier_want))) {
        printf("    expected tier %s:\n%s", att_tier_want, rep ? rep : "");
        ok = false;
    }
    free(rep);
    rlx_exec_free(ec);
    rlx_exec_free(ev);
    return ok;
}

static bool vk_attention_case(vatt t, bool require_gpu) {
    ops_inputs in = {0};
    rlx_graph *g = ops_graph();
    ref_shape sq = shp4(4, t.B, t.H, t.Sq, t.D), sk = shp4(4, t.B, t.Hkv, t.Skv, t.D);
    int64_t full[4] = {t.B, t.H, t.Sq, t.Skv}, md[4];
    for (int i = 0; i < 4; i++) md[i] = (t.mbits >> i) & 1 ? full[i] : 1;
    md[3] = t.Skv;
    ref_shape sm = ref_shape_make(t.mrank, md + 4 - t.mrank);
    int64_t nq = ref_numel(&sq), nk = ref_numel(&sk), nm = ref_numel(&sm);
    rlx_node q = ops_add_input(g, &in, RLX_F32, sq, ops_rand_f32(nq, -2, 2));
    rlx_node k = ops_add_input(g, &in, RLX_F32, sk, ops_rand_f32(nk, -2, 2));
    rlx_node v = ops_add_input(g, &in, RLX_F32, sk, ops_rand_f32(nk, -1, 1));
    const bool half = t.dt == RLX_F16 || t.dt == RLX_BF16;
    if (half) q = rlx_cast(g, q, t.dt), k = rlx_cast(g, k, t.dt), v = rlx_cast(g, v, t.dt);
    rlx_node m = RLX_NO_NODE;
    if (t.kind == RLX_MASK_ADDITIVE) {
        float *mv = ops_rand_f32(nm, -3, 1);
        for (int64_t i = 0; i < nm; i++)
            if (i % t.Skv != 0 && test_rand_int(0, 3) == 0) mv[i] = -INFINITY;
        if (t.dead_row)
            for (int64_t j = 0; j < t.Skv; j++) mv[j] = -INFINITY;
        m = ops_add_input(g, &in, RLX_F32, sm, mv);
        if (half) m = rlx_cast(g, m, t.dt);
    }
    rlx_node y = rlx_attention(g, q, k, v, t.kind, m, t.scale);
    if (half) y = rlx_cast(g, y, RLX_F32);   /* compared norm-relative as f32 */
    if (rlx_output(g, "y", y) != RLX_OK) {
        printf("    build: %s\n", rlx_last_error());
        return false;
    }
    /* both sides compute in f32 from the same stored inputs; the f16 / bf16 result rounds */
    double tol = t.dt == RLX_F16 ? 2e-3 : t.dt == RLX_BF16 ? 1e-2 : 2e-5;
    bool ok = att_prec == RLX_PRECISION_F32 && !att_tier_want ? vkp_compare(g, in.t, in.n, tol, require_gpu)
                                                              : att_compare_prec(g, in.t, in.n, att_prec == RLX_PRECISION_FAST ? 3e-3 : tol);
    if (!ok)
        printf("    %s attention B%lld H%lld Hkv%lld Sq%lld Skv%lld D%lld kind %d mrank %d mbits %d\n", rlx_dtype_name(t.dt ? t.dt : RLX_F32), (long long)t.B,
               (long long)t.H, (long long)t.Hkv, (long long)t.Sq, (long long)t.Skv, (long long)t.D, (int)t.kind,
               t.mrank, t.mbits);
    return ok;
}

TEST(vk_attention) {
    VKP_REQUIRE();
    static const vatt cases[] = {
        /* B  H Hkv Sq Skv   D  kind                mrank mbits scale dead */
        {1, 1, 1, 1, 1, 16, RLX_MASK_NONE, 0, 0, 0, 0, 0},
        {2, 2, 2, 5, 5, 16, RLX_MASK_NONE, 0, 0, 0, 0, 0},
        {1, 2, 2, 17, 40, 17, RLX_MASK_NONE, 0, 0, 0, 0, 0},           /* odd D: scalar loads */
        {2, 4, 2, 7, 7, 64, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},           /* GQA */
        {1, 4, 1, 1, 37, 64, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},          /* decode, MQA */
        {1, 2, 2, 1, 70, 64, RLX_MASK_NONE, 0, 0, 0, 0, 0},            /* decode, several tiles */
        {1, 2, 2, 9, 70, 80, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},          /* Skv > Sq, D = 80 */
        {1, 8, 2, 33, 33, 64, RLX_MASK_CAUSAL, 0, 0, 0.05f, 0, 0},     /* blocks span heads */
        {1, 2, 1, 70, 70, 64, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},         /* many query blocks */
        {2, 3, 3, 6, 11, 16, RLX_MASK_ADDITIVE, 4, 1 | 8, 0, 0, 0},    /* [B,1,1,Skv] padding mask */
        {2, 4, 2, 4, 6, 64, RLX_MASK_ADDITIVE, 4, 15, 0, 1, 0},        /* full mask, one dead row */
        {1, 2, 2, 5, 9, 17, RLX_MASK_ADDITIVE, 2, 4 | 8, 0.3f, 0, 0},  /* [Sq,Skv], odd D */
        {1, 3, 3, 4, 7, 80, RLX_MASK_ADDITIVE, 1, 8, 0, 0, 0},         /* [Skv] */
        {1, 1, 1, 20, 45, 256, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},        /* largest D */
        {1, 4, 2, 1, 1000, 64, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},        /* decode: keys split over workgroups */
        {2, 2, 1, 2, 777, 80, RLX_MASK_ADDITIVE, 4, 1 | 8, 0, 1, 0},   /* split keys, masked, a dead row */
        {1, 2, 2, 3, 600, 17, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},         /* split keys, odd D */
        {1, 2, 1, 3, 19, 200, RLX_MASK_ADDITIVE, 3, 2 | 4 | 8, 0, 1, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CHECK_MSG(vk_attention_case(cases[c], true), "attention case %zu", c);
        ops_free_all();
    }
}

/* f16 and bf16 storage (f32 math in the kernel): the cases of each path of
 * vk_attention (vector and scalar loads, masks, GQA, split keys with their
 * combine pass and with the last split merging, D = 256). */
TEST(vk_attention_f16_bf16) {
    VKP_REQUIRE();
    static const vatt cases[] = {
        {2, 2, 2, 5, 5, 16, RLX_MASK_NONE, 0, 0, 0, 0, 0},
        {1, 2, 2, 17, 40, 17, RLX_MASK_NONE, 0, 0, 0, 0, 0},
        {2, 4, 2, 7, 7, 64, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},
        {1, 8, 2, 33, 33, 64, RLX_MASK_CAUSAL, 0, 0, 0.05f, 0, 0},
        {2, 4, 2, 4, 6, 64, RLX_MASK_ADDITIVE, 4, 15, 0, 1, 0},
        {1, 2, 2, 5, 9, 17, RLX_MASK_ADDITIVE, 2, 4 | 8, 0.3f, 0, 0},
        {1, 1, 1, 20, 45, 256, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},
        {1, 4, 2, 1, 1000, 64, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},
        {2, 2, 1, 2, 777, 80, RLX_MASK_ADDITIVE, 4, 1 | 8, 0, 1, 0},
        {2, 2, 2, 128, 128, 64, RLX_MASK_ADDITIVE, 4, 1 | 8, 0, 0, 0},    /* BERT-shaped rows with a padding mask */
    };
    static const rlx_dtype dts[] = {RLX_F16, RLX_BF16};
    for (size_t d = 0; d < 2; d++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            vatt t = cases[c];
            t.dt = dts[d];
            CHECK_MSG(vk_attention_case(t, true), "%s attention case %zu", rlx_dtype_name(t.dt), c);
            ops_free_all();
        }
}

/* The tensor-core tier (attention_coopmat.comp) where the device has it: f16
 * storage, and f32 / bf16 under the fast precision policy (rounded to f16 on
 * load); D of one to eight fragments, 32- and 64-row workgroups, causal
 * blocks that stop early, GQA, additive and padding masks with dead rows, rows
 * past the end of the last block. On other devices (lavapipe) the same graphs
 * take the flash tiers and are checked the same way. */
TEST(vk_attention_coopmat) {
    VKP_REQUIRE();
    static const vatt cases[] = {
        {1, 2, 2, 40, 40, 16, RLX_MASK_NONE, 0, 0, 0, 0, 0},
        {2, 4, 2, 70, 70, 64, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0},
        {1, 8, 2, 33, 50, 128, RLX_MASK_CAUSAL, 0, 0, 0.05f, 0, 0},
        {2, 4, 4, 20, 30, 80, RLX_MASK_ADDITIVE, 4, 15, 0, 1, 0},
        {1, 2, 2, 128, 128, 64, RLX_MASK_ADDITIVE, 4, 1 | 8, 0, 0, 0},
        {2, 17, 17, 256, 256, 16, RLX_MASK_NONE, 0, 0, 0, 0, 0},   /* 136 blocks of 64 rows: 4-subgroup workgroups */
        {1, 2, 1, 9, 300, 32, RLX_MASK_ADDITIVE, 2, 4 | 8, 0, 0, 0},
    };
    static const struct { rlx_dtype dt; rlx_precision prec; const char *tier; } modes[] = {
        {RLX_F16, RLX_PRECISION_F32, "flash-coopmat-f16"},
        {RLX_F32, RLX_PRECISION_FAST, "flash-coopmat-f32"},
        {RLX_BF16, RLX_PRECISION_FAST, "flash-coopmat-bf16"},
    };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c += m == 2 ? 3 : 1) {   /* bf16: a few */
            vatt t = cases[c];
            t.dt = modes[m].dt;
            att_prec = modes[m].prec;
            att_tier_want = modes[m].tier;
            CHECK_MSG(vk_attention_case(t, true), "%s case %zu", modes[m].tier, c);
            att_prec = RLX_PRECISION_F32;
            att_tier_want = NULL;
            ops_free_all();
        }
}

/* D > 256 has no kernel: a host step that must still match. */
TEST(vk_attention_large_d_host_step) {
    VKP_REQUIRE();
    vatt t = {1, 2, 1, 3, 5, 300, RLX_MASK_CAUSAL, 0, 0, 0, 0, 0};
    CHECK(vk_attention_case(t, false));
    ops_free_all();
}

/* ----------------------------------------------------------------- rope */

TEST(vk_rope) {
    VKP_REQUIRE();
    static const struct { int64_t B, H, S, D; rlx_rope_style style; float theta; int rot; int offset; } cases[] = {
        {1, 1, 1, 2, RLX_ROPE_NEOX, 10000.0f, 0, -1},
        {2, 3, 5, 8, RLX_ROPE_NEOX, 10000.0f, 0, -1},
        {2, 3, 5, 8, RLX_ROPE_GPTJ, 10000.0f, 0, -1},
        {1, 4, 7, 16, RLX_ROPE_NEOX, 500000.0f, 0, 13},
        {1, 4, 7, 16, RLX_ROPE_GPTJ, 100.0f, 0, 29},
        {2, 2, 6, 12, RLX_ROPE_NEOX, 10000.0f, 4, 3},      /* partial rotary dims */
        {2, 2, 6, 12, RLX_ROPE_GPTJ, 10000.0f, 6, 0},
        {1, 3, 33, 128, RLX_ROPE_NEOX, 10000.0f, 64, 4000},
        {1, 2, 9, 64, RLX_ROPE_GPTJ, 10000.0f, 0, 70000},  /* positions past 2^16 */
        {1, 1, 4, 80, RLX_ROPE_NEOX, 1000000.0f, 0, 1000000},
        {1, 1, 3, 6, RLX_ROPE_NEOX, 10000.0f, 0, -5},       /* negative offset */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        ref_shape sx = shp4(4, cases[c].B, cases[c].H, cases[c].S, cases[c].D), so = shp4(1, 1, 0, 0, 0);
        rlx_node x = ops_add_input(g, &in, RLX_F32, sx, ops_rand_f32(ref_numel(&sx), -1, 1));
        rlx_node off = RLX_NO_NODE;
        if (cases[c].offset != -1) {
            int32_t *o = ops_alloc(sizeof *o);
            *o = cases[c].offset;
            off = ops_add_input(g, &in, RLX_I32, so, o);
        }
        CHECK_OK(rlx_output(g, "y", rlx_rope(g, x, off, cases[c].style, cases[c].theta, cases[c].rot)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 2e-6, true), "rope case %zu", c);
        ops_free_all();
    }
}

/* The offset lives in a buffer read by the shader: one exec, many positions. */
TEST(vk_rope_offset_changes_per_run) {
    VKP_REQUIRE();
    ref_shape sx = shp4(4, 1, 2, 3, 16), so = shp4(1, 1, 0, 0, 0);
    int64_t n = ref_numel(&sx);
    float *x = ops_rand_f32(n, -1, 1);
    rlx_graph *g = ops_graph();
    CHECK_OK(rlx_output(g, "y", rlx_rope(g, ops_input(g, "x", RLX_F32, sx), ops_input(g, "off", RLX_I32, so),
                                         RLX_ROPE_NEOX, 10000.0f, 0)));
    rlx_compile_options oc, ov;
    rlx_compile_options_init(&oc);
    oc.backend = RLX_BACKEND_CPU;
    vkp_options(&ov);
    rlx_exec *ec = NULL, *ev = NULL;
    CHECK_OK(rlx_compile(g, &oc, &ec));
    if (rlx_compile(g, &ov, &ev) != RLX_OK) {
        rlx_exec_free(ec);
        CHECK_MSG(0, "vulkan compile: %s", rlx_last_error());
    }
    bool ok = true;
    for (int32_t off = 0; off < 3000 && ok; off += 997) {
        rlx_tensor in[2] = {ops_tensor("x", RLX_F32, sx, x), ops_tensor("off", RLX_I32, so, &off)};
        float *a = ops_f32(n), *b = ops_f32(n);
        ok = rlx_exec_run(ec, in, 2) == RLX_OK && rlx_exec_run(ev, in, 2) == RLX_OK &&
             rlx_exec_read_output(ec, "y", a, (size_t)n * 4) == RLX_OK &&
             rlx_exec_read_output(ev, "y", b, (size_t)n * 4) == RLX_OK;
        double num = 0, den = 0;
        for (int64_t i = 0; i < n && ok; i++) {
            num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
            den += (double)a[i] * a[i];
        }
        if (ok && sqrt(num / den) > 2e-6) {
            printf("    offset %d: rel error %.3g\n", (int)off, sqrt(num / den));
            ok = false;
        }
    }
    rlx_exec_stats st;
    rlx_exec_get_stats(ev, &st);
    rlx_exec_free(ec);
    rlx_exec_free(ev);
    ops_free_all();
    CHECK_MSG(ok, "rope with a changing offset: %s", rlx_last_error());
    CHECK(st.host_steps == 0);
}

/* ----------------------------------------------------------------- topk */

static bool vk_topk_case(rlx_dtype dt, int64_t rows, int64_t n, int k, int specials) {
    ops_inputs in = {0};
    rlx_graph *g = ops_graph();
    int64_t dims[2] = {rows, n};
    ref_shape s = ref_shape_make(2, dims);
    int64_t numel = rows * n;
    void *x = ops_alloc((size_t)numel * rlx_dtype_size(dt));
    for (int64_t i = 0; i < numel; i++) {
        double v = (double)test_rand_int(-20, 20);   /* many ties */
        if (dt == RLX_F32 || dt == RLX_F16) v = test_rand_int(0, 1) ? v : test_rand_uniform(-5, 5);
        if (dt == RLX_U8) v = (double)test_rand_int(0, 255);
        ref_store(x, dt, i, v);
    }
    if (specials && (dt == RLX_F32 || dt == RLX_F16)) {
        static const double sp[] = {NAN, INFINITY, -INFINITY, 0.0, -0.0, NAN, 0.0};
        for (int64_t i = 0; i < numel && i < 7 * 5; i += 5) ref_store(x, dt, i, sp[i / 5]);
    }
    rlx_node xi = ops_add_input(g, &in, dt, s, x), vals, idx;
    if (rlx_topk(g, xi, k, &vals, &idx) != RLX_OK || rlx_output(g, "v", vals) != RLX_OK ||
        rlx_output(g, "i", idx) != RLX_OK) {
        printf("    build: %s\n", rlx_last_error());
        return false;
    }
    bool ok = vkp_compare(g, in.t, in.n, 0, true);
    if (!ok) printf("    topk %s rows %lld n %lld k %d\n", rlx_dtype_name(dt), (long long)rows, (long long)n, k);
    return ok;
}

TEST(vk_topk) {
    VKP_REQUIRE();
    CHECK(vk_topk_case(RLX_F32, 3, 1, 1, 0));
    CHECK(vk_topk_case(RLX_F32, 5, 37, 5, 1));
    CHECK(vk_topk_case(RLX_F32, 2, 300, 300, 1));   /* full sort */
    CHECK(vk_topk_case(RLX_F32, 2, 5000, 7, 1));    /* does not fit shared memory on lavapipe */
    CHECK(vk_topk_case(RLX_F16, 4, 50, 10, 1));
    CHECK(vk_topk_case(RLX_I32, 3, 257, 20, 0));
    CHECK(vk_topk_case(RLX_I64, 2, 64, 9, 0));
    CHECK(vk_topk_case(RLX_U8, 70, 33, 4, 0));
    CHECK(vk_topk_case(RLX_I8, 3, 40, 40, 0));
    ops_free_all();
}

/* ------------------------------------------------------------------ loss */

TEST(vk_softmax_cross_entropy) {
    VKP_REQUIRE();
    static const int64_t NC[][2] = {{1, 1}, {4, 3}, {7, 10}, {33, 1000}, {300, 17}, {2, 5000}};
    for (size_t c = 0; c < sizeof NC / sizeof NC[0]; c++) {
        int64_t N = NC[c][0], C = NC[c][1];
        ops_inputs in = {0};
        rlx_graph *g = ops_graph();
        int64_t dl[2] = {N, C};
        float *lg = ops_rand_f32(N * C, -4, 4);
        if (c == 2) lg[3] = -INFINITY;
        int32_t *lb = ops_alloc((size_t)N * sizeof *lb);
        for (int64_t i = 0; i < N; i++) lb[i] = (int32_t)test_rand_int(0, C - 1);
        rlx_node l = ops_add_input(g, &in, RLX_F32, ref_shape_make(2, dl), lg);
        rlx_node y = ops_add_input(g, &in, RLX_I32, ref_shape_make(1, &N), lb);
        CHECK_OK(rlx_output(g, "loss", rlx_softmax_cross_entropy(g, l, y)));
        CHECK_OK(rlx_output(g, "grad", rlx_softmax_cross_entropy_grad(g, l, y)));
        CHECK_MSG(vkp_compare(g, in.t, in.n, 2e-6, true), "cross entropy N %lld C %lld", (long long)N, (long long)C);
        ops_free_all();
    }
}
