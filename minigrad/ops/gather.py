"""Reading and writing at computed positions: take_along_axis, gather, index_select,
masked_select, nonzero, and scatter, scatter_add, scatter_reduce.

The reads are x[index] with an index built from the positions, so their gradient is indexing's:
scattered back with repeated positions adding up. The writes are the adjoints of those reads
(scatter_add) or the primitive ScatterReduce.
"""

from __future__ import annotations

import numpy as np

from ..tensor import Tensor
from .common import one_axis
from .indexing import getitem


def _positions(indices, like: Tensor, op: str):
    """`indices` (a Tensor, array or nested list of ints) as an integer array on like's
    device."""
    if isinstance(indices, Tensor):
        if indices.device != like.device:
            raise RuntimeError(f"{op}: indices on {indices.device}, tensor on {like.device}")
    else:
        indices = Tensor(indices, device=like.device)
    data = indices.data
    if data.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {data.dtype}")
    return data


def _check_range(index, n: int, axis: int, shape, op: str) -> None:
    """IndexError naming `op` unless every index lies in [−n, n)."""
    if not index.size:
        return
    low, high = int(index.min()), int(index.max())
    if low < -n or high >= n:
        bad = high if high >= n else low
        raise IndexError(f"{op}: index {bad} is out of range for axis {axis} of length {n} "
                         f"(shape {tuple(shape)})")


def _grid(xp, shape, axis: int, index):
    """The index tuple that reads `index` along `axis` and every position of the other axes of
    `shape` as it is: (arange(n₀)[:, None, …], …, index, …), broadcasting together."""
    parts = []
    for i, n in enumerate(shape):
        if i == axis:
            parts.append(index)
        else:
            parts.append(xp.arange(n).reshape(tuple(n if j == i else 1
                                                    for j in range(len(shape)))))
    return tuple(parts)


def take_along_axis(x: Tensor, indices, axis: int | None = -1) -> Tensor:
    """out[…, i, …] = x[…, indices[…, i, …], …] along `axis`, as numpy.take_along_axis:
    `indices` has x's number of axes and broadcasts against x on the others (with axis None,
    x is flattened). E.g. the values at argsort's positions. The gradient scatter-adds back
    (an element read twice gets both gradients)."""
    if axis is None:
        from .shape import reshape
        x, axis = reshape(x, -1), 0
    index = _positions(indices, x, "take_along_axis")
    if index.ndim != x.ndim:
        raise ValueError(f"take_along_axis: indices of shape {tuple(index.shape)} need as many "
                         f"axes as the tensor of shape {tuple(x.shape)}")
    if x.ndim == 0:
        raise ValueError("take_along_axis: needs at least one axis, got a 0-d tensor")
    axis = one_axis(axis, x.ndim, "take_along_axis")
    _check_range(index, x.shape[axis], axis, x.shape, "take_along_axis")
    try:
        np.broadcast_shapes(tuple(n for i, n in enumerate(x.shape) if i != axis),
                            tuple(n for i, n in enumerate(index.shape) if i != axis))
    except ValueError:
        raise ValueError(f"take_along_axis: indices of shape {tuple(index.shape)} do not "
                         f"broadcast against shape {tuple(x.shape)} off axis {axis}") from None
    return getitem(x, _grid(x.xp, x.shape, axis, index))
