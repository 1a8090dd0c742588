"""Making tensors: from data, filled, ranges and random numbers."""

from __future__ import annotations

import numbers

import numpy as np

from .backend import parse_device
from .tensor import DEFAULT_FLOAT, Tensor


def tensor(data, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A new leaf tensor holding a copy of `data` (lists, numbers, NumPy/CuPy arrays, Tensors).

    Python floats become float32, NumPy arrays keep their dtype unless `dtype` is given, integer
    and bool data keep their kind (and cannot require grad).
    """
    return Tensor(data, dtype=dtype, requires_grad=requires_grad, device=device)


def _shape(shape) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], numbers.Integral):
        shape = tuple(shape[0])
    return tuple(int(n) for n in shape)


def _filled(fill, shape, dtype, requires_grad, device) -> Tensor:
    backend, index = parse_device(device)
    dtype = np.dtype(DEFAULT_FLOAT if dtype is None else dtype)
    array = backend.xp.full(shape, fill, dtype=dtype) if index is None else \
        backend.from_numpy(np.full(shape, fill, dtype=dtype), index)
    t = Tensor._from_array(array)
    if requires_grad:
        t.requires_grad = True
    return t


def zeros(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A tensor of zeros; `shape` as `zeros(2, 3)` or `zeros((2, 3))`; float32 by default."""
    return _filled(0, _shape(shape), dtype, requires_grad, device)


def ones(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A tensor of ones; `shape` as `ones(2, 3)` or `ones((2, 3))`; float32 by default."""
    return _filled(1, _shape(shape), dtype, requires_grad, device)


def full(shape, fill_value, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """A tensor of `shape` (an int or a tuple) filled with `fill_value`. The dtype is float32
    unless `dtype` says otherwise, also for an integer fill (`full(3, 7, dtype="int64")`)."""
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return _filled(fill_value, shape, dtype, requires_grad, device)


def empty(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """Like zeros: minigrad never hands out uninitialised memory."""
    return _filled(0, _shape(shape), dtype, requires_grad, device)


def zeros_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Zeros with t's shape, dtype and device (a new leaf, whatever t's graph)."""
    return _filled(0, t.shape, dtype or t.dtype, requires_grad, t.device)


def ones_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    """Ones with t's shape, dtype and device (a new leaf, whatever t's graph)."""
    return _filled(1, t.shape, dtype or t.dtype, requires_grad, t.device)


def arange(start, stop=None, step=1, dtype=None, device="cpu") -> Tensor:
    """Evenly spaced values in [start, stop), as numpy.arange (int64 for integer arguments)."""
    host = np.arange(start, stop, step) if stop is not None else np.arange(start)
    if dtype is None and host.dtype.kind == "f":
        dtype = DEFAULT_FLOAT
    return Tensor(host if dtype is None else host.astype(dtype), device=device)


def eye(n: int, dtype=None, device="cpu") -> Tensor:
    """The n × n identity matrix, float32 by default."""
    return Tensor(np.eye(n, dtype=np.dtype(DEFAULT_FLOAT if dtype is None else dtype)),
                  device=device)


def _random(kind, shape, dtype, requires_grad, device) -> Tensor:
    backend, index = parse_device(device)
    dtype = np.dtype(DEFAULT_FLOAT if dtype is None else dtype)
    t = Tensor._from_array(backend.random(kind, _shape(shape), dtype, index))
    if requires_grad:
        t.requires_grad = True
    return t


def randn(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """Standard normal samples, from minigrad's RNG (see manual_seed)."""
    return _random("normal", shape, dtype, requires_grad, device)


def rand(*shape, dtype=None, requires_grad: bool = False, device="cpu") -> Tensor:
    """Uniform samples in [0, 1), from minigrad's RNG (see manual_seed)."""
    return _random("uniform", shape, dtype, requires_grad, device)
