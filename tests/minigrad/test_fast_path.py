"""The array fast path (`Function.vjp`, used when create_graph=False) must give exactly the
gradients of the recorded path (`Function.backward` on Tensors, used when create_graph=True)."""

import numpy as np
import pytest

import minigrad as mg

CASES = {
    "add": (lambda a, b: a + b, [(3, 4), (4,)]),
    "sub": (lambda a, b: a - b, [(3, 1), (1, 4)]),
    "mul": (lambda a, b: a * b, [(2, 3, 4), (3, 1)]),
    "div": (lambda a, b: a / (b * b + 1), [(3, 4), (3, 4)]),
    "neg": (lambda a: -a, [(3, 4)]),
    "pow2": (lambda a: a ** 2, [(3, 4)]),
    "pow3": (lambda a: a ** 3, [(3, 4)]),
    "exp": (lambda a: a.exp(), [(3, 4)]),
    "log": (lambda a: (a * a + 1).log(), [(3, 4)]),
    "tanh": (lambda a: a.tanh(), [(3, 4)]),
    "sigmoid": (lambda a: a.sigmoid(), [(3, 4)]),
    "relu": (lambda a: a.relu(), [(3, 4)]),
    "masked_fill": (lambda a: a.masked_fill(np.eye(3, 4, dtype=bool), -1.0), [(3, 4)]),
    "sum": (lambda a: a.sum(axis=1), [(3, 4)]),
    "sum_keepdims": (lambda a: a.sum(axis=(0, 2), keepdims=True), [(2, 3, 4)]),
    "mean": (lambda a: a.mean(axis=0), [(3, 4)]),
    "reshape": (lambda a: a.reshape(4, 3), [(3, 4)]),
    "transpose": (lambda a: a.transpose(2, 0, 1), [(2, 3, 4)]),
    "broadcast_to": (lambda a: a.broadcast_to((2, 3, 4)), [(3, 1)]),
    "getitem_basic": (lambda a: a[1:, ::2], [(3, 4)]),
    "getitem_repeat": (lambda a: a[np.array([0, 2, 0, 0])], [(3, 4)]),
    "matmul": (lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    "matmul_vec": (lambda a, b: a @ b, [(4,), (2, 4, 3)]),
    "matmul_2d": (lambda a, b: (a @ b.T) @ b, [(3, 4), (5, 4)]),   # b's gradient as factors
    "stack": (lambda a, b: mg.stack([a, b, a], axis=1), [(3, 4), (3, 4)]),
    "concat": (lambda a, b: mg.concat([a, b, a], axis=-1), [(3, 4), (3, 2)]),
    "softmax": (lambda a: a.softmax(axis=0), [(3, 4)]),
    "log_softmax": (lambda a: a.log_softmax(), [(3, 4)]),
    "dropout": (lambda a: (mg.manual_seed(3), mg.dropout(a, 0.4))[1], [(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fast_path_matches_recorded_backward(name, rng):
    fn, shapes = CASES[name]
    inputs = [mg.tensor(rng.standard_normal(s), dtype=np.float64, requires_grad=True)
              for s in shapes]
    out = fn(*inputs)
    weights = mg.tensor(rng.standard_normal(out.shape), dtype=np.float64)
    loss = (out * out * weights).sum()      # quadratic: the gradient is itself recorded
    fast = mg.grad(loss, inputs, retain_graph=True)
    recorded = mg.grad(loss, inputs, create_graph=True)
    for g_fast, g_recorded in zip(fast, recorded):
        assert g_recorded.requires_grad          # really the recorded path
        np.testing.assert_allclose(g_fast.numpy(), g_recorded.numpy(), rtol=1e-12, atol=1e-12)
