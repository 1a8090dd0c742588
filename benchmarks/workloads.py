"""The benchmark workloads and their implementations, by name.

Each workload W0–W4 (sizes and exact definitions in problems.py) is implemented three ways
over the same initial weights:

    numpy_reference.py     the forward and backward passes in NumPy, derived by hand
    minigrad_workloads.py  minigrad and nn, as a user would write it
    torch_workloads.py     PyTorch on the CPU, only when `torch` is installed

W0–W3 also under `minigrad.compile` (named "... compiled": the same minigrad step, captured
once and replayed), and W2 from primitives a further way, as a measuring stick:
`tape_floor.py`, a minimal tape autodiff with none of a framework's features (the floor for an
engine that runs Python per operation).

An implementation is named here by its module and class and imported only when asked for, so a
process that measures NumPy's memory never imports minigrad or torch.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

from .problems import W4_LENGTHS, w0_problem, w1_problem, w2_problem, w3_problem, w4_problem

_MODULES = {"numpy": "numpy_reference", "minigrad": "minigrad_workloads",
            "torch": "torch_workloads", "tape": "tape_floor"}


@dataclass(frozen=True)
class Implementation:
    framework: str          # "numpy", "minigrad", "torch" or "tape"
    class_name: str

    def load(self) -> type:
        """The implementing class; ImportError when its framework is not installed."""
        module = importlib.import_module(f"{__package__}.{_MODULES[self.framework]}")
        return getattr(module, self.class_name)


@dataclass(frozen=True)
class Workload:
    key: str
    title: str
    make_problem: Callable
    implementations: dict[str, Implementation]


def _three(key: str, title: str, make_problem: Callable, compiled: bool = False) -> Workload:
    implementations = {
        "numpy": Implementation("numpy", f"{key}NumPy"),
        "minigrad": Implementation("minigrad", f"{key}Minigrad"),
        "torch": Implementation("torch", f"{key}Torch"),
    }
    if compiled:                          # minigrad.compile: the step captured and replayed
        implementations["minigrad compiled"] = Implementation("minigrad",
                                                              f"{key}MinigradCompiled")
    return Workload(key, title, make_problem, implementations)


WORKLOADS: dict[str, Workload] = {
    "W0": _three("W0", "per-op overhead: chain of mul/add on 4×4 float32, fwd+bwd",
                 w0_problem, compiled=True),
    "W1": _three("W1", "MLP train step: B64, 784-256-256-10, ReLU, cross-entropy, SGD",
                 w1_problem, compiled=True),
    "W2": Workload("W2", "GRU B32 T50 I64 H128, loss mean(h²), fwd+bwd", w2_problem, {
        "numpy": Implementation("numpy", "W2NumPy"),
        "minigrad nn.GRU": Implementation("minigrad", "W2MinigradGRU"),
        "minigrad nn.GRU compiled": Implementation("minigrad", "W2MinigradGRUCompiled"),
        "minigrad primitives": Implementation("minigrad", "W2MinigradPrimitives"),
        "minigrad primitives compiled": Implementation("minigrad",
                                                       "W2MinigradPrimitivesCompiled"),
        "torch nn.GRU": Implementation("torch", "W2TorchGRU"),
        "torch primitives": Implementation("torch", "W2TorchPrimitives"),
        "tape floor, primitives": Implementation("tape", "W2TapeFloor"),
    }),
    "W3": _three("W3", "pre-LN encoder layer B16 T64 E128, 4 heads, causal, FFN 512, fwd+bwd",
                 w3_problem, compiled=True),
    "W4": _three("W4", "scaled dot-product attention B8, 4 heads, Dh 32, fwd+bwd",
                 w4_problem),
}


@dataclass(frozen=True)
class Row:
    """One line of the results table: minigrad and torch against the NumPy reference."""

    label: str
    workload: str
    minigrad: str                  # implementation names within the workload
    torch: str
    target: float                  # the most minigrad ÷ NumPy may be
    sizes: dict = field(default_factory=dict)
    unit: str = "ms"               # "ms" per step, or "µs/op" for W0


# Targets: eager W0 ≤ 4.5× (PyTorch eager takes about 6.5×), W1 ≤ 1.10×, W2 from primitives
# ≤ 1.5×, the rest as before; compiled W0 ≤ 1.3×, W1 ≤ 1.05×, W2 from primitives ≤ 1.35×, and
# the compiled nn.GRU and encoder layer no worse than their eager targets. The PyTorch column of
# a compiled row is PyTorch eager.
ROWS: list[Row] = [
    Row("W0 per-op overhead", "W0", "minigrad", "torch", 4.5, unit="µs/op"),
    Row("W1 MLP train step", "W1", "minigrad", "torch", 1.10),
    Row("W2 GRU, nn.GRU", "W2", "minigrad nn.GRU", "torch nn.GRU", 1.10),
    Row("W2 GRU, from primitives", "W2", "minigrad primitives", "torch primitives", 1.5),
    Row("W0 per-op overhead, compiled", "W0", "minigrad compiled", "torch", 1.3, unit="µs/op"),
    Row("W1 MLP train step, compiled", "W1", "minigrad compiled", "torch", 1.05),
    Row("W2 GRU, nn.GRU, compiled", "W2", "minigrad nn.GRU compiled", "torch nn.GRU", 1.10),
    Row("W2 GRU, from primitives, compiled", "W2", "minigrad primitives compiled",
        "torch primitives", 1.35),
    Row("W3 pre-LN encoder layer", "W3", "minigrad", "torch", 1.05),
    Row("W3 pre-LN encoder layer, compiled", "W3", "minigrad compiled", "torch", 1.05),
] + [Row(f"W4 attention L={n}", "W4", "minigrad", "torch", 1.10, sizes={"length": n})
     for n in W4_LENGTHS]

MEMORY_TARGET = 1.3                # minigrad's peak RSS ÷ the NumPy process's, 20 W3 steps
