/*
 * ref64.h — a float64 reference implementation of every rlx op, written from
 * the spec in include/rlx.h (not from the kernels). Plain loops over dense
 * row-major double arrays with explicit shapes; the op tests compare the
 * library's f32 results against these. The nn section also has the pieces
 * model references are composed of (head layouts, projections, SwiGLU).
 */
#ifndef RLX_TEST_REF64_H
#define RLX_TEST_REF64_H

#include "rlx.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct ref_shape {
    int     rank;
    int64_t d[RLX_MAX_RANK];
} ref_shape;

ref_shape ref_shape_make(int rank, const int64_t *dims);
int64_t   ref_numel(const ref_shape *s);
bool      ref_shape_eq(const ref_shape *a, const ref_shape *b);
/* numpy broadcasting of a and b; false if they do not broadcast. */
bool      ref_broadcast(const ref_shape *a, const ref_shape *b, ref_shape *out);
/* Offset into `in` (broadcast to `out`) of the out multi-index idx. */
int64_t   ref_bcast_offset(const ref_shape *in, const ref_shape *out, const int64_t *idx);
/* Linear index -> multi-index of shape s. */
void      ref_unravel(const ref_shape *s, int64_t i, int64_t *idx);

/* ---- elementwise */
typedef enum ref_binop { REF_ADD, REF_SUB, REF_MUL, REF_DIV, REF_MAX, REF_MIN, REF_POW,
                         REF_IDIV /* integer division, truncating */ } ref_binop;
typedef enum ref_unop  { REF_RELU, REF_SIGMOID, REF_TANH, REF_EXP, REF_LOG, REF_SQRT, REF_RSQRT,
                         REF_NEG, REF_ABS, REF_GELU, REF_GELU_TANH, REF_SILU, REF_ROUND,
                         REF_SIN, REF_COS, REF_TAN, REF_ATAN, REF_ERF } ref_unop;
typedef enum ref_cmpop { REF_EQ, REF_NE, REF_LT, REF_LE, REF_GT, REF_GE } ref_cmpop;

double ref_binop_apply(ref_binop op, double a, double b);
double ref_unop_apply(ref_unop op, double x);
double ref_act_apply(rlx_activation act, double x);

/* Convolution (cross-correlation), NCHW with 1 to 3 spatial dims: x xs,
 * w ws [O, C / groups, *K], b [O] or NULL; writes y and its shape. */
typedef struct ref_conv_params {
    int64_t groups, stride[3], dilation[3], pad_begin[3], pad_end[3];
    int     act;
} ref_conv_params;
void ref_conv(const double *x, ref_shape xs, const double *w, ref_shape ws, const double *b, const ref_conv_params *p,
              double *y, ref_shape *ys);

/* Max or average pooling (PyTorch's rules: ceil mode, both divisors). */
typedef struct ref_pool_params {
    bool    average, ceil_mode, count_include_pad;
    int64_t kernel[3], stride[3], pad_begin[3], pad_end[3];
} ref_pool_params;
void ref_pool(const double *x, ref_shape xs, const ref_pool_params *p, double *y, ref_shape *ys);

/* ONNX Resize in float64 over x's trailing rank - 2 dims (mode 0 nearest,
 * 1 linear, 2 cubic; coord and nearest numbered as rlx_resize_coord and
 * rlx_resize_nearest). false: a nearest coordinate lies within 1e-4 of a
 * rounding boundary at a scale f32 cannot hold exactly, so f32 and f64 may
 * pick different inputs (the caller draws another case). */
typedef struct ref_resize_params {
    int     mode, coord, nearest;
    bool    exclude_outside;
    int64_t out[3];
    double  scale[3], cubic_a;
} ref_resize_params;
bool ref_resize(const double *x, ref_shape xs, const ref_resize_params *p, double *y);
/* torch adaptive_avg_pool / adaptive_max_pool to out sizes over x's trailing rank - 2 dims. */
void ref_adaptive_pool(const double *x, ref_shape xs, bool average, const int64_t *out, double *y);
/* The channel norms of x [N, C, *S], per-channel [C] parameters (beta may be NULL).
 * batch_norm: (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c].
 * group_norm: statistics (mean, biased variance) over each (n, group of
 *   C / groups channels, all positions); groups = C is instance norm.
 * layer_norm_channels: statistics over the C channels at each (n, position). */
void ref_batch_norm(const double *x, ref_shape xs, const double *gamma, const double *beta, const double *mean,
                    const double *var, double eps, double *y);
void ref_group_norm(const double *x, ref_shape xs, int64_t groups, const double *gamma, const double *beta, double eps,
                    double *y);
void ref_layer_norm_channels(const double *x, ref_shape xs, const double *gamma, const double *beta, double eps, double *y);

/* out has shape broadcast(sa, sb). */
void ref_binary(ref_binop op, const double *a, ref_shape sa, const double *b, ref_shape sb, double *out);
void ref_unary(ref_unop op, const double *x, int64_t n, double *out);
void ref_compare(ref_cmpop op, const double *a, ref_shape sa, const double *b, ref_shape sb, uint8_t *out);
/* out shape = broadcast of all three. */
void ref_where(const uint8_t *c, ref_shape sc, const double *a, ref_shape sa, const double *b, ref_shape sb,
               double *out);
void ref_fma(const double *a, ref_shape sa, const double *b, ref_shape sb, const double *c, ref_shape sc,
             double *out);
void ref_clamp(const double *x, int64_t n, double lo, double hi, double *out);

/* f16 / bf16 rounding (nearest even) as bit patterns and back. */
uint16_t ref_f64_to_f16_bits(double x);
double   ref_f16_bits_to_f64(uint16_t h);
uint16_t ref_f64_to_bf16_bits(double x);
double   ref_bf16_bits_to_f64(uint16_t h);
/* Stores v into element i of a typed buffer with rlx cast semantics: float ->
 * int truncates toward zero, -> bool is v != 0, -> f16/bf16/f32 rounds to nearest. */
void   ref_store(void *data, rlx_dtype dt, int64_t i, double v);
double ref_load(const void *data, rlx_dtype dt, int64_t i);

/* ---- matmul: a [..., M, K], b [..., K, N] (or [..., N, K] with transpose_b),
 * batch dims broadcast; bias [N] or NULL; act applied last. out [batch..., M, N]. */
bool ref_matmul(const double *a, ref_shape sa, const double *b, ref_shape sb, int transpose_b,
                const double *bias, rlx_activation act, double *out, ref_shape *so);
/* The same with flags: REF_MM_TB (b [..., N, K]) and REF_MM_TA (a [..., K, M]),
 * the bits of RLX_MATMUL_TRANSPOSE_B / _A. */
enum { REF_MM_TB = 1, REF_MM_TA = 2 };
bool ref_matmul_ex(const double *a, ref_shape sa, const double *b, ref_shape sb, unsigned flags,
                   const double *bias, rlx_activation act, double *out, ref_shape *so);

/* ---- reductions */
typedef enum ref_redop { REF_RSUM, REF_RMEAN, REF_RMAX, REF_RMIN, REF_RPROD } ref_redop;
/* Output shape of a reduction (mask 0 = all axes). */
ref_shape ref_reduce_shape(ref_shape sx, uint32_t mask, int keepdim);
void ref_reduce(ref_redop op, const double *x, ref_shape sx, uint32_t mask, double *out);
/* First index of the max (is_max) or min along axis (normalized, >= 0). */
void ref_argreduce(int is_max, const double *x, ref_shape sx, int axis, int32_t *out);

void ref_softmax(const double *x, ref_shape sx, int axis, int log_form, double *out);
/* Over the last dim; beta may be NULL. rms selects rms_norm. out may be x. */
void ref_norm(int rms, const double *x, ref_shape sx, const double *gamma, const double *beta, double eps,
              double *out);

/* ---- movement (generic over 8-byte doubles) */
ref_shape ref_transpose(const double *x, ref_shape sx, const int *perm, double *out);
ref_shape ref_slice(const double *x, ref_shape sx, int axis, int64_t start, int64_t end, int64_t step,
                    double *out);
ref_shape ref_concat(const double *const *xs, const ref_shape *ss, int n, int axis, double *out);
void ref_expand(const double *x, ref_shape sx, ref_shape so, double *out);
/* table [V, rest...], ids n_ids -> out [n_ids, rest...] (caller shapes it). */
void ref_gather_rows(const double *table, ref_shape st, const int64_t *ids, int64_t n_ids, double *out);
/* torch.gather: out shape = index shape. */
void ref_gather(const double *x, ref_shape sx, const int64_t *index, ref_shape si, int axis, double *out);
void ref_cumsum(const double *x, ref_shape sx, int axis, double *out);
/* out = base [V, rest...]; out[ids[i]] += rows[i] (rows [n_ids, rest...]). */
void ref_scatter_add_rows(const double *base, ref_shape sb, const int64_t *ids, int64_t n_ids, const double *rows,
                          double *out);
/* torch.scatter_add: out = base; out[i with axis -> index[i]] += src[i], src shaped like index. */
void ref_scatter_add(const double *base, ref_shape sb, const int64_t *index, ref_shape si, const double *src, int axis,
                     double *out);
/* dy * d/dx gelu(x) (erf form). */
double ref_gelu_grad(double x, double dy);
/* dy * d/dx gelu_tanh(x). */
double ref_gelu_tanh_grad(double x, double dy);
/* Along the last axis; values and indices [..., k]. */
void ref_topk(const double *x, ref_shape sx, int k, double *values, int32_t *indices);

/* ---- nn */
/* q [B,H,Sq,D], k/v [B,Hkv,Skv,D]; mask (additive) broadcast to [B,H,Sq,Skv], may be NULL.
 * scale <= 0 -> 1/sqrt(D). Fully masked rows give zeros. */
void ref_attention(const double *q, const double *k, const double *v, int64_t B, int64_t H, int64_t Hkv,
                   int64_t Sq, int64_t Skv, int64_t D, rlx_mask mask_kind, const double *mask,
                   ref_shape smask, double scale, double *out);
/* x [B,H,S,D] at positions offset.. offset+S-1; the first rotary_dims (0: D) dims rotate, the rest pass.
 * NEOX rotates pairs (i, i + rd/2), GPTJ adjacent pairs (2i, 2i+1): GGUF llama files need GPTJ (the
 * converter permuted their q/k rows), most other GGUF architectures (qwen2, qwen3) NEOX. */
void ref_rope(const double *x, int64_t B, int64_t H, int64_t S, int64_t D, int64_t offset,
              rlx_rope_style style, double theta, int rotary_dims, double *out);
/* ref_rope with llama3-style frequency factors (GGUF rope_freqs.weight, rotary_dims / 2 of them): pair
 * i's angle is divided by freq_factors[i]. NULL: none (= ref_rope). */
void ref_rope_ff(const double *x, int64_t B, int64_t H, int64_t S, int64_t D, int64_t offset,
                 rlx_rope_style style, double theta, int rotary_dims, const double *freq_factors, double *out);
/* Token-major [S, H * D] (what projections give) <-> head-major [H, S, D] (what ref_rope and
 * ref_attention take, B = 1). */
void ref_split_heads(const double *x, int64_t S, int64_t H, int64_t D, double *out);
void ref_merge_heads(const double *x, int64_t S, int64_t H, int64_t D, double *out);
/* y [rows, out] = x [rows, in] W^T + bias: a projection whose weight W [out, in] is row-major as GGUF and
 * torch store it (ref_matmul with transpose_b over flat arrays); bias [out] or NULL. */
void ref_dense(const double *x, int64_t rows, int64_t in, const double *W, int64_t out, const double *bias,
               double *y);
/* SwiGLU's gating: out[i] = silu(gate[i]) * up[i]. out may be gate or up. */
void ref_swiglu(const double *gate, const double *up, int64_t n, double *out);
double ref_ce_loss(const double *logits, int64_t N, int64_t C, const int32_t *labels);
void   ref_ce_grad(const double *logits, int64_t N, int64_t C, const int32_t *labels, double *grad);

#endif
