"""The workloads in minigrad, written as a user would write them: nn layers, a loss, backward
(and an optimizer step in W1); W0 and the second GRU from minigrad's primitives."""

from __future__ import annotations

import numpy as np

import minigrad as mg
import nn
import nn.functional as F

from .problems import (ENCODER_PARAMS, GRU_PARAMS, MLP_PARAMS, Problem, gru_from_primitives,
                       mlp_widths, w0_outputs, w1_outputs, w2_outputs, w3_outputs, w4_outputs)


class W0Minigrad:
    def __init__(self, problem: Problem):
        self.pairs = int(problem.sizes["n_ops"]) // 2
        self.x = mg.tensor(problem.arrays["x"], requires_grad=True)
        self.w = mg.tensor(problem.arrays["w"], requires_grad=True)
        self.seed = mg.ones(self.x.shape)

    def step(self):
        x, w = self.x, self.w
        x.grad = w.grad = None
        y = x
        for _ in range(self.pairs):
            y = y * w
            y = y + w
        y.backward(self.seed)
        return y

    def outputs(self, y) -> dict[str, np.ndarray]:
        return w0_outputs(y.numpy(), self.x.grad.numpy(), self.w.grad.numpy())


class W1Minigrad:
    def __init__(self, problem: Problem):
        widths = mlp_widths(problem.arrays)
        self.model = nn.Sequential(nn.Linear(widths[0], widths[1]), nn.ReLU(),
                                   nn.Linear(widths[1], widths[2]), nn.ReLU(),
                                   nn.Linear(widths[2], widths[3]))
        self.model.load_state_dict({k: problem.arrays[k] for k in MLP_PARAMS})
        self.optimizer = nn.optim.SGD(self.model.parameters(), lr=problem.sizes["lr"])
        self.x = mg.tensor(problem.arrays["x"])
        self.targets = mg.tensor(problem.arrays["targets"])

    def step(self):
        self.optimizer.zero_grad()
        loss = self.loss_and_backward(self.x, self.targets)
        self.optimizer.step()
        return loss

    def loss_and_backward(self, x, targets):
        loss = F.cross_entropy(self.model(x), targets)
        loss.backward()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        named = dict(self.model.named_parameters())
        return w1_outputs(loss.numpy(), {k: p.grad.numpy() for k, p in named.items()},
                          {k: p.numpy() for k, p in named.items()})


class W2MinigradGRU:
    """nn.GRU."""

    def __init__(self, problem: Problem):
        inputs = problem.arrays["x"].shape[2]
        hidden = problem.arrays["weight_hh_l0"].shape[1]
        self.gru = nn.GRU(inputs, hidden, batch_first=True)
        self.gru.load_state_dict({k: problem.arrays[k] for k in GRU_PARAMS})
        self.x = mg.tensor(problem.arrays["x"])

    def step(self):
        self.gru.zero_grad()
        return self.loss_and_backward(self.x)

    def loss_and_backward(self, x):
        out, _ = self.gru(x)                             # (B, T, H)
        loss = (out * out).mean()
        loss.backward()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w2_outputs(loss.numpy(), {k: p.grad.numpy()
                                         for k, p in self.gru.named_parameters()})


class W2MinigradPrimitives:
    """The GRU from matmul, slicing, sigmoid, tanh, mul and add (problems.gru_from_primitives)."""

    def __init__(self, problem: Problem):
        self.params = {k: mg.tensor(problem.arrays[k], requires_grad=True) for k in GRU_PARAMS}
        self.x = mg.tensor(problem.arrays["x"])
        self.h0 = mg.zeros((self.x.shape[0], self.params["weight_hh_l0"].shape[1]))

    def step(self):
        p = self.params
        for t in p.values():
            t.grad = None
        out = gru_from_primitives(self.x, self.h0, p["weight_ih_l0"], p["weight_hh_l0"],
                                  p["bias_ih_l0"], p["bias_hh_l0"], mg.stack)
        loss = (out * out).mean()
        loss.backward()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w2_outputs(loss.numpy(), {k: t.grad.numpy() for k, t in self.params.items()})


class W3Minigrad:
    def __init__(self, problem: Problem):
        _, steps, embed = problem.arrays["src"].shape
        ffn = problem.arrays["linear1.weight"].shape[0]
        self.layer = nn.TransformerEncoderLayer(embed, int(problem.sizes["heads"]), ffn,
                                                dropout=0.0, norm_first=True)
        self.layer.load_state_dict({k: problem.arrays[k] for k in ENCODER_PARAMS})
        self.src = mg.tensor(problem.arrays["src"])
        self.mask = nn.causal_mask(steps)

    def step(self):
        self.layer.zero_grad()
        return self.loss_and_backward(self.src)

    def loss_and_backward(self, src):
        out = self.layer(src, mask=self.mask)            # (B, T, E)
        loss = (out * out).mean()
        loss.backward()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w3_outputs(loss.numpy(), {k: p.grad.numpy()
                                         for k, p in self.layer.named_parameters()})


class W4Minigrad:
    def __init__(self, problem: Problem):
        self.qkv = [mg.tensor(problem.arrays[n], requires_grad=True) for n in "qkv"]
        self.grad_out = mg.tensor(problem.arrays["grad_out"])

    def step(self):
        q, k, v = self.qkv
        q.grad = k.grad = v.grad = None
        out, _ = F.scaled_dot_product_attention(q, k, v)  # (B, heads, L, Dh)
        out.backward(self.grad_out)
        return out

    def outputs(self, out) -> dict[str, np.ndarray]:
        return w4_outputs(out.numpy(), {n: t.grad.numpy() for n, t in zip("qkv", self.qkv)})


# -- the same steps under minigrad.compile: forward and backward replayed as array code -------
#
# Each compiled implementation lists its compiled steps in `compiled` (their `stats` count
# eager calls, captures and replays) and has `prime()`: the eager call and the capture, after
# which the weights are put back, so that the next step is a replay that starts from the
# problem's initial weights. run.py compares that replayed step with NumPy and requires every
# timed step to be a replay; instructions.py counts replays only.

class _Compiled:
    compiled: tuple = ()

    def prime(self) -> None:
        for _ in range(2):
            self.step()


class W0MinigradCompiled(_Compiled, W0Minigrad):
    def __init__(self, problem: Problem):
        super().__init__(problem)
        self.step = mg.compile(super().step)
        self.compiled = (self.step,)


class W1MinigradCompiled(_Compiled, W1Minigrad):
    """Forward, loss and backward compiled; zero_grad and the SGD step stay outside (in-place
    updates are refused inside a compiled step)."""

    def __init__(self, problem: Problem):
        super().__init__(problem)
        self._initial = {k: problem.arrays[k] for k in MLP_PARAMS}
        self.loss_and_backward = mg.compile(super().loss_and_backward)
        self.compiled = (self.loss_and_backward,)

    def prime(self) -> None:
        super().prime()
        self.model.load_state_dict(self._initial)        # in place: the SGD steps undone


class W2MinigradGRUCompiled(_Compiled, W2MinigradGRU):
    """nn.GRU's forward, the loss and backward compiled; zero_grad outside."""

    def __init__(self, problem: Problem):
        super().__init__(problem)
        self.loss_and_backward = mg.compile(super().loss_and_backward)
        self.compiled = (self.loss_and_backward,)


class W2MinigradPrimitivesCompiled(_Compiled, W2MinigradPrimitives):
    def __init__(self, problem: Problem):
        super().__init__(problem)
        self.step = mg.compile(super().step)
        self.compiled = (self.step,)


class W3MinigradCompiled(_Compiled, W3Minigrad):
    """The encoder layer's forward, the loss and backward compiled; zero_grad outside."""

    def __init__(self, problem: Problem):
        super().__init__(problem)
        self.loss_and_backward = mg.compile(super().loss_and_backward)
        self.compiled = (self.loss_and_backward,)
