"""Making tensors on every device, moving them, and the simulated device's own promise: its
arrays refuse implicit conversion to NumPy, as CuPy's do, so passing tests on it mean the
engine reaches arrays only through `xp` and the backend."""

import numpy as np
import pytest

import minigrad as mg

from .primitive_checks import assert_forward
from .simdevice import SimArray


def test_filled_tensors(device):
    assert_forward(mg.zeros(2, 3, device=device), np.zeros((2, 3), np.float32), device)
    assert_forward(mg.ones((2,), dtype="float64", device=device), np.ones(2), device)
    assert_forward(mg.full((2, 2), 7.5, device=device), np.full((2, 2), 7.5, np.float32), device)
    assert_forward(mg.empty(3, device=device), np.zeros(3, np.float32), device)
    like = mg.ones(2, 1, dtype=np.float64, device=device)
    assert_forward(mg.zeros_like(like), np.zeros((2, 1)), device)
    assert_forward(mg.ones_like(like), np.ones((2, 1)), device)
    assert_forward(mg.arange(4, device=device), np.arange(4), device)
    assert_forward(mg.arange(0.0, 1.0, 0.25, device=device),
                   np.arange(0.0, 1.0, 0.25, dtype=np.float32), device)
    assert_forward(mg.eye(3, device=device), np.eye(3, dtype=np.float32), device)


def test_tensor_from_data_keeps_the_dtype_rules(device):
    assert mg.tensor([1.0, 2.0], device=device).dtype == np.float32
    assert mg.tensor(np.array([1.0, 2.0]), device=device).dtype == np.float64
    assert mg.tensor([1, 2], device=device).dtype == np.int64
    assert mg.tensor([True], device=device).dtype == np.bool_
    assert_forward(mg.tensor([[1, 2]], dtype="float64", device=device), np.array([[1.0, 2.0]]),
                   device)


def test_random_tensors_are_reproducible_and_plausible(device):
    mg.manual_seed(7)
    first = mg.randn(2000, device=device).numpy()
    uniform = mg.rand(2000, dtype=np.float64, device=device)
    assert uniform.device == device and uniform.dtype == np.float64
    mg.manual_seed(7)
    np.testing.assert_array_equal(mg.randn(2000, device=device).numpy(), first)
    assert abs(first.mean()) < 5 / np.sqrt(2000) and abs(first.std() - 1) < 0.1
    u = uniform.numpy()
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.05


def test_the_sim_device_refuses_implicit_conversion(sim_device):
    t = mg.tensor([1.0, 2.0], device=sim_device)
    assert isinstance(t.data, SimArray) and t.device == "sim"
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(t.data)
    with pytest.raises(TypeError):
        np.exp(t.data)
    with pytest.raises(TypeError, match="host NumPy array"):
        t.data + np.ones(2)
    with pytest.raises(TypeError, match="cannot convert a tensor on sim to NumPy implicitly"):
        np.asarray(t)
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])      # the explicit way works
    assert "device='sim'" in repr(t)


def test_sim_device_strings(sim_device):
    assert mg.ones(2, device="sim:0").device == "sim"
    with pytest.raises(RuntimeError, match="'sim:1' does not exist"):
        mg.ones(2, device="sim:1")
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        mg.ones(2, device="tpu")


def test_moves_between_devices_keep_values_and_dtype(sim_device):
    x = mg.tensor(np.arange(6).reshape(2, 3), device="cpu")
    on_sim = x.to(sim_device)
    assert_forward(on_sim, np.arange(6).reshape(2, 3), "sim")
    assert_forward(on_sim.cpu(), np.arange(6).reshape(2, 3), "cpu")
    assert on_sim.to("sim") is on_sim
