"""Elementary functions beyond exp, log, sqrt and tanh: trigonometric and hyperbolic functions
and their inverses, log2/log10/log1p, expm1/exp2, rsqrt, square, and the binary atan2,
logaddexp, hypot, lerp and xlogy.

Integer inputs give float32, minigrad's default float (NumPy would give float64). Outside a
function's domain (asin(2), log1p(−2)) the value is NaN as in NumPy and PyTorch.
"""

from __future__ import annotations

import math

from ..autograd import Function
from ..tensor import Tensor
from .common import as_float, pair


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


# -- binary functions ----------------------------------------------------------------------

class Arctan2(Function):
    """θ = atan2(y, x), the angle of the point (x, y), in (−π, π]"""

    needs_output = False

    def forward(self, y, x):
        return self.xp.arctan2(y, x)

    def backward(self, grad):
        g, y, x = self.values(grad, *self.inputs)
        xp = self.ops
        origin = (self.inputs[0].data == 0) & (self.inputs[1].data == 0)
        r2 = xp.where(origin, 1.0, x * x + y * y)
        # ∂θ/∂y = x/(x² + y²), ∂θ/∂x = −y/(x² + y²); taken as 0 at the origin, where the angle
        # is undefined (PyTorch gives NaN there)
        return g * x / r2, -g * y / r2


class LogAddExp(Function):
    """z = log(eᵃ + eᵇ), computed without overflow"""

    def forward(self, a, b):
        return self.xp.logaddexp(a, b)

    def backward(self, grad):
        g, a, b, z = self.values(grad, *self.inputs, self.output)
        xp = self.ops
        dead = self.output.data == -self.xp.inf              # both −inf: no gradient
        z = xp.where(dead, 0.0, z)
        # ∂z/∂a = e^{a − z} = σ(a − b), ∂z/∂b = e^{b − z}
        return (xp.where(dead, 0.0, g * xp.exp(a - z)),
                xp.where(dead, 0.0, g * xp.exp(b - z)))


class Hypot(Function):
    """h = √(a² + b²), computed without overflow"""

    def forward(self, a, b):
        return self.xp.hypot(a, b)

    def backward(self, grad):
        g, a, b, h = self.values(grad, *self.inputs, self.output)
        xp = self.ops
        origin = self.output.data == 0
        h = xp.where(origin, 1.0, h)
        # ∂h/∂a = a/h, ∂h/∂b = b/h; 0 at the origin, where h has a cone's point
        return g * a / h, g * b / h


class Xlogy(Function):
    """z = x·log y, with z = 0 wherever x = 0 (even at y = 0)"""

    needs_output = False

    def forward(self, x, y):
        xp = self.xp
        zero = x == 0
        return xp.where(zero, 0, x * xp.log(xp.where(zero, 1, y))).astype(
            xp.result_type(x, y), copy=False)

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs)
        xp = self.ops
        zero = self.inputs[0].data == 0
        safe_y = xp.where(zero, 1.0, y)
        # ∂z/∂x = log y, ∂z/∂y = x/y; both taken as 0 where x = 0 (PyTorch's xlogy)
        return xp.where(zero, 0.0, g * xp.log(safe_y)), xp.where(zero, 0.0, g * x / safe_y)


def _float_pair(a, b):
    a, b = pair(a, b)
    return as_float(a), as_float(b)


def arctan2(y, x) -> Tensor:
    """atan2(y, x), the angle of the point (x, y) in (−π, π], broadcasting (PyTorch's atan2).
    Gradient (x, −y)/(x² + y²), taken as 0 at the origin (PyTorch gives NaN)."""
    return Arctan2.apply(*_float_pair(y, x))


def logaddexp(a, b) -> Tensor:
    """log(eᵃ + eᵇ) elementwise without overflow; gradients σ(a − b) and σ(b − a), and 0 where
    both are −inf (the result −inf, not NaN)."""
    return LogAddExp.apply(*_float_pair(a, b))


def hypot(a, b) -> Tensor:
    """√(a² + b²) elementwise without overflow; gradient (a, b)/h, taken as 0 at the origin."""
    return Hypot.apply(*_float_pair(a, b))


def xlogy(x, y) -> Tensor:
    """x·log y, and 0 wherever x = 0 (so 0·log 0 = 0), as torch.xlogy and scipy's; used by
    entropies and KL divergences."""
    return Xlogy.apply(*_float_pair(x, y))


def lerp(start, end, weight) -> Tensor:
    """start + weight·(end − start), broadcasting, as torch.lerp; gradients 1 − weight, weight
    and end − start."""
    start, end = _float_pair(start, end)
    return start + weight * (end - start)


# PyTorch's and the array API's names
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2
asinh, acosh, atanh = arcsinh, arccosh, arctanh
