"""Reductions over axes: sum, mean, max, min, var, std, logsumexp (and any/all, without gradient).

Every reduction takes NumPy's `axis` (an int, a tuple of ints, or None for all axes) or, with
the same meaning, PyTorch's `dim`; passing both is an error.
"""

from __future__ import annotations

import math
import numbers

from ..autograd import Function
from ..tensor import LAST_AXIS, Tensor
from .common import axis_or_dim, constant, normalize_axis


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


def sum(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """y = Σ_axis x over `axis` (or `dim`): an int, a tuple of ints, or None for all axes.

    Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`.
    """
    axis = axis_or_dim(axis, dim, "sum")
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


def mean(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """y = (1/n) Σ_axis x, the average over `axis` (or `dim`; None = all axes).

    Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`.
    """
    axis = axis_or_dim(axis, dim, "mean")
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


def max(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """y = max_axes x (all axes when `axis`, or `dim`, is None). Returns the values only, also
    when called with `dim=` (PyTorch's `max(x, dim)` also returns indices: use `argmax`).

    Ties: when k elements share the maximum, each receives 1/k of the gradient (the gradient
    is split evenly, so their sum gets it exactly once). An empty tensor raises ValueError.
    """
    axis = axis_or_dim(axis, dim, "max")
    _check_nonempty(x, axis, "max")
    return Max.apply(x, axes=normalize_axis(axis, x.ndim, "max"), keepdims=keepdims)


class Min(Max):
    """y = min_axes x. Ties split the gradient evenly among the minimal elements."""

    def forward(self, x):
        return x.min(axis=self.axes, keepdims=self.keepdims)


def min(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """y = min_axes x (all axes when `axis`, or `dim`, is None); values only, ties split the
    gradient evenly, as in `max`. An empty tensor raises ValueError."""
    axis = axis_or_dim(axis, dim, "min")
    _check_nonempty(x, axis, "min")
    return Min.apply(x, axes=normalize_axis(axis, x.ndim, "min"), keepdims=keepdims)


def _check_nonempty(x: Tensor, axis, op: str) -> None:
    if x.data.size == 0:
        raise ValueError(f"{op}: cannot reduce an empty tensor of shape {tuple(x.shape)}")


class Var(_Reduction):
    """y = (1/(n − ddof)) Σ_axes (x − x̄)²; ddof = 0 (the default) is the population variance,
    as in NumPy."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool, ddof: int = 0):
        super().__init__(axes, keepdims)
        self.ddof = ddof

    def forward(self, x):
        return x.var(axis=self.axes, keepdims=self.keepdims, ddof=self.ddof)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        n = math.prod(x.shape[a] for a in self.axes)
        centred = x - x.mean(axis=self.axes, keepdims=True)
        # ∂y/∂x = 2(x − x̄)/(n − ddof)  (the terms through x̄ sum to zero)
        return self._kept(g) * centred * (2.0 / (n - self.ddof))


def var(x: Tensor, axis=None, keepdims: bool = False, ddof: int = 0, *, dim=None,
        correction: int | None = None) -> Tensor:
    """y = Σ_axis (x − x̄)² / (n − ddof) over `axis` (or `dim`; None = all axes).

    `ddof=0` (the default, as NumPy's) gives the population variance, `ddof=1` the unbiased
    sample variance; `correction` is PyTorch's name for `ddof` (PyTorch's own default is 1, this
    one stays 0). Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`. When
    n ≤ ddof > 0 there are no degrees of freedom left and ValueError is raised.
    """
    axis = axis_or_dim(axis, dim, "var")
    axes = normalize_axis(axis, x.ndim, "var")
    ddof = _ddof(x, axes, ddof, correction, "var")
    return Var.apply(x, axes=axes, keepdims=keepdims, ddof=ddof)


class Std(_Reduction):
    """y = √(Σ_axes (x − x̄)² / (n − ddof)), the standard deviation.

    Where y = 0 (all elements equal) the derivative does not exist; the gradient there is 0.
    """

    def __init__(self, axes: tuple[int, ...], keepdims: bool, ddof: int = 0):
        super().__init__(axes, keepdims)
        self.ddof = ddof

    def forward(self, x):
        return x.std(axis=self.axes, keepdims=self.keepdims, ddof=self.ddof)

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs, self.output)
        xp = self.ops
        n = math.prod(x.shape[a] for a in self.axes)
        y = self._kept(y)
        flat = self._kept(self.output.data) == 0        # no spread: the subgradient 0 (a mask)
        centred = x - x.mean(axis=self.axes, keepdims=True)
        # ∂y/∂x = (x − x̄) / ((n − ddof) y), from y² = var and ∂var/∂x = 2(x − x̄)/(n − ddof)
        grad_x = self._kept(g) * centred / (xp.where(flat, 1.0, y) * (n - self.ddof))
        return xp.where(flat, 0.0, grad_x)


def std(x: Tensor, axis=None, keepdims: bool = False, ddof: int = 0, *, dim=None,
        correction: int | None = None) -> Tensor:
    """y = √var(x), the standard deviation over `axis` (or `dim`; None = all axes).

    `ddof` and `correction` as in `var`: the default 0 is NumPy's population standard deviation,
    `ddof=1` (PyTorch's default, spelled `correction=1` there) the sample one. Shape: the
    reduced axes are dropped, or kept as size 1 with `keepdims`. Where all reduced elements are
    equal (y = 0) the gradient is 0, never NaN.
    """
    axis = axis_or_dim(axis, dim, "std")
    axes = normalize_axis(axis, x.ndim, "std")
    ddof = _ddof(x, axes, ddof, correction, "std")
    return Std.apply(x, axes=axes, keepdims=keepdims, ddof=ddof)


def _ddof(x: Tensor, axes, ddof, correction, op: str) -> int:
    """`ddof` or PyTorch's `correction` (not both), checked against the reduced length."""
    if correction is not None:
        if ddof != 0:
            raise TypeError(f"{op}: got ddof={ddof!r} and correction={correction!r}; they name "
                            f"the same argument (NumPy's and PyTorch's spelling), pass one")
        ddof = correction
    if not isinstance(ddof, numbers.Integral) or isinstance(ddof, bool) or ddof < 0:
        raise ValueError(f"{op}: ddof must be a non-negative int, got {ddof!r}")
    n = math.prod(x.shape[a] for a in axes)
    if ddof and n <= ddof:
        raise ValueError(f"{op}: ddof={ddof} leaves no degrees of freedom for {n} element(s) "
                         f"per result (shape {tuple(x.shape)}, axes {axes})")
    return int(ddof)


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


def logsumexp(x: Tensor, axis=LAST_AXIS, keepdims: bool = False, *, dim=None) -> Tensor:
    """y = log Σ_axis exp(x), computed as m + log Σ exp(x − m) with m the maximum, so logits as
    large as 1e4 neither overflow nor lose precision. A slice whose inputs are all −inf gives
    −inf (the log of an empty sum) and passes zero gradient, never NaN. `dim` is a synonym of
    `axis`; the reduced axes are dropped unless `keepdims`."""
    axis = axis_or_dim(axis, dim, "logsumexp")
    return LogSumExp.apply(x, axes=normalize_axis(axis, x.ndim, "logsumexp"), keepdims=keepdims)


def any(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """Is any element true (nonzero) along `axis` (or `dim`; None = all)? A bool tensor, no
    gradient."""
    axis = axis_or_dim(axis, dim, "any")
    return constant(x.data.any(axis=axis, keepdims=keepdims))


def all(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """Are all elements true (nonzero) along `axis` (or `dim`; None = all)? A bool tensor, no
    gradient."""
    axis = axis_or_dim(axis, dim, "all")
    return constant(x.data.all(axis=axis, keepdims=keepdims))
