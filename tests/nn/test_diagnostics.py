"""nn.Diagnostics: the statistics it records from hooks against the same quantities computed
here in NumPy from the model's equations, with a hand-written backward pass."""

import numpy as np
import pytest

import minigrad as mg
import nn


def mlp_numpy(x, y, sd):
    """Forward and backward of Linear → Tanh → Linear with L = mean((out − y)²), by hand."""
    h = x @ sd["0.weight"].T + sd["0.bias"]
    a = np.tanh(h)
    out = a @ sd["2.weight"].T + sd["2.bias"]
    d_out = 2 * (out - y) / out.size                     # ∂L/∂out
    d_a = d_out @ sd["2.weight"]                         # ∂L/∂a
    d_h = d_a * (1 - a * a)                              # ∂L/∂h: tanh' = 1 − tanh²
    grads = {"0.weight": d_h.T @ x, "0.bias": d_h.sum(0), "2.weight": d_out.T @ a,
             "2.bias": d_out.sum(0)}
    return {"0": h, "1": a, "2": out}, {"0": d_h, "1": d_a, "2": d_out}, grads


def train_step(model, diagnostics, optimizer, x, y):
    loss = ((model(mg.tensor(x)) - mg.tensor(y)) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    diagnostics.step(optimizer)


@pytest.fixture
def setup(rng):
    model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3)).double()
    nn.init.normal_(model[0].weight, std=2.0)            # large: some tanh outputs saturate
    x, y = rng.standard_normal((16, 5)), rng.standard_normal((16, 3))
    return model, x, y


def test_activation_gradient_and_parameter_statistics_match_numpy(setup):
    model, x, y = setup
    sd = {k: v.copy() for k, v in model.state_dict().items()}
    diagnostics = nn.Diagnostics(model, bins=20)
    lr = 0.1
    train_step(model, diagnostics, nn.optim.SGD(model.parameters(), lr=lr), x, y)
    (record,) = diagnostics.records
    acts, act_grads, grads = mlp_numpy(x, y, sd)
    assert diagnostics.modules == ["0", "1", "2"]
    for name in ("0", "1", "2"):
        entry = record["activations"][name]
        assert entry["mean"] == pytest.approx(acts[name].mean(), rel=1e-10, abs=1e-14)
        assert entry["std"] == pytest.approx(acts[name].std(), rel=1e-10)
        counts, edges = np.histogram(acts[name], bins=20)
        assert entry["histogram"][0] == counts.tolist()
        np.testing.assert_allclose(entry["histogram"][1], edges, rtol=1e-12)
        gradient = record["gradients"][name]
        assert gradient["std"] == pytest.approx(act_grads[name].std(), rel=1e-10)
        assert gradient["mean"] == pytest.approx(act_grads[name].mean(), rel=1e-9, abs=1e-15)
    saturated = np.mean(np.abs(acts["1"]) > 0.97)
    assert 0 < saturated < 1 and record["activations"]["1"]["saturated"] == saturated
    assert record["activations"]["0"]["saturated"] is None        # a Linear: no such thing
    for name, g in grads.items():
        entry = record["parameters"][name]
        assert entry["grad_norm"] == pytest.approx(np.linalg.norm(g), rel=1e-10)
        assert entry["grad_to_data"] == pytest.approx(g.std() / sd[name].std(), rel=1e-10)
        # plain SGD: Δw = −lr·g, so std(Δw)/std(w) = lr·std(g)/std(w)
        assert entry["update_to_data"] == pytest.approx(lr * g.std() / sd[name].std(),
                                                        rel=1e-8)


def test_records_every_kth_step_and_never_during_evaluation(setup):
    model, x, y = setup
    diagnostics = nn.Diagnostics(model, modules=["1"], every=2)
    optimizer = nn.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(5):
        with mg.no_grad():
            model(mg.tensor(x))                           # evaluation: not recorded
        train_step(model, diagnostics, optimizer, x, y)
    assert [r["step"] for r in diagnostics.records] == [0, 2, 4]
    steps, values = diagnostics.series("activations", "saturated")["1"]
    assert steps.tolist() == [0, 2, 4] and np.all((values >= 0) & (values <= 1))
    assert set(diagnostics.series("parameters", "update_to_data")) == {
        "0.weight", "0.bias", "2.weight", "2.bias"}
    diagnostics.remove()
    train_step(model, diagnostics, optimizer, x, y)        # step 5: hooks gone; 6 would record
    model(mg.tensor(x))
    assert len(diagnostics.records) == 3


def test_attention_saturation_is_the_share_of_one_hot_rows(rng):
    class Lookup(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.DotProductAttention(scaled=False)

        def forward(self, q, k, v):
            return self.attention(q, k, v)[0]

    q = rng.standard_normal((4, 6, 16)) * 2.0             # unscaled scores of std ≈ 8
    k, v = rng.standard_normal((4, 9, 16)), rng.standard_normal((4, 9, 2))
    model = Lookup()
    diagnostics = nn.Diagnostics(model, saturation=0.9)
    model(mg.tensor(q, requires_grad=True), mg.tensor(k), mg.tensor(v)).sum().backward()
    diagnostics.step()
    scores = q @ k.transpose(0, 2, 1)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    expected = np.mean(weights.max(-1) > 0.9)
    assert 0 < expected < 1
    assert diagnostics.records[0]["activations"]["attention"]["saturated"] == expected
    context = weights @ v                                  # the activation described: context
    assert diagnostics.records[0]["activations"]["attention"]["std"] == pytest.approx(
        context.std(), rel=1e-10)


def test_bad_arguments_raise_clear_errors(setup):
    model, _, _ = setup
    with pytest.raises(ValueError, match="Diagnostics: no submodule named 'encoder'"):
        nn.Diagnostics(model, modules=["encoder"])
    with pytest.raises(ValueError, match="Diagnostics: every must be an int >= 1, got 0"):
        nn.Diagnostics(model, every=0)
    with pytest.raises(ValueError, match="Diagnostics.series: section must be"):
        nn.Diagnostics(model).series("weights", "std")


def test_plot_draws_every_panel(setup):
    pytest.importorskip("matplotlib")
    model, x, y = setup
    optimizer = nn.optim.SGD(model.parameters(), lr=0.01)
    runs = {}
    for label in ("a", "b"):
        runs[label] = nn.Diagnostics(model)
        for _ in range(3):
            train_step(model, runs[label], optimizer, x, y)
        runs[label].remove()
    figure = nn.plot_diagnostics(runs, title="two runs")
    panels = [ax for ax in figure.axes if ax.get_title()]
    assert len(panels) == 6 and all(ax.lines for ax in panels)
    # one line per layer and run in the activation panel; the saturation panel: only Tanh
    assert len(panels[0].lines) == 2 * 3 and len(panels[1].lines) == 2
