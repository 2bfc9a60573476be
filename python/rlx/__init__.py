"""rlx — an embeddable ML compiler and runtime, from Python.

    import numpy as np, rlx
    g = rlx.Graph()
    x = g.input("x", "f32", ("batch", 4))
    w = g.param("w", "f32", (4, 3))
    g.output("y", rlx.relu(x @ w + 1.0))
    exe = g.compile(backend="cpu")
    exe.set_param("w", np.ones((4, 3), np.float32))
    y = exe.run(x=np.ones((2, 4), np.float32))["y"]

Graph building (Graph, Node, the op functions), compiling and running
(Exec), devices, GGUF language models (Model), Hugging Face encoders
(Encoder), ONNX models (Onnx) and training (Graph.gradients,
Graph.optimizer_step, Exec.save_params). Every failure raises an RlxError
subclass carrying the rlx status and message. docs/python.md has the rest.
"""
from . import _api
from ._lib import lib as _lib_handle, path as library_path
from .dtypes import NAMES as DTYPES
from .errors import (DeviceError, FormatError, InternalError, InvalidArgumentError, IoError, NotFoundError,
                     OutOfMemoryError, RlxError, ShapeError, UnsupportedError)
from .graph import Graph, Node
from .ops import *  # noqa: F401,F403  (one function per builder of rlx.h)
from .ops import ALL as _OPS
from .exec import Exec, TensorInfo, compile_options
from ._lib import status_name
from .misc import (Device, dtype_is_quantized, dtype_name, dtype_size, devices, npy_load, npy_loads, npy_save,
                   op_table, set_log_callback, tensor_bytes, version, vulkan_device_count, vulkan_device_describe)
from .misc import last_error_message as last_error
from .models import Encoder, Generation, Model, Onnx

__version__ = version()

__all__ = list(_OPS) + [
    "Graph", "Node", "Exec", "TensorInfo", "compile_options", "Model", "Generation", "Encoder", "Onnx",
    "Device", "devices", "vulkan_device_describe", "version", "op_table", "set_log_callback",
    "dtype_name", "dtype_size", "dtype_is_quantized", "tensor_bytes", "npy_load", "npy_loads", "npy_save", "DTYPES",
    "vulkan_device_count", "status_name", "last_error",
    "RlxError", "InvalidArgumentError", "ShapeError", "UnsupportedError", "OutOfMemoryError", "DeviceError",
    "IoError", "FormatError", "NotFoundError", "InternalError", "library_path",
]
