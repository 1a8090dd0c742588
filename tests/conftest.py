"""Fixtures shared by the whole suite: a seeded RNG, the simulated device "sim", and a guard on
global grad mode."""

import numpy as np
import pytest

import minigrad as mg

from .minigrad.simdevice import SimBackend


@pytest.fixture
def rng():
    """A NumPy generator with a fixed seed; minigrad's own RNG is seeded too."""
    mg.manual_seed(0)
    return np.random.default_rng(0)


@pytest.fixture
def sim_device():
    """The simulated device "sim", whose arrays refuse implicit conversion to NumPy as CuPy's
    do; registered (and seeded) for the test and removed afterwards."""
    backend = SimBackend()
    backend.seed(0)
    mg.register_backend(backend)
    yield "sim"
    mg.unregister_backend("sim")


@pytest.fixture(autouse=True)
def _grad_mode_is_restored():
    """Fail any test that leaves grad mode (or a name scope) changed."""
    before = mg.is_grad_enabled()
    yield
    assert mg.is_grad_enabled() == before, "the test left grad mode changed"
    assert mg.is_grad_enabled(), "grad mode must be on between tests"
