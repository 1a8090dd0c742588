"""examples/positional_encoding.py: the grid, the rotation property, add vs concatenate."""

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
    return importlib.import_module("positional_encoding")


def test_rotation_matrix_shifts_the_encoding(script):
    """R(φ) built by the script moves PE(t) to PE(t + φ); PE written here from the formula."""
    D, base = 8, 10000.0
    t = np.arange(40.0)[:, None]
    omega = base ** (-np.arange(0, D, 2) / D)
    pe = np.empty((40, D))
    pe[:, 0::2], pe[:, 1::2] = np.sin(t * omega), np.cos(t * omega)
    np.testing.assert_allclose(script.sinusoid_table(40, D, base), pe, atol=1e-15)
    for phi in (1, 7, -3):
        R = script.rotation(phi, D, base)
        np.testing.assert_allclose(R @ R.T, np.eye(D), atol=1e-12)    # a rotation
        lo, hi = max(0, -phi), min(40, 40 - phi)
        np.testing.assert_allclose(pe[lo:hi] @ R.T, pe[lo + phi:hi + phi], atol=1e-12)


def test_quick_run(script, tmp_path):
    script.main(["--quick", "--out", str(tmp_path)])
    for name in ("pe_grid.png", "pe_similarity.png", "add_vs_concat.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG_SIGNATURE
    saved = json.loads((tmp_path / "metrics.json").read_text())
    for base, errors in saved["rotation_max_error"].items():
        assert errors["formula_float64"] < 1e-10, base
        assert errors["module_float64"] < 1e-6, base
    assert saved["shapes"]["add"][1] == saved["shapes"]["add"][0]
    assert saved["shapes"]["concat"][1][-1] == 2 * saved["shapes"]["concat"][0][-1]
    for mode in ("add", "concat"):
        result = saved["add_vs_concat"][mode]
        assert math.isfinite(result["test_loss"])
        assert result["final_train_loss"] < result["first_train_loss"], mode
