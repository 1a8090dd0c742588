"""Convolution and pooling over one, two or three spatial axes, in PyTorch's layout: input
(N, C, L) or unbatched (C, L), (N, C, H, W) or (C, H, W), and (N, C, D, H, W) or (C, D, H, W).
The functions conv1d/2d/3d, max_pool1d/2d/3d, avg_pool1d/2d/3d and adaptive_avg_pool1d/2d/3d,
and their modules Conv1d/2d/3d, MaxPool1d/2d/3d, AvgPool1d/2d/3d and AdaptiveAvgPool1d/2d/3d.

Convolution, max pooling and average pooling are one primitive each (Correlate, WindowMax,
WindowMean), over any number D of spatial axes. Each reads its input through one strided slice
per kernel tap: with strides s and dilations d, tap k = (k_1, …, k_D) of output position
i = (i_1, …, i_D) reads padded position i·s + k·d, axis by axis (K taps over one axis, kH·kW
over two, in row-major order). Convolution stacks the taps into windows (N, C, ΠK, *S_out) and
contracts them with the weight in one matmul (im2col); pooling takes the maximum or the mean
over the taps. Every backward adds each tap's gradient back into the strided slice it came
from (col2im), one slice per tap. Under create_graph, the output is rebuilt from the same code
on Tensors and differentiated (FusedFunction.recorded_gradients), so higher derivatives are
exact.

Output size, per axis: S_out = ⌊(S + p_left + p_right − d·(K − 1) − 1) / s⌋ + 1.
"""

from __future__ import annotations

import itertools
import math
import numbers

import numpy as np

import minigrad as mg

from . import init
from ._checks import check_flag, check_size
from .layer_functions import pad
from .module import Module, Parameter

Tensor = mg.Tensor

# the spatial axes' letters and names, by their number D
_LETTERS = {1: "L", 2: "H, W", 3: "D, H, W"}
_KERNEL_LETTERS = {1: "K", 2: "kH, kW", 3: "kD, kH, kW"}
_AXIS_NAMES = {1: ("length",), 2: ("height", "width"), 3: ("depth", "height", "width")}


# ---------------------------------------------------------------------------------------------
# reading windows through taps, and its adjoint

def _out_length(padded: int, kernel_size: int, stride: int, dilation: int) -> int:
    """Windows of K taps, d apart, that fit into `padded` positions, one every s (one axis)."""
    return (padded - dilation * (kernel_size - 1) - 1) // stride + 1


def _padded(ops, x, padding: tuple, value: float):
    """x (..., *S) with `value` added before and after each of its last D axes, padding being
    D pairs (before, after): (..., *(p_left + S + p_right)). `ops` is the array module
    (arrays) or minigrad (Tensors): numpy.pad's signature."""
    if not any(left or right for left, right in padding):
        return x
    widths = ((0, 0),) * (x.ndim - len(padding)) + tuple(padding)
    return ops.pad(x, widths, constant_values=value)


def _tap_slices(kernel_size: tuple, stride: tuple, dilation: tuple, out_shape: tuple) -> list:
    """One index per tap k (row-major over the D axes): axis a read from k_a·d_a, every s_a,
    S_out[a] times."""
    spans = [s * (m - 1) + 1 for s, m in zip(stride, out_shape)]
    return [(Ellipsis,) + tuple(slice(k * d, k * d + span, s)
                                for k, d, span, s in zip(tap, dilation, spans, stride))
            for tap in itertools.product(*(range(k) for k in kernel_size))]


def _taps(x, kernel_size: tuple, stride: tuple, dilation: tuple) -> list:
    """The ΠK strided slices of padded x (..., *Sp), each (..., *S_out): tap k holds
    x[..., i·s + k·d] for every output position i. Arrays or Tensors alike."""
    spatial = x.shape[x.ndim - len(kernel_size):]
    out_shape = tuple(_out_length(*axis) for axis in zip(spatial, kernel_size, stride, dilation))
    return [x[index] for index in _tap_slices(kernel_size, stride, dilation, out_shape)]


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


def _add_taps(xp, parts: list, padding: tuple, spatial: tuple, kernel_size: tuple,
              stride: tuple, dilation: tuple):
    """The adjoint of padding then `_taps`: each tap's (..., *S_out) gradient added back at the
    positions it read, the padding cropped. Returns (..., *spatial)."""
    dims = len(spatial)
    out_shape = parts[0].shape[-dims:]
    padded = tuple(left + n + right for (left, right), n in zip(padding, spatial))
    out = xp.zeros(parts[0].shape[:-dims] + padded, dtype=parts[0].dtype)
    for index, part in zip(_tap_slices(kernel_size, stride, dilation, out_shape), parts):
        # positions within one tap are distinct, so += adds each element once
        out[index] += part
    return out[(Ellipsis,) + tuple(slice(left, left + n) for (left, _), n in zip(padding, spatial))]


# ---------------------------------------------------------------------------------------------
# convolution

def _correlate(ops, x, weight, bias, stride, padding, dilation, groups):
    """y = b + W ⋆ x on arrays (ops: the array module) or on Tensors (ops: minigrad): the
    forward, and the rebuild that create_graph differentiates.

    x (N, C_in, *S), weight (C_out, C_in/G, *K), bias (C_out,) or None -> (N, C_out, *S_out).
    """
    n = x.shape[0]
    c_out, c_group, *kernel_size = weight.shape
    taps = _taps(_padded(ops, x, padding, 0), kernel_size, stride, dilation)
    windows = _stack(ops, taps, axis=2)                      # (N, C_in, ΠK, *S_out)
    out_shape, size = windows.shape[3:], len(taps)
    # channels of group g are g·C_in/G … (g + 1)·C_in/G − 1, in and out alike
    windows = windows.reshape(n, groups, c_group * size,
                              math.prod(out_shape))             # (N, G, C_in/G·ΠK, ΠS_out)
    w = weight.reshape(groups, c_out // groups, c_group * size)  # (G, C_out/G, C_in/G·ΠK)
    y = (w @ windows).reshape(n, c_out, *out_shape)              # (N, C_out, *S_out)
    return y if bias is None else y + bias.reshape(c_out, *(1,) * len(out_shape))


class Correlate(mg.FusedFunction):
    """y[n, o, i] = b[o] + Σ_c Σ_k W[o, c, k] · x̃[n, g·C_in/G + c, i·s + k·d], g = group of o,
    x̃ = x zero-padded, i and k running over the output positions and the taps (tuples of one
    index per spatial axis; i·s + k·d axis by axis): the primitive of conv1d and conv2d (a
    cross-correlation, as every deep-learning library's "convolution").

    Inputs x (N, C_in, *S), W (C_out, C_in/G, *K), optionally b (C_out,). With X the windows
    (N, G, C_in/G·ΠK, ΠS_out) and ∂Y = ∂L/∂y as (N, G, C_out/G, ΠS_out), per group:

        ∂L/∂W = Σ_n ∂Y Xᵀ,   ∂L/∂X = Wᵀ ∂Y (added back into x̃ tap by tap),   ∂L/∂b = Σ_{n,i} ∂Y
    """

    needs_output = False

    def __init__(self, stride: tuple, padding: tuple, dilation: tuple, groups: int):
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups

    def forward(self, x, weight, bias=None):
        """x (N, C_in, *S), weight (C_out, C_in/G, *K), bias (C_out,) or None: arrays. Returns
        (N, C_out, *S_out)."""
        return _correlate(self.xp, x, weight, bias, self.stride, self.padding, self.dilation,
                          self.groups)

    def array_backward(self, grad):
        xp = self.xp
        x, weight = self.inputs[0].data, self.inputs[1].data
        needs = [t.requires_grad for t in self.inputs]
        n, c_in, *spatial = x.shape
        c_out, c_group, *kernel_size = weight.shape
        groups, out_shape, size = self.groups, grad.shape[2:], math.prod(kernel_size)
        positions = math.prod(out_shape)
        g = grad.reshape(n, groups, c_out // groups, positions)  # ∂Y (N, G, C_out/G, ΠS_out)
        w = weight.reshape(groups, c_out // groups, c_group * size)  # (G, C_out/G, C_in/G·ΠK)
        grad_x = grad_w = grad_b = None
        if needs[0]:
            # ∂L/∂X = Wᵀ ∂Y, then each tap's rows go back where the tap read them
            grad_windows = (w.swapaxes(-1, -2) @ g).reshape(n, c_in, size, *out_shape)
            grad_x = _add_taps(xp, [grad_windows[:, :, t] for t in range(size)], self.padding,
                               tuple(spatial), kernel_size, self.stride, self.dilation)
        if needs[1]:
            # ∂L/∂W = Σ_n ∂Y Xᵀ, the windows read again rather than kept from the forward
            taps = _taps(_padded(xp, x, self.padding, 0), kernel_size, self.stride,
                         self.dilation)
            windows = _stack(xp, taps, axis=2).reshape(n, groups, c_group * size, positions)
            grad_w = (g @ windows.swapaxes(-1, -2)).sum(axis=0).reshape(weight.shape)
        if len(self.inputs) == 3 and needs[2]:
            grad_b = grad.sum(axis=(0, *range(2, grad.ndim)))      # ∂L/∂b = Σ_{n,i} ∂Y
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
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """torch.nn.functional.conv2d: the cross-correlation of the input with each filter,

        y[n, o, h, w] = b[o] + Σ_c Σ_{i,j} W[o, c, i, j] ·
                        x[n, g·C_in/G + c, h·s_h + i·d_h − p_top, w·s_w + j·d_w − p_left]

    (g the group of output channel o; x is 0 outside the H × W plane).

    input: (N, C_in, H, W) or unbatched (C_in, H, W); weight: (C_out, C_in/groups, kH, kW);
    bias: (C_out,) or None. stride, dilation: an int (both axes) or a pair (height, width);
    padding: an int or a pair (both sides of each axis), "valid" (0) or "same" (stride 1 only;
    output H × W, the odd extra at the bottom and the right: p_top = ⌊d_h(kH − 1)/2⌋). Returns
    (N, C_out, H_out, W_out) or (C_out, H_out, W_out). Integer input is taken in the weight's
    dtype.
    """
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """torch.nn.functional.conv3d: `conv2d` over three axes (depth, height, width),

        y[n, o, t, h, w] = b[o] + Σ_c Σ_{i,j,k} W[o, c, i, j, k] ·
                           x[n, g·C_in/G + c, t·s_d + i·d_d − p_d, h·s_h + j·d_h − p_h,
                             w·s_w + k·d_w − p_w].

    input: (N, C_in, D, H, W) or unbatched (C_in, D, H, W); weight: (C_out, C_in/groups, kD,
    kH, kW); stride, padding, dilation: an int (every axis) or a triple; padding also "valid"
    or "same" (stride 1). Returns (N, C_out, D_out, H_out, W_out) or without N.
    """
    return _convolution(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _convolution(input, weight, bias, stride, padding, dilation, groups, dims: int,
                 op: str) -> Tensor:
    """conv1d (dims 1) and conv2d (dims 2): the checks, then Correlate."""
    x, unbatched = _batched(input, weight, op, dims)
    if not isinstance(weight, Tensor) or weight.ndim != dims + 2:
        raise ValueError(f"{op}: weight must be {dims + 2}-D (C_out, C_in/groups, "
                         f"{_KERNEL_LETTERS[dims]}), got shape "
                         f"{tuple(getattr(weight, 'shape', ()))}")
    if weight.dtype.kind != "f":
        raise TypeError(f"{op}: weight must be floating, got dtype {weight.dtype}")
    if x.dtype.kind in "biu":
        x = x.astype(weight.dtype)
    stride = _per_axis(stride, dims, op, "stride")
    dilation = _per_axis(dilation, dims, op, "dilation")
    groups = check_size(op, "groups", groups)
    c_out, c_group, *kernel_size = weight.shape
    if 0 in kernel_size:
        raise ValueError(f"{op}: weight shape {tuple(weight.shape)} has kernel size 0")
    if c_group == 0:        # a sum over no channels: the bias alone, where PyTorch returns an
        raise ValueError(   # empty result with no output channels; neither is meant
            f"{op}: weight shape {tuple(weight.shape)} reads 0 input channels")
    if c_out % groups:
        raise ValueError(f"{op}: weight shape {tuple(weight.shape)} has {c_out} output "
                         f"channels, which groups={groups} does not divide")
    if x.shape[1] != c_group * groups:
        raise ValueError(f"{op}: input shape {tuple(input.shape)} has {x.shape[1]} channels, "
                         f"but weight shape {tuple(weight.shape)} with groups={groups} expects "
                         f"{c_group * groups}")
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ValueError(f"{op}: bias shape {tuple(bias.shape)} must be (C_out,) = "
                         f"({c_out},) for weight shape {tuple(weight.shape)}")
    widths = _conv_padding(padding, tuple(kernel_size), stride, dilation, op)
    for name, size, pair, k, d in zip(_AXIS_NAMES[dims], x.shape[2:], widths, kernel_size,
                                      dilation):
        if size + sum(pair) < d * (k - 1) + 1:
            raise ValueError(f"{op}: padded input {name} {size + sum(pair)} (input shape "
                             f"{tuple(input.shape)}, padding {pair}) is shorter than the "
                             f"kernel's span d·(K − 1) + 1 = {d * (k - 1) + 1} (weight shape "
                             f"{tuple(weight.shape)}, dilation {d})")
    inputs = (x, weight) if bias is None else (x, weight, bias)
    y = Correlate.apply(*inputs, stride=stride, padding=widths, dilation=dilation,
                        groups=groups)
    return _unbatched((y,), unbatched)[0]


def _conv_padding(padding, kernel_size: tuple, stride: tuple, dilation: tuple,
                  op: str) -> tuple:
    """PyTorch's conv padding (an int, a tuple of one per axis, "valid" or "same") as one pair
    (before, after) per axis."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * len(kernel_size)
        if padding != "same":
            raise ValueError(f"{op}: padding must be an int, 'valid' or 'same', got "
                             f"{padding!r}")
        if any(s != 1 for s in stride):
            raise ValueError(f"{op}: padding='same' is not supported with stride "
                             f"{_shown(stride)} (as in PyTorch: only stride 1)")
        totals = [d * (k - 1) for k, d in zip(kernel_size, dilation)]
        return tuple((t // 2, t - t // 2) for t in totals)   # the odd one after: bottom, right
    return tuple((p, p) for p in _per_axis(padding, len(kernel_size), op, "padding", minimum=0))


def _per_axis(value, dims: int, op: str, name: str, minimum: int = 1) -> tuple[int, ...]:
    """An option PyTorch takes as an int or as a sequence of one int per spatial axis, as
    `dims` ints >= minimum."""
    if isinstance(value, (tuple, list)):
        if len(value) != dims:
            raise ValueError(f"{op}: {name} must be an int or a {dims}-tuple of ints, got "
                             f"{value!r}")
        return tuple(check_size(op, name, v, minimum) for v in value)
    return (check_size(op, name, value, minimum),) * dims


def _shown(values: tuple):
    """A per-axis option as a message shows it: the int itself for one axis."""
    return values[0] if len(values) == 1 else values


def _batched(input, like: Tensor | None, op: str, dims: int) -> tuple[Tensor, bool]:
    """input (N, C, *S) as it is, or unbatched (C, *S) as (1, C, *S); and whether it was
    unbatched. S has `dims` axes."""
    if not isinstance(input, Tensor):
        device = like.device if isinstance(like, Tensor) else "cpu"
        input = mg.tensor(input, device=device)
    if input.ndim not in (dims + 1, dims + 2):
        raise ValueError(f"{op}: input must be (N, C, {_LETTERS[dims]}) or unbatched "
                         f"(C, {_LETTERS[dims]}), got shape {tuple(input.shape)}")
    if input.ndim == dims + 1:
        return input.reshape(1, *input.shape), True
    return input, False


def _unbatched(outputs: tuple, unbatched: bool) -> tuple:
    """Each output without its batch axis of 1 when the input came unbatched."""
    return tuple(t.reshape(t.shape[1:]) for t in outputs) if unbatched else outputs


# ---------------------------------------------------------------------------------------------
# pooling

def _pool_geometry(x: Tensor, kernel_size, stride, padding, dilation, ceil_mode, dims: int,
                   op: str) -> tuple[tuple, tuple, tuple, tuple]:
    """(K, s, padding pairs, d) of a pooling of x (N, C, *S), one entry per spatial axis, with
    PyTorch's output size per axis: ⌊(S + 2p − d(K − 1) − 1) / s⌋ + 1, rounded up with
    ceil_mode, except that the last window must start inside the input or the leading padding.
    The trailing padding also covers the positions past S + p that a last window of ceil_mode
    reaches (they count as absent)."""
    k = _per_axis(kernel_size, dims, op, "kernel_size")
    s = k if stride is None else _per_axis(stride, dims, op, "stride")
    p = _per_axis(padding, dims, op, "padding", minimum=0)
    d = _per_axis(dilation, dims, op, "dilation")
    check_flag(op, "ceil_mode", ceil_mode)
    if any(p_a > k_a // 2 for p_a, k_a in zip(p, k)):
        raise ValueError(f"{op}: padding should be at most half of kernel size, got "
                         f"padding={_shown(p)} and kernel_size={_shown(k)}")
    widths = []
    for name, size, k_a, s_a, p_a, d_a in zip(_AXIS_NAMES[dims], x.shape[2:], k, s, p, d):
        span = d_a * (k_a - 1) + 1
        out_size = (size + 2 * p_a - span + (s_a - 1 if ceil_mode else 0)) // s_a + 1
        if ceil_mode and (out_size - 1) * s_a >= size + p_a:
            out_size -= 1
        if out_size < 1:
            raise ValueError(f"{op}: input shape {tuple(x.shape)} with "
                             f"kernel_size={_shown(k)}, stride={_shown(s)}, "
                             f"padding={_shown(p)}, dilation={_shown(d)} gives no output "
                             f"position (the padded {name} {size + 2 * p_a} is shorter than "
                             f"the window's span {span})")
        widths.append((p_a, max(0, (out_size - 1) * s_a + span - size - p_a)))
    return k, s, tuple(widths), d


def _pool_input(input, op: str, dims: int) -> tuple[Tensor, bool]:
    x, unbatched = _batched(input, None, op, dims)
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: input must be floating, got dtype {x.dtype}")
    return x, unbatched


def _first_real_tap(kernel_size: tuple, stride: tuple, padding: tuple, dilation: tuple,
                    out_shape: tuple) -> np.ndarray:
    """For each window (*S_out), the first tap (row-major, flat) that reads the input rather
    than the leading padding: on each axis the first tap past it (at most K − 1)."""
    flat = np.zeros((), dtype=np.int64)
    for k, s, (left, _), d, m in zip(kernel_size, stride, padding, dilation, out_shape):
        starts = np.arange(m) * s                           # padded position of tap 0
        first = np.clip(-((starts - left) // d), 0, k - 1)  # ⌈(left − start) / d⌉
        flat = flat[..., None] * k + first                  # row-major over the axes so far
    return flat


def _scan_maximum(ops, taps: list, first_real):
    """Each window's maximum and the tap it is at, (..., *S_out) each, by PyTorch's scan over the
    taps in row-major order: a tap replaces the best so far when it is larger or NaN, so the
    first maximum wins, or the last NaN. A window whose input elements are all −inf (tied with
    the padding) picks the first of them, never the padding. Arrays or Tensors alike."""
    maxima, chosen = taps[0], ops.zeros_like(taps[0], dtype=np.int64)
    for k, tap in enumerate(taps[1:], start=1):
        better = (tap > maxima) | ops.isnan(tap)
        maxima = ops.where(better, tap, maxima)
        chosen = ops.where(better, k, chosen)
    # a padding tap never replaces (−inf is not larger than anything): tap 0 kept means tap 0
    # or, when it is padding, every input element is −inf
    return maxima, ops.where(chosen == 0, first_real, chosen)


def _max_taps(ops, x, kernel_size: tuple, stride: tuple, padding: tuple, dilation: tuple) -> list:
    """The taps (each (..., *S_out)) of x padded with −inf; arrays or Tensors alike."""
    return _taps(_padded(ops, x, padding, -math.inf), kernel_size, stride, dilation)


class WindowMax(mg.FusedFunction):
    """y[n, c, i] = max_k x̃[n, c, i·s + k·d], x̃ = x padded with −inf, over the taps k (tuples
    of one index per spatial axis): the primitive of max_pool1d and max_pool2d.

    The gradient goes to one element per window, the one PyTorch returns as the index: the
    first maximum in row-major order (a NaN wins; see `_scan_maximum`):
    ∂L/∂x̃[i·s + k*·d] += ∂L/∂y[i].
    """

    needs_output = False

    def __init__(self, kernel_size: tuple, stride: tuple, padding: tuple, dilation: tuple):
        self.kernel_size, self.stride, self.padding, self.dilation = (kernel_size, stride,
                                                                      padding, dilation)

    def forward(self, x):
        """x (N, C, *S): an array. Returns (N, C, *S_out)."""
        xp = self.xp
        taps = _max_taps(xp, x, self.kernel_size, self.stride, self.padding, self.dilation)
        first_real = _first_real_tap(self.kernel_size, self.stride, self.padding,
                                     self.dilation, taps[0].shape[2:])
        maxima, chosen = _scan_maximum(xp, taps, xp.asarray(first_real))
        self.save_for_backward(chosen)                       # (N, C, *S_out), the tap k*
        return maxima if len(taps) > 1 else maxima.copy()    # one tap: a view of x

    def array_backward(self, grad):
        (chosen,) = self.saved_tensors
        xp = self.xp
        parts = [xp.where(chosen == k, grad, 0) for k in range(math.prod(self.kernel_size))]
        return _add_taps(xp, parts, self.padding, self.inputs[0].shape[2:], self.kernel_size,
                         self.stride, self.dilation)

    def recorded_backward(self, grad):
        (chosen,) = self.saved_tensors

        def rebuild(x):                                      # the chosen element of each window
            windows = mg.stack(_max_taps(mg, x, self.kernel_size, self.stride, self.padding,
                                         self.dilation), axis=-1)    # (N, C, *S_out, ΠK)
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
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     1, "max_pool1d")


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """torch.nn.functional.max_pool2d: y[n, c, h, w] = max_{i,j} x[n, c, h·s_h + i·d_h − p_h,
    w·s_w + j·d_w − p_w], the input padded with −inf.

    input: (N, C, H, W) or (C, H, W), floating. kernel_size (kH, kW), stride (kernel_size
    when None), padding (at most half the kernel on each axis), dilation: each an int (both
    axes) or a pair. ceil_mode rounds the output size up (a last, partial window on each
    axis, as PyTorch). Returns y (N, C, H_out, W_out) or (C, H_out, W_out), and with
    return_indices also the int64 position of each maximum within its input plane,
    h·W + w, as PyTorch's.

    Ties: the gradient goes to one element per window, the first maximum in row-major order
    (the index returned), as in PyTorch; a window holding NaN gives NaN and its last NaN's
    index.
    """
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     2, "max_pool2d")


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """torch.nn.functional.max_pool3d: `max_pool2d` over three axes (depth, height, width):
    input (N, C, D, H, W) or (C, D, H, W); the options an int or a triple; indices
    (t·H + h)·W + w within each volume. Ties and NaN as `max_pool2d`, the window scanned in
    row-major order."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     3, "max_pool3d")


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
              dims: int, op: str):
    """max_pool1d (dims 1) and max_pool2d (dims 2): the checks, then WindowMax."""
    x, unbatched = _pool_input(input, op, dims)
    check_flag(op, "return_indices", return_indices)
    k, s, widths, d = _pool_geometry(x, kernel_size, stride, padding, dilation, ceil_mode,
                                     dims, op)
    y = WindowMax.apply(x, kernel_size=k, stride=s, padding=widths, dilation=d)
    if not return_indices:
        return _unbatched((y,), unbatched)[0]
    return _unbatched((y, _max_indices(x.detach(), k, s, widths, d)), unbatched)


def _max_indices(x: Tensor, kernel_size: tuple, stride: tuple, padding: tuple,
                 dilation: tuple) -> Tensor:
    """The position of each window's chosen maximum within its input plane, flat over the
    spatial axes (i for one axis, h·W + w for two), int64 (N, C, *S_out), from minigrad's
    operations (so that a compiled step computes it again from each input)."""
    with mg.no_grad():
        taps = _max_taps(mg, x, kernel_size, stride, padding, dilation)
        out_shape = tuple(taps[0].shape[2:])
        first_real = _first_real_tap(kernel_size, stride, padding, dilation, out_shape)
        _, chosen = _scan_maximum(mg, taps, mg.tensor(first_real, device=x.device))
        dims = len(out_shape)
        index, plane = 0, 1                  # plane: the flat stride of the axis, Π_{b>a} S_b
        for axis in reversed(range(dims)):   # chosen = Σ_a k_a · Π_{b>a} K_b, row-major
            k, s, (left, _), d = (kernel_size[axis], stride[axis], padding[axis],
                                  dilation[axis])
            tap = (chosen // math.prod(kernel_size[axis + 1:])) % k      # k_a
            starts = np.arange(out_shape[axis]) * s - left   # input position of tap 0
            starts = starts.reshape((-1,) + (1,) * (dims - 1 - axis))
            index = index + (tap * d + mg.tensor(starts, device=x.device)) * plane
            plane *= x.shape[2 + axis]
        return index


def _mean_of_taps(ops, x, kernel_size: tuple, stride: tuple, padding: tuple, divisor):
    """Σ_k x̃[i·s + k] / divisor[i], x̃ = x zero-padded; arrays or Tensors alike."""
    taps = _taps(_padded(ops, x, padding, 0), kernel_size, stride, (1,) * len(kernel_size))
    total = taps[0]
    for tap in taps[1:]:                                     # in window order, as PyTorch
        total = total + tap
    return total / divisor


def _avg_divisor(spatial: tuple, kernel_size: tuple, stride: tuple, padding: tuple,
                 out_shape: tuple, count_include_pad: bool,
                 divisor_override: int | None) -> np.ndarray:
    """The count each window's sum is divided by (PyTorch's), (*S_out): divisor_override when
    given, else the product over the axes of the window's extent clipped to the padded input
    or, without count_include_pad, to the input itself."""
    if divisor_override is not None:
        return np.full(out_shape, divisor_override)
    divisor = np.ones((), dtype=np.int64)
    for length, k, s, (left, _), m in zip(spatial, kernel_size, stride, padding, out_shape):
        starts = np.arange(m) * s - left                     # input position of tap 0
        ends = np.minimum(starts + k, length + left)
        if not count_include_pad:
            starts, ends = np.maximum(starts, 0), np.minimum(ends, length)
        divisor = divisor[..., None] * (ends - starts)       # outer product over the axes
    return divisor


class WindowMean(mg.FusedFunction):
    """y[n, c, i] = Σ_k x̃[n, c, i·s + k] / D[i], x̃ = x zero-padded, over the taps k (tuples of
    one index per spatial axis), D[i] the window's count (see `_avg_divisor`): the primitive
    of avg_pool1d and avg_pool2d.

    ∂L/∂x̃[i·s + k] += ∂L/∂y[i] / D[i] for every tap k.
    """

    needs_output = False

    def __init__(self, kernel_size: tuple, stride: tuple, padding: tuple,
                 count_include_pad: bool, divisor_override: int | None = None):
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, x):
        """x (N, C, *S): an array. Returns (N, C, *S_out)."""
        xp = self.xp
        spatial = x.shape[2:]
        out_shape = tuple(_out_length(n + left + right, k, s, 1) for n, (left, right), k, s
                          in zip(spatial, self.padding, self.kernel_size, self.stride))
        divisor = xp.asarray(_avg_divisor(spatial, self.kernel_size, self.stride, self.padding,
                                          out_shape, self.count_include_pad,
                                          self.divisor_override), dtype=x.dtype)
        self.save_for_backward(divisor)
        return _mean_of_taps(xp, x, self.kernel_size, self.stride, self.padding, divisor)

    def array_backward(self, grad):
        (divisor,) = self.saved_tensors
        part = grad / divisor                                # every tap gets ∂L/∂y / D
        return _add_taps(self.xp, [part] * math.prod(self.kernel_size), self.padding,
                         self.inputs[0].shape[2:], self.kernel_size, self.stride,
                         (1,) * len(self.kernel_size))

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
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     1, "avg_pool1d")


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """torch.nn.functional.avg_pool2d: y[n, c, h, w] = Σ_{i,j} x[n, c, h·s_h + i − p_h,
    w·s_w + j − p_w] / D[h, w], the input padded with zeros.

    input: (N, C, H, W) or (C, H, W), floating. kernel_size (kH, kW), stride (kernel_size when
    None), padding (at most half the kernel on each axis): each an int or a pair. D[h, w] is
    kH·kW, except for last windows of ceil_mode that reach past the padding (their positions
    there are not counted) and, with count_include_pad=False, windows that overlap the
    padding (only input elements counted); divisor_override, a nonzero int, replaces it
    everywhere. Returns (N, C, H_out, W_out) or (C, H_out, W_out).
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d")


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """torch.nn.functional.avg_pool3d: `avg_pool2d` over three axes (depth, height, width):
    input (N, C, D, H, W) or (C, D, H, W); the options an int or a triple."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d")


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, dims: int, op: str) -> Tensor:
    """avg_pool1d (dims 1) and avg_pool2d (dims 2): the checks, then WindowMean."""
    x, unbatched = _pool_input(input, op, dims)
    include = check_flag(op, "count_include_pad", count_include_pad)
    override = _divisor_override(divisor_override, op)
    k, s, widths, _ = _pool_geometry(x, kernel_size, stride, padding, 1, ceil_mode, dims, op)
    y = WindowMean.apply(x, kernel_size=k, stride=s, padding=widths, count_include_pad=include,
                         divisor_override=override)
    return _unbatched((y,), unbatched)[0]


def _divisor_override(value, op: str) -> int | None:
    """avg_pool2d's divisor_override: None, or a nonzero int (as PyTorch, negative allowed)."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{op}: divisor_override must be an int or None, got "
                        f"{type(value).__name__} {value!r}")
    if value == 0:
        raise ValueError(f"{op}: divisor_override must not be zero")
    return int(value)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """torch.nn.functional.adaptive_avg_pool1d: output position i averages the input over
    ⌊i·L/M⌋ … ⌈(i + 1)·L/M⌉ − 1, for M = output_size (windows may overlap).

    input: (N, C, L) or (C, L), floating, L ≥ 1. Returns (N, C, M) or (C, M). A sum through a
    0/1 matrix (L, M), then a division by each window's count (the gradient is matmul's).
    """
    return _adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """torch.nn.functional.adaptive_avg_pool2d: output position (i, j) averages the input over
    rows ⌊i·H/M_h⌋ … ⌈(i + 1)·H/M_h⌉ − 1 and columns ⌊j·W/M_w⌋ … ⌈(j + 1)·W/M_w⌉ − 1
    (windows may overlap).

    input: (N, C, H, W) or (C, H, W), floating, H, W ≥ 1. output_size: an int (M_h = M_w) or a
    pair, None in it keeping that axis's size. Returns (N, C, M_h, M_w) or (C, M_h, M_w). The
    mean along the height, then along the width, each a sum through a 0/1 matrix and a
    division by the windows' counts (the gradient is matmul's).
    """
    return _adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """torch.nn.functional.adaptive_avg_pool3d: `adaptive_avg_pool2d` over three axes:
    input (N, C, D, H, W) or (C, D, H, W), each axis ≥ 1; output_size an int or a triple
    (None keeping that axis's size)."""
    return _adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")


def _adaptive_avg_pool(input, output_size, dims: int, op: str) -> Tensor:
    """adaptive_avg_pool1d (dims 1) and adaptive_avg_pool2d (dims 2): the mean over windows
    that tile each spatial axis, one axis at a time (a box's mean is the mean over its rows
    of the means over its columns)."""
    x, unbatched = _pool_input(input, op, dims)
    sizes = _output_sizes(output_size, dims, op)
    if 0 in x.shape[2:]:
        raise ValueError(f"{op}: input shape {tuple(input.shape)} has no position to average")
    dtype, device = x.dtype, x.device
    y = x
    for axis, (length, m) in enumerate(zip(x.shape[2:], sizes), start=2):
        m = length if m is None else m
        i = np.arange(m)
        starts, ends = (i * length) // m, -((-(i + 1) * length) // m)  # ⌊iL/M⌋, ⌈(i+1)L/M⌉
        position = np.arange(length)[:, None]
        members = (position >= starts) & (position < ends)              # (L, M)
        moved = y.swapaxes(axis, -1)                                    # the pooled axis last
        summed = mg.matmul(moved, mg.tensor(members.astype(dtype), device=device))
        mean = summed / mg.tensor((ends - starts).astype(dtype), device=device)
        y = mean.swapaxes(axis, -1)
    return _unbatched((y,), unbatched)[0]


def _output_sizes(output_size, dims: int, op: str) -> tuple:
    """An adaptive pooling's output_size as one size per spatial axis: an int for all, or a
    sequence of ints and None (None keeps that axis's size), as PyTorch."""
    if not isinstance(output_size, (tuple, list)):
        return _per_axis(output_size, dims, op, "output_size")
    if len(output_size) != dims:
        raise ValueError(f"{op}: output_size must be an int or a {dims}-tuple, got "
                         f"{output_size!r}")
    return tuple(None if m is None else check_size(op, "output_size", m) for m in output_size)


# ---------------------------------------------------------------------------------------------
# modules

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What Conv1d and Conv2d share (PyTorch's _ConvNd): the checks of the options, the
    parameters, their initialisation, forward and the repr. `_dims` is the number of spatial
    axes."""

    _dims = 0

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True, padding_mode: str = "zeros",
                 device="cpu", dtype=None):
        super().__init__()
        name, dims = type(self).__name__, self._dims
        self.in_channels = check_size(name, "in_channels", in_channels)
        self.out_channels = check_size(name, "out_channels", out_channels)
        self.kernel_size = _per_axis(kernel_size, dims, name, "kernel_size")
        self.stride = _per_axis(stride, dims, name, "stride")
        self.dilation = _per_axis(dilation, dims, name, "dilation")
        self.groups = check_size(name, "groups", groups)
        for option, channels in (("in_channels", in_channels), ("out_channels", out_channels)):
            if channels % self.groups:
                raise ValueError(f"{name}: {option}={channels} must be divisible by "
                                 f"groups={self.groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of "
                             f"{', '.join(map(repr, _PADDING_MODES))}, got {padding_mode!r}")
        self.padding_mode = padding_mode
        widths = _conv_padding(padding, self.kernel_size, self.stride, self.dilation, name)
        self.padding = padding if isinstance(padding, str) else tuple(p for p, _ in widths)
        # F.pad's amounts for the other padding modes: (left, right, top, bottom), last axis first
        self._pad_amounts = tuple(p for pair in reversed(widths) for p in pair)
        self.weight = Parameter(mg.zeros((out_channels, in_channels // groups,
                                          *self.kernel_size), dtype=dtype, device=device))
        if check_flag(name, "bias", bias):
            self.bias = Parameter(mg.zeros(out_channels, dtype=dtype, device=device))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw weight and bias again from U(−1/√fan_in, 1/√fan_in) (minigrad's RNG),
        fan_in = C_in/groups · ΠK: PyTorch's default."""
        init.fan_in_uniform_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, C_in, *S) or (C_in, *S), S = (L,) for Conv1d, (H, W) for Conv2d. Returns
        (N, C_out, *S_out) or (C_out, *S_out)."""
        op = f"conv{self._dims}d"
        if self.padding_mode == "zeros":
            return _convolution(x, self.weight, self.bias, self.stride, self.padding,
                                self.dilation, self.groups, self._dims, op)
        x = pad(x, self._pad_amounts, mode=self.padding_mode)     # (…, *(p_l + S + p_r))
        return _convolution(x, self.weight, self.bias, self.stride, 0, self.dilation,
                            self.groups, self._dims, op)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._dims:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._dims:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """y[n, o, l] = b[o] + Σ_c Σ_k W[o, c, k] · x[n, g·C_in/G + c, l·s + k·d − p], as
    torch.nn.Conv1d (g the group of output channel o).

    weight W: (C_out, C_in/groups, K), bias b: (C_out,), both U(−1/√fan_in, 1/√fan_in) with
    fan_in = C_in/groups · K, as in PyTorch. padding: an int, "valid" or "same" (stride 1);
    padding_mode "zeros", or "reflect", "replicate", "circular" (the input is padded so first,
    as PyTorch does). forward: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out) or
    (C_out, L_out). kernel_size, stride, padding and dilation are kept as 1-tuples, as in
    PyTorch.
    """

    _dims = 1


class Conv2d(_ConvNd):
    """y[n, o, h, w] = b[o] + Σ_c Σ_{i,j} W[o, c, i, j] · x[n, g·C_in/G + c, h·s_h + i·d_h − p_h,
    w·s_w + j·d_w − p_w], as torch.nn.Conv2d (g the group of output channel o).

    weight W: (C_out, C_in/groups, kH, kW), bias b: (C_out,), both U(−1/√fan_in, 1/√fan_in)
    with fan_in = C_in/groups · kH · kW, as in PyTorch. kernel_size, stride, padding,
    dilation: an int (both axes) or a pair (height, width), kept as pairs, as in PyTorch;
    padding also "valid" or "same" (stride 1, the odd extra at the bottom and the right).
    padding_mode "zeros", or "reflect", "replicate", "circular" (the input is padded so first,
    as PyTorch does). forward: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out) or
    (C_out, H_out, W_out).
    """

    _dims = 2


class Conv3d(_ConvNd):
    """`Conv2d` over three axes (depth, height, width), as torch.nn.Conv3d: weight W
    (C_out, C_in/groups, kD, kH, kW), fan_in = C_in/groups · kD · kH · kW; the options an int
    or a triple, kept as triples. forward: (N, C_in, D, H, W) or (C_in, D, H, W) ->
    (…, D_out, H_out, W_out). See `conv3d`."""

    _dims = 3


class _MaxPoolNd(Module):
    """What MaxPool1d and MaxPool2d share (PyTorch's _MaxPoolNd): the options kept as given,
    checked; forward; the repr."""

    _dims = 0

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding, self.dilation = padding, dilation
        self.return_indices = check_flag(name, "return_indices", return_indices)
        self.ceil_mode = check_flag(name, "ceil_mode", ceil_mode)
        for option in ("kernel_size", "stride", "dilation"):
            _per_axis(getattr(self, option), self._dims, name, option)
        _per_axis(padding, self._dims, name, "padding", minimum=0)

    def forward(self, x: Tensor):
        """x: (N, C, *S) or (C, *S), S = (L,) for MaxPool1d, (H, W) for MaxPool2d. Returns the
        maxima (…, *S_out), or (maxima, indices)."""
        return _max_pool(x, self.kernel_size, self.stride, self.padding, self.dilation,
                         self.ceil_mode, self.return_indices, self._dims,
                         f"max_pool{self._dims}d")

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """y[n, c, l] = max_k x[n, c, l·s + k·d − p] (−inf padding), as torch.nn.MaxPool1d; see
    `max_pool1d`. forward: (N, C, L) or (C, L) -> (…, L_out), with the int64 indices too
    when return_indices."""

    _dims = 1


class MaxPool2d(_MaxPoolNd):
    """y[n, c, h, w] = max_{i,j} x[n, c, h·s_h + i·d_h − p_h, w·s_w + j·d_w − p_w] (−inf
    padding), as torch.nn.MaxPool2d; see `max_pool2d`. The options are kept as given (ints or
    pairs), as in PyTorch. forward: (N, C, H, W) or (C, H, W) -> (…, H_out, W_out), with the
    int64 indices (h·W + w within each plane) too when return_indices."""

    _dims = 2


class MaxPool3d(_MaxPoolNd):
    """`MaxPool2d` over three axes, as torch.nn.MaxPool3d; see `max_pool3d`. forward:
    (N, C, D, H, W) or (C, D, H, W) -> (…, D_out, H_out, W_out)."""

    _dims = 3


class _AvgPoolNd(Module):
    """What AvgPool1d and AvgPool2d share: the options checked, forward and the repr."""

    _dims = 0

    def __init__(self, kernel_size, stride, padding, ceil_mode: bool, count_include_pad: bool,
                 divisor_override: int | None):
        super().__init__()
        name = type(self).__name__
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        for option in ("kernel_size", "stride"):
            _per_axis(getattr(self, option), self._dims, name, option)
        _per_axis(padding, self._dims, name, "padding", minimum=0)
        self.ceil_mode = check_flag(name, "ceil_mode", ceil_mode)
        self.count_include_pad = check_flag(name, "count_include_pad", count_include_pad)
        self.divisor_override = _divisor_override(divisor_override, name)

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, C, *S) or (C, *S), S = (L,) for AvgPool1d, (H, W) for AvgPool2d. Returns
        (…, *S_out)."""
        return _avg_pool(x, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                         self.count_include_pad, self.divisor_override, self._dims,
                         f"avg_pool{self._dims}d")

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _one_tuple(value):
    """PyTorch's _single: an int as a 1-tuple, a sequence as a tuple."""
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


class AvgPool1d(_AvgPoolNd):
    """y[n, c, l] = Σ_k x[n, c, l·s + k − p] / D[l] (zero padding), as torch.nn.AvgPool1d;
    see `avg_pool1d`. kernel_size, stride and padding are kept as 1-tuples, as in PyTorch.
    forward: (N, C, L) or (C, L) -> (…, L_out)."""

    _dims = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True):
        super().__init__(_one_tuple(kernel_size), None if stride is None else _one_tuple(stride),
                         _one_tuple(padding), ceil_mode, count_include_pad, None)


class AvgPool2d(_AvgPoolNd):
    """y[n, c, h, w] = Σ_{i,j} x[n, c, h·s_h + i − p_h, w·s_w + j − p_w] / D[h, w] (zero
    padding), as torch.nn.AvgPool2d; see `avg_pool2d`. The options are kept as given (ints or
    pairs), as in PyTorch. forward: (N, C, H, W) or (C, H, W) -> (…, H_out, W_out)."""

    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: int | None = None):
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override)


class AvgPool3d(AvgPool2d):
    """`AvgPool2d` over three axes, as torch.nn.AvgPool3d; see `avg_pool3d`. forward:
    (N, C, D, H, W) or (C, D, H, W) -> (…, D_out, H_out, W_out)."""

    _dims = 3


class _AdaptiveAvgPoolNd(Module):
    """What AdaptiveAvgPool1d and AdaptiveAvgPool2d share: forward and the repr."""

    _dims = 0

    def __init__(self, output_size):
        super().__init__()
        _output_sizes(output_size, self._dims, type(self).__name__)
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, C, *S) or (C, *S), S = (L,) for AdaptiveAvgPool1d, (H, W) for
        AdaptiveAvgPool2d. Returns (…, *output_size)."""
        return _adaptive_avg_pool(x, self.output_size, self._dims,
                                  f"adaptive_avg_pool{self._dims}d")

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """The mean over M windows that tile the length, as torch.nn.AdaptiveAvgPool1d; see
    `adaptive_avg_pool1d`. forward: (N, C, L) or (C, L) -> (…, M)."""

    _dims = 1


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """The mean over M_h × M_w windows that tile the plane, as torch.nn.AdaptiveAvgPool2d; see
    `adaptive_avg_pool2d`. output_size: an int or a pair (None keeps that axis's size).
    forward: (N, C, H, W) or (C, H, W) -> (…, M_h, M_w)."""

    _dims = 2


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """The mean over M_d × M_h × M_w windows that tile the volume, as
    torch.nn.AdaptiveAvgPool3d; see `adaptive_avg_pool3d`."""

    _dims = 3


__all__ = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "Conv1d", "Conv2d", "Conv3d", "Correlate", "MaxPool1d",
           "MaxPool2d", "MaxPool3d", "WindowMax", "WindowMean", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "avg_pool1d", "avg_pool2d",
           "avg_pool3d", "conv1d", "conv2d", "conv3d", "max_pool1d", "max_pool2d",
           "max_pool3d"]
