"""The workloads in PyTorch (CPU, one thread), the peer that minigrad's numbers are read
against. Only imported when `torch` is installed; it is never a dependency of minigrad."""

from __future__ import annotations

import numpy as np
import torch

from .problems import (ENCODER_PARAMS, GRU_PARAMS, MLP_PARAMS, Problem, gru_from_primitives,
                       mlp_widths, w0_outputs, w1_outputs, w2_outputs, w3_outputs, w4_outputs)

torch.set_num_threads(1)


def _grads(module: torch.nn.Module) -> dict[str, np.ndarray]:
    return {k: p.grad.numpy() for k, p in module.named_parameters()}


class W0Torch:
    def __init__(self, problem: Problem):
        self.pairs = int(problem.sizes["n_ops"]) // 2
        self.x = torch.tensor(problem.arrays["x"], requires_grad=True)
        self.w = torch.tensor(problem.arrays["w"], requires_grad=True)
        self.seed = torch.ones_like(self.x)

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
        return w0_outputs(y.detach().numpy(), self.x.grad.numpy(), self.w.grad.numpy())


class W1Torch:
    def __init__(self, problem: Problem):
        widths = mlp_widths(problem.arrays)
        self.model = torch.nn.Sequential(
            torch.nn.Linear(widths[0], widths[1]), torch.nn.ReLU(),
            torch.nn.Linear(widths[1], widths[2]), torch.nn.ReLU(),
            torch.nn.Linear(widths[2], widths[3]))
        self.model.load_state_dict({k: torch.tensor(problem.arrays[k]) for k in MLP_PARAMS})
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=problem.sizes["lr"])
        self.x = torch.tensor(problem.arrays["x"])
        self.targets = torch.tensor(problem.arrays["targets"])

    def step(self):
        self.optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(self.model(self.x), self.targets)
        loss.backward()
        self.optimizer.step()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        params = {k: p.detach().numpy() for k, p in self.model.named_parameters()}
        return w1_outputs(loss.detach().numpy(), _grads(self.model), params)


class W2TorchGRU:
    """torch.nn.GRU."""

    def __init__(self, problem: Problem):
        inputs = problem.arrays["x"].shape[2]
        hidden = problem.arrays["weight_hh_l0"].shape[1]
        self.gru = torch.nn.GRU(inputs, hidden, batch_first=True)
        self.gru.load_state_dict({k: torch.tensor(problem.arrays[k]) for k in GRU_PARAMS})
        self.x = torch.tensor(problem.arrays["x"])

    def step(self):
        self.gru.zero_grad(set_to_none=True)
        out, _ = self.gru(self.x)
        loss = (out * out).mean()
        loss.backward()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w2_outputs(loss.detach().numpy(), _grads(self.gru))


class W2TorchPrimitives:
    """The same step-by-step code as the minigrad version (problems.gru_from_primitives)."""

    def __init__(self, problem: Problem):
        self.params = {k: torch.tensor(problem.arrays[k], requires_grad=True)
                       for k in GRU_PARAMS}
        self.x = torch.tensor(problem.arrays["x"])
        self.h0 = torch.zeros(self.x.shape[0], self.params["weight_hh_l0"].shape[1])

    def step(self):
        p = self.params
        for t in p.values():
            t.grad = None
        out = gru_from_primitives(self.x, self.h0, p["weight_ih_l0"], p["weight_hh_l0"],
                                  p["bias_ih_l0"], p["bias_hh_l0"], torch.stack)
        loss = (out * out).mean()
        loss.backward()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        return w2_outputs(loss.detach().numpy(),
                          {k: t.grad.numpy() for k, t in self.params.items()})


class W3Torch:
    """torch.nn.TransformerEncoderLayer(norm_first=True); PyTorch stores the q, k, v weights
    stacked as self_attn.in_proj_weight (3E, E), so they are stacked in and split out here."""

    def __init__(self, problem: Problem):
        a = problem.arrays
        _, steps, embed = a["src"].shape
        ffn = a["linear1.weight"].shape[0]
        self.layer = torch.nn.TransformerEncoderLayer(
            embed, int(problem.sizes["heads"]), ffn, dropout=0.0, norm_first=True,
            batch_first=True)
        state = {k: torch.tensor(a[k]) for k in ENCODER_PARAMS if not _is_qkv(k)}
        for kind in ("weight", "bias"):
            state[f"self_attn.in_proj_{kind}"] = torch.tensor(
                np.concatenate([a[f"self_attn.{n}_proj.{kind}"] for n in "qkv"]))
        self.layer.load_state_dict(state)
        self.embed = embed
        self.src = torch.tensor(a["src"])
        # a float mask, −inf where attention is NOT allowed (PyTorch's convention)
        self.mask = torch.nn.Transformer.generate_square_subsequent_mask(steps)

    def step(self):
        self.layer.zero_grad(set_to_none=True)
        out = self.layer(self.src, src_mask=self.mask, is_causal=True)
        loss = (out * out).mean()
        loss.backward()
        return loss

    def outputs(self, loss) -> dict[str, np.ndarray]:
        grads = _grads(self.layer)
        e = self.embed
        for kind in ("weight", "bias"):
            stacked = grads.pop(f"self_attn.in_proj_{kind}")
            for i, n in enumerate("qkv"):
                grads[f"self_attn.{n}_proj.{kind}"] = stacked[i * e:(i + 1) * e]
        return w3_outputs(loss.detach().numpy(), grads)


def _is_qkv(name: str) -> bool:
    return any(f".{n}_proj." in name for n in "qkv")


class W4Torch:
    def __init__(self, problem: Problem):
        self.qkv = [torch.tensor(problem.arrays[n], requires_grad=True) for n in "qkv"]
        self.grad_out = torch.tensor(problem.arrays["grad_out"])

    def step(self):
        q, k, v = self.qkv
        q.grad = k.grad = v.grad = None
        out = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        out.backward(self.grad_out)
        return out

    def outputs(self, out) -> dict[str, np.ndarray]:
        return w4_outputs(out.detach().numpy(),
                          {n: t.grad.numpy() for n, t in zip("qkv", self.qkv)})
