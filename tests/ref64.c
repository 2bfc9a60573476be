/*
 * ref64.c — float64 reference semantics of every rlx op (see ref64.h). Written
 * for clarity, not speed: each op is a direct loop over multi-indices.
 */
#include "ref64.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

ref_shape ref_shape_make(int rank, const int64_t *dims) {
    ref_shape s;
    memset(&s, 0, sizeof s);
    s.rank = rank;
    for (int i = 0; i < rank; i++) s.d[i] = dims[i];
    return s;
}

int64_t ref_numel(const ref_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= s->d[i];
    return n;
}

bool ref_shape_eq(const ref_shape *a, const ref_shape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++) if (a->d[i] != b->d[i]) return false;
    return true;
}

bool ref_broadcast(const ref_shape *a, const ref_shape *b, ref_shape *out) {
    ref_shape o;
    memset(&o, 0, sizeof o);
    o.rank = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < o.rank; i++) {
        int ia = a->rank - o.rank + i, ib = b->rank - o.rank + i;
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1) return false;
        o.d[i] = da == 1 ? db : da;
    }
    *out = o;
    return true;
}

void ref_unravel(const ref_shape *s, int64_t i, int64_t *idx) {
    for (int d = s->rank - 1; d >= 0; d--) {
        idx[d] = s->d[d] ? i % s->d[d] : 0;
        i = s->d[d] ? i / s->d[d] : 0;
    }
}

int64_t ref_bcast_offset(const ref_shape *in, const ref_shape *out, const int64_t *idx) {
    int64_t off = 0;
    for (int i = 0; i < in->rank; i++) {
        int oi = out->rank - in->rank + i;
        int64_t v = in->d[i] == 1 ? 0 : idx[oi];
        off = off * in->d[i] + v;
    }
    return off;
}

/* ------------------------------------------------------------ elementwise */

double ref_binop_apply(ref_binop op, double a, double b) {
    switch (op) {
    case REF_ADD: return a + b;
    case REF_SUB: return a - b;
    case REF_MUL: return a * b;
    case REF_DIV: return a / b;
    case REF_MAX: return (isnan(a) || isnan(b)) ? NAN : (a > b ? a : b);
    case REF_MIN: return (isnan(a) || isnan(b)) ? NAN : (a < b ? a : b);
    case REF_POW: return pow(a, b);
    case REF_IDIV: return b == 0 ? 0 : trunc(a / b);
    }
    return NAN;
}

static double gelu_tanh64(double x) {
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

double ref_unop_apply(ref_unop op, double x) {
    switch (op) {
    case REF_RELU:      return x > 0 ? x : 0;
    case REF_SIGMOID:   return 1.0 / (1.0 + exp(-x));
    case REF_TANH:      return tanh(x);
    case REF_EXP:       return exp(x);
    case REF_LOG:       return log(x);
    case REF_SQRT:      return sqrt(x);
    case REF_RSQRT:     return 1.0 / sqrt(x);
    case REF_NEG:       return -x;
    case REF_ABS:       return fabs(x);
    case REF_GELU:      return x * 0.5 * (1.0 + erf(x / sqrt(2.0)));
    case REF_GELU_TANH: return gelu_tanh64(x);
    case REF_SILU:      return x / (1.0 + exp(-x));
    case REF_ROUND:     return nearbyint(x);   /* default rounding mode: half to even */
    case REF_SIN:       return sin(x);
    case REF_COS:       return cos(x);
    case REF_TAN:       return tan(x);
    case REF_ATAN:      return atan(x);
    case REF_ERF:       return erf(x);
    }
    return NAN;
}

double ref_act_apply(rlx_activation act, double x) {
    switch (act) {
    case RLX_ACT_NONE:      return x;
    case RLX_ACT_RELU:      return ref_unop_apply(REF_RELU, x);
    case RLX_ACT_GELU:      return ref_unop_apply(REF_GELU, x);
    case RLX_ACT_GELU_TANH: return ref_unop_apply(REF_GELU_TANH, x);
    case RLX_ACT_SILU:      return ref_unop_apply(REF_SILU, x);
    case RLX_ACT_SIGMOID:   return ref_unop_apply(REF_SIGMOID, x);
    case RLX_ACT_TANH:      return ref_unop_apply(REF_TANH, x);
    }
    return NAN;
}

void ref_binary(ref_binop op, const double *a, ref_shape sa, const double *b, ref_shape sb, double *out) {
    ref_shape so;
    if (!ref_broadcast(&sa, &sb, &so)) return;
    int64_t n = ref_numel(&so), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&so, i, idx);
        out[i] = ref_binop_apply(op, a[ref_bcast_offset(&sa, &so, idx)], b[ref_bcast_offset(&sb, &so, idx)]);
    }
}

void ref_unary(ref_unop op, const double *x, int64_t n, double *out) {
    for (int64_t i = 0; i < n; i++) out[i] = ref_unop_apply(op, x[i]);
}

void ref_compare(ref_cmpop op, const double *a, ref_shape sa, const double *b, ref_shape sb, uint8_t *out) {
    ref_shape so;
    if (!ref_broadcast(&sa, &sb, &so)) return;
    int64_t n = ref_numel(&so), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&so, i, idx);
        double x = a[ref_bcast_offset(&sa, &so, idx)], y = b[ref_bcast_offset(&sb, &so, idx)];
        bool r = false;
        switch (op) {
        case REF_EQ: r = x == y; break;
        case REF_NE: r = x != y; break;
        case REF_LT: r = x < y; break;
        case REF_LE: r = x <= y; break;
        case REF_GT: r = x > y; break;
        case REF_GE: r = x >= y; break;
        }
        out[i] = r;
    }
}

void ref_where(const uint8_t *c, ref_shape sc, const double *a, ref_shape sa, const double *b, ref_shape sb,
               double *out) {
    ref_shape t, so;
    if (!ref_broadcast(&sc, &sa, &t) || !ref_broadcast(&t, &sb, &so)) return;
    int64_t n = ref_numel(&so), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&so, i, idx);
        out[i] = c[ref_bcast_offset(&sc, &so, idx)] ? a[ref_bcast_offset(&sa, &so, idx)]
                                                     : b[ref_bcast_offset(&sb, &so, idx)];
    }
}

void ref_fma(const double *a, ref_shape sa, const double *b, ref_shape sb, const double *c, ref_shape sc,
             double *out) {
    ref_shape t, so;
    if (!ref_broadcast(&sa, &sb, &t) || !ref_broadcast(&t, &sc, &so)) return;
    int64_t n = ref_numel(&so), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&so, i, idx);
        out[i] = a[ref_bcast_offset(&sa, &so, idx)] * b[ref_bcast_offset(&sb, &so, idx)]
               + c[ref_bcast_offset(&sc, &so, idx)];
    }
}

void ref_clamp(const double *x, int64_t n, double lo, double hi, double *out) {
    for (int64_t i = 0; i < n; i++) {
        double v = x[i] < lo ? lo : x[i];
        out[i] = v > hi ? hi : v;
    }
}

/* ------------------------------------------------------------ dtype conversion */

/* Rounds x to a binary float with `mant` explicit mantissa bits and exponent
 * range [emin, emax] (normal), nearest even, with subnormals and overflow to inf. */
static double round_to_format(double x, int mant, int emin, int emax) {
    if (isnan(x) || isinf(x) || x == 0) return x;
    int e;
    frexp(fabs(x), &e);               /* |x| = m * 2^e, m in [0.5, 1) */
    int exp_unbiased = e - 1;         /* |x| = 1.f * 2^exp_unbiased    */
    if (exp_unbiased < emin) exp_unbiased = emin;  /* subnormal spacing */
    double quantum = ldexp(1.0, exp_unbiased - mant);
    double r = nearbyint(x / quantum) * quantum;
    double maxv = ldexp(2.0 - ldexp(1.0, -mant), emax);
    if (fabs(r) > maxv) return x > 0 ? INFINITY : -INFINITY;
    return r;
}

uint16_t ref_f64_to_f16_bits(double x) {
    if (isnan(x)) return 0x7e00;
    double r = round_to_format((float)x, 10, -14, 15);
    uint16_t sign = signbit(r) ? 0x8000 : 0;
    double a = fabs(r);
    if (isinf(a)) return sign | 0x7c00;
    if (a == 0) return sign;
    if (a < ldexp(1.0, -14)) return sign | (uint16_t)nearbyint(a / ldexp(1.0, -24));
    int e;
    double m = frexp(a, &e);          /* a = m 2^e, m in [0.5,1) */
    int exp_field = e - 1 + 15;
    uint16_t frac = (uint16_t)nearbyint((m * 2.0 - 1.0) * 1024.0);
    return sign | (uint16_t)(exp_field << 10) | frac;
}

double ref_f16_bits_to_f64(uint16_t h) {
    int sign = h >> 15, e = (h >> 10) & 31, f = h & 1023;
    double v;
    if (e == 0) v = ldexp(f, -24);
    else if (e == 31) v = f ? NAN : INFINITY;
    else v = ldexp(1024 + f, e - 25);
    return sign ? -v : v;
}

uint16_t ref_f64_to_bf16_bits(double x) {
    if (isnan(x)) return 0x7fc0;
    float f = (float)round_to_format((float)x, 7, -126, 127);
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16);
}

double ref_bf16_bits_to_f64(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void ref_store(void *data, rlx_dtype dt, int64_t i, double v) {
    switch (dt) {
    case RLX_F32:  ((float *)data)[i] = (float)v; break;
    case RLX_F64:  ((double *)data)[i] = v; break;
    case RLX_F16:  ((uint16_t *)data)[i] = ref_f64_to_f16_bits(v); break;
    case RLX_BF16: ((uint16_t *)data)[i] = ref_f64_to_bf16_bits(v); break;
    case RLX_I32:  ((int32_t *)data)[i] = (int32_t)trunc(v); break;
    case RLX_I64:  ((int64_t *)data)[i] = (int64_t)trunc(v); break;
    case RLX_U8:   ((uint8_t *)data)[i] = (uint8_t)trunc(v); break;
    case RLX_I8:   ((int8_t *)data)[i] = (int8_t)trunc(v); break;
    case RLX_BOOL: ((uint8_t *)data)[i] = v != 0; break;
    default: break;
    }
}

double ref_load(const void *data, rlx_dtype dt, int64_t i) {
    switch (dt) {
    case RLX_F32:  return ((const float *)data)[i];
    case RLX_F64:  return ((const double *)data)[i];
    case RLX_F16:  return ref_f16_bits_to_f64(((const uint16_t *)data)[i]);
    case RLX_BF16: return ref_bf16_bits_to_f64(((const uint16_t *)data)[i]);
    case RLX_I32:  return ((const int32_t *)data)[i];
    case RLX_I64:  return (double)((const int64_t *)data)[i];
    case RLX_U8:   return ((const uint8_t *)data)[i];
    case RLX_I8:   return ((const int8_t *)data)[i];
    case RLX_BOOL: return ((const uint8_t *)data)[i] != 0;
    default: return NAN;
    }
}

/* ------------------------------------------------------------ matmul */

bool ref_matmul(const double *a, ref_shape sa, const double *b, ref_shape sb, int transpose_b,
                const double *bias, rlx_activation act, double *out, ref_shape *so_out) {
    return ref_matmul_ex(a, sa, b, sb, transpose_b ? REF_MM_TB : 0, bias, act, out, so_out);
}

bool ref_matmul_ex(const double *a, ref_shape sa, const double *b, ref_shape sb, unsigned flags,
                   const double *bias, rlx_activation act, double *out, ref_shape *so_out) {
    if (sa.rank < 2 || sb.rank < 2) return false;
    int ta = (flags & REF_MM_TA) != 0, transpose_b = (flags & REF_MM_TB) != 0;
    int64_t M = sa.d[sa.rank - (ta ? 1 : 2)], K = sa.d[sa.rank - (ta ? 2 : 1)];
    int64_t N = transpose_b ? sb.d[sb.rank - 2] : sb.d[sb.rank - 1];
    int64_t Kb = transpose_b ? sb.d[sb.rank - 1] : sb.d[sb.rank - 2];
    if (K != Kb) return false;
    ref_shape ba = ref_shape_make(sa.rank - 2, sa.d), bb = ref_shape_make(sb.rank - 2, sb.d), bo;
    if (!ref_broadcast(&ba, &bb, &bo)) return false;
    ref_shape so = bo;
    so.rank = bo.rank + 2;
    so.d[bo.rank] = M;
    so.d[bo.rank + 1] = N;
    int64_t nb = ref_numel(&bo), idx[RLX_MAX_RANK];
    for (int64_t bi = 0; bi < nb; bi++) {
        ref_unravel(&bo, bi, idx);
        const double *pa = a + ref_bcast_offset(&ba, &bo, idx) * M * K;
        const double *pb = b + ref_bcast_offset(&bb, &bo, idx) * K * N;
        double *po = out + bi * M * N;
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                double s = 0;
                for (int64_t k = 0; k < K; k++)
                    s += (ta ? pa[k * M + m] : pa[m * K + k]) * (transpose_b ? pb[n * K + k] : pb[k * N + n]);
                if (bias) s += bias[n];
                po[m * N + n] = ref_act_apply(act, s);
            }
    }
    if (so_out) *so_out = so;
    return true;
}

/* ------------------------------------------------------------ reductions */

static uint32_t full_mask(int rank, uint32_t mask) {
    return mask ? mask : (rank >= 32 ? 0xffffffffu : ((1u << rank) - 1u));
}

ref_shape ref_reduce_shape(ref_shape sx, uint32_t mask, int keepdim) {
    mask = full_mask(sx.rank, mask);
    ref_shape so;
    memset(&so, 0, sizeof so);
    for (int i = 0; i < sx.rank; i++) {
        if (mask & (1u << i)) {
            if (keepdim) so.d[so.rank++] = 1;
        } else {
            so.d[so.rank++] = sx.d[i];
        }
    }
    return so;
}

void ref_reduce(ref_redop op, const double *x, ref_shape sx, uint32_t mask, double *out) {
    mask = full_mask(sx.rank, mask);
    ref_shape sk = ref_reduce_shape(sx, mask, 1);   /* keepdim layout = same order */
    int64_t no = ref_numel(&sk), nx = ref_numel(&sx), idx[RLX_MAX_RANK];
    int64_t count = nx / (no ? no : 1);
    for (int64_t i = 0; i < no; i++) {
        switch (op) {
        case REF_RSUM: case REF_RMEAN: out[i] = 0; break;
        case REF_RPROD: out[i] = 1; break;
        case REF_RMAX: out[i] = -INFINITY; break;
        case REF_RMIN: out[i] = INFINITY; break;
        }
    }
    for (int64_t i = 0; i < nx; i++) {
        ref_unravel(&sx, i, idx);
        int64_t o = ref_bcast_offset(&sk, &sx, idx);
        double v = x[i];
        switch (op) {
        case REF_RSUM: case REF_RMEAN: out[o] += v; break;
        case REF_RPROD: out[o] *= v; break;
        case REF_RMAX: if (v > out[o] || isnan(v)) out[o] = v; break;
        case REF_RMIN: if (v < out[o] || isnan(v)) out[o] = v; break;
        }
    }
    if (op == REF_RMEAN)
        for (int64_t i = 0; i < no; i++) out[i] /= (double)count;
}

void ref_argreduce(int is_max, const double *x, ref_shape sx, int axis, int32_t *out) {
    int64_t outer = 1, inner = 1, n = sx.d[axis];
    for (int i = 0; i < axis; i++) outer *= sx.d[i];
    for (int i = axis + 1; i < sx.rank; i++) inner *= sx.d[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const double *p = x + o * n * inner + in;
            int64_t best = 0;
            for (int64_t j = 1; j < n; j++) {
                double v = p[j * inner], bv = p[best * inner];
                if (is_max ? v > bv : v < bv) best = j;
            }
            out[o * inner + in] = (int32_t)best;
        }
}

void ref_softmax(const double *x, ref_shape sx, int axis, int log_form, double *out) {
    int64_t outer = 1, inner = 1, n = sx.d[axis];
    for (int i = 0; i < axis; i++) outer *= sx.d[i];
    for (int i = axis + 1; i < sx.rank; i++) inner *= sx.d[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            const double *p = x + o * n * inner + in;
            double *q = out + o * n * inner + in;
            double m = -INFINITY, s = 0;
            for (int64_t j = 0; j < n; j++) if (p[j * inner] > m) m = p[j * inner];
            for (int64_t j = 0; j < n; j++) s += exp(p[j * inner] - m);
            for (int64_t j = 0; j < n; j++)
                q[j * inner] = log_form ? p[j * inner] - m - log(s) : exp(p[j * inner] - m) / s;
        }
}

void ref_norm(int rms, const double *x, ref_shape sx, const double *gamma, const double *beta, double eps,
              double *out) {
    int64_t D = sx.rank ? sx.d[sx.rank - 1] : 1, rows = ref_numel(&sx) / (D ? D : 1);
    for (int64_t r = 0; r < rows; r++) {
        const double *p = x + r * D;
        double *q = out + r * D;
        double mean = 0, var = 0;
        if (!rms) {
            for (int64_t i = 0; i < D; i++) mean += p[i];
            mean /= (double)D;
        }
        for (int64_t i = 0; i < D; i++) var += (p[i] - mean) * (p[i] - mean);
        var /= (double)D;
        double inv = 1.0 / sqrt(var + eps);
        for (int64_t i = 0; i < D; i++)
            q[i] = (p[i] - mean) * inv * gamma[i] + (beta ? beta[i] : 0.0);
    }
}

/* ------------------------------------------------------------ movement */

ref_shape ref_transpose(const double *x, ref_shape sx, const int *perm, double *out) {
    ref_shape so = sx;
    for (int i = 0; i < sx.rank; i++) so.d[i] = sx.d[perm[i]];
    int64_t n = ref_numel(&so), idx[RLX_MAX_RANK], src[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&so, i, idx);
        for (int d = 0; d < sx.rank; d++) src[perm[d]] = idx[d];
        int64_t off = 0;
        for (int d = 0; d < sx.rank; d++) off = off * sx.d[d] + src[d];
        out[i] = x[off];
    }
    return so;
}

ref_shape ref_slice(const double *x, ref_shape sx, int axis, int64_t start, int64_t end, int64_t step,
                    double *out) {
    ref_shape so = sx;
    so.d[axis] = end > start ? (end - start + step - 1) / step : 0;
    int64_t n = ref_numel(&so), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&so, i, idx);
        idx[axis] = start + idx[axis] * step;
        int64_t off = 0;
        for (int d = 0; d < sx.rank; d++) off = off * sx.d[d] + idx[d];
        out[i] = x[off];
    }
    return so;
}

ref_shape ref_concat(const double *const *xs, const ref_shape *ss, int n, int axis, double *out) {
    ref_shape so = ss[0];
    so.d[axis] = 0;
    for (int i = 0; i < n; i++) so.d[axis] += ss[i].d[axis];
    int64_t total = ref_numel(&so), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < total; i++) {
        ref_unravel(&so, i, idx);
        int64_t a = idx[axis];
        int t = 0;
        while (a >= ss[t].d[axis]) { a -= ss[t].d[axis]; t++; }
        idx[axis] = a;
        int64_t off = 0;
        for (int d = 0; d < so.rank; d++) off = off * ss[t].d[d] + idx[d];
        out[i] = xs[t][off];
    }
    return so;
}

void ref_expand(const double *x, ref_shape sx, ref_shape so, double *out) {
    int64_t n = ref_numel(&so), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&so, i, idx);
        out[i] = x[ref_bcast_offset(&sx, &so, idx)];
    }
}

void ref_gather_rows(const double *table, ref_shape st, const int64_t *ids, int64_t n_ids, double *out) {
    int64_t row = ref_numel(&st) / st.d[0];
    for (int64_t i = 0; i < n_ids; i++)
        memcpy(out + i * row, table + ids[i] * row, (size_t)row * sizeof(double));
}

void ref_gather(const double *x, ref_shape sx, const int64_t *index, ref_shape si, int axis, double *out) {
    int64_t n = ref_numel(&si), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&si, i, idx);
        idx[axis] = index[i];
        int64_t off = 0;
        for (int d = 0; d < sx.rank; d++) off = off * sx.d[d] + idx[d];
        out[i] = x[off];
    }
}

void ref_cumsum(const double *x, ref_shape sx, int axis, double *out) {
    int64_t outer = 1, inner = 1, n = sx.d[axis];
    for (int i = 0; i < axis; i++) outer *= sx.d[i];
    for (int i = axis + 1; i < sx.rank; i++) inner *= sx.d[i];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t in = 0; in < inner; in++) {
            double s = 0;
            for (int64_t j = 0; j < n; j++) {
                int64_t off = (o * n + j) * inner + in;
                s += x[off];
                out[off] = s;
            }
        }
}

void ref_scatter_add_rows(const double *base, ref_shape sb, const int64_t *ids, int64_t n_ids, const double *rows,
                          double *out) {
    int64_t row = sb.d[0] ? ref_numel(&sb) / sb.d[0] : 0;
    memcpy(out, base, sizeof(double) * (size_t)ref_numel(&sb));
    for (int64_t i = 0; i < n_ids; i++)
        for (int64_t j = 0; j < row; j++) out[ids[i] * row + j] += rows[i * row + j];
}

void ref_scatter_add(const double *base, ref_shape sb, const int64_t *index, ref_shape si, const double *src, int axis,
                     double *out) {
    memcpy(out, base, sizeof(double) * (size_t)ref_numel(&sb));
    int64_t n = ref_numel(&si), idx[RLX_MAX_RANK];
    for (int64_t i = 0; i < n; i++) {
        ref_unravel(&si, i, idx);
        idx[axis] = index[i];
        int64_t off = 0;
        for (int d = 0; d < sb.rank; d++) off = off * sb.d[d] + idx[d];
        out[off] += src[i];
    }
}

/* Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2. */
double ref_gelu_grad(double x, double dy) {
    return dy * (0.5 * (1 + erf(x / sqrt(2.0))) + x * exp(-x * x / 2) / sqrt(2 * M_PI));
}

/* 0.5 (1 + t) + 0.5 x (1 - t^2) u', t = tanh(u), u = sqrt(2/pi) (x + 0.044715 x^3) */
double ref_gelu_tanh_grad(double x, double dy) {
    double c = sqrt(2 / M_PI), u = c * (x + 0.044715 * x * x * x), t = tanh(u);
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x));
}

void ref_topk(const double *x, ref_shape sx, int k, double *values, int32_t *indices) {
    int64_t n = sx.rank ? sx.d[sx.rank - 1] : 1, rows = ref_numel(&sx) / (n ? n : 1);
    uint8_t *taken = calloc((size_t)n, 1);
    for (int64_t r = 0; r < rows; r++) {
        const double *p = x + r * n;
        memset(taken, 0, (size_t)n);
        for (int j = 0; j < k; j++) {
            int64_t best = -1;
            for (int64_t i = 0; i < n; i++)
                if (!taken[i] && (best < 0 || p[i] > p[best])) best = i;  /* strict: lower index wins ties */
            taken[best] = 1;
            values[r * k + j] = p[best];
            indices[r * k + j] = (int32_t)best;
        }
    }
    free(taken);
}

/* ------------------------------------------------------------ nn */

void ref_attention(const double *q, const double *k, const double *v, int64_t B, int64_t H, int64_t Hkv,
                   int64_t Sq, int64_t Skv, int64_t D, rlx_mask mask_kind, const double *mask,
                   ref_shape smask, double scale, double *out) {
    if (scale <= 0) scale = 1.0 / sqrt((double)D);
    int64_t group = H / Hkv;
    double *s = malloc((size_t)(Skv ? Skv : 1) * sizeof(double));
    int64_t mdims[4] = {B, H, Sq, Skv};
    ref_shape sfull = ref_shape_make(4, mdims);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < H; h++) {
            int64_t hk = h / group;
            for (int64_t i = 0; i < Sq; i++) {
                const double *qi = q + ((b * H + h) * Sq + i) * D;
                double *oi = out + ((b * H + h) * Sq + i) * D;
                double m = -INFINITY;
                for (int64_t j = 0; j < Skv; j++) {
                    const double *kj = k + ((b * Hkv + hk) * Skv + j) * D;
                    double d = 0;
                    for (int64_t t = 0; t < D; t++) d += qi[t] * kj[t];
                    d *= scale;
                    if (mask_kind == RLX_MASK_CAUSAL && j > Skv - Sq + i) d = -INFINITY;
                    if (mask_kind == RLX_MASK_ADDITIVE && mask) {
                        int64_t idx[4] = {b, h, i, j};
                        d += mask[ref_bcast_offset(&smask, &sfull, idx)];
                    }
                    s[j] = d;
                    if (d > m) m = d;
                }
                for (int64_t t = 0; t < D; t++) oi[t] = 0;
                if (m == -INFINITY) continue;   /* fully masked row */
                double sum = 0;
                for (int64_t j = 0; j < Skv; j++) { s[j] = exp(s[j] - m); sum += s[j]; }
                for (int64_t j = 0; j < Skv; j++) {
                    const double *vj = v + ((b * Hkv + hk) * Skv + j) * D;
                    for (int64_t t = 0; t < D; t++) oi[t] += s[j] / sum * vj[t];
                }
            }
        }
    free(s);
}

void ref_rope(const double *x, int64_t B, int64_t H, int64_t S, int64_t D, int64_t offset,
              rlx_rope_style style, double theta, int rotary_dims, double *out) {
    ref_rope_ff(x, B, H, S, D, offset, style, theta, rotary_dims, NULL, out);
}

void ref_rope_ff(const double *x, int64_t B, int64_t H, int64_t S, int64_t D, int64_t offset,
                 rlx_rope_style style, double theta, int rotary_dims, const double *freq_factors, double *out) {
    int64_t rd = rotary_dims ? rotary_dims : D, half = rd / 2;
    for (int64_t bh = 0; bh < B * H; bh++)
        for (int64_t s = 0; s < S; s++) {
            const double *p = x + (bh * S + s) * D;
            double *q = out + (bh * S + s) * D;
            double pos = (double)(offset + s);
            for (int64_t i = rd; i < D; i++) q[i] = p[i];
            for (int64_t i = 0; i < half; i++) {
                double ang = pos * pow(theta, -2.0 * (double)i / (double)rd);
                if (freq_factors) ang /= freq_factors[i];
                double c = cos(ang), sn = sin(ang);
                int64_t i0 = style == RLX_ROPE_NEOX ? i : 2 * i;
                int64_t i1 = style == RLX_ROPE_NEOX ? i + half : 2 * i + 1;
                q[i0] = p[i0] * c - p[i1] * sn;
                q[i1] = p[i1] * c + p[i0] * sn;
            }
        }
}

void ref_split_heads(const double *x, int64_t S, int64_t H, int64_t D, double *out) {
    for (int64_t s = 0; s < S; s++)
        for (int64_t h = 0; h < H; h++)
            memcpy(out + (h * S + s) * D, x + (s * H + h) * D, (size_t)D * sizeof(double));
}

void ref_merge_heads(const double *x, int64_t S, int64_t H, int64_t D, double *out) {
    for (int64_t s = 0; s < S; s++)
        for (int64_t h = 0; h < H; h++)
            memcpy(out + (s * H + h) * D, x + (h * S + s) * D, (size_t)D * sizeof(double));
}

void ref_dense(const double *x, int64_t rows, int64_t in, const double *W, int64_t out, const double *bias,
               double *y) {
    ref_matmul(x, ref_shape_make(2, (int64_t[]){rows, in}), W, ref_shape_make(2, (int64_t[]){out, in}), 1, bias,
               RLX_ACT_NONE, y, NULL);
}

void ref_swiglu(const double *gate, const double *up, int64_t n, double *out) {
    for (int64_t i = 0; i < n; i++) out[i] = ref_unop_apply(REF_SILU, gate[i]) * up[i];
}

static double logsumexp_row(const double *p, int64_t C) {
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < C; c++) if (p[c] > m) m = p[c];
    for (int64_t c = 0; c < C; c++) s += exp(p[c] - m);
    return m + log(s);
}

double ref_ce_loss(const double *logits, int64_t N, int64_t C, const int32_t *labels) {
    double total = 0;
    for (int64_t n = 0; n < N; n++)
        total += logsumexp_row(logits + n * C, C) - logits[n * C + labels[n]];
    return total / (double)N;
}

void ref_ce_grad(const double *logits, int64_t N, int64_t C, const int32_t *labels, double *grad) {
    for (int64_t n = 0; n < N; n++) {
        double lse = logsumexp_row(logits + n * C, C);
        for (int64_t c = 0; c < C; c++)
            grad[n * C + c] = (exp(logits[n * C + c] - lse) - (c == labels[n] ? 1.0 : 0.0)) / (double)N;
    }
}

/* ------------------------------------------------------------ convolution */

void ref_conv(const double *x, ref_shape xs, const double *w, ref_shape ws, const double *b, const ref_conv_params *p,
              double *y, ref_shape *ys) {
    int dims = xs.rank - 2, off = 3 - dims;
    int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, o[3] = {1, 1, 1}, st[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
    *ys = xs;
    ys->d[1] = ws.d[0];
    for (int i = 0; i < dims; i++) {
        in[off + i] = xs.d[2 + i], k[off + i] = ws.d[2 + i], st[off + i] = p->stride[i], dl[off + i] = p->dilation[i];
        pb[off + i] = p->pad_begin[i];
        o[off + i] = (xs.d[2 + i] + p->pad_begin[i] + p->pad_end[i] - p->dilation[i] * (ws.d[2 + i] - 1) - 1) / p->stride[i] + 1;
        ys->d[2 + i] = o[off + i];
    }
    int64_t N = xs.d[0], C = xs.d[1], O = ws.d[0], Cg = C / p->groups, Og = O / p->groups;
    int64_t iv = in[0] * in[1] * in[2], kv = k[0] * k[1] * k[2], ov = o[0] * o[1] * o[2];
    for (int64_t n = 0; n < N; n++)
        for (int64_t oc = 0; oc < O; oc++)
            for (int64_t j = 0; j < ov; j++) {
                int64_t a[3] = {j / (o[1] * o[2]), j / o[2] % o[1], j % o[2]}, g = oc / Og;
                double acc = b ? b[oc] : 0;
                for (int64_t ci = 0; ci < Cg; ci++)
                    for (int64_t q = 0; q < kv; q++) {
                        int64_t qq[3] = {q / (k[1] * k[2]), q / k[2] % k[1], q % k[2]}, idx = 0;
                        bool ok = true;
                        for (int d = 0; d < 3 && ok; d++) {
                            int64_t i = a[d] * st[d] - pb[d] + qq[d] * dl[d];
                            ok = i >= 0 && i < in[d];
                            idx = idx * in[d] + i;
                        }
                        if (ok) acc += x[(n * C + g * Cg + ci) * iv + idx] * w[(oc * Cg + ci) * kv + q];
                    }
                y[(n * O + oc) * ov + j] = ref_act_apply((rlx_activation)p->act, acc);
            }
}

/* ---------------------------------------------------------------- pooling */

void ref_pool(const double *x, ref_shape xs, const ref_pool_params *p, double *y, ref_shape *ys) {
    int dims = xs.rank - 2, off = 3 - dims;
    int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, o[3] = {1, 1, 1}, st[3] = {1, 1, 1}, pb[3] = {0, 0, 0}, pe[3] = {0, 0, 0};
    *ys = xs;
    for (int i = 0; i < dims; i++) {
        in[off + i] = xs.d[2 + i], k[off + i] = p->kernel[i], st[off + i] = p->stride[i];
        pb[off + i] = p->pad_begin[i], pe[off + i] = p->pad_end[i];
        int64_t room = xs.d[2 + i] + p->pad_begin[i] + p->pad_end[i] - p->kernel[i];
        int64_t n = (p->ceil_mode ? (room + p->stride[i] - 1) / p->stride[i] : room / p->stride[i]) + 1;
        if (p->ceil_mode && (n - 1) * p->stride[i] >= xs.d[2 + i] + p->pad_begin[i]) n--;
        o[off + i] = ys->d[2 + i] = n;
    }
    int64_t iv = in[0] * in[1] * in[2], ov = o[0] * o[1] * o[2];
    for (int64_t pl = 0; pl < xs.d[0] * xs.d[1]; pl++)
        for (int64_t j = 0; j < ov; j++) {
            int64_t a[3] = {j / (o[1] * o[2]), j / o[2] % o[1], j % o[2]}, lo[3], hi[3], area = 1;
            for (int d = 0; d < 3; d++) {
                int64_t s = a[d] * st[d] - pb[d], e = s + k[d] < in[d] + pe[d] ? s + k[d] : in[d] + pe[d];
                area *= e - s;
                lo[d] = s < 0 ? 0 : s, hi[d] = e > in[d] ? in[d] : e;
            }
            double acc = 0, mx = -INFINITY;
            int64_t cnt = 0;
            for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
                for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
                    for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
                        double v = x[pl * iv + (i0 * in[1] + i1) * in[2] + i2];
                        acc += v, mx = v > mx ? v : mx, cnt++;
                    }
            y[pl * ov + j] = p->average ? acc / (double)(p->count_include_pad ? area : cnt) : mx;
        }
}

/* ----------------------------------------------------------------- resize */

/* One axis in float64, straight from the ONNX spec's formulas (the coordinate
 * as written, not rlx's affine form), taps clamped to the edge. */
static int ref_resize_taps(const ref_resize_params *p, int ax, int64_t in, int64_t out, int64_t o, int64_t *idx,
                           double *w, bool *ambiguous) {
    double s = p->scale[ax], x;
    switch (p->coord) {
    case 0: x = (o + 0.5) / s - 0.5; break;
    case 1: {
        double adj = (double)out / (s * (double)in), center = (double)in / 2, offset = center * (1 - adj);
        x = offset + (o + 0.5) / s - 0.5;
        break;
    }
    case 2: x = out > 1 ? (o + 0.5) / s - 0.5 : 0; break;
    case 3: x = out == 1 ? 0 : o * (double)(in - 1) / (double)(out - 1); break;
    default: x = o / s; break;
    }
    double f = floor(x), t = x - f;
    if (p->mode == 0) {
        double boundary = p->nearest <= 1 ? 0.5 : 0;
        double dist = fabs(t - boundary);
        if (boundary == 0 && 1 - t < dist) dist = 1 - t;
        double lg = log2(s);
        if (dist < 1e-4 && lg != floor(lg) && !(p->coord == 3)) *ambiguous = true;   /* f32 and f64 may round apart */
        int64_t k = (int64_t)f;
        switch (p->nearest) {
        case 0: k += t > 0.5; break;
        case 1: k += t >= 0.5; break;
        case 2: break;
        default: k += t > 0; break;
        }
        idx[0] = k < 0 ? 0 : k >= in ? in - 1 : k, w[0] = 1;
        return 1;
    }
    int n = p->mode == 1 ? 2 : 4;
    int64_t first = p->mode == 1 ? (int64_t)f : (int64_t)f - 1;
    double sum = 0;
    for (int k = 0; k < n; k++) {
        int64_t j = first + k;
        double d = fabs(x - (double)j), A = p->cubic_a;
        if (p->mode == 1) w[k] = 1 - d;
        else w[k] = d <= 1 ? ((A + 2) * d - (A + 3)) * d * d + 1 : ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
        if (p->mode == 2 && p->exclude_outside && (j < 0 || j >= in)) w[k] = 0;
        sum += w[k];
        idx[k] = j < 0 ? 0 : j >= in ? in - 1 : j;
    }
    if (p->mode == 2 && p->exclude_outside)
        for (int k = 0; k < n; k++) w[k] /= sum;
    return n;
}

bool ref_resize(const double *x, ref_shape xs, const ref_resize_params *p, double *y) {
    int dims = xs.rank - 2, off = 3 - dims;
    int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1};
    for (int i = 0; i < dims; i++) in[off + i] = xs.d[2 + i], o[off + i] = p->out[i];
    ref_resize_params q = *p;
    for (int i = 0; i < 3; i++) q.scale[i] = i >= off ? p->scale[i - off] : 1;
    bool ambiguous = false;
    int64_t iv = in[0] * in[1] * in[2], ov = o[0] * o[1] * o[2];
    for (int64_t pl = 0; pl < xs.d[0] * xs.d[1]; pl++)
        for (int64_t j = 0; j < ov; j++) {
            int64_t a[3] = {j / (o[1] * o[2]), j / o[2] % o[1], j % o[2]}, idx[3][4];
            double w[3][4];
            int n[3];
            for (int d = 0; d < 3; d++) {
                if (d < off) { n[d] = 1, idx[d][0] = 0, w[d][0] = 1; continue; }
                n[d] = ref_resize_taps(&q, d, in[d], o[d], a[d], idx[d], w[d], &ambiguous);
            }
            double acc = 0;
            for (int k0 = 0; k0 < n[0]; k0++)
                for (int k1 = 0; k1 < n[1]; k1++)
                    for (int k2 = 0; k2 < n[2]; k2++)
                        acc += w[0][k0] * w[1][k1] * w[2][k2] * x[pl * iv + (idx[0][k0] * in[1] + idx[1][k1]) * in[2] + idx[2][k2]];
            y[pl * ov + j] = acc;
        }
    return !ambiguous;
}

/* --------------------------------------------------------- adaptive pool */

void ref_adaptive_pool(const double *x, ref_shape xs, bool average, const int64_t *out, double *y) {
    int dims = xs.rank - 2, off = 3 - dims;
    int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1};
    for (int i = 0; i < dims; i++) in[off + i] = xs.d[2 + i], o[off + i] = out[i];
    int64_t iv = in[0] * in[1] * in[2], ov = o[0] * o[1] * o[2];
    for (int64_t pl = 0; pl < xs.d[0] * xs.d[1]; pl++)
        for (int64_t j = 0; j < ov; j++) {
            int64_t a[3] = {j / (o[1] * o[2]), j / o[2] % o[1], j % o[2]}, lo[3], hi[3];
            for (int d = 0; d < 3; d++) {   /* [floor(a S / O), ceil((a + 1) S / O)) in real arithmetic */
                lo[d] = (int64_t)floor((double)a[d] * in[d] / o[d]);
                hi[d] = (int64_t)ceil((double)(a[d] + 1) * in[d] / o[d]);
            }
            double acc = 0, mx = -INFINITY;
            int64_t cnt = 0;
            for (int64_t i0 = lo[0]; i0 < hi[0]; i0++)
                for (int64_t i1 = lo[1]; i1 < hi[1]; i1++)
                    for (int64_t i2 = lo[2]; i2 < hi[2]; i2++) {
                        double v = x[pl * iv + (i0 * in[1] + i1) * in[2] + i2];
                        acc += v, mx = v > mx ? v : mx, cnt++;
                    }
            y[pl * ov + j] = average ? acc / (double)cnt : mx;
        }
}

/* ---- channel norms (NCHW): plane (n, c) is S contiguous elements */

static int64_t ref_positions(const ref_shape *xs) {
    int64_t S = 1;
    for (int i = 2; i < xs->rank; i++) S *= xs->d[i];
    return S;
}

void ref_batch_norm(const double *x, ref_shape xs, const double *gamma, const double *beta, const double *mean,
                    const double *var, double eps, double *y) {
    int64_t N = xs.d[0], C = xs.d[1], S = ref_positions(&xs);
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t s = 0; s < S; s++) {
                int64_t i = (n * C + c) * S + s;
                y[i] = (x[i] - mean[c]) / sqrt(var[c] + eps) * gamma[c] + (beta ? beta[c] : 0.0);
            }
}

void ref_group_norm(const double *x, ref_shape xs, int64_t groups, const double *gamma, const double *beta, double eps,
                    double *y) {
    int64_t N = xs.d[0], C = xs.d[1], S = ref_positions(&xs), cg = C / groups;
    for (int64_t n = 0; n < N; n++)
        for (int64_t g = 0; g < groups; g++) {
            double m = 0, v = 0;
            for (int64_t c = g * cg; c < (g + 1) * cg; c++)
                for (int64_t s = 0; s < S; s++) m += x[(n * C + c) * S + s];
            m /= (double)(cg * S);
            for (int64_t c = g * cg; c < (g + 1) * cg; c++)
                for (int64_t s = 0; s < S; s++) v += (x[(n * C + c) * S + s] - m) * (x[(n * C + c) * S + s] - m);
            v /= (double)(cg * S);
            for (int64_t c = g * cg; c < (g + 1) * cg; c++)
                for (int64_t s = 0; s < S; s++) {
                    int64_t i = (n * C + c) * S + s;
                    y[i] = (x[i] - m) / sqrt(v + eps) * gamma[c] + (beta ? beta[c] : 0.0);
                }
        }
}

void ref_layer_norm_channels(const double *x, ref_shape xs, const double *gamma, const double *beta, double eps, double *y) {
    int64_t N = xs.d[0], C = xs.d[1], S = ref_positions(&xs);
    for (int64_t n = 0; n < N; n++)
        for (int64_t s = 0; s < S; s++) {
            double m = 0, v = 0;
            for (int64_t c = 0; c < C; c++) m += x[(n * C + c) * S + s];
            m /= (double)C;
            for (int64_t c = 0; c < C; c++) v += (x[(n * C + c) * S + s] - m) * (x[(n * C + c) * S + s] - m);
            v /= (double)C;
            for (int64_t c = 0; c < C; c++) {
                int64_t i = (n * C + c) * S + s;
                y[i] = (x[i] - m) / sqrt(v + eps) * gamma[c] + (beta ? beta[c] : 0.0);
            }
        }
}
