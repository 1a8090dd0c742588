"""Checks of step 7: your causal mask, your causal self-attention against a NumPy loop over
the past (claims C2 and C11: masked weights exactly 0, outputs before t blind to inputs after
t), and your dependence probe against functions whose dependences are known."""

from __future__ import annotations

import numpy as np

import minigrad as mg

from learn.checks._core import (Wrong, exercise, expect_close, expect_gradcheck, expect_shape,
                                expect_tensor)

FILE = "step07_causal.py"
EXERCISES = {"7.1": ("causal_mask",), "7.2": ("causal_self_attention",),
             "7.3": ("dependence",)}


def _t(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


@exercise("7.1", "causal_mask", file=FILE)
def causal_mask(causal_mask) -> str:
    for T in (1, 2, 5):
        got = np.asarray(causal_mask(T))
        expect_shape(f"causal_mask({T})", got, (T, T))
        if got.dtype != np.bool_:
            raise Wrong(f"causal_mask({T}) has dtype {got.dtype}, expected bool (True = may "
                        f"look)")
        for t in range(T):
            for i in range(T):
                if got[t, i] != (i <= t):
                    raise Wrong(f"causal_mask({T})[{t}, {i}] is {bool(got[t, i])}: position "
                                f"{t} {'may' if i <= t else 'may not'} look at position {i}")
    return "True exactly where i <= t, for T = 1, 2, 5"


@exercise("7.2", "causal_self_attention", file=FILE)
def causal_self_attention(causal_self_attention) -> str:
    rng = np.random.default_rng(72)
    B, T, D, Dk, Dv = 2, 6, 4, 3, 5
    x = rng.standard_normal((B, T, D))
    W_q, W_k, W_v = (rng.standard_normal((D, d)) for d in (Dk, Dk, Dv))
    want_h, want_w = np.zeros((B, T, Dv)), np.zeros((B, T, T))
    full_h = np.zeros((B, T, Dv))
    for b in range(B):
        q, k, v = x[b] @ W_q, x[b] @ W_k, x[b] @ W_v
        for t in range(T):
            s = k[:t + 1] @ q[t] / np.sqrt(Dk)                 # the past and the present only
            a = np.exp(s - s.max())
            want_w[b, t, :t + 1] = a / a.sum()
            want_h[b, t] = want_w[b, t, :t + 1] @ v[:t + 1]
            s = k @ q[t] / np.sqrt(Dk)
            a = np.exp(s - s.max())
            full_h[b, t] = (a / a.sum()) @ v
    weights = [_t(w) for w in (W_q, W_k, W_v)]
    h, w = causal_self_attention(_t(x), *weights)
    expect_tensor("the output h", h)
    above = np.triu(np.ones((T, T), dtype=bool), 1)
    w_np = w.numpy()
    if np.any(w_np[:, above] != 0.0):
        b, t, i = np.argwhere(w_np * above != 0)[0]
        raise Wrong(f"weight α[{b}, {t}, {i}] of a future position is {w_np[b, t, i]!r}, "
                    f"expected exactly 0: put −inf on the masked scores before the softmax")
    expect_close("row sums of α", w_np.sum(axis=-1), np.ones((B, T)), atol=1e-12)
    expect_close("α [b, t, i] (against a NumPy loop over i <= t)", w, want_w, atol=1e-12)
    expect_close("h [b, t, :] (against a NumPy loop over i <= t)", h, want_h, atol=1e-12)
    h_full, _ = causal_self_attention(_t(x), *weights, causal=False)
    expect_close("h with causal=False (every position takes part)", h_full, full_h, atol=1e-12)
    # the probe: change the inputs after t; the outputs up to t must not move at all
    t = 2
    changed = x.copy()
    changed[:, t + 1:] = rng.standard_normal(changed[:, t + 1:].shape) * 10
    h_changed, _ = causal_self_attention(_t(changed), *weights)
    moved = np.abs(h_changed.numpy()[:, :t + 1] - h.numpy()[:, :t + 1])
    if np.any(moved != 0):
        raise Wrong(f"outputs at positions <= {t} moved by up to {moved.max():.3g} when only "
                    f"inputs after {t} changed: the mask must hide the future")
    xt = _t(x)
    (g,) = mg.grad(causal_self_attention(xt, *weights)[0][:, t].sum(), [xt])
    if np.any(g.numpy()[:, t + 1:] != 0) or not np.all(np.abs(g.numpy()[:, :t + 1]).sum(-1) > 0):
        raise Wrong(f"∂h_{t}/∂x_s should be exactly 0 for s > {t} and nonzero for s <= {t}")
    expect_gradcheck("causal_self_attention", lambda a, b, c, d: causal_self_attention(
        a, b, c, d)[0], [_t(x[:1, :4]), *(_t(v) for v in (W_q, W_k, W_v))])
    return ("weights exactly 0 above the diagonal, rows summing to 1, α and h as a NumPy loop "
            "(1e-12), causal=False as full attention, outputs up to t unmoved by inputs after t "
            "(gradient exactly 0), gradcheck")


@exercise("7.3", "dependence", file=FILE)
def dependence(dependence) -> str:
    rng = np.random.default_rng(73)
    T, Dx = 5, 3
    x = rng.standard_normal((1, T, Dx))
    mixing = np.tril(rng.standard_normal((T, T)))
    mixing[3, 1] = 0.0                                  # one more exact zero inside the past
    got = np.asarray(dependence(lambda v: mg.tensor(mixing) @ v, _t(x)), dtype=np.float64)
    expect_shape("dependence of a (T, T) mixing", got, (T, T))
    # Σ_j out[t, j] = Σ_s mixing[t, s] Σ_j x[s, j]: the gradient is mixing[t, s] in all Dx
    expect_close("dependence[t, s] of out = M @ x (expected |M[t, s]|·√Dx)", got,
                 np.abs(mixing) * np.sqrt(Dx), atol=1e-12)
    got = np.asarray(dependence(lambda v: mg.relu(v[:, ::-1]) * 2.0, _t(x)), dtype=np.float64)
    want = np.zeros((T, T))
    for t in range(T):
        want[t, T - 1 - t] = 2.0 * np.sqrt(np.sum(x[0, T - 1 - t] > 0))
    expect_close("dependence[t, s] of out = 2·relu(x reversed) (exact zeros off the "
                 "anti-diagonal and where relu is flat)", got, want, atol=1e-12)
    return "|M[t, s]|·√Dx for a mixing matrix and the reversal's anti-diagonal, exact zeros kept"
