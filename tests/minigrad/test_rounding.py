"""Rounding, sign and remainders: forward against NumPy, gradients against finite differences
away from the jumps, PyTorch's zero-gradient convention at them, integer dtypes, errors."""

import math
from fractions import Fraction

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import check_primitive, leaf

SHAPES = [(), (1,), (3, 4)]
BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((1,), ())]


def _away_from_zero(rng, shape):
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.3, 3.0, size=shape)


UNARY = {  # name: (minigrad, NumPy)
    "floor": (mg.floor, np.floor),
    "ceil": (lambda x: x.ceil(), np.ceil),
    "trunc": (mg.trunc, np.trunc),
    "round": (mg.round, np.round),
    "round 2 decimals": (lambda x: x.round(2), lambda a: np.round(a, 2)),
    "round -1 decimals": (lambda x: mg.round(x * 10, -1), lambda a: np.round(a * 10, -1)),
    "sign": (lambda x: x.sign(), np.sign),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_step_functions(name, shape, device, rng):
    fn, reference = UNARY[name]
    a = 3 * rng.standard_normal(shape)
    check_primitive(fn, reference, [a], device)
    x = leaf(a, device)
    (g,) = mg.grad(fn(x).sum(), x)
    np.testing.assert_array_equal(g.numpy(), np.zeros(shape))


BINARY = {
    "fmod": (mg.fmod, np.fmod),
    "remainder": (lambda a, b: a % b, np.remainder),
    "copysign": (mg.copysign, np.copysign),
    "floor_divide": (lambda a, b: a // b, np.floor_divide),
    "div trunc": (lambda a, b: a.div(b, rounding_mode="trunc"), lambda a, b: np.trunc(a / b)),
    "div floor": (lambda a, b: mg.div(a, b, rounding_mode="floor"),
                  lambda a, b: np.floor(a / b)),
}


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_PAIRS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, shape_a, shape_b, device, rng):
    fn, reference = BINARY[name]
    a, b = 3 * rng.standard_normal(shape_a), _away_from_zero(rng, shape_b)
    check_primitive(fn, reference, [a, b], device)


def test_remainders_with_python_numbers_on_both_sides(rng):
    a = 3 * rng.standard_normal(5)
    x = mg.tensor(a)
    np.testing.assert_allclose((x % 1.5).numpy(), np.remainder(a, 1.5).astype(np.float32),
                               rtol=1e-6)
    np.testing.assert_allclose((7.0 // x).numpy(), np.floor_divide(7.0, a).astype(np.float32))


def test_pytorch_conventions_at_the_jumps():
    """Values as PyTorch gives them: halves round to even; the gradient is 0 at the jumps of
    the step functions, copysign's gradient is 0 at a = 0 and never reaches b."""
    x = leaf([-1.5, -0.5, 0.5, 1.5, 2.5, 0.0, 3.0], "cpu")
    assert mg.round(x).tolist() == [-2.0, -0.0, 0.0, 2.0, 2.0, 0.0, 3.0]
    for fn in (mg.floor, mg.ceil, mg.round, mg.trunc, mg.sign):
        (g,) = mg.grad(fn(x).sum(), x)
        assert g.tolist() == [0.0] * 7
    a = leaf([-2.5, 0.0, 1.5, 3.0], "cpu")
    b = leaf([2.0, -1.0, -0.5, 1.0], "cpu")
    ga, gb = mg.grad(mg.copysign(a, b).sum(), [a, b])
    assert ga.tolist() == [-1.0, 0.0, -1.0, 1.0] and gb.tolist() == [0.0] * 4
    ga, gb = mg.grad(mg.fmod(a, b).sum(), [a, b])        # PyTorch: 1 and −trunc(a/b)
    assert ga.tolist() == [1.0] * 4 and gb.tolist() == [1.0, 0.0, 3.0, -3.0]
    ga, gb = mg.grad(mg.remainder(a, b).sum(), [a, b])   # PyTorch: 1 and −floor(a/b)
    assert gb.tolist() == [2.0, 0.0, 3.0, -3.0]


def test_integers_stay_integers():
    i = mg.tensor([7, -7])
    for out, expected in ((i // 2, [3, -4]), (mg.div(i, 2, rounding_mode="trunc"), [3, -3]),
                          (i % 3, [1, 2]), (mg.fmod(i, 3), [1, -1]), (mg.floor(i), [7, -7]),
                          (mg.round(i, -1), [10, -10]), (mg.sign(i), [1, -1])):
        assert out.dtype == np.int64 and out.tolist() == expected
    assert mg.copysign(i, -1).dtype == np.float32           # a float result: float32


def test_bad_arguments():
    x = mg.ones(3)
    with pytest.raises(TypeError, match="round: decimals"):
        mg.round(x, 1.5)
    with pytest.raises(ValueError, match="rounding_mode"):
        mg.div(x, 2, rounding_mode="nearest")
    with pytest.raises(ValueError, match=r"FloorDivide.*\(3,\).*\(2,\)"):
        x // mg.ones(2)


# -- the divisor's gradient on the forward's own branch ------------------------------------------

@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
@pytest.mark.parametrize("name, whole", [("remainder", math.floor), ("fmod", math.trunc)])
def test_divisor_gradient_counts_the_bs_the_forward_took_away(name, whole, shape, device):
    """z = a − k·b with k the whole part of the exact quotient of the stored a and b (0.001 is
    stored a little above 1/1000, so 0.25/0.001 is just below 250 and k = 249, although the
    rounded quotient a / b is 250.0); ∂z/∂b = −k."""
    a0 = np.full(shape, 0.25) * np.where(np.arange(math.prod(shape)) % 2, -1, 1).reshape(shape)
    b0 = np.full(shape, 0.001)
    k = np.vectorize(lambda a, b: float(whole(Fraction(a) / Fraction(b))))(a0, b0)
    a, b = leaf(a0, device), leaf(b0, device)
    z = getattr(mg, name)(a, b)
    np.testing.assert_allclose(z.numpy(), a0 - k * b0, atol=1e-15)     # the same branch
    grad_a, grad_b = mg.grad(z.sum(), [a, b])
    np.testing.assert_array_equal(grad_a.numpy(), np.ones(shape))
    np.testing.assert_array_equal(grad_b.numpy(), -k)
