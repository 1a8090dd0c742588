"""Count CPU instructions per step of a workload with valgrind's callgrind: a measure that does
not move when other processes share the machine, for judging one engine change at a time.

    python benchmarks/instructions.py W0            # NumPy and minigrad, instructions per op
    python benchmarks/instructions.py W1 --steps 3 13
    python benchmarks/instructions.py W0 --only "minigrad compiled"

Each implementation runs in a fresh process under callgrind twice, for a few and for more
steps; the difference divided by the extra steps leaves out start-up and imports. Hash seeds and
address-space randomisation are fixed, so repeated counts agree to about 1 %. Instructions are
not time (a cache miss costs more than an add), so the timed runs in `run.py` stay the measure
of record. Needs valgrind (Debian: apt-get install valgrind).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def child(workload: str, framework: str, steps: int) -> None:
    """Run `steps` steps of one implementation (the process callgrind watches)."""
    import numpy as np

    from benchmarks.workloads import WORKLOADS
    spec = WORKLOADS[workload]
    problem = spec.make_problem(np.random.default_rng(0))
    implementation = spec.implementations[framework].load()(problem)
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", nargs="?", default="W0", help="W0, W1, W2 or W3 (W4 takes "
                        "its default length)")
    parser.add_argument("--steps", type=int, nargs=2, default=(2, 6), metavar=("FEW", "MORE"))
    parser.add_argument("--only", help="the implementations to count, comma-separated (e.g. "
                        "'numpy,minigrad compiled'); all but torch by default")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        workload, framework, steps = args.child
        child(workload, framework, int(steps))
        return
    if shutil.which("valgrind") is None:
        sys.exit("instructions.py needs valgrind: apt-get install valgrind")
    from benchmarks.workloads import WORKLOADS
    few, more = args.steps
    per = {}
    for framework, implementation in WORKLOADS[args.workload].implementations.items():
        if implementation.framework == "torch" or (args.only and framework not in
                                                   args.only.split(",")):
            continue
        per[framework] = (count(args.workload, framework, more)
                          - count(args.workload, framework, few)) / (more - few)
        print(f"{args.workload} {framework}: {per[framework]:,.0f} instructions per step")
    if "numpy" in per:
        for framework, n in per.items():
            if framework != "numpy":
                print(f"{framework} ÷ numpy: {n / per['numpy']:.2f}×")


if __name__ == "__main__":
    main()
