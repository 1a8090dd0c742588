"""examples/bottleneck.py: a --quick run trains both models and writes the length plot."""

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_quick_run_compares_both_models_per_length(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "bottleneck.py"),
                             "--quick", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "bottleneck.png").read_bytes()[:8] == PNG_SIGNATURE
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert set(metrics["models"]) == {"none", "additive"}
    lengths = None
    for name, model in metrics["models"].items():
        assert math.isfinite(model["first_loss"]) and math.isfinite(model["final_loss"])
        assert model["first_loss"] > model["final_loss"], name
        by_length = model["by_length"]
        assert lengths is None or set(by_length) == lengths   # the same held-out sentences
        lengths = set(by_length)
        for entry in by_length.values():
            assert 0.0 <= entry["exact_match"] <= 1.0
            assert 0.0 <= entry["token_accuracy"] <= 1.0
            assert entry["count"] > 0
        counts = sum(entry["count"] for entry in by_length.values())
        assert counts == metrics["n_test"]
    gap = metrics["exact_match_gap_by_length"]
    for n, value in gap.items():
        expected = (metrics["models"]["additive"]["by_length"][n]["exact_match"]
                    - metrics["models"]["none"]["by_length"][n]["exact_match"])
        assert math.isclose(value, expected, abs_tol=1e-12)
    for name in ("none", "additive"):
        assert (tmp_path / name / "checkpoint.npz").exists()
