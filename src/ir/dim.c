/*
 * dim.c — dims as affine forms in the graph's symbols (k + sum coef*sym), and
 * shapes built from them. Affine forms are what shape rules produce from
 * symbolic inputs: concat gives past+seq, reshape gives 12*seq.
 */
#include "ir/ir.h"
#include <stdio.h>
#include <string.h>

ir_dim ir_dim_const(int64_t v) { ir_dim d; memset(&d, 0, sizeof d); d.k = v; return d; }

ir_dim ir_dim_sym(int s) { ir_dim d = ir_dim_const(0); d.coef[s] = 1; return d; }

bool ir_dim_is_static(ir_dim d) {
    for (int i = 0; i < IR_MAX_SYMS; i++) if (d.coef[i]) return false;
    return true;
}

bool ir_dim_eq(ir_dim a, ir_dim b) {
    if (a.k != b.k) return false;
    for (int i = 0; i < IR_MAX_SYMS; i++) if (a.coef[i] != b.coef[i]) return false;
    return true;
}

bool ir_shape_eq(const ir_shape *a, const ir_shape *b) {
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (!ir_dim_eq(a->d[i], b->d[i])) return false;
    return true;
}

ir_dim ir_dim_add(ir_dim a, ir_dim b) {
    a.k += b.k;
    for (int i = 0; i < IR_MAX_SYMS; i++) a.coef[i] += b.coef[i];
    return a;
}

bool ir_dim_eval_checked(ir_dim d, const int64_t *sym_values, int64_t *out) {
    int64_t v = d.k, t;
    for (int i = 0; i < IR_MAX_SYMS; i++) {
        if (!d.coef[i]) continue;
        if (__builtin_mul_overflow(d.coef[i], sym_values ? sym_values[i] : 0, &t) || __builtin_add_overflow(v, t, &v))
            return false;
    }
    *out = v;
    return true;
}

bool ir_dim_scale_checked(ir_dim a, int64_t c, ir_dim *out) {
    if (__builtin_mul_overflow(a.k, c, &a.k)) return false;
    for (int i = 0; i < IR_MAX_SYMS; i++)
        if (__builtin_mul_overflow(a.coef[i], c, &a.coef[i])) return false;
    *out = a;
    return true;
}

bool ir_dim_div_exact(ir_dim a, int64_t c, ir_dim *out) {
    if (c <= 0 || a.k % c) return false;
    a.k /= c;
    for (int i = 0; i < IR_MAX_SYMS; i++) {
        if (a.coef[i] % c) return false;
        a.coef[i] /= c;
    }
    *out = a;
    return true;
}

void ir_dim_format(ir_dim d, const ir_graph *g, char *buf, size_t n) {
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; i < IR_MAX_SYMS; i++) {
        if (!d.coef[i]) continue;
        const char *name = (g && i < g->n_syms && g->sym_names[i]) ? g->sym_names[i] : "?";
        int w;
        if (d.coef[i] == 1) w = snprintf(buf + used, n - used, "%s%s", used ? "+" : "", name);
        else w = snprintf(buf + used, n - used, "%s%lld*%s", used ? "+" : "", (long long)d.coef[i], name);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
    if (d.k || !used) snprintf(buf + used, n - used, used ? "%+lld" : "%lld", (long long)d.k);
}

int64_t ir_dim_to_public(ir_dim d) {
    if (ir_dim_is_static(d)) return d.k;
    int sym = -1;
    for (int i = 0; i < IR_MAX_SYMS; i++) {
        if (!d.coef[i]) continue;
        if (d.coef[i] != 1 || sym >= 0) return RLX_DIM_INFER;
        sym = i;
    }
    return d.k == 0 ? -2 - sym : RLX_DIM_INFER;
}

bool ir_shape_is_static(const ir_shape *s) {
    for (int i = 0; i < s->rank; i++) if (!ir_dim_is_static(s->d[i])) return false;
    return true;
}

int64_t ir_shape_row_elems(const ir_shape *s) { return s->rank > 0 ? s->d[s->rank - 1].k : 1; }

int64_t ir_shape_numel(const ir_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) n *= s->d[i].k;
    return n;
}

bool ir_shape_size_ok(const ir_shape *s) {
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++) {
        if (!ir_dim_is_static(s->d[i])) continue;
        int64_t k = s->d[i].k > 1 ? s->d[i].k : 1;
        if (k > IR_MAX_NUMEL / n) return false;   /* n * k > 2^48, tested without overflowing */
        n *= k;
    }
    return true;
}

void ir_shape_dims(const ir_shape *s, int64_t *dims) {
    for (int i = 0; i < s->rank; i++) dims[i] = s->d[i].k;
}

void ir_shape_format(const ir_shape *s, const ir_graph *g, char *buf, size_t n) {
    size_t used = 0;
    int w = snprintf(buf, n, "[");
    if (w < 0 || (size_t)w >= n) return;
    used = (size_t)w;
    for (int i = 0; i < s->rank; i++) {
        char d[64];
        ir_dim_format(s->d[i], g, d, sizeof d);
        w = snprintf(buf + used, n - used, "%s%s", i ? "," : "", d);
        if (w < 0 || (size_t)w >= n - used) return;
        used += (size_t)w;
    }
    snprintf(buf + used, n - used, "]");
}

/* numpy broadcasting, right-aligned. A symbolic dim against 1 gives the
 * symbol; a symbolic dim against a different form is accepted provisionally
 * and checked again once the graph is specialized (all dims static). */
rlx_status ir_broadcast_shapes(const ir_shape *a, const ir_shape *b, ir_shape *out) {
    ir_shape r;
    r.rank = RLX_MAX(a->rank, b->rank);
    for (int i = 0; i < r.rank; i++) {
        int ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
        ir_dim da = ia >= 0 ? a->d[ia] : ir_dim_const(1);
        ir_dim db = ib >= 0 ? b->d[ib] : ir_dim_const(1);
        bool sa = ir_dim_is_static(da), sb = ir_dim_is_static(db);
        if (ir_dim_eq(da, db)) r.d[i] = da;
        else if (sa && da.k == 1) r.d[i] = db;
        else if (sb && db.k == 1) r.d[i] = da;
        else if (sa && sb) return RLX_STATUS_SHAPE;
        else r.d[i] = sa ? da : db;   /* provisional: re-checked when static */
    }
    *out = r;
    return RLX_OK;
}

bool ir_dtype_is_float(rlx_dtype dt) {
    return dt == RLX_F32 || dt == RLX_F16 || dt == RLX_BF16 || dt == RLX_F64;
}

bool ir_dtype_is_int(rlx_dtype dt) {
    return dt == RLX_I32 || dt == RLX_I64 || dt == RLX_U8 || dt == RLX_I8;
}

int64_t ir_node_bytes(const ir_node *n) {
    int64_t dims[IR_MAX_RANK];
    ir_shape_dims(&n->shape, dims);
    return (int64_t)rlx_tensor_bytes(n->dtype, n->shape.rank, dims);
}
