"""Profile minigrad's implementations of the workloads with cProfile, to see where the engine
spends its time.

    python benchmarks/profile_op.py                 # W0, W1 and both W2 variants
    python benchmarks/profile_op.py W3 W4 --steps 5 --limit 40
    python benchmarks/profile_op.py W2 --impl "minigrad primitives" --save /tmp/w2.prof

For each workload it prints (1) the step time with and without the profiler, (2) the
profiled time grouped by where the code lives (engine, tensor, ops, nn, NumPy calls, Python
built-ins), and (3) the top functions by own time. cProfile adds a cost to every Python call,
so engine-heavy workloads look slower under it than they are: read the shares, not the times.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"          # one BLAS thread, as in run.py

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.workloads import WORKLOADS  # noqa: E402

DEFAULT = [("W0", "minigrad"), ("W1", "minigrad"), ("W2", "minigrad nn.GRU"),
           ("W2", "minigrad primitives")]


def _where(filename: str, name: str) -> str:
    """The group a profiled function belongs to."""
    path = filename.replace("\\", "/")
    if "/minigrad/autograd.py" in path:
        return "minigrad/autograd.py (Function.apply, graph walk)"
    if "/minigrad/tensor.py" in path:
        return "minigrad/tensor.py (Tensor, operators)"
    if "/minigrad/ops/" in path:
        return "minigrad/ops (forward/backward bodies, incl. inline NumPy ufuncs)"
    if "/minigrad/" in path:
        return "minigrad, other (backend, creation)"
    if "/nn/" in path:
        return "nn (modules, functional, optim, incl. NumPy/BLAS calls made inline)"
    if "/numpy/" in path or "numpy" in name:
        return "NumPy (Python wrappers and C methods)"
    if "/benchmarks/" in path:
        return "the workload's own code"
    if filename == "~":
        return "Python built-ins (isinstance, getattr, weakref, ...)"
    return "other Python"


def grouped(stats: pstats.Stats) -> list[tuple[str, float]]:
    totals: dict[str, float] = {}
    for (filename, _, name), (_, _, tottime, _, _) in stats.stats.items():
        group = _where(filename, name)
        totals[group] = totals.get(group, 0.0) + tottime
    return sorted(totals.items(), key=lambda kv: -kv[1])


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def step_time(instance, steps: int, clock) -> float:
    start = clock()
    for _ in range(steps):
        instance.step()
    return (clock() - start) / steps


def profile(workload_key: str, impl_name: str, steps: int, limit: int, sort: str,
            save: str | None, clock) -> None:
    workload = WORKLOADS[workload_key]
    problem = workload.make_problem(np.random.default_rng(0))
    instance = workload.implementations[impl_name].load()(problem)
    reference = workload.implementations["numpy"].load()(problem)
    for _ in range(2):                                   # warm-up
        instance.step()
        reference.step()
    plain = step_time(instance, steps, clock)
    numpy_time = step_time(reference, steps, clock)
    profiler = cProfile.Profile(clock)
    profiler.enable()
    for _ in range(steps):
        instance.step()
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = sum(tt for (_, _, tt, _, _) in stats.stats.values())
    print(f"\n=== {workload_key} {impl_name}: {plain * 1e3:.3f} ms/step "
          f"(hand-written NumPy {numpy_time * 1e3:.3f} ms, ratio {plain / numpy_time:.2f}×); "
          f"under cProfile {total / steps * 1e3:.3f} ms/step ===")
    print("\nown time by location:")
    for group, seconds in grouped(stats):
        print(f"  {100 * seconds / total:5.1f}%  {group}")
    print()
    stats.sort_stats(sort).print_stats(limit)
    if save:
        path = f"{save}.{workload_key}.{impl_name.replace(' ', '_')}.prof"
        stats.dump_stats(path)
        print(f"saved {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workloads", nargs="*", help="W0 … W4 (default: W0 W1 W2)")
    parser.add_argument("--impl", default=None,
                        help="implementation name (default: every minigrad one)")
    parser.add_argument("--steps", type=int, default=20, help="profiled steps")
    parser.add_argument("--limit", type=int, default=25, help="functions listed")
    parser.add_argument("--sort", default="tottime", help="pstats sort key")
    parser.add_argument("--clock", choices=list(CLOCKS), default="cpu",
                        help="cpu: process CPU time (default; a busy machine does not blur "
                             "it), wall: elapsed time")
    parser.add_argument("--save", default=None,
                        help="dump pstats data to <SAVE>.<workload>.<implementation>.prof")
    args = parser.parse_args()
    if args.workloads:
        targets = []
        for key in (w.upper() for w in args.workloads):
            if key not in WORKLOADS:
                parser.error(f"unknown workload {key}; choose from {list(WORKLOADS)}")
            names = [args.impl] if args.impl else [
                n for n, impl in WORKLOADS[key].implementations.items()
                if impl.framework == "minigrad"]
            targets += [(key, n) for n in names]
    else:
        targets = DEFAULT
    for key, name in targets:
        if name not in WORKLOADS[key].implementations:
            parser.error(f"{key} has no implementation {name!r}; it has "
                         f"{list(WORKLOADS[key].implementations)}")
        profile(key, name, args.steps, args.limit, args.sort, args.save, CLOCKS[args.clock])


if __name__ == "__main__":
    main()
