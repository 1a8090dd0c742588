"""examples/gru_to_attention.py: every step of the GRU → Transformer progression trains."""

import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def script(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module("gru_to_attention")


def test_task_answers_the_latest_value_of_each_key(script):
    task = script.RecallTask(num_keys=3, num_values=4, num_pairs=6, num_queries=3)
    tokens, targets = task.batch(np.random.default_rng(0), 20)
    assert tokens.shape == targets.shape == (20, 9)
    assert (targets[:, :6] == -1).all() and (targets[:, 6:] >= 0).all()
    for row, want in zip(tokens, targets):
        for t in range(6, 9):
            key = row[t] - 12
            stored = [tok % 4 for tok in row[:6] if tok // 4 == key]
            assert stored and want[t] == stored[-1]


def test_order_blind_floor_counts_the_values_stored_under_the_key(script):
    task = script.RecallTask(num_keys=2, num_values=3, num_pairs=3, num_queries=2)
    # pairs (k=0, v=1), (k=1, v=2), (k=0, v=2); queries ?0 (answer 2) and ?1 (answer 2)
    tokens = np.array([[0 * 3 + 1, 1 * 3 + 2, 0 * 3 + 2, 6 + 0, 6 + 1]])
    targets = np.array([[-1, -1, -1, 2, 2]])
    # key 0 holds {1, 2}: −log ½; key 1 holds {2}: −log 1 = 0
    assert math.isclose(task.order_blind_loss(tokens, targets), np.log(2) / 2)


def test_quick_run_reports_every_variant(script, tmp_path, capsys):
    script.main(["--quick", "--out", str(tmp_path)])
    for name in ("losses.png", "implicit_weights.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG_SIGNATURE
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert list(saved["variants"]) == list(script.VARIANTS)
    assert 0 < saved["task"]["order_blind_loss"] < saved["task"]["chance_loss"]
    for variant, result in saved["variants"].items():
        assert math.isfinite(result["test_loss"]), variant
        assert 0.0 <= result["test_accuracy"] <= 1.0
        history = saved["histories"][variant]
        assert all(math.isfinite(v) for v in history)
        assert np.mean(history[-5:]) < np.mean(history[:5]), variant   # the loss falls
    table = capsys.readouterr().out
    for variant in script.VARIANTS:
        assert variant in table


def test_gru_implicit_weights_reproduce_its_state(script):
    """C1: h_t = Σ_i [Π_{j=i+1..t} z_j](1 − z_i) ñ_i (h_0 = 0), checked on an untrained GRU."""
    mg.manual_seed(0)
    model = script.Model("gru", vocab=10, num_values=4, dim=6, heads=2, max_len=8)
    tokens = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    with mg.no_grad():
        x = model.embed(mg.tensor(tokens[None]))
        h, _, gates = model.gru(x, return_gates=True)
    z, n, h = (a.numpy()[0].astype(np.float64) for a in (gates[0].z, gates[0].n, h))
    expected = np.zeros((8, 8))
    for t in range(8):
        weights = [np.prod(z[i + 1:t + 1], axis=0) * (1 - z[i]) for i in range(t + 1)]
        np.testing.assert_allclose(sum(w * n[i] for i, w in enumerate(weights)), h[t],
                                   atol=1e-5)
        expected[t, :t + 1] = [w.mean() for w in weights]
    np.testing.assert_allclose(script.gru_implicit_weights(model, tokens), expected, atol=1e-6)
