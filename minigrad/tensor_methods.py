"""Tensor methods that PyTorch and NumPy users reach for beyond the core ones in tensor.py:
each is a one-line call into the function of the same name in minigrad, which documents it.

`Tensor` inherits them from `TensorMethods`. The functions live in `minigrad.ops`, which imports
Tensor, so this module reaches them through `_OPS`, set once ops/__init__.py has run (the same
way the engine reaches them).
"""

from __future__ import annotations

from ._axes import LAST_AXIS

_OPS = None          # minigrad.ops, set by ops/__init__.py


class TensorMethods:
    """The methods below, mixed into Tensor."""

    __slots__ = ()

    # -- rearranging ----------------------------------------------------------------------------
    def flip(self, axis=None, *, dims=None):
        """Reverse the order along `axis` (or PyTorch's `dims`); see `minigrad.flip`."""
        return _OPS.flip(self, axis, dims=dims)

    def roll(self, shift=None, axis=None, *, shifts=None, dims=None):
        """Shift cyclically along `axis`; see `minigrad.roll`."""
        return _OPS.roll(self, shift, axis, shifts=shifts, dims=dims)

    def tril(self, k=0, *, diagonal=None):
        """The lower triangle of the last two axes, 0 above; see `minigrad.tril`."""
        return _OPS.tril(self, k, diagonal=diagonal)

    def triu(self, k=0, *, diagonal=None):
        """The upper triangle of the last two axes, 0 below; see `minigrad.triu`."""
        return _OPS.triu(self, k, diagonal=diagonal)

    def tile(self, reps):
        """Whole-tensor copies, numpy.tile (PyTorch's `x.repeat(*sizes)`); see `minigrad.tile`."""
        return _OPS.tile(self, reps)

    def repeat(self, repeats, axis=None, *, dim=None):
        """Each element repeated in place, NumPy's `a.repeat` (PyTorch's `repeat_interleave`;
        PyTorch's `repeat` is `tile`); see `minigrad.repeat`."""
        return _OPS.repeat(self, repeats, axis, dim=dim)

    def repeat_interleave(self, repeats, dim=None):
        """Each element repeated `repeats` times along `dim`; see `minigrad.repeat`."""
        return _OPS.repeat(self, repeats, dim)

    def diagonal(self, offset=0, axis1=0, axis2=1, *, dim1=None, dim2=None):
        """The diagonal of two axes, moved to the end; see `minigrad.diagonal`."""
        return _OPS.diagonal(self, offset, axis1, axis2, dim1=dim1, dim2=dim2)

    def diag(self, k=0):
        """A 1-D tensor as a diagonal matrix, or a matrix's diagonal; see `minigrad.diag`."""
        return _OPS.diag(self, k)

    def unfold(self, dimension, size, step):
        """Sliding windows along `dimension`; see `minigrad.unfold`."""
        return _OPS.unfold(self, dimension, size, step)

    def unflatten(self, dim, sizes):
        """Axis `dim` split into `sizes`; see `minigrad.unflatten`."""
        return _OPS.unflatten(self, dim, sizes)

    # -- rounding, sign and remainders ----------------------------------------------------------
    def floor(self):
        """⌊x⌋ elementwise, gradient 0; see `minigrad.floor`."""
        return _OPS.floor(self)

    def ceil(self):
        """⌈x⌉ elementwise, gradient 0; see `minigrad.ceil`."""
        return _OPS.ceil(self)

    def trunc(self):
        """x rounded toward zero, gradient 0; see `minigrad.trunc`."""
        return _OPS.trunc(self)

    def round(self, decimals=0):
        """x rounded to `decimals` places, halves to even, gradient 0; see `minigrad.round`."""
        return _OPS.round(self, decimals)

    def sign(self):
        """−1, 0 or 1 by the sign of x, gradient 0; see `minigrad.sign`."""
        return _OPS.sign(self)

    def copysign(self, other):
        """|x| with the sign of `other`; see `minigrad.copysign`."""
        return _OPS.copysign(self, other)

    def fmod(self, other):
        """The remainder with the sign of x (C's fmod); see `minigrad.fmod`."""
        return _OPS.fmod(self, other)

    def remainder(self, other):
        """The remainder with the sign of `other` (x % other); see `minigrad.remainder`."""
        return _OPS.remainder(self, other)

    def floor_divide(self, other):
        """⌊x / other⌋ (x // other), gradient 0; see `minigrad.floor_divide`."""
        return _OPS.floor_divide(self, other)

    def div(self, other, rounding_mode=None):
        """x / other, or rounded with rounding_mode "trunc" / "floor"; see `minigrad.div`."""
        return _OPS.divide(self, other, rounding_mode)

    # -- reductions -----------------------------------------------------------------------------
    def prod(self, axis=None, keepdims=False, *, dim=None, dtype=None):
        """Π over `axis` (or `dim`; None = all axes); see `minigrad.prod`."""
        return _OPS.prod(self, axis, keepdims, dim=dim, dtype=dtype)

    def cumsum(self, axis=None, *, dim=None, dtype=None):
        """Running sums along `axis` (or `dim`); see `minigrad.cumsum`."""
        return _OPS.cumsum(self, axis, dim=dim, dtype=dtype)

    def cumprod(self, axis=None, *, dim=None, dtype=None):
        """Running products along `axis` (or `dim`); see `minigrad.cumprod`."""
        return _OPS.cumprod(self, axis, dim=dim, dtype=dtype)

    def cummax(self, axis=None, *, dim=None):
        """(running maxima, their positions) along `axis` (or `dim`); see `minigrad.cummax`."""
        return _OPS.cummax(self, axis, dim=dim)

    def cummin(self, axis=None, *, dim=None):
        """(running minima, their positions) along `axis` (or `dim`); see `minigrad.cummin`."""
        return _OPS.cummin(self, axis, dim=dim)

    def logcumsumexp(self, axis=None, *, dim=None):
        """Running log Σ exp along `axis` (or `dim`); see `minigrad.logcumsumexp`."""
        return _OPS.logcumsumexp(self, axis, dim=dim)

    # -- reading and writing at positions -------------------------------------------------------
    def gather(self, dim, index):
        """Values at `index` along `dim`, torch.gather; see `minigrad.gather`."""
        return _OPS.gather(self, dim, index)

    def take_along_axis(self, indices, axis=-1):
        """Values at `indices` along `axis`, numpy.take_along_axis; see
        `minigrad.take_along_axis`."""
        return _OPS.take_along_axis(self, indices, axis)

    def index_select(self, dim, index):
        """The slices at `index` along `dim`; see `minigrad.index_select`."""
        return _OPS.index_select(self, dim, index)

    def masked_select(self, mask):
        """The elements where `mask` is True, as 1-D; see `minigrad.masked_select`."""
        return _OPS.masked_select(self, mask)

    def nonzero(self, *, as_tuple=True):
        """Where this tensor is nonzero: NumPy's tuple by default, PyTorch's (N, ndim) with
        as_tuple=False; see `minigrad.nonzero`."""
        return _OPS.nonzero(self, as_tuple=as_tuple)

    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        """A copy with src (or `value`) written at `index` along `dim` (or, with reduce="add" /
        "multiply", combined with it); see `minigrad.scatter`."""
        return _OPS.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim, index, src):
        """A copy with src added at `index` along `dim`; see `minigrad.scatter_add`."""
        return _OPS.scatter_add(self, dim, index, src)

    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        """A copy with src reduced into `index` along `dim`; see `minigrad.scatter_reduce`."""
        return _OPS.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)

    # -- elementary functions -------------------------------------------------------------------
    def sin(self):
        """sin x, elementwise; see `minigrad.sin`."""
        return _OPS.sin(self)

    def cos(self):
        """cos x, elementwise; see `minigrad.cos`."""
        return _OPS.cos(self)

    def tan(self):
        """tan x, elementwise; see `minigrad.tan`."""
        return _OPS.tan(self)

    def arcsin(self):
        """arcsin x, elementwise; see `minigrad.arcsin`."""
        return _OPS.arcsin(self)

    def arccos(self):
        """arccos x, elementwise; see `minigrad.arccos`."""
        return _OPS.arccos(self)

    def arctan(self):
        """arctan x, elementwise; see `minigrad.arctan`."""
        return _OPS.arctan(self)

    def sinh(self):
        """sinh x, elementwise; see `minigrad.sinh`."""
        return _OPS.sinh(self)

    def cosh(self):
        """cosh x, elementwise; see `minigrad.cosh`."""
        return _OPS.cosh(self)

    def arcsinh(self):
        """arsinh x, elementwise; see `minigrad.arcsinh`."""
        return _OPS.arcsinh(self)

    def arccosh(self):
        """arcosh x, elementwise; see `minigrad.arccosh`."""
        return _OPS.arccosh(self)

    def arctanh(self):
        """artanh x, elementwise; see `minigrad.arctanh`."""
        return _OPS.arctanh(self)

    def log2(self):
        """log₂ x, elementwise; see `minigrad.log2`."""
        return _OPS.log2(self)

    def log10(self):
        """log₁₀ x, elementwise; see `minigrad.log10`."""
        return _OPS.log10(self)

    def log1p(self):
        """log(1 + x), accurate for tiny x, elementwise; see `minigrad.log1p`."""
        return _OPS.log1p(self)

    def expm1(self):
        """eˣ − 1, accurate for tiny x, elementwise; see `minigrad.expm1`."""
        return _OPS.expm1(self)

    def exp2(self):
        """2ˣ, elementwise; see `minigrad.exp2`."""
        return _OPS.exp2(self)

    def rsqrt(self):
        """1/√x, elementwise; see `minigrad.rsqrt`."""
        return _OPS.rsqrt(self)

    def square(self):
        """x², elementwise; see `minigrad.square`."""
        return _OPS.square(self)

    def erf(self):
        """the error function, elementwise; see `minigrad.erf`."""
        return _OPS.erf(self)

    def erfc(self):
        """1 − erf(x), accurate in the tail, elementwise; see `minigrad.erfc`."""
        return _OPS.erfc(self)

    def asin(self):
        """PyTorch's name for `arcsin`; see `minigrad.arcsin`."""
        return _OPS.arcsin(self)

    def acos(self):
        """PyTorch's name for `arccos`; see `minigrad.arccos`."""
        return _OPS.arccos(self)

    def atan(self):
        """PyTorch's name for `arctan`; see `minigrad.arctan`."""
        return _OPS.arctan(self)

    def asinh(self):
        """PyTorch's name for `arcsinh`; see `minigrad.arcsinh`."""
        return _OPS.arcsinh(self)

    def acosh(self):
        """PyTorch's name for `arccosh`; see `minigrad.arccosh`."""
        return _OPS.arccosh(self)

    def atanh(self):
        """PyTorch's name for `arctanh`; see `minigrad.arctanh`."""
        return _OPS.arctanh(self)

    def arctan2(self, other):
        """atan2(self, other), the angle of (other, self); see `minigrad.arctan2`."""
        return _OPS.arctan2(self, other)

    def atan2(self, other):
        """PyTorch's name for `arctan2`; see `minigrad.arctan2`."""
        return _OPS.arctan2(self, other)

    def logaddexp(self, other):
        """log(eˣ + e^other) without overflow; see `minigrad.logaddexp`."""
        return _OPS.logaddexp(self, other)

    def hypot(self, other):
        """√(x² + other²) without overflow; see `minigrad.hypot`."""
        return _OPS.hypot(self, other)

    def xlogy(self, other):
        """x·log(other), 0 where x = 0; see `minigrad.xlogy`."""
        return _OPS.xlogy(self, other)

    def lerp(self, end, weight):
        """x + weight·(end − x); see `minigrad.lerp`."""
        return _OPS.lerp(self, end, weight)

    # -- sorting --------------------------------------------------------------------------------
    def sort(self, axis=LAST_AXIS, *, dim=None, descending=False, stable=True):
        """The values sorted along `axis` (NumPy's; positions: `argsort`); see
        `minigrad.sort`."""
        return _OPS.sort(self, axis, dim=dim, descending=descending, stable=stable)

    def argsort(self, axis=LAST_AXIS, *, dim=None, descending=False, stable=True):
        """The positions that sort along `axis`, stable; see `minigrad.argsort`."""
        return _OPS.argsort(self, axis, dim=dim, descending=descending, stable=stable)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest along `dim`; see `minigrad.topk`."""
        return _OPS.topk(self, k, dim, largest, sorted)

    def kthvalue(self, k, dim=-1, keepdim=False):
        """(value, index) of the k-th smallest along `dim`; see `minigrad.kthvalue`."""
        return _OPS.kthvalue(self, k, dim, keepdim)

    # -- predicates -----------------------------------------------------------------------------
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """|x − other| ≤ atol + rtol·|other|, elementwise; see `minigrad.isclose`."""
        return _OPS.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        """Whether isclose holds everywhere (a Python bool); see `minigrad.allclose`."""
        return _OPS.allclose(self, other, rtol, atol, equal_nan)

    def isinf(self):
        """True where ±inf; see `minigrad.isinf`."""
        return _OPS.isinf(self)

    def isnan(self):
        """True where NaN; see `minigrad.isnan`."""
        return _OPS.isnan(self)

    def isfinite(self):
        """True where neither inf nor NaN; see `minigrad.isfinite`."""
        return _OPS.isfinite(self)
