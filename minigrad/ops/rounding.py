"""Rounding, sign and remainders: floor, ceil, trunc, round, sign, copysign, fmod, remainder (%),
floor_divide (//) and div with a rounding mode.

The step functions are flat between their jumps, so their gradient is 0 wherever it exists; at
the jumps, where it does not, minigrad also gives 0, as PyTorch does. The remainders are a minus
a multiple of b: ∂/∂a = 1 and ∂/∂b = −(the multiple's count), between the jumps.
"""

from __future__ import annotations

import numbers

from ..function import Function
from ..tensor import Tensor
from .common import as_float, pair, zero_gradient
from .elementwise import true_divide


class _Step(Function):
    """A piecewise-constant function of x: gradient 0 (also at its jumps)."""

    needs_output = False

    def backward(self, grad):
        # ∂y/∂x = 0 between the jumps, and taken as 0 at them (PyTorch's convention)
        return tuple(zero_gradient(self, x, grad.dtype) for x in self.inputs)


class Floor(_Step):
    """y = ⌊x⌋"""

    def forward(self, x):
        return self.xp.floor(x)


class Ceil(_Step):
    """y = ⌈x⌉"""

    def forward(self, x):
        return self.xp.ceil(x)


class Trunc(_Step):
    """y = x rounded toward zero."""

    def forward(self, x):
        return self.xp.trunc(x)


class Round(_Step):
    """y = x rounded to `decimals` places, halves to even."""

    def __init__(self, decimals: int):
        self.decimals = decimals

    def forward(self, x):
        return self.xp.round(x, self.decimals)


class Sign(_Step):
    """y = sign(x) ∈ {−1, 0, 1}"""

    def forward(self, x):
        return self.xp.sign(x)


class FloorDivide(_Step):
    """z = ⌊a / b⌋"""

    def forward(self, a, b):
        return self.xp.floor_divide(a, b)


class TruncDivide(_Step):
    """z = a / b rounded toward zero (integers stay integers)."""

    def forward(self, a, b):
        xp = self.xp
        if a.dtype.kind in "fc" or b.dtype.kind in "fc":
            return xp.trunc(a / b)
        q = xp.floor_divide(a, b)
        # floor and trunc differ by one where the division is inexact and the signs differ
        return q + ((a - q * b != 0) & ((a < 0) != (b < 0)))


def _unchanged_if_integer(x: Tensor, cls, **options) -> Tensor:
    """cls applied to x, or x itself when x holds integers (already whole)."""
    if x.data.dtype.kind in "iub":
        return x
    return cls.apply(x, **options)


def floor(x: Tensor) -> Tensor:
    """⌊x⌋, the largest whole number ≤ x; integer tensors are returned as they are. Gradient
    0 (PyTorch's convention, also at the jumps)."""
    return _unchanged_if_integer(x, Floor)


def ceil(x: Tensor) -> Tensor:
    """⌈x⌉, the smallest whole number ≥ x; gradient 0."""
    return _unchanged_if_integer(x, Ceil)


def trunc(x: Tensor) -> Tensor:
    """x rounded toward zero (`fix` in NumPy); gradient 0."""
    return _unchanged_if_integer(x, Trunc)


def round(x: Tensor, decimals: int = 0) -> Tensor:
    """x rounded to `decimals` places (negative: to tens, hundreds, ...), halves to the even
    neighbour as NumPy and PyTorch round (0.5 → 0, 1.5 → 2); gradient 0."""
    if not isinstance(decimals, numbers.Integral):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    if x.data.dtype.kind in "iub" and decimals >= 0:
        return x
    return Round.apply(x, decimals=int(decimals))


def sign(x: Tensor) -> Tensor:
    """−1, 0 or 1 by the sign of x (NaN stays NaN), of x's dtype; gradient 0."""
    return Sign.apply(x)


class Copysign(Function):
    """z = |a| with the sign of b."""

    needs_output = False

    def forward(self, a, b):
        return self.xp.copysign(a, b)

    def backward(self, grad):
        (g,) = self.values(grad)
        a, b = self.inputs[0].data, self.inputs[1].data
        # ∂z/∂a = ±1: +1 where a and b have the same sign, −1 where they differ, and 0 at a = 0
        # (PyTorch's convention); ∂z/∂b = 0 (only b's sign is used)
        flips = self.xp.where(a == 0, 0.0, self.xp.copysign(1.0, a) * self.xp.copysign(1.0, b))
        return g * flips.astype(grad.dtype), zero_gradient(self, self.inputs[1], grad.dtype)


def copysign(a, b) -> Tensor:
    """|a| with the sign of b, elementwise and broadcasting (−0.0 counts as negative). a gets
    gradient ±1 (0 at a = 0, as in PyTorch), b gets 0."""
    a, b = pair(a, b)
    return Copysign.apply(as_float(a), as_float(b))


class Fmod(Function):
    """z = a − b·trunc(a / b), the remainder with the sign of a (C's fmod)."""

    needs_output = False

    def forward(self, a, b):
        return self.xp.fmod(a, b)

    def backward(self, grad):
        (g,) = self.values(grad)
        a, b = self.inputs[0].data, self.inputs[1].data
        # ∂z/∂a = 1, ∂z/∂b = −k (constant between the jumps) for the whole number k of b's the
        # forward took away, z = a − k·b: read back from z, since trunc(a / b) rounds to the
        # next jump when a / b is within an ulp below a whole number (fmod itself is exact)
        xp = self.xp
        count = xp.round((a - xp.fmod(a, b)) / b).astype(grad.dtype)
        return g, -g * count


class Remainder(Function):
    """z = a − b·⌊a / b⌋, the remainder with the sign of b (Python's %, numpy.remainder)."""

    needs_output = False

    def forward(self, a, b):
        return self.xp.remainder(a, b)

    def backward(self, grad):
        (g,) = self.values(grad)
        a, b = self.inputs[0].data, self.inputs[1].data
        # ∂z/∂a = 1, ∂z/∂b = −k (constant between the jumps) for the k = ⌊a / b⌋ of the
        # forward's own division (floor_divide pairs with remainder); floor(a / b) of the
        # rounded quotient is one step off where a / b rounds up to a whole number
        count = self.xp.floor_divide(a, b).astype(grad.dtype)
        return g, -g * count


def fmod(a, b) -> Tensor:
    """a − b·trunc(a/b): the remainder with the sign of a, as C, numpy.fmod and torch.fmod.
    Gradient 1 for a and −trunc(a/b) for b."""
    return Fmod.apply(*pair(a, b))


def remainder(a, b) -> Tensor:
    """a − b·⌊a/b⌋: the remainder with the sign of b, as Python's %, numpy.remainder (mod) and
    torch.remainder; `a % b` on tensors. Gradient 1 for a and −⌊a/b⌋ for b."""
    return Remainder.apply(*pair(a, b))


mod = remainder      # NumPy's other name


def floor_divide(a, b) -> Tensor:
    """⌊a/b⌋, as Python's // and numpy.floor_divide (integers stay integers); `a // b` on
    tensors. Gradient 0 (PyTorch defines none for floor_divide; its div(rounding_mode="floor")
    gives 0)."""
    return FloorDivide.apply(*pair(a, b))


def divide(a, b, rounding_mode: str | None = None) -> Tensor:
    """a / b, PyTorch's div: rounding_mode None is true division, "trunc" rounds toward zero,
    "floor" down (both keep integer dtypes, and have gradient 0)."""
    if rounding_mode is None:
        return true_divide(a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        return TruncDivide.apply(*pair(a, b))
    raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got "
                     f"{rounding_mode!r}")


div = divide          # PyTorch's name: div(a, b, rounding_mode=None)
