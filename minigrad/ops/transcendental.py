"""Elementary functions beyond exp, log, sqrt and tanh: trigonometric and hyperbolic functions
and their inverses, log2/log10/log1p, expm1/exp2, rsqrt and square (the binary ones are in
binary_functions.py).

Integer inputs give float32, minigrad's default float (NumPy would give float64). Outside a
function's domain (asin(2), log1p(−2)) the value is NaN as in NumPy and PyTorch.
"""

from __future__ import annotations

import math

from ..function import Function
from ..tensor import Tensor
from .common import as_float


class _Unary(Function):
    """y = f(x) elementwise; subclasses name f and state f′ in backward."""

    function = ""

    def forward(self, x):
        return getattr(self.xp, self.function)(x)


class Sin(_Unary):
    """y = sin x"""

    function = "sin"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = cos x
        return g * self.ops.cos(x)


class Cos(_Unary):
    """y = cos x"""

    function = "cos"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = −sin x
        return -g * self.ops.sin(x)


class Tan(_Unary):
    """y = tan x"""

    function = "tan"

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = 1/cos² x = 1 + tan² x = 1 + y²
        return g * (1 + y * y)


class Arcsin(_Unary):
    """y = arcsin x, for −1 ≤ x ≤ 1"""

    function = "arcsin"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/√(1 − x²)
        return g / self.ops.sqrt(1 - x * x)


class Arccos(_Unary):
    """y = arccos x, for −1 ≤ x ≤ 1"""

    function = "arccos"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = −1/√(1 − x²)
        return -g / self.ops.sqrt(1 - x * x)


class Arctan(_Unary):
    """y = arctan x"""

    function = "arctan"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/(1 + x²)
        return g / (1 + x * x)


class Sinh(_Unary):
    """y = sinh x"""

    function = "sinh"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = cosh x
        return g * self.ops.cosh(x)


class Cosh(_Unary):
    """y = cosh x"""

    function = "cosh"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = sinh x
        return g * self.ops.sinh(x)


class Arcsinh(_Unary):
    """y = arsinh x = log(x + √(x² + 1))"""

    function = "arcsinh"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/√(x² + 1)
        return g / self.ops.sqrt(x * x + 1)


class Arccosh(_Unary):
    """y = arcosh x, for x ≥ 1"""

    function = "arccosh"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/√(x² − 1)
        return g / self.ops.sqrt(x * x - 1)


class Arctanh(_Unary):
    """y = artanh x, for −1 < x < 1"""

    function = "arctanh"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/(1 − x²)
        return g / (1 - x * x)


class Log2(_Unary):
    """y = log₂ x"""

    function = "log2"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/(x ln 2)
        return g / (x * math.log(2.0))


class Log10(_Unary):
    """y = log₁₀ x"""

    function = "log10"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/(x ln 10)
        return g / (x * math.log(10.0))


class Log1p(_Unary):
    """y = log(1 + x), accurate for small x"""

    function = "log1p"
    needs_output = False

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/(1 + x)
        return g / (1 + x)


class Expm1(_Unary):
    """y = eˣ − 1, accurate for small x"""

    function = "expm1"

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = eˣ = y + 1
        return g * (y + 1)


class Exp2(_Unary):
    """y = 2ˣ"""

    function = "exp2"

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = 2ˣ ln 2 = y ln 2
        return g * (y * math.log(2.0))


class Rsqrt(Function):
    """y = 1/√x"""

    def forward(self, x):
        return 1 / self.xp.sqrt(x)

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = −½ x^(−3/2) = −½ y³
        return g * (-0.5 * y * y * y)


def sin(x: Tensor) -> Tensor:
    """sin x, elementwise (radians)."""
    return Sin.apply(as_float(x))


def cos(x: Tensor) -> Tensor:
    """cos x, elementwise (radians)."""
    return Cos.apply(as_float(x))


def tan(x: Tensor) -> Tensor:
    """tan x, elementwise (radians); gradient 1 + tan² x."""
    return Tan.apply(as_float(x))


def arcsin(x: Tensor) -> Tensor:
    """arcsin x in [−π/2, π/2] (PyTorch's asin); NaN outside [−1, 1], an infinite gradient at
    ±1."""
    return Arcsin.apply(as_float(x))


def arccos(x: Tensor) -> Tensor:
    """arccos x in [0, π] (PyTorch's acos); NaN outside [−1, 1]."""
    return Arccos.apply(as_float(x))


def arctan(x: Tensor) -> Tensor:
    """arctan x in (−π/2, π/2) (PyTorch's atan)."""
    return Arctan.apply(as_float(x))


def sinh(x: Tensor) -> Tensor:
    """sinh x, elementwise."""
    return Sinh.apply(as_float(x))


def cosh(x: Tensor) -> Tensor:
    """cosh x, elementwise."""
    return Cosh.apply(as_float(x))


def arcsinh(x: Tensor) -> Tensor:
    """arsinh x (PyTorch's asinh)."""
    return Arcsinh.apply(as_float(x))


def arccosh(x: Tensor) -> Tensor:
    """arcosh x for x ≥ 1 (PyTorch's acosh); NaN below 1."""
    return Arccosh.apply(as_float(x))


def arctanh(x: Tensor) -> Tensor:
    """artanh x for −1 < x < 1 (PyTorch's atanh); ±inf at ±1, NaN beyond."""
    return Arctanh.apply(as_float(x))


def log2(x: Tensor) -> Tensor:
    """log₂ x, elementwise."""
    return Log2.apply(as_float(x))


def log10(x: Tensor) -> Tensor:
    """log₁₀ x, elementwise."""
    return Log10.apply(as_float(x))


def log1p(x: Tensor) -> Tensor:
    """log(1 + x), accurate for tiny x (log1p(1e-10) is 1e-10, where log(1 + x) loses it)."""
    return Log1p.apply(as_float(x))


def expm1(x: Tensor) -> Tensor:
    """eˣ − 1, accurate for tiny x."""
    return Expm1.apply(as_float(x))


def exp2(x: Tensor) -> Tensor:
    """2ˣ, elementwise."""
    return Exp2.apply(as_float(x))


def rsqrt(x: Tensor) -> Tensor:
    """1/√x, elementwise (inf at 0, NaN below)."""
    return Rsqrt.apply(as_float(x))


def square(x: Tensor) -> Tensor:
    """x², elementwise (integers stay integers)."""
    return x ** 2


# PyTorch's and the array API's names
asin, acos, atan = arcsin, arccos, arctan
asinh, acosh, atanh = arcsinh, arccosh, arctanh
