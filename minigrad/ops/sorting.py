"""Sorting and selecting by rank: argsort, sort, topk, kthvalue, median.

The positions come from a stable sort of the data (no gradient), and the values are read at
them with take_along_axis, so each value's gradient goes to the element it was read from. Equal
elements keep their order (stable), in both directions, so ties are resolved the same way on
every run and device.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np

from ..backend import backend_of
from ..tensor import LAST_AXIS, Tensor
from .common import axis_or_dim, constant, one_axis
from .indexing import take_along_axis
from .shape import reshape


def _stable_argsort(xp, data, axis: int, descending: bool):
    """Positions that sort `data` along axis, equal elements in their original order."""
    if descending:
        # sort the reversed axis ascending and reverse back: larger first, ties in order
        flipped = data[(slice(None),) * axis + (slice(None, None, -1),)]
        order = _stable_argsort(xp, flipped, axis, False)
        order = order[(slice(None),) * axis + (slice(None, None, -1),)]
        return (data.shape[axis] - 1) - order
    if xp is np:
        return np.argsort(data, axis=axis, kind="stable")
    return xp.argsort(data, axis=axis)                 # CuPy's sort is always stable


# The positions an operation reads x at, as int64, from x's array alone: each is computed
# again from the new array at every replay of a compiled step (a `constant` with a kernel).

def _order(axis: int, descending: bool, data):
    """The positions that sort `data` along axis (stable)."""
    return _stable_argsort(backend_of(data).xp, data, axis, descending).astype("int64")


def _leading(axis: int, largest: bool, k: int, data):
    """The positions of the k largest (or smallest) along axis, in order."""
    return _order(axis, largest, data)[(slice(None),) * axis + (slice(0, k),)]


def _kth(axis: int, k: int, data):
    """The position of the k-th smallest along axis, the axis kept as size 1."""
    return _order(axis, False, data)[(slice(None),) * axis + (slice(k - 1, k),)]


def _positions(kernel, x: Tensor) -> Tensor:
    """kernel = (function, *leading arguments) applied to x's array, as an int64 constant that
    a compiled step computes again from each replay's x."""
    function, *leading = kernel
    return constant(function(*leading, x.data), [x], kernel)


def _prepare(x: Tensor, axis, dim, op: str):
    axis = axis_or_dim(axis, dim, op)
    if axis is None:
        return reshape(x, -1), 0
    if x.ndim == 0:
        one_axis(axis, 0, op)
        return reshape(x, 1), 0
    return x, one_axis(axis, x.ndim, op)


def argsort(x: Tensor, axis: int | None = LAST_AXIS, *, dim: int | None = None,
            descending: bool = False, stable: bool = True) -> Tensor:
    """The positions that sort x along `axis` (or `dim`; the flattened tensor when None), as
    numpy.argsort and torch.argsort: int64, no gradient. Always stable: equal elements keep
    their order, also with `descending`. NaN sorts as the largest value."""
    shape = x.shape
    x, axis = _prepare(x, axis, dim, "argsort")
    order = _positions((_order, axis, bool(descending)), x)
    return reshape(order, shape) if not shape and order.size == 1 else order


class SortResult(NamedTuple):
    """(values, indices) of a sort, topk, kthvalue or median along a dim, as
    torch.return_types.sort and its kin: named fields, or unpack it as
    `values, indices = x.sort(dim=1)`."""
    values: Tensor
    indices: Tensor


_UNSET = object()


def sort(x: Tensor, *args, axis=_UNSET, dim: int | None = None, descending: bool | None = None,
         stable: bool | None = None):
    """x sorted along one axis (None: the flattened tensor), stable: equal elements keep their
    order, also with `descending`. Each value's gradient goes to the element it came from.

    The spelling decides the result, as for `max`: NumPy's `sort(x, axis=1)` gives the values;
    PyTorch's `sort(x, dim=1)`, or a call with `descending=`/`stable=` (PyTorch's keywords, the
    axis positional or left out: the last), gives a `SortResult` (values, indices). A bare
    `sort(x)` or `sort(x, 1)` means the values in NumPy and the pair in PyTorch, so it raises,
    saying which keyword to write. `descending` may also go with `axis=` (the values).
    """
    if len(args) > 1:
        raise TypeError(f"sort: takes one positional argument (the axis), got {len(args)}; "
                        f"write descending= and stable= by name")
    torch_keywords = descending is not None or stable is not None
    if args:
        if axis is not _UNSET or dim is not None:
            raise TypeError(f"sort: got the axis {args[0]!r} positionally and as "
                            f"{'axis' if axis is not _UNSET else 'dim'}=; pass it once")
        if not torch_keywords:
            given = args[0]
            raise TypeError(f"sort: sort(x, {given!r}) is ambiguous: NumPy's gives the values, "
                            f"PyTorch's (values, indices). Write sort(x, axis={given!r}) for the "
                            f"values, or sort(x, dim={given!r}) for (values, indices)")
        dim = args[0]
    elif axis is _UNSET and dim is None:
        if not torch_keywords:
            raise TypeError("sort: sort(x) is ambiguous: NumPy's gives the values, PyTorch's "
                            "(values, indices). Write sort(x, axis=-1) for the values, or "
                            "sort(x, dim=-1) for (values, indices)")
        dim = -1
    if axis is not _UNSET and dim is not None:
        raise TypeError(f"sort: got axis={axis!r} and dim={dim!r}; they name the same argument "
                        f"(NumPy's and PyTorch's spelling), pass one of them")
    shape = x.shape
    x, along = _prepare(x, dim if axis is _UNSET else axis, None, "sort")
    order = _positions((_order, along, bool(descending)), x)
    values = take_along_axis(x, order, along)
    if not shape and values.size == 1:                 # a 0-d tensor's one element, 0-d
        values, order = reshape(values, ()), reshape(order, ())
    if axis is not _UNSET:
        return values
    return SortResult(values, order)


def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """(values, indices) of the k largest (or, with largest=False, smallest) elements along
    `dim`, as torch.topk, in order; among equal elements the earlier position comes first.
    The values' gradient goes to the positions they were read from."""
    shape = x.shape
    x, axis = _prepare(x, dim, None, "topk")
    n = x.shape[axis]
    if not isinstance(k, numbers.Integral) or not 0 <= k <= n:
        raise ValueError(f"topk: k must be an int in [0, {n}] for dim {axis} of shape "
                         f"{tuple(x.shape)}, got {k!r}")
    index = _positions((_leading, axis, bool(largest), int(k)), x)
    values = take_along_axis(x, index, axis)
    if not shape and k == 1:                           # a 0-d tensor's one element, 0-d
        return SortResult(reshape(values, ()), reshape(index, ()))
    return SortResult(values, index)


def kthvalue(x: Tensor, k: int, dim: int = -1, keepdim: bool = False):
    """(values, indices) of the k-th smallest element (k = 1 is the minimum) along `dim`, as
    torch.kthvalue; among equal elements the earliest. The gradient goes to that position."""
    shape = x.shape
    x, axis = _prepare(x, dim, None, "kthvalue")
    n = x.shape[axis]
    if not isinstance(k, numbers.Integral) or not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be an int in [1, {n}] for dim {axis} of shape "
                         f"{tuple(shape)}, got {k!r}")
    index = _positions((_kth, axis, int(k)), x)                  # the axis kept as size 1
    return _selected(x, index, axis, shape, keepdim)


def _selected(x: Tensor, index: Tensor, axis: int, shape: tuple, keepdim: bool) -> SortResult:
    """x's values at `index` (the axis kept as size 1), with the index, shaped as PyTorch's
    selections along a dim are: 0-d for a 0-d x, the axis dropped unless keepdim."""
    values = take_along_axis(x, index, axis)
    if not shape:
        return SortResult(reshape(values, ()), reshape(index, ()))
    if not keepdim:
        kept = tuple(m for i, m in enumerate(values.shape) if i != axis)
        return SortResult(reshape(values, kept), reshape(index, kept))
    return SortResult(values, index)


def _median_position(axis: int, data):
    """The position of the lower median along axis (the axis kept as size 1), or of the first
    NaN in a slice that holds one."""
    position = _kth(axis, (data.shape[axis] + 1) // 2, data)
    if data.dtype.kind not in "fc":
        return position
    xp = backend_of(data).xp
    nan = xp.isnan(data)
    first_nan = nan.argmax(axis=axis, keepdims=True).astype("int64")
    return xp.where(nan.any(axis=axis, keepdims=True), first_nan, position)


def median(x: Tensor, dim: int | None = None, keepdim: bool = False):
    """The lower median, as torch.median: of all elements (a 0-d tensor) when dim is None,
    else (values, indices) along `dim`. Of an even count, the smaller of the two middle
    elements (NumPy's median averages them); a slice holding NaN gives NaN (at its first
    NaN). The gradient goes to the element chosen."""
    shape = x.shape
    x, axis = _prepare(x, dim, None, "median")
    if x.shape[axis] == 0:
        raise ValueError(f"median: no elements along dim {axis} of shape {tuple(shape)}")
    index = _positions((_median_position, axis), x)
    if dim is None:
        return reshape(take_along_axis(x, index, axis), ())
    return _selected(x, index, axis, shape, keepdim)
