"""Cumulative reductions along an axis: cumsum, cumprod, cummax, cummin, logcumsumexp.

Each output y_j reads x_0 … x_j, so each gradient is a sum over the outputs at or after the
input's position: a cumulative sum taken from the end of the axis. The running maximum and
log-sum-exp are computed in log₂(n) whole-array steps (a doubling scan), which needs nothing
beyond elementwise operations from the array module.
"""

from __future__ import annotations

import contextlib
import warnings

from ..autograd import Function
from ..backend import backend_of
from ..tensor import Tensor
from .common import as_float, axis_or_dim, one_axis
from .gather import take_along_axis
from .shape import astype, reshape


def _along(axis: int, part) -> tuple:
    """The index of `part` (an int or a slice) along `axis`, everything on the others."""
    return (slice(None),) * axis + (part,)


def _reversed(axis: int) -> tuple:
    return _along(axis, slice(None, None, -1))


def _prepare(x: Tensor, axis, dim, dtype, op: str):
    """(x, axis) for a scan: NumPy's axis=None scans the flattened tensor; a 0-d tensor scans
    its one element (PyTorch's rule for dim 0 or -1)."""
    axis = axis_or_dim(axis, dim, op)
    if dtype is not None:
        x = astype(x, dtype)
    if axis is None:
        return reshape(x, -1), 0, None
    axis = one_axis(axis, x.ndim, op)
    if x.ndim == 0:
        return reshape(x, 1), 0, ()
    return x, axis, None


class CumSum(Function):
    """y_j = Σ_{i ≤ j} x_i along `axis`."""

    needs_output = False

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return self.xp.cumsum(x, axis=self.axis)

    def backward(self, grad):
        (g,) = self.values(grad)
        back = _reversed(self.axis)
        # ∂y_j/∂x_i = 1 for j ≥ i: ∂L/∂x_i = Σ_{j ≥ i} g_j, a cumulative sum from the end
        return self.ops.cumsum(g[back], axis=self.axis)[back]


def cumsum(x: Tensor, axis: int | None = None, *, dim: int | None = None, dtype=None) -> Tensor:
    """y_j = x_0 + … + x_j along `axis` (or `dim`; the flattened tensor when None, as NumPy),
    accumulated in `dtype` when given. Integers stay integers (int64, as NumPy and PyTorch)."""
    x, axis, shape = _prepare(x, axis, dim, dtype, "cumsum")
    y = CumSum.apply(x, axis=axis)
    return y if shape is None else reshape(y, shape)


class CumProd(Function):
    """y_j = Π_{i ≤ j} x_i along `axis`."""

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return self.xp.cumprod(x, axis=self.axis)

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs, self.output)
        axis = self.axis
        if not (self.inputs[0].data == 0).any():
            back = _reversed(axis)
            # ∂y_j/∂x_i = y_j / x_i for j ≥ i: ∂L/∂x_i = (Σ_{j ≥ i} g_j y_j) / x_i
            return self.ops.cumsum((g * y)[back], axis=axis)[back] / x
        # with zeros, y_j / x_i is 0/0: use ∂y_j/∂x_i = Π_{k < i} x_k · Π_{i < k ≤ j} x_k, so
        # ∂L/∂x_i = P_i · S_i with P_i = Π_{k < i} x_k and S_i = g_i + x_{i+1} S_{i+1}
        n = x.shape[axis]
        at = [_along(axis, i) for i in range(n)]
        later = [None] * n
        later[n - 1] = g[at[n - 1]]
        for i in range(n - 2, -1, -1):
            later[i] = g[at[i]] + x[at[i + 1]] * later[i + 1]
        parts, before = [later[0]], None
        for i in range(1, n):
            before = x[at[i - 1]] if before is None else before * x[at[i - 1]]
            parts.append(before * later[i])
        return self.ops.stack(parts, axis=axis)


def cumprod(x: Tensor, axis: int | None = None, *, dim: int | None = None,
            dtype=None) -> Tensor:
    """y_j = x_0 · … · x_j along `axis` (or `dim`; the flattened tensor when None). The
    gradient is exact also where x holds zeros (Σ_{j ≥ i} g_j Π_{k ≤ j, k ≠ i} x_k)."""
    x, axis, shape = _prepare(x, axis, dim, dtype, "cumprod")
    y = CumProd.apply(x, axis=axis)
    return y if shape is None else reshape(y, shape)


@contextlib.contextmanager
def _silenced():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _doubling_scan(xp, x, axis: int, combine):
    """y_j = x_0 ∘ x_1 ∘ … ∘ x_j along axis for an associative ∘, in ⌈log₂ n⌉ steps: after the
    step with shift s, y_j combines the 2s elements up to j."""
    y = x.copy()
    n, shift = x.shape[axis], 1
    while shift < n:
        head, tail = _along(axis, slice(shift, None)), _along(axis, slice(None, n - shift))
        step = combine(y[head], y[tail])
        y = y.copy()
        y[head] = step
        shift *= 2
    return y


def _cumulative_extreme(x: Tensor, axis, dim, op: str, pick) -> tuple[Tensor, Tensor]:
    x, axis, shape = _prepare(x, axis, dim, None, op)
    if x.data.size == 0:
        idx = x.xp.zeros(x.shape, dtype="int64")
    else:
        xp, data = x.xp, x.data
        best = _doubling_scan(xp, data, axis, pick)             # the running extreme
        steps = xp.arange(data.shape[axis]).reshape(
            tuple(n if i == axis else 1 for i, n in enumerate(data.shape)))
        # the last position at or before j holding the running extreme (PyTorch's ties)
        where_best = xp.where(data == best, steps, 0)
        idx = _doubling_scan(xp, where_best, axis, xp.maximum).astype("int64")
    values = take_along_axis(x, idx, axis)
    index = Tensor._from_array(idx)
    if shape is not None:
        return reshape(values, shape), reshape(index, shape)
    return values, index


def cummax(x: Tensor, axis: int | None = None, *, dim: int | None = None):
    """(values, indices): the running maximum along `axis` (or `dim`) and where it was found
    (int64; among equal maxima the latest, as PyTorch). The gradient of each value goes to
    that position."""
    return _cumulative_extreme(x, axis, dim, "cummax", x.xp.maximum)


def cummin(x: Tensor, axis: int | None = None, *, dim: int | None = None):
    """(values, indices): the running minimum along `axis` (or `dim`), as `cummax`."""
    return _cumulative_extreme(x, axis, dim, "cummin", x.xp.minimum)


class LogCumSumExp(Function):
    """y_j = log Σ_{i ≤ j} e^{x_i} along `axis`, without overflow."""

    needs_output = False

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return _doubling_scan(self.xp, x, self.axis, self.xp.logaddexp)

    def backward(self, grad):
        g, x = self.values(grad, *self.inputs)
        # ∂y_j/∂x_i = e^{x_i − y_j} ≤ 1 for j ≥ i: ∂L/∂x_i = Σ_{j ≥ i} g_j e^{x_i − y_j}, the
        # softmax of the prefix x_0 … x_j at i. It is computed from differences to the running
        # maximum m_j, never from the rounded y_j (at x = (1e20, 1e20) e^{x_0 − y_1} would be
        # 1, not ½). The +inf elements of a prefix share it (softmax's limit); an all −inf
        # prefix (y_j = −inf) passes no gradient, never NaN (PyTorch gives NaN).
        data, axis = self.inputs[0].data, self.axis
        with _silenced():                      # inf − inf where equal: replaced by 0 below
            if self.ops is self.xp:
                return _logcumsumexp_gradient(self.xp, g, data, axis)
            return _logcumsumexp_recorded(self.ops, g, x, data, axis)


def _below(xp, u, v):
    """u − v for u ≤ v, and 0 where they are equal (two equal infinities, not NaN)."""
    return xp.where(u == v, 0.0, u - v)


def _logcumsumexp_gradient(xp, g, x, axis: int):
    """Σ_{j ≥ i} g_j e^{x_i − y_j} on arrays, in O(n log n) whole-array steps. With the running
    maximum m and s_j = Σ_{k ≤ j} e^{x_k − m_j} ∈ [1, j + 1] (so e^{y_j} = e^{m_j} s_j):
        s_j = e^{m_{j−1} − m_j} s_{j−1} + e^{x_j − m_j}
        S_i = g_i / s_i + e^{m_i − m_{i+1}} S_{i+1},   ∂L/∂x_i = e^{x_i − m_i} S_i,
    two linear recurrences whose factors are at most 1, so nothing overflows."""
    m = _doubling_scan(xp, x, axis, xp.maximum)
    n = x.shape[axis]
    rest = _along(axis, slice(1, None))
    head = _along(axis, slice(None, n - 1))
    step = xp.ones(x.shape, dtype=x.dtype)             # e^{m_{j−1} − m_j}, 1 at j = 0
    step[rest] = xp.exp(_below(xp, m[head], m[rest]))
    own = xp.exp(_below(xp, x, m))                     # e^{x_j − m_j}
    total = _affine_scan(xp, step, own, axis)          # s_j
    back = _reversed(axis)
    later = xp.ones(x.shape, dtype=x.dtype)            # e^{m_i − m_{i+1}}, 1 at i = n − 1
    later[head] = step[rest]
    tail = _affine_scan(xp, later[back], (g / total)[back], axis)[back]      # S_i
    return xp.where(m == -xp.inf, 0.0, own * tail)     # y_i = −inf: none


def _logcumsumexp_recorded(ops, g, x, data, axis: int):
    """The same gradient as a recorded graph, differentiable again: the (…, n, n) matrix of
    prefix softmaxes W_ij = e^{x_i − y_j} (i ≤ j), shifted by the running maximum m_j (a
    constant, which softmax ignores), times g."""
    xp = backend_of(data).xp
    last = data.ndim - 1
    m = _doubling_scan(xp, data, axis, xp.maximum).swapaxes(axis, last)[..., None, :]
    xs, gs = x.swapaxes(axis, last), g.swapaxes(axis, last)
    n = data.shape[axis]
    upper = xp.arange(n)[:, None] <= xp.arange(n)[None, :]          # i ≤ j
    x_ij = data.swapaxes(axis, last)[..., :, None]
    top = upper & (x_ij == m) & ~xp.isfinite(m)      # an infinite maximum: inf − inf → 0
    shifted = ops.where(top, 0.0, ops.where(upper, xs[..., :, None] - m, -float("inf")))
    e = ops.exp(shifted)                                            # (…, n_i, n_j)
    weights = e / e.sum(axis=-2, keepdims=True)
    weights = ops.where(m == -xp.inf, 0.0, weights)                 # all −inf prefixes
    return (weights @ gs[..., :, None])[..., 0].swapaxes(axis, last)


def _affine_scan(xp, a, b, axis: int):
    """s_j = a_j s_{j−1} + b_j along axis (s_{−1} = 0), in ⌈log₂ n⌉ whole-array steps: after
    the step with shift k, (a_j, b_j) is the composition of the 2k steps ending at j."""
    a, b = a.copy(), b.copy()
    n, shift = a.shape[axis], 1
    while shift < n:
        head, tail = _along(axis, slice(shift, None)), _along(axis, slice(None, n - shift))
        b_new = a[head] * b[tail] + b[head]
        a_new = a[head] * a[tail]
        a, b = a.copy(), b.copy()
        a[head], b[head] = a_new, b_new
        shift *= 2
    return b


def logcumsumexp(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """y_j = log(e^{x_0} + … + e^{x_j}) along `axis` (or `dim`; the flattened tensor when None),
    computed with logaddexp so large inputs neither overflow nor lose small ones. Where every
    input so far is −inf, y is −inf and passes zero gradient (PyTorch gives NaN)."""
    x, axis, shape = _prepare(as_float(x), axis, dim, None, "logcumsumexp")
    y = LogCumSumExp.apply(x, axis=axis)
    return y if shape is None else reshape(y, shape)
