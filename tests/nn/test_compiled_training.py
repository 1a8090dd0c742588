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


# ---------------------------------------------------------------------------------------------
# The whole training step compiled: zero_grad, backward, clipping and the optimizer step inside,
# each run live at every replay (mg.compiler.disable), with the learning rate changed between
# calls by a scheduler.

def _whole_step_run(make_optimizer, compiled: bool, clip: str | None = "norm", calls: int = 7,
                    zero_grad_inside: bool = True, make=_mlp):
    mg.manual_seed(0)
    model = make()
    optimizer = make_optimizer(model.parameters())
    scheduler = nn.optim.StepLR(optimizer, step_size=2, gamma=0.5)
    rng = np.random.default_rng(1)
    data = [(mg.tensor(rng.standard_normal((6, 4))), mg.tensor(rng.integers(0, 3, 6)))
            for _ in range(calls)]

    def step(x, y):
        if zero_grad_inside:
            optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        if clip == "norm":
            total = nn.clip_grad_norm(model.parameters(), 0.5)
        elif clip == "value":
            nn.optim.clip_grad_value_(model.parameters(), 0.05)
        optimizer.step()
        return (loss, total) if clip == "norm" else loss

    run = mg.compile(step) if compiled else step
    mg.manual_seed(7)
    history = []
    for x, y in data:
        if not zero_grad_inside:
            optimizer.zero_grad()
        out = run(x, y)
        loss, total = out if clip == "norm" else (out, None)
        history.append((loss.numpy(), total, [p.numpy() for p in model.parameters()],
                        [p.grad.numpy() for p in model.parameters()]))
        scheduler.step()                           # a new learning rate every second call
    return history, run


def _assert_same_history(eager, compiled):
    for (loss, total, weights, grads), (loss_c, total_c, weights_c, grads_c) in \
            zip(eager, compiled):
        np.testing.assert_array_equal(loss, loss_c)
        assert total == total_c or (total != total and total_c != total_c)
        for a, b in zip(weights + grads, weights_c + grads_c):
            np.testing.assert_array_equal(a, b)


OPTIMIZERS = {
    "sgd-momentum": lambda params: nn.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True,
                                                weight_decay=1e-3),
    "adam": lambda params: nn.optim.Adam(params, lr=0.05),
    "adamw": lambda params: nn.optim.AdamW(params, lr=0.05),
}


@pytest.mark.parametrize("clip", ["norm", "value", None])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_the_whole_training_step_compiled_equals_eager_bit_for_bit(name, clip):
    eager, _ = _whole_step_run(OPTIMIZERS[name], compiled=False, clip=clip)
    replayed, run = _whole_step_run(OPTIMIZERS[name], compiled=True, clip=clip)
    assert run.stats.replays == len(eager) - 2 and run.stats.eager == 1, run.stats
    assert run.stats.captures == 1, run.stats
    _assert_same_history(eager, replayed)


LOSSES_OF_TARGETS = {   # each reads the logits where this call's targets say
    "cross_entropy": lambda z, t: F.cross_entropy(z, mg.where(t < 0, 0, t)),
    "cross_entropy ignore smoothing": lambda z, t: F.cross_entropy(
        z, t, ignore_index=-100, label_smoothing=0.1),
    "cross_entropy weight": lambda z, t: F.cross_entropy(
        z, mg.where(t < 0, 0, t), weight=np.arange(1.0, 7.0)),
    "cross_entropy weight ignore": lambda z, t: F.cross_entropy(
        z, t, ignore_index=-100, weight=np.arange(1.0, 7.0)),
    "nll_loss": lambda z, t: F.nll_loss(mg.log_softmax(z, -1), mg.where(t < 0, 1, t)),
    "nll_loss ignore": lambda z, t: F.nll_loss(mg.log_softmax(z, -1), t, ignore_index=-100),
    "nll_loss weight ignore": lambda z, t: F.nll_loss(
        mg.log_softmax(z, -1), t, ignore_index=-100, weight=np.arange(1.0, 7.0)),
}


@pytest.mark.parametrize("name", list(LOSSES_OF_TARGETS))
def test_losses_read_each_calls_targets_in_a_replay(name):
    """New targets (and ignored places) at every call: each replay scores them, with eager's
    loss and gradients bit for bit."""
    rng = np.random.default_rng(0)
    layer, loss_of = nn.Linear(4, 6).double(), LOSSES_OF_TARGETS[name]

    def step(x, t):
        loss = loss_of(layer(x), t)
        loss.backward()
        return loss

    compiled = mg.compile(step)
    for call in range(5):
        targets = rng.integers(0, 6, (3, 5))
        targets[call % 3, call % 5] = -100
        x, t = mg.tensor(rng.standard_normal((3, 5, 4))), mg.tensor(targets)
        layer.zero_grad()
        loss = compiled(x, t)
        grads = [p.grad.numpy() for p in layer.parameters()]
        layer.zero_grad()
        np.testing.assert_array_equal(loss.numpy(), step(x, t).numpy())
        for g, p in zip(grads, layer.parameters()):
            np.testing.assert_array_equal(g, p.grad.numpy())
    assert compiled.stats.replays == 3


def test_embedding_padding_rows_follow_each_batch_in_a_replay():
    """F.embedding cuts the padding row's gradient with a detached copy of the rows: a replay
    takes it from its own batch (the padding positions move from batch to batch)."""
    mg.manual_seed(0)
    table = nn.Embedding(5, 2, padding_idx=0)
    with mg.no_grad():
        table.weight.data = table.weight.data + 1.0          # a padding row that is not zero

    def step(indices):
        out = table(indices)
        (out * out).sum().backward()
        return out

    compiled = mg.compile(step)
    for batch in ([[1, 2, 3]], [[1, 2, 3]], [[0, 0, 4]], [[4, 0, 0]], [[2, 0, 1]]):
        indices = mg.tensor(batch)
        table.weight.grad = None
        out = compiled(indices)
        grad = table.weight.grad.numpy()
        table.weight.grad = None
        np.testing.assert_array_equal(out.numpy(), step(indices).numpy())
        np.testing.assert_array_equal(grad, table.weight.grad.numpy())
    assert compiled.stats.replays == 3


@pytest.mark.parametrize("make", [_mlp, lambda: nn.Linear(4, 3)], ids=["mlp", "linear"])
def test_zero_grad_outside_and_the_optimizer_inside_replay_exactly(make):
    eager, _ = _whole_step_run(OPTIMIZERS["adam"], compiled=False, zero_grad_inside=False,
                               make=make)
    replayed, run = _whole_step_run(OPTIMIZERS["adam"], compiled=True, zero_grad_inside=False,
                                    make=make)
    assert run.stats.replays == len(eager) - 2, run.stats
    _assert_same_history(eager, replayed)


def _plant_in_live_calls(patch, change):
    """Replays whose live calls are replaced by change(fn, args, kwargs) -> a callable."""
    from minigrad import compiled as compiled_module
    real = compiled_module._Writer._live

    def live(writer, call):
        fn, args, kwargs, mode = writer.program.lives[call]
        writer.program.lives[call] = (change(fn, args, kwargs), (), {}, mode)
        real(writer, call)
    patch.setattr(compiled_module._Writer, "_live", live)


@pytest.mark.parametrize("plant", ["frozen lr", "skipped step"])
def test_a_frozen_learning_rate_or_a_skipped_live_call_is_caught(plant, monkeypatch):
    """The comparison above fails when a replay makes the optimizer step with the learning rate
    of the capture, or not at all."""
    def frozen_lr(fn, args, kwargs):
        if getattr(fn, "__name__", "") != "step":
            return lambda: fn(*args, **kwargs)
        optimizer = args[0]
        captured = [group["lr"] for group in optimizer.param_groups]

        def step():
            now = [group["lr"] for group in optimizer.param_groups]
            for group, lr in zip(optimizer.param_groups, captured):
                group["lr"] = lr
            try:
                return fn(*args, **kwargs)
            finally:
                for group, lr in zip(optimizer.param_groups, now):
                    group["lr"] = lr
        return step

    def skipped(fn, args, kwargs):
        return (lambda: None) if getattr(fn, "__name__", "") == "step" else \
            (lambda: fn(*args, **kwargs))

    eager, _ = _whole_step_run(OPTIMIZERS["sgd-momentum"], compiled=False)
    _plant_in_live_calls(monkeypatch, frozen_lr if plant == "frozen lr" else skipped)
    replayed, run = _whole_step_run(OPTIMIZERS["sgd-momentum"], compiled=True)
    assert run.stats.replays == len(eager) - 2, run.stats
    with pytest.raises(AssertionError):
        _assert_same_history(eager, replayed)
