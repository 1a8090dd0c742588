"""The performance numbers in README.md are the ones the last full benchmark run wrote into
benchmarks/RESULTS.md: `benchmarks/run.py` writes both, and nobody types them."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _between(text: str, start: str, end: str) -> str:
    assert start in text and end in text, f"markers {start} … {end} missing"
    return text.split(start, 1)[1].split(end, 1)[0]


def test_readme_shows_the_table_of_the_last_full_run():
    readme = _between((ROOT / "README.md").read_text(encoding="utf-8"),
                      "<!-- benchmarks:start -->", "<!-- benchmarks:end -->").strip()
    results = _between((ROOT / "benchmarks" / "RESULTS.md").read_text(encoding="utf-8"),
                       "<!-- results:start -->", "<!-- results:end -->")
    assert readme, "README's benchmark table is empty: run python benchmarks/run.py"
    assert "(full mode)" in readme.splitlines()[0], "README shows a quick run"
    machine, table = readme.split("\n", 1)
    assert machine in results.splitlines(), "README's run differs from benchmarks/RESULTS.md"
    assert table.strip() in results, "README's table differs from benchmarks/RESULTS.md"


def test_results_are_written_where_asked_and_the_tracked_file_is_kept(tmp_path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    tracked = run.RESULTS.read_bytes()
    target = tmp_path / "RESULTS.md"
    section = f"{run.START}\n\n## Results\n\nnew numbers\n{run.END}\n"
    run.update_results(section, target)
    assert run.RESULTS.read_bytes() == tracked                  # the checkout is untouched
    written = target.read_text(encoding="utf-8")
    assert "new numbers" in written
    # the hand-written text around the markers comes from the tracked file
    assert written.split(run.START)[0] == tracked.decode("utf-8").split(run.START)[0]
