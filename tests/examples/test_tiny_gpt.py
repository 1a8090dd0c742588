"""examples/tiny_gpt.py: a --quick run trains, evaluates, samples and checkpoints."""

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
    return importlib.import_module("tiny_gpt")


def test_corpus_is_fixed_and_split_the_same_way(script):
    text, used, missing = script.load_corpus()
    again, _, _ = script.load_corpus()
    assert text == again and len(used) + len(missing) == len(script.STDLIB_FILES)
    assert "def " in text and "class " in text
    codec = script.CharCodec.from_text(text)
    sample = text[1000:1200]
    assert codec.decode(codec.encode(sample)) == sample
    assert set(text) <= set(codec.vocab) and len(codec.vocab) <= 100   # ASCII + "¤"


def test_quick_run_learns_samples_and_resumes(script, tmp_path):
    metrics = script.main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "loss.png").read_bytes()[:8] == PNG_SIGNATURE
    saved = json.loads((tmp_path / "metrics.json").read_text())
    for key in ("final_val_loss_nats_per_char", "final_val_bits_per_char", "steps",
                "uniform_baseline_nats", "history", "corpus", "parameters"):
        assert key in saved
    history = saved["history"]
    assert all(math.isfinite(v) for v in history["train"] + history["val"])
    assert history["val"][-1] < history["val"][0]                  # it learns
    assert saved["final_val_loss_nats_per_char"] < saved["uniform_baseline_nats"]
    assert math.isclose(saved["final_val_bits_per_char"],
                        saved["final_val_loss_nats_per_char"] / math.log(2))
    samples = (tmp_path / "samples.txt").read_text(encoding="utf-8")
    for prompt in ("def ", "class ", "import "):
        assert f"prompt {prompt!r}" in samples
    # resuming exactly after Ctrl-C: tests/examples/test_interrupt.py


def test_time_budget_stops_training(script, tmp_path):
    metrics = script.main(["--quick", "--time-budget", "0", "--sample-length", "5",
                           "--out", str(tmp_path)])
    assert metrics["stopped_by"] == "time budget" and metrics["steps"] == 0
