"""The two checks every primitive gets, on any device: its forward against a plain-NumPy
reference written in the test, and its float64 gradient against finite differences."""

from __future__ import annotations

import numpy as np

import minigrad as mg


def leaf(array, device: str) -> mg.Tensor:
    """A float64 leaf on `device` that requires grad."""
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True, device=device)


def assert_forward(out: mg.Tensor, expected, device: str, rtol: float = 1e-10,
                   atol: float = 1e-12) -> None:
    """`out` lives on `device` and equals the NumPy reference `expected` in shape and value."""
    expected = np.asarray(expected)
    assert isinstance(out, mg.Tensor), type(out)
    assert out.device == device
    assert out.shape == expected.shape, (out.shape, expected.shape)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    np.testing.assert_allclose(out.numpy(), expected, rtol=rtol, atol=atol)


def check_primitive(fn, reference, arrays, device: str, **gradcheck_options) -> None:
    """fn(*tensors) matches reference(*arrays) and passes gradcheck, with every array made a
    float64 leaf on `device`."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    inputs = [leaf(a, device) for a in arrays]
    assert_forward(fn(*inputs), reference(*arrays), device)
    assert mg.gradcheck(fn, inputs, **gradcheck_options)
    for t, a in zip(inputs, arrays):          # primitives never write into their inputs
        np.testing.assert_array_equal(t.numpy(), a)
