"""Step 9 exercises: permutation equivariance, sinusoidal positional encodings, and the shift
of position as a rotation."""

from __future__ import annotations

import numpy as np

import minigrad as mg


# -- exercise 9.1 -------------------------------------------------------------------------------

def equivariance_gap(f, x: np.ndarray, order: np.ndarray) -> float:
    """How far f is from permutation-equivariant for one permutation, as a float:

        max |f(P x) − P f(x)|   over all elements,

    where x is a NumPy array (B, T, D), f maps a Tensor (B, T, D) to a Tensor (B, T, D'), and
    P x = x[:, order] reorders the positions. 0.0 means f commutes with this reordering."""
    raise NotImplementedError


# -- exercise 9.2 -------------------------------------------------------------------------------

def sinusoidal_encoding(T: int, D: int, base: float = 10000.0) -> np.ndarray:
    """The table PE (T, D), float64, D even, for positions t = 0 .. T−1:

        PE[t, 2i] = sin(t / base^(2i/D)),   PE[t, 2i+1] = cos(t / base^(2i/D))
    """
    raise NotImplementedError


# -- exercise 9.3 -------------------------------------------------------------------------------

def shift_rotation(phi: float, D: int, base: float = 10000.0) -> np.ndarray:
    """R(φ) (D, D), float64, with PE(t + φ) = R(φ) PE(t) for every t (PE(t) as a column).

    R is block-diagonal: block i, rows and columns 2i and 2i+1, is the 2×2 map that takes
    (sin ω_i t, cos ω_i t) to (sin ω_i (t+φ), cos ω_i (t+φ)), ω_i = base^(−2i/D). Work it out
    from the addition formulas of sin and cos."""
    raise NotImplementedError
