"""Elementwise primitives on every device: arithmetic, unary functions, selections, masks,
comparisons, dtype and device moves. Forward against NumPy, backward against finite
differences, over shapes that broadcast both ways, size-1 dims and 0-d."""

import math
import operator
import warnings

import hypothesis.extra.numpy as hnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import minigrad as mg

from .primitive_checks import assert_forward, check_primitive, leaf

BROADCAST_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)),
                   ((), (2, 3)), ((2, 3), ()), ((2, 1, 3), (4, 1))]
UNARY_SHAPES = [(), (1,), (3, 4), (2, 1, 3)]

_erf = np.vectorize(math.erf)


def _positive(rng, shape):
    return rng.uniform(0.5, 2.0, size=shape)


def _away_from_zero(rng, shape):
    """Values with |v| ≥ 0.3, so kinks at 0 (abs, relu) and poles (1/b) stay out of reach."""
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.3, 2.0, size=shape)


# -- binary arithmetic -------------------------------------------------------------------------

BINARY = {  # name: (minigrad operation, NumPy reference)
    "add": (operator.add, np.add),
    "sub": (operator.sub, np.subtract),
    "mul": (operator.mul, np.multiply),
    "div": (operator.truediv, np.divide),
    "maximum": (mg.maximum, np.maximum),          # random normals: no ties, no kinks met
    "minimum": (mg.minimum, np.minimum),
}


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_PAIRS)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_op(name, shape_a, shape_b, device, rng):
    op, reference = BINARY[name]
    a = rng.standard_normal(shape_a)
    b = _away_from_zero(rng, shape_b) if name == "div" else rng.standard_normal(shape_b)
    check_primitive(op, reference, [a, b], device)


# PyTorch's function spellings of the operators, and add's and sub's alpha
SPELLED = {  # name: (function, the operator it spells, NumPy reference with alpha 2.5)
    "add": (lambda a, b: mg.add(a, b, alpha=2.5), lambda a, b: a + b,
            lambda a, b: a + 2.5 * b),
    "sub": (lambda a, b: mg.sub(a, b, alpha=2.5), lambda a, b: a - b,
            lambda a, b: a - 2.5 * b),
    "subtract": (lambda a, b: mg.subtract(a, b, alpha=2.5), lambda a, b: a - b,
                 lambda a, b: a - 2.5 * b),
    "mul": (mg.mul, operator.mul, np.multiply), "multiply": (mg.multiply, operator.mul,
                                                              np.multiply),
    "true_divide": (mg.true_divide, operator.truediv, np.divide),
    "pow": (mg.pow, operator.pow, np.power),
}


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_PAIRS + [((1,), (3,)), ((1,), ())])
@pytest.mark.parametrize("name", list(SPELLED))
def test_function_spellings_of_the_operators(name, shape_a, shape_b, device, rng):
    """mg.add(a, b, alpha=2.5) is a + 2.5·b (gradient 2.5·g to b), mg.sub likewise; the others
    are their operator: the same numbers and gradients, bit for bit."""
    function, operator_form, reference = SPELLED[name]
    a = _positive(rng, shape_a) if name == "pow" else rng.standard_normal(shape_a)
    b = _away_from_zero(rng, shape_b) if name == "true_divide" else rng.standard_normal(shape_b)
    check_primitive(function, reference, [a, b], device)
    if name in ("add", "sub", "subtract"):
        function = getattr(mg, name)                     # alpha 1: the operator itself
    got, expected = [f(leaf(a, device), leaf(b, device)) for f in (function, operator_form)]
    np.testing.assert_array_equal(got.numpy(), expected.numpy())
    assert type(got._fn) is type(expected._fn)


@pytest.mark.parametrize("shape", UNARY_SHAPES)
def test_neg_negative_and_the_methods_spell_the_operators(shape, device, rng):
    x, y = leaf(rng.standard_normal(shape), device), leaf(rng.standard_normal(shape), device)
    for got, expected in [(mg.neg(x), -x), (mg.negative(x), -x), (x.negative(), -x),
                          (x.add(y, alpha=-2), x + (-2) * y), (x.sub(y), x - y),
                          (x.subtract(y, alpha=3), x - 3 * y), (x.mul(y), x * y),
                          (x.multiply(2.0), x * 2.0), (x.true_divide(2.0), x / 2.0),
                          (mg.add(x, 1.5), x + 1.5), (mg.sub(1.5, x), 1.5 - x),
                          (mg.pow(2.0, x), 2.0 ** x)]:
        np.testing.assert_array_equal(got.numpy(), expected.numpy())


def test_alpha_keeps_integers_and_refuses_a_float_with_integers():
    """As PyTorch: an integer alpha keeps integer operands integer; a float alpha with integer
    or bool operands on both sides is an error naming the operation, and with a float operand
    it is fine."""
    a, b = mg.tensor([1, 2, 3]), mg.tensor([4, 5, 6])
    got = mg.add(a, b, alpha=2)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got.numpy(), [9, 12, 15])
    np.testing.assert_array_equal(mg.sub(a, b, alpha=-1).numpy(), [5, 7, 9])
    for op in (mg.add, mg.sub):
        with pytest.raises(TypeError, match=f"{op.__name__}: alpha=0.5 is a float"):
            op(a, b, alpha=0.5)
        with pytest.raises(TypeError, match="alpha=0.5 is a float"):
            op(a, 3, alpha=0.5)
    np.testing.assert_allclose(mg.add(a, 1.0, alpha=0.5).numpy(), [1.5, 2.5, 3.5])
    np.testing.assert_allclose(mg.add(a, b.float(), alpha=0.5).numpy(), [3.0, 4.5, 6.0])


def test_function_spellings_match_live_torch(rng):
    torch = pytest.importorskip("torch")
    a, b = rng.standard_normal((2, 3)), rng.standard_normal(3)
    for ours, theirs in [(mg.add(mg.tensor(a), mg.tensor(b), alpha=-1.5),
                          torch.add(torch.tensor(a), torch.tensor(b), alpha=-1.5)),
                         (mg.sub(mg.tensor(a), mg.tensor(b), alpha=0.25),
                          torch.sub(torch.tensor(a), torch.tensor(b), alpha=0.25)),
                         (mg.pow(2.0, mg.tensor(b)), torch.pow(2.0, torch.tensor(b)))]:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-15)


@pytest.mark.parametrize("shape_a, shape_b", BROADCAST_PAIRS)
def test_pow_tensor_tensor(shape_a, shape_b, device, rng):
    a, b = _positive(rng, shape_a), rng.standard_normal(shape_b)
    check_primitive(operator.pow, np.power, [a, b], device)


def test_pow_gradient_of_exponent_is_zero_where_base_is_zero(device):
    """∂(a^b)/∂b = a^b ln a is taken as 0 where a ≤ 0 (ln a undefined); a^b itself is 0 there."""
    a = leaf([0.0, 2.0], device)
    b = leaf([2.0, 3.0], device)
    (a ** b).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 8.0 * np.log(2.0)], rtol=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 3.0 * 4.0], rtol=1e-12)


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -1, -2.5, 0])
@pytest.mark.parametrize("shape", UNARY_SHAPES)
def test_pow_tensor_scalar(exponent, shape, device, rng):
    x = _positive(rng, shape)
    check_primitive(lambda t: t ** exponent, lambda v: v ** exponent, [x], device)


@pytest.mark.parametrize("exponent", [2, 3])
def test_pow_integer_exponent_of_negative_base(exponent, device, rng):
    x = _away_from_zero(rng, (3, 4))
    check_primitive(lambda t: t ** exponent, lambda v: v ** exponent, [x], device)


SCALAR_FORMS = {
    "x + 1": (lambda t: t + 1, lambda v: v + 1),
    "2.5 + x": (lambda t: 2.5 + t, lambda v: 2.5 + v),
    "x - 1.5": (lambda t: t - 1.5, lambda v: v - 1.5),
    "2.5 - x": (lambda t: 2.5 - t, lambda v: 2.5 - v),
    "3 * x": (lambda t: 3 * t, lambda v: 3 * v),
    "x / 4": (lambda t: t / 4.0, lambda v: v / 4.0),
    "2 / x": (lambda t: 2.0 / t, lambda v: 2.0 / v),
    "2 ** x": (lambda t: 2.0 ** t, lambda v: 2.0 ** v),
    "-x": (operator.neg, np.negative),
    "+x": (operator.pos, np.positive),
    "abs(x)": (abs, np.abs),
}


@pytest.mark.parametrize("form", list(SCALAR_FORMS))
def test_operators_with_python_numbers(form, device, rng):
    fn, reference = SCALAR_FORMS[form]
    check_primitive(fn, reference, [_away_from_zero(rng, (2, 3))], device)


@pytest.mark.parametrize("form", ["x + 1", "2.5 - x", "2 / x", "2 ** x", "-x", "abs(x)"])
def test_python_numbers_keep_the_tensor_dtype(form, device):
    fn = SCALAR_FORMS[form][0]
    for dtype in (np.float32, np.float64):
        assert fn(mg.ones(2, 3, dtype=dtype, device=device)).dtype == dtype


def test_binary_shape_mismatch_names_the_op_and_shapes(device):
    a, b = mg.ones(2, 3, device=device), mg.ones(4, device=device)
    with pytest.raises(ValueError, match=r"Add.*\(2, 3\).*\(4,\)"):
        a + b


def test_mixing_devices_names_both(sim_device):
    a, b = mg.ones(2, device="cpu"), mg.ones(2, device=sim_device)
    with pytest.raises(RuntimeError, match="cpu.*sim"):
        a * b
    with pytest.raises(RuntimeError, match="sim.*cpu"):
        mg.matmul(b, a)


# -- property: broadcasting is undone by summing the gradient back ----------------------------

PROPERTY_SETTINGS = settings(max_examples=30, deadline=None,
                             suppress_health_check=[HealthCheck.function_scoped_fixture])


def _sum_back(g, shape):
    """Σ of g over the axes that broadcasting added or stretched, giving `shape`."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=stretched, keepdims=True)


@PROPERTY_SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3))
def test_add_sums_gradient_back_to_each_input(shapes, device):
    a, b = (mg.ones(s, requires_grad=True, device=device) for s in shapes.input_shapes)
    (a + b).sum().backward()
    n_out = math.prod(shapes.result_shape)
    for t in (a, b):  # each element of t was used n_out / size(t) times
        assert t.grad.shape == t.shape and t.grad.device == device
        expected = np.full(t.shape, n_out / math.prod(t.shape))
        np.testing.assert_array_equal(t.grad.numpy(), expected)


@PROPERTY_SETTINGS
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=3),
       seed=hnp.from_dtype(np.dtype(np.uint16)))
def test_mul_gradient_is_the_other_operand_summed_back(shapes, seed, device):
    """z = a ⊙ b broadcast, L = Σ w ⊙ z: ∂L/∂a = Σ_broadcast w ⊙ b, ∂L/∂b = Σ_broadcast w ⊙ a."""
    rng = np.random.default_rng(int(seed))
    shape_a, shape_b = shapes.input_shapes
    a_host, b_host = rng.standard_normal(shape_a), rng.standard_normal(shape_b)
    w = rng.standard_normal(shapes.result_shape)
    a, b = leaf(a_host, device), leaf(b_host, device)
    (a * b).backward(mg.tensor(w, device=device))
    np.testing.assert_allclose(a.grad.numpy(), _sum_back(w * b_host, shape_a), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), _sum_back(w * a_host, shape_b), rtol=1e-12,
                               atol=1e-12)


# -- unary functions ---------------------------------------------------------------------------

def _gelu_exact(v):
    return v * 0.5 * (1.0 + _erf(v / np.sqrt(2.0)))


def _gelu_tanh(v):
    return 0.5 * v * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (v + 0.044715 * v ** 3)))


UNARY = {  # name: (minigrad function, NumPy reference, input maker)
    "exp": (mg.exp, np.exp, lambda rng, s: rng.standard_normal(s)),
    "log": (mg.log, np.log, _positive),
    "sqrt": (mg.sqrt, np.sqrt, _positive),
    "abs": (mg.abs, np.abs, _away_from_zero),
    "tanh": (mg.tanh, np.tanh, lambda rng, s: rng.standard_normal(s)),
    "sigmoid": (mg.sigmoid, lambda v: 1.0 / (1.0 + np.exp(-v)),
                lambda rng, s: 3 * rng.standard_normal(s)),
    "relu": (mg.relu, lambda v: np.where(v > 0, v, 0.0), _away_from_zero),
    "gelu": (mg.gelu, _gelu_exact, lambda rng, s: 2 * rng.standard_normal(s)),
    "gelu_tanh": (lambda t: mg.gelu(t, approximate="tanh"), _gelu_tanh,
                  lambda rng, s: 2 * rng.standard_normal(s)),
}


@pytest.mark.parametrize("shape", UNARY_SHAPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_function(name, shape, device, rng):
    fn, reference, make = UNARY[name]
    check_primitive(fn, reference, [make(rng, shape)], device)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "abs", "tanh", "sigmoid", "relu", "gelu"])
def test_unary_method_matches_function(name, device, rng):
    fn, _, make = UNARY[name]
    x = leaf(make(rng, (2, 3)), device)
    np.testing.assert_array_equal(getattr(x, name)().numpy(), fn(x).numpy())


def test_gelu_far_tails_and_bad_mode(device):
    """erf's tails: GELU(x) → x for large x and → 0 for very negative x, without NaN."""
    x = mg.tensor(np.array([-30.0, -6.0, 6.0, 30.0]), device=device)
    assert_forward(mg.gelu(x), _gelu_exact(x.numpy()), device, rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="gelu: approximate"):
        mg.gelu(x, approximate="fast")


@pytest.mark.parametrize("dtype, big", [(np.float64, 1e200), (np.float32, 1e30),
                                        (np.float16, 6e4)])
def test_gelu_tanh_far_tails_have_the_saturated_derivative(dtype, big, device):
    """Beyond |x| ≈ 10, tanh(u) is ±1 exactly, so y' is 1 (x → +∞) or 0 (x → −∞) and y'' is 0:
    x³ overflowing to inf must not turn 0·inf into a NaN gradient, in any float type."""
    values = np.array([big, -big, 12.0, -12.0, np.inf, 0.5], dtype=dtype)
    x = mg.tensor(values, requires_grad=True, device=device)
    y = mg.gelu(x, approximate="tanh")
    (g,) = mg.grad(y.sum(), [x], create_graph=True)
    (h,) = mg.grad(g.sum(), [x])
    # the exact derivative at 0.5 from the formula in float64, the tails their limits
    u = np.sqrt(2 / np.pi) * (0.5 + 0.044715 * 0.5 ** 3)
    d = 0.5 * (1 + np.tanh(u)) + 0.25 * (1 - np.tanh(u) ** 2) * np.sqrt(2 / np.pi) * (
        1 + 3 * 0.044715 * 0.25)
    tol = {np.float64: 1e-12, np.float32: 1e-6, np.float16: 2e-3}[dtype]
    np.testing.assert_allclose(g.numpy(), [1, 0, 1, 0, 1, d], rtol=tol, atol=tol)
    np.testing.assert_array_equal(h.numpy()[:5], 0)
    assert g.dtype == dtype and np.isfinite(h.numpy()).all()
    with np.errstate(all="raise"):                # the value at finite x overflows nowhere
        np.testing.assert_array_equal(mg.gelu(mg.tensor(values[:4], device=device),
                                              approximate="tanh").numpy(),
                                      np.array([big, 0, 12, 0], dtype=dtype))


def test_sigmoid_does_not_overflow(device):
    x = leaf([-1000.0, -50.0, 0.0, 50.0, 1000.0], device)
    y = mg.sigmoid(x)
    np.testing.assert_allclose(y.numpy(), [0.0, np.exp(-50.0), 0.5, 1.0, 1.0], rtol=1e-12,
                               atol=1e-300)
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_sigmoid_float32_tail_is_relatively_exact_and_quiet(device):
    """Down to the smallest normal float32 output the lower tail keeps its relative precision;
    below it (x < −88.7) the result flushes to 0 without an overflow warning."""
    values = np.array([-87.0, -60.0, -20.0, -3.0, 0.0, 3.0, 20.0, 60.0], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = mg.sigmoid(mg.tensor(values, device=device)).numpy()
        far = mg.sigmoid(mg.tensor(np.array([-89.0, -500.0], np.float32), device=device))
    expected = 1.0 / (1.0 + np.exp(-values.astype(np.float64)))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y, expected, rtol=3e-7)
    assert (far.numpy() < 1.2e-38).all() and (far.numpy() >= 0).all()


@pytest.mark.parametrize("at, expected", [("abs", 0.0), ("relu", 0.0)])
def test_kinks_at_zero_have_zero_gradient(at, expected, device):
    x = leaf([0.0], device)
    getattr(mg, at)(x).sum().backward()
    assert x.grad.numpy()[0] == expected


# -- selections and masks ----------------------------------------------------------------------

@pytest.mark.parametrize("shape_cond, shape_a, shape_b",
                         [((3, 4), (3, 4), (3, 4)), ((3, 1), (4,), (3, 4)), ((), (2, 3), (3,)),
                          ((2, 3), (), ())])
def test_where(shape_cond, shape_a, shape_b, device, rng):
    cond = rng.random(shape_cond) < 0.5
    cond_t = mg.tensor(cond, device=device)
    check_primitive(lambda a, b: mg.where(cond_t, a, b), lambda a, b: np.where(cond, a, b),
                    [rng.standard_normal(shape_a), rng.standard_normal(shape_b)], device)


def test_where_with_a_number_and_a_host_mask(device, rng):
    cond = np.array([True, False, True])
    check_primitive(lambda a: mg.where(cond, a, -1.0), lambda a: np.where(cond, a, -1.0),
                    [rng.standard_normal(3)], device)
    check_primitive(lambda b: mg.where(cond, 2.0, b), lambda b: np.where(cond, 2.0, b),
                    [rng.standard_normal(3)], device)


@pytest.mark.parametrize("mask_shape", [(3, 4), (4,), (3, 1), ()])
def test_masked_fill(mask_shape, device, rng):
    mask = rng.random(mask_shape) < 0.5
    x = rng.standard_normal((3, 4))
    # the mask as a Tensor on the device, and as host NumPy data (as attention masks may be)
    for mask_arg in (mg.tensor(mask, device=device), mask, np.asarray(mask)):
        check_primitive(lambda t: mg.masked_fill(t, mask_arg, 2.5),
                        lambda v: np.where(mask, 2.5, v), [x], device)


@pytest.mark.parametrize("value", [0.0, -1e9, -np.inf])
def test_masked_fill_forward_with_large_fill_values(value, device, rng):
    mask, x = rng.random((3, 4)) < 0.5, rng.standard_normal((3, 4))
    assert_forward(leaf(x, device).masked_fill(mask, value), np.where(mask, value, x), device)
    assert_forward(mg.masked_fill(leaf(x, device), True, value), np.full((3, 4), value), device)


def test_masked_fill_blocks_the_gradient_where_masked(device):
    mask = np.array([True, False, True])
    x = leaf([1.0, 2.0, 3.0], device)
    (mg.masked_fill(x, mask, 5.0) * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 0.0])


def test_masks_must_be_bool(device):
    x = mg.ones(3, device=device)
    with pytest.raises(TypeError, match="masked_fill: the mask must be bool"):
        mg.masked_fill(x, mg.tensor([1, 0, 1], device=device), 0.0)
    with pytest.raises(TypeError, match="where: the mask must be bool"):
        mg.where(np.array([1.0, 0.0, 1.0]), x, x)


@pytest.mark.parametrize("lo, hi", [(-0.5, 0.5), (None, 0.2), (-0.2, None)])
@pytest.mark.parametrize("shape", [(), (3, 4)])
def test_clip(lo, hi, shape, device, rng):
    x = rng.standard_normal(shape)
    near_a_bound = np.any([np.abs(x - b) < 1e-3 for b in (lo, hi) if b is not None], axis=0)
    x = np.where(near_a_bound, x + 0.01, x)     # keep the kinks out of the finite differences
    check_primitive(lambda t: mg.clip(t, lo, hi), lambda v: np.clip(v, lo, hi), [x], device)
    np.testing.assert_array_equal(leaf(x, device).clip(lo, hi).numpy(), np.clip(x, lo, hi))


def test_clip_passes_gradient_on_the_bounds_and_needs_one(device):
    x = leaf([-2.0, -1.0, 0.0, 1.0, 2.0], device)
    mg.clip(x, -1.0, 1.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 1.0, 1.0, 0.0])
    with pytest.raises(ValueError, match="clip: give at least one"):
        mg.clip(x)


def test_maximum_and_minimum_split_ties_evenly(device):
    a, b = leaf([1.0, 2.0, 3.0], device), leaf([3.0, 2.0, 1.0], device)
    mg.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.5, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 0.5, 0.0])
    a.grad = b.grad = None
    mg.minimum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1.0, 0.5, 0.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.5, 1.0])


def test_maximum_with_a_number(device, rng):
    x = _away_from_zero(rng, (2, 3))
    check_primitive(lambda t: mg.maximum(t, 0.0), lambda v: np.maximum(v, 0.0), [x], device)
    check_primitive(lambda t: mg.minimum(0.5, t), lambda v: np.minimum(0.5, v),
                    [x + 0.5 + 0.01 * np.sign(x)], device)


# -- comparisons and logic: bool, never any gradient ------------------------------------------

COMPARISONS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda op: op.__name__)
@pytest.mark.parametrize("shape_a, shape_b", [((3, 4), (3, 4)), ((3, 1), (4,)), ((), (2,))])
def test_comparisons_give_bool_tensors_without_grad(op, shape_a, shape_b, device, rng):
    a = rng.integers(-2, 3, size=shape_a).astype(np.float64)     # small integers: many ties
    b = rng.integers(-2, 3, size=shape_b).astype(np.float64)
    out = op(leaf(a, device), leaf(b, device))
    assert_forward(out, op(a, b), device)
    assert out.dtype == np.bool_ and not out.requires_grad and out.grad_fn is None


@pytest.mark.parametrize("op", COMPARISONS, ids=lambda op: op.__name__)
def test_comparisons_with_numbers_on_either_side(op, device):
    x = np.array([-1.0, 0.0, 1.0])
    assert_forward(op(leaf(x, device), 0.0), op(x, 0.0), device)
    assert_forward(op(0, leaf(x, device)), op(0, x), device)


@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_comparison_functions_spell_the_operators(shape, device, rng):
    """PyTorch's mg.eq/ne/lt/le/gt/ge and NumPy's greater, ..., not_equal are the operators."""
    a = rng.integers(-1, 2, size=shape).astype(np.float64)
    b = rng.integers(-1, 2, size=shape).astype(np.float64)
    ta, tb = mg.tensor(a, device=device), mg.tensor(b, device=device)
    for names, op in [(("eq",), operator.eq), (("ne", "not_equal"), operator.ne),
                      (("lt", "less"), operator.lt), (("le", "less_equal"), operator.le),
                      (("gt", "greater"), operator.gt), (("ge", "greater_equal"), operator.ge)]:
        for name in names:
            assert_forward(getattr(mg, name)(ta, tb), op(a, b), device)
            assert_forward(getattr(mg, name)(ta, 0.0), op(a, 0.0), device)


def test_comparison_errors_name_the_op(device, sim_device):
    with pytest.raises(ValueError, match=r"lt: shapes \(2, 3\) and \(4,\) do not broadcast"):
        mg.ones(2, 3, device=device) < mg.ones(4, device=device)
    with pytest.raises(RuntimeError, match="eq: operands on different devices, cpu and sim"):
        mg.ones(2, device="cpu") == mg.ones(2, device=sim_device)


def test_logical_operators(device, rng):
    p, q = rng.random((3, 4)) < 0.5, rng.random((4,)) < 0.5
    tp, tq = mg.tensor(p, device=device), mg.tensor(q, device=device)
    assert_forward(tp & tq, p & q, device)
    assert_forward(tp | tq, p | q, device)
    assert_forward(~tp, ~p, device)
    with pytest.raises(TypeError, match="~: needs a bool tensor"):
        ~mg.ones(2, device=device)


def test_isfinite_and_isnan(device):
    x = np.array([0.0, np.inf, -np.inf, np.nan, 1.0])
    t = mg.tensor(x, device=device)
    assert_forward(mg.isfinite(t), np.isfinite(x), device)
    assert_forward(mg.isnan(t), np.isnan(x), device)


def test_any_and_all(device):
    x = np.array([[True, False], [True, True]])
    t = mg.tensor(x, device=device)
    assert_forward(t.any(), x.any(), device)
    assert_forward(mg.all(t, axis=1), x.all(axis=1), device)
    assert_forward(mg.any(t, axis=0, keepdims=True), x.any(axis=0, keepdims=True), device)


# -- dtype and device moves --------------------------------------------------------------------

def test_astype_gradient_comes_back_in_the_input_dtype(device, rng):
    x = mg.tensor(rng.standard_normal((2, 3)).astype(np.float32), requires_grad=True,
                  device=device)
    y = x.astype(np.float64)
    assert_forward(y, x.numpy().astype(np.float64), device)
    g = rng.standard_normal((2, 3))
    y.backward(mg.tensor(g, device=device))
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad.numpy(), g.astype(np.float32))


def test_astype_gradcheck(device, rng):
    """Through float32 and back: linear, so coarse differences (eps = 1e-2) measure it well."""
    x = leaf(rng.standard_normal((2, 3)), device)
    fn = lambda t: t.astype("float32").astype(np.float64) * 3.0  # noqa: E731
    assert_forward(fn(x), x.numpy().astype(np.float32).astype(np.float64) * 3.0, device)
    assert mg.gradcheck(fn, [x], eps=1e-2, atol=1e-4)
    assert mg.gradcheck(lambda t: t.double() * 2.0, [x])


def test_integer_tensors_convert_to_float_for_gradients(device):
    i = mg.tensor([1, 2, 3], device=device)
    assert i.dtype == np.int64 and not i.requires_grad
    f = i.astype(np.float64)
    assert_forward(f, np.array([1.0, 2.0, 3.0]), device)
    with pytest.raises(TypeError, match="only floating-point"):
        i.requires_grad = True


@pytest.mark.parametrize("shape", [(), (2, 3)])
def test_to_device_and_back(shape, device, rng):
    x = rng.standard_normal(shape)
    w = rng.standard_normal(shape)
    on_host = leaf(x, "cpu")
    moved = on_host.to(device)
    assert_forward(moved, x, device)
    # y = Σ w ⊙ x computed on `device`, the gradient comes back to the host tensor
    (moved * mg.tensor(w, device=device)).sum().backward()
    assert on_host.grad.device == "cpu"
    np.testing.assert_allclose(on_host.grad.numpy(), w, rtol=1e-12)
    check_primitive(lambda t: (t.to("cpu") * 2.0).to(device), lambda v: v * 2.0, [x], device)
    assert_forward(leaf(x, device).cpu(), x, "cpu")


def test_pow_follows_pytorch_at_zero_and_negative_bases():
    """a^b's gradients where ln a is undefined: ∂/∂b is 0 at a = 0 with b ≥ 0, −inf at a = 0
    with b < 0, NaN for a < 0; ∂/∂a is 0 where b = 0. The values: 0⁻¹ = inf, (−2)^½ = NaN."""
    a = leaf([0.0, 0.0, -2.0, 2.0, 0.0], "cpu")
    b = leaf([2.0, -1.0, 0.5, 3.0, 0.0], "cpu")
    with np.errstate(divide="ignore", invalid="ignore"):
        z = a ** b
        ga, gb = mg.grad(z.sum(), [a, b])
    np.testing.assert_array_equal(z.numpy(), [0.0, np.inf, np.nan, 8.0, 1.0])
    np.testing.assert_array_equal(ga.numpy(), [0.0, -np.inf, np.nan, 12.0, 0.0])
    np.testing.assert_allclose(gb.numpy(), [0.0, -np.inf, np.nan, 8 * np.log(2.0), 0.0])
    x = leaf([0.0], "cpu")
    with np.errstate(divide="ignore"):
        (g,) = mg.grad((x ** -1.0).sum(), x)
    assert g.tolist() == [-np.inf]


# -- Tensor arguments of masked_fill and clip get their gradients ---------------------------------

@pytest.mark.parametrize("x_shape, mask_shape", [((), ()), ((1,), (1,)), ((2, 3), (2, 3)),
                                                 ((2, 3), (3,)), ((1,), ())])
def test_masked_fill_with_a_0d_tensor_value_passes_its_gradient(x_shape, mask_shape, device,
                                                                 rng):
    mask = rng.random(mask_shape) < 0.5
    mask.reshape(-1)[0] = True                          # at least one filled position
    a, v0 = rng.standard_normal(x_shape), 0.75
    x, v = leaf(a, device), leaf(v0, device)
    host_mask = mg.tensor(mask, device=device)
    out = mg.masked_fill(x, host_mask, v)
    assert_forward(out, np.where(mask, v0, a), device)
    g0 = rng.standard_normal(out.shape)
    grad_x, grad_v = mg.grad(out, [x, v], grad_outputs=mg.tensor(g0, device=device))
    np.testing.assert_allclose(grad_v.numpy(), np.where(mask, g0, 0.0).sum())
    np.testing.assert_allclose(grad_x.numpy(), np.where(mask, 0.0, g0))
    assert mg.gradcheck(lambda t, u: mg.masked_fill(t, host_mask, u), [x, v])


@pytest.mark.parametrize("value_shape", [(1,), (2, 3), (3,)])
def test_masked_fill_refuses_a_value_that_is_not_0d(value_shape):
    x = mg.zeros(2, 3)
    with pytest.raises(ValueError, match=rf"masked_fill: value must be .* 0-d tensor, got shape "
                                         rf"\({value_shape[0]},"):
        mg.masked_fill(x, np.ones((2, 3), dtype=bool), mg.ones(*value_shape))


def _clip_gradients(x, lo, hi):
    """PyTorch's clamp gradients as masks, from its rule: x where lo ≤ x ≤ hi, lo where
    x < lo < hi, hi where x > hi or hi < lo (None: an absent bound)."""
    inside = np.ones(np.broadcast_shapes(*[np.shape(v) for v in (x, lo, hi) if v is not None]),
                     dtype=bool)
    if lo is not None:
        inside = inside & (x >= lo)
    if hi is not None:
        inside = inside & (x <= hi)
    below = None if lo is None else (x < lo) & (True if hi is None else lo < hi)
    above = None if hi is None else (x > hi) | (False if lo is None else hi < lo)
    return inside, below, above


CLIP_CASES = [((3,), (3,), ()), ((), (), ()), ((1,), (1,), None), ((2, 3), (3,), (2, 1)),
              ((2, 3), None, (1,)), ((), (2, 3), ())]


@pytest.mark.parametrize("x_shape, lo_shape, hi_shape", CLIP_CASES)
def test_clip_with_tensor_bounds_values_and_gradients(x_shape, lo_shape, hi_shape, device, rng):
    """Off the ties, against NumPy and finite differences for x and both bounds."""
    def draw(shape, offset):          # on distinct grids 0.03 apart: no two values tie
        return None if shape is None else rng.uniform(-1, 1, shape).round(1) + offset
    a, lo0, hi0 = draw(x_shape, 0.05), draw(lo_shape, -0.48), draw(hi_shape, 0.58)
    inputs = [leaf(v, device) for v in (a, lo0, hi0) if v is not None]
    lo = inputs[1] if lo0 is not None else None
    hi = inputs[-1] if hi0 is not None else None
    out = mg.clip(inputs[0], lo, hi)
    assert_forward(out, np.clip(a, lo0, hi0), device)

    def clipped(x, *bounds):
        it = iter(bounds)
        return mg.clip(x, next(it) if lo0 is not None else None,
                       next(it) if hi0 is not None else None)
    assert mg.gradcheck(clipped, inputs)


def test_clip_at_ties_follows_pytorch(device):
    """Every tie and crossing: x equal to a bound, equal bounds, and lo > hi (hi wins)."""
    a = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 0.5, 0.5])
    lo0 = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 0.5, 2.0])
    hi0 = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.5, 1.0])
    x, lo, hi = leaf(a, device), leaf(lo0, device), leaf(hi0, device)
    out = mg.clip(x, lo, hi)
    assert_forward(out, np.clip(a, lo0, hi0), device)
    grads = mg.grad(out.sum(), [x, lo, hi])
    for g, expected in zip(grads, _clip_gradients(a, lo0, hi0)):
        np.testing.assert_array_equal(g.numpy(), expected.astype(np.float64))
    x, lo = leaf(a, device), leaf(lo0, device)                  # one bound: a 0-d number
    grads = mg.grad(mg.clip(x, lo, 0.5).sum(), [x, lo])
    for g, expected in zip(grads, _clip_gradients(a, lo0, 0.5)):
        np.testing.assert_array_equal(g.numpy(), expected.astype(np.float64))


def test_clip_at_ties_matches_torch():
    torch = pytest.importorskip("torch")
    a = np.array([-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 0.5, 0.5])
    lo0 = np.array([-1.0, -1.0, -1.0, 1.0, 1.0, 1.0, 0.5, 2.0])
    hi0 = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.5, 1.0])
    ours = [leaf(v, "cpu") for v in (a, lo0, hi0)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (a, lo0, hi0)]
    out, ref = mg.clip(*ours), torch.clamp(*theirs)
    np.testing.assert_array_equal(out.numpy(), ref.detach().numpy())
    for g, r in zip(mg.grad(out.sum(), ours), torch.autograd.grad(ref.sum(), theirs)):
        np.testing.assert_array_equal(g.numpy(), r.numpy())


@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_a_nan_operand_of_maximum_gets_the_gradient(name, device):
    """The result's NaN comes from the NaN operand, so the gradient goes there (½ each when
    both are NaN); where neither is NaN, the winner's rule and ½ at ties."""
    a = leaf([math.nan, 2.0, 0.5, math.nan, 1.0], device)
    b = leaf([1.0, 1.0, math.nan, math.nan, 1.0], device)
    out = getattr(mg, name)(a, b)
    (out * mg.tensor([1.0, 2.0, 3.0, 4.0, 5.0], dtype=np.float64, device=device)).sum().backward()
    first = [1.0, 2.0 if name == "maximum" else 0.0, 0.0, 2.0, 2.5]
    second = [0.0, 0.0 if name == "maximum" else 2.0, 3.0, 2.0, 2.5]
    np.testing.assert_array_equal(a.grad.numpy(), first)
    np.testing.assert_array_equal(b.grad.numpy(), second)


@pytest.mark.parametrize("shapes", [((), ()), ((1,), ()), ((2, 3), (3,)), ((2, 1), (1, 3))])
@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_logical_functions_read_numbers_as_truth_values(name, shapes, device, rng):
    """As numpy.logical_* and torch.logical_*: nonzero is True, whatever the dtype (the
    operators & | ^ are bitwise on integers, as in both libraries)."""
    a = rng.integers(-1, 2, shapes[0])
    b = rng.integers(0, 2, shapes[1]).astype(np.float32)
    out = getattr(mg, name)(mg.tensor(a, device=device), mg.tensor(b, device=device))
    assert out.dtype == np.bool_ and out.device == device
    np.testing.assert_array_equal(out.numpy(), getattr(np, name)(a, b))
    np.testing.assert_array_equal(mg.logical_not(mg.tensor(a, device=device)).numpy(),
                                  np.logical_not(a))
