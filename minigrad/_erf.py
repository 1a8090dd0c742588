"""erf and erfc from a few array operations, for array modules without them (NumPy without
SciPy, the simulated test device).

Two polynomial pieces, split at |x| = 2:

    |x| ≤ 2:   erf(x) = x · P(x²)                     P smooth in t = x² ∈ [0, 4]
    |x| > 2:   erfc(|x|) = e^(−x²) · z · Q(z),  z = 1/|x| ∈ (0, ½]

(erfc(a)·e^(a²)·a tends to 1/√π as a grows and is smooth in 1/a.) The coefficients are fitted
once per precision, on first use, by Chebyshev interpolation of math.erf and math.erfc at 200
points, and evaluated by Horner's rule: degree 18 and 16 in float64 (relative error about
1e-15 for erf, 1e-13 for erfc), 11 and 10 for float32 (evaluated in float64, then rounded:
within about an ulp). Each element takes only its own piece (selected by a mask), some 25
operations, where the series in backend.py takes about 140.
"""

from __future__ import annotations

import functools
import math

import numpy as np

SPLIT = 2.0
_DEGREES = {8: (18, 16), 4: (11, 10), 2: (11, 10)}  # by itemsize: float64, float32, float16


def _erfc_scaled(a: float) -> float:
    """erfc(a)·e^(a²)·a; for a ≥ 26, where e^(a²) overflows, its asymptotic series."""
    if a < 26.0:
        return math.erfc(a) * math.exp(a * a) * a
    inverse = 1.0 / (a * a)
    return (1 - inverse / 2 + 3 * inverse ** 2 / 4 - 15 * inverse ** 3 / 8 +
            105 * inverse ** 4 / 16) / math.sqrt(math.pi)


def _power_basis(coefficients, scale: float, shift: float) -> np.ndarray:
    """Chebyshev coefficients in m = scale·u + shift, rewritten as a polynomial in u."""
    from numpy.polynomial import chebyshev
    in_m = chebyshev.cheb2poly(coefficients)
    out, power, linear = np.zeros(len(in_m)), np.array([1.0]), np.array([shift, scale])
    for c in in_m:
        out[:len(power)] += c * power
        power = np.convolve(power, linear)
    return out[::-1]                                   # highest degree first, for Horner


@functools.lru_cache(maxsize=None)
def _coefficients(itemsize: int) -> tuple[np.ndarray, np.ndarray]:
    """(P, Q) in the power basis of t = x² and z = 1/|x|, highest degree first."""
    from numpy.polynomial import chebyshev       # only when an erf is first needed
    small_degree, large_degree = _DEGREES.get(itemsize, _DEGREES[8])
    k = np.arange(200)
    nodes = np.cos(np.pi * (k + 0.5) / 200)            # Chebyshev points in (−1, 1)
    t = (nodes + 1) * (SPLIT * SPLIT / 2)              # (0, 4)
    small = np.array([math.erf(math.sqrt(v)) / math.sqrt(v) for v in t])
    z = (nodes + 1) / (2 * SPLIT)                      # (0, ½)
    large = np.array([_erfc_scaled(1.0 / v) for v in z])
    p = _power_basis(chebyshev.chebfit(nodes, small, small_degree), 2 / (SPLIT * SPLIT), -1.0)
    q = _power_basis(chebyshev.chebfit(nodes, large, large_degree), 2 * SPLIT, -1.0)
    return p, q


def _horner(coefficients, u):
    out = u * coefficients[0] + coefficients[1]
    for c in coefficients[2:]:
        out *= u
        out += c
    return out


def _pieces(xp, x, tail: bool):
    """erf(x) (tail=False) or erfc(x) (tail=True) on a 1-D float array of the module xp.
    Narrower floats are evaluated in float64 with their shorter polynomials, then rounded
    once, so the result is within an ulp or two of the true value."""
    p, q = _coefficients(x.dtype.itemsize)
    if x.dtype != np.float64:
        return _pieces_in(xp, x.astype(np.float64), tail, p, q).astype(x.dtype)
    return _pieces_in(xp, x, tail, p, q)


def _pieces_in(xp, x, tail: bool, p, q):
    out = xp.empty_like(x)
    small = xp.abs(x) <= SPLIT
    near = x[small]
    if near.size:
        value = near * _horner(p, near * near)            # erf, odd in x
        out[small] = 1 - value if tail else value
    far_mask = ~small
    far = x[far_mask]
    if far.size:
        a = xp.abs(far)
        z = 1 / a
        rest = xp.exp(-a * a) * z * _horner(q, z)          # erfc(|x|)
        positive = far > 0
        if tail:                                           # erfc(−a) = 2 − erfc(a)
            out[far_mask] = xp.where(positive, rest, 2 - rest)
        else:
            out[far_mask] = xp.where(positive, 1 - rest, rest - 1)
    return out


def fast_erf(xp, x):
    """erf(x) elementwise for a float array of the array module xp (its dtype kept)."""
    return _pieces(xp, x.reshape(-1), False).reshape(x.shape)


def fast_erfc(xp, x):
    """erfc(x) = 1 − erf(x) elementwise, accurate in the upper tail (its dtype kept)."""
    return _pieces(xp, x.reshape(-1), True).reshape(x.shape)
