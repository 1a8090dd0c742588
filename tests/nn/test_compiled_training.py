"""Training loops of real layers under minigrad.compile (AdamW outside the step, dropout inside,
seeded): bit for bit the eager run, step after step; and eval mode guarded."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import minigrad as mg
import nn
import nn.functional as F


def _gru():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(4, 6, batch_first=True)
            self.drop = nn.Dropout(0.2)
            self.head = nn.Linear(6, 3)

        def forward(self, x):
            out, _ = self.gru(x)                       # (B, T, H)
            return self.head(self.drop(out))           # (B, T, 3)
    return Model()


def _transformer():
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1)
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            return self.head(self.layer(x))            # (B, T, 3)
    return Model()


def _mlp():
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 3))


def _data(rng, features_last: bool):
    shape = (3, 5, 4) if not features_last else (3, 5, 8)
    return [(mg.tensor(rng.standard_normal(shape).astype(np.float32)),
             mg.tensor(rng.integers(0, 3, shape[:2]))) for _ in range(5)]


def _train(make, data, compiled: bool):
    mg.manual_seed(0)
    model = make()
    optimizer = nn.optim.AdamW(model.parameters(), lr=1e-2)

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        return loss

    run = mg.compile(step) if compiled else step
    mg.manual_seed(123)
    history = []
    for x, y in data:
        optimizer.zero_grad()
        loss = run(x, y)
        history.append((loss.numpy(), [p.grad.numpy() for p in model.parameters()]))
        optimizer.step()
    return history, [p.numpy() for p in model.parameters()], run


@pytest.mark.parametrize("make", [_mlp, _gru, _transformer], ids=["mlp", "gru", "transformer"])
def test_training_compiled_equals_eager_bit_for_bit(make):
    rng = np.random.default_rng(0)
    data = _data(rng, make is _transformer)
    if make is _mlp:
        data = [(x[:, 0], y[:, 0]) for x, y in data]
    eager, weights, _ = _train(make, data, compiled=False)
    replayed, weights_c, run = _train(make, data, compiled=True)
    assert run.stats.replays == len(data) - 2, run.stats
    for (loss, grads), (loss_c, grads_c) in zip(eager, replayed):
        np.testing.assert_array_equal(loss, loss_c)
        for g, g_c in zip(grads, grads_c):
            np.testing.assert_array_equal(g, g_c)
    for w, w_c in zip(weights, weights_c):
        np.testing.assert_array_equal(w, w_c)


def _forward(model, x):
    return model(x)


@pytest.mark.parametrize("bind", [lambda model: lambda x: model(x),   # the model in the closure
                                  lambda model: functools.partial(_forward, model)],
                         ids=["closure", "partial"])
def test_eval_mode_is_guarded(bind):
    """Captured in training (dropout on); in eval mode the step must not replay dropout. The
    model is found in the step's closure, or among the arguments functools.partial binds."""
    mg.manual_seed(0)
    model = _mlp()
    run = mg.compile(bind(model))
    x = mg.tensor(np.ones((2, 4), dtype=np.float32))
    for _ in range(3):
        run(x)
    model.eval()
    expected = model(x).numpy()
    for _ in range(3):
        np.testing.assert_array_equal(run(x).numpy(), expected)
    assert run.stats.captures == 2
