"""Reductions over axes: sum, mean, max, min, var, logsumexp (and any/all, without gradient)."""

from __future__ import annotations

import math

from ..autograd import Function
from ..tensor import Tensor
from .common import constant, normalize_axis


def _kept_shape(shape, axes):
    """The shape a reduction over `axes` has with keepdims=True."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


class _Reduction(Function):
    """Shared bookkeeping: the reduced axes, and the gradient reshaped to keepdims form."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool):
        self.axes, self.keepdims = axes, keepdims

    def _kept(self, g):
        """g (an array or Tensor of the output's shape) with the reduced axes put back as size
        1, so it broadcasts against the input."""
        if self.keepdims:
            return g
        return g.reshape(_kept_shape(self.inputs[0].shape, self.axes))


class Sum(_Reduction):
    """y = Σ_axes x"""

    needs_output = False

    def forward(self, x):
        return x.sum(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x = 1 for every summed element: spread grad back over the summed axes
        return self.ops.broadcast_to(self._kept(g), self.inputs[0].shape)


def sum(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return Sum.apply(x, axes=normalize_axis(axis, x.ndim, "sum"), keepdims=keepdims)


class Mean(_Reduction):
    """y = (1/n) Σ_axes x, n the number of elements averaged."""

    needs_output = False

    def forward(self, x):
        return x.mean(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        (g,) = self.values(grad)
        shape = self.inputs[0].shape
        n = math.prod(shape[a] for a in self.axes)
        # ∂y/∂x = 1/n
        return self.ops.broadcast_to(self._kept(g) / n, shape)


def mean(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return Mean.apply(x, axes=normalize_axis(axis, x.ndim, "mean"), keepdims=keepdims)


class Max(_Reduction):
    """y = max_axes x. Ties split the gradient evenly among the maximal elements."""

    def forward(self, x):
        return x.max(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        (g,) = self.values(grad)
        x, y = self.inputs[0].data, self._kept(self.output.data)
        # ∂y/∂x = 1/k at each of the k positions equal to the maximum, 0 elsewhere (a constant)
        is_max = (x == y).astype(grad.dtype)
        share = is_max / is_max.sum(axis=self.axes, keepdims=True)
        return self._kept(g) * share


def max(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    """y = max_axes x (all axes when `axis` is None).

    Ties: when k elements share the maximum, each receives 1/k of the gradient (the gradient
    is split evenly, so their sum gets it exactly once). An empty tensor raises ValueError.
    """
    _check_nonempty(x, axis, "max")
    return Max.apply(x, axes=normalize_axis(axis, x.ndim, "max"), keepdims=keepdims)


class Min(Max):
    """y = min_axes x. Ties split the gradient evenly among the minimal elements."""

    def forward(self, x):
        return x.min(axis=self.axes, keepdims=self.keepdims)


def min(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    """y = min_axes x (all axes when `axis` is None); ties split the gradient evenly, as in
    `max`. An empty tensor raises ValueError."""
    _check_nonempty(x, axis, "min")
    return Min.apply(x, axes=normalize_axis(axis, x.ndim, "min"), keepdims=keepdims)


def _check_nonempty(x: Tensor, axis, op: str) -> None:
    if x.data.size == 0:
        raise ValueError(f"{op}: cannot reduce an empty tensor of shape {tuple(x.shape)}")


class Var(_Reduction):
    """y = (1/n) Σ_axes (x − x̄)², the population variance (ddof = 0, as NumPy)."""

    def forward(self, x):
        return x.var(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        n = math.prod(x.shape[a] for a in self.axes)
        centred = x - x.mean(axis=self.axes, keepdims=True)
        # ∂y/∂x = 2(x − x̄)/n  (the terms through x̄ sum to zero)
        return self._kept(g) * centred * (2.0 / n)


def var(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return Var.apply(x, axes=normalize_axis(axis, x.ndim, "var"), keepdims=keepdims)


class LogSumExp(_Reduction):
    """y = log Σ_axes eˣ, computed as m + log Σ e^(x − m) with m the maximum (no overflow).

    A slice whose inputs are all −inf gives −inf (the log of an empty sum) and zero gradient.
    """

    def forward(self, x):
        xp = self.xp
        m = x.max(axis=self.axes, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)          # all −inf slice: shift by 0, not by −inf
        total = xp.exp(x - m).sum(axis=self.axes, keepdims=True)
        empty = total == 0
        y = xp.log(xp.where(empty, 1, total)) + m
        y = xp.where(empty, -xp.inf, y).astype(x.dtype, copy=False)
        return y if self.keepdims else y.reshape(
            tuple(n for i, n in enumerate(x.shape) if i not in self.axes))

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs, self.output)
        xp = self.ops
        y = self._kept(y)
        finite = self.xp.isfinite(self._kept(self.output.data))     # a constant mask
        # ∂y/∂x = e^(x − y) = softmax(x) over the reduced axes; 0 for an all −inf slice
        return self._kept(g) * xp.exp(x - xp.where(finite, y, 0.0))


def logsumexp(x: Tensor, axis=-1, keepdims: bool = False) -> Tensor:
    """y = log Σ_axis exp(x), computed as m + log Σ exp(x − m) with m the maximum, so logits as
    large as 1e4 neither overflow nor lose precision. A slice whose inputs are all −inf gives
    −inf (the log of an empty sum) and passes zero gradient, never NaN."""
    return LogSumExp.apply(x, axes=normalize_axis(axis, x.ndim, "logsumexp"), keepdims=keepdims)


def any(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return constant(x.data.any(axis=axis, keepdims=keepdims))


def all(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return constant(x.data.all(axis=axis, keepdims=keepdims))
