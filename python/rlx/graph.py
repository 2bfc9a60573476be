"""graph.py — Graph and Node: building an rlx graph from Python.

A Graph owns an rlx_graph. Its sources (input, param, constant, scalar) give
Nodes; a Node's operators (+ - * / @ ** < <= > >=, unary -, abs(), slicing)
and the functions of ops.py add nodes to the same graph. Python numbers mixed
with nodes become scalar constants of the node's dtype. Every builder failure
raises at once (ShapeError, InvalidArgumentError, ...) with rlx's message;
as in C, a graph keeps its first error, so one that raised cannot compile.
A dim is an int or a symbol's name: Graph.input("x", "f32", ("batch", 16))
makes the symbol "batch", bound at run time from the inputs.
"""
import ctypes

import numpy as np

from . import _api, dtypes
from ._lib import check, cstr, last_error, lib, take_string
from .errors import error_for_status
from .handle import Handle

_INT64_ARRAY = ctypes.c_int64 * _api.RLX_MAX_RANK


def _first_node(xs):
    """The node whose dtype a number next to it takes: the first that is not a
    bool (where(cond, 1.0, x) makes 1.0 x's dtype), else the first."""
    nodes = [x for x in xs if isinstance(x, Node)]
    for x in nodes:
        if x.dtype != "bool":
            return x
    return nodes[0] if nodes else None


def _graph_of(*args):
    for a in args:
        if isinstance(a, Node):
            return a.graph
    raise TypeError("rlx: an op needs at least one Node argument")


class Node:
    """A node of a Graph: .id, .dtype (rlx name), .shape (ints; a symbol as its name)."""
    __slots__ = ("graph", "id")
    __array_priority__ = 1000   # numpy scalars on the left defer to Node's operators

    def __init__(self, graph, node_id):
        self.graph = graph
        self.id = node_id

    def _query(self):
        dt, rank, dims = ctypes.c_int(), ctypes.c_int(), _INT64_ARRAY()
        check(lib.rlx_node_shape(self.graph._ptr, self.id, ctypes.byref(dt), ctypes.byref(rank), dims))
        return dt.value, [dims[i] for i in range(rank.value)]

    @property
    def dtype(self):
        return dtypes.NAMES[self._query()[0]]

    @property
    def shape(self):
        return tuple(self.graph._dim_name(d) for d in self._query()[1])

    @property
    def ndim(self):
        return len(self._query()[1])

    def set_name(self, name):
        """Names the node in error messages, dumps and reports; returns it."""
        check(lib.rlx_set_name(self.graph._ptr, self.id, cstr(name)))
        return self

    def __repr__(self):
        return "Node(%d, %s, %s)" % (self.id, self.dtype, list(self.shape))

    def __bool__(self):
        raise TypeError("rlx: a Node has no truth value until the graph runs")

    # arithmetic: the ops of ops.py (bound below, after ops.py is imported)
    def __add__(self, o): return _ops.add(self, o)
    def __radd__(self, o): return _ops.add(o, self)
    def __sub__(self, o): return _ops.sub(self, o)
    def __rsub__(self, o): return _ops.sub(o, self)
    def __mul__(self, o): return _ops.mul(self, o)
    def __rmul__(self, o): return _ops.mul(o, self)
    def __truediv__(self, o): return _ops.div(self, o)
    def __rtruediv__(self, o): return _ops.div(o, self)
    def __pow__(self, o): return _ops.pow(self, o)
    def __rpow__(self, o): return _ops.pow(o, self)
    def __matmul__(self, o): return _ops.matmul(self, o)
    def __rmatmul__(self, o): return _ops.matmul(o, self)
    def __neg__(self): return _ops.neg(self)
    def __abs__(self): return _ops.abs(self)
    def __lt__(self, o): return _ops.lt(self, o)
    def __le__(self, o): return _ops.le(self, o)
    def __gt__(self, o): return _ops.gt(self, o)
    def __ge__(self, o): return _ops.ge(self, o)
    # == and != keep Python's identity meaning (nodes go in dicts and sets):
    # rlx.eq(a, b) and rlx.ne(a, b) build the comparisons.
    __hash__ = object.__hash__

    def __getitem__(self, index):
        return _slicing.getitem(self, index)

    @property
    def T(self):
        """The last two dims swapped."""
        r = self.ndim
        if r < 2:
            return self
        perm = list(range(r))
        perm[-1], perm[-2] = perm[-2], perm[-1]
        return _ops.transpose(self, perm)


class Graph(Handle):
    """An rlx graph under construction. Use as a context manager, or close()."""

    def __init__(self, _ptr=None, _owner=None):
        if _ptr is None:
            _ptr = lib.rlx_graph_new()
            if not _ptr:
                raise error_for_status(_api.RLX_STATUS_OUT_OF_MEMORY, last_error() or "rlx_graph_new: out of memory")
            self._owned = True
        else:
            self._owned = False   # an ONNX model's graph: the model frees it
        self._ptr = _ptr
        self._owner = _owner
        self._symbols = {}

    _what = "graph"

    def _release(self, ptr):
        if self._owned:
            lib.rlx_graph_free(ptr)

    def _node(self, node_id, what=""):
        if node_id < 0:
            raise error_for_status(lib.rlx_graph_status(self._ptr) or _api.RLX_STATUS_INTERNAL, last_error(), what)
        return Node(self, node_id)

    def _dim_name(self, d):
        if d >= 0:
            return d
        return self._symbols.get(d, d)

    def _dims(self, shape):
        if shape is None:
            return 0, None
        if isinstance(shape, (int, np.integer, str)):
            shape = (shape,)
        shape = tuple(shape)
        if len(shape) > _api.RLX_MAX_RANK:
            raise ValueError("rlx: rank %d is above %d" % (len(shape), _api.RLX_MAX_RANK))
        arr = _INT64_ARRAY()
        for i, d in enumerate(shape):
            arr[i] = self.symbol(d) if isinstance(d, str) else int(d)
        return len(shape), arr

    def _in(self, x, like=None):
        """x as a node id: a Node of this graph, None (no node) or a number: a
        scalar of like's dtype (like: a Node, or the op's arguments, of which
        _first_node picks one, only when a number needs it)."""
        if x is None:
            return _api.RLX_NO_NODE
        if isinstance(x, Node):
            if x.graph is not self:
                raise ValueError("rlx: a node of another graph")
            return x.id
        if isinstance(x, (int, float, bool, np.number, np.bool_)):
            if isinstance(like, tuple):
                like = _first_node(like)
            dt = like.dtype if isinstance(like, Node) else "f32"
            return self.scalar(x, dt).id
        if isinstance(x, np.ndarray):
            return self.constant(x).id
        raise TypeError("rlx: expected a Node, a number or None, got %s" % type(x).__name__)

    # ---- sources
    def symbol(self, name):
        """The symbolic dim of this name (a value <= -2); the same name gives the same symbol."""
        v = lib.rlx_symbol(self._live(), cstr(name))
        if v == _api.RLX_DIM_INFER:
            check(_api.RLX_STATUS_INVALID_ARGUMENT)
        self._symbols[v] = name
        return v

    def input(self, name, dtype, shape=()):
        rank, dims = self._dims(shape)
        return self._node(lib.rlx_input(self._live(), cstr(name), dtypes.code(dtype), rank, dims), "input")

    def param(self, name, dtype, shape=()):
        rank, dims = self._dims(shape)
        return self._node(lib.rlx_param(self._live(), cstr(name), dtypes.code(dtype), rank, dims), "param")

    def constant(self, value, dtype=None):
        """A constant copied from value (array-like); dtype defaults to the array's."""
        if dtype is None:
            a = np.asarray(value)
            if a.dtype == np.float64 and not isinstance(value, np.ndarray):
                a = a.astype(np.float32)   # Python floats: rlx's default float
            elif a.dtype == np.int64 and not isinstance(value, np.ndarray):
                a = a.astype(np.int32)
            dtype = dtypes.name(a.dtype)
        a = dtypes.host_array(value, dtype)
        rank, dims = self._dims(np.shape(value))
        return self._node(lib.rlx_constant(self._live(), dtypes.code(dtype), rank, dims,
                                           a.ctypes.data_as(ctypes.c_void_p)), "constant")

    def scalar(self, value, dtype="f32"):
        return self._node(lib.rlx_scalar(self._live(), dtypes.code(dtype), float(value)), "scalar")

    def output(self, name, node):
        """Marks node as the graph output `name`; returns node."""
        check(lib.rlx_output(self._live(), cstr(name), self._in(node)))
        return node

    # ---- queries
    def status(self):
        """The first builder error's status (0 when none)."""
        return lib.rlx_graph_status(self._live())

    def dump(self):
        return take_string(lib.rlx_graph_dump(self._live()))

    def __len__(self):
        n = lib.rlx_graph_node_count(self._live())
        if n < 0:
            check(_api.RLX_STATUS_INVALID_ARGUMENT)
        return n

    # ---- compile and train
    def compile(self, **options):
        """An Exec of this graph; options as rlx_compile_options (see rlx.compile_options)."""
        from .exec import Exec, compile_options
        out = ctypes.c_void_p()
        check(lib.rlx_compile(self._live(), ctypes.byref(compile_options(**options)), ctypes.byref(out)))
        return Exec(out.value)

    def gradients(self, loss, wrt):
        """Appends d loss / d w for each w of wrt (Nodes); returns the gradient Nodes."""
        wrt = list(wrt)
        ids = (ctypes.c_int32 * max(1, len(wrt)))(*[self._in(w) for w in wrt])
        grads = (ctypes.c_int32 * max(1, len(wrt)))()
        check(lib.rlx_gradients(self._live(), self._in(loss), len(wrt), ids, grads))
        return [Node(self, grads[i]) for i in range(len(wrt))]

    def optimizer_step(self, params, grads, lr, kind="adamw", **options):
        """Appends one optimizer step (SGD or AdamW, updated in place on each run) over
        params with their grads; lr is a Node (typically an input) or a number.
        options: the fields of rlx_optimizer_options (momentum, beta1, weight_decay,
        clip_norm, accumulate, loss_scale, ...). Returns the global gradient-norm Node."""
        from .train import optimizer_options
        params, grads = list(params), list(grads)
        if len(params) != len(grads):
            raise ValueError("rlx: %d params but %d gradients" % (len(params), len(grads)))
        o = optimizer_options(kind, **options)
        n = max(1, len(params))
        p_ids = (ctypes.c_int32 * n)(*[self._in(p) for p in params])
        g_ids = (ctypes.c_int32 * n)(*[self._in(g) for g in grads])
        norm = ctypes.c_int32(_api.RLX_NO_NODE)
        check(lib.rlx_optimizer_step(self._live(), ctypes.byref(o), len(params), p_ids, g_ids,
                                     self._in(lr), ctypes.byref(norm)))
        return Node(self, norm.value)

    def scale_loss(self, loss, kind="adamw", **options):
        """loss times the dynamic loss scale (options.loss_scale > 0), to differentiate."""
        from .train import optimizer_options
        o = optimizer_options(kind, **options)
        return self._node(lib.rlx_scale_loss(self._live(), self._in(loss), ctypes.byref(o)), "scale_loss")


from . import ops as _ops  # noqa: E402  (the op functions use Node and Graph)
from . import slicing as _slicing  # noqa: E402
