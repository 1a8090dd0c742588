"""Checking analytic gradients against central finite differences in float64."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .autograd import grad as autograd_grad
from .tensor import Tensor


class GradcheckError(AssertionError):
    """An analytic gradient disagrees with its finite-difference estimate."""


def gradcheck(fn: Callable, inputs: Sequence[Tensor], eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3) -> bool:
    """Compare d(fn(*inputs))/d(input) with central differences for each input requiring grad.

    The inputs must be float64 (finite differences in float32 are too coarse to judge). A
    non-scalar output is reduced with a fixed random projection Σ w ⊙ fn(*inputs), which checks
    the full vector-Jacobian product. Returns True, or raises GradcheckError naming the input,
    the element index and both values.
    """
    inputs = list(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input requires grad")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise TypeError(f"gradcheck: input {i} is {inputs[i].dtype}; use float64 inputs")
    out = fn(*inputs)
    if not isinstance(out, Tensor):
        raise TypeError(f"gradcheck: fn must return a Tensor, got {type(out).__name__}")
    weights = np.random.default_rng(0).standard_normal(out.shape)
    weights_t = Tensor(weights, device=out.device)

    def scalar(*args) -> float:
        return float((fn(*args).astype(np.float64).numpy() * weights).sum())

    projected = (out * weights_t).sum()
    if projected.requires_grad:
        analytic = autograd_grad(projected, [inputs[i] for i in checked], allow_unused=True)
    else:                  # the output is cut off from the inputs: analytic gradients are 0
        analytic = [None] * len(checked)
    for i, g in zip(checked, analytic):
        x = inputs[i]
        host = x.numpy().astype(np.float64)
        g = np.zeros_like(host) if g is None else g.numpy()
        for index in np.ndindex(*host.shape):
            numeric = _central_difference(scalar, inputs, i, host, index, eps)
            if not np.isclose(g[index], numeric, atol=atol, rtol=rtol):
                label = f"input {i} '{x.name}'" if x.name else f"input {i}"
                raise GradcheckError(
                    f"gradcheck: {label} (shape {tuple(host.shape)}), index {index}: analytic "
                    f"gradient {g[index]:.10g}, numeric {numeric:.10g} "
                    f"(difference {abs(g[index] - numeric):.3g})")
    return True


def _central_difference(scalar, inputs, i, host, index, eps) -> float:
    """(f(x + ε e_index) − f(x − ε e_index)) / 2ε with input i perturbed at `index`."""
    values = []
    for sign in (1.0, -1.0):
        moved = host.copy()
        moved[index] += sign * eps
        args = list(inputs)
        # still requiring grad, so fn may differentiate internally (checks of a gradient)
        args[i] = Tensor(moved, device=inputs[i].device, requires_grad=True)
        values.append(scalar(*args))
    return (values[0] - values[1]) / (2 * eps)
