"""Bugs the fuzzer found outside the engine, each reproduced at its smallest. A bug not fixed
yet is marked xfail(strict=True) here, with a `known_bug` predicate in its registry entry that keeps
the fuzzer away from the case meanwhile; its fix removes both."""

import numpy as np

import minigrad as mg
import nn

F = nn.functional


def _plain_and_recorded(loss, x):
    plain = mg.grad(loss, x, retain_graph=True)[0].numpy()
    recorded = mg.grad(loss, x, create_graph=True)[0].numpy()
    return plain, recorded


def test_attention_recorded_gradient_counts_a_tensor_passed_as_q_k_and_v_once():
    """scaled_dot_product_attention(x, x, x): the create_graph gradient once counted each of
    x's three roles with the full gradient of all three."""
    x = mg.tensor(np.array([[0.3, -1.2], [0.8, 0.5]]), requires_grad=True)
    plain, recorded = _plain_and_recorded(F.scaled_dot_product_attention(x, x, x)[0].sum(), x)
    np.testing.assert_allclose(recorded, plain, rtol=1e-10)


def test_attention_weights_recorded_gradient_with_k_computed_from_q():
    """k computed from q: the gradient for q also flows through k, a path the recorded
    backward once counted twice."""
    q = mg.tensor(np.array([[0.7, -0.3, 1.1]]), requires_grad=True)
    a = mg.tensor(np.array([[1.2], [0.4]]), requires_grad=True)
    k = a @ q                                                    # (2, 3), from q
    loss = (F.attention_weights(q, k) * mg.tensor(np.array([[1.0, -2.0]]))).sum()
    plain, recorded = _plain_and_recorded(loss, q)
    np.testing.assert_allclose(recorded, plain, rtol=1e-10)


def test_gru_sequence_recorded_gradient_with_h0_computed_from_gx():
    gx = mg.tensor(np.linspace(-1, 1, 6).reshape(1, 2, 3), requires_grad=True)
    weight_hh = mg.tensor(np.array([[0.5], [-0.4], [0.3]]), requires_grad=True)
    out = nn.recurrent.gru_sequence(gx, gx[:, 0, :1], weight_hh)
    plain, recorded = _plain_and_recorded(out.sum(), gx)
    np.testing.assert_allclose(recorded, plain, rtol=1e-10)


def test_gru_sequence_promotes_mixed_dtypes():
    """A float64 h0 with float32 gx and weights: every other op computes in float64 then;
    GRUSequence rounds h0 to float32."""
    gx = mg.tensor(np.zeros((1, 2, 3), dtype=np.float32))
    h0 = mg.tensor(np.array([[0.1]], dtype=np.float64), requires_grad=True)
    weight_hh = mg.tensor(np.ones((3, 1), dtype=np.float32))
    assert nn.recurrent.gru_sequence(gx, h0, weight_hh).dtype == np.float64
