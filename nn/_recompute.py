"""The recorded backward of a fused primitive, shared by the fused nn Functions."""

from __future__ import annotations

import minigrad as mg


def recorded_gradients(fn: mg.Function, output: mg.Tensor, grad: mg.Tensor,
                       candidates) -> tuple:
    """fn's input gradients for create_graph: `output` is fn's result rebuilt from its inputs
    with differentiable minigrad operations; its vector-Jacobian product with `grad` is taken
    for the inputs among `candidates` (indices) that require grad, None for the rest."""
    wanted = [i for i in candidates if fn.inputs[i].requires_grad]
    found = mg.grad(output, [fn.inputs[i] for i in wanted], grad_outputs=grad,
                    create_graph=True, allow_unused=True)
    grads = [None] * len(fn.inputs)
    for i, g in zip(wanted, found):
        grads[i] = g
    return tuple(grads)
