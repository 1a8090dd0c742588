"""Reductions on every device: sum, mean, max, min, var, logsumexp with axis and keepdims,
argmax/argmin. Forward against NumPy, backward against finite differences."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import assert_forward, check_primitive, leaf


def _logsumexp_reference(v, axis, keepdims):
    """log Σ eˣ, straight from the definition (the test inputs are small, no overflow)."""
    return np.log(np.exp(v).sum(axis=axis, keepdims=keepdims))


REDUCTIONS = {  # name: (minigrad function, NumPy reference)
    "sum": (mg.sum, np.sum),
    "mean": (mg.mean, np.mean),
    "max": (mg.max, np.max),
    "min": (mg.min, np.min),
    "var": (mg.var, lambda v, axis, keepdims: np.var(v, axis=axis, keepdims=keepdims, ddof=0)),
    "logsumexp": (mg.logsumexp, _logsumexp_reference),
}
# (shape, axis): all axes, one axis (positive and negative), several axes, size-1 axes, 0-d
CASES = [((2, 3, 2), None), ((2, 3, 2), 0), ((2, 3, 2), -1), ((2, 3, 2), (0, 2)),
         ((3, 1), 1), ((1,), 0), ((), None), ((4,), (0,))]


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("shape, axis", CASES)
@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_reduction(name, shape, axis, keepdims, device, rng):
    fn, reference = REDUCTIONS[name]
    if name == "logsumexp" and axis is None and shape:
        axis = tuple(range(len(shape)))          # logsumexp's default axis is -1, not all
    check_primitive(lambda t: fn(t, axis=axis, keepdims=keepdims),
                    lambda v: np.asarray(reference(v, axis=axis, keepdims=keepdims)),
                    [rng.standard_normal(shape)], device)


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "var", "logsumexp"])
def test_reduction_method_matches_function(name, device, rng):
    x = leaf(rng.standard_normal((3, 4)), device)
    fn = REDUCTIONS[name][0]
    np.testing.assert_array_equal(getattr(x, name)(axis=0, keepdims=True).numpy(),
                                  fn(x, axis=0, keepdims=True).numpy())


def test_logsumexp_reduces_the_last_axis_by_default(device, rng):
    x = rng.standard_normal((2, 3))
    assert_forward(mg.logsumexp(leaf(x, device)), _logsumexp_reference(x, -1, False), device)


@pytest.mark.parametrize("name", ["max", "min"])
def test_ties_split_the_gradient_evenly(name, device):
    """max/min: the k tied extreme elements each get 1/k of the gradient (documented)."""
    sign = 1.0 if name == "max" else -1.0
    x = leaf(sign * np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 0.0]]), device)
    getattr(mg, name)(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3, 0]],
                               rtol=1e-15)
    x.grad = None
    getattr(x, name)().backward()                # over everything: three tied 5s
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0]],
                               rtol=1e-15)


def test_max_keeps_integer_dtype_and_refuses_empty(device):
    x = mg.tensor([[3, 1], [2, 7]], device=device)
    assert_forward(x.max(axis=0), np.array([3, 7]), device)
    with pytest.raises(ValueError, match=r"max: cannot reduce over an empty axis \(shape \(0, 2\)"):
        mg.zeros(0, 2, device=device).max()


@pytest.mark.parametrize("name", ["sum", "mean", "max", "var", "logsumexp"])
def test_axis_out_of_range_names_the_op(name, device):
    with pytest.raises(ValueError, match=f"{name}: axis 2 is out of range for a 2-d tensor"):
        REDUCTIONS[name][0](mg.ones(2, 3, device=device), axis=2)


def test_mean_of_float32_stays_float32(device):
    assert mg.ones(2, 3, device=device).mean(axis=1).dtype == np.float32


# -- argmax / argmin: int64 indices, no gradient ------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, axis, keepdims, device, rng):
    x = rng.standard_normal((3, 4))
    t = leaf(x, device)
    out = getattr(mg, name)(t, axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(x, axis=axis, keepdims=keepdims).astype(np.int64)
    assert_forward(out, expected, device)
    assert not out.requires_grad
    np.testing.assert_array_equal(getattr(t, name)(axis=axis, keepdims=keepdims).numpy(),
                                  expected)


def test_argmax_takes_the_first_of_ties_and_refuses_empty(device):
    t = mg.tensor([[1.0, 4.0, 4.0], [2.0, 2.0, 0.0]], device=device)
    assert_forward(mg.argmax(t, axis=1), np.array([1, 0]), device)
    with pytest.raises(ValueError, match="argmin: no position to return along an empty axis"):
        mg.argmin(mg.zeros(0, device=device))


# -- a 0-d tensor takes axis 0 and -1 (PyTorch's rule) -------------------------------------------

_ONE_ELEMENT = {  # name: NumPy reference over an axis
    "sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod,
    "logsumexp": lambda v, axis: np.log(np.exp(v).sum(axis=axis)),
    "var": lambda v, axis: np.var(v, axis=axis), "std": lambda v, axis: np.std(v, axis=axis),
}


@pytest.mark.parametrize("axis", [0, -1, (0,), (0, -1)])
@pytest.mark.parametrize("name", list(_ONE_ELEMENT))
def test_zero_d_reductions_accept_axis_zero_and_minus_one(name, axis, rng):
    v = rng.standard_normal(())
    x = mg.tensor(v, requires_grad=True)
    out = getattr(mg, name)(x, axis=axis)
    # the one element reduced alone: the same as reducing the (1,)-shaped tensor along axis 0
    expected = _ONE_ELEMENT[name](v.reshape(1), axis=0)
    assert out.shape == () and getattr(mg, name)(x, axis=axis, keepdims=True).shape == ()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(getattr(mg, name)(mg.tensor(v.reshape(1)), axis=0).numpy(),
                               expected, rtol=1e-12)
    assert mg.gradcheck(lambda t: getattr(mg, name)(t, axis=axis), [x])
    with pytest.raises(mg.AxisError, match=name):
        getattr(mg, name)(x, axis=1)


# -- var and std without degrees of freedom: inf or NaN, as NumPy and PyTorch -------------------

@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("shape, axis, ddof", [((2,), 0, 2), ((3, 2), 0, 5), ((2, 3), 1, 3),
                                               ((1,), None, 1), ((), None, 1)])
def test_var_and_std_without_degrees_of_freedom(name, shape, axis, ddof, rng):
    v = rng.standard_normal(shape)
    x = mg.tensor(v, requires_grad=True)
    with pytest.warns(RuntimeWarning, match=rf"{name}: ddof={ddof} leaves no degrees of freedom"):
        out = getattr(mg, name)(x, axis=axis, ddof=ddof)
    centred = v - v.mean(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        # Σ (x − x̄)² / max(n − ddof, 0) = Σ (x − x̄)² / 0: inf, or NaN for a single element
        variance = np.divide((centred ** 2).sum(axis=axis), 0.0)
        expected = variance if name == "var" else np.sqrt(variance)
        # ∂var/∂x = 2(x − x̄)/0: ±inf, NaN where x = x̄; ∂std/∂x = (x − x̄)/(0 · std): NaN
        expected_grad = (np.divide(2.0 * centred, 0.0) if name == "var"
                         else np.full(v.shape, np.nan))
    np.testing.assert_array_equal(out.numpy(), expected)
    with pytest.warns(RuntimeWarning):
        (g,) = mg.grad(getattr(mg, name)(x, axis=axis, ddof=ddof).sum(), x)
    np.testing.assert_array_equal(g.numpy(), expected_grad)


# -- edges: zeros in prod to second order, large logits, empty axes ----------------------------

def _prod_hessian_row_sums(x):
    """Σ_i ∂²(Π x)/∂x_i ∂x_j = Σ_{i ≠ j} Π_{k ∉ {i, j}} x_k, from the definition."""
    n = x.size
    out = np.zeros(n)
    for j in range(n):
        for i in range(n):
            if i != j:
                out[j] += np.prod([x[k] for k in range(n) if k not in (i, j)])
    return out


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 4.0], [2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0],
                                    [0.0], [5.0, 0.5]])
def test_second_derivative_of_prod_with_zeros(values, device):
    x = leaf(values, device)
    (g,) = mg.grad(mg.prod(x), x, create_graph=True)
    (gg,) = mg.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), _prod_hessian_row_sums(np.array(values)),
                               rtol=1e-12, atol=0)
    assert mg.gradcheck(lambda t: mg.grad(mg.prod(t), t, create_graph=True)[0], [x])


@pytest.mark.parametrize("shape, axis", [((), None), ((1,), 0), ((2, 3), 1), ((2, 3), (0, 1)),
                                         ((3, 2), 0)])
def test_second_derivative_of_prod_along_axes_with_zeros(shape, axis, device, rng):
    a = rng.uniform(0.5, 1.5, shape)
    a.reshape(-1)[::2] = 0.0                              # zeros in every slice
    x = leaf(a, device)
    w = mg.tensor(rng.standard_normal(np.prod(a, axis=axis).shape), device=device)
    assert mg.gradcheck(lambda t: mg.grad(mg.prod(t, axis=axis), t, grad_outputs=w,
                                          create_graph=True)[0], [x])


@pytest.mark.parametrize("c, dtype", [(1e20, np.float64), (-1e20, np.float64),
                                      (3e7, np.float32), (1e4, np.float32)])
def test_logsumexp_gradient_is_the_softmax_at_any_magnitude(c, dtype, device):
    x0 = (c + np.array([[0.0, 0.0, 0.0], [0.0, -1.0, 2.0]])).astype(dtype)
    d = x0.astype(np.float64) - x0.astype(np.float64).max(axis=1, keepdims=True)
    softmax = np.exp(d) / np.exp(d).sum(axis=1, keepdims=True)
    x = mg.tensor(x0, requires_grad=True, device=device)
    (g,) = mg.grad(mg.logsumexp(x, axis=1).sum(), x)
    np.testing.assert_allclose(g.numpy(), softmax, rtol=1e-12 if dtype == np.float64 else 1e-6)


def test_logsumexp_with_plus_infinity_gives_its_limit(device):
    x = leaf([[np.inf, 1.0, 2.0], [np.inf, np.inf, 0.0]], device)
    y = mg.logsumexp(x, axis=1)
    np.testing.assert_array_equal(y.numpy(), [np.inf, np.inf])
    (g,) = mg.grad(y.sum(), x)
    np.testing.assert_array_equal(g.numpy(), [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("shape, axis", [((0, 3), 1), ((0, 3), -1), ((3, 0), 0), ((2, 0, 3), 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_extremes_along_a_nonempty_axis_of_an_empty_tensor(name, shape, axis, keepdims, device):
    a = np.zeros(shape)
    x = leaf(a, device)
    out = getattr(mg, name)(x, axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(a, axis=axis, keepdims=keepdims)
    assert out.shape == expected.shape
    if name in ("max", "min"):
        (g,) = mg.grad(out.sum(), x)
        assert g.shape == shape


@pytest.mark.parametrize("name", ["max", "min", "argmax", "argmin"])
def test_extremes_over_an_empty_axis_are_refused(name, device):
    with pytest.raises(ValueError, match=rf"{name}: .*empty axis \(shape \(3, 0\), axis 1\)"):
        getattr(mg, name)(mg.zeros(3, 0, device=device), axis=1)


@pytest.mark.parametrize("shape, axis", [((2, 0), 1), ((0,), 0), ((0,), None), ((2, 0, 3), 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_over_an_empty_axis_is_minus_inf(shape, axis, keepdims, device):
    a = np.zeros(shape)
    x = leaf(a, device)
    out = mg.logsumexp(x, axis=axis, keepdims=keepdims)
    with np.errstate(divide="ignore"):
        expected = np.log(np.exp(a).sum(axis=axis, keepdims=keepdims))
    assert_forward(out, expected, device)
    (g,) = mg.grad(out.sum(), x)
    assert g.shape == shape


@pytest.mark.parametrize("shape, axis", [((3,), None), ((1,), 0), ((), None), ((2, 3), 1)])
def test_std_of_a_constant_slice_has_gradient_zero(shape, axis, device):
    """The rounded std of three copies of −0.11046580640416379 is 1.4e-17, not 0; the gradient
    must still be the documented 0, not rounding over rounding."""
    x = leaf(np.full(shape, -0.11046580640416379), device)
    (g,) = mg.grad(mg.std(x, axis=axis).sum(), x)
    np.testing.assert_array_equal(g.numpy(), np.zeros(shape))


@pytest.mark.parametrize("dtype, scale", [(np.float64, 1e200), (np.float64, 1e-200),
                                          (np.float32, 1e25), (np.float32, 1e-25),
                                          (np.float16, 100.0), (np.float64, 1.0)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_the_euclidean_norm_is_exact_where_its_sum_of_squares_is_not(dtype, scale, keepdims):
    """Σ x² overflows or underflows (float16 from |x| ≈ 256, as PyTorch sums it in float32);
    the norm and its gradient x/‖x‖ do not. One row extreme, one plain, one zero."""
    rows = np.array([[3.0, -4.0, 12.0], [1.0, 2.0, 2.0], [0.0, 0.0, 0.0]])
    values = rows * np.array([[scale], [1.0], [1.0]])
    x = mg.tensor(values.astype(dtype), requires_grad=True)
    with np.errstate(all="raise"):
        y = mg.linalg.vector_norm(x, 2, 1, keepdims)
    expected = np.array([13.0 * scale, 3.0, 0.0])
    tol = {np.float64: 1e-15, np.float32: 1e-6, np.float16: 1e-3}[dtype]
    assert y.dtype == dtype and y.shape == ((3, 1) if keepdims else (3,))
    np.testing.assert_allclose(y.numpy().reshape(3).astype(np.float64), expected, rtol=tol)
    (g,) = mg.grad(y.sum(), [x])
    slopes = np.array([[3.0, -4.0, 12.0], [1.0, 2.0, 2.0], [0.0, 0.0, 0.0]]) / \
        np.array([[13.0], [3.0], [1.0]])
    np.testing.assert_allclose(g.numpy().astype(np.float64), slopes, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["max", "min", "amax", "amin"])
def test_a_slice_holding_nan_sends_the_gradient_to_its_nans(name):
    """max over a slice with NaN is NaN, made by the NaN elements: they share the gradient
    (as PyTorch's max() over all axes; its amax gives NaN everywhere); other slices as before."""
    x = mg.tensor(np.array([[np.nan, 2.0, np.nan], [1.0, 3.0, 3.0]]), requires_grad=True)
    y = getattr(mg, name)(x, axis=1)
    (y * mg.tensor([2.0, 4.0], dtype=np.float64)).sum().backward()
    extreme = [0.0, 2.0, 2.0] if name in ("max", "amax") else [4.0, 0.0, 0.0]
    np.testing.assert_array_equal(x.grad.numpy(), [[1.0, 0.0, 1.0], extreme])
