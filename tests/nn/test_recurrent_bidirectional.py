"""Bidirectional GRU and LSTM (`bidirectional=True`) against a NumPy reference written from
PyTorch's definition, float64 gradchecks, and parity with torch.nn.GRU / LSTM."""

import numpy as np
import pytest

import minigrad as mg
import nn
from tests.nn import seq_reference as ref

NAMES = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _f64(rng, *shape, requires_grad=False):
    return mg.tensor(rng.standard_normal(shape), dtype=np.float64, requires_grad=requires_grad)


def bidirectional_numpy(step, x, sd, num_layers, init):
    """Every layer runs `step` forward over t = 0..T−1 and, with the `_reverse` parameters,
    backward over t = T−1..0; layer k + 1 reads [forward h_t; reverse h_t].

    step(x_t, state, **params) -> new state (its first item, or itself, is h_t);
    init[k·2 + d]: the initial state of layer k, direction d.
    Returns (output (B, T, 2H), final states in PyTorch's order)."""
    T = x.shape[1]
    finals = []
    for k in range(num_layers):
        per_direction = []
        for d, suffix in enumerate(("", "_reverse")):
            p = {n: sd[f"{n}_l{k}{suffix}"] for n in NAMES}
            state, outs = init[2 * k + d], [None] * T
            for t in (range(T) if d == 0 else reversed(range(T))):
                state = step(x[:, t], state, **p)
                outs[t] = state[0] if isinstance(state, tuple) else state
            per_direction.append(np.stack(outs, axis=1))
            finals.append(state)
        x = np.concatenate(per_direction, axis=-1)
    return x, finals


def _lstm_step(x, state, **p):
    return ref.lstm_cell(x, *state, **p)


def test_parameter_names_and_shapes_follow_pytorch():
    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    expected = [f"{n}_l{k}{s}" for k in range(2) for s in ("", "_reverse") for n in NAMES]
    assert list(gru.state_dict()) == expected
    shapes = {k: v.shape for k, v in gru.state_dict().items()}
    assert shapes["weight_ih_l0_reverse"] == (12, 3)
    assert shapes["weight_ih_l1"] == shapes["weight_ih_l1_reverse"] == (12, 8)   # reads 2H
    assert shapes["weight_hh_l1_reverse"] == (12, 4)
    lstm = nn.LSTM(3, 4, bidirectional=True, bias=False)
    assert list(lstm.state_dict()) == ["weight_ih_l0", "weight_hh_l0", "weight_ih_l0_reverse",
                                       "weight_hh_l0_reverse"]
    assert "bidirectional=True" in repr(gru)


@pytest.mark.parametrize("num_layers", [1, 2])
def test_bidirectional_gru_matches_numpy(num_layers, rng):
    gru = nn.GRU(3, 4, num_layers=num_layers, bidirectional=True).double()
    x, h0 = _f64(rng, 2, 6, 3), _f64(rng, 2 * num_layers, 2, 4)
    expected, finals = bidirectional_numpy(ref.gru_cell, x.numpy(), gru.state_dict(),
                                           num_layers, list(h0.numpy()))
    out, h_n = gru(x, h0)
    assert out.shape == (2, 6, 8) and h_n.shape == (2 * num_layers, 2, 4)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack(finals), atol=1e-12)
    # the reverse direction's final state is its output at t = 0, the forward one's at T − 1
    np.testing.assert_array_equal(h_n.numpy()[-1], out.numpy()[:, 0, 4:])
    np.testing.assert_array_equal(h_n.numpy()[-2], out.numpy()[:, -1, :4])
    # h0 = None means zeros
    zero, _ = bidirectional_numpy(ref.gru_cell, x.numpy(), gru.state_dict(), num_layers,
                                  [np.zeros((2, 4))] * (2 * num_layers))
    np.testing.assert_allclose(gru(x)[0].numpy(), zero, atol=1e-12)


def test_bidirectional_lstm_matches_numpy(rng):
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    x, h0, c0 = _f64(rng, 2, 5, 3), _f64(rng, 4, 2, 4), _f64(rng, 4, 2, 4)
    init = list(zip(h0.numpy(), c0.numpy()))
    expected, finals = bidirectional_numpy(_lstm_step, x.numpy(), lstm.state_dict(), 2, init)
    out, (h_n, c_n) = lstm(x, (h0, c0))
    assert out.shape == (2, 5, 8) and h_n.shape == c_n.shape == (4, 2, 4)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack([h for h, _ in finals]), atol=1e-12)
    np.testing.assert_allclose(c_n.numpy(), np.stack([c for _, c in finals]), atol=1e-12)


def test_update_gate_rnn_is_bidirectional_too(rng):
    rnn = nn.UpdateGateRNN(3, 4, bidirectional=True).double()
    x = _f64(rng, 2, 5, 3)
    expected, finals = bidirectional_numpy(ref.update_gate_cell, x.numpy(), rnn.state_dict(), 1,
                                           [np.zeros((2, 4))] * 2)
    out, h_n = rnn(x)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack(finals), atol=1e-12)


@pytest.mark.parametrize("T", [1, 3])
def test_bidirectional_gru_gradcheck(T, rng):
    gru = nn.GRU(2, 2, num_layers=2, bidirectional=True).double()
    x = _f64(rng, 2, T, 2, requires_grad=True)
    h0 = _f64(rng, 4, 2, 2, requires_grad=True)
    assert mg.gradcheck(lambda x, h0: gru(x, h0)[0] + gru(x, h0)[1].sum(), (x, h0))
    w = rng.standard_normal((2, T, 4))
    ref.check_parameter_gradients(gru, lambda: (gru(x, h0)[0] * w).sum())


def test_bidirectional_lstm_gradcheck(rng):
    lstm = nn.LSTM(2, 2, num_layers=2, bidirectional=True).double()
    x = _f64(rng, 1, 3, 2, requires_grad=True)
    h0, c0 = _f64(rng, 4, 1, 2, requires_grad=True), _f64(rng, 4, 1, 2, requires_grad=True)
    assert mg.gradcheck(lambda x, h0, c0: lstm(x, (h0, c0))[0].sum(axis=-1)
                        + lstm(x, (h0, c0))[1][1].sum(), (x, h0, c0))


def test_fused_and_unrolled_bidirectional_gru_agree(rng):
    """return_gates=True unrolls each direction; outputs, gradients and the gates agree with
    the fused primitive, and the reverse direction's gates are in input time order."""
    gru = nn.GRU(3, 4, bidirectional=True).double()
    x = _f64(rng, 2, 5, 3, requires_grad=True)
    w = mg.tensor(rng.standard_normal((2, 5, 8)))
    grads = []
    for return_gates in (False, True):
        out = gru(x, return_gates=return_gates)[0]
        grads.append(mg.grad((out * w).sum(), [x] + list(gru.parameters())))
    for fused, unrolled in zip(*grads):
        np.testing.assert_allclose(fused.numpy(), unrolled.numpy(), atol=1e-13)
    out, _, gates = gru(x, return_gates=True)
    assert len(gates) == 2
    # the reverse direction at t = T − 1 starts from h = 0: z there is σ(gx_z + b_hz)
    sd = gru.state_dict()
    gx = x.numpy()[:, -1] @ sd["weight_ih_l0_reverse"].T + sd["bias_ih_l0_reverse"]
    z = ref.sigmoid(gx[:, 4:8] + sd["bias_hh_l0_reverse"][4:8])
    np.testing.assert_allclose(gates[1].z.numpy()[:, -1], z, atol=1e-12)


def test_bidirectional_state_shape_is_checked(rng):
    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    with pytest.raises(ValueError, match=r"GRU: h0 must have shape \(4, 2, 4\)"):
        gru(mg.zeros(2, 5, 3), mg.zeros(2, 2, 4))
    with pytest.raises(ValueError, match=r"LSTM: c0 must have shape \(2, 2, 4\)"):
        nn.LSTM(3, 4, bidirectional=True)(mg.zeros(2, 5, 3), (mg.zeros(2, 2, 4),
                                                                mg.zeros(1, 2, 4)))


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_pytorch_parity_bidirectional(kind, rng):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, kind)(3, 5, num_layers=2, bidirectional=True).double()
    theirs = getattr(torch.nn, kind)(3, 5, num_layers=2, batch_first=True,
                                     bidirectional=True).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((2, 4, 3))
    out, state = ours(mg.tensor(x))
    t_out, t_state = theirs(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), atol=1e-12)
    h_n, t_h_n = (state[0], t_state[0]) if kind == "LSTM" else (state, t_state)
    np.testing.assert_allclose(h_n.numpy(), t_h_n.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(out.shape)
    (out * w).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), getattr(theirs, name).grad.numpy(),
                                   atol=1e-12, err_msg=name)
