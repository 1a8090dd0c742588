"""The error function minigrad uses where SciPy is absent (and on devices without one)."""

import math

import numpy as np
import pytest

from minigrad.backend import erf_from_series


def test_series_erf_matches_math_erf_to_double_precision():
    x = np.linspace(-7.0, 7.0, 4001)
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf_from_series(np, x), expected, rtol=0, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_series_erf_keeps_the_input_dtype(dtype):
    x = np.linspace(-3.0, 3.0, 7).astype(dtype)
    assert erf_from_series(np, x).dtype == dtype
