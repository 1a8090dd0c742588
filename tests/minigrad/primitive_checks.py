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
    float64 leaf on `device`; its recorded gradient (create_graph=True) equals the plain one."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    inputs = [leaf(a, device) for a in arrays]
    out = fn(*inputs)
    assert_forward(out, reference(*arrays), device)
    assert mg.gradcheck(fn, inputs, **gradcheck_options)
    assert_recorded_gradient_matches(out, inputs)
    for t, a in zip(inputs, arrays):          # primitives never write into their inputs
        np.testing.assert_array_equal(t.numpy(), a)


def assert_recorded_gradient_matches(out: mg.Tensor, inputs) -> None:
    """A primitive's backward runs on bare arrays (the plain backward) and on Tensors (recorded
    when create_graph=True). Both must give the same numbers."""
    weights = np.random.default_rng(1).standard_normal(out.shape)
    loss = (out * mg.tensor(weights, device=out.device)).sum()
    plain = mg.grad(loss, inputs, retain_graph=True, allow_unused=True)
    recorded = mg.grad(loss, inputs, create_graph=True, allow_unused=True)
    for i, (g_plain, g_recorded) in enumerate(zip(plain, recorded)):
        if g_plain is None or g_recorded is None:
            assert g_plain is None and g_recorded is None, f"input {i}: only one path is None"
            continue
        assert g_recorded.device == g_plain.device == inputs[i].device
        np.testing.assert_allclose(g_recorded.numpy(), g_plain.numpy(), rtol=1e-12, atol=1e-14,
                                   err_msg=f"input {i}: recorded and plain gradients differ")


class Cube(mg.Function):
    """y = x³, with the right derivative 3x²."""

    def forward(self, x):
        return x ** 3

    def backward(self, grad):
        (x,) = self.inputs
        return grad * 3 * x * x
