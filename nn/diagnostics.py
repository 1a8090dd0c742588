"""Training diagnostics: how activations and gradients behave, layer by layer, recorded with
hooks, so the model's code stays as it is.

    diagnostics = nn.Diagnostics(model)              # hooks on the model's layers
    for step in range(steps):
        loss = loss_fn(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        diagnostics.step(optimizer)                  # in place of optimizer.step()
    diagnostics.plot().savefig("diagnostics.png")

What is recorded, on every `every`-th step (training forwards only: nothing is recorded while
grad mode is off, e.g. during evaluation; a module called several times in one step is
described by its first call):

    activations   for each watched module's output y: mean, std, a histogram, and the
                  saturated fraction where saturation means something: |y| > s for Tanh,
                  y < 1 − s or y > s for Sigmoid, and for attention layers the fraction of
                  queries whose largest weight exceeds s (a softmax gone one-hot), s = 0.97
    gradients     for the same outputs, the gradient that reaches them, ∂L/∂y: mean, std
                  (a tensor hook registered on y by the forward hook)
    parameters    per parameter w: ‖∂L/∂w‖, std(∂L/∂w) / std(w) and the update-to-data ratio
                  std(Δw) / std(w) of the optimizer step (log10 ≈ −3 is the usual healthy
                  value; much lower and the layer barely learns)

A forward hook (`Module.register_forward_hook`) sees each watched module's output; the hooks
are removed by `remove()` (or on leaving a `with nn.Diagnostics(model) as d:` block).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

import minigrad as mg

from .attention import (AdditiveAttention, BilinearAttention, DotProductAttention,
                        HardAttention, MultiHeadAttention, RBFAttention)
from .activations import Sigmoid, Tanh
from .module import Module
from .plots import plot_diagnostics  # noqa: F401  (its home before plots.py)

__all__ = ["Diagnostics"]

ATTENTION_LAYERS = (DotProductAttention, BilinearAttention, AdditiveAttention, RBFAttention,
                    HardAttention, MultiHeadAttention)


class Diagnostics:
    """Activation, gradient and update statistics of a model's layers, recorded with hooks.

    Args:
        model: the Module to watch.
        modules: names of the submodules to watch (as `model.named_modules()` lists them);
            default: every module without children, plus every attention layer.
        every: record every `every`-th step (counted by `step`); other steps cost nothing.
        saturation: the threshold s of the saturated fractions (see the module docstring).
        bins: bins of the activation histograms.

    `records` holds one dict per recorded step: {"step", "activations": {module: {"mean",
    "std", "saturated" (None where it means nothing), "histogram": (counts, edges)}},
    "gradients": {module: {"mean", "std"}}, "parameters": {name: {"grad_norm", "grad_to_data",
    "update_to_data"}}}; `series(section, statistic)` gives one curve per layer.
    """

    def __init__(self, model: Module, modules: Sequence[str] | None = None, every: int = 1,
                 saturation: float = 0.97, bins: int = 50):
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"Diagnostics: every must be an int >= 1, got {every!r}")
        if not 0.5 < saturation < 1.0:
            raise ValueError(f"Diagnostics: saturation must lie in (0.5, 1), got {saturation}")
        named = dict(model.named_modules())
        if modules is None:
            modules = [name for name, m in named.items() if name and
                       (not any(True for _ in m.children()) or isinstance(m, ATTENTION_LAYERS))]
        unknown = [name for name in modules if name not in named]
        if unknown:
            raise ValueError(f"Diagnostics: no submodule named {', '.join(map(repr, unknown))}; "
                             f"the model has {', '.join(repr(n) for n in named if n)}")
        self.model, self.every, self.saturation, self.bins = model, every, saturation, bins
        self.modules = list(modules)
        self.parameters = [(name, p) for name, p in model.named_parameters()]
        self.records: list[dict] = []
        self.step_count = 0
        self._current: dict | None = None
        self._handles = [named[name].register_forward_hook(self._forward_hook(name))
                         for name in self.modules]

    # -- hooks ----------------------------------------------------------------------------
    def _recording(self) -> bool:
        return self.step_count % self.every == 0 and mg.is_grad_enabled()

    def _record(self) -> dict:
        if self._current is None:
            self._current = {"step": self.step_count, "activations": {}, "gradients": {},
                             "parameters": {}}
        return self._current

    def _forward_hook(self, name: str):
        def hook(module: Module, args: tuple, output) -> None:
            if not self._recording():
                return None
            activation, weights = _activation_of(module, output)
            if activation is None or name in self._record()["activations"]:
                return None                      # a second call in one step: the first counts
            values = activation.numpy().astype(np.float64)
            counts, edges = np.histogram(values, bins=self.bins)
            self._record()["activations"][name] = {
                "mean": float(values.mean()), "std": float(values.std()),
                "saturated": self._saturated(module, values, weights),
                "histogram": (counts.tolist(), edges.tolist())}
            if activation.requires_grad:
                activation.register_hook(self._gradient_hook(name))
            return None
        return hook

    def _gradient_hook(self, name: str):
        def hook(grad: mg.Tensor) -> None:
            values = grad.numpy().astype(np.float64)
            self._record()["gradients"][name] = {"mean": float(values.mean()),
                                                 "std": float(values.std())}
            return None
        return hook

    def _saturated(self, module: Module, values: np.ndarray, weights) -> float | None:
        s = self.saturation
        if weights is not None:                          # attention: one-hot rows
            w = weights.numpy()
            return float((w.max(axis=-1) > s).mean()) if w.size else None
        if isinstance(module, Tanh):
            return float((np.abs(values) > s).mean())
        if isinstance(module, Sigmoid):
            return float(((values > s) | (values < 1 - s)).mean())
        return None

    # -- the optimizer step ---------------------------------------------------------------
    def step(self, optimizer=None) -> None:
        """Record the parameters' gradients, run `optimizer.step()` (if given) and record what
        it changed; then count the step. Call it where `optimizer.step()` would be."""
        recording = self.step_count % self.every == 0
        before = {}
        if recording:
            parameters = self._record()["parameters"]
            for name, p in self.parameters:
                data = p.numpy().astype(np.float64)
                entry = {"grad_norm": None, "grad_to_data": None, "update_to_data": None}
                data_std = float(data.std())
                if p.grad is not None:
                    g = p.grad.numpy().astype(np.float64)
                    entry["grad_norm"] = float(np.sqrt((g ** 2).sum()))
                    entry["grad_to_data"] = float(g.std()) / data_std if data_std > 0 else None
                parameters[name] = entry
                before[name] = (data, data_std)
        if optimizer is not None:
            optimizer.step()
            if recording:
                for name, p in self.parameters:
                    data, data_std = before[name]
                    change = p.numpy().astype(np.float64) - data
                    if data_std > 0:
                        parameters[name]["update_to_data"] = float(change.std()) / data_std
        if self._current is not None:
            self.records.append(self._current)
            self._current = None
        self.step_count += 1

    # -- reading --------------------------------------------------------------------------
    def series(self, section: str, statistic: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """{layer or parameter name: (steps, values)} of one statistic over the recorded steps,
        e.g. series("activations", "saturated") or series("parameters", "update_to_data");
        steps where it was not recorded (or means nothing) are left out."""
        if section not in ("activations", "gradients", "parameters"):
            raise ValueError(f"Diagnostics.series: section must be 'activations', "
                             f"'gradients' or 'parameters', got {section!r}")
        curves: dict[str, tuple[list, list]] = {}
        for record in self.records:
            for name, entry in record[section].items():
                value = entry.get(statistic)
                if value is not None:
                    steps, values = curves.setdefault(name, ([], []))
                    steps.append(record["step"])
                    values.append(value)
        return {name: (np.asarray(s), np.asarray(v)) for name, (s, v) in curves.items()}

    def summary(self) -> dict:
        """The last recorded step, without histograms: a small dict for a metrics file."""
        if not self.records:
            return {}
        last = self.records[-1]
        return {"step": last["step"],
                "activations": {n: {k: v for k, v in e.items() if k != "histogram"}
                                for n, e in last["activations"].items()},
                "gradients": last["gradients"], "parameters": last["parameters"]}

    def remove(self) -> None:
        """Unregister every hook; the records stay."""
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self) -> "Diagnostics":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()

    def plot(self, title: str | None = None):
        """The recorded statistics as a matplotlib Figure (see `plot_diagnostics`)."""
        return plot_diagnostics({"": self}, title=title)


def _activation_of(module: Module, output):
    """The output tensor to describe, and an attention layer's weights (else None)."""
    if isinstance(output, mg.Tensor):
        return output, None
    if isinstance(output, tuple) and output and isinstance(output[0], mg.Tensor):
        weights = output[1] if (isinstance(module, ATTENTION_LAYERS) and len(output) > 1
                                and isinstance(output[1], mg.Tensor)) else None
        return output[0], weights
    return None, None


# ---------------------------------------------------------------------------------------------
# Plotting
