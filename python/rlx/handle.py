"""handle.py — the lifetime of an object that owns a C handle.

Graph, Exec, Model, Encoder and Onnx free their handle on close(), at the
end of a `with` block, or when collected; a closed one raises ValueError
when used. A subclass sets _what (for that message) and _release(ptr).
"""


class Handle:
    _ptr = None
    _what = "object"

    def _release(self, ptr):
        raise NotImplementedError

    def close(self):
        ptr = self._ptr
        self._ptr = None
        if ptr:
            self._release(ptr)

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _live(self):
        if not self._ptr:
            raise ValueError("rlx: this %s was closed" % self._what)
        return self._ptr
