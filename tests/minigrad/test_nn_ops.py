"""Fused network primitives on every device: softmax, log_softmax, dropout. Forward against
NumPy written from the definitions, backward against finite differences."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import assert_forward, check_primitive, leaf


def _softmax_reference(v, axis):
    e = np.exp(v)                                # the test logits are small: no overflow
    return e / e.sum(axis=axis, keepdims=True)


CASES = [((3, 4), -1), ((3, 4), 0), ((2, 3, 2), 1), ((5,), 0), ((2, 1), -1), ((1, 3), 0)]


@pytest.mark.parametrize("shape, axis", CASES)
def test_softmax(shape, axis, device, rng):
    check_primitive(lambda t: mg.softmax(t, axis=axis), lambda v: _softmax_reference(v, axis),
                    [2 * rng.standard_normal(shape)], device)


@pytest.mark.parametrize("shape, axis", CASES)
def test_log_softmax(shape, axis, device, rng):
    check_primitive(lambda t: mg.log_softmax(t, axis=axis),
                    lambda v: np.log(_softmax_reference(v, axis)),
                    [2 * rng.standard_normal(shape)], device)


def test_methods_default_to_the_last_axis(device, rng):
    x = rng.standard_normal((2, 3))
    assert_forward(leaf(x, device).softmax(), _softmax_reference(x, -1), device)
    assert_forward(leaf(x, device).log_softmax(), np.log(_softmax_reference(x, -1)), device)


def test_softmax_rows_sum_to_one_in_float32(device, rng):
    y = mg.softmax(mg.tensor(rng.standard_normal((4, 7)).astype(np.float32), device=device))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy().sum(axis=-1), np.ones(4), rtol=1e-6)


def test_softmax_axis_out_of_range(device):
    with pytest.raises(ValueError, match="softmax: axis 2 is out of range"):
        mg.softmax(mg.ones(2, 3, device=device), axis=2)
    with pytest.raises(ValueError, match="log_softmax: axis -3 is out of range"):
        mg.log_softmax(mg.ones(2, 3, device=device), axis=-3)


# -- dropout -----------------------------------------------------------------------------------

def _seeded_dropout(p, seed=3):
    """dropout with the RNG reseeded on every call, so finite differences see one mask."""
    def fn(t):
        mg.manual_seed(seed)
        return mg.dropout(t, p)
    return fn


@pytest.mark.parametrize("shape", [(), (3, 4), (2, 1, 3)])
@pytest.mark.parametrize("p", [0.2, 0.5])
def test_dropout_gradcheck(shape, p, device, rng):
    x = leaf(_nonzero(rng, shape), device)
    assert mg.gradcheck(_seeded_dropout(p), [x])


def _nonzero(rng, shape):
    return rng.choice([-1.0, 1.0], size=shape) * rng.uniform(0.5, 2.0, size=shape)


def test_dropout_zeroes_or_scales_each_element_and_gradient_matches(device, rng):
    p = 0.25
    x_host = _nonzero(rng, (40, 50))
    x = leaf(x_host, device)
    y = _seeded_dropout(p)(x)
    out = y.numpy()
    kept = out != 0
    # each output is either 0 or x / (1 − p)
    np.testing.assert_allclose(out[kept], x_host[kept] / (1 - p), rtol=1e-15)
    # ∂y/∂x = m / (1 − p): the same kept elements, the same scale
    g = rng.standard_normal(x_host.shape)
    y.backward(mg.tensor(g, device=device))
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, g / (1 - p), 0.0), rtol=1e-15)


def test_dropout_keeps_1_minus_p_of_the_elements_and_the_mean(device):
    p, n = 0.3, 20000
    mg.manual_seed(11)
    y = mg.dropout(mg.ones(n, dtype=np.float64, device=device), p).numpy()
    sigma = np.sqrt(p * (1 - p) / n)             # standard deviation of the kept fraction
    assert abs((y != 0).mean() - (1 - p)) < 5 * sigma
    assert abs(y.mean() - 1.0) < 5 * sigma / (1 - p)


def test_dropout_is_reproducible_after_manual_seed_and_varies_between_calls(device):
    x = mg.ones(200, device=device)
    mg.manual_seed(5)
    first, second = mg.dropout(x, 0.5).numpy(), mg.dropout(x, 0.5).numpy()
    mg.manual_seed(5)
    np.testing.assert_array_equal(mg.dropout(x, 0.5).numpy(), first)
    assert (first != second).any()
    assert first.dtype == np.float32


def test_dropout_edge_cases(device, rng):
    x = leaf(_nonzero(rng, (3, 4)), device)
    assert_forward(mg.dropout(x, 0.5, training=False), x.numpy(), device)
    assert_forward(mg.dropout(x, 0.0), x.numpy(), device)
    y = mg.dropout(x, 1.0)
    assert_forward(y, np.zeros((3, 4)), device)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((3, 4)))
    for p in (-0.1, 1.5):
        with pytest.raises(ValueError, match="dropout: p must be in"):
            mg.dropout(x, p)


@pytest.mark.parametrize("shape, noise_shape", [((1,), (1,)), ((3, 4), (3, 1)),
                                                ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), (1, 1, 4)),
                                                ((2, 3, 4), (1, 1, 1))])
def test_dropout_with_a_noise_shape_shares_each_draw_along_the_axes_of_size_1(shape, noise_shape,
                                                                         device, rng):
    x = leaf(_nonzero(rng, shape), device)
    mg.manual_seed(4)
    y = mg.dropout(x, 0.5, noise_shape=noise_shape)
    ratio = y.numpy() / x.numpy()                        # the scaled mask, 0 or 2
    assert set(np.unique(ratio)) <= {0.0, 2.0}
    shared = tuple(a for a, n in enumerate(noise_shape) if n == 1 and shape[a] > 1)
    if shared:                                           # constant along every shared axis
        np.testing.assert_array_equal(ratio, np.broadcast_to(
            ratio.max(axis=shared, keepdims=True), shape))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), ratio)      # ∂Σy/∂x = m / (1 − p)


def test_dropout_with_a_noise_shape_gradcheck_and_full_shape_is_plain_dropout(device, rng):
    x = leaf(_nonzero(rng, (2, 3, 4)), device)

    def locked(t):
        mg.manual_seed(3)
        return mg.dropout(t, 0.3, noise_shape=(2, 1, 4))
    assert mg.gradcheck(locked, [x])
    mg.manual_seed(6)
    full = mg.dropout(x, 0.5, noise_shape=(2, 3, 4)).numpy()
    mg.manual_seed(6)
    np.testing.assert_array_equal(full, mg.dropout(x, 0.5).numpy())


def test_dropout_rejects_a_noise_shape_that_is_not_x_s_shape_with_ones(device):
    x = mg.ones(2, 3, device=device)
    for bad in [(2,), (2, 3, 1), (3, 3), (2, 0)]:
        with pytest.raises(ValueError, match=r"dropout: noise_shape .* must have x's shape "
                                             r"\(2, 3\)"):
            mg.dropout(x, 0.5, noise_shape=bad)


def test_softmax_and_log_softmax_of_a_0d_tensor_are_one_and_zero(device):
    x = mg.tensor(np.float64(3.5), requires_grad=True, device=device)
    for fn, value in ((mg.softmax, 1.0), (mg.log_softmax, 0.0)):
        y = fn(x)
        assert y.shape == () and y.item() == value
        (g,) = mg.grad(y, x)
        assert g.item() == 0.0
    assert mg.softmax(x, dim=0).item() == 1.0
    with pytest.raises(IndexError, match="softmax: axis 1"):
        mg.softmax(x, 1)
