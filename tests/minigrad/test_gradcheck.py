"""gradcheck: True for right gradients, a GradcheckError naming input, index and both values
for wrong ones, and float64 only."""

import re

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import Cube


class CubeForgetsTheThree(Cube):
    """y = x³ with the derivative x²: a third of the truth everywhere."""

    def backward(self, grad):
        (x,) = self.inputs
        return grad * x * x


class ProductWrongAtOneElement(mg.Function):
    """z = a ⊙ b; ∂z/∂a is right, ∂z/∂b drops the element at `bad_index`."""

    def __init__(self, bad_index):
        self.bad_index = bad_index

    def forward(self, a, b):
        return a * b

    def backward(self, grad):
        a, b = self.inputs
        keep = np.ones(b.shape)
        keep[self.bad_index] = 0.0
        return grad * b, grad * a * mg.tensor(keep)


MESSAGE = re.compile(r"input (\d+) \(shape (\(.*?\))\), index (\(.*?\)): analytic gradient "
                     r"(\S+), numeric (\S+)")


def parse(error: mg.GradcheckError):
    """(input index, input shape, element index, analytic, numeric) from the message."""
    match = MESSAGE.search(str(error))
    assert match, str(error)
    i, shape, index, analytic, numeric = match.groups()
    return int(i), eval_tuple(shape), eval_tuple(index), float(analytic), float(numeric)


def eval_tuple(text: str) -> tuple:
    return tuple(int(n) for n in text.strip("()").split(",") if n.strip())


def leaf(array) -> mg.Tensor:
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


def test_returns_true_for_a_correct_function(rng):
    x = leaf(rng.standard_normal((3, 2)))
    assert mg.gradcheck(Cube.apply, (x,)) is True
    assert mg.gradcheck(lambda x: Cube.apply(x).sum(), (x,)) is True


def test_returns_true_for_compositions_of_several_inputs(rng):
    a, b = leaf(rng.standard_normal((2, 3))), leaf(rng.standard_normal(3))
    assert mg.gradcheck(lambda a, b: mg.tanh(a * b + a) @ b, (a, b))
    assert mg.gradcheck(lambda a, b: mg.softmax(a - b, axis=0), (a, b))


def test_wrong_function_raises_naming_input_element_and_both_values():
    x = leaf([[0.5, -1.0], [2.0, 1.5]])
    with pytest.raises(mg.GradcheckError) as caught:
        mg.gradcheck(CubeForgetsTheThree.apply, (x,))
    i, shape, index, analytic, numeric = parse(caught.value)
    assert i == 0 and shape == (2, 2) and index == (0, 0)  # the first element is already wrong
    # the backward is a third of the truth: numeric = 3 · analytic
    np.testing.assert_allclose(numeric, 3 * analytic, rtol=1e-6)
    assert isinstance(caught.value, AssertionError)


@pytest.mark.parametrize("bad_index", [(0, 0), (1, 2), (0, 1)])
def test_the_error_points_at_the_wrong_element_of_the_wrong_input(bad_index, rng):
    a = leaf(rng.uniform(0.5, 2.0, (2, 3)))
    b = leaf(rng.uniform(0.5, 2.0, (2, 3)))
    with pytest.raises(mg.GradcheckError) as caught:
        mg.gradcheck(lambda a, b: ProductWrongAtOneElement.apply(a, b, bad_index=bad_index),
                     (a, b))
    i, shape, index, analytic, numeric = parse(caught.value)
    assert (i, shape, index) == (1, (2, 3), bad_index)    # input 0 (a) passed
    assert analytic == 0.0 and abs(numeric) > 1e-3


def test_a_missing_gradient_is_caught():
    class ForgetsSecondInput(mg.Function):
        def forward(self, a, b):
            return a * b

        def backward(self, grad):
            a, b = self.inputs
            return grad * b, None

    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    with pytest.raises(mg.GradcheckError, match="input 1"):
        mg.gradcheck(ForgetsSecondInput.apply, (a, b))


def test_tolerances_decide():
    class SlightlyOff(Cube):
        def backward(self, grad):
            (x,) = self.inputs
            return grad * 3 * x * x * 1.01                 # 1 % too large

    x = leaf([0.5, 1.0, 2.0])
    with pytest.raises(mg.GradcheckError):
        mg.gradcheck(SlightlyOff.apply, (x,))              # rtol 1e-3 by default
    assert mg.gradcheck(SlightlyOff.apply, (x,), rtol=0.05)


def test_refuses_float32_inputs():
    x32 = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match="input 0 is float32.*float64"):
        mg.gradcheck(Cube.apply, (x32,))
    x64 = leaf([1.0, 2.0])
    with pytest.raises(TypeError, match="input 1 is float32"):
        mg.gradcheck(lambda a, b: a * b, (x64, x32))


def test_other_misuse():
    with pytest.raises(ValueError, match="no input requires grad"):
        mg.gradcheck(Cube.apply, (mg.tensor(np.array([1.0])),))
    with pytest.raises(TypeError, match="must return a Tensor"):
        mg.gradcheck(lambda x: 3.0, (leaf([1.0]),))


def test_constant_inputs_are_not_checked_and_nothing_is_mutated():
    x = leaf([0.3, -0.7])
    c = mg.tensor(np.array([2.0, 5.0]))                    # no requires_grad: a constant
    before = x.numpy().copy()
    assert mg.gradcheck(lambda x, c: x * x * c, (x, c))
    np.testing.assert_array_equal(x.numpy(), before)
    assert x.grad is None                                  # gradcheck leaves .grad alone


def test_second_order_check_of_a_gradient_function(rng):
    """gradcheck of x ↦ ∂f/∂x checks second derivatives, and catches a wrong one."""
    x = leaf(rng.standard_normal(4))
    assert mg.gradcheck(lambda x: mg.grad(Cube.apply(x).sum(), x, create_graph=True)[0], (x,))

    class CubeWithConstantDerivative(Cube):
        """Right first derivative, but recorded as a constant: second derivative lost."""

        def backward(self, grad):
            (x,) = self.inputs
            return grad * mg.tensor(3 * x.numpy() ** 2)

    with pytest.raises(mg.GradcheckError):
        mg.gradcheck(lambda x: mg.grad(CubeWithConstantDerivative.apply(x).sum(), x,
                                       create_graph=True)[0], (x,))
