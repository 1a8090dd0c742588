"""GRU, LSTM and the update-gate-only unit against NumPy references written from their
equations, float64 gradchecks, and state-dict parity with PyTorch."""

import numpy as np
import pytest

import minigrad as mg
import nn
from tests.nn import seq_reference as ref


def _f64(rng, *shape, requires_grad=False):
    return mg.tensor(rng.standard_normal(shape), dtype=np.float64, requires_grad=requires_grad)


# -- cells ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls, reference", [(nn.GRUCell, ref.gru_cell),
                                            (nn.UpdateGateCell, ref.update_gate_cell)])
def test_cell_matches_numpy(cls, reference, rng):
    cell = cls(3, 4).double()
    x, h = _f64(rng, 5, 3), _f64(rng, 5, 4)
    expected = reference(x.numpy(), h.numpy(), **cell.state_dict())
    np.testing.assert_allclose(cell(x, h).numpy(), expected, rtol=1e-12, atol=1e-12)
    # h = None means a zero state
    zero = reference(x.numpy(), np.zeros((5, 4)), **cell.state_dict())
    np.testing.assert_allclose(cell(x).numpy(), zero, rtol=1e-12, atol=1e-12)


def test_lstm_cell_matches_numpy(rng):
    cell = nn.LSTMCell(3, 4).double()
    x, h, c = _f64(rng, 2, 3), _f64(rng, 2, 4), _f64(rng, 2, 4)
    h_ref, c_ref = ref.lstm_cell(x.numpy(), h.numpy(), c.numpy(), **cell.state_dict())
    h_new, c_new = cell(x, (h, c))
    np.testing.assert_allclose(h_new.numpy(), h_ref, atol=1e-12)
    np.testing.assert_allclose(c_new.numpy(), c_ref, atol=1e-12)


def test_cell_parameter_layout_and_init():
    mg.manual_seed(3)
    gru, lstm, upd = nn.GRUCell(5, 7), nn.LSTMCell(5, 7), nn.UpdateGateCell(5, 7)
    shapes = {k: v.shape for k, v in gru.state_dict().items()}
    assert shapes == {"weight_ih": (21, 5), "weight_hh": (21, 7), "bias_ih": (21,),
                      "bias_hh": (21,)}
    assert lstm.state_dict()["weight_ih"].shape == (28, 5)
    assert upd.state_dict()["weight_hh"].shape == (14, 7)
    bound = 1 / np.sqrt(7)
    for p in list(gru.parameters()) + list(lstm.parameters()):
        values = p.numpy()
        assert np.all(np.abs(values) <= bound) and values.std() > bound / 3
    assert len(list(nn.GRUCell(5, 7, bias=False).parameters())) == 2


@pytest.mark.parametrize("cls", [nn.GRUCell, nn.UpdateGateCell])
def test_cell_gradcheck(cls, rng):
    cell = cls(2, 3).double()
    x, h = _f64(rng, 2, 2, requires_grad=True), _f64(rng, 2, 3, requires_grad=True)
    assert mg.gradcheck(lambda x, h: cell(x, h), (x, h))
    w = rng.standard_normal((2, 3))
    ref.check_parameter_gradients(cell, lambda: (cell(x, h) * w).sum())


def test_lstm_cell_gradcheck(rng):
    cell = nn.LSTMCell(2, 2).double()
    x, h, c = (_f64(rng, 2, n, requires_grad=True) for n in (2, 2, 2))
    assert mg.gradcheck(lambda x, h, c: cell(x, (h, c))[0] * 2 + cell(x, (h, c))[1], (x, h, c))


# -- sequence layers -----------------------------------------------------------------------------

@pytest.mark.parametrize("num_layers", [1, 2])
def test_gru_matches_numpy(num_layers, rng):
    gru = nn.GRU(3, 4, num_layers=num_layers).double()
    x, h0 = _f64(rng, 2, 6, 3), _f64(rng, num_layers, 2, 4)
    expected, finals = ref.run_layers(ref.gru_cell, x.numpy(), gru.state_dict(), num_layers,
                                      h0.numpy(), H=4)
    out, h_n = gru(x, h0)
    assert out.shape == (2, 6, 4) and h_n.shape == (num_layers, 2, 4)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack(finals), atol=1e-12)


def test_update_gate_rnn_and_lstm_match_numpy(rng):
    x = _f64(rng, 2, 5, 3)
    upd = nn.UpdateGateRNN(3, 4, num_layers=2).double()
    expected, finals = ref.run_layers(ref.update_gate_cell, x.numpy(), upd.state_dict(), 2, H=4)
    out, h_n = upd(x)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack(finals), atol=1e-12)

    lstm = nn.LSTM(3, 4, num_layers=2).double()
    sd = lstm.state_dict()
    layer_in, hs, cs = x.numpy(), [], []
    for k in range(2):
        p = {n: sd[f"{n}_l{k}"] for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
        h, c, outs = np.zeros((2, 4)), np.zeros((2, 4)), []
        for t in range(5):
            h, c = ref.lstm_cell(layer_in[:, t], h, c, **p)
            outs.append(h)
        layer_in = np.stack(outs, axis=1)
        hs.append(h)
        cs.append(c)
    out, (h_n, c_n) = lstm(x)
    np.testing.assert_allclose(out.numpy(), layer_in, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack(hs), atol=1e-12)
    np.testing.assert_allclose(c_n.numpy(), np.stack(cs), atol=1e-12)


def test_batch_first_false_is_the_transpose(rng):
    mg.manual_seed(0)
    a = nn.GRU(3, 4, batch_first=True).double()
    b = nn.GRU(3, 4, batch_first=False).double()
    b.load_state_dict(a.state_dict())
    x = _f64(rng, 2, 5, 3)
    out_a, h_a = a(x)
    out_b, h_b = b(x.swapaxes(0, 1))
    np.testing.assert_allclose(out_b.numpy(), out_a.numpy().swapaxes(0, 1), atol=1e-14)
    np.testing.assert_allclose(h_b.numpy(), h_a.numpy(), atol=1e-14)


@pytest.mark.parametrize("cls", [nn.GRU, nn.UpdateGateRNN, nn.LSTM])
def test_sequence_gradcheck_inputs_and_state(cls, rng):
    layer = cls(2, 2, num_layers=2).double()
    x = _f64(rng, 2, 3, 2, requires_grad=True)
    h0 = _f64(rng, 2, 2, 2, requires_grad=True)
    if cls is nn.LSTM:
        c0 = _f64(rng, 2, 2, 2, requires_grad=True)
        assert mg.gradcheck(lambda x, h0, c0: layer(x, (h0, c0))[0], (x, h0, c0))
    else:
        assert mg.gradcheck(lambda x, h0: layer(x, h0)[0] + layer(x, h0)[1].sum(), (x, h0))


def test_gru_parameter_gradients(rng):
    gru = nn.GRU(2, 2, num_layers=2).double()
    x = _f64(rng, 2, 3, 2)
    w = rng.standard_normal((2, 3, 2))
    ref.check_parameter_gradients(gru, lambda: (gru(x)[0] * w).sum())


def test_fused_gru_sequence_equals_the_unrolled_graph(rng):
    """GRU.forward runs each layer as one primitive (GRUSequence); with return_gates it
    unrolls the cells into the graph. Outputs and every gradient must agree."""
    gru = nn.GRU(3, 4, num_layers=2).double()
    x = _f64(rng, 2, 5, 3, requires_grad=True)
    h0 = _f64(rng, 2, 2, 4, requires_grad=True)
    w = mg.tensor(rng.standard_normal((2, 5, 4)))
    grads = []
    for return_gates in (False, True):
        out, h_n = gru(x, h0, return_gates=return_gates)[:2]
        grads.append(mg.grad((out * w).sum() + (h_n * h_n).sum(),
                             [x, h0] + list(gru.parameters())))
    for fused, unrolled in zip(*grads):
        np.testing.assert_allclose(fused.numpy(), unrolled.numpy(), atol=1e-13)


def test_fused_gru_sequence_second_derivatives(rng):
    """create_graph through GRUSequence records the unrolled graph: a gradient of a gradient
    matches finite differences."""
    W_hh = _f64(rng, 6, 2, requires_grad=True)
    gx = _f64(rng, 1, 3, 6, requires_grad=True)
    h0 = _f64(rng, 1, 2, requires_grad=True)

    def grad_norm(gx, h0, W_hh):
        out = nn.recurrent.gru_sequence(gx, h0, W_hh)
        (g,) = mg.grad((out * out).sum(), [h0], create_graph=True)
        return (g * g).sum()
    assert mg.gradcheck(grad_norm, (gx, h0, W_hh))


def test_long_sequence_backward_is_exact_and_does_not_recurse(rng):
    # 400 steps unroll into thousands of graph nodes; dh_T/dx_t must still be right
    gru = nn.GRU(1, 2).double()
    x = _f64(rng, 1, 400, 1, requires_grad=True)
    out, _ = gru(x)
    out[:, -1].sum().backward()
    assert x.grad.shape == (1, 400, 1) and np.all(np.isfinite(x.grad.numpy()))
    # compare the gradient of the last step w.r.t. an early input with a finite difference
    base = x.numpy().copy()
    eps = 1e-6
    for t in (0, 200, 399):
        moved = [base.copy(), base.copy()]
        moved[0][0, t, 0] += eps
        moved[1][0, t, 0] -= eps
        with mg.no_grad():
            f = [gru(mg.tensor(m))[0][:, -1].sum().item() for m in moved]
        assert x.grad.numpy()[0, t, 0] == pytest.approx((f[0] - f[1]) / (2 * eps), abs=1e-8)


def test_gru_gates_are_the_cell_gates(rng):
    gru = nn.GRU(3, 4).double()
    x = _f64(rng, 2, 4, 3)
    out, h_n, gates = gru(x, return_gates=True)
    (g,) = gates
    assert g.r.shape == g.z.shape == g.n.shape == (2, 4, 4)
    sd = gru.state_dict()
    W_ih, W_hh, b_ih, b_hh = (sd[f"{n}_l0"] for n in ("weight_ih", "weight_hh", "bias_ih",
                                                      "bias_hh"))
    h = np.zeros((2, 4))
    for t in range(4):
        gx = x.numpy()[:, t] @ W_ih.T + b_ih
        gh = h @ W_hh.T + b_hh
        z = ref.sigmoid(gx[:, 4:8] + gh[:, 4:8])
        np.testing.assert_allclose(g.z.numpy()[:, t], z, atol=1e-12)
        h = out.numpy()[:, t]
    # gates and outputs agree with the plain call
    np.testing.assert_allclose(gru(x)[0].numpy(), out.numpy(), atol=0)


def test_dropout_between_layers_only_in_training(rng):
    gru = nn.GRU(3, 4, num_layers=2, dropout=0.5).double()
    x = _f64(rng, 2, 5, 3)
    gru.eval()
    a, b = gru(x)[0].numpy(), gru(x)[0].numpy()
    np.testing.assert_array_equal(a, b)
    gru.train()
    assert np.abs(gru(x)[0].numpy() - a).max() > 1e-6
    one_layer = nn.GRU(3, 4, dropout=0.5).double()   # nothing between layers to drop
    np.testing.assert_array_equal(one_layer(x)[0].numpy(), one_layer.eval()(x)[0].numpy())


def test_bad_inputs_raise_clear_errors(rng):
    gru = nn.GRU(3, 4, num_layers=2)
    with pytest.raises(ValueError,
                       match=r"GRU: input must be \(B, T, I\) or unbatched \(T, I\) with I = 3"):
        gru(mg.zeros(2, 5, 4))
    with pytest.raises(ValueError, match=r"GRU: h0 must have shape \(2, 2, 4\)"):
        gru(mg.zeros(2, 5, 3), mg.zeros(1, 2, 4))
    with pytest.raises(ValueError, match="T = 0"):
        gru(mg.zeros(2, 0, 3))
    with pytest.raises(ValueError, match=r"GRUCell: input must be \(B, I = 3\)"):
        nn.GRUCell(3, 4)(mg.zeros(2, 5))
    with pytest.raises(ValueError, match=r"LSTMCell: c must have shape \(2, 4\)"):
        nn.LSTMCell(3, 4)(mg.zeros(2, 3), (mg.zeros(2, 4), mg.zeros(2, 5)))


def test_state_dict_names_follow_pytorch():
    gru = nn.GRU(3, 4, num_layers=2)
    assert list(gru.state_dict()) == [f"{n}_l{k}" for k in range(2) for n in
                                      ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    assert gru.state_dict()["weight_ih_l1"].shape == (12, 4)
    assert list(nn.LSTM(3, 4, bias=False).state_dict()) == ["weight_ih_l0", "weight_hh_l0"]


@pytest.mark.parametrize("kind", ["GRU", "LSTM"])
def test_pytorch_parity(kind, rng):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, kind)(3, 5, num_layers=2).double()
    theirs = getattr(torch.nn, kind)(3, 5, num_layers=2, batch_first=True).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((2, 4, 3))
    out, state = ours(mg.tensor(x, requires_grad=True))
    t_x = torch.tensor(x, requires_grad=True)
    t_out, t_state = theirs(t_x)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(out.shape)
    (out * w).sum().backward()
    (t_out * torch.tensor(w)).sum().backward()
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), getattr(theirs, name).grad.numpy(),
                                   atol=1e-12, err_msg=name)


@pytest.mark.parametrize("cls, cell", [(nn.GRU, ref.gru_cell),
                                       (nn.UpdateGateRNN, ref.update_gate_cell)])
def test_sequence_layers_without_bias_match_numpy(cls, cell, rng):
    """bias=False drops bias_ih_l{k} and bias_hh_l{k}: the equations with b = 0."""
    layer = cls(3, 4, num_layers=2, bias=False).double()
    sd = layer.state_dict()
    assert list(sd) == [f"{n}_l{k}" for k in range(2) for n in ("weight_ih", "weight_hh")]
    G = sd["weight_ih_l0"].shape[0]
    for k in range(2):
        sd[f"bias_ih_l{k}"] = sd[f"bias_hh_l{k}"] = np.zeros(G)
    x, h0 = _f64(rng, 2, 5, 3, requires_grad=True), _f64(rng, 2, 2, 4)
    expected, finals = ref.run_layers(cell, x.numpy(), sd, 2, h0.numpy(), H=4)
    out, h_n = layer(x, h0)
    np.testing.assert_allclose(out.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), np.stack(finals), atol=1e-12)
    assert mg.gradcheck(lambda x: layer(x, h0)[0], (x,))
