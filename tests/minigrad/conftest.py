"""Fixtures for the engine's tests: the devices every primitive is checked on (`sim_device`
comes from tests/conftest.py)."""

import pytest


@pytest.fixture(params=["cpu", "sim"])
def device(request):
    """Each test using it runs on the host ("cpu") and on the simulated device ("sim"), whose
    arrays refuse implicit conversion to NumPy as CuPy's do."""
    if request.param == "sim":
        return request.getfixturevalue("sim_device")
    return "cpu"
