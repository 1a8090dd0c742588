"""A minimal tape autodiff, as a measuring stick for W2 written from primitives.

How fast can any engine that runs Python for each operation go on that workload? This one keeps
only what `problems.gru_from_primitives` needs: every operation appends a closure to a list, and
backward calls the closures newest first. It has none of what a framework owes its users: no
checks of shapes, dtypes or devices, no hooks, retained gradients, name scopes, anomaly mode or
second derivatives, no graph to draw, no lazy gradients (a weight's gradient is one product per
step, a slice's a zero-filled array). It is not part of minigrad and is used only here: `run.py`
times it next to the others, and the distance from it to minigrad is what minigrad's features
cost on this workload.
"""

from __future__ import annotations

import numpy as np

from .problems import GRU_PARAMS, Problem, gru_from_primitives, w2_outputs


class Var:
    """An array, its gradient, and the tape it records on (None: a constant, no gradient)."""

    __slots__ = ("data", "grad", "tape")

    def __init__(self, data, tape: list | None = None):
        self.data, self.grad, self.tape = data, None, tape

    @property
    def shape(self):
        return self.data.shape

    def _receive(self, g) -> None:
        self.grad = g if self.grad is None else self.grad + g

    def _result(self, data, other: Var | None = None) -> Var:
        tape = self.tape if other is None or self.tape is not None else other.tape
        return Var(data, tape)

    def __add__(self, other: Var) -> Var:
        out = self._result(self.data + other.data, other)
        if out.tape is not None:
            def backward(g):                  # ∂/∂a = ∂/∂b = 1; a bias sums over the batch
                for v in (self, other):
                    if v.tape is not None:
                        v._receive(g if g.shape == v.data.shape else g.sum(axis=0))
            out.tape.append((out, backward))
        return out

    def __rsub__(self, number) -> Var:
        out = self._result(number - self.data)
        if out.tape is not None:
            out.tape.append((out, lambda g: self._receive(-g)))     # ∂(c − a)/∂a = −1
        return out

    def __mul__(self, other: Var) -> Var:
        out = self._result(self.data * other.data, other)
        if out.tape is not None:
            def backward(g):                  # ∂(ab)/∂a = b, ∂(ab)/∂b = a
                if self.tape is not None:
                    self._receive(g * other.data)
                if other.tape is not None:
                    other._receive(g * self.data)
            out.tape.append((out, backward))
        return out

    def __matmul__(self, other: Var) -> Var:
        out = self._result(self.data @ other.data, other)
        if out.tape is not None:
            def backward(g):                  # ∂L/∂A = G Bᵀ, ∂L/∂B = Aᵀ G
                if self.tape is not None:
                    self._receive(g @ other.data.T)
                if other.tape is not None:
                    other._receive(self.data.T @ g)
            out.tape.append((out, backward))
        return out

    @property
    def T(self) -> Var:
        out = self._result(self.data.T)
        if out.tape is not None:
            out.tape.append((out, lambda g: self._receive(g.T)))
        return out

    def __getitem__(self, index) -> Var:
        out = self._result(self.data[index])
        if out.tape is not None:
            def backward(g):                  # zero except at the index
                full = np.zeros_like(self.data)
                full[index] = g
                self._receive(full)
            out.tape.append((out, backward))
        return out

    def sigmoid(self) -> Var:
        y = 1 / (1 + np.exp(-self.data))
        out = self._result(y)
        if out.tape is not None:
            out.tape.append((out, lambda g: self._receive(g * y * (1 - y))))     # σ(1 − σ)
        return out

    def tanh(self) -> Var:
        y = np.tanh(self.data)
        out = self._result(y)
        if out.tape is not None:
            out.tape.append((out, lambda g: self._receive(g * (1 - y * y))))     # 1 − tanh²
        return out

    def mean(self) -> Var:
        out = self._result(np.asarray(self.data.mean(dtype=self.data.dtype)))
        if out.tape is not None:
            out.tape.append((out, lambda g: self._receive(
                np.full(self.data.shape, g / self.data.size, dtype=self.data.dtype))))
        return out


def stack(values: list[Var], axis: int) -> Var:
    tape = next((v.tape for v in values if v.tape is not None), None)
    out = Var(np.stack([v.data for v in values], axis), tape)
    if tape is not None:
        def backward(g):                      # each input gets its own slice back
            lead = (slice(None),) * axis
            for i, v in enumerate(values):
                if v.tape is not None:
                    v._receive(g[lead + (i,)])
        tape.append((out, backward))
    return out


def backward(loss: Var) -> None:
    """Gradients into every Var on the loss's tape, from ∂loss/∂loss = 1."""
    loss.grad = np.ones_like(loss.data)
    for out, propagate in reversed(loss.tape):
        if out.grad is not None:
            propagate(out.grad)


class W2TapeFloor:
    """W2 from primitives (the same `gru_from_primitives` code as minigrad's and PyTorch's),
    on this tape; loss = mean(h²)."""

    def __init__(self, problem: Problem):
        self.arrays = {k: problem.arrays[k] for k in GRU_PARAMS}
        x = problem.arrays["x"]
        hidden = self.arrays["weight_hh_l0"].shape[1]
        self.x = Var(x)
        self.h0 = Var(np.zeros((x.shape[0], hidden), dtype=x.dtype))

    def step(self):
        tape: list = []
        params = {k: Var(a, tape) for k, a in self.arrays.items()}
        out = gru_from_primitives(self.x, self.h0, params["weight_ih_l0"],
                                  params["weight_hh_l0"], params["bias_ih_l0"],
                                  params["bias_hh_l0"], stack)
        loss = (out * out).mean()
        backward(loss)
        tape.clear()          # every Var refers to the tape that holds it: free them now
        self.grads = {k: p.grad for k, p in params.items()}
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w2_outputs(loss.data, self.grads)
