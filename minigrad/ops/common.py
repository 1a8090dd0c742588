"""Helpers shared by the primitives: turning Python numbers and arrays into tensors."""

from __future__ import annotations

import numbers

import numpy as np

from ..backend import backend_of, is_array
from ..tensor import DEFAULT_FLOAT, Tensor


def lift(x, like: Tensor) -> Tensor:
    """`x` as a Tensor next to `like`: Python numbers are weak (they take like's dtype when the
    kinds agree, float32 when a float meets an integer tensor); arrays keep their dtype."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, numbers.Number):
        dtype = like.data.dtype
        if isinstance(x, bool):
            dtype = dtype if dtype.kind != "b" else np.bool_
        elif isinstance(x, numbers.Integral):
            dtype = dtype if dtype.kind in "iuf" else np.int64
        elif isinstance(x, numbers.Real):
            dtype = dtype if dtype.kind == "f" else np.dtype(DEFAULT_FLOAT)
        else:
            raise TypeError(f"complex number {x!r} is not supported")
        return Tensor._from_array(backend_of(like.data).asarray(x, dtype=dtype,
                                                                index=_index(like)))
    if is_array(x):
        return Tensor._from_array(x)
    raise TypeError(f"expected a Tensor, array or number, got {type(x).__name__}")


def pair(a, b) -> tuple[Tensor, Tensor]:
    if isinstance(a, Tensor):
        return a, (b if isinstance(b, Tensor) else lift(b, a))
    if isinstance(b, Tensor):
        return lift(a, b), b
    raise TypeError(f"expected at least one Tensor, got {type(a).__name__} and "
                    f"{type(b).__name__}")


def _index(t: Tensor):
    device = t.device
    return int(device.split(":")[1]) if ":" in device else None


def constant(array) -> Tensor:
    """A Tensor that never requires grad (masks, signs): a constant in every graph."""
    return Tensor._from_array(array)


def normalize_axis(axis, ndim: int, op: str):
    """axis as a tuple of non-negative ints (None = all axes), or a clear error."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    out = []
    for a in axes:
        if not isinstance(a, numbers.Integral):
            raise TypeError(f"{op}: axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"{op}: axis {a} is out of range for a {ndim}-d tensor")
        out.append(int(a) % max(ndim, 1))
    return tuple(out)
