"""examples/worked_examples.py: the texts' worked numbers against values computed here."""

import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def script(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module("worked_examples")


def softmax(s):
    e = np.exp(np.asarray(s, float) - np.max(s))
    return e / e.sum()


def test_prints_exact_values_and_flags_the_texts_errors(script, tmp_path, capsys):
    metrics = script.main(["--out", str(tmp_path)])
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["num_wrong"] == metrics["num_wrong"] == len(saved["wrong"])
    results = saved["results"]

    # C3: unit keys at 0°, 45°, 90°, query at 60°: scores are cosines of the angle differences
    scores = np.cos(np.deg2rad([60.0, 15.0, 30.0]))
    c3 = results["C3"]
    np.testing.assert_allclose(c3["qK^T = cos(60° − angle)"]["exact"], scores, atol=1e-12)
    np.testing.assert_allclose(c3["softmax(qK^T)"]["exact"], softmax(scores), atol=1e-12)
    assert c3["softmax(qK^T)"]["verdict"] == "truncated"      # 0.24, 0.39, 0.35

    # C16: the decoder step; the text's weights [0.003, 0.45, 0.45, 0.097] are wrong
    h = np.array([[1, 1], [3, 2], [2, 4], [1, 5]], float)
    weights = softmax(h @ np.array([2.0, 1.0]))
    c16 = results["C16"]
    np.testing.assert_allclose(c16["weights softmax([3,8,8,7])"]["exact"], weights, atol=1e-12)
    np.testing.assert_allclose(weights, [0.0028, 0.4211, 0.4211, 0.1549], atol=5e-5)
    np.testing.assert_allclose(c16["context A1 = Σ α_i h_i"]["exact"], weights @ h, atol=1e-12)
    np.testing.assert_allclose(weights @ h, [2.263, 3.304], atol=1e-3)
    assert c16["weights softmax([3,8,8,7])"]["verdict"] == "wrong"
    assert c16["context A1 = Σ α_i h_i"]["verdict"] == "carried"  # follows from its weights
    np.testing.assert_allclose(c16["token 2: softmax([5,2,9])"]["exact"],
                               softmax([5, 2, 9]), atol=1e-12)
    assert c16["token 2: softmax([5,2,9])"]["verdict"] == "wrong"
    assert c16["token 1: softmax([2,8,4])"]["verdict"] == "rounded"

    # C17: "love" attending over I, love, pizza with Q = K = V = embeddings
    x = np.array([[1, 0], [2, 1], [0, 2]], float)
    w = softmax(x @ x[1])
    c17 = results["C17"]
    np.testing.assert_allclose(c17["single head: weights"]["exact"], w, atol=1e-12)
    np.testing.assert_allclose(c17["single head: output"]["exact"], w @ x, atol=1e-12)
    np.testing.assert_allclose(w @ x, [1.864, 1.000], atol=1e-3)
    a2 = softmax(np.array([[0, 1], [1, 1], [1, 3]], float) @ [1.0, 3.0]) @ np.array(
        [[1, 1], [2, 0], [5, 5]], float)
    np.testing.assert_allclose(c17["concat [a1; a2]"]["exact"][2:], a2, atol=1e-12)

    # C1: the exact unrolled form equals the recurrence, the text's index form does not
    assert results["C1"]["max_error_exact_form"] < 1e-12
    assert results["C1"]["max_error_text_form"] > 1e-3
    out = capsys.readouterr().out
    assert "0.4211" in out and "WRONG" in out


@pytest.mark.parametrize("text, exact, verdict", [
    (["0.25"], [0.2496], "rounded"),
    (["0.24"], [0.2478], "truncated"),
    (["0.10"], [0.0900], "wrong"),
])
def test_judge_tells_rounding_from_truncation_from_error(script, text, exact, verdict):
    entry = script.judge(text, np.array(exact))
    assert entry["verdict"] == verdict
    assert math.isclose(entry["max_abs_error"], abs(float(text[0]) - exact[0]))
