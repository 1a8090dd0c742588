"""Markdown tables from the metrics.json files that examples/g2p.py writes, for the README:
the numbers in the docs are copied from this output, never typed.

    python examples/_g2p_report.py runs/g2p [runs/g2p-additive-5min ...]

The first folder is the main run (full tables: results, by word length, hardest errors);
every folder, the first included, gets one row of the comparison table.
"""

from __future__ import annotations

import _common  # noqa: F401  (makes the source checkout importable)

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import nn

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "examples" / "golden" / \
    "g2p_torch_trajectory.npz"
LEVERS = Path(__file__).resolve().parent.parent / "benchmarks" / "g2p_levers.json"


ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "examples" / "results"


def _git(*args) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def record(name: str, arguments: list[str]) -> Path:
    """Run `python examples/g2p.py ARGUMENTS` into runs/docs/NAME (its output in run.log) and
    keep its metrics, with the command, commit, machine and load, in examples/results/NAME.json.
    """
    out = ROOT / "runs" / "docs" / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    import numpy as np
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    record = {"run": name, "command": " ".join(["python3", "examples/g2p.py", *arguments]),
              "commit": _git("rev-parse", "HEAD"),
              "uncommitted_changes": bool(_git("status", "--porcelain", "--", "minigrad", "nn",
                                               "examples/g2p.py", "examples/_common.py")),
              "machine": {"cpu": cpu, "logical_cpus": os.cpu_count(),
                          "python": platform.python_version(), "numpy": np.__version__,
                          "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "1")},
              "niceness": os.nice(0),
              "load_average_before": [round(x, 2) for x in os.getloadavg()]}
    start = time.perf_counter()
    with open(out / "run.log", "w", encoding="utf-8") as log:
        subprocess.run([sys.executable, str(ROOT / "examples" / "g2p.py"), *arguments, "--out",
                        str(out)], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=True,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    record.update(date=datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), process_wall_seconds=round(time.perf_counter() - start, 1),
        load_average_after=[round(x, 2) for x in os.getloadavg()],
        metrics=json.loads((out / "metrics.json").read_text(encoding="utf-8")))
    path = RESULTS / f"{name}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def clock(m: dict) -> str:
    return "CPU" if m["clock"] == "cpu" else "wall-clock"


def pct(x) -> str:
    return "—" if x is None else f"{100 * x:.2f} %"


def wer_with_error(scores: dict) -> str:
    """WER ± its standard error over the test words, √(p(1 − p)/n)."""
    p, n = scores["wer"], scores["words"]
    return f"{100 * p:.2f} % ± {100 * (p * (1 - p) / n) ** 0.5:.2f}"


def describe(m: dict) -> str:
    c = m["config"]
    regularised = f"; dropout {c['dropout']:g}, smoothing {c.get('label_smoothing', 0.0):g}"
    if m["model"] == "transformer":
        return (f"Transformer {c['layers']}+{c['layers']} layers, d = {c['d_model']}, "
                f"{c['heads']} heads{regularised}")
    feed = ", input feeding" if c.get("input_feeding") else ""
    return (f"BiGRU {c['enc_layers']}×{c['enc_hidden']} + GRU {c['dec_hidden']}, "
            f"{c['attention']} attention{feed}{regularised}")


def comparison(runs: list[tuple[str, dict]]) -> str:
    lines = ["| run | model | parameters | training (min) | steps | epochs | test WER greedy "
             "| test PER greedy | test WER beam | test PER beam |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, m in runs:
        beam = m["test_beam"] or {}
        lines.append(f"| `{name}` | {describe(m)} | {m['n_parameters']:,} | "
                     f"{m['train_seconds'] / 60:.1f} {clock(m)} | {m['steps']:,} | "
                     f"{m['epochs']:.2f} | "
                     f"{wer_with_error(m['test_greedy'])} | {pct(m['test_greedy']['per'])} | "
                     f"{pct(beam.get('wer'))} | {pct(beam.get('per'))} |")
    return "\n".join(lines)


def by_length(m: dict) -> str:
    greedy, beam = m["test_greedy"]["by_length"], (m["test_beam"] or {}).get("by_length", {})
    lines = ["| letters | words | WER greedy | PER greedy | WER beam | PER beam |",
             "|---|---|---|---|---|---|"]
    for n in sorted(greedy, key=int):
        g, b = greedy[n], beam.get(n, {})
        lines.append(f"| {n} | {g['words']} | {pct(g['wer'])} | {pct(g['per'])} | "
                     f"{pct(b.get('wer'))} | {pct(b.get('per'))} |")
    return "\n".join(lines)


def errors(m: dict, count: int) -> str:
    lines = ["| word | model output (greedy) | reference(s) | edit distance |",
             "|---|---|---|---|"]
    for e in m["hardest_errors"][:count]:
        lines.append(f"| {e['word']} | {e['output']} | {' / '.join(e['references'])} | "
                     f"{e['distance']} |")
    return "\n".join(lines)


def curve(m: dict) -> str:
    c = m["curve"]
    lines = [f"| step | training ({clock(m)} min) | dev WER | dev PER |", "|---|---|---|---|"]
    for step, seconds, wer, per in zip(c["eval_step"], c["eval_seconds"], c["dev_wer"],
                                       c["dev_per"]):
        lines.append(f"| {step:,} | {seconds / 60:.1f} | {pct(wer)} | {pct(per)} |")
    return "\n".join(lines)


def parity() -> str:
    """The stored PyTorch trajectory against minigrad's (written by g2p_torch_parity.py)."""
    lines = ["| attention | parameters | loss at step 1 → 20 (PyTorch) | largest relative "
             "difference, minigrad vs PyTorch |", "|---|---|---|---|"]
    for attention, run in nn.load(GOLDEN).items():
        ours, theirs = np.asarray(run["minigrad_losses"]), np.asarray(run["torch_losses"])
        size = sum(np.asarray(w).size for w in run["weights"].values())
        lines.append(f"| {attention} | {size:,} | {theirs[0]:.4f} → {theirs[-1]:.4f} | "
                     f"{np.max(np.abs(ours - theirs) / np.abs(theirs)):.1e} |")
    return "\n".join(lines)


def levers() -> str:
    """benchmarks/g2p_levers.json as a table."""
    if not LEVERS.exists():
        return "(no benchmarks/g2p_levers.json yet)"
    r = json.loads(LEVERS.read_text())
    lines = ["| variant | parameters | steps/s | words/s |", "|---|---|---|---|"]
    for name, v in r["variants"].items():
        lines.append(f"| {name} | {v['parameters']:,} | {v['steps_per_second']:.2f} | "
                     f"{v['words_per_second']:.0f} |")
    lines += ["", "| where the fused model's time goes | share |", "|---|---|"]
    lines += [f"| {kind} | {100 * share:.1f} % |"
              for kind, share in r["profile_shares_fused"].items()]
    return "\n".join(lines)


def summary(name: str, m: dict) -> str:
    """One paragraph on the main run."""
    beam = m["test_beam"]
    return (f"Main run `{name}`: {describe(m)}, {m['n_parameters']:,} parameters, "
            f"{m['steps']:,} steps ({m['epochs']:.2f} epochs) in {m['train_seconds'] / 60:.1f} "
            f"{clock(m)} minutes of training ({m['train_wall_seconds'] / 60:.1f} min "
            f"wall-clock, {m['steps_per_second']:.2f} steps/s); test set "
            f"{m['test_greedy']['words']} words: greedy WER {pct(m['test_greedy']['wer'])}, PER "
            f"{pct(m['test_greedy']['per'])}" + ("" if beam is None else
                                                f"; beam {m['config']['beam']}: WER "
                                                f"{pct(beam['wer'])}, PER {pct(beam['per'])}")
            + ".")


def main(argv: list[str] | None = None) -> str:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["run"]:
        return str(record(argv[1], argv[2:]))
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--errors", type=int, default=12)
    args = parser.parse_args(argv)
    runs = [(str(p), json.loads((p / "metrics.json").read_text())) for p in args.runs]
    main_name, main_run = runs[0]
    text = "\n\n".join([summary(main_name, main_run), comparison(runs), curve(main_run),
                         by_length(main_run), errors(main_run, args.errors), parity(), levers()])
    print(text)
    return text


if __name__ == "__main__":
    main()
