"""Step 9 solutions."""

from __future__ import annotations

import numpy as np

import minigrad as mg


def equivariance_gap(f, x, order):
    permuted_first = f(mg.tensor(x[:, order])).numpy()
    permuted_after = f(mg.tensor(x)).numpy()[:, order]
    return float(np.max(np.abs(permuted_first - permuted_after)))


def _frequencies(D, base):
    return base ** (-np.arange(0, D, 2) / D)                           # ω_i, (D/2,)


def sinusoidal_encoding(T, D, base=10000.0):
    angles = np.arange(T)[:, None] * _frequencies(D, base)             # (T, D/2)
    pe = np.zeros((T, D))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def shift_rotation(phi, D, base=10000.0):
    R = np.zeros((D, D))
    for i, w in enumerate(_frequencies(D, base)):
        c, s = np.cos(w * phi), np.sin(w * phi)
        # sin(a + b) = sin a cos b + cos a sin b;  cos(a + b) = cos a cos b − sin a sin b
        R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return R
