"""The extreme-values arm (edges.py): every registry entry that declares `edges` is run at
±1e20 (±3e7 in float32), exact zeros, empty axes, ±inf and NaN, and exact kinks, as it
declares, against float64 NumPy. Each entry's check is a fraction of a second; the fuzzer's
long mode (MINIGRAD_FUZZ_EXAMPLES=100000, see test_fuzz.py) repeats it with more draws.

Where PyTorch is installed it is a second oracle at the same inputs (the shift aside: PyTorch's
own logsumexp is inexact at 1e20): values, gradients, and second derivatives at exact zeros,
for the entries with an obvious PyTorch twin (`torch_twins`). Where minigrad's convention is
documented to differ from PyTorch's (docs/operations.md, "Edge values") the difference is
listed in DIFFERENCES, and each listed difference must still be met."""

from __future__ import annotations

import math
import os
import warnings

import numpy as np
import pytest

from .edges import _differs, _reference, _run, edge_inputs, edge_problems, second_derivatives
from .registry import BY_NAME, EDGES, REGISTRY
from .registry.core import _sum_to
from .registry.reduce import _axes

ROUNDS = max(1, int(os.environ.get("MINIGRAD_FUZZ_EXAMPLES", "2000")) // 2000)
EDGED = [op for op in REGISTRY if op.edges is not None]


def test_every_declared_entry_exists():
    assert {op.name for op in EDGED} == set(EDGES)


@pytest.mark.parametrize("op", EDGED, ids=[op.name for op in EDGED])
def test_entries_at_their_edges(op):
    for round_ in range(ROUNDS):
        problems = edge_problems(op, np.random.default_rng([7, round_]))
        assert not problems, "\n".join(problems[:8])


# -- PyTorch as a second oracle ---------------------------------------------------------------

def torch_twins(torch) -> dict:
    """Registry entry -> the same computation in PyTorch, on torch tensors with the entry's
    options."""
    def reduction(reduce):
        """reduce(y, -1) over `axis` (None, an int or a tuple), the axes moved last and merged
        into one (torch.prod takes one dim only), then kept as size 1 if `keepdims`."""
        def call(x, axis, keepdims):
            axes = () if x.ndim == 0 else _axes(axis, x.ndim)
            kept = [d for d in range(x.ndim) if d not in axes]
            y = x.permute((*kept, *axes)).reshape(*[x.shape[d] for d in kept],
                                                  math.prod(x.shape[d] for d in axes))
            y = reduce(y, -1)
            return y.reshape([1 if d in axes else n for d, n in enumerate(x.shape)]) \
                if keepdims else y
        return call

    def keywords(f):
        """The functional form, its options passed by name as the registry names them
        (PyTorch's note that padding="same" with an even kernel pads a copy is not a
        finding)."""
        def call(*operands, **options):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                return f(*operands, **options)
        return call

    def scan(f):
        return lambda x, axis: f(x.reshape(-1), 0) if axis is None else f(x, axis)

    return {"mul": lambda a, b: a * b, "pow_scalar": lambda a, p: a ** p,
            "abs": torch.abs, "tanh": torch.tanh,
            "gelu_tanh": lambda a: torch.nn.functional.gelu(a, approximate="tanh"),
            "logit": torch.logit, "maximum": torch.maximum, "minimum": torch.minimum, "sigmoid": torch.sigmoid, "relu": torch.relu,
            "clip": lambda a, lo, hi: torch.clamp(a, lo, hi), "logaddexp": torch.logaddexp,
            "xlogy": torch.xlogy, "sum": reduction(torch.sum), "prod": reduction(torch.prod),
            "max": reduction(torch.amax), "min": reduction(torch.amin),
            "logsumexp": reduction(torch.logsumexp), "cumsum": scan(torch.cumsum),
            "vector_norm": reduction(lambda y, d: torch.linalg.vector_norm(y, 2, dim=d)),
            "cumprod": scan(torch.cumprod), "logcumsumexp": scan(torch.logcumsumexp),
            "softmax": lambda a, axis: torch.softmax(a, axis),
            "log_softmax": lambda a, axis: torch.log_softmax(a, axis),
            **{name: keywords(getattr(torch.nn.functional, name)) for name in (
                "conv1d", "conv2d", "conv3d", "max_pool1d", "max_pool2d", "max_pool3d",
                "avg_pool1d", "avg_pool2d", "avg_pool3d")}}


def _slices(test, a, axis):
    """test(a) over a whole slice along `axis`, spread back over the slice's elements."""
    return np.broadcast_to(test(a).all(axis=axis, keepdims=True), a.shape)


# (entry, "value" or "gradient", the documented difference, where(*arrays, **options) -> the
# elements where it applies, in the value's shape; a gradient takes those of its operand's
# elements that broadcast into them)
DIFFERENCES = [
    ("logaddexp", "gradient", "a = b = ±inf: ½ each, 0 each where both are −inf (PyTorch: NaN)",
     lambda a, b: np.isinf(a) & (a == b)),
    ("logsumexp", "gradient", "an element +inf: the +inf elements share it (PyTorch: NaN)",
     lambda a, axis, keepdims: a == np.inf),
    ("logsumexp", "gradient", "a slice all −inf: 0 (PyTorch: NaN)",
     lambda a, axis, keepdims: _slices(lambda x: x == -np.inf, a, axis)),
    ("softmax", "value", "an element +inf: NaN there only (PyTorch: over the whole slice)",
     lambda a, axis: ~_slices(lambda x: x != np.inf, a, axis)),
    ("softmax", "value", "a slice all −inf: 0 (PyTorch: NaN)",
     lambda a, axis: _slices(lambda x: x == -np.inf, a, axis)),
    ("softmax", "gradient", "a slice all −inf: 0 (PyTorch: NaN)",
     lambda a, axis: _slices(lambda x: x == -np.inf, a, axis)),
    ("gelu_tanh", "gradient", "x = ±inf: 1 and 0, the tails' slopes (PyTorch: NaN)",
     lambda a: np.isinf(a)),
    ("max", "gradient", "a slice holding NaN: its NaN elements share the gradient (PyTorch's "
     "amax: NaN everywhere; its max() over all axes: as here)",
     lambda a, axis, keepdims: ~_slices(lambda x: ~np.isnan(x), a, axis)),
    ("min", "gradient", "a slice holding NaN: its NaN elements share the gradient (PyTorch's "
     "amin: NaN everywhere)",
     lambda a, axis, keepdims: ~_slices(lambda x: ~np.isnan(x), a, axis)),
    ("maximum", "gradient", "a NaN operand gets the gradient, the other none (PyTorch gives "
     "both operands all of it wherever either is NaN)",
     lambda a, b: np.isnan(a) | np.isnan(b)),
    ("minimum", "gradient", "a NaN operand gets the gradient, the other none (PyTorch gives "
     "both operands all of it wherever either is NaN)",
     lambda a, b: np.isnan(a) | np.isnan(b)),
]
# the cross-entropy entries keep the class axis last and have no plain PyTorch twin
TWINNED = [op for op in EDGED if op.name not in ("cross_entropy", "weighted_cross_entropy")]


@pytest.mark.parametrize("op", TWINNED, ids=[op.name for op in TWINNED])
def test_entries_at_their_edges_against_pytorch(op):
    torch = pytest.importorskip("torch")
    problems = pytorch_problems(op, torch, np.random.default_rng(11))
    assert not problems, "\n".join(problems[:8])


def pytorch_problems(op, torch, rng, listed=DIFFERENCES) -> list[str]:
    """Where minigrad and PyTorch disagree at the entry's edge inputs beyond the `listed`
    differences, and the listed differences that did not occur."""
    twin = torch_twins(torch)[op.name]
    differences = [d[1:] for d in listed if d[0] == op.name]
    seen, met, problems = set(), set(), []

    def compare(what, label, actual, expected, arrays, options, rtol, atol=0.0):
        actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
        documented = np.zeros(actual.shape, bool)
        for i, (kind, _, where) in enumerate(differences):
            if kind == what and actual.shape == expected.shape:
                mask = _sum_to(np.asarray(where(*arrays, **options), float), actual.shape) > 0
                if mask.any():
                    seen.add(i)
                if _differs(actual[mask], expected[mask], rtol, atol):
                    met.add(i)
                documented |= mask
        if actual.shape != expected.shape or \
                _differs(actual[~documented], expected[~documented], rtol, atol):
            problems.append(f"{label}: {actual.tolist()}, PyTorch {expected.tolist()} at "
                            f"{[a.tolist() for a in arrays]} {options}")

    for kind, arrays, options in edge_inputs(op, rng):
        weights = rng.standard_normal(_reference(op, arrays, options).shape)
        second = kind == "zeros" and op.second_order
        with np.errstate(all="ignore"):
            out, grads, inputs = _run(op, arrays, options, weights, create_graph=second)
        leaves = [torch.tensor(a, requires_grad=True) for a in arrays]
        found = twin(*leaves, **options)
        expected = torch.autograd.grad(found, leaves, torch.tensor(weights), allow_unused=True,
                                       create_graph=second)
        compare("value", f"[{kind}] {op.name} value", out.numpy(), found.detach().numpy(),
                arrays, options, 1e-12)
        for k, (g, e, a) in enumerate(zip(grads, expected, arrays)):
            compare("gradient", f"[{kind}] {op.name} gradient of operand {k}",
                    np.zeros(a.shape) if g is None else g.numpy(),
                    np.zeros(a.shape) if e is None else e.detach().numpy(), arrays, options,
                    1e-10, 1e-12)
        if not second:
            continue
        # ∂⟨u, ∇⟨w, f⟩⟩/∂x from each side's recorded gradient
        directions = [rng.standard_normal(a.shape) for a in arrays]
        ours = second_derivatives(grads, inputs, directions)
        recorded = sum((e * torch.tensor(u)).sum() for e, u in zip(expected, directions)
                       if e is not None and e.requires_grad)
        theirs = (torch.autograd.grad(recorded, leaves, allow_unused=True)
                  if torch.is_tensor(recorded) else [None] * len(leaves))
        for k, (d, e, a) in enumerate(zip(ours, theirs, arrays)):
            compare("second", f"[zeros] {op.name} second derivative along operand {k}", d,
                    np.zeros(a.shape) if e is None else e.numpy(), arrays, options, 1e-9,
                    1e-11)
    for i, (what, said, _) in enumerate(differences):
        if i not in met:
            why = "no longer differs" if i in seen else "was never drawn"
            problems.append(f"{op.name}: a listed difference from PyTorch {why}: {what}, {said}")
    return problems


def test_the_pytorch_oracle_catches_an_x_gradient_of_xlogy_lost_at_zero(monkeypatch):
    """xlogy's ∂z/∂x taken as 0 wherever x = 0: it is log y there for y > 0."""
    torch = pytest.importorskip("torch")
    from minigrad.ops import elementwise

    def backward(self, grad):
        g, x, y = self.values(grad, *self.inputs)
        return self.ops.where(self.inputs[0].data == 0, 0.0, g * self.ops.log(y)), g * x / y
    assert not pytorch_problems(BY_NAME["xlogy"], torch, np.random.default_rng(11))
    monkeypatch.setattr(elementwise.Xlogy, "backward", backward)
    problems = pytorch_problems(BY_NAME["xlogy"], torch, np.random.default_rng(11))
    assert any(p.startswith("[zeros] xlogy gradient of operand 0") for p in problems)
    assert any(p.startswith("[zeros] xlogy second derivative") for p in problems)


def test_a_listed_difference_that_no_longer_occurs_is_reported():
    torch = pytest.importorskip("torch")
    made_up = ("mul", "value", "a made-up difference",
               lambda a, b: np.ones(np.broadcast_shapes(a.shape, b.shape), bool))
    problems = pytorch_problems(BY_NAME["mul"], torch, np.random.default_rng(11), [made_up])
    assert problems == ["mul: a listed difference from PyTorch no longer differs: value, a "
                        "made-up difference"]
