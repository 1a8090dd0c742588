"""Primitives that move elements without changing them: reshape, transpose, broadcast, sum_to,
concat, stack, split, device and dtype moves."""

from __future__ import annotations

import functools
import itertools
import numbers

import numpy as np

from ..function import Function
from ..backend import backend_of, parse_device
from ..tensor import FIRST_AXIS, Tensor
from .common import AxisError, axis_or_dim, constant, normalize_axis, one_axis
from .elementwise import where
from .indexing import IndexAdd, getitem


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

    needs_output = needs_inputs = False

    def __init__(self, axes):
        self.axes = axes

    def forward(self, x):
        return x.transpose(self.axes)

    def gradients(self, g):
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
    """Permute axes (NumPy's); with no axes, reverse them (x.T). Two axes of a tensor with more
    than two (which NumPy refuses) are PyTorch's `transpose(d0, d1)`: those two swapped. Of a
    2-D tensor, `transpose(0, 1)` is NumPy's identity permutation and PyTorch's swap, so it
    raises (`transpose(1, 0)` swaps in both)."""
    if len(axes) == 2 and all(isinstance(a, numbers.Integral) for a in axes):
        if x.ndim > 2:
            return swapaxes(x, *axes)
        if x.ndim == 2 and [a % 2 for a in axes] == [0, 1]:
            d0, d1 = axes
            raise TypeError(f"transpose: x.transpose({d0}, {d1}) of a 2-D tensor is ambiguous: "
                            f"NumPy's permutation ({d0}, {d1}) leaves it as it is, PyTorch's "
                            f"transpose swaps the two axes. Write x.T, x.swapaxes(0, 1) or "
                            f"x.transpose(1, 0) for the swap; drop the call for no change")
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
    """Cut x into parts along `axis` (NumPy's spelling, numpy.split) or `dim` (PyTorch's,
    torch.split); the two read the second argument differently, as their libraries do.

    NumPy's: an int n gives n equal parts, a list the cut points: (6, 4) split 3 along axis 0
    gives three (2, 4) tensors; [1, 4] gives (1, 4), (3, 4), (2, 4). PyTorch's (`dim=`): an int
    is each part's size (the last may be smaller), a list the parts' sizes: (5, 4) split 2 along
    dim 0 gives (2, 4), (2, 4), (1, 4). Each part is a view's gradient: indexing's.
    """
    if dim is not None:
        axis = axis_or_dim(axis, dim, "split")
        return _split_sizes(x, sections_or_indices, axis, "split")
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
    return _parts(x, axis, bounds)


def _parts(x: Tensor, axis: int, bounds) -> list[Tensor]:
    """x cut before each of `bounds` along `axis`."""
    length = x.shape[axis]
    starts, stops = [0] + list(bounds), list(bounds) + [length]
    prefix = (slice(None),) * axis
    return [getitem(x, prefix + (slice(a, b),)) for a, b in zip(starts, stops)]


def _split_sizes(x: Tensor, sizes, dim, op: str) -> list[Tensor]:
    """torch.split: parts of `sizes` elements (an int: that many each, the last the rest)."""
    axis = one_axis(dim, x.ndim, op)
    length = x.shape[axis]
    if isinstance(sizes, numbers.Integral):
        if sizes <= 0:
            raise ValueError(f"{op}: the part size must be positive, got {sizes!r}")
        sizes = [int(sizes)] * (length // sizes) + ([length % sizes] if length % sizes else [])
        sizes = sizes or [0]
    sizes = [int(n) for n in sizes]
    if sum(sizes) != length or min(sizes, default=0) < 0:
        raise ValueError(f"{op}: part sizes {sizes} do not add up to {length}, the length of dim "
                         f"{axis} of shape {tuple(x.shape)}")
    return _parts(x, axis, list(itertools.accumulate(sizes))[:-1])


def chunk(x: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    """torch.chunk: x cut along `dim` into at most `chunks` parts of ⌈n / chunks⌉ elements
    (the last may be smaller, and fewer parts come back when that is enough)."""
    if not isinstance(chunks, numbers.Integral) or isinstance(chunks, bool) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive int, got {chunks!r}")
    length = x.shape[one_axis(dim, x.ndim, "chunk")]
    return _split_sizes(x, max(-(-length // chunks), 1), dim, "chunk")


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """torch.unbind: the slices of x along `dim`, each without that axis."""
    axis = one_axis(dim, x.ndim, "unbind")
    if x.ndim == 0:
        raise ValueError("unbind: a 0-d tensor has no axis to unbind")
    prefix = (slice(None),) * axis
    return tuple(getitem(x, prefix + (i,)) for i in range(x.shape[axis]))


def permute(x: Tensor, *dims) -> Tensor:
    """torch.permute: the axes in the order `dims` (the same as `transpose` with axes)."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    if len(dims) != x.ndim:
        raise ValueError(f"permute: {len(dims)} dims {dims} for a {x.ndim}-d tensor of shape "
                         f"{tuple(x.shape)}")
    return transpose(x, tuple(dims))        # one tuple: a permutation, (0, 1) included


def expand(x: Tensor, *sizes) -> Tensor:
    """torch.expand: x broadcast to `sizes`, where -1 keeps that axis's length."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    lead = len(sizes) - x.ndim
    if lead < 0:
        raise ValueError(f"expand: {len(sizes)} sizes {sizes} for a {x.ndim}-d tensor of shape "
                         f"{tuple(x.shape)}")
    shape = tuple(x.shape[i - lead] if n == -1 and i >= lead else n
                  for i, n in enumerate(sizes))
    if -1 in shape[:lead]:
        raise ValueError(f"expand: -1 is not allowed for the new leading axes, got {sizes}")
    return broadcast_to(x, shape)


class Clone(Function):
    """y = x, in a new array (changing y in place leaves x alone)."""

    needs_output = False

    def forward(self, x):
        return x.copy()

    def backward(self, grad):
        # ∂y/∂x = I
        return grad


def clone(x: Tensor) -> Tensor:
    """torch.clone: a copy of x's values that keeps its place in the graph (gradient 1)."""
    return Clone.apply(x)


def hstack(tensors) -> Tensor:
    """numpy.hstack / torch.hstack: join along axis 1 (axis 0 for 0-d and 1-D tensors)."""
    tensors = [reshape(t, 1) if t.ndim == 0 else t for t in tensors]
    return concat(tensors, 0 if tensors and tensors[0].ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    """numpy.vstack / torch.vstack: join along axis 0, 1-D tensors as rows (1, n)."""
    return concat([reshape(t, 1, -1) if t.ndim < 2 else t for t in tensors], 0)


class ToDevice(Function):
    """y = x copied to another device; the gradient is copied back."""

    array_grad = False         # its backward applies a Function to the gradient Tensor

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

    array_grad = False         # its backward applies a Function to the gradient Tensor

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


# ---------------------------------------------------------------------------------------------
# Rearranging elements: pad, roll, flip, tril/triu, tile, repeat, diagonal, diag, unfold,
# meshgrid, flatten/unflatten.
#
# Most are compositions of reshape, broadcast_to, transpose and indexing, so their gradients are
# those primitives' (broadcast copies are summed back, gathered elements scatter-add). Two are
# primitives of their own: a constant `Pad` (one buffer written once) and `Roll`.

# -- pad ---------------------------------------------------------------------------------------

class Pad(Function):
    """y = x surrounded by a constant: y[b₀:b₀ + n₀, b₁:b₁ + n₁, …] = x, `value` elsewhere."""

    needs_output = False

    def __init__(self, widths, value):
        self.widths, self.value = widths, value

    def _inner(self, shape):
        return tuple(slice(before, before + n) for (before, _), n in zip(self.widths, shape))

    def forward(self, x):
        shape = tuple(n + before + after for n, (before, after) in zip(x.shape, self.widths))
        out = self.xp.full(shape, self.value, dtype=x.dtype)
        out[self._inner(x.shape)] = x
        return out

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x is the identity into the inner block and the border is constant:
        # ∂L/∂x = (∂L/∂y)[inner block]
        return g[self._inner(self.inputs[0].shape)]


_PAD_MODES = {"constant": "constant", "edge": "edge", "replicate": "edge", "reflect": "reflect",
              "symmetric": "symmetric", "wrap": "wrap", "circular": "wrap"}


def pad(x: Tensor, pad_width, mode: str = "constant", constant_values=0) -> Tensor:
    """x padded as numpy.pad: `pad_width` is ((before, after), ...) per axis, one (before,
    after) for every axis, or one int for all sides.

    Modes: "constant" (`constant_values`, one number), "edge" (PyTorch's "replicate"),
    "reflect" (mirror without repeating the edge: [1 2 3] → [3 2 | 1 2 3 | 2 1]), "symmetric"
    (mirror with the edge), "wrap" (PyTorch's "circular"). Gradient: the padded copies add
    their gradients back into the elements they copy. `nn.functional.pad` takes PyTorch's flat
    (left, right, top, bottom, ...) form.
    """
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu" and widths.size:
        raise TypeError(f"pad: pad_width must hold ints, got {pad_width!r}")
    if widths.size == 0:
        widths = widths.reshape(-1, 2)                   # no pairs (a 0-d tensor's)
    try:
        widths = np.broadcast_to(widths.astype(np.int64), (x.ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit a tensor of shape "
                         f"{tuple(x.shape)} (one (before, after) pair per axis)") from None
    if (widths < 0).any():
        raise ValueError(f"pad: pad_width must be non-negative, got {pad_width!r}")
    return _pad(x, [(int(b), int(a)) for b, a in widths], mode, constant_values, "pad")


def _pad(x: Tensor, widths, mode: str, value, op: str) -> Tensor:
    """x padded by the non-negative (before, after) pairs `widths`, one per axis."""
    kind = _PAD_MODES.get(mode)
    if kind is None:
        raise ValueError(f"{op}: unknown mode {mode!r}; expected one of "
                         f"{', '.join(repr(m) for m in _PAD_MODES)}")
    if not any(b or a for b, a in widths):
        return x
    if kind == "constant":
        if not isinstance(value, numbers.Number):
            raise TypeError(f"{op}: the constant value must be a number, got {value!r}")
        return Pad.apply(x, widths=tuple(widths), value=value)
    for axis, (before, after) in enumerate(widths):
        if not (before or after):
            continue
        n = x.shape[axis]
        if n == 0:
            raise ValueError(f"{op}: mode {mode!r} cannot pad axis {axis} of length 0 (shape "
                             f"{tuple(x.shape)})")
        index = _pad_index(kind, n, before, after)       # where each output element comes from
        x = getitem(x, (slice(None),) * axis + (index,))
    return x


def _pad_index(kind: str, n: int, before: int, after: int) -> np.ndarray:
    """For positions −before … n + after − 1 of a padded axis of length n, the position of the
    element each one copies."""
    i = np.arange(-before, n + after)
    if kind == "edge":
        return np.clip(i, 0, n - 1)
    if kind == "wrap":
        return i % n
    if kind == "symmetric":                  # … 1 0 | 0 1 … n−1 | n−1 n−2 …, period 2n
        j = i % (2 * n)
        return np.where(j < n, j, 2 * n - 1 - j)
    if n == 1:                               # reflect: … 2 1 | 0 1 … n−1 | n−2 …, period 2n − 2
        return np.zeros_like(i)
    j = i % (2 * n - 2)
    return np.where(j < n, j, 2 * n - 2 - j)


# -- roll, flip, triangles ---------------------------------------------------------------------

class Roll(Function):
    """y = x shifted cyclically: y[(i + s) mod n] = x[i] along each axis with its shift s."""

    needs_output = False

    def __init__(self, shifts: tuple, axes: tuple):
        self.shifts, self.axes = shifts, axes

    def forward(self, x):
        return self.xp.roll(x, self.shifts, self.axes)

    def backward(self, grad):
        (g,) = self.values(grad)
        # a cyclic shift permutes the elements; a permutation's adjoint is its inverse, the
        # shift back: ∂L/∂x = roll(∂L/∂y, −s)
        return self.ops.roll(g, tuple(-s for s in self.shifts), self.axes)


def roll(x: Tensor, shift=None, axis=None, *, shifts=None, dims=None) -> Tensor:
    """x shifted cyclically by `shift` places along `axis`, as numpy.roll (PyTorch's
    `shifts=`/`dims=` also work). Ints or equal-length tuples; with no axis the flattened
    tensor is rolled and the shape restored. Elements leaving one end enter at the other."""
    shift = _one_of(shift, shifts, "shift", "shifts", "roll")
    axis = _one_of(axis, dims, "axis", "dims", "roll")
    if shift is None:
        raise TypeError("roll: missing the shift")
    if axis is None:
        return reshape(roll(reshape(x, -1), shift, 0), x.shape)
    axes = normalize_axis(axis, x.ndim, "roll")
    shift_list = (shift,) if isinstance(shift, numbers.Integral) else tuple(shift)
    if len(shift_list) == 1:
        shift_list = shift_list * len(axes)
    if len(shift_list) != len(axes):
        raise ValueError(f"roll: {len(shift_list)} shifts for {len(axes)} axes")
    return Roll.apply(x, shifts=tuple(int(s) for s in shift_list), axes=axes)


def _one_of(numpy_value, torch_value, numpy_name, torch_name, op):
    """An argument given by NumPy's or PyTorch's name (not both)."""
    if torch_value is None:
        return numpy_value
    if numpy_value is not None:
        raise TypeError(f"{op}: got {numpy_name}= and {torch_name}=; they name the same "
                        f"argument (NumPy's and PyTorch's spelling), pass one")
    return torch_value


def flip(x: Tensor, axis=None, *, dims=None) -> Tensor:
    """x with the order of its elements reversed along `axis` (an int or a tuple; every axis
    when None), as numpy.flip and torch.flip(x, dims). The gradient is flipped back."""
    axes = normalize_axis(_one_of(axis, dims, "axis", "dims", "flip"), x.ndim, "flip")
    if len(set(axes)) != len(axes):
        raise ValueError(f"flip: axis {axes} names an axis twice (shape {tuple(x.shape)})")
    if x.ndim == 0:
        return x
    return getitem(x, tuple(slice(None, None, -1) if i in axes else slice(None)
                            for i in range(x.ndim)))


def _triangle(x: Tensor, k: int, lower: bool, op: str) -> Tensor:
    if x.ndim < 2:
        raise ValueError(f"{op}: needs at least 2 dimensions (..., N, M), got shape "
                         f"{tuple(x.shape)}")
    if not isinstance(k, numbers.Integral):
        raise TypeError(f"{op}: the diagonal offset must be an int, got {k!r}")
    keep = constant(_triangle_of(k, lower, x.data), [x], (_triangle_of, k, lower))   # (N, M)
    zero = constant(_zero_of(x.data), [x], (_zero_of,))       # x's dtype, bool included
    return where(keep, x, zero)


def _triangle_of(k: int, lower: bool, array):
    """The bool (N, M) mask of the triangle of `array` (..., N, M) on and below (`lower`) or on
    and above the k-th diagonal (a compiled step makes it again at replay)."""
    xp = backend_of(array).xp
    rows, cols = xp.arange(array.shape[-2])[:, None], xp.arange(array.shape[-1])[None, :]
    return cols - rows <= k if lower else cols - rows >= k


def _zero_of(array):
    """0 in `array`'s dtype, 0-d, on its device."""
    return backend_of(array).xp.zeros((), dtype=array.dtype)


def tril(x: Tensor, k: int = 0, *, diagonal: int | None = None) -> Tensor:
    """The lower triangle of the last two axes: x[..., i, j] where j − i ≤ k, 0 above (numpy.tril;
    PyTorch's `diagonal=` is k). E.g. a causal mask's shape. No gradient reaches the zeros."""
    return _triangle(x, k if diagonal is None else diagonal, True, "tril")


def triu(x: Tensor, k: int = 0, *, diagonal: int | None = None) -> Tensor:
    """The upper triangle of the last two axes: x[..., i, j] where j − i ≥ k, 0 below
    (numpy.triu; PyTorch's `diagonal=` is k)."""
    return _triangle(x, k if diagonal is None else diagonal, False, "triu")


# -- tile and repeat ---------------------------------------------------------------------------

def tile(x: Tensor, reps) -> Tensor:
    """x repeated as whole blocks, numpy.tile: (2, 3) tiled (2, 2) is (4, 6). PyTorch's
    `x.repeat(*sizes)` is this (in minigrad `repeat` is NumPy's, element by element). The
    gradient adds the copies' gradients."""
    reps = (reps,) if isinstance(reps, numbers.Integral) else tuple(reps)
    if any(not isinstance(r, numbers.Integral) or r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative ints, got {reps!r}")
    n = max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + tuple(int(r) for r in reps)
    shape = (1,) * (n - x.ndim) + tuple(x.shape)
    # (s₀, s₁) → (1, s₀, 1, s₁) → broadcast to (r₀, s₀, r₁, s₁) → (r₀s₀, r₁s₁)
    spread = reshape(x, sum(((1, s) for s in shape), ()))
    spread = broadcast_to(spread, sum(((r, s) for r, s in zip(reps, shape)), ()))
    return reshape(spread, tuple(r * s for r, s in zip(reps, shape)))


def repeat(x: Tensor, repeats, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """Each element repeated `repeats` times in place, numpy.repeat: [1, 2] → [1, 1, 2, 2].

    `repeats` is an int or one count per element along `axis` (or `dim`); with no axis the
    flattened tensor is repeated. PyTorch calls this `repeat_interleave`; its `x.repeat(*sizes)`
    is `tile` here. The gradient adds each element's copies.
    """
    axis = axis_or_dim(axis, dim, "repeat")
    if axis is None:
        x, axis = reshape(x, -1), 0
    axis = one_axis(axis, x.ndim, "repeat")
    if x.ndim == 0:
        x = reshape(x, 1)
    if isinstance(repeats, Tensor):
        repeats = repeats.numpy()
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iub" or (counts < 0).any():
        raise ValueError(f"repeat: repeats must be non-negative ints, got {repeats!r}")
    n = x.shape[axis]
    if counts.ndim == 0 or counts.size == 1:
        r = int(counts.reshape(-1)[0])
        # (…, n, …) → (…, n, 1, …) → broadcast to (…, n, r, …) → (…, n·r, …)
        shape = tuple(x.shape)
        spread = reshape(x, shape[:axis + 1] + (1,) + shape[axis + 1:])
        spread = broadcast_to(spread, shape[:axis + 1] + (r,) + shape[axis + 1:])
        return reshape(spread, shape[:axis] + (n * r,) + shape[axis + 1:])
    if counts.shape != (n,):
        raise ValueError(f"repeat: {counts.size} repeat counts for {n} elements along axis "
                         f"{axis} of shape {tuple(x.shape)}")
    index = np.repeat(np.arange(n), counts)              # the element each output copies
    return getitem(x, (slice(None),) * axis + (index,))


def repeat_interleave(x: Tensor, repeats, dim: int | None = None) -> Tensor:
    """PyTorch's name for `repeat`: each element repeated `repeats` times along `dim` (the
    flattened tensor when None)."""
    return repeat(x, repeats, dim)


# -- diagonals and windows -----------------------------------------------------------------------

def diagonal(x: Tensor, offset: int = 0, axis1: int = 0, axis2: int = 1, *,
             dim1: int | None = None, dim2: int | None = None) -> Tensor:
    """The diagonal x[..., i, i + offset] of the axes `axis1`, `axis2` (PyTorch's dim1, dim2),
    as numpy.diagonal: those two axes are removed and the diagonal is the last axis. The
    gradient lands on the diagonal, zeros elsewhere."""
    axis1 = _one_of(None if dim1 is not None else axis1, dim1, "axis1", "dim1", "diagonal")
    axis2 = _one_of(None if dim2 is not None else axis2, dim2, "axis2", "dim2", "diagonal")
    if x.ndim < 2:
        raise ValueError(f"diagonal: needs at least 2 dimensions, got shape {tuple(x.shape)}")
    a1, a2 = normalize_axis((axis1, axis2), x.ndim, "diagonal")
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, got {axis1} and {axis2}")
    rows, cols = _diagonal_index(x.shape[a1], x.shape[a2], int(offset))
    rest = [i for i in range(x.ndim) if i not in (a1, a2)]
    moved = transpose(x, tuple(rest + [a1, a2]))         # (..., n₁, n₂)
    xp = x.xp
    return getitem(moved, (Ellipsis, xp.asarray(rows), xp.asarray(cols)))


def _diagonal_index(n1: int, n2: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of diagonal `offset` of an (n1, n2) matrix."""
    length = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    steps = np.arange(length)
    return steps + max(-offset, 0), steps + max(offset, 0)


def diag(x: Tensor, k: int = 0) -> Tensor:
    """numpy.diag: a 1-D x of length n becomes the (n + |k|, n + |k|) matrix with x on diagonal
    k (0 elsewhere); a 2-D x gives its diagonal k as 1-D."""
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError(f"diag: needs a 1-D or 2-D tensor, got shape {tuple(x.shape)}")
    size = x.shape[0] + abs(int(k))
    rows, cols = _diagonal_index(size, size, int(k))
    xp = x.xp
    return IndexAdd.apply(x, shape=(size, size), index=(xp.asarray(rows), xp.asarray(cols)),
                          is_basic=False)


def unfold(x: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Sliding windows, PyTorch's Tensor.unfold: the windows x[i·step : i·step + size] along
    `dimension` replace it by their count, (n − size) // step + 1, and a last axis of length
    `size` is appended. (2, 7) unfolded along 1 with size 3, step 2 is (2, 3, 3). The gradient
    adds the copies of elements that lie in several windows."""
    if not isinstance(size, numbers.Integral) or not isinstance(step, numbers.Integral) or \
            size < 0 or step <= 0:
        raise ValueError(f"unfold: size must be a non-negative int and step a positive int, "
                         f"got size={size!r}, step={step!r}")
    if x.ndim == 0:
        one_axis(dimension, 0, "unfold")
        if size > 1:
            raise ValueError(f"unfold: size {size} exceeds the length 1 of a 0-d tensor")
        return reshape(x, (1,) * size)
    axis = one_axis(dimension, x.ndim, "unfold")
    n = x.shape[axis]
    if size > n:
        raise ValueError(f"unfold: size {size} exceeds the length {n} of dimension {axis} "
                         f"(shape {tuple(x.shape)})")
    count = (n - size) // step + 1
    index = np.arange(count)[:, None] * step + np.arange(size)[None, :]    # (count, size)
    windows = getitem(x, (slice(None),) * axis + (index,))   # (..., count, size, ...)
    order = [i for i in range(windows.ndim) if i != axis + 1] + [axis + 1]
    return transpose(windows, tuple(order))


# -- grids and flattening ----------------------------------------------------------------------

def meshgrid(*tensors, indexing: str | None = None) -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors, as numpy.meshgrid: with indexing="xy" the first two
    output axes are (len(y), len(x)); "ij" keeps the inputs' order. NumPy's default is "xy",
    PyTorch's "ij", so with two or more tensors `indexing` must be given. Gradients sum over
    the copies."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        if len(tensors) >= 2:
            raise TypeError('meshgrid: without indexing=, NumPy gives "xy" grids and PyTorch '
                            '"ij" ones (the first two axes swapped); write indexing="xy" or '
                            'indexing="ij"')
        indexing = "ij"                          # one tensor: both give the same grid
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"meshgrid: expected Tensors, got {type(t).__name__}")
    flat = [reshape(t, -1) for t in tensors]
    shape = [t.shape[0] for t in flat]
    varying = list(range(len(flat)))             # the output axis along which input i varies
    if indexing == "xy" and len(flat) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
        varying[0], varying[1] = 1, 0
    out = []
    for t, axis in zip(flat, varying):
        lined = reshape(t, tuple(n if i == axis else 1 for i, n in enumerate(shape)))
        out.append(broadcast_to(lined, tuple(shape)))
    return tuple(out)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The axes start_dim … end_dim merged into one, PyTorch's flatten (the default merges all:
    shape (size,), also for a 0-d tensor)."""
    if x.ndim == 0:
        one_axis(start_dim, 0, "flatten")
        one_axis(end_dim, 0, "flatten")
        return reshape(x, 1)
    start, end = one_axis(start_dim, x.ndim, "flatten"), one_axis(end_dim, x.ndim, "flatten")
    if start > end:
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} for "
                         f"shape {tuple(x.shape)}")
    shape = tuple(x.shape)
    merged = int(np.prod(shape[start:end + 1], dtype=np.int64))
    return reshape(x, shape[:start] + (merged,) + shape[end + 1:])


def unflatten(x: Tensor, dim: int, sizes) -> Tensor:
    """Axis `dim` split into the axes `sizes` (one may be -1), PyTorch's unflatten: (2, 12)
    with dim 1 and sizes (3, 4) is (2, 3, 4)."""
    axis = one_axis(dim, x.ndim, "unflatten")
    sizes = tuple(int(s) for s in sizes)
    n = x.shape[axis]
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    if sizes.count(-1) > 1 or (sizes.count(-1) == 0 and known != n) or \
            (sizes.count(-1) == 1 and (known == 0 or n % known)):
        raise ValueError(f"unflatten: sizes {sizes} do not multiply to the length {n} of axis "
                         f"{axis} (shape {tuple(x.shape)})")
    sizes = tuple(n // known if s == -1 else s for s in sizes)
    return reshape(x, tuple(x.shape[:axis]) + sizes + tuple(x.shape[axis + 1:]))
