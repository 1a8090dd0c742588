"""Step 6 exercises: a hard and a soft lookup, and a measure of where gradients reach."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 6.1: two lookups --------------------------------------------------------------------
# Both take queries q (B, Lq, D), keys k (B, Lk, D) and values v (B, Lk, Dv) as Tensors and return
# (output (B, Lq, Dv), weights (B, Lq, Lk)), output = weights @ v.

def nearest_lookup(q: mg.Tensor, k: mg.Tensor, v: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor]:
    """Hard lookup: the weights are the one-hot row of the best-scoring key, argmax_j q_i · k_j
    (the first one on ties). mg.argmax(scores, axis=-1) gives the indices (an int Tensor, no
    gradient) and mg.one_hot(indices, Lk, dtype=...) the rows (use v's dtype)."""
    raise NotImplementedError


def soft_lookup(q: mg.Tensor, k: mg.Tensor, v: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor]:
    """Soft lookup: weights = softmax(q k^T / √D) over the keys (mg.softmax(..., axis=-1))."""
    raise NotImplementedError


# -- exercise 6.2 -------------------------------------------------------------------------------

def gradient_norms(loss: mg.Tensor, params: dict[str, mg.Tensor]) -> dict[str, float]:
    """For each named tensor p, the Euclidean norm ‖∂loss/∂p‖ as a float: 0.0 where no
    gradient reaches p at all.

    Use mg.grad(loss, [tensors...], allow_unused=True): it returns the gradients as a tuple
    (None for a tensor the loss does not depend on through differentiable operations) and
    leaves every .grad untouched, so measuring does not disturb training. Pass
    retain_graph=True as well, so that the loss can still be backpropagated afterwards.
    """
    raise NotImplementedError
