"""Stateless layer functions: linear, layer_norm, embedding, losses, and activations.

`linear`, `layer_norm` and `cross_entropy` are single fused primitives (one graph node each,
with their backward written as math) because they sit on every hot path: a GRU calls `linear`
twice per time step, a Transformer calls `layer_norm` twice per layer and `cross_entropy` over
the whole vocabulary. `binary_cross_entropy_with_logits` is one primitive for correctness: composed
from relu and abs, the one-sided gradients of their kinks would give −y at logits exactly 0
instead of σ(0) − y.

Losses with kinks follow PyTorch's conventions there: sign(0) = 0 for l1_loss, and
smooth_l1_loss and huber_loss take their linear piece from |d| = β (δ) on, where both pieces
have the same slope.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import minigrad as mg
from minigrad import dropout, gelu, log_softmax, relu, sigmoid, softmax, tanh  # noqa: F401
from minigrad import (celu, elu, hardsigmoid, hardswish, hardtanh, leaky_relu,  # noqa: F401
                      logsigmoid, mish, relu6, selu, silu, softmin, softplus, softsign)

from ._recompute import recorded_gradients

Tensor = mg.Tensor


class _FusedFunction(mg.Function):
    """A fused primitive whose `_gradients(grad, on_arrays)` holds its derivative once, written
    with operations that arrays and Tensors share: on bare arrays when no graph is recorded
    (the hot path), on Tensors when create_graph records the gradient's own graph."""

    def backward(self, grad):
        """The inputs' gradients from `_gradients`: on Tensors when create_graph records
        them, else on the bare arrays."""
        if mg.is_grad_enabled():
            return self._gradients(grad, on_arrays=False)
        return self._gradients(grad.data, on_arrays=True)

    def _gradients(self, grad, on_arrays: bool):
        raise NotImplementedError(f"{type(self).__name__}._gradients")


# ---------------------------------------------------------------------------------------------
# linear

class Linear(_FusedFunction):
    """y = x Wᵀ + b, for x (..., I), W (O, I), b (O) -> y (..., O)."""

    needs_output = False

    def forward(self, x, weight, bias=None):
        """x (..., I), weight (O, I), bias (O,) or None: arrays. Returns y (..., O)."""
        if x.ndim > 2:
            # one (N, I) @ (I, O) product over all leading positions: NumPy's matmul would
            # otherwise run one per leading index, packing W again for each
            leading = x.shape[:-1]
            y = self.forward(x.reshape(math.prod(leading), x.shape[-1]), weight, bias)
            return y.reshape(leading + (y.shape[-1],))
        y = x @ weight.T                                     # (N, O), or (O,) for one row
        if bias is not None:
            if bias.dtype == y.dtype:
                y += bias                                    # in place: no second buffer
            else:
                y = y + bias                                 # mixed dtypes promote
        return y

    def _gradients(self, grad, on_arrays: bool):
        x, weight = self.inputs[:2]
        has_bias = len(self.inputs) == 3
        needs = [t.requires_grad for t in self.inputs]
        out_features, in_features = weight.shape
        # the same formulas work on Tensors and on arrays: Tensors when recording a graph
        # (create_graph), bare arrays otherwise, which skips per-operation overhead (hot path)
        if on_arrays:
            x, weight = x.data, weight.data
        grad_x = grad_w = grad_b = None
        # every product on the leading positions flattened into rows: G (N, O), x (N, I)
        g2, x2 = grad, x
        if x.ndim != 2:
            leading = tuple(x.shape[:-1])
            rows = math.prod(leading)         # spelled out: reshape(-1, 0) is ambiguous
            g2, x2 = grad.reshape(rows, out_features), x.reshape(rows, in_features)
        # ∂L/∂x = G W
        if needs[0]:
            grad_x = g2 @ weight                             # (N, I)
            if x.ndim != 2:
                grad_x = grad_x.reshape(leading + (in_features,))
        # ∂L/∂W = Σ over all leading positions of gᵀ x
        if needs[1]:
            grad_w = g2.T @ x2                               # (O, I)
        # ∂L/∂b = Σ g over all leading positions
        if has_bias and needs[2]:
            grad_b = g2.sum(axis=0)                          # (O,)
        return (grad_x, grad_w, grad_b) if has_bias else (grad_x, grad_w)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x Wᵀ + b as one primitive.

    x: (..., I) with any leading dimensions; weight: (O, I); bias: (O,) or None.
    Returns (..., O).
    """
    if isinstance(x, Tensor):                                # the common case, checked quickly
        if x.dtype.kind in "biu":
            x = _floating(x, weight)
        xd, wd = x.data, weight.data
        if wd.ndim == 2 and xd.ndim and xd.shape[-1] == wd.shape[1]:
            if bias is None:
                return Linear.apply(x, weight)
            if bias.data.shape == (wd.shape[0],):
                return Linear.apply(x, weight, bias)
    x = _as_tensor(x, weight)
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out, in), got shape {tuple(weight.shape)}")
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"linear: input shape {tuple(x.shape)} does not end in in_features = "
                         f"{weight.shape[1]} (weight shape {tuple(weight.shape)})")
    if bias is None:
        return Linear.apply(x, weight)
    if tuple(bias.shape) != (weight.shape[0],):
        raise ValueError(f"linear: bias shape {tuple(bias.shape)} must be (out_features,) = "
                         f"({weight.shape[0]},)")
    return Linear.apply(x, weight, bias)


# ---------------------------------------------------------------------------------------------
# layer_norm

class LayerNorm(_FusedFunction):
    """y = γ ⊙ x̂ + β, x̂ = (x − μ) / σ, with μ and σ² = mean((x − μ)²) over the last
    `n_axes` axes and σ = √(σ² + eps).

    Inputs: x, then γ and β when present (shape = the normalised shape).
    """

    needs_output = False

    def __init__(self, n_axes: int, eps: float, has_weight: bool, has_bias: bool):
        self.n_axes, self.eps = n_axes, eps
        self.has_weight, self.has_bias = has_weight, has_bias

    def _axes(self, ndim: int) -> tuple[int, ...]:
        return tuple(range(ndim - self.n_axes, ndim))

    def forward(self, x, *affine):
        """x (..., *normalised shape), then γ and β when present: arrays. Returns x's
        shape."""
        xp = self.xp
        axes = self._axes(x.ndim)
        mu = x.mean(axis=axes, keepdims=True)
        centred = x - mu                                     # the one full-size buffer
        var = (centred * centred).mean(axis=axes, keepdims=True)
        inv_sigma = (1.0 / xp.sqrt(var + self.eps)).astype(x.dtype, copy=False)
        self.save_for_backward(mu, inv_sigma)                # small: (..., 1, ..., 1)
        y = centred.astype(np.result_type(x.dtype, *[a.dtype for a in affine]), copy=False)
        y *= inv_sigma                                       # x̂, in place
        if self.has_weight:
            y *= affine[0]
        if self.has_bias:
            y += affine[-1]
        return y

    def _gradients(self, grad, on_arrays: bool):
        x = self.inputs[0]
        weight = self.inputs[1] if self.has_weight else None
        needs = [t.requires_grad for t in self.inputs]
        axes = self._axes(x.ndim)
        leading = tuple(range(x.ndim - self.n_axes))
        if not on_arrays:
            # recording a graph (create_graph): μ and 1/σ must stay functions of x
            mu = x.mean(axis=axes, keepdims=True)
            inv_sigma = 1.0 / mg.sqrt(x.var(axis=axes, keepdims=True) + self.eps)
        else:
            # plain backward: the same formulas on bare arrays, with the saved statistics
            mu, inv_sigma = self.saved_tensors
            x = x.data
            weight = weight.data if weight is not None else None
        x_hat = (x - mu) * inv_sigma
        g_hat = grad * weight if weight is not None else grad
        # ∂L/∂x = (1/σ)(ĝ − mean(ĝ) − x̂ ⊙ mean(ĝ ⊙ x̂)), ĝ = g ⊙ γ
        grads = [None]
        if needs[0]:
            grads[0] = (g_hat - g_hat.mean(axis=axes, keepdims=True)
                        - x_hat * (g_hat * x_hat).mean(axis=axes, keepdims=True)) * inv_sigma
        if self.has_weight:
            # ∂L/∂γ = Σ over leading positions of g ⊙ x̂
            grads.append((grad * x_hat).sum(axis=leading) if needs[1] else None)
        if self.has_bias:
            # ∂L/∂β = Σ over leading positions of g
            grads.append(grad.sum(axis=leading) if needs[-1] else None)
        return tuple(grads) if len(grads) > 1 else grads[0]


def layer_norm(x: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing `normalized_shape` axes, then scale by γ and shift by β:
    y = γ ⊙ (x − μ)/√(σ² + eps) + β.

    x: (..., *normalized_shape); weight, bias: normalized_shape or None. Returns x's shape.
    """
    shape = _as_shape(normalized_shape)
    x = _floating(_as_tensor(x, weight), weight)
    if tuple(x.shape[x.ndim - len(shape):]) != shape or x.ndim < len(shape):
        raise ValueError(f"layer_norm: input shape {tuple(x.shape)} does not end in "
                         f"normalized_shape {shape}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != shape:
            raise ValueError(f"layer_norm: {name} shape {tuple(t.shape)} must equal "
                             f"normalized_shape {shape}")
    inputs = [x] + [t for t in (weight, bias) if t is not None]
    return LayerNorm.apply(*inputs, n_axes=len(shape), eps=float(eps),
                           has_weight=weight is not None, has_bias=bias is not None)


def _as_tensor(x, like: Tensor | None) -> Tensor:
    """Array data as a Tensor on `like`'s device (Tensors pass through)."""
    if isinstance(x, Tensor):
        return x
    return mg.tensor(x, device=like.device if like is not None else "cpu")


def _floating(x: Tensor, like: Tensor | None) -> Tensor:
    """Integer or bool x as floats, by minigrad's dtype rule: the dtype of the float tensor it
    meets (`like`), else float32. Float x passes unchanged."""
    if x.dtype.kind not in "biu":
        return x
    float_like = like is not None and like.dtype.kind == "f"
    return x.astype(like.dtype if float_like else "float32")


def _as_shape(shape) -> tuple[int, ...]:
    if isinstance(shape, numbers.Integral):
        return (int(shape),)
    return tuple(int(n) for n in shape)


# ---------------------------------------------------------------------------------------------
# pad, in PyTorch's form

_TORCH_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """PyTorch's pad: `pad` is a flat (left, right, top, bottom, …) sequence for the last
    len(pad) // 2 axes, the last axis first; mode "constant" (`value`, 0 by default),
    "reflect", "replicate" or "circular". A negative amount crops: in PyTorch's order, after
    the positive amounts have padded (a reflection mirrors the uncropped input), except in
    "circular" mode, which wraps the cropped input. As in PyTorch, a "reflect" amount must be
    smaller than the axis and a "circular" one at most its length. `minigrad.pad` takes
    NumPy's ((before, after), …) form."""
    if mode not in _TORCH_PAD_MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(map(repr, _TORCH_PAD_MODES))}, "
                         f"got {mode!r}")
    amounts = [int(p) for p in pad]
    if len(amounts) % 2 or len(amounts) // 2 > input.ndim:
        raise ValueError(f"pad: {len(amounts)} amounts do not make (left, right) pairs for the "
                         f"last axes of shape {tuple(input.shape)}")
    if value is not None and mode != "constant":
        raise ValueError(f"pad: value is only used by mode 'constant', got mode {mode!r}")
    widths = [(0, 0)] * input.ndim
    crop = [slice(None)] * input.ndim
    for i in range(len(amounts) // 2):
        axis = input.ndim - 1 - i
        before, after = amounts[2 * i], amounts[2 * i + 1]
        widths[axis] = (max(before, 0), max(after, 0))
        start = max(-before, 0)                          # the crop keeps [start, stop)
        if mode == "circular":                           # wraps the cropped axis: crop, pad
            stop = max(input.shape[axis] - max(-after, 0), start)
            n = stop - start
        else:                                            # pads the whole axis, then crops
            n = input.shape[axis]
            stop = max(n + sum(widths[axis]) - max(-after, 0), start)
        limit = {"reflect": n - 1, "circular": n}.get(mode)    # the length being padded
        if limit is not None and max(widths[axis]) > limit:
            raise ValueError(f"pad: mode {mode!r} pads axis {axis} of length {n} by at most "
                             f"{limit}, got ({before}, {after}) for shape {tuple(input.shape)}")
        crop[axis] = slice(start, stop)
    is_cropped = any(s != slice(None) for s in crop)
    if mode == "circular" and is_cropped:
        input = input[tuple(crop)]
    out = mg.pad(input, widths, mode, 0.0 if value is None else value)
    if mode != "circular" and is_cropped:
        out = out[tuple(crop)]
    return out


# ---------------------------------------------------------------------------------------------
# embedding

def embedding(indices, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of `weight` (V, D) picked by integer `indices` of any shape: (...) -> (..., D).

    Rows equal to `padding_idx` are looked up as usual but pass no gradient to `weight`.
    """
    index = _as_index_tensor(indices, weight.device, "embedding")
    num = weight.shape[0]
    data = index.data
    if data.size and (int(data.min()) < 0 or int(data.max()) >= num):
        raise ValueError(f"embedding: indices must lie in [0, {num}) for a table of "
                         f"{num} rows, got values from {int(data.min())} to {int(data.max())}")
    rows = weight[index]                                     # (..., D)
    if padding_idx is None:
        return rows
    is_pad = (index == padding_idx).unsqueeze(-1)            # (..., 1)
    # the padding row keeps its value but its gradient is cut: where() routes none to it
    return mg.where(is_pad, rows.detach(), rows)


def _as_index_tensor(indices, device: str, op: str) -> Tensor:
    if not isinstance(indices, Tensor):
        indices = mg.tensor(np.asarray(indices) if isinstance(indices, (list, tuple, int))
                            else indices, device=device)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be integers, got dtype {indices.dtype}")
    if indices.device != device:
        raise RuntimeError(f"{op}: indices are on {indices.device}, the table on {device}")
    return indices


# ---------------------------------------------------------------------------------------------
# losses

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str, op: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _target_like(input: Tensor, target, op: str, input_name: str = "input") -> Tensor:
    """`target` as a Tensor (array data takes input's dtype and device), checked to have
    input's shape: an elementwise loss never broadcasts silently."""
    if not isinstance(target, Tensor):
        target = mg.tensor(target, dtype=input.dtype, device=input.device)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: {input_name} shape {tuple(input.shape)} and target shape "
                         f"{tuple(target.shape)} differ")
    return target


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    """An elementwise loss kept as is ("none"), added ("sum") or averaged ("mean")."""
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


class CrossEntropy(_FusedFunction):
    """Softmax cross-entropy with integer targets, label smoothing and ignored targets.

    For each position i with logits z_i (C classes) and target t_i, log p = log_softmax(z_i):
        ℓ_i = (1 − ε)·(−log p_{t_i}) + ε·(−(1/C) Σ_c log p_c),
    and ℓ_i = 0 where t_i = ignore_index. "mean" divides Σ ℓ_i by the number of kept targets.
    """

    needs_output = False

    def __init__(self, targets, ignore_index, reduction: str, label_smoothing: float):
        self.targets = targets                               # (N,) integer array
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.smoothing = label_smoothing

    def forward(self, logits):
        """logits (..., C), an array. Returns the loss: () for "mean"/"sum", (...) for
        "none"."""
        xp = self.xp
        classes = logits.shape[-1]
        z = logits.reshape(-1, classes)                      # (N, C)
        n = z.shape[0]
        kept = None if self.ignore_index is None else self.targets != self.ignore_index
        safe_targets = self.targets if kept is None else xp.where(kept, self.targets, 0)
        # subtract the row max: same softmax, no overflow. The one (N, C) temporary below is
        # turned into the probabilities in place, so the forward allocates a single buffer.
        shifted = z - z.max(axis=1, keepdims=True)           # (N, C)
        picked = shifted[xp.arange(n), safe_targets]         # (N,)
        row_mean = shifted.mean(axis=1) if self.smoothing else None
        probs = xp.exp(shifted, out=shifted)                 # e^shifted, (N, C)
        total = probs.sum(axis=1)                            # (N,)
        log_total = xp.log(total)
        # −log p_t = log Σ_c e^shifted_c − shifted_t;  −mean_c log p_c = log Σ − mean_c shifted
        loss = log_total - picked
        if self.smoothing:
            loss = (1.0 - self.smoothing) * loss + self.smoothing * (log_total - row_mean)
        if kept is not None:
            loss = xp.where(kept, loss, 0)
        loss = loss.astype(logits.dtype, copy=False)
        probs /= total[:, None]                              # softmax, kept for backward
        count = n if kept is None else max(int(kept.sum()), 1)   # the divisor of "mean"
        self.save_for_backward(probs, safe_targets, kept, count)
        if self.reduction == "none":
            return loss.reshape(logits.shape[:-1])
        total_loss = loss.sum()
        if self.reduction == "mean":
            total_loss = total_loss / count
        return xp.asarray(total_loss, dtype=logits.dtype)

    def _row_weights(self):
        """(N, 1): the weight of position i, 0 where ignored, 1/(number kept) for "mean"."""
        probs, _, kept, count = self.saved_tensors
        weight = self.xp.ones((probs.shape[0], 1), dtype=probs.dtype) if kept is None else \
            kept.astype(probs.dtype)[:, None]
        if self.reduction == "mean":
            weight /= count
        return weight

    def _gradients(self, grad, on_arrays: bool):
        (logits,) = self.inputs
        xp = self.xp
        probs, safe_targets, kept, count = self.saved_tensors
        n, classes = probs.shape
        rows = xp.arange(n)
        eps = self.smoothing
        # ∂ℓ_i/∂z_i = p_i − q_i, q_i = (1 − ε)·onehot(t_i) + ε/C the smoothed target
        if not on_arrays:
            # recording a graph (create_graph): p must stay a function of the logits
            q = xp.full((n, classes), eps / classes, dtype=probs.dtype)
            q[rows, safe_targets] += 1.0 - eps
            upstream = grad.reshape(-1, 1) if self.reduction == "none" else grad
            p_minus_q = mg.softmax(logits.reshape(-1, classes), axis=-1) - q
            return (p_minus_q * (upstream * self._row_weights())).reshape(logits.shape)
        # plain backward: the same formula on arrays, subtracting q in place (no dense q)
        if kept is None and self.reduction != "none":
            scale = grad / count if self.reduction == "mean" else grad    # one number
            grad_z = probs * scale                           # (N, C)
            grad_z[rows, safe_targets] -= (1.0 - eps) * scale
        else:
            upstream = grad.reshape(-1, 1) if self.reduction == "none" else grad
            scale = upstream * self._row_weights()           # (N, 1)
            grad_z = probs * scale                           # (N, C)
            grad_z[rows, safe_targets] -= (1.0 - eps) * scale[:, 0]
        if eps:
            grad_z -= (eps / classes) * scale
        return grad_z.reshape(logits.shape)


def cross_entropy(logits: Tensor, targets, ignore_index: int | None = None,
                  reduction: str = "mean", label_smoothing: float = 0.0, *,
                  weight=None) -> Tensor:
    """Softmax cross-entropy between `logits` (..., C) and integer class `targets` (...).

    ℓ_i = (1 − ε)·(−log p_{i,t_i}) + ε·mean_c(−log p_{i,c}), p = softmax(logits), ε =
    label_smoothing. Positions whose target equals `ignore_index` contribute 0 and no gradient;
    "mean" averages over the other positions (PyTorch's rule), "sum" adds, "none" returns (...).
    Stable for logits as large as 1e4. When every target is ignored, "mean" gives 0 (not the
    NaN of 0/0).

    `weight` (C,) weighs each class, as PyTorch's: ℓ_i = (1 − ε)(−w_{t_i} log p_{i,t_i}) +
    (ε/C) Σ_c (−w_c log p_{i,c}), and "mean" divides by Σ w_{t_i}. Float `targets` of the
    logits' shape are class probabilities: ℓ_i = −Σ_c w_c q_{i,c} log p_{i,c} (q smoothed by
    ε), averaged over positions by "mean".
    """
    _check_reduction(reduction, "cross_entropy")
    if logits.ndim == 0:
        raise ValueError("cross_entropy: logits must have a class axis, got a 0-d tensor")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}")
    if _are_probabilities(targets, logits):
        if ignore_index is not None:
            raise ValueError("cross_entropy: ignore_index applies to class-index targets, not "
                             "to probability targets")
        return _soft_cross_entropy(logits, targets, weight, reduction, float(label_smoothing))
    if weight is not None:
        return _weighted_nll(mg.log_softmax(logits, axis=-1), targets, weight, ignore_index,
                            reduction, float(label_smoothing), "cross_entropy")
    t = _targets_array(logits, targets, ignore_index, "cross_entropy")
    return CrossEntropy.apply(logits, targets=t.reshape(-1), ignore_index=ignore_index,
                              reduction=reduction, label_smoothing=float(label_smoothing))


def _are_probabilities(targets, logits: Tensor) -> bool:
    """Are these targets class probabilities (floats of the logits' shape), not indices?"""
    dtype = getattr(targets, "dtype", None)
    if dtype is None:
        dtype = np.asarray(targets).dtype
    shape = targets.shape if hasattr(targets, "shape") else np.shape(targets)
    return np.dtype(dtype).kind == "f" and tuple(shape) == tuple(logits.shape)


def _targets_array(scores: Tensor, targets, ignore_index, op: str):
    """Targets as an integer array on the scores' device, checked for shape and range."""
    t = _as_index_tensor(targets, scores.device, op)
    classes = scores.shape[-1]
    if tuple(t.shape) != tuple(scores.shape[:-1]):
        raise ValueError(f"{op}: targets shape {tuple(t.shape)} must equal the input shape "
                         f"without its class axis, {tuple(scores.shape[:-1])} (input "
                         f"{tuple(scores.shape)})")
    data = t.data
    kept = data if ignore_index is None else data[data != ignore_index]
    # one reduction for both bounds: read as unsigned, a negative target is a huge number
    unsigned = kept.view(np.dtype(f"u{kept.dtype.itemsize}")) if kept.dtype.kind == "i" else kept
    if kept.size and int(unsigned.max()) >= classes:
        bad = int(kept.min()) if int(kept.min()) < 0 else int(kept.max())
        raise ValueError(f"{op}: target {bad} is out of range for {classes} classes (targets "
                         f"must lie in [0, {classes})"
                         + (")" if ignore_index is None else f" or equal ignore_index "
                            f"{ignore_index})"))
    return data


def nll_loss(log_probs: Tensor, targets, ignore_index: int | None = None,
             reduction: str = "mean", *, weight=None) -> Tensor:
    """Negative log-likelihood: ℓ_i = −log_probs[i, t_i], for log_probs (..., C) and targets
    (...); ignored targets contribute 0, "mean" averages over the kept ones. With class
    weights `weight` (C,), ℓ_i = −w_{t_i} log_probs[i, t_i] and "mean" divides by Σ w_{t_i},
    as PyTorch's."""
    _check_reduction(reduction, "nll_loss")
    if log_probs.ndim == 0:
        raise ValueError("nll_loss: log_probs must have a class axis, got a 0-d tensor")
    if weight is not None:
        return _weighted_nll(log_probs, targets, weight, ignore_index, reduction, 0.0,
                            "nll_loss")
    t = _targets_array(log_probs, targets, ignore_index, "nll_loss").reshape(-1)
    xp = log_probs.xp
    classes = log_probs.shape[-1]
    kept = xp.ones(t.shape, dtype=bool) if ignore_index is None else t != ignore_index
    safe = xp.where(kept, t, 0)
    rows = log_probs.reshape(-1, classes)[xp.arange(t.shape[0]), safe]    # (N,)
    loss = -mg.where(kept, rows, 0.0)
    if reduction == "none":
        return loss.reshape(log_probs.shape[:-1])
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / max(int(kept.sum()), 1)


def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """Mean squared error: ℓ = (input − target)², averaged ("mean"), added ("sum") or
    elementwise ("none"). Shapes must match (no silent broadcasting)."""
    _check_reduction(reduction, "mse_loss")
    target = _target_like(input, target, "mse_loss")
    diff = input - target
    return _reduce(diff * diff, reduction)


class BinaryCrossEntropyWithLogits(_FusedFunction):
    """ℓ = −w·[p·y·log σ(z) + (1 − y)·log(1 − σ(z))] for logits z and targets y, with weight w
    and pos_weight p (1 when absent), reduced by "mean" (over all elements), "sum" or "none".

    With softplus(x) = log(1 + eˣ) = log1p(e^(−|x|)) + max(x, 0), which never overflows,
    −log σ(z) = softplus(−z) and −log(1 − σ(z)) = softplus(z), so

        ℓ = w·[p·y·softplus(−z) + (1 − y)·softplus(z)],

    a sum of non-negative terms for y ∈ [0, 1] (a tiny loss keeps its digits). The kinks of
    |z| and max(±z, 0) cancel in softplus, so its derivative σ holds at z = 0 too (σ(0) = ½):

        ∂ℓ/∂z = w·(L·σ(z) − p·y),  L = 1 + (p − 1)·y   (w·(σ(z) − y) without pos_weight)
        ∂ℓ/∂y = w·(p·softplus(−z) − softplus(z))       (−w·z without pos_weight)
        ∂ℓ/∂w = ℓ/w,   ∂ℓ/∂p = w·y·softplus(−z)

    Inputs: z, y (z's shape), then w and p when present (each broadcastable to z's shape).
    """

    needs_output = False

    def __init__(self, reduction: str, has_weight: bool, has_pos_weight: bool):
        self.reduction = reduction
        self.has_weight, self.has_pos_weight = has_weight, has_pos_weight

    def _extras(self, values):
        """(w, p) from the inputs after z and y, None where absent."""
        weight = values[0] if self.has_weight else None
        pos_weight = values[-1] if self.has_pos_weight else None
        return weight, pos_weight

    def forward(self, z, y, *extras):
        """z (...) logits, y (...) targets, then w and p when present: arrays. Returns the
        loss: () for "mean"/"sum", z's shape for "none"."""
        xp = self.xp
        weight, pos_weight = self._extras(extras)
        e = xp.exp(-xp.abs(z))                               # e^(−|z|) ∈ (0, 1]: no overflow
        inv = 1 / (1 + e)
        self.save_for_backward(xp.where(z >= 0, inv, e * inv))   # σ(z), stable both ways
        positive, negative = _softplus_pair(xp, z, xp.log1p(e))
        py = y if pos_weight is None else pos_weight * y
        loss = py * positive + (1 - y) * negative
        if weight is not None:
            loss = loss * weight
        if self.reduction == "none":
            return loss
        total = loss.sum() if self.reduction == "sum" else loss.mean()
        return xp.asarray(total, dtype=loss.dtype)

    def _gradients(self, grad, on_arrays: bool):
        if not on_arrays:
            # recording a graph (create_graph): differentiate the same loss built from
            # smooth minigrad operations
            def rebuild(*inputs):
                return _bce_with_logits_reference(*inputs, self.reduction, self.has_weight,
                                                  self.has_pos_weight)
            return recorded_gradients(self, rebuild, grad, range(len(self.inputs)))
        xp = self.xp
        z, y = self.inputs[0].data, self.inputs[1].data
        weight, pos_weight = self._extras([t.data for t in self.inputs[2:]])
        needs = [t.requires_grad for t in self.inputs]
        (sigma,) = self.saved_tensors
        # ∂L/∂ℓ_i: one number for "sum" and "mean" (÷ N), z's shape for "none"
        upstream = grad / z.size if self.reduction == "mean" else grad
        weighted = upstream if weight is None else upstream * weight
        py = y if pos_weight is None else pos_weight * y
        grads = [None] * len(self.inputs)
        if needs[0]:
            # ∂ℓ/∂z = w·(L·σ(z) − p·y), L·σ − p·y = (1 − y + p·y)·σ − p·y
            core = sigma - y if pos_weight is None else (1 - y + py) * sigma - py
            grads[0] = xp.broadcast_to(core * weighted, z.shape)
        if any(needs[1:]):
            positive, negative = _softplus_pair(xp, z, xp.log1p(xp.exp(-xp.abs(z))))
            if needs[1]:
                # ∂ℓ/∂y = w·(p·softplus(−z) − softplus(z)) = −w·z when p = 1
                core = -z if pos_weight is None else pos_weight * positive - negative
                grads[1] = core * weighted
            if self.has_weight and needs[2]:
                grads[2] = (py * positive + (1 - y) * negative) * upstream     # ℓ/w
            if self.has_pos_weight and needs[-1]:
                grads[-1] = y * positive * weighted          # w·y·softplus(−z)
        return tuple(grads)


def _softplus_pair(xp, z, log1p_e):
    """(softplus(−z), softplus(z)) = (−log σ(z), −log(1 − σ(z))), given log1p(e^(−|z|))."""
    return log1p_e + xp.maximum(-z, 0), log1p_e + xp.maximum(z, 0)


def _bce_with_logits_reference(z, y, *rest):
    """BinaryCrossEntropyWithLogits from differentiable minigrad operations: softplus(±z) is
    logsumexp([0, ±z]), whose gradient ±σ(±z) is right at z = 0 as well (σ(0) = ½)."""
    *extras, reduction, has_weight, has_pos_weight = rest
    weight = extras[0] if has_weight else None
    pos_weight = extras[-1] if has_pos_weight else None
    zero = mg.zeros_like(z)
    positive = mg.logsumexp(mg.stack([zero, -z], axis=-1), axis=-1)     # −log σ(z)
    negative = mg.logsumexp(mg.stack([zero, z], axis=-1), axis=-1)      # −log(1 − σ(z))
    py = y if pos_weight is None else pos_weight * y
    loss = py * positive + (1 - y) * negative
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(logits: Tensor, target, weight=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """Sigmoid and binary cross-entropy in one stable primitive, as PyTorch defines them:

        ℓ = −w·[p·y·log σ(z) + (1 − y)·log(1 − σ(z))],

    for logits z and targets y ∈ [0, 1] of one shape; `weight` w rescales each element and
    `pos_weight` p the positive term (e.g. a per-class (C,) array: negatives/positives), both
    broadcastable to z's shape. "mean" averages over all elements, "sum" adds, "none" keeps
    z's shape. The gradient is w·((1 + (p − 1)y)·σ(z) − p·y), which is w·(½ − y) at z = 0.
    Stable for |z| up to 1e4 and beyond.
    """
    op = "binary_cross_entropy_with_logits"
    _check_reduction(reduction, op)
    target = _target_like(logits, target, op, "logits")
    inputs = [logits, target]
    for name, extra in (("weight", weight), ("pos_weight", pos_weight)):
        if extra is None:
            continue
        if isinstance(extra, str):
            raise TypeError(f"{op}: {name} must be a Tensor or an array, got the string "
                            f"{extra!r} (pass reduction= by keyword)")
        if not isinstance(extra, Tensor):                    # data takes the logits' dtype
            extra = mg.tensor(extra, dtype=logits.dtype, device=logits.device)
        try:
            broadcast = np.broadcast_shapes(tuple(extra.shape), tuple(logits.shape))
        except ValueError:
            broadcast = None
        if broadcast != tuple(logits.shape):
            raise ValueError(f"{op}: {name} shape {tuple(extra.shape)} does not broadcast to "
                             f"the logits shape {tuple(logits.shape)}")
        inputs.append(extra)
    return BinaryCrossEntropyWithLogits.apply(*inputs, reduction=reduction,
                                              has_weight=weight is not None,
                                              has_pos_weight=pos_weight is not None)


def l1_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """Mean absolute error: ℓ = |input − target|, reduced as in mse_loss. At input = target
    the gradient is 0 (sign(0) = 0, as in PyTorch)."""
    _check_reduction(reduction, "l1_loss")
    target = _target_like(input, target, "l1_loss")
    return _reduce(mg.abs(input - target), reduction)


def smooth_l1_loss(input: Tensor, target, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """ℓ = ½d²/β where |d| < β, |d| − ½β elsewhere (d = input − target), reduced as in
    mse_loss. The gradient d/β inside and sign(d) outside meet at |d| = β (±1 there) and is 0
    at d = 0; β = 0 is l1_loss, as in PyTorch."""
    _check_reduction(reduction, "smooth_l1_loss")
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    target = _target_like(input, target, "smooth_l1_loss")
    if beta == 0:
        return l1_loss(input, target, reduction)
    return _reduce(_quadratic_then_linear(input - target, float(beta), 0.5 / beta, 1.0),
                   reduction)


def huber_loss(input: Tensor, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """ℓ = ½d² where |d| < δ, δ·(|d| − ½δ) elsewhere (d = input − target), reduced as in
    mse_loss; huber_loss = δ·smooth_l1_loss with β = δ. The gradient d inside and δ·sign(d)
    outside meet at |d| = δ (±δ there) and is 0 at d = 0, as in PyTorch."""
    _check_reduction(reduction, "huber_loss")
    if not delta > 0:
        raise ValueError(f"huber_loss: delta must be > 0, got {delta}")
    target = _target_like(input, target, "huber_loss")
    return _reduce(_quadratic_then_linear(input - target, float(delta), 0.5, float(delta)),
                   reduction)


def _quadratic_then_linear(d: Tensor, edge: float, curvature: float, slope: float) -> Tensor:
    """curvature·d² where |d| < edge, slope·(|d| − ½·edge) elsewhere (the two meet at the
    edge when curvature = slope / (2·edge)). The square reads d clipped to [−edge, edge]: the
    same value where it is chosen, and elsewhere finite, so its unused gradient (0 times the
    clipped d) can never be 0·inf = NaN when d is huge or infinite."""
    magnitude = mg.abs(d)
    inside = mg.clip(d, -edge, edge)
    quadratic = curvature * (inside * inside)
    linear = slope * (magnitude - 0.5 * edge)
    return mg.where(magnitude < edge, quadratic, linear)


from .losses import (binary_cross_entropy, cosine_embedding_loss,  # noqa: E402
                     cosine_similarity, kl_div)
from .losses import soft_cross_entropy as _soft_cross_entropy  # noqa: E402
from .losses import weighted_nll as _weighted_nll  # noqa: E402
from .attention_functional import (attention_weights, causal_mask,  # noqa: E402
                                   masked_softmax, padding_mask,
                                   scaled_dot_product_attention)
