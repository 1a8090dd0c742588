"""The error function minigrad uses where SciPy is absent (and on devices without one)."""

import math

import numpy as np
import pytest

from minigrad._erf import fast_erf, fast_erfc


def test_fast_erf_and_erfc_match_math_to_double_precision():
    x = np.linspace(-9.0, 9.0, 4001)
    np.testing.assert_allclose(fast_erf(np, x), [math.erf(v) for v in x], rtol=1e-14,
                               atol=1e-15)
    expected = np.array([math.erfc(v) for v in x])
    np.testing.assert_allclose(fast_erfc(np, x), expected, rtol=1e-12)
    tail = np.linspace(2.0, 26.0, 401)               # erfc down to 1e-295, relatively
    np.testing.assert_allclose(fast_erfc(np, tail), [math.erfc(v) for v in tail], rtol=1e-12)


@pytest.mark.parametrize("shape", [(), (1,), (0, 3), (2, 3)])
def test_fast_erf_in_float32_is_within_an_ulp_and_keeps_shapes(shape, rng):
    x = (3 * rng.standard_normal(shape)).astype(np.float32)
    out = fast_erf(np, x)
    assert out.dtype == np.float32 and out.shape == shape
    exact = np.array([math.erf(v) for v in x.astype(np.float64).reshape(-1)]).reshape(shape)
    np.testing.assert_array_less(np.abs(out - exact), 1.01 * np.spacing(np.abs(exact).astype(
        np.float32)) + 1e-45)
    assert fast_erfc(np, x).dtype == np.float32
