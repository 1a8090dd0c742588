"""Checks of step 3: your GRU cell against nn.GRUCell, your GRUGates backward against finite
differences and autodiff, and your unrolled sum (claim C1) against the recurrence."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import nn

from learn.checks._core import Wrong, exercise, expect_close, expect_tensor

FILE = "step03_gru.py"
EXERCISES = {"3.1": ("gru_cell",), "3.2": ("GRUGates",), "3.3": ("unrolled_states",)}


def _cell_and_inputs(batch: int = 3, inputs: int = 4, hidden: int = 5, seed: int = 5):
    mg.manual_seed(seed)
    cell = nn.GRUCell(inputs, hidden)
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((batch, inputs)), requires_grad=True)
    h = mg.tensor(rng.standard_normal((batch, hidden)) * 0.5, requires_grad=True)
    weights = {name: mg.tensor(value.astype(np.float64), requires_grad=True)
               for name, value in cell.state_dict().items()}
    return cell, x, h, weights


@exercise("3.1", "gru_cell", file=FILE)
def gru_cell(gru_cell) -> str:
    cell, x, h, w = _cell_and_inputs()
    got = expect_tensor("gru_cell's result", gru_cell(x, h, w["weight_ih"], w["weight_hh"],
                                                       w["bias_ih"], w["bias_hh"]))
    with mg.no_grad():
        want = cell(mg.tensor(x.numpy().astype(np.float32)),
                    mg.tensor(h.numpy().astype(np.float32)))
    expect_close("h' (against nn.GRUCell, float32 weights)", got, want, atol=1e-5, rtol=1e-4)
    got.sum().backward()
    if x.grad is None or w["weight_hh"].grad is None:
        raise Wrong("no gradient reached x or weight_hh: build h' from minigrad operations on "
                    "the given tensors")
    return "h' matches nn.GRUCell (1e-4) and gradients flow to x and the weights"


@exercise("3.2", "GRUGates", file=FILE)
def gru_gates(GRUGates) -> str:
    rng = np.random.default_rng(6)
    B, H = 3, 4
    gx = mg.tensor(rng.standard_normal((B, 3 * H)), requires_grad=True)
    gh = mg.tensor(rng.standard_normal((B, 3 * H)), requires_grad=True)
    h = mg.tensor(rng.standard_normal((B, H)), requires_grad=True)
    # the forward against the equations, gate by gate, in NumPy
    a, b, s = gx.numpy(), gh.numpy(), h.numpy()
    sig = lambda v: 1 / (1 + np.exp(-v))
    r, z = sig(a[:, :H] + b[:, :H]), sig(a[:, H:2 * H] + b[:, H:2 * H])
    n = np.tanh(a[:, 2 * H:] + r * b[:, 2 * H:])
    expect_close("forward h'", GRUGates.apply(gx, gh, h), (1 - z) * n + z * s, atol=1e-12)
    try:
        mg.gradcheck(lambda gx, gh, h: GRUGates.apply(gx, gh, h), (gx, gh, h))
    except mg.GradcheckError as error:
        raise Wrong(f"backward disagrees with central differences: {error}") from None
    return "forward matches the equations (1e-12) and backward passes gradcheck for gx, gh, h"


@exercise("3.3", "unrolled_states", file=FILE)
def unrolled_states(unrolled_states) -> str:
    mg.manual_seed(7)
    gru = nn.GRU(3, 4)
    rng = np.random.default_rng(7)
    x = mg.tensor(rng.standard_normal((1, 9, 3)).astype(np.float32))
    h0 = rng.standard_normal((1, 1, 4)).astype(np.float32)
    with mg.no_grad():
        states, _, gates = gru(x, mg.tensor(h0), return_gates=True)
    z = gates[0].z.numpy()[0].astype(np.float64)
    candidates = gates[0].n.numpy()[0].astype(np.float64)
    got = unrolled_states(z, candidates, h0[0, 0].astype(np.float64))
    expect_close("unrolled h_t (row t−1) against the GRU's recurrent states", got,
                 states.numpy()[0], atol=1e-5, rtol=1e-4)
    # a pure formula: with z = 0 the state is the candidate, with z = 1 it is h0
    expect_close("unrolled states with every z = 0", unrolled_states(
        np.zeros((3, 2)), np.ones((3, 2)) * 2, np.ones(2)), np.full((3, 2), 2.0))
    expect_close("unrolled states with every z = 1", unrolled_states(
        np.ones((3, 2)), np.ones((3, 2)) * 2, np.ones(2) * 5), np.full((3, 2), 5.0))
    return ("the unrolled sum equals nn.GRU's recurrent states over 9 steps (1e-4, float32 "
            "gates) and the z = 0 and z = 1 limits")
