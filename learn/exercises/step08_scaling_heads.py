"""Step 8 exercises: the softmax's Jacobian (why scores are scaled), and multi-head attention."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 8.1 -------------------------------------------------------------------------------

def softmax_jacobian(scores: np.ndarray) -> np.ndarray:
    """J (n, n) with J[i, j] = ∂p_i/∂s_j for p = softmax(s), scores s a NumPy vector (n,).

    Derive it from p_i = e^{s_i} / Σ_k e^{s_k}: the answer is J = diag(p) − p pᵀ. Compute p
    stably (subtract max(s) before exp)."""
    raise NotImplementedError


# -- exercise 8.2 -------------------------------------------------------------------------------

def split_heads(x: mg.Tensor, heads: int) -> mg.Tensor:
    """(B, L, E) -> (B, heads, L, E // heads): feature block h (features h·Dh .. (h+1)·Dh − 1,
    Dh = E // heads) becomes head h. Hint: .reshape then .swapaxes."""
    raise NotImplementedError


def merge_heads(x: mg.Tensor) -> mg.Tensor:
    """The inverse of split_heads: (B, heads, L, Dh) -> (B, L, heads·Dh), head h in feature
    block h."""
    raise NotImplementedError


# -- exercise 8.3 -------------------------------------------------------------------------------

def multi_head_attention(query: mg.Tensor, key: mg.Tensor, value: mg.Tensor,
                         params: dict[str, mg.Tensor], heads: int,
                         mask=None) -> tuple[mg.Tensor, mg.Tensor]:
    """Multi-head attention with the weights of an nn.MultiHeadAttention.

    query (B, Lq, E), key and value (B, Lk, E); params holds "q_proj.weight" (E, E),
    "q_proj.bias" (E,) and the same for k_proj, v_proj and out_proj (a Linear computes
    x @ weight.T + bias). mask: None or a bool array broadcastable to (B, Lq, Lk), True =
    allowed, the same for every head.

        Q, K, V = the three projections, each split into heads with your split_heads
        head_h  = softmax(Q_h K_hᵀ / √Dh) V_h              (Dh = E / heads)
        out     = merge_heads(heads) @ W_out.T + b_out

    Returns (out (B, Lq, E), weights (B, heads, Lq, Lk)).
    """
    raise NotImplementedError
