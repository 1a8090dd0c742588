"""The devices the registry's checks run on: the host, the simulated device, and a real GPU
where one is present."""

import pytest

import minigrad as mg

DEVICES = ["cpu", "sim"] + (["cuda:0"] if mg.cuda_available() else [])


@pytest.fixture(params=DEVICES)
def device(request, sim_device):
    """Each test using it runs on every device; "sim" is registered throughout, since the
    to_device entry moves between the host and it."""
    return request.param
