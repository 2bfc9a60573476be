"""_lib.py — loads librlx and declares its functions from _api.py.

The library is looked up in this order: the file named by the RLX_LIBRARY
environment variable; the copy bundled beside this module by `pip install`;
the repository's build/librlx.so.0 when the package is used from a source
checkout. check() turns a failed rlx_status into the matching exception.
"""
import ctypes
import os

from . import _api
from .errors import error_for_status


def _candidates():
    env = os.environ.get("RLX_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    return [os.path.join(here, "librlx.so.0"),
            os.path.join(os.path.dirname(os.path.dirname(here)), "build", "librlx.so.0")]


def _load():
    tried = []
    for path in _candidates():
        if os.path.exists(path):
            lib = ctypes.CDLL(path)
            break
        tried.append(path)
    else:
        raise ImportError("rlx: librlx.so.0 not found (looked at %s); pip install the package, "
                          "build the library with `make`, or set RLX_LIBRARY" % ", ".join(tried))
    for name, (restype, argtypes, _names, _doc) in _api.FUNCTIONS.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    lib.rlx_last_error.restype = ctypes.c_char_p
    return lib, path


lib, path = _load()
_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


def last_error():
    return lib.rlx_last_error().decode("utf-8", "replace")


def check(status, what=None):
    """Raises the exception of a failed status, with rlx's message."""
    if status != 0:
        raise error_for_status(status, last_error(), what, status_name(status))


def status_name(status):
    """rlx_status_name: "RLX_STATUS_SHAPE", ...; "RLX_STATUS_UNKNOWN" for another number."""
    return lib.rlx_status_name(int(status)).decode()


def take_string(ptr):
    """A malloc'ed C string as str, freed; None for NULL."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        _libc.free(ptr)


def cstr(s):
    if s is None:
        return None
    if isinstance(s, bytes):
        return s
    return str(s).encode("utf-8")
