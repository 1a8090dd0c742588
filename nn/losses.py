"""Every loss function, as PyTorch defines them: cross_entropy (integer targets, class
weights, probability targets, label smoothing), nll_loss, mse_loss, l1_loss, smooth_l1_loss,
huber_loss, binary_cross_entropy (on probabilities) and binary_cross_entropy_with_logits,
kl_div, cosine_similarity and cosine_embedding_loss. `nn.functional` re-exports them; their
modules (`nn.CrossEntropyLoss`, ...) are in loss_modules.py.

Most are compositions of minigrad operations, so their gradients are those operations'. Three
are primitives of their own. `cross_entropy` is fused for speed (it runs over the whole
vocabulary). `binary_cross_entropy_with_logits` is one primitive for correctness: composed
from relu and abs, the one-sided gradients of their kinks would give −y at logits exactly 0
instead of σ(0) − y. Binary cross-entropy on probabilities: log p at p = 0 is −inf, clamped to
−100 as PyTorch does, and the composition would give 0·inf = NaN there; its gradient is
PyTorch's (p − y)/max(p(1 − p), 10⁻¹²).

Losses with kinks follow PyTorch's conventions there: sign(0) = 0 for l1_loss, and
smooth_l1_loss and huber_loss take their linear piece from |d| = β (δ) on, where both pieces
have the same slope.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import Tensor

from ._checks import check_constant, check_ignore_index
from .layer_functions import _as_index_tensor

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str, op: str, allowed=_REDUCTIONS) -> None:
    if reduction not in allowed:
        raise ValueError(f"{op}: reduction must be one of {', '.join(map(repr, allowed))}, got "
                         f"{reduction!r}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.mean()


def _as_like(x, like: Tensor) -> Tensor:
    """x as a Tensor with like's dtype and device (arrays and lists), or x itself."""
    return x if isinstance(x, Tensor) else mg.tensor(x, dtype=like.dtype, device=like.device)


def _class_weight(weight, scores: Tensor, op: str) -> Tensor:
    weight = _as_like(weight, scores)
    if tuple(weight.shape) != (scores.shape[-1],):
        raise ValueError(f"{op}: weight must have one entry per class, shape "
                         f"({scores.shape[-1]},), got {tuple(weight.shape)}")
    return weight


def _target_like(input: Tensor, target, op: str, input_name: str = "input") -> Tensor:
    """`target` as a Tensor (array data takes input's dtype and device), checked to have
    input's shape: an elementwise loss never broadcasts silently."""
    if not isinstance(target, Tensor):
        target = mg.tensor(target, dtype=input.dtype, device=input.device)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: {input_name} shape {tuple(input.shape)} and target shape "
                         f"{tuple(target.shape)} differ")
    return target


class CrossEntropy(mg.FusedFunction):
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

    # ∂ℓ_i/∂z_i = p_i − q_i, q_i = (1 − ε)·onehot(t_i) + ε/C the smoothed target

    def recorded_backward(self, grad):
        # recording a graph (create_graph): p must stay a function of the logits
        (logits,) = self.inputs
        xp = self.xp
        probs, safe_targets, kept, count = self.saved_tensors
        n, classes = probs.shape
        eps = self.smoothing
        q = xp.full((n, classes), eps / classes, dtype=probs.dtype)
        q[xp.arange(n), safe_targets] += 1.0 - eps
        upstream = grad.reshape(-1, 1) if self.reduction == "none" else grad
        p_minus_q = mg.softmax(logits.reshape(-1, classes), axis=-1) - q
        return (p_minus_q * (upstream * self._row_weights())).reshape(logits.shape)

    def array_backward(self, grad):
        # plain backward: the same formula on arrays, subtracting q in place (no dense q)
        (logits,) = self.inputs
        xp = self.xp
        probs, safe_targets, kept, count = self.saved_tensors
        n, classes = probs.shape
        rows = xp.arange(n)
        eps = self.smoothing
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
                  weight=None, axis: int | None = None, dim: int | None = None) -> Tensor:
    """Softmax cross-entropy between `logits` (..., C) and integer class `targets` (...).

    The class axis is the last one unless `axis` (or `dim`) names another: `axis=1` reads
    PyTorch's layout (N, C, d1, ...) with targets (N, d1, ...), and "none" then returns
    (N, d1, ...) as PyTorch does. Without `axis`, logits of three or more axes whose targets
    fit both layouts (integer targets when every axis after the first has the same length,
    probability targets always) raise and say which to write: the two readings give
    different losses.

    ℓ_i = (1 − ε)·(−log p_{i,t_i}) + ε·mean_c(−log p_{i,c}), p = softmax(logits), ε =
    label_smoothing. Positions whose target equals `ignore_index` contribute 0 and no gradient;
    "mean" averages over the other positions (PyTorch's rule), "sum" adds, "none" returns (...).
    `ignore_index` is an int or None (the default: nothing skipped, where PyTorch skips -100); a
    non-int there raises, since PyTorch's third positional argument is `weight`.
    Stable for logits as large as 1e4. When every target is ignored, "mean" gives 0 (not the
    NaN of 0/0).

    `weight` (C,) weighs each class, as PyTorch's: ℓ_i = (1 − ε)(−w_{t_i} log p_{i,t_i}) +
    (ε/C) Σ_c (−w_c log p_{i,c}), and "mean" divides by Σ w_{t_i}. Float `targets` of the
    logits' shape are class probabilities: ℓ_i = −Σ_c w_c q_{i,c} log p_{i,c} (q smoothed by
    ε), averaged over positions by "mean".
    """
    _check_reduction(reduction, "cross_entropy")
    ignore_index = check_ignore_index("cross_entropy", ignore_index)
    if logits.ndim == 0:
        raise ValueError("cross_entropy: logits must have a class axis, got a 0-d tensor")
    label_smoothing = check_constant("cross_entropy", "label_smoothing", label_smoothing)
    logits, targets = _classes_last(logits, targets, axis, dim, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}")
    if _are_probabilities(targets, logits):
        if ignore_index is not None:
            raise ValueError("cross_entropy: ignore_index applies to class-index targets, not "
                             "to probability targets")
        return soft_cross_entropy(logits, targets, weight, reduction, label_smoothing)
    if weight is not None:
        return weighted_nll(mg.log_softmax(logits, axis=-1), targets, weight, ignore_index,
                            reduction, label_smoothing, "cross_entropy")
    t = _targets_array(logits, targets, ignore_index, "cross_entropy")
    return CrossEntropy.apply(logits, targets=t.reshape(-1), ignore_index=ignore_index,
                              reduction=reduction, label_smoothing=label_smoothing)


def _classes_last(scores: Tensor, targets, axis, dim, op: str):
    """(scores, targets) with the class axis of `scores` moved last (and that of probability
    targets with it). With no axis given the class axis is the last, and a reading that
    PyTorch's layout (N, C, d1, ...) would also fit raises: see cross_entropy."""
    if axis is not None and dim is not None:
        raise TypeError(f"{op}: got axis={axis!r} and dim={dim!r}; they name the same argument "
                        f"(NumPy's and PyTorch's spelling), pass one of them")
    axis = dim if axis is None else axis
    ndim = scores.ndim
    probabilities = _are_probabilities(targets, scores)
    if axis is None:
        if ndim >= 3:
            shape = tuple(scores.shape)
            t_shape = tuple(targets.shape if hasattr(targets, "shape") else np.shape(targets))
            last, torch_like = shape[:-1], shape[:1] + shape[2:]
            if probabilities or t_shape == last == torch_like:
                raise ValueError(
                    f"{op}: input {shape} and targets {t_shape} fit two layouts that give "
                    f"different losses: classes on the last axis (minigrad's (..., C)) or on "
                    f"axis 1 (PyTorch's (N, C, d1, ...)); say which with axis=-1 or axis=1")
            if t_shape == torch_like:
                raise ValueError(
                    f"{op}: targets {t_shape} fit input {shape} with the classes on axis 1 "
                    f"(PyTorch's layout (N, C, d1, ...)), but the class axis is the last one "
                    f"unless given: pass axis=1")
        return scores, targets
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool) \
            or not -ndim <= axis < ndim:
        raise ValueError(f"{op}: axis {axis!r} is not an axis of input {tuple(scores.shape)}")
    axis = int(axis) % ndim
    if axis == ndim - 1:
        return scores, targets
    order = tuple(a for a in range(ndim) if a != axis) + (axis,)
    if probabilities:
        targets = _as_like(targets, scores).permute(*order)
    return scores.permute(*order), targets


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
        message = (f"{op}: target {bad} is out of range for {classes} classes (targets must "
                   f"lie in [0, {classes})"
                   + (")" if ignore_index is None else f" or equal ignore_index {ignore_index})"))
        if ignore_index is None and bad == -100:
            # PyTorch skips −100 by default; here nothing is skipped unless asked
            message += (f"; minigrad's default ignore_index is None, PyTorch's is -100: pass "
                        f"ignore_index=-100 to skip these targets as PyTorch does")
        raise ValueError(message)
    return data


def nll_loss(log_probs: Tensor, targets, ignore_index: int | None = None,
             reduction: str = "mean", *, weight=None, axis: int | None = None,
             dim: int | None = None) -> Tensor:
    """Negative log-likelihood: ℓ_i = −log_probs[i, t_i], for log_probs (..., C) and targets
    (...); ignored targets contribute 0, "mean" averages over the kept ones. With class
    weights `weight` (C,), ℓ_i = −w_{t_i} log_probs[i, t_i] and "mean" divides by Σ w_{t_i},
    as PyTorch's. The class axis is the last unless `axis` (or `dim`) names another, with
    cross_entropy's rule for inputs that fit PyTorch's layout too."""
    _check_reduction(reduction, "nll_loss")
    ignore_index = check_ignore_index("nll_loss", ignore_index)
    if log_probs.ndim == 0:
        raise ValueError("nll_loss: log_probs must have a class axis, got a 0-d tensor")
    log_probs, targets = _classes_last(log_probs, targets, axis, dim, "nll_loss")
    if weight is not None:
        return weighted_nll(log_probs, targets, weight, ignore_index, reduction, 0.0,
                            "nll_loss")
    kept, safe = _kept_targets(log_probs, targets, ignore_index, "nll_loss")
    picked = _picked(log_probs, safe)                                     # (N,)
    loss = -picked if kept is None else -mg.where(kept, picked, 0.0)
    if reduction == "none":
        return loss.reshape(log_probs.shape[:-1])
    if reduction == "sum":
        return loss.sum()
    if kept is None:
        return loss.sum() / max(loss.shape[0], 1)
    count = mg.maximum(mg.where(kept, 1.0, 0.0).sum(), 1.0)          # float32: exact counts
    return (loss.sum() / count).astype(loss.dtype)


def _kept_targets(scores: Tensor, targets, ignore_index, op: str):
    """(kept, safe) for integer targets, flattened to (N,), after the checks: kept, a bool
    tensor (None when nothing is ignored), and the targets with 0 in the ignored places. Both
    come from operations on the targets, so a compiled step computes them again from each
    call's targets."""
    t = _as_index_tensor(targets, scores.device, op)
    _targets_array(scores, t, ignore_index, op)                           # shape and range
    flat = t.reshape(-1)
    if ignore_index is None:
        return None, flat
    kept = flat != ignore_index
    return kept, mg.where(kept, flat, 0)


def _picked(scores: Tensor, safe: Tensor) -> Tensor:
    """scores (..., C) read at the class `safe` (N,) of each row: (N,)."""
    rows = scores.reshape(-1, scores.shape[-1])                           # (N, C)
    return mg.take_along_axis(rows, safe.unsqueeze(-1), 1).reshape(-1)


def mse_loss(input: Tensor, target, *, reduction: str = "mean") -> Tensor:
    """Mean squared error: ℓ = (input − target)², averaged ("mean"), added ("sum") or
    elementwise ("none"). Shapes must match (no silent broadcasting)."""
    _check_reduction(reduction, "mse_loss")
    target = _target_like(input, target, "mse_loss")
    diff = input - target
    return _reduce(diff * diff, reduction)


class BinaryCrossEntropyWithLogits(mg.FusedFunction):
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

    def recorded_backward(self, grad):
        # recording a graph (create_graph): differentiate the same loss built from smooth
        # minigrad operations
        def rebuild(*inputs):
            return _bce_with_logits_reference(*inputs, self.reduction, self.has_weight,
                                              self.has_pos_weight)
        return self.recorded_gradients(rebuild, grad)

    def array_backward(self, grad):
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


def binary_cross_entropy_with_logits(logits: Tensor, target, weight=None, *,
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


def l1_loss(input: Tensor, target, *, reduction: str = "mean") -> Tensor:
    """Mean absolute error: ℓ = |input − target|, reduced as in mse_loss. At input = target
    the gradient is 0 (sign(0) = 0, as in PyTorch)."""
    _check_reduction(reduction, "l1_loss")
    target = _target_like(input, target, "l1_loss")
    return _reduce(mg.abs(input - target), reduction)


def smooth_l1_loss(input: Tensor, target, *, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """ℓ = ½d²/β where |d| < β, |d| − ½β elsewhere (d = input − target), reduced as in
    mse_loss. The gradient d/β inside and sign(d) outside meet at |d| = β (±1 there) and is 0
    at d = 0; β = 0 is l1_loss, as in PyTorch."""
    _check_reduction(reduction, "smooth_l1_loss")
    beta = check_constant("smooth_l1_loss", "beta", beta)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    target = _target_like(input, target, "smooth_l1_loss")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    return _reduce(_quadratic_then_linear(input - target, beta, 0.5 / beta, 1.0), reduction)


def huber_loss(input: Tensor, target, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    """ℓ = ½d² where |d| < δ, δ·(|d| − ½δ) elsewhere (d = input − target), reduced as in
    mse_loss; huber_loss = δ·smooth_l1_loss with β = δ. The gradient d inside and δ·sign(d)
    outside meet at |d| = δ (±δ there) and is 0 at d = 0, as in PyTorch."""
    _check_reduction(reduction, "huber_loss")
    delta = check_constant("huber_loss", "delta", delta)
    if not delta > 0:
        raise ValueError(f"huber_loss: delta must be > 0, got {delta}")
    target = _target_like(input, target, "huber_loss")
    return _reduce(_quadratic_then_linear(input - target, delta, 0.5, delta), reduction)


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



def weighted_nll(log_probs: Tensor, targets, weight, ignore_index, reduction: str,
                 label_smoothing: float, op: str) -> Tensor:
    """The loss of log-probabilities (..., C) at integer targets (...) with class weights w:

        ℓ_i = (1 − ε)·(−w_{t_i} log p_{i,t_i}) + (ε/C)·Σ_c (−w_c log p_{i,c}),

    0 where t_i = ignore_index; "mean" divides Σ ℓ_i by Σ w_{t_i} over the kept positions
    (PyTorch's rule, which makes the unweighted mean the average over kept positions). With no
    kept position the mean is 0; kept positions whose weights sum to 0 divide by that 0, as in
    PyTorch (NaN or inf: no finite value is the mean)."""
    classes = log_probs.shape[-1]
    weight = mg.ones(classes, dtype=log_probs.dtype, device=log_probs.device) if weight is None \
        else _class_weight(weight, log_probs, op)
    kept, safe = _kept_targets(log_probs, targets, ignore_index, op)
    picked = _picked(log_probs, safe)                                     # (N,)
    w_t = mg.take_along_axis(weight, safe, 0)                             # (N,)
    loss = -(picked * w_t)
    if label_smoothing:
        rows = log_probs.reshape(-1, classes)                             # (N, C)
        spread = -(rows * weight).sum(axis=-1)                            # Σ_c −w_c log p_c
        loss = (1 - label_smoothing) * loss + (label_smoothing / classes) * spread
    if kept is not None:
        loss, w_t = mg.where(kept, loss, 0.0), mg.where(kept, w_t, 0.0)
    if reduction == "none":
        return loss.reshape(log_probs.shape[:-1])
    if reduction == "sum":
        return loss.sum()
    if kept is None:
        return loss.sum() / w_t.sum()
    # every target ignored: 0 (Σ w_t is 0 there too, so it is not divided by)
    some = mg.where(kept, 1.0, 0.0).sum() > 0
    return mg.where(some, loss.sum() / mg.where(some, w_t.sum(), 1.0), 0.0)


def soft_cross_entropy(logits: Tensor, probabilities, weight, reduction: str,
                       label_smoothing: float, op: str = "cross_entropy") -> Tensor:
    """Cross-entropy with probability targets q (..., C) (class probabilities, e.g. a teacher's
    or mixup's): ℓ_i = −Σ_c w_c q′_{i,c} log p_{i,c}, q′ = (1 − ε) q + ε/C; "mean" averages
    over positions (PyTorch's rule for probability targets, weighted or not)."""
    q = _as_like(probabilities, logits)
    if tuple(q.shape) != tuple(logits.shape):
        raise ValueError(f"{op}: probability targets must have the logits' shape "
                         f"{tuple(logits.shape)}, got {tuple(q.shape)}")
    classes = logits.shape[-1]
    if label_smoothing:
        q = (1 - label_smoothing) * q + label_smoothing / classes
    log_p = mg.log_softmax(logits, axis=-1)
    terms = q * log_p if weight is None else q * log_p * _class_weight(weight, logits, op)
    return _reduce(-terms.sum(axis=-1), reduction)


class BinaryCrossEntropy(mg.Function):
    """ℓ = −[y·max(log p, −100) + (1 − y)·max(log(1 − p), −100)] elementwise, for
    probabilities p ∈ [0, 1] and targets y, with PyTorch's clamp of the logs at −100.

        ∂ℓ/∂p = (p − y) / max(p(1 − p), 10⁻¹²)      (PyTorch's, finite at p = 0 and 1)
        ∂ℓ/∂y = max(log(1 − p), −100) − max(log p, −100)
    """

    needs_output = False

    def forward(self, p, y):
        xp = self.xp
        with np.errstate(divide="ignore"):          # log 0 = −inf, clamped below (NumPy's flag)
            log_p, log_q = xp.log(p), xp.log1p(-p)
        return -(y * xp.maximum(log_p, -100) + (1 - y) * xp.maximum(log_q, -100))

    def backward(self, grad):
        g, p, y = self.values(grad, *self.inputs)
        xp = self.ops
        data = self.inputs[0].data
        tiny = data * (1 - data) < 1e-12                          # constants from the data
        low_p, low_q = data < 3.72e-44, 1 - data < 3.72e-44       # log < −100: clamped
        grad_p = g * (p - y) / xp.where(tiny, 1e-12, p * (1 - p))
        grad_y = None
        if self.inputs[1].requires_grad:
            log_p = xp.where(low_p, -100.0, xp.log(xp.where(low_p, 1.0, p)))
            log_q = xp.where(low_q, -100.0, xp.log(xp.where(low_q, 0.5, 1 - p)))
            grad_y = g * (log_q - log_p)
        # ∂ℓ/∂p = (p − y)/max(p(1 − p), 10⁻¹²), ∂ℓ/∂y = clamped log(1 − p) − clamped log p
        return grad_p, grad_y


def binary_cross_entropy(input: Tensor, target, weight=None, *,
                         reduction: str = "mean") -> Tensor:
    """Binary cross-entropy of probabilities p = `input` ∈ [0, 1] (after a sigmoid) against
    targets y of the same shape: ℓ = −w·[y log p + (1 − y) log(1 − p)], with the logs clamped
    at −100 as PyTorch does (so p = 0 or 1 gives a finite loss), `weight` w broadcastable to
    p's shape. Prefer binary_cross_entropy_with_logits on logits: it is stable for any logit.
    Gradient for p: w(p − y)/max(p(1 − p), 10⁻¹²), PyTorch's."""
    op = "binary_cross_entropy"
    _check_reduction(reduction, op)
    target = _as_like(target, input)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: input shape {tuple(input.shape)} and target shape "
                         f"{tuple(target.shape)} differ")
    data = input.data
    if data.size and (bool((data < 0).any()) or bool((data > 1).any())):
        raise ValueError(f"{op}: input must hold probabilities in [0, 1] (apply a sigmoid, or "
                         f"use binary_cross_entropy_with_logits); got values from "
                         f"{float(data.min())} to {float(data.max())}")
    loss = BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * _as_like(weight, input)
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target, *, reduction: str = "mean", log_target: bool = False) -> Tensor:
    """KL divergence terms as PyTorch's kl_div: `input` holds log-probabilities log q, `target`
    probabilities p (or log p with log_target=True), and ℓ = p·(log p − log q) elementwise,
    with 0·log 0 = 0. "batchmean" (Σℓ / input.shape[0], the true KL per sample) is what the
    definition asks for; "mean" averages over every element, as PyTorch's default does."""
    op = "kl_div"
    _check_reduction(reduction, op, _REDUCTIONS + ("batchmean",))
    target = _as_like(target, input)
    if log_target:
        loss = mg.exp(target) * (target - input)
    else:
        loss = mg.xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


def _norm_at_least(x: Tensor, axis: int, eps) -> Tensor:
    """max(‖x‖₂, eps) along axis, as √max(‖x‖², eps²): the square root never sees 0, so the
    gradient at a zero vector is 0, not 0/0."""
    squared = (x * x).sum(axis=axis)
    return mg.sqrt(mg.where(squared < eps * eps, eps * eps, squared))


def _unit_scale(x: Tensor, axis: int) -> Tensor:
    """max(1, max |x|) along axis (kept), a constant of the graph: x divided by it holds no
    element above 1, so ‖x‖² cannot overflow (float16 from |x| ≈ 256, float32 from ≈ 1e19,
    float64 from ≈ 1e154). 1 where the maximum is inf or NaN, which stay as they are."""
    top = mg.amax(mg.abs(x.detach()), axis=axis, keepdims=True)
    return mg.where((top > 1) & mg.isfinite(top), top, mg.ones_like(top))


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1·x2 / (max(‖x1‖, ε)·max(‖x2‖, ε)) along `dim` (PyTorch's default dim 1), x1 and x2
    broadcasting; the axis is removed. A zero vector gives similarity 0 and finite
    gradients.

    Each vector is first divided by s = max(1, max |x|), a constant: the quotient
    (x1/s1)·(x2/s2) / (max(‖x1/s1‖, ε/s1)·max(‖x2/s2‖, ε/s2)) equals the formula above for
    any fixed s, so value and gradient are exact, and large vectors do not overflow ‖x‖²
    (PyTorch's gives 0 or NaN there)."""
    like = x1 if isinstance(x1, Tensor) else x2
    x1, x2 = _as_like(x1, like), _as_like(x2, like)
    shape = _broadcast(x1, x2, "cosine_similarity")
    x1, x2 = mg.broadcast_to(x1, shape), mg.broadcast_to(x2, shape)
    s1, s2 = _unit_scale(x1, dim), _unit_scale(x2, dim)
    u1, u2 = x1 / s1, x2 / s2
    return (u1 * u2).sum(axis=dim) / (_norm_at_least(u1, dim, eps / s1.squeeze(dim)) *
                                       _norm_at_least(u2, dim, eps / s2.squeeze(dim)))


def _broadcast(a: Tensor, b: Tensor, op: str) -> tuple:
    try:
        return np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"broadcast") from None


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target, margin: float = 0.0, *,
                          reduction: str = "mean") -> Tensor:
    """ℓ = 1 − cos(x1, x2) where y = 1, max(0, cos(x1, x2) − margin) where y = −1, for x1, x2
    (N, D) (or (D,) with a 0-d y) and labels y ∈ {1, −1}; cos as PyTorch computes it here,
    x1·x2 / √((‖x1‖² + 10⁻¹²)(‖x2‖² + 10⁻¹²))."""
    op = "cosine_embedding_loss"
    _check_reduction(reduction, op)
    if input1.shape != input2.shape or input1.ndim not in (1, 2):
        raise ValueError(f"{op}: inputs must both be (N, D) or (D,), got shapes "
                         f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    y = target if isinstance(target, Tensor) else mg.tensor(target, device=input1.device)
    if tuple(y.shape) != tuple(input1.shape[:-1]):
        raise ValueError(f"{op}: target shape {tuple(y.shape)} must be "
                         f"{tuple(input1.shape[:-1])} for inputs of shape "
                         f"{tuple(input1.shape)}")
    dot = (input1 * input2).sum(axis=-1)
    cos = dot / mg.sqrt(((input1 * input1).sum(axis=-1) + 1e-12) *
                        ((input2 * input2).sum(axis=-1) + 1e-12))
    loss = mg.where(y == 1, 1 - cos, mg.relu(cos - margin))
    loss = mg.where((y == 1) | (y == -1), loss, 0.0)
    return _reduce(loss, reduction)
