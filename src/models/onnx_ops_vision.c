/*
 * onnx_ops_vision.c — the ONNX handlers of the vision rearrangements and
 * resampling: Resize (opsets 11-19; roi, scales and sizes folded to
 * import-time values) onto rlx_resize, and DepthToSpace / SpaceToDepth onto
 * the first-class ops.
 */
#include "models/onnx_import.h"

#include <math.h>
#include <string.h>

static int rank_of(ox_ctx *c, rlx_node x, int64_t *dims) {
    int r = -1;
    if (rlx_node_shape(c->g, x, NULL, &r, dims) != RLX_OK) return -1;
    return r;
}

static rlx_status out0(ox_ctx *c, const onnx_node *n, rlx_node x) {
    if (n->n_outputs < 1) return ox_fail(c, RLX_STATUS_FORMAT, "the node has no output");
    return ox_set_node(c, n->outputs[0], x);
}

/* An optional input as an import-time value; NULL when absent or empty
 * (exporters pass an empty tensor for the unused one of scales / sizes). */
static const ox_value *opt_host(ox_ctx *c, const onnx_node *n, int i, bool *failed) {
    *failed = false;
    if (!ox_has(n, i)) return NULL;
    const ox_value *v = ox_host_in(c, n, i);
    if (!v) {
        *failed = true;
        return NULL;
    }
    return v->host_count ? v : NULL;
}

/* The string attribute's index in names, dflt when absent, -1 when unknown. */
static int attr_enum(const onnx_node *n, const char *attr, const char *const *names, int count, int dflt) {
    const onnx_attr *a = onnx_node_attr(n, attr);
    if (!a) return dflt;
    for (int i = 0; i < count; i++)
        if (onnx_str_eq(a->s, names[i])) return i;
    return -1;
}

rlx_status ox_op_resize(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    if (c->opset < 11) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Resize before opset 11 (its coordinate rules differ)");
    int64_t d[RLX_MAX_RANK];
    int r = rank_of(c, x, d);
    if (r < 3 || r > 5) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "Resize of rank %d (rlx resizes [N, C, 1 to 3 spatial dims])", r);
    static const char *const modes[] = {"nearest", "linear", "cubic"};
    static const char *const coords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                                         "tf_crop_and_resize", "tf_half_pixel_for_nn"};
    static const char *const nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    static const char *const policies[] = {"stretch", "not_larger", "not_smaller"};
    rlx_resize_params p;
    rlx_resize_params_init(&p);
    int mode = attr_enum(n, "mode", modes, 3, 0), coord = attr_enum(n, "coordinate_transformation_mode", coords, 7, 0);
    int nearest = attr_enum(n, "nearest_mode", nearests, 4, 0), policy = attr_enum(n, "keep_aspect_ratio_policy", policies, 3, 0);
    if (mode < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "unknown Resize mode");
    if (coord < 0 || coord >= 5)
        return ox_fail(c, RLX_STATUS_UNSUPPORTED, "coordinate_transformation_mode %s", coord == 5 ? "tf_crop_and_resize (roi cropping)" :
                       coord == 6 ? "tf_half_pixel_for_nn" : "unknown");
    if (nearest < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "unknown nearest_mode");
    if (policy < 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "unknown keep_aspect_ratio_policy");
    if (ox_attr_i(n, "antialias", 0) != 0) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "antialias = 1");
    if (coord == 1 && c->opset < 19) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "half_pixel_symmetric before opset 19");
    p.mode = (rlx_resize_mode)mode, p.coord = (rlx_resize_coord)coord, p.nearest = (rlx_resize_nearest)nearest;
    p.cubic_a = ox_attr_f(n, "cubic_coeff_a", -0.75f);
    p.exclude_outside = (int)ox_attr_i(n, "exclude_outside", 0);
    p.dims = r - 2;

    /* axes (opset 18): which dims scales / sizes name; default all */
    int64_t axes[RLX_MAX_RANK];
    int na = ox_attr_ints(n, "axes", axes, RLX_MAX_RANK);
    if (na < 0) {
        na = r;
        for (int i = 0; i < r; i++) axes[i] = i;
    }
    for (int i = 0; i < na; i++) {
        if (axes[i] < 0) axes[i] += r;
        if (axes[i] < 0 || axes[i] >= r) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "axis %lld outside rank %d", (long long)axes[i], r);
    }
    bool failed;
    const ox_value *scales = opt_host(c, n, 2, &failed);
    if (failed) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "scales must be known at import (a constant or folded shape arithmetic)");
    const ox_value *sizes = opt_host(c, n, 3, &failed);
    if (failed) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "sizes must be known at import (a constant or folded shape arithmetic)");
    if (!scales == !sizes) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "exactly one of scales and sizes must be given");
    const ox_value *v = scales ? scales : sizes;
    if (v->host_count != na) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "%s has %lld entries for %d axes", scales ? "scales" : "sizes",
                                            (long long)v->host_count, na);
    if (scales && scales->host_dtype != RLX_F32) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "scales must be float");
    if (sizes && sizes->host_dtype == RLX_F32) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "sizes must be integers");
    double sc[RLX_MAX_RANK];
    int64_t sz[RLX_MAX_RANK];
    for (int i = 0; i < r; i++) sc[i] = 1, sz[i] = d[i];
    for (int i = 0; i < na; i++) {
        int64_t ax = axes[i];
        if (d[ax] < 0 && (ax >= 2 || (scales ? scales->f64[i] != 1 : sizes->i64[i] != d[ax])))
            return ox_fail(c, RLX_STATUS_UNSUPPORTED, "resizing symbolic dim %lld", (long long)ax);
        if (scales) sc[ax] = scales->f64[i];
        else sz[ax] = sizes->i64[i];
    }
    if (sizes && policy != 0) {   /* one scale for all the named axes, the sizes rounded from it */
        double s = policy == 1 ? INFINITY : 0;
        for (int i = 0; i < na; i++) {
            double q = (double)sizes->i64[i] / (double)d[axes[i]];
            s = policy == 1 ? fmin(s, q) : fmax(s, q);
        }
        for (int i = 0; i < na; i++) sc[axes[i]] = s, sz[axes[i]] = (int64_t)floor(s * (double)d[axes[i]] + 0.5);
    }
    for (int i = 0; i < 2; i++)   /* rlx resizes the spatial dims only */
        if (scales ? sc[i] != 1 : sz[i] != d[i])
            return ox_fail(c, RLX_STATUS_UNSUPPORTED, "resizing the %s dim", i ? "channel" : "batch");
    for (int i = 0; i < p.dims; i++) {
        if (scales) p.scales[i] = sc[2 + i];
        else {
            if (sz[2 + i] < 1) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "size %lld along dim %d", (long long)sz[2 + i], 2 + i);
            p.sizes[i] = sz[2 + i];
            if (policy != 0) p.scales[i] = sc[2 + i];
        }
    }
    return out0(c, n, rlx_resize(c->g, x, &p));
}

rlx_status ox_op_depth_space(ox_ctx *c, const onnx_node *n) {
    rlx_node x = ox_in(c, n, 0);
    if (x == RLX_NO_NODE) return ox_graph_status(c);
    int64_t d[RLX_MAX_RANK], b = ox_attr_i(n, "blocksize", 0);
    if (rank_of(c, x, d) != 4) return ox_fail(c, RLX_STATUS_UNSUPPORTED, "needs [N, C, H, W]");
    if (onnx_str_eq(n->op_type, "SpaceToDepth")) return out0(c, n, rlx_space_to_depth(c->g, x, b, RLX_DCR));
    const onnx_attr *m = onnx_node_attr(n, "mode");
    if (m && !onnx_str_eq(m->s, "CRD") && !onnx_str_eq(m->s, "DCR")) return ox_fail(c, RLX_STATUS_INVALID_ARGUMENT, "DepthToSpace mode must be DCR or CRD");
    return out0(c, n, rlx_depth_to_space(c->g, x, b, m && onnx_str_eq(m->s, "CRD") ? RLX_CRD : RLX_DCR));
}
