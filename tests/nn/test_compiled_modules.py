"""nn's layers as compiled training steps: each module's forward, a loss and backward captured by
minigrad.compile and replayed with new inputs at every call (masks and positions moving too),
against the same calls made eagerly, bit for bit: outputs and every parameter's gradient.

A layer that computes something from its inputs' values outside an operation would replay the
captured call's numbers; this is the test that sees it (F.embedding's padding rows once did)."""

from __future__ import annotations

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F

B, T, E = 3, 5, 4


def _sequence(rng, call):
    return [mg.tensor(rng.standard_normal((B, T, E)))]


def _with_padding(rng, call):
    """A sequence and a bool mask (B, 1, T), True = a real position, one more padded per call."""
    allowed = np.ones((B, 1, T), dtype=bool)
    allowed[np.arange(B), 0, (np.arange(B) + call) % T] = False
    return [mg.tensor(rng.standard_normal((B, T, E))), mg.tensor(allowed)]


def _ids(rng, call):
    return [mg.tensor(rng.integers(0, 7, (B, T)))]


def _query_and_memory(rng, call):
    return [mg.tensor(rng.standard_normal((B, 2, E))), mg.tensor(rng.standard_normal((B, T, E)))]


def _channels(rng, call):
    """(B, E, T): E channels of length T, PyTorch's layout for convolution and pooling."""
    return [mg.tensor(rng.standard_normal((B, E, T)))]


def _planes(rng, call):
    """(B, E, 5, T): E channels of 5 × T planes, PyTorch's layout for 2-D convolution."""
    return [mg.tensor(rng.standard_normal((B, E, 5, T)))]


def _gathered_at_pooled_maxima(y, pool=F.max_pool1d):
    """y's elements read again at the positions `pool` returns (flat within each plane): the
    indices must be computed from each call's y, not frozen."""
    _, indices = pool(y, 2, ceil_mode=True, return_indices=True)
    planes = y.reshape(*y.shape[:2], -1)                   # (B, C, L) or (B, C, H·W)
    return mg.take_along_axis(planes, indices.reshape(*indices.shape[:2], -1), axis=-1)


def _cases():
    """name -> (make the module, make one call's inputs, the loss of module and inputs)."""
    square = lambda y: (y * y).sum()                                          # noqa: E731
    return {
        "GRU, 2 layers, bidirectional, dropout": (
            lambda: nn.GRU(E, 6, num_layers=2, bidirectional=True, dropout=0.3), _sequence,
            lambda m, x: square(m(x)[0])),
        "LSTM, bidirectional": (lambda: nn.LSTM(E, 6, bidirectional=True), _sequence,
                                lambda m, x: square(m(x)[0])),
        "MultiheadAttention": (lambda: nn.MultiheadAttention(E, 2, dropout=0.2, batch_first=True),
                               _sequence, lambda m, x: square(m(x, x, x)[0])),
        "MultiheadAttention, PyTorch's key padding and causal masks": (
            lambda: nn.MultiheadAttention(E, 2, batch_first=True), _with_padding,
            lambda m, x, allowed: square(m(x, x, x, key_padding_mask=~allowed[:, 0],
                                           attn_mask=np.triu(np.ones((T, T), bool), 1))[0])),
        "TransformerEncoderLayer, padding mask": (
            lambda: nn.TransformerEncoderLayer(E, 2, 8, dropout=0.1),
            _with_padding, lambda m, x, allowed: square(m(x, mask=allowed))),
        "TransformerDecoderLayer, causal": (
            lambda: nn.TransformerDecoderLayer(E, 2, 8, dropout=0.0), _query_and_memory,
            lambda m, y, memory: square(m(y, memory, tgt_is_causal=True))),
        "AdditiveAttention, padding mask": (
            lambda: nn.AdditiveAttention(E, E, 3), _with_padding,
            lambda m, x, allowed: square(m(x, x, x, allowed)[0])),
        "LocationAwareAttention": (
            lambda: nn.LocationAwareAttention(E, E, 4, 3, 3), _query_and_memory,
            lambda m, h, s: square(m(h, s, s, prev=m.initial_weights(s))[0])),
        "Embedding with padding_idx": (lambda: nn.Embedding(7, E, padding_idx=0), _ids,
                                       lambda m, ids: square(m(ids))),
        "LayerNorm": (lambda: nn.LayerNorm(E), _sequence, lambda m, x: (m(x) ** 3).sum()),
        "RMSNorm": (lambda: nn.RMSNorm(E), _sequence, lambda m, x: (m(x) ** 3).sum()),
        "Conv1d, MaxPool1d, AvgPool1d": (
            lambda: nn.Sequential(nn.Conv1d(E, 6, 3, padding=1), nn.ReLU(),
                                  nn.MaxPool1d(2, ceil_mode=True),
                                  nn.Conv1d(6, 4, 2, padding="same", groups=2),
                                  nn.AvgPool1d(2, padding=1, count_include_pad=False)),
            _channels, lambda m, x: square(m(x))),
        "Conv1d, then the maxima's indices": (
            lambda: nn.Conv1d(E, 4, 2, stride=2, padding=1, dilation=2), _channels,
            lambda m, x: square(_gathered_at_pooled_maxima(m(x)))),
        "Conv2d, MaxPool2d, AvgPool2d": (
            lambda: nn.Sequential(nn.Conv2d(E, 6, (3, 2), padding=1), nn.ReLU(),
                                  nn.MaxPool2d(2, ceil_mode=True),
                                  nn.Conv2d(6, 4, 2, padding="same", groups=2,
                                            padding_mode="reflect"),
                                  nn.AvgPool2d(2, padding=1, count_include_pad=False)),
            _planes, lambda m, x: square(m(x))),
        "Conv2d, then the maxima's indices": (
            lambda: nn.Conv2d(E, 4, 2, stride=(1, 2), padding=1, dilation=(2, 1)), _planes,
            lambda m, x: square(_gathered_at_pooled_maxima(m(x), F.max_pool2d))),
        "CosineSimilarity of a projection": (
            lambda: nn.Linear(E, E), _sequence,
            lambda m, x: F.cosine_similarity(m(x), x * 1e3, dim=-1).sum()),
    }


CASES = _cases()


@pytest.mark.parametrize("name", list(CASES))
def test_a_module_replays_as_its_eager_calls(name):
    make, inputs_of, loss_of = CASES[name]
    mg.manual_seed(0)
    module = make().double()
    rng = np.random.default_rng(1)

    def step(*inputs):
        loss = loss_of(module, *inputs)
        loss.backward()
        return loss

    compiled = mg.compile(step)
    for call in range(5):
        inputs = [x.double() if x.dtype.kind == "f" else x for x in inputs_of(rng, call)]
        mg.manual_seed(call)                      # dropout: the same draws both ways
        module.zero_grad()
        loss = compiled(*inputs)
        grads = [None if p.grad is None else p.grad.numpy() for p in module.parameters()]
        mg.manual_seed(call)
        module.zero_grad()
        np.testing.assert_array_equal(loss.numpy(), step(*inputs).numpy())
        for g, p in zip(grads, module.parameters()):
            assert (g is None) == (p.grad is None)
            if g is not None:
                np.testing.assert_array_equal(g, p.grad.numpy())
    assert compiled.stats.replays == 3, compiled.stats
