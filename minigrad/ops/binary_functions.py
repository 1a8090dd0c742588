"""Elementary functions of two tensors, broadcasting: atan2, logaddexp, hypot, xlogy, lerp.

Integer inputs give float32. Where a derivative does not exist (atan2 and hypot at the origin,
logaddexp of two −inf, xlogy's x-gradient where x = 0 and y ≤ 0) the gradient is taken as 0,
never NaN.
"""

from __future__ import annotations

from ..autograd import Function
from ..tensor import Tensor
from .common import as_float, pair


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

    needs_output = False

    def forward(self, a, b):
        return self.xp.logaddexp(a, b)

    def backward(self, grad):
        g, a, b = self.values(grad, *self.inputs)
        xp = self.ops
        a_data, b_data = self.inputs[0].data, self.inputs[1].data
        dead = (a_data == -self.xp.inf) & (b_data == -self.xp.inf)    # both −inf: no gradient
        # a − b, and 0 where a = b (two equal infinities split the gradient evenly, not NaN)
        d = xp.where(a_data == b_data, 0.0, a - b)
        # ∂z/∂a = e^{a − z} = σ(a − b), ∂z/∂b = σ(b − a). Written with the difference, never
        # with the rounded z (at a = b = 1e20, e^{a − z} is 1, not ½); σ(t) = e^{−log(1 + e^{−t})}
        return (xp.where(dead, 0.0, g * xp.exp(-xp.logaddexp(0.0, -d))),
                xp.where(dead, 0.0, g * xp.exp(-xp.logaddexp(0.0, d))))


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
        x_data, y_data = self.inputs[0].data, self.inputs[1].data
        zero = x_data == 0
        undefined = zero & (y_data <= 0)          # z(x, y ≤ 0) jumps at x = 0: no derivative
        # ∂z/∂x = log y, at x = 0 too (z(x, y) = x·log y there for y > 0); taken as 0 where
        # x = 0 and y ≤ 0 (PyTorch's). ∂z/∂y = x/y, 0 along x = 0 (z ≡ 0 there) and written
        # as x/y there too, so that its own derivative in x, 1/y, survives create_graph
        safe_y = xp.where(undefined, 1.0, y)
        return xp.where(undefined, 0.0, g * xp.log(safe_y)), g * x / safe_y


def _float_pair(a, b):
    a, b = pair(a, b)
    return as_float(a), as_float(b)


def arctan2(y, x) -> Tensor:
    """atan2(y, x), the angle of the point (x, y) in (−π, π], broadcasting (PyTorch's atan2).
    Gradient (x, −y)/(x² + y²), taken as 0 at the origin (PyTorch gives NaN)."""
    return Arctan2.apply(*_float_pair(y, x))


def logaddexp(a, b) -> Tensor:
    """log(eᵃ + eᵇ) elementwise without overflow; gradients σ(a − b) and σ(b − a) (½ each
    where a = b, two +inf included), and 0 where both are −inf (the result −inf, not NaN)."""
    return LogAddExp.apply(*_float_pair(a, b))


def hypot(a, b) -> Tensor:
    """√(a² + b²) elementwise without overflow; gradient (a, b)/h, taken as 0 at the origin."""
    return Hypot.apply(*_float_pair(a, b))


def xlogy(x, y) -> Tensor:
    """x·log y, and 0 wherever x = 0 (so 0·log 0 = 0), as torch.xlogy and scipy's; used by
    entropies and KL divergences. Gradients log y for x (also at x = 0, where it exists for
    y > 0; 0 where x = 0 and y ≤ 0) and x/y for y (0 along x = 0, where z ≡ 0)."""
    return Xlogy.apply(*_float_pair(x, y))


def lerp(start, end, weight) -> Tensor:
    """start + weight·(end − start), broadcasting, as torch.lerp; gradients 1 − weight, weight
    and end − start."""
    start, end = _float_pair(start, end)
    return start + weight * (end - start)


atan2 = arctan2      # PyTorch's and the array API's name
