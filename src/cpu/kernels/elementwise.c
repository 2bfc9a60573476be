/*
 * elementwise.c — CPU kernels for elementwise ops: binary arithmetic, unary
 * math, comparisons, where, fma and cast, with numpy broadcasting.
 *
 * Broadcast operands go through one iterator: the output's dims are coalesced
 * (size-1 dims dropped, neighbours merged where every operand stays linear), so
 * same-shape operands become one long row, a scalar operand a row of stride 0
 * and a [N] bias against [M,N] rows of N. Each row is handed to a row function
 * whose inner strides are 0 or 1, which is where the f32 loops specialize.
 *
 * f32 has dedicated loops; other float dtypes compute in double through
 * rlx_load_as_f64/rlx_store_from_f64; integer dtypes compute in int64 and wrap
 * to their width, which gives the same results as native two's-complement
 * arithmetic of that width.
 *
 * Semantics decided here (docs/ops.md):
 *  - max/min propagate NaN (either operand NaN -> NaN).
 *  - integer div truncates toward zero; x / 0 is 0; INT_MIN / -1 wraps to INT_MIN.
 *  - integer add/sub/mul/neg/abs wrap (abs(INT_MIN) = INT_MIN).
 *  - relu and clamp pass NaN through; clamp is min(max(x, lo), hi).
 *  - round is half to even.
 *  - cast: float -> int truncates toward zero and saturates at the target's
 *    range, NaN -> 0; int -> narrower int wraps; anything -> bool is x != 0
 *    (so NaN -> true, as in numpy/torch); bool -> anything is 0/1.
 */
/* GCC's -O2 vectorizes only loops that need no scalar epilogue or alias check,
 * which excludes nearly every kernel loop here; the dynamic cost model lets it
 * vectorize them (clang does so at -O2 already). no-trapping-math lets float
 * selects (clamp, relu, max) become blends; results are unchanged. The
 * Makefile builds this file with -fno-math-errno (a pragma cannot set it), so
 * that sqrt loops become sqrtps instead of keeping a libm call for errno. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("vect-cost-model=dynamic", "no-trapping-math")
#endif
#include "cpu/cpu_kernel.h"
#include "cpu/kernels/vmath.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EW_GRAIN 16384
#define EW_MAX_IN 3

/* ------------------------------------------------------------ helpers */

static const char *node_name(const cpu_kernel_ctx *k)
{
    return k->node->name ? k->node->name : "";
}

static const char *op_name(const cpu_kernel_ctx *k)
{
    const ir_op_info *info = ir_op_info_get(k->node->op);
    return info ? info->name : "?";
}

/* ---------------------------------------------------- broadcast iterator */

typedef struct ew_iter {
    int     rank;   /* coalesced, >= 1 */
    int     nin;
    int64_t dims[IR_MAX_RANK];
    int64_t st[EW_MAX_IN][IR_MAX_RANK];
} ew_iter;

/* Processes n output elements starting at flat index o; operand j starts at
 * element off[j] and advances by st[j] (0 or 1) per element. */
typedef void (*ew_row_fn)(void *ctx, int64_t o, const int64_t *off, const int64_t *st, int64_t n);

typedef struct ew_run {
    ew_iter   it;
    ew_row_fn fn;
    void     *ctx;
} ew_run;

static void ew_iter_init(ew_iter *it, const cpu_kernel_ctx *k, int nin)
{
    int64_t st[EW_MAX_IN][IR_MAX_RANK];
    for (int j = 0; j < nin; j++) cpu_broadcast_strides(&k->in[j], &k->out, st[j]);
    int r = 0;
    for (int d = 0; d < k->out.rank; d++) {
        int64_t n = k->out.dims[d];
        if (n == 1) continue;
        bool merge = r > 0;
        for (int j = 0; j < nin && merge; j++)
            merge = it->st[j][r - 1] == st[j][d] * n;
        if (merge) {
            it->dims[r - 1] *= n;
            for (int j = 0; j < nin; j++) it->st[j][r - 1] = st[j][d];
            continue;
        }
        it->dims[r] = n;
        for (int j = 0; j < nin; j++) it->st[j][r] = st[j][d];
        r++;
    }
    if (r == 0) {
        it->dims[0] = 1;
        for (int j = 0; j < nin; j++) it->st[j][0] = 0;
        r = 1;
    }
    it->rank = r;
    it->nin = nin;
}

static void ew_range(void *p, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const ew_run *run = p;
    const ew_iter *it = &run->it;
    int R = it->rank, nin = it->nin;
    int64_t idx[IR_MAX_RANK], off[EW_MAX_IN] = {0}, inner[EW_MAX_IN] = {0};
    int64_t rem = begin;
    for (int d = R - 1; d >= 0; d--) {
        idx[d] = rem % it->dims[d];
        rem /= it->dims[d];
        for (int j = 0; j < nin; j++) off[j] += idx[d] * it->st[j][d];
    }
    for (int j = 0; j < nin; j++) inner[j] = it->st[j][R - 1];
    int64_t pos = begin;
    while (pos < end) {
        int64_t n = RLX_MIN(it->dims[R - 1] - idx[R - 1], end - pos);
        run->fn(run->ctx, pos, off, inner, n);
        pos += n;
        idx[R - 1] += n;
        for (int j = 0; j < nin; j++) off[j] += n * inner[j];
        for (int d = R - 1; d > 0 && idx[d] == it->dims[d]; d--) {
            idx[d] = 0;
            idx[d - 1]++;
            for (int j = 0; j < nin; j++) off[j] += it->st[j][d - 1] - it->dims[d] * it->st[j][d];
        }
    }
}

static void ew_for(const cpu_kernel_ctx *k, int nin, ew_row_fn fn, void *ctx)
{
    if (k->out.numel <= 0) return;
    ew_run run;
    ew_iter_init(&run.it, k, nin);
    run.fn = fn;
    run.ctx = ctx;
    rlx_parallel_for(k->pool, k->out.numel, EW_GRAIN, ew_range, &run);
}

/* Two-operand loop specialized on which operand advances (strides are 0/1).
 * x, y are the operand values; EXPR gives the result. */
#define EW2_LOOP(TD, TA, EXPR) do {                                                 \
        if (sa && sb) {                                                             \
            for (int64_t i = 0; i < n; i++) { TA x = pa[i], y = pb[i]; dst[i] = (TD)(EXPR); } \
        } else if (sa) {                                                            \
            const TA y = pb[0];                                                     \
            for (int64_t i = 0; i < n; i++) { TA x = pa[i]; dst[i] = (TD)(EXPR); }  \
        } else if (sb) {                                                            \
            const TA x = pa[0];                                                     \
            for (int64_t i = 0; i < n; i++) { TA y = pb[i]; dst[i] = (TD)(EXPR); }  \
        } else {                                                                    \
            const TA x = pa[0], y = pb[0];                                          \
            const TD v = (TD)(EXPR);                                                \
            for (int64_t i = 0; i < n; i++) dst[i] = v;                             \
        }                                                                           \
    } while (0)

/* NaN-propagating max/min; bitwise | keeps the select branch-free. */
#define NAN_MAX(x, y) ((((x) > (y)) | ((x) != (x))) ? (x) : (y))
#define NAN_MIN(x, y) ((((x) < (y)) | ((x) != (x))) ? (x) : (y))

/* ------------------------------------------------------------- binary */

/* dy * gelu'(x) = dy (Phi(x) + x phi(x)); Phi as 0.5 erfc(-x / sqrt 2), accurate
 * in the negative tail like the forward. Computed in double: the f32 path
 * rounds once on store. */
static double gelu_grad64(double x, double dy)
{
    return dy * (0.5 * erfc(-x * 0.70710678118654752440) + x * exp(-0.5 * x * x) * 0.39894228040143267794);
}

/* gelu_tanh's f32 gradient is vmath.h's vm_gelu_tanh_grad (one exp, in the
 * form of the forward); this is the same formula in double. */
static double gelu_tanh_grad64(double x, double dy)
{
    const double c = 0.79788456080286535588;
    double u = c * (x + 0.044715 * x * x * x), s = 1.0 / (1.0 + exp(-2.0 * u));
    return dy * (s + 2.0 * x * s * (1.0 - s) * c * (1.0 + 0.134145 * x * x));
}

typedef struct bin_ctx {
    ir_op       op;
    rlx_dtype   dt;
    const void *a, *b;
    void       *out;
} bin_ctx;

static void bin_f32_row(void *p, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const bin_ctx *c = p;
    const float *pa = (const float *)c->a + off[0], *pb = (const float *)c->b + off[1];
    float *dst = (float *)c->out + o;
    int64_t sa = st[0], sb = st[1];
    switch (c->op) {
    case IR_OP_ADD: EW2_LOOP(float, float, x + y); break;
    case IR_OP_SUB: EW2_LOOP(float, float, x - y); break;
    case IR_OP_MUL: EW2_LOOP(float, float, x * y); break;
    case IR_OP_DIV: EW2_LOOP(float, float, x / y); break;
    case IR_OP_MAX: EW2_LOOP(float, float, NAN_MAX(x, y)); break;
    case IR_OP_MIN: EW2_LOOP(float, float, NAN_MIN(x, y)); break;
    case IR_OP_POW: EW2_LOOP(float, float, powf(x, y)); break;
    case IR_OP_GELU_GRAD: EW2_LOOP(float, float, (float)gelu_grad64(x, y)); break;
    case IR_OP_GELU_TANH_GRAD:
        if (sa && sb) cpu_vgelu_tanh_grad(dst, pa, pb, n);
        else EW2_LOOP(float, float, vm_gelu_tanh_grad(x, y));
        break;
    default: break;
    }
}

static double bin_f64(ir_op op, double a, double b)
{
    switch (op) {
    case IR_OP_ADD: return a + b;
    case IR_OP_SUB: return a - b;
    case IR_OP_MUL: return a * b;
    case IR_OP_DIV: return a / b;
    case IR_OP_MAX: return NAN_MAX(a, b);
    case IR_OP_MIN: return NAN_MIN(a, b);
    case IR_OP_POW: return pow(a, b);
    case IR_OP_GELU_GRAD: return gelu_grad64(a, b);
    case IR_OP_GELU_TANH_GRAD: return gelu_tanh_grad64(a, b);
    default:        return 0;
    }
}

/* a^b with wrapping multiplication; a negative exponent is 1 / a^|b|
 * truncated, i.e. 0 unless |a| == 1 (and 0 for a == 0, like x / 0). */
static int64_t ipow(int64_t a, int64_t b)
{
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b & 1) ? -1 : 1;
        return 0;
    }
    uint64_t r = 1, base = (uint64_t)a;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1) r *= base;
        base *= base;
    }
    return (int64_t)r;
}

/* Unsigned arithmetic so overflow wraps instead of being undefined. */
static int64_t bin_int(ir_op op, int64_t a, int64_t b)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case IR_OP_ADD: return (int64_t)(ua + ub);
    case IR_OP_SUB: return (int64_t)(ua - ub);
    case IR_OP_MUL: return (int64_t)(ua * ub);
    case IR_OP_DIV:
        if (b == 0) return 0;
        if (b == -1) return (int64_t)(0 - ua);
        return a / b;
    case IR_OP_MAX: return a > b ? a : b;
    case IR_OP_MIN: return a < b ? a : b;
    case IR_OP_POW: return ipow(a, b);
    default:        return 0;
    }
}

static void bin_generic_row(void *p, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const bin_ctx *c = p;
    for (int64_t i = 0; i < n; i++) {
        int64_t ia = off[0] + i * st[0], ib = off[1] + i * st[1];
        if (rlx_dtype_is_int_like(c->dt)) {
            rlx_store_from_i64(c->out, c->dt, o + i, bin_int(c->op, rlx_load_as_i64(c->a, c->dt, ia), rlx_load_as_i64(c->b, c->dt, ib)));
        } else {
            double r = bin_f64(c->op, rlx_load_as_f64(c->a, c->dt, ia), rlx_load_as_f64(c->b, c->dt, ib));
            rlx_store_from_f64(c->out, c->dt, o + i, r);
        }
    }
}

rlx_status cpu_binary(const cpu_kernel_ctx *k)
{
    rlx_dtype dt = k->out.dtype;
    if (k->n_in != 2 || k->in[0].dtype != dt || k->in[1].dtype != dt)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': expects two %s operands", op_name(k), node_name(k),
                        rlx_dtype_name(dt));
    bin_ctx c = {k->node->op, dt, k->in[0].data, k->in[1].data, k->out.data};
    ew_for(k, 2, dt == RLX_F32 ? bin_f32_row : bin_generic_row, &c);
    return RLX_OK;
}

/* -------------------------------------------------------------- unary */

typedef struct un_ctx {
    ir_op       op;
    rlx_dtype   dt;
    const void *x;
    void       *out;
    double      lo, hi;
    int64_t     ilo, ihi;   /* clamp bounds for integer dtypes */
} un_ctx;

static void un_f32_range(void *p, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const un_ctx *c = p;
    const float *x = (const float *)c->x + begin;
    float *y = (float *)c->out + begin;
    int64_t n = end - begin;
    switch (c->op) {
    case IR_OP_RELU:      for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0.0f ? 0.0f : x[i]; break;
    case IR_OP_SIGMOID:   for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-x[i])); break;
    case IR_OP_TANH:      for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]); break;
    case IR_OP_EXP:       for (int64_t i = 0; i < n; i++) y[i] = expf(x[i]); break;
    case IR_OP_LOG:       for (int64_t i = 0; i < n; i++) y[i] = logf(x[i]); break;
    case IR_OP_SQRT:      for (int64_t i = 0; i < n; i++) y[i] = sqrtf(x[i]); break;
    case IR_OP_RSQRT:     for (int64_t i = 0; i < n; i++) y[i] = 1.0f / sqrtf(x[i]); break;
    case IR_OP_NEG:       for (int64_t i = 0; i < n; i++) y[i] = -x[i]; break;
    case IR_OP_ABS:       for (int64_t i = 0; i < n; i++) y[i] = fabsf(x[i]); break;
    case IR_OP_GELU:      for (int64_t i = 0; i < n; i++) y[i] = cpu_activate(x[i], RLX_ACT_GELU); break;
    case IR_OP_GELU_TANH: cpu_vgelu_tanh(y, x, n); break;
    case IR_OP_SILU:      for (int64_t i = 0; i < n; i++) y[i] = x[i] / (1.0f + expf(-x[i])); break;
    case IR_OP_ROUND:     for (int64_t i = 0; i < n; i++) y[i] = rintf(x[i]); break;
    case IR_OP_SIN:       for (int64_t i = 0; i < n; i++) y[i] = sinf(x[i]); break;
    case IR_OP_COS:       for (int64_t i = 0; i < n; i++) y[i] = cosf(x[i]); break;
    case IR_OP_TAN:       for (int64_t i = 0; i < n; i++) y[i] = tanf(x[i]); break;
    case IR_OP_ATAN:      for (int64_t i = 0; i < n; i++) y[i] = atanf(x[i]); break;
    case IR_OP_ERF:       for (int64_t i = 0; i < n; i++) y[i] = erff(x[i]); break;
    case IR_OP_CLAMP: {
        const float lo = (float)c->lo, hi = (float)c->hi;
        for (int64_t i = 0; i < n; i++) {
            float v = x[i] < lo ? lo : x[i];
            y[i] = v > hi ? hi : v;
        }
        break;
    }
    default: break;
    }
}

/* Same formulas as the f32 loop, in double. */
static double un_f64(const un_ctx *c, double x)
{
    switch (c->op) {
    case IR_OP_RELU:      return x < 0 ? 0 : x;
    case IR_OP_SIGMOID:   return 1.0 / (1.0 + exp(-x));
    case IR_OP_TANH:      return tanh(x);
    case IR_OP_EXP:       return exp(x);
    case IR_OP_LOG:       return log(x);
    case IR_OP_SQRT:      return sqrt(x);
    case IR_OP_RSQRT:     return 1.0 / sqrt(x);
    case IR_OP_NEG:       return -x;
    case IR_OP_ABS:       return fabs(x);
    case IR_OP_GELU:      return 0.5 * x * erfc(x * -0.70710678118654752440);
    case IR_OP_GELU_TANH: return x / (1.0 + exp(-2.0 * 0.79788456080286535588 * (x + 0.044715 * x * x * x)));
    case IR_OP_SILU:      return x / (1.0 + exp(-x));
    case IR_OP_ROUND:     return rint(x);
    case IR_OP_SIN:       return sin(x);
    case IR_OP_COS:       return cos(x);
    case IR_OP_TAN:       return tan(x);
    case IR_OP_ATAN:      return atan(x);
    case IR_OP_ERF:       return erf(x);
    case IR_OP_CLAMP: {
        double v = x < c->lo ? c->lo : x;
        return v > c->hi ? c->hi : v;
    }
    default:              return 0;
    }
}

static int64_t un_int(const un_ctx *c, int64_t x)
{
    switch (c->op) {
    case IR_OP_RELU:  return x < 0 ? 0 : x;
    case IR_OP_NEG:   return (int64_t)(0 - (uint64_t)x);
    case IR_OP_ABS:   return x < 0 ? (int64_t)(0 - (uint64_t)x) : x;
    case IR_OP_ROUND: return x;
    case IR_OP_CLAMP: {
        int64_t v = x < c->ilo ? c->ilo : x;
        return v > c->ihi ? c->ihi : v;
    }
    default:          return 0;
    }
}

static void un_generic_range(void *p, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const un_ctx *c = p;
    for (int64_t i = begin; i < end; i++) {
        if (rlx_dtype_is_int_like(c->dt))
            rlx_store_from_i64(c->out, c->dt, i, un_int(c, rlx_load_as_i64(c->x, c->dt, i)));
        else
            rlx_store_from_f64(c->out, c->dt, i, un_f64(c, rlx_load_as_f64(c->x, c->dt, i)));
    }
}

/* Integer clamp bounds: the integers inside [lo, hi], saturated to int64. */
static int64_t clamp_bound(double v, bool is_lo)
{
    if (isnan(v)) return is_lo ? INT64_MIN : INT64_MAX;
    v = is_lo ? ceil(v) : floor(v);
    if (v <= -9223372036854775808.0) return INT64_MIN;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)v;
}

rlx_status cpu_unary(const cpu_kernel_ctx *k)
{
    ir_op op = k->node->op;
    rlx_dtype dt = k->out.dtype;
    if (k->n_in != 1 || k->in[0].dtype != dt || k->in[0].numel != k->out.numel)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': input and output differ", op_name(k), node_name(k));
    if (rlx_dtype_is_int_like(dt) && op != IR_OP_RELU && op != IR_OP_NEG && op != IR_OP_ABS &&
        op != IR_OP_ROUND && op != IR_OP_CLAMP)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "%s '%s': needs a float dtype, got %s", op_name(k),
                        node_name(k), rlx_dtype_name(dt));
    un_ctx c = {op, dt, k->in[0].data, k->out.data, op == IR_OP_CLAMP ? ir_attr_clamp_lo(k->node) : 0, op == IR_OP_CLAMP ? ir_attr_clamp_hi(k->node) : 0, 0, 0};
    if (op == IR_OP_CLAMP) {
        c.ilo = clamp_bound(c.lo, true);
        c.ihi = clamp_bound(c.hi, false);
    }
    if (k->out.numel > 0)
        rlx_parallel_for(k->pool, k->out.numel, EW_GRAIN, dt == RLX_F32 ? un_f32_range : un_generic_range, &c);
    return RLX_OK;
}

/* ------------------------------------------------------------ compare */

typedef struct cmp_ctx {
    ir_op       op;
    rlx_dtype   dt;
    const void *a, *b;
    uint8_t    *out;
} cmp_ctx;

static void cmp_f32_row(void *p, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const cmp_ctx *c = p;
    const float *pa = (const float *)c->a + off[0], *pb = (const float *)c->b + off[1];
    uint8_t *dst = c->out + o;
    int64_t sa = st[0], sb = st[1];
    switch (c->op) {
    case IR_OP_EQ: EW2_LOOP(uint8_t, float, x == y); break;
    case IR_OP_NE: EW2_LOOP(uint8_t, float, x != y); break;
    case IR_OP_LT: EW2_LOOP(uint8_t, float, x < y); break;
    case IR_OP_LE: EW2_LOOP(uint8_t, float, x <= y); break;
    case IR_OP_GT: EW2_LOOP(uint8_t, float, x > y); break;
    case IR_OP_GE: EW2_LOOP(uint8_t, float, x >= y); break;
    default: break;
    }
}

#define CMP_APPLY(op, x, y)                                  \
    ((op) == IR_OP_EQ ? (x) == (y) : (op) == IR_OP_NE ? (x) != (y) : \
     (op) == IR_OP_LT ? (x) < (y)  : (op) == IR_OP_LE ? (x) <= (y) : \
     (op) == IR_OP_GT ? (x) > (y)  : (x) >= (y))

static void cmp_generic_row(void *p, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const cmp_ctx *c = p;
    for (int64_t i = 0; i < n; i++) {
        int64_t ia = off[0] + i * st[0], ib = off[1] + i * st[1];
        if (rlx_dtype_is_int_like(c->dt)) {
            int64_t x = rlx_load_as_i64(c->a, c->dt, ia), y = rlx_load_as_i64(c->b, c->dt, ib);
            c->out[o + i] = CMP_APPLY(c->op, x, y);
        } else {
            double x = rlx_load_as_f64(c->a, c->dt, ia), y = rlx_load_as_f64(c->b, c->dt, ib);
            c->out[o + i] = CMP_APPLY(c->op, x, y);
        }
    }
}

rlx_status cpu_compare(const cpu_kernel_ctx *k)
{
    rlx_dtype dt = k->in[0].dtype;
    if (k->n_in != 2 || k->in[1].dtype != dt || k->out.dtype != RLX_BOOL)
        return rlx_fail(RLX_STATUS_INTERNAL, "%s '%s': expects two %s operands and a bool result", op_name(k),
                        node_name(k), rlx_dtype_name(dt));
    cmp_ctx c = {k->node->op, dt, k->in[0].data, k->in[1].data, k->out.data};
    ew_for(k, 2, dt == RLX_F32 ? cmp_f32_row : cmp_generic_row, &c);
    return RLX_OK;
}

/* -------------------------------------------------------------- where */

typedef struct where_ctx {
    const uint8_t *cond;
    const void    *a, *b;
    void          *out;
    size_t         esize;
} where_ctx;

#define WHERE_LOOP(T) do {                                                   \
        const T *pa = (const T *)c->a + off[1], *pb = (const T *)c->b + off[2]; \
        T *dst = (T *)c->out + o;                                            \
        if (sc && sa && sb) {                                                \
            for (int64_t i = 0; i < n; i++) dst[i] = pc[i] ? pa[i] : pb[i];  \
        } else {                                                             \
            for (int64_t i = 0; i < n; i++)                                  \
                dst[i] = pc[i * sc] ? pa[i * sa] : pb[i * sb];               \
        }                                                                    \
    } while (0)

/* where copies elements, so one loop per element size serves every dtype. */
static void where_row(void *p, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const where_ctx *c = p;
    const uint8_t *pc = c->cond + off[0];
    int64_t sc = st[0], sa = st[1], sb = st[2];
    switch (c->esize) {
    case 1: WHERE_LOOP(uint8_t); break;
    case 2: WHERE_LOOP(uint16_t); break;
    case 4: WHERE_LOOP(uint32_t); break;
    case 8: WHERE_LOOP(uint64_t); break;
    default: break;
    }
}

rlx_status cpu_where(const cpu_kernel_ctx *k)
{
    rlx_dtype dt = k->out.dtype, cd = k->in[0].dtype;
    if (k->n_in != 3 || k->in[1].dtype != dt || k->in[2].dtype != dt)
        return rlx_fail(RLX_STATUS_INTERNAL, "where '%s': operands must have the result's dtype %s", node_name(k),
                        rlx_dtype_name(dt));
    /* Any nonzero byte is true, so a u8 condition works like bool. */
    if (cd != RLX_BOOL && cd != RLX_U8 && cd != RLX_I8)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "where '%s': condition must be bool or u8, got %s", node_name(k),
                        rlx_dtype_name(cd));
    where_ctx c = {k->in[0].data, k->in[1].data, k->in[2].data, k->out.data, rlx_dtype_size(dt)};
    ew_for(k, 3, where_row, &c);
    return RLX_OK;
}

/* ---------------------------------------------------------------- fma */

typedef struct fma_ctx {
    rlx_dtype   dt;
    const void *a, *b, *c;
    void       *out;
} fma_ctx;

/* Without -mfma, fmaf is a libm call per element; where the CPU has FMA, a
 * copy of the contiguous loop built for it vectorizes to vfmadd. */
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define FMA_DISPATCH 1
__attribute__((target("avx2,fma")))
static void fma_f32_contig_hw(float *y, const float *a, const float *b, const float *c, int64_t n)
{
    for (int64_t i = 0; i < n; i++) y[i] = fmaf(a[i], b[i], c[i]);
}
#endif

static void fma_f32_contig(float *y, const float *a, const float *b, const float *c, int64_t n)
{
#ifdef FMA_DISPATCH
    if (__builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2")) {
        fma_f32_contig_hw(y, a, b, c, n);
        return;
    }
#endif
    for (int64_t i = 0; i < n; i++) y[i] = fmaf(a[i], b[i], c[i]);
}

static void fma_row(void *p, int64_t o, const int64_t *off, const int64_t *st, int64_t n)
{
    const fma_ctx *f = p;
    if (f->dt == RLX_F32) {
        const float *pa = (const float *)f->a + off[0], *pb = (const float *)f->b + off[1];
        const float *pc = (const float *)f->c + off[2];
        float *y = (float *)f->out + o;
        if (st[0] && st[1] && st[2]) {
            fma_f32_contig(y, pa, pb, pc, n);
        } else {
            for (int64_t i = 0; i < n; i++) y[i] = fmaf(pa[i * st[0]], pb[i * st[1]], pc[i * st[2]]);
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        double a = rlx_load_as_f64(f->a, f->dt, off[0] + i * st[0]);
        double b = rlx_load_as_f64(f->b, f->dt, off[1] + i * st[1]);
        double c = rlx_load_as_f64(f->c, f->dt, off[2] + i * st[2]);
        rlx_store_from_f64(f->out, f->dt, o + i, fma(a, b, c));
    }
}

rlx_status cpu_fma(const cpu_kernel_ctx *k)
{
    rlx_dtype dt = k->out.dtype;
    if (k->n_in != 3 || k->in[0].dtype != dt || k->in[1].dtype != dt || k->in[2].dtype != dt)
        return rlx_fail(RLX_STATUS_INTERNAL, "fma '%s': operands must all be %s", node_name(k), rlx_dtype_name(dt));
    if (rlx_dtype_is_int_like(dt))
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "fma '%s': needs a float dtype, got %s", node_name(k),
                        rlx_dtype_name(dt));
    fma_ctx c = {dt, k->in[0].data, k->in[1].data, k->in[2].data, k->out.data};
    ew_for(k, 3, fma_row, &c);
    return RLX_OK;
}

/* --------------------------------------------------------------- cast */

typedef struct cast_ctx {
    rlx_dtype   from, to;
    const void *x;
    void       *out;
} cast_ctx;

static int32_t f32_to_i32_sat(float v)
{
    if (v != v) return 0;
    if (v >= 2147483648.0f) return INT32_MAX;
    if (v <= -2147483648.0f) return INT32_MIN;
    return (int32_t)v;
}

static void cast_generic(const cast_ctx *c, int64_t i)
{
    if (c->to == RLX_BOOL) {
        bool nz = rlx_dtype_is_int_like(c->from) ? rlx_load_as_i64(c->x, c->from, i) != 0 : rlx_load_as_f64(c->x, c->from, i) != 0;
        ((uint8_t *)c->out)[i] = nz;
    } else if (rlx_dtype_is_int_like(c->from)) {
        rlx_store_from_i64(c->out, c->to, i, rlx_load_as_i64(c->x, c->from, i));   /* wraps; exact for i64 */
    } else {
        rlx_store_from_f64(c->out, c->to, i, rlx_load_as_f64(c->x, c->from, i)); /* trunc, saturate, NaN->0 */
    }
}

static void cast_range(void *p, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    const cast_ctx *c = p;
    int64_t n = end - begin;
    if (c->from == RLX_F32) {
        const float *x = (const float *)c->x + begin;
        switch (c->to) {
        case RLX_F16: {
            uint16_t *y = (uint16_t *)c->out + begin;
            for (int64_t i = 0; i < n; i++) y[i] = rlx_f32_to_f16(x[i]);
            return;
        }
        case RLX_BF16: {
            uint16_t *y = (uint16_t *)c->out + begin;
            for (int64_t i = 0; i < n; i++) y[i] = rlx_f32_to_bf16(x[i]);
            return;
        }
        case RLX_F64: {
            double *y = (double *)c->out + begin;
            for (int64_t i = 0; i < n; i++) y[i] = x[i];
            return;
        }
        case RLX_I32: {
            int32_t *y = (int32_t *)c->out + begin;
            for (int64_t i = 0; i < n; i++) y[i] = f32_to_i32_sat(x[i]);
            return;
        }
        case RLX_BOOL: {
            uint8_t *y = (uint8_t *)c->out + begin;
            for (int64_t i = 0; i < n; i++) y[i] = x[i] != 0.0f;
            return;
        }
        default: break;
        }
    } else if (c->to == RLX_F32) {
        float *y = (float *)c->out + begin;
        switch (c->from) {
        case RLX_F16: {
            const uint16_t *x = (const uint16_t *)c->x + begin;
            for (int64_t i = 0; i < n; i++) y[i] = rlx_f16_to_f32(x[i]);
            return;
        }
        case RLX_BF16: {
            const uint16_t *x = (const uint16_t *)c->x + begin;
            for (int64_t i = 0; i < n; i++) y[i] = rlx_bf16_to_f32(x[i]);
            return;
        }
        case RLX_F64: {
            const double *x = (const double *)c->x + begin;
            for (int64_t i = 0; i < n; i++) y[i] = (float)x[i];
            return;
        }
        case RLX_I32: {
            const int32_t *x = (const int32_t *)c->x + begin;
            for (int64_t i = 0; i < n; i++) y[i] = (float)x[i];
            return;
        }
        case RLX_I64: {
            const int64_t *x = (const int64_t *)c->x + begin;
            for (int64_t i = 0; i < n; i++) y[i] = (float)x[i];
            return;
        }
        case RLX_U8: case RLX_BOOL: {
            const uint8_t *x = (const uint8_t *)c->x + begin;
            for (int64_t i = 0; i < n; i++) y[i] = (float)x[i];
            return;
        }
        default: break;
        }
    } else if (c->from == RLX_I32 && c->to == RLX_I64) {
        const int32_t *x = (const int32_t *)c->x + begin;
        int64_t *y = (int64_t *)c->out + begin;
        for (int64_t i = 0; i < n; i++) y[i] = x[i];
        return;
    } else if (c->from == RLX_I64 && c->to == RLX_I32) {
        const int64_t *x = (const int64_t *)c->x + begin;
        int32_t *y = (int32_t *)c->out + begin;
        for (int64_t i = 0; i < n; i++) y[i] = (int32_t)(uint32_t)(uint64_t)x[i];
        return;
    }
    for (int64_t i = begin; i < end; i++) cast_generic(c, i);
}

rlx_status cpu_cast(const cpu_kernel_ctx *k)
{
    rlx_dtype from = k->in[0].dtype, to = k->out.dtype;
    if (k->n_in != 1 || k->in[0].numel != k->out.numel)
        return rlx_fail(RLX_STATUS_INTERNAL, "cast '%s': input and output sizes differ", node_name(k));
    if ((unsigned)from >= RLX_DTYPE_COUNT || (unsigned)to >= RLX_DTYPE_COUNT)
        return rlx_fail(RLX_STATUS_UNSUPPORTED, "cast '%s': unknown dtype %d -> %d", node_name(k), (int)from, (int)to);
    if (k->out.numel <= 0) return RLX_OK;
    /* bool stores normalize: a bool buffer holding 2 still reads as true. */
    if (from == to && from != RLX_BOOL) {
        if (k->out.data != k->in[0].data)
            memcpy(k->out.data, k->in[0].data, (size_t)k->out.numel * rlx_dtype_size(to));
        return RLX_OK;
    }
    cast_ctx c = {from, to, k->in[0].data, k->out.data};
    rlx_parallel_for(k->pool, k->out.numel, EW_GRAIN, cast_range, &c);
    return RLX_OK;
}
