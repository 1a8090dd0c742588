"""Indexing: x[index] with NumPy's basic and advanced indexing, one_hot, argmax/argmin."""

from __future__ import annotations

import numbers

import numpy as np

from ..function import Function
from ..gradients import IndexedGradient
from ..backend import backend_of
from ..recording import recorder as _recorder
from ..tensor import Tensor
from .common import axis_or_dim, constant, keepdims_or_keepdim, one_axis
from .elementwise import _as_mask, masked_fill
from .elementwise import where as _where
from .rounding import floor_divide


class GetItem(Function):
    """y = x[index]. The gradient scatter-adds into x, so repeated indices accumulate."""

    needs_output = False

    def __init__(self, index, is_basic: bool):
        self.index, self.is_basic = index, is_basic

    def forward(self, x):
        return x[self.index]

    def gradients(self, g, x):
        # ∂L/∂x[i] = Σ over the output positions that read x[i] of ∂L/∂y
        if isinstance(g, Tensor):             # recorded (create_graph): a differentiable op
            return IndexAdd.apply(g, shape=x.shape, index=self.index, is_basic=self.is_basic)
        # else zero but at the index, left unfilled so slices of one tensor share a buffer
        return IndexedGradient(x.shape, self.index, self.is_basic, g, self.xp)


def _index_add(xp, shape, index, is_basic, g):
    """zeros(shape) with [index] += g."""
    out = xp.zeros(shape, dtype=g.dtype)
    if is_basic:
        out[index] = g                   # a basic index names each element at most once
    else:
        backend_of(g).scatter_add(out, index, g)
    return out


class IndexAdd(Function):
    """y = zeros(shape) with y[index] += g (repeated indices accumulate): GetItem's adjoint."""

    array_grad = False         # its backward applies a Function to the gradient Tensor

    needs_output = False

    def __init__(self, shape, index, is_basic):
        self.shape, self.index, self.is_basic = shape, index, is_basic

    def forward(self, g):
        return _index_add(self.xp, self.shape, self.index, self.is_basic, g)

    def backward(self, grad):
        # y is linear in g with ∂y[index]/∂g = 1: ∂L/∂g = ∂L/∂y[index], read at the same index
        return GetItem.apply(grad, index=self.index, is_basic=self.is_basic)


def getitem(x: Tensor, index) -> Tensor:
    if type(index) is tuple:                  # x[:, t], x[:, a:b]: only ints and slices
        for part in index:
            if type(part) is not slice and type(part) is not int:
                break
        else:
            return GetItem.apply(x, index=index, is_basic=True)
    index, is_basic = _normalise_index(index, x)
    return GetItem.apply(x, index=index, is_basic=is_basic)


def _normalise_index(index, x: Tensor):
    """The index with Tensors and lists turned into arrays on x's device, and whether it is
    basic (ints, slices, None, Ellipsis only: a view that names each element at most once)."""
    parts = index if isinstance(index, tuple) else (index,)
    out, is_basic = [], True
    for part in parts:
        kind = type(part)
        if kind is slice or kind is int or part is None or part is Ellipsis:
            out.append(part)
        elif isinstance(part, (bool, np.bool_)):
            out.append(_index_array(np.asarray(part), x))
            is_basic = False
        elif isinstance(part, numbers.Integral):
            out.append(int(part))
        elif isinstance(part, (Tensor, list, tuple)) or (hasattr(part, "dtype") and
                                                         not isinstance(part, np.generic)):
            # a tuple inside the index is a sequence of positions, as a list (NumPy, PyTorch)
            out.append(_index_array(part, x))
            is_basic = False
        else:
            raise TypeError(f"getitem: index of type {type(part).__name__} is not supported; "
                            f"use ints, slices, None, Ellipsis, integer arrays or bool masks")
    return tuple(out), is_basic


def _index_array(part, x: Tensor):
    if isinstance(part, Tensor):
        if part.device != x.device:
            raise RuntimeError(f"getitem: index on {part.device}, tensor on {x.device}")
        array = part.data
    elif isinstance(part, (list, tuple)):
        array = backend_of(x.data).asarray(np.asarray(part))
    else:
        if backend_of(part) is not backend_of(x.data):
            array = backend_of(x.data).from_numpy(backend_of(part).to_numpy(part), None)
        else:
            array = part
    if array.dtype.kind not in "iub":
        raise TypeError(f"getitem: index arrays must be integer or bool, got dtype "
                        f"{array.dtype}")
    return array


def one_hot(indices, num_classes: int, dtype=np.float32) -> Tensor:
    """y[..., c] = 1 where indices == c: shape indices.shape + (num_classes,). No gradient."""
    if not isinstance(indices, Tensor):
        indices = Tensor(indices)        # lists, NumPy or device arrays, where they are
    if indices.data.dtype.kind not in "iu":
        raise TypeError(f"one_hot: indices must be integers, got dtype {indices.data.dtype}")
    return constant(_one_hot(num_classes, dtype, indices.data), [indices],
                    (_one_hot, num_classes, dtype))


def _one_hot(num_classes: int, dtype, data):
    """one_hot on an integer array, its range checked (a compiled step computes it again, and
    checks again, at replay)."""
    if data.size and (int(data.min()) < 0 or int(data.max()) >= num_classes):
        raise ValueError(f"one_hot: indices must lie in [0, {num_classes}), got values from "
                         f"{int(data.min())} to {int(data.max())}")
    classes = backend_of(data).xp.arange(num_classes)
    return (data[..., None] == classes).astype(dtype)


def argmax(x: Tensor, axis=None, keepdims: bool = False, *, dim=None,
           keepdim=None) -> Tensor:
    """Index of the largest element along `axis` (or `dim`; of the flattened tensor when None):
    int64, no gradient; the first one on ties."""
    axis = axis_or_dim(axis, dim, "argmax")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "argmax")
    _check_arg(x, axis, "argmax")
    return constant(_arg_of(axis, keepdims, "argmax", x.data), [x],
                    (_arg_of, axis, keepdims, "argmax"))


def argmin(x: Tensor, axis=None, keepdims: bool = False, *, dim=None,
           keepdim=None) -> Tensor:
    """Index of the smallest element along `axis` (or `dim`; of the flattened tensor when
    None): int64, no gradient; the first one on ties."""
    axis = axis_or_dim(axis, dim, "argmin")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "argmin")
    _check_arg(x, axis, "argmin")
    return constant(_arg_of(axis, keepdims, "argmin", x.data), [x],
                    (_arg_of, axis, keepdims, "argmin"))


def _check_arg(x, axis, name) -> None:
    if x.data.size == 0 and (axis is None or x.ndim == 0 or (
            -x.ndim <= axis < x.ndim and x.shape[axis] == 0)):
        raise ValueError(f"{name}: no position to return along an empty axis (shape "
                         f"{tuple(x.shape)}, axis {axis})")


def _arg_of(axis, keepdims: bool, name: str, data):
    """argmax or argmin of `data` as int64, from the array alone (a compiled step computes it
    again from each replay's array)."""
    out = getattr(data, name)(axis=axis)
    if keepdims:
        out = out.reshape(tuple(1 if axis is None or i == axis % data.ndim else n
                                for i, n in enumerate(data.shape)))
    return out.astype(np.int64) if hasattr(out, "astype") else \
        backend_of(data).xp.asarray(out, np.int64)


# ---------------------------------------------------------------------------------------------
# Reading and writing at computed positions: take_along_axis, gather, index_select,
# masked_select, nonzero, and scatter, scatter_add, scatter_reduce.
#
# The reads are x[index] with an index built from the positions, so their gradient is indexing's:
# scattered back with repeated positions adding up. The writes are the adjoints of those reads
# (scatter_add, scatter, and a product as a chain of products), except for the maximum and
# minimum, whose ties split the gradient: the primitive ScatterExtreme.

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
        x, axis = x.reshape(-1), 0
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


def gather(x: Tensor, dim: int, index) -> Tensor:
    """out[i][j] = x[index[i][j]][j] for dim 0 (x[i][index[i][j]] for dim 1, …), as
    torch.gather: `index` has x's number of axes and, off `dim`, lengths no larger than x's (no
    broadcasting; numpy.take_along_axis broadcasts). The gradient scatter-adds back."""
    axis = one_axis(dim, x.ndim, "gather")
    idx = _positions(index, x, "gather")
    _check_fits(x, idx, axis, "gather")
    _check_range(idx, x.shape[axis] if x.ndim else 1, axis, x.shape, "gather")
    if x.ndim == 0:                     # PyTorch: a 0-d tensor gathers itself
        return x
    return getitem(x, _grid(x.xp, idx.shape, axis, idx))


def _check_fits(x: Tensor, idx, axis: int, op: str) -> None:
    """idx has x's number of axes and, off `axis`, lengths no larger than x's."""
    if idx.ndim != x.ndim or any(m > n for i, (m, n) in enumerate(zip(idx.shape, x.shape))
                                 if i != axis):
        raise ValueError(f"{op}: index of shape {tuple(idx.shape)} does not fit the tensor of "
                         f"shape {tuple(x.shape)} (same number of axes, no longer than it off "
                         f"dim {axis})")


def index_select(x: Tensor, dim: int, index) -> Tensor:
    """The slices x[..., index[k], ...] along `dim` for a 1-D (or 0-d) integer `index`, as
    torch.index_select (numpy.take with an axis). Repeated indices repeat the slice, and their
    gradients add up."""
    axis = one_axis(dim, x.ndim, "index_select")
    idx = _positions(index, x, "index_select")
    if idx.ndim > 1:
        raise ValueError(f"index_select: index must be 0-d or 1-D, got shape {tuple(idx.shape)}")
    if x.ndim == 0:                     # PyTorch: a 0-d tensor selects itself
        _check_range(idx, 1, 0, x.shape, "index_select")
        return x
    _check_range(idx, x.shape[axis], axis, x.shape, "index_select")
    return getitem(x, (slice(None),) * axis + (idx.reshape(-1),))


def masked_select(x: Tensor, mask) -> Tensor:
    """The elements of x where the bool `mask` is True, as a 1-D tensor in row-major order
    (x and mask broadcast together), as torch.masked_select and NumPy's x[mask]. The gradient
    goes back to the selected elements."""
    mask = _as_mask(mask, x, "masked_select")
    try:
        shape = np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))
    except ValueError:
        raise ValueError(f"masked_select: mask of shape {tuple(mask.shape)} does not broadcast "
                         f"with the tensor of shape {tuple(x.shape)}") from None
    full_mask = x.xp.broadcast_to(mask.data, shape)
    return getitem(x.broadcast_to(shape), (full_mask,))


def nonzero(x: Tensor, *, as_tuple: bool | None = None):
    """Where x is nonzero (True): with `as_tuple=True` NumPy's form, a tuple of x.ndim int64
    tensors of positions, one per axis; with `as_tuple=False` PyTorch's, one (N, x.ndim)
    tensor (see also `argwhere`). Left out, NumPy's nonzero(x) and PyTorch's differ, so it
    raises, saying which to write. No gradient."""
    if as_tuple is None:
        raise TypeError("nonzero: nonzero(x) is a tuple of positions per axis in NumPy and one "
                        "(N, ndim) tensor in PyTorch; write nonzero(x, as_tuple=True) for "
                        "NumPy's, as_tuple=False (or argwhere(x)) for PyTorch's")
    data = x.data
    if not as_tuple:
        return argwhere(x)
    if data.ndim == 0:
        raise ValueError("nonzero: a 0-d tensor has no axes to report positions along (NumPy "
                         "refuses it too); use argwhere or as_tuple=False")
    host = backend_of(data).to_numpy(data)
    # constants made from x's values, whose shape the values decide: a compiled step that
    # uses them is refused (they would be frozen), never replayed
    return tuple(constant(Tensor(p.astype(np.int64), device=x.device).data)
                 for p in np.nonzero(host))


_NOT_GIVEN = object()


def where(cond, a=_NOT_GIVEN, b=_NOT_GIVEN):
    """a where the bool `cond` is True, else b (all three broadcast together; with two numbers,
    float32 when either is a float, else int64, on cond's device, as in PyTorch). `where(cond)`
    alone is `nonzero(cond, as_tuple=True)`: the positions, as in NumPy and PyTorch."""
    if a is _NOT_GIVEN and b is _NOT_GIVEN:
        return nonzero(cond if isinstance(cond, Tensor) else Tensor(cond), as_tuple=True)
    if a is _NOT_GIVEN or b is _NOT_GIVEN:
        raise TypeError("where: give both a and b, or neither (for the positions of cond)")
    return _where(cond, a, b)


def argwhere(x: Tensor) -> Tensor:
    """The positions where x is nonzero as one (N, x.ndim) int64 tensor, as numpy.argwhere and
    torch.nonzero. No gradient."""
    host = backend_of(x.data).to_numpy(x.data)
    # a constant made from x's values (see nonzero)
    return constant(Tensor(np.argwhere(host).astype(np.int64), device=x.device).data)


# -- writing at positions ----------------------------------------------------------------------

class _Plan:
    """Where a scatter along `axis` writes: for each element of `index` (row-major), its flat
    position in x (`flat`, on the host) and the same as a device array (`targets`), plus
    `written`, a device bool mask of x's shape marking every position written at least once."""

    def __init__(self, x: Tensor, dim: int, index, op: str):
        self.axis = one_axis(dim, x.ndim, op)
        capturing = _recorder()
        if capturing is not None and isinstance(index, Tensor):
            # the plan is made from the index's values on the host (which positions repeat,
            # in which rounds): a compiled step would freeze it, so it stays eager
            capturing.read_values(index, f"{op}'s positions")
        idx = _positions(index, x, op)
        _check_fits(x, idx, self.axis, op)
        n = x.shape[self.axis] if x.ndim else 1
        _check_range(idx, n, self.axis, x.shape, op)
        self.index_shape = tuple(idx.shape)
        backend = backend_of(x.data)
        host = backend.to_numpy(idx) % n                      # negative positions wrapped
        grid = [host if i == self.axis else np.arange(m).reshape(
            tuple(m if j == i else 1 for j in range(idx.ndim))) for i, m in enumerate(idx.shape)]
        grid = np.broadcast_arrays(*grid) if grid else []
        self.flat = (np.ravel_multi_index(tuple(grid), x.shape).reshape(-1) if x.ndim
                     else np.zeros(host.size, dtype=np.int64))
        written = np.zeros(x.data.size, dtype=bool)
        written[self.flat] = True
        self.written = Tensor(written.reshape(x.shape), device=x.device)
        self.device = x.device
        self.targets = self.on_device(self.flat)
        self.size = x.data.size

    def on_device(self, host: np.ndarray):
        """A host integer array as an array on x's device."""
        return Tensor(host, device=self.device).data

    def rounds(self) -> list[np.ndarray]:
        """The elements of index grouped so that no position repeats within a group: the
        first writer of each position, then the second, … (host index arrays)."""
        order = np.argsort(self.flat, kind="stable")
        ordered = self.flat[order]
        starts = np.r_[True, ordered[1:] != ordered[:-1]] if ordered.size else np.ones(0, bool)
        first = np.maximum.accumulate(np.where(starts, np.arange(ordered.size), 0))
        rank = np.empty(ordered.size, dtype=np.int64)
        rank[order] = np.arange(ordered.size) - first
        return [np.nonzero(rank == r)[0] for r in range(int(rank.max()) + 1 if rank.size else 0)]

    def counts(self) -> np.ndarray:
        """How many elements of index write to each position of x (host, x's flat order)."""
        return np.bincount(self.flat, minlength=self.size)


def _source(src, plan: _Plan, x: Tensor, op: str) -> Tensor:
    """src's values read by a scatter: its leading block of index's shape, flattened, in x's
    dtype; a number fills that block."""
    if not isinstance(src, Tensor):
        if not isinstance(src, (int, float, np.number)):
            src = Tensor(src, device=x.device)
        else:
            return Tensor._from_array(x.xp.full((int(np.prod(plan.index_shape)),), src,
                                                dtype=x.dtype))
    if src.ndim != len(plan.index_shape) or any(m > n for m, n in zip(plan.index_shape,
                                                                      src.shape)):
        raise ValueError(f"{op}: src of shape {tuple(src.shape)} is smaller than the index of "
                         f"shape {plan.index_shape} (or has another number of axes)")
    if tuple(src.shape) != plan.index_shape:
        src = getitem(src, tuple(slice(0, m) for m in plan.index_shape))
    return src.astype(x.dtype).reshape(-1)


def _placed(values: Tensor, plan: _Plan, x: Tensor, members=None) -> Tensor:
    """zeros of x's shape with values added at their positions (all elements of index, or
    those `members`): a differentiable scatter-add."""
    targets = plan.targets
    if members is not None:
        values = getitem(values, (members,))
        targets = targets[plan.on_device(members)]
    flat = IndexAdd.apply(values, shape=(plan.size,), index=(targets,), is_basic=False)
    return flat.reshape(x.shape)


_SCATTER_REDUCE = {"add": "sum", "multiply": "prod"}


def scatter(x: Tensor, dim: int, index, src=None, *, value=None, reduce=None) -> Tensor:
    """A copy of x with src written at `index` along `dim`, as torch.scatter: for dim 0,
    out[index[i][j]][j] = src[i][j]; `value` (or a number for src) writes one value everywhere.
    Where an index repeats, the last write in row-major order wins and alone gets the
    gradient (PyTorch leaves the winner unspecified and gives every writer the gradient). x
    gets the gradient where nothing was written. PyTorch's `reduce="add"` or `"multiply"`
    combines the written values with x's instead: scatter_reduce's "sum" or "prod"."""
    if (src is None) == (value is None):
        raise TypeError("scatter: give exactly one of src and value")
    if reduce is not None:
        if reduce not in _SCATTER_REDUCE:
            raise ValueError(f"scatter: reduce must be 'add' or 'multiply' (or None), got "
                             f"{reduce!r}")
        return scatter_reduce(x, dim, index, src if value is None else value,
                              _SCATTER_REDUCE[reduce])
    plan = _Plan(x, dim, index, "scatter")
    values = _source(src if value is None else value, plan, x, "scatter")
    last = np.zeros(plan.flat.size, dtype=bool)       # the last writer of each position
    reversed_first = np.unique(plan.flat[::-1], return_index=True)[1]
    last[plan.flat.size - 1 - reversed_first] = True
    return _where(plan.written, _placed(values, plan, x, np.nonzero(last)[0]), x)


def scatter_add(x: Tensor, dim: int, index, src) -> Tensor:
    """A copy of x with src added at `index` along `dim` (repeated positions add up), as
    torch.scatter_add: for dim 0, out[index[i][j]][j] += src[i][j]. Gradient: 1 for x and for
    each src element read."""
    plan = _Plan(x, dim, index, "scatter_add")
    return x + _placed(_source(src, plan, x, "scatter_add"), plan, x)


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


def scatter_reduce(x: Tensor, dim: int, index, src, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """x with the src elements written to each position (by `index` along `dim`, as scatter)
    reduced together with x's own value (leave it out with include_self=False): reduce is
    "sum", "prod", "mean", "amax" or "amin", as torch.scatter_reduce. Positions nothing writes
    keep x. Gradients as PyTorch's: the product's are exact also at zeros; amax/amin split
    the gradient evenly among the elements equal to the result; mean divides by the count."""
    if reduce not in _REDUCTIONS:
        raise ValueError(f"scatter_reduce: reduce must be one of "
                         f"{', '.join(map(repr, _REDUCTIONS))}, got {reduce!r}")
    op = "scatter_reduce"
    plan = _Plan(x, dim, index, op)
    values = _source(src, plan, x, op)
    if reduce in ("amax", "amin"):
        return ScatterExtreme.apply(x, values, plan=plan, largest=reduce == "amax",
                                    include_self=include_self)
    identity = 1 if reduce == "prod" else 0
    base = x if include_self else _where(plan.written, identity, x)
    if reduce == "prod":
        # one product per round of distinct positions: the chain of products keeps every
        # gradient exact, zeros included (∂(ab)/∂a = b)
        for members in plan.rounds():
            written = np.zeros(plan.size, dtype=bool)
            written[plan.flat[members]] = True
            mask = Tensor(written.reshape(x.shape), device=x.device)
            base = base * _where(mask, _placed(values, plan, x, members), 1)
        return base
    total = base + _placed(values, plan, x)
    if reduce == "sum":
        return total
    count = plan.counts().reshape(x.shape) + (1 if include_self else 0)
    count = Tensor(np.maximum(count, 1).astype(x.dtype if x.dtype.kind == "f" else np.int64),
                   device=x.device)
    mean = total / count if x.dtype.kind == "f" else floor_divide(total, count)
    return _where(plan.written, mean, x)


class ScatterExtreme(Function):
    """out = x with each position replaced by the max (or min) of the src values written there,
    and of x's own value with include_self. Inputs: x and the flat src values read."""

    def __init__(self, plan: _Plan, largest: bool, include_self: bool):
        self.plan, self.largest, self.include_self = plan, largest, include_self

    def forward(self, x, values):
        xp, plan = self.xp, self.plan
        pick = xp.maximum if self.largest else xp.minimum
        out = x.copy()
        flat = out.reshape(-1)                                  # a view: writes reach out
        if not self.include_self:
            start = -xp.inf if self.largest else xp.inf
            if x.dtype.kind in "iu":
                bounds = np.iinfo(x.dtype)
                start = bounds.min if self.largest else bounds.max
            flat[plan.targets] = start
        for members in plan.rounds():
            chosen = plan.on_device(members)
            at = plan.targets[chosen]
            flat[at] = pick(flat[at], values[chosen])
        return out

    def backward(self, grad):
        (g,) = self.values(grad)
        xp, plan = self.xp, self.plan
        x, values = self.inputs[0].data, self.inputs[1].data
        out = self.output.data.reshape(-1)
        # ∂out_p/∂m = 1/k for each of the k members of position p equal to out_p (ties split
        # the gradient evenly, as PyTorch), 0 for the others: constants
        hits_src = values == out[plan.targets]
        hits_x = x.reshape(-1) == out
        if not self.include_self:
            hits_x = hits_x & ~plan.written.data.reshape(-1)
        count = hits_x.astype(grad.dtype)
        _scatter_add_into(count, plan.targets, hits_src.astype(grad.dtype))
        share_x = (hits_x / xp.maximum(count, 1)).reshape(x.shape)
        share_src = hits_src / xp.maximum(count, 1)[plan.targets]
        return g * share_x.astype(grad.dtype), g.reshape(-1)[plan.targets] * \
            share_src.astype(grad.dtype)


def _scatter_add_into(target, positions, values) -> None:
    backend_of(target).scatter_add(target, positions, values)


def index_fill(x: Tensor, dim: int, index, value) -> Tensor:
    """x with `value` at the positions `index` (1-D ints) along `dim`, as torch.index_fill;
    those positions get no gradient, the rest 1."""
    axis = one_axis(dim, x.ndim, "index_fill")
    if not isinstance(index, Tensor):
        index = Tensor(index, device=x.device)
    if index.data.dtype.kind not in "iu" or index.ndim > 1:
        raise TypeError(f"index_fill: index must be a 0-d or 1-D int tensor, got "
                        f"{index.data.dtype} {tuple(index.shape)}")
    length, shape = (x.shape[axis] if x.ndim else 1), tuple(x.shape)
    mask = constant(_positions_mask(length, x.ndim, axis, index.data), [index],
                    (_positions_mask, length, x.ndim, axis))
    return masked_fill(x, mask, value)


def _positions_mask(length: int, ndim: int, axis: int, index):
    """A bool mask, True at `index` along axis (length long), shaped to broadcast against an
    ndim-d tensor (computed again at replay)."""
    index = index.reshape(-1)
    if index.size and (int(index.min()) < -length or int(index.max()) >= length):
        raise IndexError(f"index_fill: index out of range for size {length} along dim {axis}")
    mask = backend_of(index).xp.zeros(length, dtype=bool)
    mask[index] = True
    return mask.reshape(tuple(length if i == axis else 1 for i in range(ndim))) if ndim \
        else mask.reshape(())
