"""Checks of step 5: your score functions against NumPy loops and finite differences (claim
C19), and your attention against the worked decoder step of claim C16, its defining properties
and nn.DotProductAttention."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import nn

from learn.checks._core import Wrong, exercise, expect_close, expect_tensor

FILE = "step05_attention.py"
EXERCISES = {"5.1": ("score_dot", "score_scaled", "score_general", "score_additive"),
             "5.2": ("attend",)}


def _t(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


@exercise("5.1", "score_dot", "score_scaled", "score_general", "score_additive", file=FILE)
def scores(score_dot, score_scaled, score_general, score_additive) -> str:
    rng = np.random.default_rng(8)
    B, Lq, Lk, D, A = 2, 3, 4, 5, 6
    q, k = rng.standard_normal((B, Lq, D)), rng.standard_normal((B, Lk, D))
    W, W_q, W_k = rng.standard_normal((D, D)), rng.standard_normal((A, D)), rng.standard_normal((A, D))
    v = rng.standard_normal(A)
    want = {name: np.zeros((B, Lq, Lk)) for name in ("dot", "scaled", "general", "additive")}
    for b in range(B):
        for i in range(Lq):
            for j in range(Lk):
                want["dot"][b, i, j] = q[b, i] @ k[b, j]
                want["scaled"][b, i, j] = q[b, i] @ k[b, j] / np.sqrt(D)
                want["general"][b, i, j] = q[b, i] @ W @ k[b, j]
                want["additive"][b, i, j] = v @ np.tanh(W_q @ q[b, i] + W_k @ k[b, j])
    calls = {"dot": (score_dot, (q, k)), "scaled": (score_scaled, (q, k)),
             "general": (score_general, (q, k, W)),
             "additive": (score_additive, (q, k, W_q, W_k, v))}
    for name, (fn, arrays) in calls.items():
        got = expect_tensor(f"score_{name}'s result", fn(*(_t(a) for a in arrays)))
        expect_close(f"score_{name} scores [b, i, j]", got, want[name], atol=1e-10)
        try:
            mg.gradcheck(lambda *ts: fn(*ts), [_t(a) for a in arrays])
        except mg.GradcheckError as error:
            raise Wrong(f"score_{name}: gradients disagree with finite differences: "
                        f"{error}") from None
    return "all four match NumPy loops (1e-10) and pass gradcheck"


@exercise("5.2", "attend", file=FILE)
def attend(attend) -> str:
    # the worked decoder step: encoder states h1..h4, decoder state s1, dot-product scores
    H = np.array([[1.0, 1.0], [3.0, 2.0], [2.0, 4.0], [1.0, 5.0]])
    s1 = np.array([2.0, 1.0])
    scores = H @ s1
    e = np.exp(scores - scores.max())
    want_w = e / e.sum()
    context, weights = attend(_t(scores[None, None]), _t(H[None]))
    expect_close("weights of the worked example (scores [3, 8, 8, 7])", weights,
                 want_w[None, None], atol=1e-12)
    expect_close("context of the worked example", context, (want_w @ H)[None, None],
                 atol=1e-12)
    # properties on random input with a padding mask
    rng = np.random.default_rng(9)
    sc = _t(rng.standard_normal((2, 3, 5)) * 3)
    values = _t(rng.standard_normal((2, 5, 4)))
    mask = np.ones((2, 1, 5), dtype=bool)
    mask[1, :, 3:] = False                               # sequence 1 has only 3 keys
    context, weights = attend(sc, values, mask)
    w = weights.numpy()
    expect_close("row sums of the weights", w.sum(axis=-1), np.ones((2, 3)), atol=1e-12)
    if np.any(w[1, :, 3:] != 0.0):
        raise Wrong(f"masked weights must be exactly 0, got {w[1, :, 3:].max():.3g} at a "
                    f"masked key: put -inf on masked scores before the softmax")
    q = rng.standard_normal((2, 3, 4))
    k = rng.standard_normal((2, 5, 4))
    want_context, _ = nn.DotProductAttention(scaled=False)(mg.tensor(q), mg.tensor(k), values,
                                                          mask=mask)
    got_context, _ = attend(_t(q @ k.swapaxes(-1, -2)), values, mask)
    expect_close("context against nn.DotProductAttention(scaled=False)", got_context,
                 want_context, atol=1e-10)
    context.sum().backward()
    if sc.grad is None or np.any(sc.grad.numpy()[1, :, 3:] != 0.0):
        raise Wrong("masked scores must get exactly zero gradient (and allowed ones some)")
    return ("the worked example's exact weights and context, rows summing to 1, exact zeros "
            "under a mask, parity with nn.DotProductAttention (1e-10)")
