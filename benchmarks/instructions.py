"""Count CPU instructions per step of a workload with valgrind's callgrind: a measure that does
not move when other processes share the machine, for judging one engine change at a time.

    python benchmarks/instructions.py W0            # instructions per step, and ÷ NumPy
    python benchmarks/instructions.py W1 --steps 3 13
    python benchmarks/instructions.py W0 W1 W2 --write    # ... and into instructions.json
    python benchmarks/instructions.py W2 --only "numpy,minigrad primitives" --steps 1 3

Each implementation other than PyTorch's (NumPy, minigrad eager, minigrad compiled, W2's tape
floor) runs in a fresh process under callgrind twice, for a few and for more steps; the
difference divided by the extra steps leaves out start-up and imports. A compiled
implementation is primed first (its eager call, its capture and WARM_REPLAYS replays, after
which CPython 3.11 has specialised the replay's byte-code), so the difference counts settled
replays only. Hash seeds and address-space randomisation are fixed, so repeated counts agree to
about 1 %. Compile the byte-code first (`python -m compileall -q minigrad nn benchmarks`):
otherwise the run with more steps may be the one that compiles a changed module, and the
difference counts it. Instructions are not time (a cache miss costs more than an add), so the
timed runs in `run.py` stay the measure of record. Needs valgrind (Debian: apt-get install
valgrind).

`--write` puts each workload's counts, as soon as they are taken, with the code revision, the
steps, the machine and the date, into benchmarks/instructions.json (written to a temporary file,
then renamed into place), replacing that workload's entry and keeping the others.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

JSON = HERE / "instructions.json"
WARM_REPLAYS = 10      # replays before a compiled implementation's counted steps


def child(workload: str, framework: str, steps: int) -> None:
    """Run `steps` steps of one implementation (the process callgrind watches)."""
    import numpy as np

    from benchmarks.workloads import WORKLOADS
    spec = WORKLOADS[workload]
    problem = spec.make_problem(np.random.default_rng(0))
    implementation = spec.implementations[framework].load()(problem)
    if hasattr(implementation, "prime"):        # compiled: eager call and capture, then
        implementation.prime()                  # replays until CPython's adaptive
        for _ in range(WARM_REPLAYS):           # interpreter has specialised their code
            implementation.step()
    for _ in range(steps):
        implementation.step()


def count(workload: str, framework: str, steps: int) -> int:
    """Instructions of a whole child process running `steps` steps."""
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, "--child", workload, framework, str(steps)]
    if shutil.which("setarch"):
        command = ["setarch", "-R"] + command          # the same addresses every run
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    match = re.search(r"Collected : (\d+)", result.stderr)
    if match is None:
        raise RuntimeError(f"callgrind reported no count:\n{result.stderr[-2000:]}")
    return int(match.group(1))


def count_workload(workload: str, few: int, more: int, only=()) -> dict[str, float]:
    """Instructions per step of each implementation of `workload` but PyTorch's (of those
    named in `only`, when given)."""
    from benchmarks.workloads import WORKLOADS
    per = {}
    for name, implementation in WORKLOADS[workload].implementations.items():
        if implementation.framework == "torch" or (only and name not in only):
            continue
        per[name] = (count(workload, name, more) - count(workload, name, few)) / (more - few)
        print(f"{workload} {name}: {per[name]:,.0f} instructions per step", flush=True)
    return per


def table(counts: dict[str, dict]) -> str:
    """A Markdown table: per workload and implementation, instructions per step and ÷ NumPy."""
    lines = ["| workload | implementation | instructions per step | ÷ NumPy |",
             "|---|---|---:|---:|"]
    for workload, entry in counts.items():
        per = entry["per_step"]
        for name, n in per.items():
            ratio = f"{n / per['numpy']:.2f}×" if per.get("numpy") else "—"
            lines.append(f"| {workload} | {name} | {n / 1e6:,.2f} M | {ratio} |")
    return "\n".join(lines)


def entry(per: dict[str, float], few: int, more: int) -> dict:
    """What the JSON file keeps of one workload's counts."""
    from benchmarks.run import cpu_model, source_revision
    return {"per_step": {name: round(n) for name, n in per.items()},
            "ratio_to_numpy": ({name: round(n / per["numpy"], 4) for name, n in per.items()}
                               if per.get("numpy") else {}),
            "steps": [few, more], "code": source_revision(),
            "measured": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "cpu": cpu_model(), "python": platform.python_version()}


def write_json(counts: dict[str, dict], path: Path = JSON) -> None:
    """Put the workloads' entries into `path`, keeping the entries of other workloads."""
    from benchmarks.run import write_atomically
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.setdefault("command", "python benchmarks/instructions.py W0 W1 W2 --write")
    workloads = {**data.get("workloads", {}), **counts}
    data["workloads"] = {k: workloads[k] for k in sorted(workloads)}
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, lambda p: p.write_text(text, encoding="utf-8"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", default=["W0"],
                        help="W0, W1, W2, W3 or W4 (W4 takes its default length); default W0")
    parser.add_argument("--steps", type=int, nargs=2, default=(2, 6), metavar=("FEW", "MORE"))
    parser.add_argument("--only", default="", help="comma-separated implementations, e.g. "
                        "'numpy,minigrad primitives' (default: all but PyTorch's)")
    parser.add_argument("--write", action="store_true",
                        help=f"also write the counts into {JSON.relative_to(ROOT)}")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        workload, framework, steps = args.child
        child(workload, framework, int(steps))
        return
    from benchmarks.workloads import WORKLOADS
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    only = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [n for n in only if all(n not in WORKLOADS[w].implementations
                                      for w in args.workloads)]
    if unknown:
        parser.error(f"unknown implementations {unknown} of {args.workloads}")
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py needs valgrind: apt-get install valgrind")
    few, more = args.steps
    counts = {}
    for workload in args.workloads:
        counts[workload] = entry(count_workload(workload, few, more, only), few, more)
        if args.write:                          # each workload as soon as it is counted
            write_json({workload: counts[workload]})
            print(f"wrote {workload} into {JSON.relative_to(ROOT)}", flush=True)
    print(table(counts))


if __name__ == "__main__":
    main()
