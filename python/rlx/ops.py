"""ops.py — one Python function per graph builder of rlx.h.

The functions are made at import from the header's declarations (_api.py):
every `rlx_node rlx_NAME(rlx_graph *g, ...)` whose parameters are nodes,
numbers and enums becomes NAME(...) with the C parameter names, the header
comment as its docstring, and these conveniences: a node parameter takes a
Node, a Python number (a scalar of the first node argument's dtype) or None
(RLX_NO_NODE); an enum takes its member's short name ("relu", "causal",
"neox") or its number; axes_mask is `axis` (an int, a tuple of ints or None
for all axes); a dtype takes any dtype spelling. Parameters at the end get
defaults where the C API has a neutral value (keepdim False, bias None, eps
1e-5, ...). The builders with arrays or structs (reshape, transpose, concat,
conv, pool, resize, topk, ...) are written out below with the same names.
Each op is also a Node method: x.relu(), x.softmax(-1).
"""
import builtins  # the op functions below shadow max, min, abs, round, pow, slice and input
import ctypes

from . import _api, dtypes
from ._lib import check, lib
from .graph import Graph, Node, _graph_of

# enum type -> {short name: value}: RLX_ACT_GELU_TANH -> "gelu_tanh"
ENUM_VALUES = {}
for _en, _members in _api.ENUMS.items():
    _names = [m for m, _ in _members]
    _prefix = _names[0]
    for _m in _names[1:]:
        while not _m.startswith(_prefix):
            _prefix = _prefix[:-1]
    _prefix = _prefix[:_prefix.rfind("_") + 1] if "_" in _prefix else _prefix
    ENUM_VALUES[_en] = {m[len(_prefix):].lower(): v for m, v in _members}


def enum_value(enum_type, value):
    if isinstance(value, str):
        table = ENUM_VALUES[enum_type]
        v = table.get(value.lower())
        if v is None:
            raise ValueError("rlx: %r is not one of %s (%s)" % (value, ", ".join(table), enum_type))
        return v
    return int(value)


def axes_mask(x, axis):
    """axis (None, int or ints, negatives from the end) as rlx's bit mask (0 = all)."""
    if axis is None:
        return 0
    if isinstance(axis, int):
        axis = (axis,)
    rank = x.ndim if isinstance(x, Node) else 8
    mask = 0
    for a in axis:
        a = int(a)
        if a < 0:
            a += rank
        if not 0 <= a < rank:
            raise ValueError("rlx: axis %d is outside a rank-%d tensor" % (a, rank))
        mask |= 1 << a
    return mask


# Defaults by C parameter name, applied to a trailing run of parameters.
DEFAULTS = {"keepdim": False, "transpose_b": False, "bias": None, "beta": None, "mask": None, "offset": None,
            "eps": 1e-5, "scale": 0.0, "mask_kind": "none", "act": "none", "style": "neox", "theta": 10000.0,
            "rotary_dims": 0, "axes_mask": None, "step": 1, "flags": 0}
ENUM_TYPES = set(_api.ENUMS) - {"rlx_status"}
SIMPLE = {"rlx_node", "int", "int64_t", "uint32_t", "unsigned", "float", "double"} | ENUM_TYPES

_HANDWRITTEN = {"rlx_input", "rlx_param", "rlx_constant", "rlx_scalar", "rlx_reshape", "rlx_transpose",
                "rlx_concat", "rlx_expand", "rlx_conv", "rlx_conv_transpose", "rlx_pool", "rlx_resize",
                "rlx_adaptive_pool", "rlx_topk", "rlx_matmul", "rlx_scale_loss"}


def _builder_names():
    """Every rlx_node-returning builder of the header (rlx_graph *g first)."""
    return [n for n, ret in _api.RETURN_TYPES.items()
            if ret == "rlx_node" and _api.PARAM_TYPES[n][:1] == ("rlx_graph *",)]


def _make(cname):
    ctypes_ = _api.PARAM_TYPES[cname][1:]
    names = list(_api.FUNCTIONS[cname][2][1:])
    doc = _api.FUNCTIONS[cname][3]
    pyname = cname[4:]
    py_params = ["axis" if n == "axes_mask" else n for n in names]
    defaults_from = len(names)
    while defaults_from > 0 and names[defaults_from - 1] in DEFAULTS:
        defaults_from -= 1
    sig, conv = [], []
    node_args = [p for p, t in zip(py_params, ctypes_) if t == "rlx_node"]
    for i, (n, p, t) in enumerate(zip(names, py_params, ctypes_)):
        sig.append(p if i < defaults_from else "%s=%r" % (p, DEFAULTS[n]))
        if t == "rlx_node":
            conv.append("_g._in(%s, _args)" % p)
        elif n == "axes_mask":
            conv.append("axes_mask(%s, %s)" % (node_args[0], p))
        elif t == "rlx_dtype":
            conv.append("dtypes.code(%s)" % p)
        elif t in ENUM_TYPES:
            conv.append("enum_value(%r, %s)" % (t, p))
        elif t in ("float", "double"):
            conv.append("float(%s)" % p)
        else:
            conv.append("int(%s)" % p)
    src = ("def %s(%s):\n"
           "    _g = _graph_of(%s)\n"
           "    _args = (%s,)\n"
           "    return _g._node(lib.%s(_g._live(), %s), %r)\n"
           % (pyname, ", ".join(sig), ", ".join(node_args), ", ".join(node_args), cname, ", ".join(conv), pyname))
    scope = {"_graph_of": _graph_of, "lib": lib, "axes_mask": axes_mask,
             "dtypes": dtypes, "enum_value": enum_value}
    exec(compile(src, "<rlx op %s>" % pyname, "exec"), scope)
    fn = scope[pyname]
    fn.__doc__ = "%s(%s)  [C: %s]\n\n%s" % (pyname, ", ".join(sig), cname, doc)
    fn.__module__ = __name__
    return pyname, fn


GENERATED = []
for _cname in _builder_names():
    if _cname in _HANDWRITTEN or not all(t in SIMPLE for t in _api.PARAM_TYPES[_cname][1:]):
        continue
    _pyname, _fn = _make(_cname)
    globals()[_pyname] = _fn
    GENERATED.append(_pyname)


# ---- builders with arrays or structs

_I64 = ctypes.c_int64 * _api.RLX_MAX_RANK


def matmul(a, b, transpose_b=False):
    """a [..., M, K] x b [..., K, N] -> [..., M, N], batch dims broadcast; with
    transpose_b, b is [..., N, K] (a linear layer's weight).  [C: rlx_matmul]"""
    g = _graph_of(a, b)
    return g._node(lib.rlx_matmul(g._live(), g._in(a, (a, b)), g._in(b, (a, b)), int(bool(transpose_b))), "matmul")


def _varargs(values):
    """f(x, 2, 3) and f(x, (2, 3)) alike."""
    if len(values) == 1 and isinstance(values[0], (tuple, list)):
        return tuple(values[0])
    return values


def reshape(x, *shape):
    """x with a new shape (one dim may be -1: inferred; a str names a symbol).  [C: rlx_reshape]"""
    shape = _varargs(shape)
    g = x.graph
    rank, dims = g._dims(shape)
    return g._node(lib.rlx_reshape(g._live(), x.id, rank, dims), "reshape")


def transpose(x, *perm):
    """Out dim i is in dim perm[i]; no perm reverses the dims.  [C: rlx_transpose]"""
    perm = _varargs(perm)
    if not perm:
        perm = tuple(reversed(range(x.ndim)))
    arr = (ctypes.c_int * builtins.max(1, len(perm)))(*[int(p) for p in perm])
    return x.graph._node(lib.rlx_transpose(x.graph._live(), x.id, arr), "transpose")


def permute(x, *perm):
    """transpose with the permutation (torch's name)."""
    return transpose(x, *perm)


def expand(x, *shape):
    """x broadcast to shape.  [C: rlx_expand]"""
    shape = _varargs(shape)
    g = x.graph
    rank, dims = g._dims(shape)
    return g._node(lib.rlx_expand(g._live(), x.id, rank, dims), "expand")


def concat(xs, axis=0):
    """xs (up to 8 nodes) joined along axis.  [C: rlx_concat]"""
    xs = list(xs)
    g = _graph_of(*xs)
    ids = (ctypes.c_int32 * builtins.max(1, len(xs)))(*[g._in(x, xs[0]) for x in xs])
    return g._node(lib.rlx_concat(g._live(), ids, len(xs), int(axis)), "concat")


def _triple(v, dims, name):
    if v is None:
        return [0, 0, 0]
    if isinstance(v, int):
        v = [v] * dims
    v = [int(i) for i in v]
    if len(v) > 3:
        raise ValueError("rlx: %s has %d values; at most 3 spatial dims" % (name, len(v)))
    return v + [0] * (3 - len(v))


def _spatial(x, dims):
    return int(dims) if dims else builtins.max(1, x.ndim - 2)


def _pads(padding, dims):
    """padding: an int, one per dim, or (begin..., end...) pairs per dim as ((b, e), ...)."""
    if padding is None:
        return [0] * 3, [0] * 3
    if isinstance(padding, int):
        return _triple(padding, dims, "padding"), _triple(padding, dims, "padding")
    padding = list(padding)
    if padding and isinstance(padding[0], (tuple, list)):
        return _triple([p[0] for p in padding], dims, "padding"), _triple([p[1] for p in padding], dims, "padding")
    return _triple(padding, dims, "padding"), _triple(padding, dims, "padding")


def conv_params(x, stride=1, padding=0, dilation=1, groups=1, act="none", output_padding=0, dims=0):
    """An rlx_conv_params for x: ints or per-dim lists; padding may be ((begin, end), ...)."""
    d = _spatial(x, dims)
    p = _api.rlx_conv_params()
    p.dims = d
    for field, v in (("stride", stride), ("dilation", dilation), ("output_padding", output_padding)):
        getattr(p, field)[:] = _triple(v, d, field)
    b, e = _pads(padding, d)
    p.pad_begin[:] = b
    p.pad_end[:] = e
    p.groups = int(groups)
    p.act = enum_value("rlx_activation", act)
    return p


def conv(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, act="none", dims=0):
    """Convolution (cross-correlation, torch conv1d/2d/3d) of x [N, C, *S] with w [O, C/groups, *K].  [C: rlx_conv]"""
    p = conv_params(x, stride, padding, dilation, groups, act, 0, dims)
    g = _graph_of(x, w)
    return g._node(lib.rlx_conv(g._live(), g._in(x), g._in(w), g._in(bias), ctypes.byref(p)), "conv")


def conv_transpose(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1, output_padding=0, dims=0):
    """Transposed convolution (torch conv_transpose1d/2d/3d), w [Cin, Cout/groups, *K].  [C: rlx_conv_transpose]"""
    p = conv_params(x, stride, padding, dilation, groups, "none", output_padding, dims)
    g = _graph_of(x, w)
    return g._node(lib.rlx_conv_transpose(g._live(), g._in(x), g._in(w), g._in(bias), ctypes.byref(p)),
                   "conv_transpose")


def pool(x, kind, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=False, dims=0):
    """Max or average pooling ("max" / "avg") of x [N, C, *S].  [C: rlx_pool]"""
    d = _spatial(x, dims)
    p = _api.rlx_pool_params()
    k = {"max": _api.RLX_MAXPOOL, "avg": _api.RLX_AVGPOOL}.get(kind) if isinstance(kind, str) else int(kind)
    if k is None:
        raise ValueError("rlx: pool kind %r is not 'max' or 'avg'" % kind)
    p.kind = k
    p.dims = d
    p.kernel[:] = _triple(kernel, d, "kernel")
    p.stride[:] = _triple(stride if stride is not None else 0, d, "stride")
    b, e = _pads(padding, d)
    p.pad_begin[:] = b
    p.pad_end[:] = e
    p.ceil_mode = int(bool(ceil_mode))
    p.count_include_pad = int(bool(count_include_pad))
    return x.graph._node(lib.rlx_pool(x.graph._live(), x.id, ctypes.byref(p)), "pool")


def max_pool(x, kernel, stride=None, padding=0, ceil_mode=False, dims=0):
    return pool(x, "max", kernel, stride, padding, ceil_mode, False, dims)


def avg_pool(x, kernel, stride=None, padding=0, ceil_mode=False, count_include_pad=False, dims=0):
    return pool(x, "avg", kernel, stride, padding, ceil_mode, count_include_pad, dims)


def resize(x, sizes=None, scales=None, mode="nearest", coord="half_pixel", nearest="round_prefer_floor",
           cubic_a=-0.75, exclude_outside=False, dims=0):
    """Resize (ONNX Resize, torch interpolate) of x [N, C, *S]: sizes or scales per spatial dim.  [C: rlx_resize]"""
    p = _api.rlx_resize_params()
    lib.rlx_resize_params_init(ctypes.byref(p))
    d = _spatial(x, dims)
    p.dims = d
    p.mode = enum_value("rlx_resize_mode", mode)
    p.coord = enum_value("rlx_resize_coord", coord)
    p.nearest = enum_value("rlx_resize_nearest", nearest)
    if sizes is not None:
        p.sizes[:] = _triple(sizes, d, "sizes")
    if scales is not None:
        s = [float(scales)] * d if isinstance(scales, (int, float)) else [float(v) for v in scales]
        p.scales[:] = s + [0.0] * (3 - len(s))
    p.cubic_a = float(cubic_a)
    p.exclude_outside = int(bool(exclude_outside))
    return x.graph._node(lib.rlx_resize(x.graph._live(), x.id, ctypes.byref(p)), "resize")


def adaptive_pool(x, kind, out, dims=0):
    """Adaptive max or average pooling of x [N, C, *S] to [N, C, *out].  [C: rlx_adaptive_pool]"""
    d = _spatial(x, dims)
    k = {"max": _api.RLX_MAXPOOL, "avg": _api.RLX_AVGPOOL}.get(kind) if isinstance(kind, str) else int(kind)
    if k is None:
        raise ValueError("rlx: pool kind %r is not 'max' or 'avg'" % kind)
    arr = (ctypes.c_int64 * 3)(*_triple(out, d, "out"))
    return x.graph._node(lib.rlx_adaptive_pool(x.graph._live(), x.id, k, d, arr), "adaptive_pool")


def topk(x, k):
    """(values, indices) of the k largest along the last axis, descending.  [C: rlx_topk]"""
    v, i = ctypes.c_int32(), ctypes.c_int32()
    check(lib.rlx_topk(x.graph._live(), x.id, int(k), ctypes.byref(v), ctypes.byref(i)))
    return Node(x.graph, v.value), Node(x.graph, i.value)


def input(graph, name, dtype, shape=()):  # noqa: A001  (rlx_input's name)
    """graph.input(...).  [C: rlx_input]"""
    return graph.input(name, dtype, shape)


def param(graph, name, dtype, shape=()):
    """graph.param(...).  [C: rlx_param]"""
    return graph.param(name, dtype, shape)


def constant(graph, value, dtype=None):
    """graph.constant(...).  [C: rlx_constant]"""
    return graph.constant(value, dtype)


def scalar(graph, value, dtype="f32"):
    """graph.scalar(...).  [C: rlx_scalar]"""
    return graph.scalar(value, dtype)


def scale_loss(loss, kind="adamw", **options):
    """loss.graph.scale_loss(...).  [C: rlx_scale_loss]"""
    return loss.graph.scale_loss(loss, kind, **options)


WRITTEN = ["matmul", "reshape", "transpose", "permute", "expand", "concat", "conv", "conv_transpose", "pool",
           "max_pool", "avg_pool", "resize", "adaptive_pool", "topk", "input", "param", "constant", "scalar",
           "scale_loss"]
ALL = GENERATED + WRITTEN

# Node methods: every op whose first argument is a node
_NOT_METHODS = {"input", "param", "constant", "scalar", "where", "concat"}
for _name in ALL:
    if _name in _NOT_METHODS or hasattr(Node, _name):
        continue
    setattr(Node, _name, globals()[_name])

__all__ = ALL + ["enum_value", "axes_mask", "conv_params", "Graph", "Node"]
