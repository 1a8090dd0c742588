"""Activation modules, named and parametrised as in torch.nn, each calling the minigrad function
of the same name (which states its formula and its gradient at the kinks). None has
parameters; every one keeps the input's shape.

softmax, log_softmax and softmin (nn.functional's, and the modules') take PyTorch's rule for a
missing dim where it agrees with minigrad's last axis (up to 2 axes) and raise where it does not
(3 or more): PyTorch's implicit dim is 0 for 3-D input, 1 for 4-D and more."""

from __future__ import annotations

import numpy as np

import minigrad as mg

from ._checks import check_not_inplace
from .module import Module


class _TakesInplace(Module):
    """An activation PyTorch gives an `inplace` flag: False (its default) is accepted, True
    raises, since minigrad's activations never change their input."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        check_not_inplace(type(self).__name__, inplace)


class ReLU(_TakesInplace):
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


class SiLU(_TakesInplace):
    """y = x·σ(x) (swish)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns x·σ(x), the same shape."""
        return mg.silu(x)


class Mish(_TakesInplace):
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

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        check_not_inplace(type(self).__name__, inplace)
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


class SELU(_TakesInplace):
    """y = λ·elu(x, α), α ≈ 1.6733, λ ≈ 1.0507."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns selu(x), the same shape."""
        return mg.selu(x)


class LeakyReLU(Module):
    """y = x for x > 0, negative_slope·x otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        check_not_inplace("LeakyReLU", inplace)
        self.negative_slope = negative_slope

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns leaky_relu(x), the same shape."""
        return mg.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Hardtanh(Module):
    """y = x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        check_not_inplace("Hardtanh", inplace)
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns hardtanh(x), the same shape."""
        return mg.hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}"


class ReLU6(_TakesInplace):
    """y = min(max(x, 0), 6)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns relu6(x), the same shape."""
        return mg.relu6(x)


class Hardsigmoid(_TakesInplace):
    """y = relu6(x + 3)/6."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns hardsigmoid(x), the same shape."""
        return mg.hardsigmoid(x)


class Hardswish(_TakesInplace):
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


# ---------------------------------------------------------------------------------------------
# The softmax family with PyTorch's dim rule

def _given_axis(op: str, x, axis: int | None, dim: int | None) -> tuple[int | None, int | None]:
    """(axis, dim) to hand to minigrad's `op`. With neither given, PyTorch picks dim 0 for 0-,
    1- and 3-D input and dim 1 otherwise, where minigrad's own function takes the last axis:
    the two agree for up to 2 axes (the last one is used), and differ from 3 on, which raises."""
    if axis is not None or dim is not None:
        return axis, dim
    ndim = np.ndim(x)
    if ndim >= 3:
        implicit = 0 if ndim == 3 else 1
        raise ValueError(f"{op}: no dim given for an input of shape {tuple(np.shape(x))}: PyTorch "
                         f"would take dim={implicit} (its implicit dim), minigrad's {op} the "
                         f"last axis; pass dim= (e.g. dim=-1)")
    return -1, None


def softmax(x: mg.Tensor, axis: int | None = None, *, dim: int | None = None) -> mg.Tensor:
    """y = eˣ / Σ eˣ along `axis` (or `dim`), as minigrad.softmax. With neither given: the last
    axis for up to 2 axes (PyTorch's implicit dim there), an error for 3 or more."""
    axis, dim = _given_axis("softmax", x, axis, dim)
    return mg.softmax(x, axis, dim=dim)


def log_softmax(x: mg.Tensor, axis: int | None = None, *, dim: int | None = None) -> mg.Tensor:
    """y = x − log Σ eˣ along `axis` (or `dim`), as minigrad.log_softmax; no axis given: as
    softmax."""
    axis, dim = _given_axis("log_softmax", x, axis, dim)
    return mg.log_softmax(x, axis, dim=dim)


def softmin(x: mg.Tensor, axis: int | None = None, *, dim: int | None = None) -> mg.Tensor:
    """y = softmax(−x) along `axis` (or `dim`), as minigrad.softmin; no axis given: as
    softmax."""
    axis, dim = _given_axis("softmin", x, axis, dim)
    return mg.softmin(x, axis, dim=dim)


def gumbel_softmax(logits: mg.Tensor, tau: float = 1.0, hard: bool = False,
                   dim: int = -1) -> mg.Tensor:
    """torch.nn.functional.gumbel_softmax (Jang et al. 2017; Maddison et al. 2017): y =
    softmax((logits + g)/tau) along `dim`, g = −log(−log u) with u ~ U(0, 1) from minigrad's
    RNG. With `hard`, the one-hot of y's argmax, whose gradient is y's (straight through:
    one_hot − y.detach() + y)."""
    if tau <= 0:
        raise ValueError(f"gumbel_softmax: tau must be > 0, got {tau}")
    u = mg.rand(*logits.shape, dtype=logits.dtype, device=logits.device)
    tiny = float(np.finfo(logits.dtype).tiny)                  # u = 0 would give log 0
    gumbel = -mg.log(-mg.log(mg.clamp(u, min=tiny)))
    y = mg.softmax((logits + gumbel) / tau, dim=dim)
    if not hard:
        return y
    picked = mg.one_hot(mg.argmax(y, dim=dim), y.shape[dim], dtype=y.dtype)  # classes last
    order = list(range(y.ndim - 1))
    order.insert(dim % y.ndim, y.ndim - 1)                     # the classes back at dim
    return picked.permute(order) - y.detach() + y


class Softmax(Module):
    """y = eˣ / Σ eˣ along `dim`. Without a dim (PyTorch's default, None) an input of up to 2
    axes uses its last axis, and one of 3 or more raises: PyTorch's implicit dim differs there."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns softmax(x) along dim, the same shape."""
        return softmax(x, dim=self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """y = log softmax(x) along `dim` (no dim: as Softmax)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns log_softmax(x) along dim, the same shape."""
        return log_softmax(x, dim=self.dim)


class Softmin(Softmax):
    """y = softmax(−x) along `dim` (no dim: as Softmax)."""

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        """x: any shape. Returns softmin(x) along dim, the same shape."""
        return softmin(x, dim=self.dim)
