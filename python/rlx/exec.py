"""exec.py — Exec: a compiled graph, run on numpy arrays.

run() takes the inputs by name (a dict, or keywords) and returns the outputs
as a dict of new numpy arrays, in the graph's output order. An input that is
a C-contiguous numpy array of the input's dtype is read in place (no copy);
anything else (a list, a number, another layout) is converted first. An
array of another dtype is passed as it is, so rlx reports the mismatch
rather than casting silently. Outputs are copied out of the exec's arena,
which its next run reuses. Params go in by set_param (a copy) or
use_param_memory (the CPU reads the array itself; the Exec keeps it alive).
"""
import ctypes

import numpy as np

from . import _api, dtypes
from ._lib import check, cstr, lib, take_string
from .errors import error_for_status
from .handle import Handle
from .misc import tensor_bytes

_BACKENDS = {"auto": _api.RLX_BACKEND_AUTO, "cpu": _api.RLX_BACKEND_CPU, "vulkan": _api.RLX_BACKEND_VULKAN,
             "gpu": _api.RLX_BACKEND_VULKAN}
_PRECISIONS = {"f32": _api.RLX_PRECISION_F32, "fast": _api.RLX_PRECISION_FAST}
_NP_OF_CODE = {dtypes.CODE[n]: dtypes.to_numpy(n) for n in dtypes.NAMES if not dtypes.is_quantized(n)}
_CODE_OF_NP = {np.dtype(v): k for k, v in _NP_OF_CODE.items() if k != dtypes.CODE["bf16"]}
_BF16 = dtypes.CODE["bf16"]


def compile_options(backend="auto", device=None, threads=0, precision="f32", fuse=True, optimize=True,
                    exact_quant=False, trace_path=None, check_numerics=False, poison=False):
    """rlx_compile_options from keywords. backend: "auto", "cpu" or "vulkan";
    device: a Vulkan device index (rlx.devices()' backend_index) or a substring
    of its name; precision "f32" or "fast". Environment variables override as
    in C (RLX_DEVICE, RLX_THREADS, ...)."""
    o = _api.rlx_compile_options()
    lib.rlx_compile_options_init(ctypes.byref(o))
    if isinstance(backend, str):
        if backend not in _BACKENDS:
            raise ValueError("rlx: backend %r is not one of auto, cpu, vulkan" % backend)
        backend = _BACKENDS[backend]
    o.backend = int(backend)
    if device is not None:
        if isinstance(device, str):
            o.device_name = cstr(device)   # ctypes keeps the bytes alive with the struct
        else:
            o.device_index = int(device)
    o.threads = int(threads)
    if isinstance(precision, str):
        if precision not in _PRECISIONS:
            raise ValueError("rlx: precision %r is not f32 or fast" % precision)
        precision = _PRECISIONS[precision]
    o.precision = int(precision)
    o.fuse = int(bool(fuse))
    o.optimize = int(bool(optimize))
    o.exact_quant = int(bool(exact_quant))
    if trace_path is not None:
        o.trace_path = cstr(str(trace_path))
    o.check_numerics = int(bool(check_numerics))
    o.poison = int(bool(poison))
    return o


class TensorInfo:
    """An input, output or param of an Exec: name, dtype (rlx name), shape
    (a symbolic dim, bound at run time, is None)."""
    __slots__ = ("name", "dtype", "shape")

    def __init__(self, t):
        self.name = t.name.decode()
        self.dtype = dtypes.NAMES[t.dtype]
        self.shape = tuple(t.dims[i] if t.dims[i] >= 0 else None for i in range(t.rank))

    def __repr__(self):
        return "TensorInfo(%r, %s, %s)" % (self.name, self.dtype, list(self.shape))


_run = lib.rlx_exec_run
_output = lib.rlx_exec_output
_read_output = lib.rlx_exec_read_output
_empty = np.empty
_memmove = ctypes.memmove
_addressof = ctypes.addressof
_c_char = ctypes.c_char


def _address(a):
    """The data address of a numpy array (from_buffer is 3x faster than
    a.ctypes.data; it refuses read-only and empty arrays)."""
    try:
        return _addressof(_c_char.from_buffer(a))
    except (TypeError, ValueError):
        return a.ctypes.data


def _array_of(t):
    """A new numpy array holding the tensor t points at."""
    code = t.dtype
    shape = tuple(t.dims[:t.rank])
    if code == _BF16:
        bits = _empty(shape, np.uint16)
        if t.bytes:
            _memmove(_address(bits), t.data, t.bytes)
        return dtypes.bf16_to_f32(bits)
    out = _empty(shape, _NP_OF_CODE[code])
    if t.bytes:
        _memmove(_address(out), t.data, t.bytes)
    return out


class Exec(Handle):
    """A compiled graph (rlx_exec). Use as a context manager, or close()."""

    def __init__(self, ptr, keep=None):
        self._ptr = ptr
        self._keep = keep              # what the exec borrows from (an ONNX model)
        self._borrowed = {}            # use_param_memory arrays, by param name
        self._inputs = self._infos(lib.rlx_exec_input_count, lib.rlx_exec_input_info)
        self._outputs = self._infos(lib.rlx_exec_output_count, lib.rlx_exec_output_info)
        self._params = self._infos(lib.rlx_exec_param_count, lib.rlx_exec_param_info)
        self._input_dtype = {i.name: i.dtype for i in self._inputs}
        self._bf16_inputs = {i.name for i in self._inputs if i.dtype == "bf16"}
        self._param_by_name = {p.name: p for p in self._params}
        self._out_names = [cstr(o.name) for o in self._outputs]
        # per output: (name, C name, (shape, numpy dtype, bytes) when static and not bf16)
        self._out_plan = [(o.name, c, (o.shape, _NP_OF_CODE[dtypes.CODE[o.dtype]],
                                       int(np.prod(o.shape, dtype=np.int64)) * dtypes.to_numpy(o.dtype).itemsize)
                           if None not in o.shape and o.dtype != "bf16" and not dtypes.is_quantized(o.dtype)
                           and 0 not in o.shape else None)
                          for o, c in zip(self._outputs, self._out_names)]
        self._cnames = {}
        self._tensor_arrays = {}
        self._out_t = _api.rlx_tensor()
        self._out_ref = ctypes.byref(self._out_t)

    def _infos(self, count_fn, info_fn):
        n = count_fn(self._ptr)
        out = []
        t = _api.rlx_tensor()
        for i in range(n):
            check(info_fn(self._ptr, i, ctypes.byref(t)))
            out.append(TensorInfo(t))
        return out

    _what = "exec"

    def _release(self, ptr):
        lib.rlx_exec_free(ptr)
        self._borrowed = {}

    @property
    def inputs(self):
        return list(self._inputs)

    @property
    def outputs(self):
        return list(self._outputs)

    @property
    def params(self):
        return list(self._params)

    # ---- running
    def _fill(self, feed):
        """The rlx_tensor array of feed, and the arrays it points into (kept
        alive until the call that reads them returns). Names, dtypes and
        shapes equal to the previous call's are not written again."""
        n = len(feed)
        slot = self._tensor_arrays.get(n)
        if slot is None:
            slot = self._tensor_arrays[n] = ((_api.rlx_tensor * max(1, n))(), [None] * n, [None] * n, [None] * n)
        tensors, keep, names, shapes = slot
        i = 0
        for name, value in feed.items():
            t = tensors[i]
            if type(value) is not np.ndarray or not value.flags.c_contiguous or name in self._bf16_inputs:
                value = self._convert(name, value)
            if names[i] is not name:
                cname = self._cnames.get(name)
                if cname is None:
                    cname = self._cnames[name] = cstr(name)
                t.name = cname
                names[i] = name
                shapes[i] = None
            key = (value.dtype, value.shape)
            if shapes[i] != key:
                code = _CODE_OF_NP.get(value.dtype)
                if code is None:
                    if value.dtype == np.uint16 and self._input_dtype.get(name) == "bf16":
                        code = _BF16
                    else:
                        raise TypeError("rlx: input %r: numpy dtype %s has no rlx dtype" % (name, value.dtype))
                t.dtype = code
                t.rank = value.ndim
                t.dims[:value.ndim] = value.shape
                t.bytes = value.nbytes
                shapes[i] = key
            t.data = _address(value)
            keep[i] = value
            i += 1
        return tensors, n, keep

    def _convert(self, name, value):
        dt = self._input_dtype.get(name)
        if dt is None:
            return np.ascontiguousarray(value)   # rlx names the unknown input
        if dt == "bf16" and isinstance(value, np.ndarray) and value.dtype not in (np.float32, np.uint16):
            return np.ascontiguousarray(value)   # its own dtype: rlx reports the mismatch
        if dt != "bf16" and isinstance(value, np.ndarray) and value.dtype in _CODE_OF_NP and \
                dtypes.name(value.dtype) != dt:
            return np.ascontiguousarray(value)   # its own dtype: rlx reports the mismatch
        return dtypes.host_array(value, dt)

    def run(self, feed=None, **inputs):
        """Runs with every input given by name; returns {output name: numpy array}."""
        if feed is None:
            feed = inputs
        elif inputs:
            feed = dict(feed, **inputs)
        tensors, n, keep = self._fill(feed)
        ptr = self._ptr
        if not ptr:
            self._live()
        st = _run(ptr, tensors, n)
        keep[:] = [None] * n
        if st:
            check(st)
        out = {}
        t, ref = self._out_t, self._out_ref
        for name, cname, static in self._out_plan:
            if static is not None:   # a static shape: one call copies it into a new array
                shape, npdt, nbytes = static
                a = _empty(shape, npdt)
                st = _read_output(ptr, cname, _address(a), nbytes)
                if st:
                    check(st)
                out[name] = a
                continue
            st = _output(ptr, cname, ref)
            if st:
                check(st)
            out[name] = _array_of(t)
        return out

    __call__ = run

    def prepare(self, feed=None, **inputs):
        """Compiles the specialization for these inputs' shapes without running.
        Each value is an array or a shape tuple (the input's own dtype)."""
        feed = dict(feed or {}, **inputs)
        shaped = {}
        for k, v in feed.items():
            if isinstance(v, tuple):
                v = np.zeros(v, dtypes.to_numpy(self._input_dtype.get(k, "f32")))
            shaped[k] = v
        arr, n, keep = self._fill(shaped)
        st = lib.rlx_exec_prepare(self._live(), arr, n)
        keep[:] = [None] * n
        check(st)

    def output(self, name):
        """Output `name` of the last run, as a new array."""
        check(lib.rlx_exec_output(self._live(), cstr(name), self._out_ref))
        return _array_of(self._out_t)

    def read_output(self, name, out):
        """Copies output `name` of the last run into the array out (C-contiguous, big enough)."""
        if not (isinstance(out, np.ndarray) and out.flags.c_contiguous and out.flags.writeable):
            raise ValueError("rlx: read_output needs a writeable C-contiguous numpy array")
        check(lib.rlx_exec_read_output(self._live(), cstr(name), out.ctypes.data_as(ctypes.c_void_p), out.nbytes))
        return out

    # ---- params
    def _param(self, name):
        p = self._param_by_name.get(name)
        if p is None:
            raise error_for_status(_api.RLX_STATUS_NOT_FOUND, "exec has no param %r (params: %s)" % (
                name, ", ".join(sorted(self._param_by_name)) or "none"))
        return p

    def set_param(self, name, value, dtype=None):
        """Copies value (array-like) into param `name`; dtype defaults to the param's."""
        p = self._param(name)
        dt = p.dtype if dtype is None else dtypes.name(dtype)
        a = value if isinstance(value, np.ndarray) and dt != "bf16" and not dtypes.is_quantized(dt) and \
            value.flags.c_contiguous and dtypes.name(value.dtype) == dt else dtypes.host_array(value, dt)
        if dt == "f32":
            check(lib.rlx_exec_set_param_f32(self._live(), cstr(name), a.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                             a.size))
        else:
            check(lib.rlx_exec_set_param(self._live(), cstr(name), dtypes.code(dt),
                                         a.ctypes.data_as(ctypes.c_void_p), a.nbytes))

    def set_params(self, params):
        for k, v in dict(params).items():
            self.set_param(k, v)

    def use_param_memory(self, name, array, dtype=None):
        """Param `name` reads `array` itself on the CPU (no copy; 16-byte aligned,
        unchanged while in use); the Exec keeps a reference until closed or set again."""
        p = self._param(name)
        dt = p.dtype if dtype is None else dtypes.name(dtype)
        if not isinstance(array, np.ndarray) or not array.flags.c_contiguous:
            raise ValueError("rlx: use_param_memory needs a C-contiguous numpy array")
        if array.ctypes.data % 16:
            raise ValueError("rlx: use_param_memory: param %r: the array's data is not 16-byte aligned" % name)
        check(lib.rlx_exec_use_param_memory(self._live(), cstr(name), dtypes.code(dt),
                                            array.ctypes.data_as(ctypes.c_void_p), array.nbytes))
        self._borrowed[name] = array

    def read_param(self, name):
        """Param `name`'s current value (after in-place updates) as a new array."""
        p = self._param(name)
        if dtypes.is_quantized(p.dtype):
            raw = np.empty(tensor_bytes(p.dtype, p.shape), np.uint8)
            check(lib.rlx_exec_read_param(self._live(), cstr(name), dtypes.code(p.dtype),
                                          raw.ctypes.data_as(ctypes.c_void_p), raw.nbytes))
            return raw
        holder = np.empty(p.shape, np.uint16 if p.dtype == "bf16" else dtypes.to_numpy(p.dtype))
        check(lib.rlx_exec_read_param(self._live(), cstr(name), dtypes.code(p.dtype),
                                      holder.ctypes.data_as(ctypes.c_void_p), holder.nbytes))
        return dtypes.bf16_to_f32(holder) if p.dtype == "bf16" else holder

    def save_params(self, path, metadata=None):
        """Every param (weights and optimizer state) to a safetensors checkpoint, atomically."""
        meta = [cstr(s) for kv in (metadata or {}).items() for s in kv]
        arr = (ctypes.c_char_p * max(1, len(meta)))(*meta)
        check(lib.rlx_exec_save_params(self._live(), cstr(str(path)), len(meta) // 2, arr))

    def load_params(self, path, allow_missing=False):
        """Sets params from a safetensors file by name (all checked before any is set)."""
        flags = _api.RLX_LOAD_ALLOW_MISSING if allow_missing else 0
        check(lib.rlx_exec_load_params(self._live(), cstr(str(path)), flags))

    # ---- reports
    def stats(self):
        s = _api.rlx_exec_stats()
        check(lib.rlx_exec_get_stats(self._live(), ctypes.byref(s)))
        d = {f: getattr(s, f) for f, _ in s._fields_}
        d["backend"] = (d["backend"] or b"").decode()
        d["device"] = (d["device"] or b"").decode()
        return d

    def report(self):
        """Per-step report of the last specialization (op, name, path, shapes)."""
        text = take_string(lib.rlx_exec_report(self._live()))
        if text is None:
            check(_api.RLX_STATUS_INVALID_ARGUMENT)
        return text

    def numerics(self):
        """The NaN/Inf check of the last run (compile with check_numerics=True), a dict."""
        r = _api.rlx_numerics_report()
        check(lib.rlx_exec_numerics(self._live(), ctypes.byref(r)))
        d = {f: getattr(r, f) for f, _ in r._fields_}
        for k in ("name", "op", "message"):
            d[k] = (d[k] or b"").decode()
        d["found"] = bool(d["found"])
        return d
