"""Activation functions: sigmoid, relu, gelu, silu, softplus, elu, celu, selu, leaky_relu,
hardtanh, relu6, hardsigmoid, hardswish, mish, softsign, logsigmoid, softmin, and erf/erfc.

Each piecewise one states its derivative at the kinks as PyTorch takes it: the branch that
holds at the kink itself (leaky_relu's slope at 0, elu's α at 0, hardswish's outer slopes 0
and 1 at −3 and 3), and 0 at hardtanh's bounds. An exponential on the branch that is not taken is fed a
clipped input, so it never overflows into an inf·0 = NaN gradient.
"""

from __future__ import annotations

import math

import numpy as np

from ..function import Function
from ..backend import backend_of
from ..tensor import LAST_AXIS, Tensor
from .common import as_float
from .elementwise import abs, clip, tanh
from .nn_ops import softmax
from .shape import chunk

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


# -- the classic three: sigmoid, relu, gelu ---------------------------------------------------

class Sigmoid(Function):
    """y = σ(x) = 1 / (1 + e⁻ˣ)"""

    needs_inputs = False

    def forward(self, x):
        return _sigmoid(self.xp, x)

    def gradients(self, g, y):
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
        c = self.xp.clip(x, -10.0, 10.0)          # tanh(u) is ±1 from |x| = 10 on: see backward
        u = _SQRT_2_OVER_PI * (c + 0.044715 * c * c * c)
        return 0.5 * x * (1 + self.xp.tanh(u))

    def backward(self, grad):
        (x,) = self.inputs
        # ∂y/∂x = ½(1 + t) + ½x(1 − t²)·u', t = tanh(u), u' = √(2/π)(1 + 3·0.044715x²).
        # From |x| = 10 on, u > 43 and t = ±1 exactly in every float type, so the second term
        # is exactly 0 and ∂y/∂x is 1 or 0; x is clipped there so that x³ never overflows
        # into inf·0 = NaN (|x| > 3.7e154 in float64, 7e12 in float32, ±inf).
        x = clip(x, -10.0, 10.0)
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


# -- the others -------------------------------------------------------------------------------

def _log1p_exp(xp, s):
    """log(1 + eˢ) on arrays, never overflowing: max(s, 0) + log(1 + e^{−|s|}). (NumPy's
    logaddexp(0, s) gives the same numbers, many times slower.)"""
    return xp.maximum(s, 0) + xp.log1p(xp.exp(-xp.abs(s)))


def _number(value, name: str, op: str) -> float:
    """An option that is a constant of the graph (α, β, a slope, a bound) as a float. A 0-d
    Tensor converts as in PyTorch; one that requires grad is refused, since its gradient
    would be lost without a word."""
    if isinstance(value, Tensor) and value.requires_grad:
        raise TypeError(f"{op}: {name} is a constant of the graph, but got a Tensor that "
                        f"requires grad (shape {tuple(value.shape)}), whose gradient would be "
                        f"lost; pass a float or {name}.detach()")
    return float(value)


class _Activation(Function):
    """Shared helpers for backward: σ on arrays or recorded Tensors, and constant masks."""

    needs_output = False

    def _sigmoid(self, x):
        return _sigmoid(self.xp, x) if self.ops is self.xp else sigmoid(x)

    def _mask(self, condition):
        """A bool array from the input's data (`condition(x)`), a constant in any graph."""
        return condition(self.inputs[0].data)


class Silu(_Activation):
    """y = x·σ(x) (swish)"""

    def forward(self, x):
        return x * _sigmoid(self.xp, x)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        s = self._sigmoid(x)
        # ∂y/∂x = σ(x) + x·σ(x)(1 − σ(x)) = σ(x)(1 + x(1 − σ(x)))
        return g * (s * (1 + x * (1 - s)))


def silu(x: Tensor) -> Tensor:
    """x·σ(x) (SiLU, swish), elementwise; smooth."""
    return Silu.apply(as_float(x))


class Softplus(_Activation):
    """y = log(1 + e^{βx})/β, and y = x where βx > threshold (PyTorch's linear tail)."""

    def __init__(self, beta: float, threshold: float):
        self.beta, self.threshold = beta, threshold

    def forward(self, x):
        xp = self.xp
        scaled = x * self.beta
        smooth = _log1p_exp(xp, scaled) / self.beta            # log(1 + e^{βx}), no overflow
        return xp.where(scaled > self.threshold, x, smooth).astype(x.dtype, copy=False)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        linear = self._mask(lambda v: v * self.beta > self.threshold)
        # ∂y/∂x = σ(βx) on the smooth part, 1 on the linear tail
        return g * self.ops.where(linear, 1.0, self._sigmoid(x * self.beta))


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + e^{βx})/β elementwise, a smooth relu; x itself where βx > threshold (PyTorch's
    rule, which also makes the gradient exactly 1 there). Never overflows."""
    beta, threshold = _number(beta, "beta", "softplus"), _number(threshold, "threshold",
                                                                 "softplus")
    if beta == 0:
        raise ValueError("softplus: beta must be nonzero")
    return Softplus.apply(as_float(x), beta=beta, threshold=threshold)


class Elu(_Activation):
    """y = scale·x for x > 0, scale·α(e^{x/σ} − 1) for x ≤ 0 (σ the input scale): elu, celu
    and selu."""

    def __init__(self, alpha: float, scale: float = 1.0, input_scale: float = 1.0):
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale

    def forward(self, x):
        xp = self.xp
        negative = xp.minimum(x, 0) * self.input_scale            # clipped: no overflow
        y = xp.where(x > 0, x, self.alpha * xp.expm1(negative)) * self.scale
        return y.astype(x.dtype, copy=False)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        xp = self.ops
        positive = self._mask(lambda v: v > 0)
        negative = xp.where(positive, 0.0, x) * self.input_scale
        # ∂y/∂x = scale for x > 0, scale·α·σ⁻¹·e^{x/σ} for x ≤ 0 (so α·scale at 0, PyTorch's)
        slope = xp.where(positive, 1.0, (self.alpha * self.input_scale) * xp.exp(negative))
        return g * (self.scale * slope)


def elu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """x for x > 0, α(eˣ − 1) for x ≤ 0, elementwise; the gradient at 0 is α (PyTorch's)."""
    return Elu.apply(as_float(x), alpha=_number(alpha, "alpha", "elu"))


def celu(x: Tensor, alpha: float = 1.0) -> Tensor:
    """max(0, x) + min(0, α(e^{x/α} − 1)), elementwise; continuously differentiable."""
    alpha = _number(alpha, "alpha", "celu")
    if alpha == 0:
        raise ValueError("celu: alpha must be nonzero")
    return Elu.apply(as_float(x), alpha=alpha, input_scale=1.0 / alpha)


def selu(x: Tensor) -> Tensor:
    """λ·elu(x, α) with α ≈ 1.6733, λ ≈ 1.0507 (self-normalising); gradient λα at 0."""
    return Elu.apply(as_float(x), alpha=_SELU_ALPHA, scale=_SELU_SCALE)


class LeakyRelu(_Activation):
    """y = x for x > 0, slope·x for x ≤ 0."""

    def __init__(self, negative_slope: float):
        self.negative_slope = negative_slope

    def forward(self, x):
        return self.xp.where(x > 0, x, x * self.negative_slope)

    def backward(self, grad):
        (g,) = self.values(grad)
        positive = self._mask(lambda v: v > 0)
        # ∂y/∂x = 1 for x > 0, the slope for x ≤ 0 (at 0 too, as PyTorch): a constant
        slope = self.xp.where(positive, 1.0, self.negative_slope).astype(grad.dtype)
        return g * slope


def leaky_relu(x: Tensor, negative_slope: float = 0.01) -> Tensor:
    """x for x > 0, negative_slope·x otherwise; the gradient at 0 is negative_slope."""
    return LeakyRelu.apply(as_float(x), negative_slope=_number(negative_slope, "negative_slope",
                                                                 "leaky_relu"))


class Hardtanh(_Activation):
    """y = min(max(x, lo), hi); the gradient is 1 strictly inside (lo, hi), 0 at the bounds."""

    def __init__(self, lo: float, hi: float):
        self.lo, self.hi = lo, hi

    def forward(self, x):
        return self.xp.clip(x, self.lo, self.hi)

    def backward(self, grad):
        (g,) = self.values(grad)
        inside = self._mask(lambda v: (v > self.lo) & (v < self.hi))
        # ∂y/∂x = 1 for lo < x < hi, 0 elsewhere, bounds included (PyTorch's): a constant
        return g * inside.astype(grad.dtype)


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """x clipped to [min_val, max_val]; the gradient is 0 at the bounds themselves (PyTorch's;
    `clip` passes it there)."""
    min_val = _number(min_val, "min_val", "hardtanh")
    max_val = _number(max_val, "max_val", "hardtanh")
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} exceeds max_val {max_val}")
    return Hardtanh.apply(as_float(x), lo=min_val, hi=max_val)


def relu6(x: Tensor) -> Tensor:
    """min(max(x, 0), 6); gradient 0 at 0 and at 6."""
    return hardtanh(x, 0.0, 6.0)


class Hardsigmoid(_Activation):
    """y = relu6(x + 3)/6: 0 below −3, 1 above 3, linear between."""

    def forward(self, x):
        return self.xp.clip(x / 6 + 0.5, 0, 1).astype(x.dtype, copy=False)

    def backward(self, grad):
        (g,) = self.values(grad)
        inside = self._mask(lambda v: (v > -3) & (v < 3))
        # ∂y/∂x = 1/6 for −3 < x < 3, else 0 (bounds included, as PyTorch): a constant
        return g * (inside.astype(grad.dtype) / 6)


def hardsigmoid(x: Tensor) -> Tensor:
    """relu6(x + 3)/6, a piecewise-linear sigmoid; gradient 1/6 strictly between −3 and 3."""
    return Hardsigmoid.apply(as_float(x))


class Hardswish(_Activation):
    """y = x·relu6(x + 3)/6."""

    def forward(self, x):
        return (x * self.xp.clip(x / 6 + 0.5, 0, 1)).astype(x.dtype, copy=False)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        below = self._mask(lambda v: v <= -3)
        above = self._mask(lambda v: v >= 3)
        # ∂y/∂x = 0 for x ≤ −3, x/3 + ½ for −3 < x < 3, 1 for x ≥ 3 (at the ends the outer
        # pieces' slopes, as PyTorch takes them)
        xp = self.ops
        return g * xp.where(below, 0.0, xp.where(above, 1.0, x / 3 + 0.5))


def hardswish(x: Tensor) -> Tensor:
    """x·relu6(x + 3)/6; gradients 0 at −3 and 1 at 3 (the outer pieces'), as PyTorch."""
    return Hardswish.apply(as_float(x))


class Mish(_Activation):
    """y = x·tanh(softplus(x))"""

    def forward(self, x):
        t = self.xp.tanh(_log1p_exp(self.xp, x))
        self.save_for_backward(t)
        return x * t

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        ops = self.ops
        # t = tanh(softplus(x)) as forward left it, or recorded when the backward is
        t = self.saved_tensors[0] if ops is self.xp else ops.tanh(ops.softplus(x))
        # ∂y/∂x = t + x·(1 − t²)·σ(x), since softplus′(x) = σ(x)
        return g * (t + x * (1 - t * t) * self._sigmoid(x))


def mish(x: Tensor) -> Tensor:
    """x·tanh(softplus(x)), elementwise; smooth."""
    return Mish.apply(as_float(x))


class LogSigmoid(_Activation):
    """y = log σ(x) = −log(1 + e⁻ˣ)"""

    def forward(self, x):
        return -_log1p_exp(self.xp, -x)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = 1 − σ(x) = σ(−x)
        return g * self._sigmoid(-x)


def logsigmoid(x: Tensor) -> Tensor:
    """log σ(x) = −softplus(−x), elementwise, without overflow or log(0) for large |x|."""
    return LogSigmoid.apply(as_float(x))


def softsign(x: Tensor) -> Tensor:
    """x / (1 + |x|), elementwise; gradient 1/(1 + |x|)²."""
    x = as_float(x)
    return x / (1 + abs(x))


def softmin(x: Tensor, axis: int = LAST_AXIS, *, dim: int | None = None) -> Tensor:
    """softmax(−x) along `axis` (or `dim`): weights that favour the smallest entries."""
    return softmax(-as_float(x), axis, dim=dim)


class Erf(_Activation):
    """y = erf(x) = (2/√π) ∫₀ˣ e^{−t²} dt"""

    def forward(self, x):
        return backend_of(x).erf(x)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = (2/√π) e^{−x²}
        return g * (_TWO_OVER_SQRT_PI * self.ops.exp(-x * x))


class Erfc(_Activation):
    """y = erfc(x) = 1 − erf(x), accurate where erf(x) is near 1"""

    def forward(self, x):
        return backend_of(x).erfc(x)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y/∂x = −(2/√π) e^{−x²}
        return g * (-_TWO_OVER_SQRT_PI * self.ops.exp(-x * x))


def erf(x: Tensor) -> Tensor:
    """The error function erf(x) = (2/√π) ∫₀ˣ e^{−t²} dt, elementwise: SciPy's when installed
    (CuPy's on a GPU), else two fitted polynomials (minigrad/_erf.py) accurate to about 1e-15
    in float64 and an ulp in float32."""
    return Erf.apply(as_float(x))


def erfc(x: Tensor) -> Tensor:
    """1 − erf(x), elementwise, keeping its relative precision for large x (erfc(10) ≈
    2e-45 in float64, where 1 − erf(10) is 0)."""
    return Erfc.apply(as_float(x))


def glu(x: Tensor, dim: int = -1) -> Tensor:
    """torch.nn.functional.glu: a ⊙ σ(b), where a and b are the two halves of x along `dim`
    (whose length must be even)."""
    n = x.shape[dim] if x.ndim else 0
    if x.ndim == 0 or n % 2:
        raise ValueError(f"glu: dim {dim} of shape {tuple(x.shape)} must have an even length")
    a, b = chunk(x, 2, dim)
    return a * sigmoid(b)
