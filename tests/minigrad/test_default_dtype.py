"""mg.set_default_dtype / mg.get_default_dtype, as torch's: the float dtype of Python floats,
of the creation functions given no dtype, of float-valued functions of integers, and of nn's
new parameters, for the whole process; a compiled step captures again when it changes."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F


@pytest.fixture
def float64_default():
    before = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    yield
    mg.set_default_dtype(before)


def test_float32_unless_chosen():
    assert mg.get_default_dtype() == np.float32
    assert mg.tensor(1.5).dtype == np.float32


def test_python_floats_creation_and_integer_functions_follow_the_default(float64_default):
    assert mg.get_default_dtype() == np.float64
    for t in (mg.tensor(1.5), mg.tensor([0.5, 2.0]), mg.zeros(2), mg.ones((1,)), mg.empty(()),
              mg.full((2,), 3.0), mg.randn(2), mg.rand(()), mg.eye(2), mg.linspace(0, 1, 3),
              mg.arange(0.0, 1.0, 0.5), mg.normal(0.0, 1.0, (2,))):
        assert t.dtype == np.float64, t
    integers = mg.arange(4)
    assert integers.dtype == np.int64                        # integers stay integers
    assert (integers / 4).dtype == np.float64
    assert (integers * 0.5).dtype == np.float64
    assert integers.exp().dtype == np.float64
    assert integers.mean().dtype == np.float64
    # arrays keep their own dtype, and float32 tensors stay float32 next to Python floats
    kept = mg.tensor(np.ones(2, dtype=np.float32))
    assert kept.dtype == np.float32 and (kept * 0.5).dtype == np.float32
    assert kept.float().dtype == np.float32 and mg.tensor(1.5).float().dtype == np.float32
    np.testing.assert_array_equal((integers / 4).numpy(), np.arange(4) / 4)


def test_new_parameters_and_buffers_follow_the_default(float64_default):
    layer = nn.Linear(3, 2)
    assert layer.weight.dtype == np.float64 and layer.bias.dtype == np.float64
    assert nn.Parameter().dtype == np.float64
    assert nn.GRU(2, 3).weight_hh_l0.dtype == np.float64
    assert nn.SinusoidalPositionalEncoding(4, 8).pe.dtype == np.float64


def test_a_float64_model_passes_gradcheck_made_as_in_pytorch(float64_default):
    mg.manual_seed(0)
    layer = nn.Linear(3, 2)
    x = mg.randn(4, 3, requires_grad=True)
    assert mg.gradcheck(lambda x, w, b: (F.linear(x, w, b).tanh() ** 2).sum(),
                        (x, layer.weight, layer.bias))


@pytest.mark.parametrize("dtype", ["int64", np.bool_, "complex128", "cpu", None])
def test_a_dtype_that_cannot_be_the_default_is_refused_and_nothing_changes(dtype):
    with pytest.raises(TypeError, match="set_default_dtype: only float16, float32 and "
                                        "float64 can be the default"):
        mg.set_default_dtype(dtype)
    assert mg.get_default_dtype() == np.float32


def test_the_default_holds_in_every_thread(float64_default):
    seen = []
    worker = threading.Thread(target=lambda: seen.append(mg.tensor(0.5).dtype))
    worker.start()
    worker.join()
    assert seen == [np.float64]


def test_a_compiled_step_captures_again_when_the_default_changes():
    w = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)

    @mg.compile
    def step(scale):
        w.grad = None
        loss = ((w * scale + mg.ones(3)) ** 2).sum()       # mg.ones: a constant of the capture
        loss.backward()
        return loss

    x = mg.tensor([2.0, 2.0, 2.0])
    for _ in range(4):
        step(x)
    assert step.stats.replays == 2
    before = mg.get_default_dtype()
    try:
        mg.set_default_dtype(mg.float64)
        loss = step(mg.tensor(np.full(3, 2.0, dtype=np.float32)))
        # the constant ones are float64 now, as eagerly: float32 weights meet them
        assert loss.dtype == np.float64
        assert w.grad.dtype == np.float32
        np.testing.assert_allclose(loss.numpy(), ((np.array([1.0, 2, 3]) * 2 + 1) ** 2).sum())
        assert (step.stats.replays, step.stats.eager) == (2, 2)  # not replayed: run anew
    finally:
        mg.set_default_dtype(before)
    step(x)
    step(x)
    assert step.stats.replays == 4                # the float32 program, kept, replays again


def test_float16_as_the_default():
    before = mg.get_default_dtype()
    try:
        mg.set_default_dtype("float16")
        for t in (mg.randn(2), mg.rand(()), mg.zeros(1), mg.tensor(0.5), mg.arange(3) / 2,
                  nn.Linear(2, 3).weight):
            assert t.dtype == np.float16, t
    finally:
        mg.set_default_dtype(before)
    assert mg.tensor(0.5).dtype == np.float32
