"""More losses, as PyTorch defines them: cross-entropy with class weights or probability
targets, nll_loss with weights, binary cross-entropy on probabilities, KL divergence, cosine
similarity and the cosine embedding loss. `nn.functional` re-exports them (and routes its
`cross_entropy` and `nll_loss` here when weights or probability targets are given).

Most are compositions of minigrad operations, so their gradients are those operations'. Binary
cross-entropy on probabilities is one primitive: log p at p = 0 is −inf, clamped to −100 as
PyTorch does, and the composition would give 0·inf = NaN there; its gradient is PyTorch's
(p − y)/max(p(1 − p), 10⁻¹²).
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import Tensor

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


def weighted_nll(log_probs: Tensor, targets, weight, ignore_index, reduction: str,
                 label_smoothing: float, op: str) -> Tensor:
    """The loss of log-probabilities (..., C) at integer targets (...) with class weights w:

        ℓ_i = (1 − ε)·(−w_{t_i} log p_{i,t_i}) + (ε/C)·Σ_c (−w_c log p_{i,c}),

    0 where t_i = ignore_index; "mean" divides Σ ℓ_i by Σ w_{t_i} over the kept positions
    (PyTorch's rule, which makes the unweighted mean the average over kept positions)."""
    from .functional import _targets_array
    t = _targets_array(log_probs, targets, ignore_index, op).reshape(-1)
    xp = log_probs.xp
    classes = log_probs.shape[-1]
    weight = mg.ones(classes, dtype=log_probs.dtype, device=log_probs.device) if weight is None \
        else _class_weight(weight, log_probs, op)
    kept = xp.ones(t.shape, dtype=bool) if ignore_index is None else t != ignore_index
    safe = xp.where(kept, t, 0)
    rows = log_probs.reshape(-1, classes)                                 # (N, C)
    picked = rows[xp.arange(t.shape[0]), safe]                            # (N,)
    w_t = weight[safe]                                                    # (N,)
    loss = -(picked * w_t)
    if label_smoothing:
        spread = -(rows * weight).sum(axis=-1)                            # Σ_c −w_c log p_c
        loss = (1 - label_smoothing) * loss + (label_smoothing / classes) * spread
    loss = mg.where(kept, loss, 0.0)
    if reduction == "none":
        return loss.reshape(log_probs.shape[:-1])
    if reduction == "sum":
        return loss.sum()
    total_weight = mg.where(kept, w_t, 0.0).sum()
    return loss.sum() / mg.where(total_weight == 0, 1.0, total_weight)


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


def binary_cross_entropy(input: Tensor, target, weight=None, reduction: str = "mean") -> Tensor:
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


def kl_div(input: Tensor, target, reduction: str = "mean", log_target: bool = False) -> Tensor:
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


def _norm_at_least(x: Tensor, axis: int, eps: float) -> Tensor:
    """max(‖x‖₂, eps) along axis, as √max(‖x‖², eps²): the square root never sees 0, so the
    gradient at a zero vector is 0, not 0/0."""
    squared = (x * x).sum(axis=axis)
    return mg.sqrt(mg.where(squared < eps * eps, eps * eps, squared))


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1·x2 / (max(‖x1‖, ε)·max(‖x2‖, ε)) along `dim` (PyTorch's default dim 1), x1 and x2
    broadcasting; the axis is removed. A zero vector gives similarity 0 and finite
    gradients."""
    like = x1 if isinstance(x1, Tensor) else x2
    x1, x2 = _as_like(x1, like), _as_like(x2, like)
    shape = _broadcast(x1, x2, "cosine_similarity")
    x1, x2 = mg.broadcast_to(x1, shape), mg.broadcast_to(x2, shape)
    return (x1 * x2).sum(axis=dim) / (_norm_at_least(x1, dim, eps) *
                                       _norm_at_least(x2, dim, eps))


def _broadcast(a: Tensor, b: Tensor, op: str) -> tuple:
    try:
        return np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
    except ValueError:
        raise ValueError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} do not "
                         f"broadcast") from None


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target, margin: float = 0.0,
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
