"""misc.py — library-wide calls: version, op table, devices, logging, dtype
queries and numpy .npy files through rlx's own reader and writer."""
import ctypes

import numpy as np

from . import _api, dtypes
from ._lib import _libc, check, cstr, last_error, lib, take_string
from .errors import error_for_status


def version():
    return lib.rlx_version().decode()


def op_table():
    """[(name, arity, doc)] of every op rlx's IR has (arity -1: variadic)."""
    out = []
    for i in range(lib.rlx_op_count()):
        out.append((lib.rlx_op_name(i).decode(), lib.rlx_op_arity(i), lib.rlx_op_doc(i).decode()))
    return out


def dtype_name(dtype):
    return lib.rlx_dtype_name(dtypes.code(dtype)).decode()


def dtype_size(dtype):
    """Bytes per element; 0 for block-quantized dtypes."""
    return lib.rlx_dtype_size(dtypes.code(dtype))


def dtype_is_quantized(dtype):
    return bool(lib.rlx_dtype_is_quantized(dtypes.code(dtype)))


def tensor_bytes(dtype, shape):
    """Bytes of a tensor of this dtype and shape (whole blocks for quantized dtypes); 0 if it does not fit."""
    shape = tuple(int(d) for d in shape)
    dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    return lib.rlx_tensor_bytes(dtypes.code(dtype), len(shape), dims if shape else None)


class Device:
    """One of rlx.devices(): the fields of rlx_device_info (name, kind, backend, backend_index, usable, ...)."""

    def __init__(self, index, info):
        self.index = index
        for f, _ in info._fields_:
            v = getattr(info, f)
            setattr(self, f, v.decode() if isinstance(v, bytes) else v)
        self.kind = {0: "cpu", 1: "gpu", 2: "software_gpu"}.get(info.kind, info.kind)
        self.backend = {1: "cpu", 2: "vulkan"}.get(info.backend, info.backend)
        self.usable = bool(info.usable)

    def __repr__(self):
        return "Device(%d, %r, %s, %s%s)" % (self.index, self.name, self.kind, self.backend,
                                               "" if self.usable else ", unusable: " + self.unusable_reason)


def devices():
    """Every device rlx can use here: the CPU first, then each Vulkan device."""
    out = []
    for i in range(lib.rlx_device_count()):
        info = _api.rlx_device_info()
        check(lib.rlx_device_get_info(i, ctypes.byref(info)))
        out.append(Device(i, info))
    return out


def vulkan_device_describe(i):
    """The text `rlx devices` prints for Vulkan device i."""
    text = take_string(lib.rlx_vulkan_device_describe(int(i)))
    if text is None:
        raise error_for_status(_api.RLX_STATUS_DEVICE, last_error())
    return text


_log_keep = []
_LEVELS = {"debug": 0, "info": 1, "warn": 2, "warning": 2, "error": 3, "off": 4}


def set_log_callback(fn, min_level="warn"):
    """Routes rlx's log messages to fn(level_name, message); None restores the
    default (warnings and errors to stderr)."""
    level = _LEVELS[min_level] if isinstance(min_level, str) else int(min_level)
    if fn is None:
        lib.rlx_set_log_callback(_api.rlx_log_fn(), None, level)   # a NULL callback: the default
        _log_keep.clear()
        return
    names = {0: "debug", 1: "info", 2: "warn", 3: "error"}

    def tramp(lv, msg, _user):
        try:
            fn(names.get(lv, str(lv)), ctypes.string_at(msg).decode("utf-8", "replace"))
        except Exception:   # an exception cannot cross into C
            pass
    cb = _api.rlx_log_fn(tramp)
    lib.rlx_set_log_callback(cb, None, level)
    _log_keep[:] = [cb]


def npy_load(path):
    """A .npy file through rlx's reader, as a numpy array."""
    t = _api.rlx_tensor()
    check(lib.rlx_npy_load(cstr(str(path)), ctypes.byref(t)))
    return _take_tensor(t)


def npy_loads(data):
    """A .npy file's bytes (in memory) through rlx's reader, as a numpy array."""
    data = bytes(data)
    t = _api.rlx_tensor()
    check(lib.rlx_npy_load_memory(data, len(data), ctypes.byref(t)))
    return _take_tensor(t)


def _take_tensor(t):
    """A tensor whose data rlx malloc'ed, as a numpy array; the data is freed."""
    from .exec import _array_of   # exec imports this module
    try:
        return _array_of(t)
    finally:
        _libc.free(t.data)


def vulkan_device_count():
    """Vulkan devices here (0 when there is no Vulkan; rlx.last_error() says why)."""
    return lib.rlx_vulkan_device_count()


def last_error_message():
    """rlx_last_error() of this thread: the message of the last failure ("" when none)."""
    return last_error()


def npy_save(path, array):
    """array to a .npy file (version 1.0, C order, atomic) through rlx's writer."""
    a = np.ascontiguousarray(array)
    t = _api.rlx_tensor()
    t.dtype = dtypes.code(a.dtype)
    t.rank = a.ndim
    t.dims[:a.ndim] = a.shape
    t.data = a.ctypes.data
    t.bytes = a.nbytes
    check(lib.rlx_npy_save(cstr(str(path)), ctypes.byref(t)))
