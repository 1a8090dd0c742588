"""Step 7 exercises: the causal mask, causal self-attention, and a probe of what depends on
what."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 7.1 -------------------------------------------------------------------------------

def causal_mask(T: int) -> np.ndarray:
    """A bool NumPy array (T, T): entry [t, i] is True where position t may look at position i,
    that is for i <= t (on and below the diagonal), False above it."""
    raise NotImplementedError


# -- exercise 7.2 -------------------------------------------------------------------------------

def causal_self_attention(x: mg.Tensor, W_q: mg.Tensor, W_k: mg.Tensor, W_v: mg.Tensor,
                          causal: bool = True) -> tuple[mg.Tensor, mg.Tensor]:
    """Self-attention of a sequence on itself, x (B, T, D) -> (h (B, T, Dv), α (B, T, T)):

        q_t = x_t W_q,  k_i = x_i W_k,  v_i = x_i W_v       (W_q, W_k (D, Dk); W_v (D, Dv))
        α_ti = softmax_i(q_t · k_i / √Dk) over i <= t,      h_t = Σ_i α_ti v_i

    With causal=True, put −inf on the scores above the diagonal (your causal_mask and
    mg.masked_fill) so those weights are exactly 0; with causal=False every i takes part.
    """
    raise NotImplementedError


# -- exercise 7.3 -------------------------------------------------------------------------------

def dependence(f, x: mg.Tensor) -> np.ndarray:
    """How much each output position depends on each input position: a NumPy array (T, T),

        D[t, s] = ‖∂(Σ_j f(x)[0, t, j]) / ∂x[0, s, :]‖      for x of shape (1, T, Dx)

    (f maps (1, T, Dx) to (1, T, Dy)). Row t is one mg.grad of the sum of output t with respect
    to x (pass retain_graph=True to reuse the graph for the next row); exact zeros where output
    t does not depend on input s.
    """
    raise NotImplementedError
