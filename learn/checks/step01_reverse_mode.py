"""Checks of step 1: your hand-derived gradient and your reverse walk, against minigrad's
backward and central finite differences."""

from __future__ import annotations

import numpy as np

import minigrad as mg

from learn.checks._core import Wrong, exercise, expect_close
from learn.exercises.step01_reverse_mode import Node

FILE = "step01_reverse_mode.py"
EXERCISES = {"1.1": ("grad_by_hand",), "1.2": ("backward",)}


def _f_minigrad(a: float, b: float, c: float) -> tuple[float, np.ndarray]:
    """f = tanh(a·b + c)·a and its gradient from minigrad's reverse mode (float64)."""
    x = [mg.tensor(np.float64(v), requires_grad=True) for v in (a, b, c)]
    f = (x[0] * x[1] + x[2]).tanh() * x[0]
    f.backward()
    return f.item(), np.array([t.grad.item() for t in x])


def _f_numpy(a: float, b: float, c: float) -> float:
    return float(np.tanh(a * b + c) * a)


@exercise("1.1", "grad_by_hand", file=FILE)
def grad_by_hand(grad_by_hand) -> str:
    points = np.random.default_rng(1).uniform(-2, 2, size=(6, 3))
    names = ("∂f/∂a", "∂f/∂b", "∂f/∂c")
    for a, b, c in points:
        f, grads = grad_by_hand(float(a), float(b), float(c))
        want_f, want_grads = _f_minigrad(a, b, c)
        expect_close(f"f({a:.3f}, {b:.3f}, {c:.3f})", f, want_f, atol=1e-10)
        if len(grads) != 3:
            raise Wrong(f"return three partial derivatives, got {len(grads)}")
        eps = 1e-6
        for i, name in enumerate(names):
            up, down = [a, b, c], [a, b, c]
            up[i] += eps
            down[i] -= eps
            numeric = (_f_numpy(*up) - _f_numpy(*down)) / (2 * eps)
            expect_close(f"{name} at (a, b, c) = ({a:.3f}, {b:.3f}, {c:.3f}) against minigrad",
                         grads[i], want_grads[i], atol=1e-10, rtol=1e-8)
            expect_close(f"{name} at (a, b, c) = ({a:.3f}, {b:.3f}, {c:.3f}) against central "
                         f"differences", grads[i], numeric, atol=1e-6, rtol=1e-5)
    return (f"f and its three partial derivatives at {len(points)} points match minigrad "
            f"(1e-8 relative) and central differences (1e-5 relative)")


def _random_program(rng: np.random.Generator, leaves: int, ops: int):
    """The same random program twice: on Nodes and on minigrad tensors. Values are reused
    (fan-out), sometimes twice in one operation (x * x). Returns the leaves, their tensors,
    both outputs and how many times each leaf is used."""
    start = rng.uniform(-1.5, 1.5, size=leaves)
    nodes = [Node(v, name=f"x{i}") for i, v in enumerate(start)]
    tensors = [mg.tensor(np.float64(v), requires_grad=True) for v in start]
    for _ in range(ops):
        kind = rng.integers(3)
        i, j = (int(k) for k in rng.integers(len(nodes), size=2))
        if kind == 0:
            nodes.append(nodes[i] + nodes[j])
            tensors.append(tensors[i] + tensors[j])
        elif kind == 1:
            nodes.append(nodes[i] * nodes[j])
            tensors.append(tensors[i] * tensors[j])
        else:
            nodes.append(nodes[i].tanh())
            tensors.append(tensors[i].tanh())
    for k in (-2, -3):                                  # the output uses several late values
        nodes.append(nodes[-1] + nodes[k - 1])
        tensors.append(tensors[-1] + tensors[k - 1])
    uses = [sum(x is leaf for node in nodes for x in node.inputs) for leaf in nodes[:leaves]]
    return nodes[:leaves], tensors[:leaves], nodes[-1], tensors[-1], uses


@exercise("1.2", "backward", file=FILE)
def backward(backward) -> str:
    # x * x: one operation uses x twice, so ∂(x·x)/∂x = x + x
    x = Node(3.0, name="x")
    y = x * x
    backward(y)
    if x.grad != 6.0:
        raise Wrong(f"for y = x * x at x = 3, x.grad is {x.grad}, expected 6.0 (= 3 + 3: the "
                    f"operation uses x twice, and each use adds its contribution)")
    if y.grad != 1.0:
        raise Wrong(f"the output's own grad should be 1.0 (∂y/∂y), got {y.grad}")
    rng = np.random.default_rng(2)
    for trial in range(20):
        leaves, tensors, out_node, out_tensor, uses = _random_program(rng, 4, 12)
        backward(out_node)
        out_tensor.backward()
        for leaf, tensor, used in zip(leaves, tensors, uses):
            want = 0.0 if tensor.grad is None else tensor.grad.item()
            expect_close(f"in random graph {trial}, {leaf.name}.grad ({leaf.name} is used "
                         f"{used} times)", leaf.grad, want, atol=1e-10, rtol=1e-9)
    # calling backward twice on one graph gives the same grads (they start from 0 each time)
    first = [leaf.grad for leaf in leaves]
    backward(out_node)
    if [leaf.grad for leaf in leaves] != first:
        raise Wrong("a second backward on the same graph changed the grads: set every node's "
                    "grad to 0 before the walk")
    # deep graphs: 5000 operations in a chain
    z = Node(0.5, name="z")
    h = z
    for _ in range(5000):
        h = (h * 0.999).tanh() + 0.001
    chain = mg.tensor(np.float64(0.5), requires_grad=True)
    g = chain
    for _ in range(5000):
        g = (g * 0.999).tanh() + 0.001
    g.backward()
    try:
        backward(h)
    except RecursionError:
        raise Wrong("a chain of 5000 operations hit Python's recursion limit: walk the graph "
                    "with a loop and an explicit stack") from None
    expect_close("z.grad at the bottom of a 5000-step chain", z.grad, chain.grad.item(),
                 atol=1e-12, rtol=1e-9)
    return ("x * x gives 2x; 20 random graphs with reused values match minigrad (1e-9 "
            "relative); a 5000-deep chain works")
