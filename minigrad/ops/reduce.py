"""Reductions over axes: sum, mean, prod, max, min, var, std (and var_mean, std_mean),
logsumexp, and any/all without gradient.

Every reduction takes NumPy's `axis` (an int, a tuple of ints, or None for all axes) or, with
the same meaning, PyTorch's `dim`; passing both is an error.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import warnings

from ..autograd import Function
from ..tensor import LAST_AXIS, Tensor
from .common import as_float, axis_or_dim, constant, normalize_axis, zero_gradient
from .shape import astype


def _kept_shape(shape, axes):
    """The shape a reduction over `axes` has with keepdims=True."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def _reduced_axes(axis, x: Tensor, op: str) -> tuple[int, ...]:
    """normalize_axis for a reduction, where a 0-d tensor also accepts axis 0 and −1 (or a
    tuple of them), PyTorch's rule: they name the one element, so nothing is reduced."""
    if x.ndim == 0 and axis is not None:
        axes = axis if isinstance(axis, (tuple, list)) else (axis,)
        names_the_element = [isinstance(a, numbers.Integral) and not isinstance(a, bool)
                             and a in (0, -1) for a in axes]
        if False not in names_the_element:      # (this module's `all` is the reduction)
            return ()
    return normalize_axis(axis, x.ndim, op)


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


def sum(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, dtype=None) -> Tensor:
    """y = Σ_axis x over `axis` (or `dim`): an int, a tuple of ints, or None for all axes;
    accumulated in `dtype` when given (e.g. float64 for a float32 or integer tensor).

    Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`.
    """
    axis = axis_or_dim(axis, dim, "sum")
    if dtype is not None:
        x = astype(x, dtype)
    return Sum.apply(x, axes=_reduced_axes(axis, x, "sum"), keepdims=keepdims)


class Mean(_Reduction):
    """y = (1/n) Σ_axes x, n the number of elements averaged."""

    needs_output = False

    def forward(self, x):
        with _quiet_if_empty(x, self.axes):
            return x.mean(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        (g,) = self.values(grad)
        shape = self.inputs[0].shape
        n = math.prod(shape[a] for a in self.axes)
        if n == 0:                           # an empty slice: x has no element to receive any
            return zero_gradient(self, self.inputs[0], grad.dtype)
        # ∂y/∂x = 1/n
        return self.ops.broadcast_to(self._kept(g) / n, shape)


def mean(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, dtype=None) -> Tensor:
    """y = (1/n) Σ_axis x, the average over `axis` (or `dim`; None = all axes), computed in
    `dtype` when given. The mean of integers is float32 (minigrad's default float; NumPy
    would give float64). An empty slice gives NaN, as in NumPy and PyTorch.

    Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`.
    """
    axis = axis_or_dim(axis, dim, "mean")
    x = as_float(x) if dtype is None else astype(x, dtype)
    return Mean.apply(x, axes=_reduced_axes(axis, x, "mean"), keepdims=keepdims)


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
    is split evenly, so their sum gets it exactly once). Reducing over an axis of length 0
    raises ValueError; an empty tensor reduced along non-empty axes gives an empty result.
    """
    axis = axis_or_dim(axis, dim, "max")
    _check_nonempty(x, axis, "max")
    return Max.apply(x, axes=_reduced_axes(axis, x, "max"), keepdims=keepdims)


class Min(Max):
    """y = min_axes x. Ties split the gradient evenly among the minimal elements."""

    def forward(self, x):
        return x.min(axis=self.axes, keepdims=self.keepdims)


def min(x: Tensor, axis=None, keepdims: bool = False, *, dim=None) -> Tensor:
    """y = min_axes x (all axes when `axis`, or `dim`, is None); values only, ties split the
    gradient evenly, as in `max`. Reducing over an axis of length 0 raises ValueError."""
    axis = axis_or_dim(axis, dim, "min")
    _check_nonempty(x, axis, "min")
    return Min.apply(x, axes=_reduced_axes(axis, x, "min"), keepdims=keepdims)


def _check_nonempty(x: Tensor, axis, op: str) -> None:
    """A maximum over no element has no value: refuse a reduction over an axis of length 0 (an
    empty tensor reduced along its other axes gives an empty result, as NumPy and PyTorch)."""
    axes = _reduced_axes(axis, x, op)
    if x.data.size == 0 and (x.ndim == 0 or 0 in (x.shape[a] for a in axes)):
        raise ValueError(f"{op}: cannot reduce over an empty axis (shape "
                         f"{tuple(x.shape)}, axis {axis})")


class Prod(_Reduction):
    """y = Π_axes x"""

    needs_output = False

    def forward(self, x):
        return x.prod(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        if self.inputs[0].data.size == 0:    # an empty tensor has no element to receive any
            return zero_gradient(self, self.inputs[0], grad.dtype)
        # ∂y/∂x_i = Π_{k ≠ i} x_k, computed as (product before i)·(product after i) along the
        # reduced elements: exact where x holds zeros, to every order (y / x_i would be 0/0,
        # and a masked formula loses the derivative of the zeros' neighbours), and where y
        # underflows although Π_{k ≠ i} x_k does not
        return self._kept(g) * _product_of_others(self.ops, x, self.axes)


def _product_of_others(xp, x, axes):
    """o_i = Π_{k ≠ i} x_k over the elements of each slice along `axes`, shaped as x; xp is the
    array module or minigrad's operations (then recorded, differentiable)."""
    kept = [i for i in range(x.ndim) if i not in axes]
    order = tuple(kept + list(axes))
    moved = x.transpose(order)
    outer = moved.shape[:len(kept)]
    flat = moved.reshape(outer + (-1,))                     # (…, n): one slice per row
    ends = [(0, 0)] * len(outer)
    before = xp.cumprod(xp.pad(flat[..., :-1], ends + [(1, 0)], constant_values=1), axis=-1)
    backward = flat[..., ::-1]
    after = xp.cumprod(xp.pad(backward[..., :-1], ends + [(1, 0)], constant_values=1),
                       axis=-1)[..., ::-1]
    others = (before * after).reshape(moved.shape)
    inverse = tuple(order.index(i) for i in range(x.ndim))
    return others.transpose(inverse)


def prod(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, dtype=None) -> Tensor:
    """y = Π_axis x over `axis` (or `dim`; None = all axes), in `dtype` when given. The
    gradient Π_{k ≠ i} x_k is exact also where x holds zeros (not y/x = 0/0). Integers give
    int64, as NumPy and PyTorch."""
    axis = axis_or_dim(axis, dim, "prod")
    if dtype is not None:
        x = astype(x, dtype)
    return Prod.apply(x, axes=_reduced_axes(axis, x, "prod"), keepdims=keepdims)


class Var(_Reduction):
    """y = (1/(n − ddof)) Σ_axes (x − x̄)²; ddof = 0 (the default) is the population variance,
    as in NumPy."""

    def __init__(self, axes: tuple[int, ...], keepdims: bool, ddof: int = 0):
        super().__init__(axes, keepdims)
        self.ddof = ddof

    def forward(self, x):
        with _quiet_if_undefined(x, self.axes, self.ddof):
            return x.var(axis=self.axes, keepdims=self.keepdims, ddof=self.ddof)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        n = math.prod(x.shape[a] for a in self.axes)
        if n == 0:                           # an empty slice: x has no element to receive any
            return zero_gradient(self, self.inputs[0], grad.dtype)
        centred = x - x.mean(axis=self.axes, keepdims=True)
        # ∂y/∂x = 2(x − x̄)/(n − ddof)  (the terms through x̄ sum to zero); with no degrees of
        # freedom left the factor is 2/0 = inf, as the value's divisor is 0
        return self._kept(g) * centred * _over_dof(2.0, n, self.ddof)


def var(x: Tensor, axis=None, keepdims: bool = False, ddof: int = 0, *, dim=None,
        correction: int | None = None) -> Tensor:
    """y = Σ_axis (x − x̄)² / (n − ddof) over `axis` (or `dim`; None = all axes).

    `ddof=0` (the default, as NumPy's) gives the population variance, `ddof=1` the unbiased
    sample variance; `correction` is PyTorch's name for `ddof` (PyTorch's own default is 1, this
    one stays 0). Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`. When
    0 < n ≤ ddof no degrees of freedom are left: the divisor is max(n − ddof, 0) = 0, so the
    result is inf (NaN where the slice is constant) with a RuntimeWarning; an empty slice
    (n = 0) gives NaN, as in NumPy and PyTorch. Integers give float32.
    """
    axis = axis_or_dim(axis, dim, "var")
    x = as_float(x)
    axes = _reduced_axes(axis, x, "var")
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
        with _quiet_if_undefined(x, self.axes, self.ddof):
            return x.std(axis=self.axes, keepdims=self.keepdims, ddof=self.ddof)

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs, self.output)
        xp = self.ops
        n = math.prod(x.shape[a] for a in self.axes)
        if n == 0:                           # an empty slice: x has no element to receive any
            return zero_gradient(self, self.inputs[0], grad.dtype)
        y = self._kept(y)
        # no spread: the subgradient 0 (a mask). A constant slice counts as flat although its
        # rounded y may be 1e-17 rather than 0: (x − x̄)/y would then be rounding over rounding
        data = self.inputs[0].data
        flat = self._kept(self.output.data) == 0
        if n > self.ddof:                    # (without degrees of freedom y is NaN: kept)
            flat = flat | (data.max(axis=self.axes, keepdims=True) ==
                           data.min(axis=self.axes, keepdims=True))
        centred = x - x.mean(axis=self.axes, keepdims=True)
        # ∂y/∂x = (x − x̄) / ((n − ddof) y), from y² = var and ∂var/∂x = 2(x − x̄)/(n − ddof)
        with _silenced():                    # no degrees of freedom left: inf and NaN, as y
            scale = _over_dof(1.0, n, self.ddof)
            grad_x = self._kept(g) * centred * scale / xp.where(flat, 1.0, y)
        return xp.where(flat, 0.0, grad_x)


def std(x: Tensor, axis=None, keepdims: bool = False, ddof: int = 0, *, dim=None,
        correction: int | None = None) -> Tensor:
    """y = √var(x), the standard deviation over `axis` (or `dim`; None = all axes).

    `ddof` and `correction` as in `var`: the default 0 is NumPy's population standard deviation,
    `ddof=1` (PyTorch's default, spelled `correction=1` there) the sample one. Shape: the
    reduced axes are dropped, or kept as size 1 with `keepdims`. Where all reduced elements are
    equal (y = 0) the gradient is 0, never NaN; an empty slice gives NaN.
    """
    axis = axis_or_dim(axis, dim, "std")
    x = as_float(x)
    axes = _reduced_axes(axis, x, "std")
    ddof = _ddof(x, axes, ddof, correction, "std")
    return Std.apply(x, axes=axes, keepdims=keepdims, ddof=ddof)


def _quiet_if_empty(x, axes):
    """A context that silences NumPy's warnings about reducing empty slices (the NaN result
    is documented), and changes nothing otherwise."""
    if math.prod(x.shape[a] for a in axes) == 0:
        return _silenced()
    return contextlib.nullcontext()


def _quiet_if_undefined(x, axes, ddof: int):
    """As `_quiet_if_empty`, also where ddof ≥ n (the warning was given once, by `_ddof`)."""
    if math.prod(x.shape[a] for a in axes) <= ddof:
        return _silenced()
    return contextlib.nullcontext()


def _over_dof(numerator: float, n: int, ddof: int) -> float:
    """numerator / max(n − ddof, 0): inf when no degrees of freedom are left (NumPy's and
    PyTorch's divisor)."""
    return numerator / (n - ddof) if n > ddof else math.inf


@contextlib.contextmanager
def _silenced():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def var_mean(x: Tensor, axis=None, keepdims: bool = False, ddof: int = 0, *, dim=None,
             correction: int | None = None) -> tuple[Tensor, Tensor]:
    """(var(x), mean(x)) over `axis` in one call, as torch.var_mean; `ddof`/`correction` as in
    `var` (default 0, NumPy's; PyTorch's default is 1)."""
    return (var(x, axis, keepdims, ddof, dim=dim, correction=correction),
            mean(x, axis, keepdims, dim=dim))


def std_mean(x: Tensor, axis=None, keepdims: bool = False, ddof: int = 0, *, dim=None,
             correction: int | None = None) -> tuple[Tensor, Tensor]:
    """(std(x), mean(x)) over `axis` in one call, as torch.std_mean; `ddof`/`correction` as in
    `std` (default 0, NumPy's; PyTorch's default is 1)."""
    return (std(x, axis, keepdims, ddof, dim=dim, correction=correction),
            mean(x, axis, keepdims, dim=dim))


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
    if ddof and 0 < n <= ddof:
        # NumPy and PyTorch divide by max(n − ddof, 0): inf, or NaN where x is constant
        warnings.warn(f"{op}: ddof={ddof} leaves no degrees of freedom for {n} element(s) per "
                      f"result (shape {tuple(x.shape)}, axes {axes}); the result is inf or NaN",
                      RuntimeWarning, stacklevel=3)
    return int(ddof)


class LogSumExp(_Reduction):
    """y = log Σ_axes eˣ, computed as m + log Σ e^(x − m) with m the maximum (no overflow).

    A slice whose inputs are all −inf, or that has no element, gives −inf (the log of an
    empty sum) and zero gradient.
    """

    needs_output = False

    def forward(self, x):
        xp = self.xp
        if math.prod(x.shape[a] for a in self.axes) == 0:     # the log of an empty sum
            shape = _kept_shape(x.shape, self.axes) if self.keepdims else tuple(
                n for i, n in enumerate(x.shape) if i not in self.axes)
            return xp.full(shape, -xp.inf, dtype=x.dtype)
        m = x.max(axis=self.axes, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)          # all −inf slice: shift by 0, not by −inf
        total = xp.exp(x - m).sum(axis=self.axes, keepdims=True)
        empty = total == 0
        y = xp.log(xp.where(empty, 1, total)) + m
        y = xp.where(empty, -xp.inf, y).astype(x.dtype, copy=False)
        return y if self.keepdims else y.reshape(
            tuple(n for i, n in enumerate(x.shape) if i not in self.axes))

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        xp, data = self.ops, self.inputs[0].data
        if data.size == 0:
            return zero_gradient(self, self.inputs[0], grad.dtype)
        # ∂y/∂x = e^(x − y) = softmax(x) over the reduced axes, computed from x − max(x) and
        # never from the rounded y (at x = (1e20, 1e20), e^(x − y) is 1, not ½). Where the
        # maximum is +inf, the +inf elements share the gradient evenly (softmax's limit); an
        # all −inf slice passes none. The maximum is a constant: softmax ignores any shift.
        m = data.max(axis=self.axes, keepdims=True)
        top = (data == m) & ~self.xp.isfinite(m)        # an infinite maximum: inf − inf → 0
        with _silenced():                    # the inf − inf replaced by `top`, or masked
            e = xp.exp(xp.where(top, 0.0, x - m))
            softmax = e / e.sum(axis=self.axes, keepdims=True)
        return xp.where(m == -self.xp.inf, 0.0, self._kept(g) * softmax)


def logsumexp(x: Tensor, axis=LAST_AXIS, keepdims: bool = False, *, dim=None) -> Tensor:
    """y = log Σ_axis exp(x), computed as m + log Σ exp(x − m) with m the maximum, so logits as
    large as 1e4 neither overflow nor lose precision. A slice whose inputs are all −inf gives
    −inf (the log of an empty sum) and passes zero gradient, never NaN. `dim` is a synonym of
    `axis`; the reduced axes are dropped unless `keepdims`."""
    axis = axis_or_dim(axis, dim, "logsumexp")
    x = as_float(x)
    return LogSumExp.apply(x, axes=_reduced_axes(axis, x, "logsumexp"), keepdims=keepdims)


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
