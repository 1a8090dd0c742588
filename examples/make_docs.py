"""Run the examples, keep their results as data, and write the numbers of the docs from them.

The words of the pages are Markdown, written in the pages; every number in them that a run
measured is a placeholder whose text this script fills from examples/results/*.json (one JSON
file per run: its metrics.json, command, seed, commit, machine and wall time; published.json
holds numbers published by others):

    exact match <!--=translate-dot/metrics/greedy_exact_match;*100;.1f-->99.9<!--/--> %

(path in the results; a scale, "*100" or "/60"; a format: ".1f", "," for digit groups, "dur"
for 58 s / 3.6 min, "sci1" for 4·10⁻⁹). Tables are generated whole, between markers, by
`table_<name>` in _doc_tables.py:

    <!-- make_docs: translate -->
    ...generated; do not edit by hand...
    <!-- /make_docs -->

A test fills every page again and fails when a page and the data disagree, so a number can
only change by rerunning and regenerating.

    python3 examples/make_docs.py                 # rewrite the pages' numbers and tables
    python3 examples/make_docs.py --check         # exit 1 where a page differs from the data
    python3 examples/make_docs.py --run           # rerun every example (one at a time, at
                                                  # nice 10), save results and figures, rewrite
    python3 examples/make_docs.py --run scaling soft_vs_hard      # rerun some of them
    python3 examples/make_docs.py --list          # the runs and their commands

`--run` writes examples/results/<run>.json and copies each run's figures into examples/figures/
(PNGs re-saved with a 256-colour palette to keep the repository small). Runs are deterministic
for a seed on one machine, except for anything timed (wall times, scaling.py's timings) and
tiny_gpt's corpus, which is this Python's own standard library.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from _doc_tables import THIN, duration, sci

EXAMPLES = Path(__file__).resolve().parent
ROOT = EXAMPLES.parent
RESULTS = EXAMPLES / "results"
FIGURES = EXAMPLES / "figures"
DOCS = (EXAMPLES / "README.md", ROOT / "README.md")


@dataclass(frozen=True)
class Run:
    """One documented run: the script, its arguments, and the figures the docs show."""
    name: str
    script: str
    arguments: tuple[str, ...] = ()
    figures: dict = field(default_factory=dict)      # file in the run's folder -> figures/ name
    requires: str | None = None                      # an optional package the run needs

    @property
    def out(self) -> Path:
        """The run's output folder, relative to the repository root (where runs start)."""
        return Path("runs") / "docs" / self.name

    def command(self) -> list[str]:
        return ["python3", f"examples/{self.script}.py", *self.arguments]


RUNS = (
    Run("translate-additive", "translate", ("--attention", "additive"),
        {"attention.png": "translate_attention_additive.png",
         "loss.png": "translate_loss_additive.png"}),
    Run("translate-dot", "translate", ("--attention", "dot")),
    Run("translate-general", "translate", ("--attention", "general")),
    Run("translate-location", "translate", ("--attention", "location"),
        {"attention.png": "translate_attention_location.png"}),
    Run("translate-none", "translate", ("--attention", "none"),
        {"loss.png": "translate_loss_none.png"}),
    Run("bottleneck", "bottleneck", (), {"bottleneck.png": "bottleneck.png"}),
    Run("render_graph", "render_graph", (),
        {"gru_step.svg": "graph_gru_step.svg", "multihead.svg": "graph_multihead.svg",
         "soft_vs_hard.svg": "graph_soft_vs_hard.svg"}),
    Run("soft_vs_hard", "soft_vs_hard", (), {"soft_vs_hard.png": "soft_vs_hard.png"}),
    Run("gru_to_attention", "gru_to_attention", (),
        {"implicit_weights.png": "gru_to_attention_implicit_weights.png",
         "losses.png": "gru_to_attention_losses.png"}),
    Run("worked_examples", "worked_examples"),
    Run("positional_encoding", "positional_encoding", (),
        {"pe_grid.png": "positional_encoding_grid.png",
         "add_vs_concat.png": "positional_encoding_add_vs_concat.png"}),
    Run("scaling", "scaling", (),
        {"softmax_saturation.png": "scaling_softmax_saturation.png",
         "time_memory.png": "scaling_time_memory.png",
         "diagnostics.png": "scaling_diagnostics.png"}),
    Run("tiny_gpt", "tiny_gpt", (), {"loss.png": "tiny_gpt_loss.png"}),
)
RUNS_BY_NAME = {run.name: run for run in RUNS}


# -- running ------------------------------------------------------------------------------------

def machine() -> dict:
    """What the timings depend on: CPU, cores, OS, Python, NumPy and its BLAS."""
    import numpy as np
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next((line.split(":", 1)[1].strip() for line in info
                        if line.startswith("model name")), cpu)
    except OSError:
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{blas['name']} {blas.get('version', '')}".strip()
    except (TypeError, KeyError):
        blas = "unknown"
    return {"cpu": cpu, "logical_cpus": os.cpu_count(), "system": platform.platform(),
            "python": platform.python_version(), "numpy": np.__version__, "blas": blas,
            "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "1")}


def git_commit() -> dict:
    """The commit the examples ran from, and whether the checkout had uncommitted changes."""
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    try:
        # the code a run executes: the packages and the example scripts (not this file)
        return {"commit": git("rev-parse", "HEAD"),
                "uncommitted_changes": bool(git("status", "--porcelain", "--", "minigrad",
                                                "nn", "examples/*.py",
                                                ":!examples/make_docs.py",
                                                ":!examples/_doc_tables.py"))}
    except (OSError, subprocess.CalledProcessError):
        return {"commit": "unknown", "uncommitted_changes": None}


def run_example(run: Run, niceness: int) -> dict:
    """Run one example in a fresh process (at `niceness`), its output in <out>/run.log; return
    its results record."""
    out = ROOT / run.out
    if out.exists():
        shutil.rmtree(out)                           # no figure or checkpoint of an older run
    out.mkdir(parents=True)
    command = [sys.executable, str(EXAMPLES / f"{run.script}.py"), *run.arguments,
               "--out", str(run.out)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    print(f"[{run.name}] {' '.join(run.command())}", flush=True)
    load_before = os.getloadavg()
    start = time.perf_counter()
    with open(out / "run.log", "w", encoding="utf-8") as log:
        process = subprocess.run(command, cwd=ROOT, env=env, stdout=log,
                                 stderr=subprocess.STDOUT,
                                 preexec_fn=(lambda: os.nice(niceness)) if niceness else None)
    seconds = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{run.name} failed with exit code {process.returncode}; see "
                           f"{out / 'run.log'}")
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    print(f"[{run.name}] done in {seconds:.0f} s", flush=True)
    return {"run": run.name, "command": " ".join(run.command()),
            "seed": metrics.get("run", {}).get("seed"),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            **git_commit(), "machine": machine(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()],
            "niceness": niceness, "process_wall_seconds": round(seconds, 1),
            "metrics": _rounded(metrics)}


def _rounded(value):
    """Floats to 6 significant digits (the docs show at most 4), so results files stay small
    and diffs readable."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def dumps(record: dict) -> str:
    """JSON with one key per line, but each list of numbers on one line (a loss curve is one
    line, not a thousand)."""
    text = json.dumps(record, indent=1, ensure_ascii=False)
    return NUMBER_LIST.sub(lambda m: "[" + ", ".join(m.group(1).split()).replace(",,", ",")
                           + "]", text) + "\n"


NUMBER_LIST = re.compile(r"\[\s*((?:-?[\d.eE+-]+,?\s*)+)\]")


def save_results(run: Run, record: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    _write_atomically(RESULTS / f"{run.name}.json", dumps(record))
    FIGURES.mkdir(exist_ok=True)
    for source, target in run.figures.items():
        _copy_figure(ROOT / run.out / source, FIGURES / target)


def _copy_figure(source: Path, target: Path) -> None:
    """Copy a figure; a PNG is re-saved with a 256-colour palette (a third of the bytes)."""
    if source.suffix != ".png":
        _write_atomically(target, source.read_bytes(), binary=True)
        return
    from PIL import Image
    with Image.open(source) as image:
        small = image.convert("RGB").quantize(colors=256)
        with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".png", delete=False) as f:
            temporary = Path(f.name)
        try:
            small.save(temporary, optimize=True)
            os.chmod(temporary, 0o644)
            os.replace(temporary, target)
        finally:
            if temporary.exists():
                temporary.unlink()


def _write_atomically(path: Path, data, binary: bool = False) -> None:
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else
                                                        {"encoding": "utf-8"})) as f:
            f.write(data)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


# -- the pages ----------------------------------------------------------------------------------

# a number or word of the prose: <!--=RUN/PATH;SCALE;FORMAT-->text<!--/-->, e.g.
# <!--=translate-dot/metrics/greedy_exact_match;*100;.1f-->99.9<!--/--> %
PLACEHOLDER = re.compile(r"<!--=([^;>]+);([^;>]*);([^;>]*)-->(.*?)<!--/-->", re.S)
# a generated table: <!-- make_docs: NAME -->...<!-- /make_docs -->, from _doc_tables.table_NAME
REGION = re.compile(r"(<!-- make_docs: ([\w-]+) -->\n)(.*?)(<!-- /make_docs -->)", re.S)


def load_results() -> dict:
    """{run name: results record} for every results file (published.json: numbers of others)."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(RESULTS.glob("*.json"))}


def lookup(results: dict, path: str):
    """The value at "run/key/0/key" ("~1" stands for "/" inside a key); "len" is a list's or
    a dict's length, "min" and "max" a list's smallest and largest element."""
    value = results
    for key in path.split("/"):
        key = key.replace("~1", "/").replace("~0", "~")
        if key in ("min", "max", "len") and (isinstance(value, list) or key == "len"):
            value = {"min": min, "max": max, "len": len}[key](value)
        elif isinstance(value, list):
            value = value[int(key)]
        else:
            value = value[key]
    return value


def formatted(value, scale: str, spec: str) -> str:
    """`value` times/divided by `scale` ("*100", "/60", "" for none) in `spec`: a format spec
    (".1f", ",", "g"; "," groups with narrow spaces), "dur" (58 s, 3.6 min) or "sci1"/"sci2"
    (4·10⁻⁹, one or two significant digits)."""
    if scale:
        factor = float(scale[1:])
        value = value * factor if scale[0] == "*" else value / factor
    if spec == "dur":
        return duration(value)
    if spec.startswith("sci"):
        return sci(value, int(spec[3:]))
    return format(value, spec).replace(",", THIN)


def fill(text: str, results: dict) -> str:
    """`text` with every placeholder's text and every table region rendered from `results`."""
    import _doc_tables

    def value(match: re.Match) -> str:
        new = formatted(lookup(results, match.group(1)), match.group(2), match.group(3))
        old = match.group(4)
        if " ".join(old.split()) == new:                # keep the line break of wrapped text
            new = old
        return f"<!--={match.group(1)};{match.group(2)};{match.group(3)}-->{new}<!--/-->"

    def region(match: re.Match) -> str:
        render = getattr(_doc_tables, "table_" + match.group(2).replace("-", "_"))
        return match.group(1) + render(results).rstrip("\n") + "\n" + match.group(4)
    return REGION.sub(region, PLACEHOLDER.sub(value, text))


def stale(path: Path, results: dict) -> list[str]:
    """What on the page `path` differs from what `results` render: placeholders by path,
    tables by name."""
    text = path.read_text(encoding="utf-8")
    fresh = fill(text, results)
    old = [m.group(0) for m in PLACEHOLDER.finditer(text)]
    new = [m.group(0) for m in PLACEHOLDER.finditer(fresh)]
    differ = [m.group(1) for m, a, b in zip(PLACEHOLDER.finditer(text), old, new) if a != b]
    tables = {m.group(2): m.group(3) for m in REGION.finditer(fresh)}
    return differ + [m.group(2) for m in REGION.finditer(text) if tables[m.group(2)] != m.group(3)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", nargs="*", metavar="RUN", default=None,
                        help="rerun these examples (all without names), then rewrite the docs")
    parser.add_argument("--check", action="store_true",
                        help="only check that the docs agree with the results; exit 1 if not")
    parser.add_argument("--list", action="store_true", help="list the runs and their commands")
    parser.add_argument("--nice", type=int, default=10, help="niceness of the example runs")
    args = parser.parse_args(argv)
    if args.list:
        for run in RUNS:
            print(f"{run.name:<20} {' '.join(run.command())}")
        return 0
    if args.run is not None:
        unknown = [name for name in args.run if name not in RUNS_BY_NAME]
        if unknown:
            parser.error(f"unknown runs {unknown}; known: {', '.join(RUNS_BY_NAME)}")
        for run in [RUNS_BY_NAME[name] for name in args.run] or RUNS:
            if run.requires and importlib.util.find_spec(run.requires) is None:
                print(f"[{run.name}] skipped: needs the optional package {run.requires!r}",
                      flush=True)
                continue
            save_results(run, run_example(run, args.nice))
    results = load_results()
    if args.check:
        out_of_date = {str(path.relative_to(ROOT)): stale(path, results) for path in DOCS}
        for path, names in out_of_date.items():
            if names:
                print(f"{path}: out of date with examples/results/: {', '.join(names)}")
        if any(out_of_date.values()):
            print("run `python3 examples/make_docs.py` to rewrite them")
        return 1 if any(out_of_date.values()) else 0
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        new = fill(text, results)
        if new != text:
            _write_atomically(path, new)
            print(f"rewrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(EXAMPLES))
    sys.exit(main())
