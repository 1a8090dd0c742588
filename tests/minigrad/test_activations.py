"""Activations and elementary functions: forward against NumPy references written from their
definitions, float64 gradients against finite differences (0-d, size-1 and broadcast shapes),
PyTorch's gradients at the kinks, stability at large inputs, integer inputs, and errors."""

import math

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import check_primitive, leaf

SHAPES = [(), (1,), (3, 4)]
BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((), (2, 3)), ((1,), ())]

_erf = np.vectorize(math.erf)
_erfc = np.vectorize(math.erfc)


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _softplus(v, beta=1.0, threshold=20.0):
    return np.where(beta * v > threshold, v, np.log1p(np.exp(beta * v)) / beta)


def _elu(v, alpha=1.0):
    return np.where(v > 0, v, alpha * (np.exp(v) - 1))


SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

ACTIVATIONS = {  # name: (minigrad, NumPy reference from the definition, input range)
    "silu": (mg.silu, lambda v: v * _sigmoid(v), 3),
    "softplus": (mg.softplus, _softplus, 3),
    "softplus beta threshold": (lambda x: mg.softplus(x, beta=2.0, threshold=3.0),
                                lambda v: _softplus(v, 2.0, 3.0), 3),
    "elu": (lambda x: mg.elu(x, 0.7), lambda v: _elu(v, 0.7), 3),
    "celu": (lambda x: mg.celu(x, 2.0), lambda v: np.maximum(v, 0) + np.minimum(
        0, 2.0 * (np.exp(v / 2.0) - 1)), 3),
    "selu": (mg.selu, lambda v: SELU_SCALE * _elu(v, SELU_ALPHA), 3),
    "leaky_relu": (lambda x: mg.leaky_relu(x, 0.2), lambda v: np.where(v > 0, v, 0.2 * v), 3),
    "hardtanh": (lambda x: mg.hardtanh(x, -0.5, 1.5), lambda v: np.clip(v, -0.5, 1.5), 3),
    "relu6": (lambda x: mg.relu6(3 * x), lambda v: np.clip(3 * v, 0, 6), 3),
    "hardsigmoid": (mg.hardsigmoid, lambda v: np.clip(v + 3, 0, 6) / 6, 5),
    "hardswish": (mg.hardswish, lambda v: v * np.clip(v + 3, 0, 6) / 6, 5),
    "mish": (mg.mish, lambda v: v * np.tanh(np.log1p(np.exp(v))), 3),
    "softsign": (mg.softsign, lambda v: v / (1 + np.abs(v)), 3),
    "logsigmoid": (mg.logsigmoid, lambda v: np.log(_sigmoid(v)), 3),
    "softmin": (lambda x: mg.softmin(x, axis=-1) if x.ndim else mg.exp(x * 0),
                lambda v: np.exp(-v) / np.exp(-v).sum(-1, keepdims=True) if v.ndim
                else np.ones(()), 3),
    "erf": (mg.erf, _erf, 2),
    "erfc": (mg.erfc, _erfc, 2),
    "sin": (mg.sin, np.sin, 3), "cos": (mg.cos, np.cos, 3), "tan": (mg.tan, np.tan, 1.2),
    "arcsin": (mg.asin, np.arcsin, 0.9), "arccos": (mg.arccos, np.arccos, 0.9),
    "arctan": (mg.atan, np.arctan, 3), "sinh": (mg.sinh, np.sinh, 2),
    "cosh": (mg.cosh, np.cosh, 2), "arcsinh": (mg.asinh, np.arcsinh, 3),
    "arctanh": (mg.atanh, np.arctanh, 0.9),
    "arccosh": (lambda x: mg.acosh(x + 4), lambda v: np.arccosh(v + 4), 2),
    "log2": (lambda x: mg.log2(x + 4), lambda v: np.log2(v + 4), 2),
    "log10": (lambda x: mg.log10(x + 4), lambda v: np.log10(v + 4), 2),
    "log1p": (mg.log1p, np.log1p, 0.9), "expm1": (mg.expm1, np.expm1, 2),
    "exp2": (mg.exp2, np.exp2, 2),
    "rsqrt": (lambda x: mg.rsqrt(x + 4), lambda v: 1 / np.sqrt(v + 4), 2),
    "square": (mg.square, np.square, 2),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_unary(name, shape, device, rng):
    fn, reference, spread = ACTIVATIONS[name]
    a = rng.uniform(-spread, spread, shape)
    if name in ("hardtanh", "relu6", "hardsigmoid", "hardswish", "leaky_relu"):
        a = np.where(np.abs(a - np.round(a * 2) / 2) < 1e-3, a + 0.01, a)   # off the kinks
    check_primitive(fn, reference, [a], device)


BINARY = {
    "arctan2": (mg.atan2, np.arctan2),
    "logaddexp": (mg.logaddexp, np.logaddexp),
    "hypot": (mg.hypot, np.hypot),
    "xlogy": (lambda a, b: mg.xlogy(a, b * b + 0.1), lambda a, b: a * np.log(b * b + 0.1)),
    "lerp": (lambda a, b: mg.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a)),
    "lerp tensor weight": (lambda a, b: mg.lerp(a, a * 2, b), lambda a, b: a + b * a),
}


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_PAIRS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, shape_a, shape_b, device, rng):
    fn, reference = BINARY[name]
    check_primitive(fn, reference, [rng.standard_normal(shape_a), rng.standard_normal(shape_b)],
                    device)


def _grad(fn, values):
    x = leaf(values, "cpu")
    (g,) = mg.grad(fn(x).sum(), x)
    return g.numpy()


def test_gradients_at_the_kinks_are_pytorchs():
    np.testing.assert_allclose(_grad(lambda x: mg.leaky_relu(x, 0.1), [0.0]), [0.1])
    np.testing.assert_allclose(_grad(lambda x: mg.elu(x, 0.5), [0.0]), [0.5])
    np.testing.assert_allclose(_grad(mg.selu, [0.0]), [SELU_SCALE * SELU_ALPHA])
    np.testing.assert_allclose(_grad(mg.relu6, [0.0, 6.0, 3.0]), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(_grad(mg.hardtanh, [-1.0, 1.0, 0.0]), [0.0, 0.0, 1.0])
    np.testing.assert_allclose(_grad(mg.hardsigmoid, [-3.0, 3.0, 0.0]), [0.0, 0.0, 1 / 6])
    np.testing.assert_allclose(_grad(mg.hardswish, [-3.0, 3.0, -4.0, 4.0, 0.0]),
                               [0.0, 1.0, 0.0, 1.0, 0.5])
    np.testing.assert_allclose(_grad(lambda x: mg.softplus(x, threshold=2.0), [2.5]), [1.0])
    np.testing.assert_allclose(_grad(lambda x: mg.atan2(x, x * 0), [0.0]), [0.0])
    np.testing.assert_allclose(_grad(lambda x: mg.hypot(x, x * 0), [0.0]), [0.0])
    np.testing.assert_allclose(_grad(lambda x: mg.xlogy(x * 0, x), [0.0]), [0.0])


def test_large_inputs_neither_overflow_nor_give_nan():
    big = np.array([-1000.0, -50.0, 50.0, 1000.0])
    for fn in (mg.silu, mg.softplus, mg.elu, mg.selu, mg.celu, mg.mish, mg.logsigmoid,
               mg.softsign, mg.erf, mg.erfc):
        x = leaf(big, "cpu")
        with np.errstate(over="raise", invalid="raise"):
            y = fn(x)
            (g,) = mg.grad(y.sum(), x)
        assert np.isfinite(y.numpy()).all() and np.isfinite(g.numpy()).all(), fn.__name__
    np.testing.assert_allclose(mg.logsigmoid(mg.tensor(big)).numpy(), [-1000, -50, 0, 0],
                               atol=1e-20)
    np.testing.assert_allclose(mg.erfc(mg.tensor(np.array([10.0]))).numpy(), [math.erfc(10)],
                               rtol=1e-12)
    both = leaf([-np.inf], "cpu")
    (g,) = mg.grad(mg.logaddexp(both, both).sum(), both)
    assert g.tolist() == [0.0]


def test_second_derivatives(device, rng):
    """create_graph through each backward, against finite differences of the gradient."""
    for name in ("silu", "softplus", "elu", "mish", "logsigmoid", "erf", "erfc", "tan",
                 "arcsin", "rsqrt", "expm1", "hardswish"):
        fn = ACTIVATIONS[name][0]
        x = leaf(rng.uniform(-0.8, 0.8, (2, 3)), device)
        assert mg.gradcheck(lambda t: mg.grad((fn(t) ** 2).sum(), t, create_graph=True)[0],
                            [x]), name
    a, b = leaf(rng.standard_normal(3), device), leaf(rng.standard_normal(3), device)
    for fn in (mg.atan2, mg.logaddexp, mg.hypot):
        assert mg.gradcheck(lambda s, t: mg.grad((fn(s, t) ** 2).sum(), [s, t],
                                                 create_graph=True)[0], [a, b])


def test_integers_give_float32_and_methods_match(device):
    i = mg.tensor([1, 2, 3], device=device)
    for fn in (mg.sin, mg.log1p, mg.silu, mg.erf, mg.rsqrt, mg.softplus, lambda t: t.exp2()):
        assert fn(i).dtype == np.float32
    assert mg.square(i).dtype == np.int64
    x = mg.tensor([0.5, 0.25], device=device)
    for name in ("sin", "arcsin", "asin", "log2", "expm1", "erf", "square"):
        np.testing.assert_array_equal(getattr(x, name)().numpy(),
                                      getattr(mg, name)(x).numpy())
    np.testing.assert_array_equal(x.atan2(x).numpy(), mg.arctan2(x, x).numpy())


def test_bad_arguments():
    x = mg.ones(3)
    with pytest.raises(ValueError, match="softplus: beta"):
        mg.softplus(x, beta=0)
    with pytest.raises(ValueError, match="hardtanh: min_val 2"):
        mg.hardtanh(x, 2.0, 1.0)
    with pytest.raises(ValueError, match="celu: alpha"):
        mg.celu(x, 0.0)
    with pytest.raises(ValueError, match=r"Arctan2.*\(3,\).*\(2,\)"):
        mg.atan2(x, mg.ones(2))


# -- binary functions at their edges -----------------------------------------------------------

def _sigmoid_of(d):
    """σ(d) in float64, accurate for any d."""
    return 0.5 * (1 + np.tanh(0.5 * d))


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
@pytest.mark.parametrize("c, dtype", [(1e20, np.float64), (-1e20, np.float64),
                                      (3e7, np.float32), (1e4, np.float32), (0.0, np.float64)])
def test_logaddexp_gradients_are_sigmoids_of_the_difference_at_any_magnitude(c, dtype, shape,
                                                                            device, rng):
    a0 = (c + rng.uniform(-2, 2, shape)).astype(dtype)
    b0 = np.full(shape, c, dtype=dtype)
    d = a0.astype(np.float64) - b0.astype(np.float64)      # exact: the stored values' difference
    a = mg.tensor(a0, requires_grad=True, device=device)
    b = mg.tensor(b0, requires_grad=True, device=device)
    grad_a, grad_b = mg.grad(mg.logaddexp(a, b).sum(), [a, b])
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(grad_a.numpy(), _sigmoid_of(d), rtol=rtol)
    np.testing.assert_allclose(grad_b.numpy(), _sigmoid_of(-d), rtol=rtol)


@pytest.mark.parametrize("value", [0.3, 0.0, -2.0, 1e20])
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_logaddexp_second_derivative_at_a_tie(value, shape, device):
    """At a = b, ∂²z/∂a² = σ'(0) = 1/4 and ∂²z/∂a∂b = −1/4: the tie must not cut a − b out of
    the recorded backward (a finite tie is an ordinary point)."""
    a = mg.tensor(np.full(shape, value), requires_grad=True, device=device)
    b = mg.tensor(np.full(shape, value), requires_grad=True, device=device)
    grad_a, grad_b = mg.grad(mg.logaddexp(a, b).sum(), [a, b], create_graph=True)
    np.testing.assert_allclose(grad_a.numpy(), np.full(shape, 0.5))
    aa, ab = mg.grad(grad_a.sum(), [a, b])
    np.testing.assert_allclose(aa.numpy(), np.full(shape, 0.25))
    np.testing.assert_allclose(ab.numpy(), np.full(shape, -0.25))
    if value == 0.3 and shape == (2, 3):          # and the second derivatives pass gradgradcheck
        x = mg.tensor(np.full((2,), value), requires_grad=True, device=device)
        assert mg.gradcheck(lambda t: mg.grad(mg.logaddexp(t[0], t[1]), [t],
                                              create_graph=True)[0], [x])


def test_logaddexp_at_infinities(device):
    inf = np.inf
    a0, b0 = np.array([inf, -inf, inf, -inf, 1e20]), np.array([-inf, 1.0, inf, -inf, 1e20])
    a, b = leaf(a0, device), leaf(b0, device)
    out = mg.logaddexp(a, b)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(out.numpy(), np.logaddexp(a0, b0))
    with np.errstate(invalid="ignore"):                        # the sum holds ∞ − ∞
        grad_a, grad_b = mg.grad(out.sum(), [a, b])
    # σ(a − b): 1 against −inf, ½ for equal infinities; both −inf: 0 (the documented choice)
    np.testing.assert_array_equal(grad_a.numpy(), [1.0, 0.0, 0.5, 0.0, 0.5])
    np.testing.assert_array_equal(grad_b.numpy(), [0.0, 1.0, 0.5, 0.0, 0.5])


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_xlogy_gradient_in_x_at_zero_is_log_y(shape, device, rng):
    y0 = rng.uniform(1e-3, 3.0, shape)
    x, y = leaf(np.zeros(shape), device), leaf(y0, device)
    grad_x, grad_y = mg.grad(mg.xlogy(x, y).sum(), [x, y])
    np.testing.assert_allclose(grad_x.numpy(), np.log(y0), rtol=1e-12)
    np.testing.assert_array_equal(grad_y.numpy(), np.zeros(shape))     # z ≡ 0 along x = 0
    # z = x·log y is linear in x, so central differences across x = 0 are exact
    assert mg.gradcheck(mg.xlogy, [x, y])


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_xlogy_of_zero_and_nan_is_nan(shape, device):
    """x = 0 gives 0 for every number y, but a NaN y stays NaN (PyTorch's and SciPy's)."""
    out = mg.xlogy(leaf(np.zeros(shape), device), leaf(np.full(shape, np.nan), device))
    assert np.isnan(out.numpy()).all() and out.shape == shape
    zero = mg.xlogy(leaf(np.zeros(shape), device), leaf(np.zeros(shape), device))
    assert (zero.numpy() == 0).all()


@pytest.mark.parametrize("scale", [1e-200, 1e-160, 1.0, 1e160, 1e200])
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_arctan2_gradient_at_any_magnitude(scale, shape, device, rng):
    """∂θ/∂y = x/r², ∂θ/∂x = −y/r², computed through r = hypot(x, y): no NaN or inf where
    x² + y² alone under- or overflows (the point is not the origin)."""
    y0 = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    x0 = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    y, x = leaf(y0 * scale, device), leaf(x0 * scale, device)
    grad_y, grad_x = mg.grad(mg.arctan2(y, x).sum(), [y, x])
    r2 = x0 * x0 + y0 * y0                                # at scale 1, then rescaled exactly
    np.testing.assert_allclose(grad_y.numpy() * scale, x0 / r2, rtol=1e-12)
    np.testing.assert_allclose(grad_x.numpy() * scale, -y0 / r2, rtol=1e-12)


def test_xlogy_at_zero_the_reported_case_and_the_undefined_corner(device):
    x, y = leaf([0.0], device), leaf([0.001], device)
    (grad_x,) = mg.grad(mg.xlogy(x, y).sum(), [x])
    np.testing.assert_allclose(grad_x.numpy(), [math.log(0.001)], rtol=1e-12)
    # x = 0 with y ≤ 0: z jumps across x = 0, no derivative: 0 for both (PyTorch's x-gradient)
    x, y = leaf([0.0, 0.0], device), leaf([0.0, -1.0], device)
    grad_x, grad_y = mg.grad(mg.xlogy(x, y).sum(), [x, y])
    np.testing.assert_array_equal(grad_x.numpy(), [0.0, 0.0])
    np.testing.assert_array_equal(grad_y.numpy(), [0.0, 0.0])


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_xlogy_second_derivatives_at_x_zero(shape, device, rng):
    """∂z/∂y = x/y is 0 along x = 0, but its derivative in x there is 1/y."""
    x, y = leaf(np.zeros(shape), device), leaf(rng.uniform(0.5, 2.0, shape), device)
    w = mg.tensor(rng.standard_normal(shape), device=device)

    def gradient_sum(s, t):
        grad_x, grad_y = mg.grad(mg.xlogy(s, t), [s, t], grad_outputs=w, create_graph=True)
        return grad_x.sum() + grad_y.sum()
    assert mg.gradcheck(gradient_sum, [x, y])


@pytest.mark.parametrize("call", [
    lambda x, t: mg.softplus(x, beta=t), lambda x, t: mg.softplus(x, threshold=t),
    lambda x, t: mg.elu(x, t), lambda x, t: mg.celu(x, t), lambda x, t: mg.leaky_relu(x, t),
    lambda x, t: mg.hardtanh(x, -t, 1.0), lambda x, t: mg.hardtanh(x, -1.0, t)],
    ids=["softplus-beta", "softplus-threshold", "elu", "celu", "leaky_relu", "hardtanh-min",
         "hardtanh-max"])
@pytest.mark.parametrize("shape", [(), (1,)])
def test_constant_options_refuse_a_tensor_whose_gradient_would_be_lost(call, shape):
    x = mg.tensor(np.array([-2.0, 0.5, 3.0]), requires_grad=True)
    with pytest.raises(TypeError, match="requires grad"):
        call(x, mg.tensor(np.full(shape, 0.7), requires_grad=True))
    if shape == ():                        # a constant 0-d tensor converts, as in PyTorch
        np.testing.assert_array_equal(call(x, mg.tensor(np.array(0.7))).numpy(),
                                      call(x, 0.7).numpy())
