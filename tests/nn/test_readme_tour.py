"""The README's tour of nn runs as written: each Python block of that section, copied alone
into a fresh script, runs and computes what the text around it says."""

import numpy as np
import pytest

import minigrad as mg
import nn
from tests import readme_blocks

TOUR_HEADING = "## A tour of nn"


def _python_blocks() -> list[str]:
    return readme_blocks.python_blocks(TOUR_HEADING)


@pytest.fixture
def run_block(tmp_path, monkeypatch):
    """Run block `index` as its own script in a temporary directory; return its globals."""
    return lambda index: readme_blocks.run_block(TOUR_HEADING, index, tmp_path, monkeypatch)


def test_the_tour_has_its_four_blocks():
    assert len(_python_blocks()) == 4


def test_gru_block(run_block, capsys):
    g = run_block(0)
    assert g["output"].shape == (4, 10, 16) and g["h_n"].shape == (2, 4, 16)
    assert g["z"].shape == (4, 10, 16) and np.all((g["z"].numpy() > 0) & (g["z"].numpy() < 1))
    count = g["gru"].num_parameters()
    assert f"# {count:,} params" in capsys.readouterr().out
    assert f"# {count:,} params" in _python_blocks()[0]          # the comment tells the truth


def test_attention_block(run_block, tmp_path):
    g = run_block(1)
    weights = g["weights"].numpy()
    assert g["context"].shape == (2, 3, 4) and weights.shape == (2, 3, 5)
    np.testing.assert_array_equal(weights[1, :, 2:], 0.0)         # beyond sequence 1's length
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-6)
    for t in (g["q"], g["k"], g["v"]):                            # soft: every input learns
        assert np.abs(t.grad.numpy()).max() > 0
    assert g["head_weights"].shape == (2, 2, 6, 6)
    assert np.all(np.triu(g["head_weights"].numpy(), k=1) == 0.0)  # causal
    panels = [ax for ax in g["figure"].axes if ax.images]          # one map per head
    assert len(panels) == 2
    np.testing.assert_allclose(panels[1].images[0].get_array(), g["head_weights"].numpy()[0, 1],
                               rtol=1e-6)
    assert (tmp_path / "heads.png").read_bytes()[:4] == b"\x89PNG"


def test_transformer_block(run_block):
    g = run_block(2)
    assert g["y"].shape == (2, 7, 16) and g["out"].shape == (2, 5, 16)
    assert len(g["encoder"].layers) == 2 and isinstance(g["encoder"].norm, nn.LayerNorm)


def test_training_block_resumes_exactly(run_block, tmp_path):
    g = run_block(3)
    assert (tmp_path / "checkpoint.npz").exists()
    assert g["resumed"] < g["first"]
    mg.manual_seed(0)                                  # the same 16 steps without a break
    model, opt, schedule = g["build"]()
    g["train"](model, opt, schedule, 8)
    assert g["train"](model, opt, schedule, 8) == g["resumed"]
