"""Fixtures for the engine's tests: the devices every primitive is checked on."""

import pytest

import minigrad as mg

from .simdevice import SimBackend


@pytest.fixture
def sim_device():
    """The simulated device "sim", registered for the test and removed afterwards."""
    backend = SimBackend()
    backend.seed(0)
    mg.register_backend(backend)
    yield "sim"
    mg.unregister_backend("sim")


@pytest.fixture(params=["cpu", "sim"])
def device(request):
    """Each test using it runs on the host ("cpu") and on the simulated device ("sim"), whose
    arrays refuse implicit conversion to NumPy as CuPy's do."""
    if request.param == "sim":
        return request.getfixturevalue("sim_device")
    return "cpu"
