"""The graph walk on random DAGs: values reused by several later operations, leaves read at
many depths, several outputs at once. Gradients are checked against central differences of
the same program evaluated in plain NumPy (float64)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg

SHAPE = (2, 3)

# each entry: (NumPy function, minigrad function, arity)
OPS = {
    "add": (np.add, lambda a, b: a + b, 2),
    "sub": (np.subtract, lambda a, b: a - b, 2),
    "mul": (np.multiply, lambda a, b: a * b, 2),
    "tanh": (np.tanh, lambda a: a.tanh(), 1),
    "sigmoid": (lambda a: 1 / (1 + np.exp(-a)), lambda a: a.sigmoid(), 1),
    "scale": (lambda a: 0.5 * a, lambda a: 0.5 * a, 1),
    "rowsum": (lambda a: np.broadcast_to(a.sum(axis=1, keepdims=True), SHAPE),
               lambda a: a.sum(axis=1, keepdims=True) + mg.zeros(SHAPE, dtype=np.float64), 1),
}


@st.composite
def programs(draw):
    """Leaves, then operations whose operands are any earlier values, then the outputs."""
    n_leaves = draw(st.integers(1, 3))
    steps = []
    for k in range(draw(st.integers(1, 12))):
        name = draw(st.sampled_from(sorted(OPS)))
        available = n_leaves + k
        operands = tuple(draw(st.integers(0, available - 1)) for _ in range(OPS[name][2]))
        steps.append((name, operands))
    total = n_leaves + len(steps)
    outputs = draw(st.lists(st.integers(n_leaves, total - 1), min_size=1, max_size=3))
    seed = draw(st.integers(0, 2 ** 16))
    return n_leaves, steps, outputs, seed


def _run(values, steps, library: int):
    values = list(values)
    for name, operands in steps:
        values.append(OPS[name][library](*(values[i] for i in operands)))
    return values


@settings(max_examples=60, deadline=None)
@given(programs())
def test_backward_on_random_graphs_matches_central_differences(program):
    n_leaves, steps, outputs, seed = program
    rng = np.random.default_rng(seed)
    leaves = [rng.uniform(-1.5, 1.5, SHAPE) for _ in range(n_leaves)]
    weights = [rng.standard_normal(SHAPE) for _ in outputs]

    def loss(arrays):             # Σ_k <w_k, value_{outputs[k]}>, in plain NumPy
        values = _run(arrays, steps, 0)
        return sum(float((w * values[i]).sum()) for w, i in zip(weights, outputs))

    tensors = [mg.tensor(a, requires_grad=True) for a in leaves]
    values = _run(tensors, steps, 1)
    roots = [values[i] for i in outputs]
    got = mg.grad(roots, tensors, grad_outputs=[mg.tensor(w) for w in weights],
                  retain_graph=True, allow_unused=True)
    eps = 1e-6
    for leaf_index, array in enumerate(leaves):
        expected = np.zeros(SHAPE)
        for position in np.ndindex(SHAPE):
            up = [a.copy() for a in leaves]
            down = [a.copy() for a in leaves]
            up[leaf_index][position] += eps
            down[leaf_index][position] -= eps
            expected[position] = (loss(up) - loss(down)) / (2 * eps)
        g = got[leaf_index]
        actual = np.zeros(SHAPE) if g is None else g.numpy()
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-7)

    # backward() from the weighted sum deposits the same gradients in .grad
    total = None
    for root, w in zip(roots, weights):
        term = (root * mg.tensor(w)).sum()
        total = term if total is None else total + term
    total.backward()
    for t, g in zip(tensors, got):
        if g is None:
            assert t.grad is None
        else:
            np.testing.assert_allclose(t.grad.numpy(), g.numpy(), rtol=1e-12, atol=1e-12)
