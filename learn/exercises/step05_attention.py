"""Step 5 exercises: score functions, and attention over encoder states."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 5.1: four score functions ---------------------------------------------------------
# Each takes queries q (B, Lq, D) and keys k (B, Lk, D) as Tensors and returns the scores
# (B, Lq, Lk), entry [b, i, j] scoring query i against key j, built with minigrad operations
# (@, .swapaxes(-1, -2), .unsqueeze, mg.tanh, .sum) so that gradients flow.

def score_dot(q: mg.Tensor, k: mg.Tensor) -> mg.Tensor:
    """e_ij = q_i · k_j."""
    raise NotImplementedError


def score_scaled(q: mg.Tensor, k: mg.Tensor) -> mg.Tensor:
    """e_ij = q_i · k_j / √D."""
    raise NotImplementedError


def score_general(q: mg.Tensor, k: mg.Tensor, W: mg.Tensor) -> mg.Tensor:
    """e_ij = q_iᵀ W k_j, W (D, D) ("general" or bilinear)."""
    raise NotImplementedError


def score_additive(q: mg.Tensor, k: mg.Tensor, W_q: mg.Tensor, W_k: mg.Tensor,
                   v: mg.Tensor) -> mg.Tensor:
    """e_ij = vᵀ tanh(W_q q_i + W_k k_j), W_q and W_k (A, D), v (A,) ("additive", the
    original attention of Bahdanau et al.). Hint: W_q q_i for all i is q @ W_q.T (B, Lq, A);
    add a (B, Lq, 1, A) and a (B, 1, Lk, A) tensor to get every pair at once."""
    raise NotImplementedError


# -- exercise 5.2 -------------------------------------------------------------------------------

def attend(scores: mg.Tensor, values: mg.Tensor, mask=None) -> tuple[mg.Tensor, mg.Tensor]:
    """Weights α = softmax(scores) over the last axis, and context = α @ values.

    scores (B, Lq, Lk), values (B, Lk, Dv) -> (context (B, Lq, Dv), weights (B, Lq, Lk)).
    mask: None, or a bool NumPy array broadcastable to (B, Lq, Lk), True where attention is
    allowed: put −inf on the disallowed scores before the softmax (mg.masked_fill(scores,
    ~mask, -np.inf)), so their weights are exactly 0. Every row has at least one allowed key.
    """
    raise NotImplementedError
