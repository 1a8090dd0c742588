"""A sample of the primitive checks on a real GPU through CuPy ("cuda:0"). Skipped, saying why,
where CuPy or a GPU is missing; the full primitive suite runs on the simulated device instead."""

import importlib.util
import math
import operator

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import assert_forward, check_primitive, leaf

if importlib.util.find_spec("cupy") is None:
    _MISSING = "CuPy is not installed"
elif not mg.cuda_available():
    _MISSING = "no GPU present (CuPy is installed but CUDA reports no usable device)"
else:
    _MISSING = None

requires_gpu = pytest.mark.skipif(_MISSING is not None, reason=str(_MISSING))
DEVICE = "cuda:0"


def test_asking_for_cuda_without_it_says_what_is_missing():
    if _MISSING is None:
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="CuPy|GPU"):
        mg.ones(2, device="cuda")
    assert not mg.cuda_available()


@requires_gpu
@pytest.mark.parametrize("shape_a, shape_b", [((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3))])
@pytest.mark.parametrize("op", [operator.add, operator.mul, operator.truediv, mg.maximum],
                         ids=["add", "mul", "div", "maximum"])
def test_binary_ops_on_gpu(op, shape_a, shape_b, rng):
    b = rng.uniform(0.5, 2.0, size=shape_b)
    reference = {operator.add: np.add, operator.mul: np.multiply,
                 operator.truediv: np.divide, mg.maximum: np.maximum}[op]
    check_primitive(op, reference, [rng.standard_normal(shape_a), b], DEVICE)


@requires_gpu
@pytest.mark.parametrize("shape_a, shape_b", [((3,), (3,)), ((2, 3), (3,)), ((4, 2, 3), (3, 2)),
                                              ((2, 1, 2, 3), (3, 3, 2))])
def test_matmul_on_gpu(shape_a, shape_b, rng):
    check_primitive(operator.matmul, np.matmul,
                    [rng.standard_normal(shape_a), rng.standard_normal(shape_b)], DEVICE)


@requires_gpu
def test_unary_reductions_and_softmax_on_gpu(rng):
    x = rng.standard_normal((3, 4))
    gelu = np.vectorize(lambda v: v * 0.5 * (1.0 + math.erf(v / math.sqrt(2.0))))
    check_primitive(mg.gelu, gelu, [x], DEVICE)
    check_primitive(mg.tanh, np.tanh, [x], DEVICE)
    check_primitive(lambda t: t.max(axis=1, keepdims=True),
                    lambda v: v.max(axis=1, keepdims=True), [x], DEVICE)
    check_primitive(lambda t: t.var(axis=0), lambda v: v.var(axis=0), [x], DEVICE)
    e = np.exp(x)
    check_primitive(mg.softmax, lambda v: e / e.sum(axis=-1, keepdims=True), [x], DEVICE)
    check_primitive(mg.log_softmax, lambda v: np.log(e / e.sum(axis=-1, keepdims=True)), [x],
                    DEVICE)


@requires_gpu
def test_getitem_scatter_adds_on_gpu(rng):
    index = np.array([0, 2, 0, 0])
    check_primitive(lambda t: t[mg.tensor(index, device=DEVICE)], lambda v: v[index],
                    [rng.standard_normal((3, 2))], DEVICE)
    x = leaf(np.zeros(3), DEVICE)
    x[index].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 0.0, 1.0])


@requires_gpu
def test_dropout_and_device_moves_on_gpu(rng):
    def seeded(t):
        mg.manual_seed(3)
        return mg.dropout(t, 0.5)
    assert mg.gradcheck(seeded, [leaf(rng.uniform(0.5, 2.0, (3, 4)), DEVICE)])
    host = leaf(rng.standard_normal((2, 3)), "cpu")
    moved = host.to("cuda")
    assert_forward(moved, host.numpy(), DEVICE)
    (moved * 3.0).sum().backward()
    assert host.grad.device == "cpu"
    np.testing.assert_array_equal(host.grad.numpy(), np.full((2, 3), 3.0))
