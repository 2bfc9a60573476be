"""train.py — rlx_optimizer_options from keywords, for Graph.optimizer_step."""
import ctypes

from . import _api
from ._lib import check, lib

_KINDS = {"sgd": _api.RLX_OPT_SGD, "adamw": _api.RLX_OPT_ADAMW}


def optimizer_options(kind="adamw", **options):
    """PyTorch's defaults for kind ("sgd" or "adamw"), then each keyword set
    (momentum, nesterov, beta1, beta2, eps, weight_decay, clip_norm,
    accumulate, loss_scale, loss_scale_interval)."""
    k = _KINDS.get(kind, kind) if isinstance(kind, str) else int(kind)
    if isinstance(k, str):
        raise ValueError("rlx: optimizer %r is not sgd or adamw" % kind)
    o = _api.rlx_optimizer_options()
    check(lib.rlx_optimizer_options_init(ctypes.byref(o), k))
    fields = {f for f, _ in o._fields_} - {"kind"}
    for key, value in options.items():
        if key not in fields:
            raise TypeError("rlx: unknown optimizer option %r (options: %s)" % (key, ", ".join(sorted(fields))))
        setattr(o, key, value)
    return o
