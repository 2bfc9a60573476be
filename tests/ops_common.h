/*
 * ops_common.h — helpers shared by the op tests (test_ops_*.c, test_symbolic.c):
 * compile + run a graph under each test configuration (default, optimize off,
 * one thread, two threads), check output shapes, random shapes and data, and
 * scratch memory released at the end of the test (or at exit on failure).
 */
#ifndef RLX_TEST_OPS_COMMON_H
#define RLX_TEST_OPS_COMMON_H

#include "harness.h"
#include "ref64.h"

/* Configurations every op test runs under. */
#define OPS_NCONFIG 4
const char *ops_config_name(int cfg);
void        ops_config_options(int cfg, rlx_compile_options *o);

/* Scratch memory: freed by ops_free_all() (and at exit, so early returns from
 * failed checks do not leak under LeakSanitizer). Graphs made by ops_graph()
 * are freed the same way. */
void      *ops_alloc(size_t bytes);
rlx_graph *ops_graph(void);
void       ops_free_all(void);

float   *ops_rand_f32(int64_t n, double lo, double hi);
/* A random [N, K] matrix in uniform(-1, 1) quantized to block dtype dt (or
 * stored as f32/f16/bf16): malloc'ed bytes (*bytes long), and in *decoded
 * (malloc'ed) what those bytes mean. The caller frees both. */
void    *ops_quantized_weights(rlx_dtype dt, int64_t N, int64_t K, double **decoded, size_t *bytes);
/* y = dequant_matmul(x, w): input "x" f32 [M, K], param "w" dt [N, K], output "y". */
rlx_graph *ops_dequant_graph(rlx_dtype dt, int64_t M, int64_t N, int64_t K);
/* Compiles g into *e with o (NULL: defaults) and exact_quant = exact unless
 * *e is set already (then exact is the one *e was compiled with), sets param
 * "w", runs input in and reads output "y". */
bool ops_run_dequant(rlx_graph *g, const rlx_compile_options *o, rlx_exec **e, rlx_dtype dt, const void *w, size_t wbytes,
                     const rlx_tensor *in, float *y, size_t ybytes, bool exact);
double  *ops_f32_to_f64(const float *x, int64_t n);
double  *ops_f64(int64_t n);   /* zeroed */
float   *ops_f32(int64_t n);   /* filled with NaN (poison) */

/* Random shape of the given rank; dims drawn from odd/edge sizes, total kept small. */
ref_shape ops_rand_shape(int rank, int64_t max_numel);
/* Two shapes that broadcast together: ranks may differ, dims may be 1. */
void      ops_rand_bcast_pair(ref_shape *a, ref_shape *b);

rlx_tensor ops_tensor(const char *name, rlx_dtype dt, ref_shape s, void *data);
rlx_node   ops_input(rlx_graph *g, const char *name, rlx_dtype dt, ref_shape s);

/* Graph inputs named in0, in1, ... collected with their run-time tensors. */
#define OPS_MAX_INPUTS 8
typedef struct ops_inputs {
    int        n;
    rlx_tensor t[OPS_MAX_INPUTS];
    char       names[OPS_MAX_INPUTS][8];
} ops_inputs;
/* Adds input in<k> of dtype/shape to g and its data to in; returns the node. */
rlx_node   ops_add_input(rlx_graph *g, ops_inputs *in, rlx_dtype dt, ref_shape s, void *data);

/* Compiles g under configuration cfg, runs it with the inputs, and for each
 * expected output (name, dtype, rank, dims, data = destination, bytes = its
 * size) checks the output's dtype and shape and copies its data. Both
 * rlx_exec_output and rlx_exec_read_output are exercised and must agree.
 * Records a test failure and returns false on any problem. */
bool ops_run(const rlx_graph *g, int cfg, const rlx_tensor *in, int n_in, rlx_tensor *outs, int n_out);
bool ops_run_opts(const rlx_graph *g, const rlx_compile_options *o, const char *what,
                  const rlx_tensor *in, int n_in, rlx_tensor *outs, int n_out);

/* In a loop over cfg: checks f32 results against a float64 reference. */
#define CHECK_CLOSE(what, got, want, n, tol)                                    \
    CHECK_MSG(test_close_f32_f64(what, got, want, n, tol), "%s (config %s)",    \
              what, ops_config_name(cfg))

#endif
