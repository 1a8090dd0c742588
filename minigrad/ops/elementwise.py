"""Elementwise primitives. Binary ones broadcast as NumPy does; the engine sums each gradient
back to its input's shape, so their backward states only the textbook rule."""

from __future__ import annotations

import math

import numpy as np

from ..function import Function
from ..tensor import Tensor
from .common import as_float, lift, pair


# -- arithmetic ----------------------------------------------------------------------------

class Add(Function):
    """z = a + b"""

    needs_output = needs_inputs = False

    def forward(self, a, b):
        return a + b

    def gradients(self, g):
        # ∂z/∂a = ∂z/∂b = 1
        return g, g


def add(a, b, *, alpha=1) -> Tensor:
    """a + alpha·b, PyTorch's add (`a + b` on tensors)."""
    if alpha != 1:
        b = _times_alpha("add", a, b, alpha)
    return Add.apply(*pair(a, b))


def _times_alpha(op: str, a, b, alpha):
    """alpha·b for add's and sub's alpha. A float alpha with two integer or bool operands is
    an error, as in PyTorch (the sum would have to change kind)."""
    if isinstance(alpha, float) and not any(
            isinstance(x, float) or (isinstance(x, Tensor) and x.dtype.kind in "fc")
            for x in (a, b)):
        raise TypeError(f"{op}: alpha={alpha!r} is a float, but both operands are integers or "
                        f"bools; give an integer alpha or a float operand")
    return b * alpha


class Sub(Function):
    """z = a − b"""

    needs_output = needs_inputs = False

    def forward(self, a, b):
        return a - b

    def gradients(self, g):
        # ∂z/∂a = 1, ∂z/∂b = −1
        return g, (-g if self.inputs[1]._requires_grad else None)


def sub(a, b, *, alpha=1) -> Tensor:
    """a − alpha·b, PyTorch's sub (`a - b` on tensors)."""
    if alpha != 1:
        b = _times_alpha("sub", a, b, alpha)
    return Sub.apply(*pair(a, b))


subtract = sub        # PyTorch's and NumPy's other name


class Mul(Function):
    """z = a ⊙ b"""

    needs_output = False

    def forward(self, a, b):
        return a * b

    def gradients(self, g, a, b):
        needs_a, needs_b = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        # ∂z/∂a = b, ∂z/∂b = a
        return (g * b if needs_a else None), (g * a if needs_b else None)


def mul(a, b) -> Tensor:
    """a ⊙ b, elementwise with broadcasting (`a * b` on tensors)."""
    return Mul.apply(*pair(a, b))


multiply = mul        # PyTorch's and NumPy's other name


class Div(Function):
    """z = a / b"""

    def forward(self, a, b):
        return a / b

    def backward(self, grad):
        g, a, b, z = self.values(grad, *self.inputs, self.output)
        needs_a, needs_b = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        # ∂z/∂a = 1/b, ∂z/∂b = −a/b² = −z/b
        return (g / b if needs_a else None), (-g * z / b if needs_b else None)


def true_divide(a, b) -> Tensor:
    """a / b, always a float (integers divide to float32); `minigrad.div` adds rounding modes."""
    a, b = pair(a, b)
    if a.data.dtype.kind in "iub" and b.data.dtype.kind in "iub":
        a, b = as_float(a), as_float(b)         # true division of integers: float32
    return Div.apply(a, b)


class Neg(Function):
    """y = −x"""

    needs_output = False

    def forward(self, x):
        return -x

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x = −1
        return -g


def neg(x: Tensor) -> Tensor:
    """−x (`-x` on tensors)."""
    return Neg.apply(x)


negative = neg        # PyTorch's and NumPy's other name


class PowScalar(Function):
    """y = x^p for a constant number p."""

    needs_output = False

    def __init__(self, exponent: float):
        self.exponent = exponent

    def forward(self, x):
        return x ** self.exponent

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        p = self.exponent
        # ∂y/∂x = p·x^(p−1); for p = 0, y = 1 is constant: 0 everywhere, x = 0 included (not
        # 0·0⁻¹ = NaN), as in PyTorch
        if p == 0:
            return g * 0.0
        if p == 2:
            return g * (2 * x)
        return g * (p * x ** (p - 1))


class Pow(Function):
    """z = a^b for tensors a, b."""

    def forward(self, a, b):
        return a ** b

    def backward(self, grad):
        g, a, b, z = self.values(grad, *self.inputs, self.output)
        xp = self.ops
        needs_a, needs_b = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        # ∂z/∂a = b·a^(b−1), taken as 0 where b = 0 (z = 1 there, even at a = 0: not
        # 0·0⁻¹ = NaN); ∂z/∂b = a^b·ln a, taken as 0 where a = 0 and b ≥ 0 (z is 0 or 1 there),
        # and as PyTorch leaves it elsewhere: −inf where a = 0 and b < 0 (inf·ln 0), NaN for
        # a < 0 (ln a undefined)
        grad_a = grad_b = None
        with np.errstate(divide="ignore", invalid="ignore"):   # 0⁻¹, ln 0, ln of a < 0
            if needs_a:
                grad_a = xp.where(b == 0, 0.0, g * b * a ** (b - 1))
            if needs_b:
                flat = (self.inputs[0].data == 0) & (self.inputs[1].data >= 0)
                grad_b = xp.where(flat, 0.0, g * z * xp.log(xp.where(flat, 1.0, a)))
        return grad_a, grad_b


def pow(a, b) -> Tensor:
    """a ** b (`a ** b` on tensors): a tensor to a number's power (one primitive whose
    derivative needs no log), or tensors and numbers to tensors' powers, broadcasting."""
    if isinstance(a, Tensor) and not isinstance(b, Tensor) and isinstance(b, (int, float)):
        if isinstance(b, float):
            a = as_float(a)                     # int32 ** 0.5 is float32, as int32 * 0.5
        return PowScalar.apply(a, exponent=b)
    return Pow.apply(*pair(a, b))


# -- unary functions -----------------------------------------------------------------------

class Exp(Function):
    """y = eˣ"""

    def forward(self, x):
        return self.xp.exp(x)

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = eˣ = y
        return g * y


def exp(x: Tensor) -> Tensor:
    """eˣ, elementwise."""
    return Exp.apply(as_float(x))


class Log(Function):
    """y = ln x"""

    needs_output = False

    def forward(self, x):
        return self.xp.log(x)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/x
        return g / x


def log(x: Tensor) -> Tensor:
    """The natural logarithm ln x, elementwise (−inf at 0, NaN below, as NumPy)."""
    return Log.apply(as_float(x))


class Sqrt(Function):
    """y = √x"""

    def forward(self, x):
        return self.xp.sqrt(x)

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = 1/(2√x) = 1/(2y)
        return g / (2 * y)


def sqrt(x: Tensor) -> Tensor:
    """√x, elementwise; the gradient 1/(2√x) is infinite at 0."""
    return Sqrt.apply(as_float(x))


class Abs(Function):
    """y = |x|; the gradient at 0 is taken as 0."""

    needs_output = False

    def forward(self, x):
        return self.xp.abs(x)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x = sign(x), a constant (0 at x = 0)
        return g * self.xp.sign(self.inputs[0].data)


def abs(x: Tensor) -> Tensor:
    """|x|, elementwise; the gradient at 0 is 0."""
    return Abs.apply(x)


class Tanh(Function):
    """y = tanh(x)"""

    needs_inputs = False

    def forward(self, x):
        return self.xp.tanh(x)

    def gradients(self, g, y):
        # ∂y/∂x = 1 − tanh²(x) = 1 − y²
        return g * (1 - y * y)


def tanh(x: Tensor) -> Tensor:
    """tanh(x), elementwise; ∂y/∂x = 1 − y²."""
    return Tanh.apply(as_float(x))


# -- selections ----------------------------------------------------------------------------

def _share_of_first(xp, a, b, wins, dtype):
    """How much of max(a, b)'s (or min's) gradient goes to a: 1 where a wins, ½ at a tie, 0
    where b wins; a NaN is what the result is made of (NumPy propagates it), so the NaN
    operand gets it all, and two NaNs share it."""
    share = wins + 0.5 * (a == b)
    nan_a, nan_b = xp.isnan(a), xp.isnan(b)
    if nan_a.any() or nan_b.any():
        share = xp.where(nan_a, xp.where(nan_b, 0.5, 1.0), xp.where(nan_b, 0.0, share))
    return share.astype(dtype)


class Maximum(Function):
    """z = max(a, b) elementwise; at ties each input gets half the gradient, and a NaN
    operand (the result's NaN) gets it all."""

    def forward(self, a, b):
        return self.xp.maximum(a, b)

    def backward(self, grad):
        (g,) = self.values(grad)
        a, b = self.inputs[0].data, self.inputs[1].data
        # ∂z/∂a = 1 where a > b, ½ where a = b, 0 elsewhere; ∂z/∂b the rest (constants)
        share_a = _share_of_first(self.xp, a, b, a > b, grad.dtype)
        return g * share_a, g * (1 - share_a)


def maximum(a, b) -> Tensor:
    """max(a, b) elementwise, broadcasting a and b; at ties each gets half the gradient."""
    return Maximum.apply(*pair(a, b))


class Minimum(Function):
    """z = min(a, b) elementwise; at ties each input gets half the gradient, and a NaN
    operand (the result's NaN) gets it all."""

    def forward(self, a, b):
        return self.xp.minimum(a, b)

    def backward(self, grad):
        (g,) = self.values(grad)
        a, b = self.inputs[0].data, self.inputs[1].data
        # ∂z/∂a = 1 where a < b, ½ where a = b, 0 elsewhere; ∂z/∂b the rest (constants)
        share_a = _share_of_first(self.xp, a, b, a < b, grad.dtype)
        return g * share_a, g * (1 - share_a)


def minimum(a, b) -> Tensor:
    """min(a, b) elementwise, broadcasting a and b; at ties each gets half the gradient."""
    return Minimum.apply(*pair(a, b))


class Clip(Function):
    """y = min(max(x, lo), hi), broadcasting; either bound may be absent. The bounds present
    follow x as inputs (numbers as constants): `has_lo` and `has_hi` say which they are."""

    needs_output = False

    def __init__(self, has_lo: bool, has_hi: bool):
        self.has_lo, self.has_hi = has_lo, has_hi

    def _bounds(self, bounds):
        """(lo, hi), None for an absent one, from the bounds that follow x."""
        lo = bounds[0] if self.has_lo else None
        hi = bounds[-1] if self.has_hi else None
        return lo, hi

    def forward(self, x, *bounds):
        lo, hi = self._bounds(bounds)
        # min(max(x, lo), hi): hi wins where lo > hi, as NumPy's clip and torch.clamp
        return self.xp.clip(x, lo, hi)

    def backward(self, grad):
        (g,) = self.values(grad)
        xp = self.xp
        x, *bounds = self.inputs
        lo, hi = (None if b is None else b.data for b in self._bounds(bounds))
        x = x.data
        # ∂y/∂x = 1 where lo ≤ x ≤ hi (ties included), ∂y/∂lo = 1 where x < lo < hi,
        # ∂y/∂hi = 1 where x > hi or hi < lo (PyTorch's choice at every tie): constant masks
        passes_x = xp.ones(x.shape, dtype=bool)
        if lo is not None:
            passes_x = passes_x & (x >= lo)
        if hi is not None:
            passes_x = passes_x & (x <= hi)
        grads = [g * passes_x.astype(grad.dtype)]
        if lo is not None:
            below = x < lo if hi is None else (x < lo) & (lo < hi)
            grads.append(g * below.astype(grad.dtype))
        if hi is not None:
            above = x > hi if lo is None else (x > hi) | (hi < lo)
            grads.append(g * above.astype(grad.dtype))
        return tuple(grad_b if t._requires_grad else None
                     for grad_b, t in zip(grads, self.inputs))


def clip(x: Tensor, lo=None, hi=None, *, min=None, max=None) -> Tensor:
    """x limited to [lo, hi], i.e. min(max(x, lo), hi) (hi where lo > hi); either bound may be
    None, a number or a Tensor broadcasting with x; `min=`/`max=` (PyTorch's and NumPy 2's
    keywords) name them too. Gradients (PyTorch's at the ties): x gets 1 where lo ≤ x ≤ hi, lo
    where x < lo < hi, hi where x > hi or hi < lo."""
    if min is not None or max is not None:
        if lo is not None or hi is not None:
            raise TypeError("clip: got lo/hi and min=/max= together; they name the same bounds, "
                            "pass one spelling")
        lo, hi = min, max
    if lo is None and hi is None:
        raise ValueError("clip: give at least one of lo and hi")
    bounds = [b if isinstance(b, Tensor) else lift(b, x) for b in (lo, hi) if b is not None]
    return Clip.apply(x, *bounds, has_lo=lo is not None, has_hi=hi is not None)


class MaskedFill(Function):
    """y = value where mask, else x; value is a 0-d tensor (a number as a constant). No
    gradient flows to x where mask is True; value gets the sum of the gradient there."""

    needs_output = False

    def forward(self, x, mask, value):
        return self.xp.where(mask, value.astype(x.dtype, copy=False), x)

    def backward(self, grad):
        g, mask = self.values(grad, self.inputs[1])
        xp = self.ops
        # ∂y/∂x = 0 where mask, 1 elsewhere; ∂y/∂value = 1 where mask (the engine sums the
        # filled positions into value's one element)
        grad_value = xp.where(mask, g, 0.0) if self.inputs[2]._requires_grad else None
        return xp.where(mask, 0.0, g), None, grad_value


def masked_fill(x: Tensor, mask, value) -> Tensor:
    """`value` where the bool `mask` (broadcastable to x) is True, x elsewhere. `value` is a
    number or a 0-d tensor (which gets its gradient), cast to x's dtype; a tensor of any other
    shape raises ValueError, as in PyTorch (use `where` to fill from a tensor)."""
    mask = _as_mask(mask, x, "masked_fill")
    value = lift(value, x)
    if value.ndim != 0:
        raise ValueError(f"masked_fill: value must be a number or a 0-d tensor, got shape "
                         f"{tuple(value.shape)} (for x of shape {tuple(x.shape)}); use "
                         f"where(mask, value, x) to fill from a tensor")
    return MaskedFill.apply(x, mask, value)


class Where(Function):
    """z = a where cond, else b."""

    needs_output = False

    def forward(self, cond, a, b):
        return self.xp.where(cond, a, b)

    def backward(self, grad):
        g, cond = self.values(grad, self.inputs[0])
        xp = self.ops
        _, a, b = self.inputs
        # ∂z/∂a = 1 where cond, ∂z/∂b = 1 where not cond
        grad_a = xp.where(cond, g, 0.0) if a._requires_grad else None
        grad_b = xp.where(cond, 0.0, g) if b._requires_grad else None
        return None, grad_a, grad_b


def where(cond, a, b) -> Tensor:
    """a where the bool `cond` is True, else b (all three broadcast together). With two
    numbers, the result is float32 when either is a float, else int64 (bool for two bools),
    on cond's device, as in PyTorch."""
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    if like is None:
        if not isinstance(cond, Tensor):
            cond = Tensor(cond)
        a = Tensor(a, device=cond.device)               # a Python float becomes float32
        like = a
    a, b = pair(a, b)
    cond = _as_mask(cond, like, "where")
    return Where.apply(cond, a, b)


def _as_mask(mask, like: Tensor, op: str) -> Tensor:
    if not isinstance(mask, Tensor):
        # host masks (NumPy arrays and bools, lists, Python bools) keep their dtype and move
        # to x's device
        mask = Tensor(mask, device=like.device)
    if mask.data.dtype.kind != "b":
        raise TypeError(f"{op}: the mask must be bool, got dtype {mask.data.dtype}")
    return mask


# ---------------------------------------------------------------------------------------------
# Elementary functions beyond exp, log, sqrt and tanh: trigonometric and hyperbolic functions
# and their inverses, log2/log10/log1p, expm1/exp2, rsqrt and square (the binary ones follow
# them).
#
# Integer inputs give float32, minigrad's default float (NumPy would give float64). Outside a
# function's domain (asin(2), log1p(−2)) the value is NaN as in NumPy and PyTorch.

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


# ---------------------------------------------------------------------------------------------
# Elementary functions of two tensors, broadcasting: atan2, logaddexp, hypot, xlogy, lerp.
#
# Integer inputs give float32. Where a derivative does not exist (atan2 and hypot at the origin,
# logaddexp of two −inf, xlogy's x-gradient where x = 0 and y ≤ 0) the gradient is taken as 0,
# never NaN.

class Arctan2(Function):
    """θ = atan2(y, x), the angle of the point (x, y), in (−π, π]"""

    needs_output = False

    def forward(self, y, x):
        return self.xp.arctan2(y, x)

    def backward(self, grad):
        g, y, x = self.values(grad, *self.inputs)
        xp = self.ops
        origin = (self.inputs[0].data == 0) & (self.inputs[1].data == 0)
        r = xp.where(origin, 1.0, xp.hypot(x, y))
        # ∂θ/∂y = x/r², ∂θ/∂x = −y/r², r = hypot(x, y), divided by r twice: x² + y² itself
        # underflows for |x|, |y| ≲ 1e-154 (and overflows past 1e154). Taken as 0 at the
        # origin, where the angle is undefined
        return g * x / r / r, -g * y / r / r


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
        # a − b, and 0 where a and b are one infinity (they split the gradient evenly, not
        # NaN; NumPy's warning flags: ∞ − ∞ is computed, then replaced). Only there: a finite
        # tie keeps the recorded a − b, whose own derivative a second derivative needs
        same_infinity = (a_data == b_data) & self.xp.isinf(a_data)
        with np.errstate(invalid="ignore"):
            d = xp.where(same_infinity, 0.0, a - b)
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
    """z = x·log y, with z = 0 wherever x = 0 (even at y = 0; a NaN y stays NaN)"""

    needs_output = False

    def forward(self, x, y):
        xp = self.xp
        zero = (x == 0) & ~xp.isnan(y)
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


def clamp(x: Tensor, min=None, max=None) -> Tensor:
    """torch.clamp: `clip` under PyTorch's name and keywords; bounds are numbers or Tensors."""
    return clip(x, min, max)


class Reciprocal(Function):
    """y = 1/x"""

    def forward(self, x):
        return self.xp.reciprocal(x)

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = −1/x² = −y²
        return -g * y * y


def reciprocal(x: Tensor) -> Tensor:
    """1/x, elementwise (integers give float32); at 0: inf, with gradient −inf."""
    return Reciprocal.apply(as_float(x))


class NanToNum(Function):
    """y = x where finite; nan, +inf, −inf replaced by given numbers."""

    needs_output = False

    def __init__(self, nan, posinf, neginf):
        self.nan, self.posinf, self.neginf = nan, posinf, neginf

    def forward(self, x):
        xp, big = self.xp, float(np.finfo(x.dtype).max)
        posinf = big if self.posinf is None else self.posinf
        neginf = -big if self.neginf is None else self.neginf
        y = xp.where(xp.isnan(x), self.nan, x)
        return xp.where(y == math.inf, posinf, xp.where(y == -math.inf, neginf, y)).astype(
            x.dtype, copy=False)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x = 1 where x is finite, 0 where it was replaced by a constant
        return self.ops.where(self.xp.isfinite(self.inputs[0].data), g, 0.0)


def nan_to_num(x: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    """numpy.nan_to_num / torch.nan_to_num: NaN → `nan`, ±inf → `posinf`/`neginf` (the dtype's
    largest finite values when None). The replaced elements get gradient 0."""
    if x.dtype.kind not in "fc":
        return x
    return NanToNum.apply(x, nan=nan, posinf=posinf, neginf=neginf)


class Logit(Function):
    """y = log(x / (1 − x)) = ln x − ln(1 − x): −inf at 0, inf at 1, NaN outside [0, 1]."""

    needs_output = False

    def forward(self, x):
        return self.xp.log(x) - self.xp.log1p(-x)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1/x + 1/(1 − x) = 1/(x(1 − x)) on [0, 1]; NaN outside, where y is NaN
        # (PyTorch's; the formula alone would give a finite slope there)
        inside = (x >= 0) & (x <= 1)
        return g * self.ops.where(inside, 1 / (x * (1 - x)), math.nan)


def logit(x: Tensor, eps=None) -> Tensor:
    """torch.logit: log(x / (1 − x)), with x first clamped to [eps, 1 − eps] when eps is given
    (then the clamped elements get gradient 0, as clip's). Outside [0, 1] the value and the
    gradient are NaN."""
    x = as_float(x)
    if eps is not None:
        x = clip(x, eps, 1.0 - eps)
    return Logit.apply(x)
