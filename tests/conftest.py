"""Fixtures shared by the whole suite: a seeded RNG, the simulated device "sim", and a guard on
global grad mode."""

import gc

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


def pytest_collection_finish(session):
    """What collection built (the test modules, the registry, parameters, PyTorch where it is
    installed) lives for the whole run: frozen out of the cyclic collector's sight, so that
    each collection, the memory tests' own and the automatic ones, walks only what the tests
    made since (and gc.get_objects() lists only that)."""
    gc.collect()
    gc.freeze()
