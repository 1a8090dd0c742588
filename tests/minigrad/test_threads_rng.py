"""The RNG state (get_rng_state / set_rng_state), BLAS threads, and checked sizes in creation."""

import os
import subprocess
import sys

import numpy as np
import pytest

import minigrad as mg
import nn
from minigrad import threads


def _draws():
    x = mg.ones(200)
    return np.concatenate([mg.randn(3, 2).numpy().ravel(), mg.rand(5).numpy(),
                           mg.randperm(6).numpy().astype(float),
                           mg.dropout(x, 0.5, training=True).numpy()])


def test_rng_state_round_trip_continues_the_same_stream(tmp_path):
    mg.manual_seed(3)
    mg.randn(7)                                   # not at the start of the stream
    state = mg.get_rng_state()
    assert state.dtype == np.uint8 and state.shape == (37,) and not state.requires_grad
    first = _draws()
    mg.randn(11)
    mg.set_rng_state(state)
    np.testing.assert_array_equal(_draws(), first)
    nn.save({"rng": state}, tmp_path / "rng.npz")            # through a checkpoint
    mg.manual_seed(99)
    mg.set_rng_state(nn.load(tmp_path / "rng.npz")["rng"])
    np.testing.assert_array_equal(_draws(), first)


def test_rng_state_keeps_a_buffered_half_draw():
    mg.manual_seed(5)
    mg.randint(0, 10, size=(3,))
    state = mg.get_rng_state()
    expected = mg.rand(4).numpy()
    mg.set_rng_state(state)
    np.testing.assert_array_equal(mg.rand(4).numpy(), expected)


@pytest.mark.parametrize("bad", [np.zeros(36, np.uint8), np.zeros(37, np.int64),
                                 np.zeros((1, 37), np.uint8)])
def test_set_rng_state_refuses_a_wrong_state_and_changes_nothing(bad):
    mg.manual_seed(1)
    state = mg.get_rng_state()
    with pytest.raises(ValueError, match=r"set_rng_state: expected the \(37,\) uint8 state"):
        mg.set_rng_state(bad)
    np.testing.assert_array_equal(mg.get_rng_state().numpy(), state.numpy())


@pytest.mark.parametrize("call, error, message", [
    (lambda: mg.randn(2.5), TypeError, "randn: sizes must be ints, got 2.5"),
    (lambda: mg.rand("3"), TypeError, "rand: sizes must be ints, got '3'"),
    (lambda: mg.zeros((2, 3.0)), TypeError, "zeros: sizes must be ints, got 3.0"),
    (lambda: mg.ones(True), TypeError, "ones: sizes must be ints, got True"),
    (lambda: mg.empty(-1), ValueError, r"empty: sizes must be >= 0, got shape \(-1,\)"),
])
def test_creation_refuses_sizes_that_are_not_ints(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_creation_accepts_every_spelling_of_a_shape():
    assert mg.zeros(2, 3).shape == mg.zeros((2, 3)).shape == mg.zeros([2, 3]).shape == (2, 3)
    assert mg.randn(np.int64(2), 1).shape == (2, 1)
    assert mg.ones(np.array([4])).shape == (4,)
    assert mg.rand(()).shape == () and mg.randn(0).shape == (0,)


needs_blas_call = pytest.mark.skipif(threads._CALLS is None,
                                     reason="NumPy's BLAS offers no thread setting")


@needs_blas_call
def test_set_num_threads_round_trip():
    before = mg.get_num_threads()
    try:
        mg.set_num_threads(2)
        assert mg.get_num_threads() == 2
        mg.set_num_threads(1)
        assert mg.get_num_threads() == 1
    finally:
        mg.set_num_threads(before)


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True])
def test_set_num_threads_refuses_bad_counts(bad):
    with pytest.raises(ValueError, match="set_num_threads: n must be an int >= 1"):
        mg.set_num_threads(bad)


@needs_blas_call
def test_default_is_one_thread_unless_the_blas_variables_say_otherwise():
    code = "import minigrad as mg; print(mg.get_num_threads())"
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = os.getcwd()
    env["OPENBLAS_NUM_THREADS"] = "2"
    configured = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                text=True, check=True)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert configured.stdout.strip() == str(min(2, cpus))   # OpenBLAS caps at the CPUs it may use
    del env["OPENBLAS_NUM_THREADS"]
    code = ("import numpy, minigrad.threads as t; print(t._CALLS[1]() if t._CALLS else 1)")
    default = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True)
    assert default.stdout.strip() == "1"
