"""examples/bottleneck.py: a --quick run trains every model and writes the length plot."""

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_quick_run_compares_the_models_per_length(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "bottleneck.py"),
                             "--quick", "--hidden-sizes", "16", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "bottleneck.png").read_bytes()[:8] == PNG_SIGNATURE
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    runs = metrics["runs"]
    assert set(runs) == {"none-h16", "additive-h16"}
    assert runs["none-h16"]["epochs"] == metrics["none_epochs"]
    assert runs["additive-h16"]["epochs"] == metrics["epochs"]
    lengths = None
    for name, run in runs.items():
        assert math.isfinite(run["first_loss"]) and math.isfinite(run["final_loss"])
        assert run["first_loss"] > run["final_loss"], name
        by_length = run["by_length"]
        assert lengths is None or set(by_length) == lengths   # the same held-out sentences
        lengths = set(by_length)
        for entry in by_length.values():
            assert 0.0 <= entry["exact_match"] <= 1.0
            assert 0.0 <= entry["token_accuracy"] <= 1.0
        assert sum(entry["count"] for entry in by_length.values()) == run["n_test"]
        # overall exact match is the count-weighted mean of the per-length ones
        weighted = sum(e["exact_match"] * e["count"] for e in by_length.values()) / run["n_test"]
        assert math.isclose(weighted, run["exact_match"], abs_tol=1e-9)
        equal = run["at_equal_epochs"]
        assert equal["epochs"] == min(metrics["epochs"], run["epochs"])
        assert set(equal["by_length"]) == lengths
        assert (tmp_path / name / "checkpoint.npz").exists()
    # the attentive run stops at the equal-epochs point, so both agree there
    additive = runs["additive-h16"]
    assert additive["at_equal_epochs"]["exact_match"] == additive["exact_match"]
