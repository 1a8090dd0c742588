"""The hand-written NumPy references of benchmarks/ compute the right losses and gradients.

Every benchmark ratio divides by one of these references, so they are checked here, at tiny
sizes, against minigrad's autodiff of the same computation and, when PyTorch is installed,
against PyTorch's. No timing happens here.
"""

import numpy as np
import pytest

from benchmarks import numpy_reference as ref
from benchmarks.problems import (Problem, w0_problem, w1_problem, w2_problem, w3_problem,
                                 w4_problem, worst_mismatch)

# (name, problem maker with tiny sizes, NumPy class, minigrad class, torch class)
CASES = [
    ("W0", lambda rng: w0_problem(rng, n_ops=6, n=3), "W0NumPy", "W0Minigrad", "W0Torch"),
    ("W1", lambda rng: w1_problem(rng, batch=5, inputs=7, hidden=6, classes=4), "W1NumPy",
     "W1Minigrad", "W1Torch"),
    ("W2 nn.GRU", lambda rng: w2_problem(rng, batch=3, steps=4, inputs=5, hidden=6),
     "W2NumPy", "W2MinigradGRU", "W2TorchGRU"),
    ("W2 primitives", lambda rng: w2_problem(rng, batch=3, steps=4, inputs=5, hidden=6),
     "W2NumPy", "W2MinigradPrimitives", "W2TorchPrimitives"),
    ("W3", lambda rng: w3_problem(rng, batch=2, steps=5, embed=8, heads=2, ffn=12), "W3NumPy",
     "W3Minigrad", "W3Torch"),
    ("W4", lambda rng: w4_problem(rng, length=5, batch=2, heads=2, dh=4), "W4NumPy",
     "W4Minigrad", "W4Torch"),
]
IDS = [case[0] for case in CASES]


def _one_step(cls, problem: Problem) -> dict:
    instance = cls(problem)
    return {k: np.array(v, copy=True) for k, v in instance.outputs(instance.step()).items()}


def _assert_agree(got: dict, expected: dict) -> None:
    """Every array within 1e-4 of its scale (see worst_mismatch), in float32."""
    assert sorted(got) == sorted(expected)
    name, error = worst_mismatch(got, expected)
    assert error <= 1e-4, f"{name} differs by {error:.2e} of its scale"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_numpy_reference_matches_minigrad(case, rng):
    from benchmarks import minigrad_workloads as mgw
    _, make, numpy_name, minigrad_name, _ = case
    problem = make(rng)
    expected = _one_step(getattr(mgw, minigrad_name), problem)
    got = _one_step(getattr(ref, numpy_name), problem)
    _assert_agree(got, expected)
    assert all(np.all(np.isfinite(v)) for v in got.values())


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_numpy_reference_matches_torch(case, rng):
    pytest.importorskip("torch")
    from benchmarks import torch_workloads as tw
    _, make, numpy_name, _, torch_name = case
    problem = make(rng)
    _assert_agree(_one_step(getattr(ref, numpy_name), problem),
                  _one_step(getattr(tw, torch_name), problem))


def test_tape_floor_matches_the_w2_reference(rng):
    """The minimal tape engine run.py times as a measuring stick computes W2 from primitives."""
    from benchmarks.tape_floor import W2TapeFloor
    problem = w2_problem(rng, batch=3, steps=4, inputs=5, hidden=6)
    got = _one_step(W2TapeFloor, problem)
    _assert_agree(got, _one_step(ref.W2NumPy, problem))
    assert all(v.dtype == np.float32 for v in got.values())


def test_w1_reference_takes_an_sgd_step(rng):
    """After one step every parameter moved by exactly −lr × its gradient."""
    problem = w1_problem(rng, batch=4, inputs=3, hidden=5, classes=3)
    out = _one_step(ref.W1NumPy, problem)
    for name in ("0.weight", "2.bias", "4.weight"):
        moved = problem.arrays[name] - problem.sizes["lr"] * out[f"{name}.grad"]
        np.testing.assert_allclose(out[f"{name} after SGD"], moved, rtol=1e-6, atol=1e-7)


def test_w4_reference_matches_finite_differences(rng):
    """∂/∂q of Σ out ⊙ grad_out by central differences, in float64."""
    problem = w4_problem(rng, length=3, batch=1, heads=1, dh=2)
    problem.arrays = {k: v.astype(np.float64) for k, v in problem.arrays.items()}
    analytic = _one_step(ref.W4NumPy, problem)["q.grad"]

    def objective(q):
        scores = q @ problem.arrays["k"].swapaxes(-1, -2) / np.sqrt(q.shape[-1])
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        weights /= weights.sum(-1, keepdims=True)
        return float(np.sum((weights @ problem.arrays["v"]) * problem.arrays["grad_out"]))

    q = problem.arrays["q"]
    numeric = np.zeros_like(q)
    eps = 1e-6
    for index in np.ndindex(q.shape):
        plus, minus = q.copy(), q.copy()
        plus[index] += eps
        minus[index] -= eps
        numeric[index] = (objective(plus) - objective(minus)) / (2 * eps)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-8)


def test_worst_mismatch_names_the_array_that_differs():
    reference = {"loss": np.array(1.0), "a.grad": np.array([1.0, 2.0]),
                 "b.grad": np.array([0.0, 0.0])}
    same = {k: v.copy() for k, v in reference.items()}
    assert worst_mismatch(same, reference)[1] == 0.0
    off = dict(same, **{"a.grad": np.array([1.0, 2.1])})
    name, error = worst_mismatch(off, reference)
    assert name == "a.grad" and error == pytest.approx(0.05)
    # a gradient that is zero in exact arithmetic compares on 1e-3 of the largest gradient
    noisy = dict(same, **{"b.grad": np.array([2e-9, 0.0])})
    assert worst_mismatch(noisy, reference)[1] == pytest.approx(1e-6)
    assert worst_mismatch({"loss": np.array(1.0)}, reference)[1] == float("inf")
