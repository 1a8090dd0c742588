"""What every implementation of a workload starts from: the same initial weights and data.

A `Problem` holds NumPy arrays (float32 weights and inputs, int64 targets) and a few sizes the
arrays do not show. Each implementation (NumPy by hand, minigrad, PyTorch) is a class built from
a Problem with two methods:

    step()           one timed step: forward, backward (and for W1 the SGD update); returns
                     the loss (W0: the chain's result y, W4: the attention output)
    outputs(result)  the loss and the gradients of that step as NumPy arrays under the names
                     used here, so that run.py can check all implementations agree

Gradients are cleared at the start of every step, so a step pays the same bookkeeping as a
training loop. Inputs (x, src) never require grad. Sizes (fixed for the benchmarks):

    W0  n_ops elementwise ops on 4×4 float32: y₀ = x, then y ← y ⊙ w and y ← y + w in turn;
        backward from y with a seed of ones; x and w both get gradients. Reported per op.
    W1  MLP 784-256-256-10, ReLU, mean cross-entropy over a batch of 64, SGD with lr 0.01.
    W2  GRU B=32, T=50, I=64, H=128 from h₀ = 0; loss = mean(h²) over all outputs (B, T, H).
    W3  pre-LN Transformer encoder layer B=16, T=64, E=128, 4 heads, causal mask, FFN 512
        (ReLU), no dropout; loss = mean(out²).
    W4  scaled dot-product attention over (B=8, heads=4, L, Dh=32), no mask, for
        L = 64 … 1024; backward from a fixed random ∂L/∂out; q, k, v get gradients.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Problem:
    """Initial weights and data shared by every implementation, and sizes they need."""

    arrays: dict[str, np.ndarray]
    sizes: dict[str, float] = field(default_factory=dict)


def _uniform(rng: np.random.Generator, shape, fan_in: int) -> np.ndarray:
    """U(−1/√fan_in, 1/√fan_in) in float32, PyTorch's default for Linear and GRU weights."""
    bound = 1.0 / math.sqrt(fan_in)
    return rng.uniform(-bound, bound, size=shape).astype(np.float32)


def _normal(rng: np.random.Generator, shape, scale: float = 1.0) -> np.ndarray:
    return (scale * rng.standard_normal(shape)).astype(np.float32)


def worst_mismatch(got: dict, reference: dict) -> tuple[str, float]:
    """The array with the largest max |got − ref| ÷ scale, and that error. The scale is the
    array's largest |ref|, but at least 1e-3 of the largest gradient: a gradient that is zero
    in exact arithmetic (a key bias under softmax) then compares by absolute rounding noise."""
    grad_scale = max((float(np.max(np.abs(v))) for k, v in reference.items()
                      if k.endswith(".grad") and v.size), default=0.0)
    worst = ("", -1.0)
    for name, ref in reference.items():
        if name not in got:
            return name + " (missing)", float("inf")
        value = np.asarray(got[name], dtype=np.float64)
        ref = np.asarray(ref, dtype=np.float64)
        if value.shape != ref.shape:
            return f"{name} (shape {value.shape} vs {ref.shape})", float("inf")
        floor = 1e-3 * grad_scale if name.endswith(".grad") else 0.0
        scale = max(float(np.max(np.abs(ref))) if ref.size else 0.0, floor, 1e-30)
        error = float(np.max(np.abs(value - ref))) / scale if ref.size else 0.0
        if np.isnan(error):
            error = float("inf")
        if error > worst[1]:
            worst = (name, error)
    return worst


def _named(first: tuple[str, np.ndarray], grads: dict, names: list[str]) -> dict:
    """{first name: value, "<param>.grad": gradient, ...} with float32 NumPy arrays."""
    out = {first[0]: np.array(first[1], dtype=np.float32)}
    out.update({f"{name}.grad": np.array(grads[name]) for name in names})
    return out


# -- W0: per-op overhead ----------------------------------------------------------------------

def w0_problem(rng: np.random.Generator, n_ops: int = 200, n: int = 4) -> Problem:
    if n_ops <= 0 or n_ops % 2:
        raise ValueError(f"W0: n_ops must be a positive even number (mul/add pairs), "
                         f"got {n_ops}")
    # w close to 1 keeps y and the gradients bounded over hundreds of multiplications
    arrays = {"x": _normal(rng, (n, n)), "w": 1.0 + _normal(rng, (n, n), 0.01)}
    return Problem(arrays, {"n_ops": n_ops})


def w0_outputs(y, grad_x, grad_w) -> dict[str, np.ndarray]:
    return _named(("y", y), {"x": grad_x, "w": grad_w}, ["x", "w"])


# -- W1: MLP train step -----------------------------------------------------------------------

MLP_PARAMS = ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]


def w1_problem(rng: np.random.Generator, batch: int = 64, inputs: int = 784, hidden: int = 256,
               classes: int = 10) -> Problem:
    """Parameters named as in nn.Sequential(Linear, ReLU, Linear, ReLU, Linear)."""
    widths = [inputs, hidden, hidden, classes]
    arrays = {"x": _normal(rng, (batch, inputs)),
              "targets": rng.integers(0, classes, size=batch).astype(np.int64)}
    for k, (fan_in, fan_out) in enumerate(zip(widths[:-1], widths[1:])):
        arrays[f"{2 * k}.weight"] = _uniform(rng, (fan_out, fan_in), fan_in)
        arrays[f"{2 * k}.bias"] = _uniform(rng, (fan_out,), fan_in)
    return Problem(arrays, {"lr": 0.01})


def mlp_widths(arrays: dict) -> list[int]:
    """[inputs, hidden₁, hidden₂, classes] read off the weights."""
    return [arrays["0.weight"].shape[1], arrays["0.weight"].shape[0],
            arrays["2.weight"].shape[0], arrays["4.weight"].shape[0]]


def w1_outputs(loss, grads: dict, params_after: dict) -> dict[str, np.ndarray]:
    """Loss, gradients, and the parameters after the SGD update."""
    out = _named(("loss", loss), grads, MLP_PARAMS)
    out.update({f"{name} after SGD": np.array(params_after[name]) for name in MLP_PARAMS})
    return out


# -- W2: GRU ----------------------------------------------------------------------------------

GRU_PARAMS = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]


def w2_problem(rng: np.random.Generator, batch: int = 32, steps: int = 50, inputs: int = 64,
               hidden: int = 128) -> Problem:
    """Parameters named and stacked (gates r, z, n) as in nn.GRU / torch.nn.GRU."""
    arrays = {"x": _normal(rng, (batch, steps, inputs)),
              "weight_ih_l0": _uniform(rng, (3 * hidden, inputs), hidden),
              "weight_hh_l0": _uniform(rng, (3 * hidden, hidden), hidden),
              "bias_ih_l0": _uniform(rng, (3 * hidden,), hidden),
              "bias_hh_l0": _uniform(rng, (3 * hidden,), hidden)}
    return Problem(arrays)


def w2_outputs(loss, grads: dict) -> dict[str, np.ndarray]:
    return _named(("loss", loss), grads, GRU_PARAMS)


def gru_from_primitives(x, h, w_ih, w_hh, b_ih, b_hh, stack):
    """A GRU written step by step from the GRUCell equations (nn.GRUCell), gates r, z, n:

        r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz),
        n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 − z) ⊙ n + z ⊙ h.

    x: (B, T, I), h: (B, H). Returns the outputs (B, T, H). The same code runs on minigrad and
    on torch tensors (they spell these operations alike); `stack` is the library's stack.
    """
    hidden = h.shape[1]
    outputs = []
    for t in range(x.shape[1]):
        gx = x[:, t] @ w_ih.T + b_ih                     # (B, 3H)
        gh = h @ w_hh.T + b_hh                           # (B, 3H)
        r = (gx[:, :hidden] + gh[:, :hidden]).sigmoid()
        z = (gx[:, hidden:2 * hidden] + gh[:, hidden:2 * hidden]).sigmoid()
        n = (gx[:, 2 * hidden:] + r * gh[:, 2 * hidden:]).tanh()
        h = (1 - z) * n + z * h                          # (B, H)
        outputs.append(h)
    return stack(outputs, 1)                             # (B, T, H)


# -- W3: pre-LN Transformer encoder layer -----------------------------------------------------

ENCODER_PARAMS = [
    "self_attn.q_proj.weight", "self_attn.q_proj.bias",
    "self_attn.k_proj.weight", "self_attn.k_proj.bias",
    "self_attn.v_proj.weight", "self_attn.v_proj.bias",
    "self_attn.out_proj.weight", "self_attn.out_proj.bias",
    "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
    "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
]


def w3_problem(rng: np.random.Generator, batch: int = 16, steps: int = 64, embed: int = 128,
               heads: int = 4, ffn: int = 512) -> Problem:
    """Parameters named as in nn.TransformerEncoderLayer (separate q, k, v projections)."""
    if embed % heads:
        raise ValueError(f"W3: embed {embed} is not divisible by heads {heads}")
    arrays = {"src": _normal(rng, (batch, steps, embed))}
    for name in ("q_proj", "k_proj", "v_proj", "out_proj"):
        arrays[f"self_attn.{name}.weight"] = _uniform(rng, (embed, embed), embed)
        arrays[f"self_attn.{name}.bias"] = _uniform(rng, (embed,), embed)
    arrays["linear1.weight"] = _uniform(rng, (ffn, embed), embed)
    arrays["linear1.bias"] = _uniform(rng, (ffn,), embed)
    arrays["linear2.weight"] = _uniform(rng, (embed, ffn), ffn)
    arrays["linear2.bias"] = _uniform(rng, (embed,), ffn)
    for name in ("norm1", "norm2"):        # away from 1 and 0, so that their gradients matter
        arrays[f"{name}.weight"] = 1.0 + _normal(rng, (embed,), 0.1)
        arrays[f"{name}.bias"] = _normal(rng, (embed,), 0.1)
    return Problem(arrays, {"heads": heads})


def w3_outputs(loss, grads: dict) -> dict[str, np.ndarray]:
    return _named(("loss", loss), grads, ENCODER_PARAMS)


# -- W4: scaled dot-product attention ---------------------------------------------------------

W4_LENGTHS = [64, 128, 256, 512, 1024]


def w4_problem(rng: np.random.Generator, length: int = 256, batch: int = 8, heads: int = 4,
               dh: int = 32) -> Problem:
    shape = (batch, heads, length, dh)
    arrays = {name: _normal(rng, shape) for name in ("q", "k", "v", "grad_out")}
    return Problem(arrays)


def w4_outputs(out, grads: dict) -> dict[str, np.ndarray]:
    return _named(("out", out), grads, ["q", "k", "v"])
