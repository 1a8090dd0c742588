"""Parameter initialisers, as in PyTorch's torch.nn.init.

Each one replaces `tensor.data` in place (same Parameter object, same dtype and device) with
values drawn from minigrad's RNG, so `minigrad.manual_seed` makes them reproducible, and
returns the tensor.

Fans of a weight of shape (out, in, *kernel): fan_in = in · Π kernel, fan_out = out · Π kernel.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg

_GAINS = {"linear": 1.0, "identity": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
          "sigmoid": 1.0, "tanh": 5.0 / 3.0, "relu": math.sqrt(2.0), "selu": 3.0 / 4.0}


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended scale of the weights in front of `nonlinearity` (PyTorch's values):
    linear/sigmoid 1, tanh 5/3, relu √2, leaky_relu √(2 / (1 + slope²)) (slope 0.01 by
    default), selu 3/4."""
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1.0 + slope * slope))
    if nonlinearity not in _GAINS:
        raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}; expected one "
                         f"of {', '.join(sorted(_GAINS))} or 'leaky_relu'")
    return _GAINS[nonlinearity]


def calculate_fan_in_and_fan_out(tensor: mg.Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor with at least 2 dimensions, got "
                         f"shape {tuple(tensor.shape)}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: mg.Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill_with(tensor: mg.Tensor, sample: mg.Tensor) -> mg.Tensor:
    """Replace tensor.data with `sample` (already of tensor's shape, dtype and device)."""
    tensor.data = sample.data
    return tensor


def _float_dtype(tensor: mg.Tensor):
    if tensor.dtype.kind != "f":
        raise TypeError(f"random initialisers need a floating-point tensor, got dtype "
                        f"{tensor.dtype}")
    return tensor.dtype


def uniform_(tensor: mg.Tensor, a: float = 0.0, b: float = 1.0) -> mg.Tensor:
    """Fill with samples of U(a, b)."""
    with mg.no_grad():
        u = mg.rand(tensor.shape, dtype=_float_dtype(tensor), device=tensor.device)
        return _fill_with(tensor, u * (b - a) + a)


def normal_(tensor: mg.Tensor, mean: float = 0.0, std: float = 1.0) -> mg.Tensor:
    """Fill with samples of N(mean, std²)."""
    with mg.no_grad():
        z = mg.randn(tensor.shape, dtype=_float_dtype(tensor), device=tensor.device)
        return _fill_with(tensor, z * std + mean)


def constant_(tensor: mg.Tensor, value: float) -> mg.Tensor:
    """Fill with `value`."""
    with mg.no_grad():
        return _fill_with(tensor, mg.full(tensor.shape, value, dtype=tensor.dtype,
                                          device=tensor.device))


def zeros_(tensor: mg.Tensor) -> mg.Tensor:
    """Fill with 0 (in place: the tensor object keeps its identity); returns it."""
    return constant_(tensor, 0)


def ones_(tensor: mg.Tensor) -> mg.Tensor:
    """Fill with 1 (in place: the tensor object keeps its identity); returns it."""
    return constant_(tensor, 1)


def xavier_uniform_(tensor: mg.Tensor, gain: float = 1.0) -> mg.Tensor:
    """Glorot & Bengio (2010): U(−a, a), a = gain · √(6 / (fan_in + fan_out))."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: mg.Tensor, gain: float = 1.0) -> mg.Tensor:
    """Glorot & Bengio (2010): N(0, std²), std = gain · √(2 / (fan_in + fan_out))."""
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor: mg.Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> mg.Tensor:
    """He et al. (2015): U(−b, b), b = gain · √(3 / fan), gain = calculate_gain(nonlinearity, a).

    With a = √5 (nn.Linear's default) b = 1/√fan_in."""
    gain = calculate_gain(nonlinearity, a)
    fan = _fan(tensor, mode)
    bound = gain * math.sqrt(3.0 / fan) if fan > 0 else 0.0
    return uniform_(tensor, -bound, bound)


def fan_in_uniform_(weight: mg.Tensor, bias: mg.Tensor | None = None) -> mg.Tensor:
    """PyTorch's default for nn.Linear and nn.Conv1d: weight from kaiming_uniform_ with a = √5,
    which is U(−1/√fan_in, 1/√fan_in), and bias (when given) from the same interval."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = calculate_fan_in_and_fan_out(weight)
        bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
        uniform_(bias, -bound, bound)
    return weight


def kaiming_normal_(tensor: mg.Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> mg.Tensor:
    """He et al. (2015): N(0, std²), std = gain / √fan."""
    gain = calculate_gain(nonlinearity, a)
    fan = _fan(tensor, mode)
    return normal_(tensor, 0.0, gain / math.sqrt(fan) if fan > 0 else 0.0)


def trunc_normal_(tensor: mg.Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0) -> mg.Tensor:
    """N(mean, std²) restricted to [a, b], by redrawing the samples that fall outside."""
    with mg.no_grad():
        dtype = _float_dtype(tensor)
        values = np.empty(tensor.shape, dtype=np.float64)
        todo = np.ones(tensor.shape, dtype=bool)
        for _ in range(100):
            if not todo.any():
                break
            draw = mg.randn(tensor.shape, dtype=np.float64).numpy() * std + mean
            values[todo] = draw[todo]
            todo = (values < a) | (values > b)
        values = np.clip(values, a, b)
        return _fill_with(tensor, mg.tensor(values.astype(dtype), device=tensor.device))
