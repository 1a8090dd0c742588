"""examples/render_graph.py: the graph pictures are written as DOT text, and as SVG and PNG
when Graphviz's `dot` is installed; without it the script still succeeds."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot program")
def test_quick_run_writes_svg_and_png_with_labelled_nodes(tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "render_graph.py"),
                             "--quick", "--out", str(tmp_path)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ("gru_step", "multihead", "soft_vs_hard"):
        assert (tmp_path / f"{name}.dot").read_text(encoding="utf-8").startswith("digraph")
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == PNG_SIGNATURE
        assert "<svg" in (tmp_path / f"{name}.svg").read_text(encoding="utf-8")
    gru = (tmp_path / "gru_step.svg").read_text(encoding="utf-8")
    # the named inputs and parameters, and the gate operations, appear as labels
    for label in ("x_t", "h_{t", "weight_ih", "weight_hh", "Sigmoid", "Tanh", "h_t"):
        assert label in gru, label
    multihead = (tmp_path / "multihead.svg").read_text(encoding="utf-8")
    for label in ("q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight",
                  "(1, 2, 3, 3)"):                    # weights (B, heads, Lq, Lk)
        assert label in multihead, label
    soft_vs_hard = (tmp_path / "soft_vs_hard.svg").read_text(encoding="utf-8")
    # the hard lookup's query and keys are marked as getting no gradient; the soft ones get one
    assert soft_vs_hard.count("no gradient") >= 2
    assert "grad norm" in soft_vs_hard
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["rendered"] is True
    assert all(metrics[name]["nodes"] > 5 for name in ("gru_step", "multihead", "soft_vs_hard"))


def test_without_graphviz_writes_dot_files_says_how_to_render_and_succeeds(tmp_path):
    empty_bin = tmp_path / "bin"                     # a PATH on which there is no `dot`
    empty_bin.mkdir()
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "render_graph.py"),
                             "--quick", "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env={"PATH": str(empty_bin), "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    names = ("gru_step", "multihead", "soft_vs_hard")
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"{name}.dot" for name in names] + ["metrics.json"])
    for name in names:
        dot_path = out / f"{name}.dot"
        assert dot_path.read_text(encoding="utf-8").startswith("digraph")
        assert f"dot -Tsvg {dot_path} -o {out / name}.svg" in result.stdout
        assert f"dot -Tpng {dot_path} -o {out / name}.png" in result.stdout
    assert "apt-get install graphviz" in result.stdout
    assert json.loads((out / "metrics.json").read_text())["rendered"] is False

    dot = shutil.which("dot")
    if dot is not None:                              # the printed commands do render them
        commands = [line.split() for line in result.stdout.splitlines()
                    if line.strip().startswith("dot -T")]
        assert len(commands) == 2 * len(names)
        for command in commands:
            subprocess.run([dot] + command[1:], check=True, timeout=60)
        assert "<svg" in (out / "multihead.svg").read_text(encoding="utf-8")
        assert (out / "gru_step.png").read_bytes()[:8] == PNG_SIGNATURE
