"""Step 1 exercises: reverse mode by hand. Replace each `raise NotImplementedError` with your
code; the lesson learn/01_reverse_mode.py checks it."""

from __future__ import annotations

import math


# -- given: a scalar graph node (read it; you need not change it) ------------------------------

class Node:
    """A number in a computation graph: its value, the nodes it was computed from (`inputs`)
    and the local derivatives ∂self/∂input, one per input (`local_grads`). `grad` holds
    ∂output/∂self once `backward(output)` has run."""

    def __init__(self, value: float, inputs: tuple = (), local_grads: tuple = (),
                 name: str = ""):
        self.value = float(value)
        self.inputs = tuple(inputs)
        self.local_grads = tuple(float(g) for g in local_grads)
        self.grad = 0.0
        self.name = name

    def __add__(self, other) -> "Node":
        other = as_node(other)
        return Node(self.value + other.value, (self, other), (1.0, 1.0))   # ∂(a+b)/∂a = 1

    def __mul__(self, other) -> "Node":
        other = as_node(other)
        return Node(self.value * other.value, (self, other), (other.value, self.value))

    __radd__ = __add__
    __rmul__ = __mul__

    def tanh(self) -> "Node":
        t = math.tanh(self.value)
        return Node(t, (self,), (1.0 - t * t,))                             # tanh' = 1 − tanh²

    def __repr__(self) -> str:
        return f"Node({self.name or self.value:}, grad={self.grad})"


def as_node(value) -> Node:
    """A Node as it is; a number as a constant Node."""
    return value if isinstance(value, Node) else Node(value)


# -- exercise 1.1 -------------------------------------------------------------------------------

def grad_by_hand(a: float, b: float, c: float) -> tuple[float, tuple[float, float, float]]:
    """f(a, b, c) = tanh(a·b + c) · a, and its gradient, derived by hand.

    Return (f, (∂f/∂a, ∂f/∂b, ∂f/∂c)) as Python floats. Write the forward pass as named
    intermediate values (e = a·b, d = e + c, t = tanh(d), f = t·a), then walk them in reverse,
    multiplying local derivatives (the chain rule). `a` is used twice: its two contributions
    add up.
    """
    raise NotImplementedError


# -- exercise 1.2 -------------------------------------------------------------------------------

def backward(output: Node) -> None:
    """Fill in `.grad` = ∂output/∂node for every node that `output` depends on.

    1. List the nodes in topological order (every node after all of its inputs). Use a loop
       with an explicit stack, not recursion: graphs can be thousands of nodes deep.
    2. Set every listed node's grad to 0, and output.grad = 1.
    3. Walk the list in reverse; for each node, add local_grad · node.grad to each input's
       grad. A node used several times (even twice by one operation, as in x * x) collects a
       contribution from each use.
    """
    raise NotImplementedError
