"""examples/soft_vs_hard.py: only soft attention gets gradient into its query/key projections."""

import importlib
import json
import math
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def script(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module("soft_vs_hard")


def test_quick_run_soft_learns_hard_gets_no_query_key_gradient(script, tmp_path, capsys):
    metrics = script.main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "soft_vs_hard.png").read_bytes()[:8] == PNG_SIGNATURE
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert set(saved["final"]) == {"soft", "nearest", "exact"}
    steps = saved["steps"]
    for mode, history in saved["history"].items():
        assert set(history) == {"loss", "accuracy", "grad_query", "grad_key", "grad_value"}
        assert all(len(values) == steps for values in history.values())
        assert all(math.isfinite(v) for v in history["loss"]), mode

    soft, nearest, exact = (saved["final"][m] for m in ("soft", "nearest", "exact"))
    # soft: gradient reaches W_q and W_k at every step, and the loss falls
    assert min(saved["history"]["soft"]["grad_query"]) > 0
    assert min(saved["history"]["soft"]["grad_key"]) > 0
    assert soft["loss"] < 0.7 * soft["first_loss"]
    assert soft["accuracy"] > 2 * saved["chance_accuracy"]
    # hard lookups: exactly zero gradient into W_q and W_k, at every step
    for hard in (nearest, exact):
        assert hard["max_grad_query"] == 0.0 and hard["max_grad_key"] == 0.0
    assert nearest["max_grad_value"] > 0          # the chosen value still gets gradient
    assert exact["max_grad_value"] == 0.0         # nothing matches: zero output, no gradient
    assert metrics["final"]["soft"]["max_grad_query"] == soft["max_grad_query"]
    assert "‖∂L/∂W_q‖" in capsys.readouterr().out   # the norms are printed, not only plotted


# resuming exactly after Ctrl-C: tests/examples/test_interrupt.py
