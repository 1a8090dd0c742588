"""Checks of step 9: your equivariance gap against functions known to commute or not with a
reordering (claim C10), your positional encoding against its formula (C8), and your rotation
R(φ) against PE(t + φ) = R(φ) PE(t) for many t and φ (C9)."""

from __future__ import annotations

import numpy as np

import minigrad as mg

from learn.checks._core import Wrong, exercise, expect_close, expect_shape

FILE = "step09_positions.py"
EXERCISES = {"9.1": ("equivariance_gap",), "9.2": ("sinusoidal_encoding",),
             "9.3": ("shift_rotation",)}


def _encoding(t, D, base):
    """PE at the (possibly fractional) positions t (n,) -> (n, D), by the formula."""
    pe = np.zeros((len(t), D))
    for i in range(D // 2):
        pe[:, 2 * i] = np.sin(t / base ** (2 * i / D))
        pe[:, 2 * i + 1] = np.cos(t / base ** (2 * i / D))
    return pe


@exercise("9.1", "equivariance_gap", file=FILE)
def equivariance_gap(equivariance_gap) -> str:
    rng = np.random.default_rng(91)
    x = rng.standard_normal((2, 5, 3))
    W = mg.tensor(rng.standard_normal((3, 4)))
    order = np.array([3, 0, 4, 1, 2])
    positionwise = lambda v: mg.tanh(v @ W)                 # the same map at every position
    got = equivariance_gap(positionwise, x, order)
    if not isinstance(got, float):
        raise Wrong(f"the gap should be a float, got {type(got).__name__}")
    if got > 1e-12:
        raise Wrong(f"the gap of a position-wise map is {got:.3g}, expected 0 (it treats every "
                    f"position alike, so reordering before or after gives the same)")
    mixing = np.tril(np.ones((5, 5)))                        # a running sum: order matters
    running = lambda v: mg.tensor(mixing) @ v
    want = np.max(np.abs(mixing @ x[:, order] - (mixing @ x)[:, order]))
    got = equivariance_gap(running, x, order)
    if not np.isclose(got, want, atol=1e-12, rtol=1e-9):
        raise Wrong(f"the gap of a running sum for order {order.tolist()} is {got!r}, expected "
                    f"{want!r} = max |f(x[:, order]) − f(x)[:, order]| (tolerance 1e-9)")
    if equivariance_gap(running, x, np.arange(5)) != 0.0:
        raise Wrong("the gap for the identity order must be exactly 0")
    return "0 for a position-wise map and the identity order; a running sum's gap to 1e-9"


@exercise("9.2", "sinusoidal_encoding", file=FILE)
def sinusoidal_encoding(sinusoidal_encoding) -> str:
    for T, D, base in ((1, 2, 10000.0), (7, 6, 10000.0), (50, 16, 10000.0), (12, 8, 1e5)):
        got = np.asarray(sinusoidal_encoding(T, D, base), dtype=np.float64)
        expect_shape(f"sinusoidal_encoding({T}, {D}, base={base:g})", got, (T, D))
        expect_close(f"for T={T}, D={D}, base={base:g} (even columns sin, odd cos), PE",
                     got, _encoding(np.arange(T, dtype=np.float64), D, base),
                     atol=1e-12)
    return "the formula for 4 sizes and the bases 10⁴ and 10⁵ (1e-12)"


@exercise("9.3", "shift_rotation", file=FILE)
def shift_rotation(shift_rotation) -> str:
    rng = np.random.default_rng(93)
    D = 16
    t = np.concatenate([np.arange(0, 60, 7.0), rng.uniform(0, 500, 20)])
    for phi in (0.0, 1.0, 3.0, 17.0, 2.5, -4.0):
        R = np.asarray(shift_rotation(phi, D), dtype=np.float64)
        expect_shape(f"shift_rotation({phi}, {D})", R, (D, D))
        expect_close(f"PE(t + {phi})ᵀ = (R({phi}) PE(t))ᵀ, row = one of {len(t)} positions t",
                     _encoding(t, D, 10000.0) @ R.T, _encoding(t + phi, D, 10000.0), atol=1e-6)
        expect_close(f"R({phi})ᵀ R({phi}) (a rotation keeps lengths: the identity)", R.T @ R,
                     np.eye(D), atol=1e-10)
    expect_close("R(2) R(3) (two shifts are one shift: R(5))",
                 np.asarray(shift_rotation(2.0, D)) @ np.asarray(shift_rotation(3.0, D)),
                 np.asarray(shift_rotation(5.0, D)), atol=1e-10)
    return ("PE(t + φ) = R(φ) PE(t) for 29 positions and 6 shifts, integer and not (1e-6); R "
            "orthogonal; R(2) R(3) = R(5)")
