"""slicing.py — Node.__getitem__: numpy basic indexing on graph nodes.

x[1:3], x[:, ::2], x[..., -1], x[None] and x[2] (an int drops its dim) are
built from rlx_slice (one per sliced axis), rlx_reshape (dropped and added
dims) and rlx_flip (a negative step). Negative indices and bounds count from
the end of a static dim; on a symbolic dim only x[..., -k:] style slices of
the end (rlx_slice_last) and full slices work. Advanced (array) indexing is
rlx.gather / rlx.gather_rows.
"""
from . import ops


def _normalize(index, rank):
    if not isinstance(index, tuple):
        index = (index,)
    if sum(1 for i in index if i is Ellipsis) > 1:
        raise IndexError("rlx: an index can have only one ellipsis")
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > rank:
        raise IndexError("rlx: %d indices for a rank-%d tensor" % (used, rank))
    out = []
    for i in index:
        if i is Ellipsis:
            out.extend([slice(None)] * (rank - used))
        else:
            out.append(i)
    if Ellipsis not in index:
        out.extend([slice(None)] * (rank - used))
    return out


def getitem(x, index):
    shape = list(x.shape)
    items = _normalize(index, len(shape))
    axis = 0           # axis of x the next item applies to
    final = []         # the result's dims: ints or symbol names
    drop_or_add = False
    for it in items:
        if it is None:
            final.append(1)
            drop_or_add = True
            continue
        dim = shape[axis]
        if isinstance(it, slice):
            start, stop, step = it.start, it.stop, it.step
            step = 1 if step is None else int(step)
            if step == 0:
                raise ValueError("rlx: slice step cannot be zero")
            if isinstance(dim, int):
                s0, s1, st = slice(start, stop, step).indices(dim)
                if step < 0:
                    # the reversed axis, then a forward slice over it
                    x = ops.flip(x, axis)
                    s0, s1 = dim - 1 - s0, dim - 1 - s1
                    st = -step
                n = max(0, (s1 - s0 + st - 1) // st)
                if (s0, n, st) != (0, dim, 1):
                    x = ops.slice(x, axis, s0, s0 + (n - 1) * st + 1 if n > 0 else s0, st)
                final.append(n)
            else:   # a symbolic dim: a full slice, or the last k entries
                if step != 1 or stop is not None or (start is not None and int(start) >= 0):
                    raise IndexError("rlx: on symbolic dim %r only [:] and [-k:] slices are supported" % (dim,))
                if start is None:
                    final.append(dim)
                else:
                    x = ops.slice_last(x, axis, -int(start))
                    final.append(-int(start))
            axis += 1
        else:
            try:
                i = int(it)
            except TypeError:
                raise IndexError("rlx: index %r is not an int, slice, None or ...; use gather for arrays" % (it,)) \
                    from None
            if not isinstance(dim, int):
                if i != -1:
                    raise IndexError("rlx: on symbolic dim %r only the index -1 is supported" % (dim,))
                x = ops.slice_last(x, axis, 1)
            else:
                if not -dim <= i < dim:
                    raise IndexError("rlx: index %d is out of range for a dim of %d" % (i, dim))
                if i < 0:
                    i += dim
                x = ops.slice(x, axis, i, i + 1, 1)
            drop_or_add = True
            axis += 1
    if drop_or_add:
        symbols = [d for d in final if not isinstance(d, int)]
        if len(symbols) > 1:
            raise IndexError("rlx: dropping or adding dims beside two symbolic dims needs an explicit reshape")
        x = ops.reshape(x, tuple(-1 if not isinstance(d, int) else d for d in final) if symbols else tuple(final))
    return x
