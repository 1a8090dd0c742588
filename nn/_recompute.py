"""Fused primitives: a derivative written once on arrays, and a recorded one for create_graph."""

from __future__ import annotations

import minigrad as mg


def recorded_gradients(fn: mg.Function, rebuild, grad: mg.Tensor, candidates) -> tuple:
    """fn's input gradients for create_graph: `rebuild(*inputs)` makes fn's output again from
    its inputs with differentiable minigrad operations; its vector-Jacobian product with `grad`
    is taken for the inputs among `candidates` (indices) that require grad, None for the rest.

    The output is rebuilt from new nodes equal to the inputs (t + 0), and the product is taken
    with respect to those: taken with respect to fn's inputs themselves, it would also follow an
    input computed from another one (a target y = g(z) of a loss of z) back to that one, and the
    backward that called fn would add that path a second time."""
    inputs = [t + 0.0 if t.requires_grad else t for t in fn.inputs]
    output = rebuild(*inputs)
    wanted = [i for i in candidates if inputs[i].requires_grad]
    found = mg.grad(output, [inputs[i] for i in wanted], grad_outputs=grad,
                    create_graph=True, allow_unused=True)
    grads = [None] * len(fn.inputs)
    for i, g in zip(wanted, found):
        grads[i] = g
    return tuple(grads)


class FusedFunction(mg.Function):
    """A primitive whose derivative is written by hand on arrays, in `array_backward(grad)`
    (grad: ∂L/∂output as an array; returns one array or None per input). When a backward with
    create_graph=True records the gradient itself, `recorded_backward(grad)` instead rebuilds
    the output from the inputs with differentiable minigrad operations (see
    `recorded_gradients`), so higher derivatives are exact too."""

    def backward(self, grad):
        if mg.is_grad_enabled():                 # create_graph: the backward is recorded
            return self.recorded_backward(grad)
        return self.array_backward(grad.data)

    def array_backward(self, grad):
        raise NotImplementedError(f"{type(self).__name__}.array_backward")

    def recorded_backward(self, grad):
        raise NotImplementedError(f"{type(self).__name__}.recorded_backward")
