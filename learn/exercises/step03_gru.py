"""Step 3 exercises: a GRU cell, its backward, and its state unrolled into a weighted sum."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 3.1 -------------------------------------------------------------------------------

def gru_cell(x: mg.Tensor, h: mg.Tensor, weight_ih: mg.Tensor, weight_hh: mg.Tensor,
             bias_ih: mg.Tensor, bias_hh: mg.Tensor) -> mg.Tensor:
    """One GRU step with minigrad operations; x (B, I), h (B, H) -> h' (B, H).

    Gates stacked in the order r, z, n in the rows of weight_ih (3H, I), weight_hh (3H, H)
    and in bias_ih, bias_hh (3H,):
        r  = σ(W_ir x + b_ir + W_hr h + b_hr)
        z  = σ(W_iz x + b_iz + W_hz h + b_hz)
        n  = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
        h' = (1 − z) ⊙ n + z ⊙ h
    Hint: gx = x @ weight_ih.T + bias_ih is (B, 3H); mg.split(gx, 3, axis=-1) cuts it in three.
    """
    raise NotImplementedError


# -- exercise 3.2 -------------------------------------------------------------------------------

class GRUGates(mg.Function):
    """The GRU's gate arithmetic as one primitive, after the two matrix products:

        forward(gx (B, 3H), gh (B, 3H), h (B, H)) -> h' (B, H)
        with gx = x W_ihᵀ + b_ih and gh = h W_hhᵀ + b_hh, split into r, z, n parts as above:
        r = σ(gx_r + gh_r), z = σ(gx_z + gh_z), n = tanh(gx_n + r ⊙ gh_n),
        h' = (1 − z) ⊙ n + z ⊙ h.

    forward works on NumPy arrays (self.xp). Save what backward needs with
    self.save_for_backward(r, z, n, gh_n) (read back as self.saved_tensors).
    backward(grad) gets ∂L/∂h' and returns (∂L/∂gx, ∂L/∂gh, ∂L/∂h); derive them with σ' = σ(1 − σ)
    and tanh' = 1 − tanh², and join the three gate parts with np.concatenate(..., axis=-1)
    (backward may return arrays: grad.numpy() gives the upstream gradient as one).
    """

    def forward(self, gx, gh, h):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError


# -- exercise 3.3 -------------------------------------------------------------------------------

def unrolled_states(z: np.ndarray, candidates: np.ndarray, h0: np.ndarray) -> np.ndarray:
    """The GRU's states from its gates alone, as weighted sums of candidates (NumPy).

    z (T, H) update gates z_1..z_T, candidates (T, H) = n_1..n_T, h0 (H,). Return (T, H), row
    t−1 holding
        h_t = Σ_{i=1..t} [Π_{j=i+1..t} z_j] (1 − z_i) n_i  +  [Π_{j=1..t} z_j] h_0
    computed from this formula (sums and products), not by running the recurrence.
    """
    raise NotImplementedError
