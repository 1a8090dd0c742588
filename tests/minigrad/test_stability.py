"""Numerical stability on every device: softmax, log_softmax and logsumexp at logits of ±1e4,
and slices whose inputs are all −inf (a fully masked attention row), which give the documented
results (softmax 0, log_softmax −inf, logsumexp −inf) and zero gradient, never NaN. Ties in
max/min are covered in test_reduce.py."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import assert_forward, leaf

OFFSETS = np.array([[0.0, -1.0, -2.0, -3.5], [0.0, -20.0, -5.0, -0.5]])


def _softmax_of_offsets(d):
    """softmax(c + d) = softmax(d): the reference never sees the large constant c."""
    e = np.exp(d)
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("c", [1e4, -1e4])
def test_large_logits_stay_finite_and_correct(c, dtype, device):
    x = mg.tensor((c + OFFSETS).astype(dtype), requires_grad=True, device=device)
    rtol = 1e-12 if dtype == np.float64 else 1e-5
    probabilities = _softmax_of_offsets(OFFSETS)
    assert_forward(mg.softmax(x), probabilities.astype(dtype), device, rtol=rtol, atol=1e-30)
    assert_forward(mg.log_softmax(x), np.log(probabilities).astype(dtype), device, rtol=rtol)
    lse = mg.logsumexp(x)
    assert_forward(lse, (c + np.log(np.exp(OFFSETS).sum(axis=-1))).astype(dtype), device,
                   rtol=rtol)
    # ∂ logsumexp/∂x = softmax(x), computed from x − max(x): the rounding of y ≈ 1e4 (half an
    # ulp, 5e-4 in float32) never enters it
    lse.sum().backward()
    grad_rtol = 1e-12 if dtype == np.float64 else 1e-5
    np.testing.assert_allclose(x.grad.numpy(), probabilities, rtol=grad_rtol, atol=1e-30)


@pytest.mark.parametrize("op", [mg.softmax, mg.log_softmax, mg.logsumexp],
                         ids=["softmax", "log_softmax", "logsumexp"])
def test_gradcheck_at_large_logits(op, device):
    assert mg.gradcheck(op, [leaf(1e4 + OFFSETS, device)])


# -- all −inf slices ---------------------------------------------------------------------------

ROWS = np.array([[-np.inf, -np.inf, -np.inf],      # every key masked out
                 [0.5, -np.inf, 1.5]])            # one key masked out
FINITE = [0, 2]                                   # the finite entries of row 1


def _backward(op, rows, device, rng):
    """op's output and input gradient for a random upstream gradient; the recorded spelling of
    the gradient (create_graph=True) must agree with the plain one, NaN-free as well."""
    x = leaf(rows, device)
    y = op(x)
    g = mg.tensor(rng.standard_normal(y.shape), device=device)
    (recorded,) = mg.grad(y, x, grad_outputs=g, create_graph=True)
    y.backward(g)
    np.testing.assert_allclose(recorded.numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-14)
    return y.numpy(), x.grad.numpy()


def test_softmax_of_an_all_minus_inf_row_is_zero_with_zero_gradient(device, rng):
    y, grad = _backward(mg.softmax, ROWS, device, rng)
    np.testing.assert_array_equal(y[0], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(y[1], [*_softmax_of_offsets(np.array([0.5, 1.5]))[:1], 0.0,
                                      *_softmax_of_offsets(np.array([0.5, 1.5]))[1:]])
    assert np.isfinite(grad).all()
    np.testing.assert_array_equal(grad[0], [0.0, 0.0, 0.0])
    assert grad[1, 1] == 0.0


def test_log_softmax_of_an_all_minus_inf_row_is_minus_inf_with_zero_gradient(device, rng):
    y, grad = _backward(mg.log_softmax, ROWS, device, rng)
    np.testing.assert_array_equal(y[0], [-np.inf, -np.inf, -np.inf])
    np.testing.assert_allclose(y[1, FINITE], np.log(_softmax_of_offsets(np.array([0.5, 1.5]))))
    assert y[1, 1] == -np.inf
    assert np.isfinite(grad).all()
    np.testing.assert_array_equal(grad[0], [0.0, 0.0, 0.0])


def test_logsumexp_of_an_all_minus_inf_slice_is_minus_inf_with_zero_gradient(device, rng):
    y, grad = _backward(mg.logsumexp, ROWS, device, rng)
    assert y[0] == -np.inf
    np.testing.assert_allclose(y[1], np.log(np.exp(0.5) + np.exp(1.5)))
    assert np.isfinite(grad).all()
    np.testing.assert_array_equal(grad[0], [0.0, 0.0, 0.0])
    assert grad[1, 1] == 0.0
    # over every axis at once, and with keepdims
    x = leaf(np.full((2, 2), -np.inf), device)
    total = mg.logsumexp(x, axis=(0, 1), keepdims=True)
    assert_forward(total, np.full((1, 1), -np.inf), device)
    total.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((2, 2)))


@pytest.mark.parametrize("op", [mg.softmax, mg.log_softmax, mg.logsumexp],
                         ids=["softmax", "log_softmax", "logsumexp"])
def test_masked_entries_do_not_change_the_finite_ones(op, device, rng):
    """A −inf entry contributes e^(−inf) = 0: the finite entries of row 1 get exactly the values
    and gradients that the row without the masked entry gets."""
    g = rng.standard_normal((2, 3))
    g[1, 1] = 0.0          # a loss ignores the masked output (log_softmax's −inf depends on x)
    full_x = leaf(ROWS, device)
    full_y = op(full_x)
    short_x = leaf(ROWS[1:, FINITE], device)
    short_y = op(short_x)
    if op is mg.logsumexp:
        full_y.backward(mg.tensor(g[:, 0], device=device))
        short_y.backward(mg.tensor(g[1:, 0], device=device))
        np.testing.assert_allclose(full_y.numpy()[1:], short_y.numpy(), rtol=1e-15)
    else:
        full_y.backward(mg.tensor(g, device=device))
        short_y.backward(mg.tensor(g[1:, FINITE], device=device))
        np.testing.assert_allclose(full_y.numpy()[1:, FINITE], short_y.numpy(), rtol=1e-15)
    np.testing.assert_allclose(full_x.grad.numpy()[1:, FINITE], short_x.grad.numpy(),
                               rtol=1e-14)


def test_a_fully_masked_attention_row_passes_no_nan_into_parameters(device, rng):
    """scores → masked_fill(−inf) → softmax → weighted values, with query 0 allowed no key."""
    q = leaf(rng.standard_normal((2, 3)), device)
    k = leaf(rng.standard_normal((4, 3)), device)
    v = leaf(rng.standard_normal((4, 3)), device)
    allowed = np.array([[False] * 4, [True, True, False, True]])
    weights = mg.softmax(mg.masked_fill(q @ k.T, ~mg.tensor(allowed, device=device), -np.inf))
    out = weights @ v
    np.testing.assert_array_equal(out.numpy()[0], np.zeros(3))
    (out * mg.tensor(rng.standard_normal((2, 3)), device=device)).sum().backward()
    for t in (q, k, v):
        assert np.isfinite(t.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[0], np.zeros(3))
    np.testing.assert_array_equal(k.grad.numpy()[2], np.zeros(3))     # key 2: never allowed
    np.testing.assert_array_equal(v.grad.numpy()[2], np.zeros(3))


@pytest.mark.parametrize("op", [mg.softmax, mg.log_softmax], ids=["softmax", "log_softmax"])
def test_all_minus_inf_along_axis_0(op, device, rng):
    x = np.array([[-np.inf, 0.3], [-np.inf, -0.2]])       # column 0 is all −inf
    y, grad = _backward(lambda t: op(t, axis=0), x, device, rng)
    assert np.isfinite(grad).all()
    np.testing.assert_array_equal(grad[:, 0], [0.0, 0.0])
    assert not np.isnan(y).any()


# -- a zero-length axis --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin", "logsumexp"])
@pytest.mark.parametrize("shape, axis", [((2, 0), 1), ((2, 0), -1), ((0,), 0), ((0, 3), 0),
                                         ((0, 3), 1)])
def test_softmax_family_over_an_empty_axis(name, shape, axis, device):
    """An empty result (logsumexp: −inf, the log of an empty sum, where the other axes leave
    a slice), and an empty gradient."""
    a = np.zeros(shape)
    x = leaf(a, device)
    out = getattr(mg, name)(x, axis=axis)
    if name == "logsumexp":
        with np.errstate(divide="ignore"):
            expected = np.log(np.exp(a).sum(axis=axis))
    else:
        expected = a                  # as many elements as x: none
    assert_forward(out, expected, device)
    (g,) = mg.grad(out.sum(), x)
    assert g.shape == shape
