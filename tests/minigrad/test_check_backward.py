"""check_backward: a Function's hand-written backward against the engine's exact derivative of
the same forward. True for right backwards (also minigrad's own primitives), a GradcheckError
naming the first wrong (input, element) with both values for wrong ones, and clear errors for
forwards it cannot trace."""

import re

import numpy as np
import pytest

import minigrad as mg
from minigrad.ops import elementwise, nn_ops, reduce

from .primitive_checks import Cube, leaf


class CubeDerivativeOffByX(Cube):
    """y = x³ with the derivative 3x: right only where x = 1 (or 0)."""

    def backward(self, grad):
        (x,) = self.inputs
        return grad * 3 * x


class SoftplusLike(mg.Function):
    """y = log(1 + eˣ) written with xp, ∂y/∂x = σ(x) = eˣ / (1 + eˣ)."""

    def forward(self, x):
        return self.xp.log(1.0 + self.xp.exp(x))

    def backward(self, grad):
        (x,) = self.inputs
        e = x.exp()
        return grad * e / (1.0 + e)


class ScaledProduct(mg.Function):
    """z = scale · a ⊙ b (broadcasting); `wrong_b` drops ∂z/∂b at one element of b."""

    def __init__(self, scale: float, wrong_b=None):
        self.scale, self.wrong_b = scale, wrong_b

    def forward(self, a, b):
        return self.scale * a * b

    def backward(self, grad):
        a, b = self.inputs
        grad_b = grad * a * self.scale
        if self.wrong_b is not None:               # sums back to b's shape, then is damaged
            grad_b = mg.sum_to(grad_b, b.shape)
            keep = np.ones(b.shape)
            keep[self.wrong_b] = 0.0
            grad_b = grad_b * mg.tensor(keep)
        return grad * b * self.scale, grad_b


class MaskedSquare(mg.Function):
    """y = x² where mask, else 0 (mask a bool input, no gradient)."""

    def __init__(self, forget_mask: bool = False):
        self.forget_mask = forget_mask

    def forward(self, x, mask):
        return self.xp.where(mask, x * x, 0.0)

    def backward(self, grad):
        x, mask = self.inputs
        grad_x = grad * 2 * x
        return (grad_x if self.forget_mask else mg.where(mask, grad_x, 0.0)), None


class RowNormalise(mg.Function):
    """y = x / Σ_axis x, with the quotient rule ∂L/∂x = (g − Σ_axis g ⊙ y) / Σ_axis x."""

    def __init__(self, axis: int):
        self.axis = axis

    def forward(self, x):
        return x / x.sum(axis=self.axis, keepdims=True)

    def backward(self, grad):
        (x,) = self.inputs
        total = x.sum(axis=self.axis, keepdims=True)
        y = x / total
        return (grad - (grad * y).sum(axis=self.axis, keepdims=True)) / total


class WrongOnlyWhenRecorded(Cube):
    """The right derivative on the plain path, half of it when create_graph records it."""

    def backward(self, grad):
        (x,) = self.inputs
        return grad * (1.5 if mg.is_grad_enabled() else 3) * x * x


class ForgetsOneInput(ScaledProduct):
    """Returns None for b although z depends on b."""

    def backward(self, grad):
        a, b = self.inputs
        return grad * b * self.scale, None


MESSAGE = re.compile(r"input (\d+)(?: '\w+')? \(shape (\(.*?\))\), index (\(.*?\)): "
                     r"backward gives (\S+), autodiff of forward gives (\S+)")


def parse(error) -> tuple:
    """(input, shape, index, backward's value, autodiff's value) from the message."""
    match = MESSAGE.search(str(error))
    assert match, str(error)
    i, shape, index, written, reference = match.groups()
    as_tuple = (lambda text: tuple(int(n) for n in text.strip("()").split(",") if n.strip()))
    return int(i), as_tuple(shape), as_tuple(index), float(written), float(reference)


@pytest.mark.parametrize("shape", [(), (1,), (3,), (2, 3)])
def test_right_backwards_pass(shape, device, rng):
    x = leaf(rng.uniform(0.5, 2.0, shape), device)
    assert mg.check_backward(Cube, [x])
    assert mg.check_backward(SoftplusLike, [x])
    if x.ndim:
        assert mg.check_backward(RowNormalise, [x], axis=-1)


@pytest.mark.parametrize("shape_a, shape_b", [((2, 3), (3,)), ((3, 1), (1, 4)), ((), (2,)),
                                              ((1,), ())])
def test_a_right_binary_backward_passes_with_broadcasting(shape_a, shape_b, device, rng):
    a = leaf(rng.standard_normal(shape_a), device)
    b = leaf(rng.standard_normal(shape_b), device)
    assert mg.check_backward(ScaledProduct, [a, b], scale=2.5)


def test_a_wrong_backward_is_named_at_its_first_wrong_element(rng):
    values = np.array([1.0, 2.0, -0.5, 1.0])          # 3x = 3x² at x = 1 only
    x = mg.tensor(values, requires_grad=True)
    with pytest.raises(mg.GradcheckError, match="CubeDerivativeOffByX.backward") as caught:
        mg.check_backward(CubeDerivativeOffByX, [x])
    i, shape, index, written, reference = parse(caught.value)
    assert (i, shape, index) == (0, (4,), (1,))
    # the upstream gradient is a fixed random g: backward says 3x·g, autodiff 3x²·g
    g = np.random.default_rng(0).standard_normal(4)[1]
    assert written == pytest.approx(3 * 2.0 * g, rel=1e-9)
    assert reference == pytest.approx(3 * 4.0 * g, rel=1e-9)


def test_the_wrong_element_of_the_second_input_is_named(rng):
    a = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = mg.tensor(rng.standard_normal(3), requires_grad=True)
    b.name = "b"
    with pytest.raises(mg.GradcheckError) as caught:
        mg.check_backward(ScaledProduct, [a, b], scale=2.0, wrong_b=(2,))
    i, shape, index, written, reference = parse(caught.value)
    assert (i, shape, index, written) == (1, (3,), (2,), 0.0)
    assert "'b'" in str(caught.value)
    g = np.random.default_rng(0).standard_normal((2, 3))
    assert reference == pytest.approx(2.0 * (g[:, 2] * a.numpy()[:, 2]).sum(), rel=1e-9)


def test_a_mask_input_rides_along_and_a_forgotten_mask_is_caught(rng):
    x = mg.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    mask = mg.tensor(np.arange(12).reshape(3, 4) % 3 == 0)
    assert mg.check_backward(MaskedSquare, [x, mask])
    with pytest.raises(mg.GradcheckError) as caught:
        mg.check_backward(MaskedSquare, [x, mask], forget_mask=True)
    i, shape, index, written, reference = parse(caught.value)
    assert (i, index, reference) == (0, (0, 1), 0.0)      # (0, 0) is inside the mask
    assert written != 0.0


def test_both_ways_the_engine_runs_backward_are_checked(rng):
    x = mg.tensor(rng.uniform(0.5, 2.0, 3), requires_grad=True)
    with pytest.raises(mg.GradcheckError, match=r"recorded with create_graph=True") as caught:
        mg.check_backward(WrongOnlyWhenRecorded, [x])
    i, _, index, written, reference = parse(caught.value)
    assert (i, index) == (0, (0,)) and written == pytest.approx(reference / 2, rel=1e-12)
    with pytest.raises(mg.GradcheckError) as caught:          # the plain path is named plainly
        mg.check_backward(CubeDerivativeOffByX, [leaf([2.0], "cpu")])
    assert "create_graph" not in str(caught.value)


def test_a_gradient_returned_as_none_is_compared_as_zeros(rng):
    a = mg.tensor(rng.standard_normal(3), requires_grad=True)
    b = mg.tensor(rng.standard_normal(3), requires_grad=True)
    with pytest.raises(mg.GradcheckError) as caught:
        mg.check_backward(ForgetsOneInput, [a, b], scale=1.0)
    i, _, index, written, reference = parse(caught.value)
    assert (i, index, written) == (1, (0,), 0.0) and reference != 0.0


@pytest.mark.parametrize("cls, options, shape", [
    (nn_ops.Softmax, {"axis": 1}, (3, 4)),
    (nn_ops.LogSoftmax, {"axis": 0}, (3, 4)),
    (nn_ops.Softmax, {"axis": 0}, (1,)),
    (reduce.Std, {"axes": (1,), "keepdims": False, "ddof": 1}, (3, 4)),
    (reduce.Std, {"axes": (), "keepdims": False, "ddof": 0}, ()),
    (reduce.Var, {"axes": (0, 1), "keepdims": True, "ddof": 0}, (2, 3)),
    (reduce.Mean, {"axes": (0,), "keepdims": False}, (1,)),
    (elementwise.Tanh, {}, (2, 3)),
    (elementwise.Exp, {}, ()),
    (elementwise.Sqrt, {}, (3,)),
])
def test_minigrad_own_primitives_pass(cls, options, shape, rng):
    x = mg.tensor(rng.uniform(0.2, 2.0, shape), requires_grad=True)
    assert mg.check_backward(cls, [x], **options)


def test_forwards_it_cannot_trace_raise_a_clear_error(rng):
    class UsesSine(mg.Function):
        def forward(self, x):
            return self.xp.sin(x)

        def backward(self, grad):
            return grad * mg.tensor(np.cos(self.inputs[0].numpy()))

    class WritesInPlace(mg.Function):
        def forward(self, x):
            y = x * 2
            y[0] = 0.0
            return y

        def backward(self, grad):
            return grad * 2

    class FillsAConstant(mg.Function):
        def forward(self, x):
            y = self.xp.zeros_like(x)
            y[...] = x                     # on Tensors, x's values without their graph
            return y

        def backward(self, grad):
            return grad

    x = mg.tensor(rng.standard_normal(3), requires_grad=True)
    with pytest.raises(TypeError, match=r"UsesSine.forward could not run on Tensors.*xp\.sin"):
        mg.check_backward(UsesSine, [x])
    with pytest.raises(TypeError, match="WritesInPlace.forward could not run on Tensors"):
        mg.check_backward(WritesInPlace, [x])
    with pytest.raises(TypeError, match="FillsAConstant.forward writes into an array in place"):
        mg.check_backward(FillsAConstant, [x])


def test_bad_arguments_are_refused(rng):
    x32 = mg.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
    with pytest.raises(TypeError, match="float64"):
        mg.check_backward(Cube, [x32])
    with pytest.raises(ValueError, match="no input of Cube requires grad"):
        mg.check_backward(Cube, [mg.tensor(np.ones(3))])
    with pytest.raises(TypeError, match="Function subclass"):
        mg.check_backward(lambda x: x, [x32])
    with pytest.raises(TypeError, match="input 0 of Cube is a ndarray"):
        mg.check_backward(Cube, [np.ones(3)])


def test_it_works_under_no_grad_and_leaves_grad_alone(rng):
    x = mg.tensor(rng.standard_normal(4), requires_grad=True)
    with mg.no_grad():
        assert mg.check_backward(Cube, [x])
        with pytest.raises(mg.GradcheckError):
            mg.check_backward(CubeDerivativeOffByX, [x])
        assert not mg.is_grad_enabled()
    assert x.grad is None
