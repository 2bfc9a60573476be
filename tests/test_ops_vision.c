/*
 * test_ops_vision.c — resize, flip, depth_to_space / space_to_depth and
 * adaptive pooling against float64 references on random inputs of random
 * shapes, every op-test configuration on the CPU and Vulkan against the CPU
 * (lavapipe in CI), and their backward rules against finite differences
 * (autodiff_*, and vk_autodiff_* on Vulkan). resize's reference is the ONNX
 * spec's coordinate formulas in float64; the exported-model tests
 * (test_onnx_import.c) check the same op against PyTorch's F.interpolate.
 */
#include "gradcheck.h"

#include <math.h>
#include <string.h>

static const char *mode_name[] = {"nearest", "linear", "cubic"};
static const char *coord_name[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric"};

typedef struct rs_case {
    ref_shape xs, ys;
    rlx_resize_params p;
    ref_resize_params r;
    bool by_sizes;
} rs_case;

/* A random case whose nearest picks f32 and f64 agree on (see ref_resize). */
static void rs_draw(rs_case *c, int mode) {
    static const double scales[] = {0.5, 2, 1.5, 0.7, 3, 1.25, 0.6, 4, 0.25};
    for (;;) {
        memset(c, 0, sizeof *c);
        int dims = (int)test_rand_int(1, 3);
        c->xs.rank = c->ys.rank = dims + 2;
        c->xs.d[0] = c->ys.d[0] = test_rand_int(1, 2);
        c->xs.d[1] = c->ys.d[1] = test_rand_int(1, 3);
        rlx_resize_params_init(&c->p);
        c->p.mode = (rlx_resize_mode)mode;
        c->p.coord = (rlx_resize_coord)test_rand_int(0, 4);
        c->p.nearest = (rlx_resize_nearest)test_rand_int(0, 3);
        c->p.exclude_outside = mode == RLX_RESIZE_CUBIC && test_rand_int(0, 1);
        c->p.cubic_a = test_rand_int(0, 1) ? -0.75 : -0.5;
        c->by_sizes = test_rand_int(0, 1);
        bool ok = true;
        for (int i = 0; i < dims; i++) {
            int64_t in = test_rand_int(1, dims == 3 ? 5 : 8);
            c->xs.d[2 + i] = in;
            if (c->by_sizes) {
                c->p.sizes[i] = test_rand_int(1, dims == 3 ? 7 : 11);
                c->r.scale[i] = (double)c->p.sizes[i] / (double)in;
            } else {
                c->p.scales[i] = c->r.scale[i] = scales[test_rand_int(0, 8)];
                c->p.sizes[i] = 0;
            }
            int64_t out = c->by_sizes ? c->p.sizes[i] : (int64_t)floor((double)in * c->p.scales[i]);
            if (out < 1) ok = false;
            c->ys.d[2 + i] = c->r.out[i] = out;
        }
        c->r.mode = mode, c->r.coord = (int)c->p.coord, c->r.nearest = (int)c->p.nearest;
        c->r.exclude_outside = c->p.exclude_outside, c->r.cubic_a = c->p.cubic_a;
        if (!ok) continue;
        /* a probe run of the reference decides whether the case is unambiguous */
        int64_t n = ref_numel(&c->xs), m = ref_numel(&c->ys);
        double *xd = ops_f64(n), *yd = ops_f64(m);
        if (ref_resize(xd, c->xs, &c->r, yd)) return;
    }
}

static rlx_graph *rs_graph(const rs_case *c) {
    rlx_graph *g = ops_graph();
    rlx_node x = ops_input(g, "x", RLX_F32, c->xs);
    rlx_output(g, "y", rlx_resize(g, x, &c->p));
    return g;
}

TEST(ops_resize_f32) {
    for (int mode = 0; mode < 3; mode++)
        for (int t = 0; t < 24; t++) {
            rs_case c;
            rs_draw(&c, mode);
            int64_t n = ref_numel(&c.xs), m = ref_numel(&c.ys);
            float *x = ops_rand_f32(n, -2, 2), *got = ops_f32(m);
            double *want = ops_f64(m);
            ref_resize(ops_f32_to_f64(x, n), c.xs, &c.r, want);
            rlx_graph *g = rs_graph(&c);
            rlx_tensor in = ops_tensor("x", RLX_F32, c.xs, x), out = ops_tensor("y", RLX_F32, c.ys, got);
            char what[160];
            snprintf(what, sizeof what, "resize %s %s nearest %d rank %d %s", mode_name[mode], coord_name[c.p.coord], (int)c.p.nearest,
                     c.xs.rank, c.by_sizes ? "sizes" : "scales");
            for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
                if (!ops_run(g, cfg, &in, 1, &out, 1)) return;
                CHECK_CLOSE(what, got, want, m, 1e-5);
            }
        }
    ops_free_all();
}

/* Ties decided exactly: 4 -> 2 half_pixel samples at 0.5 and 2.5 (round_prefer_floor
 * takes 0 and 2, round_prefer_ceil 1 and 3); asymmetric floor at scale 2 is PyTorch's nearest. */
TEST(ops_resize_nearest_ties) {
    static const struct { int nearest, coord; int64_t out; float want[4]; } cs[] = {
        {RLX_NEAREST_ROUND_PREFER_FLOOR, RLX_COORD_HALF_PIXEL, 2, {10, 30}},
        {RLX_NEAREST_ROUND_PREFER_CEIL, RLX_COORD_HALF_PIXEL, 2, {20, 40}},
        {RLX_NEAREST_FLOOR, RLX_COORD_ASYMMETRIC, 2, {10, 30}},
        {RLX_NEAREST_CEIL, RLX_COORD_ASYMMETRIC, 3, {10, 30, 40}},
    };
    float x[4] = {10, 20, 30, 40};
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        rlx_graph *g = ops_graph();
        ref_shape xs = {3, {1, 1, 4}}, ys = {3, {1, 1, cs[k].out}};
        rlx_resize_params p;
        rlx_resize_params_init(&p);
        p.nearest = (rlx_resize_nearest)cs[k].nearest, p.coord = (rlx_resize_coord)cs[k].coord, p.sizes[0] = cs[k].out;
        rlx_output(g, "y", rlx_resize(g, ops_input(g, "x", RLX_F32, xs), &p));
        float got[4];
        rlx_tensor in = ops_tensor("x", RLX_F32, xs, x), out = ops_tensor("y", RLX_F32, ys, got);
        if (!ops_run(g, 0, &in, 1, &out, 1)) return;
        for (int i = 0; i < cs[k].out; i++) CHECK_MSG(got[i] == cs[k].want[i], "case %zu element %d: %g, want %g", k, i, got[i], cs[k].want[i]);
        if (vkp_available()) CHECK_MSG(vkp_compare(g, &in, 1, 0, true), "ties case %zu on Vulkan", k);
    }
    ops_free_all();
}

TEST(vk_ops_resize_f32) {
    VKP_REQUIRE();
    for (int mode = 0; mode < 3; mode++)
        for (int t = 0; t < 12; t++) {
            rs_case c;
            rs_draw(&c, mode);
            float *x = ops_rand_f32(ref_numel(&c.xs), -2, 2);
            rlx_tensor in = ops_tensor("x", RLX_F32, c.xs, x);
            /* nearest picks the same input on both: exact */
            CHECK_MSG(vkp_compare(rs_graph(&c), &in, 1, mode == 0 ? 0 : 1e-6, true), "resize %s %s", mode_name[mode], coord_name[c.p.coord]);
        }
    ops_free_all();
}

TEST(ops_resize_errors) {
    rlx_graph *g = ops_graph();
    int64_t xd[4] = {1, 2, 5, 5};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, xd);
    rlx_resize_params p;
    rlx_resize_params_init(&p);
    CHECK(rlx_resize(g, x, NULL) == RLX_NO_NODE && strstr(rlx_last_error(), "sizes or scales are required"));
    CHECK(rlx_resize(g, x, &p) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_INVALID_ARGUMENT);   /* no sizes, no scales */
    CHECK(strstr(rlx_last_error(), "output size 0"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, xd);
    p.scales[0] = p.scales[1] = 2, p.coord = (rlx_resize_coord)9;
    CHECK(rlx_resize(g, x, &p) == RLX_NO_NODE && strstr(rlx_last_error(), "coordinate mode 9"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_I32, 4, xd);
    rlx_resize_params_init(&p);
    p.sizes[0] = p.sizes[1] = 3;
    CHECK(rlx_resize(g, x, &p) == RLX_NO_NODE && rlx_graph_status(g) == RLX_STATUS_UNSUPPORTED);
    ops_free_all();
}

/* ------------------------------------------------------------------ flip */

static void ref_flip(const float *x, ref_shape s, uint32_t mask, float *y) {
    int64_t n = ref_numel(&s), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&s, i, idx);
        int64_t src = 0;
        for (int d = 0; d < s.rank; d++) src = src * s.d[d] + (((mask >> d) & 1) ? s.d[d] - 1 - idx[d] : idx[d]);
        y[i] = x[src];
    }
}

static rlx_graph *flip_graph(ref_shape s, uint32_t mask, rlx_dtype dt) {
    rlx_graph *g = ops_graph();
    rlx_output(g, "y", rlx_flip(g, ops_input(g, "x", dt, s), mask));
    return g;
}

TEST(ops_flip) {
    for (int t = 0; t < 30; t++) {
        ref_shape s = ops_rand_shape((int)test_rand_int(0, 5), 400);
        uint32_t mask = s.rank ? (uint32_t)test_rand_int(0, (1 << s.rank) - 1) : 0;
        int64_t n = ref_numel(&s);
        float *x = ops_rand_f32(n, -2, 2), *got = ops_f32(n), *want = ops_f32(n);
        ref_flip(x, s, mask, want);
        rlx_graph *g = flip_graph(s, mask, RLX_F32);
        rlx_tensor in = ops_tensor("x", RLX_F32, s, x), out = ops_tensor("y", RLX_F32, s, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            if (!ops_run(g, cfg, &in, 1, &out, 1)) return;
            CHECK_MSG(!memcmp(got, want, sizeof(float) * (size_t)n), "flip rank %d mask 0x%x (config %s)", s.rank, mask, ops_config_name(cfg));
        }
    }
    rlx_graph *g = ops_graph();
    int64_t d[2] = {2, 3};
    CHECK(rlx_flip(g, rlx_input(g, "x", RLX_F32, 2, d), 4) == RLX_NO_NODE && strstr(rlx_last_error(), "past rank 2"));
    ops_free_all();
}

TEST(vk_ops_flip) {
    VKP_REQUIRE();
    for (int t = 0; t < 12; t++) {
        ref_shape s = ops_rand_shape((int)test_rand_int(1, 5), 600);
        uint32_t mask = (uint32_t)test_rand_int(0, (1 << s.rank) - 1);
        rlx_dtype dt = t % 3 == 0 ? RLX_F16 : RLX_F32;
        int64_t n = ref_numel(&s);
        float *x = ops_rand_f32(n, -2, 2);
        void *data = x;
        if (dt == RLX_F16) {
            uint16_t *h = ops_alloc(sizeof(uint16_t) * (size_t)n);
            for (int64_t i = 0; i < n; i++) h[i] = (uint16_t)(test_rand_u64() & 0x3bff);
            data = h;
        }
        rlx_tensor in = ops_tensor("x", dt, s, data);
        CHECK_MSG(vkp_compare(flip_graph(s, mask, dt), &in, 1, 0, true), "flip rank %d mask 0x%x", s.rank, mask);
    }
    ops_free_all();
}

/* ------------------------------------------------------- depth and space */

/* The ONNX spec's numpy definition: reshape to 6 dims, transpose, reshape. */
static void ref_depth_space(const float *x, const int64_t *xd, bool d2s, bool crd, int64_t b, float *y) {
    int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], s6[6];
    int perm[6];
    if (d2s && !crd) { int64_t t[6] = {N, b, b, C / (b * b), H, W}; int q[6] = {0, 3, 4, 1, 5, 2}; memcpy(s6, t, sizeof t), memcpy(perm, q, sizeof q); }
    else if (d2s) { int64_t t[6] = {N, C / (b * b), b, b, H, W}; int q[6] = {0, 1, 4, 2, 5, 3}; memcpy(s6, t, sizeof t), memcpy(perm, q, sizeof q); }
    else if (!crd) { int64_t t[6] = {N, C, H / b, b, W / b, b}; int q[6] = {0, 3, 5, 1, 2, 4}; memcpy(s6, t, sizeof t), memcpy(perm, q, sizeof q); }
    else { int64_t t[6] = {N, C, H / b, b, W / b, b}; int q[6] = {0, 1, 3, 5, 2, 4}; memcpy(s6, t, sizeof t), memcpy(perm, q, sizeof q); }
    ref_shape in6 = {6, {0}}, out6 = {6, {0}};
    for (int i = 0; i < 6; i++) in6.d[i] = s6[i], out6.d[i] = s6[perm[i]];
    int64_t n = ref_numel(&out6), idx[6], st[6], s = 1;
    for (int i = 5; i >= 0; i--) st[i] = s, s *= in6.d[i];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&out6, i, idx);
        int64_t src = 0;
        for (int k = 0; k < 6; k++) src += idx[k] * st[perm[k]];
        y[i] = x[src];
    }
}

static rlx_graph *ds_graph(ref_shape s, bool d2s, bool crd, int64_t b) {
    rlx_graph *g = ops_graph();
    rlx_node x = ops_input(g, "x", RLX_F32, s);
    rlx_output(g, "y", d2s ? rlx_depth_to_space(g, x, b, crd ? RLX_CRD : RLX_DCR) : rlx_space_to_depth(g, x, b, crd ? RLX_CRD : RLX_DCR));
    return g;
}

static void ds_draw(bool d2s, ref_shape *xs, ref_shape *ys, int64_t *b) {
    *b = test_rand_int(1, 3);
    int64_t N = test_rand_int(1, 2), C = test_rand_int(1, 3), H = test_rand_int(1, 4), W = test_rand_int(1, 4);
    *xs = (ref_shape){4, {N, d2s ? C * *b * *b : C, d2s ? H : H * *b, d2s ? W : W * *b}};
    *ys = (ref_shape){4, {N, d2s ? C : C * *b * *b, d2s ? H * *b : H, d2s ? W * *b : W}};
}

TEST(ops_depth_space) {
    for (int t = 0; t < 32; t++) {
        bool d2s = t & 1, crd = t & 2;
        ref_shape xs, ys;
        int64_t b;
        ds_draw(d2s, &xs, &ys, &b);
        int64_t n = ref_numel(&xs);
        float *x = ops_rand_f32(n, -2, 2), *got = ops_f32(n), *want = ops_f32(n);
        ref_depth_space(x, xs.d, d2s, crd, b, want);
        rlx_graph *g = ds_graph(xs, d2s, crd, b);
        rlx_tensor in = ops_tensor("x", RLX_F32, xs, x), out = ops_tensor("y", RLX_F32, ys, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            if (!ops_run(g, cfg, &in, 1, &out, 1)) return;
            CHECK_MSG(!memcmp(got, want, sizeof(float) * (size_t)n), "%s %s b %lld (config %s)", d2s ? "depth_to_space" : "space_to_depth",
                      crd ? "CRD" : "DCR", (long long)b, ops_config_name(cfg));
        }
    }
    rlx_graph *g = ops_graph();
    int64_t d[4] = {1, 6, 3, 3};
    rlx_node x = rlx_input(g, "x", RLX_F32, 4, d);
    CHECK(rlx_depth_to_space(g, x, 2, RLX_DCR) == RLX_NO_NODE && strstr(rlx_last_error(), "multiple of blocksize^2"));
    g = ops_graph();
    x = rlx_input(g, "x", RLX_F32, 4, d);
    CHECK(rlx_space_to_depth(g, x, 2, RLX_DCR) == RLX_NO_NODE && strstr(rlx_last_error(), "multiples of blocksize 2"));
    ops_free_all();
}

TEST(vk_ops_depth_space) {
    VKP_REQUIRE();
    for (int t = 0; t < 8; t++) {
        bool d2s = t & 1, crd = t & 2;
        ref_shape xs, ys;
        int64_t b;
        ds_draw(d2s, &xs, &ys, &b);
        rlx_tensor in = ops_tensor("x", RLX_F32, xs, ops_rand_f32(ref_numel(&xs), -2, 2));
        CHECK_MSG(vkp_compare(ds_graph(xs, d2s, crd, b), &in, 1, 0, true), "%s %s", d2s ? "depth_to_space" : "space_to_depth", crd ? "CRD" : "DCR");
    }
    ops_free_all();
}

/* --------------------------------------------------------- adaptive pool */

static void ap_draw(ref_shape *xs, ref_shape *ys, int64_t *out) {
    int dims = (int)test_rand_int(1, 3);
    xs->rank = ys->rank = dims + 2;
    xs->d[0] = ys->d[0] = test_rand_int(1, 2), xs->d[1] = ys->d[1] = test_rand_int(1, 3);
    for (int i = 0; i < dims; i++) {
        xs->d[2 + i] = test_rand_int(1, dims == 3 ? 6 : 11);
        ys->d[2 + i] = out[i] = test_rand_int(1, xs->d[2 + i] + 2);
    }
}

static rlx_graph *ap_graph(ref_shape xs, bool avg, const int64_t *out) {
    rlx_graph *g = ops_graph();
    rlx_output(g, "y", rlx_adaptive_pool(g, ops_input(g, "x", RLX_F32, xs), avg ? RLX_AVGPOOL : RLX_MAXPOOL, 0, out));
    return g;
}

TEST(ops_adaptive_pool_f32) {
    for (int t = 0; t < 30; t++) {
        ref_shape xs, ys;
        int64_t o[3];
        ap_draw(&xs, &ys, o);
        bool avg = t & 1;
        int64_t n = ref_numel(&xs), m = ref_numel(&ys);
        float *x = ops_rand_f32(n, -2, 2), *got = ops_f32(m);
        double *want = ops_f64(m);
        ref_adaptive_pool(ops_f32_to_f64(x, n), xs, avg, o, want);
        rlx_graph *g = ap_graph(xs, avg, o);
        rlx_tensor in = ops_tensor("x", RLX_F32, xs, x), out = ops_tensor("y", RLX_F32, ys, got);
        for (int cfg = 0; cfg < OPS_NCONFIG; cfg++) {
            if (!ops_run(g, cfg, &in, 1, &out, 1)) return;
            CHECK_CLOSE(avg ? "adaptive avg" : "adaptive max", got, want, m, 1e-6);
        }
    }
    rlx_graph *g = ops_graph();
    int64_t d[4] = {1, 2, 5, 5}, o[2] = {0, 2};
    CHECK(rlx_adaptive_pool(g, rlx_input(g, "x", RLX_F32, 4, d), RLX_AVGPOOL, 2, o) == RLX_NO_NODE && strstr(rlx_last_error(), "output size 0"));
    CHECK(rlx_adaptive_pool(g, 0, RLX_AVGPOOL, 2, NULL) == RLX_NO_NODE);
    ops_free_all();
}

TEST(vk_ops_adaptive_pool_f32) {
    VKP_REQUIRE();
    for (int t = 0; t < 10; t++) {
        ref_shape xs, ys;
        int64_t o[3];
        ap_draw(&xs, &ys, o);
        float *x = ops_rand_f32(ref_numel(&xs), -2, 2);
        x[0] = NAN;
        rlx_tensor in = ops_tensor("x", RLX_F32, xs, x);
        CHECK_MSG(vkp_compare(ap_graph(xs, t & 1, o), &in, 1, 1e-6, true), "adaptive %s", t & 1 ? "avg" : "max");
    }
    ops_free_all();
}

/* ------------------------------------------------------------ backward */

static rs_case gc_rs;   /* the case build_resize and fwd_resize read */
static rlx_node build_resize(rlx_graph *g, const rlx_node *x, const gc_case *c) { (void)c; return rlx_resize(g, x[0], &gc_rs.p); }
static void fwd_resize(const double *const *x, double *out, const gc_case *c) { ref_resize(x[0], c->s[0], &gc_rs.r, out); }

GC_TEST(resize) {
    for (int mode = 0; mode < 3; mode++)
        for (int t = 0; t < 6; t++) {
            rs_draw(&gc_rs, mode);
            gc_case c = {.what = "resize", .n = 1, .build = build_resize, .fwd = fwd_resize};
            c.s[0] = gc_rs.xs, c.so = gc_rs.ys;
            CHECK_MSG(gradcheck(&c), "resize %s %s rank %d", mode_name[mode], coord_name[gc_rs.p.coord], gc_rs.xs.rank);
        }
    ops_free_all();
}

static rlx_node build_flip(rlx_graph *g, const rlx_node *x, const gc_case *c) { return rlx_flip(g, x[0], (uint32_t)c->ia[0]); }
static void fwd_flip(const double *const *x, double *out, const gc_case *c) {
    int64_t n = ref_numel(&c->s[0]), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&c->s[0], i, idx);
        int64_t src = 0;
        for (int d = 0; d < c->s[0].rank; d++) src = src * c->s[0].d[d] + (((c->ia[0] >> d) & 1) ? c->s[0].d[d] - 1 - idx[d] : idx[d]);
        out[i] = x[0][src];
    }
}

GC_TEST(flip) {
    for (int t = 0; t < 4; t++) {
        gc_case c = {.what = "flip", .n = 1, .build = build_flip, .fwd = fwd_flip};
        c.s[0] = c.so = ops_rand_shape((int)test_rand_int(1, 4), 200);
        c.ia[0] = test_rand_int(1, (1 << c.s[0].rank) - 1);
        CHECK(gradcheck(&c));
    }
    ops_free_all();
}

static rlx_node build_ds(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    rlx_depth_space_mode m = c->ia[1] ? RLX_CRD : RLX_DCR;
    return c->ia[0] ? rlx_depth_to_space(g, x[0], c->ia[2], m) : rlx_space_to_depth(g, x[0], c->ia[2], m);
}
static void fwd_ds(const double *const *x, double *out, const gc_case *c) {
    int64_t n = ref_numel(&c->s[0]);
    float *xf = ops_f32(n), *yf = ops_f32(n);
    /* a permutation: move the indices (exact in f32 at these sizes), then the float64 values through them */
    for (int64_t i = 0; i < n; i++) xf[i] = (float)i;
    ref_depth_space(xf, c->s[0].d, c->ia[0], c->ia[1], c->ia[2], yf);
    for (int64_t i = 0; i < n; i++) out[i] = x[0][(int64_t)yf[i]];
}

GC_TEST(depth_space) {
    for (int t = 0; t < 4; t++) {
        gc_case c = {.what = "depth_space", .n = 1, .build = build_ds, .fwd = fwd_ds};
        c.ia[0] = t & 1, c.ia[1] = (t >> 1) & 1;
        ds_draw(c.ia[0], &c.s[0], &c.so, &c.ia[2]);
        CHECK_MSG(gradcheck(&c), "%s %s", c.ia[0] ? "depth_to_space" : "space_to_depth", c.ia[1] ? "CRD" : "DCR");
    }
    ops_free_all();
}

static rlx_node build_ap(rlx_graph *g, const rlx_node *x, const gc_case *c) {
    int64_t o[3] = {c->ia[1], c->ia[2], c->ia[3]};
    return rlx_adaptive_pool(g, x[0], c->ia[0] ? RLX_AVGPOOL : RLX_MAXPOOL, 0, o);
}
static void fwd_ap(const double *const *x, double *out, const gc_case *c) {
    int64_t o[3] = {c->ia[1], c->ia[2], c->ia[3]};
    ref_adaptive_pool(x[0], c->s[0], c->ia[0], o, out);
}

GC_TEST(adaptive_pool) {
    for (int t = 0; t < 6; t++) {
        gc_case c = {.what = "adaptive_pool", .n = 1, .build = build_ap, .fwd = fwd_ap};
        int64_t o[3] = {1, 1, 1};
        ap_draw(&c.s[0], &c.so, o);
        c.ia[0] = t & 1, c.ia[1] = o[0], c.ia[2] = o[1], c.ia[3] = o[2];
        CHECK_MSG(gradcheck(&c), "adaptive %s rank %d", t & 1 ? "avg" : "max", c.s[0].rank);
    }
    ops_free_all();
}
