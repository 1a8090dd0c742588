"""Step 1 solutions."""

from __future__ import annotations

import math

from learn.exercises.step01_reverse_mode import Node


def grad_by_hand(a: float, b: float, c: float) -> tuple[float, tuple[float, float, float]]:
    e = a * b
    d = e + c
    t = math.tanh(d)
    f = t * a
    grad_t = a                          # ∂f/∂t
    grad_d = grad_t * (1.0 - t * t)     # ∂t/∂d = 1 − t²
    grad_e = grad_d                     # ∂d/∂e = 1
    grad_c = grad_d                     # ∂d/∂c = 1
    grad_a = t + grad_e * b             # f = t·a directly, and through e = a·b
    grad_b = grad_e * a
    return f, (grad_a, grad_b, grad_c)


def backward(output: Node) -> None:
    order: list[Node] = []
    seen: set[int] = set()
    stack = [(output, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((x, False) for x in node.inputs)
    for node in order:
        node.grad = 0.0
    output.grad = 1.0
    for node in reversed(order):
        for x, local in zip(node.inputs, node.local_grads):
            x.grad += local * node.grad
