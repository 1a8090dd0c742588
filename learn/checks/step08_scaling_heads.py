"""Checks of step 8: your softmax Jacobian against finite differences and its properties (the
saturation behind claim C4), and your head split, merge and multi-head attention against
nn.MultiHeadAttention given the same weights (claim C6)."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import nn

from learn.checks._core import Wrong, exercise, expect_close, expect_shape, expect_tensor

FILE = "step08_scaling_heads.py"
EXERCISES = {"8.1": ("softmax_jacobian",), "8.2": ("split_heads", "merge_heads"),
             "8.3": ("multi_head_attention",)}


def _softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


@exercise("8.1", "softmax_jacobian", file=FILE)
def softmax_jacobian(softmax_jacobian) -> str:
    rng = np.random.default_rng(81)
    for n in (1, 3, 6):
        s = rng.standard_normal(n) * 2
        got = np.asarray(softmax_jacobian(s.copy()), dtype=np.float64)
        expect_shape(f"softmax_jacobian of {n} scores", got, (n, n))
        eps = 1e-6
        want = np.stack([(_softmax(s + eps * e) - _softmax(s - eps * e)) / (2 * eps)
                         for e in np.eye(n)], axis=1)               # column j: ∂p/∂s_j
        expect_close(f"J[i, j] = ∂p_i/∂s_j for {n} scores (against central differences)",
                     got, want, atol=1e-8)
        expect_close(f"row sums of J for {n} scores (Σ_i p_i = 1 always, so 0)",
                     got.sum(axis=1), np.zeros(n), atol=1e-12)
    saturated = np.asarray(softmax_jacobian(np.array([1000.0, 0.0, -1000.0])))
    if not np.all(np.isfinite(saturated)):
        raise Wrong("scores [1000, 0, -1000] give a non-finite Jacobian: subtract max(s) "
                    "before exp")
    expect_close("J for scores [1000, 0, -1000] (a saturated softmax passes no gradient)",
                 saturated, np.zeros((3, 3)), atol=1e-12)
    return ("matches central differences (1e-8) for 1, 3 and 6 scores, rows sum to 0, and a "
            "saturated softmax has J = 0")


@exercise("8.2", "split_heads", "merge_heads", file=FILE)
def split_merge(split_heads, merge_heads) -> str:
    rng = np.random.default_rng(82)
    B, L, heads, Dh = 2, 3, 4, 5
    x = rng.standard_normal((B, L, heads * Dh))
    got = split_heads(mg.tensor(x), heads)
    expect_tensor("split_heads' result", got)
    expect_shape("split_heads((2, 3, 20), 4)", got, (B, heads, L, Dh))
    want = np.zeros((B, heads, L, Dh))
    for h in range(heads):
        want[:, h] = x[:, :, h * Dh:(h + 1) * Dh]
    expect_close("split_heads [b, h, l, j] (expected x[b, l, h·Dh + j])", got, want, atol=0)
    merged = merge_heads(mg.tensor(want))
    expect_tensor("merge_heads' result", merged)
    expect_close("merge_heads(split) [b, l, e] (expected x back)", merged, x, atol=0)
    t = mg.tensor(x, requires_grad=True)
    cotangent = rng.standard_normal(x.shape)
    (g,) = mg.grad((merge_heads(split_heads(t, heads)) * mg.tensor(cotangent)).sum(), [t])
    expect_close("the gradient through split then merge (a rearrangement passes it unchanged)",
                 g, cotangent, atol=0)
    return "head h holds feature block h, merge inverts split exactly, gradients pass through"


@exercise("8.3", "multi_head_attention", file=FILE)
def multi_head_attention(multi_head_attention) -> str:
    rng = np.random.default_rng(83)
    B, Lq, Lk, E, heads = 2, 4, 5, 12, 3
    mg.manual_seed(83)
    reference = nn.MultiHeadAttention(E, heads)
    state = reference.state_dict()
    for name in state:                                   # non-zero biases, so they count
        if name.endswith("bias"):
            state[name] = (rng.standard_normal(state[name].shape) * 0.5).astype(np.float32)
    reference.load_state_dict(state)
    params = {name: mg.tensor(value.astype(np.float64), requires_grad=True)
              for name, value in reference.state_dict().items()}
    query, key, value = (rng.standard_normal((B, L, E)).astype(np.float32)
                         for L in (Lq, Lk, Lk))
    mask = np.ones((B, Lq, Lk), dtype=bool)
    mask[1, :, 3:] = False
    for name, m in (("no mask", None), ("a padding mask", mask)):
        with mg.no_grad():
            want_out, want_w = reference(*(mg.tensor(a) for a in (query, key, value)), mask=m)
        out, weights = multi_head_attention(
            *(mg.tensor(a.astype(np.float64)) for a in (query, key, value)), params, heads,
            mask=m)
        expect_tensor("the output", out)
        expect_close(f"weights [b, head, i, j] with {name} (against nn.MultiHeadAttention, "
                     f"float32)", weights, want_w, atol=1e-5, rtol=1e-4)
        expect_close(f"output [b, i, e] with {name} (against nn.MultiHeadAttention, float32)",
                     out, want_out, atol=1e-5, rtol=1e-4)
    if np.any(weights.numpy()[1, :, :, 3:] != 0):
        raise Wrong("masked weights must be exactly 0 in every head")
    # heads are independent: a change in head 0's query rows changes head 0's weights only
    Dh = E // heads
    changed = dict(params)
    bump = np.zeros((E, E))
    bump[:Dh] = rng.standard_normal((Dh, E))
    changed["q_proj.weight"] = params["q_proj.weight"] + mg.tensor(bump)
    args = [mg.tensor(a.astype(np.float64)) for a in (query, key, value)]
    _, before = multi_head_attention(*args, params, heads)
    _, after = multi_head_attention(*args, changed, heads)
    differs = np.abs(after.numpy() - before.numpy()).max(axis=(0, 2, 3)) > 0
    if not differs[0] or differs[1:].any():
        raise Wrong(f"changing the query weights of head 0 (rows 0..{Dh - 1} of q_proj.weight) "
                    f"changed the weights of heads {np.flatnonzero(differs).tolist()}, expected "
                    f"[0] only: head h must use feature block h")
    out.sum().backward()
    missing = [name for name, p in params.items() if p.grad is None]
    if missing:
        raise Wrong(f"no gradient reached {', '.join(missing)}")
    return ("weights and output match nn.MultiHeadAttention with and without a mask (1e-4, "
            "float32), exact zeros under the mask, head 0's weights move alone, gradients "
            "reach every parameter")
