"""dtypes.py — rlx dtypes and numpy dtypes, both ways.

An rlx dtype is written as its rlx name ("f32", "i32", "q4_K", ...), a
numpy dtype or type (np.float32), or a numpy name ("float32"). Nodes and
tensors report rlx names. numpy has no bfloat16: a bf16 tensor comes out as
float32 (exact), and goes in from float32 (rounded to nearest even) or from
uint16 holding the bits. Block-quantized dtypes (GGUF's q4_0 ... q8_K) exist
for params only and go in as raw bytes (uint8).
"""
import numpy as np

from . import _api

NAMES = ["f32", "f16", "bf16", "f64", "i32", "i64", "u8", "bool", "i8",
         "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q2_K", "q3_K", "q4_K", "q5_K", "q6_K", "q8_K"]
CODE = {n: i for i, n in enumerate(NAMES)}
assert len(NAMES) == _api.RLX_DTYPE_COUNT

_TO_NUMPY = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32, "i64": np.int64,
             "u8": np.uint8, "bool": np.bool_, "i8": np.int8}
_FROM_NUMPY = {np.dtype(v): k for k, v in _TO_NUMPY.items()}
_ALIASES = {"float32": "f32", "float16": "f16", "half": "f16", "float64": "f64", "double": "f64",
            "int32": "i32", "int64": "i64", "uint8": "u8", "int8": "i8", "bool_": "bool",
            "bfloat16": "bf16", "float": "f32"}


def code(dtype):
    """The rlx_dtype number of any dtype spelling; ValueError for an unknown one."""
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if 0 <= dtype < len(NAMES):
            return dtype
        raise ValueError("rlx: no dtype %d" % dtype)
    if isinstance(dtype, str):
        name = _ALIASES.get(dtype, dtype)
        if name in CODE:
            return CODE[name]
        lowered = {k.lower(): v for k, v in CODE.items()}
        if name.lower() in lowered:
            return lowered[name.lower()]
    try:
        nd = np.dtype(dtype)
    except TypeError:
        raise ValueError("rlx: %r is not a dtype" % (dtype,)) from None
    if nd.byteorder == ">":
        raise ValueError("rlx: big-endian arrays are not supported (%s)" % nd)
    name = _FROM_NUMPY.get(nd.newbyteorder("="))
    if name is None:
        raise ValueError("rlx: numpy dtype %s has no rlx dtype (rlx has %s)" % (nd, ", ".join(NAMES[:9])))
    return CODE[name]


def name(dtype):
    return NAMES[code(dtype)]


def to_numpy(dtype):
    """numpy dtype that holds this rlx dtype's values (bf16 -> float32, quantized -> uint8 bytes)."""
    n = name(dtype)
    if n == "bf16":
        return np.dtype(np.float32)
    if n in _TO_NUMPY:
        return np.dtype(_TO_NUMPY[n])
    return np.dtype(np.uint8)


def is_quantized(dtype):
    return code(dtype) >= CODE["q4_0"]


def bf16_bits(a):
    """float32 array -> uint16 bf16 bits, rounded to nearest even (NaN kept NaN)."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    u = a.view(np.uint32)
    rounded = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = np.isnan(a)
    if nan.any():
        rounded[nan] = (u[nan] >> np.uint32(16)).astype(np.uint16) | np.uint16(0x0040)
    return rounded


def bf16_to_f32(bits):
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def host_array(value, dtype):
    """value as a C-contiguous numpy array laid out as rlx dtype `dtype`: the
    array itself when it already is (no copy), else converted."""
    n = name(dtype)
    if n == "bf16":
        a = np.asarray(value)
        if a.dtype == np.uint16:
            return np.ascontiguousarray(a)
        return bf16_bits(a)
    if is_quantized(n):
        if isinstance(value, (bytes, bytearray, memoryview)):
            return np.frombuffer(value, dtype=np.uint8)
        return np.ascontiguousarray(value).view(np.uint8).reshape(-1)
    return np.ascontiguousarray(value, dtype=_TO_NUMPY[n])
