"""Checks of step 6: your hard and soft lookups against NumPy, with the gradients each lets
through (claim C18), and your gradient measure against gradients known by hand."""

from __future__ import annotations

import numpy as np

import minigrad as mg

from learn.checks._core import Wrong, exercise, expect_close, expect_gradcheck, expect_tensor

FILE = "step06_soft_hard.py"
EXERCISES = {"6.1": ("nearest_lookup", "soft_lookup"), "6.2": ("gradient_norms",)}


def _t(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def _grads(output, tensors, cotangent):
    """∂(Σ output ⊙ cotangent)/∂ each tensor, None where no gradient reaches it."""
    return mg.grad((output * mg.tensor(cotangent)).sum(), tensors, allow_unused=True)


@exercise("6.1", "nearest_lookup", "soft_lookup", file=FILE)
def lookups(nearest_lookup, soft_lookup) -> str:
    rng = np.random.default_rng(61)
    B, Lq, Lk, D, Dv = 2, 3, 5, 4, 3
    q, k, v = (rng.standard_normal(s) for s in ((B, Lq, D), (B, Lk, D), (B, Lk, Dv)))
    scores = q @ k.swapaxes(-1, -2)
    best = scores.argmax(axis=-1)
    one_hot = np.eye(Lk)[best]
    cotangent = rng.standard_normal((B, Lq, Dv))

    tq, tk, tv = _t(q), _t(k), _t(v)
    output, weights = nearest_lookup(tq, tk, tv)
    expect_tensor("nearest_lookup's output", output)
    expect_close("nearest_lookup weights [b, i, j] (one-hot of argmax_j q_i·k_j)", weights,
                 one_hot, atol=0)
    expect_close("nearest_lookup output [b, i, :] (the value of the best key)", output,
                 one_hot @ v, atol=1e-12)
    gq, gk, gv = _grads(output, [tq, tk, tv], cotangent)
    for name, g in (("q", gq), ("k", gk)):
        if g is not None and np.any(g.numpy() != 0):
            raise Wrong(f"nearest_lookup passes gradient to {name}: a hard choice changes not "
                        f"at all under a small change of {name}, so ∂output/∂{name} is 0; make "
                        f"the weights from mg.argmax and mg.one_hot, which carry no gradient")
    if gv is None:
        raise Wrong("nearest_lookup passes no gradient to the values: output = weights @ v")
    expect_close("nearest_lookup ∂L/∂v (only the chosen slots)", gv,
                 one_hot.swapaxes(-1, -2) @ cotangent, atol=1e-12)

    tq, tk, tv = _t(q), _t(k), _t(v)
    output, weights = soft_lookup(tq, tk, tv)
    expect_tensor("soft_lookup's output", output)
    e = np.exp(scores / np.sqrt(D) - (scores / np.sqrt(D)).max(axis=-1, keepdims=True))
    soft = e / e.sum(axis=-1, keepdims=True)
    expect_close("soft_lookup weights [b, i, j] (softmax of q_i·k_j / √D)", weights, soft,
                 atol=1e-12)
    expect_close("soft_lookup output", output, soft @ v, atol=1e-12)
    gq, gk, gv = _grads(output, [tq, tk, tv], cotangent)
    for name, g in (("q", gq), ("k", gk), ("v", gv)):
        if g is None or not np.all(np.abs(g.numpy()).sum(axis=-1) > 0):
            raise Wrong(f"soft_lookup gives no gradient to some row of {name}: every query, "
                        f"key and value moves a softmax-weighted average")
    expect_gradcheck("soft_lookup", lambda a, b, c: soft_lookup(a, b, c)[0],
                     [_t(q), _t(k), _t(v)])
    # a sharp softmax is the hard choice: scale the query up and the weights become one-hot
    _, sharp = soft_lookup(_t(q * 1e6), _t(k), _t(v))
    expect_close("soft_lookup weights for the query × 10⁶ (the limit is the nearest key)",
                 sharp, one_hot, atol=1e-6)
    return ("nearest: one-hot weights, gradient to v only (exactly 0 for q and k); soft: "
            "NumPy's softmax (1e-12), gradcheck, gradient to q, k and v, the nearest key as "
            "its sharp limit (1e-6)")


@exercise("6.2", "gradient_norms", file=FILE)
def gradient_norms(gradient_norms) -> str:
    rng = np.random.default_rng(62)
    a, b = _t(rng.standard_normal(4)), _t(rng.standard_normal(4))
    c = _t(-1.0 - rng.random(3))                     # all negative: relu passes nothing back
    e = _t(rng.standard_normal((2, 3)))              # only through argmax: no gradient
    unused = _t(rng.standard_normal(2))
    chosen = mg.one_hot(mg.argmax(e, axis=-1), 3, dtype=np.float64)
    loss = (a * b).sum() + mg.relu(c).sum() + (chosen * 2.0).sum()
    params = {"a": a, "b": b, "c": c, "e": e, "unused": unused}
    got = gradient_norms(loss, params)
    if not isinstance(got, dict) or set(got) != set(params):
        raise Wrong(f"expected a dict with the keys {sorted(params)}, got "
                    f"{sorted(got) if isinstance(got, dict) else type(got).__name__}")
    want = {"a": np.linalg.norm(b.numpy()), "b": np.linalg.norm(a.numpy()), "c": 0.0,
            "e": 0.0, "unused": 0.0}
    for name, value in want.items():
        if not isinstance(got[name], float):
            raise Wrong(f"the norm for {name!r} is a {type(got[name]).__name__}, expected a "
                        f"float")
        if not np.isclose(got[name], value, atol=1e-12, rtol=1e-12):
            why = {"a": "∂(a·b)/∂a = b", "b": "∂(a·b)/∂b = a",
                   "c": "relu passes no gradient for negative inputs",
                   "e": "argmax carries no gradient", "unused": "the loss does not use it"}
            raise Wrong(f"the norm for {name!r} is {got[name]!r}, expected {value!r} "
                        f"({why[name]}; tolerance 1e-12)")
    for name, tensor in params.items():
        if tensor.grad is not None:
            raise Wrong(f"{name}.grad was set: measure with mg.grad, which leaves .grad alone")
    try:
        loss.backward()
    except Exception:
        raise Wrong("the loss can no longer be backpropagated after your measurement: pass "
                    "retain_graph=True to mg.grad") from None
    return ("norms match ‖b‖ and ‖a‖ (1e-12); 0.0 through relu's flat side, through argmax "
            "and for an unused tensor; .grad untouched; the graph kept")
