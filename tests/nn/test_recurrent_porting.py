"""Recurrent layers as PyTorch code uses them: nn.RNN / RNNCell, unbatched inputs, batches of
different lengths (lengths= and PackedSequence), and constructor arguments checked."""

import numpy as np
import pytest

import minigrad as mg
import nn
from nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence

SEQUENCE_LAYERS = ["GRU", "LSTM", "RNN", "UpdateGateRNN"]
CELLS = ["GRUCell", "LSTMCell", "RNNCell", "UpdateGateCell"]


def _tensor(a, grad=False):
    return mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _state(output):
    """h_n (the h of an LSTM's (h, c))."""
    return output[1][0] if isinstance(output[1], tuple) else output[1]


# -- RNN from its equation --------------------------------------------------------------------

def rnn_numpy(x, h, weight_ih, weight_hh, bias_ih, bias_hh, act=np.tanh):
    """Elman RNN over x (B, T, I) from h (B, H): h_t = act(W_ih x_t + b_ih + W_hh h + b_hh)."""
    outs = []
    for t in range(x.shape[1]):
        h = act(x[:, t] @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh)
        outs.append(h)
    return np.stack(outs, axis=1), h


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_matches_its_equation(nonlinearity, rng):
    act = np.tanh if nonlinearity == "tanh" else (lambda a: np.maximum(a, 0))
    rnn = nn.RNN(3, 4, nonlinearity=nonlinearity).double()
    x, h0 = rng.standard_normal((2, 5, 3)), rng.standard_normal((1, 2, 4))
    out, h_n = rnn(_tensor(x), _tensor(h0))
    layer0 = {name[:-len("_l0")]: value for name, value in rnn.state_dict().items()}
    expected, last = rnn_numpy(x, h0[0], **layer0, act=act)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(h_n.numpy()[0], last, rtol=1e-12)
    cell = nn.RNNCell(3, 4, nonlinearity=nonlinearity).double()
    step = cell(_tensor(x[:, 0]), _tensor(h0[0])).numpy()
    np.testing.assert_allclose(step, rnn_numpy(x[:, :1], h0[0], **cell.state_dict(),
                                               act=act)[1], rtol=1e-12)
    assert list(rnn.state_dict()) == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0",
                                      "bias_hh_l0"]


def test_rnn_cell_and_layer_gradcheck(rng):
    cell = nn.RNNCell(2, 3).double()
    x, h = _tensor(rng.standard_normal((2, 2)), True), _tensor(rng.standard_normal((2, 3)), True)
    assert mg.gradcheck(lambda x, h: cell(x, h), (x, h))
    rnn = nn.RNN(2, 3, num_layers=2, bidirectional=True, nonlinearity="relu").double()
    xs = _tensor(rng.standard_normal((2, 3, 2)), True)
    assert mg.gradcheck(lambda x: rnn(x, lengths=[3, 2])[0], (xs,))


def test_rnn_matches_live_torch(rng):
    torch = pytest.importorskip("torch")
    ours = nn.RNN(3, 4, 2, "relu", bidirectional=True).double()
    theirs = torch.nn.RNN(3, 4, 2, "relu", batch_first=True, bidirectional=True).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    x = rng.standard_normal((2, 5, 3))
    out, h_n = ours(_tensor(x))
    t_out, t_h = theirs(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), t_h.detach().numpy(), rtol=1e-10, atol=1e-12)


# -- unbatched inputs ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", CELLS)
def test_cells_take_unbatched_inputs(kind, rng):
    cell = getattr(nn, kind)(3, 4).double()
    x, h = rng.standard_normal(3), rng.standard_normal(4)
    state = (_tensor(h), _tensor(h * 0.5)) if kind == "LSTMCell" else _tensor(h)
    batched_state = ((_tensor(h[None]), _tensor(h[None] * 0.5)) if kind == "LSTMCell"
                     else _tensor(h[None]))
    got, expected = cell(_tensor(x), state), cell(_tensor(x[None]), batched_state)
    for g, e in zip(got if kind == "LSTMCell" else [got],
                    expected if kind == "LSTMCell" else [expected]):
        assert g.shape == (4,)
        np.testing.assert_array_equal(g.numpy(), e.numpy()[0])
    with pytest.raises(ValueError, match=rf"{kind}: (h|c) must have shape \(4,\)"):
        cell(_tensor(x), (_tensor(h[None]), _tensor(h[None])) if kind == "LSTMCell"
             else _tensor(h[None]))


@pytest.mark.parametrize("kind", SEQUENCE_LAYERS)
@pytest.mark.parametrize("batch_first", [True, False])
def test_sequence_layers_take_unbatched_inputs(kind, batch_first, rng):
    layer = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True,
                              batch_first=batch_first).double()
    x, h0 = rng.standard_normal((5, 3)), rng.standard_normal((4, 4))   # (T, I), (L·D, H)
    state = (_tensor(h0), _tensor(-h0)) if kind == "LSTM" else _tensor(h0)
    out, final = layer(_tensor(x), state)
    batched_x = x[None] if batch_first else x[:, None]
    b_state = (_tensor(h0[:, None]), _tensor(-h0[:, None])) if kind == "LSTM" \
        else _tensor(h0[:, None])
    b_out, b_final = layer(_tensor(batched_x), b_state)
    assert out.shape == (5, 8)
    np.testing.assert_array_equal(out.numpy(),
                                  b_out.numpy()[0] if batch_first else b_out.numpy()[:, 0])
    for f, bf in zip(final if kind == "LSTM" else [final],
                     b_final if kind == "LSTM" else [b_final]):
        assert f.shape == (4, 4)
        np.testing.assert_array_equal(f.numpy(), bf.numpy()[:, 0])


# -- different lengths in one batch -----------------------------------------------------------

LENGTHS = [4, 1, 3]


def _padded_batch(rng, lengths=LENGTHS, T=4, I=2, padding=7.0):
    x = rng.standard_normal((len(lengths), T, I))
    for b, n in enumerate(lengths):
        x[b, n:] = padding                     # padding that must never matter
    return x


@pytest.mark.parametrize("kind", SEQUENCE_LAYERS)
def test_lengths_give_each_sequence_run_alone(kind, rng):
    layer = getattr(nn, kind)(2, 3, num_layers=2, bidirectional=True).double()
    x = _padded_batch(rng)
    xs = _tensor(x, grad=True)
    out, final = layer(xs, lengths=LENGTHS)
    h_n = final[0] if kind == "LSTM" else final
    weights = rng.standard_normal(out.shape)
    (out * _tensor(weights)).sum().backward()
    for b, n in enumerate(LENGTHS):
        alone_x = _tensor(x[b:b + 1, :n], grad=True)
        alone_out, alone_final = layer(alone_x)
        alone_h = alone_final[0] if kind == "LSTM" else alone_final
        np.testing.assert_allclose(out.numpy()[b, :n], alone_out.numpy()[0], rtol=1e-12,
                                   atol=1e-14)
        np.testing.assert_array_equal(out.numpy()[b, n:], 0.0)     # PyTorch pads with 0
        np.testing.assert_allclose(h_n.numpy()[:, b], alone_h.numpy()[:, 0], rtol=1e-12,
                                   atol=1e-14)
        (alone_out * _tensor(weights[b:b + 1, :n])).sum().backward()
        np.testing.assert_allclose(xs.grad.numpy()[b, :n], alone_x.grad.numpy()[0],
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(xs.grad.numpy()[b, n:], 0.0)  # padding gets nothing


def test_packed_sequence_through_a_layer_matches_lengths(rng):
    gru = nn.GRU(2, 3, bidirectional=True).double()
    x = _padded_batch(rng, lengths=[2, 4, 3])
    packed = pack_padded_sequence(_tensor(x), [2, 4, 3], batch_first=True,
                                  enforce_sorted=False)
    out_packed, h_n = gru(packed)
    assert isinstance(out_packed, nn.utils.rnn.PackedSequence)
    out, lengths = pad_packed_sequence(out_packed, batch_first=True)
    expected, expected_h = gru(_tensor(x), lengths=[2, 4, 3])
    np.testing.assert_array_equal(lengths.numpy(), [2, 4, 3])
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), expected_h.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="carries its lengths"):
        gru(packed, lengths=[2, 4, 3])


# (T, B) and lengths: T == B (where a second swap of the axes went unnoticed), T > B, T < B
# with lengths unsorted
PACKED_CASES = [((4, 4), [4, 3, 3, 1], True), ((4, 3), [4, 3, 1], True),
                ((3, 4), [2, 3, 1, 3], False)]
PACKED_LAYERS = [(kind, layers, bidirectional) for kind in ["GRU", "LSTM", "RNN"]
                 for layers in (1, 2) for bidirectional in (False, True)]


def _packed_pair(kind, layers, bidirectional):
    """The same layer built with batch_first=False and with batch_first=True (same weights)."""
    seq_first = getattr(nn, kind)(2, 3, num_layers=layers, bidirectional=bidirectional,
                                  batch_first=False).double()
    batch_first = getattr(nn, kind)(2, 3, num_layers=layers, bidirectional=bidirectional,
                                    batch_first=True).double()
    batch_first.load_state_dict(seq_first.state_dict())
    return seq_first, batch_first


def _final_states(output):
    """(h_n,) or (h_n, c_n) of a layer's output, as NumPy arrays."""
    final = output[1] if isinstance(output[1], tuple) else (output[1],)
    return [f.numpy() for f in final]


@pytest.mark.parametrize("kind, layers, bidirectional", PACKED_LAYERS)
@pytest.mark.parametrize("shape, lengths, is_sorted", PACKED_CASES)
def test_packed_input_to_a_seq_first_layer_matches_batch_first(kind, layers, bidirectional,
                                                                shape, lengths, is_sorted,
                                                                rng):
    seq_first, batch_first = _packed_pair(kind, layers, bidirectional)
    x = _tensor(rng.standard_normal(shape + (2,)))                          # (T, B, I)
    packed = pack_padded_sequence(x, lengths, enforce_sorted=is_sorted)
    ours, theirs = seq_first(packed), batch_first(packed)
    assert isinstance(ours[0], nn.utils.rnn.PackedSequence)
    np.testing.assert_allclose(ours[0].data.numpy(), theirs[0].data.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(ours[0].batch_sizes.numpy(), theirs[0].batch_sizes.numpy())
    for h, expected in zip(_final_states(ours), _final_states(theirs)):
        assert h.shape == (layers * (2 if bidirectional else 1), shape[1], 3)
        np.testing.assert_allclose(h, expected, rtol=1e-12)
    # and the same numbers as the padded input with lengths=, in the layer's (T, B, ·) layout
    padded, _ = pad_packed_sequence(ours[0])                                # (T, B, D·H)
    expected_out, *_ = seq_first(x, lengths=lengths)
    np.testing.assert_allclose(padded.numpy(), expected_out.numpy(), rtol=1e-12)


@pytest.mark.parametrize("kind, layers, bidirectional", PACKED_LAYERS)
@pytest.mark.parametrize("shape, lengths, is_sorted", PACKED_CASES)
def test_packed_input_to_a_seq_first_layer_matches_live_torch(kind, layers, bidirectional,
                                                               shape, lengths, is_sorted,
                                                               rng):
    torch = pytest.importorskip("torch")
    ours = getattr(nn, kind)(2, 3, num_layers=layers, bidirectional=bidirectional,
                             batch_first=False).double()
    theirs = getattr(torch.nn, kind)(2, 3, num_layers=layers, bidirectional=bidirectional,
                                     batch_first=False).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    x = rng.standard_normal(shape + (2,))                                   # (T, B, I)
    t_out = theirs(torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lengths,
                                                           enforce_sorted=is_sorted))
    out = ours(pack_padded_sequence(_tensor(x), lengths, enforce_sorted=is_sorted))
    t_padded, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out[0])          # (T, B, D·H)
    padded, _ = pad_packed_sequence(out[0])
    np.testing.assert_allclose(padded.numpy(), t_padded.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    t_final = t_out[1] if isinstance(t_out[1], tuple) else (t_out[1],)
    for h, t_h in zip(_final_states(out), t_final):
        np.testing.assert_allclose(h, t_h.detach().numpy(), rtol=1e-10, atol=1e-12)


# PyTorch 2.x: pack_padded_sequence(x, [2, 4, 3], batch_first=True, enforce_sorted=False) of
# x[b, t] = 10 b + t (one feature)
TORCH_PACKED_DATA = [10.0, 20.0, 0.0, 11.0, 21.0, 1.0, 12.0, 22.0, 13.0]
TORCH_BATCH_SIZES = [3, 3, 2, 1]
TORCH_SORTED_INDICES = [1, 2, 0]
TORCH_UNSORTED_INDICES = [2, 0, 1]


def test_pack_padded_sequence_matches_torch_layout():
    x = 10.0 * np.arange(3)[:, None, None] + np.arange(4)[None, :, None]   # (B, T, 1)
    packed = pack_padded_sequence(_tensor(x), np.array([2, 4, 3]), batch_first=True,
                                  enforce_sorted=False)
    np.testing.assert_array_equal(packed.data.numpy()[:, 0], TORCH_PACKED_DATA)
    np.testing.assert_array_equal(packed.batch_sizes.numpy(), TORCH_BATCH_SIZES)
    np.testing.assert_array_equal(packed.sorted_indices.numpy(), TORCH_SORTED_INDICES)
    np.testing.assert_array_equal(packed.unsorted_indices.numpy(), TORCH_UNSORTED_INDICES)
    padded, lengths = pad_packed_sequence(packed, batch_first=False, padding_value=-1.0,
                                          total_length=5)
    expected = np.where(np.arange(5)[None, :] < np.array([2, 4, 3])[:, None],
                        10.0 * np.arange(3)[:, None] + np.arange(5)[None, :], -1.0)
    np.testing.assert_array_equal(padded.numpy()[..., 0], expected.T)
    np.testing.assert_array_equal(lengths.numpy(), [2, 4, 3])


def test_pack_and_pad_are_differentiable(rng):
    x = _tensor(rng.standard_normal((4, 3, 2)), True)             # (T, B, I)
    assert mg.gradcheck(lambda x: pad_packed_sequence(
        pack_padded_sequence(x, [4, 2, 1]))[0] * 2.0, (x,))
    seqs = [_tensor(rng.standard_normal((n, 2)), True) for n in (1, 3)]
    assert mg.gradcheck(lambda a, b: pad_sequence([a, b], batch_first=True,
                                                  padding_value=0.5), tuple(seqs))


@pytest.mark.parametrize("call, error, match", [
    (lambda x: pack_padded_sequence(x, [2, 3, 1]), ValueError, "decreasing order"),
    (lambda x: pack_padded_sequence(x, [4, 0, 1]), ValueError, r"in 1 … 4"),
    (lambda x: pack_padded_sequence(x, [4, 2]), ValueError, r"shape \(3,\)"),
    (lambda x: pack_padded_sequence(x, [4.0, 2.0, 1.0]), TypeError, "ints"),
    (lambda x: nn.GRU(2, 3, batch_first=False)(x, lengths=[5, 1, 1]), ValueError, r"1 … 4"),
    (lambda x: nn.GRU(2, 3)(x[:, 0], lengths=[1]), ValueError, "unbatched"),
])
def test_bad_lengths_raise(call, error, match, rng):
    with pytest.raises(error, match=match):
        call(_tensor(rng.standard_normal((4, 3, 2))))


def test_packed_gru_matches_live_torch(rng):
    torch = pytest.importorskip("torch")
    ours = nn.LSTM(2, 3, num_layers=2, bidirectional=True).double()
    theirs = torch.nn.LSTM(2, 3, num_layers=2, bidirectional=True, batch_first=True).double()
    theirs.load_state_dict({k: torch.tensor(v) for k, v in ours.state_dict().items()})
    x = _padded_batch(rng, lengths=[3, 4, 1])
    t_x = torch.tensor(x, requires_grad=True)
    t_out, (t_h, t_c) = theirs(torch.nn.utils.rnn.pack_padded_sequence(
        t_x, [3, 4, 1], batch_first=True, enforce_sorted=False))
    t_padded, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out, batch_first=True)
    (t_padded.sum() + t_h.sum()).backward()
    xs = _tensor(x, grad=True)
    out, (h, c) = ours(xs, lengths=[3, 4, 1])
    (out.sum() + h.sum()).backward()
    np.testing.assert_allclose(out.numpy(), t_padded.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), t_h.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(c.numpy(), t_c.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(xs.grad.numpy(), t_x.grad.numpy(), rtol=1e-9, atol=1e-12)


# -- constructor arguments ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", SEQUENCE_LAYERS + CELLS)
@pytest.mark.parametrize("kwargs, error, match", [
    (dict(bias="False"), TypeError, "bias must be a bool, got str 'False'"),
    (dict(input_size=0), ValueError, "input_size must be >= 1, got 0"),
    (dict(hidden_size=0), ValueError, "hidden_size must be >= 1, got 0"),
    (dict(input_size="10"), TypeError, "input_size must be an int, got str '10'"),
    (dict(hidden_size=4.0), TypeError, "hidden_size must be an int"),
])
def test_constructors_refuse_wrong_types_and_sizes(kind, kwargs, error, match):
    args = dict(input_size=3, hidden_size=4)
    args.update(kwargs)
    with pytest.raises(error, match=f"{kind}: {match}"):
        getattr(nn, kind)(**args)


@pytest.mark.parametrize("kind", SEQUENCE_LAYERS)
@pytest.mark.parametrize("kwargs, error, match", [
    (dict(batch_first="False"), TypeError, "batch_first must be a bool, got str 'False'"),
    (dict(bidirectional=1), TypeError, "bidirectional must be a bool"),
    (dict(num_layers=0), ValueError, "num_layers must be >= 1"),
    (dict(dropout=1.5), ValueError, r"dropout must be in \[0, 1\]"),
])
def test_sequence_constructors_refuse_wrong_options(kind, kwargs, error, match):
    with pytest.raises(error, match=f"{kind}: {match}"):
        getattr(nn, kind)(3, 4, **kwargs)


def test_pytorch_positional_options_are_refused_not_misread():
    # torch.nn.GRU(3, 5, 1, False) means bias=False; here the fourth argument is keyword-only
    with pytest.raises(TypeError):
        nn.GRU(3, 5, 1, False)
    assert nn.RNN(3, 5, 1, "relu").nonlinearity == "relu"     # as torch.nn.RNN's fourth
    with pytest.raises(ValueError, match="nonlinearity must be 'tanh' or 'relu'"):
        nn.RNN(3, 5, nonlinearity="sigmoid")
