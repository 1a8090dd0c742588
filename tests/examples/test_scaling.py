"""examples/scaling.py: softmax saturation without 1/√d, and time/memory against length."""

import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def script(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module("scaling")


def test_quick_run(script, tmp_path):
    script.main(["--quick", "--out", str(tmp_path)])
    for name in ("softmax_saturation.png", "time_memory.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG_SIGNATURE
    saved = json.loads((tmp_path / "metrics.json").read_text())
    sat = saved["saturation"]
    dims = np.array(sat["dims"], float)
    scaled, unscaled = sat["scaled"], sat["unscaled"]
    # Var(q·k) = d for q, k ~ N(0, I): std √d unscaled, 1 scaled
    np.testing.assert_allclose(unscaled["score_std"], np.sqrt(dims), rtol=0.25)
    np.testing.assert_allclose(scaled["score_std"], 1.0, rtol=0.25)
    # unscaled softmax saturates at large d and its gradient collapses; scaled does not
    assert unscaled["max_weight"][-1] > 0.8 > scaled["max_weight"][-1]
    assert unscaled["grad_scores_norm"][-1] < 0.1 * scaled["grad_scores_norm"][-1]
    assert max(scaled["grad_scores_norm"]) < 2 * min(scaled["grad_scores_norm"])
    cost = saved["cost"]
    for name in ("gru", "attention"):
        assert len(cost[name]["seconds"]) == len(cost["lengths"])
        assert all(s > 0 and math.isfinite(s) for s in cost[name]["seconds"])
        assert all(m > 0 for m in cost[name]["mib"])
    # attention keeps (B, heads, L, L) weights: its memory grows faster than linearly
    assert cost["attention"]["memory_slope"] > 1.0
    # part 3: the same lookup trained with and without 1/√d, watched by nn.Diagnostics
    assert (tmp_path / "diagnostics.png").read_bytes()[:8] == PNG_SIGNATURE
    training = saved["training"]
    scaled, unscaled = training["summary"]["q·k/√d"], training["summary"]["q·k"]
    assert len(training["losses"]["q·k"]) == training["task"]["steps"]
    # from the same weights, the unscaled scores are √d larger: more one-hot rows at once,
    # and larger gradients into W_q through the rows that are not saturated
    assert unscaled["saturated_first"] > scaled["saturated_first"]
    assert unscaled["q_weight_grad_norm_first"] > 2 * scaled["q_weight_grad_norm_first"]
    assert set(scaled["last_record"]["activations"]) == {"q_proj", "k_proj", "attention"}



def test_ctrl_c_stops_in_one_line_and_resume_is_refused(script, tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):            # Ctrl-C during the first part: seconds saved
        raise KeyboardInterrupt
    monkeypatch.setattr(script, "run_saturation", interrupted)
    with pytest.raises(SystemExit) as stop:
        script.main(["--quick", "--out", str(tmp_path)])
    assert stop.value.code == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("interrupted: scaling.py keeps no checkpoint")
    assert not (tmp_path / "metrics.json").exists()
    with pytest.raises(SystemExit) as refused:
        script.main(["--quick", "--out", str(tmp_path), "--resume"])
    assert refused.value.code == 2
    assert "--resume: scaling.py keeps no checkpoint" in capsys.readouterr().err
