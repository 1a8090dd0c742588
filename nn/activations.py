"""Activation modules, named and parametrised as in torch.nn, each calling the minigrad function
of the same name (which states its formula and its gradient at the kinks). None has
parameters; every one keeps the input's shape."""

from __future__ import annotations

import minigrad as mg

from .module import Module


class ReLU(Module):
    """y = max(x, 0)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns max(x, 0), the same shape."""
        return mg.relu(x)


class Tanh(Module):
    """y = tanh(x)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns tanh(x), the same shape."""
        return mg.tanh(x)


class Sigmoid(Module):
    """y = σ(x) = 1/(1 + e^(−x))."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns σ(x), the same shape."""
        return mg.sigmoid(x)


class GELU(Module):
    """y = x·Φ(x) (approximate="none"), or its tanh approximation (approximate="tanh")."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns GELU(x), the same shape."""
        return mg.gelu(x, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """y = x·σ(x) (swish)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns x·σ(x), the same shape."""
        return mg.silu(x)


class Mish(Module):
    """y = x·tanh(softplus(x))."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns mish(x), the same shape."""
        return mg.mish(x)


class Softplus(Module):
    """y = log(1 + e^{βx})/β, and x where βx > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns softplus(x), the same shape."""
        return mg.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(Module):
    """y = x for x > 0, α(eˣ − 1) otherwise."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns elu(x), the same shape."""
        return mg.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class CELU(ELU):
    """y = max(0, x) + min(0, α(e^{x/α} − 1))."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns celu(x), the same shape."""
        return mg.celu(x, self.alpha)


class SELU(Module):
    """y = λ·elu(x, α), α ≈ 1.6733, λ ≈ 1.0507."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns selu(x), the same shape."""
        return mg.selu(x)


class LeakyReLU(Module):
    """y = x for x > 0, negative_slope·x otherwise."""

    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns leaky_relu(x), the same shape."""
        return mg.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Hardtanh(Module):
    """y = x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0):
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns hardtanh(x), the same shape."""
        return mg.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class ReLU6(Module):
    """y = min(max(x, 0), 6)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns relu6(x), the same shape."""
        return mg.relu6(x)


class Hardsigmoid(Module):
    """y = relu6(x + 3)/6."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns hardsigmoid(x), the same shape."""
        return mg.hardsigmoid(x)


class Hardswish(Module):
    """y = x·relu6(x + 3)/6."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns hardswish(x), the same shape."""
        return mg.hardswish(x)


class Softsign(Module):
    """y = x/(1 + |x|)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns softsign(x), the same shape."""
        return mg.softsign(x)


class LogSigmoid(Module):
    """y = log σ(x)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns log σ(x), the same shape."""
        return mg.logsigmoid(x)


class Softmax(Module):
    """y = eˣ / Σ eˣ along `dim`."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns softmax(x) along dim, the same shape."""
        return mg.softmax(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """y = log softmax(x) along `dim`."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns log_softmax(x) along dim, the same shape."""
        return mg.log_softmax(x, self.dim)


class Softmin(Softmax):
    """y = softmax(−x) along `dim`."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns softmin(x) along dim, the same shape."""
        return mg.softmin(x, self.dim)
