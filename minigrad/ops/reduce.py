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
from typing import NamedTuple

import numpy as np

from ..backend import backend_of
from ..function import Function
from ..tensor import LAST_AXIS, Tensor
from .common import (as_float, axis_or_dim, constant, every_axis_if_empty, keepdims_or_keepdim,
                     no_empty_dim, normalize_axis, one_axis, zero_gradient)
from .elementwise import abs as magnitude
from .elementwise import maximum, minimum, where
from .compare import isnan
from .indexing import argmax, argmin, take_along_axis
from .shape import astype, concat, reshape, squeeze


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


def sum(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, dtype=None,
        keepdim=None) -> Tensor:
    """y = Σ_axis x over `axis` (or `dim`): an int, a tuple of ints, or None for all axes;
    accumulated in `dtype` when given (e.g. float64 for a float32 or integer tensor).

    Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`.
    """
    axis = axis_or_dim(axis, every_axis_if_empty(dim), "sum")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "sum")
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


def mean(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, dtype=None,
        keepdim=None) -> Tensor:
    """y = (1/n) Σ_axis x, the average over `axis` (or `dim`; None = all axes), computed in
    `dtype` when given. The mean of integers is float32 (minigrad's default float; NumPy
    would give float64). An empty slice gives NaN, as in NumPy and PyTorch.

    Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`.
    """
    axis = axis_or_dim(axis, every_axis_if_empty(dim), "mean")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "mean")
    x = as_float(x) if dtype is None else astype(x, dtype)
    return Mean.apply(x, axes=_reduced_axes(axis, x, "mean"), keepdims=keepdims)


class Max(_Reduction):
    """y = max_axes x. Ties split the gradient evenly among the maximal elements; in a slice
    holding NaN (its result), the NaN elements share it."""

    def forward(self, x):
        return x.max(axis=self.axes, keepdims=self.keepdims)

    def backward(self, grad):
        (g,) = self.values(grad)
        x, y = self.inputs[0].data, self._kept(self.output.data)
        # ∂y/∂x = 1/k at each of the k positions equal to the maximum, 0 elsewhere (a constant);
        # NaN equals nothing, so the NaN positions of a NaN result are matched by isnan
        hit = x == y
        if x.dtype.kind == "f":
            hit |= self.xp.isnan(x) & self.xp.isnan(y)
        is_max = hit.astype(grad.dtype)
        share = is_max / is_max.sum(axis=self.axes, keepdims=True)
        return self._kept(g) * share


class MaxResult(NamedTuple):
    """(values, indices) of a maximum or minimum along one axis, as torch.return_types.max:
    named fields, or unpack it as `values, indices = x.max(dim=1)`."""
    values: Tensor
    indices: Tensor


def max(x: Tensor, *args, axis=None, keepdims=None, dim=None, keepdim=None):
    """The maximum over `axis` (NumPy's spelling: the values) or along `dim` (PyTorch's: a
    `MaxResult` (values, indices) when `dim` is an int, as torch.max(x, dim)). All axes when
    neither is given (values).

    The spelling decides the result: `axis=` or `keepdims=` give the values, `dim=` or
    `keepdim=` the pair. A bare positional axis (`x.max(1)`) means the values in NumPy and the
    pair in PyTorch, so it raises, saying which keyword to write. A Tensor in its place is
    PyTorch's `torch.max(x, other)`: the elementwise `maximum`.

    Gradient of the values: with `axis`, ties split it evenly (each of k equal maxima gets 1/k);
    with `dim`, all of it goes to the returned index (the first maximum), as in PyTorch.
    Reducing over an axis of length 0 raises ValueError; an empty tensor reduced along
    non-empty axes gives an empty result.
    """
    if args and isinstance(args[0], Tensor):
        return _elementwise(maximum, x, args, axis, keepdims, dim, keepdim, "max")
    pair, axis, keep = _extreme(x, args, axis, keepdims, dim, keepdim, "max", argmax)
    return pair or Max.apply(x, axes=_reduced_axes(axis, x, "max"), keepdims=keep)


class Min(Max):
    """y = min_axes x. Ties split the gradient evenly among the minimal elements."""

    def forward(self, x):
        return x.min(axis=self.axes, keepdims=self.keepdims)


def min(x: Tensor, *args, axis=None, keepdims=None, dim=None, keepdim=None):
    """The minimum over `axis` (the values) or along `dim` (a `MaxResult` (values, indices)),
    with `max`'s rules for spellings, ties and empty axes (a Tensor in the axis's place: the
    elementwise `minimum`)."""
    if args and isinstance(args[0], Tensor):
        return _elementwise(minimum, x, args, axis, keepdims, dim, keepdim, "min")
    pair, axis, keep = _extreme(x, args, axis, keepdims, dim, keepdim, "min", argmin)
    return pair or Min.apply(x, axes=_reduced_axes(axis, x, "min"), keepdims=keep)


def amax(x: Tensor, axis=None, keepdims=None, *, dim=None, keepdim=None) -> Tensor:
    """The maximum's values over `axis` (or `dim`; all axes when None, or PyTorch's dim=()), as
    numpy.amax and torch.amax, which agree: a positional axis is fine here. Ties split the
    gradient evenly, as in PyTorch's amax."""
    return _extreme_values(x, axis, keepdims, dim, keepdim, "amax", Max)


def amin(x: Tensor, axis=None, keepdims=None, *, dim=None, keepdim=None) -> Tensor:
    """The minimum's values, as `amax` (numpy.amin, torch.amin)."""
    return _extreme_values(x, axis, keepdims, dim, keepdim, "amin", Min)


def _extreme_values(x: Tensor, axis, keepdims, dim, keepdim, op: str, cls) -> Tensor:
    """amax/amin: `cls` (Max or Min) over the axes named either way."""
    axis = axis_or_dim(axis, every_axis_if_empty(dim), op)
    keep = keepdims_or_keepdim(keepdims, keepdim, op)
    _check_nonempty(x, axis, op)
    return cls.apply(x, axes=_reduced_axes(axis, x, op), keepdims=keep)


def _elementwise(function, x: Tensor, args, axis, keepdims, dim, keepdim, op: str) -> Tensor:
    """PyTorch's max(x, other) / min(x, other): `function` (maximum or minimum) of the two,
    which takes no axis."""
    if len(args) > 1 or (axis, keepdims, dim, keepdim) != (None, None, None, None):
        raise TypeError(f"{op}: {op}(x, other) with a Tensor `other` is PyTorch's elementwise "
                        f"{function.__name__} and takes no axis or further argument")
    return function(x, args[0])


def _extreme(x: Tensor, args, axis, keepdims, dim, keepdim, op: str, arg):
    """max/min: which library's call this is. Returns (PyTorch's (values, indices) pair, None,
    None), or (None, axis, keepdims) for NumPy's reduction."""
    if len(args) > 1:
        raise TypeError(f"{op}: takes one positional argument (the axis), got {len(args)}; "
                        f"write keepdims= (with axis=) or keepdim= (with dim=)")
    if axis is not None and dim is not None:
        axis_or_dim(axis, dim, op)                       # raises: one argument, named twice
    if args:
        given = args[0]
        if axis is not None or dim is not None:
            raise TypeError(f"{op}: got axis={given!r} and dim={dim!r} (or axis= twice); "
                            f"they name the same argument, pass one of them")
        if keepdim is not None:
            dim = given                                  # x.max(1, keepdim=True): PyTorch's
        elif keepdims is not None or not isinstance(given, numbers.Integral):
            axis = given                                 # keepdims=, or a tuple: NumPy's
        else:
            raise TypeError(
                f"{op}: x.{op}({', '.join(map(repr, args))}) is ambiguous: NumPy's gives the "
                f"values, PyTorch's (values, indices). Write x.{op}(axis={given!r}) for the "
                f"values, or x.{op}(dim={given!r}) for (values, indices)")
    torch_call = dim is not None or keepdim is not None
    if torch_call and (axis is not None or keepdims is not None):
        raise TypeError(f"{op}: got NumPy's axis/keepdims and PyTorch's dim/keepdim together; "
                        f"pass one library's spelling")
    if torch_call and dim is not None:
        if not isinstance(dim, numbers.Integral) or isinstance(dim, bool):
            raise TypeError(f"{op}: dim must be an int (PyTorch's {op} takes one dim), got "
                            f"{dim!r}; for several axes write {op}(axis={dim!r})")
        _check_nonempty(x, dim, op)
        index = arg(x, dim, keepdims=True)
        values = take_along_axis(x, index, dim) if x.ndim else x
        index = index if x.ndim else reshape(index, ())
        if not keepdim and x.ndim:
            values, index = squeeze(values, dim), squeeze(index, dim)
        return MaxResult(values, index), None, None
    _check_nonempty(x, axis, op)
    return None, axis, bool(keepdims) or bool(keepdim)


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


def prod(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, dtype=None,
        keepdim=None) -> Tensor:
    """y = Π_axis x over `axis` (or `dim`; None = all axes), in `dtype` when given. The
    gradient Π_{k ≠ i} x_k is exact also where x holds zeros (not y/x = 0/0). Integers give
    int64, as NumPy and PyTorch."""
    axis = axis_or_dim(axis, no_empty_dim(dim, "prod"), "prod")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "prod")
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


class _NoDim:
    """var/std's default for `dim`: tells `dim=None` written out (PyTorch's spelling, all axes,
    correction 1) from no dim at all."""

    def __repr__(self) -> str:
        return "None"


_NO_DIM = _NoDim()


def _axis_and_spelling(axis, dim, keepdim, op: str) -> tuple[bool, object]:
    """(whether the call is spelled PyTorch's way, with `dim=` — None included — or `keepdim=`;
    the axis it names, None for all)."""
    if dim is _NO_DIM:
        return keepdim is not None, axis
    if axis is not None:
        raise TypeError(f"{op}: got axis={axis!r} and dim={dim!r}; they name the same argument "
                        f"(NumPy's and PyTorch's spelling), pass one of them")
    return True, every_axis_if_empty(dim)


def var(x: Tensor, axis=None, *positional, keepdims: bool = False, ddof: int | None = None,
        dim=_NO_DIM, correction: int | None = None, keepdim=None,
        unbiased: bool | None = None) -> Tensor:
    """y = Σ_axis (x − x̄)² / (n − ddof) over `axis` (or `dim`; None = all axes).

    `ddof=0` gives the population variance, `ddof=1` the unbiased sample variance; `correction`
    is PyTorch's name for `ddof`, and `unbiased=True`/`False` its older one for 1/0. Everything
    after the axis is a keyword: a second positional argument is PyTorch's `unbiased` and
    NumPy's `dtype`, so it raises. Left out, it follows the call's spelling: 0 (NumPy's default)
    with `axis=` or no axis, 1 (PyTorch's) when the call says `dim=` (None too) or `keepdim=`.
    Shape: the reduced axes are dropped, or kept as size 1 with `keepdims`. When 0 < n ≤ ddof no degrees
    of freedom are left: the divisor is max(n − ddof, 0) = 0, so the result is inf (NaN where
    the slice is constant) with a RuntimeWarning; an empty slice (n = 0) gives NaN, as in NumPy
    and PyTorch. Integers give float32.
    """
    _no_positional("var", positional)
    pytorch, axis = _axis_and_spelling(axis, dim, keepdim, "var")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "var")
    x = as_float(x)
    axes = _reduced_axes(axis, x, "var")
    ddof = _ddof(x, axes, ddof, correction, unbiased, "var", pytorch)
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


def std(x: Tensor, axis=None, *positional, keepdims: bool = False, ddof: int | None = None,
        dim=_NO_DIM, correction: int | None = None, keepdim=None,
        unbiased: bool | None = None) -> Tensor:
    """y = √var(x), the standard deviation over `axis` (or `dim`; None = all axes).

    `ddof`, `correction` and `unbiased` as in `var` (keywords, as everything after the axis):
    0 is the population standard deviation, 1 the sample one; left out, 0 (NumPy's), or 1 when
    the call says `dim=` (None too) or `keepdim=` (PyTorch's). Shape:
    the reduced axes are dropped, or kept as size 1 with `keepdims`. Where all reduced elements are
    equal (y = 0) the gradient is 0, never NaN; an empty slice gives NaN.
    """
    _no_positional("std", positional)
    pytorch, axis = _axis_and_spelling(axis, dim, keepdim, "std")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "std")
    x = as_float(x)
    axes = _reduced_axes(axis, x, "std")
    ddof = _ddof(x, axes, ddof, correction, unbiased, "std", pytorch)
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


def var_mean(x: Tensor, axis=None, *positional, keepdims: bool = False,
             ddof: int | None = None, dim=_NO_DIM, correction: int | None = None, keepdim=None,
             unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    """(var(x), mean(x)) over `axis` in one call, as torch.var_mean; `ddof`/`correction`/
    `unbiased` as in `var` (left out: 0, or 1 in a call with `dim=`/`keepdim=`)."""
    _no_positional("var_mean", positional)
    return (var(x, axis, keepdims=keepdims, ddof=ddof, dim=dim, correction=correction,
                keepdim=keepdim, unbiased=unbiased),
            mean(x, axis, keepdims, dim=None if dim is _NO_DIM else dim, keepdim=keepdim))


def std_mean(x: Tensor, axis=None, *positional, keepdims: bool = False,
             ddof: int | None = None, dim=_NO_DIM, correction: int | None = None, keepdim=None,
             unbiased: bool | None = None) -> tuple[Tensor, Tensor]:
    """(std(x), mean(x)) over `axis` in one call, as torch.std_mean; `ddof`/`correction`/
    `unbiased` as in `std` (left out: 0, or 1 in a call with `dim=`/`keepdim=`)."""
    _no_positional("std_mean", positional)
    return (std(x, axis, keepdims=keepdims, ddof=ddof, dim=dim, correction=correction,
                keepdim=keepdim, unbiased=unbiased),
            mean(x, axis, keepdims, dim=None if dim is _NO_DIM else dim, keepdim=keepdim))


def _no_positional(op: str, positional: tuple) -> None:
    """var/std: arguments after the axis must be named (PyTorch's second positional argument
    is `unbiased`, NumPy's `dtype`, minigrad's own would have been `keepdims`)."""
    if positional:
        raise TypeError(f"{op}: got {len(positional)} positional argument(s) after the axis "
                        f"({', '.join(map(repr, positional))}); PyTorch reads the next one as "
                        f"`unbiased` and NumPy as `dtype`, so name them: keepdims=/keepdim=, "
                        f"ddof=/correction= or unbiased=")


def _ddof(x: Tensor, axes, ddof, correction, unbiased, op: str, pytorch: bool) -> int:
    """`ddof`, or PyTorch's `correction` or `unbiased` (one of them), checked against the
    reduced length. Left out, it is NumPy's 0, or PyTorch's 1 in a call spelled PyTorch's way
    (`dim=`, `keepdim=`)."""
    if unbiased is not None:
        if ddof is not None or correction is not None:
            raise TypeError(f"{op}: got unbiased={unbiased!r} with ddof={ddof!r} or "
                            f"correction={correction!r}; they name the same argument, pass one")
        if not isinstance(unbiased, bool):
            raise TypeError(f"{op}: unbiased must be True or False, got {unbiased!r}")
        ddof = int(unbiased)
    if ddof is None and correction is None:
        ddof = 1 if pytorch else 0
    elif correction is not None:
        if ddof is not None:
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


def logsumexp(x: Tensor, axis=LAST_AXIS, keepdims: bool = False, *, dim=None,
              keepdim=None) -> Tensor:
    """y = log Σ_axis exp(x), computed as m + log Σ exp(x − m) with m the maximum, so logits as
    large as 1e4 neither overflow nor lose precision. A slice whose inputs are all −inf gives
    −inf (the log of an empty sum) and passes zero gradient, never NaN. `dim` is a synonym of
    `axis`; the reduced axes are dropped unless `keepdims`."""
    axis = axis_or_dim(axis, no_empty_dim(dim, "logsumexp"), "logsumexp")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "logsumexp")
    x = as_float(x)
    return LogSumExp.apply(x, axes=_reduced_axes(axis, x, "logsumexp"), keepdims=keepdims)


def any(x: Tensor, axis=None, keepdims: bool = False, *, dim=None,
        keepdim=None) -> Tensor:
    """Is any element true (nonzero) along `axis` (or `dim`; None = all)? A bool tensor, no
    gradient."""
    axis = axis_or_dim(axis, dim, "any")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "any")
    return constant(x.data.any(axis=axis, keepdims=keepdims), (x,),
                    (_truth_reduction, "any", axis, keepdims))


def all(x: Tensor, axis=None, keepdims: bool = False, *, dim=None,
        keepdim=None) -> Tensor:
    """Are all elements true (nonzero) along `axis` (or `dim`; None = all)? A bool tensor, no
    gradient."""
    axis = axis_or_dim(axis, dim, "all")
    keepdims = keepdims_or_keepdim(keepdims, keepdim, "all")
    return constant(x.data.all(axis=axis, keepdims=keepdims), (x,),
                    (_truth_reduction, "all", axis, keepdims))


def _truth_reduction(name, axis, keepdims, array):
    """any or all on an array (a compiled step computes it again at replay)."""
    return getattr(array, name)(axis=axis, keepdims=keepdims)


# ---------------------------------------------------------------------------------------------
# Cumulative reductions along an axis: cumsum, cumprod, cummax, cummin, logcumsumexp.
#
# Each output y_j reads x_0 … x_j, so each gradient is a sum over the outputs at or after the
# input's position: a cumulative sum taken from the end of the axis. The running maximum and
# log-sum-exp are computed in log₂(n) whole-array steps (a doubling scan), which needs nothing
# beyond elementwise operations from the array module.

def _along(axis: int, part) -> tuple:
    """The index of `part` (an int or a slice) along `axis`, everything on the others."""
    return (slice(None),) * axis + (part,)


def _reversed(axis: int) -> tuple:
    return _along(axis, slice(None, None, -1))


def _prepare(x: Tensor, axis, dim, dtype, op: str):
    """(x, axis) for a scan: NumPy's axis=None scans the flattened tensor; a 0-d tensor scans
    its one element (PyTorch's rule for dim 0 or -1)."""
    axis = axis_or_dim(axis, dim, op)
    if dtype is not None:
        x = astype(x, dtype)
    if axis is None:
        return reshape(x, -1), 0, None
    axis = one_axis(axis, x.ndim, op)
    if x.ndim == 0:
        return reshape(x, 1), 0, ()
    return x, axis, None


class CumSum(Function):
    """y_j = Σ_{i ≤ j} x_i along `axis`."""

    needs_output = False

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return self.xp.cumsum(x, axis=self.axis)

    def backward(self, grad):
        (g,) = self.values(grad)
        back = _reversed(self.axis)
        # ∂y_j/∂x_i = 1 for j ≥ i: ∂L/∂x_i = Σ_{j ≥ i} g_j, a cumulative sum from the end
        return self.ops.cumsum(g[back], axis=self.axis)[back]


def cumsum(x: Tensor, axis: int | None = None, *, dim: int | None = None, dtype=None) -> Tensor:
    """y_j = x_0 + … + x_j along `axis` (or `dim`; the flattened tensor when None, as NumPy),
    accumulated in `dtype` when given. Integers stay integers (int64, as NumPy and PyTorch)."""
    x, axis, shape = _prepare(x, axis, dim, dtype, "cumsum")
    y = CumSum.apply(x, axis=axis)
    return y if shape is None else reshape(y, shape)


class CumProd(Function):
    """y_j = Π_{i ≤ j} x_i along `axis`."""

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return self.xp.cumprod(x, axis=self.axis)

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs, self.output)
        axis = self.axis
        if not (self.inputs[0].data == 0).any():
            back = _reversed(axis)
            # ∂y_j/∂x_i = y_j / x_i for j ≥ i: ∂L/∂x_i = (Σ_{j ≥ i} g_j y_j) / x_i
            return self.ops.cumsum((g * y)[back], axis=axis)[back] / x
        # with zeros, y_j / x_i is 0/0: use ∂y_j/∂x_i = Π_{k < i} x_k · Π_{i < k ≤ j} x_k, so
        # ∂L/∂x_i = P_i · S_i with P_i = Π_{k < i} x_k and S_i = g_i + x_{i+1} S_{i+1}
        n = x.shape[axis]
        at = [_along(axis, i) for i in range(n)]
        later = [None] * n
        later[n - 1] = g[at[n - 1]]
        for i in range(n - 2, -1, -1):
            later[i] = g[at[i]] + x[at[i + 1]] * later[i + 1]
        parts, before = [later[0]], None
        for i in range(1, n):
            before = x[at[i - 1]] if before is None else before * x[at[i - 1]]
            parts.append(before * later[i])
        return self.ops.stack(parts, axis=axis)


def cumprod(x: Tensor, axis: int | None = None, *, dim: int | None = None,
            dtype=None) -> Tensor:
    """y_j = x_0 · … · x_j along `axis` (or `dim`; the flattened tensor when None). The
    gradient is exact also where x holds zeros (Σ_{j ≥ i} g_j Π_{k ≤ j, k ≠ i} x_k)."""
    x, axis, shape = _prepare(x, axis, dim, dtype, "cumprod")
    y = CumProd.apply(x, axis=axis)
    return y if shape is None else reshape(y, shape)


def _doubling_scan(xp, x, axis: int, combine):
    """y_j = x_0 ∘ x_1 ∘ … ∘ x_j along axis for an associative ∘, in ⌈log₂ n⌉ steps: after the
    step with shift s, y_j combines the 2s elements up to j."""
    y = x.copy()
    n, shift = x.shape[axis], 1
    while shift < n:
        head, tail = _along(axis, slice(shift, None)), _along(axis, slice(None, n - shift))
        step = combine(y[head], y[tail])
        y = y.copy()
        y[head] = step
        shift *= 2
    return y


def _running_extreme_at(axis: int, largest: bool, data):
    """Where the running maximum (or minimum) along axis was found, int64, from `data` alone
    (a compiled step computes it again from each replay's array)."""
    xp = backend_of(data).xp
    if data.size == 0:
        return xp.zeros(data.shape, dtype="int64")
    best = _doubling_scan(xp, data, axis, xp.maximum if largest else xp.minimum)
    steps = xp.arange(data.shape[axis]).reshape(
        tuple(n if i == axis else 1 for i, n in enumerate(data.shape)))
    # the last position at or before j holding the running extreme (PyTorch's ties); a NaN is
    # the extreme from where it stands on (maximum and minimum carry it), as in NumPy and
    # PyTorch, and it equals no value, so NaN positions are matched by isnan
    hit = data == best
    if data.dtype.kind == "f":
        hit |= xp.isnan(data) & xp.isnan(best)
    where_best = xp.where(hit, steps, 0)
    return _doubling_scan(xp, where_best, axis, xp.maximum).astype("int64")


def _cumulative_extreme(x: Tensor, axis, dim, op: str, largest: bool) -> tuple:
    x, axis, shape = _prepare(x, axis, dim, None, op)
    kernel = (_running_extreme_at, axis, largest)
    index = constant(_running_extreme_at(axis, largest, x.data), [x], kernel)
    values = take_along_axis(x, index, axis)
    if shape is not None:
        return reshape(values, shape), reshape(index, shape)
    return values, index


def cummax(x: Tensor, axis: int | None = None, *, dim: int | None = None):
    """(values, indices): the running maximum along `axis` (or `dim`) and where it was found
    (int64; among equal maxima the latest, as PyTorch; from a NaN on, NaN and the latest NaN's
    position, as PyTorch and numpy.maximum.accumulate). The gradient of each value goes to that
    position."""
    return _cumulative_extreme(x, axis, dim, "cummax", True)


def cummin(x: Tensor, axis: int | None = None, *, dim: int | None = None):
    """(values, indices): the running minimum along `axis` (or `dim`), as `cummax`."""
    return _cumulative_extreme(x, axis, dim, "cummin", False)


class LogCumSumExp(Function):
    """y_j = log Σ_{i ≤ j} e^{x_i} along `axis`, without overflow."""

    needs_output = False

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return _doubling_scan(self.xp, x, self.axis, self.xp.logaddexp)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y_j/∂x_i = e^{x_i − y_j} ≤ 1 for j ≥ i: ∂L/∂x_i = Σ_{j ≥ i} g_j e^{x_i − y_j}, the
        # softmax of the prefix x_0 … x_j at i. It is computed from differences to the running
        # maximum m_j, never from the rounded y_j (at x = (1e20, 1e20) e^{x_0 − y_1} would be
        # 1, not ½). The +inf elements of a prefix share it (softmax's limit); an all −inf
        # prefix (y_j = −inf) passes no gradient, never NaN (PyTorch gives NaN).
        data, axis = self.inputs[0].data, self.axis
        with _silenced():                      # inf − inf where equal: replaced by 0 below
            if self.ops is self.xp:
                return _logcumsumexp_gradient(self.xp, g, data, axis)
            return _logcumsumexp_recorded(self.ops, g, x, data, axis)


def _below(xp, u, v):
    """u − v for u ≤ v, and 0 where they are equal (two equal infinities, not NaN)."""
    return xp.where(u == v, 0.0, u - v)


def _logcumsumexp_gradient(xp, g, x, axis: int):
    """Σ_{j ≥ i} g_j e^{x_i − y_j} on arrays, in O(n log n) whole-array steps. With the running
    maximum m and s_j = Σ_{k ≤ j} e^{x_k − m_j} ∈ [1, j + 1] (so e^{y_j} = e^{m_j} s_j):
        s_j = e^{m_{j−1} − m_j} s_{j−1} + e^{x_j − m_j}
        S_i = g_i / s_i + e^{m_i − m_{i+1}} S_{i+1},   ∂L/∂x_i = e^{x_i − m_i} S_i,
    two linear recurrences whose factors are at most 1, so nothing overflows."""
    m = _doubling_scan(xp, x, axis, xp.maximum)
    n = x.shape[axis]
    rest = _along(axis, slice(1, None))
    head = _along(axis, slice(None, n - 1))
    step = xp.ones(x.shape, dtype=x.dtype)             # e^{m_{j−1} − m_j}, 1 at j = 0
    step[rest] = xp.exp(_below(xp, m[head], m[rest]))
    own = xp.exp(_below(xp, x, m))                     # e^{x_j − m_j}
    total = _affine_scan(xp, step, own, axis)          # s_j
    back = _reversed(axis)
    later = xp.ones(x.shape, dtype=x.dtype)            # e^{m_i − m_{i+1}}, 1 at i = n − 1
    later[head] = step[rest]
    tail = _affine_scan(xp, later[back], (g / total)[back], axis)[back]      # S_i
    return xp.where(m == -xp.inf, 0.0, own * tail)     # y_i = −inf: none


def _logcumsumexp_recorded(ops, g, x, data, axis: int):
    """The same gradient as a recorded graph, differentiable again: the (…, n, n) matrix of
    prefix softmaxes W_ij = e^{x_i − y_j} (i ≤ j), shifted by the running maximum m_j (a
    constant, which softmax ignores), times g."""
    xp = backend_of(data).xp
    last = data.ndim - 1
    m = _doubling_scan(xp, data, axis, xp.maximum).swapaxes(axis, last)[..., None, :]
    xs, gs = x.swapaxes(axis, last), g.swapaxes(axis, last)
    n = data.shape[axis]
    upper = xp.arange(n)[:, None] <= xp.arange(n)[None, :]          # i ≤ j
    x_ij = data.swapaxes(axis, last)[..., :, None]
    top = upper & (x_ij == m) & ~xp.isfinite(m)      # an infinite maximum: inf − inf → 0
    shifted = ops.where(top, 0.0, ops.where(upper, xs[..., :, None] - m, -float("inf")))
    e = ops.exp(shifted)                                            # (…, n_i, n_j)
    weights = e / e.sum(axis=-2, keepdims=True)
    weights = ops.where(m == -xp.inf, 0.0, weights)                 # all −inf prefixes
    return (weights @ gs[..., :, None])[..., 0].swapaxes(axis, last)


def _affine_scan(xp, a, b, axis: int):
    """s_j = a_j s_{j−1} + b_j along axis (s_{−1} = 0), in ⌈log₂ n⌉ whole-array steps: after
    the step with shift k, (a_j, b_j) is the composition of the 2k steps ending at j."""
    a, b = a.copy(), b.copy()
    n, shift = a.shape[axis], 1
    while shift < n:
        head, tail = _along(axis, slice(shift, None)), _along(axis, slice(None, n - shift))
        b_new = a[head] * b[tail] + b[head]
        a_new = a[head] * a[tail]
        a, b = a.copy(), b.copy()
        a[head], b[head] = a_new, b_new
        shift *= 2
    return b


def logcumsumexp(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """y_j = log(e^{x_0} + … + e^{x_j}) along `axis` (or `dim`; the flattened tensor when None),
    computed with logaddexp so large inputs neither overflow nor lose small ones. Where every
    input so far is −inf, y is −inf and passes zero gradient (PyTorch gives NaN)."""
    x, axis, shape = _prepare(as_float(x), axis, dim, None, "logcumsumexp")
    y = LogCumSumExp.apply(x, axis=axis)
    return y if shape is None else reshape(y, shape)


# ---------------------------------------------------------------------------------------------
# Vector norms

class EuclideanNorm(_Reduction):
    """y = √(Σ_axes x²). Where y = 0 the derivative does not exist; the gradient there is 0
    (PyTorch's subgradient), never 0/0.

    float16 is summed in float32 (as PyTorch does: ‖(300, 400)‖ is 500, not inf). Where Σ x²
    overflows or underflows (|x| beyond about 1e154 or below 1e-154 in float64, 1e19 and 1e-19
    in float32), y is computed as m·√(Σ (x/m)²), m = max |x|, which is exact there too."""

    def forward(self, x):
        xp = self.xp
        wide = x.astype(xp.float32) if x.dtype == xp.float16 else x
        with np.errstate(over="ignore", under="ignore"):      # both caught just below
            squares = (wide * wide).sum(axis=self.axes, keepdims=self.keepdims)
        tiny = np.finfo(squares.dtype).tiny                  # a property of the dtype
        if wide.size and not bool(((squares >= tiny) & (squares < xp.inf)).all()):
            # rescaled, for every slice (rare: zeros, extremes, inf or NaN); m is 1 where it
            # is 0, inf or NaN, so that zeros give 0 and inf and NaN stay as they are
            m = xp.abs(wide).max(axis=self.axes, keepdims=True)
            m = xp.where(xp.isfinite(m) & (m > 0), m, 1).astype(wide.dtype, copy=False)
            scaled = wide / m
            squares = (scaled * scaled).sum(axis=self.axes, keepdims=self.keepdims)
            m = m if self.keepdims else m.reshape(squares.shape)
            return (m * xp.sqrt(squares)).astype(x.dtype, copy=False)
        return xp.sqrt(squares).astype(x.dtype, copy=False)

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs, self.output)
        flat = self._kept(self.output.data) == 0
        xp = self.ops
        # ∂y/∂x = x / y, and 0 where y = 0
        return xp.where(flat, 0.0, self._kept(g) * x / xp.where(flat, 1.0, self._kept(y)))


class PNorm(_Reduction):
    """y = (Σ_axes |x|^p)^(1/p) for p > 0 (p ≠ 1, 2: those have their own). Where y = 0, and
    at x = 0 for p < 1, the derivative does not exist; the gradient there is 0 (PyTorch's
    subgradient), never inf·0."""

    def __init__(self, axes, keepdims: bool, p: float):
        super().__init__(axes, keepdims)
        self.p = p

    def forward(self, x):
        p = self.p
        return (self.xp.abs(x) ** p).sum(axis=self.axes, keepdims=self.keepdims) ** (1.0 / p)

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs, self.output)
        xp = self.ops
        y_data = self._kept(self.output.data)
        cone = (y_data == 0) | (self.inputs[0].data == 0)
        # ∂y/∂x = sign(x)·(|x|/y)^(p − 1), and 0 where y = 0 or x = 0
        ratio = xp.where(cone, 1.0, xp.abs(x) / xp.where(y_data == 0, 1.0, self._kept(y)))
        return xp.where(cone, 0.0, self._kept(g) * xp.sign(x) * ratio ** (self.p - 1.0))


def vector_norm(x: Tensor, ord=2, dim=None, keepdim: bool = False) -> Tensor:
    """torch.linalg.vector_norm: (Σ |x|^ord)^(1/ord) over `dim` (all axes when None).

    ord 2 (the default) is one primitive whose gradient x/‖x‖ is 0 at the zero vector; ord 1
    is Σ|x|, ord inf max|x| and −inf min|x| (ties split the gradient evenly), ord 0 the count of
    nonzeros (no gradient); another positive ord is one primitive too, PNorm, whose gradient
    is 0 at the zero vector and, for ord < 1, at each zero element.
    """
    x = as_float(x)
    axes = _reduced_axes(every_axis_if_empty(dim), x, "vector_norm")
    keepdim = bool(keepdim)
    if ord == 2:
        return EuclideanNorm.apply(x, axes=axes, keepdims=keepdim)
    if ord == 1:
        return sum(magnitude(x), axes, keepdim)
    if ord == math.inf:
        return max(magnitude(x), axis=axes, keepdims=keepdim)
    if ord == -math.inf:
        return min(magnitude(x), axis=axes, keepdims=keepdim)
    if ord == 0:
        # the count of nonzeros, in x's dtype
        return constant(_count(axes, keepdim, x.dtype, x.data), (x,),
                        (_count, axes, keepdim, x.dtype))
    if not isinstance(ord, numbers.Real) or ord < 0:
        raise ValueError(f"vector_norm: ord must be a non-negative number or ±inf, got {ord!r}")
    return PNorm.apply(x, axes=axes, keepdims=keepdim, p=float(ord))


def norm(x: Tensor, p=2, dim=None, keepdim: bool = False) -> Tensor:
    """torch.norm / Tensor.norm: `vector_norm(x, p, dim, keepdim)` of the elements over `dim`
    (all axes when None), as torch.norm; p "fro" is the 2-norm of those elements. (torch.norm's
    "nuc" is a matrix norm minigrad does not have.)"""
    if p == "fro":
        p = 2
    elif isinstance(p, str):
        raise ValueError(f"norm: p={p!r} is not a norm minigrad has; p is a number, ±inf or "
                         f"'fro'")
    return vector_norm(x, p, dim, keepdim)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0) -> Tensor:
    """The p-norm distance of every row of x1 (..., P, M) to every row of x2 (..., R, M), as
    torch.cdist: (..., P, R), leading axes broadcast. The gradient at a zero distance is 0 (the
    2-norm's subgradient there, as PyTorch's)."""
    if x1.ndim < 2 or x2.ndim < 2 or x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"cdist: x1 (..., P, M) and x2 (..., R, M) need the same M, got shapes "
                         f"{tuple(x1.shape)} and {tuple(x2.shape)}")
    difference = reshape(x1, x1.shape[:-1] + (1, x1.shape[-1])) - reshape(
        x2, x2.shape[:-2] + (1,) + x2.shape[-2:])                           # (..., P, R, M)
    return vector_norm(difference, p, -1)


# ---------------------------------------------------------------------------------------------
# Reductions that skip NaN, and counting

def nansum(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, keepdim=None) -> Tensor:
    """Σ over `axis` (or `dim`; None = all axes) with every NaN counted as 0, as numpy.nansum
    and torch.nansum; a NaN element's gradient is 0."""
    if x.dtype.kind in "fc":
        x = where(isnan(x), 0.0, x)
    return sum(x, axis, keepdims, dim=dim, keepdim=keepdim)


def nanmean(x: Tensor, axis=None, keepdims: bool = False, *, dim=None, keepdim=None) -> Tensor:
    """The mean over `axis` (or `dim`; None = all axes) of the elements that are not NaN, as
    numpy.nanmean and torch.nanmean (a slice of NaN only gives NaN); each such element's
    gradient is 1/count, a NaN's 0."""
    x = as_float(x)
    counted = sum(astype(~isnan(x), x.dtype), axis, keepdims, dim=dim, keepdim=keepdim)
    with np.errstate(invalid="ignore", divide="ignore"):       # 0/0 for NaN only: NaN
        return nansum(x, axis, keepdims, dim=dim, keepdim=keepdim) / counted


def count_nonzero(x: Tensor, axis=None, *, dim=None, keepdims: bool = False) -> Tensor:
    """How many elements are nonzero over `axis` (or `dim`; None = all axes), as
    numpy.count_nonzero and torch.count_nonzero: int64, no gradient."""
    axes = _reduced_axes(axis_or_dim(axis, dim, "count_nonzero"), x, "count_nonzero")
    return constant(_count(axes, keepdims, "int64", x.data), [x],
                    (_count, axes, keepdims, "int64"))


def _count(axes, keepdims, dtype, array):
    """How many elements of `array` are nonzero over axes, in `dtype` (a compiled step
    computes it again at replay)."""
    return (array != 0).sum(axis=axes, keepdims=keepdims).astype(dtype)


def diff(x: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None, *,
         axis=None) -> Tensor:
    """The n-th forward difference along `dim` (or `axis`), out[i] = x[i + 1] − x[i] applied n
    times, as torch.diff and numpy.diff, with `prepend` and `append` (tensors with x's shape
    but along dim) joined to x first (n = 0 gives x alone). Bool x gives x[i + 1] != x[i], as
    both libraries do."""
    if not isinstance(n, numbers.Integral) or n < 0:
        raise ValueError(f"diff: n must be a non-negative int, got {n!r}")
    if x.ndim == 0:
        raise ValueError("diff: needs at least one dimension, got a 0-d tensor")
    along = one_axis(axis_or_dim(axis, dim if axis is None else None, "diff"), x.ndim, "diff")
    if n == 0:                                         # x itself, prepend and append unused
        return x
    parts = [t if isinstance(t, Tensor) else Tensor(t, device=x.device)
             for t in (prepend, x, append) if t is not None]
    if len(parts) > 1:
        x = concat(parts, along)
    head = (slice(None),) * along
    for _ in range(int(n)):
        later, earlier = x[head + (slice(1, None),)], x[head + (slice(None, -1),)]
        x = later != earlier if x.dtype.kind == "b" else later - earlier
    return x
