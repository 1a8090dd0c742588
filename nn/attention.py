"""Attention layers: a query looks up values by comparing itself with keys.

    context = Σ_j w_j v_j,   w = softmax(score(q, k_1), ..., score(q, k_Lk))

The layers differ only in the score (dot, scaled dot, bilinear, additive, RBF) or replace
the softmax by a hard choice. All share one call:

    forward(query (B, Lq, Dq), keys (B, Lk, Dk), values (B, Lk, Dv), mask=None)
        -> (context (B, Lq, Dv), weights (B, Lq, Lk))

`mask`: a bool Tensor or NumPy bool array broadcastable to (B, Lq, Lk), True where attention
is ALLOWED. A query whose keys are all masked gets all-zero weights and a zero context.
Leading axes other than B work too, as long as query, keys and values share them.

Also here: LocationAwareAttention (additive scores that also see the previous step's weights,
so it runs one query at a time), MultiHeadAttention (Vaswani et al. 2017) and the
location-based attention decoder step of the PyTorch seq2seq tutorial.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad import Tensor

from . import functional as F
from . import init
from ._checks import check_flag, check_probability, check_size
from .attention_functional import check_mask, masked_softmax, scaled_dot_product_attention
from .layers import Linear
from .module import Module, Parameter, _host_array
from .recurrent import GRUCell

__all__ = ["DotProductAttention", "BilinearAttention", "AdditiveAttention",
           "LocationAwareAttention", "RBFAttention", "HardAttention", "MultiHeadAttention",
           "LocationAttentionDecoderStep"]


def _check_qkv(op: str, query: Tensor, keys: Tensor, values: Tensor,
               query_dim: int | None = None, key_dim: int | None = None) -> None:
    """query (..., Lq, Dq), keys (..., Lk, Dk), values (..., Lk, Dv); Dq = Dk unless the
    layer has its own dimensions."""
    shapes = f"query {tuple(query.shape)}, keys {tuple(keys.shape)}, values {tuple(values.shape)}"
    if not query.ndim == keys.ndim == values.ndim or query.ndim < 2:
        raise ValueError(f"{op}: query, keys and values must have the same number (>= 2) of "
                         f"dimensions (B, L, D), got {shapes}")
    if keys.shape[-2] != values.shape[-2]:
        raise ValueError(f"{op}: keys and values must have the same length Lk, got {shapes}")
    if query_dim is None and query.shape[-1] != keys.shape[-1]:
        raise ValueError(f"{op}: query and keys must have the same feature size D, got "
                         f"{shapes}")
    if query_dim is not None and (query.shape[-1] != query_dim or keys.shape[-1] != key_dim):
        raise ValueError(f"{op}: expected query (..., Lq, {query_dim}) and keys (..., Lk, "
                         f"{key_dim}), got {shapes}")


class _SoftAttention(Module):
    """context = softmax(scores(q, k)) v; subclasses define `scores`."""

    def scores(self, query: Tensor, keys: Tensor) -> Tensor:
        """(..., Lq, Dq), (..., Lk, Dk) -> (..., Lq, Lk)."""
        raise NotImplementedError

    def _check(self, query: Tensor, keys: Tensor, values: Tensor) -> None:
        _check_qkv(type(self).__name__, query, keys, values)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor,
                mask=None) -> tuple[Tensor, Tensor]:
        """query (B, Lq, Dq), keys (B, Lk, Dk), values (B, Lk, Dv), mask bool (B, Lq, Lk)
        broadcastable, True = allowed. Returns (context (B, Lq, Dv), weights (B, Lq, Lk))."""
        self._check(query, keys, values)
        scores = self.scores(query, keys)                    # (B, Lq, Lk)
        weights = masked_softmax(scores, mask, type(self).__name__)
        return mg.matmul(weights, values), weights           # (B, Lq, Dv), (B, Lq, Lk)


class DotProductAttention(_SoftAttention):
    """Scores q·k, divided by √D when `scaled` (so their variance stays near 1 for random
    q, k and the softmax does not saturate; Vaswani et al. 2017, §3.2.1).

        w = softmax(q kᵀ / √D),  context = w v
    """

    def __init__(self, scaled: bool = True):
        super().__init__()
        self.scaled = bool(scaled)

    def scores(self, query: Tensor, keys: Tensor) -> Tensor:
        scale = 1.0 / math.sqrt(query.shape[-1]) if self.scaled else 1.0
        q = query * scale if self.scaled else query
        return mg.matmul(q, keys.swapaxes(-1, -2))          # (B, Lq, Lk)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor,
                mask=None) -> tuple[Tensor, Tensor]:
        """query (B, Lq, D), keys (B, Lk, D), values (B, Lk, Dv), mask bool (B, Lq, Lk)
        broadcastable, True = allowed. Returns (context (B, Lq, Dv), weights (B, Lq, Lk)),
        computed as one fused primitive."""
        self._check(query, keys, values)
        return scaled_dot_product_attention(query, keys, values, mask,
                                            scale=None if self.scaled else 1.0)

    def extra_repr(self) -> str:
        return f"scaled={self.scaled}"


class BilinearAttention(_SoftAttention):
    """Scores qᵀ W k (Luong et al. 2015, "general"):

        S = q W kᵀ,  W: (Dq, Dk), U(−1/√Dk, 1/√Dk)
    """

    def __init__(self, query_dim: int, key_dim: int):
        super().__init__()
        self.query_dim, self.key_dim = int(query_dim), int(key_dim)
        self.weight = Parameter(mg.zeros(self.query_dim, self.key_dim))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw W again from U(−1/√Dk, 1/√Dk)."""
        bound = 1.0 / math.sqrt(self.key_dim) if self.key_dim > 0 else 0.0
        init.uniform_(self.weight, -bound, bound)

    def _check(self, query, keys, values) -> None:
        _check_qkv("BilinearAttention", query, keys, values, self.query_dim, self.key_dim)

    def scores(self, query: Tensor, keys: Tensor) -> Tensor:
        qw = mg.matmul(query, self.weight)                   # (B, Lq, Dk)
        return mg.matmul(qw, keys.swapaxes(-1, -2))         # (B, Lq, Lk)

    def extra_repr(self) -> str:
        return f"query_dim={self.query_dim}, key_dim={self.key_dim}"


class AdditiveAttention(_SoftAttention):
    """Scores vᵀ tanh(W_q q + W_k k) (Bahdanau et al. 2015):

        S[i, j] = vᵀ tanh(W_q q_i + W_k k_j)

    w_q: Linear(Dq, A, bias=False), w_k: Linear(Dk, A, bias=False), v: Linear(A, 1,
    bias=False), with A = hidden_dim. Memory grows as B·Lq·Lk·A.
    """

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int):
        super().__init__()
        self.query_dim, self.key_dim = int(query_dim), int(key_dim)
        self.hidden_dim = int(hidden_dim)
        self.w_q = Linear(self.query_dim, self.hidden_dim, bias=False)
        self.w_k = Linear(self.key_dim, self.hidden_dim, bias=False)
        self.v = Linear(self.hidden_dim, 1, bias=False)

    def _check(self, query, keys, values) -> None:
        _check_qkv("AdditiveAttention", query, keys, values, self.query_dim, self.key_dim)

    def scores(self, query: Tensor, keys: Tensor) -> Tensor:
        q = self.w_q(query).unsqueeze(-2)                    # (B, Lq, 1, A)
        k = self.w_k(keys).unsqueeze(-3)                     # (B, 1, Lk, A)
        return self.v(mg.tanh(q + k)).squeeze(-1)            # (B, Lq, Lk)

    def extra_repr(self) -> str:
        return (f"query_dim={self.query_dim}, key_dim={self.key_dim}, "
                f"hidden_dim={self.hidden_dim}")


class LocationAwareAttention(Module):
    """Additive attention that also sees where it attended one step before (Chorowski et al.
    2015, "Attention-Based Models for Speech Recognition"):

        f_t = F * α_{t−1}        n_filters filters of odd width k slid over the source
                                 positions j, zero padding: (Lk, n_filters), f_{t,j} its row j
        e_{t,j} = vᵀ tanh(W_q q_t + W_k k_j + W_f f_{t,j})
        α_t = softmax_j(e_t)    (0 where the mask forbids),  context_t = Σ_j α_{t,j} v_j

    α_t depends on α_{t−1}, so the weights are computed one query step at a time: a Python
    loop over t. α_0 (`prev=None`) is one-hot on position 0 (see `initial_weights`).
    w_q: Linear(Dq, A), w_k: Linear(Dk, A), w_f: Linear(n_filters, A), v: Linear(A, 1), all
    without bias; `filters` (n_filters, k) from U(−1/√k, 1/√k), as a 1-channel Conv1d.
    Inputs are (B, L, D) (one batch axis).
    """

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int, n_filters: int = 10,
                 kernel_size: int = 7):
        super().__init__()
        name = type(self).__name__
        self.query_dim, self.key_dim = int(query_dim), int(key_dim)
        self.hidden_dim = int(hidden_dim)
        self.n_filters = check_size(name, "n_filters", n_filters)
        self.kernel_size = check_size(name, "kernel_size", kernel_size)
        if self.kernel_size % 2 == 0:
            raise ValueError(f"{name}: kernel_size must be odd (the features keep the source "
                             f"length), got {kernel_size}")
        self.w_q = Linear(self.query_dim, self.hidden_dim, bias=False)
        self.w_k = Linear(self.key_dim, self.hidden_dim, bias=False)
        self.w_f = Linear(self.n_filters, self.hidden_dim, bias=False)
        self.v = Linear(self.hidden_dim, 1, bias=False)
        self.filters = Parameter(mg.zeros(self.n_filters, self.kernel_size))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Draw the filters again from U(−1/√k, 1/√k) (the linear maps keep their own)."""
        bound = 1.0 / math.sqrt(self.kernel_size)
        init.uniform_(self.filters, -bound, bound)

    def initial_weights(self, keys: Tensor) -> Tensor:
        """α_0 (B, Lk): one-hot on position 0. Zeros would make the first step plain additive
        attention; the one-hot says "start at the first source symbol" (a monotone alignment
        starts there, and padding, if any, is at the end) and looks like the peaked α_{t−1} of
        the later steps."""
        B, Lk = keys.shape[0], keys.shape[1]
        first = mg.ones((B, 1), dtype=keys.dtype, device=keys.device)
        rest = mg.zeros((B, Lk - 1), dtype=keys.dtype, device=keys.device)
        return mg.concat([first, rest], axis=1)     # made by operations: a compiled step
                                                    # may capture it (one_hot reads values)

    def project_keys(self, keys: Tensor) -> Tensor:
        """W_k k_j for every key: (B, Lk, Dk) -> (B, Lk, A). A decoder that calls the layer
        one query step at a time computes it once and passes it as `projected_keys`."""
        return self.w_k(keys)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor, mask=None,
                prev: Tensor | None = None,
                projected_keys: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """query (B, Lq, Dq), keys (B, Lk, Dk), values (B, Lk, Dv), mask bool broadcastable to
        (B, Lq, Lk), True = allowed; prev: α_0 (B, Lk), the weights of the step before the
        first query (default `initial_weights`); projected_keys: `project_keys(keys)`, made
        once for many calls (default: made here). Returns (context (B, Lq, Dv), weights
        (B, Lq, Lk)); weights[:, -1] is the `prev` of the query that follows."""
        name = type(self).__name__
        _check_qkv(name, query, keys, values, self.query_dim, self.key_dim)
        B, Lq, Lk = query.shape[0], query.shape[1], keys.shape[1]
        if query.ndim != 3 or query.shape[0] != keys.shape[0]:
            raise ValueError(f"{name}: expected query (B, Lq, Dq) and keys (B, Lk, Dk) with "
                             f"one batch axis, got {tuple(query.shape)}, {tuple(keys.shape)}")
        prev = self.initial_weights(keys) if prev is None else prev
        if tuple(prev.shape) != (B, Lk):
            raise ValueError(f"{name}: prev must be the previous weights (B, Lk) = {(B, Lk)}, "
                             f"got {tuple(prev.shape)}")
        if mask is not None:                                 # one (B, Lk) row per step
            mask = check_mask(mask, (B, Lq, Lk), name)
            mask = (mask.broadcast_to((B, Lq, Lk)) if isinstance(mask, Tensor)
                    else np.broadcast_to(mask, (B, Lq, Lk)))
        if projected_keys is None:
            projected_keys = self.project_keys(keys)         # (B, Lk, A)
        elif tuple(projected_keys.shape) != (B, Lk, self.hidden_dim):
            raise ValueError(f"{name}: projected_keys must be project_keys(keys) (B, Lk, A) = "
                             f"{(B, Lk, self.hidden_dim)}, got {tuple(projected_keys.shape)}")
        q, k = self.w_q(query), projected_keys               # (B, Lq, A), (B, Lk, A)
        # the convolution F and then W_f are both linear in the k-wide windows of α_{t−1}:
        # one (k, A) map, W_f F, applied to the windows, instead of two products per step
        location = mg.matmul(self.filters.swapaxes(0, 1), self.w_f.weight.swapaxes(0, 1))
        half = self.kernel_size // 2
        steps = []
        for t in range(Lq):
            windows = mg.pad(prev, ((0, 0), (half, half))).unfold(1, self.kernel_size, 1)
            features = mg.matmul(windows, location)         # (B, Lk, A) = W_f f_t
            energies = self.v(mg.tanh(q[:, t].unsqueeze(1) + k + features)).squeeze(-1)
            prev = masked_softmax(energies, None if mask is None else mask[:, t], name)
            steps.append(prev)                               # α_t (B, Lk)
        weights = mg.stack(steps, axis=1)                    # (B, Lq, Lk)
        return mg.matmul(weights, values), weights

    def step(self, query: Tensor, keys: Tensor, values: Tensor, prev: Tensor,
             mask=None, projected_keys: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """One query: query (B, Dq), prev α_{t−1} (B, Lk), mask broadcastable to (B, Lk),
        projected_keys as in `forward` -> (context (B, Dv), α_t (B, Lk)), the next step's
        `prev`."""
        if mask is not None:                                 # (B, Lk) -> (B, 1, Lk)
            mask = (mask.unsqueeze(-2) if isinstance(mask, Tensor)
                    else np.expand_dims(mask, -2))   # NumPy or CuPy alike
        context, weights = self.forward(query.unsqueeze(1), keys, values, mask, prev,
                                        projected_keys)
        return context[:, 0], weights[:, 0]

    def extra_repr(self) -> str:
        return (f"query_dim={self.query_dim}, key_dim={self.key_dim}, "
                f"hidden_dim={self.hidden_dim}, n_filters={self.n_filters}, "
                f"kernel_size={self.kernel_size}")


class RBFAttention(_SoftAttention):
    """Scores −γ‖q − k‖², so the weights are a normalised Gaussian (RBF) kernel
    exp(−γ‖q − k‖²) / Σ_j exp(−γ‖q − k_j‖²).

    ‖q − k‖² is expanded as ‖q‖² − 2 q·k + ‖k‖²: one matmul instead of a (B, Lq, Lk, D)
    difference tensor.
    """

    def __init__(self, gamma: float = 1.0):
        super().__init__()
        if gamma <= 0:
            raise ValueError(f"RBFAttention: gamma must be positive, got {gamma}")
        self.gamma = float(gamma)

    def scores(self, query: Tensor, keys: Tensor) -> Tensor:
        q_sq = (query * query).sum(axis=-1, keepdims=True)            # (B, Lq, 1)
        k_sq = (keys * keys).sum(axis=-1).unsqueeze(-2)               # (B, 1, Lk)
        qk = mg.matmul(query, keys.swapaxes(-1, -2))                  # (B, Lq, Lk)
        return (qk * 2.0 - q_sq - k_sq) * self.gamma                  # −γ‖q − k‖²

    def extra_repr(self) -> str:
        return f"gamma={self.gamma}"


class HardChoice(mg.Function):
    """w = the one-hot choice of keys that HardAttention made from (query, keys), passed in
    ready-made. Recorded as an operation of (query, keys) so that graphs show where the weights
    come from, and that no gradient goes back to them."""

    needs_output = False

    def __init__(self, weights):
        self.weights = weights

    def forward(self, query, keys):
        return self.weights

    def backward(self, grad):
        # w is a step function of q and k: ∂w/∂q = ∂w/∂k = 0 almost everywhere, so neither
        # gets a gradient (None: nothing flows back through a choice)
        return None, None


class HardAttention(Module):
    """Attention that picks keys instead of weighting them (a hash-table lookup):

        "nearest": w = one_hot(argmax_j q·k_j)  (scores divided by √D when `scaled`,
                   which does not change the choice; ties go to the first key)
        "exact":   w = one_hot(first j with k_j == q), all-zero when no key equals q

    Queries and keys get no gradient at all (a small change of q or k does not change the
    choice, so the true derivative is 0 almost everywhere; the choice is recorded as one
    operation of q and k whose backward gives them None), while values get gradient through
    the chosen slot. With "exact", random queries match no key, so
    the context is zero and nothing learns: the reason attention is soft. Masked keys are never
    chosen; a query with no allowed (or matching) key gets zero weights and a zero context.
    """

    def __init__(self, mode: str = "nearest", scaled: bool = True):
        super().__init__()
        if mode not in ("nearest", "exact"):
            raise ValueError(f"HardAttention: mode must be 'nearest' or 'exact', got {mode!r}")
        self.mode, self.scaled = mode, bool(scaled)

    def forward(self, query: Tensor, keys: Tensor, values: Tensor,
                mask=None) -> tuple[Tensor, Tensor]:
        """query (B, Lq, D), keys (B, Lk, D), values (B, Lk, Dv), mask bool (B, Lq, Lk)
        broadcastable. Returns (context (B, Lq, Dv), weights (B, Lq, Lk), one-hot or zero
        rows)."""
        _check_qkv("HardAttention", query, keys, values)
        q, k = query.detach(), keys.detach()                 # the choice is not differentiable
        Lk = k.shape[-2]
        if self.mode == "nearest":
            scale = 1.0 / math.sqrt(q.shape[-1]) if self.scaled else 1.0
            scores = mg.matmul(q * scale, k.swapaxes(-1, -2))           # (B, Lq, Lk)
            candidates = mg.ones_like(scores, dtype=np.bool_)
        else:
            # (B, Lq, 1, D) == (B, 1, Lk, D), all over D -> (B, Lq, Lk)
            candidates = (q.unsqueeze(-2) == k.unsqueeze(-3)).all(axis=-1)
            scores = mg.zeros(candidates.shape, dtype=values.dtype, device=values.device)
        if mask is not None:
            mask = check_mask(mask, candidates.shape, "HardAttention")
            candidates = candidates & (mask if isinstance(mask, Tensor) else
                                       mg.tensor(mask, device=values.device))
        # −inf on the keys that may not be chosen; argmax picks the first best one
        scores = mg.masked_fill(scores, ~candidates, -math.inf)
        chosen = mg.one_hot(mg.argmax(scores, axis=-1), Lk, dtype=values.dtype)
        found = candidates.any(axis=-1, keepdims=True)                  # (B, Lq, 1)
        weights = mg.where(found, chosen, 0.0)                          # (B, Lq, Lk)
        weights = HardChoice.apply(query, keys, weights=weights.data)  # no gradient to q, k
        return mg.matmul(weights, values), weights

    def extra_repr(self) -> str:
        return f"mode={self.mode!r}, scaled={self.scaled}"


def _per_head_mask(mask):
    """A mask for (B, heads, Lq, Lk) scores: masks of up to 3 dimensions ((Lq, Lk) or
    (B, Lq, Lk)) apply to every head, so they get a head axis; 4-D masks pass unchanged."""
    if isinstance(mask, list):
        mask = np.asarray(mask)
    if mask is None or mask.ndim != 3:
        return mask
    if isinstance(mask, Tensor):
        return mask.unsqueeze(-3)                             # (B, 1, Lq, Lk)
    return np.expand_dims(np.asarray(mask), -3)


class MultiHeadAttention(Module):
    """Multi-head attention (Vaswani et al. 2017, §3.2.2):

        head_i = softmax(Q_i K_iᵀ / √Dh) V_i,  Q = query W_qᵀ + b_q, K = key W_kᵀ + b_k,
                 V = value W_vᵀ + b_v, split into `heads` slices of Dh = E / heads features
        out    = [head_1; ...; head_heads] W_oᵀ + b_o

    Submodules q_proj: Linear(E, E), k_proj: Linear(kdim, E), v_proj: Linear(vdim, E),
    out_proj: Linear(E, E) (kdim = vdim = E unless given). Initialised as in PyTorch, which
    stores the three input projections as one (3E, E) matrix when kdim = vdim = E: each is
    drawn from that matrix's Xavier-uniform U(−a, a), a = √(6 / (E + 3E)) (with other kdim or
    vdim, each its own Xavier-uniform, as PyTorch's separate q/k/v_proj_weight); out_proj
    keeps nn.Linear's U(−1/√E, 1/√E); every bias starts at zero.
    `dropout` applies to the attention weights in training mode.

    This class keeps minigrad's conventions: batch-first, masks True = allowed, and per-head
    weights (B, heads, Lq, Lk) unless `average_attn_weights=True`. `nn.MultiheadAttention`
    (PyTorch's spelling) is the same layer with PyTorch's conventions and defaults.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 kdim: int | None = None, vdim: int | None = None):
        super().__init__()
        name = type(self).__name__
        embed_dim = check_size(name, "embed_dim", embed_dim)
        num_heads = check_size(name, "num_heads", num_heads)
        bias = check_flag(name, "bias", bias)
        kdim = embed_dim if kdim is None else check_size(name, "kdim", kdim)
        vdim = embed_dim if vdim is None else check_size(name, "vdim", vdim)
        if embed_dim % num_heads:
            raise ValueError(f"{name}: embed_dim {embed_dim} must be divisible by "
                             f"num_heads {num_heads}")
        if check_probability(name, "dropout", dropout) == 1.0:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim, self.vdim = kdim, vdim
        self.head_dim = self.embed_dim // self.num_heads
        self.dropout = float(dropout)
        self.q_proj = Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = Linear(kdim, embed_dim, bias=bias)
        self.v_proj = Linear(vdim, embed_dim, bias=bias)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """q/k/v projection weights from Xavier-uniform of the packed (3E, E) matrix (or each
        its own when kdim or vdim differ from E), biases zero, out_proj as a Linear (PyTorch's
        initialisation)."""
        E = self.embed_dim
        for proj in (self.q_proj, self.k_proj, self.v_proj):
            if self.kdim == self.vdim == E:
                # Xavier bound of the packed (3E, E) matrix: fan_in = E, fan_out = 3E
                bound = math.sqrt(6.0 / (4 * E))
            else:
                bound = math.sqrt(6.0 / (E + proj.weight.shape[1]))
            init.uniform_(proj.weight, -bound, bound)
        self.out_proj.reset_parameters()
        for proj in (self.q_proj, self.k_proj, self.v_proj, self.out_proj):
            if proj.bias is not None:
                init.zeros_(proj.bias)

    def _load_aliases(self, prefix: str, state_dict: dict) -> None:
        """PyTorch's names load too: in_proj_weight (3E, E) and in_proj_bias (3E) are the
        q, k and v projections' row blocks, in that order; q_proj_weight, k_proj_weight and
        v_proj_weight (PyTorch's when kdim or vdim differ from E) their weights. A name whose
        target is given as well stays as it is (an unexpected key)."""
        for kind in ("weight", "bias"):
            name = f"{prefix}in_proj_{kind}"
            targets = [f"{prefix}{part}_proj.{kind}" for part in "qkv"]
            if name not in state_dict or any(t in state_dict for t in targets):
                continue
            packed = _host_array(state_dict[name])
            if packed is None or packed.ndim == 0 or packed.shape[0] % 3:
                continue                     # reported by load_state_dict as it stands
            del state_dict[name]
            state_dict.update(zip(targets, np.split(packed, 3)))
        for part in "qkv":
            name, target = f"{prefix}{part}_proj_weight", f"{prefix}{part}_proj.weight"
            if name in state_dict and target not in state_dict:
                state_dict[target] = state_dict.pop(name)

    def _split_heads(self, x: Tensor, name: str) -> Tensor:
        B, L, _ = x.shape
        x = x.reshape(B, L, self.num_heads, self.head_dim)  # (B, L, heads, Dh)
        x = x.swapaxes(1, 2)                                 # (B, heads, L, Dh)
        x.name = name                                        # q, k or v in graph pictures
        return x

    def _packed_projections(self, x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Self-attention's q, k and v from one matrix product with the three weights stacked
        (3E, E), as PyTorch's in_proj does: one larger product instead of three. x (B, L, E)."""
        projections = (self.q_proj, self.k_proj, self.v_proj)
        weight = mg.concat([p.weight for p in projections])                  # (3E, E)
        bias = None if self.q_proj.bias is None else mg.concat([p.bias for p in projections])
        B, L, _ = x.shape
        qkv = F.linear(x, weight, bias)                                      # (B, L, 3E)
        qkv = qkv.reshape(B, L, 3, self.num_heads, self.head_dim)            # (B, L, 3, heads, Dh)
        qkv = qkv.transpose(2, 0, 3, 1, 4)                                   # (3, B, heads, L, Dh)
        q, k, v = qkv[0], qkv[1], qkv[2]
        q.name, k.name, v.name = "q", "k", "v"               # labels in graph pictures
        return q, k, v

    def forward(self, query: Tensor, key: Tensor, value: Tensor, mask=None,
                average_attn_weights: bool = False) -> tuple[Tensor, Tensor]:
        """query (B, Lq, E), key (B, Lk, kdim), value (B, Lk, vdim), or all three unbatched
        (without B); mask bool, True = allowed (or float, added to the scores), broadcastable
        to (B, Lq, Lk) (applied to every head) or (B, heads, Lq, Lk).

        Returns (out (B, Lq, E), weights (B, heads, Lq, Lk)), or weights (B, Lq, Lk), the mean
        over heads, with `average_attn_weights=True`; unbatched inputs give both without B.
        """
        E = self.embed_dim
        unbatched = query.ndim == 2 and key.ndim == 2 and value.ndim == 2
        if unbatched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
        if (query.ndim != 3 or key.ndim != 3 or value.ndim != 3 or query.shape[-1] != E
                or key.shape[-1] != self.kdim or value.shape[-1] != self.vdim
                or key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]):
            raise ValueError(f"{type(self).__name__}: expected query (B, Lq, {E}), key "
                             f"(B, Lk, {self.kdim}) and value (B, Lk, {self.vdim}), all batched "
                             f"or all unbatched, got query {tuple(query.shape)}, key "
                             f"{tuple(key.shape)}, value {tuple(value.shape)}")
        out, weights = self._attend(query, key, value, mask)
        if average_attn_weights:
            weights = weights.mean(axis=1)                   # (B, Lq, Lk)
        return (out[0], weights[0]) if unbatched else (out, weights)

    def _attend(self, query: Tensor, key: Tensor, value: Tensor, mask):
        """The checked batched case: (out (B, Lq, E), weights (B, heads, Lq, Lk))."""
        E = self.embed_dim
        B, Lq, _ = query.shape
        if query is key and key is value:
            q, k, v = self._packed_projections(query)         # 3 × (B, heads, L, Dh)
        else:
            q = self._split_heads(self.q_proj(query), "q")   # (B, heads, Lq, Dh)
            k = self._split_heads(self.k_proj(key), "k")     # (B, heads, Lk, Dh)
            v = self._split_heads(self.v_proj(value), "v")   # (B, heads, Lk, Dh)
        heads, weights = scaled_dot_product_attention(
            q, k, v, _per_head_mask(mask), dropout_p=self.dropout, training=self.training)
        merged = heads.swapaxes(1, 2).reshape(B, Lq, E)      # (B, Lq, heads·Dh = E)
        return self.out_proj(merged), weights                # (B, Lq, E), (B, heads, Lq, Lk)

    def extra_repr(self) -> str:
        dims = "" if self.kdim == self.vdim == self.embed_dim else \
            f", kdim={self.kdim}, vdim={self.vdim}"
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, "
                f"dropout={self.dropout}{dims}")


def _torch_mask(mask, name: str):
    """A mask in PyTorch's convention (bool True = NOT allowed, or float added to the scores)
    in minigrad's (bool True = allowed, or the same float)."""
    if mask is None:
        return None
    if isinstance(mask, Tensor):         # operations on it: a compiled step reads each call's
        if mask.dtype == np.bool_:
            return ~mask
        if mask.dtype.kind != "f":
            raise TypeError(f"MultiheadAttention: {name} must be bool or float, got "
                            f"{mask.dtype}")
        return mask                                           # float: added as it is
    host = np.asarray(mask)
    if host.dtype == np.bool_:
        return ~host
    if not np.issubdtype(host.dtype, np.floating):
        raise TypeError(f"MultiheadAttention: {name} must be bool or float, got {host.dtype}")
    return host


def _merged_masks(attn, padding):
    """attn & padding for bool masks (True = allowed); a float mask gets −inf where the other
    forbids."""
    if attn is None or padding is None:
        return padding if attn is None else attn
    if not isinstance(attn, Tensor) and not isinstance(padding, Tensor):
        if attn.dtype == np.bool_ and padding.dtype == np.bool_:
            return attn & padding
        as_float = [np.where(m, 0.0, -np.inf) if m.dtype == np.bool_ else m
                    for m in (attn, padding)]
        return as_float[0] + as_float[1]
    # a Tensor among them (a mask passed as a Tensor): tensor operations throughout
    device = (attn if isinstance(attn, Tensor) else padding).device
    attn, padding = (m if isinstance(m, Tensor) else mg.tensor(m, device=device)
                     for m in (attn, padding))
    if attn.dtype == np.bool_ and padding.dtype == np.bool_:
        return attn & padding
    as_float = [mg.where(m, 0.0, -np.inf) if m.dtype == np.bool_ else m for m in (attn, padding)]
    return as_float[0] + as_float[1]


class MultiheadAttention(MultiHeadAttention):
    """PyTorch's nn.MultiheadAttention: MultiHeadAttention with PyTorch's conventions.

    - `batch_first=False` by default: inputs (L, B, E), or unbatched (L, E);
    - `attn_mask` (Lq, Lk) or (B·heads, Lq, Lk) and `key_padding_mask` (B, Lk): bool True =
      NOT allowed (the opposite of minigrad's `mask`), or float, added to the scores;
    - returns (out, weights) with weights averaged over heads, (B, Lq, Lk), unless
      `average_attn_weights=False`, and None for them with `need_weights=False`.

    Parameter names are minigrad's (q_proj, k_proj, v_proj, out_proj); `load_state_dict` also
    takes PyTorch's packed in_proj_weight (3E, E) and in_proj_bias, or its q/k/v_proj_weight
    (kdim or vdim ≠ E), so a PyTorch state dict loads as it is (in a Transformer too).
    `add_bias_kv` and `add_zero_attn` are not supported (an error says so).
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False):
        if add_bias_kv or add_zero_attn:
            raise ValueError("MultiheadAttention: add_bias_kv and add_zero_attn are not "
                             "supported")
        batch_first = check_flag("MultiheadAttention", "batch_first", batch_first)
        super().__init__(embed_dim, num_heads, dropout, bias, kdim, vdim)
        self.batch_first = batch_first

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask=None,
                need_weights: bool = True, attn_mask=None, average_attn_weights: bool = True,
                is_causal: bool = False):
        """As torch.nn.MultiheadAttention.forward (see the class docstring). Returns
        (out (L, B, E) or (B, L, E) with batch_first, weights or None)."""
        if is_causal and attn_mask is None:
            raise ValueError("MultiheadAttention: is_causal is a hint that attn_mask is causal, "
                             "as in PyTorch; pass attn_mask (e.g. ~nn.causal_mask(L))")
        batched = query.ndim == 3
        if batched and not self.batch_first:
            query, key, value = (t.swapaxes(0, 1) for t in (query, key, value))   # (B, L, ·)
        attn = _torch_mask(attn_mask, "attn_mask")
        if attn is not None and attn.ndim == 3:              # (B·heads, Lq, Lk)
            attn = attn.reshape(-1, self.num_heads, *attn.shape[1:])
        padding = _torch_mask(key_padding_mask, "key_padding_mask")
        if padding is not None:                              # (B, Lk) -> (B, 1, 1, Lk)
            padding = padding[..., None, None, :] if batched else padding[None, None, :]
        out, weights = super().forward(query, key, value, _merged_masks(attn, padding),
                                       average_attn_weights=average_attn_weights)
        if batched and not self.batch_first:
            out = out.swapaxes(0, 1)
        return out, (weights if need_weights else None)


class LocationAttentionDecoderStep(Module):
    """One step of the PyTorch seq2seq tutorial's attention decoder: the weights come from the
    decoder's own state and input, not from comparing with the encoder states.

        α_t = softmax(W_a [h_{t−1}; x̃_t] + b_a)     over the L_max encoder positions
        c_t = H^E α_t                                  weighted sum of encoder states
        z_t = ReLU(W_c [x̃_t; c_t] + b_c)
        h_t = GRUCell(z_t, h_{t−1})

    Submodules attn: Linear(H + E, L_max), attn_combine: Linear(E + D_enc, H), gru:
    GRUCell(H, H); D_enc (= H by default) is the encoder states' size. When the encoder
    states are shorter than L_max, the scores of the missing positions are dropped (they get
    no weight), as are positions the mask forbids.
    """

    def __init__(self, embed_dim: int, hidden_size: int, max_len: int,
                 encoder_dim: int | None = None):
        super().__init__()
        self.embed_dim, self.hidden_size, self.max_len = int(embed_dim), int(hidden_size), \
            int(max_len)
        self.encoder_dim = int(encoder_dim) if encoder_dim is not None else self.hidden_size
        self.attn = Linear(self.hidden_size + self.embed_dim, self.max_len)
        self.attn_combine = Linear(self.embed_dim + self.encoder_dim, self.hidden_size)
        self.gru = GRUCell(self.hidden_size, self.hidden_size)

    def forward(self, x_emb: Tensor, h: Tensor, encoder_states: Tensor,
                mask=None) -> tuple[Tensor, Tensor]:
        """x_emb (B, E): the embedded decoder input x̃_t; h (B, H): h_{t−1}; encoder_states
        (B, L, D_enc) with L <= L_max; mask bool broadcastable to (B, L), True = allowed.

        Returns (h_t (B, H), α_t (B, L)).
        """
        B, L = encoder_states.shape[0], encoder_states.shape[1]
        if (x_emb.ndim != 2 or h.ndim != 2 or encoder_states.ndim != 3
                or x_emb.shape != (B, self.embed_dim) or h.shape != (B, self.hidden_size)
                or encoder_states.shape[2] != self.encoder_dim or L > self.max_len):
            raise ValueError(
                f"LocationAttentionDecoderStep: expected x_emb (B, {self.embed_dim}), h (B, "
                f"{self.hidden_size}), encoder_states (B, L <= {self.max_len}, "
                f"{self.encoder_dim}), got {tuple(x_emb.shape)}, {tuple(h.shape)}, "
                f"{tuple(encoder_states.shape)}")
        scores = self.attn(mg.concat([h, x_emb], axis=-1))  # (B, L_max)
        if L < self.max_len:
            scores = scores[:, :L]                           # (B, L)
        alpha = masked_softmax(scores, mask, "LocationAttentionDecoderStep")   # (B, L)
        c = mg.matmul(alpha.unsqueeze(1), encoder_states).squeeze(1)          # (B, D_enc)
        z = mg.relu(self.attn_combine(mg.concat([x_emb, c], axis=-1)))        # (B, H)
        return self.gru(z, h), alpha

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, hidden_size={self.hidden_size}, "
                f"max_len={self.max_len}, encoder_dim={self.encoder_dim}")
