"""Fixtures shared by the whole suite: a seeded RNG, and a guard on global grad mode."""

import numpy as np
import pytest

import minigrad as mg


@pytest.fixture
def rng():
    """A NumPy generator with a fixed seed; minigrad's own RNG is seeded too."""
    mg.manual_seed(0)
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _grad_mode_is_restored():
    """Fail any test that leaves grad mode (or a name scope) changed."""
    before = mg.is_grad_enabled()
    yield
    assert mg.is_grad_enabled() == before, "the test left grad mode changed"
    assert mg.is_grad_enabled(), "grad mode must be on between tests"
