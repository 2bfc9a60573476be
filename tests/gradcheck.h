/*
 * gradcheck.h — checks rlx_gradients against float64 finite differences.
 *
 * A case has up to GC_MAX float inputs (random f32 data in [lo, hi]), an
 * optional integer input, a builder that makes one output node from the
 * input nodes, and a float64 forward of the same function (from ref64.h).
 * The check builds loss = sum(out * W) for a random W, asks rlx for the
 * gradient of every float input, runs it under every op-test configuration,
 * and compares each gradient with central differences of the float64 loss.
 */
#ifndef RLX_TEST_GRADCHECK_H
#define RLX_TEST_GRADCHECK_H

#include "ops_common.h"
#include "vk_parity.h"

#define GC_MAX 5

typedef struct gc_case gc_case;
/* x: the float input nodes, then (if any) the integer input at x[n]. */
typedef rlx_node (*gc_build_fn)(rlx_graph *g, const rlx_node *x, const gc_case *c);
/* x: float64 copies of the float inputs; writes the output (c->so elements). */
typedef void (*gc_fwd_fn)(const double *const *x, double *out, const gc_case *c);

struct gc_case {
    const char *what;
    int         n;                  /* float inputs */
    ref_shape   s[GC_MAX];
    double      lo, hi;             /* their range (both 0: [-1, 1]) */
    ref_shape   so;                 /* the output's shape */
    gc_build_fn build;
    gc_fwd_fn   fwd;
    /* an optional integer input (ids, labels, an index): i32 data of shape si */
    bool        has_int;
    ref_shape   si;
    int32_t    *ints;
    /* free parameters of the case for build and fwd */
    int64_t     ia[8];
    double      fa[4];
    double      tol;                /* norm-relative; 0: 2e-3 */
};

/* Runs the check; records a failure (naming c->what) and returns false on a
 * mismatch. In GC_VULKAN mode it instead compiles the same graph (loss and
 * gradients as outputs) for Vulkan and compares it with the CPU
 * (vk_parity.h), every node on the GPU: within 1e-3 norm-relative unless the
 * case says (reductions sum in another order on a GPU, and the composite
 * backward passes of the norms cancel). */
typedef enum gc_mode { GC_CPU, GC_VULKAN } gc_mode;
void gc_set_mode(gc_mode m);
gc_mode gc_get_mode(void);
bool gradcheck(const gc_case *c);

/* GC_TEST(name) { body }: the body as two tests, autodiff_<name> (finite
 * differences on the CPU) and vk_autodiff_<name> (Vulkan against the CPU). */
#define GC_TEST(name)                                                           \
    static void gc_body_##name(void);                                           \
    TEST(autodiff_##name) { gc_set_mode(GC_CPU); gc_body_##name(); }            \
    TEST(vk_autodiff_##name) {                                                  \
        if (!vkp_available()) return;                                           \
        gc_set_mode(GC_VULKAN);                                                 \
        gc_body_##name();                                                       \
        gc_set_mode(GC_CPU);                                                    \
    }                                                                           \
    static void gc_body_##name(void)

#endif
