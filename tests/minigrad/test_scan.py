"""Cumulative reductions (cumsum, cumprod, cummax, cummin, logcumsumexp), prod, var_mean and
std_mean, sum(dtype=), and reductions of empty slices: forward against NumPy, float64
gradients against finite differences (0-d and size-1 shapes included), zeros in products,
PyTorch's conventions for ties, and errors."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import check_primitive, leaf


def _numpy_logcumsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True) if a.size else 0
    return np.log(np.cumsum(np.exp(a - m), axis=axis)) + m


def _numpy_cummax(a, axis, pick=np.maximum):
    return pick.accumulate(a, axis=axis)


# (shape, axis): the flattened tensor for axis None; a 0-d tensor scans its one element
SCANS = [((3, 4), 1), ((3, 4), 0), ((2, 1, 3), -1), ((1,), 0), ((), 0), ((2, 3), None)]

REFERENCES = {
    "cumsum": (mg.cumsum, np.cumsum),
    "cumprod": (mg.cumprod, np.cumprod),
    "logcumsumexp": (mg.logcumsumexp, _numpy_logcumsumexp),
    "cummax": (lambda x, axis: mg.cummax(x, axis)[0], _numpy_cummax),
    "cummin": (lambda x, axis: x.cummin(axis)[0],
               lambda a, axis: _numpy_cummax(a, axis, np.minimum)),
}


@pytest.mark.parametrize("shape, axis", SCANS)
@pytest.mark.parametrize("name", list(REFERENCES))
def test_scan(name, shape, axis, device, rng):
    fn, reference = REFERENCES[name]
    a = rng.standard_normal(shape)

    def numpy_reference(v):
        if axis is None:
            return reference(v.reshape(-1), 0)
        return reference(v.reshape(1), 0).reshape(()) if v.ndim == 0 else reference(v, axis)
    check_primitive(lambda x: fn(x, axis), numpy_reference, [a], device)


@pytest.mark.parametrize("values", [[2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0],
                                    [1.5, -2.0, 0.5, 0.0]])
def test_products_with_zeros_have_exact_gradients(values, device):
    """Π_{k≠i} x_k, not y/x = 0/0, for prod and cumprod, checked by finite differences."""
    a = np.array(values)
    check_primitive(lambda x: x.prod(), lambda v: np.asarray(v.prod()), [a], device)
    check_primitive(lambda x: mg.cumprod(x, 0), lambda v: np.cumprod(v), [a], device)
    check_primitive(lambda x: mg.prod(x.reshape(2, 2), 1), lambda v: v.reshape(2, 2).prod(1),
                    [a], device)


@pytest.mark.parametrize("shape, axis, keepdims", [((3, 4), 1, False), ((3, 4), None, True),
                                                   ((2, 3, 2), (0, 2), False), ((), None, False),
                                                   ((1,), 0, True)])
def test_prod(shape, axis, keepdims, device, rng):
    a = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    check_primitive(lambda x: mg.prod(x, axis, keepdims),
                    lambda v: np.asarray(np.prod(v, axis=axis, keepdims=keepdims)), [a], device)


def test_cumulative_extremes_follow_pytorch_on_ties():
    """Among equal running maxima the latest position is reported, and it gets the gradient."""
    x = leaf([1.0, 3.0, 3.0, 2.0, 5.0, 5.0], "cpu")
    values, indices = mg.cummax(x, 0)
    assert indices.tolist() == [0, 1, 2, 2, 4, 5] and indices.dtype == np.int64
    values.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 2.0, 0.0, 1.0, 1.0]
    _, indices = mg.cummin(mg.tensor([3.0, 1.0, 1.0, 2.0, 0.0, 0.0]), dim=0)
    assert indices.tolist() == [0, 1, 2, 2, 4, 5]


@pytest.mark.parametrize("name, pick", [("cummax", np.maximum), ("cummin", np.minimum)])
def test_cumulative_extremes_carry_nan_and_its_position(name, pick, device):
    """From a NaN on the running extreme is NaN (numpy.maximum.accumulate's, PyTorch's), found
    at the latest NaN, which gets the gradient; a NaN must not be read as no extreme at all."""
    a = np.array([1.0, 2.0, np.nan, 3.0, np.nan, 0.0])
    x = leaf(a, device)
    values, indices = getattr(mg, name)(x, 0)
    np.testing.assert_array_equal(values.numpy(), pick.accumulate(a))
    assert indices.tolist()[2:] == [2, 2, 4, 4]
    values.sum().backward()
    assert x.grad.numpy()[2:].tolist() == [2.0, 0.0, 2.0, 0.0]
    for shape in [(), (1,)]:                              # one element, a NaN: itself
        v, i = getattr(mg, name)(leaf(np.full(shape, np.nan), device), 0)
        assert np.isnan(v.numpy()).all() and (i.numpy() == 0).all() and v.shape == shape


def test_logcumsumexp_is_stable_and_passes_no_nan():
    x = leaf([-np.inf, -np.inf, 0.0, 1000.0, -2.0], "cpu")
    y = mg.logcumsumexp(x, 0)
    np.testing.assert_allclose(y.numpy(), [-np.inf, -np.inf, 0.0, 1000.0, 1000.0])
    (g,) = mg.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), [0.0, 0.0, 1.0, 2.0, 0.0], atol=1e-12)


def test_second_derivatives_of_scans(device, rng):
    """create_graph through each scan's backward, against finite differences of the gradient."""
    for fn in (lambda x: mg.logcumsumexp(x, 1), lambda x: mg.cumprod(x, 1),
               lambda x: mg.prod(x, 1), lambda x: mg.cumsum(x * x, 1)):
        x = leaf(rng.uniform(0.5, 1.5, (2, 3)), device)

        def gradient(t, fn=fn):
            (g,) = mg.grad((fn(t) ** 2).sum(), t, create_graph=True)
            return g
        assert mg.gradcheck(gradient, [x])
    x = leaf([0.0, 2.0, 0.5], device)                        # a zero: the exact formula
    assert mg.gradcheck(lambda t: mg.grad(mg.cumprod(t, 0).sum(), t, create_graph=True)[0], [x])


def test_var_mean_and_std_mean(device, rng):
    a = rng.standard_normal((3, 4))
    x = leaf(a, device)
    v, m = mg.var_mean(x, 1, correction=1)
    np.testing.assert_allclose(v.numpy(), a.var(1, ddof=1))
    np.testing.assert_allclose(m.numpy(), a.mean(1))
    s, m = mg.std_mean(x, dim=0, keepdim=True)           # PyTorch's spelling: correction 1
    np.testing.assert_allclose(s.numpy(), a.std(0, ddof=1, keepdims=True))
    assert mg.gradcheck(lambda t: sum(r.sum() for r in mg.std_mean(t, 1, ddof=1)), [x])


def test_reductions_of_empty_slices_give_nan_and_an_empty_gradient():
    x = leaf(np.zeros((0, 3)), "cpu")
    for fn in (lambda t: t.var(0), lambda t: t.std(0), lambda t: t.mean(0),
               lambda t: t.var(0, ddof=1)):
        out = fn(x)
        assert out.shape == (3,) and np.isnan(out.numpy()).all()
        (g,) = mg.grad(out.sum(), x)
        assert g.shape == (0, 3)
    with pytest.warns(RuntimeWarning, match="no degrees of freedom"):
        out = mg.var(mg.ones(1, 3), 0, ddof=1)      # 0/0 per column, as NumPy's and PyTorch's
    assert np.isnan(out.numpy()).all()


def test_sum_mean_and_scans_in_another_dtype():
    i = mg.tensor([[1, 2], [3, 4]], dtype="int32")
    assert i.sum(dtype="float64").dtype == np.float64 and i.sum().dtype == np.int64
    assert i.mean().dtype == np.float32 and i.mean(dtype="float64").dtype == np.float64
    assert i.var().dtype == np.float32 and mg.std(i).dtype == np.float32
    assert mg.cumsum(i, 0).dtype == np.int64 and i.prod().item() == 24
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x.cumsum(dtype="float64")
    assert y.dtype == np.float64
    y.sum().backward()
    assert x.grad.dtype == np.float32 and x.grad.tolist() == [2.0, 1.0]


def test_scan_errors():
    x = mg.ones(2, 3)
    with pytest.raises(mg.AxisError, match="cumsum: axis 2"):
        mg.cumsum(x, 2)
    with pytest.raises(IndexError, match="logcumsumexp"):
        mg.logcumsumexp(x, -3)
    with pytest.raises(TypeError, match="cumprod: got axis"):
        mg.cumprod(x, axis=0, dim=1)
    with pytest.raises(TypeError, match="cummax: axis must be an int"):
        mg.cummax(x, (0, 1))


# -- edges: large magnitudes, infinities, zeros to second order ---------------------------------

def _logcumsumexp_gradient(x, g):
    """Σ_{j ≥ i} g_j e^{x_i − y_j} along the last axis of a float64 x, each prefix's softmax
    computed from differences to its own maximum."""
    out = np.zeros_like(x)
    for j in range(x.shape[-1]):
        prefix = x[..., :j + 1]
        e = np.exp(prefix - prefix.max(axis=-1, keepdims=True))
        out[..., :j + 1] += g[..., j:j + 1] * e / e.sum(axis=-1, keepdims=True)
    return out


@pytest.mark.parametrize("c, dtype", [(1e20, np.float64), (-1e20, np.float64),
                                      (3e7, np.float32), (1e4, np.float32), (0.0, np.float64)])
@pytest.mark.parametrize("shape", [(1,), (3,), (2, 4)])
def test_logcumsumexp_gradient_at_any_magnitude(c, dtype, shape, device, rng):
    x0 = (c + rng.integers(-2, 3, shape)).astype(dtype)   # whole offsets: exact in float32 too
    g0 = rng.standard_normal(shape)
    expected = _logcumsumexp_gradient(x0.astype(np.float64), g0)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    for create_graph in (False, True):
        x = mg.tensor(x0, requires_grad=True, device=device)
        (grad,) = mg.grad(mg.logcumsumexp(x, -1), x, grad_outputs=mg.tensor(
            g0.astype(dtype), device=device), create_graph=create_graph)
        np.testing.assert_allclose(grad.numpy(), expected, rtol=rtol, atol=1e-6 * rtol)


def test_logcumsumexp_of_a_0d_tensor_passes_the_gradient(device):
    x = leaf(1e20, device)
    (g,) = mg.grad(mg.logcumsumexp(x, 0), x)
    assert g.shape == () and float(g.numpy()) == 1.0


def test_logcumsumexp_with_infinities(device):
    """+inf takes every later prefix's gradient (softmax's limit); −inf gets none."""
    x = leaf([1.0, np.inf, 2.0, np.inf], device)
    g0 = np.array([0.5, 2.0, -1.0, 4.0])
    for create_graph in (False, True):
        (g,) = mg.grad(mg.logcumsumexp(x, 0), x, grad_outputs=mg.tensor(g0, device=device),
                       create_graph=create_graph)
        np.testing.assert_array_equal(g.numpy(), [0.5, 2.0 - 1.0 + 2.0, 0.0, 2.0])


@pytest.mark.parametrize("values", [[0.0, 2.0, 0.0, 0.5], [0.0, 0.0], [0.0], [3.0, 0.0, 0.0]])
def test_second_derivative_of_cumprod_with_zeros(values, device):
    x = leaf(values, device)
    assert mg.gradcheck(lambda t: mg.grad((mg.cumprod(t, 0) ** 2).sum(), t,
                                          create_graph=True)[0], [x])
