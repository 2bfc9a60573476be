/*
 * rlx.h — the one public header of rlx, an embeddable ML compiler and runtime.
 *
 * Flow: build an rlx_graph with the builder functions, rlx_compile() it into an
 * rlx_exec, set its params, then rlx_exec_run() it as often as needed.
 *
 * Conventions
 *  - Every fallible call returns rlx_status; the message of the last failure on
 *    this thread is rlx_last_error().
 *  - Builder functions return an rlx_node id (>= 0). On failure they return
 *    RLX_NO_NODE, set rlx_last_error(), and the graph remembers its first error:
 *    later builder calls that get RLX_NO_NODE as an input return RLX_NO_NODE
 *    quietly, and rlx_compile() returns that first error. So a builder sequence
 *    may be checked once, at the end.
 *  - The library copies what it keeps (names, constants, params).
 *  - The library never aborts or exits on bad input.
 *  - A call that returns rlx_status or a node treats an enum argument
 *    outside its enum (rlx_dtype, rlx_mask, rlx_activation, ...) as
 *    INVALID_ARGUMENT.
 *  - An rlx_exec is used by one thread at a time; distinct ones may run
 *    concurrently.
 */
#ifndef RLX_H
#define RLX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RLX_VERSION_MAJOR 0
#define RLX_VERSION_MINOR 1
#define RLX_VERSION_PATCH 0
#define RLX_MAX_RANK      8

/* ---------------------------------------------------------------- status */

typedef enum rlx_status {
    RLX_OK                       = 0,
    RLX_STATUS_INVALID_ARGUMENT  = 1,  /* NULL, out of range, unknown name    */
    RLX_STATUS_SHAPE             = 2,  /* shapes or dtypes do not fit          */
    RLX_STATUS_UNSUPPORTED       = 3,  /* valid request rlx cannot do (yet)    */
    RLX_STATUS_OUT_OF_MEMORY     = 4,
    RLX_STATUS_DEVICE            = 5,  /* backend/device failure or no device  */
    RLX_STATUS_IO                = 6,
    RLX_STATUS_FORMAT            = 7,  /* malformed file or data               */
    RLX_STATUS_NOT_FOUND         = 8,  /* no input/output/param of that name   */
    RLX_STATUS_INTERNAL          = 9,
} rlx_status;

const char *rlx_last_error(void);              /* never NULL; "" when none   */
const char *rlx_status_name(rlx_status status); /* "RLX_STATUS_SHAPE", ...; "RLX_STATUS_UNKNOWN" if not one */
const char *rlx_version(void);                 /* "0.1.0"                     */

/* --------------------------------------------------------------- logging */

typedef enum rlx_log_level {
    RLX_LOG_DEBUG = 0,
    RLX_LOG_INFO  = 1,
    RLX_LOG_WARN  = 2,
    RLX_LOG_ERROR = 3,
    RLX_LOG_OFF   = 4,
} rlx_log_level;

typedef void (*rlx_log_fn)(rlx_log_level level, const char *message, void *user);

/* Route library messages to fn (NULL restores the default, which prints
 * warnings and errors to stderr). Messages below min_level are dropped; a
 * min_level of RLX_LOG_OFF or above drops them all. */
void rlx_set_log_callback(rlx_log_fn fn, void *user, rlx_log_level min_level);

/* ---------------------------------------------------------------- dtypes */

typedef enum rlx_dtype {
    RLX_F32  = 0,
    RLX_F16  = 1,
    RLX_BF16 = 2,
    RLX_F64  = 3,
    RLX_I32  = 4,
    RLX_I64  = 5,
    RLX_U8   = 6,
    RLX_BOOL = 7,   /* one byte, 0 or 1 */
    RLX_I8   = 8,
    /* GGUF block-quantized storage (ggml layouts): valid for params used as
     * the weight of rlx_dequant_matmul or the table of rlx_gather_rows. The
     * last dim must be a multiple of the block (32, or 256 for the K types). */
    RLX_Q4_0 = 9,  RLX_Q4_1 = 10, RLX_Q5_0 = 11, RLX_Q5_1 = 12, RLX_Q8_0 = 13,
    RLX_Q2_K = 14, RLX_Q3_K = 15, RLX_Q4_K = 16, RLX_Q5_K = 17, RLX_Q6_K = 18, RLX_Q8_K = 19,
    RLX_DTYPE_COUNT
} rlx_dtype;

const char *rlx_dtype_name(rlx_dtype dtype);   /* "f32", "q4_K", ...; "?" if unknown */
size_t      rlx_dtype_size(rlx_dtype dtype);   /* bytes per element; 0 for block types and unknown */
int         rlx_dtype_is_quantized(rlx_dtype dtype);   /* 0 for unknown dtypes */
/* Bytes of a tensor of this dtype and shape (block types: whole blocks per
 * row). 0 when the shape does not fit the dtype's block or overflows, and
 * for an unknown dtype, a rank outside 0..RLX_MAX_RANK, NULL dims with a
 * rank > 0 or a negative dim (rank 0, a scalar, takes dims NULL). */
size_t      rlx_tensor_bytes(rlx_dtype dtype, int rank, const int64_t *dims);

/* ----------------------------------------------------------------- graph */

typedef struct rlx_graph rlx_graph;
typedef int32_t rlx_node;
#define RLX_NO_NODE ((rlx_node)-1)

/* Dims are int64_t: a value >= 0 is a static size; a symbol made by
 * rlx_symbol() (always <= -2) is a size bound at run time from the inputs.
 * In rlx_reshape, -1 means "infer this one dim". */
#define RLX_DIM_INFER ((int64_t)-1)

rlx_graph *rlx_graph_new(void);                 /* NULL only if out of memory */
void       rlx_graph_free(rlx_graph *g);
rlx_status rlx_graph_status(const rlx_graph *g); /* first builder error, or OK */

/* A named symbolic dim; the same name gives the same symbol. At most 4 per
 * graph. Returns a value <= -2, or RLX_DIM_INFER (-1) on error. */
int64_t    rlx_symbol(rlx_graph *g, const char *name);

/* Text dump of the graph, one node per line. Returns a malloc'ed string the
 * caller free()s, or NULL (g NULL or out of memory, said in rlx_last_error()). */
char      *rlx_graph_dump(const rlx_graph *g);
/* Nodes in g (0 for an empty graph); -1 when g is NULL, with a message. */
int        rlx_graph_node_count(const rlx_graph *g);

/* Sources. Names must be unique among inputs, params and outputs. rank is
 * 0..RLX_MAX_RANK; a rank-0 source is a scalar and its dims may be NULL. */
rlx_node rlx_input   (rlx_graph *g, const char *name, rlx_dtype dt, int rank, const int64_t *dims);
rlx_node rlx_param   (rlx_graph *g, const char *name, rlx_dtype dt, int rank, const int64_t *dims);
rlx_node rlx_constant(rlx_graph *g, rlx_dtype dt, int rank, const int64_t *dims, const void *data);
rlx_node rlx_scalar  (rlx_graph *g, rlx_dtype dt, double value);  /* rank-0 constant */

/* Marks x as a graph output called name. */
rlx_status rlx_output(rlx_graph *g, const char *name, rlx_node x);

/* Names nodes for error messages and dumps (optional; not empty). */
rlx_status rlx_set_name(rlx_graph *g, rlx_node x, const char *name);

/* Elementwise binary, numpy broadcasting; both operands have one dtype. */
rlx_node rlx_add(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_sub(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_mul(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_div(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_max(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_min(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_pow(rlx_graph *g, rlx_node a, rlx_node b);
/* dy * d/dx gelu(x) (erf form), broadcasting: gelu's backward, which rlx_gradients
 * uses; float only. */
rlx_node rlx_gelu_grad(rlx_graph *g, rlx_node x, rlx_node dy);
/* The same for gelu_tanh: dy * d/dx gelu_tanh(x). */
rlx_node rlx_gelu_tanh_grad(rlx_graph *g, rlx_node x, rlx_node dy);

/* Elementwise unary (floating dtypes; neg/abs also integers). */
rlx_node rlx_relu     (rlx_graph *g, rlx_node x);
rlx_node rlx_sigmoid  (rlx_graph *g, rlx_node x);
rlx_node rlx_tanh     (rlx_graph *g, rlx_node x);
rlx_node rlx_exp      (rlx_graph *g, rlx_node x);
rlx_node rlx_log      (rlx_graph *g, rlx_node x);
rlx_node rlx_sqrt     (rlx_graph *g, rlx_node x);
rlx_node rlx_rsqrt    (rlx_graph *g, rlx_node x);
rlx_node rlx_neg      (rlx_graph *g, rlx_node x);
rlx_node rlx_abs      (rlx_graph *g, rlx_node x);
rlx_node rlx_gelu     (rlx_graph *g, rlx_node x);   /* exact, erf form  */
rlx_node rlx_gelu_tanh(rlx_graph *g, rlx_node x);   /* tanh approximation */
rlx_node rlx_silu     (rlx_graph *g, rlx_node x);
rlx_node rlx_round    (rlx_graph *g, rlx_node x);   /* half to even */
rlx_node rlx_sin      (rlx_graph *g, rlx_node x);
rlx_node rlx_cos      (rlx_graph *g, rlx_node x);
rlx_node rlx_tan      (rlx_graph *g, rlx_node x);
rlx_node rlx_atan     (rlx_graph *g, rlx_node x);
rlx_node rlx_erf      (rlx_graph *g, rlx_node x);   /* the error function */

/* Comparisons: numpy broadcasting, result dtype RLX_BOOL. */
rlx_node rlx_eq(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_ne(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_lt(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_le(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_gt(rlx_graph *g, rlx_node a, rlx_node b);
rlx_node rlx_ge(rlx_graph *g, rlx_node a, rlx_node b);

rlx_node rlx_where(rlx_graph *g, rlx_node cond, rlx_node a, rlx_node b); /* cond ? a : b */
rlx_node rlx_fma  (rlx_graph *g, rlx_node a, rlx_node b, rlx_node c);    /* a * b + c    */
rlx_node rlx_clamp(rlx_graph *g, rlx_node x, double lo, double hi);
rlx_node rlx_cast (rlx_graph *g, rlx_node x, rlx_dtype to);

/* x [..., K] (f32) times w [N, K] transposed -> [..., N] f32, where w may be
 * f32, f16, bf16 or a block-quantized type: a linear layer over weights kept
 * in their storage type (dequantized inside the kernel). */
rlx_node rlx_dequant_matmul(rlx_graph *g, rlx_node x, rlx_node w);

/* Matmul: a [..., M, K] x b [..., K, N] -> [..., M, N], batch dims broadcast.
 * With transpose_b, b is [..., N, K] (a linear layer's weight layout). */
rlx_node rlx_matmul(rlx_graph *g, rlx_node a, rlx_node b, int transpose_b);

typedef enum rlx_activation {
    RLX_ACT_NONE = 0, RLX_ACT_RELU, RLX_ACT_GELU, RLX_ACT_GELU_TANH,
    RLX_ACT_SILU, RLX_ACT_SIGMOID, RLX_ACT_TANH,
} rlx_activation;

/* act(matmul(a, b) + bias), bias [N] (bias may be RLX_NO_NODE). */
rlx_node rlx_matmul_bias_act(rlx_graph *g, rlx_node a, rlx_node b, int transpose_b,
                             rlx_node bias, rlx_activation act);

/* Flags of rlx_matmul_ex: which operands are stored transposed. */
typedef enum rlx_matmul_flags {
    RLX_MATMUL_TRANSPOSE_B = 1 << 0,   /* b is [..., N, K] (as rlx_matmul's transpose_b) */
    RLX_MATMUL_TRANSPOSE_A = 1 << 1,   /* a is [..., K, M]: a weight gradient's X^T dY reads X [tokens, K] as is */
} rlx_matmul_flags;

/* The general matmul: act(op(a) x op(b) + bias) -> [..., M, N], op(a) = a
 * or, with RLX_MATMUL_TRANSPOSE_A, a^T over its last two dims (a [..., K,
 * M]); op(b) likewise with RLX_MATMUL_TRANSPOSE_B (b [..., N, K]); batch dims
 * broadcast. bias [N] may be RLX_NO_NODE, act RLX_ACT_NONE: with neither it
 * is an rlx_matmul. flags is a set of rlx_matmul_flags; another bit is
 * INVALID_ARGUMENT. (The Vulkan backend runs a transposed a on its tiled
 * f32 kernel, not on tensor cores: docs/ops.md.) */
rlx_node rlx_matmul_ex(rlx_graph *g, rlx_node a, rlx_node b, unsigned flags, rlx_node bias, rlx_activation act);

/* Reductions over the axes set in axes_mask (bit i = axis i; 0 = all axes). */
rlx_node rlx_reduce_sum (rlx_graph *g, rlx_node x, uint32_t axes_mask, int keepdim);
rlx_node rlx_reduce_mean(rlx_graph *g, rlx_node x, uint32_t axes_mask, int keepdim);
rlx_node rlx_reduce_max (rlx_graph *g, rlx_node x, uint32_t axes_mask, int keepdim);
rlx_node rlx_reduce_min (rlx_graph *g, rlx_node x, uint32_t axes_mask, int keepdim);
rlx_node rlx_reduce_prod(rlx_graph *g, rlx_node x, uint32_t axes_mask, int keepdim);
/* Index of the first max/min along axis, dtype RLX_I32. Negative axis counts from the end. */
rlx_node rlx_argmax(rlx_graph *g, rlx_node x, int axis, int keepdim);
rlx_node rlx_argmin(rlx_graph *g, rlx_node x, int axis, int keepdim);

rlx_node rlx_softmax    (rlx_graph *g, rlx_node x, int axis);
rlx_node rlx_log_softmax(rlx_graph *g, rlx_node x, int axis);

/* Normalize over the last dim: gamma [D], beta [D] or RLX_NO_NODE.
 * layer_norm: (x - mean) / sqrt(var + eps) * gamma + beta (biased variance).
 * rms_norm:   x / sqrt(mean(x^2) + eps) * gamma + beta. */
rlx_node rlx_layer_norm(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps);
rlx_node rlx_rms_norm  (rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps);

/* Norms over the channel dim of images x [N, C, *S] (f32); gamma, beta, mean
 * and var are [C] (beta required: pass zeros for none).
 * batch_norm (inference): (x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c].
 * group_norm: for each n and each of `groups` groups of C / groups channels,
 *   (x - m) / sqrt(v + eps) * gamma[c] + beta[c], m and v the mean and biased
 *   variance over the group's channels and all positions (torch GroupNorm,
 *   ONNX GroupNormalization opset 21). instance_norm: groups = C.
 * layer_norm_channels: layer_norm over C at each (n, position), ConvNeXt's
 *   LayerNorm2d (built as transpose, layer_norm, transpose). */
rlx_node rlx_batch_norm         (rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, rlx_node mean, rlx_node var,
                                 float eps);
rlx_node rlx_group_norm         (rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, int groups, float eps);
rlx_node rlx_instance_norm      (rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps);
rlx_node rlx_layer_norm_channels(rlx_graph *g, rlx_node x, rlx_node gamma, rlx_node beta, float eps);

/* Convolution (cross-correlation, as torch.nn.functional.conv1d/2d/3d and
 * ONNX Conv): x [N, C, *S] with 1 to 3 spatial dims (NCHW layout), w [O,
 * C / groups, *K], bias [O] or RLX_NO_NODE; out [N, O, *S'] with
 * S'_i = (S_i + pad_begin_i + pad_end_i - dilation_i (K_i - 1) - 1) / stride_i + 1,
 * then the activation. Zero fields take defaults: dims from x's rank,
 * stride, dilation and groups 1, no padding. groups = C = O is depthwise.
 * The batch may be symbolic; channels, spatial sizes and w are static. */
typedef struct rlx_conv_params {
    int            dims;                  /* spatial dims (0: x's rank - 2) */
    int64_t        stride[3], dilation[3];
    int64_t        pad_begin[3], pad_end[3];
    int64_t        groups;
    rlx_activation act;
    int64_t        output_padding[3];     /* rlx_conv_transpose only: extra output at the end, < max(stride, dilation) */
} rlx_conv_params;
rlx_node rlx_conv(rlx_graph *g, rlx_node x, rlx_node w, rlx_node bias, const rlx_conv_params *p);
/* Transposed convolution (torch conv_transpose1d/2d/3d, ONNX ConvTranspose),
 * conv's input gradient: x [N, Cin, *S], w [Cin, Cout / groups, *K], bias
 * [Cout] or RLX_NO_NODE; out [N, Cout, *S'] with S'_i = (S_i - 1) stride_i -
 * pad_begin_i - pad_end_i + dilation_i (K_i - 1) + output_padding_i + 1. No
 * activation. */
rlx_node rlx_conv_transpose(rlx_graph *g, rlx_node x, rlx_node w, rlx_node bias, const rlx_conv_params *p);

/* Pooling over windows of x [N, C, *S] (1 to 3 spatial dims), as PyTorch's
 * max_pool / avg_pool and ONNX's MaxPool / AveragePool: out [N, C, *S'] with
 * S'_i = (S_i + pad_begin_i + pad_end_i - kernel_i) / stride_i + 1, rounded
 * up with ceil_mode (a last window that would start in the end padding is
 * dropped). Padding is at most half the window. Max ignores padding; the
 * average divides by the window clipped to the padded input
 * (count_include_pad) or by its elements inside the input. kernel is
 * required; stride 0 means the window, dims 0 means x's rank - 2. */
typedef enum rlx_pool_kind { RLX_MAXPOOL = 0, RLX_AVGPOOL = 1 } rlx_pool_kind;
typedef struct rlx_pool_params {
    rlx_pool_kind kind;
    int           dims;
    int64_t       kernel[3], stride[3];
    int64_t       pad_begin[3], pad_end[3];
    int           ceil_mode, count_include_pad;
} rlx_pool_params;
rlx_node rlx_pool(rlx_graph *g, rlx_node x, const rlx_pool_params *p);

/* Resize (ONNX Resize, opsets 13-19; PyTorch F.interpolate) of x [N, C, *S]
 * over its trailing `dims` spatial dims (1 to 3; 0: x's rank - 2), f32.
 * Output size i is sizes[i] when > 0 (the scale is then scales[i] if > 0,
 * as ONNX's keep_aspect_ratio_policy gives, else sizes[i] / S_i), otherwise
 * floor(S_i * scales[i]); the scale, not the rounded size, enters the
 * coordinate formula. Source coordinate of output index o:
 *   half_pixel            (o + 0.5) / scale - 0.5
 *   half_pixel_symmetric  as half_pixel, shifted to keep the centre (opset 19)
 *   pytorch_half_pixel    as half_pixel, 0 where the output size is 1
 *   align_corners         o (S - 1) / (out - 1), 0 where out is 1
 *   asymmetric            o / scale
 * nearest picks one input by the nearest mode; linear (bi/trilinear) and
 * cubic (cubic_a, exclude_outside) weight 2 or 4 taps per axis. Taps outside
 * the input are clamped to its edge. PyTorch: nearest = asymmetric + floor,
 * bilinear = half_pixel or align_corners, bicubic = cubic_a -0.75. */
typedef enum rlx_resize_mode { RLX_RESIZE_NEAREST = 0, RLX_RESIZE_LINEAR = 1, RLX_RESIZE_CUBIC = 2 } rlx_resize_mode;
typedef enum rlx_resize_coord {
    RLX_COORD_HALF_PIXEL = 0, RLX_COORD_HALF_PIXEL_SYMMETRIC = 1, RLX_COORD_PYTORCH_HALF_PIXEL = 2,
    RLX_COORD_ALIGN_CORNERS = 3, RLX_COORD_ASYMMETRIC = 4,
} rlx_resize_coord;
typedef enum rlx_resize_nearest {
    RLX_NEAREST_ROUND_PREFER_FLOOR = 0, RLX_NEAREST_ROUND_PREFER_CEIL = 1, RLX_NEAREST_FLOOR = 2, RLX_NEAREST_CEIL = 3,
} rlx_resize_nearest;
typedef struct rlx_resize_params {
    rlx_resize_mode    mode;
    rlx_resize_coord   coord;
    rlx_resize_nearest nearest;
    int                dims;
    int64_t            sizes[3];          /* > 0: the output size */
    double             scales[3];         /* used where sizes[i] is 0 */
    double             cubic_a;           /* ONNX cubic_coeff_a */
    int                exclude_outside;   /* cubic: taps outside the input get weight 0, the rest renormalized */
} rlx_resize_params;
/* Defaults: nearest, half_pixel, round_prefer_floor, cubic_a -0.75, no sizes or scales. */
void     rlx_resize_params_init(rlx_resize_params *p);
rlx_node rlx_resize(rlx_graph *g, rlx_node x, const rlx_resize_params *p);

/* Adaptive pooling (torch adaptive_avg_pool1d/2d/3d, adaptive_max_pool): x
 * [N, C, *S] to [N, C, *out] over `dims` spatial dims (0: x's rank - 2);
 * output o of O along a dim of S covers [floor(o S / O), ceil((o + 1) S / O)). */
rlx_node rlx_adaptive_pool(rlx_graph *g, rlx_node x, rlx_pool_kind kind, int dims, const int64_t *out);

/* Data movement. */
rlx_node rlx_reshape  (rlx_graph *g, rlx_node x, int rank, const int64_t *dims);
rlx_node rlx_transpose(rlx_graph *g, rlx_node x, const int *perm); /* out dim i = in dim perm[i] */
rlx_node rlx_narrow   (rlx_graph *g, rlx_node x, int axis, int64_t start, int64_t length);
rlx_node rlx_slice    (rlx_graph *g, rlx_node x, int axis, int64_t start, int64_t end, int64_t step);
/* The last `length` entries along axis: x[dim - length : dim]. The start
 * follows the dim when it is symbolic (e.g. the last row of a prompt of
 * `seq` tokens), resolved for each binding; length > dim is a SHAPE error. */
rlx_node rlx_slice_last(rlx_graph *g, rlx_node x, int axis, int64_t length);
rlx_node rlx_concat   (rlx_graph *g, const rlx_node *xs, int n, int axis); /* n <= 8 */
rlx_node rlx_expand   (rlx_graph *g, rlx_node x, int rank, const int64_t *dims);
/* x reversed along every axis whose bit is set in axes_mask (torch.flip). */
rlx_node rlx_flip     (rlx_graph *g, rlx_node x, uint32_t axes_mask);
/* ONNX DepthToSpace / SpaceToDepth on x [N, C, H, W] with block b:
 * depth_to_space gives [N, C / b^2, H b, W b], DCR taking channel
 * (i b + j) C / b^2 + c to pixel (i, j) of block (h, w) of output channel c,
 * CRD channel c b^2 + i b + j; space_to_depth gives [N, C b^2, H / b, W / b]
 * and is each mode's inverse (DCR is ONNX's SpaceToDepth). */
typedef enum rlx_depth_space_mode { RLX_DCR = 0, RLX_CRD = 1 } rlx_depth_space_mode;
rlx_node rlx_depth_to_space(rlx_graph *g, rlx_node x, int64_t blocksize, rlx_depth_space_mode mode);
rlx_node rlx_space_to_depth(rlx_graph *g, rlx_node x, int64_t blocksize, rlx_depth_space_mode mode);

/* rows of table [V, ...] picked by integer ids [...]: out [ids..., table[1:]...].
 * A block-quantized table [V, D] gives f32 rows (a quantized embedding). */
rlx_node rlx_gather_rows(rlx_graph *g, rlx_node table, rlx_node ids);
/* torch.gather: out[i..] = x[i.. with axis index replaced by index[i..]]; index has x's rank. */
rlx_node rlx_gather(rlx_graph *g, rlx_node x, rlx_node index, int axis);

rlx_node rlx_cumsum(rlx_graph *g, rlx_node x, int axis);   /* inclusive */
/* base [V, rest...] (float) with rows [ids..., rest...] added at row ids[i..]:
 * out = base; out[ids[i..]] += rows[i..], repeated ids summed in index order
 * (deterministic). gather_rows' gradient. An id outside [0, V) is
 * INVALID_ARGUMENT at run time. */
rlx_node rlx_scatter_add_rows(rlx_graph *g, rlx_node base, rlx_node ids, rlx_node rows);
/* torch.scatter_add: out = base; out[i.. with the axis coordinate replaced by
 * index[i..]] += src[i..]; index (i32/i64) and src alike, of base's rank, each
 * other dim within base's. Sums in index order. gather's gradient. */
rlx_node rlx_scatter_add(rlx_graph *g, rlx_node base, rlx_node index, rlx_node src, int axis);
/* k largest along the last axis, sorted descending, ties to the lower index.
 * *values has x's dtype; *indices is RLX_I32. Either pointer may be NULL. */
rlx_status rlx_topk(rlx_graph *g, rlx_node x, int k, rlx_node *values, rlx_node *indices);

typedef enum rlx_mask {
    RLX_MASK_NONE = 0, RLX_MASK_CAUSAL = 1, RLX_MASK_ADDITIVE = 2,
} rlx_mask;

/* Scaled dot-product attention. q [B,H,Sq,D], k and v [B,Hkv,Skv,D] with
 * H % Hkv == 0 (GQA: query head h reads kv head h / (H/Hkv)).
 * scale <= 0 means 1/sqrt(D); a NaN or infinite scale is INVALID_ARGUMENT.
 * Queries sit at the end of the keys: query i has
 * position Skv - Sq + i, and under RLX_MASK_CAUSAL sees keys j <= that.
 * RLX_MASK_CAUSAL requires Sq <= Skv. RLX_MASK_ADDITIVE adds mask (same dtype,
 * broadcastable to [B,H,Sq,Skv]) to the scores; a row whose scores are all -inf
 * gives zeros. */
rlx_node rlx_attention(rlx_graph *g, rlx_node q, rlx_node k, rlx_node v,
                       rlx_mask mask_kind, rlx_node mask, float scale);

/* Attention over a KV cache at its active extent: only the first kv_len keys
 * (an RLX_I32 tensor of one element, read at run time) exist; query i has
 * position kv_len - Sq + i. k and v are typically rlx_kv_write results, so a
 * decode step needs no recompile as the cache fills. */
rlx_node rlx_attention_kv(rlx_graph *g, rlx_node q, rlx_node k, rlx_node v, rlx_mask mask_kind,
                          rlx_node mask, float scale, rlx_node kv_len);

/* Persistent KV cache update: cache is a param [B,H,capacity,D] (state kept on
 * the device between runs), rows [B,H,S,D], pos an RLX_I32 tensor of one
 * element. Writes rows at positions [pos, pos+S) in place and returns the
 * cache. A run with pos + S > capacity fails with RLX_STATUS_INVALID_ARGUMENT
 * ("context limit"). */
rlx_node rlx_kv_write(rlx_graph *g, rlx_node cache, rlx_node rows, rlx_node pos);

/* Persistent state update: param = value (broadcast to the param's shape,
 * same dtype), in place at its point in the graph, after every node built
 * before it has read the old value. Returns the param's new value. Kept by
 * the optimizer even when no output depends on it, so a train step needs no
 * output but its loss. Each run updates the param on the device (the exec's
 * copy: rlx_exec_read_param reads it back). */
rlx_node rlx_assign(rlx_graph *g, rlx_node param, rlx_node value);

typedef enum rlx_rope_style {
    RLX_ROPE_NEOX = 0,   /* rotate pairs (i, i + d/2) */
    RLX_ROPE_GPTJ = 1,   /* rotate pairs (2i, 2i + 1) */
} rlx_rope_style;

/* Rotary embedding on x [B,H,S,D]; position of token s is offset + s where
 * offset is an RLX_I32 tensor of one element (or RLX_NO_NODE for 0).
 * rotary_dims (even, <= D; 0 means D) leading dims are rotated, the rest pass.
 * Angle for pair i: pos * theta^(-2i / rotary_dims). */
rlx_node rlx_rope(rlx_graph *g, rlx_node x, rlx_node offset, rlx_rope_style style,
                  float theta, int rotary_dims);

/* rlx_rope with per-frequency factors (llama3 long-context scaling, GGUF's
 * rope_freqs.weight): freq_factors f32 [rotary_dims / 2]; the angle of pair
 * i is pos * theta^(-2i / rotary_dims) / freq_factors[i]. */
rlx_node rlx_rope_scaled(rlx_graph *g, rlx_node x, rlx_node offset, rlx_rope_style style, float theta,
                         int rotary_dims, rlx_node freq_factors);

/* logits [N,C], labels RLX_I32 [N]: loss = mean_n(logsumexp(logits_n) - logits_n[label_n]), shape [].
 * grad = (softmax(logits) - onehot(labels)) / N, shape [N,C]. */
rlx_node rlx_softmax_cross_entropy     (rlx_graph *g, rlx_node logits, rlx_node labels);
rlx_node rlx_softmax_cross_entropy_grad(rlx_graph *g, rlx_node logits, rlx_node labels);

/* ---------------------------------------------------------------- training */

/* Reverse-mode autodiff (docs/training.md). Appends to g the gradient of
 * loss, a float tensor of one element, with respect to each of wrt[0..n),
 * and writes their node ids to grads[0..n): grads[i] has wrt[i]'s shape and
 * dtype. wrt may be params, inputs or inner nodes (all float). The gradient
 * nodes are ordinary nodes: output them, or feed them to further ops; the
 * optimizer passes see forward and backward as one graph. Integer and bool
 * tensors carry no gradient (ids, masks, comparisons). A wrt node the loss
 * does not depend on gets zeros. Symbolic dims stay symbolic.
 * An op between the loss and a wrt node without a gradient rule is
 * RLX_STATUS_UNSUPPORTED naming the node and its op; g is then unchanged.
 * Calling it again (say, for another loss) appends another backward pass. */
rlx_status rlx_gradients(rlx_graph *g, rlx_node loss, int n, const rlx_node *wrt, rlx_node *grads);

/* Optimizer steps, built into the graph (docs/training.md): one compiled
 * exec is one whole train step, its params and optimizer state updated in
 * place on the device (rlx_assign), only what the caller outputs read back. */
typedef enum rlx_optimizer {
    RLX_OPT_SGD = 0,     /* torch.optim.SGD: momentum, dampening 0, nesterov, coupled weight decay */
    RLX_OPT_ADAMW = 1,   /* torch.optim.AdamW: bias correction, decoupled weight decay */
} rlx_optimizer;

typedef struct rlx_optimizer_options {
    rlx_optimizer kind;
    double momentum;       /* SGD (0) */
    int    nesterov;       /* SGD (0; needs momentum > 0) */
    double beta1, beta2;   /* AdamW (0.9, 0.999) */
    double eps;            /* AdamW (1e-8) */
    double weight_decay;   /* SGD: added to the gradient (0); AdamW: decoupled, p -= lr wd p (0.01) */
    double clip_norm;      /* > 0: scale all gradients by min(1, clip_norm / (global L2 norm + 1e-6)) first (0: off) */
    /* Gradient accumulation over micro-batches: > 1 adds each run's
     * gradients to "<name>.grad_acc" and applies the update on every
     * accumulate-th run (counted by "optimizer.micro"), with the mean of
     * those runs' gradients; the runs in between only accumulate. So a train
     * step of batch B run k times updates as one step of batch k B with a
     * mean loss. 0 or 1: every run updates (default). */
    int    accumulate;
    /* Dynamic loss scaling, for mixed precision (RLX_PRECISION_FAST rounds
     * GPU matmul operands to f16, where small gradients underflow): > 0 is
     * the initial scale S (65536 as torch.cuda.amp.GradScaler; a power of
     * two keeps unscaling exact). Differentiate rlx_scale_loss(g, loss, o)
     * instead of loss. The optimizer divides the gradients by S; an update
     * whose gradients hold an Inf or NaN is skipped (params, state and the
     * step counter unchanged) and S halves; after loss_scale_interval good
     * updates in a row S doubles. S = loss_scale * 2^e, with e the state
     * param "optimizer.loss_scale_log2" (f32 [1], 0 at first) and the run of
     * good updates in "optimizer.loss_scale_good". 0: off (default). */
    double loss_scale;
    int    loss_scale_interval;   /* good updates before S doubles (0: 2000, as GradScaler) */
} rlx_optimizer_options;

/* Defaults as PyTorch's for kind (INVALID_ARGUMENT for another kind). */
rlx_status rlx_optimizer_options_init(rlx_optimizer_options *o, rlx_optimizer kind);
/* Appends one optimizer step over params[0..n) (param nodes, float) with
 * their gradients grads[0..n) (rlx_gradients' nodes, each its param's shape).
 * lr is a float scalar node of one element, typically an input, so that a
 * schedule (warmup, cosine) changes it with no recompile. State params are
 * added, zero until set, named after each param: "<name>.momentum" (SGD with
 * momentum), "<name>.adam_m" and "<name>.adam_v" (AdamW), and one step
 * counter "optimizer.step" (f32 [1], AdamW's bias correction). *grad_norm
 * (may be NULL) receives the gradients' global L2 norm before clipping, a
 * scalar node to output (unscaled; with accumulation, the norm of the
 * window's mean gradient on the run that applies it). A name in use, a param that is not a param, or a
 * shape mismatch is an error naming it. */
rlx_status rlx_optimizer_step(rlx_graph *g, const rlx_optimizer_options *o, int n, const rlx_node *params,
                              const rlx_node *grads, rlx_node lr, rlx_node *grad_norm);
/* loss times the dynamic loss scale of o (o->loss_scale > 0; adds the state
 * params named there), the node to give rlx_gradients. With loss scaling off
 * it returns loss. Call it once per graph, before rlx_optimizer_step; the
 * loss to report stays loss. */
rlx_node rlx_scale_loss(rlx_graph *g, rlx_node loss, const rlx_optimizer_options *o);

/* Node queries. dims receives up to RLX_MAX_RANK values (symbols as <= -2).
 * Any of dtype, rank and dims may be NULL: that part is not written. */
rlx_status rlx_node_shape(const rlx_graph *g, rlx_node x, rlx_dtype *dtype, int *rank, int64_t *dims);

/* Op table, for tools. An op outside [0, rlx_op_count()) gives NULL (name,
 * doc) or RLX_OP_ARITY_INVALID (arity), with a message. */
#define RLX_OP_ARITY_VARIADIC (-1)   /* the input count varies (see docs/ops.md) */
#define RLX_OP_ARITY_INVALID  (-2)   /* no such op */
int         rlx_op_count(void);
const char *rlx_op_name(int op);
int         rlx_op_arity(int op);     /* inputs, RLX_OP_ARITY_VARIADIC or _INVALID */
const char *rlx_op_doc(int op);       /* one-line semantics */

/* -------------------------------------------------------------- compile */

typedef enum rlx_backend {
    RLX_BACKEND_AUTO = 0,   /* best available: GPU if present, else CPU */
    RLX_BACKEND_CPU  = 1,
    RLX_BACKEND_VULKAN = 2,
} rlx_backend;

typedef enum rlx_precision {
    RLX_PRECISION_F32  = 0,  /* default: f32 semantics everywhere */
    RLX_PRECISION_FAST = 1,  /* GPU matmuls may use f16/bf16 operands with f32 accumulation */
} rlx_precision;

typedef struct rlx_compile_options {
    rlx_backend backend;   /* default AUTO; env RLX_DEVICE=cpu|vulkan|auto|<index>|<name> overrides */
    int threads;           /* 0 = number of cores; env RLX_THREADS overrides */
    int fuse;              /* 1 = fusion on (default); env RLX_NO_FUSE=1 turns it off */
    int optimize;          /* 1 = run passes (default); 0 = op by op, no fusion, no DCE */
    /* Ranges: threads 0..1024, fuse and optimize 0 or 1, device_index >= -1,
     * backend and precision one of their enums. A value outside its range
     * makes rlx_compile return INVALID_ARGUMENT naming the field. */
    /* GPU device choice: index into `rlx devices`' list (-1 = best), or a
     * substring of the device name (NULL = any). AUTO uses only hardware
     * GPUs; a software Vulkan device (lavapipe) is used when asked for by
     * backend VULKAN, index or name. */
    int         device_index;
    const char *device_name;
    rlx_precision precision;
    /* Products with block-quantized weights (rlx_dequant_matmul and its
     * fused forms). 0 (default): the fast path, as llama.cpp computes them:
     * x is rounded to 8-bit integers in blocks (32 values for Q4_0..Q8_0, 256
     * for the K-quants; one f32 scale per block, absmax / 127) and multiplied
     * with the weights' integer quants in integer dot products, so a result
     * differs from the exact product by about 2e-3 to 4e-3 relative (x's
     * rounding; the weights' own quantization error is larger). Where a
     * device or weight type has no such kernel, or it would not be faster
     * (the Vulkan decode of a plain Q8_0 product), the product is exact.
     * 1: exact: weights are decoded to f32 and multiplied with f32 x (the
     * Vulkan prefill tier on tensor cores rounds both to f16 either way:
     * docs/ops.md). env RLX_EXACT_QUANT=1 sets it. */
    int exact_quant;
    /* Profiling and debugging (docs/build.md, "Profiling and debugging").
     * trace_path: write a Chrome / Perfetto trace (JSON Trace Event Format,
     * array form) of compilation and of every run to this file; NULL = off
     * (default). Compile phases, each step of each run (CPU: wall time;
     * Vulkan: GPU timestamps on a track of their own, which serializes the
     * nodes as RLX_PROFILE=1 does), host steps, param uploads, input copies
     * and output readbacks. The file is flushed after each run and complete
     * JSON after rlx_exec_free; execs given the same path share the file.
     * Env RLX_TRACE=FILE overrides. Read at compile; the string is not kept.
     * A file that cannot be created is not an error: a warning is logged
     * (rlx_set_log_callback) and nothing is traced. */
    const char *trace_path;
    /* check_numerics: 1 = after every run, find the first node in
     * topological order whose result holds a NaN or an Inf
     * (rlx_exec_numerics) and log a warning naming it; 0 = off (default).
     * A debug mode: the arena is planned without reuse (every tensor its own
     * bytes, so up to the sum of all tensor sizes), and each run reads every
     * floating-point result back (on a GPU: one copy to the host per node).
     * Env RLX_CHECK_NUMERICS=0|1 overrides. */
    int check_numerics;
    /* poison: 1 = the CPU backend fills its arena with NaN bytes before
     * every run, so an element no kernel writes reads as NaN (finds
     * unwritten outputs; costs one pass over the arena a run); 0 = once, at
     * compile (default). Env RLX_POISON=1 overrides. */
    int poison;
} rlx_compile_options;

void rlx_compile_options_init(rlx_compile_options *opts);

typedef struct rlx_exec rlx_exec;

/* The graph is copied; it may be freed or changed afterwards. opts may be NULL
 * for defaults. Graphs with symbolic dims are specialized on the first run with
 * each new binding of symbols, and the result is cached. */
rlx_status rlx_compile(const rlx_graph *g, const rlx_compile_options *opts, rlx_exec **out);
void       rlx_exec_free(rlx_exec *e);

/* Params are zero until set. count / bytes must match the param's size. */
rlx_status rlx_exec_set_param_f32(rlx_exec *e, const char *name, const float *data, size_t count);
rlx_status rlx_exec_set_param    (rlx_exec *e, const char *name, rlx_dtype dtype,
                                  const void *data, size_t bytes);

/* A param's current value into data (bytes = its size, dtype its dtype):
 * what was set, or what the graph's in-place writes (rlx_assign, a KV cache)
 * made of it. On a GPU a copy back from the device. Block-quantized params
 * on Vulkan (kept re-laid) are UNSUPPORTED. */
rlx_status rlx_exec_read_param(rlx_exec *e, const char *name, rlx_dtype dtype, void *data, size_t bytes);

/* Checkpoints: every param of e (weights and optimizer state) to a
 * safetensors file, with n_meta key/value string pairs (meta[2i],
 * meta[2i+1]) as its "__metadata__". The file is written to a temporary file
 * beside path and renamed over it, so a failed or interrupted save leaves an
 * earlier checkpoint at path intact. */
rlx_status rlx_exec_save_params(rlx_exec *e, const char *path, int n_meta, const char *const *meta);
/* Sets e's params from a safetensors file by name. Every param must be
 * there (NOT_FOUND naming it) unless flags has RLX_LOAD_ALLOW_MISSING (then
 * a missing one keeps its value); tensors that are no param of e are
 * ignored. A dtype or shape that differs is a SHAPE error naming it; all are
 * checked before any is set. */
#define RLX_LOAD_ALLOW_MISSING 1u
rlx_status rlx_exec_load_params(rlx_exec *e, const char *path, unsigned flags);

/* Like rlx_exec_set_param, but where the backend reads params from host
 * memory (the CPU) the exec reads this one from `data` itself, with no copy:
 * there data must be 16-byte aligned and stay valid and unchanged until the
 * exec is freed or the param is set again (so not an output of this exec,
 * which lasts only until its next run), and a param the graph writes in
 * place (a KV cache) is refused. Other backends copy it to the device, as
 * rlx_exec_set_param does, with neither condition. Compiled specializations
 * are dropped when a param's memory changes (each compiles again, and
 * reports any compile error, on its next run; the last run's outputs stay
 * readable until then), so set params before running. */
rlx_status rlx_exec_use_param_memory(rlx_exec *e, const char *name, rlx_dtype dtype, const void *data, size_t bytes);

/* A tensor passed in or out of an exec. For inputs, data is read during
 * rlx_exec_run only. For outputs, data points into the exec and stays valid
 * until the next run or free. */
typedef struct rlx_tensor {
    const char *name;
    rlx_dtype   dtype;
    int         rank;
    int64_t     dims[RLX_MAX_RANK];
    void       *data;
    size_t      bytes;
} rlx_tensor;

/* ---------------------------------------------------------------- NPY files */

/* numpy's .npy (format 1.0 to 3.0): f2 f4 f8 i1 i4 i8 u1 b1, either byte
 * order, C or Fortran order (read into row-major). out->data is malloc'ed
 * (free() it), out->name is NULL. A malformed file is RLX_STATUS_FORMAT, a
 * dtype rlx lacks or more than RLX_MAX_RANK dims RLX_STATUS_UNSUPPORTED. */
rlx_status rlx_npy_load(const char *path, rlx_tensor *out);
rlx_status rlx_npy_load_memory(const void *data, size_t n, rlx_tensor *out);
/* Writes t (bytes must match its dtype and dims) as a version 1.0,
 * little-endian, C-order file, atomically (a temporary file renamed). */
rlx_status rlx_npy_save(const char *path, const rlx_tensor *t);

/* Runs with every graph input given once by name. */
rlx_status rlx_exec_run(rlx_exec *e, const rlx_tensor *inputs, int n_inputs);

/* Compiles the specialization for these inputs' shapes now, without running
 * (data may be NULL), so that the first run with those shapes does not pay
 * for it. Inputs are checked as rlx_exec_run checks them. Outputs of the last
 * run stay readable unless the cache of specializations had to drop theirs. */
rlx_status rlx_exec_prepare(rlx_exec *e, const rlx_tensor *inputs, int n_inputs);

/* Output of the last run, by name; out->data points into the exec. */
rlx_status rlx_exec_output(rlx_exec *e, const char *name, rlx_tensor *out);
/* Copies an output of the last run into dst (bytes must be large enough). */
rlx_status rlx_exec_read_output(rlx_exec *e, const char *name, void *dst, size_t bytes);

/* Interface queries: info->data is NULL; symbolic dims appear as symbols.
 * The counts are -1 when e is NULL (with a message). */
int        rlx_exec_input_count (const rlx_exec *e);
int        rlx_exec_output_count(const rlx_exec *e);
int        rlx_exec_param_count (const rlx_exec *e);
rlx_status rlx_exec_input_info (const rlx_exec *e, int i, rlx_tensor *info);
rlx_status rlx_exec_output_info(const rlx_exec *e, int i, rlx_tensor *info);
rlx_status rlx_exec_param_info (const rlx_exec *e, int i, rlx_tensor *info);

/* Statistics of the most recently used specialization. */
typedef struct rlx_exec_stats {
    size_t arena_bytes;        /* planned activation arena */
    size_t tensor_bytes;       /* sum of activation tensor sizes without reuse */
    size_t param_bytes;
    int    steps;              /* kernel dispatches per run */
    int    fused_nodes;        /* nodes created by fusion (with the current specialization's folds) */
    int    specializations;    /* cached symbol bindings */
    int    host_steps;         /* GPU backends: nodes run on the host between GPU segments */
    double device_seconds;     /* GPU backends: device time of the last run (timestamps); -1 if unknown */
    const char *backend;       /* "cpu", "vulkan" */
    const char *device;        /* device name */
} rlx_exec_stats;

/* Devices rlx can use here: index 0.. in the order `rlx devices` prints.
 * Returns the number of Vulkan devices (0 when there is no Vulkan at all,
 * with the reason in rlx_last_error()). */
int rlx_vulkan_device_count(void);
/* One human-readable block describing device i: name, type, driver, memory
 * heaps, subgroup size, fp16/bf16, cooperative matrix, buffer device address.
 * malloc'ed; free(). NULL on error (i outside [0, count), no Vulkan), with
 * a message. */
char *rlx_vulkan_device_describe(int i);

/* Device capabilities as data, for programs that choose a device or a test
 * that needs a feature. Devices are numbered 0..rlx_device_count()-1:
 * 0 is the CPU (always there), then every Vulkan device in driver order (the
 * order `rlx devices` prints; rlx_device_count() - 1 of them, 0 when there is
 * no Vulkan, with the reason in rlx_vulkan_device_count()'s message). */
typedef enum rlx_device_kind {
    RLX_DEVICE_CPU          = 0,   /* the host CPU (the CPU backend) */
    RLX_DEVICE_GPU          = 1,   /* a hardware GPU: discrete, integrated or virtual */
    RLX_DEVICE_SOFTWARE_GPU = 2,   /* a GPU API implemented on the CPU (Mesa lavapipe) */
} rlx_device_kind;

typedef struct rlx_device_info {
    char            name[256];
    rlx_device_kind kind;
    rlx_backend     backend;            /* RLX_BACKEND_CPU or RLX_BACKEND_VULKAN */
    int             backend_index;      /* index among its backend's devices: compile options' device_index */
    int             usable;             /* 1: rlx can compile for it; 0: see unusable_reason */
    char            unusable_reason[160];
    char            driver[256];        /* driver name and version; "" for the CPU */
    uint32_t        api_version;        /* Vulkan: VK_MAKE_API_VERSION of the device; 0 for the CPU */
    int             compute_units;      /* CPU: online cores; GPU: SMs when the driver reports them, else 0 */
    int             lanes_per_unit;     /* GPU: resident lanes per compute unit when reported, else 0 */
    int             subgroup_size;      /* GPU: lanes per subgroup; CPU: 0 */
    int             fp16;               /* 1: f16 arithmetic in shaders (CPU: 0) */
    int             storage16;          /* 1: 16-bit storage buffers */
    int             bf16;               /* 1: bf16 shader type (VK_KHR_shader_bfloat16) */
    int             cooperative_matrix_nv;  /* 1: VK_NV_cooperative_matrix, feature on */
    int             cooperative_matrix_khr; /* 1: VK_KHR_cooperative_matrix */
    int             integer_dot;        /* 1: shader integer dot products */
    int             integer_dot_accelerated; /* 1: 4x8-bit packed signed dots are hardware-accelerated */
    int             integer_dot_used;   /* 1: rlx's i8 decode matvec uses them on this device */
    int             buffer_device_address;
    uint64_t        device_local_bytes; /* sum of device-local memory heaps; CPU: 0 */
} rlx_device_info;

/* 1 + the number of Vulkan devices (always >= 1); clears rlx_last_error(). */
int        rlx_device_count(void);
/* Fills *out for device i (0 <= i < rlx_device_count()); INVALID_ARGUMENT for
 * a NULL out or an i out of range. */
rlx_status rlx_device_get_info(int i, rlx_device_info *out);

rlx_status rlx_exec_get_stats(const rlx_exec *e, rlx_exec_stats *stats);

/* Per-step report of the most recently used specialization: one line per step
 * with its op, node name, path (kernel or host) and shapes. malloc'ed; free(). */
char *rlx_exec_report(const rlx_exec *e);

/* The numerics check of the last run (rlx_compile_options.check_numerics). */
typedef struct rlx_numerics_report {
    int         found;          /* 1: a result held a NaN or an Inf */
    int         node;           /* its node in the specialized graph, numbered as in
                                 * rlx_exec_report; -1 when none */
    const char *name;           /* that node's name ("" when unnamed) */
    const char *op;             /* its op, after fusion ("log", "matmul_bias_act", ...) */
    int64_t     element;        /* flat index of its first non-finite element */
    double      value;          /* that element: NaN, +Inf or -Inf */
    int         nodes_checked;  /* floating-point results read (inputs included) */
    int         nodes_skipped;  /* floating-point results the backend does not keep
                                 * (fused into a neighbour's kernel on the GPU) */
    const char *message;        /* one line saying all that; "" when nothing was found */
} rlx_numerics_report;

/* The check of the last successful run: params and constants are not
 * checked (a NaN in a param shows in its first consumer), nor integer
 * results. The strings point into the exec, valid until its next run or
 * free. INVALID_ARGUMENT when check_numerics is off or nothing ran yet. */
rlx_status rlx_exec_numerics(const rlx_exec *e, rlx_numerics_report *out);

/* ---------------------------------------------------------------- models */

/* ---------------------------------------------------------------- ONNX */

/* An ONNX model (docs/onnx.md): the file's graph as an rlx_graph, its float
 * initializers as params named as in the file, with their data. Graph inputs
 * are inputs (a named dim such as a dynamic batch is a symbol of that name),
 * graph outputs are outputs of the same names. A model with operators rlx
 * does not import fails with RLX_STATUS_UNSUPPORTED listing all of them; a
 * malformed file is RLX_STATUS_FORMAT. External data is read from beside the
 * file. */
typedef struct rlx_onnx rlx_onnx;
rlx_status rlx_onnx_load(const char *path, rlx_onnx **out);
void       rlx_onnx_free(rlx_onnx *m);
/* The graph (owned by m): compile it, or extend it first (rlx_gradients). */
rlx_graph *rlx_onnx_graph(rlx_onnx *m);
/* Sets every initializer param that e kept (dead ones are skipped). */
rlx_status rlx_onnx_set_params(const rlx_onnx *m, rlx_exec *e);
/* rlx_compile of the graph, then rlx_onnx_set_params. */
rlx_status rlx_onnx_compile(const rlx_onnx *m, const rlx_compile_options *o, rlx_exec **out);

/* A Llama-family decoder (llama 1/2/3, mistral, qwen2, qwen3) loaded from a
 * GGUF file, with its tokenizer and a KV cache that stays on the device. */
typedef struct rlx_model rlx_model;

typedef struct rlx_model_options {
    rlx_compile_options compile;   /* backend, device, threads, exact_quant (init: defaults); trace_path and
                                    * check_numerics apply to the model's program (a numerics
                                    * finding is logged as a warning) */
    int n_ctx;                     /* KV cache positions; 0 = min(trained context, 4096); < 0 is INVALID_ARGUMENT */
} rlx_model_options;

void       rlx_model_options_init(rlx_model_options *o);
/* On the CPU the weights are read in place from the file's read-only
 * mapping, kept until rlx_model_free: the file must not be truncated or
 * rewritten in place meanwhile (replacing it by rename is safe). */
rlx_status rlx_model_load(const char *path, const rlx_model_options *o, rlx_model **out);
void       rlx_model_free(rlx_model *m);

typedef struct rlx_model_info {
    const char *arch;              /* "llama", "qwen2", ... */
    const char *name;              /* general.name or "" */
    int n_vocab, n_ctx, n_layer, n_embd, n_head, n_head_kv;
    int32_t bos, eos;              /* -1 when none */
    const char *backend, *device;
} rlx_model_info;

rlx_status rlx_model_get_info(const rlx_model *m, rlx_model_info *info);

/* Text -> ids (BOS/EOS as the model's tokenizer says when add_special).
 * *n is the count needed; cap too small returns INVALID_ARGUMENT. ids may
 * be NULL with cap 0 to ask for the count; m, text and n must not be NULL. */
rlx_status rlx_model_tokenize(rlx_model *m, const char *text, int add_special, int32_t *ids, int cap, int *n);
/* ids -> text in buf (NUL-terminated); *len is the length needed (without
 * the NUL), and cap <= *len returns INVALID_ARGUMENT. buf may be NULL with
 * cap 0 to ask for the length; ids may be NULL when n is 0. */
rlx_status rlx_model_detokenize(rlx_model *m, const int32_t *ids, int n, char *buf, size_t cap, size_t *len);

/* Empties the KV cache: the next eval starts at position 0. */
rlx_status rlx_model_reset(rlx_model *m);
/* The per-step report (rlx_exec_report) of the model's program, for the
 * shape of its most recent eval; NULL (with a message) before the first or
 * when m is NULL. malloc'ed; free(). */
char *rlx_model_report(const rlx_model *m);
/* Appends n tokens at the current position and returns the logits of the
 * last one ([n_vocab], pointing into the model's program: valid until the
 * next eval, generate or free). Exceeding n_ctx is INVALID_ARGUMENT
 * ("context limit"). logits must not be NULL; a refused call changes nothing. */
rlx_status rlx_model_eval(rlx_model *m, const int32_t *ids, int n, const float **logits);

typedef struct rlx_sampling {
    float    temperature;      /* <= 0: greedy (0.8) */
    int      top_k;            /* <= 0: off (40) */
    float    top_p;            /* >= 1: off (0.95) */
    float    min_p;            /* <= 0: off (0.05) */
    float    repeat_penalty;   /* 1: off (1.0) */
    int      repeat_last_n;    /* (64) */
    uint64_t seed;             /* same seed, same tokens */
} rlx_sampling;

void rlx_sampling_init(rlx_sampling *s);

/* Called with each generated piece of text (valid UTF-8, possibly empty).
 * Return nonzero to stop: no further call follows, not even for bytes of an
 * incomplete UTF-8 sequence the detokenizer still holds. While it runs,
 * rlx_model_eval, _reset and _generate on the generating model return
 * INVALID_ARGUMENT (the queries and the tokenizer may be used). */
typedef int (*rlx_token_fn)(const char *text, size_t len, int32_t id, void *user);

typedef struct rlx_generate_stats {
    int    prompt_tokens, generated_tokens;
    double prompt_seconds, generate_seconds;
    int    stopped_at_eos;
} rlx_generate_stats;

/* Resets the cache, evaluates the prompt (an empty prompt starts from BOS),
 * then samples up to n_predict tokens, stopping at end-of-generation tokens.
 * s NULL samples with rlx_sampling_init's defaults; on_token may be NULL;
 * stats may be NULL. A field of s outside its range (NaN, top_p < 0,
 * min_p > 1, repeat_penalty <= 0 or infinite, repeat_last_n < 0) is
 * INVALID_ARGUMENT naming the field. */
rlx_status rlx_model_generate(rlx_model *m, const char *prompt, int n_predict, const rlx_sampling *s,
                              rlx_token_fn on_token, void *user, rlx_generate_stats *stats);

/* -------------------------------------------------------------- encoders */

/* A BERT-family encoder (BERT, RoBERTa, XLM-R, CamemBERT, DistilBERT) loaded
 * from a Hugging Face folder: config.json, model.safetensors (or a sharded
 * model.safetensors.index.json), and for text input vocab.txt (WordPiece).
 * Weights keep their file dtype (f32, f16, bf16); on the CPU they are read
 * in place from the file's mapping where aligned. */
typedef struct rlx_encoder rlx_encoder;

typedef enum rlx_pooling {
    RLX_POOL_CLS  = 0,   /* the first token's hidden state */
    RLX_POOL_MEAN = 1,   /* the mean over the attention mask's tokens */
    RLX_POOL_MAX  = 2    /* the per-dim max over them */
} rlx_pooling;

typedef struct rlx_encoder_options {
    rlx_compile_options compile;   /* backend, device, precision, threads */
    rlx_pooling pooling;           /* embedding pooling (RLX_POOL_MEAN) */
    int normalize;                 /* L2-normalize embeddings (0) */
    int max_length;                /* tokens per text, template included; 0 = the model's limit */
} rlx_encoder_options;

void       rlx_encoder_options_init(rlx_encoder_options *o);
/* dir: the model folder. An unknown architecture, a missing or misshapen
 * tensor, or a config value out of range is an error naming it. A folder
 * without a tokenizer rlx reads still loads: rlx_encoder_run_ids works, the
 * text calls return UNSUPPORTED. */
rlx_status rlx_encoder_load(const char *dir, const rlx_encoder_options *o, rlx_encoder **out);
void       rlx_encoder_free(rlx_encoder *e);

typedef struct rlx_encoder_info {
    const char *model_type;        /* config.json's, e.g. "bert" */
    int hidden, layers, heads, vocab, max_length;
    int num_labels;                /* 0: no classification head */
    int has_tokenizer;
    const char *backend, *device;
} rlx_encoder_info;
rlx_status  rlx_encoder_get_info(const rlx_encoder *e, rlx_encoder_info *info);
const char *rlx_encoder_label(const rlx_encoder *e, int i);   /* NULL when out of range */

/* n texts -> n embeddings of `hidden` floats (row-major in out, cap floats).
 * Texts are tokenized, truncated to max_length and batched with padding; a
 * padded row does not change any other row's result. */
rlx_status rlx_encoder_embed(rlx_encoder *e, const char *const *texts, int n, float *out, size_t cap);
/* n texts -> n rows of num_labels logits (models with a classification head). */
rlx_status rlx_encoder_classify(rlx_encoder *e, const char *const *texts, int n, float *logits, size_t cap);
/* text (and pair, or NULL) -> token ids with the model's template, truncated
 * to max_length: *n is the count; cap too small is INVALID_ARGUMENT (ids may be
 * NULL with cap 0 to ask for the count). type_ids may be NULL. UNSUPPORTED
 * without a tokenizer. */
rlx_status rlx_encoder_tokenize(rlx_encoder *e, const char *text, const char *pair, int32_t *ids, int32_t *type_ids,
                                int cap, int *n);
/* Token ids in: [batch, seq] ids, type ids (NULL: zeros) and attention mask
 * (NULL: all ones). Each output may be NULL: hidden [batch, seq, hidden],
 * embedding [batch, hidden], pooler [batch, hidden] (BERT's tanh pooler;
 * UNSUPPORTED when the checkpoint has none), logits [batch, num_labels]. */
rlx_status rlx_encoder_run_ids(rlx_encoder *e, int batch, int seq, const int32_t *ids, const int32_t *type_ids,
                               const int32_t *mask, float *hidden, float *embedding, float *pooler, float *logits);

#ifdef __cplusplus
}
#endif
#endif /* RLX_H */
