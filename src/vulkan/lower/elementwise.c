/*
 * elementwise.c — Vulkan lowerings of the elementwise ops: binary arithmetic
 * and comparisons with broadcasting (shader binary.comp), unary math, clamp
 * and cast (unary.comp), where and fma (ternary.comp).
 *
 * Every op is one dispatch, one invocation per output element, with the op
 * and dtypes as specialization constants. Broadcast shapes are collapsed
 * (vk_collapse_broadcast) so their element strides fit the push constants.
 * Element indices are 32-bit in the shaders, so tensors of 2^31 elements or
 * more run as host steps, as does anything in f64 (shaders have no f64).
 */
#include "vulkan/vk_lower.h"
#include <math.h>
#include <string.h>

#define EW_LOCAL 256u
#define EW_MAX_NUMEL ((int64_t)1 << 31)

static const char *op_name(const vk_lower_ctx *c)
{
    const ir_op_info *info = ir_op_info_get(c->node->op);
    return info ? info->name : "?";
}

static bool is_gpu_float(rlx_dtype dt) { return dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16; }
static bool is_gpu_int(rlx_dtype dt)
{
    return dt == RLX_I32 || dt == RLX_I64 || dt == RLX_U8 || dt == RLX_BOOL || dt == RLX_I8;
}

/* The checks every elementwise lowering shares: sizes that fit 32-bit
 * indices and dtypes the shaders can load. */
static rlx_status check_common(const vk_lower_ctx *c)
{
    if (c->out.numel >= EW_MAX_NUMEL)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: %lld elements exceed 32-bit shader indices", op_name(c),
                        (long long)c->out.numel);
    for (int i = 0; i < c->n_in; i++) {
        if (c->in[i].numel >= EW_MAX_NUMEL)
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: input %d has %lld elements, beyond 32-bit shader indices",
                            op_name(c), i, (long long)c->in[i].numel);
    }
    return RLX_OK;
}

static rlx_status check_dtype(const vk_lower_ctx *c, rlx_dtype dt, bool int_ok)
{
    if (is_gpu_float(dt) || (int_ok && is_gpu_int(dt))) return RLX_OK;
    return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: dtype %s has no GPU kernel", op_name(c), rlx_dtype_name(dt));
}

/* ------------------------------------------------------------- binary */

enum { BOP_ADD, BOP_SUB, BOP_MUL, BOP_DIV, BOP_MAX, BOP_MIN, BOP_POW, BOP_EQ, BOP_NE, BOP_LT, BOP_LE, BOP_GT, BOP_GE,
       BOP_GELU_GRAD, BOP_GELU_TANH_GRAD };

static bool bop_compares(int code) { return code >= BOP_EQ && code <= BOP_GE; }

static bool aligned16(uint64_t addr) { return (addr & 15) == 0; }

typedef struct binary_push {
    uint64_t a, b, out;
    uint32_t n, rank;
    uint32_t dims[6];
    uint32_t sa[6];
    uint32_t sb[6];
} binary_push;

static int binary_code(ir_op op)
{
    switch (op) {
    case IR_OP_ADD: return BOP_ADD;
    case IR_OP_SUB: return BOP_SUB;
    case IR_OP_MUL: return BOP_MUL;
    case IR_OP_DIV: return BOP_DIV;
    case IR_OP_MAX: return BOP_MAX;
    case IR_OP_MIN: return BOP_MIN;
    case IR_OP_POW: return BOP_POW;
    case IR_OP_EQ:  return BOP_EQ;
    case IR_OP_NE:  return BOP_NE;
    case IR_OP_LT:  return BOP_LT;
    case IR_OP_LE:  return BOP_LE;
    case IR_OP_GT:  return BOP_GT;
    case IR_OP_GE:  return BOP_GE;
    case IR_OP_GELU_GRAD: return BOP_GELU_GRAD;
    case IR_OP_GELU_TANH_GRAD: return BOP_GELU_TANH_GRAD;
    default:        return -1;
    }
}

rlx_status vk_lower_binary(vk_lower_ctx *c)
{
    int code = binary_code(c->node->op);
    if (code < 0 || c->n_in != 2)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan binary lowering called for %s", op_name(c));
    rlx_dtype dt = c->in[0].dtype;
    rlx_status st = check_common(c);
    if (st != RLX_OK) return st;
    if ((st = check_dtype(c, dt, code != BOP_POW && code != BOP_GELU_GRAD && code != BOP_GELU_TANH_GRAD)) != RLX_OK) return st;
    if (c->in[1].dtype != dt)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: operands have different dtypes", op_name(c));
    c->tier = "elementwise";
    if (c->out.numel == 0) return RLX_OK;

    binary_push p;
    memset(&p, 0, sizeof p);
    const vk_tensor *ins[2] = {&c->in[0], &c->in[1]};
    int64_t dims[IR_MAX_RANK], strides[4][IR_MAX_RANK];
    int r = vk_collapse_broadcast(&c->out, ins, 2, 6, dims, strides);
    if (r < 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: broadcast pattern needs more than 6 dims", op_name(c));
    p.a = c->in[0].addr;
    p.b = c->in[1].addr;
    p.out = c->out.addr;
    p.n = (uint32_t)c->out.numel;
    p.rank = (uint32_t)r;
    for (int i = 0; i < r; i++) {
        p.dims[i] = (uint32_t)dims[i];
        p.sa[i] = (uint32_t)strides[0][i];
        p.sb[i] = (uint32_t)strides[1][i];
    }
    vk_dispatch *d = vk_emit(c, "binary", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)code;
    d->spec[1] = vk_dtype_code(dt);
    d->spec[2] = EW_LOCAL;
    d->n_spec = 3;
    /* same-shape contiguous f32 arithmetic: vec4 loads reach the memory roofline */
    bool vec = dt == RLX_F32 && !bop_compares(code) && r == 1 && p.sa[0] == 1 && p.sb[0] == 1 && c->out.numel % 4 == 0 &&
               aligned16(p.a) && aligned16(p.b) && aligned16(p.out);
    if (vec) {
        d->spec[3] = 1;
        d->n_spec = 4;
    }
    vk_grid_1d(c->caps, (uint64_t)c->out.numel / (vec ? 4 : 1), EW_LOCAL, d->groups);
    return RLX_OK;
}

/* -------------------------------------------------------------- unary */

enum {
    UOP_RELU, UOP_SIGMOID, UOP_TANH, UOP_EXP, UOP_LOG, UOP_SQRT, UOP_RSQRT, UOP_NEG, UOP_ABS, UOP_GELU,
    UOP_GELU_TANH, UOP_SILU, UOP_ROUND, UOP_SIN, UOP_COS, UOP_TAN, UOP_ATAN, UOP_CLAMP, UOP_CAST, UOP_ERF
};

typedef struct unary_push {
    uint64_t x, out;
    int64_t  ilo, ihi;
    uint32_t n;
    float    lo, hi;
    uint32_t pad;
} unary_push;

static int unary_code(ir_op op)
{
    switch (op) {
    case IR_OP_RELU:      return UOP_RELU;
    case IR_OP_SIGMOID:   return UOP_SIGMOID;
    case IR_OP_TANH:      return UOP_TANH;
    case IR_OP_EXP:       return UOP_EXP;
    case IR_OP_LOG:       return UOP_LOG;
    case IR_OP_SQRT:      return UOP_SQRT;
    case IR_OP_RSQRT:     return UOP_RSQRT;
    case IR_OP_NEG:       return UOP_NEG;
    case IR_OP_ABS:       return UOP_ABS;
    case IR_OP_GELU:      return UOP_GELU;
    case IR_OP_GELU_TANH: return UOP_GELU_TANH;
    case IR_OP_SILU:      return UOP_SILU;
    case IR_OP_ROUND:     return UOP_ROUND;
    case IR_OP_SIN:       return UOP_SIN;
    case IR_OP_COS:       return UOP_COS;
    case IR_OP_TAN:       return UOP_TAN;
    case IR_OP_ATAN:      return UOP_ATAN;
    case IR_OP_ERF:       return UOP_ERF;
    case IR_OP_CLAMP:     return UOP_CLAMP;
    case IR_OP_CAST:      return UOP_CAST;
    default:              return -1;
    }
}

/* Integer clamp bounds: the integers inside [lo, hi], saturated to int64
 * (the CPU kernel's rule). */
static int64_t clamp_bound(double v, bool is_lo)
{
    if (isnan(v)) return is_lo ? INT64_MIN : INT64_MAX;
    v = is_lo ? ceil(v) : floor(v);
    if (v <= -9223372036854775808.0) return INT64_MIN;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)v;
}

rlx_status vk_lower_unary(vk_lower_ctx *c)
{
    ir_op op = c->node->op;
    int code = unary_code(op);
    if (code < 0 || c->n_in != 1)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan unary lowering called for %s", op_name(c));
    rlx_dtype dt = c->in[0].dtype, dto = c->out.dtype;
    rlx_status st = check_common(c);
    if (st != RLX_OK) return st;
    bool int_ok = op == IR_OP_RELU || op == IR_OP_NEG || op == IR_OP_ABS || op == IR_OP_CLAMP || op == IR_OP_CAST ||
                  op == IR_OP_ROUND;
    if ((st = check_dtype(c, dt, int_ok)) != RLX_OK) return st;
    if ((st = check_dtype(c, dto, int_ok)) != RLX_OK) return st;
    if (op != IR_OP_CAST && dto != dt)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s: input and output dtypes differ", op_name(c));
    c->tier = "elementwise";
    if (c->out.numel == 0) return RLX_OK;

    unary_push p;
    memset(&p, 0, sizeof p);
    p.x = c->in[0].addr;
    p.out = c->out.addr;
    p.n = (uint32_t)c->out.numel;
    if (op == IR_OP_CLAMP) {
        p.lo = (float)ir_attr_clamp_lo(c->node);
        p.hi = (float)ir_attr_clamp_hi(c->node);
        p.ilo = clamp_bound(ir_attr_clamp_lo(c->node), true);
        p.ihi = clamp_bound(ir_attr_clamp_hi(c->node), false);
    }
    vk_dispatch *d = vk_emit(c, "unary", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = (uint32_t)code;
    d->spec[1] = vk_dtype_code(dt);
    d->spec[2] = vk_dtype_code(dto);
    d->spec[3] = EW_LOCAL;
    d->n_spec = 4;
    bool vec = dt == RLX_F32 && dto == RLX_F32 && c->out.numel % 4 == 0 && aligned16(p.x) && aligned16(p.out);
    if (vec) {
        d->spec[4] = 1;
        d->n_spec = 5;
    }
    vk_grid_1d(c->caps, (uint64_t)c->out.numel / (vec ? 4 : 1), EW_LOCAL, d->groups);
    return RLX_OK;
}

/* ------------------------------------------------------------ ternary */

typedef struct ternary_push {
    uint64_t p0, p1, p2, out;
    uint32_t n, rank;
    uint32_t dims[5];
    uint32_t s0[5];
    uint32_t s1[5];
    uint32_t s2[5];
} ternary_push;

rlx_status vk_lower_ternary(vk_lower_ctx *c)
{
    bool is_fma = c->node->op == IR_OP_FMA;
    if ((!is_fma && c->node->op != IR_OP_WHERE) || c->n_in != 3)
        return rlx_fail(RLX_STATUS_INTERNAL, "vulkan ternary lowering called for %s", op_name(c));
    rlx_dtype dt = c->out.dtype;
    rlx_status st = check_common(c);
    if (st != RLX_OK) return st;
    uint32_t spec_dt;
    if (is_fma) {
        if ((st = check_dtype(c, dt, false)) != RLX_OK) return st;
        spec_dt = vk_dtype_code(dt);
    } else {
        rlx_dtype cd = c->in[0].dtype;
        if (cd != RLX_BOOL && cd != RLX_U8)
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "where: condition dtype %s has no GPU kernel", rlx_dtype_name(cd));
        spec_dt = (uint32_t)rlx_dtype_size(dt);   /* where copies elements: any dtype, f64 included */
        if (spec_dt != 1 && spec_dt != 2 && spec_dt != 4 && spec_dt != 8)
            return rlx_fail(RLX_STATUS_UNSUPPORTED, "where: dtype %s has no GPU kernel", rlx_dtype_name(dt));
    }
    c->tier = "elementwise";
    if (c->out.numel == 0) return RLX_OK;

    ternary_push p;
    memset(&p, 0, sizeof p);
    const vk_tensor *ins[3] = {&c->in[0], &c->in[1], &c->in[2]};
    int64_t dims[IR_MAX_RANK], strides[4][IR_MAX_RANK];
    int r = vk_collapse_broadcast(&c->out, ins, 3, 5, dims, strides);
    if (r < 0)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s: broadcast pattern needs more than 5 dims", op_name(c));
    p.p0 = c->in[0].addr;
    p.p1 = c->in[1].addr;
    p.p2 = c->in[2].addr;
    p.out = c->out.addr;
    p.n = (uint32_t)c->out.numel;
    p.rank = (uint32_t)r;
    for (int i = 0; i < r; i++) {
        p.dims[i] = (uint32_t)dims[i];
        p.s0[i] = (uint32_t)strides[0][i];
        p.s1[i] = (uint32_t)strides[1][i];
        p.s2[i] = (uint32_t)strides[2][i];
    }
    vk_dispatch *d = vk_emit(c, "ternary", &p, sizeof p);
    if (!d) return RLX_STATUS_INTERNAL;
    d->spec[0] = is_fma ? 1u : 0u;
    d->spec[1] = spec_dt;
    d->spec[2] = EW_LOCAL;
    d->n_spec = 3;
    vk_grid_1d(c->caps, (uint64_t)c->out.numel, EW_LOCAL, d->groups);
    return RLX_OK;
}
