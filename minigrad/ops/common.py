"""Helpers shared by the primitives: turning Python numbers and arrays into tensors."""

from __future__ import annotations

import numbers

import numpy as np

from ..backend import _BY_ARRAY_TYPE, backend_of, is_array
from ..recording import SLOT as _SLOT
from ..recording import made_from_data
from ..recording import recorder as _recorder
from ..tensor import DEFAULTS, DefaultAxis, Tensor

_PLAIN_NUMBERS = (float, int)

_NumpyAxisError = np.exceptions.AxisError if hasattr(np, "exceptions") else np.AxisError


class AxisError(_NumpyAxisError):
    """An axis out of range for a tensor's dimensions: both an IndexError and a ValueError, as
    NumPy's AxisError (of which it is a subclass) is, so `except IndexError` (PyTorch's habit)
    and `except ValueError` both catch it. The message names the operation."""

    def __init__(self, message: str):
        super().__init__(message)


def lift(x, like: Tensor) -> Tensor:
    """`x` as a Tensor next to `like`: Python numbers are weak (they take like's dtype when the
    kinds agree, float32 when a float meets an integer tensor); arrays keep their dtype."""
    if isinstance(x, Tensor):
        return x
    data = like.data
    if type(x) in _PLAIN_NUMBERS and data.dtype.kind == "f":      # the common case, quickly
        backend = _BY_ARRAY_TYPE.get(type(data))
        if backend is not None and not backend.multi_device:
            t = Tensor._from_array(backend.xp.asarray(x, dtype=data.dtype))
            return t if _SLOT.recorder is None else made_from_data(t)
    return made_from_data(_lifted(x, like))


def _lifted(x, like: Tensor) -> Tensor:
    """lift's less common cases: numbers next to integer tensors or on multi-device
    backends, arrays, NumPy scalars."""
    if isinstance(x, numbers.Number):
        dtype = like.data.dtype
        if isinstance(x, bool):
            dtype = dtype if dtype.kind != "b" else np.bool_
        elif isinstance(x, numbers.Integral):
            dtype = dtype if dtype.kind in "iuf" else np.int64
        elif isinstance(x, numbers.Real):
            dtype = dtype if dtype.kind == "f" else DEFAULTS.float
        else:
            raise TypeError(f"complex number {x!r} is not supported")
        return Tensor._from_array(backend_of(like.data).asarray(x, dtype=dtype,
                                                                index=_index(like)))
    if is_array(x):
        return Tensor._from_array(x)
    if isinstance(x, np.generic):           # a NumPy scalar (0-d operations return them)
        return Tensor._from_array(backend_of(like.data).asarray(x, index=_index(like)))
    raise TypeError(f"expected a Tensor, array or number, got {type(x).__name__}")


def pair(a, b, promote_ints: bool = True) -> tuple[Tensor, Tensor]:
    """Both operands as Tensors. With `promote_ints` (arithmetic), an integer or bool operand
    meeting a float takes the float's dtype, as in PyTorch (NumPy would often give float64): a
    Python float makes float32, a float tensor of any shape its own dtype. The integer operand
    is converted first, which loses no gradient since integer tensors never require grad."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a.data.dtype is not b.data.dtype and promote_ints:
                return _same_float_kind(a, b)
            return a, b
        return (_as_default_float(a, b) if promote_ints else a), lift(b, a)
    if isinstance(b, Tensor):
        return lift(a, b), (_as_default_float(b, a) if promote_ints else b)
    raise TypeError(f"expected at least one Tensor, got {type(a).__name__} and "
                    f"{type(b).__name__}")


def _same_float_kind(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """(a, b) with an integer or bool one cast to the other's float dtype."""
    kind_a, kind_b = a.data.dtype.kind, b.data.dtype.kind
    if kind_a in "iub" and kind_b == "f":
        return cast(a, b.data.dtype), b
    if kind_b in "iub" and kind_a == "f":
        return a, cast(b, a.data.dtype)
    return a, b


def _as_default_float(t: Tensor, number) -> Tensor:
    """t as float32 when it is integer or bool and `number` is a Python float, else t."""
    if t.data.dtype.kind in "iub" and isinstance(number, numbers.Real) and \
            not isinstance(number, numbers.Integral):
        return cast(t, DEFAULTS.float)
    return t


def as_float(t: Tensor) -> Tensor:
    """t itself when it holds floats, else (integers, bools) a float32 copy, a constant: the
    input of a float-valued function of integers (exp, sqrt, true division), whose result is
    minigrad's default float as in PyTorch, not NumPy's float64."""
    if t.data.dtype.kind in "iub":
        return cast(t, DEFAULTS.float)
    return t


def cast(t: Tensor, dtype) -> Tensor:
    """An integer or bool t as floats of `dtype`: a constant, computed again at every replay of
    a compiled step."""
    return constant(t.data.astype(dtype), (t,), (_astype, dtype))


def _astype(dtype, array):
    return array.astype(dtype)


def zero_gradient(fn, x: Tensor, dtype):
    """The gradient 0 for input x, as an array of fn's device (the walk makes it a constant
    Tensor itself when create_graph records the backward)."""
    return fn.xp.zeros(x.shape, dtype=dtype)


def _index(t: Tensor):
    device = t.device
    return int(device.split(":")[1]) if ":" in device else None


def constant(array, inputs=None, kernel=None) -> Tensor:
    """A Tensor that never requires grad (masks, signs): a constant in every graph. When it is
    computed from `inputs` by an array function, `kernel` = (function, *leading arguments)
    lets a compiled step compute it again at every replay (`function(*leading, *arrays)`)."""
    t = Tensor._from_array(array)
    recorder = _recorder()
    if recorder is not None:                # a step being captured by minigrad.compile
        recorder.constant(t, inputs, kernel)
    return t


def axis_or_dim(axis, dim, op: str):
    """The axis argument given as NumPy's `axis` or PyTorch's `dim` (the same meaning).

    Passing both raises TypeError naming `op`; an axis left at its default counts as not passed.
    """
    if dim is None:
        return axis
    if axis is not None and type(axis) is not DefaultAxis:
        raise TypeError(f"{op}: got axis={axis!r} and dim={dim!r}; they name the same argument "
                        f"(NumPy's and PyTorch's spelling), pass one of them")
    return dim


def every_axis_if_empty(dim):
    """PyTorch's `dim=()` (or `[]`) in sum, mean, var, std, amax, amin and the norms: every
    axis (torch.sum(x, dim=()) is the sum of all elements), as None; any other dim as given.
    NumPy's `axis=()` is not passed through here: it reduces no axis, as in NumPy."""
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        return None
    return dim


def no_empty_dim(dim, op: str):
    """`dim` for a reduction PyTorch refuses `dim=()` for (prod, logsumexp): TypeError then,
    rather than NumPy's meaning of an empty tuple (no axis reduced) under PyTorch's name."""
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        raise TypeError(f"{op}: dim={dim!r} names no dimension; PyTorch refuses it, and NumPy's "
                        f"axis=() would reduce nothing. Pass dim=None for every axis")
    return dim


def keepdims_or_keepdim(keepdims, keepdim, op: str) -> bool:
    """NumPy's `keepdims` or PyTorch's `keepdim` (the same meaning); both at once raise."""
    if keepdim is None:
        return bool(keepdims)
    if keepdims:
        raise TypeError(f"{op}: got keepdims={keepdims!r} and keepdim={keepdim!r}; they name the "
                        f"same argument (NumPy's and PyTorch's spelling), pass one of them")
    return bool(keepdim)


def normalize_axis(axis, ndim: int, op: str):
    """axis as a tuple of non-negative ints (None = all axes), or a clear error."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, numbers.Integral):
        axes = (axis,)
    elif isinstance(axis, (tuple, list)):
        axes = tuple(axis)
    else:
        raise TypeError(f"{op}: axis must be an int or a tuple of ints, got {axis!r}")
    out = []
    for a in axes:
        if not isinstance(a, numbers.Integral):
            raise TypeError(f"{op}: axis must be an int or a tuple of ints, got {axis!r}")
        if not -ndim <= a < max(ndim, 1):
            raise AxisError(f"{op}: axis {a} is out of range for a {ndim}-d tensor")
        out.append(int(a) % max(ndim, 1))
    return tuple(out)


def one_axis(axis, ndim: int, op: str) -> int:
    """A single axis as a non-negative int, or AxisError naming `op` (0-d tensors accept 0 and
    -1, as PyTorch's do)."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise TypeError(f"{op}: axis must be an int, got {axis!r}")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise AxisError(f"{op}: axis {axis} is out of range for a {ndim}-d tensor")
    return int(axis) % max(ndim, 1)
