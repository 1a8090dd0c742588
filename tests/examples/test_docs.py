"""The numbers of examples/README.md and README.md come from the committed results: every
placeholder and table fills again, from examples/results/, to exactly what the page says; every
documented run has its results (command, seed, commit, machine, wall time) and figures; and the
runs are deterministic for a seed."""

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


@pytest.fixture
def make_docs(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    return importlib.import_module("make_docs")


def test_every_number_and_table_of_the_pages_agrees_with_the_committed_results(make_docs):
    results = make_docs.load_results()
    for path in make_docs.DOCS:
        assert make_docs.stale(path, results) == [], (
            f"{path.name} says something else than examples/results/; run "
            f"`python3 examples/make_docs.py` (or --run to measure again)")
    assert make_docs.main(["--check"]) == 0


def test_the_pages_hold_placeholders_and_tables_each_with_a_renderer(make_docs):
    import _doc_tables
    texts = [path.read_text(encoding="utf-8") for path in make_docs.DOCS]
    names = [m.group(2) for text in texts for m in make_docs.REGION.finditer(text)]
    assert len(names) == len(set(names)) and len(names) >= 7
    for name in names:
        assert hasattr(_doc_tables, "table_" + name.replace("-", "_")), name
    import _g2p_report                                 # g2p.py's section renders its own
    g2p_names = [m.group(2) for text in texts for m in _g2p_report.REGION.finditer(text)]
    assert len(g2p_names) >= 8 and set(g2p_names) <= set(_g2p_report.REGIONS)
    for text in texts:                                 # every marker is closed
        assert text.count("<!-- make_docs: ") == text.count("<!-- /make_docs -->")
        assert text.count("<!--=") == text.count("<!--/-->")
    assert sum(len(make_docs.PLACEHOLDER.findall(text)) for text in texts) >= 200


def _edit_digit(text: str, start: int, end: int) -> str:
    digit = re.compile(r"\d").search(text, start, end)
    return text[:digit.start()] + str((int(digit.group()) + 1) % 10) + text[digit.end():]


def test_a_number_typed_into_the_prose_or_a_table_is_caught(make_docs, tmp_path):
    results = make_docs.load_results()
    text = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    edited = tmp_path / "README.md"
    placeholder = next(m for m in make_docs.PLACEHOLDER.finditer(text)
                       if m.group(1) == "translate-none/metrics/greedy_exact_match")
    edited.write_text(_edit_digit(text, placeholder.start(4), placeholder.end(4)),
                      encoding="utf-8")
    assert make_docs.stale(edited, results) == ["translate-none/metrics/greedy_exact_match"]
    region = next(m for m in make_docs.REGION.finditer(text) if m.group(2) == "bottleneck")
    edited.write_text(_edit_digit(text, region.start(3), region.end(3)), encoding="utf-8")
    assert make_docs.stale(edited, results) == ["bottleneck"]


def test_published_numbers_live_in_one_data_file_not_in_the_code(make_docs):
    published = make_docs.load_results()["published"]
    assert published["g2p"]["blstm_standard_split_wer"] == 0.2355
    for path in EXAMPLES.glob("*.py"):              # no published figure typed into a script
        assert "23.55" not in path.read_text(encoding="utf-8"), path.name


def test_every_documented_run_has_its_results_and_figures(make_docs):
    results = make_docs.load_results()
    assert set(results) - {"published"} == {run.name for run in make_docs.RUNS}
    for run in make_docs.RUNS:
        record = results[run.name]
        assert record["command"] == " ".join(run.command())
        assert re.fullmatch(r"[0-9a-f]{40}", record["commit"])
        assert record["machine"]["logical_cpus"] >= 1 and record["machine"]["cpu"]
        assert isinstance(record["seed"], int) and record["seed"] == record["metrics"]["run"]["seed"]
        assert record["metrics"]["run"]["quick"] is False          # documented runs are full
        assert 0 <= record["metrics"]["run"]["wall_seconds"] <= record["process_wall_seconds"]
        for figure in run.figures.values():
            assert (make_docs.FIGURES / figure).stat().st_size > 1000, figure
    # and every picture the pages show is there
    for path in make_docs.DOCS:
        for link in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", path.read_text(encoding="utf-8")):
            assert (path.parent / link).exists(), link


def _without_timings(value):
    """A metrics dict with everything measured in seconds (or derived from it) removed."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items()
                if "seconds" not in k and k not in ("elapsed", "out")}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.mark.parametrize("script", ["soft_vs_hard"])
def test_a_run_is_deterministic_for_a_seed(script, tmp_path):
    # two fresh processes, as the documented runs are made (one BLAS thread, set before NumPy
    # loads); both at once, since each is mostly interpreter start-up
    runs = [subprocess.Popen([sys.executable, str(EXAMPLES / f"{script}.py"), "--quick",
                              "--out", str(tmp_path / str(k))], cwd=ROOT,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)),
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            for k in range(2)]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read()[-2000:]
    saved = [json.loads((tmp_path / str(k) / "metrics.json").read_text()) for k in range(2)]
    assert _without_timings(saved[0]) == _without_timings(saved[1])
