"""Elementwise primitives. Binary ones broadcast as NumPy does; the engine sums each gradient
back to its input's shape, so their backward states only the textbook rule."""

from __future__ import annotations

import math

import numpy as np

from ..autograd import Function
from ..backend import backend_of
from ..tensor import Tensor
from .common import as_float, constant, lift, pair


# -- arithmetic ----------------------------------------------------------------------------

class Add(Function):
    """z = a + b"""

    needs_output = False

    def forward(self, a, b):
        return a + b

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂z/∂a = ∂z/∂b = 1
        return g, g


def add(a, b) -> Tensor:
    return Add.apply(*pair(a, b))


class Sub(Function):
    """z = a − b"""

    needs_output = False

    def forward(self, a, b):
        return a - b

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂z/∂a = 1, ∂z/∂b = −1
        return g, (-g if self.inputs[1]._requires_grad else None)


def sub(a, b) -> Tensor:
    return Sub.apply(*pair(a, b))


class Mul(Function):
    """z = a ⊙ b"""

    needs_output = False

    def forward(self, a, b):
        return a * b

    def backward(self, grad):
        g, a, b = self.values(grad, *self.inputs)
        needs_a, needs_b = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        # ∂z/∂a = b, ∂z/∂b = a
        return (g * b if needs_a else None), (g * a if needs_b else None)


def mul(a, b) -> Tensor:
    return Mul.apply(*pair(a, b))


class Div(Function):
    """z = a / b"""

    def forward(self, a, b):
        return a / b

    def backward(self, grad):
        g, a, b, z = self.values(grad, *self.inputs, self.output)
        needs_a, needs_b = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        # ∂z/∂a = 1/b, ∂z/∂b = −a/b² = −z/b
        return (g / b if needs_a else None), (-g * z / b if needs_b else None)


def div(a, b) -> Tensor:
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
    return Neg.apply(x)


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

    def forward(self, x):
        return self.xp.tanh(x)

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = 1 − tanh²(x) = 1 − y²
        return g * (1 - y * y)


def tanh(x: Tensor) -> Tensor:
    """tanh(x), elementwise; ∂y/∂x = 1 − y²."""
    return Tanh.apply(as_float(x))


class Sigmoid(Function):
    """y = σ(x) = 1 / (1 + e⁻ˣ)"""

    def forward(self, x):
        return _sigmoid(self.xp, x)

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # ∂y/∂x = σ(x)(1 − σ(x)) = y(1 − y)
        return g * (y * (1 - y))


def _sigmoid(xp, x):
    """σ(x) on an array of the array module xp."""
    if x.dtype.kind != "f":
        x = x.astype(xp.result_type(x.dtype, 1.0))         # as exp would promote it
    # 1/(1 + e⁻ˣ) is accurate to a few ulps wherever σ(x) is a normal float, tiny outputs in
    # the lower tail included (no 1 − 1 cancellation). Only where σ(x) is subnormal (x < −88.7
    # in float32, −709 in float64) does e⁻ˣ overflow to inf, giving σ = 0: expected, so the
    # overflow is not warned about.
    e = xp.negative(x, out=xp.empty_like(x))               # an array even when x is 0-d
    with np.errstate(over="ignore"):                       # NumPy's warning flags
        xp.exp(e, out=e)
    e += 1
    xp.reciprocal(e, out=e)                                # all in one buffer
    return e


def sigmoid(x: Tensor) -> Tensor:
    """σ(x) = 1 / (1 + e⁻ˣ), elementwise, computed without overflow for large |x|."""
    return Sigmoid.apply(as_float(x))


class Relu(Function):
    """y = max(x, 0); the gradient at 0 is taken as 0."""

    needs_output = False

    def forward(self, x):
        return self.xp.maximum(x, 0)

    def backward(self, grad):
        (g,) = self.values(grad)
        # ∂y/∂x = 1 where x > 0, else 0: a constant
        return g * (self.inputs[0].data > 0)


def relu(x: Tensor) -> Tensor:
    """max(x, 0), elementwise; the gradient at 0 is 0."""
    return Relu.apply(x)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


class Gelu(Function):
    """y = x·Φ(x), Φ the standard normal CDF (PyTorch's default, exact erf form)."""

    needs_output = False

    def forward(self, x):
        cdf = 0.5 * (1 + backend_of(x).erf(x * (1 / math.sqrt(2))))
        self.save_for_backward(cdf)                          # erf is this op's dearest part
        return x * cdf

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        ops = self.ops
        # Φ(x) as forward left it, or as a differentiable erf when the backward is recorded
        cdf = (self.saved_tensors[0] if ops is self.xp
               else 0.5 * (1 + ops.erf(x * (1 / math.sqrt(2)))))
        # ∂y/∂x = Φ(x) + x·φ(x), φ(x) = e^{−x²/2}/√(2π) the standard normal density
        return g * (cdf + x * (_INV_SQRT_2PI * ops.exp(-0.5 * x * x)))


class GeluTanh(Function):
    """y = ½x(1 + tanh(u)), u = √(2/π)(x + 0.044715x³): the tanh approximation of GELU."""

    def forward(self, x):
        u = _SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + self.xp.tanh(u))

    def backward(self, grad):
        (x,) = self.inputs
        # ∂y/∂x = ½(1 + t) + ½x(1 − t²)·u', t = tanh(u), u' = √(2/π)(1 + 3·0.044715x²)
        t = tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
        du = _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return grad * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du)


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """GELU: x·Φ(x) with `approximate="none"`, or its tanh approximation with "tanh"."""
    x = as_float(x)
    if approximate == "none":
        return Gelu.apply(x)
    if approximate == "tanh":
        return GeluTanh.apply(x)
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


# -- selections ----------------------------------------------------------------------------

class Maximum(Function):
    """z = max(a, b) elementwise; at ties each input gets half the gradient."""

    def forward(self, a, b):
        return self.xp.maximum(a, b)

    def backward(self, grad):
        (g,) = self.values(grad)
        a, b = self.inputs[0].data, self.inputs[1].data
        # ∂z/∂a = 1 where a > b, ½ where a = b, 0 elsewhere; ∂z/∂b the rest (constants)
        share_a = ((a > b) + 0.5 * (a == b)).astype(grad.dtype)
        return g * share_a, g * (1 - share_a)


def maximum(a, b) -> Tensor:
    """max(a, b) elementwise, broadcasting a and b; at ties each gets half the gradient."""
    return Maximum.apply(*pair(a, b))


class Minimum(Function):
    """z = min(a, b) elementwise; at ties each input gets half the gradient."""

    def forward(self, a, b):
        return self.xp.minimum(a, b)

    def backward(self, grad):
        (g,) = self.values(grad)
        a, b = self.inputs[0].data, self.inputs[1].data
        # ∂z/∂a = 1 where a < b, ½ where a = b, 0 elsewhere; ∂z/∂b the rest (constants)
        share_a = ((a < b) + 0.5 * (a == b)).astype(grad.dtype)
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


def clip(x: Tensor, lo=None, hi=None) -> Tensor:
    """x limited to [lo, hi], i.e. min(max(x, lo), hi) (hi where lo > hi); either bound may be
    None, a number or a Tensor broadcasting with x. Gradients (PyTorch's at the ties): x gets
    1 where lo ≤ x ≤ hi, lo where x < lo < hi, hi where x > hi or hi < lo."""
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


# -- comparisons and logic: bool results, never any gradient ---------------------------------

def _compare(name, a, b):
    a, b = pair(a, b, promote_ints=False)
    if a.device != b.device:
        raise RuntimeError(f"{name}: operands on different devices, {a.device} and {b.device}")
    try:
        out = getattr(a.data, f"__{name}__")(b.data)
    except ValueError as error:
        raise ValueError(f"{name}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"broadcast ({error})") from error
    return constant(out, (a, b), (_compare_arrays, name))


def _compare_arrays(name, x, y):
    return getattr(x, f"__{name}__")(y)


def less(a, b) -> Tensor: return _compare("lt", a, b)
def less_equal(a, b) -> Tensor: return _compare("le", a, b)
def greater(a, b) -> Tensor: return _compare("gt", a, b)
def greater_equal(a, b) -> Tensor: return _compare("ge", a, b)
def equal(a, b) -> Tensor: return _compare("eq", a, b)
def not_equal(a, b) -> Tensor: return _compare("ne", a, b)
def logical_and(a, b) -> Tensor: return _compare("and", a, b)
def logical_or(a, b) -> Tensor: return _compare("or", a, b)
def logical_xor(a, b) -> Tensor: return _compare("xor", a, b)


def logical_not(x: Tensor) -> Tensor:
    if x.data.dtype.kind != "b":
        raise TypeError(f"logical_not (~): needs a bool tensor, got dtype {x.data.dtype}")
    return constant(~x.data)


def isfinite(x: Tensor) -> Tensor:
    """True where x is neither inf nor NaN: a bool tensor of x's shape, no gradient."""
    return constant(x.xp.isfinite(x.data))


def isnan(x: Tensor) -> Tensor:
    """True where x is NaN: a bool tensor of x's shape, no gradient."""
    return constant(x.xp.isnan(x.data))
