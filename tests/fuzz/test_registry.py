"""Every registered op, one at a time: forward against its NumPy reference (float64 and
float32), gradcheck in float64, the create_graph gradient against the plain one, and a second
derivative; on the host, the simulated device and (when present) a GPU. And the registry is
complete: a Function subclass of minigrad or nn that no entry reaches fails here by name."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg

from ..minigrad.primitive_checks import assert_recorded_gradient_matches
from .registry import ABSTRACT, REGISTRY, OpInfo, Sample, all_function_classes, unregistered

MAX_CHECKS = 8          # samples per op and device; spread evenly over the op's check list
IDS = [op.name for op in REGISTRY]


def test_every_function_subclass_is_registered():
    missing = unregistered()
    assert not missing, (
        "Function subclasses without a registry entry (add one to the module of its kind in "
        "tests/fuzz/registry/, "
        "see tests/README.md): " + ", ".join(f"{c.__module__}.{c.__qualname__}" for c in missing))


def test_registry_names_real_function_classes():
    classes = set(all_function_classes())
    assert ABSTRACT <= classes
    for op in REGISTRY:
        assert op.function in classes, f"{op.name}: {op.function} is not a minigrad/nn Function"
        assert op.function not in ABSTRACT, f"{op.name} names an abstract base"


def test_zero_d_and_size_one_shapes_are_first_class():
    """Every op taking operands of any shape is sampled, and checked, at () and (1,)."""
    for op in REGISTRY:
        if all(len(s.shapes[0]) >= 1 for s in op.samples):
            continue                      # needs an axis: (1,) at least
        for kind in ("samples", "checks"):
            shapes = {shape for s in getattr(op, kind) or op.samples for shape in s.shapes}
            assert () in shapes, f"{op.name}: no 0-d operand among its {kind}"
    for op in REGISTRY:
        shapes = {shape for s in op.samples for shape in s.shapes}
        # (), (1,), (1, 1), or (1, 1, 1) for an op whose operands have three axes at least
        assert any(all(n == 1 for n in shape) for shape in shapes), \
            f"{op.name}: no size-1 operand among its samples"


def _checks(op: OpInfo) -> list[Sample]:
    samples = list(op.check_samples())
    if len(samples) <= MAX_CHECKS:
        return samples
    picks = np.linspace(0, len(samples) - 1, MAX_CHECKS).round().astype(int)
    return [samples[i] for i in picks]


def _inputs(op: OpInfo, sample: Sample, rng) -> tuple[list[np.ndarray], dict]:
    """Operands drawn from the op's domains (drawn again while too near a kink or a tie)."""
    return op.draw(sample, rng)


def _skip_unsupported(op: OpInfo, device: str) -> None:
    if op.random and device.startswith("cuda"):
        pytest.skip("the reference replays the host generator's draws; CuPy draws others")


def _tensors(arrays, device, dtype=np.float64, requires_grad=True):
    return [mg.tensor(a.astype(dtype), dtype=dtype, requires_grad=requires_grad, device=device)
            for a in arrays]


@pytest.mark.parametrize("op", REGISTRY, ids=IDS)
def test_forward_matches_reference(op, device, rng):
    _skip_unsupported(op, device)
    for sample in _checks(op):
        arrays, options = _inputs(op, sample, rng)
        for dtype, rtol in ((np.float64, 1e-10), (np.float32, 1e-5)):
            inputs = _tensors(arrays, device, dtype)
            out = op.call(*inputs, **options)
            expected = np.asarray(op.reference(*(a.astype(dtype) for a in arrays), **options))
            where = f"{op.name} {sample.shapes} {options} {np.dtype(dtype).name} on {device}"
            assert isinstance(out, mg.Tensor), where
            assert out.device == device, where
            assert (out.dtype, tuple(out.shape)) == (expected.dtype, expected.shape), where
            np.testing.assert_allclose(out.numpy(), expected, rtol=rtol, atol=rtol,
                                       err_msg=where)
            for t, a in zip(inputs, arrays):        # primitives never write into their inputs
                np.testing.assert_array_equal(t.numpy(), a.astype(dtype), err_msg=where)


@pytest.mark.parametrize("op", REGISTRY, ids=IDS)
def test_gradcheck(op, device, rng):
    _skip_unsupported(op, device)
    for sample in _checks(op):
        arrays, options = _inputs(op, sample, rng)
        inputs = _tensors(arrays, device)
        assert mg.gradcheck(lambda *xs: op.call(*xs, **options), inputs, **op.gradcheck_options)
        assert_recorded_gradient_matches(op.call(*inputs, **options), inputs)


def _first_gradient_projected(op, options, weights, directions):
    """x ↦ Σ_i ⟨u_i, ∂⟨w, op(x)⟩/∂x_i⟩, the gradient recorded: its own gradient is a
    Hessian-vector product, which gradcheck compares with differences of the first gradient."""
    def f(*xs):
        out = op.call(*xs, **options)
        projected = (out * mg.tensor(weights, device=out.device)).sum()
        grads = mg.grad(projected, list(xs), create_graph=True, allow_unused=True)
        total = mg.zeros((), dtype=np.float64, device=out.device)
        for g, u in zip(grads, directions):
            if g is not None:
                total = total + (g * mg.tensor(u, device=out.device)).sum()
        return total
    return f


@pytest.mark.parametrize("op", [op for op in REGISTRY if op.second_order],
                         ids=[op.name for op in REGISTRY if op.second_order])
def test_second_derivative(op, rng, sim_device):
    """create_graph records a backward that is itself differentiated correctly (on the host;
    the first sample and the last, which for most ops span 0-d to a matrix)."""
    samples = list(op.check_samples())
    for sample in {id(s): s for s in (samples[0], samples[-1])}.values():
        arrays, options = _inputs(op, sample, rng)
        inputs = _tensors(arrays, "cpu")
        out_shape = op.call(*inputs, **options).shape
        weights = rng.standard_normal(out_shape)
        directions = [rng.standard_normal(a.shape) for a in arrays]
        f = _first_gradient_projected(op, options, weights, directions)
        assert mg.gradcheck(f, inputs, atol=1e-4)
