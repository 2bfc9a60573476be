/*
 * vk_parity.h — helpers for CPU <-> Vulkan parity tests.
 *
 * vkp_available(): whether a Vulkan device can run the tests. Where none is
 * found it records the reason and returns false (the test counts as skipped),
 * except when RLX_REQUIRE_VULKAN=1 (CI): then the test fails.
 * vkp_compare(): compiles the graph for the CPU and for Vulkan, gives both
 * the same random params, runs both on the inputs and compares every output
 * (floats norm-relative, other dtypes exactly). With require_gpu it also fails
 * when any node ran as a host step.
 */
#ifndef RLX_TEST_VK_PARITY_H
#define RLX_TEST_VK_PARITY_H

#include "harness.h"

bool vkp_available(void);
/* Compile options for the Vulkan side (device from RLX_TEST_VK_DEVICE, else any). */
void vkp_options(rlx_compile_options *o);
bool vkp_compare(const rlx_graph *g, const rlx_tensor *in, int n_in, double tol, bool require_gpu);
/* vkp_compare with both backends compiled with exact_quant. */
bool vkp_compare_quant(const rlx_graph *g, const rlx_tensor *in, int n_in, double tol, bool require_gpu, int exact_quant);
/* 1 when every Vulkan device here has usable integer dot products (then the
 * i8 matvec tiers must be chosen), 0 when none has, -1 when they differ. */
int vkp_devices_int_dot(void);
/* vkp_available() and every Vulkan device has usable integer dot products;
 * otherwise the test is skipped with that reason. */
bool vkp_require_int_dot(void);
/* g compiled for Vulkan (vkp_options) or the CPU; NULL, with the error
 * printed, if it does not compile. */
rlx_exec *vkp_compile(const rlx_graph *g, bool vulkan);
/* vkp_compile with exact_quant. */
rlx_exec *vkp_compile_quant(const rlx_graph *g, bool vulkan, int exact_quant);

/* The tier (a report line's last word) of the nth node (from 0) whose line
 * in rlx_exec_report's text names `op`, or "" into out. */
void vkp_tier_of(const char *report, const char *op, int nth, char *out, size_t cap);

/* Typical use:
 *   TEST(vk_add) {
 *       if (!vkp_available()) return;
 *       ... build g, inputs ...
 *       CHECK(vkp_compare(g, in, n, 1e-6, true));
 *   }
 */
#define VKP_REQUIRE() do { if (!vkp_available()) return; } while (0)

/* 1 when the Vulkan device the tests compile for has the cooperative-matrix tier
 * (NV cooperative matrix, f16, subgroups of 32), 0 when not, -1 when unknown. */
int vkp_device_has_coopmat(void);

#endif
