"""Gradients of a 2-D matmul's right operand kept as factors (ProductGradient): a weight read at
every step of an unrolled loop gets Σ_t A_tᵀ G_t as one product of stacked factors. Whatever
path the factors take (merged, multiplied out in chunks, mixed with ordinary gradients, through
hooks, captures, anomaly mode, dtype casts), the gradient must be the same."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import ProductGradient


def _unrolled(h, w, u, xs):
    """h_{t+1} = tanh(h_t Wᵀ + x_t U); loss = Σ_t Σ h_t² + Σ W² (W also read elementwise)."""
    loss = (w * w).sum()
    for x in xs:
        h = (h @ w.T + x @ u).tanh()          # W reached through a transpose, U directly
        loss = loss + (h * h).sum()
    return loss


def _leaves(rng, device="cpu", dtype=np.float64):
    def leaf(*shape):
        return mg.tensor(rng.standard_normal(shape) * 0.5, dtype=dtype, requires_grad=True,
                         device=device)
    h0, w, u = leaf(3, 4), leaf(4, 4), leaf(2, 4)
    xs = [mg.tensor(rng.standard_normal((3, 2)), dtype=dtype, device=device) for _ in range(6)]
    return h0, w, u, xs


def _reference_gradients(h0, w, u, xs):
    """The same loss's gradients by hand-written backpropagation through time in NumPy."""
    h0, w, u = h0.numpy(), w.numpy(), u.numpy()
    xs = [x.numpy() for x in xs]
    hs = [h0]
    for x in xs:
        hs.append(np.tanh(hs[-1] @ w.T + x @ u))
    grad_w, grad_u = 2 * w, np.zeros_like(u)
    grad_h = np.zeros_like(h0)
    for t in reversed(range(len(xs))):
        grad_h = grad_h + 2 * hs[t + 1]
        grad_a = grad_h * (1 - hs[t + 1] ** 2)
        grad_w += grad_a.T @ hs[t]
        grad_u += xs[t].T @ grad_a
        grad_h = grad_a @ w
    return grad_h, grad_w, grad_u


def test_unrolled_loop_gradients_match_hand_written_bptt(rng):
    h0, w, u, xs = _leaves(rng)
    _unrolled(h0, w, u, xs).backward()
    for got, want in zip((h0.grad, w.grad, u.grad), _reference_gradients(h0, w, u, xs)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    assert mg.gradcheck(lambda h0, w, u: _unrolled(h0, w, u, xs), (h0, w, u))


def test_the_factors_are_multiplied_out_once(rng, monkeypatch):
    """All steps' products of W and of U are summed in one product each."""
    calls = []
    dense = ProductGradient.dense

    def counting(self):
        calls.append(len(self.lefts))
        return dense(self)
    monkeypatch.setattr(ProductGradient, "dense", counting)
    h0, w, u, xs = _leaves(rng)
    _unrolled(h0, w, u, xs).backward()
    assert sorted(calls) == [6, 6]


@pytest.mark.parametrize("max_pending", [1, 40, 100])
def test_chunked_multiplication_gives_the_same_gradient(rng, monkeypatch, max_pending):
    """With little room for pending factors they are multiplied out in chunks into a base."""
    h0, w, u, xs = _leaves(rng)
    _unrolled(h0, w, u, xs).backward()
    expected = [t.grad.numpy() for t in (h0, w, u)]
    monkeypatch.setattr(ProductGradient, "max_pending", max_pending)
    for t in (h0, w, u):
        t.grad = None
    _unrolled(h0, w, u, xs).backward()
    for t, want in zip((h0, w, u), expected):
        np.testing.assert_allclose(t.grad.numpy(), want, rtol=1e-12, atol=1e-13)


def test_hooks_retain_grad_capture_and_anomaly_see_ordinary_arrays(rng):
    h0, w, u, xs = _leaves(rng)
    expected = _reference_gradients(h0, w, u, xs)[1]
    # a hook on the transposed weight: it receives a Tensor holding the full gradient
    seen = []
    wt = w.T
    wt.register_hook(lambda g: seen.append(g.numpy().copy()))
    loss = (w * w).sum()
    h = h0
    for x in xs:
        h = (h @ wt + x @ u).tanh()
        loss = loss + (h * h).sum()
    wt.retain_grad()
    loss.backward(retain_graph=True)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(seen[0], (expected - 2 * w.numpy()).T, rtol=1e-12)
    np.testing.assert_allclose(wt.grad.numpy(), seen[0], rtol=1e-12)
    # captured by minigrad.grad, and in anomaly mode
    (g_wt,) = mg.grad(loss, [wt], retain_graph=True)
    np.testing.assert_allclose(g_wt.numpy(), seen[0], rtol=1e-12)
    with mg.detect_anomaly():
        (g_w,) = mg.grad(loss, [w])
    np.testing.assert_allclose(g_w.numpy(), expected, rtol=1e-12)


def test_a_float32_weight_in_a_float64_product_gets_a_float32_gradient(rng):
    w = mg.tensor(rng.standard_normal((4, 3)), dtype=np.float32, requires_grad=True)
    xs = [mg.tensor(rng.standard_normal((2, 4))) .double() for _ in range(3)]
    loss = sum(((x @ w) ** 2).sum() for x in xs)
    assert loss.dtype == np.float64
    loss.backward()
    assert w.grad.dtype == np.float32
    want = sum(2 * x.numpy().T @ (x.numpy() @ w.numpy().astype(np.float64)) for x in xs)
    np.testing.assert_allclose(w.grad.numpy(), want, rtol=1e-5)


def test_second_order_gradients_through_an_unrolled_loop(rng):
    """create_graph records MatMul's backward on Tensors: no factors there, and a gradient of
    a gradient is right."""
    h0, w, u, xs = _leaves(rng)
    xs = xs[:3]

    def grad_norm(w, u):
        (g,) = mg.grad(_unrolled(h0, w, u, xs), [w], create_graph=True)
        return (g * g).sum()
    assert mg.gradcheck(grad_norm, (w, u))


def test_the_simulated_device_gives_the_same_gradients(rng, sim_device):
    host = _leaves(np.random.default_rng(5))
    dev = _leaves(np.random.default_rng(5), device=sim_device)
    _unrolled(*host).backward()
    _unrolled(*dev).backward()
    for a, b in zip(host[:3], dev[:3]):
        assert b.grad.device == "sim"
        np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), rtol=1e-12)
