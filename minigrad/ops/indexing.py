"""Indexing: x[index] with NumPy's basic and advanced indexing, one_hot, argmax/argmin."""

from __future__ import annotations

import numbers

import numpy as np

from ..autograd import Function
from ..gradients import IndexedGradient
from ..grad_mode import is_grad_enabled
from ..backend import backend_of
from ..tensor import Tensor
from .common import axis_or_dim, constant


class GetItem(Function):
    """y = x[index]. The gradient scatter-adds into x, so repeated indices accumulate."""

    needs_output = False

    def __init__(self, index, is_basic: bool):
        self.index, self.is_basic = index, is_basic

    def forward(self, x):
        return x[self.index]

    def backward(self, grad):
        # ∂L/∂x[i] = Σ over the output positions that read x[i] of ∂L/∂y
        shape = self.inputs[0].shape
        if is_grad_enabled():                 # recorded (create_graph): a differentiable op
            return IndexAdd.apply(grad, shape=shape, index=self.index, is_basic=self.is_basic)
        # else zero but at the index, left unfilled so slices of one tensor share a buffer
        return IndexedGradient(shape, self.index, self.is_basic, grad.data, self.xp)


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
    data = indices.data
    if data.dtype.kind not in "iu":
        raise TypeError(f"one_hot: indices must be integers, got dtype {data.dtype}")
    if data.size and (int(data.min()) < 0 or int(data.max()) >= num_classes):
        raise ValueError(f"one_hot: indices must lie in [0, {num_classes}), got values from "
                         f"{int(data.min())} to {int(data.max())}")
    classes = indices.xp.arange(num_classes)
    return constant((data[..., None] == classes).astype(dtype))


def argmax(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """Index of the largest element along `axis` (or `dim`; of the flattened tensor when None):
    int64, no gradient; the first one on ties."""
    axis = axis_or_dim(axis, dim, "argmax")
    return constant(_arg(x, axis, keepdims, "argmax"))


def argmin(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """Index of the smallest element along `axis` (or `dim`; of the flattened tensor when
    None): int64, no gradient; the first one on ties."""
    axis = axis_or_dim(axis, dim, "argmin")
    return constant(_arg(x, axis, keepdims, "argmin"))


def _arg(x, axis, keepdims, name):
    if x.data.size == 0 and (axis is None or x.ndim == 0 or (
            -x.ndim <= axis < x.ndim and x.shape[axis] == 0)):
        raise ValueError(f"{name}: no position to return along an empty axis (shape "
                         f"{tuple(x.shape)}, axis {axis})")
    out = getattr(x.data, name)(axis=axis)
    if keepdims:
        out = out.reshape(tuple(1 if axis is None or i == axis % x.ndim else n
                                for i, n in enumerate(x.shape)))
    return out.astype(np.int64) if hasattr(out, "astype") else x.xp.asarray(out, np.int64)
