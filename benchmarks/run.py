"""Benchmark minigrad against hand-written NumPy and PyTorch, and write benchmarks/RESULTS.md.

    python benchmarks/run.py            # full: a few minutes
    python benchmarks/run.py --quick    # fewer, shorter samples: about a minute; writes its
                                        # RESULTS.md and plot to a temporary folder (printed)
    python benchmarks/run.py --quick --write   # ... into benchmarks/ instead
    python benchmarks/run.py --only W1,W3 --no-memory

1. Check: every implementation of a workload runs one step from the same initial weights, and
   its loss (or output) and gradients must match the NumPy reference (float32 tolerance,
   relative to each array's scale). An implementation that disagrees is not timed, and the run
   exits with status 1. A compiled implementation (`minigrad.compile`) is primed first (its
   eager call and its capture, then its weights put back), so the step checked is a replay;
   every later step, timed ones included, must be a replay too (its `stats` say so), or it is
   reported as a failure with the reasons the step gives, and not as a time.
2. Time: BLAS runs on one thread (set below, before NumPy is imported). After warm-up, the
   implementations of a workload take turns (interleaved, rotating who goes first), each
   sample timing enough steps to last a minimum time; the table shows the median per step.
   The clock is the process's CPU time by default (`--clock wall` for elapsed time): every
   implementation computes on the calling thread, and on a shared machine the time spent
   waiting for a core would otherwise land on whoever was running. glibc's malloc thresholds
   are fixed so that one implementation's frees do not change another's allocation costs.
3. Memory: for each implementation, a fresh process runs 20 W3 steps and reports its peak RSS
   (getrusage ru_maxrss) and its RSS after every step (which must stay flat).
4. Write: the table between the markers `<!-- results:start -->` and `<!-- results:end -->` in
   RESULTS.md (the hand-written text around them is kept) and the plot w4_attention.png,
   each written to a temporary file first and then renamed into place. A full run writes
   them in benchmarks/ (and the README's table); a `--quick` run writes them to a new
   temporary folder outside the checkout unless `--write` asks for benchmarks/, so that a
   quick look never rewrites the tracked results.
"""

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"          # one BLAS thread; must precede the first NumPy import
# NumPy asks for transparent huge pages on large arrays; on a shared machine the kernel then
# compacts memory at first touch, adding up to seconds of system time at random to W4 at large
# L. Plain pages cost the same for both NumPy-based sides, every time.
os.environ["NUMPY_MADVISE_HUGEPAGE"] = "0"

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

def _fix_malloc_thresholds() -> bool:
    """Stop glibc's malloc from adapting its mmap threshold to the sizes freed so far.

    By default a freed block larger than the threshold raises it, so whether the next buffer
    of a few MB comes from the heap or from fresh, page-faulting mmap pages depends on what ran
    before: in a process that runs three implementations in turn, on the others. Fixed
    thresholds (blocks up to 32 MiB from the heap, which is not trimmed back) make the cost of
    an allocation a property of the code being timed. Not done for the memory runs, which
    measure each process as its users run it (minigrad's with `minigrad.tune_malloc()`, as
    the examples call it; see minigrad/_malloc.py)."""
    import ctypes
    try:
        libc = ctypes.CDLL("libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3          # mallopt parameters (malloc.h)
        return bool(libc.mallopt(m_mmap_threshold, 32 * 2 ** 20)
                    and libc.mallopt(m_trim_threshold, 2 ** 30))
    except (OSError, AttributeError):
        return False                                          # not glibc: leave it alone


HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))   # run from a checkout: benchmarks, minigrad, nn importable

import numpy as np  # noqa: E402

from benchmarks.problems import worst_mismatch  # noqa: E402
from benchmarks.workloads import MEMORY_TARGET, ROWS, WORKLOADS, Row  # noqa: E402

RESULTS = HERE / "RESULTS.md"
PLOT = HERE / "w4_attention.png"
START, END = "<!-- results:start -->", "<!-- results:end -->"
README = ROOT / "README.md"
README_START, README_END = "<!-- benchmarks:start -->", "<!-- benchmarks:end -->"
SEED = 0
RTOL = 2e-4                 # float32: allowed max |got − ref| ÷ scale of ref
MEMORY_STEPS = 20
FLAT_MB = 2.0               # RSS may drift this much between step 5 and step 20
FRAMEWORKS = ("numpy", "minigrad", "torch")


@dataclass
class Mode:
    samples: int            # interleaved samples per implementation
    min_time: float         # seconds each sample lasts at least
    warmup: int             # steps before the samples (≥ 1; the last one sizes the samples)


QUICK = Mode(samples=3, min_time=0.04, warmup=1)
FULL = Mode(samples=11, min_time=0.25, warmup=2)


@dataclass
class Measured:
    """Per implementation: seconds per step of each sample, or why it was not timed."""

    times: dict[str, list[float]] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)     # name -> error / mismatch
    agreement: dict[str, tuple[str, float]] = field(default_factory=dict)


# -- 1. agreement ---------------------------------------------------------------------------

def build_and_check(workload_key: str, sizes: dict, names: list[str],
                    measured: Measured) -> dict:
    """Instances of the named implementations, each stepped once and compared with NumPy."""
    workload = WORKLOADS[workload_key]
    problem = workload.make_problem(np.random.default_rng(SEED), **sizes)
    instances, outputs = {}, {}
    for name in names:
        try:
            instance = workload.implementations[name].load()(problem)
            calls = compiled_calls(instance)
            if calls is not None:
                instance.prime()
                calls = compiled_calls(instance)
            result = instance.step()
            if calls is not None:
                check_replayed(instance, calls)
            outputs[name] = {k: np.array(v, copy=True) for k, v in
                             instance.outputs(result).items()}
            instances[name] = instance
        except Exception as error:          # report it in the table, keep benchmarking
            measured.problems[name] = f"{type(error).__name__}: {error}"
            traceback.print_exc()
    if "numpy" not in outputs:
        raise RuntimeError(f"{workload_key}: the NumPy reference failed; nothing to compare")
    for name in list(instances):
        if name == "numpy":
            continue
        where, error = worst_mismatch(outputs[name], outputs["numpy"])
        measured.agreement[name] = (where, error)
        if not error <= RTOL:
            measured.problems[name] = f"disagrees with NumPy: {where} off by {error:.2e}"
            print(f"  {workload_key} {sizes or ''} {name}: MISMATCH, {where} relative error "
                  f"{error:.2e} > {RTOL:.0e}", file=sys.stderr)
            del instances[name]
    return instances


def compiled_calls(instance) -> tuple[int, int] | None:
    """(replays, other calls: eager or capturing) of a compiled implementation's compiled
    steps so far; None for an implementation that compiles nothing."""
    steps = getattr(instance, "compiled", ())
    if not steps:
        return None
    return (sum(s.stats.replays for s in steps),
            sum(s.stats.eager + s.stats.captures for s in steps))


class NotReplayed(RuntimeError):
    """A compiled implementation's step ran eagerly or captured again where it should have
    replayed."""


def check_replayed(instance, before: tuple[int, int]) -> None:
    """Raise NotReplayed unless every call of the compiled steps since `before` (from
    compiled_calls) was a replay."""
    replays, others = compiled_calls(instance)
    if others == before[1] and replays > before[0]:
        return
    reasons = [r for s in instance.compiled for r in s.stats.reasons[-3:]]
    if os.environ.get("MINIGRAD_COMPILE") == "0":
        reasons.append("MINIGRAD_COMPILE=0 turns replay off")
    raise NotReplayed(f"{others - before[1]} of {others - before[1] + replays - before[0]} "
                      f"compiled calls did not replay ({'; '.join(reasons) or 'no reason given'})")


# -- 2. timing ------------------------------------------------------------------------------

CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}


def time_interleaved(instances: dict, mode: Mode, clock) -> dict[str, list[float]]:
    """Samples of seconds per step, the implementations taking turns.

    `clock` is time.process_time (CPU seconds of this process: time spent descheduled on a
    busy machine does not count; every implementation computes on this one thread) or
    time.perf_counter (wall time, right on an otherwise idle machine)."""
    reps = {}
    for name, instance in instances.items():
        for _ in range(mode.warmup):       # the last warm-up step calibrates the sample size
            start = clock()
            instance.step()
            one = clock() - start
        reps[name] = max(1, round(mode.min_time / max(one, 1e-9)))
    names = list(instances)
    times: dict[str, list[float]] = {name: [] for name in names}
    for sample in range(mode.samples):
        shift = sample % len(names)
        for name in names[shift:] + names[:shift]:
            instance, n = instances[name], reps[name]
            gc.collect()
            start = clock()
            for _ in range(n):
                instance.step()
            times[name].append((clock() - start) / n)
    return times


def measure(workload_key: str, sizes: dict, names: list[str], mode: Mode,
            clock) -> Measured:
    measured = Measured()
    label = f"{workload_key} {' '.join(f'{k}={v}' for k, v in sizes.items())}".strip()
    print(f"{label}: checking {', '.join(names)}", flush=True)
    instances = build_and_check(workload_key, sizes, names, measured)
    calls = {name: compiled_calls(instance) for name, instance in instances.items()}
    measured.times = time_interleaved(instances, mode, clock)
    for name, before in calls.items():
        if before is None:
            continue
        try:
            check_replayed(instances[name], before)
        except NotReplayed as error:        # a time that is not a replay's is not reported
            measured.problems[name] = f"timed steps not replayed: {error}"
            del measured.times[name]
            print(f"  {label} {name}: {error}", file=sys.stderr)
    summary = ", ".join(f"{n} {statistics.median(t) * 1e3:.3f} ms"
                        for n, t in measured.times.items())
    print(f"{label}: {summary}", flush=True)
    return measured


# -- 3. memory ------------------------------------------------------------------------------

def _current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        resident_pages = int(f.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def _high_water_mb() -> float:
    """VmHWM: the peak RSS of this process's own address space."""
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def memory_child(framework: str) -> None:
    """Runs in a fresh process: 20 W3 steps of one implementation; prints JSON."""
    workload = WORKLOADS["W3"]
    if framework == "minigrad":
        import minigrad
        minigrad.tune_malloc()                    # as the examples run minigrad
    problem = workload.make_problem(np.random.default_rng(SEED))
    instance = workload.implementations[framework].load()(problem)
    rss = []
    for _ in range(MEMORY_STEPS):
        instance.step()
        rss.append(_current_rss_mb())
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024    # KiB on Linux
    print(json.dumps({"peak_mb": peak_mb, "high_water_mb": _high_water_mb(), "rss_mb": rss}))


# Linux carries a process's peak RSS across exec into ru_maxrss of the program it starts, so a
# child started from this (large) process would report at least this process's peak. A small
# launcher in between starts the measured process with a clean slate.
_LAUNCHER = "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"


def measure_memory(frameworks: list[str]) -> dict[str, dict]:
    results = {}
    for framework in frameworks:
        command = [sys.executable, "-c", _LAUNCHER, sys.executable,
                   str(Path(__file__).resolve()), "--memory-child", framework]
        completed = subprocess.run(command, capture_output=True, text=True, cwd=str(ROOT))
        if completed.returncode != 0:
            results[framework] = {"error": completed.stderr.strip().splitlines()[-1:]}
            print(f"memory {framework}: failed\n{completed.stderr}", file=sys.stderr)
            continue
        data = json.loads(completed.stdout.strip().splitlines()[-1])
        rss = data["rss_mb"]
        data["growth_mb"] = rss[-1] - rss[min(4, len(rss) - 1)]
        results[framework] = data
        print(f"memory {framework}: peak {data['peak_mb']:.1f} MB (VmHWM "
              f"{data['high_water_mb']:.1f} MB), RSS step 5 → 20 {data['growth_mb']:+.1f} MB",
              flush=True)
    return results


# -- 4. report ------------------------------------------------------------------------------

def _median(measured: Measured, name: str):
    samples = measured.times.get(name)
    return statistics.median(samples) if samples else None


def _fmt_time(seconds, unit: str, per: int = 1) -> str:
    if seconds is None:
        return "—"
    value = seconds / per * (1e6 if unit == "µs/op" else 1e3)
    return f"{value:.2f} {unit}" if value < 100 else f"{value:.0f} {unit}"


def _fmt_ratio(value) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _status(measured: Measured, name: str) -> str | None:
    problem = measured.problems.get(name)
    return None if problem is None else problem.split(":")[0]


def table_rows(rows: list[Row], measured: dict, n_ops: int) -> tuple[list[str], bool]:
    lines = ["| workload | NumPy | minigrad | minigrad ÷ NumPy | PyTorch | PyTorch ÷ NumPy "
             "| target | pass |", "|---|---:|---:|---:|---:|---:|---:|:---:|"]
    all_pass = True
    for row in rows:
        key = (row.workload, tuple(sorted(row.sizes.items())))
        if key not in measured:
            continue
        m = measured[key]
        per = n_ops if row.unit == "µs/op" else 1
        base, ours, theirs = (_median(m, n) for n in ("numpy", row.minigrad, row.torch))
        ratio = ours / base if ours and base else None
        torch_ratio = theirs / base if theirs and base else None
        verdict = "n/a" if ratio is None else ("pass" if ratio <= row.target else "FAIL")
        if ratio is None or ratio > row.target:
            all_pass = False
        ours_text = _fmt_time(ours, row.unit, per) if ours else (
            _status(m, row.minigrad) or "—")
        lines.append(f"| {row.label} | {_fmt_time(base, row.unit, per)} | {ours_text} | "
                     f"{_fmt_ratio(ratio)} | {_fmt_time(theirs, row.unit, per)} | "
                     f"{_fmt_ratio(torch_ratio)} | ≤ {row.target:.2f}× | {verdict} |")
    return lines, all_pass


FLOOR = "tape floor, primitives"        # W2's implementation in tape_floor.py


def floor_line(measured: dict) -> list[str]:
    """W2 from primitives on the minimal tape engine, next to minigrad: what an engine that
    runs Python per operation, and does nothing else, takes on this machine in this run."""
    m = measured.get(("W2", ()))
    if m is None:
        return []
    base, floor, ours = (_median(m, n) for n in ("numpy", FLOOR, "minigrad primitives"))
    if not (base and floor):
        return []
    against = f"; minigrad takes {ours / floor:.2f}× its time" if ours else ""
    return ["", f"W2 from primitives on a minimal tape engine (`tape_floor.py`: a closure "
                f"per operation, none of a framework's checks or features): "
                f"{_fmt_time(floor, 'ms')}, {floor / base:.2f}× NumPy{against}."]


def memory_rows(memory: dict) -> tuple[list[str], bool]:
    if not memory:
        return [], True
    base = memory.get("numpy", {}).get("peak_mb")
    lines = ["", "| 20 W3 steps, fresh process | peak RSS | ÷ NumPy process | RSS after steps "
             "5–20 | RSS step 5 → 20 | target | pass |", "|---|---:|---:|---:|---:|---:|:---:|"]
    ok = True
    for framework in FRAMEWORKS:
        data = memory.get(framework)
        if data is None:
            continue
        if "error" in data:
            lines.append(f"| {framework} | error | — | — | — | — | — |")
            ok = ok and framework != "minigrad"
            continue
        ratio = data["peak_mb"] / base if base else None
        flat = data["growth_mb"] <= FLAT_MB
        target, verdict = "—", ""
        if framework == "minigrad":
            target = f"≤ {MEMORY_TARGET:.2f}×, flat"
            passed = ratio is not None and ratio <= MEMORY_TARGET and flat
            verdict = "pass" if passed else "FAIL"
            ok = ok and passed
        later = data["rss_mb"][4:]
        lines.append(f"| {framework} | {data['peak_mb']:.1f} MB | {_fmt_ratio(ratio)} | "
                     f"{min(later):.1f}–{max(later):.1f} MB | {data['growth_mb']:+.1f} MB | "
                     f"{target} | {verdict} |")
    return lines, ok


def spread_rows(measured: dict, n_ops: int) -> list[str]:
    lines = ["| workload | implementation | median | min | max | samples | agreement with "
             "NumPy (worst array: relative error) |", "|---|---|---:|---:|---:|---:|---|"]
    for (workload, sizes), m in measured.items():
        label = f"{workload} {' '.join(f'{k}={v}' for k, v in sizes)}".strip()
        unit = "µs/op" if workload == "W0" else "ms"
        per = n_ops if workload == "W0" else 1
        for name in list(m.times) + [n for n in m.problems if n not in m.times]:
            samples = m.times.get(name)
            if samples:
                stats = [_fmt_time(f(samples), unit, per)
                         for f in (statistics.median, min, max)]
                count = str(len(samples))
            else:
                stats, count = ["—"] * 3, "0"
            where, error = m.agreement.get(name, ("", 0.0))
            agree = "reference" if name == "numpy" else (f"{where}: {error:.1e}" if where
                                                          else "—")
            if name in m.problems:
                agree = m.problems[name].replace("|", "/")[:160]
            lines.append(f"| {label} | {name} | {' | '.join(stats)} | {count} | {agree} |")
    return lines


def source_revision() -> str:
    """The git commit of the code being measured, marked when the checkout has uncommitted
    changes to code (not to the results files the benchmarks write); "unknown" outside a git
    checkout."""
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, check=True).stdout.strip()
        changes = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--",
                                  ".", ":(exclude)*.md", ":(exclude)*.json", ":(exclude)*.png"],
                                 cwd=ROOT, capture_output=True, text=True,
                                 check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{commit} with uncommitted changes" if changes else commit


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo, else what `platform` knows."""
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f
                        if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or platform.machine()


def machine_line(mode_name: str, load_before, load_after, malloc_fixed: bool) -> str:
    cpu = cpu_model()
    torch_version = "not installed"
    if importlib.util.find_spec("torch") is not None:
        import torch
        torch_version = torch.__version__
    return (f"Measured {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} ({mode_name} "
            f"mode), code at {source_revision()}, on {cpu}, {os.cpu_count()} vCPUs; "
            f"Python {platform.python_version()}, "
            f"NumPy {np.__version__}, PyTorch {torch_version}; one BLAS thread; float32; "
            f"malloc thresholds {'fixed' if malloc_fixed else 'left adaptive'}. "
            f"Load average (1 min) before / after: {load_before:.2f} / {load_after:.2f}.")


def render(mode_name: str, mode: Mode, clock_name: str, rows: list[Row], measured: dict,
           memory: dict, load_before: float, load_after: float, failures: list[str],
           malloc_fixed: bool) -> tuple[str, str]:
    """The Results section of RESULTS.md, and the part of it README.md shows."""
    n_ops = int(WORKLOADS["W0"].make_problem(np.random.default_rng(0)).sizes["n_ops"])
    main, times_pass = table_rows(rows, measured, n_ops)
    mem, memory_pass = memory_rows(memory)
    verdict = "all targets met" if times_pass and memory_pass and not failures else \
        "some targets missed"
    machine = machine_line(mode_name, load_before, load_after, malloc_fixed)
    region = "\n".join([machine, ""] + main + floor_line(measured)) + "\n"
    lines = [START, "", "## Results", "",
             "Generated by `python benchmarks/run.py`; edit the text outside this section.", "",
             machine,
             f"Times ({'process CPU' if clock_name == 'cpu' else 'wall-clock'} time) are "
             f"medians of {mode.samples} interleaved samples per implementation "
             f"(each ≥ {mode.min_time:g} s of steps, after {mode.warmup} warm-up steps); "
             f"ratios are to hand-written NumPy, smaller is better. W0 is per op, the rest "
             f"per step. Verdict: {verdict}.", ""]
    lines += main + floor_line(measured) + mem
    if failures:
        lines += ["", "Not timed: " + "; ".join(failures)]
    lines += ["", "![W4 time against L](w4_attention.png)", "",
              "### Samples and agreement", ""] + spread_rows(measured, n_ops) + ["", END]
    return "\n".join(lines) + "\n", region


_HEADER = """# minigrad benchmarks

How minigrad compares with the same computation written by hand in NumPy (forward and backward,
no framework) and with PyTorch on the CPU. Definitions of the workloads: `problems.py`; the
implementations: `numpy_reference.py`, `minigrad_workloads.py`, `torch_workloads.py`.
Run `python benchmarks/run.py` (or `--quick`); profile with `python benchmarks/profile_op.py`.

## Optimisation log

One line per engine change: what changed, and the ratios it moved.

"""


def update_readme(region: str) -> None:
    """Put the run's machine line and main table (`region`, the same lines as in RESULTS.md)
    into README.md between its markers; nothing else there changes."""
    text = README.read_text(encoding="utf-8")
    if README_START not in text or README_END not in text:
        return
    before, rest = text.split(README_START, 1)
    after = rest.split(README_END, 1)[1]
    text = f"{before}{README_START}\n{region}{README_END}{after}"
    write_atomically(README, lambda p: p.write_text(text, encoding="utf-8"))


def write_atomically(path: Path, write) -> None:
    """Call write(temporary path), then rename the temporary file onto `path`."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                         suffix=path.suffix)
    os.close(handle)
    try:
        write(Path(temporary))
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def update_results(section: str, target: Path = RESULTS) -> None:
    """Replace the text between the markers in RESULTS.md, keeping everything around it, and
    write the result to `target` (RESULTS.md itself by default)."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else _HEADER
    if START in text and END in text and text.index(START) < text.index(END):
        before, rest = text.split(START, 1)
        after = rest.split(END, 1)[1].lstrip("\n")
        text = before + section + after
    else:
        text = text.rstrip("\n") + "\n\n" + section
    write_atomically(target, lambda p: p.write_text(text, encoding="utf-8"))


def plot_attention(measured: dict, target: Path = PLOT) -> bool:
    """W4 seconds per step against L on log–log axes, one line per implementation, written
    to `target`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    series: dict[str, list[tuple[int, float]]] = {}
    for (workload, sizes), m in measured.items():
        if workload != "W4":
            continue
        length = dict(sizes)["length"]
        for name in FRAMEWORKS:
            value = _median(m, name)
            if value is not None:
                series.setdefault(name, []).append((length, value * 1e3))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(6, 4.2))
    styles = {"numpy": "o-", "minigrad": "s-", "torch": "^--"}
    labels = {"numpy": "NumPy by hand", "minigrad": "minigrad", "torch": "PyTorch"}
    for name, points in series.items():
        points.sort()
        ax.plot([p[0] for p in points], [p[1] for p in points], styles[name],
                label=labels[name])
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length L")
    ax.set_ylabel("ms per forward + backward")
    ax.set_title("Scaled dot-product attention, B=8, 4 heads, Dh=32, float32")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    write_atomically(target, lambda p: fig.savefig(p, format="png", dpi=120))
    plt.close(fig)
    return True


# -- main -------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter samples (~1 min)")
    parser.add_argument("--only", default="", help="comma-separated workloads, e.g. W1,W3")
    parser.add_argument("--clock", choices=list(CLOCKS), default="cpu",
                        help="cpu: process CPU time (default, robust to a busy machine); "
                             "wall: elapsed time")
    parser.add_argument("--no-torch", action="store_true", help="leave PyTorch out")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory runs")
    parser.add_argument("--no-write", action="store_true",
                        help="print only; leave RESULTS.md and the plot alone")
    parser.add_argument("--write", action="store_true",
                        help="with --quick or --only: write RESULTS.md and the plot in "
                             "benchmarks/ (by default such a run writes them to a temporary "
                             "folder; only a full run of every workload updates README.md)")
    parser.add_argument("--memory-child", choices=FRAMEWORKS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return 0

    malloc_fixed = _fix_malloc_thresholds()
    mode_name, mode = ("quick", QUICK) if args.quick else ("full", FULL)
    selected = [w.strip().upper() for w in args.only.split(",") if w.strip()] or list(WORKLOADS)
    unknown = [w for w in selected if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")
    use_torch = not args.no_torch and importlib.util.find_spec("torch") is not None
    rows = [row for row in ROWS if row.workload in selected]

    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    measured: dict = {}
    for row in rows:
        key = (row.workload, tuple(sorted(row.sizes.items())))
        if key in measured:
            continue
        names = [n for n, impl in WORKLOADS[row.workload].implementations.items()
                 if use_torch or impl.framework != "torch"]
        measured[key] = measure(row.workload, row.sizes, names, mode, CLOCKS[args.clock])
    memory = {}
    if not args.no_memory and "W3" in selected:
        memory = measure_memory([f for f in FRAMEWORKS if use_torch or f != "torch"])
    load_after = os.getloadavg()[0]

    failures = [f"{w} {dict(s) or ''} {name}: {problem}".replace("  ", " ")
                for (w, s), m in measured.items() for name, problem in m.problems.items()]
    section, region = render(mode_name, mode, args.clock, rows, measured, memory, load_before,
                     load_after, failures, malloc_fixed)
    print(section)
    if not args.no_write:
        complete = mode_name == "full" and not args.only      # the tables of record
        in_tree = complete or args.write
        folder = HERE if in_tree else Path(tempfile.mkdtemp(prefix="minigrad-benchmarks-"))
        results, plot = folder / RESULTS.name, folder / PLOT.name
        update_results(section, results)
        if complete:
            update_readme(region)
        written = [results] + ([plot] if plot_attention(measured, plot) else [])
        shown = [str(p.relative_to(ROOT)) if in_tree else str(p) for p in written]
        print(f"wrote {' and '.join(shown)}")
    print(f"took {time.perf_counter() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
