"""Primitives that move elements without changing them: reshape, transpose, broadcast, sum_to,
concat, stack, split, device and dtype moves."""

from __future__ import annotations

import functools
import numbers

import numpy as np

from .. import autograd
from ..autograd import Function
from ..backend import backend_of, parse_device
from ..tensor import FIRST_AXIS, Tensor
from .common import AxisError, axis_or_dim, normalize_axis, one_axis


class Reshape(Function):
    """y = x viewed with another shape (same elements, row-major order)."""

    needs_output = False

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        return x.reshape(self.shape)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x is the identity on elements: reshape the gradient back
        return g.reshape(self.inputs[0].shape)


def reshape(x: Tensor, *shape) -> Tensor:
    """The same elements in another shape, row-major: `reshape(x, 2, 6)` or
    `reshape(x, (2, 6))`; one entry may be -1 (inferred). x itself when the shape is unchanged."""
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = tuple(shape[0])
    if shape == x.shape:
        return x
    return Reshape.apply(x, shape=shape)


class Transpose(Function):
    """y = x with its axes permuted: y.shape[i] = x.shape[axes[i]]."""

    needs_output = False

    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        return x.transpose(self.axes)

    def backward(self, grad):
        (g,) = self.values(grad)
        # a permutation's adjoint is its inverse: ∂L/∂x = transpose(∂L/∂y, axes⁻¹)
        return g.transpose(_inverse_permutation(self.axes))


@functools.lru_cache(maxsize=256)
def _inverse_permutation(axes: tuple) -> tuple:
    inverse = [0] * len(axes)
    for position, axis in enumerate(axes):
        inverse[axis] = position
    return tuple(inverse)


_REVERSED_AXES = [tuple(range(n - 1, -1, -1)) for n in range(65)]   # x.T for each ndim


def transpose(x: Tensor, *axes) -> Tensor:
    """Permute axes; with no axes, reverse them (x.T)."""
    if not axes:
        return Transpose.apply(x, axes=_REVERSED_AXES[x.ndim])
    if len(axes) == 1 and not isinstance(axes[0], numbers.Integral):
        axes = tuple(axes[0])
    if not axes:
        axes = _REVERSED_AXES[x.ndim]
    for a in axes:
        if not -x.ndim <= a < max(x.ndim, 1):
            raise AxisError(f"transpose: axis {a} is out of range for a {x.ndim}-d tensor")
    if sorted(a % max(x.ndim, 1) for a in axes) != list(range(x.ndim)):
        raise ValueError(f"transpose: axes {axes} are not a permutation of the "
                         f"{x.ndim} axes of shape {tuple(x.shape)}")
    return Transpose.apply(x, axes=tuple(a % x.ndim for a in axes))


def swapaxes(x: Tensor, axis1: int, axis2: int) -> Tensor:
    """x with two axes exchanged: (A, B, C) with axes 0 and 2 gives (C, B, A)."""
    axes = list(range(x.ndim))
    axis1, axis2 = normalize_axis((axis1, axis2), x.ndim, "swapaxes")
    if x.ndim == 0:                      # NumPy's rule: a 0-d array has no axis to exchange
        raise AxisError(f"swapaxes: axes {axis1} and {axis2} are out of range for a 0-d "
                        f"tensor")
    axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
    return Transpose.apply(x, axes=tuple(axes))


def squeeze(x: Tensor, axis=None, *, dim=None) -> Tensor:
    """Drop the size-1 axis `axis` (or `dim`; an int or a tuple), or all size-1 axes when None.

    Naming an axis whose size is not 1 raises ValueError (NumPy's rule). A 0-d tensor accepts
    axis 0 and -1 (PyTorch's rule) and comes back unchanged.
    """
    axis = axis_or_dim(axis, dim, "squeeze")
    if x.ndim == 0:                      # nothing to drop; 0 and -1 name the one element
        for a in () if axis is None else axis if isinstance(axis, (tuple, list)) else (axis,):
            one_axis(a, 0, "squeeze")
        return x
    axes = normalize_axis(axis, x.ndim, "squeeze")
    for a in axes:
        if axis is not None and x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} of shape {tuple(x.shape)} has size "
                             f"{x.shape[a]}, not 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if not (i in axes and n == 1)))


def unsqueeze(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Insert a size-1 axis at `axis` (or `dim`; negative counts from the end of the result):
    (3, 4) with axis=1 gives (3, 1, 4)."""
    axis = axis_or_dim(axis, dim, "unsqueeze")
    if axis is None:
        raise TypeError("unsqueeze: missing the axis to insert (axis= or dim=)")
    ndim = x.ndim + 1
    if not -ndim <= axis < ndim:
        raise AxisError(f"unsqueeze: axis {axis} is out of range for a result with {ndim} axes")
    axis %= ndim
    return reshape(x, x.shape[:axis] + (1,) + x.shape[axis:])


class BroadcastTo(Function):
    """y = x broadcast to `shape` (NumPy rules)."""

    needs_output = False

    def __init__(self, shape):
        self.shape = shape

    def forward(self, x):
        return self.xp.broadcast_to(x, self.shape)

    def backward(self, grad):
        # ∂L/∂x_i = Σ_{j copied from i} ∂L/∂y_j: each element of x was copied to several
        # places, so add their gradients (the engine sums every gradient to its input's shape)
        (g,) = self.values(grad)
        return g


def broadcast_to(x: Tensor, shape) -> Tensor:
    """x repeated to `shape` by NumPy's broadcasting rules: (3, 1) to (2, 3, 4). The gradient
    sums the copies back (see `sum_to`)."""
    shape = tuple(shape)
    if shape == x.shape:
        return x
    _check_broadcastable(x.shape, shape, "broadcast_to")
    return BroadcastTo.apply(x, shape=shape)


def _check_broadcastable(small, large, op):
    extra = len(large) - len(small)
    if extra < 0 or any(s not in (1, n) for s, n in zip(small, large[extra:])):
        raise ValueError(f"{op}: shape {tuple(small)} cannot be broadcast to {tuple(large)}")


def sum_to_array(g, shape, owner: str = "sum_to"):
    """Sum array `g` down to `shape`, undoing NumPy broadcasting (works on any backend)."""
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    if extra > 0 and g.shape[extra:] == shape:          # broadcast over leading axes (a bias)
        return g.sum(axis=_LEADING_AXES[extra])
    if extra < 0 or any(s not in (1, n) for s, n in zip(shape, g.shape[extra:])):
        raise ValueError(f"{owner}: gradient of shape {tuple(g.shape)} cannot be summed to the "
                         f"input shape {tuple(shape)}")
    axes = tuple(range(extra)) + tuple(extra + i for i, s in enumerate(shape)
                                       if s == 1 and g.shape[extra + i] != 1)
    return g.sum(axis=axes).reshape(shape) if axes else g.reshape(shape)


class SumTo(Function):
    """y = x summed down to `shape` (the adjoint of broadcast_to)."""

    def __init__(self, shape, owner="sum_to"):
        self.shape, self.owner = shape, owner

    def forward(self, x):
        return sum_to_array(x, self.shape, self.owner)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x = 1 for every element summed into each output: broadcast back
        return self.ops.broadcast_to(g, self.inputs[0].shape)


def sum_to(x: Tensor, shape, owner: str = "sum_to") -> Tensor:
    """x summed down to `shape`, the adjoint of broadcasting: (2, 3, 4) to (3, 1) sums axis 0
    and axis 2. `owner` names the operation in the error when the shapes do not fit."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    return SumTo.apply(x, shape=shape, owner=owner)


_LEADING_AXES = [tuple(range(n)) for n in range(65)]
autograd._sum_to_array, autograd._sum_to_tensor = sum_to_array, sum_to    # used by the walk


class Concat(Function):
    """y = [x₁, x₂, …] joined along `axis`."""

    needs_output = False

    def __init__(self, axis):
        self.axis = axis

    def forward(self, *xs):
        return self.xp.concatenate(xs, axis=self.axis)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x_k is the identity into x_k's slice: x_k receives the slice of grad where it sits
        index = [slice(None)] * g.ndim
        parts, start = [], 0
        for x in self.inputs:
            stop = start + x.shape[self.axis]
            index[self.axis] = slice(start, stop)
            parts.append(g[tuple(index)])
            start = stop
        return tuple(parts)


def concat(tensors, axis: int = FIRST_AXIS, *, dim: int | None = None) -> Tensor:
    """Join tensors along an existing axis `axis` (or `dim`): shapes must agree elsewhere.

    (2, 3) and (4, 3) with axis=0 give (6, 3). `cat` is the same function (PyTorch's name).
    """
    axis = axis_or_dim(axis, dim, "concat")
    tensors = list(tensors)
    _check_joinable(tensors, axis, "concat", same_shape=False)
    axis = normalize_axis(axis, tensors[0].ndim, "concat")[0]
    return Concat.apply(*tensors, axis=axis)


cat = concat        # PyTorch's name for the same function


class Stack(Function):
    """y = [x₁, x₂, …] stacked along a new axis."""

    needs_output = False

    def __init__(self, axis):
        self.axis = axis

    def forward(self, *xs):
        return self.xp.stack(xs, axis=self.axis)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y[k]/∂x_k = identity: input k receives the k-th slice along the new axis
        index = [slice(None)] * g.ndim
        parts = []
        for k in range(len(self.inputs)):
            index[self.axis] = k
            parts.append(g[tuple(index)])
        return tuple(parts)


def stack(tensors, axis: int = FIRST_AXIS, *, dim: int | None = None) -> Tensor:
    """Join same-shaped tensors along a new axis `axis` (or `dim`): k tensors of (3, 4) with
    axis=0 give (k, 3, 4)."""
    axis = axis_or_dim(axis, dim, "stack")
    tensors = list(tensors)
    _check_joinable(tensors, axis, "stack", same_shape=True)
    ndim = tensors[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise AxisError(f"stack: axis {axis} is out of range for a result with {ndim} axes")
    return Stack.apply(*tensors, axis=axis % ndim)


def _check_joinable(tensors, axis, op, same_shape):
    if not tensors:
        raise ValueError(f"{op}: needs at least one tensor")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
    first = tensors[0].shape
    for t in tensors[1:]:
        if same_shape:
            bad = t.shape != first
        else:
            bad = len(t.shape) != len(first) or any(
                a != b for i, (a, b) in enumerate(zip(t.shape, first))
                if i != axis % max(len(first), 1))
        if bad:
            shapes = ", ".join(str(tuple(x.shape)) for x in tensors)
            raise ValueError(f"{op}: shapes do not fit together along axis {axis}: {shapes}")


def split(x: Tensor, sections_or_indices, axis: int = FIRST_AXIS, *,
          dim: int | None = None) -> list[Tensor]:
    """NumPy's split along `axis` (or `dim`): an int n gives n equal parts, a list the cut points.

    (6, 4) split 3 along axis 0 gives three (2, 4) tensors; [1, 4] gives (1, 4), (3, 4), (2, 4).
    NumPy's meaning also with `dim=`: an int is the number of parts, not PyTorch's part size.
    """
    from .indexing import getitem
    axis = axis_or_dim(axis, dim, "split")
    axis = normalize_axis(axis, x.ndim, "split")[0]
    length = x.shape[axis]
    if isinstance(sections_or_indices, numbers.Integral):
        n = int(sections_or_indices)
        if n <= 0 or length % n:
            raise ValueError(f"split: axis {axis} of shape {tuple(x.shape)} does not divide "
                             f"into {n} equal parts")
        bounds = [length // n * k for k in range(1, n)]
    else:
        bounds = [int(b) for b in sections_or_indices]
    starts, stops = [0] + bounds, bounds + [length]
    prefix = (slice(None),) * axis
    return [getitem(x, prefix + (slice(a, b),)) for a, b in zip(starts, stops)]


class ToDevice(Function):
    """y = x copied to another device; the gradient is copied back."""

    def __init__(self, device):
        self.device = device

    def forward(self, x):
        backend, index = parse_device(self.device)
        source = backend_of(x)
        if source is backend and not backend.multi_device:
            return x
        return backend.from_numpy(source.to_numpy(x), index)

    def backward(self, grad):
        # ∂y/∂x = identity (same values, another device): copy the gradient back
        return to_device(grad, self.inputs[0].device)


def to_device(x: Tensor, device) -> Tensor:
    device = str(device)
    if x.device == device or (device == "cuda" and x.device == "cuda:0"):
        return x
    parse_device(device)       # raises early and clearly when the device is unusable
    return ToDevice.apply(x, device=device)


class AsType(Function):
    """y = x converted to another dtype; the gradient is converted back."""

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, x):
        return x.astype(self.dtype)

    def backward(self, grad):
        # ∂y/∂x = 1 (same values, another precision): cast the gradient back to x's dtype
        return astype(grad, self.inputs[0].dtype)


def astype(x: Tensor, dtype) -> Tensor:
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return AsType.apply(x, dtype=dtype)
