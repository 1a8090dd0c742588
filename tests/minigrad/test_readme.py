"""The README's quick tour of the engine runs as written: each Python block of that section,
copied alone into a fresh script, runs and computes what the text around it says."""

import shutil

import numpy as np
import pytest

import minigrad as mg
from tests import readme_blocks

TOUR_HEADING = "## A quick tour of the engine"


def _python_blocks() -> list[str]:
    return readme_blocks.python_blocks(TOUR_HEADING)


def _run_block(index: int, directory, monkeypatch) -> dict:
    return readme_blocks.run_block(TOUR_HEADING, index, directory, monkeypatch)


def test_the_readme_has_the_five_tour_blocks():
    blocks = _python_blocks()
    assert len(blocks) == 5
    for block in blocks:                               # each one runs on its own
        assert "import minigrad as mg" in block and "import numpy as np" in block


def test_tour_block_tensors_and_backward(tmp_path, monkeypatch):
    names = _run_block(0, tmp_path, monkeypatch)
    x, w = names["x"].numpy(), names["w"].numpy()
    assert names["x"].dtype == np.float32 and names["w"].dtype == np.float64
    # y = Σ tanh(x ⊙ w): ∂y/∂x = w(1 − t²), ∂y/∂w = Σ_rows x(1 − t²), t = tanh(x ⊙ w)
    t = np.tanh(x.astype(np.float64) * w)
    np.testing.assert_allclose(names["x"].grad.numpy(), w * (1 - t * t), rtol=1e-5)
    np.testing.assert_allclose(names["w"].grad.numpy(), (x * (1 - t * t)).sum(axis=0),
                               rtol=1e-5)
    assert names["w"].grad.shape == (2,)             # summed back to w's shape


def test_tour_text_on_higher_order_derivatives():
    """The text after the first block: g, = mg.grad(y, x, create_graph=True), then
    mg.grad(g.sum(), x) differentiates again: ∂²/∂x² Σ tanh(xw) = −2w² t(1 − t²)."""
    x = mg.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]) / 4, requires_grad=True)
    w = mg.tensor(np.array([0.5, -1.0]), requires_grad=True)
    y = (x * w).tanh().sum()
    g, = mg.grad(y, x, create_graph=True)
    (second,) = mg.grad(g.sum(), x)
    t = np.tanh(x.numpy() * w.numpy())
    np.testing.assert_allclose(second.numpy(), -2 * w.numpy() ** 2 * t * (1 - t * t),
                               rtol=1e-12)


def test_tour_block_gradcheck(tmp_path, monkeypatch):
    names = _run_block(1, tmp_path, monkeypatch)     # gradcheck raises if it disagrees
    assert names["a"].dtype == names["b"].dtype == np.float64


def test_tour_block_custom_function(tmp_path, monkeypatch):
    names = _run_block(2, tmp_path, monkeypatch)     # check_backward raises if it disagrees
    assert "mg.check_backward(Cube, (x,))" in _python_blocks()[2]
    x = names["x"]
    cube = names["Cube"].apply(x)
    np.testing.assert_array_equal(cube.numpy(), x.numpy() ** 3)
    (g,) = mg.grad(cube.sum(), x)
    np.testing.assert_array_equal(g.numpy(), 3 * x.numpy() ** 2)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz 'dot' not installed")
def test_tour_block_graph_picture(tmp_path, monkeypatch):
    names = _run_block(3, tmp_path, monkeypatch)
    # the picture and nothing else: no DOT text left behind beside it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph.svg", "readme_block_3.py"]
    svg = (tmp_path / "graph.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for label in ("MatMul", "Relu", "Mean", ">x<", ">W<", ">loss<", "linear scale from 0"):
        assert label in svg, label
    assert names["x"].grad is not None and names["W"].grad is not None


def test_tour_block_spellings(tmp_path, monkeypatch, capsys):
    names = _run_block(4, tmp_path, monkeypatch)
    host = np.arange(6.0).reshape(2, 3)
    # the comment on the print line is what it prints
    block = _python_blocks()[4]
    shown = block.split("print(", 1)[1].split("# ", 1)[1].split("\n", 1)[0].strip()
    assert capsys.readouterr().out.strip() == shown == "6 6 (2, 3) 3 2"
    np.testing.assert_array_equal(names["rows"].numpy(), host.sum(axis=1))
    np.testing.assert_array_equal(names["same"].numpy(), host.sum(axis=1))
    np.testing.assert_allclose(names["spread"].numpy(), host.std(axis=0, ddof=1), rtol=1e-12)
    np.testing.assert_array_equal(names["wide"].numpy(), np.concatenate([host, host], axis=1))
    with pytest.raises(TypeError, match="sum: got axis=1 and dim=1"):
        names["x"].sum(axis=1, dim=1)
