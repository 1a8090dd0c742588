"""Convolution and pooling over one axis, in PyTorch's layout: input (N, C, L) or unbatched
(C, L). The functions conv1d, max_pool1d, avg_pool1d and adaptive_avg_pool1d, and their
modules Conv1d, MaxPool1d, AvgPool1d and AdaptiveAvgPool1d.

Each of the first three is one primitive that reads its input through K strided slices, one
per kernel tap: with stride s and dilation d, tap k of output position l reads padded position
l·s + k·d. Convolution stacks the taps into windows (N, C, K, L_out) and contracts them with
the weight in one matmul (im2col); pooling takes the maximum or the mean over the taps. Every
backward adds each tap's gradient back into the strided slice it came from (col2im), one slice
per tap. Under create_graph, the output is rebuilt from the same code on Tensors and
differentiated (FusedFunction.recorded_gradients), so higher derivatives are exact.

Output length: L_out = ⌊(L + p_left + p_right − d·(K − 1) − 1) / s⌋ + 1.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg

from . import init
from ._checks import check_flag, check_size
from .layer_functions import pad
from .module import Module, Parameter

Tensor = mg.Tensor


# ---------------------------------------------------------------------------------------------
# reading windows through taps, and its adjoint

def _out_length(padded: int, kernel_size: int, stride: int, dilation: int) -> int:
    """Windows of K taps, d apart, that fit into `padded` positions, one every s."""
    return (padded - dilation * (kernel_size - 1) - 1) // stride + 1


def _padded(ops, x, padding: tuple[int, int], value: float):
    """x (..., L) with `value` added before and after the last axis: (..., p_l + L + p_r).
    `ops` is the array module (arrays) or minigrad (Tensors): numpy.pad's signature."""
    left, right = padding
    if not (left or right):
        return x
    widths = ((0, 0),) * (x.ndim - 1) + ((left, right),)
    return ops.pad(x, widths, constant_values=value)


def _taps(x, kernel_size: int, stride: int, dilation: int) -> list:
    """The K strided slices of padded x (..., Lp), each (..., L_out): tap k holds
    x[..., l·s + k·d] for l = 0 … L_out − 1. Arrays or Tensors alike."""
    length = _out_length(x.shape[-1], kernel_size, stride, dilation)
    span = stride * (length - 1) + 1
    return [x[..., k * dilation:k * dilation + span:stride] for k in range(kernel_size)]


def _stack(ops, parts: list, axis: int):
    """ops.stack(parts, axis=axis) for Tensors; arrays are copied into one buffer part by
    part, which for strided slices takes about half the time of NumPy's stack."""
    if ops is mg:
        return mg.stack(parts, axis=axis)
    shape = parts[0].shape[:axis] + (len(parts),) + parts[0].shape[axis:]
    out = ops.empty(shape, dtype=parts[0].dtype)
    for k, part in enumerate(parts):
        out[(slice(None),) * axis + (k,)] = part
    return out


def _add_taps(xp, parts: list, padding: tuple[int, int], length: int, stride: int,
              dilation: int):
    """The adjoint of padding then `_taps`: each tap's (..., L_out) gradient added back at the
    positions it read, the padding cropped. Returns (..., length)."""
    left, right = padding
    span = stride * (parts[0].shape[-1] - 1) + 1
    out = xp.zeros(parts[0].shape[:-1] + (left + length + right,), dtype=parts[0].dtype)
    for k, part in enumerate(parts):
        # positions within one tap are distinct, so += adds each element once
        out[..., k * dilation:k * dilation + span:stride] += part
    return out[..., left:left + length]


# ---------------------------------------------------------------------------------------------
# conv1d

def _correlate(ops, x, weight, bias, stride, padding, dilation, groups):
    """y = b + W ⋆ x on arrays (ops: the array module) or on Tensors (ops: minigrad): the
    forward, and the rebuild that create_graph differentiates.

    x (N, C_in, L), weight (C_out, C_in/G, K), bias (C_out,) or None -> (N, C_out, L_out).
    """
    n, c_in, _ = x.shape
    c_out, c_group, k = weight.shape
    windows = _stack(ops, _taps(_padded(ops, x, padding, 0), k, stride, dilation),
                     axis=2)                                 # (N, C_in, K, L_out)
    length = windows.shape[-1]
    # channels of group g are g·C_in/G … (g + 1)·C_in/G − 1, in and out alike
    windows = windows.reshape(n, groups, c_group * k, length)       # (N, G, C_in/G·K, L_out)
    w = weight.reshape(groups, c_out // groups, c_group * k)        # (G, C_out/G, C_in/G·K)
    y = (w @ windows).reshape(n, c_out, length)                     # (N, C_out, L_out)
    return y if bias is None else y + bias.reshape(c_out, 1)


class Correlate1d(mg.FusedFunction):
    """y[n, o, l] = b[o] + Σ_c Σ_k W[o, c, k] · x̃[n, g·C_in/G + c, l·s + k·d], g = group of o,
    x̃ = x zero-padded by (p_left, p_right): conv1d's primitive (a cross-correlation, as
    every deep-learning library's "convolution").

    Inputs x (N, C_in, L), W (C_out, C_in/G, K), optionally b (C_out,). With X the windows
    (N, G, C_in/G·K, L_out) and ∂Y = ∂L/∂y as (N, G, C_out/G, L_out), per group:

        ∂L/∂W = Σ_n ∂Y Xᵀ,   ∂L/∂X = Wᵀ ∂Y (added back into x̃ tap by tap),   ∂L/∂b = Σ_{n,l} ∂Y
    """

    needs_output = False

    def __init__(self, stride: int, padding: tuple[int, int], dilation: int, groups: int):
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups

    def forward(self, x, weight, bias=None):
        """x (N, C_in, L), weight (C_out, C_in/G, K), bias (C_out,) or None: arrays. Returns
        (N, C_out, L_out)."""
        return _correlate(self.xp, x, weight, bias, self.stride, self.padding, self.dilation,
                          self.groups)

    def array_backward(self, grad):
        xp = self.xp
        x, weight = self.inputs[0].data, self.inputs[1].data
        needs = [t.requires_grad for t in self.inputs]
        n, c_in, length = x.shape
        c_out, c_group, k = weight.shape
        groups, out_length = self.groups, grad.shape[-1]
        g = grad.reshape(n, groups, c_out // groups, out_length)   # ∂Y (N, G, C_out/G, L_out)
        w = weight.reshape(groups, c_out // groups, c_group * k)    # (G, C_out/G, C_in/G·K)
        grad_x = grad_w = grad_b = None
        if needs[0]:
            # ∂L/∂X = Wᵀ ∂Y, then each tap's rows go back where the tap read them
            grad_windows = (w.swapaxes(-1, -2) @ g).reshape(n, c_in, k, out_length)
            grad_x = _add_taps(xp, [grad_windows[:, :, j] for j in range(k)], self.padding,
                               length, self.stride, self.dilation)
        if needs[1]:
            # ∂L/∂W = Σ_n ∂Y Xᵀ, the windows read again rather than kept from the forward
            taps = _taps(_padded(xp, x, self.padding, 0), k, self.stride, self.dilation)
            windows = _stack(xp, taps, axis=2).reshape(n, groups, c_group * k, out_length)
            grad_w = (g @ windows.swapaxes(-1, -2)).sum(axis=0).reshape(weight.shape)
        if len(self.inputs) == 3 and needs[2]:
            grad_b = grad.sum(axis=(0, 2))                          # ∂L/∂b = Σ_{n,l} ∂Y
        return (grad_x, grad_w, grad_b) if len(self.inputs) == 3 else (grad_x, grad_w)

    def recorded_backward(self, grad):
        def rebuild(x, weight, bias=None):
            return _correlate(mg, x, weight, bias, self.stride, self.padding, self.dilation,
                              self.groups)
        return self.recorded_gradients(rebuild, grad)


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """torch.nn.functional.conv1d: the cross-correlation of the input with each filter,

        y[n, o, l] = b[o] + Σ_c Σ_k W[o, c, k] · x[n, g·C_in/G + c, l·s + k·d − p_left]

    (g the group of output channel o; x is 0 outside 0 … L − 1).

    input: (N, C_in, L) or unbatched (C_in, L); weight: (C_out, C_in/groups, K); bias:
    (C_out,) or None. stride s, dilation d (ints, or PyTorch's 1-tuples); padding an int p
    (both sides), "valid" (0) or "same" (stride 1 only; output length L, the odd extra on the
    right: p_left = ⌊d(K − 1)/2⌋). Returns (N, C_out, L_out) or (C_out, L_out). Integer input
    is taken in the weight's dtype.
    """
    x, unbatched = _batched(input, weight, "conv1d")
    if not isinstance(weight, Tensor) or weight.ndim != 3:
        raise ValueError(f"conv1d: weight must be 3-D (C_out, C_in/groups, K), got shape "
                         f"{tuple(getattr(weight, 'shape', ()))}")
    if weight.dtype.kind != "f":
        raise TypeError(f"conv1d: weight must be floating, got dtype {weight.dtype}")
    if x.dtype.kind in "biu":
        x = x.astype(weight.dtype)
    stride = _single(stride, "conv1d", "stride")
    dilation = _single(dilation, "conv1d", "dilation")
    groups = check_size("conv1d", "groups", groups)
    c_out, c_group, k = weight.shape
    if k == 0:
        raise ValueError(f"conv1d: weight shape {tuple(weight.shape)} has kernel size 0")
    if c_out % groups:
        raise ValueError(f"conv1d: weight shape {tuple(weight.shape)} has {c_out} output "
                         f"channels, which groups={groups} does not divide")
    if x.shape[1] != c_group * groups:
        raise ValueError(f"conv1d: input shape {tuple(input.shape)} has {x.shape[1]} channels, "
                         f"but weight shape {tuple(weight.shape)} with groups={groups} expects "
                         f"{c_group * groups}")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"conv1d: bias shape {tuple(bias.shape)} must be (C_out,) = "
                         f"({c_out},) for weight shape {tuple(weight.shape)}")
    widths = _conv_padding(padding, k, stride, dilation, "conv1d")
    padded = x.shape[-1] + sum(widths)
    if padded < dilation * (k - 1) + 1:
        raise ValueError(f"conv1d: padded input length {padded} (input shape "
                         f"{tuple(input.shape)}, padding {widths}) is shorter than the kernel's "
                         f"span d·(K − 1) + 1 = {dilation * (k - 1) + 1} (weight shape "
                         f"{tuple(weight.shape)}, dilation {dilation})")
    inputs = (x, weight) if bias is None else (x, weight, bias)
    y = Correlate1d.apply(*inputs, stride=stride, padding=widths, dilation=dilation,
                          groups=groups)
    return y.reshape(y.shape[1:]) if unbatched else y


def _conv_padding(padding, kernel_size: int, stride: int, dilation: int,
                  op: str) -> tuple[int, int]:
    """PyTorch's conv padding (an int, a 1-tuple, "valid" or "same") as (left, right)."""
    if isinstance(padding, str):
        if padding == "valid":
            return (0, 0)
        if padding != "same":
            raise ValueError(f"{op}: padding must be an int, 'valid' or 'same', got "
                             f"{padding!r}")
        if stride != 1:
            raise ValueError(f"{op}: padding='same' is not supported with stride {stride} "
                             f"(as in PyTorch: only stride 1)")
        total = dilation * (kernel_size - 1)
        return (total // 2, total - total // 2)              # the odd one on the right
    p = _single(padding, op, "padding", minimum=0)
    return (p, p)


def _single(value, op: str, name: str, minimum: int = 1) -> int:
    """An option PyTorch takes as an int or a sequence of one int, as an int >= minimum."""
    if isinstance(value, (tuple, list)) and len(value) == 1:
        value = value[0]
    return check_size(op, name, value, minimum)


def _batched(input, like: Tensor | None, op: str) -> tuple[Tensor, bool]:
    """input (N, C, L) as it is, or unbatched (C, L) as (1, C, L); and whether it was
    unbatched."""
    if not isinstance(input, Tensor):
        device = like.device if isinstance(like, Tensor) else "cpu"
        input = mg.tensor(input, device=device)
    if input.ndim not in (2, 3):
        raise ValueError(f"{op}: input must be (N, C, L) or unbatched (C, L), got shape "
                         f"{tuple(input.shape)}")
    if input.ndim == 2:
        return input.reshape(1, *input.shape), True
    return input, False


# ---------------------------------------------------------------------------------------------
# pooling

def _pool_geometry(x: Tensor, kernel_size, stride, padding, dilation, ceil_mode,
                   op: str) -> tuple[int, int, tuple[int, int], int]:
    """(K, s, (p_left, p_right), d) of a pooling of x (N, C, L), PyTorch's output length:
    ⌊(L + 2p − d(K − 1) − 1) / s⌋ + 1, rounded up with ceil_mode, except that the last window
    must start inside the input or the left padding. p_right also covers the positions past
    L + p that a last window of ceil_mode reaches (they count as absent)."""
    k = _single(kernel_size, op, "kernel_size")
    s = k if stride is None else _single(stride, op, "stride")
    p = _single(padding, op, "padding", minimum=0)
    d = _single(dilation, op, "dilation")
    check_flag(op, "ceil_mode", ceil_mode)
    if p > k // 2:
        raise ValueError(f"{op}: padding should be at most half of kernel size, got "
                         f"padding={p} and kernel_size={k}")
    length = x.shape[-1]
    span = d * (k - 1) + 1
    out_length = (length + 2 * p - span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out_length - 1) * s >= length + p:
        out_length -= 1
    if out_length < 1:
        raise ValueError(f"{op}: input shape {tuple(x.shape)} with kernel_size={k}, "
                         f"stride={s}, padding={p}, dilation={d} gives no output position "
                         f"(the padded length {length + 2 * p} is shorter than the window's "
                         f"span {span})")
    right = max(0, (out_length - 1) * s + span - length - p)
    return k, s, (p, right), d


def _pool_input(input, op: str) -> tuple[Tensor, bool]:
    x, unbatched = _batched(input, None, op)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: input must be floating, got dtype {x.dtype}")
    return x, unbatched


def _first_real_tap(kernel_size: int, stride: int, left: int, dilation: int,
                    out_length: int) -> np.ndarray:
    """For each window, the first tap that reads the input rather than the left padding (at
    most K − 1)."""
    starts = np.arange(out_length) * stride                  # padded position of tap 0
    first = -((starts - left) // dilation)                   # ⌈(left − start) / d⌉
    return np.clip(first, 0, kernel_size - 1)


def _scan_maximum(ops, taps: list, first_real):
    """Each window's maximum and the tap it is at, (..., L_out) each, by PyTorch's scan over the
    taps: a tap replaces the best so far when it is larger or NaN, so the first maximum wins,
    or the last NaN. A window whose input elements are all −inf (tied with the padding) picks
    the first of them, never the padding. Arrays or Tensors alike."""
    maxima, chosen = taps[0], ops.zeros_like(taps[0], dtype=np.int64)
    for k, tap in enumerate(taps[1:], start=1):
        better = (tap > maxima) | ops.isnan(tap)
        maxima = ops.where(better, tap, maxima)
        chosen = ops.where(better, k, chosen)
    return maxima, ops.maximum(chosen, first_real)


def _max_taps(ops, x, kernel_size: int, stride: int, padding: tuple[int, int],
              dilation: int) -> list:
    """The taps (each (..., L_out)) of x padded with −inf; arrays or Tensors alike."""
    return _taps(_padded(ops, x, padding, -math.inf), kernel_size, stride, dilation)


class WindowMax1d(mg.FusedFunction):
    """y[n, c, l] = max_k x̃[n, c, l·s + k·d], x̃ = x padded with −inf: max_pool1d's primitive.

    The gradient goes to one element per window, the one PyTorch returns as the index: the
    first maximum (a NaN wins; see `_scan_maximum`):  ∂L/∂x̃[l·s + k*·d] += ∂L/∂y[l].
    """

    needs_output = False

    def __init__(self, kernel_size: int, stride: int, padding: tuple[int, int], dilation: int):
        self.kernel_size, self.stride, self.padding, self.dilation = (kernel_size, stride,
                                                                      padding, dilation)

    def forward(self, x):
        """x (N, C, L): an array. Returns (N, C, L_out)."""
        xp = self.xp
        taps = _max_taps(xp, x, self.kernel_size, self.stride, self.padding, self.dilation)
        first_real = _first_real_tap(self.kernel_size, self.stride, self.padding[0],
                                     self.dilation, taps[0].shape[-1])
        maxima, chosen = _scan_maximum(xp, taps, xp.asarray(first_real))
        self.save_for_backward(chosen)                       # (N, C, L_out), the tap k*
        return maxima if self.kernel_size > 1 else maxima.copy()    # K = 1: a view of x

    def array_backward(self, grad):
        (chosen,) = self.saved_tensors
        xp = self.xp
        parts = [xp.where(chosen == k, grad, 0) for k in range(self.kernel_size)]
        return _add_taps(xp, parts, self.padding, self.inputs[0].shape[-1], self.stride,
                         self.dilation)

    def recorded_backward(self, grad):
        (chosen,) = self.saved_tensors

        def rebuild(x):                                      # the chosen element of each window
            windows = mg.stack(_max_taps(mg, x, self.kernel_size, self.stride, self.padding,
                                         self.dilation), axis=-1)    # (N, C, L_out, K)
            return mg.take_along_axis(windows, chosen[..., None], axis=-1)[..., 0]
        return self.recorded_gradients(rebuild, grad)


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """torch.nn.functional.max_pool1d: y[n, c, l] = max_k x[n, c, l·s + k·d − p], the input
    padded with −inf.

    input: (N, C, L) or (C, L), floating. kernel_size K, stride s (K when None), padding p
    (at most K // 2), dilation d: ints or 1-tuples. ceil_mode rounds the output length up (a
    last, partial window, as PyTorch). Returns y (N, C, L_out) or (C, L_out), and with
    return_indices also the int64 positions in the input that each maximum came from.

    Ties: the gradient goes to one element per window, the first maximum (the index returned),
    as in PyTorch; a window holding NaN gives NaN and its last NaN's index.
    """
    x, unbatched = _pool_input(input, "max_pool1d")
    check_flag("max_pool1d", "return_indices", return_indices)
    k, s, widths, d = _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode,
                                     "max_pool1d")
    y = WindowMax1d.apply(x, kernel_size=k, stride=s, padding=widths, dilation=d)
    if not return_indices:
        return y.reshape(y.shape[1:]) if unbatched else y
    indices = _max_indices(x.detach(), k, s, widths, d)
    if unbatched:
        return y.reshape(y.shape[1:]), indices.reshape(indices.shape[1:])
    return y, indices


def _max_indices(x: Tensor, k: int, s: int, widths: tuple[int, int], d: int) -> Tensor:
    """The input position of each window's chosen maximum, int64 (N, C, L_out), from
    minigrad's operations (so that a compiled step computes it again from each input)."""
    with mg.no_grad():
        taps = _max_taps(mg, x, k, s, widths, d)
        out_length = taps[0].shape[-1]
        first_real = _first_real_tap(k, s, widths[0], d, out_length)
        _, chosen = _scan_maximum(mg, taps, mg.tensor(first_real, device=x.device))
        starts = np.arange(out_length) * s - widths[0]       # input position of tap 0
        return chosen * d + mg.tensor(starts, device=x.device)


def _mean_of_taps(ops, x, kernel_size, stride, padding, divisor):
    """Σ_k x̃[l·s + k] / divisor[l], x̃ = x zero-padded; arrays or Tensors alike."""
    taps = _taps(_padded(ops, x, padding, 0), kernel_size, stride, 1)
    total = taps[0]
    for tap in taps[1:]:                                     # in window order, as PyTorch
        total = total + tap
    return total / divisor


def _avg_divisor(length: int, kernel_size: int, stride: int, left: int, out_length: int,
                 count_include_pad: bool) -> np.ndarray:
    """The count each window's sum is divided by (PyTorch's): the window clipped to the
    padded input, or, without count_include_pad, to the input itself."""
    starts = np.arange(out_length) * stride - left           # input position of tap 0
    ends = np.minimum(starts + kernel_size, length + left)
    if count_include_pad:
        return ends - starts
    return np.minimum(ends, length) - np.maximum(starts, 0)


class WindowMean1d(mg.FusedFunction):
    """y[n, c, l] = Σ_k x̃[n, c, l·s + k] / D[l], x̃ = x zero-padded, D[l] the window's count
    (see `_avg_divisor`): avg_pool1d's primitive.

    ∂L/∂x̃[l·s + k] += ∂L/∂y[l] / D[l] for every tap k.
    """

    needs_output = False

    def __init__(self, kernel_size: int, stride: int, padding: tuple[int, int],
                 count_include_pad: bool):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad = count_include_pad

    def forward(self, x):
        """x (N, C, L): an array. Returns (N, C, L_out)."""
        xp = self.xp
        padded = x.shape[-1] + sum(self.padding)
        out_length = _out_length(padded, self.kernel_size, self.stride, 1)
        divisor = xp.asarray(_avg_divisor(x.shape[-1], self.kernel_size, self.stride,
                                          self.padding[0], out_length,
                                          self.count_include_pad), dtype=x.dtype)
        self.save_for_backward(divisor)
        return _mean_of_taps(xp, x, self.kernel_size, self.stride, self.padding, divisor)

    def array_backward(self, grad):
        (divisor,) = self.saved_tensors
        part = grad / divisor                                # every tap gets ∂L/∂y / D
        return _add_taps(self.xp, [part] * self.kernel_size, self.padding,
                         self.inputs[0].shape[-1], self.stride, 1)

    def recorded_backward(self, grad):
        divisor = mg.Tensor(self.saved_tensors[0])

        def rebuild(x):
            return _mean_of_taps(mg, x, self.kernel_size, self.stride, self.padding, divisor)
        return self.recorded_gradients(rebuild, grad)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """torch.nn.functional.avg_pool1d: y[n, c, l] = Σ_k x[n, c, l·s + k − p] / D[l], the input
    padded with zeros.

    input: (N, C, L) or (C, L), floating. kernel_size K, stride s (K when None), padding p (at
    most K // 2): ints or 1-tuples. D[l] is K, except for a last window of ceil_mode that
    reaches past the padding (its positions there are not counted) and, with
    count_include_pad=False, windows that overlap the padding (only input elements counted).
    Returns (N, C, L_out) or (C, L_out).
    """
    x, unbatched = _pool_input(input, "avg_pool1d")
    include = check_flag("avg_pool1d", "count_include_pad", count_include_pad)
    k, s, widths, _ = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode,
                                     "avg_pool1d")
    y = WindowMean1d.apply(x, kernel_size=k, stride=s, padding=widths, count_include_pad=include)
    return y.reshape(y.shape[1:]) if unbatched else y


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """torch.nn.functional.adaptive_avg_pool1d: output position i averages the input over
    ⌊i·L/M⌋ … ⌈(i + 1)·L/M⌉ − 1, for M = output_size (windows may overlap).

    input: (N, C, L) or (C, L), floating, L ≥ 1. Returns (N, C, M) or (C, M). A sum through a
    0/1 matrix (L, M), then a division by each window's count (the gradient is matmul's).
    """
    x, unbatched = _pool_input(input, "adaptive_avg_pool1d")
    m = _single(output_size, "adaptive_avg_pool1d", "output_size")
    length = x.shape[-1]
    if length == 0:
        raise ValueError(f"adaptive_avg_pool1d: input shape {tuple(input.shape)} has no "
                         f"position to average")
    i = np.arange(m)
    starts, ends = (i * length) // m, -((-(i + 1) * length) // m)      # ⌊iL/M⌋, ⌈(i+1)L/M⌉
    position = np.arange(length)[:, None]
    members = (position >= starts) & (position < ends)                  # (L, M)
    dtype, device = x.dtype, x.device
    summed = mg.matmul(x, mg.tensor(members.astype(dtype), device=device))   # (N, C, M)
    y = summed / mg.tensor((ends - starts).astype(dtype), device=device)
    return y.reshape(y.shape[1:]) if unbatched else y


# ---------------------------------------------------------------------------------------------
# modules

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class Conv1d(Module):
    """y[n, o, l] = b[o] + Σ_c Σ_k W[o, c, k] · x[n, g·C_in/G + c, l·s + k·d − p], as
    torch.nn.Conv1d (g the group of output channel o).

    weight W: (C_out, C_in/groups, K), bias b: (C_out,), both U(−1/√fan_in, 1/√fan_in) with
    fan_in = C_in/groups · K, as in PyTorch. padding: an int, "valid" or "same" (stride 1);
    padding_mode "zeros", or "reflect", "replicate", "circular" (the input is padded so first,
    as PyTorch does). forward: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out) or
    (C_out, L_out). kernel_size, stride, padding and dilation are kept as 1-tuples, as in
    PyTorch.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device="cpu", dtype=None):
        super().__init__()
        self.in_channels = check_size("Conv1d", "in_channels", in_channels)
        self.out_channels = check_size("Conv1d", "out_channels", out_channels)
        self.kernel_size = (_single(kernel_size, "Conv1d", "kernel_size"),)
        self.stride = (_single(stride, "Conv1d", "stride"),)
        self.dilation = (_single(dilation, "Conv1d", "dilation"),)
        self.groups = check_size("Conv1d", "groups", groups)
        for name, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
            if channels % self.groups:
                raise ValueError(f"Conv1d: {name}={channels} must be divisible by "
                                 f"groups={self.groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"Conv1d: padding_mode must be one of "
                             f"{', '.join(map(repr, _PADDING_MODES))}, got {padding_mode!r}")
        self.padding_mode = padding_mode
        widths = _conv_padding(padding, self.kernel_size[0], self.stride[0], self.dilation[0],
                               "Conv1d")
        self.padding = padding if isinstance(padding, str) else (widths[0],)
        self._widths = widths                                # (left, right) from padding
        self.weight = Parameter(mg.zeros((out_channels, in_channels // groups,
                                          self.kernel_size[0]), dtype=dtype, device=device))
        if check_flag("Conv1d", "bias", bias):
            self.bias = Parameter(mg.zeros(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias again from U(−1/√fan_in, 1/√fan_in) (minigrad's RNG),
        fan_in = C_in/groups · K: PyTorch's default."""
        init.fan_in_uniform_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, C_in, L) or (C_in, L). Returns (N, C_out, L_out) or (C_out, L_out)."""
        if self.padding_mode == "zeros":
            return conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                          self.groups)
        x = pad(x, self._widths, mode=self.padding_mode)     # (…, p_left + L + p_right)
        return conv1d(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,):
            s += f", padding={self.padding}"
        if self.dilation != (1,):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class MaxPool1d(Module):
    """y[n, c, l] = max_k x[n, c, l·s + k·d − p] (−inf padding), as torch.nn.MaxPool1d; see
    `max_pool1d`. forward: (N, C, L) or (C, L) -> (…, L_out), with the int64 indices too
    when return_indices."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices = check_flag("MaxPool1d", "return_indices", return_indices)
        self.ceil_mode = check_flag("MaxPool1d", "ceil_mode", ceil_mode)
        for name in ("kernel_size", "stride", "dilation"):
            _single(getattr(self, name), "MaxPool1d", name)
        _single(padding, "MaxPool1d", "padding", minimum=0)

    def forward(self, x: Tensor):
        """x: (N, C, L) or (C, L). Returns the maxima (…, L_out), or (maxima, indices)."""
        return max_pool1d(x, self.kernel_size, self.stride, self.padding, self.dilation,
                          self.ceil_mode, self.return_indices)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool1d(Module):
    """y[n, c, l] = Σ_k x[n, c, l·s + k − p] / D[l] (zero padding), as torch.nn.AvgPool1d;
    see `avg_pool1d`. kernel_size, stride and padding are kept as 1-tuples, as in PyTorch.
    forward: (N, C, L) or (C, L) -> (…, L_out)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = (_single(kernel_size, "AvgPool1d", "kernel_size"),)
        self.stride = self.kernel_size if stride is None else \
            (_single(stride, "AvgPool1d", "stride"),)
        self.padding = (_single(padding, "AvgPool1d", "padding", minimum=0),)
        self.ceil_mode = check_flag("AvgPool1d", "ceil_mode", ceil_mode)
        self.count_include_pad = check_flag("AvgPool1d", "count_include_pad",
                                            count_include_pad)

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, C, L) or (C, L). Returns (…, L_out)."""
        return avg_pool1d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(Module):
    """The mean over M windows that tile the length, as torch.nn.AdaptiveAvgPool1d; see
    `adaptive_avg_pool1d`. forward: (N, C, L) or (C, L) -> (…, M)."""

    def __init__(self, output_size):
        super().__init__()
        _single(output_size, "AdaptiveAvgPool1d", "output_size")
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, C, L) or (C, L). Returns (…, output_size)."""
        return adaptive_avg_pool1d(x, self.output_size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


__all__ = ["AdaptiveAvgPool1d", "AvgPool1d", "Conv1d", "Correlate1d", "MaxPool1d",
           "WindowMax1d", "WindowMean1d", "adaptive_avg_pool1d", "avg_pool1d", "conv1d",
           "max_pool1d"]
