"""Scaled dot-product attention as a function, and the masks that go with it.

    Attention(Q, K, V) = softmax(Q Kᵀ · scale) V,   scale = 1/√D by default

A mask is a bool Tensor or NumPy bool array that broadcasts to the scores' shape
(..., Lq, Lk), True where attention is ALLOWED. Masked scores become −inf before the softmax,
so their weights are exactly 0. A query whose keys are all masked gets all-zero weights, a zero
output and zero gradients (never NaN): minigrad's softmax maps an all −inf row to zeros.

This module uses only minigrad, so `nn.functional` and the attention layers can both import it.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad import Tensor


__all__ = ["scaled_dot_product_attention", "attention_weights", "AttentionWeights",
           "AttendValues", "masked_softmax", "causal_mask", "padding_mask"]


def check_mask(mask, scores_shape, op: str) -> Tensor | np.ndarray:
    """`mask` checked to be bool (a Tensor or NumPy array; nested lists become arrays) and to
    broadcast to `scores_shape` without growing it."""
    if isinstance(mask, list):
        mask = np.asarray(mask)
    if not isinstance(mask, Tensor) and not hasattr(mask, "dtype"):
        raise TypeError(f"{op}: mask must be a bool Tensor or NumPy bool array, got "
                        f"{type(mask).__name__}")
    if np.dtype(mask.dtype) != np.bool_:
        raise TypeError(f"{op}: mask must be bool (True = attention allowed), got dtype "
                        f"{mask.dtype}")
    try:
        out = np.broadcast_shapes(tuple(mask.shape), tuple(scores_shape))
    except ValueError:
        out = None
    if out != tuple(scores_shape):
        raise ValueError(f"{op}: mask of shape {tuple(mask.shape)} does not broadcast to the "
                         f"attention scores' shape {tuple(scores_shape)} (..., Lq, Lk)")
    return mask


def _forbidden(mask) -> Tensor | np.ndarray:
    """True where attention is NOT allowed: the positions that masked_fill sets to −inf."""
    return ~mask


class AttentionWeights(mg.FusedFunction):
    """w = softmax(scale · q kᵀ) over the last axis, with w = 0 where the mask is False: the
    scores, the mask and the softmax as one primitive.

    Inputs q (..., Lq, D), k (..., Lk, D) and optionally a bool mask broadcastable to
    (..., Lq, Lk); output w (..., Lq, Lk). Backward, with S the scores:

        ∂S = w ⊙ (g − Σ_j g_j w_j)      (softmax; 0 wherever w = 0, so masked scores get none)
        ∂q = scale · ∂S k,   ∂k = scale · ∂Sᵀ q

    `array_backward` computes this on arrays. When a graph of the backward is recorded
    (create_graph=True), `recorded_backward` rebuilds w from matmul, masked_fill and softmax
    and differentiates that.
    """

    def __init__(self, scale: float):
        self.scale = scale

    def forward(self, q, k, mask=None):
        xp = self.xp
        # scale q rather than the scores: Lq·D products instead of Lq·Lk
        q = q * xp.asarray(self.scale, dtype=q.dtype)
        k_t = k.swapaxes(-1, -2)
        blocks = _row_blocks(q, k)
        if blocks is None:                                   # in one piece
            return _softmax_rows(xp, q @ k_t, mask)           # (..., Lq, Lk)
        w = xp.empty(q.shape[:-1] + k.shape[-2:-1], dtype=q.dtype)
        if mask is not None:
            mask = xp.broadcast_to(mask, w.shape)
        for index, rows in blocks:                           # each block's passes in cache
            block = w[index + rows]
            xp.matmul(q[index + rows], k_t[index], out=block)
            _softmax_rows(xp, block, None if mask is None else mask[index + rows])
        return w

    def array_backward(self, grad):
        """The backward on arrays (grad: ∂L/∂w)."""
        xp = self.xp
        q, k = self.inputs[0].data, self.inputs[1].data
        w, g = self.output.data, grad
        # softmax: ∂S = w ⊙ (g − Σ_j g_j w_j); the row sums come from einsum, which makes no
        # (Lq, Lk) temporary, and the scale goes on the small (L, D) results
        row = xp.einsum("...ij,...ij->...i", g, w)[..., None]    # (..., Lq, 1)
        grad_s = g - row
        grad_s *= w
        scale = xp.asarray(self.scale, dtype=grad_s.dtype)
        grad_q = (grad_s @ k) * scale                        # (..., Lq, D)
        grad_k = (grad_s.swapaxes(-1, -2) @ q) * scale       # (..., Lk, D)
        return (grad_q, grad_k, None) if len(self.inputs) == 3 else (grad_q, grad_k)

    def recorded_backward(self, grad):
        """The same vector-Jacobian product from differentiable minigrad ops, used when
        create_graph records the backward."""
        def rebuild(q, k, mask=None):
            scores = mg.matmul(q * self.scale, k.swapaxes(-1, -2))
            return mg.softmax(scores if mask is None else
                              mg.masked_fill(scores, ~mask, -math.inf))
        return self.recorded_gradients(rebuild, grad, (0, 1))


def _softmax_rows(xp, w, mask):
    """w (scores, ..., Lk) turned into its masked softmax over the last axis, in place."""
    if mask is not None:
        w += xp.where(mask, 0.0, -math.inf).astype(w.dtype)   # −inf where not allowed
    top = w.max(axis=-1, keepdims=True)
    # subtract the row max: same softmax, no overflow; an all −inf row is shifted by 0
    w -= xp.where(xp.isfinite(top), top, 0.0).astype(w.dtype)
    xp.exp(w, out=w)
    total = w.sum(axis=-1, keepdims=True)
    w /= xp.where(total == 0, 1.0, total).astype(w.dtype)    # an all-masked row stays 0
    return w


# Scores larger than BLOCKED_ABOVE bytes are made, and differentiated, in blocks of query rows
# of about BLOCK_BYTES each: every pass of the softmax (and of its backward) then runs on rows
# still in cache, instead of streaming the whole (..., Lq, Lk) array through memory once per
# pass. At L = 1024 this takes about a quarter off attention's time.
BLOCK_BYTES = 2 ** 20
BLOCKED_ABOVE = 8 * 2 ** 20


def _row_blocks(q, k, *others):
    """Selections that tile the scores of q (..., Lq, D) and k (..., Lk, D) into blocks of
    about BLOCK_BYTES: (batch index, row slice) within one large (Lq, Lk) matrix, or a run of
    whole matrices along one batch axis when they are small. None when the scores are small
    enough to take in one piece, or the batch axes or dtypes differ (broadcasting is then left
    to NumPy)."""
    lead, lq, lk, itemsize = q.shape[:-2], q.shape[-2], k.shape[-2], q.dtype.itemsize
    if itemsize * lk * lq * math.prod(lead) <= BLOCKED_ABOVE or k.shape[:-2] != lead or \
            k.dtype != q.dtype or any(a.shape[:-2] != lead or a.dtype != q.dtype
                                      for a in others):
        return None
    inner, axis = lq * lk * itemsize, len(lead)      # bytes of whole trailing batch axes
    if inner >= BLOCK_BYTES:                          # rows of one matrix at a time
        rows = max(1, BLOCK_BYTES // (lk * itemsize))
        return [(index, (slice(start, start + rows),))
                for index in np.ndindex(*lead) for start in range(0, lq, rows)]
    while axis > 0 and inner * lead[axis - 1] <= BLOCK_BYTES:
        axis -= 1
        inner *= lead[axis]
    if axis == 0:
        return None
    count = BLOCK_BYTES // inner                      # matrices along batch axis `axis - 1`
    return [(index + (slice(start, start + count),), ())
            for index in np.ndindex(*lead[:axis - 1]) for start in range(0, lead[axis - 1], count)]


def attention_weights(q: Tensor, k: Tensor, mask=None, scale: float | None = None) -> Tensor:
    """softmax(scale · q kᵀ) with weight 0 where `mask` is False, as one primitive
    (AttentionWeights). q (..., Lq, D), k (..., Lk, D) -> (..., Lq, Lk); scale defaults to
    1/√D. A query with no allowed key gets all-zero weights."""
    if q.ndim < 2 or k.ndim < 2 or q.shape[-1] != k.shape[-1]:
        raise ValueError(f"attention_weights: q (..., Lq, D) and k (..., Lk, D) do not fit: got "
                         f"shapes {tuple(q.shape)} and {tuple(k.shape)}")
    return _weights(q, k, mask, scale, "attention_weights")[0]


def _weights(q: Tensor, k: Tensor, mask, scale: float | None, op: str):
    """(weights, mask as a Tensor or None, scale as a float) for q and k."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if mask is None:
        return AttentionWeights.apply(q, k, scale=scale), None, scale
    scores_shape = np.broadcast_shapes(tuple(q.shape[:-1]), tuple(k.shape[:-2]) + (1,)) \
        + (k.shape[-2],)                                     # (..., Lq, Lk)
    mask = check_mask(mask, scores_shape, op)
    if not isinstance(mask, Tensor):
        mask = mg.tensor(mask, device=q.device)
    return AttentionWeights.apply(q, k, mask, scale=scale), mask, scale


class AttendValues(mg.FusedFunction):
    """out = A v, where A = softmax(scale · q kᵀ) (masked) is the array AttentionWeights made
    from the same q, k and mask, optionally with dropout: out = (A ⊙ K) v, K = keep / (1 − p).

    Inputs q, k, v and optionally the mask; its backward goes straight to q, k and v, so the
    gradient never passes through the weights tensor. With P = ∂out vᵀ (..., Lq, Lk):

        ∂v = (A ⊙ K)ᵀ ∂out
        ∂A = P ⊙ K,   ∂S = A ⊙ (∂A − δ),   δ_i = Σ_j ∂A_ij A_ij = ∂out_i · out_i
        ∂q = scale · ∂S k,   ∂k = scale · ∂Sᵀ q

    δ is a row of Lq dot products of length Dv rather than a sum over an (Lq, Lk) product, and
    P is turned into ∂S in place. The weights tensor that scaled_dot_product_attention returns
    is AttentionWeights' output: if a loss also uses it, that node adds its own share to ∂q, ∂k.
    `backward`, for create_graph, rebuilds out from differentiable operations.
    """

    def __init__(self, scale: float, weights, keep=None, p: float = 0.0):
        self.scale, self.p = scale, p
        self.saved_tensors = (weights, keep)               # A, and dropout's bool keep mask

    def _keep_scaled(self, keep, dtype):
        return keep.astype(dtype) * self.xp.asarray(1.0 / (1.0 - self.p), dtype=dtype)

    def forward(self, q, k, v, mask=None):
        a, keep = self.saved_tensors
        dropped = a if keep is None else a * self._keep_scaled(keep, a.dtype)     # A ⊙ K
        self.save_for_backward(a, keep, dropped)
        return dropped @ v                                   # (..., Lq, Dv)

    def array_backward(self, grad):
        xp = self.xp
        q, k, v = (t.data for t in self.inputs[:3])
        weights, keep, dropped = self.saved_tensors
        needs_q, needs_k = self.inputs[0]._requires_grad, self.inputs[1]._requires_grad
        grad_v = dropped.swapaxes(-1, -2) @ grad if self.inputs[2]._requires_grad else None
        if not (needs_q or needs_k):
            return (None, None, grad_v) + (None,) * (len(self.inputs) - 3)
        out = self.output.data
        delta = xp.einsum("...d,...d->...", grad, out)[..., None]      # (..., Lq, 1)
        v_t = v.swapaxes(-1, -2)
        blocks = _row_blocks(q, k, v, grad, weights)
        if blocks is None:                                              # in one piece
            grad_s = self._score_gradient(grad, v_t, weights, keep, delta)
            scale = xp.asarray(self.scale, dtype=grad_s.dtype)
            grad_q = (grad_s @ k) * scale if needs_q else None             # (..., Lq, D)
            grad_k = (grad_s.swapaxes(-1, -2) @ q) * scale if needs_k else None  # (..., Lk, D)
            return (grad_q, grad_k, grad_v) + (None,) * (len(self.inputs) - 3)
        grad_q = xp.empty_like(q) if needs_q else None
        grad_k = xp.zeros_like(k) if needs_k else None
        for index, rows in blocks:                    # ∂S one block of rows at a time
            at = index + rows
            grad_s = self._score_gradient(grad[at], v_t[index], weights[at],
                                          None if keep is None else keep[at], delta[at])
            if needs_q:
                xp.matmul(grad_s, k[index], out=grad_q[at])
            if needs_k:
                rows_of_k = grad_k[index]
                rows_of_k += grad_s.swapaxes(-1, -2) @ q[at]
        scale = xp.asarray(self.scale, dtype=q.dtype)     # blocks: one dtype throughout
        for g in (grad_q, grad_k):
            if g is not None:
                g *= scale
        return (grad_q, grad_k, grad_v) + (None,) * (len(self.inputs) - 3)

    def _score_gradient(self, grad, v_t, weights, keep, delta):
        """∂S = A ⊙ (P ⊙ K − δ), P = ∂out vᵀ, made in P's buffer (for all rows or a block)."""
        grad_s = grad @ v_t
        if keep is not None:
            grad_s *= self._keep_scaled(keep, grad_s.dtype)
        grad_s -= delta
        grad_s *= weights
        return grad_s

    def recorded_backward(self, grad):
        """The same vector-Jacobian product from differentiable minigrad ops (create_graph)."""
        keep = self.saved_tensors[1]

        def rebuild(q, k, v, mask=None):
            weights = (AttentionWeights.apply(q, k, scale=self.scale) if mask is None else
                       AttentionWeights.apply(q, k, mask, scale=self.scale))
            if keep is not None:
                weights = weights * mg.Tensor(self._keep_scaled(keep, weights.dtype))
            return mg.matmul(weights, v)
        return self.recorded_gradients(rebuild, grad, (0, 1, 2))


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, mask=None,
                                 scale: float | None = None, dropout_p: float = 0.0,
                                 training: bool = True, *, attn_mask=None,
                                 is_causal: bool = False,
                                 enable_gqa: bool = False) -> tuple[Tensor, Tensor]:
    """softmax(q kᵀ · scale) v over the last two axes, with any leading batch/head axes.

        S = scale · q kᵀ                   (..., Lq, Lk)
        S[¬mask] = −inf, or S + mask for a float mask
        A = softmax(S, axis=-1)            (..., Lq, Lk)
        out = dropout(A) v                 (..., Lq, Dv)

    Args:
        q: (..., Lq, D); k: (..., Lk, D); v: (..., Lk, Dv). Leading axes broadcast.
        mask (or PyTorch's name `attn_mask`): bool, broadcastable to (..., Lq, Lk), True =
            attention allowed; or a float mask added to the scores (−inf forbids, and a mask
            that requires grad gets its gradient, as a learned position bias does); None =
            all allowed.
        scale: multiplies the scores; None means 1/√D (Vaswani et al. 2017, §3.2.1).
        dropout_p: dropout on the weights (only when `training`).
        is_causal: query i may attend to keys 0 … i only (no mask may be given with it).
        enable_gqa: grouped-query attention: k and v may have fewer heads (axis −3) than q,
            a divisor of q's; query head h uses key/value head h // (Hq / Hkv), as PyTorch.

    Returns:
        (out (..., Lq, Dv), weights (..., Lq, Lk)). `weights` is the softmax before dropout, so
        each row sums to 1. A query whose keys are all masked gets zero weights and a zero
        output, and passes no gradient (no NaN).
    """
    op = "scaled_dot_product_attention"
    if attn_mask is not None:
        if mask is not None:
            raise TypeError(f"{op}: got mask and attn_mask; they name the same argument, pass "
                            f"one")
        mask = attn_mask
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(f"{op}: q, k, v need at least 2 dimensions (..., L, D), got shapes "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if enable_gqa:
        k, v = _shared_heads(q, k, op), _shared_heads(q, v, op)
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"{op}: q (..., Lq, D), k (..., Lk, D) and v (..., Lk, Dv) do not fit: "
                         f"got shapes {tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    if k.shape[-2] == 0:
        raise ValueError(f"{op}: no keys to attend to (Lk = 0): a softmax over none is "
                         f"undefined; got shapes {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    if k.shape[-1] == 0 and scale is None:
        raise ValueError(f"{op}: the default scale 1/√D is undefined for D = 0 (shapes "
                         f"{tuple(q.shape)}, {tuple(k.shape)}); pass scale=")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{op}: dropout_p must be in [0, 1], got {dropout_p}")
    if is_causal:
        if mask is not None:
            raise ValueError(f"{op}: give a mask or is_causal=True, not both")
        lq, lk = q.shape[-2], k.shape[-2]
        mask = mg.tensor(np.tril(np.ones((lq, lk), dtype=bool)), device=q.device)
    if mask is not None and _is_float_mask(mask):
        return _attention_with_bias(q, k, v, mask, scale, dropout_p, training, op)
    weights, mask, scale = _weights(q, k, mask, scale, op)  # (..., Lq, Lk)
    inputs = (q, k, v) if mask is None else (q, k, v, mask)
    if not training or dropout_p == 0.0:
        return AttendValues.apply(*inputs, scale=scale, weights=weights.data), weights
    if dropout_p == 1.0:
        return mg.matmul(weights * 0.0, v), weights
    keep = (mg.rand(*weights.shape, dtype=weights.dtype, device=weights.device)
            >= dropout_p).data                              # Bernoulli(1 − p), as mg.dropout
    return AttendValues.apply(*inputs, scale=scale, weights=weights.data, keep=keep,
                              p=dropout_p), weights          # (..., Lq, Dv), (..., Lq, Lk)


def _is_float_mask(mask) -> bool:
    """Is this an additive float mask (rather than a bool one)?"""
    if isinstance(mask, list):
        mask = np.asarray(mask)
    dtype = getattr(mask, "dtype", None)
    return dtype is not None and np.dtype(dtype).kind == "f"


def _shared_heads(q: Tensor, kv: Tensor, op: str) -> Tensor:
    """k or v with its Hkv heads (axis −3) repeated to q's Hq, each Hq/Hkv times in a row."""
    if q.ndim < 3 or kv.ndim < 3:
        raise ValueError(f"{op}: enable_gqa needs a head axis (..., heads, L, D), got shapes "
                         f"{tuple(q.shape)} and {tuple(kv.shape)}")
    heads, shared = q.shape[-3], kv.shape[-3]
    if shared == heads:
        return kv
    if shared == 0 or heads % shared:
        raise ValueError(f"{op}: {heads} query heads cannot share {shared} key/value heads "
                         f"(the number must divide {heads})")
    return mg.repeat_interleave(kv, heads // shared, dim=kv.ndim - 3)


def _attention_with_bias(q: Tensor, k: Tensor, v: Tensor, bias, scale, dropout_p: float,
                         training: bool, op: str) -> tuple[Tensor, Tensor]:
    """Attention with an additive float mask, from differentiable operations:
    softmax(scale · q kᵀ + bias) v, so the bias gets its gradient (∂S, summed over the axes it
    was broadcast along)."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if not isinstance(bias, Tensor):
        bias = mg.tensor(np.asarray(bias), dtype=q.dtype, device=q.device)
    scores = mg.matmul(q * scale, k.swapaxes(-1, -2))            # (..., Lq, Lk)
    try:
        np.broadcast_shapes(tuple(bias.shape), tuple(scores.shape))
    except ValueError:
        raise ValueError(f"{op}: float mask of shape {tuple(bias.shape)} does not broadcast "
                         f"to the attention scores' shape {tuple(scores.shape)}") from None
    weights = mg.softmax(scores + bias, axis=-1)        # an all −inf row gives zeros, no NaN
    kept = mg.dropout(weights, dropout_p, training)
    return mg.matmul(kept, v), weights                  # (..., Lq, Dv), (..., Lq, Lk)


def masked_softmax(scores: Tensor, mask=None, op: str = "masked_softmax") -> Tensor:
    """softmax over the last axis, giving weight exactly 0 where `mask` is False.

        w = softmax(S with S[¬mask] = −inf)

    scores: (..., Lk); mask: bool broadcastable to scores' shape, True = allowed, or None.
    A row with no allowed position gives all-zero weights and zero gradient (never NaN).
    """
    if mask is not None:
        mask = check_mask(mask, scores.shape, op)
        scores = mg.masked_fill(scores, _forbidden(mask), -math.inf)
    return mg.softmax(scores, axis=-1)             # an all −inf row gives zeros (no NaN)


def causal_mask(T: int, device="cpu") -> Tensor:
    """bool (T, T), True on and below the diagonal: position t may attend to positions ≤ t."""
    if T < 0:
        raise ValueError(f"causal_mask: T must be non-negative, got {T}")
    return mg.tensor(np.tril(np.ones((T, T), dtype=bool)), device=device)


def padding_mask(lengths, max_len: int | None = None, device="cpu") -> Tensor:
    """bool (B, 1, max_len), True where the key position is < that sequence's length.

    It broadcasts to (B, Lq, Lk = max_len) for the attention layers, so padded keys get no
    weight. `lengths`: B ints (list, NumPy array or integer Tensor); max_len defaults to the
    largest length.
    """
    lengths = lengths.numpy() if isinstance(lengths, Tensor) else np.asarray(lengths)
    if lengths.ndim != 1 or (lengths.size and lengths.dtype.kind not in "iu"):
        raise ValueError(f"padding_mask: lengths must be a 1-D sequence of ints, got shape "
                         f"{lengths.shape} and dtype {lengths.dtype}")
    if max_len is None:
        max_len = int(lengths.max()) if lengths.size else 0
    if lengths.size and (lengths.min() < 0 or lengths.max() > max_len):
        raise ValueError(f"padding_mask: lengths must lie in [0, {max_len}], got "
                         f"{lengths.tolist()}")
    allowed = np.arange(max_len)[None, :] < lengths[:, None]          # (B, max_len)
    return mg.tensor(allowed[:, None, :], device=device)              # (B, 1, max_len)
