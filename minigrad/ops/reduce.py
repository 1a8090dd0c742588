"""Reductions over axes: sum, mean, max, min, var, logsumexp (and any/all, without gradient)."""

from __future__ import annotations

import math

from ..autograd import Function
from ..tensor import Tensor
from .common import constant, normalize_axis
from .elementwise import exp, masked_fill
from .shape import broadcast_to, reshape


def _kept_shape(shape, axes):
    """The shape a reduction over `axes` has with keepdims=True."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


class _Reduction(Function):
    """Shared bookkeeping: the reduced axes, and the gradient reshaped to keepdims form."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool):
        self.axes, self.keepdims = axes, keepdims

    def _grad_kept(self, grad: Tensor) -> Tensor:
        """grad with the reduced axes put back as size 1, so it broadcasts against the input."""
        if self.keepdims:
            return grad
        return reshape(grad, _kept_shape(self.inputs[0].shape, self.axes))


class Sum(_Reduction):
    """y = Σ_axes x"""

    needs_output = False

    def forward(self, x):
        return x.sum(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        # ∂y/∂x = 1 for every summed element: spread grad back over the summed axes
        return broadcast_to(self._grad_kept(grad), self.inputs[0].shape)


def sum(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return Sum.apply(x, axes=normalize_axis(axis, x.ndim, "sum"), keepdims=keepdims)


class Mean(_Reduction):
    """y = (1/n) Σ_axes x, n the number of elements averaged."""

    needs_output = False

    def forward(self, x):
        return x.mean(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        shape = self.inputs[0].shape
        n = math.prod(shape[a] for a in self.axes)
        # ∂y/∂x = 1/n
        return broadcast_to(self._grad_kept(grad) / n, shape)


def mean(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return Mean.apply(x, axes=normalize_axis(axis, x.ndim, "mean"), keepdims=keepdims)


class Max(_Reduction):
    """y = max_axes x. Ties split the gradient evenly among the maximal elements."""

    def forward(self, x):
        return x.max(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        (x,) = self.inputs
        y = self.output.data if self.keepdims else self.output.data.reshape(
            _kept_shape(x.shape, self.axes))
        # ∂y/∂x = 1/k at each of the k positions equal to the maximum, 0 elsewhere
        is_max = (x.data == y).astype(grad.dtype)
        share = is_max / is_max.sum(axis=self.axes, keepdims=True)
        return self._grad_kept(grad) * constant(share)


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
        (x,) = self.inputs
        n = math.prod(x.shape[a] for a in self.axes)
        centred = x - x.mean(axis=self.axes, keepdims=True)
        # ∂y/∂x = 2(x − x̄)/n  (the terms through x̄ sum to zero)
        return self._grad_kept(grad) * centred * (2.0 / n)


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
        (x,) = self.inputs
        y = self._grad_kept(self.output)
        y = masked_fill(y, constant(~self.xp.isfinite(y.data)), 0)
        # ∂y/∂x = e^(x − y) = softmax(x) over the reduced axes
        return self._grad_kept(grad) * exp(x - y)


def logsumexp(x: Tensor, axis=-1, keepdims: bool = False) -> Tensor:
    """y = log Σ_axis exp(x), computed as m + log Σ exp(x − m) with m the maximum, so logits as
    large as 1e4 neither overflow nor lose precision. A slice whose inputs are all −inf gives
    −inf (the log of an empty sum) and passes zero gradient, never NaN."""
    return LogSumExp.apply(x, axes=normalize_axis(axis, x.ndim, "logsumexp"), keepdims=keepdims)


def any(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return constant(x.data.any(axis=axis, keepdims=keepdims))


def all(x: Tensor, axis=None, keepdims: bool = False) -> Tensor:
    return constant(x.data.all(axis=axis, keepdims=keepdims))
