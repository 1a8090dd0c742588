"""Fused primitives for neural networks: softmax, log_softmax, dropout."""

from __future__ import annotations

from ..function import Function
from ..backend import backend_of
from ..tensor import LAST_AXIS, Tensor
from .common import as_float, axis_or_dim, normalize_axis, one_axis
from .shape import reshape


def _stable_shift(x, axis, xp):
    """x − max(x) along axis, with all −inf slices shifted by 0 so they stay −inf (not NaN);
    x itself along an empty axis (nothing to shift, and no maximum to take)."""
    if x.shape[axis] == 0:
        return x
    m = x.max(axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    return x - m


class Softmax(Function):
    """y = eˣ / Σ_axis eˣ.

    A slice whose inputs are all −inf (every key masked out) gives all-zero weights and zero
    gradient, never NaN.
    """

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        xp = self.xp
        e = xp.exp(_stable_shift(x, self.axis, xp))   # subtract the max: same softmax, no overflow
        total = e.sum(axis=self.axis, keepdims=True)
        return e / xp.where(total == 0, 1, total)

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        # softmax: ∂L/∂x = y ⊙ (g − Σ_j g_j y_j)
        return y * (g - (g * y).sum(axis=self.axis, keepdims=True))


def softmax(x: Tensor, axis: int = LAST_AXIS, *, dim: int | None = None) -> Tensor:
    """y = eˣ / Σ_axis eˣ along `axis` (or `dim`), shifted by the maximum so large logits do not
    overflow; an all −inf slice (every key masked out) gives zeros and zero gradient, never NaN.
    Shape: that of x."""
    axis = axis_or_dim(axis, dim, "softmax")
    x = as_float(x)
    if x.ndim == 0:                          # one element: softmax 1, gradient 0 (PyTorch's)
        one_axis(axis, 0, "softmax")
        return reshape(Softmax.apply(reshape(x, 1), axis=0), ())
    return Softmax.apply(x, axis=normalize_axis(axis, x.ndim, "softmax")[0])


class LogSoftmax(Function):
    """y = x − log Σ_axis eˣ.

    A slice whose inputs are all −inf gives all −inf (log of zero probabilities) and passes no
    gradient to those inputs.
    """

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        xp = self.xp
        shifted = _stable_shift(x, self.axis, xp)
        total = xp.exp(shifted).sum(axis=self.axis, keepdims=True)
        return shifted - xp.log(xp.where(total == 0, 1, total))

    def backward(self, grad):
        g, y = self.values(grad, self.output)
        xp = self.ops
        # log-softmax: ∂L/∂x = g − softmax(x) Σ_j g_j, with softmax(x) = e^y
        grad_x = g - xp.exp(y) * g.sum(axis=self.axis, keepdims=True)
        # an all −inf slice outputs −inf whatever its inputs: it passes no gradient
        dead = (self.output.data == -self.xp.inf).all(axis=self.axis, keepdims=True)
        return xp.where(dead, 0.0, grad_x)


def log_softmax(x: Tensor, axis: int = LAST_AXIS, *, dim: int | None = None) -> Tensor:
    """log(softmax(x)) along `axis` (or `dim`), computed stably in one step; an all −inf slice
    gives all −inf and zero gradient (see LogSoftmax), never NaN. Shape: that of x."""
    axis = axis_or_dim(axis, dim, "log_softmax")
    x = as_float(x)
    if x.ndim == 0:                          # one element: log softmax 0, gradient 0
        one_axis(axis, 0, "log_softmax")
        return reshape(LogSoftmax.apply(reshape(x, 1), axis=0), ())
    return LogSoftmax.apply(x, axis=normalize_axis(axis, x.ndim, "log_softmax")[0])


class Dropout(Function):
    """y = x ⊙ m / (1 − p), m ~ Bernoulli(1 − p) drawn once per call (inverted dropout).

    m has `noise_shape` (x's shape, or 1 on some axes): one draw is shared along each axis of
    size 1, e.g. (B, 1, E) for a (B, T, E) sequence keeps or drops a feature for all T steps.
    """

    def __init__(self, p: float, noise_shape: tuple | None = None):
        self.p, self.noise_shape = p, noise_shape

    def forward(self, x):
        backend = backend_of(x)
        shape = x.shape if self.noise_shape is None else self.noise_shape
        keep = backend.random("uniform", shape, x.dtype, _device_index(backend, x)) >= self.p
        scaled_mask = keep.astype(x.dtype) * (1.0 / (1.0 - self.p))
        self.save_for_backward(scaled_mask)
        return x * scaled_mask

    def backward(self, grad):
        (g,) = self.values(grad)
        (scaled_mask,) = self.saved_tensors
        # ∂y/∂x = m / (1 − p)   (m broadcast along its axes of size 1)
        return g * scaled_mask


def _device_index(backend, x):
    if not backend.multi_device:
        return None
    device = backend.device_of(x)
    return int(device.split(":")[1]) if ":" in device else None


def dropout(x: Tensor, p: float = 0.5, training: bool = True,
            noise_shape: tuple | None = None) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1 − p) when training;
    the identity when not training or p = 0. `noise_shape` (x's shape with 1 on some axes)
    shares one keep-or-drop draw along each axis of size 1 (locked or channel dropout)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if noise_shape is not None:
        noise_shape = tuple(int(n) for n in noise_shape)
        if len(noise_shape) != x.ndim or any(n not in (1, size) for n, size
                                              in zip(noise_shape, x.shape)):
            raise ValueError(f"dropout: noise_shape {noise_shape} must have x's shape "
                             f"{tuple(x.shape)} with 1 on the axes that share a draw")
        if noise_shape == tuple(x.shape):
            noise_shape = None
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    return Dropout.apply(x, p=p, noise_shape=noise_shape)
