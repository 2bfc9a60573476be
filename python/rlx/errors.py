"""errors.py — the exceptions rlx raises: one class per rlx_status.

Every failed call raises a subclass of RlxError carrying the status (its
number and its name) and rlx_last_error()'s message, which says what, where
and why. Each class also derives from the matching built-in exception, so
`except ValueError` catches a bad shape.
"""


class RlxError(Exception):
    """A failed rlx call: .status (int), .status_name ("RLX_STATUS_SHAPE") and .message."""
    status = -1
    status_name = "RLX_STATUS_UNKNOWN"

    def __init__(self, message, status=None, status_name=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if status_name is not None:
            self.status_name = status_name

    def __str__(self):
        return "%s: %s" % (self.status_name, self.message)


class InvalidArgumentError(RlxError, ValueError):
    status, status_name = 1, "RLX_STATUS_INVALID_ARGUMENT"


class ShapeError(RlxError, ValueError):
    status, status_name = 2, "RLX_STATUS_SHAPE"


class UnsupportedError(RlxError, NotImplementedError):
    status, status_name = 3, "RLX_STATUS_UNSUPPORTED"


class OutOfMemoryError(RlxError, MemoryError):
    status, status_name = 4, "RLX_STATUS_OUT_OF_MEMORY"


class DeviceError(RlxError, RuntimeError):
    status, status_name = 5, "RLX_STATUS_DEVICE"


class IoError(RlxError, OSError):
    status, status_name = 6, "RLX_STATUS_IO"


class FormatError(RlxError, ValueError):
    status, status_name = 7, "RLX_STATUS_FORMAT"


class NotFoundError(RlxError, LookupError):
    status, status_name = 8, "RLX_STATUS_NOT_FOUND"


class InternalError(RlxError, RuntimeError):
    status, status_name = 9, "RLX_STATUS_INTERNAL"


_BY_STATUS = {c.status: c for c in (InvalidArgumentError, ShapeError, UnsupportedError, OutOfMemoryError,
                                    DeviceError, IoError, FormatError, NotFoundError, InternalError)}


def error_for_status(status, message, what=None, name=None):
    cls = _BY_STATUS.get(status)
    if what and not message:
        message = what
    if not message:
        message = "(no message)"
    if cls is None:
        return RlxError(message, status, "%s(%d)" % (name or "RLX_STATUS_UNKNOWN", status))
    return cls(message)
